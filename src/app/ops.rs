//! The reducer's half that turns operator actions on the selected set or pod into backend
//! [`Op`]s: validation against what the mirror shows, refusals that say why, and confirmations
//! (old → new) for destructive or surprising changes.
//!
//! Owns the rules "what may be asked now" and the wording of refusals and confirmations. Only
//! called from `update.rs` (the one reducer). Must not touch the terminal or talk to a backend:
//! it returns [`Command`]s.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::action::Action;
use super::facts as f;
use super::input::{Prompt, PromptKind, bump_image};
use super::keymap::{Context, key_for};
use super::msg::Command;
use super::state::{AppState, Confirm, Modal, RevisionChoice, RevisionPicker};
use super::update::{info, log_operator};
use crate::backend::{Mode, ObjRef, Op};
use crate::core::Observed;
use crate::core::explain::partition_warning;
use crate::core::labels::pod_name;

/// `Err` is a refusal: the text for the status line.
pub type Outcome = Result<Vec<Command>, String>;

use crate::backend::SPEED_RANGE;

fn key(action: Action) -> String {
    key_for(Context::Normal, action).unwrap_or_else(|| "?".into())
}

/// The selected set, or why there is none.
fn selected(state: &AppState) -> Result<(ObjRef, &StatefulSet), String> {
    let r = state.selected_set.clone().ok_or_else(|| {
        if state.synced {
            "nothing selected: there is no StatefulSet (a script or -f MANIFEST creates one)"
                .to_string()
        } else {
            "nothing selected yet: waiting for the backend's first listing".to_string()
        }
    })?;
    let set = state.mirror.set(&r).ok_or_else(|| format!("{r} no longer exists"))?;
    Ok((r, set))
}

/// Sends one op, logs it in the timeline (scenario-language text) and says so.
fn send(state: &mut AppState, op: Op, log: String, said: String) -> Vec<Command> {
    log_operator(state, log);
    info(state, said);
    vec![Command::Backend(op)]
}

fn ask(state: &mut AppState, confirm: Confirm) -> Vec<Command> {
    state.modal = Modal::Confirm(confirm);
    Vec::new()
}

/// Runs a Normal-context action that changes the cluster or the controller.
pub fn perform(state: &mut AppState, action: Action) -> Outcome {
    match action {
        Action::PartitionDown => partition_step(state, -1),
        Action::PartitionUp => partition_step(state, 1),
        Action::PartitionPrompt => {
            let (r, set) = selected(state)?;
            require_rolling(set)?;
            let kind = PromptKind::Partition { set: r, current: f::partition(set) };
            state.modal = Modal::Prompt(Prompt::new(kind, ""));
            Ok(Vec::new())
        }
        Action::ToggleStrategy => toggle_strategy(state),
        Action::ScaleUp => {
            let (r, set) = selected(state)?;
            let old = f::replicas(set);
            Ok(scale_to(state, r, old, old.saturating_add(1)))
        }
        Action::ScaleDown => {
            let (r, set) = selected(state)?;
            let old = f::replicas(set);
            if old <= 0 {
                return Err(format!("{} already has 0 replicas", r.name));
            }
            Ok(scale_to(state, r, old, old - 1))
        }
        Action::ScalePrompt => {
            let (r, set) = selected(state)?;
            let kind = PromptKind::Scale { set: r, current: f::replicas(set) };
            state.modal = Modal::Prompt(Prompt::new(kind, ""));
            Ok(Vec::new())
        }
        Action::NewImage => {
            let (r, set) = selected(state)?;
            let current = f::image(set)
                .ok_or_else(|| format!("{} has no container image to change", r.name))?
                .to_string();
            let kind = PromptKind::Image { set: r, current: current.clone() };
            state.modal = Modal::Prompt(Prompt::new(kind, bump_image(&current)));
            Ok(Vec::new())
        }
        Action::Restart => {
            let (r, _) = selected(state)?;
            let said = format!("restart {}: a new revision rolls as the strategy allows", r.name);
            Ok(send(state, Op::Restart { set: r.clone() }, format!("restart {}", r.name), said))
        }
        Action::Undo => open_picker(state, None),
        Action::TogglePause => toggle_pause(state),
        Action::Step => step(state),
        Action::SpeedUp => speed(state, 2.0),
        Action::SpeedDown => speed(state, 0.5),
        Action::DeletePod => delete_pod(state, false),
        Action::ForceDeletePod => delete_pod(state, true),
        Action::FailPod | Action::ToggleReady | Action::BreakPod => fault(state, action),
        _ => Ok(Vec::new()),
    }
}

