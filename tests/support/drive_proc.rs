//! `ststui drive` (the headless controller) as a process in a test: its JSON lines collected,
//! waited on by record, its health endpoints asked, signalled. Shared by the served-simulator
//! test (`tests/e2e/drive_headless.rs`) and the control plane's (`tests/control_plane/e2e_drive.rs`).

use std::io::{BufRead as _, Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Numbers the log files of one test process's drivers.
static SEQ: AtomicUsize = AtomicUsize::new(0);

/// `ststui drive` running, its JSON lines collected.
pub struct Drive {
    child: Child,
    /// Each line with when this test read it (two drivers' lines put in one order).
    lines: Arc<Mutex<Vec<(Instant, Value)>>>,
    log: std::path::PathBuf,
}

impl Drive {
    /// `ststui drive ARGS` (its log in the temporary directory).
    pub fn start(args: &[&str]) -> Drive {
        let log = std::env::temp_dir().join(format!(
            "ststui-drive-{}-{}.log",
            std::process::id(),
            SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let mut child = Command::new(env!("CARGO_BIN_EXE_ststui"))
            .arg("drive")
            .args(args)
            .arg("--log-file")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start ststui drive");
        let out = child.stdout.take().expect("stdout");
        let lines: Arc<Mutex<Vec<(Instant, Value)>>> = Arc::default();
        let keep = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?}"));
                keep.lock().unwrap().push((Instant::now(), v));
            }
        });
        Drive { child, lines, log }
    }

    pub fn lines(&self) -> Vec<Value> {
        self.lines.lock().unwrap().iter().map(|(_, v)| v.clone()).collect()
    }

    /// The lines with when each was read.
    pub fn timed_lines(&self) -> Vec<(Instant, Value)> {
        self.lines.lock().unwrap().clone()
    }

    /// Waits (at most `within`) for a record matching `f`.
    pub fn until(&self, what: &str, within: Duration, f: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            if let Some(v) = self.lines().into_iter().find(|v| f(v)) {
                return v;
            }
            assert!(start.elapsed() < within, "no {what} within {within:?}: {:#?}", self.lines());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn start_record(&self) -> Value {
        self.until("start record", Duration::from_secs(20), |v| v["type"] == "start")
    }

    pub fn identity(&self) -> String {
        self.start_record()["identity"].as_str().unwrap().to_string()
    }

    pub fn health(&self) -> SocketAddr {
        self.start_record()["health"].as_str().unwrap().parse().unwrap()
    }

    pub fn role(&self, role: &str, within: Duration) -> Value {
        self.until(&format!("lease role {role}"), within, |v| {
            v["type"] == "lease" && v["role"] == role
        })
    }

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill {sig}");
    }

    /// Its exit status, waited for at most 10 s.
    pub fn exit(&mut self) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "did not exit: {:#?}", self.lines());
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Drive {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// The HTTP status of GET `path` on `addr`.
pub fn http_status(addr: SocketAddr, path: &str) -> u16 {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut reply = String::new();
    let _ = s.read_to_string(&mut reply);
    reply.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}
