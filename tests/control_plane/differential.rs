//! The differential check: every example scenario a cluster can play, and 30 generated ones
//! (the soak's generator, fixed seeds, cluster profile, spaced for a cluster), played on the simulator and on the
//! real control plane (`ststui play`, each in a namespace of its own, several at a time); the
//! controller's actions and final status compared under `ststui::play::trace`'s equivalence
//! (the README's "The differential check"). Needs the control plane:
//!
//!   tests/control-plane/run -- cargo test --release --test control_plane -- --ignored --nocapture differential::
//!
//! Fails (never skips) without it. Under `tests/control-plane/run --without-statefulset-controller`
//! the same scenarios are played with `ststui play --drive` (ststui's core is the controller
//! of the real API server) and the line says "(driven)"; `pause`, `resume` and `step` are
//! playable there.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ststui::core::Options;
use ststui::core::options::FeatureGates;
use ststui::core::spec::UpdateType;
use ststui::play::trace::{Trace, differences, trace};
use ststui::sim::headless::{Headless, run_with};
use ststui::sim::scenario::{self, Command as Line, Policy};
use ststui::sim::timeline::Format;

/// Generated scenarios (seeds 1..=GENERATED).
const GENERATED: u64 = 30;
/// Plays at once on the control plane.
const AT_ONCE: usize = 8;
/// The longest one play may take.
const PLAY_LIMIT: Duration = Duration::from_secs(900);

struct Scenario {
    name: String,
    path: PathBuf,
    parallel: BTreeSet<String>,
}

fn parallel_sets(path: &Path) -> BTreeSet<String> {
    let script = scenario::parse_file(path).unwrap_or_else(|e| panic!("{e}"));
    let mut out = BTreeSet::new();
    for line in &script.lines {
        match &line.command {
            Line::Create(a) if a.policy == Policy::Parallel => {
                out.insert(a.set.name.clone());
            }
            Line::Apply(p) => {
                let m = ststui::sim::manifest::load(p).unwrap_or_else(|e| panic!("{e}"));
                for s in m.sets {
                    if s.spec.pod_management_policy.as_deref() == Some("Parallel") {
                        out.insert(s.metadata.name.unwrap_or_default());
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn playable(path: &Path, driven: bool, options: Options) -> bool {
    let script = scenario::parse_file(path).unwrap_or_else(|e| panic!("{e}"));
    let recreate_allowed = options.semantics.recreate_known && options.semantics.recreate_gate;
    script.lines.iter().all(|l| ststui::play::cluster_refusal(&l.command, driven).is_none())
        && (recreate_allowed || !names_recreate(&script))
}

/// Whether a script creates or switches a set to the Recreate strategy (played only where the
/// control plane runs with `--feature-gates StatefulSetRecreateStrategy=true`).
fn names_recreate(script: &scenario::Script) -> bool {
    script.lines.iter().any(|l| match &l.command {
        Line::Create(a) => a.strategy == UpdateType::Recreate,
        Line::Strategy { kind, .. } => *kind == UpdateType::Recreate,
        Line::Apply(p) => ststui::sim::manifest::load(p)
            .is_ok_and(|m| m.sets.iter().any(|s| UpdateType::of(s) == UpdateType::Recreate)),
        _ => false,
    })
}

/// The gates the control plane runs with (`tests/control-plane/run --feature-gates`).
fn gates() -> FeatureGates {
    let given = std::env::var("STSTUI_FEATURE_GATES").unwrap_or_default();
    if given.trim().is_empty() {
        return FeatureGates::default();
    }
    given.parse().unwrap_or_else(|e| panic!("STSTUI_FEATURE_GATES: {e}"))
}

/// Whether ststui's core drives the control plane (kube-controller-manager runs without its
/// StatefulSet controller: `tests/control-plane/run --without-statefulset-controller`).
fn driven() -> bool {
    std::env::var("STSTUI_CONTROLLERS").is_ok_and(|c| !c.contains("statefulset-controller"))
}

/// The `.scenario` files of `dir` (under the crate root), sorted.
fn scenario_files(root: &Path, dir: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "scenario"))
        .collect();
    paths.sort();
    paths
}

fn scenarios(options: Options) -> Vec<Scenario> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = scenario_files(root, "assets/scenarios");
    // Edge cases worth checking against the real controller that are not examples for users.
    paths.extend(scenario_files(root, "tests/differential"));
    let generated = root.join("target/differential");
    std::fs::create_dir_all(&generated).expect("target/differential");
    for seed in 1..=GENERATED {
        let text = ststui::sim::soak::cluster_script(seed, options);
        let p = generated.join(format!("generated-{seed:02}.scenario"));
        std::fs::write(&p, text).expect("write a generated scenario");
        paths.push(p);
    }
    paths
        .into_iter()
        .filter(|p| playable(p, driven(), options))
        .map(|p| Scenario {
            name: p.file_stem().unwrap_or_default().to_string_lossy().into_owned(),
            parallel: parallel_sets(&p),
            path: p,
        })
        .collect()
}

fn on_simulator(s: &Scenario, options: Options) -> String {
    let args = Headless {
        script: Some(s.path.clone()),
        manifests: Vec::new(),
        format: Format::Jsonl,
        seed: 0,
        options,
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run_with(&args, &mut out, &mut err);
    assert!(code <= 1, "{}: the simulator refused it: {}", s.name, String::from_utf8_lossy(&err));
    String::from_utf8_lossy(&out).into_owned()
}

/// Plays on the cluster in namespace `ns`: (exit code, stdout, stderr).
fn on_cluster(s: &Scenario, ns: &str) -> (Option<i32>, String, String) {
    let given = std::env::var("STSTUI_FEATURE_GATES").unwrap_or_default();
    let mut drive: Vec<&str> = Vec::new();
    if driven() {
        drive.push("--drive");
        if !given.is_empty() {
            drive.extend(["--feature-gates", given.as_str()]);
        }
    }
    let mut child = crate::support::runner::ststui()
        .args(["play", &s.path.to_string_lossy(), "--format", "jsonl", "-n", ns])
        .args(drive)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ststui play");
    let started = Instant::now();
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).ok();
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).ok();
        s
    });
    let code = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status.code();
        }
        if started.elapsed() > PLAY_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    (code, out.join().unwrap_or_default(), err.join().unwrap_or_default())
}

