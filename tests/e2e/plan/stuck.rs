//! A pod stuck broken on an older revision (CrashLoopBackOff) under a disruption budget it makes
//! short: without `--replace-stuck` the plan's eviction of a healthy pod is refused and the plan
//! says what `--replace-stuck` would do, leaving every pod as it was; with it, the broken pod is
//! replaced first (the budget allows evicting a pod that serves nothing) and the plan completes.

use super::*;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;

/// `web` (OnDelete, 4 pods on nginx:1.25): web-0 and web-2 replaced onto nginx:1.27, which then
/// crashes (CrashLoopBackOff); the template moved on to nginx:1.28; a budget wanting 2 healthy
/// pods (so it allows no eviction of a healthy one, and allows the broken ones').
fn stuck_low(test: &str) -> Rig {
    let r = rig(test, "nginx:1.27");
    r.op(ClusterOp::SetStrategy {
        set: web(),
        kind: ststui::core::spec::UpdateType::OnDelete,
        rolling: None,
    });
    r.call(|sim| {
        sim.apply_op(ststui::backend::Op::from(ststui::backend::Fault::BrokenImage {
            image: "nginx:1.27".into(),
            broken: Some(ststui::backend::ImageFailure::Crash),
        }))
    })
    .unwrap();
    // web-2 first: OrderedReady creates nothing past a pod that is not Ready.
    for name in ["web-2", "web-0"] {
        let old = pod_uid(&r, name);
        r.op(ClusterOp::DeletePod { pod: ObjRef::new("default", name), force: false, uid: None });
        let crashing = || {
            let old = old.clone();
            r.call(move |sim| {
                sim.pod(&ObjRef::new("default", name)).is_some_and(|p| {
                    p.metadata.uid != old
                        && ststui::core::stuck::broken(p).as_deref() == Some("CrashLoopBackOff")
                })
            })
        };
        wait::until(
            &format!("{name} back on nginx:1.27, crashing"),
            Duration::from_secs(20),
            crashing,
        );
    }
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:1.28".into() });
    let budget: PodDisruptionBudget = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
    }))
    .unwrap();
    r.call(move |sim| sim.apply_budget(budget).unwrap());
    r
}

#[test]
fn a_pod_stuck_on_an_older_revision_is_offered_and_replaced_first_only_when_asked() {
    let r = stuck_low("stuck-offer");
    let healthy = pod_uid(&r, "web-3");
    // explain offers web-2 (web-0 is the forced rollback's; the console adds its key).
    let (code, out, err) = ststui(&r, &["explain", "web"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "hint     web-2 (CrashLoopBackOff) is stuck on an older revision and serves nothing: \
             replacing it brings the update revision at no cost in availability"
        ),
        "{out}"
    );
    let (code, out, err) = ststui(&r, &["rollout", "web", "--steps", "100%", "--timeout", "4s"]);
    assert_eq!(code, 1, "timed out: {out}{err}");
    assert!(
        out.contains(
            "evicting web-3: refused by pdb/web: 2 healthy, needs 2, 0 disruptions allowed: nothing \
             deleted; web-2 (CrashLoopBackOff), web-0 (CrashLoopBackOff) are stuck on an older \
             revision and serve nothing: --replace-stuck replaces them first"
        ),
        "{out}"
    );
    assert_eq!(pod_uid(&r, "web-3"), healthy, "nothing evicted");
    let (code, out, err) =
        ststui(&r, &["rollout", "web", "--steps", "100%", "--replace-stuck", "--timeout", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
    // Both broken pods at once (neither serves), before any healthy one.
    let at = |said: &str| out.find(said).unwrap_or_else(|| panic!("{said}: {out}"));
    let first = at("evicted web-2, stuck in CrashLoopBackOff on an older revision");
    let second = at("evicted web-0, stuck in CrashLoopBackOff on an older revision");
    let healthy = at("evicted web-3 ");
    assert!(first < second && second < healthy, "{out}");
    let set = r.the_set();
    let status = set.status.unwrap();
    assert_eq!(status.updated_replicas, Some(4), "every pod updated");
    assert_eq!(status.ready_replicas, Some(4), "and Ready: nginx:1.28 runs");
}
