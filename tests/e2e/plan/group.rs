//! Rollout groups as an operator runs them: `ststui rollout -l rollout-group=ingester | --group
//! …` and `ststui abort` against the served simulator, every set's partition watched from
//! beside it. Three zones of four roll one at a time (the trace shows no two in motion); a pod
//! a quota keeps out holds the next zone, named, and the group goes on once it exists; a check
//! failing in zone-b halts the group with zone-c untouched, and abort reverts zone-b then
//! zone-a; rollout-operator's group is refused.

use super::*;
use crate::support::objects::kubelet;
use ststui::plan::group::part::{self, Part, State};

pub(super) const ZONES: [&str; 3] = ["ingester-zone-a", "ingester-zone-b", "ingester-zone-c"];

/// Every (set, partition) change seen, in order.
type Trace = Arc<Mutex<Vec<(String, i32)>>>;

/// Three zones of four labelled `rollout-group=ingester` (OnDelete when `on_delete`), each held
/// at partition 4 with nginx:1.26 waiting, and every (set, partition) the sets are seen with.
pub(super) fn zones(test: &str, on_delete: bool) -> (Served, Trace) {
    let served = Served::new("group", test, zone_sets(on_delete), &[], kubelet(100));
    for z in ZONES {
        let key = ObjRef::new("default", z);
        if !on_delete {
            op(&served, ClusterOp::SetPartition { set: key.clone(), partition: 4 });
        }
        op(&served, ClusterOp::SetImage { set: key, image: "nginx:1.26".into() });
    }
    let trace = trace_partitions(&served);
    (served, trace)
}

/// The three zones of four, labelled `rollout-group=ingester` (OnDelete when `on_delete`).
fn zone_sets(on_delete: bool) -> Vec<StatefulSet> {
    ZONES
        .iter()
        .map(|z| {
            let mut s = set(z, 4);
            s.metadata.labels =
                Some([("rollout-group".to_string(), "ingester".to_string())].into());
            if on_delete {
                s.spec.update_strategy =
                    Some(k8s_openapi::api::apps::v1::StatefulSetUpdateStrategy {
                        type_: Some("OnDelete".into()),
                        rolling_update: None,
                    });
            }
            s
        })
        .collect()
}

fn op(s: &Served, op: ClusterOp) {
    s.op(op);
}

/// Every (set, partition) change the served sets show, in order, from a watch of its own.
fn trace_partitions(s: &Served) -> Trace {
    let seen: Trace = Arc::default();
    let out = Arc::clone(&seen);
    let addr = s.server.addr;
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            use futures::StreamExt;
            let client = serve_common::client(addr).await;
            let api: kube::Api<StatefulSet> = kube::Api::namespaced(client, "default");
            let mut stream =
                kube::runtime::watcher(api, kube::runtime::watcher::Config::default()).boxed();
            let mut last: std::collections::BTreeMap<String, i32> = Default::default();
            let mut listed = false;
            while let Some(ev) = stream.next().await {
                let s = match ev {
                    Ok(kube::runtime::watcher::Event::Apply(s))
                    | Ok(kube::runtime::watcher::Event::InitApply(s)) => s,
                    Ok(kube::runtime::watcher::Event::InitDone) if !listed => {
                        listed = true;
                        let _ = ready_tx.send(());
                        continue;
                    }
                    _ => continue,
                };
                let name = s.metadata.name.clone().unwrap_or_default();
                let p = ststui::core::spec::strategy(&s).partition;
                let known = last.insert(name.clone(), p);
                // The first sight of each set is where it stands, not a move.
                if known.is_some() && known != Some(p) {
                    out.lock().unwrap().push((name, p));
                }
            }
        });
    });
    ready_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    seen
}

fn run(s: &Served, args: &[&str]) -> (i32, String, String) {
    runner::outcome(&mut runner::against(&s.dir, args))
}

pub(super) fn part_of(s: &Served, name: &str) -> Option<Part> {
    let key = ObjRef::new("default", name);
    let set = s.call(move |sim| sim.set(&key).cloned())?;
    part::read(&set).part().cloned()
}

fn partition_of(s: &Served, name: &str) -> i32 {
    let key = ObjRef::new("default", name);
    let set = s.call(move |sim| sim.set(&key).cloned()).unwrap();
    ststui::core::spec::strategy(&set).partition
}

