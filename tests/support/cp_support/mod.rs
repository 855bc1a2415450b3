//! A namespace of its own on the test control plane (`tests/control-plane/run`) for one test,
//! with kubectl (its own cache dir) and `ststui play` in it; the scratch directory goes when
//! the test ends. Shared by the control-plane end-to-end tests.
#![allow(dead_code, reason = "each test binary uses part of the shared support")]

pub mod proxy;

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Ns {
    pub name: String,
    pub dir: PathBuf,
}

impl Ns {
    /// Namespace `PREFIX-TEST-PID`, created. Fails (never skips) off the control plane, saying
    /// how to run the test (`how`).
    pub fn create(prefix: &str, test: &str, how: &str) -> Ns {
        assert!(
            std::env::var("STSTUI_CONTROL_PLANE").is_ok(),
            "STSTUI_CONTROL_PLANE is not set: run this under {how}"
        );
        let name = format!("{prefix}-{test}-{}", std::process::id());
        let dir = std::env::temp_dir().join(&name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let ns = Ns { name, dir };
        ns.kubectl(&["create", "namespace", &ns.name]);
        ns
    }

    /// kubectl with `args`; its stdout. Fails on a non-zero exit, with kubectl's stderr.
    pub fn kubectl(&self, args: &[&str]) -> String {
        let out = Command::new("kubectl")
            .arg("--cache-dir")
            .arg(self.dir.join("cache"))
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("kubectl is needed for this test: {e}"));
        assert!(out.status.success(), "kubectl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The names of the namespace's Events with `reason` (`FailedCreate`: two controllers raced).
    pub fn events_with_reason(&self, reason: &str) -> String {
        let selector = format!("reason={reason}");
        self.kubectl(&[
            "get",
            "events",
            "-n",
            &self.name,
            "--field-selector",
            &selector,
            "-o",
            "name",
        ])
    }

    /// The pods of the namespace, sorted.
    pub fn pods(&self) -> Vec<String> {
        let out = self.kubectl(&[
            "get",
            "pods",
            "-n",
            &self.name,
            "-o",
            "jsonpath={range .items[*]}{.metadata.name}{\"\\n\"}{end}",
        ]);
        let mut v: Vec<String> = out.lines().map(String::from).collect();
        v.sort();
        v
    }

    /// `ststui play SCRIPT -n NS --log-file DIR/play.log EXTRA…`: (exit code, stdout, stderr).
    pub fn play(&self, script: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
        let out = crate::support::runner::ststui()
            .arg("play")
            .arg(script)
            .args(["-n", &self.name])
            .args(extra)
            .arg("--log-file")
            .arg(self.dir.join("play.log"))
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code(), s(&out.stdout), s(&out.stderr))
    }
}

impl Drop for Ns {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
