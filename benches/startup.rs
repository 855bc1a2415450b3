//! The console's start-up, end to end, as an operator meets it: `ststui sim --serve` with a
//! Parallel set of N Ready pods, the release binary opened on it in a pseudo-terminal
//! (180×50), its screen parsed by a terminal emulator. For each N, the medians of `--runs`
//! fresh consoles:
//!
//! - first useful frame: from the spawn to the first screen showing the set's header and a pod
//!   row of the grid;
//! - first complete grid: to the header saying all N pods Ready and the grid listed (its title
//!   naming every ordinal: while the pods arrive, it says "listing pods …" and draws them);
//! - requests in the first 10 s, counted by the served simulator (`GET /ststui/requests`);
//! - RSS at +10 s (VmRSS);
//! - idle CPU: user + system time over `--idle` seconds after that, nothing changing.
//!
//! The served simulator's own share: how long it takes to answer one list of the N pods,
//! measured apart. Printed as one table, beside the figures saved with `--save` (the baseline
//! in `benches/tools/startup-baseline.tsv`). Run through `benches/tools/startup.sh`.
//!
//! With `--control-plane` (inside `tests/control-plane/run`, which `startup.sh --control-plane`
//! starts with an audit log), the same figures against the upstream control plane: the set is
//! made there with the fake kubelet, requests are counted from kube-apiserver's audit log, and
//! the API server's share is its list through `kubectl get --raw` (control_plane.rs); and, at
//! the end of each run, event → screen: a pod deleted through the API (it stays Terminating for
//! 20 s there) until the console's screen shows its row Terminating. `--other NAME=COMMAND` runs
//! another console the same way (its first useful frame: the first screen showing a pod).
//!
//! `--sets` opens the StatefulSet list instead (ststui without a NAME; give the others their
//! set views, `sofka … sts`, `k9s … -c sts`): the first useful frame is the first screen
//! showing the set with `N/N` Ready, its event → screen a scale to N + 1 (on the control plane)
//! until `/N+1` is shown; its figures are kept in a baseline of their own (`startup-sets-…`).
//!
//! Written by hand: no benchmark crate drives a TUI in a pseudo-terminal; criterion measures
//! functions in process (see `benches/render.rs` for those).

#![allow(
    clippy::panic,
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;

#[path = "startup/control_plane.rs"]
mod control_plane;
// Shared with benches/group.rs, which also counts sockets and names each server's address.
#[allow(dead_code, reason = "benches/group.rs uses the rest")]
#[path = "startup/pty.rs"]
mod pty;
#[allow(dead_code, reason = "benches/group.rs uses the rest")]
#[path = "startup/served.rs"]
mod served;
use control_plane::OnControlPlane;
use pty::{Figures, Screen, median};
use served::Served;
const FIGURES: [&str; 8] = [
    "first useful frame (s)",
    "first complete grid (s)",
    "requests in the first 10 s",
    "RSS at +10 s (MiB)",
    "idle CPU (ms over the idle window)",
    "served simulator: one list of the pods (s)",
    // A pod's DELETE; with --sets, a scale to N + 1. ststui's: its timeline's line.
    "an event sent → on screen (s)",
    // ststui's grid: the deleted pod's cell drawn Terminating (`×`).
    "a pod DELETE sent → its grid cell (s)",
];

struct Args {
    bin: PathBuf,
    pods: Vec<usize>,
    runs: usize,
    idle: u64,
    baseline: PathBuf,
    save: bool,
    verbose: bool,
    control_plane: bool,
    /// The StatefulSet list (ststui without a NAME) instead of one set's grid: its first useful
    /// frame shows the set `N/N` Ready; no complete grid; its event is a scale to N + 1 (a
    /// deleted pod stays Ready while it terminates, so the list's row would not change).
    sets: bool,
    /// Other consoles run the same way on the same set (`--other NAME=COMMAND`).
    others: Vec<(String, String)>,
    /// Each run with a fresh HOME (`--cold`): a console's discovery and config caches empty,
    /// as on its first start on a machine. By default each console keeps one HOME across its
    /// runs, warmed by an untimed run first, as an operator's is.
    cold: bool,
}

