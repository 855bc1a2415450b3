//! `ststui abort` and a disruption budget: the stuck pod is evicted, so a budget at its limit
//! (the stuck pod itself unready) refuses, and abort stops naming the budget with the template
//! reverted; `--force-delete REASON` deletes it past the budget, recorded on the set first.

use super::*;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;

fn budget(min_available: i32) -> PodDisruptionBudget {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}},
    }))
    .unwrap()
}

/// `rig` with web-3 replaced on the broken image (stuck, never Ready) and a budget wanting all
/// four pods healthy.
fn stuck_under_a_budget(test: &str) -> Rig {
    let r = rig(test, "nginx:broken");
    r.op(ClusterOp::SetPartition { set: web(), partition: 3 });
    let deadline = Instant::now() + Duration::from_secs(10);
    while pod_uid(&r, "web-3").is_none() || r.the_set().status.unwrap().updated_replicas != Some(1)
    {
        assert!(Instant::now() < deadline, "web-3 was not replaced");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Running, not Ready (a Pending pod is evicted whatever its budget says, as upstream).
    let phase = |r: &Rig| {
        let pod = ObjRef::new("default", "web-3");
        r.call(move |sim| sim.pod(&pod).and_then(|p| p.status.clone()?.phase))
    };
    while phase(&r).as_deref() != Some("Running") {
        assert!(Instant::now() < deadline, "web-3 is not running");
        std::thread::sleep(Duration::from_millis(50));
    }
    r.call(|sim| sim.apply_budget(budget(4)).unwrap());
    // The controller paused: it would otherwise replace web-3 itself once the template is
    // reverted, and an eviction of a pod already deleting is never refused.
    r.call(|sim| sim.pause());
    r
}

#[test]
fn abort_stops_at_a_budget_that_refuses_and_names_it() {
    let r = stuck_under_a_budget("abort-pdb");
    let stuck = pod_uid(&r, "web-3");
    let (code, out, err) = ststui(&r, &["abort", "web", "--yes"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("template reverted"), "{out}");
    // The preview said so first, from a dry run of the eviction.
    let foretold = out
        .find("web-3: its eviction would be refused now: refused by pdb/web: 3 healthy, needs 4")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(foretold < out.find("template reverted").unwrap_or(0), "{out}");
    assert!(out.contains("--force-delete REASON deletes such a pod past its budget"), "{out}");
    assert!(
        err.contains("evict default/web-3: refused by pdb/web: 3 healthy, needs 4, 0 disruptions allowed: nothing deleted"),
        "{err}"
    );
    assert!(err.contains("--force-delete REASON"), "{err}");
    assert_eq!(pod_uid(&r, "web-3"), stuck, "web-3 left as it was");
    let annotations = r.the_set().metadata.annotations.unwrap_or_default();
    assert!(!annotations.contains_key(ststui::steer::FORCE_DELETED), "nothing recorded");
}

#[test]
fn force_delete_records_its_reason_on_the_set_then_deletes_past_the_budget() {
    let r = stuck_under_a_budget("abort-force");
    let stuck = pod_uid(&r, "web-3");
    let (code, out, err) =
        ststui(&r, &["abort", "web", "--yes", "--force-delete", "INC-42: broken image, web-3"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("deleted past it (--force-delete: INC-42: broken image, web-3)"), "{out}");
    assert!(out.contains("deleted web-3 (stuck on"), "{out}");
    assert!(
        out.contains("past its disruption budget (refused by pdb/web: 3 healthy, needs 4"),
        "{out}"
    );
    let annotations = r.the_set().metadata.annotations.unwrap_or_default();
    let record: serde_json::Value =
        serde_json::from_str(&annotations[ststui::steer::FORCE_DELETED]).unwrap();
    assert_eq!(record["pods"], serde_json::json!(["web-3"]));
    assert_eq!(record["reason"], "INC-42: broken image, web-3");
    assert!(record["refused"].as_str().unwrap().contains("pdb/web"), "{record}");
    assert!(record["by"].as_str().is_some_and(|b| !b.is_empty()), "{record}");
    let deadline = Instant::now() + Duration::from_secs(10);
    r.call(|sim| sim.resume());
    while pod_uid(&r, "web-3") == stuck {
        assert!(Instant::now() < deadline, "web-3 was not deleted");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_blank_or_control_character_reason_is_refused_before_anything_is_asked() {
    let r = rig("abort-reason", "nginx:1.26");
    for bad in ["  ", "two\nlines"] {
        let (code, _, err) = ststui(&r, &["abort", "web", "--yes", "--force-delete", bad]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("--force-delete"), "{err}");
    }
}

/// A plan under way whose next opening a budget holds is said by `explain` (and the console's
/// controller pane), as the runner says it; approved at its pause and held by the budget, it is
/// not done (`verdict.done` false, `wait` waits).
#[test]
fn explain_says_when_a_budget_holds_the_plans_next_step() {
    let r = rig("explain-pdb", "nginx:1.26");
    let mut runner = spawn(&r, &["rollout", "web", "--steps", "1,pause,100%"]);
    until_plan(&r, "at the gate", |p| p.phase == Phase::Gate);
    let (_, out, _) = ststui(&r, &["explain", "web"]);
    assert!(!out.contains("pdb/web"), "{out}");
    r.call(|sim| sim.apply_budget(budget(4)).unwrap());
    let (code, out, err) = ststui(&r, &["approve", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, out, _) = ststui(&r, &["explain", "web"]);
        if out.contains("waits to open: pdb/web: 4 healthy, needs 4, 0 disruptions allowed") {
            let (_, json, _) = ststui(&r, &["explain", "web", "-o", "json"]);
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            assert_eq!(v["verdict"]["done"], false, "{json}");
            assert_eq!(v["verdict"]["waitingOn"], "budget", "{json}");
            let (code, out, err) = ststui(&r, &["wait", "web", "--timeout", "2s"]);
            assert_eq!(code, 1, "{out}{err}");
            assert!(out.contains("waits to open: pdb/web"), "{out}");
            break;
        }
        assert!(Instant::now() < deadline, "{out}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = runner.kill();
    let _ = runner.wait();
}
