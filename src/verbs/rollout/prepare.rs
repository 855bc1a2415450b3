//! `ststui rollout … --image [CONTAINER=]IMAGE`: the set is held first (frozen, unless its
//! partition already holds every pod or it is OnDelete), then its image is set, so the update
//! waits for the plan's first step — what an operator otherwise does in three commands, where
//! forgetting the freeze rolls the whole set.
//!
//! Owns: that preparation. Writes through the console's write path.

use std::time::Instant;

use super::output::Output;
use crate::backend::{ClusterOp, Write};
use crate::cluster::{Writes, Written};
use crate::core::spec;
use crate::plan::record;
use crate::verbs::session::{Session, SetView};
use crate::verbs::{Exit, SYNC_TIMEOUT, VerbError};

/// Holds the set and sets its image (`app=nginx:1.26` names the container; it must be the
/// first, the one `kubectl set image` and the console change).
pub fn image(
    s: &mut Session,
    w: &Writes,
    image: &str,
    limit: Option<Instant>,
    out: &mut Output,
) -> Result<(), VerbError> {
    let image = hold_and_set(s.view(), w, image, limit, out)?;
    // The plan starts on the template just written: wait until the watch shows it.
    let until = Instant::now() + std::time::Duration::from_secs(10);
    while Instant::now() < until && !shows(s.view(), &image) {
        s.next_lenient(Some(until.min(Instant::now() + std::time::Duration::from_millis(200))))?;
    }
    Ok(())
}

/// Whether the session's set shows `image` as its first container's.
pub fn shows(s: SetView<'_>, image: &str) -> bool {
    s.set().is_some_and(|x| first_image(x).as_deref() == Some(image))
}

/// The writes of [`image`] on one set (a group holds and sets each of its sets so): the image
/// set, as written.
pub fn hold_and_set(
    s: SetView<'_>,
    w: &Writes,
    image: &str,
    limit: Option<Instant>,
    out: &mut Output,
) -> Result<String, VerbError> {
    let image = hold(s, w, image, limit, out)?;
    let key = s.key.clone();
    let by = limit.unwrap_or_else(|| Instant::now() + SYNC_TIMEOUT);
    let op = ClusterOp::SetImage { set: key.clone(), image: image.clone() };
    let kind = op.kind();
    let written = w
        .write(Write::new(op), crate::verbs::left(by))
        .map_err(|f| crate::verbs::write_failure(kind, crate::cluster::OnceError::Failed(f)))?;
    match written {
        Written::Unchanged(_) => out.event(None, &format!("{key}: the image is {image} already")),
        _ => out.event(
            None,
            &format!("{key}: image {image} set; nothing rolls until the plan opens a step"),
        ),
    }
    Ok(image)
}

/// The set held for `image` (frozen, unless held already; refused under a plan under way):
/// the image `--image` names for it, checked, not yet set (a fleet sets it at the cluster's
/// turn).
pub fn hold(
    s: SetView<'_>,
    w: &Writes,
    image: &str,
    limit: Option<Instant>,
    out: &mut Output,
) -> Result<String, VerbError> {
    let key = s.key.clone();
    let set =
        s.set().cloned().ok_or_else(|| VerbError::new(Exit::Api, format!("{key} is gone")))?;
    let image = named(&set, &key, image)?;
    if let Some(r) = record::read(&set).under_way() {
        return Err(VerbError::new(
            Exit::Expectation,
            format!(
                "{key}: a plan is under way ({}/{}, {}): --image would change the template under it \
                 (and halt it); nothing written",
                r.step,
                r.of,
                r.phase.word()
            ),
        ));
    }
    let by = limit.unwrap_or_else(|| Instant::now() + SYNC_TIMEOUT);
    let st = spec::strategy(&set);
    let held = st.on_delete || st.partition >= spec::replicas(&set);
    let write = |op: ClusterOp| {
        let kind = op.kind();
        w.write(Write::new(op), crate::verbs::left(by))
            .map_err(|f| crate::verbs::write_failure(kind, crate::cluster::OnceError::Failed(f)))
    };
    if !held && crate::steer::frozen(&set).is_none() {
        write(ClusterOp::Freeze { set: key.clone() })?;
        out.event(
            None,
            &format!(
                "{key} frozen first (partition {} → {}): the new image waits for the plan",
                st.partition,
                spec::replicas(&set)
            ),
        );
    }
    Ok(image)
}

/// The image `--image` asks for `set` (`app=nginx:1.26` names the first container, the one
/// `kubectl set image` and the console change), checked.
pub fn named(
    set: &k8s_openapi::api::apps::v1::StatefulSet,
    key: &crate::backend::ObjRef,
    image: &str,
) -> Result<String, VerbError> {
    let containers: Vec<String> = set
        .spec
        .template
        .spec
        .as_ref()
        .map(|p| p.containers.iter().map(|c| c.name.clone()).collect())
        .unwrap_or_default();
    let image = match image.split_once('=') {
        Some((name, img)) if containers.first() == Some(&name.to_string()) => img.to_string(),
        Some((name, _)) => {
            return Err(VerbError::new(
                Exit::Usage,
                format!(
                    "--image {name}=…: {key}'s first container is {}; --image sets the first \
                     container (CONTAINER=IMAGE names it, or give the image alone)",
                    containers.first().map_or("absent", String::as_str)
                ),
            ));
        }
        None => image.to_string(),
    };
    if image.trim().is_empty() {
        return Err(VerbError::new(Exit::Usage, "--image: expected an image, e.g. nginx:1.26"));
    }
    Ok(image)
}

fn first_image(set: &k8s_openapi::api::apps::v1::StatefulSet) -> Option<String> {
    set.spec.template.spec.as_ref()?.containers.first()?.image.clone()
}
