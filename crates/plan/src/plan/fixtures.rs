//! Test fixtures shared by the plan's unit tests: the clock, a running pod, a plan's record and
//! a group's part.

use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// `secs` after the tests' epoch.
pub fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// A Running pod `name` at revision `rev`, Ready since `ready_since` (`None`: not Ready).
pub fn running(name: String, rev: &str, ready_since: Option<i64>) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = Some(name);
    p.metadata.labels =
        Some([(crate::core::labels::REVISION_LABEL.to_string(), rev.to_string())].into());
    let ready = PodCondition {
        type_: "Ready".into(),
        status: if ready_since.is_some() { "True" } else { "False" }.into(),
        last_transition_time: Some(Time(at(ready_since.unwrap_or(0)))),
        ..Default::default()
    };
    p.status = Some(PodStatus {
        phase: Some("Running".into()),
        conditions: Some(vec![ready]),
        ..Default::default()
    });
    p
}

/// A record of `steps` (`revision` `web-b`… as `revision`), at `step` in `phase`, partition
/// `partition`, since 10 s before `now` (seconds after the epoch), begun at partition 0.
pub fn record(
    steps: &str,
    step: usize,
    phase: super::record::Phase,
    partition: i32,
    revision: &str,
    now: i64,
) -> super::record::Record {
    let of = super::Steps::parse(steps).map(|s| s.0.len()).unwrap_or(0);
    super::record::Record {
        steps: steps.into(),
        bake_seconds: 60,
        checks: vec![],
        on_failure: "hold".into(),
        revision: revision.into(),
        template: String::new(),
        step,
        of,
        phase,
        since: super::record::stamp(at(now - 10)),
        partition,
        by: "ana".into(),
        started: super::record::stamp(at(now - 100)),
        reason: None,
        began_at: Some(0),
        from: String::new(),
        gates: Default::default(),
        target: None,
        gate: None,
    }
}

/// Group `ingester`'s part on `sets[place]`, in `state`, one run.
pub fn part(
    sets: &[&str],
    place: usize,
    state: super::group::part::State,
) -> super::group::part::Part {
    super::group::part::Part {
        group: "ingester".into(),
        sets: sets.iter().map(|s| s.to_string()).collect(),
        place,
        state,
        since: "2026-01-01T00:00:00Z".into(),
        by: "ana".into(),
        started: "2026-01-01T00:00:00Z".into(),
        steps: "1,100%".into(),
        zone_bake_seconds: 0,
        reason: None,
        clusters: None,
        cluster_bake_seconds: 0,
        approval: None,
    }
}
