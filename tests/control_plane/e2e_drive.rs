//! Drive mode end to end on the real control plane whose kube-controller-manager runs without
//! its StatefulSet controller (`tests/control-plane/run --without-statefulset-controller`):
//! ststui's core is the only StatefulSet controller there. Scenarios played with `ststui play
//! --drive` hold their expectations (an ordered scale-up and down, a partitioned rolling
//! update, OnDelete, claims retained and deleted on scale-down, pause and step), each controller
//! action told once; the console pauses and steps a set in a pseudo-terminal, each step's pod
//! read back through the API, and quitting stops reconciling; a status write that conflicts
//! with a second writer is read again and written; through a proxy that loses the replies to
//! writes and resets every connection (`cp_support::proxy`), the console still drives and the
//! server's record shows each pod made once per revision and no revision collision; without the
//! permission to write, drive mode refuses before its first write, naming what it may not do.
//! Needs that control plane, and fails (never skips) without it:
//!
//!   tests/control-plane/run --without-statefulset-controller -- \
//!     cargo test --release --test control_plane -- --ignored e2e_drive::
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]
#![cfg(unix)]

use crate::support::cp_support;
use crate::support::pty_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cp_support::Ns;
use cp_support::proxy::Proxy;
use pty_support::*;

const DEADLINE: Duration = Duration::from_secs(90);

/// A namespace of its own on the control plane without its StatefulSet controller.
fn ns(test: &str) -> Ns {
    let how = "`tests/control-plane/run --without-statefulset-controller -- cargo test --release \
               --test control_plane -- --ignored e2e_drive::`";
    let ns = Ns::create("drive", test, how);
    let controllers = std::env::var("STSTUI_CONTROLLERS").unwrap_or_default();
    assert!(
        !controllers.contains("statefulset"),
        "kube-controller-manager runs its StatefulSet controller ({controllers}): run this under {how}"
    );
    ns
}

/// `ststui play --drive FILE --format jsonl` in `ns`: (exit code, stdout, stderr).
fn play(ns: &Ns, script: &Path) -> (Option<i32>, String, String) {
    ns.play(script, &["--drive", "--format", "jsonl", "--timeout", "60s"])
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The timeline's controller lines: (action, object) in order.
fn actions(jsonl: &str) -> Vec<(String, String)> {
    jsonl
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "controller")
        .map(|v| {
            let what = ["pod", "pvc", "revision"]
                .iter()
                .find_map(|k| v[*k].as_str())
                .unwrap_or_default()
                .to_string();
            (v["action"].as_str().unwrap_or_default().to_string(), what)
        })
        .collect()
}

#[test]
#[ignore = "needs the control plane without its StatefulSet controller: see the module doc"]
fn driven_scenarios_hold_their_expectations() {
    let scenarios: [&'static str; 5] = [
        "assets/scenarios/ordered-scale.scenario",
        "assets/scenarios/partition-canary.scenario",
        "assets/scenarios/on-delete.scenario",
        "assets/scenarios/pvc-retention.scenario",
        "tests/drive/pause-step.scenario",
    ];
    let runs: Vec<_> = scenarios
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            std::thread::spawn(move || {
                let ns = ns(&format!("play{i}"));
                let (code, out, err) = play(&ns, &root().join(s));
                (s, code, out, err)
            })
        })
        .collect();
    let mut failed = Vec::new();
    for r in runs {
        let (s, code, out, err) = r.join().unwrap();
        let expects = out.lines().filter(|l| l.contains("\"type\":\"expect\"")).count();
        println!("{s}: exit {code:?}, {expects} expectations");
        if code != Some(0) || expects == 0 {
            failed.push(format!("{s}: exit {code:?}\n{err}\n{out}"));
            continue;
        }
        let acts = actions(&out);
        assert!(!acts.is_empty(), "{s}: the controller reported no action");
        if s.ends_with("ordered-scale.scenario") {
            // Every pod created once, in order: the driver's own line, never a second one
            // inferred from the watch.
            let created: Vec<&str> =
                acts.iter().filter(|(a, _)| a == "create-pod").map(|(_, p)| p.as_str()).collect();
            assert_eq!(created, ["web-0", "web-1", "web-2", "web-3", "web-4"], "{s}");
            let deleted: Vec<&str> =
                acts.iter().filter(|(a, _)| a == "delete-pod").map(|(_, p)| p.as_str()).collect();
            assert_eq!(deleted, ["web-4", "web-3", "web-2", "web-1", "web-0"], "{s}");
        }
    }
    assert!(failed.is_empty(), "driven plays failed:\n{}", failed.join("\n"));
}