fn args() -> Result<Args, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut a = Args {
        bin: root.join("target/release/ststui"),
        pods: vec![1000, 10_000],
        runs: 3,
        idle: 30,
        baseline: root.join("benches/tools/startup-baseline.tsv"),
        save: false,
        verbose: false,
        control_plane: false,
        sets: false,
        others: Vec::new(),
        cold: false,
    };
    let (mut pods_given, mut baseline_given) = (false, false);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--bin" => a.bin = PathBuf::from(value()?),
            "--pods" => {
                pods_given = true;
                a.pods = value()?
                    .split(',')
                    .map(|n| n.parse().map_err(|_| format!("--pods: {n:?} is not a count")))
                    .collect::<Result<_, _>>()?;
            }
            "--runs" => a.runs = value()?.parse().map_err(|_| "--runs: a count".to_string())?,
            "--idle" => a.idle = value()?.parse().map_err(|_| "--idle: seconds".to_string())?,
            "--baseline" => {
                baseline_given = true;
                a.baseline = PathBuf::from(value()?);
            }
            "--save" => a.save = true,
            "--verbose" => a.verbose = true,
            "--sets" => a.sets = true,
            "--cold" => a.cold = true,
            "--other" => {
                let v = value()?;
                let (name, cmd) = v.split_once('=').ok_or_else(|| {
                    format!("--other {v:?}: expected NAME=COMMAND, e.g. 'k9s=k9s --context bench -n {{ns}} -c pods'")
                })?;
                a.others.push((name.to_string(), cmd.to_string()));
            }
            "--control-plane" => {
                a.control_plane = true;
                // 10,000 pods take minutes to make there: 1,000 unless --pods says otherwise.
                if !pods_given {
                    a.pods = vec![1000];
                }
                a.baseline = root.join("benches/tools/startup-control-plane-baseline.tsv");
            }
            // What cargo bench passes along.
            "--bench" => {}
            other => {
                return Err(format!(
                    "unknown argument {other:?}; expected --bin PATH, --pods N[,N…], --runs N, \
                     --idle SECS, --baseline FILE, --save, --verbose, --control-plane, --sets, \
                     --cold, --other NAME=COMMAND"
                ));
            }
        }
    }
    if a.sets && !baseline_given {
        // The set list's figures are not the grid's: a baseline of their own.
        let name = a
            .baseline
            .file_name()
            .map(|f| f.to_string_lossy().replace("startup-", "startup-sets-"));
        a.baseline.set_file_name(name.unwrap_or_default());
    }
    Ok(a)
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("startup: {e}");
            std::process::exit(2);
        }
    };
    if !a.bin.exists() {
        eprintln!("startup: {} does not exist: cargo build --release first", a.bin.display());
        std::process::exit(2);
    }
    let mut table: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for &n in &a.pods {
        let served = if a.control_plane {
            Server::ControlPlane(OnControlPlane::start(n).unwrap_or_else(|e| {
                eprintln!("startup: {e}");
                std::process::exit(2);
            }))
        } else {
            Server::Sim(Served::start(&a.bin, n))
        };
        table.insert((5, n), served.list_seconds());
        let mut runs: Vec<Run> = Vec::new();
        warm_up(&a, &served, n, "ststui", &Tool::Ststui);
        for i in 0..a.runs {
            let home = home(&a, &served, "ststui", i);
            let run = console_run(&a, &served, n, &Tool::Ststui, VICTIMS[i % VICTIMS.len()], &home);
            eprintln!(
                "  {n} pods, run {}: first frame {:.3} s, complete {:.3} s, {} requests, \
                 RSS {:.1} MiB, idle CPU {} ms, event → screen {:.3} s (its grid cell {:.3} s)",
                i + 1,
                run.first,
                run.complete,
                run.requests,
                run.rss_mib,
                run.idle_cpu_ms,
                run.event,
                run.cell
            );
            runs.push(run);
        }
        let med = |f: fn(&Run) -> f64| median(runs.iter().map(f).collect());
        table.insert((0, n), med(|r| r.first));
        table.insert((1, n), med(|r| r.complete));
        table.insert((2, n), med(|r| r.requests as f64));
        table.insert((3, n), med(|r| r.rss_mib));
        table.insert((4, n), med(|r| r.idle_cpu_ms as f64));
        if runs.iter().any(|r| !r.event.is_nan()) {
            table.insert((6, n), med(|r| r.event));
        }
        if runs.iter().any(|r| !r.cell.is_nan()) {
            table.insert((7, n), med(|r| r.cell));
        }
        for (name, command) in &a.others {
            other_runs(&a, &served, n, name, command);
        }
    }
    let baseline = read_baseline(&a.baseline);
    let caches = if a.cold {
        "cold: every run with a fresh HOME"
    } else {
        "warm: each console's HOME kept across its runs, after one untimed run"
    };
    println!("caches {caches}");
    print_table(&a.pods, &table, &baseline);
    if a.save {
        save_baseline(&a.baseline, &table);
        println!("saved as the baseline: {}", a.baseline.display());
    }
}

