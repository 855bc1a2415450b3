//! The verdict table: each row's word, what `ststui wait` does with it, what the Argo CD
//! script says of such a set, when the row holds and what moves the set on. docs/verdicts.md
//! is generated from it (the `verdicts` test).

use super::{About, Argo, Kind, Row, Word};

/// What `row` means.
#[expect(
    clippy::too_many_lines,
    reason = "one arm per row of the verdict table: the table reads whole, as docs/verdicts.md shows it"
)]
pub(super) fn about(row: Row) -> About {
    use Kind::{Done, Stuck, Waiting};
    let (id, word, kind, argo, when, moves) = match row {
        Row::Healthy => (
            "healthy",
            Word::Healthy,
            Done,
            Some(Argo::Healthy),
            "every pod of the replicas runs the update revision and is Ready, the spec observed, nothing condemned left",
            "—",
        ),
        Row::Held => (
            "held",
            Word::Held,
            Done,
            Some(Argo::Suspended),
            "done as the spec asks, while pods wait on an older revision behind the partition or under OnDelete, and no plan runs (`wait --full` waits on)",
            "`ststui step NAME` (OnDelete: `ststui rollout NAME --steps …`)",
        ),
        Row::Rolling => (
            "rolling",
            Word::Progressing,
            Waiting,
            Some(Argo::Progressing),
            "the spec is not observed yet, or pods are being created, replaced, removed or are starting",
            "— (the controller)",
        ),
        Row::Degraded => (
            "degraded",
            Word::Degraded,
            Waiting,
            Some(Argo::Progressing),
            "fewer pods Ready than replicas, none starting and nothing rolling (Argo CD reads the status alone: Progressing)",
            "— (the pod named)",
        ),
        Row::Blocked => (
            "blocked",
            Word::Blocked,
            Stuck,
            Some(Argo::Progressing),
            "no waiting resolves it: the forced-rollback case (kubernetes#67250), a sync error, or a pod of the update revision not Ready for 5 minutes (`wait` also: a pod failed twice, `--stuck-after` without a change)",
            "`ststui abort NAME`",
        ),
        Row::Paused => (
            "paused",
            Word::Paused,
            Waiting,
            None,
            "the simulator's controller is paused",
            "space (the console), `resume` (a scenario)",
        ),
        Row::Frozen => (
            "frozen",
            Word::Frozen,
            Stuck,
            Some(Argo::Suspended),
            "`ststui freeze` holds an update back and no plan runs",
            "`ststui resume NAME`",
        ),
        Row::FrozenIdle => (
            "frozen-idle",
            Word::Frozen,
            Done,
            Some(Argo::Suspended),
            "frozen with nothing to roll out",
            "`ststui resume NAME`",
        ),
        Row::Plan => (
            "plan",
            Word::Progressing,
            Waiting,
            Some(Argo::Progressing),
            "a plan is under way and its runner holds its lease: waiting on its pods, a bake, checks, a gate or a disruption budget",
            "— (the runner)",
        ),
        Row::Approval => (
            "approval",
            Word::Waiting,
            Waiting,
            Some(Argo::Suspended),
            "a plan waits at its manual gate",
            "`ststui approve NAME`",
        ),
        Row::Stalled => (
            "stalled",
            Word::Stalled,
            Stuck,
            Some(Argo::Progressing),
            "a plan is under way and nobody runs it (its lease ran out or was given back)",
            "`ststui rollout NAME --steps …` resumes it, `ststui abort NAME` rolls back",
        ),
        Row::Halted => (
            "halted",
            Word::Halted,
            Stuck,
            Some(Argo::Degraded),
            "a plan halted on the revision the set rolls out",
            "`ststui rollout NAME --continue` once fixed, `ststui abort NAME` rolls back",
        ),
        Row::Invalid => (
            "invalid",
            Word::Halted,
            Stuck,
            Some(Argo::Degraded),
            "the plan record cannot be read",
            "`ststui abort NAME` clears it",
        ),
        Row::GroupWaiting => (
            "group-waiting",
            Word::Progressing,
            Waiting,
            Some(Argo::Progressing),
            "its rollout group's plan has it waiting for the sets before it, the group's runner live",
            "— (the group's runner)",
        ),
        Row::GroupHalted => (
            "group-halted",
            Word::Halted,
            Stuck,
            Some(Argo::Progressing),
            "waiting in a rollout group whose plan halted (Argo CD reads each set alone: the halted member is Degraded)",
            "the group's own rerun with `--continue`, or `ststui abort MEMBER --group`",
        ),
        Row::GroupStalled => (
            "group-stalled",
            Word::Stalled,
            Stuck,
            Some(Argo::Progressing),
            "waiting in a rollout group whose runner is gone",
            "the group's own rerun (`ststui rollout -l rollout-group=G --steps …`)",
        ),
        Row::Unknown => (
            "unknown",
            Word::Unknown,
            Waiting,
            None,
            "its pods or revisions cannot be read (not listed yet, or not allowed): nothing is claimed",
            "—",
        ),
    };
    About { id, word, kind, argo, when, moves }
}
