//! One word for how a set is doing, counting readiness beside the controller's own completion:
//! `Healthy`, `Progressing`, `Blocked`, `Paused`, `Frozen` or `Degraded`. The picker reads it
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
            Health::Degraded => "Degraded",
            Health::Unknown => "Unknown",
        }
    }
}

/// The set's health from its spec and status; `blocked` when the advisor knows the rollout is
/// stuck for good, `paused` when the simulator's controller is.
pub fn of(set: &StatefulSet, blocked: bool, paused: bool) -> Health {
    if crate::steer::frozen(set).is_some() {
        return Health::Frozen;
    }
    if paused {
        return Health::Paused;
    }
    if blocked {
        return Health::Blocked;
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
    if ready < replicas {
        return Health::Degraded;
    }
    Health::Healthy
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

    #[test]
    fn readiness_counts_beside_completion() {
        assert_eq!(of(&set(3, 0, (3, 3, 3)), false, false), Health::Healthy);
        // A canary held by the partition is done when the ordinals above it are updated.
        assert_eq!(of(&set(5, 3, (5, 2, 5)), false, false), Health::Healthy);
        assert_eq!(of(&set(5, 3, (5, 1, 5)), false, false), Health::Progressing);
        // "Complete" by the controller's rule, yet nothing is Ready: not healthy.
        assert_eq!(of(&set(3, 0, (3, 3, 0)), false, false), Health::Degraded);
        assert_eq!(of(&set(3, 0, (3, 1, 3)), true, false), Health::Blocked);
        assert_eq!(of(&set(3, 0, (3, 1, 3)), false, true), Health::Paused);
        let mut unobserved = set(3, 0, (3, 3, 3));
        unobserved.metadata.generation = Some(3);
        assert_eq!(of(&unobserved, false, false), Health::Progressing);
    }
}
