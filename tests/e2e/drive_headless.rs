//! The headless controller (`ststui drive`) as processes, on a served simulator whose own
//! controller is paused (an API server without a StatefulSet controller) and which serves
//! Leases: two replicas, exactly one drives and the other stands by (records, Lease, health
//! endpoints agree); the leader killed with SIGKILL mid-rollout, the standby takes over within
//! the lease's 15 s (+ a retry) and the rollout completes with no pod made twice; SIGTERM gives
//! the lease up and exits 0. With `-A`, a namespace created later is driven once seen. `play
//! --drive` takes the same Lease: refused while the headless controller holds it, and given up
//! when the play ends.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, PostParams};
use serde_json::Value;

use crate::support::drive_proc::{Drive, http_status};
use crate::support::serve_common;
use ststui::backend::ClusterOp;
use ststui::serve::{self, Server};
use ststui::sim::driver::SimHandle;

const LEASE: &str = "ststui-statefulset-controller";

struct Rig {
    handle: SimHandle,
    server: Server,
    dir: PathBuf,
    rt: tokio::runtime::Runtime,
}

impl Drop for Rig {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn rig(test: &str) -> Rig {
    let sim =
        serve_common::sim(vec![serve_common::set("web", 3)], serve_common::kubelet(100), true);
    let (handle, server) = serve_common::serve_sim(sim, &[]);
    let dir = std::env::temp_dir().join(format!("ststui-headless-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    serve::write_kubeconfig(&dir.join("kubeconfig"), server.addr).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    Rig { handle, server, dir, rt }
}

impl Rig {
    fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    fn client(&self) -> kube::Client {
        self.rt.block_on(serve_common::client(self.server.addr))
    }

    fn holder(&self, ns: &str) -> Option<String> {
        let api = Api::<Lease>::namespaced(self.client(), ns);
        let l = self.rt.block_on(api.get_opt(LEASE)).unwrap()?;
        l.spec?.holder_identity
    }

    /// (name, revision, Ready) of the live pods of `ns`.
    fn pods(&self, ns: &str) -> Vec<(String, String, bool)> {
        let api = Api::<Pod>::namespaced(self.client(), ns);
        let list = self.rt.block_on(api.list(&Default::default())).unwrap();
        let mut out: Vec<_> = list
            .items
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .map(|p| {
                let name = p.metadata.name.clone().unwrap_or_default();
                (name, ststui::core::pod::revision(p).to_string(), ststui::core::pod::is_ready(p))
            })
            .collect();
        out.sort();
        out
    }

    fn until_pods(&self, ns: &str, what: &str, f: impl Fn(&[(String, String, bool)]) -> bool) {
        let start = Instant::now();
        loop {
            let p = self.pods(ns);
            if f(&p) {
                return;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "not {what}: {p:?}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn op(&self, op: ClusterOp) {
        let (tx, rx) = std::sync::mpsc::channel();
        self.handle.caller().call(Box::new(move |sim| {
            let _ = tx.send(sim.apply_op(op.into()).map_err(|e| e.to_string()));
        }));
        rx.recv_timeout(Duration::from_secs(5)).unwrap().unwrap();
    }
}

fn all_ready_on(pods: &[(String, String, bool)], n: usize, rev: Option<&str>) -> bool {
    pods.len() == n && pods.iter().all(|(_, r, ready)| *ready && rev.is_none_or(|x| x == r))
}

/// Each pod created at most once per revision, whichever process created it.
fn creations(lines: &[Value]) -> Vec<(String, String)> {
    lines
        .iter()
        .filter(|v| v["type"] == "controller" && v["action"] == "create-pod")
        .map(|v| (v["pod"].as_str().unwrap().to_string(), v["revision"].to_string()))
        .collect()
}

#[test]
fn two_replicas_one_drives_a_killed_leader_is_taken_over_and_sigterm_releases() {
    let r = rig("two");
    let kc = r.kubeconfig();
    let mut a = Drive::start(&["--kubeconfig", kc.to_str().unwrap(), "-n", "default"]);
    a.role("leader", Duration::from_secs(20));
    a.until("driving", Duration::from_secs(20), |v| v["type"] == "driving");
    let mut b = Drive::start(&["--kubeconfig", kc.to_str().unwrap(), "-n", "default"]);
    let standby = b.role("standby", Duration::from_secs(20));
    assert_eq!(standby["holder"].as_str(), Some(a.identity().as_str()), "{standby}");
    assert_eq!(r.holder("default"), Some(a.identity()), "the Lease names the leader");
    r.until_pods("default", "3 Ready", |p| all_ready_on(p, 3, None));
    // Health: both live; only the leader ready.
    assert_eq!(http_status(a.health(), "/healthz"), 200);
    assert_eq!(http_status(b.health(), "/healthz"), 200);
    assert_eq!(http_status(a.health(), "/readyz"), 200);
    assert_eq!(http_status(b.health(), "/readyz"), 503);
    assert!(
        b.lines().iter().all(|v| v["type"] != "controller"),
        "the standby wrote nothing: {:#?}",
        b.lines()
    );
    let old = r.pods("default")[0].1.clone();
    // A rollout, and the leader killed once it has begun.
    r.op(ClusterOp::SetImage {
        set: ststui::backend::ObjRef::new("default", "web"),
        image: "nginx:1.27".into(),
    });
    a.until("the rollout under way", Duration::from_secs(30), |v| {
        v["type"] == "controller" && v["action"] == "delete-pod"
    });
    a.signal("-KILL");
    let killed = Instant::now();
    b.role("leader", Duration::from_secs(30));
    let took = killed.elapsed();
    assert!(took < Duration::from_secs(15 + 2 + 3), "took over after {took:?}");
    assert_eq!(r.holder("default"), Some(b.identity()));
    r.until_pods("default", "rolled out", |p| {
        all_ready_on(p, 3, None) && p.iter().all(|(_, rev, _)| *rev != old)
    });
    let mut made = creations(&a.lines());
    made.extend(creations(&b.lines()));
    let mut once = made.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), made.len(), "a pod created twice at one revision: {made:?}");
    assert_eq!(a.exit().code(), None, "killed by its signal");
    // SIGTERM: the lease given up, exit 0.
    b.signal("-TERM");
    assert!(b.exit().success(), "{:#?}", b.lines());
    b.role("released", Duration::from_secs(1));
    assert!(b.lines().last().is_some_and(|v| v["type"] == "stop" && v["exit"] == 0));
    assert_eq!(r.holder("default"), None, "released: nobody holds the Lease");
}

#[test]
fn all_namespaces_drives_a_namespace_created_later() {
    let r = rig("all");
    let kc = r.kubeconfig();
    let mut d = Drive::start(&["--kubeconfig", kc.to_str().unwrap(), "-A"]);
    d.until("driving default", Duration::from_secs(20), |v| {
        v["type"] == "driving" && v["namespace"] == "default"
    });
    let client = r.client();
    let ns: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "late"}})).unwrap();
    r.rt.block_on(Api::<Namespace>::all(client.clone()).create(&PostParams::default(), &ns))
        .unwrap();
    let mut set: StatefulSet = serve_common::set("db", 2);
    set.metadata.namespace = Some("late".into());
    r.rt.block_on(
        Api::<StatefulSet>::namespaced(client, "late").create(&PostParams::default(), &set),
    )
    .unwrap();
    d.until("driving late", Duration::from_secs(20), |v| {
        v["type"] == "driving" && v["namespace"] == "late"
    });
    r.until_pods("late", "2 Ready in late", |p| all_ready_on(p, 2, None));
    assert!(r.holder("late").is_some(), "a Lease of its own in late");
    d.signal("-TERM");
    assert!(d.exit().success());
    let released: Vec<_> = d
        .lines()
        .into_iter()
        .filter(|v| v["type"] == "lease" && v["role"] == "released")
        .map(|v| v["namespace"].as_str().unwrap_or_default().to_string())
        .collect();
    for ns in ["default", "late"] {
        assert!(released.iter().any(|n| n == ns), "the lease of {ns} given up: {released:?}");
    }
}