/// Another console's runs on `served`, warmed first, and a line of their medians.
fn other_runs(a: &Args, served: &Server, n: usize, name: &str, command: &str) {
    let tool = Tool::Other(command.to_string());
    warm_up(a, served, n, name, &tool);
    let runs: Vec<Run> = (0..a.runs)
        .map(|i| {
            let home = home(a, served, name, i);
            console_run(a, served, n, &tool, VICTIMS[i % VICTIMS.len()], &home)
        })
        .collect();
    let med = |f: fn(&Run) -> f64| median(runs.iter().map(f).collect());
    println!(
        "{name}, {n} pods, medians of {}: first frame {:.3} s, {} requests, RSS {:.1} MiB, \
         idle CPU {} ms, event → screen {:.3} s",
        runs.len(),
        med(|r| r.first),
        med(|r| r.requests as f64),
        med(|r| r.rss_mib),
        med(|r| r.idle_cpu_ms as f64),
        med(|r| r.event)
    );
    if a.verbose {
        for (i, r) in runs.iter().enumerate() {
            eprintln!(
                "    run {}: first frame {:.3} s, {} requests, RSS {:.1} MiB, idle CPU {} \
                 ms, event → screen {:.3} s",
                i + 1,
                r.first,
                r.requests,
                r.rss_mib,
                r.idle_cpu_ms,
                r.event
            );
        }
    }
}

/// Where the console is opened: a served simulator or the control plane.
enum Server {
    Sim(Served),
    ControlPlane(OnControlPlane),
}

/// Where the request count starts.
enum Mark {
    Count(u64),
    Time(k8s_openapi::jiff::Timestamp),
}

impl Server {
    fn console_args(&self) -> Vec<String> {
        match self {
            Server::Sim(s) => {
                vec!["--kubeconfig".into(), s.dir.join("kc").to_string_lossy().into(), "web".into()]
            }
            Server::ControlPlane(c) => c.console_args(),
        }
    }

    /// The header's `NAMESPACE/web`.
    fn title(&self) -> String {
        match self {
            Server::Sim(_) => "default/web".into(),
            Server::ControlPlane(c) => format!("{}/web", c.ns),
        }
    }

    /// For another console's command line: the namespace and the kubeconfig.
    fn namespace_and_kubeconfig(&self) -> (String, String) {
        match self {
            Server::Sim(s) => ("default".into(), s.dir.join("kc").to_string_lossy().into()),
            Server::ControlPlane(c) => (c.ns.clone(), c.kubeconfig().to_string_lossy().into()),
        }
    }

    fn dir(&self) -> &Path {
        match self {
            Server::Sim(s) => &s.dir,
            Server::ControlPlane(c) => &c.dir,
        }
    }

    fn mark(&self) -> Mark {
        match self {
            Server::Sim(s) => Mark::Count(s.requests().0),
            Server::ControlPlane(_) => Mark::Time(k8s_openapi::jiff::Timestamp::now()),
        }
    }

