//! A fleet's gates run against the cluster of the member they are about: an `exec:` gate goes
//! through that cluster's API server, a `cmd:` gate is told the member's context
//! (`STSTUI_CONTEXT`). The third cluster refuses exec: the fleet rolls the first two (their
//! gates pass in their own clusters) and halts at the third, whose gate was refused there — had
//! every gate gone to the first cluster, the third would have rolled too.

use super::*;

#[test]
fn each_gate_runs_in_its_members_cluster_and_is_told_its_context() {
    let clusters =
        served_denying("gates", |_| false, |i| if i == 2 { &["create:pods/exec"] } else { &[] });
    for s in &clusters {
        s.op(ClusterOp::SetPartition { set: web(), partition: 3 });
        s.op(ClusterOp::SetImage { set: web(), image: "nginx:1.26".into() });
    }
    let f = watched(clusters);
    let trace = f.dir().join("trace");
    let post = format!("cmd:echo \"$STSTUI_CONTEXT $STSTUI_POD\" >> {}", trace.display());
    let args = [
        "rollout",
        "web",
        "--contexts",
        "eu,us,ap",
        "--steps",
        "100%",
        "--pre-delete",
        "exec:app -- true",
        "--post-ready",
        &post,
    ];
    let (code, out, err) = runner::outcome(&mut runner::against(f.dir(), &args));
    assert_eq!(code, 3, "halted at ap: {out}{err}");
    assert!(out.contains("halted at ap/web"), "{out}");
    let why = part_of(&f, 2).and_then(|p| p.reason).unwrap_or_default();
    let plan = ststui::plan::record::read(&f.set(2)).plan().cloned();
    let reason = plan.and_then(|r| r.reason).unwrap_or_default();
    assert!(
        format!("{why} {reason}").contains("pods/exec"),
        "ap's gate refused by ap's server: {why} / {reason}\n{out}"
    );
    let told = std::fs::read_to_string(&trace).unwrap_or_default();
    let lines: Vec<&str> = told.lines().collect();
    assert_eq!(
        lines,
        ["eu web-2", "eu web-1", "eu web-0", "us web-2", "us web-1", "us web-0"],
        "each post-ready gate told its member's context, none in ap"
    );
    assert_eq!(f.set(2).status.unwrap().updated_replicas, Some(0), "no ap pod updated");
}
