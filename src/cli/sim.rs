//! `ststui sim`'s arguments: the simulator's flags, its timeline format, and the release and
//! gates it simulates.

use std::path::PathBuf;

use clap::{ArgGroup, Args, ValueEnum};

use super::Format;
use crate::core::options::FeatureGates;
use crate::core::{Options, Version};
use crate::serve::Deny;
use crate::sim::headless::Headless;
use crate::value::BadValue;

/// `ststui sim`: see spec/scenario.md. Flags that cannot apply together are refused by clap
/// with a message naming both (e.g. `--soak` with `--script`, `--format` without
/// `--headless`), never silently ignored.
#[derive(Debug, Clone, Args)]
#[command(group(ArgGroup::new("input").args(["script", "manifests"]).multiple(true)))]
pub struct SimArgs {
    /// A scenario file to play (headless: to its end on virtual time; interactive: in real time).
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// No terminal UI: run the script (or the manifests) and print the timeline on stdout; with
    /// --serve, serve until SIGINT/SIGTERM.
    #[arg(long)]
    pub headless: bool,
    /// Timeline format for --headless.
    #[arg(long, value_enum, default_value_t = FormatArg::Text, requires = "headless")]
    pub format: FormatArg,
    /// Seed for all randomness (soak and faults). Same script and seed, same timeline.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Create the StatefulSets of a Kubernetes manifest (multi-document YAML). Repeatable.
    #[arg(short = 'f', long = "filename", value_name = "MANIFEST")]
    pub manifests: Vec<PathBuf>,
    /// Virtual seconds per wall second in the interactive console (and while serving).
    #[arg(
        long,
        default_value_t = 1.0,
        value_parser = parse_speed,
        conflicts_with = "soak",
        allow_negative_numbers = true
    )]
    pub speed: f64,
    /// Serve the simulated cluster as a Kubernetes API on this loopback address (plain HTTP,
    /// no authentication; e.g. 127.0.0.1:6443, port 0 picks a free one).
    #[arg(long, value_name = "ADDR", conflicts_with = "soak")]
    pub serve: Option<String>,
    /// With --serve: write a kubeconfig for it to FILE (context ststui-sim).
    #[arg(long, value_name = "FILE", requires = "serve")]
    pub write_kubeconfig: Option<PathBuf>,
    /// With --serve --headless: serve several simulated clusters, one per name, each its own
    /// API on its own port (ADDR's port and the next ones; port 0 picks free ones) with its own
    /// copy of the scenario; --write-kubeconfig then writes a context per cluster. E.g.
    /// eu,us,ap, to rehearse a fleet (`ststui rollout NAME --contexts eu,us,ap`).
    #[arg(long, value_name = "NAME,…", requires = "serve")]
    pub clusters: Option<String>,
    /// With --serve: refuse this permission with 403 Forbidden (VERB:RESOURCE, e.g.
    /// patch:statefulsets, patch:statefulsets/scale, delete:pods). Repeatable.
    #[arg(long, value_name = "VERB:RESOURCE", requires = "serve")]
    pub deny: Vec<Deny>,
    /// Run N randomized soak scenarios, checking invariants after every event.
    #[arg(
        long,
        value_name = "N",
        conflicts_with_all = ["script", "manifests", "headless"],
        value_parser = parse_soak_runs
    )]
    pub soak: Option<u64>,
    /// Upstream controller semantics to reproduce (1.31 to 1.37).
    #[arg(long = "kube-version", value_name = "VERSION", default_value_t = Version::LATEST)]
    pub kube_version: Version,
    /// The top level's `--feature-gates`, copied here once parsed (`Cli::gates_to_sim`).
    #[arg(skip)]
    pub feature_gates: FeatureGates,
}

/// `--format`: the timeline's form (`sim::timeline::Format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Text,
    Jsonl,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Text => Format::Text,
            FormatArg::Jsonl => Format::Jsonl,
        }
    }
}

impl SimArgs {
    /// The headless runner's settings.
    pub fn headless(&self) -> Headless {
        Headless {
            script: self.script.clone(),
            manifests: self.manifests.clone(),
            format: self.format.into(),
            seed: self.seed,
            options: self.options(),
        }
    }

    /// The simulated release with the gates given: its API server and its controller alike.
    pub fn options(&self) -> Options {
        let mut o = Options::for_version(self.kube_version);
        o.semantics = o.semantics.with_gates(&self.feature_gates);
        o
    }
}

/// `--soak N`: a count of runs, at least one (0 would check nothing and report success).
fn parse_soak_runs(s: &str) -> Result<u64, BadValue> {
    match s.parse::<u64>() {
        Ok(0) => Err(BadValue::new(s, "runs would check nothing", "1 or more runs")),
        Ok(n) => Ok(n),
        Err(_) => Err(BadValue::new(s, "is not a count of runs", "1 or more, e.g. 50")),
    }
}

fn parse_speed(s: &str) -> Result<f64, BadValue> {
    let v: f64 = s.parse().map_err(|_| BadValue::new(s, "is not a number", "e.g. 0.5, 1, 10"))?;
    let (lo, hi) = crate::backend::SPEED_RANGE;
    if !(lo..=hi).contains(&v) || !v.is_finite() {
        return Err(BadValue::new(s, "is out of range", "0.01 to 1000"));
    }
    Ok(v)
}

/// The most clusters `sim --serve --clusters` serves.
pub const MAX_CLUSTERS: usize = 16;

/// `--clusters`' names: DNS labels (they name contexts, clusters and users), each once.
pub fn cluster_names(list: &str) -> Result<Vec<String>, String> {
    let names: Vec<String> =
        list.split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect();
    let shown = |n: &str| crate::text::shown(n, 64);
    if names.is_empty() || names.len() > MAX_CLUSTERS {
        return Err(format!(
            "--clusters {}: expected 1 to {MAX_CLUSTERS} names, e.g. eu,us,ap",
            shown(list)
        ));
    }
    if let Some(bad) = names.iter().find(|n| !crate::sim::validate::dns1123_label(n).is_empty()) {
        return Err(format!(
            "--clusters: {} is not a name (lowercase letters, digits and '-', e.g. eu-west)",
            shown(bad)
        ));
    }
    if let Some((_, twice)) = names.iter().enumerate().find(|(i, n)| names[..*i].contains(n)) {
        return Err(format!("--clusters: {} is named twice", shown(twice)));
    }
    Ok(names)
}
