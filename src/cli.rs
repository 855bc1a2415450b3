//! Command-line interface (clap). Only argument shapes and their validation live here; `main.rs`
//! dispatches them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::core::options::FeatureGates;
pub use crate::sim::timeline::Format;
use crate::value::BadValue;

mod rollout;
mod sim;
pub use rollout::{OnFailureArg, RolloutArgs};
pub use sim::{FormatArg, SimArgs, cluster_names};

/// Where the global flags of a cluster are listed in every `--help` (clap lists a global flag
/// under every subcommand: the heading says where it applies, and `sim` refuses them).
const CLUSTER: &str = "Cluster options (the console on a cluster and the verbs; not `sim`)";
/// Where `--feature-gates` is listed: only what drives takes it.
const DRIVING: &str = "Driving options (--drive, `drive`, `play --drive`, `sim` only)";

/// ststui: a terminal rollout console for Kubernetes StatefulSets.
#[derive(Debug, Parser)]
#[command(
    name = "ststui",
    version,
    about = "A terminal rollout console for Kubernetes StatefulSets",
    long_about = None
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Kubeconfig file (real-cluster mode and the verbs).
    #[arg(long, global = true, value_name = "FILE", help_heading = CLUSTER)]
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context (real-cluster mode and the verbs).
    #[arg(long, global = true, value_name = "CONTEXT", help_heading = CLUSTER)]
    pub context: Option<String>,
    /// Namespace (real-cluster mode and the verbs; default: the context's namespace).
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE", help_heading = CLUSTER)]
    pub namespace: Option<String>,
    /// Every namespace's StatefulSets in the list (real-cluster mode).
    #[arg(short = 'A', long, conflicts_with_all = ["namespace", "name"])]
    pub all_namespaces: bool,
    /// Make no writes to the cluster at all (real-cluster mode): watch and explain only.
    #[arg(long)]
    pub read_only: bool,
    /// Be the StatefulSet controller: ststui's core reconciles the namespace's sets (or NAME
    /// only), with pause and step. Only where kube-controller-manager runs without its
    /// StatefulSet controller (--controllers=*,-statefulset-controller); refused, or stopped at
    /// once, when another controller is seen at work.
    #[arg(long, conflicts_with_all = ["read_only", "all_namespaces"])]
    pub drive: bool,
    /// Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or
    /// ~/.local/state/ststui/ststui.log).
    #[arg(long, global = true, value_name = "FILE")]
    pub log_file: Option<PathBuf>,
    /// Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`,
    /// `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager's
    /// syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet,
    /// StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The
    /// release sets the defaults.
    #[arg(long, global = true, value_name = "GATES", value_parser = parse_gates,
          help_heading = DRIVING)]
    pub feature_gates: Option<FeatureGates>,
    /// A fleet's view: NAME (or the sets -l selects) in each of these kubeconfig contexts,
    /// side by side as one matrix, read-only (`ststui rollout … --contexts` rolls a fleet).
    #[arg(long, value_name = "CONTEXT,…", conflicts_with_all = ["context", "all_namespaces", "drive"])]
    pub contexts: Option<String>,
    /// With --contexts: the sets this label selector lists in each cluster (a group in each),
    /// e.g. -l rollout-group=ingester.
    #[arg(
        short = 'l',
        long = "selector",
        value_name = "SELECTOR",
        requires = "contexts",
        conflicts_with = "name"
    )]
    pub selector: Option<String>,
    /// StatefulSet to open (real-cluster mode).
    pub name: Option<String>,
}

/// Flags of the top level that take a value (their value is not a positional).
const VALUED: [&str; 9] = [
    "--context",
    "--contexts",
    "-l",
    "--selector",
    "-n",
    "--namespace",
    "--kubeconfig",
    "--log-file",
    "-o",
];

