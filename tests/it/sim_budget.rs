//! PodDisruptionBudgets in the simulator: the scenario's `pdb`, `evict` and `delete-pdb` lines
//! (parsed, and their bad forms named), the status the disruption controller keeps (as
//! kube-controller-manager's: counts, condition, generation, the evictions it still counts),
//! the API's validation, and evictions judged by it — from a script and as ststui's own write
//! (`ClusterOp::EvictPod`: refused as a disruption naming the budget).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::path::Path;

use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use ststui::backend::{ClusterOp, EventKind, FailureKind, ObjRef, Op};
use ststui::sim::scenario::{BudgetArgs, Command, Player, parse};
use ststui::sim::{Sim, SimConfig};

fn key(name: &str) -> ObjRef {
    ObjRef::new("default", name)
}

/// Plays `text` on a fresh simulation (every `expect` must hold); the simulation, the error
/// lines' messages and the plan lines' texts.
fn played(text: &str) -> (Sim, Vec<String>, Vec<String>) {
    let script = parse(Path::new("<test>"), text).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Sim::new(SimConfig::default());
    let (mut errors, mut plans) = (Vec::new(), Vec::new());
    let outcome = Player::new(script).unwrap().run(&mut sim, &mut |ev| match ev
        .timeline()
        .map(|e| &e.kind)
    {
        Some(EventKind::Error { message, .. }) => errors.push(message.clone()),
        Some(EventKind::Plan { text, .. }) => plans.push(text.clone()),
        _ => {}
    });
    assert!(outcome.passed(), "{:?}\n{plans:?}", outcome.failures);
    (sim, errors, plans)
}

/// [`played`]: the simulation and the error lines.
fn play(text: &str) -> (Sim, Vec<String>) {
    let (sim, errors, _) = played(text);
    (sim, errors)
}

fn status(sim: &Sim, name: &str) -> (i32, i32, i32, i32) {
    let s = sim.budget(&key(name)).unwrap().status.clone().unwrap();
    let n = |v: Option<i32>| v.unwrap_or(-1);
    (n(s.current_healthy), n(s.desired_healthy), n(s.expected_pods), n(s.disruptions_allowed))
}

fn condition(sim: &Sim, name: &str) -> (String, String) {
    let s = sim.budget(&key(name)).unwrap().status.clone().unwrap();
    let c = s.conditions.unwrap().into_iter().find(|c| c.type_ == "DisruptionAllowed").unwrap();
    (c.status, c.reason)
}

#[test]
fn the_lines_parse_and_their_bad_forms_are_named() {
    let script = parse(Path::new("<t>"), "pdb web min-available=2\npdb db max-unavailable=25% set=web unhealthy=AlwaysAllow\nevict web-1\ndelete-pdb web").unwrap();
    let commands: Vec<&Command> = script.lines.iter().map(|l| &l.command).collect();
    let Command::Budget(b) = commands[0] else { panic!("{:?}", commands[0]) };
    assert_eq!(
        **b,
        BudgetArgs {
            name: ststui::sim::scenario::Name { namespace: "default".into(), name: "web".into() },
            set: "web".into(),
            min_available: Some(IntOrString::Int(2)),
            max_unavailable: None,
            unhealthy: None,
        }
    );
    let Command::Budget(b) = commands[1] else { panic!("{:?}", commands[1]) };
    assert_eq!((b.set.as_str(), b.unhealthy.as_deref()), ("web", Some("AlwaysAllow")));
    assert_eq!(b.max_unavailable, Some(IntOrString::String("25%".into())));
    assert!(matches!(commands[2], Command::Evict { pod } if pod.name == "web-1"));
    assert!(matches!(commands[3], Command::DeleteBudget { name } if name.name == "web"));
    for (line, said) in [
        ("pdb web", "give min-available=N|P% or max-unavailable=N|P%"),
        ("pdb web min-available=two", "min-available=two: \"two\" is not a number or a percentage"),
        (
            "pdb web min-available=1 unhealthy=Never",
            "unhealthy=Never: \"Never\" is not an unhealthy pod eviction policy",
        ),
        ("pdb web min-available=1 set=a/b", "set=a/b: expected a set's name"),
        ("pdb web min-available=1 selector=x", "unknown key \"selector\""),
        ("evict", "missing argument POD"),
    ] {
        let e = parse(Path::new("<t>"), line).unwrap_err().to_string();
        assert!(e.contains(said), "{line}: {e}");
    }
}

