//! A rollout group's view and a fleet's against one set of as many pods, side by side in one
//! run, as an operator meets them: `ststui sim --serve` with a Parallel set `web` of N Ready pods
//! and three zones `zone-a/b/c` of N/3 each labelled `rollout-group=bench`; and three more
//! served simulators (contexts eu, us, ap of one kubeconfig), each with three zones of N/9
//! labelled alike — the fleet. The release binary in a pseudo-terminal (180×50), its screen
//! parsed by a terminal emulator. For each of `--runs` fresh consoles of each kind, medians of:
//!
//! - first useful frame: from the spawn to the first screen showing the view — one set: its
//!   header and its first pod's detail; the group: opened on zone-a, `Z` typed as soon as zone-a
//!   shows, until the matrix's title names the 3 sets and zone-a-0's detail is shown; the fleet
//!   (`--contexts eu,us,ap -l rollout-group=bench`): the matrix's title naming the 9 sets in 3
//!   clusters and zone-a-0's detail shown;
//! - complete: to every pod Ready on the screen (`ready N`; every column `done N/3`; the
//!   fleet's header saying every set done);
//! - requests in the first 10 s (the served simulators' count), sockets held at +10 s (its
//!   connections: one per watch), RSS at +10 s (VmRSS) and idle CPU over `--idle` seconds after;
//! - key → screen (`--keys` presses, each timed from the write to the screen showing it): one
//!   set: → / ← until the pod detail names web-1 / web-0; the group: → / ← until it names
//!   zone-b-0 / zone-a-0 (another set's column, its pod's detail, its controller pane).
//!
//! Run through `benches/tools/group.sh`. Written by hand: no benchmark crate drives a TUI in a
//! pseudo-terminal (criterion measures functions in process: `benches/render.rs`).

#![allow(
    clippy::panic,
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;

// Shared with benches/startup.rs, which also times events to more than one screen.
#[allow(dead_code, reason = "benches/startup.rs uses the rest")]
#[path = "startup/pty.rs"]
mod pty;
// Shared with benches/startup.rs, which uses all of it.
#[allow(dead_code, reason = "shared with other benches, which use the rest")]
#[path = "startup/served.rs"]
mod served;
use pty::{Figures, Screen, median};
use served::Served;

struct Args {
    bin: PathBuf,
    pods: usize,
    runs: usize,
    idle: u64,
    keys: usize,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        bin: PathBuf::from("target/release/ststui"),
        pods: 2700,
        runs: 3,
        idle: 10,
        keys: 20,
    };
    let mut it = std::env::args().skip(1);
    while let Some(w) = it.next() {
        let mut value = || it.next().ok_or(format!("{w}: expected a value"));
        let count =
            |v: String, what: &str| v.parse().map_err(|_| format!("{w}: {v:?} is not {what}"));
        match w.as_str() {
            "--bin" => a.bin = PathBuf::from(value()?),
            "--pods" => a.pods = count(value()?, "a count of pods")?,
            "--runs" => a.runs = count(value()?, "a count")?,
            "--idle" => a.idle = count(value()?, "seconds")? as u64,
            "--keys" => a.keys = count(value()?, "a count")?,
            "--bench" => {}
            other => {
                return Err(format!(
                    "unknown argument {other:?}; expected --bin PATH, --pods N (a multiple of \
                     3), --runs N, --idle SECS, --keys N"
                ));
            }
        }
    }
    if a.pods < 3 || !a.pods.is_multiple_of(3) || a.runs == 0 {
        return Err(format!("--pods {}: expected a multiple of 3; --runs at least 1", a.pods));
    }
    if !a.pods.is_multiple_of(9) {
        return Err(format!(
            "--pods {}: expected a multiple of 9 (a fleet of 3 × 3 zones)",
            a.pods
        ));
    }
    Ok(a)
}

/// A figure's name and how it is read from a run.
type Row = (&'static str, fn(&Run) -> f64);

/// A key's bytes and what the screen shows once it is handled.
type Press = (&'static [u8], &'static str);

/// One console's figures.
struct Run {
    figures: Figures,
    /// Median key → screen, seconds.
    key: f64,
    /// Sockets held at +10 s.
    sockets: usize,
}

impl std::ops::Deref for Run {
    type Target = Figures;
    fn deref(&self) -> &Figures {
        &self.figures
    }
}

#[derive(Clone, Copy, PartialEq)]
enum View {
    One,
    Group,
    Fleet,
}

impl View {
    fn name(self) -> &'static str {
        match self {
            View::One => "one set",
            View::Group => "group",
            View::Fleet => "fleet",
        }
    }
}