/// `ststui expalin web`: a first word that is no verb but close to one, followed by another
/// word, is a mistyped verb (clap would take it for the console's NAME and then refuse `web`
/// without saying why). The message names the verb meant.
pub fn mistyped_verb(args: &[String]) -> Option<String> {
    let mut positionals = Vec::new();
    let mut it = args.iter().skip(1);
    while let Some(a) = it.next() {
        if VALUED.contains(&a.as_str()) {
            it.next();
        } else if !a.starts_with('-') {
            positionals.push(a.as_str());
        }
    }
    let (first, _second) = (positionals.first()?, positionals.get(1)?);
    let verb = near_verb(first)?;
    Some(format!("{first:?} is not a verb: did you mean `ststui {verb}`? ({})", verbs_said()))
}

/// The verb `word` is close to but not (within two edits, or the start of one: `rol` is
/// `rollout`'s); `None` for a verb itself or a word near none.
pub fn near_verb(word: &str) -> Option<String> {
    let verbs = verbs();
    if verbs.iter().any(|v| v == word) {
        return None;
    }
    if word.len() >= 2
        && let Some(v) = verbs.iter().find(|v| v.starts_with(word))
    {
        return Some(v.clone());
    }
    let (d, verb) =
        verbs.iter().map(|v| (crate::sim::scenario::parse::edit_distance(v, word), v)).min()?;
    (d <= 2).then(|| verb.clone())
}

/// `the verbs: explain, step, …`.
pub fn verbs_said() -> String {
    format!("the verbs: {}", verbs().join(", "))
}

/// The verbs' names, from the command tree.
fn verbs() -> Vec<String> {
    use clap::CommandFactory;
    Cli::command().get_subcommands().map(|c| c.get_name().to_string()).collect()
}