    /// The console's requests in its first `window` from `mark`, and each as `VERB PATH`.
    fn requests(&self, mark: &Mark, window: Duration) -> (u64, Vec<String>) {
        match (self, mark) {
            (Server::Sim(s), Mark::Count(before)) => {
                let (after, lines) = s.requests();
                let skip = usize::try_from(*before).unwrap_or(0);
                (after.saturating_sub(*before), lines.into_iter().skip(skip).collect())
            }
            (Server::ControlPlane(c), Mark::Time(at)) => c.requests(*at, window),
            _ => (0, Vec::new()),
        }
    }

    /// The set list's event (the control plane only): waits until the set has `n` pods, all
    /// Ready, then scales it to `n + 1` and returns when the PATCH was sent.
    fn scale_up(&self, n: usize) -> Option<Instant> {
        match self {
            Server::Sim(_) => None,
            Server::ControlPlane(c) => c
                .settle(n, Duration::from_secs(120))
                .and_then(|()| c.scale(n + 1))
                .map_err(|e| eprintln!("  scale to {}: {e}", n + 1))
                .ok(),
        }
    }

    /// Scales the set back to `n` after [`Server::scale_up`].
    fn scale_back(&self, n: usize) {
        if let Server::ControlPlane(c) = self
            && let Err(e) = c.scale(n)
        {
            eprintln!("  scale back to {n}: {e}");
        }
    }

    /// Waits until the set has `n` pods, all Ready (the control plane: an earlier run's scale
    /// is undone).
    fn settle(&self, n: usize) {
        if let Server::ControlPlane(c) = self
            && let Err(e) = c.settle(n, Duration::from_secs(120))
        {
            eprintln!("  {e}");
        }
    }

    /// Deletes `pod` (the control plane only: the served simulator at ×1000 ends a graceful
    /// deletion before a frame could show it; `console-latency.py` times its changes) and
    /// returns when the DELETE was sent.
    fn delete_pod(&self, pod: &str) -> Option<Instant> {
        match self {
            Server::Sim(_) => None,
            Server::ControlPlane(c) => {
                c.delete_pod(pod).map_err(|e| eprintln!("  delete {pod}: {e}")).ok()
            }
        }
    }

    fn list_seconds(&self) -> f64 {
        match self {
            Server::Sim(s) => s.list_seconds(),
            Server::ControlPlane(c) => c.list_seconds(),
        }
    }
}

struct Run {
    figures: Figures,
    /// A pod's DELETE sent → the pod Terminating on screen (NaN: not measured); ststui's:
    /// its timeline's line.
    event: f64,
    /// ststui's: a pod's DELETE sent → its grid cell drawn Terminating (NaN: not measured).
    cell: f64,
}

/// The HOME (and XDG directories) a console runs with: one kept across the runs of a tool on
/// one server (warm caches), or a fresh one for each run with `--cold`.
fn home(a: &Args, served: &Server, tool: &str, run: usize) -> PathBuf {
    let tag: String =
        tool.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let dir = match a.cold {
        true => served.dir().join(format!("home-{tag}-cold-{run}")),
        false => served.dir().join(format!("home-{tag}")),
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        panic!("{}: {e}", dir.display());
    }
    dir
}

/// Warm caches: one untimed start of `tool` with the HOME its timed runs keep, until its first
/// useful frame (nothing with `--cold`).
fn warm_up(a: &Args, served: &Server, n: usize, name: &str, tool: &Tool) {
    if a.cold {
        return;
    }
    let home = home(a, served, name, 0);
    let mut screen = Screen::spawn(command(a, served, tool, &home));
    let start = screen.start;
    let first = screen.until(start, |s| useful(a, served, n, tool, s));
    eprintln!("  {name}, {n} pods: warmed up (first frame {first:.3} s, not counted)");
    screen.quit();
}

