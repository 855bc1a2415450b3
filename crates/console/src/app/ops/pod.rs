//! Actions on the selected pod: delete — an eviction, which the pod's disruption budgets judge
//! — and force-delete (removed at once, no budget asked; a reason asked first and recorded on
//! the set before the pod goes, as `ststui abort --force-delete REASON` records it), each a
//! cluster write with the pod's uid as its precondition; and the simulator's faults.

use k8s_openapi::api::core::v1::Pod;

use super::{Outcome, ask, f, key, selected, send, writable, write};
use crate::app::action::Action;
use crate::app::refusal::Refusal;
use crate::app::state::{AppState, Confirm, Modal, Then};
use crate::app::state::{Prompt, PromptKind};
use crate::backend::{ClusterOp, FAILURE_WORDS, Fault, ImageFailure, ObjRef, Op, Write, WriteKind};
use crate::core::budget;
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
    let uid = pod.metadata.uid.clone();
    if force {
        // The reason goes on the set before the pod goes: both writes must be allowed.
        writable(state, WriteKind::DeletePod)?;
        writable(state, WriteKind::PatchSet).map_err(|why| {
            format!("a force-delete records its reason on the set, which cannot be written: {why}")
        })?;
        let budget = match budget_refusal(state, &r.namespace, pod) {
            Some(refused) => format!("its eviction would be {refused}"),
            None => "no budget refuses its eviction now".to_string(),
        };
        let kind = PromptKind::ForceReason { set: r, pod: pod_ref, uid, budget };
        state.modal = Modal::Prompt(Prompt::new(kind, ""));
        state.dirty = true;
        return Ok(Vec::new());
    }
    let (old, new) = change_words(state, &r, ordinal)?;
    let warning = "through the Eviction API: a PodDisruptionBudget that allows no disruption \
                   refuses it (nothing is deleted then)"
        .to_string();
    let log = format!("evict {}", pod_ref.name);
    let op = write(state, ClusterOp::EvictPod { pod: pod_ref.clone(), uid })?;
    let confirm = Confirm {
        title: format!("Evict pod {pod_ref}?"),
        old,
        new,
        warning: Some(warning),
        log,
        ops: vec![op],
        ..Default::default()
    };
    Ok(ask(state, confirm))
}

/// The force-delete prompt's Enter: the reason recorded on the set, then — once that is
/// written — the pod removed at once, past its budgets. Asked first.
pub fn force_delete(
    state: &mut AppState,
    set: ObjRef,
    pod_ref: ObjRef,
    uid: Option<String>,
    reason: String,
) -> Outcome {
    let reason = crate::value::reason(&reason).map_err(|e| e.to_string())?;
    let ordinal = crate::core::labels::parent_and_ordinal(&pod_ref.name)
        .filter(|(parent, _)| *parent == set.name)
        .map(|(_, o)| o)
        .ok_or_else(|| format!("{} is not a pod of {}", pod_ref.name, set.name))?;
    let pod = state
        .mirror
        .pod_at(&set, ordinal)
        .filter(|p| uid.is_none() || p.metadata.uid == uid)
        .ok_or_else(|| format!("{} was replaced meanwhile: nothing deleted", pod_ref.name))?;
    let refused = budget_refusal(state, &set.namespace, pod);
    let (old, new) = change_words(state, &set, ordinal)?;
    let record = ClusterOp::ForceDeleted {
        set: set.clone(),
        pods: vec![pod_ref.name.clone()],
        reason: reason.clone(),
        refused: refused.clone(),
    };
    writable(state, WriteKind::PatchSet)?;
    let delete = write(state, ClusterOp::DeletePod { pod: pod_ref.clone(), force: true, uid })?;
    let past = match &refused {
        Some(r) => format!("its eviction would be {r}"),
        None => "no budget refuses its eviction now".to_string(),
    };
    let note = format!(
        "force-delete {} past its disruption budgets ({past}): {reason}; recorded on the set ({})",
        pod_ref.name,
        crate::steer::FORCE_DELETED
    );
    let confirm = Confirm {
        title: format!("Force-delete pod {pod_ref}?"),
        old,
        new,
        warning: Some(
            "removed at once, without graceful termination and without asking its disruption \
             budgets (on a real cluster the container may still be running)"
                .to_string(),
        ),
        log: format!("force-delete-pod {}", pod_ref.name),
        details: vec![
            format!("  reason: {reason}"),
            format!("  {past}"),
            format!(
                "  1. the reason is recorded on {} ({}); 2. then the pod is deleted (not if the \
                 record fails)",
                set.name,
                crate::steer::FORCE_DELETED
            ),
        ],
        // Not decided on a basis: an annotation of its own, whatever else moved on the set.
        ops: vec![Op::Cluster(Write::new(record))],
        then: Some(Then::After { op: Box::new(delete), note }),
    };
    Ok(ask(state, confirm))
}

/// What a disruption budget says of `pod`'s eviction now (the budgets the console watches, as
/// the API server judges them): the refusal in words, or none when it would be allowed.
pub(super) fn budget_refusal(state: &AppState, namespace: &str, pod: &Pod) -> Option<String> {
    let budgets: Vec<_> =
        state.mirror.budgets_in(namespace).filter(|b| budget::selects(b, pod)).collect();
    match budget::evict(pod, &budgets) {
        budget::Eviction::Delete { .. } => None,
        budget::Eviction::Refused { message, cause, .. } => {
            let words = budget::refusal(budgets.first().copied(), cause.as_deref(), &message);
            Some(words.trim_end_matches(": nothing deleted").to_string())
        }
    }
}

/// The selected pod now, and what becomes of it when it goes.
fn change_words(state: &AppState, r: &ObjRef, ordinal: i32) -> Result<(String, String), Refusal> {
    let set = state.mirror.set(r).ok_or_else(|| format!("{r} no longer exists"))?;
    let name = pod_name(&r.name, ordinal);
    let pod = state.mirror.pod_at(r, ordinal).ok_or_else(|| format!("{name} does not exist"))?;
    let rev = f::pod_revision(pod).map(f::short_revision).unwrap_or("?");
    let old = format!("{name} {} at revision {rev}", f::pod_word(pod));
    let in_range = ordinal >= f::start_ordinal(set)
        && ordinal < f::start_ordinal(set).saturating_add(f::replicas(set));
    let new = if !in_range {
        "gone: not recreated (outside the replicas)".to_string()
    } else {
        let next = f::revision_for_ordinal(set, ordinal).map(f::short_revision).unwrap_or("?");
        format!("recreated by the controller at revision {next}")
    };
    Ok((old, new))
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
    let kind = crate::app::state::PromptKind::BrokenImage { fixing };
    state.modal = crate::app::state::Modal::Prompt(crate::app::state::Prompt::new(kind, &image));
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
