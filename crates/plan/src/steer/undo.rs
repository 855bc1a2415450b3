//! `kubectl rollout undo` for StatefulSets, client-side: the set's history is the
//! ControllerRevisions it controls, by revision number; the target is the one asked for, or the
//! previous (second newest); its stored template (`{"spec":{"template":{"$patch":"replace",
//! ...}}}`) replaces the set's template.

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;

use super::Refused;
use crate::backend::{FailureKind, ObjRef};

/// The ControllerRevisions among `all` whose controller ownerReference is `set`, by revision
/// number (kubectl's `controlledHistory`; what `kubectl rollout history` lists).
pub fn controlled_revisions<'r>(
    set: &StatefulSet,
    all: &[&'r ControllerRevision],
) -> Vec<&'r ControllerRevision> {
    let ns = set.metadata.namespace.as_deref().unwrap_or("default");
    let Some(uid) = set.metadata.uid.as_deref() else { return Vec::new() };
    let mut revs: Vec<&ControllerRevision> = all
        .iter()
        .copied()
        .filter(|r| r.metadata.namespace.as_deref().unwrap_or("default") == ns)
        .filter(|r| {
            let refs = r.metadata.owner_references.iter().flatten();
            refs.into_iter().any(|o| o.controller == Some(true) && o.uid == uid)
        })
        .collect();
    revs.sort_by(|a, b| a.revision.cmp(&b.revision).then(a.metadata.name.cmp(&b.metadata.name)));
    revs
}

/// The revision `kubectl rollout undo [--to-revision=N]` rolls back to: `revision`, or the
/// second newest when `None` (or 0).
pub fn undo_target<'r>(
    key: &ObjRef,
    set: &StatefulSet,
    all: &[&'r ControllerRevision],
    revision: Option<i64>,
) -> Result<&'r ControllerRevision, Refused> {
    let history = controlled_revisions(set, all);
    let found = match revision {
        None | Some(0) => {
            if history.len() <= 1 {
                return Err(Refused {
                    kind: FailureKind::NotFound,
                    message: format!(
                        "{key} has no previous revision to roll back to (it has {})",
                        history.len()
                    ),
                });
            }
            history.get(history.len() - 2).copied()
        }
        Some(n) => history.iter().find(|r| r.revision == Some(n)).copied(),
    };
    found.ok_or_else(|| {
        let available: Vec<String> =
            history.iter().filter_map(|r| r.revision.map(|n| n.to_string())).collect();
        let available = if available.is_empty() { "none".into() } else { available.join(", ") };
        Refused {
            kind: FailureKind::NotFound,
            message: format!(
                "revision {} of {key} not found: expected one of {available}",
                revision.unwrap_or(0)
            ),
        }
    })
}

/// The pod template a revision stores, without its `$patch` directive.
pub fn revision_template(rev: &ControllerRevision) -> Option<PodTemplateSpec> {
    let mut template = rev.data.0.get("spec")?.get("template")?.clone();
    if let Some(obj) = template.as_object_mut() {
        obj.remove("$patch");
    }
    serde_json::from_value(template).ok()
}