impl Cli {
    /// Refuses real-cluster flags given with `sim` (which would otherwise be ignored), with
    /// clap's usage error: the flag, why, and exit status 2.
    pub fn check(&self) -> Result<(), clap::Error> {
        let usage =
            |kind, msg: &str| Err(<Cli as clap::CommandFactory>::command().error(kind, msg));
        let drives = match &self.command {
            None => self.drive,
            Some(Command::Drive(_)) => true,
            Some(Command::Play(p)) => p.drive,
            Some(Command::Sim(_)) => true,
            Some(_) => false,
        };
        if self.feature_gates.is_some() && !drives {
            return usage(
                clap::error::ErrorKind::ArgumentConflict,
                "--feature-gates sets the gates of the controller ststui plays when it drives or \
                 simulates: give it with --drive, `ststui drive`, `ststui play --drive` or \
                 `ststui sim`",
            );
        }
        if let (Some(Command::Sim(sim)), Some(gates)) = (&self.command, &self.feature_gates)
            && let Some(why) = gates.refused_by(sim.kube_version)
        {
            return usage(clap::error::ErrorKind::ArgumentConflict, &why);
        }
        let sim = match &self.command {
            None => return Ok(()),
            Some(Command::Sim(sim)) => sim,
            Some(verb) => {
                let given = [
                    self.all_namespaces.then_some("--all-namespaces"),
                    self.read_only.then_some("--read-only"),
                    self.name.as_ref().map(|_| "a NAME before the verb"),
                ];
                return match given.into_iter().flatten().next() {
                    None => Ok(()),
                    Some(flag) => usage(
                        clap::error::ErrorKind::ArgumentConflict,
                        &format!(
                            "{flag} is for the console; `ststui {}` takes the set's name after \
                             the verb (e.g. `ststui {} web -n prod`)",
                            verb.name(),
                            verb.name()
                        ),
                    ),
                };
            }
        };
        if sim.headless && sim.serve.is_none() && sim.script.is_none() && sim.manifests.is_empty() {
            return usage(
                clap::error::ErrorKind::MissingRequiredArgument,
                "--headless needs --script FILE or -f MANIFEST (or --serve ADDR to serve until \
                 stopped)",
            );
        }
        // Refused before a scenario plays, not after.
        if let Some(spec) = &sim.serve
            && let Err(why) = crate::serve::loopback(spec)
        {
            return usage(clap::error::ErrorKind::InvalidValue, &why.to_string());
        }
        if let Some(list) = &sim.clusters {
            if !sim.headless {
                return usage(
                    clap::error::ErrorKind::ArgumentConflict,
                    "--clusters serves headless (add --headless); open a console on any of them \
                     with `ststui --kubeconfig FILE --context NAME`",
                );
            }
            if let Err(why) = cluster_names(list) {
                return usage(clap::error::ErrorKind::InvalidValue, &why);
            }
        }
        if sim.headless && sim.serve.is_none() && sim.speed != 1.0 {
            return usage(
                clap::error::ErrorKind::ArgumentConflict,
                "--speed applies to real time (the console, or --serve); --headless runs on \
                 virtual time as fast as it can",
            );
        }
        let given = [
            self.kubeconfig.as_ref().map(|_| "--kubeconfig"),
            self.context.as_ref().map(|_| "--context"),
            self.namespace.as_ref().map(|_| "--namespace"),
            self.all_namespaces.then_some("--all-namespaces"),
            self.read_only.then_some("--read-only"),
            self.name.as_ref().map(|_| "NAME"),
        ];
        match given.into_iter().flatten().next() {
            None => Ok(()),
            Some(flag) => Err(<Cli as clap::CommandFactory>::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "{flag} is for real-cluster mode (`ststui [--context C] [-n NS] [NAME]`); \
                     `ststui sim` runs the embedded simulator and does not take it"
                ),
            )),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run against the embedded simulated cluster (no Kubernetes needed).
    Sim(SimArgs),
    /// Print what the console shows about a set: grid, revisions, health, the controller's
    /// next action and blocker, and kubectl's verdict beside ours.
    Explain(ExplainArgs),
    /// Lower the partition by one (or to N): the next ordinals of a canary roll out.
    Step(StepArgs),
    /// Hold the rollout: partition to replicas, recording the previous partition, who and when.
    Freeze(NameArgs),
    /// Undo a freeze: the recorded partition comes back (refused when another writer moved it
    /// since, unless --force).
    Resume(ResumeArgs),
    /// Wait for a rollout, partition-aware (and plan-aware: a plan under way is waited for): 0 done, 1 timeout, 3 stuck (naming pod and rule).
    Wait(WaitArgs),
    /// Run a rollout plan: open the update step by step (counts or percentages of replicas),
    /// each gated on its pods being updated, Ready and available, a bake and your checks;
    /// halt on anything wrong. The plan is recorded on the set: a rerun resumes it.
    Rollout(Box<RolloutArgs>),
    /// Pass a plan's manual gate (a `pause` step).
    Approve(NameArgs),
    /// The forced rollback: the template back to the previous revision and the pods stuck on
    /// the broken one deleted (a plan under way is halted first). Shows what it will do first.
    Abort(AbortArgs),
    /// Play a scenario script against a cluster in real time, printing the timeline.
    Play(PlayArgs),
    /// Be the StatefulSet controller with no terminal (in the cluster, or beside it): the
    /// namespace's sets (-n NS, several comma-separated, or -A every namespace) reconciled by
    /// ststui's core, one driver at a time (a Lease per namespace), JSON lines on stdout,
    /// /healthz and /readyz, SIGTERM gives the leases up. Only where kube-controller-manager
    /// runs without its StatefulSet controller.
    Drive(DriveArgs),
    /// A stand-in kubelet for test clusters without nodes (binds and runs every unscheduled
    /// pod; obeys the scenario's kubelet settings and faults). Never on a real cluster.
    FakeKubelet(FakeKubeletArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish or powershell).
    Completion(CompletionArgs),
    /// Print the manual page (ststui(1), or a verb's: `ststui man rollout | man -l -`), or
    /// write every page into a folder (--out-dir).
    Man(ManArgs),
}

/// `ststui man [VERB]`.
#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// The verb whose page to print (ststui-VERB(1)); without it, ststui(1).
    pub verb: Option<String>,
    /// Write every page (ststui.1, ststui-VERB.1, …) into this folder instead, e.g.
    /// /usr/local/share/man/man1.
    #[arg(long, value_name = "DIR", conflicts_with = "verb")]
    pub out_dir: Option<PathBuf>,
}