#[test]
fn three_zones_roll_one_at_a_time_and_the_trace_shows_no_two_in_motion() {
    let (s, trace) = zones("roll", false);
    let (code, out, err) =
        run(&s, &["rollout", "-l", "rollout-group=ingester", "--steps", "1,100%"]);
    assert_eq!(code, 0, "{out}{err}");
    let want: Vec<(String, i32)> =
        ZONES.iter().flat_map(|z| [(z.to_string(), 3), (z.to_string(), 0)]).collect();
    assert_eq!(*trace.lock().unwrap(), want, "every set's partition, in order:\n{out}");
    for (i, z) in ZONES.iter().enumerate() {
        let p = part_of(&s, z).unwrap_or_else(|| panic!("{z} carries no part"));
        assert_eq!((p.group.as_str(), p.place, p.state), ("ingester", i, State::Done));
    }
    assert!(out.contains("group ingester: ingester-zone-b starts (2/3)"), "{out}");
    assert!(out.contains("group ingester: done: every set of 3 rolled"), "{out}");
    let lease = s.call(|sim| {
        sim.set(&ObjRef::new("default", "ingester-zone-a"))
            .and_then(|s| s.metadata.annotations.as_ref()?.get(part::LEASE).cloned())
    });
    assert_eq!(lease, None, "the group's lease is given back");
}

