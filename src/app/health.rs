//! One word for how a set is doing, counting readiness beside the controller's own completion:
//! `Healthy`, `Progressing`, `Blocked`, `Paused`, `Frozen`, `Halted` or `Degraded`. The picker reads it
//! from the set's status; the console, with the advisor's plan, also tells a rollout that no
//! amount of waiting resolves (`Blocked`).
//!
//! Owns: the rule. Must not: touch state.

use k8s_openapi::api::apps::v1::StatefulSet;

use crate::core::spec;

/// How a set is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    /// Every wanted ordinal is updated and Ready, the spec observed.
    Healthy,
    /// Pods are being created, replaced or are starting.
    Progressing,
    /// Waiting will not help (the forced-rollback case, a pod that keeps failing).
    Blocked,
    /// The simulator's controller is paused.
    Paused,
    /// The rollout is frozen (`ststui.io/frozen-*`).
    Frozen,
    /// A rollout plan halted on the set's update revision: the partition holds where it left
    /// it until someone continues (`ststui rollout --continue`), starts over or aborts.
    Halted,
    /// Fewer pods Ready than wanted, and nothing rolling.
    Degraded,
    /// The pods cannot be seen (not listed yet, or not readable): nothing is claimed.
    Unknown,
}

impl Health {
    pub fn word(self) -> &'static str {
        match self {
            Health::Healthy => "Healthy",
            Health::Progressing => "Progressing",
            Health::Blocked => "Blocked",
            Health::Paused => "Paused",
            Health::Frozen => "Frozen",
            Health::Halted => "Halted",
            Health::Degraded => "Degraded",
            Health::Unknown => "Unknown",
        }
    }
}

/// How long a pod may stay not Ready before the health word stops calling it "starting": a
/// pod of the update revision not Ready for longer makes the set Blocked (a canary or a rollout
/// that does not come up), any other Degraded. The README's health table names it.
pub const STUCK_AFTER_SECS: i64 = 300;

/// A pod of the replica range that is not Ready (not terminating).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotReady {
    /// It runs the update revision (while the rollout is not done, or as a held canary).
    pub update: bool,
    /// Seconds since it was created.
    pub age_secs: i64,
    /// Seconds it has been not Ready (since its Ready condition last changed; its age when it
    /// never was).
    pub for_secs: i64,
}

/// The set's health. `pods`: its pods that are not Ready (`None`: unknown, the set list reads
/// the status alone); `blocked` when the advisor knows the rollout is stuck for good; `paused`
/// when the simulator's controller is. The first row of the README's table that holds:
///
/// | word | when |
/// | --- | --- |
/// | Frozen | `ststui freeze` holds the rollout (a freeze another writer broke does not count) |
/// | Halted | a rollout plan halted on the set's update revision (its record, `ststui.io/plan`) |
/// | Paused | the simulator's controller is paused |
/// | Blocked | the advisor sees the forced-rollback case or a sync error, or a pod of the update revision has not been Ready for [`STUCK_AFTER_SECS`] |
/// | Progressing | a rollout plan is under way on the update revision (waiting, baking, checking or at its gate), the spec is not observed yet, pods are being created, replaced or removed, or a pod not Ready is younger than [`STUCK_AFTER_SECS`] (starting) |
/// | Degraded | fewer pods Ready than replicas, none of them starting |
/// | Healthy | everything else: every wanted pod updated and Ready |
pub fn of(set: &StatefulSet, pods: Option<&[NotReady]>, blocked: bool, paused: bool) -> Health {
    if crate::steer::holding(set).is_some() {
        return Health::Frozen;
    }
    // The plan record is read once: halted, or under way.
    let plan_phase = current_plan(set).map(|r| r.phase);
    if plan_phase == Some(crate::plan::record::Phase::Halted) {
        return Health::Halted;
    }
    if paused {
        return Health::Paused;
    }
    let stuck = |p: &&NotReady| p.update && p.for_secs >= STUCK_AFTER_SECS;
    if blocked || pods.is_some_and(|ps| ps.iter().any(|p| stuck(&p))) {
        return Health::Blocked;
    }
    if plan_phase.is_some_and(|p| !p.over()) {
        return Health::Progressing;
    }
    let replicas = spec::replicas(set);
    let Some(st) = set.status.as_ref() else {
        return if replicas == 0 { Health::Healthy } else { Health::Progressing };
    };
    let observed = st.observed_generation.unwrap_or(0) >= set.metadata.generation.unwrap_or(0);
    let strategy = spec::strategy(set);
    let wanted_updated =
        if strategy.on_delete { 0 } else { replicas - strategy.partition.clamp(0, replicas) };
    let updated = st.updated_replicas.unwrap_or(0);
    let ready = st.ready_replicas.unwrap_or(0);
    let rolling = updated < wanted_updated || st.replicas != replicas;
    if !observed || rolling {
        return Health::Progressing;
    }
    let starting = match pods {
        Some(ps) => ps.iter().any(|p| p.age_secs < STUCK_AFTER_SECS),
        // The status alone: an update still under way counts as starting.
        None => st.current_revision != st.update_revision && !strategy.on_delete,
    };
    if ready < replicas && starting {
        return Health::Progressing;
    }
    if ready < replicas {
        return Health::Degraded;
    }
    Health::Healthy
}

