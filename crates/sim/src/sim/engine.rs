//! The scheduler: the [`World`] (store, agenda, kubelet, controller, output) and the loop that
//! moves it through virtual time. At each instant, due agenda items run first (in (time,
//! sequence) order), then queued syncs, one at a time; after every step the store's journal is
//! dispatched to the kubelet, the garbage collector and the controller's event handlers, in
//! journal order, and forwarded to the output. Syncs take zero virtual time.
//!
//! Owns: ordering. Must not: read the wall clock (the real-time driver maps wall time onto
//! [`advance_to`]).

use super::SimEvent;
use super::clock::Due;
use super::gc;
use super::planner;
use super::store::{Entry, Store};
pub use super::world::{Livelock, MAX_SYNCS_PER_INSTANT, World};
use crate::backend::EventKind;
use crate::control::Seen;

/// The disruption controller's turn: the budgets of the namespaces whose pods, sets or budgets
/// changed get their status written (once per virtual instant, when the StatefulSet controller
/// is done with it: a rollout's thousand pod changes at one instant cost one computation, as
/// upstream's controller also works its queue behind the events). Returns whether it wrote.
pub fn disrupt(w: &mut World) -> bool {
    let mut wrote = false;
    while w.disruption.wants_run() {
        if w.disruption.sync(&mut w.store, &mut w.agenda) {
            wrote = true;
            dispatch(w);
        }
    }
    wrote
}

/// Feeds journal entries to the kubelet, the collector, the controllers and the output.
pub fn dispatch(w: &mut World) {
    while let Some(entry) = w.store.pop_entry() {
        match entry {
            Entry::Change(change) => {
                w.kubelet.observe(&change, &mut w.store, &mut w.agenda);
                gc::observe(w.gc, &change, &mut w.store, &mut w.agenda);
                let seen =
                    Seen { kind: change.kind, object: &change.object, old: change.old.as_ref() };
                w.controller.observe(seen, &w.store, &mut w.agenda);
                w.planner.observe(&change);
                w.disruption.observe(&change);
                w.out.push(SimEvent::Watch { kind: change.kind, object: change.object });
            }
            Entry::Timeline(ev, ns) => {
                if let Some(ns) = ns.as_deref() {
                    w.recorder.record(&mut w.store, ns, &ev);
                }
                w.out.push(SimEvent::Timeline(ev));
            }
        }
    }
}

fn fire(w: &mut World, due: Due) {
    match due {
        Due::Kubelet { pod, uid, step } => {
            w.kubelet.fire(&pod, &uid, step, &mut w.store, &mut w.agenda);
        }
        Due::Enqueue(key) => w.controller.fire_delayed(&key),
        Due::Collect { ns, uid } => gc::collect(&mut w.store, &ns, &uid),
        Due::Plan(_) => w.planner.wake(),
        Due::Budgets(ns) => w.disruption.wake(ns),
    }
}

/// Runs one sync, guarding against livelock at a single instant.
fn sync_once(w: &mut World) -> bool {
    let now = w.store.clock().now_ms();
    if now != w.instant_ms {
        w.instant_ms = now;
        w.instant_syncs = 0;
    }
    w.instant_syncs += 1;
    if w.instant_syncs > w.livelock_syncs {
        let hint = livelock_hint(&w.store);
        let message = format!(
            "controller livelock: more than {} syncs at one instant; \
             the controller is paused (resume to retry){hint}",
            w.livelock_syncs
        );
        let upstream = !hint.is_empty();
        w.livelocks.push(Livelock { t_ms: now, upstream, message: message.clone() });
        w.store.note(EventKind::Error { line: None, message });
        w.set_paused(true);
        w.instant_syncs = 0;
        return false;
    }
    w.controller.sync_next(&mut w.store, &mut w.agenda).is_some()
}

/// The known cause of a livelock, when a set shows it: RollingUpdate set by type alone
/// leaves `rollingUpdate` nil, so upstream creates missing pods at the *current* revision
/// (`newVersionedStatefulSetPod`) and the rolling update deletes them again as outdated; with
/// instant pod start and stop that repeats without time passing.
fn livelock_hint(store: &Store) -> String {
    let nil_rolling: Vec<String> = store
        .sets()
        .iter()
        .filter(|s| crate::core::spec::strategy(s).rolling_block_unset())
        .filter_map(|s| s.metadata.name.clone())
        .collect();
    if nil_rolling.is_empty() {
        return String::new();
    }
    let verb = if nil_rolling.len() == 1 { "uses" } else { "use" };
    format!(
        ". Likely cause: {} {verb} RollingUpdate without rollingUpdate (the type was set alone), \
         so pods are created at the current revision and deleted as outdated, over and over; \
         setting a partition (e.g. `partition NAME 0`) ends it",
        nil_rolling.join(", ")
    )
}

