//! The `ststui` binary: command-line dispatch, tracing to a file, and the composition root of
//! the interactive console — a backend (the embedded simulator), the terminal, and the event
//! loop that feeds ONE channel of [`Msg`] into the reducer and draws when the state is dirty.
//!
//! Owns process concerns only (arguments, exit codes, threads, the wall clock for status
//! ticks). Must not decide anything the reducer decides, and must not print on stdout while
//! the console is up (stdout is the screen).

mod console;
mod tui;

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use crossbeam_channel::Sender;
use ststui::app::{AppState, Msg};
use ststui::backend::{Backend, BackendEvent, EventKind};
use ststui::cli::{Cli, Command as CliCommand, SimArgs};
use ststui::core::Options;
use ststui::sim::scenario::{self, Player};
use ststui::sim::{Sim, SimConfig, driver, manifest};
use ststui::ui::{ColorMode, Theme};

/// Exit status for usage errors: a bad manifest or script, a mode that is not available.
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = cli.check() {
        e.exit();
    }
    match cli.command {
        None => {
            eprintln!(
                "ststui: the real-cluster mode is not available yet: use `ststui sim` for the \
                 embedded simulator (`ststui sim --help`)"
            );
            ExitCode::from(EXIT_USAGE)
        }
        Some(CliCommand::Sim(ref args)) if args.soak.is_some() => soak(args),
        Some(CliCommand::Sim(ref args)) if args.headless => headless(args),
        Some(CliCommand::Sim(ref args)) => interactive(cli.log_file.as_deref(), args),
    }
}

/// `ststui sim --headless`: the scenario runner (timeline on stdout, exit 0/1/2).
fn headless(args: &SimArgs) -> ExitCode {
    exit_code(ststui::sim::headless::run(&args.headless()))
}

/// `ststui sim --soak N`: randomized runs with invariant checks.
fn soak(args: &SimArgs) -> ExitCode {
    exit_code(ststui::sim::soak::run(
        args.soak.unwrap_or(0),
        args.seed,
        Options::for_version(args.kube_version),
    ))
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// The interactive console on the embedded simulator.
fn interactive(log_file: Option<&Path>, args: &SimArgs) -> ExitCode {
    use std::io::IsTerminal;
    if !(std::io::stdout().is_terminal() && std::io::stdin().is_terminal()) {
        eprintln!(
            "ststui: the console needs a terminal (stdin and stdout are not both one): for a \
             timeline without a terminal, run `ststui sim --headless --script FILE` or \
             `ststui sim --headless -f MANIFEST`"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    let _log = match init_tracing(log_file) {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("ststui: {e:#}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let options = Options::for_version(args.kube_version);
    let inbox = console::Inbox::new();
    let (sim, player) = match build_sim(args, options, &inbox.operator_tx) {
        Ok(built) => built,
        Err(e) => {
            eprintln!("ststui: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let backend = driver::spawn(sim, args.speed, inbox.backend_sink());
    if let Some(player) = player {
        backend.attach_script(Box::new(player));
    }
    let mut state = AppState::new(backend.capabilities(), options);
    state.speed = args.speed;
    let color = ColorMode::from_env();
    let theme = Theme::new(color);
    match console::run(&mut state, Box::new(backend), &theme, inbox) {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(signal)) => ExitCode::from(u8::try_from(128 + signal).unwrap_or(1)),
        Err(e) => {
            tracing::error!("console failed: {e:#}");
            eprintln!("ststui: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The simulated cluster the console opens on: the sets of `-f` manifests and the script to
/// play in real time, if any; otherwise the demo.
fn build_sim(
    args: &SimArgs,
    options: Options,
    tx: &Sender<Msg>,
) -> Result<(Sim, Option<Player>), String> {
    let mut sim = Sim::new(SimConfig { seed: args.seed, options, ..SimConfig::default() });
    for path in &args.manifests {
        create_from_manifest(&mut sim, path)?;
    }
    let player = match &args.script {
        Some(path) => {
            let player = scenario::parse_file(path)
                .and_then(Player::new)
                .map_err(|e| format!("bad script: {e}"))?;
            for w in player.warnings() {
                eprintln!("ststui: warning: {w}");
            }
            Some(player)
        }
        None => None,
    };
    if player.is_none() && args.manifests.is_empty() {
        demo(&mut sim, tx)?;
    }
    Ok((sim, player))
}

fn create_from_manifest(sim: &mut Sim, path: &Path) -> Result<(), String> {
    let m = manifest::load(path).map_err(|e| e.to_string())?;
    for w in &m.warnings {
        eprintln!("ststui: warning: {w}");
    }
    if m.sets.is_empty() {
        return Err(format!("{}: no StatefulSet in this manifest", path.display()));
    }
    for set in m.sets {
        sim.apply_set(set).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// The demo scenario (also shipped as `assets/scenarios/demo.scenario`, runnable headless).
const DEMO_SCRIPT: &str = include_str!("../assets/scenarios/demo.scenario");

/// Plays the demo on virtual time before the console opens: `web` rolled out on nginx:1.25,
/// then a new revision (nginx:1.26) held by partition=5, so the operator steps the partition
/// down. Its timeline goes to the console (the driver then reports the objects as they are).
fn demo(sim: &mut Sim, tx: &Sender<Msg>) -> Result<(), String> {
    let path = Path::new("assets/scenarios/demo.scenario");
    let script = scenario::parse(path, DEMO_SCRIPT).map_err(|e| format!("demo: {e}"))?;
    let mut player = Player::new(script).map_err(|e| format!("demo: {e}"))?;
    // The cluster's history goes to the console; the demo script's own lines and checks do not
    // (they are setup, not something the operator did).
    let outcome = player.run(sim, &mut |ev| {
        if let Some(t) = ev.timeline()
            && !matches!(t.kind, EventKind::Command { .. } | EventKind::Expect { .. })
        {
            let _ = tx.send(Msg::Backend(BackendEvent::Timeline(t.clone())));
        }
    });
    match outcome.failures.first() {
        None => Ok(()),
        Some(f) => Err(format!("demo: line {}: {}: {}", f.line, f.text, f.detail)),
    }
}

/// Logs go to a file (never stdout: it is the screen). `STSTUI_LOG` sets the level
/// (error, warn, info, debug, trace; default info).
fn init_tracing(
    file: Option<&Path>,
) -> anyhow::Result<tracing_appender::non_blocking::WorkerGuard> {
    let path = file.map_or_else(|| std::env::temp_dir().join("ststui.log"), Path::to_path_buf);
    let f =
        std::fs::OpenOptions::new().create(true).append(true).open(&path).with_context(|| {
            format!("cannot open the log file {}: pass --log-file FILE", path.display())
        })?;
    let level = std::env::var("STSTUI_LOG")
        .ok()
        .and_then(|v| v.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::INFO);
    let (writer, guard) = tracing_appender::non_blocking(f);
    tracing_subscriber::fmt().with_writer(writer).with_ansi(false).with_max_level(level).init();
    tracing::info!("ststui {} started", env!("CARGO_PKG_VERSION"));
    Ok(guard)
}