fn make_namespaces(names: &[String]) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let client = kube::Client::try_default().await.expect("a client from KUBECONFIG");
        let api: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
        for n in names {
            let _ = api.delete(n, &Default::default()).await;
            let ns = k8s_openapi::api::core::v1::Namespace {
                metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                    name: Some(n.clone()),
                    ..Default::default()
                },
                ..Default::default()
            };
            // No namespace controller runs: a namespace of an earlier run stays (terminating
            // or not); a fresh suffix per run keeps runs apart.
            api.create(&Default::default(), &ns).await.expect("create a namespace");
        }
    });
}

fn show(label: &str, t: &Trace) -> String {
    let mut s = format!("  {label}:\n");
    for (set, pods) in &t.pods {
        s.push_str(&format!("    {set} pods: {}\n", pods.join(", ")));
    }
    for (set, revs) in &t.revisions {
        s.push_str(&format!("    {set} revisions: {}\n", revs.join(", ")));
    }
    for (set, st) in &t.status {
        s.push_str(&format!("    {set} final: {st}\n"));
    }
    s
}

/// The generated scripts the check plays are spaced for a cluster: no line stands where a
/// cluster's latency could reorder it and an event (`ststui::sim::soak::spacing`), and each
/// still converges on the simulator.
#[test]
fn the_generated_scripts_leave_no_line_to_a_race() {
    let options = Options::default();
    for seed in 1..=GENERATED {
        let spaced = ststui::sim::soak::cluster_script(seed, options);
        let left = ststui::sim::soak::spacing::unsafe_lines(&spaced, options);
        assert!(left.is_empty(), "generated-{seed:02}: lines left to a race: {left:?}\n{spaced}");
        let (_, outcome) =
            ststui::sim::headless::run_text(&spaced, Format::Jsonl, Default::default())
                .unwrap_or_else(|e| panic!("generated-{seed:02}: {e}"));
        assert!(
            outcome.failures.is_empty(),
            "generated-{seed:02}: {:?}\n{spaced}",
            outcome.failures
        );
    }
}