#[test]
fn a_pod_a_quota_keeps_out_holds_the_next_zone_named_until_it_exists() {
    let (s, trace) = zones("quota", false);
    let mut child = runner::against(
        &s.dir,
        &["rollout", "--group", "ingester-zone-*", "--steps", "100%", "--zone-bake", "5s"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let lines = runner::follow(&mut child);
    // Zone-a done: a quota one pod short, and zone-a-1 gone (a node lost): it cannot come back.
    let deadline = Instant::now() + Duration::from_secs(30);
    while part_of(&s, ZONES[0]).is_none_or(|p| p.state != State::Done) {
        assert!(Instant::now() < deadline, "zone-a not done: {:?}", lines.lock().unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
    s.call(|sim| {
        sim.apply_op(ststui::backend::Op::from(ststui::backend::Fault::Quota {
            namespace: "default".into(),
            pods: Some(11),
        }))
    })
    .unwrap();
    let pod = ObjRef::new("default", "ingester-zone-a-1");
    op(&s, ClusterOp::DeletePod { pod, force: true, uid: None });
    let held = "ingester-zone-b waits: ingester-zone-a-1 was never created";
    let deadline = Instant::now() + Duration::from_secs(30);
    while !lines.lock().unwrap().iter().any(|l| l.contains(held)) {
        assert!(Instant::now() < deadline, "no hold said: {:?}", lines.lock().unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    // Meanwhile nobody else drives it: a second group runner, or a plan of zone-b's own.
    let (code, _, err) = run(&s, &["rollout", "-l", "rollout-group=ingester", "--steps", "100%"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("a group runner holds it"), "{err}");
    let (code, _, err) = run(&s, &["rollout", ZONES[1], "--steps", "100%"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("it is waiting in rollout group ingester-zone's plan (2/3)"), "{err}");
    // Nor a step by hand (the partition untouched below).
    let (code, _, err) = run(&s, &["step", ZONES[1]]);
    assert_eq!(code, 1, "{err}");
    let want = "ingester-zone-b is waiting in rollout group ingester-zone's plan (2/3)";
    assert!(err.contains(want) && err.contains("--force steps it"), "{err}");
    // Well past the zone bake, zone-b has not moved.
    std::thread::sleep(Duration::from_secs(6));
    assert_eq!(partition_of(&s, ZONES[1]), 4);
    assert_eq!(part_of(&s, ZONES[1]).map(|p| p.state), Some(State::Waiting));
    s.call(|sim| {
        sim.apply_op(ststui::backend::Op::from(ststui::backend::Fault::Quota {
            namespace: "default".into(),
            pods: None,
        }))
    })
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{:?}", lines.lock().unwrap());
    let moves: Vec<String> = trace.lock().unwrap().iter().map(|(z, _)| z.clone()).collect();
    assert_eq!(moves, ZONES.map(String::from).to_vec(), "one move per zone, in order");
}

#[test]
fn a_check_failing_in_zone_b_halts_the_group_and_abort_reverts_b_then_a() {
    let (s, trace) = zones("halt", false);
    let check = "test \"$STSTUI_SET\" != ingester-zone-b || { echo zone-b is sick; exit 1; }";
    let group = ZONES.join(",");
    let (code, out, err) =
        run(&s, &["rollout", "--group", &group, "--steps", "1,100%", "--check", check]);
    assert_eq!(code, 3, "halted: {out}{err}");
    assert!(out.contains("halted at ingester-zone-b"), "{out}");
    assert!(out.contains("; ingester-zone-c untouched"), "{out}");
    assert_eq!(part_of(&s, ZONES[1]).map(|p| p.state), Some(State::Halted));
    assert_eq!(part_of(&s, ZONES[2]).map(|p| p.state), Some(State::Waiting));
    assert!(trace.lock().unwrap().iter().all(|(z, _)| z != ZONES[2]), "zone-c never moved");
    // Any member's explain shows the whole group (named after what its sets share).
    let (code, out, err) = run(&s, &["explain", ZONES[2]]);
    assert_eq!(code, 0, "{out}{err}");
    let group = out.lines().find(|l| l.starts_with("group:")).unwrap_or_else(|| panic!("{out}"));
    assert!(
        group.contains("group ingester-zone: ingester-zone-a done, ingester-zone-b halted: check")
            && group.ends_with("ingester-zone-c waiting"),
        "{group}"
    );
    // An untouched zone of the halted group: stuck (exit 3) with the group's own command, never
    // "frozen … resume" (a second set moving while the group is halted).
    let (code, out, err) = run(&s, &["wait", ZONES[2], "--timeout", "20s"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(out.contains("the group halted at ingester-zone-b"), "{out}");
    let members = ZONES.join(",");
    let cont = format!("`ststui rollout --group {members} --continue --steps 1,100%`");
    assert!(out.contains(&cont), "{out}");
    assert!(!out.contains("ststui resume"), "{out}");
    let (_, out, _) = run(&s, &["explain", ZONES[1]]);
    assert!(out.starts_with(&format!("statefulset default/{}: Halted", ZONES[1])), "{out}");
    assert!(out.contains(&format!("next:       {cont}")), "{out}");
    // Without --group only the set named is reverted: a group's abort is asked for.
    let (code, out, err) = run(&s, &["abort", ZONES[2], "--group", "--yes", "--timeout", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
    let b = out.find("ingester-zone-b reverted (1/2)").unwrap_or_else(|| panic!("{out}"));
    let a = out.find("ingester-zone-a reverted (2/2)").unwrap_or_else(|| panic!("{out}"));
    assert!(b < a, "newest first: {out}");
    for z in &ZONES[..2] {
        assert_eq!(part_of(&s, z).map(|p| p.state), Some(State::Aborted), "{z}");
        let key = ObjRef::new("default", *z);
        let set = s.call(move |sim| sim.set(&key).cloned()).unwrap();
        let image = set.spec.template.spec.unwrap().containers[0].image.clone();
        assert_eq!(image.as_deref(), Some("nginx:1.25"), "{z}'s template reverted");
    }
    assert_eq!(part_of(&s, ZONES[2]).map(|p| p.state), Some(State::Waiting), "zone-c untouched");
}

#[test]
fn a_group_rollout_operator_drives_is_refused_with_nothing_written() {
    let (s, _) = zones("operator", true);
    let (code, out, err) = run(&s, &["rollout", "-l", "rollout-group=ingester", "--steps", "100%"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("grafana/rollout-operator drives this group"), "{err}");
    for z in ZONES {
        assert_eq!(part_of(&s, z), None, "{z}: nothing written");
    }
    // Shown read-only, with what rollout-operator does next.
    let (code, out, err) = run(&s, &["explain", ZONES[1], "-o", "json"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["group"]["driver"], "grafana/rollout-operator", "{out}");
    let words = v["group"]["words"].as_str().unwrap();
    assert!(
        words.contains("ststui shows it and does not drive it")
            && words.contains("next: it deletes ingester-zone-a's pods not on the update revision"),
        "{words}"
    );
}

/// A part as a forger (anyone who may patch the sets) would write it: group ingester, the
/// three zones, `place`, `state`, one run.
fn forged(place: usize, state: State) -> String {
    serde_json::json!({"group": "ingester", "sets": ZONES, "place": place,
        "state": state.word(), "since": "2026-01-01T00:00:00Z", "by": "mallory",
        "started": "2026-01-01T00:00:00Z", "steps": "100%", "zoneBakeSeconds": 0})
    .to_string()
}

fn forge(s: &Served, zone: &str, place: usize, state: State) {
    let set = ObjRef::new("default", zone);
    op(s, ClusterOp::GroupPart { set, part: Some(forged(place, state)) });
}

/// Parts claiming zones a and b done, their pods on the old revision: the rerun of the group
/// does not believe them (said), rolls zone-a first, then b, then c — never c alone.
#[test]
fn parts_claiming_done_are_judged_by_the_pods_and_nothing_is_skipped() {
    let (s, trace) = zones("forged-done", false);
    forge(&s, ZONES[0], 0, State::Done);
    forge(&s, ZONES[1], 1, State::Done);
    forge(&s, ZONES[2], 2, State::Waiting);
    let (code, out, err) = run(
        &s,
        &["rollout", "-l", "rollout-group=ingester", "--steps", "100%", "--timeout", "90s"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "ingester-zone-a's part says done, but its pods are not all on the update \
                      revision: not trusted, it rolls"
        ),
        "{out}"
    );
    let moved: Vec<String> = trace.lock().unwrap().iter().map(|(z, _)| z.clone()).collect();
    let first = |z: &str| moved.iter().position(|m| m == z).unwrap_or_else(|| panic!("{z}: {out}"));
    assert!(first(ZONES[0]) < first(ZONES[1]) && first(ZONES[1]) < first(ZONES[2]), "{moved:?}");
    for z in ZONES {
        let key = ObjRef::new("default", z);
        let set = s.call(move |sim| sim.set(&key).cloned()).unwrap();
        assert_eq!(set.status.unwrap().updated_replicas, Some(4), "{z} rolled");
    }
}

/// A part saying zone-b is rolling never skips the group's hold: with a pod of zone-a not
/// Ready, zone-b does not open.
#[test]
fn a_part_claiming_rolling_never_bypasses_the_hold() {
    let (s, trace) = zones("forged-rolling", false);
    // Zone-a has nothing to roll (its template back), and one of its pods is not Ready.
    op(
        &s,
        ClusterOp::SetImage { set: ObjRef::new("default", ZONES[0]), image: "nginx:1.25".into() },
    );
    s.call(|sim| {
        sim.apply_op(ststui::backend::Op::from(ststui::backend::Fault::SetPodReady {
            pod: ObjRef::new("default", "ingester-zone-a-1"),
            ready: false,
        }))
    })
    .unwrap();
    forge(&s, ZONES[0], 0, State::Done);
    forge(&s, ZONES[1], 1, State::Rolling);
    forge(&s, ZONES[2], 2, State::Waiting);
    let (code, out, err) =
        run(&s, &["rollout", "-l", "rollout-group=ingester", "--steps", "100%", "--timeout", "6s"]);
    assert_eq!(code, 1, "timed out waiting: {out}{err}");
    assert!(out.contains("ingester-zone-b waits: ingester-zone-a-1 is not Ready"), "{out}");
    assert!(trace.lock().unwrap().iter().all(|(z, _)| z != ZONES[1]), "zone-b never opened");
}

/// `ststui step` on a member its group has waiting asks the group's lease on the first set,
/// as the console's keys do: a live lease refuses the step (the group moves it in turn), a
/// lease that ran out leaves nothing driving it, and the step is taken by hand, said so.
#[test]
fn a_waiting_member_steps_by_hand_only_when_its_groups_runner_is_gone() {
    let (s, _) = zones("held-step", false);
    forge(&s, ZONES[0], 0, State::Done);
    forge(&s, ZONES[1], 1, State::Waiting);
    forge(&s, ZONES[2], 2, State::Waiting);
    let lease = |until: &str| {
        serde_json::json!({"holder": "ana", "host": "build-7", "pid": 4242, "expires": until})
            .to_string()
    };
    let a = ObjRef::new("default", ZONES[0]);
    let live = ClusterOp::GroupLease {
        set: a.clone(),
        lease: Some(lease("2999-01-01T00:00:00Z")),
        seen: None,
    };
    op(&s, live);
    let (code, _, err) = run(&s, &["step", ZONES[1]]);
    assert_eq!(code, 1, "{err}");
    let want = "ingester-zone-b is waiting in rollout group ingester's plan (2/3)";
    assert!(err.contains(want) && err.contains("--force steps it"), "{err}");
    assert_eq!(partition_of(&s, ZONES[1]), 4, "nothing written");
    let seen = Some(lease("2999-01-01T00:00:00Z"));
    op(&s, ClusterOp::GroupLease { set: a, lease: Some(lease("2026-01-01T00:00:00Z")), seen });
    let (code, out, err) = run(&s, &["step", ZONES[1]]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("the group has no runner (its lease ran out at 2026-01-01T00:00:00Z"),
        "{out}"
    );
    assert!(out.contains("nothing drives it, the step is by hand"), "{out}");
    assert_eq!(partition_of(&s, ZONES[1]), 3, "stepped");
}

/// Parts pairing two unrelated sets as one group never widen an abort: `abort web --yes`
/// reverts web alone; the group is reverted only when asked (`--group`).
#[test]
fn forged_parts_never_widen_an_abort() {
    let mut web = set("web", 2);
    web.metadata.labels = None;
    let ondel = set("ondel", 2);
    let served = Served::new("group", "forged-abort", vec![web, ondel], &[], kubelet(100));
    for name in ["web", "ondel"] {
        let key = ObjRef::new("default", name);
        op(&served, ClusterOp::SetImage { set: key, image: "nginx:1.26".into() });
    }
    let image_of = |name: &str| {
        let key = ObjRef::new("default", name);
        let set = served.call(move |sim| sim.set(&key).cloned()).unwrap();
        set.spec.template.spec.unwrap().containers[0].image.clone().unwrap_or_default()
    };
    wait::until("both rolled", Duration::from_secs(20), || {
        ["web", "ondel"].iter().all(|n| {
            let key = ObjRef::new("default", *n);
            let set = served.call(move |sim| sim.set(&key).cloned()).unwrap();
            set.status.unwrap().updated_replicas == Some(2)
        })
    });
    for (place, name) in ["web", "ondel"].iter().enumerate() {
        let part = serde_json::json!({"group": "x", "sets": ["web", "ondel"], "place": place,
            "state": "done", "since": "2026-01-01T00:00:00Z", "by": "mallory",
            "started": "2026-01-01T00:00:00Z", "steps": "100%", "zoneBakeSeconds": 0});
        let set = ObjRef::new("default", *name);
        op(&served, ClusterOp::GroupPart { set, part: Some(part.to_string()) });
    }
    let (code, out, err) = run(&served, &["abort", "web", "--yes", "--timeout", "60s"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("only web is reverted"), "{out}");
    assert_eq!(image_of("web"), "nginx:1.25", "web reverted");
    assert_eq!(image_of("ondel"), "nginx:1.26", "ondel untouched: {out}");
}

/// A group started by its label and halted is resumed by its members named any other way, in
/// the same order (`--group a,b,c`), under the name its parts record — not refused as "another
/// group's plan" — and the command the verdict prints for it works.
#[test]
fn a_halted_group_is_resumed_by_its_members_named_another_way() {
    let (s, _) = zones("resume-any", false);
    let check = "test \"$STSTUI_SET\" != ingester-zone-b || { echo zone-b is sick; exit 1; }";
    let (code, out, err) = run(
        &s,
        &["rollout", "-l", "rollout-group=ingester", "--steps", "1,100%", "--check", check],
    );
    assert_eq!(code, 3, "halted: {out}{err}");
    let (code, out, _) = run(&s, &["wait", ZONES[2], "--timeout", "20s"]);
    assert_eq!(code, 3, "{out}");
    let cont = "`ststui rollout -l rollout-group=ingester --continue --steps 1,100%`";
    assert!(out.contains(cont), "{out}");
    let members = ZONES.join(",");
    let (code, out, err) = run(
        &s,
        &["rollout", "--group", &members, "--continue", "--steps", "1,100%", "--timeout", "90s"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("as rollout group ingester's plan: it is resumed"), "{out}");
    for z in ZONES {
        assert_eq!(
            part_of(&s, z).map(|p| (p.group, p.state)),
            Some(("ingester".into(), State::Done)),
            "{z}"
        );
    }
}

/// `--image` for a group: every zone frozen and its image set before the first rolls, then the
/// zones roll one at a time — nothing out of turn.
#[test]
fn image_for_a_group_holds_every_set_then_rolls_them_one_at_a_time() {
    let s = Served::new("group", "image", zone_sets(false), &[], kubelet(100));
    let trace = trace_partitions(&s);
    let (code, out, err) = run(
        &s,
        &[
            "rollout",
            "-l",
            "rollout-group=ingester",
            "--image",
            "app=nginx:1.27",
            "--steps",
            "1,100%",
            "--timeout",
            "90s",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let mut want: Vec<(String, i32)> = ZONES.iter().map(|z| (z.to_string(), 4)).collect();
    want.extend(ZONES.iter().flat_map(|z| [(z.to_string(), 3), (z.to_string(), 0)]));
    assert_eq!(*trace.lock().unwrap(), want, "held first, then one at a time:\n{out}");
    for z in ZONES {
        let key = ObjRef::new("default", z);
        let set = s.call(move |sim| sim.set(&key).cloned()).unwrap();
        assert!(ststui::steer::frozen(&set).is_none(), "{z}: no freeze left");
        let image = set.spec.template.spec.unwrap().containers[0].image.clone();
        assert_eq!(image.as_deref(), Some("nginx:1.27"), "{z}");
    }
}

/// A group the CLI cannot run is bad usage (exit 2), said before anything is written: 65 sets
/// carrying the label (at most 64), an empty selector (every set of the namespace).
#[test]
fn a_group_of_65_sets_or_an_empty_selector_is_refused_as_usage() {
    let sets: Vec<StatefulSet> = (0..65)
        .map(|i| {
            let mut s = set(&format!("grp-{i:02}"), 1);
            s.metadata.labels = Some([("rollout-group".to_string(), "big".to_string())].into());
            s
        })
        .collect();
    let s = Served::new("group", "too-many", sets, &[], kubelet(100));
    let (code, out, err) = run(&s, &["rollout", "-l", "rollout-group=big", "--steps", "100%"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("65 sets: a group has at most 64"), "{err}");
    let (code, out, err) = run(&s, &["rollout", "-l", " ", "--steps", "100%"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("an empty selector lists every set of the namespace"), "{err}");
    assert!(part_of(&s, "grp-00").is_none(), "nothing written");
}

/// A part of another group on one member (forged, or left by a crash) blocks the group's
/// rollout, naming the way past; `--force` takes the set into this group and it rolls.
#[test]
fn a_part_of_another_group_on_a_member_is_passed_with_force() {
    let (s, _trace) = zones("other-group", false);
    let other = serde_json::json!({"group": "elsewhere", "sets": ["ghost", ZONES[1]],
        "place": 1, "state": "waiting", "since": "2026-01-01T00:00:00Z", "by": "mallory",
        "started": "2026-01-01T00:00:00Z", "steps": "100%", "zoneBakeSeconds": 0})
    .to_string();
    let set = ObjRef::new("default", ZONES[1]);
    op(&s, ClusterOp::GroupPart { set, part: Some(other) });
    let args = ["rollout", "-l", "rollout-group=ingester", "--steps", "100%", "--timeout", "90s"];
    let (code, out, err) = run(&s, &args);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("ingester-zone-b is in another group's plan (elsewhere"), "{err}");
    assert!(err.contains("--force takes it into this group"), "{err}");
    assert_eq!(partition_of(&s, ZONES[0]), 4, "nothing moved");
    let forced = [&args[..], &["--force"]].concat();
    let (code, out, err) = run(&s, &forced);
    assert_eq!(code, 0, "{out}{err}");
    let p = part_of(&s, ZONES[1]).unwrap();
    assert_eq!((p.group.as_str(), p.state), ("ingester", State::Done));
}