/// Runs everything due up to `target_ms` (absolute virtual ms), then sets the clock there.
pub fn advance_to(w: &mut World, target_ms: u64) {
    advance_until(w, target_ms, &mut || true);
}

/// [`advance_to`] in bounded slices: `go_on` is asked before every step (one due item or one
/// sync); when it says no, the run stops there and returns `false`, with the clock at the last
/// thing that happened (never past what ran, never backwards). `true` when `target_ms` was
/// reached. The real-time driver passes a wall-time budget, so a huge backlog never keeps it
/// from reading the operator's keys.
pub fn advance_until(w: &mut World, target_ms: u64, go_on: &mut dyn FnMut() -> bool) -> bool {
    loop {
        if !go_on() {
            dispatch(w);
            return false;
        }
        dispatch(w);
        let now = w.store.clock().now_ms();
        if let Some((_, due)) = w.agenda.pop_due(now) {
            fire(w, due);
            continue;
        }
        if w.controller.runnable() && sync_once(w) {
            continue;
        }
        // Budgets' status once the controller is done at this instant, then the plans (which
        // read both).
        if w.disruption.wants_run() {
            disrupt(w);
            continue;
        }
        // A plan moves once the controller is done at this instant (it reads what it wrote).
        if w.planner.wants_run() {
            planner::run(w);
            continue;
        }
        match w.agenda.pop_due(target_ms) {
            Some((at, due)) => {
                w.store.clock.set(at);
                fire(w, due);
            }
            None => break,
        }
    }
    w.store.clock.set(target_ms);
    dispatch(w);
    true
}

/// The earliest time something counts as pending for `settle`: a runnable sync or a plan to
/// move (now), a kubelet transition, a plan's wake-up, or (unless paused) a delayed sync.
pub fn next_pending(w: &World) -> Option<u64> {
    if w.controller.runnable() || w.planner.wants_run() || w.disruption.wants_run() {
        return Some(w.store.clock().now_ms());
    }
    let paused = w.controller.is_paused();
    let counts = |d: &Due| match d {
        Due::Kubelet { step, .. } => !step.recurs(),
        Due::Collect { .. } | Due::Plan(_) | Due::Budgets(_) => true,
        Due::Enqueue(_) => !paused,
    };
    w.agenda.next_matching(counts)
}

/// Advances until nothing is pending, or until `max_ms` has passed. `true` when settled.
pub fn settle(w: &mut World, max_ms: u64) -> bool {
    settle_by(w, max_ms, &mut advance_to)
}

/// [`settle`], moving time with `advance` (e.g. one that hands events on as they happen).
pub fn settle_by(w: &mut World, max_ms: u64, advance: &mut dyn FnMut(&mut World, u64)) -> bool {
    let deadline = w.store.clock().now_ms().saturating_add(max_ms);
    loop {
        let now = w.store.clock().now_ms();
        advance(w, now);
        match next_pending(w) {
            None => return true,
            Some(t) if t > deadline => {
                advance(w, deadline);
                return next_pending(w).is_none();
            }
            Some(t) => advance(w, t.max(now)),
        }
    }
}

/// Runs up to `n` syncs while paused; returns how many ran.
pub fn step(w: &mut World, n: u32) -> u32 {
    let mut ran = 0;
    dispatch(w);
    while ran < n && w.controller.sync_next(&mut w.store, &mut w.agenda).is_some() {
        ran += 1;
        dispatch(w);
    }
    // The disruption controller is not the one paused.
    disrupt(w);
    ran
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetUpdateStrategy};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn set(name: &str, strategy: StatefulSetUpdateStrategy) -> StatefulSet {
        let mut s = StatefulSet {
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            ..Default::default()
        };
        s.spec.update_strategy = Some(strategy);
        s
    }

    #[test]
    fn the_livelock_hint_names_sets_whose_rolling_update_is_unset() {
        let mut store = Store::default();
        let rolling = |ru| StatefulSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: ru,
        };
        store.create(set("db", rolling(Some(Default::default())))).unwrap();
        assert_eq!(livelock_hint(&store), "", "a set with rollingUpdate is not a cause");
        store.create(set("web", rolling(None))).unwrap();
        let hint = livelock_hint(&store);
        assert!(
            hint.contains("Likely cause: web uses RollingUpdate without rollingUpdate"),
            "{hint}"
        );
        assert!(!hint.contains("db"), "{hint}");
    }
}