#[test]
fn the_disruption_controller_keeps_the_status_as_upstream() {
    let (mut sim, errors) = play("create web replicas=4\nsettle\npdb web min-available=3\nsettle");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(status(&sim, "web"), (4, 3, 4, 1));
    assert_eq!(condition(&sim, "web"), ("True".into(), "SufficientPods".into()));
    let b = sim.budget(&key("web")).unwrap();
    assert_eq!(b.metadata.generation, Some(1));
    assert_eq!(b.status.as_ref().unwrap().observed_generation, Some(1));
    // A pod turning unready moves it at once.
    sim.apply_op(Op::from(ststui::backend::Fault::SetPodReady { pod: key("web-3"), ready: false }))
        .unwrap();
    sim.advance_to(sim.now_ms());
    assert_eq!(status(&sim, "web"), (3, 3, 4, 0));
    assert_eq!(condition(&sim, "web"), ("False".into(), "InsufficientPods".into()));
    // maxUnavailable as a percentage: expected from the set's replicas, rounded up.
    let (sim, _) = play(
        "create web replicas=4\nsettle\npdb web max-unavailable=30%\nsettle\nscale web 5\nsettle",
    );
    // 30% of 5 = 1.5, rounded up: 2 may be unavailable, 3 wanted.
    assert_eq!(status(&sim, "web"), (5, 3, 5, 2));
    let b = sim.budget(&key("web")).unwrap();
    assert_eq!(b.metadata.generation, Some(1), "a scale is not a change of the budget");
}

#[test]
fn an_eviction_is_charged_then_forgotten_once_the_pod_goes() {
    let (mut sim, _) = play("create web replicas=3\nsettle\npdb web min-available=2\nsettle");
    assert_eq!(status(&sim, "web").3, 1);
    sim.apply_op(Op::from(ClusterOp::EvictPod { pod: key("web-2"), uid: None })).unwrap();
    // Charged at once, as the API server writes it before the deletion.
    let charged = sim.budget(&key("web")).unwrap().status.clone().unwrap();
    assert_eq!(charged.disruptions_allowed, Some(0));
    assert!(charged.disrupted_pods.unwrap().contains_key("web-2"));
    sim.advance_to(sim.now_ms());
    // The pod is terminating (not healthy) and the record of its eviction is dropped: upstream
    // keeps it only for pods not yet seen deleting.
    let b = sim.budget(&key("web")).unwrap().clone();
    assert_eq!(b.status.as_ref().unwrap().disrupted_pods, None);
    assert_eq!(status(&sim, "web"), (2, 2, 3, 0));
    let pod = sim.pod(&key("web-2")).unwrap();
    assert!(pod.metadata.deletion_timestamp.is_some());
    let target = pod.status.as_ref().unwrap().conditions.as_ref().unwrap();
    assert!(target.iter().any(|c| c.type_ == "DisruptionTarget" && c.status == "True"));
    // The next one is refused while web-2 is away, with the budget's counts.
    let refused =
        sim.apply_op(Op::from(ClusterOp::EvictPod { pod: key("web-1"), uid: None })).unwrap_err();
    assert_eq!(refused.kind(), FailureKind::Disruption);
    assert_eq!(
        refused.to_string(),
        "refused by pdb/web: 2 healthy, needs 2, 0 disruptions allowed: nothing deleted"
    );
    assert!(sim.pod(&key("web-1")).unwrap().metadata.deletion_timestamp.is_none());
    // Back Ready: one allowed again.
    assert!(sim.settle(60_000));
    assert_eq!(status(&sim, "web"), (3, 2, 3, 1));
    // A plain delete (`delete-pod`, `kubectl delete pod`) asks no budget.
    sim.apply_op(Op::from(ClusterOp::DeletePod { pod: key("web-0"), force: false, uid: None }))
        .unwrap();
    sim.apply_op(Op::from(ClusterOp::DeletePod { pod: key("web-1"), force: false, uid: None }))
        .unwrap();
    sim.advance_to(sim.now_ms());
    assert_eq!(status(&sim, "web").0, 1, "two deleted past the budget");
}