fn require_rolling(set: &StatefulSet) -> Result<(), String> {
    if f::on_delete(set) {
        return Err(format!(
            "the partition applies to RollingUpdate; this set is OnDelete ({} switches)",
            key(Action::ToggleStrategy)
        ));
    }
    Ok(())
}

fn partition_step(state: &mut AppState, delta: i32) -> Outcome {
    let (r, set) = selected(state)?;
    require_rolling(set)?;
    let old = f::partition(set);
    let replicas = f::replicas(set).max(0);
    let new = if delta < 0 {
        if old <= 0 {
            return Err("partition is already 0: every ordinal is on the update revision".into());
        }
        // Above `replicas` a partition holds everything: the first useful step is replicas-1.
        old.min(replicas).max(1) - 1
    } else {
        if old >= replicas {
            return Err(format!(
                "partition {old} already holds every ordinal (replicas {replicas})"
            ));
        }
        old + 1
    };
    Ok(set_partition(state, r, old, new))
}

/// Sets the partition from `old` to `new`, asking first when it moves by more than one held
/// ordinal or when raising it leaves updated pods on the update revision.
pub fn set_partition(state: &mut AppState, r: ObjRef, old: i32, new: i32) -> Vec<Command> {
    if old == new {
        info(state, format!("partition of {} is already {new}", r.name));
        return Vec::new();
    }
    let warning = if new > old { raise_warning(state, &r, new) } else { None };
    let op = Op::SetPartition { set: r.clone(), partition: new };
    let log = format!("partition {} {new}", r.name);
    // Above `replicas` a partition holds everything: measure the jump in held ordinals.
    let replicas = state.mirror.set(&r).map_or(i32::MAX, |s| f::replicas(s).max(0));
    let jump = (new.min(replicas) - old.min(replicas)).abs();
    if warning.is_some() || jump > 1 {
        let title = format!("Change the partition of {r}?");
        let confirm = Confirm {
            title,
            old: format!("partition {old}"),
            new: format!("partition {new}"),
            warning,
            ops: vec![op],
            log,
        };
        return ask(state, confirm);
    }
    let said = format!("partition {} {old} → {new}", r.name);
    send(state, op, log, said)
}

/// When raising the partition holds ordinals whose pods are already on the update revision:
/// the warning that they stay there (`core::explain::partition_warning` on the advisor's plan;
/// the set's status revisions when the advisor has not run yet).
fn raise_warning(state: &AppState, r: &ObjRef, new: i32) -> Option<String> {
    let set = state.mirror.set(r)?;
    let stays: Vec<String> = match state.advisor.as_ref().filter(|a| &a.set == r) {
        Some(advisor) => {
            let ns = r.namespace.as_str();
            let pods: Vec<_> = state.mirror.pods_in(ns).collect();
            let claims: Vec<_> = state.mirror.claims_in(ns).collect();
            let revisions: Vec<_> = state.mirror.revisions_in(ns).collect();
            let observed = Observed { set, pods: &pods, claims: &claims, revisions: &revisions };
            partition_warning(&observed, &advisor.plan, new)?.stays_updated
        }
        None => {
            let update = f::update_revision(set)?;
            if f::current_revision(set) == Some(update) {
                return None;
            }
            let hi = f::start_ordinal(set).saturating_add(new.min(f::replicas(set)));
            state
                .mirror
                .pods_of(r)
                .filter(|(o, p)| *o < hi && f::pod_revision(p) == Some(update))
                .filter(|(_, p)| !f::pod_terminating(p))
                .map(|(o, _)| pod_name(&r.name, o))
                .collect()
        }
    };
    let list = match stays.as_slice() {
        [] => return None,
        [one] => one.clone(),
        [first, .., last] => format!("{first} … {last} ({} pods)", stays.len()),
    };
    Some(format!(
        "{list} stay on the update revision: raising the partition never reverts updated pods \
         (delete them to recreate them at the current revision)"
    ))
}

