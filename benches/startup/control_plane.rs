//! The start-up benchmark's other server: the upstream control plane of
//! `tests/control-plane/run` (kube-apiserver over TLS, the fake kubelet), run with
//! `STSTUI_AUDIT_LOG` so that kube-apiserver writes an audit log. A Parallel set `web` of N pods
//! in a namespace of its own (`startup-N`, made once and kept for the runs; a deleted pod stays
//! Terminating there for 20 s); the console signs in
//! as the harness's `bench` user, whose requests the audit log counts apart from everyone
//! else's (the fake kubelet, kube-controller-manager, kubectl).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;

/// A set of N Ready pods on the control plane.
pub struct OnControlPlane {
    pub ns: String,
    kubeconfig: PathBuf,
    audit: PathBuf,
    pub dir: PathBuf,
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--context", "admin"])
        .args(args)
        .output()
        .map_err(|e| format!("kubectl: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "kubectl {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl OnControlPlane {
    /// From `KUBECONFIG` and `STSTUI_AUDIT_LOG` as `tests/control-plane/run` exports them.
    pub fn start(n: usize) -> Result<OnControlPlane, String> {
        let kubeconfig = std::env::var_os("KUBECONFIG")
            .map(PathBuf::from)
            .ok_or("--control-plane runs inside tests/control-plane/run (no KUBECONFIG)")?;
        let audit = std::env::var_os("STSTUI_AUDIT_LOG").map(PathBuf::from).ok_or(
            "--control-plane needs kube-apiserver's audit log: STSTUI_AUDIT_LOG=FILE \
             tests/control-plane/run -- … (benches/tools/startup.sh --control-plane does it)",
        )?;
        let ns = format!("startup-{n}");
        let dir =
            std::env::temp_dir().join(format!("ststui-startup-cp-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let cp = OnControlPlane { ns, kubeconfig, audit, dir };
        if kubectl(&cp.kubeconfig, &["get", "namespace", &cp.ns]).is_err() {
            kubectl(&cp.kubeconfig, &["create", "namespace", &cp.ns])?;
        }
        let set = format!(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: web, namespace: {}}}\n\
             spec:\n  replicas: {n}\n  podManagementPolicy: Parallel\n  serviceName: web\n  \
             selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: \
             {{app: web}}}}\n    spec: {{containers: [{{name: app, image: nginx:1.25}}]}}\n",
            cp.ns
        );
        // A deleted pod stays Terminating for 20 s (the fake kubelet's stop delay, taken by the
        // pods first seen after it): every console shows it, whatever its refresh.
        let settings = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: ststui-kubelet, namespace: {}}}\n\
             data: {{stop: 20s}}\n",
            cp.ns
        );
        let file = cp.dir.join("kubelet.yaml");
        std::fs::write(&file, settings).map_err(|e| format!("kubelet.yaml: {e}"))?;
        kubectl(&cp.kubeconfig, &["apply", "-f", &file.to_string_lossy()])?;
        let file = cp.dir.join("set.yaml");
        std::fs::write(&file, set).map_err(|e| format!("set.yaml: {e}"))?;
        kubectl(&cp.kubeconfig, &["apply", "-f", &file.to_string_lossy()])?;
        cp.settle(n, Duration::from_secs(900))?;
        Ok(cp)
    }

    /// Waits until the set has `n` pods, all Ready, none more (a pod of a scale-down gone).
    pub fn settle(&self, n: usize, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        let want = format!("{n} {n}");
        loop {
            let path = "jsonpath={.status.readyReplicas} {.status.replicas}";
            let got = kubectl(&self.kubeconfig, &["get", "sts", "web", "-n", &self.ns, "-o", path])
                .unwrap_or_default();
            if got.trim() == want {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "{}/web did not settle at {n} Ready pods within {} s",
                    self.ns,
                    within.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// The `admin` user's client, on a runtime of its own.
    fn admin<T>(
        &self,
        f: impl AsyncFnOnce(kube::Client) -> Result<T, String>,
    ) -> Result<T, String> {
        let rt = ststui::runtime::build("bench", ststui::runtime::Workers::Current)
            .map_err(|e| e.to_string())?;
        rt.block_on(async {
            let kc =
                kube::config::Kubeconfig::read_from(&self.kubeconfig).map_err(|e| e.to_string())?;
            let options = kube::config::KubeConfigOptions {
                context: Some("admin".into()),
                ..Default::default()
            };
            let config = kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| e.to_string())?;
            let client = kube::Client::try_from(config).map_err(|e| e.to_string())?;
            f(client).await
        })
    }

    /// Sets the set's replicas (as `admin`) and returns when the PATCH was sent: what the set
    /// list's event → screen time counts from. The connection is opened (by reading the set)
    /// before.
    pub fn scale(&self, replicas: usize) -> Result<Instant, String> {
        use k8s_openapi::api::apps::v1::StatefulSet;
        self.admin(async |client| {
            let sets: kube::Api<StatefulSet> = kube::Api::namespaced(client, &self.ns);
            sets.get("web").await.map_err(|e| e.to_string())?;
            let patch = serde_json::json!({"spec": {"replicas": replicas}});
            let sent = Instant::now();
            let params = kube::api::PatchParams::default();
            sets.patch("web", &params, &kube::api::Patch::Merge(&patch))
                .await
                .map_err(|e| e.to_string())?;
            Ok(sent)
        })
    }

    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The console's arguments: the `bench` user's context, the namespace and the set.
    pub fn console_args(&self) -> Vec<String> {
        let kc = self.kubeconfig.to_string_lossy().into_owned();
        vec![
            "--kubeconfig".into(),
            kc,
            "--context".into(),
            "bench".into(),
            "-n".into(),
            self.ns.clone(),
            "web".into(),
        ]
    }

    /// The `bench` user's requests received from `from` on for `window`, each once (a watch
    /// is logged when its response starts and again when it ends), as `+RECEIVED_MS TOOK_MS
    /// VERB URI`: when kube-apiserver received it after `from`, and how long until its response
    /// started (a watch) or completed (anything else), which tells what holds a first frame.
    pub fn requests(&self, from: Timestamp, window: Duration) -> (u64, Vec<String>) {
        let text = std::fs::read_to_string(&self.audit).unwrap_or_default();
        let until = from + k8s_openapi::jiff::SignedDuration::try_from(window).unwrap_or_default();
        let stamp = |v: &serde_json::Value, field: &str| {
            v[field].as_str().and_then(|t| t.parse::<Timestamp>().ok())
        };
        let mut seen = std::collections::BTreeSet::new();
        let mut lines = Vec::new();
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
            if v["user"]["username"] != "bench" {
                continue;
            }
            let Some(at) = stamp(&v, "requestReceivedTimestamp") else { continue };
            if at < from || at >= until {
                continue;
            }
            let id = v["auditID"].as_str().unwrap_or_default().to_string();
            if seen.insert(id) {
                let ms = |d: k8s_openapi::jiff::SignedDuration| d.as_millis();
                let took = stamp(&v, "stageTimestamp").map_or(-1, |t| ms(t.duration_since(at)));
                let verb = v["verb"].as_str().unwrap_or_default();
                let uri = v["requestURI"].as_str().unwrap_or_default();
                let after = ms(at.duration_since(from));
                lines.push(format!("+{after:>5} ms {took:>5} ms {verb} {uri}"));
            }
        }
        lines.sort();
        (lines.len() as u64, lines)
    }

    /// Deletes `pod` (as `admin`) once it is Ready and not terminating (a replacement of an
    /// earlier run's), and returns when the DELETE was sent: what an event → screen time counts
    /// from. The connection is opened (by reading the pod) before.
    pub fn delete_pod(&self, pod: &str) -> Result<Instant, String> {
        use k8s_openapi::api::core::v1::Pod;
        self.admin(async |client| {
            let pods: kube::Api<Pod> = kube::Api::namespaced(client, &self.ns);
            let deadline = Instant::now() + Duration::from_secs(90);
            loop {
                let p = pods.get(pod).await.map_err(|e| e.to_string())?;
                let ready = p
                    .status
                    .and_then(|s| s.conditions)
                    .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
                if ready && p.metadata.deletion_timestamp.is_none() {
                    break;
                }
                if Instant::now() >= deadline {
                    return Err(format!("{pod} not Ready again within 90 s"));
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            let sent = Instant::now();
            pods.delete(pod, &Default::default()).await.map_err(|e| e.to_string())?;
            Ok(sent)
        })
    }

    /// The API server's share, as a client meets it: the median of three lists of the pods
    /// through `kubectl get --raw` (kubectl's own start included).
    pub fn list_seconds(&self) -> f64 {
        let path = format!("/api/v1/namespaces/{}/pods?labelSelector=app%3Dweb", self.ns);
        let times = (0..3)
            .map(|_| {
                let t = Instant::now();
                let _ = kubectl(&self.kubeconfig, &["get", "--raw", &path]);
                t.elapsed().as_secs_f64()
            })
            .collect();
        super::median(times)
    }
}

impl Drop for OnControlPlane {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
