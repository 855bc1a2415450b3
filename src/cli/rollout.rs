//! `ststui rollout`'s arguments: the plan, its gates and ordering.

use clap::{Args, ValueEnum};

use super::{OutputArg, parse_duration, parse_duration_or_zero};

/// `ststui rollout`.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("grouped").args(["group", "selector"])))]
pub struct RolloutArgs {
    /// The StatefulSet (or a group: --group, -l).
    #[arg(required_unless_present_any = ["group", "selector"], conflicts_with_all = ["group", "selector"])]
    pub name: Option<String>,
    /// Roll a group of sets one at a time (zones, racks, tiers): their names in rolling order
    /// (a,b,c), or a shell pattern (ingester-zone-*: alphabetical). Each set runs the plan;
    /// a set starts only when every pod of every set of the group is updated or untouched,
    /// Ready and available.
    #[arg(long, value_name = "SETS|PATTERN", conflicts_with = "selector")]
    pub group: Option<String>,
    /// Roll the sets this label selector lists as a group, alphabetical (-l
    /// rollout-group=ingester: grafana/rollout-operator's groups are shown, never driven).
    #[arg(short = 'l', long = "selector", value_name = "SELECTOR")]
    pub selector: Option<String>,
    /// A group's order: `alphabetical`, or tiers (fe,be: a set rolls with the first tier its
    /// name contains as a dash-separated word).
    #[arg(long, value_name = "alphabetical|TIER,…", requires = "grouped")]
    pub order: Option<String>,
    /// In a group: every pod of the group stays updated or untouched, Ready and available this
    /// long after a set is done before the next starts, e.g. 10m.
    #[arg(long, value_name = "DUR", value_parser = parse_duration_or_zero, default_value = "0s")]
    pub zone_bake: u64,
    /// A fleet: roll NAME (or the group -l/--group picks in each cluster) in each of these
    /// kubeconfig contexts, one cluster at a time, in the order given (a cluster starts once
    /// the one before is done by revision: every pod on the update revision, Ready and
    /// available, the spec observed).
    #[arg(long, value_name = "CONTEXT,…")]
    pub contexts: Option<String>,
    /// In a fleet: every pod of the clusters done stays updated, Ready and available this long
    /// before the next cluster starts, e.g. 30m (--zone-bake: between a group's sets within
    /// a cluster).
    #[arg(long, value_name = "DUR", value_parser = parse_duration_or_zero, default_value = "0s", requires = "contexts")]
    pub cluster_bake: u64,
    /// In a fleet: before each next cluster starts, wait for `ststui approve` (on its first
    /// set, in its context) — the runner says the command.
    #[arg(long, requires = "contexts")]
    pub approve_between: bool,
    /// In a group, instead of --steps: each set opens these batches of pods, the last repeated
    /// (1,2,4 opens 1, then 2 more, then 4 more at a time), then the rest.
    #[arg(long, value_name = "N,…", requires = "grouped", conflicts_with = "steps",
          value_parser = batches)]
    pub batches: Option<String>,
    /// Pods on the update revision after each step, from the highest ordinal down: counts,
    /// percentages of the replicas (rounded up, never all before 100%) or `pause` (a manual
    /// gate), e.g. 1,25%,pause,50%,100%. Needed for a new plan; a rerun resumes the recorded one.
    #[arg(long, value_name = "LIST")]
    pub steps: Option<String>,
    /// After a step's pods are updated, Ready and available, every pod of the set must stay
    /// Ready and restart nothing for this long, e.g. 2m (at most 24h). A resume states it again:
    /// a recorded bake is never taken from the set.
    #[arg(long, value_name = "DUR", value_parser = parse_duration_or_zero, default_value = "0s")]
    pub bake: u64,
    /// A command run after each step's bake (`sh -c`), with STSTUI_NAMESPACE, STSTUI_SET,
    /// STSTUI_STEP, STSTUI_STEPS, STSTUI_PARTITION, STSTUI_PODS and STSTUI_BAKE set; a non-zero
    /// exit halts the plan. Repeatable. Only this command's checks ever run: a resume whose
    /// record lists others is refused without --force.
    #[arg(long = "check", value_name = "CMD")]
    pub checks: Vec<String>,
    /// A check running longer is killed and fails.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "5m")]
    pub check_timeout: u64,
    /// A step that makes no progress for this long (no pod of it created on the update revision
    /// or turning Ready) halts the plan.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "10m")]
    pub stuck_after: u64,
    /// Give up after this long (exit 1; the plan stays recorded where it is, a rerun resumes).
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub timeout: Option<u64>,
    /// On a failure: hold the partition where it is, or undo (the template back to the
    /// previous revision, the step's stuck pods deleted).
    #[arg(long, value_enum, default_value_t = OnFailureArg::Hold)]
    pub on_failure: OnFailureArg,
    /// Progress as text lines or JSON lines.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = OutputArg::Text)]
    pub output: OutputArg,
    /// First hold the set (every set of a group: freeze it, unless held already) and set its
    /// image — `app=nginx:1.26` or `nginx:1.26` (the first container) — then run the plan: one
    /// command instead of three. A Recreate set cannot be held: its plan sets the image itself,
    /// once the step's gates passed.
    #[arg(long, value_name = "[CONTAINER=]IMAGE")]
    pub image: Option<String>,
    /// Go on past a halt from the halted step (once what halted it is fixed), with this
    /// command's bake, checks and failure policy.
    #[arg(long = "continue")]
    pub continue_halted: bool,
    /// Go on although the recorded plan differs from this command (this command's steps, bake,
    /// checks and policy win and are recorded), start a plan over an invalid record, take over
    /// a lease that claims more than any runner writes, or take a set carrying another group's
    /// part into this group.
    #[arg(long)]
    pub force: bool,
    /// While another runner's lease holds, wait for it to run out instead of refusing.
    #[arg(long)]
    pub wait_lease: bool,
    /// Replace a step's pods stuck broken on an older revision (CrashLoopBackOff,
    /// ImagePullBackOff, CreateContainerError…) first, at once and without their pre-delete
    /// gate: they serve nothing, so it costs no availability. Without it they are only named.
    #[arg(long)]
    pub replace_stuck: bool,
    /// A pod of the step whose containers restart this many times halts the plan at once (a
    /// crash-looping canary fails fast instead of after --stuck-after).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_restarts: Option<u32>,
    /// A gate run before each pod goes (OnDelete: before ststui evicts it; RollingUpdate: before
    /// the partition is lowered onto it, one ordinal at a time): cmd:COMMAND (here, `sh -c`),
    /// exec:CONTAINER -- COMMAND… (in the pod) or http::PORT/PATH (through the API server's pod
    /// proxy). Exit 0 / 2xx goes, exit 75 / HTTP 503 or 429 is "not yet", anything else halts.
    /// Placeholders {namespace} {set} {pod} {ordinal} {zone} {old} {new} {step}, also in
    /// STSTUI_* variables.
    #[arg(long, value_name = "GATE", value_parser = gate)]
    pub pre_delete: Option<String>,
    /// A gate run once a replaced pod is updated, Ready and available, before the next goes.
    #[arg(long, value_name = "GATE", value_parser = gate)]
    pub post_ready: Option<String>,
    /// A whole-cluster gate run before each step's pods start to go (and again after
    /// --recheck).
    #[arg(long, value_name = "GATE", value_parser = gate)]
    pub before_step: Option<String>,
    /// Ask --before-step again this long after it passed, e.g. 22s (0s: once).
    #[arg(long, value_name = "DUR", value_parser = parse_duration_or_zero, default_value = "0s")]
    pub recheck: u64,
    /// A gate that says "not yet" is asked again after this long.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "10s")]
    pub gate_interval: u64,
    /// One gate run longer than this is killed and fails.
    #[arg(long, value_name = "DUR", value_parser = parse_duration, default_value = "2m")]
    pub gate_timeout: u64,
    /// How many "not yet"s a gate may answer before the plan halts (with the 10s interval, 180
    /// is 30 minutes: longer than a broker's recovery).
    #[arg(long, value_name = "N", default_value_t = 180,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub gate_tries: u32,
    /// OnDelete: roll this pod last in its step (the primary, the active controller).
    #[arg(long, value_name = "POD", conflicts_with = "last_by")]
    pub last: Option<String>,
    /// OnDelete: a gate whose first output line names the pod to roll last (asked again before
    /// each pod goes: leadership moves).
    #[arg(long, value_name = "GATE", value_parser = gate)]
    pub last_by: Option<String>,
}