/// `web`, two Ready pods, created and settled by `play --drive` (which then stops driving).
fn web_with_two_pods(ns: &Ns) {
    let setup = ns.dir.join("setup.scenario");
    std::fs::write(
        &setup,
        "kubelet start=200ms ready=200ms stop=200ms\ncreate web replicas=2\nsettle max=60s\n\
         expect web ready=2 pods=web-0,web-1\n",
    )
    .unwrap();
    let (code, _, err) = play(ns, &setup);
    assert_eq!(code, Some(0), "setup: {err}");
}

#[test]
#[ignore = "needs the control plane without its StatefulSet controller: see the module doc"]
fn the_console_pauses_and_steps_a_driven_set_and_quitting_stops_reconciling() {
    let ns = ns("console");
    web_with_two_pods(&ns);
    let log = ns.dir.join("console.log").display().to_string();
    let mut c = Console::start(&["--drive", "-n", &ns.name, "--log-file", &log, "web"]);
    c.wait_for("driving, live", |s| header(s).contains("driving, live") && s.contains("web-1"));
    c.press(" ");
    c.wait_for("driving, PAUSED", |s| header(s).contains("driving, PAUSED"));
    ns.kubectl(&["scale", "sts", "web", "--replicas=4", "-n", &ns.name]);
    c.wait_for("the new spec seen", |s| s.contains("desired 4"));
    c.pump(Duration::from_secs(2));
    assert_eq!(ns.pods(), ["web-0", "web-1"], "paused: nothing is written");
    c.press("n");
    let start = Instant::now();
    while ns.pods().len() < 3 {
        assert!(start.elapsed() < DEADLINE, "the step created nothing:\n{}", c.screen());
        c.pump(Duration::from_millis(200));
    }
    c.pump(Duration::from_secs(2));
    assert_eq!(ns.pods(), ["web-0", "web-1", "web-2"], "one step, one pod (OrderedReady)");
    c.wait_for("the step's action on the timeline", |s| s.contains("create-pod web-2"));
    c.press(" ");
    c.wait_for("driving, live again", |s| header(s).contains("driving, live"));
    let start = Instant::now();
    while ns.pods().len() < 4 {
        assert!(start.elapsed() < DEADLINE, "resumed but not reconciled:\n{}", c.screen());
        c.pump(Duration::from_millis(200));
    }
    c.press("q");
    assert!(c.wait_exit().success());
    let screen = c.parser.screen();
    assert!(!screen.alternate_screen() && !screen.hide_cursor(), "terminal restored");
    // Nobody drives once the console is gone: a scale-up stays unobserved.
    ns.kubectl(&["scale", "sts", "web", "--replicas=5", "-n", &ns.name]);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(ns.pods().len(), 4, "quitting stopped reconciling");
}

/// The `restricted` context may read everything and write nothing: drive mode asks before its
/// first write and refuses, naming who may not do what, in `play` and in the console (before
/// the terminal is taken), and nothing is written.
#[test]
#[ignore = "needs the control plane without its StatefulSet controller: see the module doc"]
fn drive_mode_refuses_without_the_permission_to_write_naming_what_is_missing() {
    let ns = ns("denied");
    let script = ns.dir.join("scale.scenario");
    std::fs::write(
        &script,
        "create web replicas=2
settle max=5s
expect web ready=2
",
    )
    .unwrap();
    let out = crate::support::runner::ststui()
        .arg("play")
        .arg(&script)
        .args(["--drive", "--context", "restricted", "--timeout", "20s", "-n", &ns.name])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains(&format!("will not drive {}: restricted may not", ns.name)), "{err}");
    for denied in ["create pods (core)", "delete pods (core)", "update statefulsets/status (apps)"]
    {
        assert!(err.contains(denied), "{denied}: {err}");
    }
    // The console refuses the same way before it takes the terminal.
    let mut c = Console::start(&["--drive", "--context", "restricted", "-n", &ns.name, "web"]);
    c.wait_for("the refusal", |s| s.contains("create controllerrevisions (apps)"));
    assert!(!c.wait_exit().success());
    let screen = c.screen();
    assert!(screen.contains("will not drive"), "{screen}");
    assert!(!c.parser.screen().alternate_screen(), "the terminal was never taken");
    assert!(ns.pods().is_empty(), "nothing written");
}