#[test]
fn a_namespace_that_does_not_exist_is_said_and_never_ready() {
    let r = rig("nons");
    let kc = r.kubeconfig();
    let d = Drive::start(&["--kubeconfig", kc.to_str().unwrap(), "-n", "nope"]);
    let said = d.until("lease-error", Duration::from_secs(20), |v| v["type"] == "lease-error");
    let why = said["message"].as_str().unwrap_or_default();
    assert!(why.contains("nope") && why.contains("not found"), "{said}");
    assert_eq!(http_status(d.health(), "/readyz"), 503);
    assert!(d.lines().iter().all(|v| v["type"] != "driving"), "{:#?}", d.lines());
}

/// `ststui play --drive SCRIPT` on the rig's server: (exit code, stdout, stderr).
fn play_drive(r: &Rig, script: &str) -> (Option<i32>, String, String) {
    let path = r.dir.join("play.scenario");
    std::fs::write(&path, script).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ststui"))
        .args(["play", "--drive", "--timeout", "30s", "-n", "default", "--kubeconfig"])
        .arg(r.kubeconfig())
        .arg(&path)
        .arg("--log-file")
        .arg(r.dir.join("play.log"))
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn play_drive_takes_the_lease_refused_while_another_holds_it_and_gives_it_up() {
    let r = rig("play");
    let kc = r.kubeconfig();
    let mut a = Drive::start(&["--kubeconfig", kc.to_str().unwrap(), "-n", "default"]);
    a.role("leader", Duration::from_secs(20));
    r.until_pods("default", "3 Ready", |p| all_ready_on(p, 3, None));
    let script = "scale web 4\nsettle max=30s\nexpect web ready=4\n";
    let (code, out, err) = play_drive(&r, script);
    assert_eq!(code, Some(4), "refused: {out}\n{err}");
    assert!(err.contains("will not drive default:"), "{err}");
    assert!(err.contains(&a.identity()), "names the holder: {err}");
    assert!(err.contains("holds the drive lease default/ststui-statefulset-controller"), "{err}");
    assert_eq!(r.pods("default").len(), 3, "nothing written by the play");
    assert_eq!(r.holder("default"), Some(a.identity()), "the lease untouched");
    // The headless controller gone (its lease given up), the play drives and then gives it up.
    a.signal("-TERM");
    assert!(a.exit().success());
    let (code, out, err) = play_drive(&r, script);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.contains("create-pod") && out.contains("web-3"), "{out}");
    assert_eq!(r.holder("default"), None, "given up when the play ended");
}
