//! Actions on the selected pod: delete — an eviction, which the pod's disruption budgets judge
//! — and force-delete (removed at once, no budget asked), each a cluster write with the pod's
//! uid as its precondition; and the simulator's faults.

use super::{Outcome, ask, f, key, selected, send, write};
use crate::app::action::Action;
use crate::app::refusal::Refusal;
use crate::app::state::{AppState, Confirm};
use crate::backend::{ClusterOp, FAILURE_WORDS, Fault, ImageFailure, ObjRef};
use crate::core::labels::pod_name;

/// The selected pod, which must exist.
fn selected_pod(state: &AppState) -> Result<(ObjRef, ObjRef, i32), Refusal> {
    let (r, _) = selected(state)?;
    let ordinal = state.selected_ordinal;
    let name = pod_name(&r.name, ordinal);
    if state.mirror.pod_at(&r, ordinal).is_none() {
        return Err(format!("{name} does not exist (a placeholder): no pod to act on").into());
    }
    let pod = ObjRef::new(r.namespace.clone(), name);
    Ok((r, pod, ordinal))
}

pub(super) fn delete_pod(state: &mut AppState, force: bool) -> Outcome {
    let (r, pod_ref, ordinal) = selected_pod(state)?;
    let (_, set) = selected(state)?;
    let Some(pod) = state.mirror.pod_at(&r, ordinal) else {
        return Err(format!("{} does not exist", pod_ref.name).into());
    };
    if f::pod_terminating(pod) && !force {
        return Err(format!(
            "{} is already terminating; {} force-deletes it",
            pod_ref.name,
            key(Action::ForceDeletePod)
        )
        .into());
    }
    let rev = f::pod_revision(pod).map(f::short_revision).unwrap_or("?");
    let old = format!("{} {} at revision {rev}", pod_ref.name, f::pod_word(pod));
    let in_range = ordinal >= f::start_ordinal(set)
        && ordinal < f::start_ordinal(set).saturating_add(f::replicas(set));
    let new = if !in_range {
        "gone: not recreated (outside the replicas)".to_string()
    } else {
        let next = f::revision_for_ordinal(set, ordinal).map(f::short_revision).unwrap_or("?");
        format!("recreated by the controller at revision {next}")
    };
    let (verb, cmd) = if force { ("Force-delete", "force-delete-pod") } else { ("Evict", "evict") };
    let warning = Some(if force {
        "removed at once, without graceful termination and without asking its disruption \
         budgets (on a real cluster the container may still be running)"
            .to_string()
    } else {
        "through the Eviction API: a PodDisruptionBudget that allows no disruption refuses it \
         (nothing is deleted then)"
            .to_string()
    });
    let uid = pod.metadata.uid.clone();
    let log = format!("{cmd} {}", pod_ref.name);
    let pod = pod_ref.clone();
    let op = if force {
        write(state, ClusterOp::DeletePod { pod, force, uid })?
    } else {
        write(state, ClusterOp::EvictPod { pod, uid })?
    };
    let confirm = Confirm {
        title: format!("{verb} pod {pod_ref}?"),
        old,
        new,
        warning,
        log,
        ops: vec![op],
        ..Default::default()
    };
    Ok(ask(state, confirm))
}

pub(super) fn fault(state: &mut AppState, action: Action) -> Outcome {
    if !state.caps.inject_faults {
        return Err("fault injection exists in the simulator only (ststui sim)".into());
    }
    let (r, pod_ref, ordinal) = selected_pod(state)?;
    let Some(pod) = state.mirror.pod_at(&r, ordinal) else {
        return Err(format!("{} does not exist", pod_ref.name).into());
    };
    let name = pod_ref.name.clone();
    if f::pod_terminating(pod) {
        return Err(format!("{name} is terminating: faults apply to live pods").into());
    }
    let (op, log, said) = match action {
        Action::FailPod => {
            (Fault::FailPod { pod: pod_ref }, format!("fail {name}"), format!("{name} fails"))
        }
        Action::ToggleReady => {
            if f::pod_phase(pod) != "Running" {
                return Err(format!(
                    "{name} is {}: readiness flips only while it runs",
                    f::pod_phase(pod)
                )
                .into());
            }
            let ready = !f::pod_ready(pod);
            let word = if ready { "ready" } else { "unready" };
            (
                Fault::SetPodReady { pod: pod_ref, ready },
                format!("{word} {name}"),
                format!("{name} {word}"),
            )
        }
        _ => return Err(format!("{name}: not a pod fault").into()),
    };
    Ok(send(state, op.into(), log, said))
}

