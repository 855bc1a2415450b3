//! A group's runner keeps one watch per kind, not one per set: `ststui rollout -l
//! rollout-group=many` over 16 sets holds at most 16 sockets (each set watching its own pods,
//! revisions, claims and Events held ~8 a set: 130 here, 530 for 64 sets), and still sees each
//! set's own pods — the plan rolls every set, one at a time, and no pod of a set outside the
//! group is taken for one of its members.

use super::*;
use crate::support::objects::kubelet;

const SETS: usize = 16;

/// The sockets `pid` holds (Linux: its file descriptors that are sockets).
fn sockets(pid: u32) -> usize {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap();
    fds.filter_map(Result::ok)
        .filter(|e| {
            std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
        })
        .count()
}

#[test]
fn a_group_of_16_sets_is_watched_on_a_few_connections_and_each_set_sees_its_own_pods() {
    let mut sets: Vec<StatefulSet> = (0..SETS)
        .map(|i| {
            let mut s = set(&format!("many-{i:02}"), 1);
            s.metadata.labels = Some([("rollout-group".to_string(), "many".to_string())].into());
            s
        })
        .collect();
    // Outside the group, a set whose name extends a member's and whose pods share its label:
    // its pods are never a member's (matched by the member's selector and name).
    let mut outsider = set("many-00-x", 2);
    outsider.spec.selector.match_labels = Some([("app".to_string(), "many-00".to_string())].into());
    if let Some(t) = outsider.spec.template.metadata.as_mut() {
        t.labels = Some([("app".to_string(), "many-00".to_string())].into());
    }
    sets.push(outsider);
    let s = Served::new("connections", "group16", sets, &[], kubelet(100));
    for i in 0..SETS {
        let key = ObjRef::new("default", format!("many-{i:02}"));
        s.op(ClusterOp::SetPartition { set: key.clone(), partition: 1 });
        s.op(ClusterOp::SetImage { set: key, image: "nginx:1.26".into() });
    }
    let mut child = runner::against(
        &s.dir,
        &[
            "rollout",
            "-l",
            "rollout-group=many",
            "--steps",
            "100%",
            "--zone-bake",
            "1s",
            "--timeout",
            "120s",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let lines = runner::follow(&mut child);
    // Once the plan is under way (its first set rolling), every watch is open.
    let under_way = || lines.lock().unwrap().iter().any(|l| l.contains("many-01 starts"));
    wait::until("the group's second set starting", Duration::from_secs(60), under_way);
    let held = sockets(child.id());
    assert!(held <= 16, "{held} sockets for a group of {SETS} sets");
    let out = child.wait_with_output().unwrap();
    let said = lines.lock().unwrap().join("\n");
    assert_eq!(out.status.code(), Some(0), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains(&format!("every set of {SETS} rolled")), "{said}");
    // Each member rolled on its own pods; the outsider's were never touched.
    for i in 0..SETS {
        let key = ObjRef::new("default", format!("many-{i:02}"));
        let partition =
            s.call(move |sim| sim.set(&key).map(|x| ststui::core::spec::strategy(x).partition));
        assert_eq!(partition, Some(0), "many-{i:02}");
    }
    let outsider = ObjRef::new("default", "many-00-x");
    let image = s.call(move |sim| {
        let set = sim.set(&outsider)?;
        set.spec.template.spec.as_ref()?.containers.first()?.image.clone()
    });
    assert_eq!(image.as_deref(), Some("nginx:1.25"));
}