/// A status write that conflicts is read again and written on the fresh object: a second
/// writer annotates the set as soon as it sees the burst's first pod, while ststui's sync is
/// still creating the rest, so the sync's status write (decided on the set before the
/// annotation) conflicts every time; the rollout completes and its status is the server's.
#[test]
#[ignore = "needs the control plane without its StatefulSet controller: see the module doc"]
fn a_conflicting_status_write_is_read_again_and_written() {
    let ns = ns("conflict");
    let script = ns.dir.join("burst.scenario");
    std::fs::write(
        &script,
        "kubelet start=200ms ready=200ms stop=200ms\ncreate burst replicas=0 policy=Parallel\n\
         settle max=30s\nwait 2s\nscale burst 200\nsettle max=60s\nexpect burst ready=200\n",
    )
    .unwrap();
    // The second writer: the first pod of the burst seen, one annotation of the set.
    let poker = {
        let (name, dir) = (ns.name.clone(), ns.dir.clone());
        std::thread::spawn(move || {
            let start = Instant::now();
            while start.elapsed() < DEADLINE {
                let out = Command::new("kubectl")
                    .arg("--cache-dir")
                    .arg(dir.join("poke-cache"))
                    .args(["get", "pods", "-n", &name, "--no-headers", "-o", "name"])
                    .output()
                    .unwrap();
                if !out.stdout.is_empty() {
                    let ok = Command::new("kubectl")
                        .arg("--cache-dir")
                        .arg(dir.join("poke-cache"))
                        .args(["annotate", "sts", "burst", "-n", &name, "ststui.dev/poke=1"])
                        .output()
                        .unwrap();
                    return ok.status.success();
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            false
        })
    };
    let (code, out, err) = play(&ns, &script);
    assert!(poker.join().unwrap(), "the second writer never saw a pod");
    assert_eq!(code, Some(0), "{err}\n{out}");
    let log = std::fs::read_to_string(ns.dir.join("play.log")).unwrap_or_default();
    assert!(
        log.contains("status write of") && log.contains("conflicted at resourceVersion"),
        "no status write conflicted: {log}"
    );
    let status = ns.kubectl(&[
        "get", "sts", "burst", "-n", &ns.name, "-o",
        "jsonpath={.status.replicas}/{.status.readyReplicas}/{.metadata.annotations.ststui\\.dev/poke}",
    ]);
    assert_eq!(status, "200/200/1", "the status is the server's, and the annotation stands");
}

/// Drive mode through what a real network does, on the real API server: every connection of
/// the console (its watches, the controller's watches and writes) passes a proxy that loses the
/// reply to a write every 250 ms (the server carried it out; ststui hears nothing) and resets
/// every connection every 2 s, while the operator's kubectl goes straight to the server. A
/// Parallel set of 12 is created, rolled to a new image and scaled down to 4. The server's own
/// record is the judge: each pod was made once per revision (a lost reply made no pod twice
/// and deleted none for nothing), two revisions and no collision (a revision whose reply was
/// lost was not taken for another's), and the console still drives (its own pod was not taken
/// for another controller's).
#[test]
#[ignore = "needs the control plane without its StatefulSet controller: see the module doc"]
fn drive_mode_holds_through_lost_replies_and_connection_resets() {
    let ns = ns("resets");
    let setup = ns.dir.join("kubelet.scenario");
    std::fs::write(&setup, "kubelet start=100ms ready=100ms stop=100ms\n").unwrap();
    let (code, _, err) = ns.play(&setup, &[]);
    assert_eq!(code, Some(0), "setup: {err}");
    let proxy = Proxy::start(upstream(&ns));
    let proxied = proxied_kubeconfig(&ns, &proxy);
    // The server's own record of every pod made, beside the proxy.
    let made = Made::watch(&ns);
    let manifest = ns.dir.join("web.yaml");
    std::fs::write(&manifest, parallel_set("web", 12)).unwrap();
    ns.kubectl(&["apply", "-n", &ns.name, "-f", &manifest.display().to_string()]);
    let log = ns.dir.join("console.log").display().to_string();
    let mut c = Console::start(&[
        "--drive",
        "--kubeconfig",
        &proxied,
        "-n",
        &ns.name,
        "--log-file",
        &log,
        "web",
    ]);
    c.wait_for("driving", |s| header(s).contains("driving, live"));
    let faults = Faults::start(proxy);
    let mut headers = BTreeSet::new();
    rolled_out(&ns, &mut c, 12, &mut headers);
    ns.kubectl(&["set", "image", "sts/web", "-n", &ns.name, "app=nginx:1.26"]);
    rolled_out(&ns, &mut c, 12, &mut headers);
    ns.kubectl(&["scale", "sts", "web", "-n", &ns.name, "--replicas=4"]);
    rolled_out(&ns, &mut c, 4, &mut headers);
    let proxy = faults.stop();
    // The network healed: the console reconnects and still drives (a stale or unreachable
    // state said meanwhile is the truth of the moment).
    c.wait_for("driving, live once the network healed", |s| header(s).contains("driving, live"));
    c.press("q");
    assert!(c.wait_exit().success());
    let made = made.count();
    let expected: BTreeMap<String, usize> = (0..12).map(|i| (format!("web-{i}"), 2)).collect();
    assert_eq!(made, expected, "each pod made once per revision");
    let revisions = ns.kubectl(&["get", "controllerrevisions", "-n", &ns.name, "-o", "name"]);
    assert_eq!(revisions.lines().count(), 2, "two revisions: {revisions}");
    let jsonpath = "jsonpath={.status.collisionCount}";
    let collisions = ns.kubectl(&["get", "sts", "web", "-n", &ns.name, "-o", jsonpath]);
    assert!(collisions.is_empty() || collisions == "0", "a collision: {collisions}");
    println!("faults: {} replies lost, {} connections reset", proxy.lost(), proxy.reset());
    println!("the console's header meanwhile:\n{}", Vec::from_iter(headers).join("\n"));
    assert!(proxy.lost() >= 10, "too few replies lost to tell: {}", proxy.lost());
    assert!(proxy.reset() > proxy.lost(), "no connection reset beyond the lost replies");
}

/// The control plane's API server, from the test's kubeconfig.
fn upstream(ns: &Ns) -> std::net::SocketAddr {
    let jsonpath = "jsonpath={.clusters[0].cluster.server}";
    let server = ns.kubectl(&["config", "view", "--minify", "-o", jsonpath]);
    server.trim_start_matches("https://").parse().unwrap_or_else(|e| panic!("{server}: {e}"))
}

/// A copy of the test's kubeconfig whose server is the proxy; its path.
fn proxied_kubeconfig(ns: &Ns, proxy: &Proxy) -> String {
    let server = format!("https://{}", upstream(ns));
    let config = ns.kubectl(&["config", "view", "--raw"]);
    assert!(config.contains(&server), "{server} not in {config}");
    let path = ns.dir.join("proxied.kubeconfig");
    std::fs::write(&path, config.replace(&server, &format!("https://{}", proxy.addr))).unwrap();
    path.display().to_string()
}

fn parallel_set(name: &str, replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: {name}\nspec:\n  \
         replicas: {replicas}\n  serviceName: {name}\n  podManagementPolicy: Parallel\n  \
         selector:\n    matchLabels:\n      app: {name}\n  template:\n    metadata:\n      \
         labels:\n        app: {name}\n    spec:\n      containers:\n      - name: app\n        \
         image: nginx:1.25\n"
    )
}

/// Waits (pumping the console) until the set's status, read from the server, says `replicas`
/// pods, all Ready and updated, the spec observed and the rollout complete, and that many pods
/// exist.
fn rolled_out(ns: &Ns, c: &mut Console, replicas: u32, headers: &mut BTreeSet<String>) {
    let jsonpath = "jsonpath={.status.replicas}/{.status.readyReplicas}/\
                    {.status.updatedReplicas} {.status.observedGeneration}={.metadata.generation} \
                    {.status.currentRevision}={.status.updateRevision}";
    let start = Instant::now();
    loop {
        let status = ns.kubectl(&["get", "sts", "web", "-n", &ns.name, "-o", jsonpath]);
        let mut words = status.split(' ');
        let counts = words.next().unwrap_or_default();
        let same = |w: Option<&str>| w.and_then(|w| w.split_once('=')).is_some_and(|(a, b)| a == b);
        let done = counts == format!("{replicas}/{replicas}/{replicas}")
            && same(words.next())
            && same(words.next())
            && ns.pods().len() == replicas as usize;
        if done {
            return;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "not rolled out to {replicas}: {status}\n{}",
            c.screen()
        );
        c.pump(Duration::from_millis(250));
        headers.insert(header(&c.screen()).trim().to_string());
    }
}

/// `kubectl get pods -w` straight to the server, printing each pod's name and uid; killed when
/// dropped (a failed test leaves no watch behind).
struct Made(Option<std::process::Child>);

impl Made {
    fn watch(ns: &Ns) -> Made {
        let child = Command::new("kubectl")
            .arg("--cache-dir")
            .arg(ns.dir.join("watch-cache"))
            .args(["get", "pods", "-n", &ns.name, "-w", "-o"])
            .arg("jsonpath={.metadata.name} {.metadata.uid}{\"\\n\"}")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        Made(Some(child))
    }

    /// How many pods of each name the watch saw (distinct uids): each one the controller made.
    fn count(mut self) -> BTreeMap<String, usize> {
        let mut child = self.0.take().unwrap();
        let _ = child.kill();
        let out = child.wait_with_output().unwrap();
        let mut uids = BTreeMap::<String, BTreeSet<String>>::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if let Some((name, uid)) = line.split_once(' ') {
                uids.entry(name.to_string()).or_default().insert(uid.to_string());
            }
        }
        uids.into_iter().map(|(name, u)| (name, u.len())).collect()
    }
}