/// The command line of `tool`'s console on `served`, with `home` as its HOME.
fn command(a: &Args, served: &Server, tool: &Tool, home: &Path) -> CommandBuilder {
    let mut cmd = match tool {
        Tool::Ststui => {
            let mut cmd = CommandBuilder::new(&a.bin);
            let mut args = served.console_args();
            if a.sets {
                // Without the set's NAME: the StatefulSet list.
                args.retain(|w| w != "web");
            }
            cmd.args(args);
            cmd.arg("--log-file");
            cmd.arg(served.dir().join("console.log"));
            cmd
        }
        Tool::Other(line) => {
            let (ns, kc) = served.namespace_and_kubeconfig();
            let words: Vec<String> = line
                .split_whitespace()
                .map(|w| w.replace("{ns}", &ns).replace("{kubeconfig}", &kc))
                .collect();
            let mut cmd = CommandBuilder::new(words.first().map_or("true", String::as_str));
            cmd.args(words.iter().skip(1));
            cmd.env("KUBECONFIG", kc);
            cmd.cwd(served.dir());
            cmd
        }
    };
    cmd.env("HOME", home);
    for (var, sub) in [
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_STATE_HOME", ".local/state"),
    ] {
        cmd.env(var, home.join(sub));
    }
    cmd
}

/// The first useful frame of `tool`: ststui's set header and a pod row (the set list: the set
/// `N/N` Ready); another console's, a pod of the set shown.
fn useful(a: &Args, served: &Server, n: usize, tool: &Tool, s: &str) -> bool {
    if a.sets {
        s.contains("web") && s.contains(&format!("{n}/{n}"))
    } else if matches!(tool, Tool::Ststui) {
        s.contains(&served.title()) && s.contains("web-0 ")
    } else {
        s.contains("web-")
    }
}

/// The glyph ststui's compact map draws for `ordinal`: the map's rows are labelled with their
/// first ordinal (`▶` marks the selected one's row), one glyph per ordinal after it.
fn grid_glyph(screen: &str, ordinal: usize) -> Option<char> {
    for line in screen.lines() {
        for pane in line.split('│') {
            let rest = pane.trim_start().trim_start_matches('▶').trim_start();
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let Ok(from) = digits.parse::<usize>() else { continue };
            let glyphs: Vec<char> =
                rest[digits.len()..].chars().filter(|c| !c.is_whitespace()).collect();
            let is_map = !glyphs.is_empty() && glyphs.iter().all(|c| "●◐○■◧□◆◈◇×!?·".contains(*c));
            if is_map && ordinal >= from && ordinal < from + glyphs.len() {
                return glyphs.get(ordinal - from).copied();
            }
        }
    }
    None
}

impl std::ops::Deref for Run {
    type Target = Figures;
    fn deref(&self) -> &Figures {
        &self.figures
    }
}

/// What is timed: ststui, or another console's command line (`{ns}` and `{kubeconfig}`
/// replaced; `KUBECONFIG` set), whose first useful frame is the first showing a pod of the set (`web-`).
enum Tool {
    Ststui,
    Other(String),
}

/// The pods deleted for the event → screen time, one per run in turn: the first rows of every
/// console (by ordinal, or by name), each Ready again by its next turn.
const VICTIMS: [&str; 3] = ["web-0", "web-1", "web-10"];

