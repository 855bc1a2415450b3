//! Fleets as an operator runs them: `ststui rollout web --contexts eu,us,ap` against three
//! served simulators in one kubeconfig (a context each), every cluster's set watched from
//! beside it. A cluster's partition first moves only once the cluster before is done by
//! revision; a broken image in the second cluster halts the fleet there with the third's pods
//! untouched.

mod console;
mod credentials;
mod gates;
mod groups;
mod outage;

use super::*;
use crate::support::objects::{kubelet, kubelet_breaking};
use ststui::plan::group::part::{self, Part, State};

const CLUSTERS: [&str; 3] = ["eu", "us", "ap"];

/// What a cluster's watch saw, in arrival order across clusters.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    /// Its set's partition moved.
    Moved(&'static str, i32),
    /// Every pod on the update revision, Ready, the spec observed.
    Done(&'static str),
}

struct Fleet {
    clusters: Vec<Served>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Fleet {
    fn dir(&self) -> &std::path::Path {
        &self.clusters[0].dir
    }

    fn set(&self, i: usize) -> StatefulSet {
        self.clusters[i].call(|sim| sim.set(&web()).cloned()).unwrap()
    }
}

/// `web` (3 replicas) in each cluster, held at partition 3 with `images[i]` waiting, and one
/// kubeconfig naming the three (written over the first cluster's).
fn fleet(test: &str, images: [&str; 3]) -> Fleet {
    let clusters = served(test, |_| true);
    for (s, image) in clusters.iter().zip(images) {
        s.op(ClusterOp::SetPartition { set: web(), partition: 3 });
        s.op(ClusterOp::SetImage { set: web(), image: image.into() });
    }
    watched(clusters)
}

/// `web` (3 replicas, nginx:1.25, settled) in each cluster, whose pods on `nginx:broken` never
/// turn Ready where `breaks(i)`, and one kubeconfig naming the three.
fn settled(test: &str, breaks: impl Fn(usize) -> bool) -> Fleet {
    watched(served(test, breaks))
}

/// The three clusters served, `web` in each.
fn served(test: &str, breaks: impl Fn(usize) -> bool) -> Vec<Served> {
    served_denying(test, breaks, |_| &[])
}

/// [`served`], cluster `i` refusing the permissions `deny(i)`.
fn served_denying(
    test: &str,
    breaks: impl Fn(usize) -> bool,
    deny: impl Fn(usize) -> &'static [&'static str],
) -> Vec<Served> {
    let clusters: Vec<Served> = (CLUSTERS.iter().enumerate())
        .map(|(i, c)| {
            let kubelet =
                if breaks(i) { kubelet_breaking(100, "nginx:broken") } else { kubelet(100) };
            Served::new("fleet", &format!("{test}-{c}"), vec![set("web", 3)], deny(i), kubelet)
        })
        .collect();
    clusters
}

/// One kubeconfig naming the three clusters (over the first's), and a watch on each.
fn watched(clusters: Vec<Served>) -> Fleet {
    let named: Vec<(&str, std::net::SocketAddr)> =
        CLUSTERS.iter().zip(&clusters).map(|(c, s)| (*c, s.server.addr)).collect();
    let config = ststui::serve::kubeconfig_of(&named);
    std::fs::write(clusters[0].dir.join("kubeconfig"), config).unwrap();
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    for (c, s) in CLUSTERS.iter().zip(&clusters) {
        watch(c, s.server.addr, Arc::clone(&seen));
    }
    Fleet { clusters, seen }
}

/// Records the set's partition moves and its being done, from a watch of its own.
fn watch(cluster: &'static str, addr: std::net::SocketAddr, seen: Arc<Mutex<Vec<Seen>>>) {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            use futures::StreamExt;
            let client = serve_common::client(addr).await;
            let api: kube::Api<StatefulSet> = kube::Api::namespaced(client, "default");
            let mut stream =
                kube::runtime::watcher(api, kube::runtime::watcher::Config::default()).boxed();
            let (mut last, mut done, mut told) = (None, false, false);
            while let Some(ev) = stream.next().await {
                let s = match ev {
                    Ok(kube::runtime::watcher::Event::Apply(s))
                    | Ok(kube::runtime::watcher::Event::InitApply(s)) => s,
                    Ok(kube::runtime::watcher::Event::InitDone) if !told => {
                        told = true;
                        let _ = ready_tx.send(());
                        continue;
                    }
                    _ => continue,
                };
                let p = ststui::core::spec::strategy(&s).partition;
                if last.is_some() && last != Some(p) {
                    seen.lock().unwrap().push(Seen::Moved(cluster, p));
                }
                last = Some(p);
                let st = s.status.clone().unwrap_or_default();
                let all = |n: Option<i32>| n == s.spec.replicas;
                let now_done = st.observed_generation == s.metadata.generation
                    && st.current_revision == st.update_revision
                    && all(st.updated_replicas)
                    && all(st.ready_replicas.or(Some(0)));
                if now_done && !done && told {
                    seen.lock().unwrap().push(Seen::Done(cluster));
                }
                done = now_done;
            }
        });
    });
    ready_rx.recv_timeout(Duration::from_secs(10)).unwrap();
}