#[test]
fn an_unready_pod_goes_while_the_budget_holds_and_two_budgets_refuse() {
    let (mut sim, errors) = play(
        "create web replicas=3\nsettle\npdb web min-available=2\nunready web-2\nevict web-2\n\
         pdb other min-available=1 set=web\nevict web-1",
    );
    // web-2 unready, the budget still met (2 of 2): it disrupts nothing and goes.
    assert!(sim.pod(&key("web-2")).is_none_or(|p| p.metadata.deletion_timestamp.is_some()));
    // Two budgets select web-1: the API server supports one.
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("more than one PodDisruptionBudget"), "{errors:?}");
    assert!(sim.settle(60_000));
    let unknown = sim.apply_op(Op::from(ClusterOp::EvictPod { pod: key("web-9"), uid: None }));
    assert_eq!(unknown.unwrap_err().kind(), FailureKind::NotFound);
}

#[test]
fn the_api_refuses_a_budget_upstream_refuses() {
    let mut sim = Sim::new(SimConfig::default());
    let both: PodDisruptionBudget = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 1, "maxUnavailable": "120%", "selector": {"matchLabels": {"app": "web"}}},
    }))
    .unwrap();
    let e = sim.apply_budget(both).unwrap_err().to_string();
    assert!(e.starts_with("PodDisruptionBudget.policy \"web\" is invalid: ["), "{e}");
    assert!(e.contains("minAvailable and maxUnavailable cannot be both set"), "{e}");
    assert!(
        e.contains("spec.maxUnavailable: Invalid value: \"120%\": must not be greater than 100%"),
        "{e}"
    );
    assert!(sim.budget(&key("web")).is_none());
}

#[test]
fn a_pdb_line_names_a_missing_set_and_replaces_a_budget_in_place() {
    let (sim, errors) = play(
        "create web replicas=2\nsettle\npdb web min-available=1\npdb web max-unavailable=1\n\
         pdb db min-available=1",
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("statefulset default/db not found"), "{errors:?}");
    let b = sim.budget(&key("web")).unwrap();
    let spec = b.spec.as_ref().unwrap();
    assert_eq!(
        (spec.min_available.clone(), spec.max_unavailable.clone()),
        (None, Some(IntOrString::Int(1)))
    );
    assert_eq!(b.metadata.generation, Some(2), "the spec changed");
}

/// Timeline lines of kind `plan`, as text.
fn plan_lines(text: &str) -> Vec<String> {
    played(text).2
}

#[test]
fn a_rolling_update_step_opens_only_while_its_budget_allows_a_disruption() {
    // Held before its first step (nothing recorded, the partition where it was), then before
    // its second (the first step's pod updated), each said once; relaxed, it goes on.
    let lines = plan_lines(
        "kubelet start=1s ready=1s stop=1s\ncreate web replicas=4 partition=4\nsettle\n\
         pdb web min-available=4\nimage web nginx:1.26\nrollout web steps=1,100% bake=20s\nwait 30s\n\
         expect web updated=0 partition=4 plan=none\n\
         pdb web min-available=3\nwait 10s\nexpect web updated=1 partition=3\n\
         pdb web min-available=4\nwait 30s\nexpect web updated=1 partition=3\n\
         pdb web max-unavailable=1\nsettle\nexpect web updated=4 ready=4 plan=done",
    );
    let held: Vec<&String> = lines.iter().filter(|l| l.contains("waits to open")).collect();
    assert_eq!(held.len(), 2, "once per hold: {lines:?}");
    assert_eq!(
        held[0],
        "step 1/2: waits to open: pdb/web: 4 healthy, needs 4, 0 disruptions allowed (the \
         controller deletes a rolling update's pods without asking it)"
    );
    assert!(
        held[1].starts_with("step 2/2: waits to open: pdb/web: 4 healthy, needs 4"),
        "{lines:?}"
    );
    let opened: Vec<&String> = lines.iter().filter(|l| l.contains("partition 4 → 3")).collect();
    assert_eq!(opened.len(), 1, "{lines:?}");
}

#[test]
fn a_budget_on_another_sets_pods_holds_nothing() {
    let lines = plan_lines(
        "create web replicas=2 partition=2\ncreate db replicas=1\nsettle\npdb db min-available=1\n\
         image web nginx:1.26\nrollout web steps=100%\nsettle\nexpect web updated=2 plan=done",
    );
    assert!(!lines.iter().any(|l| l.contains("waits to open")), "{lines:?}");
}
