//! The start-up benchmark's served simulator: `ststui sim --serve` at ×1000 with a Parallel set
//! `web` of N Ready pods, its request count read from `GET /ststui/requests`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::median;

/// `ststui sim --serve` with a Parallel set of `n` Ready pods.
pub struct Served {
    child: Child,
    pub dir: PathBuf,
    addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Served {
    pub fn start(bin: &Path, n: usize) -> Served {
        Served::start_sets(bin, &n.to_string(), &[("web", n, None)])
    }

    /// Parallel sets `(name, replicas, rollout-group label)` of Ready pods (`tag` names the
    /// scratch directory), once every pod of every set is Ready.
    pub fn start_sets(bin: &Path, tag: &str, sets: &[(&str, usize, Option<&str>)]) -> Served {
        let dir = std::env::temp_dir().join(format!("ststui-startup-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let yaml: Vec<String> = sets
            .iter()
            .map(|(name, n, group)| {
                let labels = group
                    .map(|g| format!("\n  labels: {{rollout-group: {g}}}"))
                    .unwrap_or_default();
                format!(
                    "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: {name}{labels}\n\
                     spec:\n  replicas: {n}\n  podManagementPolicy: Parallel\n  serviceName: \
                     {name}\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    \
                     metadata: {{labels: {{app: {name}}}}}\n    spec: {{containers: [{{name: app, \
                     image: nginx:1.25}}]}}\n"
                )
            })
            .collect();
        std::fs::write(dir.join("set.yaml"), yaml.join("---\n"))
            .unwrap_or_else(|e| panic!("set.yaml: {e}"));
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or_else(|e| panic!("a free port: {e}"));
        let addr = format!("127.0.0.1:{port}");
        let child = Command::new(bin)
            .args(["sim", "--serve", &addr, "--headless", "--speed", "1000", "-f"])
            .arg(dir.join("set.yaml"))
            .arg("--write-kubeconfig")
            .arg(dir.join("kc"))
            .arg("--log-file")
            .arg(dir.join("serve.log"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        let served = Served { child, dir, addr };
        let deadline = Instant::now() + Duration::from_secs(300);
        for (name, n, _) in sets {
            loop {
                let ready = served
                    .get(&format!("/apis/apps/v1/namespaces/default/statefulsets/{name}"))
                    .ok()
                    .and_then(|v| v["status"]["readyReplicas"].as_u64());
                if ready == Some(*n as u64) {
                    break;
                }
                assert!(Instant::now() < deadline, "the served {name} did not get {n} Ready pods");
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        served
    }

    /// `GET path` as JSON (HTTP/1.0: the answer is not chunked).
    pub fn get(&self, path: &str) -> Result<serde_json::Value, String> {
        let mut s = TcpStream::connect(&self.addr).map_err(|e| e.to_string())?;
        write!(s, "GET {path} HTTP/1.0\r\nHost: {}\r\nAccept: application/json\r\n\r\n", self.addr)
            .map_err(|e| e.to_string())?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).map_err(|e| e.to_string())?;
        let at = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or("no header end")?;
        serde_json::from_slice(&raw[at + 4..]).map_err(|e| e.to_string())
    }

    /// Where it serves.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.addr.parse().unwrap_or_else(|e| panic!("{}: {e}", self.addr))
    }

    pub fn requests(&self) -> (u64, Vec<String>) {
        let v = self.get("/ststui/requests").unwrap_or_default();
        let first = v["first"].as_array().cloned().unwrap_or_default();
        let first = first.iter().filter_map(|l| l.as_str().map(str::to_string)).collect();
        (v["count"].as_u64().unwrap_or(0), first)
    }

    /// The simulator's share: the median of three lists of the pods, answer read whole.
    pub fn list_seconds(&self) -> f64 {
        let times = (0..3)
            .map(|_| {
                let t = Instant::now();
                let _ = self.get("/api/v1/namespaces/default/pods?labelSelector=app%3Dweb");
                t.elapsed().as_secs_f64()
            })
            .collect();
        median(times)
    }
}
