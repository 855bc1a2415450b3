//! A fleet of groups: `ststui rollout -l rollout-group=ingester --contexts eu,us,ap` rolls the
//! group in each cluster, one set at a time, one cluster after the other — the zone bake
//! between the sets of a cluster, the cluster bake before each next cluster — and `abort
//! --contexts` reverts every set the fleet touched, newest first. With `--approve-between`, each
//! next cluster waits for `ststui approve` on its first set.

use super::*;

const ZONES: [&str; 2] = ["ingester-zone-a", "ingester-zone-b"];

/// Two zone sets of 2 labelled `rollout-group=ingester` in each of the three clusters, held at
/// partition 2 with nginx:1.26 waiting.
fn zoned(test: &str) -> Fleet {
    zoned_with(test, |_| kubelet(100))
}

/// [`zoned`], cluster `i`'s pods run by `kubelet(i)`.
fn zoned_with(test: &str, kubelet: impl Fn(usize) -> ststui::sim::KubeletConfig) -> Fleet {
    let clusters: Vec<Served> = (CLUSTERS.iter().enumerate())
        .map(|(i, c)| {
            let sets = ZONES
                .iter()
                .map(|z| {
                    let mut s = set(z, 2);
                    s.metadata.labels =
                        Some([("rollout-group".to_string(), "ingester".to_string())].into());
                    s
                })
                .collect();
            let s = Served::new("fleet", &format!("{test}-{c}"), sets, &[], kubelet(i));
            for z in ZONES {
                let key = ObjRef::new("default", z);
                s.op(ClusterOp::SetPartition { set: key.clone(), partition: 2 });
                s.op(ClusterOp::SetImage { set: key, image: "nginx:1.26".into() });
            }
            s
        })
        .collect();
    watched(clusters)
}

fn updated(f: &Fleet, cluster: usize, zone: &str) -> i32 {
    let key = ObjRef::new("default", zone);
    f.clusters[cluster]
        .call(move |sim| sim.set(&key)?.status.as_ref()?.updated_replicas)
        .unwrap_or(0)
}

#[test]
fn a_group_in_each_cluster_rolls_set_by_set_and_cluster_by_cluster() {
    let f = zoned("groups");
    let args = [
        "rollout",
        "-l",
        "rollout-group=ingester",
        "--contexts",
        "eu,us,ap",
        "--steps",
        "100%",
        "--zone-bake",
        "1s",
        "--cluster-bake",
        "2s",
    ];
    let (code, out, err) = runner::outcome(&mut runner::against(f.dir(), &args));
    assert_eq!(code, 0, "{out}{err}");
    let starts: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split(": ").nth(1).filter(|w| w.contains(" starts (")))
        .collect();
    let want: Vec<String> = CLUSTERS
        .iter()
        .flat_map(|c| ZONES.iter().map(move |z| format!("{c}/{z}")))
        .enumerate()
        .map(|(i, m)| format!("{m} starts ({}/6)", i + 1))
        .collect();
    let got: Vec<String> =
        starts.iter().map(|s| s.split(':').next().unwrap_or_default().to_string()).collect();
    assert_eq!(got, want, "{out}");
    assert!(
        out.contains("us/ingester-zone-a starts at") && out.contains("after the cluster bake"),
        "{out}"
    );
    assert!(
        out.contains("eu/ingester-zone-b starts at") && out.contains("after the zone bake"),
        "{out}"
    );
    assert!(out.contains("fleet ingester: done: every set of 6 rolled"), "{out}");
    for (k, c) in CLUSTERS.iter().enumerate() {
        for z in ZONES {
            assert_eq!(updated(&f, k, z), 2, "{c}/{z} rolled");
        }
    }
    // Each part names its own set, its place among the six and the cluster of every member.
    let key = ObjRef::new("default", ZONES[1]);
    let set = f.clusters[1].call(move |sim| sim.set(&key).cloned()).unwrap();
    let p = part::read(&set).any().cloned().unwrap();
    assert_eq!((p.place, p.state, p.sets.len()), (3, State::Done, 6));
    let names: Vec<&str> = p.clusters.iter().flatten().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["eu", "eu", "us", "us", "ap", "ap"]);
    assert_eq!(p.beside(2), Some(ZONES[0]), "us's other set is beside it");
    assert_eq!(p.beside(0), None, "eu's are not");
}

