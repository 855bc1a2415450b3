//! Rollout actions on the selected set: the partition (step, set), the strategy toggle, scale,
//! image, restart, undo's revision picker, and freeze / resume.

use crate::core::spec::UpdateType;
use k8s_openapi::api::apps::v1::StatefulSet;

use super::{Outcome, ask, f, info, key, require_rolling, selected, send, write};
use crate::app::action::Action;
use crate::app::refusal::Refusal;
use crate::app::state::{AppState, Confirm, Modal, RevisionChoice, RevisionPicker};
use crate::backend::{ClusterOp, ObjRef};
use crate::core::Observed;
use crate::core::explain::partition_warning;
use crate::core::labels::pod_name;
use crate::steer;

pub(super) fn partition_step(state: &mut AppState, delta: i32) -> Outcome {
    let (r, set) = selected(state)?;
    require_rolling(set)?;
    refuse_frozen(set, &r, &state.caps)?;
    refuse_planned(set, &r, state)?;
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
            )
            .into());
        }
        old + 1
    };
    set_partition(state, r, old, new)
}

/// Sets the partition from `old` to `new`, asking first when it moves by more than one held
/// ordinal or when raising it leaves updated pods on the update revision.
pub fn set_partition(state: &mut AppState, r: ObjRef, old: i32, new: i32) -> Outcome {
    if old == new {
        info(state, format!("partition of {} is already {new}", r.name));
        return Ok(Vec::new());
    }
    let warning =
        if new > old { raise_warning(state, &r, new) } else { ahead_of_canary(state, &r, old) };
    let op = write(state, ClusterOp::SetPartition { set: r.clone(), partition: new })?;
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
            ..Default::default()
        };
        return Ok(ask(state, confirm));
    }
    let said = format!("partition {} {old} → {new}", r.name);
    Ok(send(state, op, log, said))
}

