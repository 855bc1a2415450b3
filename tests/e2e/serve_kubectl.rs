//! The installed `kubectl` against `ststui sim --headless --serve` (the real binary, a child
//! process): get, get -w, rollout status, set image, rollout history, rollout undo, scale, patch
//! of the partition, delete pod and apply. They fail, never skip, when kubectl is missing.
//! Each test has its own served simulator, kubeconfig and kubectl cache directory.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

struct Served {
    child: Child,
    dir: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const MANIFEST: &str = "apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  replicas: 3
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
        ports:
        - containerPort: 80
";

/// Starts a served simulator holding `web` (3 replicas) at ×`speed`, with `extra` flags.
fn serve(test: &str, speed: &str, extra: &[&str]) -> Served {
    let dir = std::env::temp_dir().join(format!("ststui-kubectl-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let manifest = dir.join("web.yaml");
    std::fs::write(&manifest, MANIFEST).unwrap_or_else(|e| panic!("{e}"));
    let kc = dir.join("kubeconfig");
    let mut args = vec!["sim", "--headless", "--serve", "127.0.0.1:0", "--speed", speed];
    let (kc_s, m_s) = (kc.display().to_string(), manifest.display().to_string());
    args.extend(["--write-kubeconfig", &kc_s, "-f", &m_s]);
    args.extend_from_slice(extra);
    let child = crate::support::runner::ststui()
        .args(&args)
        .arg("--log-file")
        .arg(dir.join("ststui.log"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start ststui: {e}"));
    let mut served = Served { child, dir };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !kc.exists() {
        assert!(Instant::now() < deadline, "no kubeconfig after 20 s");
        if let Ok(Some(status)) = served.child.try_wait() {
            let mut err = String::new();
            if let Some(e) = served.child.stderr.take() {
                for l in BufReader::new(e).lines().map_while(Result::ok) {
                    err.push_str(&l);
                }
            }
            panic!("ststui exited ({status}): {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    served
}

impl Served {
    fn kubectl(&self, args: &[&str]) -> Output {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(self.dir.join("kubeconfig"))
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .args(args)
            .output()
            .unwrap_or_else(|e| {
                panic!("kubectl is needed for these tests (it is not optional): {e}")
            })
    }

    /// Runs kubectl; its stdout, or a panic with what it said.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}{text}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    }

    /// Waits (bounded) until `kubectl args` prints something containing `want`.
    fn until(&self, args: &[&str], want: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let text = self.ok(args);
            if text.contains(want) {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "kubectl {args:?} never showed {want:?}; last:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn jsonpath(&self, what: &str, path: &str) -> String {
        self.ok(&["get", what, "-o", &format!("jsonpath={path}")])
    }
}

fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines().map(|l| l.split_whitespace().map(str::to_string).collect()).collect()
}

#[test]
fn get_shows_the_columns_a_real_cluster_shows() {
    let s = serve("get", "20", &[]);
    let sts = s.until(&["get", "sts"], "3/3");
    assert_eq!(rows(&sts)[0], ["NAME", "READY", "AGE"]);
    assert_eq!(rows(&sts)[1][..2], ["web".to_string(), "3/3".to_string()]);
    let pods = s.ok(&["get", "pods", "-o", "wide"]);
    let header = pods.lines().next().unwrap_or_default();
    for col in [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ] {
        assert!(header.contains(col), "{col} missing: {header}");
    }
    let names: Vec<String> = rows(&pods)[1..].iter().map(|r| r[0].clone()).collect();
    assert_eq!(names, ["web-0", "web-1", "web-2"]);
    assert!(rows(&pods)[1].contains(&"Running".to_string()));
    let revs = s.ok(&["get", "controllerrevisions"]);
    assert!(revs.contains("statefulset.apps/web"), "{revs}");
    let events = s.ok(&["get", "events"]);
    assert!(
        events.contains("SuccessfulCreate")
            && events.contains("create Pod web-0 in StatefulSet web successful"),
        "{events}"
    );
    let none = s.kubectl(&["get", "sts", "nope"]);
    assert!(!none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("statefulsets.apps \"nope\" not found"));
}

#[test]
fn get_watch_streams_rows_as_pods_change() {
    let s = serve("watch", "5", &[]);
    s.until(&["get", "sts"], "3/3");
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(s.dir.join("kubeconfig"))
        .arg("--cache-dir")
        .arg(s.dir.join("cache"))
        .args(["get", "pods", "-w", "--request-timeout=20s"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("kubectl is needed for these tests (it is not optional): {e}"));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    // The scale only once kubectl has listed (the header and the three pods): its watch then
    // starts from that list, so web-3's whole life is streamed (scaled before, a slow kubectl
    // could list web-3 already Running).
    let mut seen: Vec<String> = lines.by_ref().take(4).collect();
    assert_eq!(seen.len(), 4, "the listing: {seen:?}");
    s.ok(&["scale", "sts/web", "--replicas=4"]);
    for line in lines {
        seen.push(line.clone());
        if line.starts_with("web-3") && line.contains("Running") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen[0].starts_with("NAME"), "{seen:?}");
    assert!(seen.iter().any(|l| l.starts_with("web-3") && l.contains("Pending")), "{seen:?}");
    assert!(seen.iter().any(|l| l.starts_with("web-3") && l.contains("Running")), "{seen:?}");
}

#[test]
fn a_canary_with_set_image_partition_rollout_status_history_and_undo() {
    let s = serve("rollout", "20", &[]);
    s.until(&["get", "sts"], "3/3");
    s.ok(&[
        "patch",
        "sts",
        "web",
        "-p",
        r#"{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}}}}"#,
    ]);
    s.ok(&["set", "image", "sts/web", "*=nginx:1.26"]);
    let status = s.ok(&["rollout", "status", "sts/web", "--timeout=30s"]);
    assert!(
        status.contains("partitioned roll out complete: 1 new pods have been updated"),
        "{status}"
    );
    let images =
        s.jsonpath("pods", "{range .items[*]}{.metadata.name}={.spec.containers[0].image} {end}");
    assert_eq!(images.trim(), "web-0=nginx:1.25 web-1=nginx:1.25 web-2=nginx:1.26");
    let history = s.ok(&["rollout", "history", "sts/web"]);
    assert_eq!(
        rows(&history)
            .iter()
            .filter(|r| r.first().is_some_and(|c| c.parse::<u32>().is_ok()))
            .count(),
        2,
        "{history}"
    );
    let two = s.ok(&["rollout", "history", "sts/web", "--revision=2"]);
    assert!(two.contains("nginx:1.26"), "{two}");
    s.ok(&[
        "patch",
        "sts",
        "web",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"updateStrategy":{"rollingUpdate":{"partition":0}}}}"#,
    ]);
    let done = s.ok(&["rollout", "status", "sts/web", "--timeout=30s"]);
    assert!(done.contains("roll out complete"), "{done}");
    assert!(s.ok(&["rollout", "undo", "sts/web"]).contains("rolled back"));
    assert_eq!(s.jsonpath("sts/web", "{.spec.template.spec.containers[0].image}"), "nginx:1.25");
    s.ok(&["rollout", "status", "sts/web", "--timeout=30s"]);
    let images = s.jsonpath("pods", "{range .items[*]}{.spec.containers[0].image} {end}");
    assert_eq!(images.trim(), "nginx:1.25 nginx:1.25 nginx:1.25");
}

#[test]
fn scale_restart_and_delete_pod() {
    let s = serve("scale", "20", &[]);
    s.until(&["get", "sts"], "3/3");
    assert!(s.ok(&["scale", "sts/web", "--replicas=2"]).contains("scaled"));
    s.until(&["get", "sts"], "2/2");
    assert!(s.ok(&["rollout", "restart", "sts/web"]).contains("restarted"));
    let ann = s.jsonpath("sts/web", "{.spec.template.metadata.annotations}");
    assert!(ann.contains("kubectl.kubernetes.io/restartedAt"), "{ann}");
    s.ok(&["rollout", "status", "sts/web", "--timeout=30s"]);
    let before = s.jsonpath("pod/web-0", "{.metadata.uid}");
    // Not kubectl's own wait: it reads the pod, then lists and watches it for its DELETED, and
    // at ×20 the pod can be gone and web-0 made again between the two, so the list already
    // holds the new web-0 and no DELETED ever comes (kubectl's race, most likely: seen three
    // times under load, docs/known-issues.md). The new uid below is the proof.
    assert!(s.ok(&["delete", "pod", "web-0", "--wait=false"]).contains("deleted"));
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = s.kubectl(&["get", "pod", "web-0", "-o", "jsonpath={.metadata.uid}"]);
        let uid = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() && !uid.is_empty() && uid != before {
            break;
        }
        assert!(Instant::now() < deadline, "web-0 was not recreated");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn apply_creates_then_configures_and_refuses_unknown_fields() {
    let s = serve("apply", "20", &[]);
    let db = s.dir.join("db.yaml");
    let manifest = MANIFEST
        .replace("name: web", "name: db")
        .replace("app: web", "app: db")
        .replace("serviceName: web", "serviceName: db");
    std::fs::write(&db, &manifest).unwrap_or_else(|e| panic!("{e}"));
    let path = db.display().to_string();
    assert!(s.ok(&["apply", "-f", &path]).contains("statefulset.apps/db created"));
    std::fs::write(&db, manifest.replace("replicas: 3", "replicas: 2"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(s.ok(&["apply", "-f", &path]).contains("statefulset.apps/db configured"));
    assert_eq!(s.jsonpath("sts/db", "{.spec.replicas}"), "2");
    std::fs::write(&db, manifest.replace("replicas: 3", "replica: 3"))
        .unwrap_or_else(|e| panic!("{e}"));
    let bad = s.kubectl(&["apply", "-f", &path]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("unknown field \"spec.replica\""), "{err}");
}

/// `kubectl create namespace` sends protobuf: the namespace is made as on a real API server,
/// and a bad name is refused, naming it.
/// Annotations over 256 KiB in all (a forged record, say) are refused in kube-apiserver's words;
/// up to the limit they are kept.
#[test]
fn annotations_over_256_kib_are_refused_as_the_api_server_refuses_them() {
    let s = serve("annotations", "20", &[]);
    // As a patch file: one argument of 300 KiB is more than exec(2) takes.
    let patch = |name: &str, kib: usize| {
        let file = s.dir.join(format!("{name}.json"));
        let body = serde_json::json!({"metadata": {"annotations": {name: "x".repeat(kib * 1024)}}});
        std::fs::write(&file, body.to_string()).unwrap();
        file.display().to_string()
    };
    let big = patch("big", 300);
    let out = s.kubectl(&["patch", "sts", "web", "--type", "merge", "--patch-file", &big]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("metadata.annotations: Too long: must have at most 262144 bytes"),
        "{err}"
    );
    assert_eq!(s.jsonpath("sts/web", "{.metadata.annotations.big}"), "", "nothing kept");
    let fits = patch("fits", 200);
    s.ok(&["patch", "sts", "web", "--type", "merge", "--patch-file", &fits]);
    assert_eq!(s.jsonpath("sts/web", "{.metadata.annotations.fits}").len(), 200 * 1024);
}

#[test]
fn create_namespace_works_as_on_a_real_api_server() {
    let s = serve("namespace", "20", &[]);
    assert!(s.ok(&["create", "namespace", "ops"]).contains("namespace/ops created"));
    assert_eq!(s.ok(&["get", "ns", "ops", "-o", "jsonpath={.metadata.name}"]), "ops");
    let bad = s.kubectl(&["create", "namespace", "bad_name"]);
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("bad_name"), "{err}");
}

#[test]
fn denied_permissions_answer_403_and_auth_can_i_agrees() {
    let s = serve("deny", "20", &["--deny", "patch:statefulsets"]);
    s.until(&["get", "sts"], "3/3");
    let out = s.kubectl(&["patch", "sts", "web", "-p", r#"{"spec":{"replicas":4}}"#]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot patch resource \"statefulsets\" in API group \"apps\""), "{err}");
    let can = s.kubectl(&["auth", "can-i", "patch", "statefulsets.apps"]);
    assert_eq!(String::from_utf8_lossy(&can.stdout).trim(), "no");
    assert_eq!(s.ok(&["auth", "can-i", "delete", "pods"]).trim(), "yes");
}

/// `kubectl create pdb` (a protobuf body), `get pdb` with a real cluster's columns, the status
/// the disruption controller keeps, and `patch pdb` moving it. (Evictions: `serve_kube.rs`;
/// `kubectl create --raw` sends no content type, which the API server refuses as upstream's.)
#[test]
fn kubectl_creates_a_disruption_budget_and_reads_its_status() {
    let s = serve("pdb", "20", &[]);
    s.until(&["get", "sts"], "3/3");
    let created = s.ok(&["create", "pdb", "web", "--selector=app=web", "--min-available=3"]);
    assert!(created.contains("created"), "{created}");
    let row = s.until(&["get", "pdb", "web"], "web");
    assert_eq!(
        rows(&row)[0],
        ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS", "AGE"],
        "{row}"
    );
    assert_eq!(&rows(&row)[1][..4], ["web", "3", "N/A", "0"], "{row}");
    let status = "{.status.currentHealthy}/{.status.desiredHealthy}/{.status.expectedPods}";
    assert_eq!(s.jsonpath("pdb/web", status), "3/3/3");
    let condition = s.jsonpath("pdb/web", "{.status.conditions[0].reason}");
    assert_eq!(condition, "InsufficientPods");
    s.ok(&["patch", "pdb", "web", "--type=merge", "-p", r#"{"spec":{"minAvailable":2}}"#]);
    s.until(&["get", "pdb", "web", "-o", "jsonpath={.status.disruptionsAllowed}"], "1");
    assert_eq!(s.jsonpath("pdb/web", "{.metadata.generation}/{.status.observedGeneration}"), "2/2");
    assert_eq!(s.jsonpath("pdb/web", "{.status.conditions[0].reason}"), "SufficientPods");
    let both = s.kubectl(&[
        "patch",
        "pdb",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec":{"maxUnavailable":1}}"#,
    ]);
    let said = String::from_utf8_lossy(&both.stderr);
    assert!(!both.status.success(), "both bounds were accepted");
    assert!(said.contains("minAvailable and maxUnavailable cannot be both set"), "{said}");
}

/// `kubectl exec` over the served WebSocket: the simulated command answers as a readiness
/// check (exit 0 while the pod is Ready), saying what it was asked; a container the pod does
/// not have is refused as the kubelet refuses it.
#[test]
fn kubectl_exec_reaches_a_simulated_pod() {
    let s = serve("exec", "20", &[]);
    s.until(&["get", "sts"], "3/3");
    let container = s.ok(&["get", "pod", "web-0", "-o", "jsonpath={.spec.containers[0].name}"]);
    let out = s.ok(&["exec", "web-0", "--", "nodetool", "status"]);
    assert_eq!(out, format!("simulated exec in web-0/{container}: nodetool status\n"));
    let refused = s.kubectl(&["exec", "web-0", "-c", "nope", "--", "true"]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("container nope is not valid for pod web-0"), "{err}");
}
