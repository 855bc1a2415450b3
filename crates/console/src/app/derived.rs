//! What the console derives from the mirror and the advisor once per state change, not once per
//! frame: the selected set's ordinal grid (one cell per ordinal, classified against the set's
//! revisions), the controller pane's sentences, the next actions (for the pod detail), and the
//! health word. At 10,000 pods classifying every pod costs milliseconds; a frame only reads this.
//!
//! Owns: the cache and when it is stale ([`Key`]). [`refresh`] is called by the reducer at the
//! end of every batch (after the advisor); [`Derived::of`] computes the same thing for a state
//! whose cache is stale (a test that never ends a batch), so a frame is never wrong, only slower.
//! Must not write anything but `AppState::derived`.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::facts::revisions_of;
use super::health;
use super::readings::pods_unknown;
use super::state::{AppState, Derived, Key};
use super::state::{ExplainLine, LineKind};
use super::view::explain;
use super::view::grid::{GridMemo, GridView};
use crate::backend::ObjRef;
use crate::core::Observed;

impl Key {
    fn of(state: &AppState) -> Option<Key> {
        let set = state.selected_set.clone()?;
        let ours = state.advisor.as_ref().filter(|a| a.set == set);
        let advisor = ours.map(|a| (a.mirror_generation, a.at.map(|t| t.as_millisecond())));
        let waits = ours.is_some_and(|a| a.plan.waiting_on.is_some());
        let min_ready =
            state.mirror.set(&set).and_then(|s| s.spec.min_ready_seconds).unwrap_or(0) > 0;
        // A plan's or a group's words move with the clock (a bake's time left, a lease running
        // out): their annotations' presence is enough to know (no record read per frame).
        let recorded =
            state.mirror.set(&set).and_then(|s| s.metadata.annotations.as_ref()).is_some_and(|a| {
                a.contains_key(crate::plan::record::PLAN)
                    || a.contains_key(crate::plan::group::part::PART)
            });
        let second = state.now.map(|t| t.as_second()).filter(|_| waits || min_ready || recorded);
        Some(Key {
            set,
            mirror_generation: state.mirror.generation(),
            events_generation: state.mirror.events().generation(),
            advisor,
            second,
            mode: state.mode,
            unknown: (
                pods_unknown(state),
                state.unreadable.contains_key(&crate::backend::ObjKind::Claim),
            ),
            writes: {
                use super::action::Action;
                use super::readings::applies;
                (
                    applies(Action::PartitionDown, state),
                    applies(Action::PartitionPrompt, state),
                    applies(Action::DeletePod, state),
                )
            },
        })
    }
}

impl Derived {
    /// Computes the derived data of the selected set, if there is one.
    pub fn of(state: &AppState) -> Option<Derived> {
        Derived::with_memo(state, &mut GridMemo::default())
    }

    /// [`Derived::of`], the grid reading only the pods `memo` has not seen in this version.
    pub fn with_memo(state: &AppState, memo: &mut GridMemo) -> Option<Derived> {
        let key = Key::of(state)?;
        let set = state.mirror.set(&key.set)?;
        let plan = state.plan_for(&key.set);
        let (current, update) = revisions_of(set, plan);
        let ns = key.set.namespace.as_str();
        let pods: Vec<_> = state.mirror.pods_in(ns).collect();
        if let Some(note) = pods_unknown(state) {
            let line = ExplainLine {
                kind: LineKind::Waiting,
                text: format!("the advisor cannot run: {note}"),
            };
            // Pods listed so far are drawn as they arrive, the rest said not known yet.
            let grid = match listing_so_far(state, set) {
                Some(so_far) => {
                    let grid = state.mirror.indexed(&key.set);
                    let grid = GridView::build_memo(set, grid, current, update, memo);
                    grid.listing(so_far)
                }
                None => GridView::unknown(set, note),
            };
            let (controller, steps) = (vec![line], Vec::new());
            // The pods are unknown to the verdict: none to hand it.
            let verdict = health::verdict_on(state, &key.set, &controller, &[])?;
            let revision_changes = Vec::new();
            return Some(Derived { key, grid, controller, steps, verdict, revision_changes });
        }
        let mut grid =
            GridView::build_memo(set, state.mirror.indexed(&key.set), current, update, memo);
        // The set's pods in ordinal order, as the grid claimed them (the controller's rules,
        // decided once per pod version by the memo): what the verdict and the stuck-pod hint
        // read, with no second pass over the namespace's pods.
        let claimed: Vec<(i32, &k8s_openapi::api::core::v1::Pod)> = (state.mirror)
            .indexed(&key.set)
            .filter(|(o, _)| grid.cell(*o).is_some_and(|c| c.exists))
            .map(|(o, p)| (o, &**p))
            .collect();
        let find = |name: &str| state.mirror.claim(&ObjRef::new(ns, name));
        let existing = grid.cells.iter().filter(|c| c.exists).map(|c| c.ordinal);
        grid.claims = super::view::claims::marks(set, existing, find);
        // The plan record, read once for the grid's gate mark and the budget's hold.
        let reading = crate::plan::record::read(set);
        grid.gate = super::view::GateMark::of(set, &reading);
        let (controller, steps) = match plan {
            Some(plan) => {
                let claims: Vec<_> = state.mirror.claims_in(ns).collect();
                let revisions: Vec<_> = state.mirror.revisions_in(ns).collect();
                let observed =
                    Observed { set, pods: &pods, claims: &claims, revisions: &revisions };
                let now = state.now.unwrap_or_default();
                let steps = crate::core::explain::next_actions(&observed, plan);
                let offer = offer(state, set);
                let lines = explain::explain(&observed, &claimed, plan, &steps, &grid, now, offer);
                (lines, steps)
            }
            None => (
                vec![ExplainLine {
                    kind: LineKind::Waiting,
                    text: "the advisor has not run yet".into(),
                }],
                Vec::new(),
            ),
        };
        let mut controller = controller;
        let verdict = health::verdict_on(state, &key.set, &controller, &claimed)?;
        if let Some(w) = complete_but_not_ready(set, verdict.word(), &controller) {
            controller.push(w);
        }
        if let Some(said) = super::view::events::set_blocker(state, &key.set) {
            controller.push(ExplainLine { kind: LineKind::Warning, text: said });
        }
        if let Some(why) = state.unreadable.get(&crate::backend::ObjKind::Claim)
            && !set.spec.volume_claim_templates.as_ref().is_none_or(Vec::is_empty)
        {
            controller.push(ExplainLine {
                kind: LineKind::Warning,
                text: format!(
                    "claims unknown: {why}; what the controller does with them is not shown"
                ),
            });
        }
        if let Some(line) = verdict_line(&verdict) {
            controller.insert(0, line);
        }
        let history = state.mirror.revisions_of(&key.set);
        let revision_changes = history
            .windows(2)
            .filter_map(|w| {
                let name = w[1].metadata.name.clone()?;
                Some((name, crate::app::revdiff::summary(w[0], w[1])?))
            })
            .collect();
        Some(Derived { key, grid, controller, steps, verdict, revision_changes })
    }