/// The set's plan when it is about the update revision the set rolls out now (a plan of an
/// older template is history).
pub fn current_plan(set: &StatefulSet) -> Option<crate::plan::record::Record> {
    let r = crate::plan::record::read(set).plan().cloned()?;
    let current = match crate::plan::decide::observed_update_revision(set) {
        Some(update) => update == r.revision,
        // Not observed yet: the record's template hash says whether it is the same spec.
        None => r.template.is_empty() || r.template == crate::plan::record::template_hash(set),
    };
    current.then_some(r)
}

/// Whether a rollout plan halted on the update revision the set rolls out now.
pub fn halted(set: &StatefulSet) -> bool {
    current_plan(set).is_some_and(|r| r.phase == crate::plan::record::Phase::Halted)
}

/// The plan under way (not done, halted nor aborted) on the update revision the set rolls out
/// now: the rollout is the plan's, and it is not over before the plan is.
pub fn plan_under_way(set: &StatefulSet) -> Option<crate::plan::record::Record> {
    current_plan(set).filter(|r| !r.phase.over())
}

/// The pods of the set's replica range that are not Ready, as [`of`] reads them, at `now`; a pod
/// counts as the update's (`NotReady::update`) while an update is under way (the current and
/// update revisions differ).
pub fn not_ready<'a>(
    set: &StatefulSet,
    pods: impl IntoIterator<Item = (i32, &'a k8s_openapi::api::core::v1::Pod)>,
    (current_revision, update_revision): (&str, &str),
    now: k8s_openapi::jiff::Timestamp,
) -> Vec<NotReady> {
    let secs = |t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>| {
        t.map_or(0, |t| now.duration_since(t.0).as_secs().max(0))
    };
    pods.into_iter()
        .filter(|(o, p)| {
            spec::in_range(set, *o)
                && p.metadata.deletion_timestamp.is_none()
                && !crate::core::pod::is_ready(p)
        })
        .map(|(_, p)| {
            let age_secs = secs(p.metadata.creation_timestamp.as_ref());
            let ready = p
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .and_then(|c| c.iter().find(|c| c.type_ == "Ready"));
            let for_secs = ready
                .and_then(|c| c.last_transition_time.as_ref())
                .map_or(age_secs, |t| secs(Some(t)));
            let update = current_revision != update_revision
                && crate::core::pod::revision(p) == update_revision;
            NotReady { update, age_secs, for_secs }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::StatefulSetStatus;

    fn set(replicas: i32, partition: i32, st: (i32, i32, i32)) -> StatefulSet {
        let mut s = StatefulSet::default();
        s.metadata.generation = Some(2);
        s.spec.replicas = Some(replicas);
        s.spec.update_strategy = Some(k8s_openapi::api::apps::v1::StatefulSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(k8s_openapi::api::apps::v1::RollingUpdateStatefulSetStrategy {
                partition: Some(partition),
                max_unavailable: None,
            }),
        });
        s.status = Some(StatefulSetStatus {
            replicas: st.0,
            updated_replicas: Some(st.1),
            ready_replicas: Some(st.2),
            observed_generation: Some(2),
            ..Default::default()
        });
        s
    }

    const NONE: Option<&[NotReady]> = Some(&[]);

    #[test]
    fn readiness_counts_beside_completion() {
        assert_eq!(of(&set(3, 0, (3, 3, 3)), NONE, false, false), Health::Healthy);
        // A canary held by the partition is done when the ordinals above it are updated.
        assert_eq!(of(&set(5, 3, (5, 2, 5)), NONE, false, false), Health::Healthy);
        assert_eq!(of(&set(5, 3, (5, 1, 5)), NONE, false, false), Health::Progressing);
        // "Complete" by the controller's rule, yet nothing is Ready: not healthy.
        assert_eq!(of(&set(3, 0, (3, 3, 0)), NONE, false, false), Health::Degraded);
        assert_eq!(of(&set(3, 0, (3, 1, 3)), NONE, true, false), Health::Blocked);
        assert_eq!(of(&set(3, 0, (3, 1, 3)), NONE, false, true), Health::Paused);
        let mut unobserved = set(3, 0, (3, 3, 3));
        unobserved.metadata.generation = Some(3);
        assert_eq!(of(&unobserved, NONE, false, false), Health::Progressing);
    }

    #[test]
    fn a_pod_starting_is_progress_and_one_not_ready_for_long_is_not() {
        let starting = [NotReady { update: true, age_secs: 4, for_secs: 4 }];
        // The last pod of a rollout (or a scale-up's newest) starting: Progressing, not Degraded.
        assert_eq!(of(&set(3, 0, (3, 3, 2)), Some(&starting), false, false), Health::Progressing);
        // A canary of the update revision not Ready for five minutes: Blocked.
        let canary = [NotReady { update: true, age_secs: 400, for_secs: 400 }];
        assert_eq!(of(&set(5, 4, (5, 1, 4)), Some(&canary), false, false), Health::Blocked);
        // A pod of the current revision that lost readiness long after it started: Degraded.
        let lost = [NotReady { update: false, age_secs: 4000, for_secs: 30 }];
        assert_eq!(of(&set(5, 4, (5, 1, 4)), Some(&lost), false, false), Health::Degraded);
        // The set list reads the status alone: an update under way is progress.
        let mut rolling = set(3, 0, (3, 3, 2));
        rolling.status.as_mut().unwrap().current_revision = Some("a".into());
        rolling.status.as_mut().unwrap().update_revision = Some("b".into());
        assert_eq!(of(&rolling, None, false, false), Health::Progressing);
    }

    #[test]
    fn a_plan_under_way_is_progress_until_it_is_done_and_a_halted_one_is_halted() {
        use crate::plan::record::{PLAN, Phase, Record};
        let with = |phase: Phase, revision: &str| {
            // Partition 3 of 5 with two pods updated: done as far as the partition goes.
            let mut s = set(5, 3, (5, 2, 5));
            let st = s.status.as_mut().unwrap();
            st.update_revision = Some("web-b".into());
            st.current_revision = Some("web-a".into());
            let r = Record {
                steps: "1,100%".into(),
                bake_seconds: 0,
                checks: vec![],
                on_failure: "hold".into(),
                revision: revision.into(),
                template: String::new(),
                step: 1,
                of: 2,
                phase,
                since: "2026-01-01T00:00:00Z".into(),
                partition: 3,
                by: "ana".into(),
                started: "2026-01-01T00:00:00Z".into(),
                reason: None,
                began_at: Some(5),
                gates: Default::default(),
                target: None,
                gate: None,
            };
            s.metadata.annotations =
                Some([(PLAN.to_string(), serde_json::to_string(&r).unwrap())].into());
            s
        };
        for phase in [Phase::Waiting, Phase::Baking, Phase::Checking, Phase::Gate, Phase::Approved]
        {
            assert_eq!(
                of(&with(phase, "web-b"), NONE, false, false),
                Health::Progressing,
                "{phase:?}"
            );
        }
        assert_eq!(of(&with(Phase::Halted, "web-b"), NONE, false, false), Health::Halted);
        assert_eq!(of(&with(Phase::Done, "web-b"), NONE, false, false), Health::Healthy);
        // A plan of an older revision is history.
        assert_eq!(of(&with(Phase::Baking, "web-a"), NONE, false, false), Health::Healthy);
        assert_eq!(of(&with(Phase::Halted, "web-a"), NONE, false, false), Health::Healthy);
    }
}