#[test]
#[ignore = "needs the control plane: tests/control-plane/run -- cargo test --release --test control_plane -- --ignored differential::"]
fn the_core_matches_kube_controller_manager() {
    let version = std::env::var("STSTUI_CONTROL_PLANE").unwrap_or_else(|_| {
        panic!(
            "STSTUI_CONTROL_PLANE is not set: run this under the control plane, \
             `tests/control-plane/run -- cargo test --release --test control_plane -- --ignored differential::`"
        )
    });
    let options = Options::for_server(&version, &gates());
    let all = scenarios(options);
    let run_id = std::process::id();
    let namespaces: Vec<String> = (0..all.len()).map(|i| format!("diff-{run_id}-{i}")).collect();
    make_namespaces(&namespaces);
    let all = Arc::new(all);
    let results = play_all(&all, &namespaces, (0..all.len()).collect());
    let mut matched = 0;
    let mut differing = Vec::new();
    for (i, (s, r)) in all.iter().zip(results).enumerate() {
        let (code, out, err) = r.unwrap_or((None, String::new(), "not played".into()));
        let sim_out = on_simulator(s, options);
        let keep = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/differential");
        let _ = std::fs::write(keep.join(format!("{}.sim.jsonl", s.name)), &sim_out);
        let side = if driven() { "driven" } else { "cluster" };
        let _ = std::fs::write(keep.join(format!("{}.{side}.jsonl", s.name)), &out);
        let sim = trace(&sim_out, &s.parallel);
        let cluster = trace(&out, &s.parallel);
        let mut diffs = differences(&sim, &cluster);
        if !matches!(code, Some(0 | 1)) {
            diffs.insert(0, format!("play ended with {code:?}: {}", err.trim()));
        }
        if diffs.is_empty() {
            matched += 1;
            println!("differential: {}: match", s.name);
        } else {
            println!("differential: {}: MISMATCH", s.name);
            for d in &diffs {
                println!("  {d}");
            }
            let who = if driven() { "driven" } else { "kube-controller-manager" };
            print!("{}{}", show("simulator", &sim), show(who, &cluster));
            differing.push((i, cluster));
        }
    }
    // Every scenario is one whose order a cluster cannot change (README: "One order, not a
    // race"), so any mismatch fails the check. Played once more, it says what kind it is.
    let again_ns: Vec<String> = namespaces.iter().map(|n| format!("{n}-again")).collect();
    let wanted: Vec<String> = differing.iter().map(|(i, _)| again_ns[*i].clone()).collect();
    make_namespaces(&wanted);
    let again = play_all(&all, &again_ns, differing.iter().map(|(i, _)| *i).collect());
    let mut names = Vec::new();
    for (i, first) in &differing {
        let (_, out, _) = again[*i].clone().unwrap_or((None, String::new(), String::new()));
        let second = trace(&out, &all[*i].parallel);
        let name = &all[*i].name;
        if differences(first, &second).is_empty() {
            println!("differential: {name}: the cluster repeats its trace");
        } else {
            println!("differential: {name}: the cluster's own trace changed from run to run");
            for d in differences(first, &second) {
                println!("  run 1 vs run 2: {d}");
            }
        }
        names.push(name.clone());
    }
    let (who, label) = if driven() {
        ("ststui's core driving the API server", " (driven)")
    } else {
        ("kube-controller-manager", "")
    };
    println!(
        "differential: {matched}/{} scenarios match kube-controller-manager {version}{label}",
        all.len()
    );
    assert!(
        names.is_empty(),
        "scenarios differ from {who} ({version}): {} (both timelines in target/differential)",
        names.join(", ")
    );
}

type Played = Option<(Option<i32>, String, String)>;

/// Plays the scenarios `which` on the cluster, `AT_ONCE` at a time; results by index.
fn play_all(all: &Arc<Vec<Scenario>>, namespaces: &[String], which: Vec<usize>) -> Vec<Played> {
    let queue: Arc<Mutex<VecDeque<usize>>> = Arc::new(Mutex::new(which.into()));
    let results = Arc::new(Mutex::new(vec![None; all.len()]));
    let workers: Vec<_> = (0..AT_ONCE)
        .map(|_| {
            let (queue, results, all) = (queue.clone(), results.clone(), all.clone());
            let namespaces = namespaces.to_vec();
            std::thread::spawn(move || {
                loop {
                    let Some(i) = queue.lock().ok().and_then(|mut q| q.pop_front()) else { return };
                    let r = on_cluster(&all[i], &namespaces[i]);
                    if let Ok(mut res) = results.lock() {
                        res[i] = Some(r);
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("a worker");
    }
    results.lock().map(|r| r.clone()).unwrap_or_default()
}
