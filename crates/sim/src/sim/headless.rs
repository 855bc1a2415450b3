//! `ststui sim --headless`: runs the manifests (`-f`) and the script (`--script`) on virtual time
//! and prints the timeline (`spec/scenario.md`). Stdout carries the timeline only; diagnostics
//! (bad script or manifest, skipped documents, failed expectations) go to stderr.
//!
//! Exit codes: [`EXIT_OK`] when every `expect` held, [`EXIT_FAILED`] when one did not,
//! [`EXIT_BAD_INPUT`] for a bad script or manifest.
//!
//! Owns: the headless command. Must not touch: the terminal UI, the wall clock.

use std::io::{self, BufWriter, Write};

use super::manifest;
use super::scenario::parse::DEFAULT_SETTLE_MAX_MS;
use super::scenario::{self, Outcome, Player};
use super::timeline::Format;
use super::{Sim, SimConfig, SimEvent};
use crate::core::Options;

/// What a headless run plays: manifests first, then the script (or, without one, until the
/// manifests' sets settle), printing the timeline in `format`.
#[derive(Debug, Clone, Default)]
pub struct Headless {
    pub script: Option<std::path::PathBuf>,
    pub manifests: Vec<std::path::PathBuf>,
    pub format: Format,
    pub seed: u64,
    pub options: Options,
}

/// Every `expect` held.
pub const EXIT_OK: i32 = 0;
/// An `expect` did not hold.
pub const EXIT_FAILED: i32 = 1;
/// The script or a manifest is bad (nothing, or only part, was run).
pub const EXIT_BAD_INPUT: i32 = 2;

/// Runs with the process's stdout and stderr; returns the exit code.
pub fn run(args: &Headless) -> i32 {
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut err = io::stderr();
    let code = run_with(args, &mut out, &mut err);
    // A closed stdout (e.g. `| head`) is not worth a diagnostic.
    let _ = out.flush();
    code
}

/// The simulation `args` describe: seeded, with the requested controller semantics.
pub fn new_sim(args: &Headless) -> Sim {
    Sim::new(SimConfig { seed: args.seed, options: args.options, ..Default::default() })
}

/// Runs writing the timeline to `out` and diagnostics to `err`; returns the exit code.
pub fn run_with(args: &Headless, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let player = match &args.script {
        None => None,
        Some(path) => match scenario::parse_file(path).and_then(Player::new) {
            Ok(p) => Some(p),
            Err(e) => {
                let _ = writeln!(err, "ststui: bad script: {e}");
                return EXIT_BAD_INPUT;
            }
        },
    };
    let mut sim = new_sim(args);
    for path in &args.manifests {
        let m = match manifest::load(path) {
            Ok(m) => m,
            Err(e) => {
                let _ = writeln!(err, "ststui: bad manifest: {e}");
                return EXIT_BAD_INPUT;
            }
        };
        for w in &m.warnings {
            let _ = writeln!(err, "ststui: warning: {w}");
        }
        for (place, set) in m.located() {
            if let Err(e) = sim.apply_set(set.clone()) {
                let _ = writeln!(err, "ststui: bad manifest: {place}: {e}");
                return EXIT_BAD_INPUT;
            }
        }
    }
    let mut write_failed = false;
    let mut sink = |ev: &SimEvent| {
        if let Some(t) = ev.timeline() {
            let line = super::timeline::render(t, args.format);
            write_failed |= writeln!(out, "{line}").is_err();
        }
    };
    let outcome = match player {
        Some(mut player) => {
            for w in player.warnings() {
                let _ = writeln!(err, "ststui: warning: {w}");
            }
            player.run(&mut sim, &mut sink)
        }
        None => {
            let settled = sim.settle_streaming(DEFAULT_SETTLE_MAX_MS, &mut sink);
            for ev in sim.drain_events() {
                sink(&ev);
            }
            if !settled {
                let _ = writeln!(
                    err,
                    "ststui: the sets had not settled after {} minutes of virtual time; the \
                     timeline stops there (a --script with `settle max=` or `wait` runs longer)",
                    DEFAULT_SETTLE_MAX_MS / 60_000
                );
            }
            Outcome::default()
        }
    };
    if write_failed {
        let _ = writeln!(err, "ststui: could not write the timeline to stdout");
    }
    report(args, &outcome, err)
}

fn report(args: &Headless, outcome: &Outcome, err: &mut dyn Write) -> i32 {
    let file = args.script.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
    for f in &outcome.failures {
        let _ = writeln!(err, "{file}:{}: expect failed: {}", f.line, f.text);
        let _ = writeln!(err, "    {}", f.detail);
    }
    if outcome.failures.is_empty() {
        EXIT_OK
    } else {
        let _ = writeln!(
            err,
            "ststui: {} of {} expectations failed",
            outcome.failures.len(),
            outcome.expects
        );
        EXIT_FAILED
    }
}

/// The timeline of `script` (text) run from an empty cluster, rendered in `format`, and the
/// outcome. For tests and the soak's replays.
pub fn run_text(
    script: &str,
    format: Format,
    config: SimConfig,
) -> Result<(String, Outcome), scenario::ScriptError> {
    let script = scenario::parse(&scenario::parse::inline_path(), script)?;
    let mut player = Player::new(script)?;
    let mut sim = Sim::new(config);
    let mut text = String::new();
    let outcome = player.run(&mut sim, &mut |ev| {
        if let Some(t) = ev.timeline() {
            text.push_str(&super::timeline::render(t, format));
            text.push('\n');
        }
    });
    Ok((text, outcome))
}