/// `b`: asks which image is broken, prefilled with the rollout's target (the update
/// revision's image while it differs from the current one: "the new image is broken" is what
/// kubernetes#67250 rehearses), else the selected pod's image. A property of the image: every
/// pod of it, now and later, never becomes Ready, so deleting one brings it back just as broken.
pub(super) fn break_image(state: &mut AppState) -> Outcome {
    if !state.caps.inject_faults {
        return Err("fault injection exists in the simulator only (ststui sim)".into());
    }
    let (r, set) = selected(state)?;
    let target = f::update_revision(set)
        .filter(|u| Some(*u) != f::current_revision(set))
        .and_then(|u| {
            state
                .mirror
                .revisions_of(&r)
                .into_iter()
                .find(|x| x.metadata.name.as_deref() == Some(u))
        })
        .and_then(f::revision_image);
    let pod = state.mirror.pod_at(&r, state.selected_ordinal);
    let image = target
        .or_else(|| pod.and_then(|p| state.mirror.pod_image(p)))
        .or_else(|| f::image(set))
        .ok_or_else(|| format!("{} has no container image", r.name))?
        .to_string();
    let fixing = state.broken_images.contains(&image);
    let kind = crate::app::input::PromptKind::BrokenImage { fixing };
    state.modal = crate::app::state::Modal::Prompt(crate::app::input::Prompt::new(kind, &image));
    state.dirty = true;
    Ok(Vec::new())
}

/// The broken-image prompt's Enter: `IMG [probe|pull|crash]` breaks the image (failing as
/// said; its readiness probe by default), or fixes it when it is broken.
pub fn toggle_broken(state: &mut AppState, text: String) -> Outcome {
    let mut words = text.split_whitespace();
    let image = words.next().ok_or("give an image, then probe, pull or crash")?.to_string();
    let how = match (words.next(), words.next()) {
        (None, _) => ImageFailure::Probe,
        (Some(w), None) => {
            w.trim_start_matches("failure=").parse::<ImageFailure>().map_err(Refusal::of)?
        }
        (Some(_), Some(extra)) => {
            return Err(
                format!("{extra:?} is one word too many: expected IMG [{FAILURE_WORDS}]").into()
            );
        }
    };
    let broken = !state.broken_images.contains(&image);
    // The set of broken images changes when the simulator says so (`BackendEvent::BrokenImages`).
    let (log, said) = if broken {
        let how_words = match how {
            ImageFailure::Probe => "its pods run but never become Ready",
            ImageFailure::Pull => "its new pods cannot pull it (ErrImagePull, ImagePullBackOff)",
            ImageFailure::Crash => "its pods crash and restart (CrashLoopBackOff)",
        };
        let log = match how {
            ImageFailure::Probe => format!("break-image {image}"),
            _ => format!("break-image {image} failure={how}"),
        };
        (
            log,
            format!(
                "{image} is broken: {how_words} (deleting one does not help); {} fixes it",
                key(Action::BreakImage)
            ),
        )
    } else {
        (format!("fix-image {image}"), format!("{image} is fixed: its pods become Ready"))
    };
    state.dirty = true;
    let broken = broken.then_some(how);
    Ok(send(state, Fault::BrokenImage { image, broken }.into(), log, said))
}