/// One console's run: first frame, requests, RSS, idle CPU, then `victim` deleted and timed to
/// the screen.
fn console_run(a: &Args, served: &Server, n: usize, tool: &Tool, victim: &str, home: &Path) -> Run {
    let cmd = command(a, served, tool, home);
    if a.sets {
        // An earlier run's pod n (its scale) is gone: the list says `n/n` again.
        served.settle(n);
    }
    let mark = served.mark();
    let mut screen = Screen::spawn(cmd);
    let (start, pid) = (screen.start, screen.pid);
    let ours = matches!(tool, Tool::Ststui);
    // Complete: the header's count of Ready pods (from the set's status) and the grid listed,
    // its title naming every ordinal (while the pods arrive it says "listing pods …").
    let ready = format!("ready {n} ");
    let listed = format!("Ordinals 0–{} ({n}", n.saturating_sub(1));
    let first = screen.until(start, |s| useful(a, served, n, tool, s));
    let complete = if ours && !a.sets {
        screen.until(start, |s| s.contains(&ready) && s.contains(&listed))
    } else {
        f64::NAN
    };
    screen.pump(start + Duration::from_secs(10));
    let (requests, lines) = served.requests(&mark, Duration::from_secs(10));
    let (rss_mib, idle_cpu_ms) = screen.rss_then_idle_cpu(pid, Duration::from_secs(a.idle));
    // A line naming the pod that says it is terminating or deleted: a pod list's row
    // (Terminating), or ststui's timeline (`delete-pod web-0`: its grid of 1,000 is a map of
    // cells, no names).
    let named = format!("{victim} ");
    let deleting = |s: &str| {
        s.lines().any(|l| {
            let l = l.to_lowercase();
            l.contains(&named) && (l.contains("terminating") || l.contains("delete"))
        })
    };
    // ststui's grid: the victim's cell drawn Terminating.
    let ordinal: Option<usize> = victim.strip_prefix("web-").and_then(|o| o.parse().ok());
    let cell_gone = |s: &str| ordinal.and_then(|o| grid_glyph(s, o)) == Some('×');
    let (event, cell) = if a.sets {
        // The set list's row changes when the set's replicas do (a deleted pod stays Ready
        // while it terminates): scaled to n + 1, timed until `/n+1` is on the screen.
        let scaled = format!("/{}", n + 1);
        let t = match served.scale_up(n) {
            Some(sent) => screen.until(sent, |s| s.contains(&scaled)),
            None => f64::NAN,
        };
        served.scale_back(n);
        (t, f64::NAN)
    } else if deleting(&screen.contents()) {
        eprintln!("  {victim}: its deletion is on the screen before it was deleted: not timed");
        (f64::NAN, f64::NAN)
    } else {
        match served.delete_pod(victim) {
            Some(sent) if ours => match screen.until_each(sent, &[&deleting, &cell_gone])[..] {
                [event, cell] => (event, cell),
                _ => (f64::NAN, f64::NAN),
            },
            Some(sent) => (screen.until(sent, deleting), f64::NAN),
            None => (f64::NAN, f64::NAN),
        }
    };
    if a.verbose {
        for l in &lines {
            eprintln!("    {l}");
        }
    }
    screen.quit();
    let figures = Figures { first, complete, requests, rss_mib, idle_cpu_ms };
    Run { figures, event, cell }
}

fn read_baseline(path: &Path) -> BTreeMap<(usize, usize), f64> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split('\t');
            let name = f.next()?;
            // Its name in baselines saved before the set list had its own event.
            let name =
                if name == "a pod DELETE sent → on screen (s)" { FIGURES[6] } else { name };
            let figure = FIGURES.iter().position(|x| *x == name)?;
            let pods = f.next()?.parse().ok()?;
            let value = f.next()?.parse().ok()?;
            Some(((figure, pods), value))
        })
        .collect()
}

fn save_baseline(path: &Path, table: &BTreeMap<(usize, usize), f64>) {
    let mut out = String::from("# figure\tpods\tvalue (benches/startup.rs --save)\n");
    for ((figure, pods), value) in table {
        out.push_str(&format!("{}\t{pods}\t{value}\n", FIGURES[*figure]));
    }
    std::fs::write(path, out).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn print_table(
    pods: &[usize],
    table: &BTreeMap<(usize, usize), f64>,
    baseline: &BTreeMap<(usize, usize), f64>,
) {
    let mut head = format!("| {:<44} |", "figure");
    let mut rule = format!("| {:-<44} |", "");
    for n in pods {
        head.push_str(&format!(" {n} pods | baseline |"));
        rule.push_str(&format!(" {:->w$}: | -------: |", "", w = format!("{n} pods").len() - 1));
    }
    println!("{head}\n{rule}");
    for (i, name) in FIGURES.iter().enumerate() {
        let mut row = format!("| {name:<44} |");
        for n in pods {
            let w = format!("{n} pods").len();
            let v = table.get(&(i, *n)).map_or("—".into(), |v| fmt(i, *v));
            let b = baseline.get(&(i, *n)).map_or("—".into(), |v| fmt(i, *v));
            row.push_str(&format!(" {v:>w$} | {b:>8} |"));
        }
        println!("{row}");
    }
}

fn fmt(figure: usize, v: f64) -> String {
    match figure {
        0 | 1 | 5 | 6 | 7 => format!("{v:.3}"),
        3 => format!("{v:.1}"),
        _ => format!("{v:.0}"),
    }
}
