//! `ststui rollout --image` on a Recreate set as an operator runs it, against a served simulator
//! with `StatefulSetRecreateStrategy` on: the before-step gate runs before the plan sets the
//! image (nothing is deleted until it passed; a failing one leaves the template and every pod
//! as they were), each pod's post-ready once it is back, the plan done when every pod is new.

use super::*;
use ststui::core::spec::UpdateType;

/// `web` (3 replicas, pods in 100 ms) served by a simulator with the Recreate gate on, switched
/// to Recreate and settled on nginx:1.25.
fn recreate_rig(test: &str) -> Rig {
    let mut config = ststui::sim::SimConfig {
        kubelet: crate::support::objects::kubelet(100),
        ..Default::default()
    };
    config.options.semantics.recreate_gate = true;
    let sim = serve_common::sim_with(vec![set("web", 3)], config, false);
    let served = Served::with_sim("plan", test, sim);
    let r = Rig { served, partitions: Arc::new(Mutex::new(Vec::new())) };
    r.op(ClusterOp::SetStrategy { set: web(), kind: UpdateType::Recreate, rolling: None });
    r
}

fn image(r: &Rig) -> String {
    let set = r.the_set();
    set.spec.template.spec.unwrap().containers[0].image.clone().unwrap()
}

/// The pods' uids, by name.
fn uids(r: &Rig) -> Vec<(String, String)> {
    r.call(|sim| {
        let mut out: Vec<(String, String)> = sim
            .pods_of(&web())
            .into_iter()
            .map(|p| (p.metadata.name.clone().unwrap(), p.metadata.uid.clone().unwrap()))
            .collect();
        out.sort();
        out
    })
}

fn trace_lines(trace: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(trace).unwrap_or_default().lines().map(str::to_string).collect()
}

#[test]
fn the_plan_sets_the_image_after_its_before_step_gate_and_gates_each_pod_as_it_is_back() {
    let r = recreate_rig("recreate-gates");
    let trace = r.dir.join("trace");
    let before = format!("cmd:echo before >> {}", trace.display());
    let post = format!("cmd:echo post $STSTUI_POD >> {}", trace.display());
    let (code, out, err) = ststui(
        &r,
        &[
            "rollout",
            "web",
            "--steps",
            "100%",
            "--image",
            "nginx:1.27",
            "--before-step",
            &before,
            "--post-ready",
            &post,
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(trace_lines(&trace), ["before", "post web-0", "post web-1", "post web-2"]);
    let passed = out.find("before-step gate").unwrap();
    let set = out.find("image nginx:1.27 set on web (Recreate").unwrap_or_else(|| panic!("{out}"));
    assert!(passed < set, "{out}");
    assert!(!out.contains("frozen first"), "a Recreate set is never frozen: {out}");
    assert!(out.contains("3 replicas, Recreate (the controller replaces every pod"), "{out}");
    assert!(out.contains("step 1: 100% → 3 of 3 updated (every pod at once)"), "{out}");
    assert_eq!(image(&r), "nginx:1.27");
    let status = r.the_set().status.unwrap();
    assert_eq!((status.updated_replicas, status.ready_replicas), (Some(3), Some(3)));
    assert_eq!(the_plan(&r).unwrap().phase, Phase::Done);
}

#[test]
fn a_failing_before_step_gate_halts_with_the_template_and_every_pod_as_they_were() {
    let r = recreate_rig("recreate-refused");
    let pods = uids(&r);
    let gate = "cmd:echo 'maintenance window closed'; exit 1";
    let (code, out, err) = ststui(
        &r,
        &["rollout", "web", "--steps", "100%", "--image", "nginx:1.27", "--before-step", gate],
    );
    assert_eq!(code, 3, "halted: {out}{err}");
    assert_eq!(image(&r), "nginx:1.25", "the image was never set");
    assert_eq!(uids(&r), pods, "no pod was deleted");
    let plan = the_plan(&r).unwrap();
    assert_eq!(plan.phase, Phase::Halted);
    assert!(plan.reason.unwrap().contains("maintenance window closed"));
    // A stepped plan is refused before anything is written.
    let (code, out, err) =
        ststui(&r, &["rollout", "web", "--steps", "1,100%", "--image", "nginx:1.27", "--force"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("a plan on it is one step of every pod"), "{err}");
    assert_eq!(image(&r), "nginx:1.25");
}