/// Three served simulators, each with three zones of `ninth` pods labelled
/// `rollout-group=bench`, and one kubeconfig naming them eu, us and ap.
fn fleet(bin: &std::path::Path, n: usize) -> (Vec<Served>, PathBuf) {
    let ninth = n / 9;
    let sets = [
        ("zone-a", ninth, Some("bench")),
        ("zone-b", ninth, Some("bench")),
        ("zone-c", ninth, Some("bench")),
    ];
    let served: Vec<Served> = ["eu", "us", "ap"]
        .iter()
        .map(|c| Served::start_sets(bin, &format!("fleet-{n}-{c}"), &sets))
        .collect();
    let named: Vec<(&str, std::net::SocketAddr)> =
        ["eu", "us", "ap"].into_iter().zip(served.iter().map(Served::addr)).collect();
    let kc = served[0].dir.join("fleet-kc");
    std::fs::write(&kc, ststui::serve::kubeconfig_of(&named)).unwrap_or_else(|e| panic!("{e}"));
    (served, kc)
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("group: {e}");
            std::process::exit(2);
        }
    };
    let Ok(bin) = a.bin.canonicalize() else {
        eprintln!("group: {} does not exist: cargo build --release first", a.bin.display());
        std::process::exit(2);
    };
    let a = Args { bin, ..a };
    let (n, third) = (a.pods, a.pods / 3);
    let group = Some("bench");
    let sets = [
        ("web", n, None),
        ("zone-a", third, group),
        ("zone-b", third, group),
        ("zone-c", third, group),
    ];
    let served = Served::start_sets(&a.bin, &format!("group-{n}"), &sets);
    let (fleet_served, fleet_kc) = fleet(&a.bin, n);
    let mut runs: [Vec<Run>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    // Alternated, so every kind meets the machine in the same state.
    for i in 0..a.runs {
        for (k, view) in [View::One, View::Group, View::Fleet].into_iter().enumerate() {
            let r = console_run(&a, &served, &fleet_served, &fleet_kc, view);
            eprintln!(
                "  run {}, {}: first frame {:.3} s, complete {:.3} s, {} requests, {} sockets, \
                 RSS {:.1} MiB, idle CPU {} ms, key → screen {:.1} ms",
                i + 1,
                view.name(),
                r.first,
                r.complete,
                r.requests,
                r.sockets,
                r.rss_mib,
                r.idle_cpu_ms,
                r.key * 1000.0
            );
            runs[k].push(r);
        }
    }
    let med = |runs: &[Run], f: fn(&Run) -> f64| median(runs.iter().map(f).collect());
    let rows: [Row; 7] = [
        ("first useful frame (s)", |r| r.first),
        ("complete (s)", |r| r.complete),
        ("requests in the first 10 s", |r| r.requests as f64),
        ("sockets at +10 s", |r| r.sockets as f64),
        ("RSS at +10 s (MiB)", |r| r.rss_mib),
        ("idle CPU (ms over the idle window)", |r| r.idle_cpu_ms as f64),
        ("key → screen (ms)", |r| r.key * 1000.0),
    ];
    let ninth = n / 9;
    println!(
        "| medians of {} runs | one set of {n} | group of 3 × {third} | group / one | fleet of 3 \
         clusters × 3 × {ninth} | fleet / one |",
        a.runs
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (name, f) in rows {
        let (x, y, z) = (med(&runs[0], f), med(&runs[1], f), med(&runs[2], f));
        println!(
            "| {name} | {x:.3} | {y:.3} | {:+.1} % | {z:.3} | {:+.1} % |",
            (y / x - 1.0) * 100.0,
            (z / x - 1.0) * 100.0
        );
    }
}

/// One console: opened on `web`, on zone-a and its group shown (`Z`), or on the fleet.
fn console_run(
    a: &Args,
    served: &Served,
    fleet: &[Served],
    fleet_kc: &std::path::Path,
    view: View,
) -> Run {
    let mut cmd = CommandBuilder::new(&a.bin);
    cmd.arg("--kubeconfig");
    match view {
        View::One | View::Group => {
            cmd.arg(served.dir.join("kc"));
            cmd.arg(if view == View::One { "web" } else { "zone-a" });
        }
        View::Fleet => {
            cmd.arg(fleet_kc);
            cmd.args(["--contexts", "eu,us,ap", "-l", "rollout-group=bench"]);
        }
    }
    cmd.arg("--log-file");
    cmd.arg(served.dir.join("console.log"));
    let count = |view: View| match view {
        View::Fleet => fleet.iter().map(|s| s.requests().0).sum::<u64>(),
        _ => served.requests().0,
    };
    let before = count(view);
    let mut screen = Screen::spawn(cmd);
    let (start, pid) = (screen.start, screen.pid);
    let third = a.pods / 3;
    let (first, complete) = match view {
        View::One => {
            let first = screen.until(start, |s| s.contains("default/web") && s.contains("web-0 "));
            let ready = format!("ready {} ", a.pods);
            (first, screen.until(start, |s| s.contains(&ready)))
        }
        View::Group => {
            screen.until(start, |s| s.contains("default/zone-a"));
            screen.keys(b"Z");
            // The matrix with zone-a's pods listed (before, its columns say `pods unknown`).
            let first = screen
                .until(start, |s| s.contains("Group bench: 3 sets") && s.contains("● zone-a-0 "));
            let done = format!("done {third}/{third}");
            (first, screen.until(start, |s| s.matches(&done).count() == 3))
        }
        View::Fleet => {
            let first = screen.until(start, |s| {
                s.contains("Fleet bench: 9 sets in 3 clusters") && s.contains("● zone-a-0 ")
            });
            // Nine columns are too narrow for each one's `done N/N`: the header says it.
            (first, screen.until(start, |s| s.contains("every set done")))
        }
    };
    screen.pump(start + Duration::from_secs(10));
    let requests = count(view).saturating_sub(before);
    let sockets = pty::sockets(pid);
    let (rss_mib, idle_cpu_ms) = screen.rss_then_idle_cpu(pid, Duration::from_secs(a.idle));
    let (there, back): (Press, Press) = match view {
        View::One => ((b"\x1b[C", "● web-1 "), (b"\x1b[D", "● web-0 ")),
        View::Group | View::Fleet => ((b"\x1b[C", "● zone-b-0 "), (b"\x1b[D", "● zone-a-0 ")),
    };
    let mut times = Vec::with_capacity(a.keys);
    for i in 0..a.keys {
        let (keys, shown) = if i % 2 == 0 { there } else { back };
        let sent = screen.keys(keys);
        times.push(screen.until(sent, |s| s.contains(shown)));
        // The frame after it settled before the next key.
        screen.pump(Instant::now() + Duration::from_millis(100));
    }
    screen.quit();
    let figures = Figures { first, complete, requests, rss_mib, idle_cpu_ms };
    Run { figures, key: median(times), sockets }
}
