//! Building the simulated cluster a command runs on: the sets of `-f` manifests, the script to
//! play in real time, or the demo (played on virtual time first); and, with `--serve`, the
//! served API beside it (the watch hub fed by the driver's tap, the HTTP server, the
//! kubeconfig). Shared by the console and `--headless --serve`.
//!
//! Owns: composition only. Must not: decide what the simulation or the server do.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use ststui::backend::{Event, EventKind};
use ststui::cli::SimArgs;
use ststui::core::Options;
use ststui::serve::{self, AddressError, ServeConfig, Server};
use ststui::sim::api::ApiError;
use ststui::sim::driver::{self, SimHandle, Sink};
use ststui::sim::manifest::{self, ManifestError};
use ststui::sim::scenario::{self, Player, ScriptError};
use ststui::sim::{Sim, SimConfig};

/// The demo scenario (also shipped as `assets/scenarios/demo.scenario`, runnable headless).
const DEMO_SCRIPT: &str = include_str!("../assets/scenarios/demo.scenario");

/// Why the simulation or its server cannot start (the process exits with a usage error).
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("bad script: {0}")]
    Script(#[from] ScriptError),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("{}: no StatefulSet in this manifest", .0.display())]
    EmptyManifest(PathBuf),
    /// The simulated API refused a manifest's set (`place` is its file and document).
    #[error("{place}: {error}")]
    Refused { place: String, error: ApiError },
    /// The embedded demo did not play as written (a bug of ours, said as such).
    #[error("demo: {0}")]
    Demo(String),
    #[error(transparent)]
    Address(#[from] AddressError),
    #[error("cannot serve on {addr}: {error}")]
    Serve { addr: SocketAddr, error: std::io::Error },
    #[error("cannot write the kubeconfig {}: {error}", .path.display())]
    Kubeconfig { path: PathBuf, error: std::io::Error },
}

/// A simulation ready to run: the sim, the script to play in real time, and the timeline of
/// what happened before (the demo's history).
pub struct Built {
    pub sim: Sim,
    pub player: Option<Player>,
    pub history: Vec<Event>,
}

/// Builds the simulation `args` describe. Events are recorded (the console shows the selected
/// pod's and the set's; served, kubectl reads them). Serving, timestamps map onto the wall clock
/// (so clients compute sensible ages).
pub fn build(args: &SimArgs, options: Options) -> Result<Built, LaunchError> {
    let serving = args.serve.is_some();
    let plays_demo = args.script.is_none() && args.manifests.is_empty();
    let epoch = serving.then(|| {
        let now = k8s_openapi::jiff::Timestamp::now().as_millisecond() / 1000 * 1000;
        let prelude = if plays_demo { demo_length(options) } else { 0 };
        now - i64::try_from(prelude).unwrap_or(0)
    });
    let config = SimConfig {
        seed: args.seed,
        options,
        epoch_unix_ms: epoch,
        // The console shows the selected pod's Events and the set's; served, kubectl too.
        record_events: true,
        ..SimConfig::default()
    };
    let mut sim = Sim::new(config);
    for path in &args.manifests {
        create_from_manifest(&mut sim, path)?;
    }
    let player = match &args.script {
        Some(path) => {
            let player = scenario::parse_file(path).and_then(Player::new)?;
            for w in player.warnings() {
                ststui::text::err_line(&format!("ststui: warning: {w}"));
            }
            Some(player)
        }
        None => None,
    };
    let history = if plays_demo { demo(&mut sim)? } else { Vec::new() };
    Ok(Built { sim, player, history })
}

fn create_from_manifest(sim: &mut Sim, path: &Path) -> Result<(), LaunchError> {
    let m = manifest::load(path)?;
    for w in &m.warnings {
        ststui::text::err_line(&format!("ststui: warning: {w}"));
    }
    if m.sets.is_empty() {
        return Err(LaunchError::EmptyManifest(path.to_path_buf()));
    }
    for (place, set) in m.located() {
        let refused = |error| LaunchError::Refused { place: place.to_string(), error };
        sim.apply_set(set.clone()).map_err(refused)?;
    }
    Ok(())
}

/// Plays the demo on virtual time: `web` rolled out on nginx:1.25, then a new revision
/// (nginx:1.26) held by partition=5, so the operator steps the partition down. Returns the
/// cluster's history with the demo script's commands (shown as `script` lines: how the set got
/// here), without its checks.
fn demo(sim: &mut Sim) -> Result<Vec<Event>, LaunchError> {
    let path = Path::new("assets/scenarios/demo.scenario");
    let demo = |e: ScriptError| LaunchError::Demo(e.to_string());
    let script = scenario::parse(path, DEMO_SCRIPT).map_err(demo)?;
    let mut player = Player::new(script).map_err(demo)?;
    let mut history = Vec::new();
    let outcome = player.run(sim, &mut |ev| {
        if let Some(t) = ev.timeline()
            && !matches!(&t.kind, EventKind::Expect { .. })
            && !matches!(&t.kind, EventKind::Command { text, .. } if is_check_or_pacing(text))
        {
            history.push(t.clone());
        }
    });
    match outcome.failures.first() {
        None => Ok(history),
        Some(f) => Err(LaunchError::Demo(format!("line {}: {}: {}", f.line, f.text, f.detail))),
    }
}

/// The demo's `expect`, `settle` and `wait` lines: its checks and pacing, not how the set got
/// where it is.
fn is_check_or_pacing(line: &str) -> bool {
    matches!(line.split_whitespace().next(), Some("expect" | "settle" | "wait"))
}

/// How much virtual time the demo takes (deterministic: played once on a scratch simulation).
fn demo_length(options: Options) -> u64 {
    let mut scratch = Sim::new(SimConfig { options, ..SimConfig::default() });
    let _ = demo(&mut scratch);
    scratch.now_ms()
}

/// Starts the driver (with the hub's tap when serving) and, when serving, the server; writes
/// the kubeconfig. Returns the driver, the server, and a line saying where it serves.
pub fn run(
    built: Built,
    args: &SimArgs,
    sink: Sink,
) -> Result<(SimHandle, Option<Server>, Option<String>), LaunchError> {
    let Built { sim, player, .. } = built;
    let Some(spec) = &args.serve else {
        let handle = driver::spawn(sim, args.speed, sink);
        if let Some(player) = player {
            handle.attach_script(Box::new(player));
        }
        return Ok((handle, None, None));
    };
    let addr = serve::loopback(spec)?;
    let git_version = format!("v{}+ststui-sim", sim.options().version);
    let config = ServeConfig { addr, deny: args.deny.clone(), git_version };
    let (handle, server) = serve::serve_sim(sim, args.speed, sink, config)
        .map_err(|error| LaunchError::Serve { addr, error })?;
    if let Some(player) = player {
        handle.attach_script(Box::new(player));
    }
    let mut said = format!("serving the simulated cluster at http://{}", server.addr);
    if let Some(path) = &args.write_kubeconfig {
        serve::write_kubeconfig(path, server.addr)
            .map_err(|error| LaunchError::Kubeconfig { path: path.clone(), error })?;
        said.push_str(&format!(" (kubectl --kubeconfig {})", path.display()));
    }
    Ok((handle, Some(server), Some(said)))
}

/// One served cluster of `sim --serve --clusters`.
pub struct Served {
    pub name: String,
    /// Dropped first: the server stops before its driver.
    pub server: Server,
    /// Kept while it serves (the simulation's driver).
    _driver: SimHandle,
}

/// `sim --headless --serve ADDR --clusters a,b,c`: each cluster built from `args` (its own
/// world, the scenario played in each), served on ADDR's port and the next ones (port 0: free
/// ones), its timeline through `sink(name)`; the kubeconfig written with a context per cluster.
pub fn run_clusters(
    args: &SimArgs,
    options: Options,
    sink: impl Fn(&str) -> Sink,
) -> Result<(Vec<Served>, String), LaunchError> {
    let names = ststui::cli::cluster_names(args.clusters.as_deref().unwrap_or_default())
        .map_err(LaunchError::Demo)?;
    let spec = args.serve.as_deref().unwrap_or_default();
    let base = serve::loopback(spec)?;
    let mut served = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let Built { sim, player, .. } = build(args, options)?;
        let mut addr = base;
        if base.port() != 0 {
            addr.set_port(base.port().saturating_add(u16::try_from(i).unwrap_or(u16::MAX)));
        }
        let git_version = format!("v{}+ststui-sim", sim.options().version);
        let config = ServeConfig { addr, deny: args.deny.clone(), git_version };
        let (handle, server) = serve::serve_sim(sim, args.speed, sink(name), config)
            .map_err(|error| LaunchError::Serve { addr, error })?;
        if let Some(player) = player {
            handle.attach_script(Box::new(player));
        }
        served.push(Served { name: name.clone(), server, _driver: handle });
    }
    let at: Vec<String> =
        served.iter().map(|s| format!("{} at http://{}", s.name, s.server.addr)).collect();
    let mut said = format!("serving {} simulated clusters: {}", served.len(), at.join(", "));
    if let Some(path) = &args.write_kubeconfig {
        let named: Vec<(&str, SocketAddr)> =
            served.iter().map(|s| (s.name.as_str(), s.server.addr)).collect();
        serve::write_kubeconfig_of(path, &named)
            .map_err(|error| LaunchError::Kubeconfig { path: path.clone(), error })?;
        said.push_str(&format!(
            " (kubectl --kubeconfig {} --context {})",
            path.display(),
            named[0].0
        ));
    }
    Ok((served, said))
}