/// `ststui completion SHELL`.
#[derive(Debug, Clone, Args)]
pub struct CompletionArgs {
    /// The shell whose completion script to print.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

impl Command {
    /// The verb as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Sim(_) => "sim",
            Command::Explain(_) => "explain",
            Command::Step(_) => "step",
            Command::Freeze(_) => "freeze",
            Command::Resume(_) => "resume",
            Command::Wait(_) => "wait",
            Command::Rollout(_) => "rollout",
            Command::Approve(_) => "approve",
            Command::Abort(_) => "abort",
            Command::Play(_) => "play",
            Command::Drive(_) => "drive",
            Command::FakeKubelet(_) => "fake-kubelet",
            Command::Completion(_) => "completion",
            Command::Man(_) => "man",
        }
    }
}

/// `ststui explain`.
#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// The StatefulSet.
    pub name: String,
    /// Output: text for people; json or yaml for programs (documented in docs/verbs.md,
    /// versioned).
    #[arg(short = 'o', long, value_enum, default_value_t = ExplainOutput::Text)]
    pub output: ExplainOutput,
    /// Give up after this long, e.g. 90s (an unreachable or failing server is retried until
    /// then).
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "30s")]
    pub timeout: u64,
}

/// `-o`: a verb's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputArg {
    Text,
    Json,
}

/// `-o`: explain's output (its JSON report, or the same as YAML).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExplainOutput {
    Text,
    Json,
    Yaml,
}

/// `ststui step`.
#[derive(Debug, Clone, Args)]
pub struct StepArgs {
    /// The StatefulSet.
    pub name: String,
    /// Set the partition to N instead of lowering it by one (above the partition now: only
    /// with --force).
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          value_parser = clap::value_parser!(i32).range(0..))]
    pub to: Option<i32>,
    /// Step even while ordinals already open are not updated and Ready, or while a rollout
    /// group's plan has the set waiting or rolling, or raise the partition with --to.
    #[arg(long)]
    pub force: bool,
    /// Then wait for the newly opened ordinals to be updated and Ready.
    #[arg(long)]
    pub wait: bool,
    /// Give up after this long (exit 1), e.g. 90s, 10m: the first view, the write and its
    /// read-back, and with --wait the wait (default: 30s, no limit on the wait).
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub timeout: Option<u64>,
    /// With --wait: stuck (exit 3) after this long without progress.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "10m", requires = "wait")]
    pub stuck_after: u64,
}

/// `ststui play`.
#[derive(Debug, Clone, Args)]
pub struct PlayArgs {
    /// The scenario file (`spec/scenario.md`; docs/simulator.md).
    pub script: PathBuf,
    /// Timeline format on stdout.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
    /// How long an unreachable or failing server, and the first listings, are waited for
    /// before exit 4, e.g. 90s.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "30s")]
    pub timeout: u64,
    /// ststui's own controller drives the namespace's StatefulSets (only on an API server whose
    /// kube-controller-manager runs without its StatefulSet controller); `pause`, `resume` and
    /// `step` may then be played.
    #[arg(long)]
    pub drive: bool,
}

/// `ststui drive`.
#[derive(Debug, Clone, Args)]
pub struct DriveArgs {
    /// Every namespace, found by a watch (a new one is driven once seen); not with -n.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
    /// Where /healthz (the election loops go round) and /readyz (every lease held) answer;
    /// the default is a free loopback port, said in the `start` record.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0", value_parser = parse_addr)]
    pub health_addr: std::net::SocketAddr,
}

/// An address to listen on: `HOST:PORT` with an IP (`0.0.0.0:8080`, `[::]:8080`).
fn parse_addr(s: &str) -> Result<std::net::SocketAddr, BadValue> {
    s.parse().map_err(|_| {
        BadValue::new(
            s,
            "is not an address to listen on",
            "an IP address and a port, e.g. 127.0.0.1:8080 or 0.0.0.0:8080",
        )
    })
}

