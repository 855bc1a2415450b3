//! The headless controller (`ststui drive`) on the real API server without
//! kube-controller-manager's StatefulSet controller, as the cluster would run it: the manifest
//! of `assets/drive/` applied (its ServiceAccount and least ClusterRole), two replicas as
//! processes with that ServiceAccount's token. Exactly one drives (the Lease, the pods'
//! managed fields and the records agree); the leader killed mid-rollout, the standby takes over
//! and the rollout completes; SIGTERM gives the Lease up, exit 0. A leader stopped (SIGSTOP)
//! mid-rollout for longer than its lease is taken over, and on waking writes nothing (fenced). Needs the control plane
//! without its StatefulSet controller and fails (never skips) without it:
//!
//!   tests/control-plane/run --without-statefulset-controller -- \
//!     cargo test --test control_plane -- --ignored --nocapture drive_headless::
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]

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
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: web\nspec:\n  replicas: 3\n  \
         selector:\n    matchLabels: {app: web}\n  serviceName: web\n  template:\n    metadata:\n      \
         labels: {app: web}\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.0\n",
    )
    .unwrap();
    ns.kubectl(&["apply", "-n", &ns.name, "-f", set.to_str().unwrap()]);
    until_held(&ns, "3 Ready", |h| h.len() == 3 && h.iter().all(|p| p.2));
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
