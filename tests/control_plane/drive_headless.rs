//! The headless controller (`ststui drive`) on the real API server without
//! kube-controller-manager's StatefulSet controller, as the cluster would run it: the manifest
//! of `assets/drive/` applied (its ServiceAccount and least ClusterRole), two replicas as
//! processes with that ServiceAccount's token. Exactly one drives (the Lease, the pods'
//! managed fields and the records agree); the leader killed mid-rollout, the standby takes over
//! and the rollout completes; SIGTERM gives the Lease up, exit 0. A leader stopped (SIGSTOP)
//! mid-rollout for longer than its lease is taken over, and on waking writes nothing (fenced).
//! A third party clearing the Lease's holder, then deleting the Lease, in a loop through a
//! rollout never makes two drivers: no pod is created or deleted twice, and every write is by the
//! one holder of the moment (a driver says it stopped before the other writes). Needs the control plane
//! without its StatefulSet controller and fails (never skips) without it:
//!
//!   tests/control-plane/run --without-statefulset-controller -- \
//!     cargo test --test control_plane -- --ignored --nocapture drive_headless::
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::cp_support::Ns;
use crate::support::drive_proc::{Drive, http_status};

const HOW: &str = "`tests/control-plane/run --without-statefulset-controller -- cargo test \
                   --test control_plane -- --ignored drive_headless::`";

/// A kubeconfig beside `ns` whose current context is the ServiceAccount of `assets/drive/`.
fn service_account_kubeconfig(ns: &Ns) -> std::path::PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/drive/ststui-drive.yaml");
    // Applied once per test binary: two tests applying it at the same moment both found an
    // object missing and both created it, and the second failed with AlreadyExists.
    static APPLIED: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    {
        let mut applied = APPLIED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !*applied {
            ns.kubectl(&["apply", "-f", manifest.to_str().unwrap()]);
            *applied = true;
        }
    }
    let token = ns.kubectl(&["create", "token", "ststui-drive", "-n", "ststui-system"]);
    let from = std::env::var("KUBECONFIG").expect("KUBECONFIG from tests/control-plane/run");
    let kc = ns.dir.join("sa-kubeconfig");
    std::fs::copy(from, &kc).unwrap();
    let k = kc.to_str().unwrap();
    ns.kubectl(&["--kubeconfig", k, "config", "set-credentials", "sa", "--token", token.trim()]);
    ns.kubectl(&[
        "--kubeconfig",
        k,
        "config",
        "set-context",
        "sa",
        "--cluster",
        "control-plane",
        "--user",
        "sa",
    ]);
    kc
}

fn pods(ns: &Ns) -> Value {
    let args = ["get", "pods", "-n", &ns.name, "-o", "json", "--show-managed-fields"];
    serde_json::from_str(&ns.kubectl(&args)).unwrap()
}

