//! The console's plan decides on fresh reads on a cluster: a step opens on the budgets read with
//! the set, not on what the budgets' watch last said (a watch may lag a disruption elsewhere).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::app_fixtures::*;

use std::sync::Arc;

use crossterm::event::KeyCode;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use ststui::app::{AppState, Command, Msg};
use ststui::backend::{BackendEvent, Capabilities, ClusterOp, Fresh, ObjRef, Object, Op, ViewOp};
use ststui::plan::record::{LEASE, PLAN};

fn web() -> ObjRef {
    ObjRef::new("default", "web")
}

fn pdb(allowed: i32) -> PodDisruptionBudget {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web", "namespace": "default", "generation": 1},
        "spec": {"minAvailable": 5 - allowed, "selector": {"matchLabels": {"app": "web"}}},
        "status": {"currentHealthy": 5, "desiredHealthy": 5 - allowed,
                   "disruptionsAllowed": allowed, "expectedPods": 5, "observedGeneration": 1},
    }))
    .unwrap()
}

fn opened(cmds: &[Command]) -> bool {
    decided_ops(cmds).iter().any(|op| {
        matches!(op, Op::Cluster(w) if matches!(w.op, ClusterOp::Plan { partition: Some(_), .. }))
    })
}

/// The server's answer to the plan's read: the set and pods as the mirror has them, the
/// budgets as given.
fn answer(st: &AppState, budgets: Option<Vec<PodDisruptionBudget>>) -> Msg {
    let set = Arc::new(st.mirror.set(&web()).unwrap().clone());
    let pods = st.mirror.pods_of(&web()).map(|(_, p)| Arc::new(p.clone())).collect();
    let budgets = budgets.map(|b| b.into_iter().map(Arc::new).collect());
    Msg::Backend(BackendEvent::Read { set: web(), read: Ok(Fresh { set, pods, budgets }) })
}

/// The demo under a plan `1,100%` started from the console, the watch's budget allowing
/// `watched`; every read answered with the budget allowing `read`, every write applied. Whether
/// the first step opened, and how many reads were answered.
fn drive(watched: i32, read: i32) -> (AppState, bool, usize) {
    let mut st = demo(Capabilities::cluster());
    let mut set = st.mirror.set(&web()).unwrap().clone();
    let status = set.status.get_or_insert_with(Default::default);
    status.observed_generation = set.metadata.generation;
    let msgs =
        [applied(Object::Set(Arc::new(set))), applied(Object::Budget(Arc::new(pdb(watched))))];
    run(&mut st, msgs.into_iter().chain([Msg::BatchEnd]));
    run(&mut st, [key('P'), ctrl('u')]);
    run(&mut st, "1,100%".chars().map(key).chain([code(KeyCode::Enter)]));
    let mut cmds = run(&mut st, [key('y')]);
    let mut reads = 0;
    for _ in 0..20 {
        if opened(&cmds) {
            return (st, true, reads);
        }
        let mut next = Vec::new();
        for op in decided_ops(&cmds) {
            match op {
                Op::View(ViewOp::Read(_)) => {
                    reads += 1;
                    next.push(answer(&st, Some(vec![pdb(read)])));
                }
                Op::Cluster(w) => {
                    let (annotation, value) = match &w.op {
                        ClusterOp::PlanLease { lease, .. } => (LEASE, lease.clone()),
                        ClusterOp::Plan { record, .. } => (PLAN, Some(record.clone())),
                        other => panic!("unexpected write {other:?}"),
                    };
                    let mut set = st.mirror.set(&web()).unwrap().clone();
                    let map = set.metadata.annotations.get_or_insert_with(Default::default);
                    match value {
                        Some(v) => map.insert(annotation.to_string(), v),
                        None => map.remove(annotation),
                    };
                    next.push(applied(Object::Set(Arc::new(set))));
                    next.push(Msg::Backend(BackendEvent::OpDone { id: w.id, said: None }));
                    next.push(Msg::BatchEnd);
                }
                _ => {}
            }
        }
        if next.is_empty() {
            break;
        }
        cmds = run(&mut st, next);
    }
    (st, false, reads)
}

#[test]
fn a_step_opens_on_the_budgets_read_with_the_set_not_on_the_watch() {
    // The watch says the budget allows one; the server, read with the set, says none.
    let (st, opened, reads) = drive(1, 0);
    assert!(reads > 0, "the plan read the set before its verdict");
    assert!(!opened, "opened on the watch's budget");
    let said: Vec<String> = st.timeline.iter().map(|e| format!("{:?}", e.kind)).collect();
    assert!(
        said.iter()
            .any(|l| l.contains("waits to open: pdb/web: 5 healthy, needs 5, 0 disruptions")),
        "{said:#?}"
    );
    // The watch lags the other way: the read's budget decides, and the step opens.
    let (_, opened, _) = drive(0, 1);
    assert!(opened, "held on the watch's budget");
}