    /// Whether this was computed from what `state` holds now.
    pub fn is_fresh(&self, state: &AppState) -> bool {
        Key::of(state).as_ref() == Some(&self.key)
    }
}

/// The verdict as the controller pane's first line, where it says more than the controller's
/// own lines: what a plan, a group or a freeze has the set wait on, or what is held and by
/// what, with the command that moves it on. Healthy, rolling by the controller alone, or
/// unknown: the controller's lines say it.
pub fn verdict_line(v: &crate::plan::verdict::Verdict) -> Option<ExplainLine> {
    use crate::plan::verdict::{Kind, Row};
    let kind = match v.row {
        // The controller's own lines say these (a partition's hold with its key, what it waits
        // for); explain's "next:" line carries the verdict's command.
        Row::Healthy | Row::Rolling | Row::Degraded | Row::Unknown | Row::Paused | Row::Held => {
            return None;
        }
        Row::Blocked => return None,
        _ if v.kind() == Kind::Stuck => LineKind::Error,
        Row::FrozenIdle => LineKind::Held,
        _ => LineKind::Waiting,
    };
    Some(ExplainLine { kind, text: v.said() })
}

/// The keys the controller pane may name for `set` now.
pub fn offer(state: &AppState, set: &StatefulSet) -> explain::Offer {
    use super::action::Action;
    use super::readings::applies;
    // A plan under way or halted holds the partition: its keys are continue and abort (the
    // verdict's line), never a move by hand under it.
    let planned = crate::plan::verdict::current_plan(set).is_some_and(|r| {
        !matches!(r.phase, crate::plan::record::Phase::Done | crate::plan::record::Phase::Aborted)
    });
    let free = crate::steer::frozen(set).is_none() && !planned;
    explain::Offer {
        lower_partition: free && applies(Action::PartitionDown, state),
        set_partition: free && applies(Action::PartitionPrompt, state),
        delete_pod: applies(Action::DeletePod, state),
        planned,
    }
}

/// The controller's completion counts revisions, not readiness: "rollout complete" while
/// pods are not Ready (a Parallel set at start, a crash-looping image) gets a line that says so.
fn complete_but_not_ready(
    set: &StatefulSet,
    health: health::Health,
    controller: &[ExplainLine],
) -> Option<ExplainLine> {
    if !controller.iter().any(|l| l.kind == LineKind::Done) || health == health::Health::Healthy {
        return None;
    }
    let replicas = crate::core::spec::replicas(set);
    let ready = set.status.as_ref().and_then(|s| s.ready_replicas).unwrap_or(0);
    (ready < replicas).then(|| ExplainLine {
        kind: LineKind::Warning,
        text: format!(
            "{}: {ready} of {replicas} pods Ready — complete by the controller's rule, which \
             counts revisions, not readiness",
            health.word()
        ),
    })
}

/// While the set's pods are being listed and some have arrived (the pods are not unreadable):
/// how far the listing is, `listing pods … 400/1,000` (the set's replicas).
fn listing_so_far(state: &AppState, set: &StatefulSet) -> Option<String> {
    let so_far = super::readings::pods_listing(state).filter(|n| *n > 0)?;
    let replicas = crate::core::spec::replicas(set);
    // The selector's pods are counted: more than the set's when others match it.
    Some(match usize::try_from(replicas) {
        Ok(r) if so_far <= r => format!("listing pods … {so_far}/{r}"),
        _ => format!("listing pods … {so_far} so far"),
    })
}

/// Recomputes the cache when what it was computed from moved (called at the end of a batch).
pub fn refresh(state: &mut AppState) {
    if state.derived.as_ref().is_some_and(|d| d.is_fresh(state)) {
        return;
    }
    let mut memo = std::mem::take(&mut state.grid_memo);
    let new = Derived::with_memo(state, &mut memo);
    state.grid_memo = memo;
    if new != state.derived {
        state.dirty = true;
    }
    state.derived = new;
}