/// (name, image, Ready) of the live pods.
fn held(ns: &Ns) -> Vec<(String, String, bool)> {
    let list = pods(ns);
    let mut out: Vec<_> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
        .map(|p| {
            let ready = p["status"]["conditions"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"));
            let name = p["metadata"]["name"].as_str().unwrap_or_default().to_string();
            let image =
                p["spec"]["containers"][0]["image"].as_str().unwrap_or_default().to_string();
            (name, image, ready)
        })
        .collect();
    out.sort();
    out
}

fn until_held(ns: &Ns, what: &str, f: impl Fn(&[(String, String, bool)]) -> bool) {
    let start = Instant::now();
    loop {
        let h = held(ns);
        if f(&h) {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(90), "not {what}: {h:?}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn holder(ns: &Ns) -> String {
    ns.kubectl(&[
        "get",
        "lease",
        "ststui-statefulset-controller",
        "-n",
        &ns.name,
        "-o",
        "jsonpath={.spec.holderIdentity}",
    ])
}

/// Two `ststui drive` on the ServiceAccount of `assets/drive/` in a new namespace: the first
/// leads and drives, the second stands by; `web` (3 replicas, nginx:1.0) applied and Ready.
fn two_drivers(test: &str) -> (Ns, Drive, Drive) {
    two_drivers_of(test, 3, "OrderedReady")
}

/// [`two_drivers`] with `web` of `replicas` pods under `policy`.
fn two_drivers_of(test: &str, replicas: usize, policy: &str) -> (Ns, Drive, Drive) {
    let ns = Ns::create("headless", test, HOW);
    let controllers = std::env::var("STSTUI_CONTROLLERS").unwrap_or_default();
    assert!(!controllers.contains("statefulset"), "run this under {HOW} ({controllers})");
    let kc = service_account_kubeconfig(&ns);
    let args = ["--kubeconfig", kc.to_str().unwrap(), "--context", "sa", "-n", ns.name.as_str()];
    let a = Drive::start(&args);
    a.role("leader", Duration::from_secs(30));
    a.until("driving", Duration::from_secs(30), |v| v["type"] == "driving");
    let b = Drive::start(&args);
    let standby = b.role("standby", Duration::from_secs(30));
    assert_eq!(standby["holder"].as_str(), Some(a.identity().as_str()));
    assert_eq!(holder(&ns), a.identity(), "the Lease names the leader");
    let set = ns.dir.join("web.yaml");
    std::fs::write(
        &set,
        format!(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: web\nspec:\n  \
             replicas: {replicas}\n  podManagementPolicy: {policy}\n  selector:\n    \
             matchLabels: {{app: web}}\n  serviceName: web\n  template:\n    metadata:\n      \
             labels: {{app: web}}\n    spec:\n      containers:\n      - name: app\n        \
             image: nginx:1.0\n"
        ),
    )
    .unwrap();
    ns.kubectl(&["apply", "-n", &ns.name, "-f", set.to_str().unwrap()]);
    until_held(&ns, "all Ready", |h| h.len() == replicas && h.iter().all(|p| p.2));
    (ns, a, b)
}

#[test]
#[ignore = "needs the control plane without its StatefulSet controller: see the module doc"]
fn two_replicas_with_the_shipped_rbac_one_drives_a_kill_hands_over_sigterm_releases() {
    let (ns, mut a, mut b) = two_drivers("two");
    // Who created the pods: the leader's field manager, and nobody else's.
    let list = pods(&ns);
    for p in list["items"].as_array().unwrap() {
        let managers: Vec<&str> = p["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["subresource"].is_null())
            .filter_map(|e| e["manager"].as_str())
            .collect();
        assert_eq!(managers, ["ststui"], "{}", p["metadata"]["name"]);
    }
    assert!(b.lines().iter().all(|v| v["type"] != "controller"), "the standby wrote");
    assert_eq!(http_status(a.health(), "/readyz"), 200);
    assert_eq!(http_status(b.health(), "/readyz"), 503);
    // A rollout; the leader killed once it began.
    ns.kubectl(&["set", "image", "sts/web", "app=nginx:2.0", "-n", &ns.name]);
    a.until("the rollout under way", Duration::from_secs(60), |v| {
        v["type"] == "controller" && v["action"] == "delete-pod"
    });
    a.signal("-KILL");
    let killed = Instant::now();
    b.role("leader", Duration::from_secs(30));
    let took = killed.elapsed();
    println!("drive_headless: the standby took over {:.1} s after the kill", took.as_secs_f64());
    assert!(took < Duration::from_secs(20), "took over after {took:?}");
    assert_eq!(holder(&ns), b.identity());
    until_held(&ns, "rolled out", |h| {
        h.len() == 3 && h.iter().all(|(_, image, ready)| *ready && image == "nginx:2.0")
    });
    let failed = ns.events_with_reason("FailedCreate");
    assert!(failed.trim().is_empty(), "two controllers raced: {failed}");
    assert_eq!(a.exit().code(), None, "killed");
    b.signal("-TERM");
    assert!(b.exit().success(), "{:#?}", b.lines());
    b.role("released", Duration::from_secs(1));
    assert_eq!(holder(&ns), "", "released");
}

#[test]
#[ignore = "needs the control plane without its StatefulSet controller: see the module doc"]
fn a_leader_stopped_past_its_lease_is_taken_over_and_writes_nothing_on_waking() {
    let (ns, a, b) = two_drivers("fence");
    ns.kubectl(&["set", "image", "sts/web", "app=nginx:2.0", "-n", &ns.name]);
    a.until("the rollout under way", Duration::from_secs(60), |v| {
        v["type"] == "controller" && v["action"] == "delete-pod"
    });
    // Stopped in the middle of the rollout, past its 15 s lease.
    a.signal("-STOP");
    let stopped = Instant::now();
    b.role("leader", Duration::from_secs(30));
    let took = stopped.elapsed();
    println!("drive_headless: the standby took over {:.1} s after the SIGSTOP", took.as_secs_f64());
    assert!(took < Duration::from_secs(20), "took over after {took:?}");
    until_held(&ns, "rolled out by the new leader", |h| {
        h.len() == 3 && h.iter().all(|(_, image, ready)| *ready && image == "nginx:2.0")
    });
    let before = a.lines().len();
    a.signal("-CONT");
    // Awake, it learns it lost the lease (a standby naming the new leader) and writes nothing.
    let bi = b.identity();
    a.until("standing by after waking", Duration::from_secs(10), |v| {
        v["type"] == "lease" && v["role"] == "standby" && v["holder"].as_str() == Some(&bi)
    });
    std::thread::sleep(Duration::from_secs(3));
    let after: Vec<Value> = a.lines().into_iter().skip(before).collect();
    let wrote: Vec<&Value> = after.iter().filter(|v| v["type"] == "controller").collect();
    assert!(wrote.is_empty(), "the stopped leader wrote on waking: {wrote:#?}");
    assert_eq!(http_status(a.health(), "/readyz"), 503, "not ready: it holds no lease");
    assert_eq!(holder(&ns), bi);
    let failed = ns.events_with_reason("FailedCreate");
    assert!(failed.trim().is_empty(), "two controllers raced: {failed}");
    println!("drive_headless: after waking the old leader said {after:#?}");
}

/// The pod writes (`create-pod`, `delete-pod`) of `d` read after `since`: when, which, what.
fn pod_writes(d: &Drive, since: Instant) -> Vec<(Instant, String, String)> {
    d.timed_lines()
        .into_iter()
        .filter(|(at, v)| *at >= since && v["type"] == "controller")
        .filter(|(_, v)| v["action"] == "create-pod" || v["action"] == "delete-pod")
        .map(|(at, v)| {
            let what = v["action"].as_str().unwrap_or_default().to_string();
            (at, what, v["pod"].as_str().unwrap_or_default().to_string())
        })
        .collect()
}

/// Whether `d` said it stopped writing (fenced, or a standby) between `from` and `to`.
fn stopped_between(d: &Drive, from: Instant, to: Instant) -> bool {
    d.timed_lines().iter().any(|(at, v)| {
        *at >= from
            && *at <= to
            && v["type"] == "lease"
            && (v["role"] == "fenced" || v["role"] == "standby")
    })
}

#[test]
#[ignore = "needs the control plane without its StatefulSet controller: see the module doc"]
fn a_lease_cleared_or_deleted_in_a_loop_never_makes_two_drivers() {
    let (ns, a, b) = two_drivers_of("tamper", 6, "Parallel");
    let began = Instant::now();
    ns.kubectl(&["set", "image", "sts/web", "app=nginx:2.0", "-n", &ns.name]);
    // Someone who may patch Leases: the holder set to null, then the Lease deleted, in a loop,
    // through the rollout. (kubectl straight: a write that finds no Lease is no failure here.)
    let (name, cache) = (ns.name.clone(), ns.dir.join("cache"));
    let tamper = std::thread::spawn(move || {
        let lease = "ststui-statefulset-controller";
        for i in 0..50 {
            let mut k = std::process::Command::new("kubectl");
            k.arg("--cache-dir").arg(&cache).args(["-n", &name]);
            if i < 30 {
                k.args(["patch", "lease", lease, "--type", "merge"]);
                k.args(["-p", r#"{"spec":{"holderIdentity":null}}"#]);
            } else {
                k.args(["delete", "lease", lease, "--ignore-not-found", "--wait=false"]);
            }
            let _ = k.output();
            std::thread::sleep(Duration::from_millis(400));
        }
    });
    tamper.join().unwrap();
    until_held(&ns, "rolled out through the tampering", |h| {
        h.len() == 6 && h.iter().all(|(_, image, ready)| *ready && image == "nginx:2.0")
    });
    let (wa, wb) = (pod_writes(&a, began), pod_writes(&b, began));
    println!("drive_headless: pod writes during the tampering: a {}, b {}", wa.len(), wb.len());
    // No pod created or deleted twice: each ordinal is deleted once and created once.
    let mut all: Vec<(Instant, String, String, &str)> = wa
        .iter()
        .map(|(t, w, p)| (*t, w.clone(), p.clone(), "a"))
        .chain(wb.iter().map(|(t, w, p)| (*t, w.clone(), p.clone(), "b")))
        .collect();
    all.sort_by_key(|w| w.0);
    let mut seen = std::collections::BTreeSet::new();
    for (_, what, pod, by) in &all {
        assert!(seen.insert((what.clone(), pod.clone())), "{what} {pod} twice ({by}): {all:#?}");
    }
    assert_eq!(seen.len(), 12, "6 deleted and 6 created: {all:#?}");
    // Every write by the one holder of the moment: whenever the writer changes, the one before
    // said it stopped writing before the next one wrote.
    for pair in all.windows(2) {
        let ((t0, _, _, by0), (t1, _, _, by1)) = (&pair[0], &pair[1]);
        if by0 != by1 {
            let before = if *by0 == "a" { &a } else { &b };
            assert!(
                stopped_between(before, *t0, *t1),
                "{by0} wrote at {t0:?} and {by1} at {t1:?} with no word that {by0} stopped: \
                 {all:#?}"
            );
        }
    }
    let failed = ns.events_with_reason("FailedCreate");
    assert!(failed.trim().is_empty(), "two controllers raced: {failed}");
    for d in [&a, &b] {
        let raced: Vec<Value> =
            d.lines().into_iter().filter(|v| v.to_string().contains("already exists")).collect();
        assert!(raced.is_empty(), "a create raced another driver's: {raced:#?}");
    }
}
