//! The benchmarks' console in a pseudo-terminal: the release binary spawned at 180×50, its
//! output read on a thread of its own and parsed by a terminal emulator (`vt100`), a cursor
//! position query answered as a terminal does; with its process's memory and CPU time read from
//! `/proc`. Shared by `benches/startup.rs` and `benches/group.rs`.
//!
//! Written by hand: no benchmark crate drives a TUI in a pseudo-terminal.

use std::io::{Read, Write};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

pub const ROWS: u16 = 50;
pub const COLS: u16 = 180;

/// A console running in a pseudo-terminal, and its screen as parsed so far.
pub struct Screen {
    rx: Receiver<Vec<u8>>,
    parser: vt100::Parser,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    pub pid: u32,
    /// When it was spawned.
    pub start: Instant,
}

impl Screen {
    pub fn spawn(mut cmd: CommandBuilder) -> Screen {
        let pair = native_pty_system()
            .openpty(PtySize { rows: ROWS, cols: COLS, pixel_width: 0, pixel_height: 0 })
            .unwrap_or_else(|e| panic!("openpty: {e}"));
        cmd.env("TERM", "xterm-256color");
        let start = Instant::now();
        let child = pair.slave.spawn_command(cmd).unwrap_or_else(|e| panic!("spawn: {e}"));
        drop(pair.slave);
        let pid = child.process_id().unwrap_or(0);
        let mut reader = pair.master.try_clone_reader().unwrap_or_else(|e| panic!("reader: {e}"));
        let writer = pair.master.take_writer().unwrap_or_else(|e| panic!("writer: {e}"));
        let (tx, rx) = channel::<Vec<u8>>();
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            while let Ok(k) = reader.read(&mut buf) {
                if k == 0 || tx.send(buf[..k].to_vec()).is_err() {
                    return;
                }
            }
        });
        let nz = |v: u16| std::num::NonZeroU16::new(v).unwrap_or(std::num::NonZeroU16::MIN);
        let parser = vt100::Parser::new(nz(ROWS), nz(COLS), 0);
        Screen { rx, parser, writer, child, pid, start }
    }

    pub fn contents(&self) -> String {
        self.parser.screen().contents()
    }

    /// Feeds the screen until `done` holds; the seconds since `from` (NaN after 120 s).
    pub fn until(&mut self, from: Instant, done: impl Fn(&str) -> bool) -> f64 {
        let deadline = from + Duration::from_secs(120);
        loop {
            if done(&self.contents()) {
                return from.elapsed().as_secs_f64();
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return f64::NAN;
            };
            match self.rx.recv_timeout(left) {
                Ok(bytes) => self.feed(&bytes),
                Err(_) => return f64::NAN,
            }
        }
    }

    /// Feeds the screen until every one of `each` has held once; for each, the seconds since
    /// `from` to the first screen where it held (NaN if not within 120 s).
    pub fn until_each(&mut self, from: Instant, each: &[&dyn Fn(&str) -> bool]) -> Vec<f64> {
        let deadline = from + Duration::from_secs(120);
        let mut times = vec![f64::NAN; each.len()];
        loop {
            let screen = self.contents();
            for (t, done) in times.iter_mut().zip(each) {
                if t.is_nan() && done(&screen) {
                    *t = from.elapsed().as_secs_f64();
                }
            }
            if times.iter().all(|t| !t.is_nan()) {
                return times;
            }
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return times;
            };
            match self.rx.recv_timeout(left) {
                Ok(bytes) => self.feed(&bytes),
                Err(_) => return times,
            }
        }
    }

    /// Feeds the screen until `end`.
    pub fn pump(&mut self, end: Instant) {
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            if let Ok(bytes) = self.rx.recv_timeout(left) {
                self.feed(&bytes);
            }
        }
    }

    /// Types `keys`; when they were sent.
    pub fn keys(&mut self, keys: &[u8]) -> Instant {
        let _ = self.writer.write_all(keys);
        let _ = self.writer.flush();
        Instant::now()
    }

    fn feed(&mut self, bytes: &[u8]) {
        if bytes.windows(4).any(|b| b == b"\x1b[6n") {
            let _ = self.writer.write_all(b"\x1b[1;1R");
            let _ = self.writer.flush();
        }
        self.parser.process(bytes);
    }

    /// `q`, then killed if it is still there after 5 s.
    /// The console's RSS now (MiB), then its CPU time (ms) over `idle` of nothing asked.
    pub fn rss_then_idle_cpu(&mut self, pid: u32, idle: Duration) -> (f64, u64) {
        let rss_mib = status_kib(pid, "VmRSS") as f64 / 1024.0;
        let cpu0 = cpu_ticks(pid);
        self.pump(Instant::now() + idle);
        (rss_mib, cpu_ticks(pid).saturating_sub(cpu0) * 10)
    }

    pub fn quit(mut self) {
        self.keys(b"q");
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
    }
}

/// What both start-up benches read from one console (each `Run` derefs to it).
pub struct Figures {
    pub first: f64,
    pub complete: f64,
    pub requests: u64,
    pub rss_mib: f64,
    pub idle_cpu_ms: u64,
}

/// The sockets `pid` holds (its file descriptors that are sockets: a connection each, to a
/// served simulator).
pub fn sockets(pid: u32) -> usize {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return 0 };
    fds.filter_map(Result::ok)
        .filter(|e| {
            std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
        })
        .count()
}

pub fn status_kib(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// User + system time in ticks (10 ms).
pub fn cpu_ticks(pid: u32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command's closing parenthesis: state is the 3rd, utime the 14th.
    let rest = text.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
}