impl RolloutArgs {
    /// The gates and ordering asked.
    pub fn gates(&self) -> crate::plan::gate::Gates {
        crate::plan::gate::Gates {
            pre_delete: self.pre_delete.clone(),
            post_ready: self.post_ready.clone(),
            before_step: self.before_step.clone(),
            last_by: self.last_by.clone(),
            last: self.last.clone(),
            interval_seconds: self.gate_interval / 1000,
            timeout_seconds: self.gate_timeout / 1000,
            tries: self.gate_tries,
            recheck_seconds: self.recheck / 1000,
        }
    }
}

/// `--batches 1,2,4`, checked.
fn batches(s: &str) -> Result<String, crate::value::BadValue> {
    crate::value::batches(s).map(|_| s.trim().to_string())
}

/// A gate as typed, checked.
fn gate(s: &str) -> Result<String, crate::plan::gate::GateError> {
    match crate::plan::gate::Gate::parse(s)? {
        crate::plan::gate::Gate::Sim => Err(crate::plan::gate::GateError::Rehearsal(s.into())),
        _ => Ok(s.trim().to_string()),
    }
}

/// `--on-failure`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnFailureArg {
    Hold,
    Undo,
}

impl From<OnFailureArg> for crate::plan::OnFailure {
    fn from(a: OnFailureArg) -> Self {
        match a {
            OnFailureArg::Hold => crate::plan::OnFailure::Hold,
            OnFailureArg::Undo => crate::plan::OnFailure::Undo,
        }
    }
}