/// OnDelete ⇄ RollingUpdate. To OnDelete the RollingUpdate settings are remembered; back to
/// RollingUpdate they are restored, or, for a set that was OnDelete from the start, the
/// partition holds every ordinal so the operator steps it down (`[`) one pod at a time. Asks
/// first when outdated pods at or above that partition would be replaced at once.
fn toggle_strategy(state: &mut AppState) -> Outcome {
    let (r, set) = selected(state)?;
    if !f::on_delete(set) {
        let rolling = set.spec.update_strategy.as_ref().and_then(|s| s.rolling_update.clone());
        let op = Op::SetOnDelete { set: r.clone(), on_delete: true, rolling: None };
        let (log, said) = (
            format!("strategy {} OnDelete", r.name),
            format!("strategy {} RollingUpdate → OnDelete", r.name),
        );
        let cmds = send(state, op, log, said);
        if let Some(rolling) = rolling {
            state.rolling_before_on_delete.insert(r, rolling);
        }
        return Ok(cmds);
    }
    let (start, replicas) = (f::start_ordinal(set), f::replicas(set));
    let mut rolling = state.rolling_before_on_delete.get(&r).cloned().unwrap_or_default();
    let partition = *rolling.partition.get_or_insert(replicas);
    let first = start.saturating_add(partition);
    let outdated = match f::update_revision(set) {
        Some(update) => state
            .mirror
            .pods_of(&r)
            .filter(|(o, p)| {
                *o >= first && *o < start + replicas && f::pod_revision(p) != Some(update)
            })
            .count(),
        None => 0,
    };
    let new = format!("RollingUpdate partition={partition}");
    let op = Op::SetOnDelete { set: r.clone(), on_delete: false, rolling: Some(rolling) };
    let log = format!("strategy {} RollingUpdate partition {partition}", r.name);
    if outdated > 0 {
        let warning = Some(format!(
            "{outdated} pod(s) from {} up are not on the update revision: the controller \
             starts replacing them",
            crate::core::labels::pod_name(&r.name, first)
        ));
        let confirm = Confirm {
            title: format!("Switch {r} to RollingUpdate?"),
            old: "OnDelete".into(),
            new,
            warning,
            ops: vec![op],
            log,
        };
        return Ok(ask(state, confirm));
    }
    let said = if partition >= replicas {
        format!(
            "strategy {} OnDelete → {new}: the partition holds every ordinal — press {} to roll one",
            r.name,
            key(Action::PartitionDown)
        )
    } else {
        format!("strategy {} OnDelete → {new}", r.name)
    };
    Ok(send(state, op, log, said))
}

/// Scales from `old` to `new` replicas; to 0 asks first.
pub fn scale_to(state: &mut AppState, r: ObjRef, old: i32, new: i32) -> Vec<Command> {
    if old == new {
        info(state, format!("{} already has {new} replicas", r.name));
        return Vec::new();
    }
    let op = Op::Scale { set: r.clone(), replicas: new };
    let log = format!("scale {} {new}", r.name);
    if new == 0 {
        let confirm = Confirm {
            title: format!("Scale {r} to 0?"),
            old: format!("{old} replicas"),
            new: "0 replicas".into(),
            warning: Some("every pod is deleted; claims stay unless whenScaled=Delete".into()),
            ops: vec![op],
            log,
        };
        return ask(state, confirm);
    }
    let said = format!("scale {} {old} → {new}", r.name);
    send(state, op, log, said)
}