#[test]
fn approve_between_holds_each_next_cluster_until_it_is_approved_there() {
    let f = fleet("approve", ["nginx:1.26"; 3]);
    let args = ["rollout", "web", "--contexts", "eu,us,ap", "--steps", "100%", "--approve-between"];
    let mut child = runner::against(f.dir(), &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = runner::follow(&mut child);
    let asked = |c: &str| {
        let want = format!("{c}/web waits for approval: `ststui approve web --context {c}`");
        let l = Arc::clone(&lines);
        move || l.lock().unwrap().iter().any(|x| x.contains(&want))
    };
    wait::until("us asked for approval", Duration::from_secs(30), asked("us"));
    // Asked on us's part; nothing of us moves meanwhile.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(ststui::core::spec::strategy(&f.set(1)).partition, 3, "us held");
    let approval = part_of(&f, 1).and_then(|p| p.approval).expect("asked on us's part");
    assert!(!approval.given());
    // explain on any member shows the whole fleet, each cluster read through its context.
    let (code, out, err) = runner::outcome(&mut runner::against(
        f.dir(),
        &["explain", "web", "--context", "us", "-o", "json"],
    ));
    assert_eq!(code, 0, "{out}{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let g = &report["group"];
    assert_eq!(g["kind"], "fleet", "{out}");
    let states: Vec<(&str, &str)> = g["sets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["cluster"].as_str().unwrap(), m["state"].as_str().unwrap_or("unknown")))
        .collect();
    assert_eq!(states, [("eu", "done"), ("us", "waiting"), ("ap", "waiting")], "{out}");
    let words = g["words"].as_str().unwrap();
    assert!(words.starts_with("fleet web (this set 2/3, cluster us): eu/web done"), "{words}");
    // From a kubeconfig that reaches only eu and us: ap is said unknown, with why.
    let partial = f.dir().join("partial");
    std::fs::create_dir_all(&partial).unwrap();
    let two: Vec<(&str, std::net::SocketAddr)> =
        CLUSTERS[..2].iter().zip(&f.clusters).map(|(c, s)| (*c, s.server.addr)).collect();
    std::fs::write(partial.join("kubeconfig"), ststui::serve::kubeconfig_of(&two)).unwrap();
    let (code, out, err) =
        runner::outcome(&mut runner::against(&partial, &["explain", "web", "--context", "eu"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("us/web waiting, ap/web unknown (in cluster ap: no context of this kubeconfig reaches it"), "{out}");
    // Approved in another context than us's: nothing waits there.
    let (code, _, err) =
        runner::outcome(&mut runner::against(f.dir(), &["approve", "web", "--context", "ap"]));
    assert_eq!(code, 1, "ap asks nothing yet: {err}");
    let (code, out, err) =
        runner::outcome(&mut runner::against(f.dir(), &["approve", "web", "--context", "us"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("approved: fleet web's runner starts this cluster (2/3)"), "{out}");
    wait::until("ap asked for approval", Duration::from_secs(30), asked("ap"));
    assert_eq!(f.set(1).status.unwrap().updated_replicas, Some(3), "us rolled before ap asked");
    assert_eq!(ststui::core::spec::strategy(&f.set(2)).partition, 3, "ap held");
    let (code, out, err) =
        runner::outcome(&mut runner::against(f.dir(), &["approve", "web", "--context", "ap"]));
    assert_eq!(code, 0, "{out}{err}");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{:?}", lines.lock().unwrap());
    assert_eq!(f.set(2).status.unwrap().updated_replicas, Some(3), "ap rolled");
}

/// A fleet of groups halted at us's first set (its pods never Ready on nginx:broken), then
/// `abort --contexts` in another order: the sets it touched reverted newest first — us's first,
/// then eu's second and first — and nothing of ap or of us's second set written.
#[test]
fn abort_reverts_the_sets_a_fleet_of_groups_touched_newest_first() {
    let f = zoned_with("groups-abort", |i| match i {
        1 => kubelet_breaking(100, "nginx:broken"),
        _ => kubelet(100),
    });
    for z in ZONES {
        f.clusters[1].op(ClusterOp::SetImage {
            set: ObjRef::new("default", z),
            image: "nginx:broken".into(),
        });
    }
    let args =
        "rollout -l rollout-group=ingester --contexts eu,us,ap --steps 100% --stuck-after 2s";
    let (code, out, err) =
        runner::outcome(&mut runner::against(f.dir(), &args.split(' ').collect::<Vec<_>>()));
    assert_eq!(code, 3, "halted: {out}{err}");
    assert!(out.contains("halted at us/ingester-zone-a"), "{out}");
    let (code, out, err) = runner::outcome(&mut runner::against(
        f.dir(),
        &["abort", ZONES[0], "--contexts", "ap,us,eu", "--yes", "--timeout", "60s"],
    ));
    assert_eq!(code, 0, "{out}{err}");
    let order = [
        "us/ingester-zone-a reverted (1/3)",
        "eu/ingester-zone-b reverted (2/3)",
        "eu/ingester-zone-a reverted (3/3)",
    ];
    let at: Vec<usize> =
        order.iter().map(|w| out.find(w).unwrap_or_else(|| panic!("{w}: {out}"))).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{out}");
    let image = |k: usize, z: &str| {
        let key = ObjRef::new("default", z);
        f.clusters[k].call(move |sim| {
            sim.set(&key).and_then(|s| ststui::plan::recreate::first_image(s).map(str::to_string))
        })
    };
    assert_eq!(image(0, ZONES[0]).as_deref(), Some("nginx:1.25"));
    assert_eq!(image(0, ZONES[1]).as_deref(), Some("nginx:1.25"));
    // us's first set back on the revision before nginx:broken.
    assert_eq!(image(1, ZONES[0]).as_deref(), Some("nginx:1.26"));
    assert_eq!(image(1, ZONES[1]).as_deref(), Some("nginx:broken"), "us's second never began");
    assert_eq!(image(2, ZONES[0]).as_deref(), Some("nginx:1.26"), "ap untouched");
}