impl Drop for Made {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The proxy's faults on a rhythm of their own: a lost reply every 250 ms, every connection
/// reset every 2 s.
struct Faults {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Proxy>,
}

impl Faults {
    fn start(proxy: Proxy) -> Faults {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = std::sync::Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut n = 0u32;
            while !s.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(250));
                proxy.lose_next_reply();
                n += 1;
                if n.is_multiple_of(8) {
                    proxy.reset_all();
                }
            }
            proxy
        });
        Faults { stop, thread }
    }

    fn stop(self) -> Proxy {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.join().unwrap()
    }
}

#[test]
#[ignore = "needs the control plane without its StatefulSet controller: see the module doc"]
fn two_drivers_on_one_namespace_one_drives_the_other_stands_by_and_takes_over_on_quit() {
    let ns = ns("two");
    web_with_two_pods(&ns);
    let log = |n: &str| ns.dir.join(format!("{n}.log")).display().to_string();
    let (log_a, log_b) = (log("a"), log("b"));
    let mut a = Console::start(&["--drive", "-n", &ns.name, "--log-file", &log_a, "web"]);
    a.wait_for("a drives", |s| header(s).contains("driving, live") && s.contains("web-1"));
    let mut b = Console::start(&["--drive", "-n", &ns.name, "--log-file", &log_b, "web"]);
    b.wait_for("b stands by", |s| s.contains("standby, writing nothing") && s.contains("web-1"));
    // Its header says who drives (the holder: host, ststui's pid, context).
    b.wait_for("the standby's header", |s| {
        header(s).contains("◌ standby: ") && header(s).contains("/ststui-")
    });
    assert!(!header(&b.screen()).contains("driving"), "{}", b.screen());
    // An update: exactly one controller replaces the pods.
    ns.kubectl(&["set", "image", "sts/web", "-n", &ns.name, "app=nginx:1.26"]);
    let start = Instant::now();
    loop {
        let images = ns.kubectl(&[
            "get",
            "pods",
            "-n",
            &ns.name,
            "-o",
            "jsonpath={.items[*].spec.containers[0].image}",
        ]);
        if images.split_whitespace().filter(|i| *i == "nginx:1.26").count() == 2 {
            break;
        }
        assert!(start.elapsed() < DEADLINE, "not rolled out: {images}\n{}", a.screen());
        a.pump(Duration::from_millis(100));
        b.pump(Duration::from_millis(100));
        assert!(!header(&b.screen()).contains("driving"), "b drove:\n{}", b.screen());
    }
    let failed = ns.events_with_reason("FailedCreate");
    assert!(failed.trim().is_empty(), "two controllers raced: {failed}");
    // The leader quits (gives the lease up): the standby drives at once.
    a.press("q");
    assert!(a.wait_exit().success());
    b.wait_for("b took over", |s| header(s).contains("driving, live"));
    ns.kubectl(&["scale", "sts", "web", "--replicas=3", "-n", &ns.name]);
    let start = Instant::now();
    while ns.pods().len() < 3 {
        assert!(start.elapsed() < DEADLINE, "the new leader did not scale:\n{}", b.screen());
        b.pump(Duration::from_millis(200));
    }
    b.press("q");
    assert!(b.wait_exit().success());
}