/// Sets the image (a new revision).
pub fn set_image(state: &mut AppState, r: ObjRef, image: String) -> Outcome {
    let (_, set) = selected(state)?;
    if f::image(set) == Some(image.as_str()) {
        return Err(format!("the image is already {image}: nothing would change"));
    }
    let log = format!("image {} {image}", r.name);
    let said = format!("image {} → {image}: a new revision", r.name);
    Ok(send(state, Op::SetImage { set: r, image }, log, said))
}

/// Opens undo's revision picker, highlighting `revision` (or the newest that is not the update
/// revision).
pub fn open_picker(state: &mut AppState, revision: Option<i64>) -> Outcome {
    let (r, set) = selected(state)?;
    let current = f::current_revision(set).map(str::to_string);
    let update = f::update_revision(set).map(str::to_string);
    let choices: Vec<RevisionChoice> = state
        .mirror
        .revisions_of(&r)
        .into_iter()
        .rev()
        .map(|rev| {
            let name = rev.metadata.name.clone().unwrap_or_default();
            RevisionChoice {
                revision: rev.revision.unwrap_or(0),
                image: f::revision_image(rev).map(str::to_string),
                current: current.as_deref() == Some(name.as_str()),
                update: update.as_deref() == Some(name.as_str()),
                name,
            }
        })
        .collect();
    if choices.iter().filter(|c| !c.update).count() == 0 {
        return Err(format!("no earlier revision of {} to roll back to", r.name));
    }
    let selected = revision
        .and_then(|n| choices.iter().position(|c| c.revision == n))
        .or_else(|| choices.iter().position(|c| !c.update))
        .unwrap_or(0);
    state.modal = Modal::Picker(RevisionPicker { set: r, choices, selected });
    Ok(Vec::new())
}

/// The picker's Enter: the confirmation for rolling back to the highlighted revision.
pub fn pick_revision(state: &mut AppState) -> Outcome {
    let Modal::Picker(picker) = &state.modal else {
        return Ok(Vec::new());
    };
    let Some(choice) = picker.choices.get(picker.selected).cloned() else {
        return Err("no revision highlighted".into());
    };
    if choice.update {
        return Err(format!(
            "revision {} is already the update revision: pick an earlier one",
            choice.revision
        ));
    }
    let from = picker.choices.iter().find(|c| c.update).cloned();
    let r = picker.set.clone();
    let describe = |c: &RevisionChoice| {
        let image = c.image.as_deref().map(|i| format!(", {i}")).unwrap_or_default();
        format!("revision {} ({}{image})", c.revision, f::short_revision(&c.name))
    };
    let confirm = Confirm {
        title: format!("Roll {r} back?"),
        old: from.as_ref().map_or_else(|| "the current template".into(), describe),
        new: describe(&choice),
        warning: Some(
            "the template is replaced: pods roll to it like any update, as the strategy and \
             partition allow"
                .into(),
        ),
        ops: vec![Op::Undo { set: r.clone(), revision: Some(choice.revision) }],
        log: format!("undo {} {}", r.name, choice.revision),
    };
    state.modal = Modal::Confirm(confirm);
    Ok(Vec::new())
}

fn toggle_pause(state: &mut AppState) -> Outcome {
    if !state.caps.pause_reconcile {
        return Err(format!(
            "pausing reconciliation needs the simulator; on a cluster, freeze the rollout by \
             raising the partition ({})",
            key(Action::PartitionPrompt)
        ));
    }
    Ok(match state.mode {
        Mode::Paused => send(state, Op::Resume, "resume".into(), "resuming the controller".into()),
        Mode::Live | Mode::Frozen => send(
            state,
            Op::Pause,
            "pause".into(),
            format!("pausing the controller: {} steps one sync", key(Action::Step)),
        ),
    })
}