/// When lowering the partition opens ordinals while those already open are not updated and
/// Ready (terminating, starting, on an old revision): the warning, naming them (the same rule
/// `ststui step` refuses by).
fn ahead_of_canary(state: &AppState, r: &ObjRef, old: i32) -> Option<String> {
    let set = state.mirror.set(r)?;
    let grid = state.derived.as_ref().filter(|d| &d.key.set == r).map(|d| &d.grid)?;
    let waiting = crate::app::view::grid::not_ready_open(grid, set, old.min(f::replicas(set)));
    let list = match waiting.as_slice() {
        [] => return None,
        [one] => one.clone(),
        [first, .., last] => format!("{first} … {last} ({} pods)", waiting.len()),
    };
    Some(format!(
        "the ordinals already open are not all updated and Ready ({list}): opening more runs \
         ahead of the canary"
    ))
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

/// RollingUpdate → OnDelete → Recreate (where the release and its gate have it) →
/// RollingUpdate. To OnDelete the RollingUpdate settings are remembered; back to RollingUpdate
/// they are restored, or, for a set that had none, the partition holds every ordinal so the
/// operator steps it down (`[`) one pod at a time. Asks first when outdated pods would be
/// replaced at once (at or above that partition, or all of them under Recreate).
pub(super) fn toggle_strategy(state: &mut AppState) -> Outcome {
    let (r, set) = selected(state)?;
    let kind = UpdateType::of(set);
    let sem = &state.options.semantics;
    if kind == UpdateType::OnDelete && sem.recreate_known && sem.recreate_gate {
        return to_recreate(state, r);
    }
    if kind == UpdateType::RollingUpdate {
        let rolling = set.spec.update_strategy.as_ref().and_then(|s| s.rolling_update.clone());
        let op = write(
            state,
            ClusterOp::SetStrategy { set: r.clone(), kind: UpdateType::OnDelete, rolling: None },
        )?;
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
    let old = kind.to_string();
    let op = write(
        state,
        ClusterOp::SetStrategy {
            set: r.clone(),
            kind: UpdateType::RollingUpdate,
            rolling: Some(rolling),
        },
    )?;
    let log = format!("strategy {} RollingUpdate partition {partition}", r.name);
    if outdated > 0 {
        let warning = Some(format!(
            "{outdated} pod(s) from {} up are not on the update revision: the controller \
             starts replacing them",
            crate::core::labels::pod_name(&r.name, first)
        ));
        let confirm = Confirm {
            title: format!("Switch {r} to RollingUpdate?"),
            old,
            new,
            warning,
            ops: vec![op],
            log,
            ..Default::default()
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
        format!("strategy {} {old} → {new}", r.name)
    };
    Ok(send(state, op, log, said))
}

/// OnDelete → Recreate; asks first when pods not on the update revision exist: the controller
/// deletes every one of them at once.
fn to_recreate(state: &mut AppState, r: ObjRef) -> Outcome {
    let set = state.mirror.set(&r).ok_or_else(|| format!("{r} no longer exists"))?;
    let outdated = match f::update_revision(set) {
        Some(update) => {
            state.mirror.pods_of(&r).filter(|(_, p)| f::pod_revision(p) != Some(update)).count()
        }
        None => 0,
    };
    let op = write(
        state,
        ClusterOp::SetStrategy { set: r.clone(), kind: UpdateType::Recreate, rolling: None },
    )?;
    let log = format!("strategy {} Recreate", r.name);
    if outdated > 0 {
        let confirm = Confirm {
            title: format!("Switch {r} to Recreate?"),
            old: "OnDelete".into(),
            new: "Recreate".into(),
            warning: Some(format!(
                "{outdated} pod(s) are not on the update revision: the controller deletes them \
                 all at once and creates none until they are gone"
            )),
            ops: vec![op],
            log,
            ..Default::default()
        };
        return Ok(ask(state, confirm));
    }
    let said = format!("strategy {} OnDelete → Recreate", r.name);
    Ok(send(state, op, log, said))
}

/// Scales from `old` to `new` replicas; to 0 asks first.
pub fn scale_to(state: &mut AppState, r: ObjRef, old: i32, new: i32) -> Outcome {
    if old == new {
        info(state, format!("{} already has {new} replicas", r.name));
        return Ok(Vec::new());
    }
    let op = write(state, ClusterOp::Scale { set: r.clone(), replicas: new })?;
    let log = format!("scale {} {new}", r.name);
    if new == 0 {
        let confirm = Confirm {
            title: format!("Scale {r} to 0?"),
            old: format!("{old} replicas"),
            new: "0 replicas".into(),
            warning: Some("every pod is deleted; claims stay unless whenScaled=Delete".into()),
            ops: vec![op],
            log,
            ..Default::default()
        };
        return Ok(ask(state, confirm));
    }
    if is_big_scale_up(old, new) {
        let confirm = Confirm {
            title: format!("Scale {r} from {old} to {new}?"),
            old: format!("{old} replicas"),
            new: format!("{new} replicas"),
            warning: Some(format!(
                "{} new pods: more than {BIG_SCALE_FACTOR}× the set, or beyond {BIG_SCALE_REPLICAS} \
                 — a typo here is expensive",
                i64::from(new) - i64::from(old)
            )),
            ops: vec![op],
            log,
            ..Default::default()
        };
        return Ok(ask(state, confirm));
    }
    let said = format!("scale {} {old} → {new}", r.name);
    Ok(send(state, op, log, said))
}

/// A scale-up beyond this many times the current replicas asks first.
pub const BIG_SCALE_FACTOR: i64 = 10;
/// A scale-up beyond this many replicas asks first.
pub const BIG_SCALE_REPLICAS: i64 = 100_000;

/// Whether scaling `old` → `new` is big enough to ask first: more than 10× (from at least one
/// pod) or beyond 100,000.
pub fn is_big_scale_up(old: i32, new: i32) -> bool {
    let (old, new) = (i64::from(old), i64::from(new));
    new > old && (new > BIG_SCALE_REPLICAS || new > old.max(1) * BIG_SCALE_FACTOR)
}

/// Sets the image (a new revision).
pub fn set_image(state: &mut AppState, r: ObjRef, image: String) -> Outcome {
    let (_, set) = selected(state)?;
    if f::image(set) == Some(image.as_str()) {
        return Err(format!("the image is already {image}: nothing would change").into());
    }
    let log = format!("image {} {image}", r.name);
    let said = format!("image {} → {image}: a new revision", r.name);
    let op = write(state, ClusterOp::SetImage { set: r, image })?;
    Ok(send(state, op, log, said))
}

/// Opens undo's revision picker, highlighting `revision` (or the newest that is not the update
/// revision).
pub fn open_picker(state: &mut AppState, revision: Option<i64>) -> Outcome {
    let (r, set) = selected(state)?;
    let current = f::current_revision(set).map(str::to_string);
    let update = f::update_revision(set).map(str::to_string);
    let history = state.mirror.revisions_of(&r);
    let target = history.iter().find(|rev| rev.metadata.name.as_deref() == update.as_deref());
    let choices: Vec<RevisionChoice> = history
        .iter()
        .rev()
        .map(|rev| {
            let name = rev.metadata.name.clone().unwrap_or_default();
            RevisionChoice {
                revision: rev.revision.unwrap_or(0),
                image: f::revision_image(rev).map(str::to_string),
                current: current.as_deref() == Some(name.as_str()),
                update: update.as_deref() == Some(name.as_str()),
                // What rolling back to it changes in the template the set has now.
                change: target.and_then(|t| crate::app::revdiff::summary(t, rev)),
                name,
            }
        })
        .collect();
    if choices.iter().filter(|c| !c.update).count() == 0 {
        return Err(format!("no earlier revision of {} to roll back to", r.name).into());
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
        )
        .into());
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
        ops: vec![write(
            state,
            ClusterOp::Undo { set: r.clone(), revision: Some(choice.revision) },
        )?],
        log: format!("undo {} {}", r.name, choice.revision),
        ..Default::default()
    };
    state.modal = Modal::Confirm(confirm);
    Ok(Vec::new())
}

/// A frozen set refuses partition moves: resume first (the freeze restores the partition it
/// recorded).
pub(super) fn refuse_frozen(
    set: &StatefulSet,
    r: &ObjRef,
    caps: &crate::backend::Capabilities,
) -> Result<(), Refusal> {
    match steer::frozen(set) {
        Some(fz) => Err(format!(
            "{}: {} resumes it (the partition goes back to {})",
            fz.of_set(&r.name),
            freeze_key(caps),
            fz.recorded()
        )
        .into()),
        None => Ok(()),
    }
}

/// A plan under way drives the partition: a move by hand would halt it as another writer's.
pub(super) fn refuse_planned(
    set: &StatefulSet,
    r: &ObjRef,
    state: &AppState,
) -> Result<(), Refusal> {
    let now = state.now.unwrap_or_default();
    if let Some(why) = grouped(set, r, state, now) {
        return Err(why.into());
    }
    let Some(plan) = crate::plan::record::under_way(set) else { return Ok(()) };
    Err(format!(
        "a rollout plan drives {}'s partition ({}): {} approves a gate, {} halts the plan",
        r.name,
        plan.words(now),
        key(Action::ApprovePlan),
        freeze_key(&state.caps)
    )
    .into())
}

/// A set its rollout group's plan has in turn while the group's runner drives it (its lease on
/// the group's first set live, or that set not seen here while this console does not list the
/// namespace's sets): the group opens it in turn, and a move by hand would put a second set of
/// the group in motion. A part naming a first set the namespace does not hold is no group's:
/// nothing drives it ([`Held`] says which). The refusal names the way past (`ststui step NAME
/// --force`).
fn grouped(
    set: &StatefulSet,
    r: &ObjRef,
    state: &AppState,
    now: k8s_openapi::jiff::Timestamp,
) -> Option<String> {
    use crate::plan::group::held::{First, Held};
    let first = |n: &str| match state.mirror.set(&ObjRef::new(r.namespace.clone(), n)) {
        Some(s) => First::Seen(s),
        None if sets_listed(state, &r.namespace) => First::Absent,
        None => First::Unseen,
    };
    let held = Held::of(set, first, now);
    let p = held.part().filter(|_| held.driven())?;
    Some(format!(
        "{} is {}: the group opens it in turn, and a move by hand would put a second set in \
         motion ({} shows the group; `ststui step {} --force` moves it all the same)",
        r.name,
        p.place_words(),
        key(Action::Group),
        r.name
    ))
}

/// Whether this console lists every StatefulSet of `namespace` (then a set it does not hold
/// does not exist).
fn sets_listed(state: &AppState, namespace: &str) -> bool {
    use crate::backend::ObjKind;
    state.listed.iter().any(|(kind, scope)| {
        *kind == ObjKind::Set
            && scope.name.is_none()
            && scope.selector.is_none()
            && scope.namespace.as_deref().is_none_or(|ns| ns == namespace)
    })
}

/// The key that freezes and resumes on this backend (space on a cluster; `F` where space
/// pauses reconciliation).
fn freeze_key(caps: &crate::backend::Capabilities) -> String {
    use crate::app::keymap::{Context, key_on};
    key_on(Context::Normal, caps, Action::ToggleFreeze).unwrap_or_else(|| "F".into())
}

/// `kubectl rollout restart`, after a confirmation (every pod is replaced as the strategy and
/// partition allow).
pub(super) fn restart(state: &mut AppState) -> Outcome {
    let (r, set) = selected(state)?;
    let from = f::update_revision(set).map(f::short_revision).unwrap_or("?").to_string();
    let op = write(state, ClusterOp::Restart { set: r.clone() })?;
    let confirm = Confirm {
        title: format!("Restart {r}?"),
        old: format!("revision {from}"),
        new: "a new revision (restartedAt now)".into(),
        warning: Some(
            "every pod is replaced, as the strategy and partition allow (kubectl rollout restart)"
                .into(),
        ),
        ops: vec![op],
        log: format!("restart {}", r.name),
        ..Default::default()
    };
    Ok(ask(state, confirm))
}

/// Freeze (the partition holds every ordinal; recorded on the set) or, when frozen, resume
/// (the recorded partition comes back, after a confirmation).
pub(super) fn toggle_freeze(state: &mut AppState) -> Outcome {
    let (r, set) = selected(state)?;
    match steer::frozen(set) {
        Some(fz) if fz.broken.is_some() || fz.partition.is_err() => {
            let now = f::partition(set);
            resume_broken(state, r, now, &fz)
        }
        None => {
            require_rolling(set)?;
            let (old, replicas) = (f::partition(set), f::replicas(set));
            let op = write(state, ClusterOp::Freeze { set: r.clone() })?;
            let said = format!(
                "froze {}: partition {old} → {}; {} resumes",
                r.name,
                old.max(replicas),
                freeze_key(&state.caps)
            );
            // A plan under way halts with the freeze (its record says so).
            let halt = crate::app::plan_run::halt_for_freeze(state, &r, set);
            let mut cmds = send(state, op, format!("freeze {}", r.name), said);
            cmds.extend(halt);
            Ok(cmds)
        }
        Some(fz) => {
            let restored = fz.partition.clone().unwrap_or(0);
            let op = write(state, ClusterOp::Unfreeze { set: r.clone(), force: false })?;
            let confirm = Confirm {
                title: format!("Resume the rollout of {r}?"),
                old: format!("partition {} ({})", f::partition(set), fz.words()),
                new: format!("partition {restored}"),
                warning: Some(format!(
                    "ordinals from {} up roll to the update revision again",
                    pod_name(&r.name, f::start_ordinal(set).saturating_add(restored))
                )),
                ops: vec![op],
                log: format!("unfreeze {}", r.name),
                ..Default::default()
            };
            Ok(ask(state, confirm))
        }
    }
}

/// Resume a freeze that no longer holds (another writer moved the partition) or whose record
/// is not a partition: only after a confirmation that says what it writes over.
fn resume_broken(state: &mut AppState, r: ObjRef, now: i32, fz: &steer::Frozen) -> Outcome {
    let op = write(state, ClusterOp::Unfreeze { set: r.clone(), force: true })?;
    let (new, warning) = match &fz.partition {
        Ok(p) => (
            format!("partition {p} (the freeze's record)"),
            format!("this writes over partition {now}, which another writer set after the freeze"),
        ),
        Err(_) => (
            format!("partition {now}, freeze annotations dropped"),
            format!("the recorded partition {} cannot be restored", fz.recorded()),
        ),
    };
    let confirm = Confirm {
        title: format!("Resume {r} although its {}?", fz.words()),
        old: format!("partition {now}"),
        new,
        warning: Some(warning),
        ops: vec![op],
        log: format!("unfreeze {} force", r.name),
        ..Default::default()
    };
    Ok(ask(state, confirm))
}

/// Sets maxUnavailable (a number or a percentage).
pub fn set_max_unavailable(
    state: &mut AppState,
    r: ObjRef,
    value: k8s_openapi::apimachinery::pkg::util::intstr::IntOrString,
) -> Outcome {
    let text = crate::core::spec::int_or_string_text(&value);
    let op = write(state, ClusterOp::SetMaxUnavailable { set: r.clone(), value })?;
    let said = format!("maxUnavailable of {} → {text}", r.name);
    Ok(send(state, op, format!("maxunavailable {} {text}", r.name), said))
}