fn part_of(f: &Fleet, i: usize) -> Option<Part> {
    part::read(&f.set(i)).any().cloned()
}

/// `ststui ARGS` spawned against the fleet, its output piped, once eu's part says done.
fn once_eu_is_done(f: &Fleet, args: &[&str]) -> Child {
    let child = runner::against(f.dir(), args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while part_of(f, 0).is_none_or(|p| p.state != State::Done) {
        assert!(Instant::now() < deadline, "eu not done: {:?}", f.seen.lock().unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn a_fleet_rolls_one_cluster_at_a_time_each_after_the_one_before_is_done_by_revision() {
    let f = fleet("order", ["nginx:1.26"; 3]);
    let (code, out, err) = runner::outcome(&mut runner::against(
        f.dir(),
        &["rollout", "web", "--contexts", "eu,us,ap", "--steps", "100%", "--cluster-bake", "1s"],
    ));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("us/web starts (2/3)"), "{out}");
    assert!(out.contains("fleet web: done: every set of 3 rolled"), "{out}");
    let seen = f.seen.lock().unwrap().clone();
    let first_move = |c: &str| {
        seen.iter()
            .position(|s| matches!(s, Seen::Moved(x, _) if *x == c))
            .unwrap_or_else(|| panic!("{c} never moved: {seen:?}"))
    };
    let done = |c: &str| {
        seen.iter()
            .position(|s| matches!(s, Seen::Done(x) if *x == c))
            .unwrap_or_else(|| panic!("{c} never done: {seen:?}"))
    };
    assert!(done("eu") < first_move("us"), "us moved before eu was done: {seen:?}");
    assert!(done("us") < first_move("ap"), "ap moved before us was done: {seen:?}");
    // Every member's part names the fleet, its place and every cluster by a uid of its own.
    let parts: Vec<Part> = (0..3).map(|i| part_of(&f, i).expect("a part")).collect();
    for (i, p) in parts.iter().enumerate() {
        assert_eq!((p.place, p.state), (i, State::Done), "{p:?}");
        let clusters = p.clusters.as_ref().expect("a fleet's part");
        let names: Vec<&str> = clusters.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, CLUSTERS);
        let uids: std::collections::BTreeSet<&str> =
            clusters.iter().map(|c| c.uid.as_str()).collect();
        assert_eq!(uids.len(), 3, "three clusters, three identities: {clusters:?}");
    }
    for (i, c) in CLUSTERS.iter().enumerate() {
        let st = f.set(i).status.unwrap();
        assert_eq!(st.updated_replicas, Some(3), "{c} rolled");
    }
}

#[test]
fn a_broken_image_in_the_second_cluster_halts_the_fleet_there_and_the_third_is_untouched() {
    let f = fleet("broken", ["nginx:1.26", "nginx:broken", "nginx:1.26"]);
    let (code, out, err) = runner::outcome(&mut runner::against(
        f.dir(),
        &["rollout", "web", "--contexts", "eu,us,ap", "--steps", "1,100%", "--stuck-after", "2s"],
    ));
    assert_eq!(code, 3, "halted: {out}{err}");
    assert!(out.contains("halted at us/web"), "{out}");
    assert!(out.contains("ap/web untouched"), "{out}");
    let seen = f.seen.lock().unwrap().clone();
    assert!(!seen.iter().any(|s| matches!(s, Seen::Moved("ap", _))), "ap moved: {seen:?}");
    assert_eq!(ststui::core::spec::strategy(&f.set(2)).partition, 3, "ap held");
    assert_eq!(f.set(2).status.unwrap().updated_replicas, Some(0), "no ap pod updated");
    assert_eq!(part_of(&f, 1).map(|p| p.state), Some(State::Halted));
    assert_eq!(part_of(&f, 2).map(|p| p.state), Some(State::Waiting));
}

#[test]
fn two_contexts_of_one_cluster_or_a_context_twice_are_refused_with_nothing_written() {
    let f = fleet("usage", ["nginx:1.26"; 3]);
    let (code, _, err) = runner::outcome(&mut runner::against(
        f.dir(),
        &["rollout", "web", "--contexts", "eu,us,eu", "--steps", "100%"],
    ));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--contexts: eu is named twice"), "{err}");
    let (code, _, err) = runner::outcome(&mut runner::against(
        f.dir(),
        &["rollout", "web", "--contexts", "eu,nowhere", "--steps", "100%"],
    ));
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("nowhere"), "the unknown context named: {err}");
    assert!(f.seen.lock().unwrap().is_empty(), "nothing moved");
    assert!(part_of(&f, 0).is_none(), "nothing written");
}

/// A runner killed mid-fleet (eu done, us waiting out the cluster bake), rerun from a
/// kubeconfig whose contexts are named otherwise: it finds the same fleet by the clusters'
/// identities, resumes at us without touching eu again, and ends done.
#[test]
fn a_fleet_killed_midway_resumes_from_contexts_named_otherwise_without_rerolling_a_done_cluster() {
    let f = fleet("resume", ["nginx:1.26"; 3]);
    let args =
        ["rollout", "web", "--contexts", "eu,us,ap", "--steps", "100%", "--cluster-bake", "60s"];
    let mut child = runner::against(f.dir(), &args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while part_of(&f, 0).is_none_or(|p| p.state != State::Done) {
        assert!(Instant::now() < deadline, "eu not done: {:?}", f.seen.lock().unwrap());
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(part_of(&f, 1).map(|p| p.state), Some(State::Waiting), "us waits the bake");
    let before = f.seen.lock().unwrap().len();
    let renamed: Vec<(&str, std::net::SocketAddr)> = ["europe", "usa", "asia"]
        .into_iter()
        .zip(&f.clusters)
        .map(|(c, s)| (c, s.server.addr))
        .collect();
    std::fs::write(f.dir().join("kubeconfig"), ststui::serve::kubeconfig_of(&renamed)).unwrap();
    let (code, out, err) = runner::outcome(&mut runner::against(
        f.dir(),
        &[
            "rollout",
            "web",
            "--contexts",
            "europe,usa,asia",
            "--steps",
            "100%",
            "--cluster-bake",
            "1s",
        ],
    ));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("resuming the fleet's plan started"), "{out}");
    let seen = f.seen.lock().unwrap().clone();
    let after = &seen[before..];
    assert!(!after.iter().any(|s| matches!(s, Seen::Moved("eu", _))), "eu rolled again: {seen:?}");
    assert!(after.iter().any(|s| matches!(s, Seen::Moved("us", _))), "us rolled: {seen:?}");
    for (i, c) in CLUSTERS.iter().enumerate() {
        assert_eq!(f.set(i).status.unwrap().updated_replicas, Some(3), "{c} rolled");
    }
    // Its parts name the clusters as this run's contexts do now, by the same identities.
    let p = part_of(&f, 2).unwrap();
    assert_eq!(p.clusters.unwrap()[2].name, "asia");
}

/// Two contexts naming one cluster (one kube-system uid): a fleet rolls each cluster once.
#[test]
fn two_contexts_of_one_cluster_are_refused_as_usage() {
    let f = fleet("one-cluster", ["nginx:1.26"; 3]);
    let a = f.clusters[0].server.addr;
    let twice = [("eu", a), ("eu-again", a)];
    std::fs::write(f.dir().join("kubeconfig"), ststui::serve::kubeconfig_of(&twice)).unwrap();
    let (code, _, err) = runner::outcome(&mut runner::against(
        f.dir(),
        &["rollout", "web", "--contexts", "eu,eu-again", "--steps", "100%"],
    ));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("eu and eu-again are one cluster"), "{err}");
    assert!(part_of(&f, 0).is_none(), "nothing written");
}

/// `rollout web --contexts eu,us,ap --image nginx:broken` on settled clusters whose us pods
/// never turn Ready on it: the fleet halted at us (exit 3), and what the run printed.
fn halted_at_us(test: &str) -> (Fleet, String) {
    let f = settled(test, |i| i == 1);
    let args =
        "rollout web --contexts eu,us,ap --image nginx:broken --steps 1,100% --stuck-after 2s";
    let args: Vec<&str> = args.split(' ').collect();
    let (code, out, err) = runner::outcome(&mut runner::against(f.dir(), &args));
    assert_eq!(code, 3, "halted: {out}{err}");
    (f, out)
}

/// `--image` on a fleet: every cluster's set frozen before the first begins, the image set on
/// each at its turn — us's pods never turn Ready on it, so the fleet halts at us, and ap's
/// template is as it was (nothing of it written but its freeze).
#[test]
fn image_for_a_fleet_is_set_at_each_clusters_turn_and_a_halt_leaves_the_next_template_unchanged() {
    let (f, out) = halted_at_us("image");
    assert!(out.contains("eu/web: image nginx:broken set, its turn come"), "{out}");
    assert!(out.contains("halted at us/web"), "{out}");
    let image = |i: usize| ststui::plan::recreate::first_image(&f.set(i)).map(str::to_string);
    assert_eq!(image(0).as_deref(), Some("nginx:broken"));
    assert_eq!(f.set(0).status.unwrap().updated_replicas, Some(3), "eu rolled");
    assert_eq!(image(2).as_deref(), Some("nginx:1.25"), "ap's template unchanged");
    assert!(ststui::steer::frozen(&f.set(2)).is_some(), "ap held for its turn");
    let seen = f.seen.lock().unwrap().clone();
    let eu_done = seen.iter().position(|s| matches!(s, Seen::Done("eu")));
    let us_moved = seen.iter().position(|s| matches!(s, Seen::Moved("us", p) if *p < 3));
    assert!(eu_done.is_some() && us_moved.is_some() && eu_done < us_moved, "{seen:?}");
}

const WEB: &str = "apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  replicas: 2
  serviceName: web
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx:1.25
";

/// `ststui sim --headless --serve 127.0.0.1:0 --clusters eu,us --write-kubeconfig FILE`: two
/// simulated clusters, a context each, told apart by their identities — and a fleet rehearsed
/// on them end to end with the real binaries.
#[test]
fn the_simulator_serves_several_clusters_and_a_fleet_rolls_across_them() {
    let dir = std::env::temp_dir().join(format!("ststui-fleet-sim-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (kc, manifest) = (dir.join("kubeconfig"), dir.join("web.yaml"));
    std::fs::write(&manifest, WEB).unwrap();
    let mut sim = runner::ststui()
        .args(["sim", "--headless", "--serve", "127.0.0.1:0", "--clusters", "eu,us"])
        .arg("--write-kubeconfig")
        .arg(&kc)
        .arg("-f")
        .arg(&manifest)
        .arg("--log-file")
        .arg(dir.join("sim.log"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = runner::follow(&mut sim);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !kc.exists() {
        assert!(Instant::now() < deadline, "no kubeconfig");
        std::thread::sleep(Duration::from_millis(20));
    }
    let config = std::fs::read_to_string(&kc).unwrap();
    assert!(config.contains("- name: eu\n") && config.contains("- name: us\n"), "{config}");
    let run = |args: &[&str]| {
        let mut c = runner::ststui();
        c.args(args).arg("--kubeconfig").arg(&kc).arg("--log-file").arg(dir.join("verb.log"));
        runner::outcome(&mut c)
    };
    let (code, out, err) = run(&[
        "rollout",
        "web",
        "--contexts",
        "eu,us",
        "--image",
        "nginx:1.26",
        "--steps",
        "100%",
        "--timeout",
        "60s",
    ]);
    let _ = sim.kill();
    let _ = sim.wait();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("us/web starts (2/2)"), "{out}");
    let seen = lines.lock().unwrap().clone();
    assert!(seen.iter().any(|l| l.starts_with("eu ")), "eu's timeline: {seen:?}");
    assert!(seen.iter().any(|l| l.starts_with("us ")), "us's timeline: {seen:?}");
}

/// A second runner of a fleet under way is refused by the fleet's lease on the first cluster's
/// set, nothing written by it; a step by hand on a member waiting in the fleet is refused too.
#[test]
fn a_second_fleet_runner_and_a_step_by_hand_are_refused() {
    let f = fleet("second", ["nginx:1.26"; 3]);
    let args =
        ["rollout", "web", "--contexts", "eu,us,ap", "--steps", "100%", "--cluster-bake", "60s"];
    let mut child = runner::against(f.dir(), &args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while part_of(&f, 0).is_none_or(|p| p.state != State::Done) {
        assert!(Instant::now() < deadline, "eu not done");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, _, err) = runner::outcome(&mut runner::against(f.dir(), &args));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("fleet web: a fleet runner holds it"), "{err}");
    assert!(err.contains("(on eu/web); two runners never drive one fleet"), "{err}");
    let (code, _, err) =
        runner::outcome(&mut runner::against(f.dir(), &["--context", "us", "step", "web"]));
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("waiting in fleet web's plan (2/3, cluster us)"), "{err}");
    assert_eq!(ststui::core::spec::strategy(&f.set(1)).partition, 3, "us untouched");
}

/// `ststui abort web --contexts …` (in any order, matched by identity) after a halt at us:
/// the clusters the fleet touched are reverted newest first — us, then eu — and ap, which it
/// never touched, is not written.
#[test]
fn abort_reverts_the_clusters_a_fleet_touched_newest_first() {
    let (f, _) = halted_at_us("abort");
    let (code, out, err) = runner::outcome(&mut runner::against(
        f.dir(),
        &["abort", "web", "--contexts", "ap,us,eu", "--yes", "--timeout", "60s"],
    ));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("fleet web: abort will revert us/web, then eu/web (newest first)"),
        "{out}"
    );
    let us = out.find("fleet web: us/web reverted (1/2)").expect(&out);
    let eu = out.find("fleet web: eu/web reverted (2/2)").expect(&out);
    assert!(us < eu, "{out}");
    let image = |i: usize| ststui::plan::recreate::first_image(&f.set(i)).map(str::to_string);
    assert_eq!(image(0).as_deref(), Some("nginx:1.25"), "eu reverted");
    assert_eq!(image(1).as_deref(), Some("nginx:1.25"), "us reverted");
    assert_eq!(part_of(&f, 0).map(|p| p.state), Some(State::Aborted));
    assert_eq!(part_of(&f, 1).map(|p| p.state), Some(State::Aborted));
    assert_eq!(part_of(&f, 2).map(|p| p.state), Some(State::Waiting), "ap untouched");
}