fn step(state: &mut AppState) -> Outcome {
    if !state.caps.pause_reconcile {
        return Err("stepping single syncs needs the simulator".into());
    }
    if state.mode != Mode::Paused {
        return Err(format!(
            "step runs one sync while paused: press {} to pause first",
            key(Action::TogglePause)
        ));
    }
    Ok(send(state, Op::Step { n: 1 }, "step".into(), "one controller sync".into()))
}

fn speed(state: &mut AppState, factor: f64) -> Outcome {
    if !state.caps.speed {
        return Err("speed applies to the simulator's virtual clock only".into());
    }
    let (lo, hi) = SPEED_RANGE;
    let new = (state.speed * factor).clamp(lo, hi);
    if (new - state.speed).abs() < f64::EPSILON {
        let which = if factor > 1.0 { "fastest" } else { "slowest" };
        return Err(format!("already at the {which} speed ({}×)", state.speed));
    }
    let old = state.speed;
    state.speed = new;
    state.dirty = true;
    Ok(send(
        state,
        Op::SetSpeed { speed: new },
        format!("speed {new}"),
        format!("speed {old}× → {new}×"),
    ))
}

/// The selected pod, which must exist.
fn selected_pod(state: &AppState) -> Result<(ObjRef, ObjRef, i32), String> {
    let (r, _) = selected(state)?;
    let ordinal = state.selected_ordinal;
    let name = pod_name(&r.name, ordinal);
    if state.mirror.pod_at(&r, ordinal).is_none() {
        return Err(format!("{name} does not exist (a placeholder): no pod to act on"));
    }
    let pod = ObjRef::new(r.namespace.clone(), name);
    Ok((r, pod, ordinal))
}

fn delete_pod(state: &mut AppState, force: bool) -> Outcome {
    let (r, pod_ref, ordinal) = selected_pod(state)?;
    let (_, set) = selected(state)?;
    let Some(pod) = state.mirror.pod_at(&r, ordinal) else {
        return Err(format!("{} does not exist", pod_ref.name));
    };
    if f::pod_terminating(pod) && !force {
        return Err(format!(
            "{} is already terminating; {} force-deletes it",
            pod_ref.name,
            key(Action::ForceDeletePod)
        ));
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
    let (verb, cmd) =
        if force { ("Force-delete", "force-delete-pod") } else { ("Delete", "delete-pod") };
    let warning = force.then(|| {
        "removed at once, without graceful termination (on a real cluster the container may \
         still be running)"
            .to_string()
    });
    let confirm = Confirm {
        title: format!("{verb} pod {pod_ref}?"),
        old,
        new,
        warning,
        log: format!("{cmd} {}", pod_ref.name),
        ops: vec![Op::DeletePod { pod: pod_ref, force }],
    };
    Ok(ask(state, confirm))
}

fn fault(state: &mut AppState, action: Action) -> Outcome {
    if !state.caps.inject_faults {
        return Err("fault injection needs the simulator (ststui sim)".into());
    }
    let (r, pod_ref, ordinal) = selected_pod(state)?;
    let Some(pod) = state.mirror.pod_at(&r, ordinal) else {
        return Err(format!("{} does not exist", pod_ref.name));
    };
    let name = pod_ref.name.clone();
    if f::pod_terminating(pod) {
        return Err(format!("{name} is terminating: faults apply to live pods"));
    }
    let (op, log, said) = match action {
        Action::FailPod => {
            (Op::FailPod { pod: pod_ref }, format!("fail {name}"), format!("{name} fails"))
        }
        Action::ToggleReady => {
            if f::pod_phase(pod) != "Running" {
                return Err(format!(
                    "{name} is {}: readiness flips only while it runs",
                    f::pod_phase(pod)
                ));
            }
            let ready = !f::pod_ready(pod);
            let word = if ready { "ready" } else { "unready" };
            (
                Op::SetPodReady { pod: pod_ref, ready },
                format!("{word} {name}"),
                format!("{name} {word}"),
            )
        }
        _ => (
            Op::BreakPod { pod: pod_ref },
            format!("break {name}"),
            format!("{name}: broken image, it will never be Ready"),
        ),
    };
    Ok(send(state, op, log, said))
}
