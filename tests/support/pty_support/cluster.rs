//! A served simulator in a child process (`ststui sim --headless --serve`) and a console on it
//! through its kubeconfig: the harness of the real-cluster end-to-end tests.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{Console, DEADLINE};

pub struct Cluster {
    child: Child,
    dir: std::path::PathBuf,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Cluster {
    /// A served demo (web, 5 replicas, a new revision held by partition 5).
    pub fn start(test: &str, extra: &[&str]) -> Cluster {
        let dir =
            std::env::temp_dir().join(format!("ststui-e2e-cluster-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let kc = dir.join("kubeconfig");
        let child = crate::support::runner::ststui()
            .args(["sim", "--headless", "--serve", "127.0.0.1:0", "--write-kubeconfig"])
            .arg(&kc)
            .arg("--log-file")
            .arg(dir.join("serve.log"))
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let start = Instant::now();
        while !kc.exists() {
            assert!(start.elapsed() < DEADLINE, "the served simulator did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Cluster { child, dir }
    }

    pub fn kubeconfig(&self) -> String {
        self.dir.join("kubeconfig").display().to_string()
    }

    /// A served simulation playing `script` (a scenario) instead of the demo.
    /// The script plays at ×2: its waits and faults take half their virtual time (the
    /// console's own retries run on wall time, as on a real cluster).
    pub fn scripted(test: &str, script: &str) -> Cluster {
        let path = std::env::temp_dir()
            .join(format!("ststui-e2e-cluster-{test}-{}.scenario", std::process::id()));
        std::fs::write(&path, script).unwrap_or_else(|e| panic!("{e}"));
        let script_arg = path.display().to_string();
        let cluster = Cluster::start(test, &["--script", &script_arg, "--speed", "2"]);
        // The script is read before the server answers (start waits for that).
        let _ = std::fs::remove_file(&path);
        cluster
    }

    pub fn console(&self, args: &[&str]) -> Console {
        let (kc, log) = (self.kubeconfig(), self.dir.join("console.log").display().to_string());
        let mut all = vec!["--kubeconfig", kc.as_str(), "--log-file", log.as_str()];
        all.extend_from_slice(args);
        Console::start(&all)
    }

    pub fn kubectl(&self, args: &[&str]) -> String {
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(self.kubeconfig())
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .args(args)
            .output()
            .unwrap_or_else(|e| {
                panic!("kubectl is needed for this test (it is not optional): {e}")
            });
        assert!(out.status.success(), "kubectl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Polls kubectl until `f` holds for what it prints.
    pub fn until(&self, c: &mut Console, args: &[&str], f: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let out = self.kubectl(args);
            if f(&out) {
                return out;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "kubectl {args:?} never satisfied the check: {out}"
            );
            c.pump(Duration::from_millis(100));
        }
    }
}