/// `ststui fake-kubelet`.
#[derive(Debug, Clone, Args)]
pub struct FakeKubeletArgs {
    /// The Node to register and serve.
    #[arg(long, value_name = "NAME", default_value = "ststui-node-0")]
    pub node: String,
    /// Serve the kubelet's exec endpoint over HTTPS on this loopback port (0: any free one),
    /// declared in the node's status so kube-apiserver proxies `kubectl exec` and `exec:` gates
    /// to it. The command runs nothing: it answers exit 0 while the pod is Ready, 75 otherwise.
    #[arg(long, value_name = "PORT", requires_all = ["tls_cert", "tls_key"])]
    pub exec_port: Option<u16>,
    /// The endpoint's certificate (PEM; self-signed will do: the API server verifies a kubelet
    /// only when given --kubelet-certificate-authority).
    #[arg(long, value_name = "FILE", requires = "exec_port")]
    pub tls_cert: Option<String>,
    /// The endpoint's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "exec_port")]
    pub tls_key: Option<String>,
}

/// `ststui freeze`.
#[derive(Debug, Clone, Args)]
pub struct NameArgs {
    /// The StatefulSet.
    pub name: String,
    /// Give up after this long, e.g. 90s (a lost reply is read back until then).
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "30s")]
    pub timeout: u64,
}

/// `ststui resume`.
#[derive(Debug, Clone, Args)]
pub struct ResumeArgs {
    /// The StatefulSet.
    pub name: String,
    /// Resume although another writer moved the partition since the freeze (writing the
    /// recorded partition over theirs), or drop a freeze whose record is not a partition.
    #[arg(long)]
    pub force: bool,
    /// Give up after this long, e.g. 90s (a lost reply is read back until then).
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "30s")]
    pub timeout: u64,
}

/// `ststui wait`.
#[derive(Debug, Clone, Args)]
pub struct WaitArgs {
    /// The StatefulSet.
    pub name: String,
    /// Give up after this long (exit 1), e.g. 90s, 10m; default: no limit.
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub timeout: Option<u64>,
    /// Stuck (exit 3) after this long without progress.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "10m")]
    pub stuck_after: u64,
    /// Wait until every pod runs the update revision, whatever the partition (without it, a
    /// partition or OnDelete holding pods on an older revision is done as the spec asks: exit
    /// 0, "held: …").
    #[arg(long)]
    pub full: bool,
}

/// `ststui abort`.
#[derive(Debug, Clone, Args)]
pub struct AbortArgs {
    /// The StatefulSet.
    pub name: String,
    /// Do it without asking (needed without a terminal).
    #[arg(long)]
    pub yes: bool,
    /// Delete a stuck pod its disruption budget will not let go (the eviction refused), giving
    /// the reason; recorded on the set (ststui.io/force-deleted) and said.
    #[arg(long = "force-delete", value_name = "REASON", value_parser = crate::value::reason)]
    pub force_delete: Option<String>,
    /// NAME is in a rollout group: revert the group instead (every set its plan touched,
    /// newest first). Without it, only NAME is reverted.
    #[arg(long)]
    pub group: bool,
    /// NAME is in a fleet: revert every cluster its plan touched, newest first (name the
    /// fleet's contexts, in any order: the clusters are matched by identity).
    #[arg(long, value_name = "CONTEXT,…", conflicts_with = "group")]
    pub contexts: Option<String>,
    /// Give up after this long, e.g. 90s.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "30s")]
    pub timeout: u64,
}

/// A duration in ms, zero allowed (`0s`).
pub(crate) fn parse_duration_or_zero(s: &str) -> Result<u64, BadValue> {
    crate::value::duration(s)
}

/// `--feature-gates`, in kube-controller-manager's syntax.
fn parse_gates(s: &str) -> Result<FeatureGates, crate::core::options::GateError> {
    s.parse()
}

/// A duration in ms: `250ms`, `90s`, `10m`, `1h`, `1m30s`; never zero.
pub(crate) fn parse_duration(s: &str) -> Result<u64, BadValue> {
    match crate::value::duration(s)? {
        0 => Err(BadValue::new(s, "is zero", "a duration above zero, e.g. 30s")),
        ms => Ok(ms),
    }
}

#[cfg(test)]
mod tests;
