//! What `kubectl rollout status statefulset/NAME` would say about a set right now, so
//! `ststui explain` can show kubectl's verdict beside ours where they differ. A reading of
//! kubectl's StatefulSet status viewer (k8s.io/kubectl `polymorphichelpers`, v0.34): it reads
//! only the set's status counters, errors on OnDelete (kubernetes#64500), and calls a
//! partitioned rollout complete by counts alone (kubernetes#68573).
//!
//! Owns: that rule. Pure.

use k8s_openapi::api::apps::v1::StatefulSet;
use serde::Serialize;

/// kubectl's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KubectlVerdict {
    /// Whether `kubectl rollout status` would return (exit 0).
    pub done: bool,
    /// Whether it would fail instead (exit 1, OnDelete).
    pub error: bool,
    /// What it would print (one line, without the trailing "...").
    pub message: String,
}

/// The verdict of `kubectl rollout status` on `set`.
pub fn rollout_status(set: &StatefulSet) -> KubectlVerdict {
    let say = |done: bool, message: String| KubectlVerdict { done, error: false, message };
    let strategy = set.spec.update_strategy.as_ref();
    let ty = strategy.and_then(|s| s.type_.as_deref()).unwrap_or("RollingUpdate");
    if ty != "RollingUpdate" {
        return KubectlVerdict {
            done: false,
            error: true,
            message: "error: rollout status is only available for RollingUpdate strategy type"
                .into(),
        };
    }
    let status = set.status.clone().unwrap_or_default();
    let observed = status.observed_generation.unwrap_or(0);
    if observed == 0 || set.metadata.generation.unwrap_or(0) > observed {
        return say(false, "Waiting for statefulset spec update to be observed".into());
    }
    let ready = status.ready_replicas.unwrap_or(0);
    let updated = status.updated_replicas.unwrap_or(0);
    if let Some(replicas) = set.spec.replicas
        && ready < replicas
    {
        return say(false, format!("Waiting for {} pods to be ready", replicas - ready));
    }
    if let Some(rolling) = strategy.and_then(|s| s.rolling_update.as_ref()) {
        if let (Some(replicas), Some(partition)) = (set.spec.replicas, rolling.partition)
            && updated < replicas - partition
        {
            return say(
                false,
                format!(
                    "Waiting for partitioned roll out to finish: {updated} out of {} new pods \
                     have been updated",
                    replicas - partition
                ),
            );
        }
        return say(
            true,
            format!("partitioned roll out complete: {updated} new pods have been updated"),
        );
    }
    let current = status.current_revision.unwrap_or_default();
    let update = status.update_revision.unwrap_or_default();
    if update != current {
        return say(
            false,
            format!(
                "waiting for statefulset rolling update to complete {updated} pods at revision {update}"
            ),
        );
    }
    let n = status.current_replicas.unwrap_or(0);
    say(true, format!("statefulset rolling update complete {n} pods at revision {current}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{
        RollingUpdateStatefulSetStrategy, StatefulSetStatus, StatefulSetUpdateStrategy,
    };

    fn set(ty: &str, partition: Option<i32>, ready: i32, updated: i32) -> StatefulSet {
        let mut s = StatefulSet::default();
        s.metadata.generation = Some(3);
        s.spec.replicas = Some(3);
        s.spec.update_strategy = Some(StatefulSetUpdateStrategy {
            type_: Some(ty.into()),
            rolling_update: partition.map(|p| RollingUpdateStatefulSetStrategy {
                partition: Some(p),
                max_unavailable: None,
            }),
        });
        s.status = Some(StatefulSetStatus {
            observed_generation: Some(3),
            ready_replicas: Some(ready),
            updated_replicas: Some(updated),
            current_replicas: Some(3 - updated),
            current_revision: Some("web-a".into()),
            update_revision: Some("web-b".into()),
            ..Default::default()
        });
        s
    }

    #[test]
    fn reads_the_counters_as_kubectl_does() {
        let v = rollout_status(&set("OnDelete", None, 3, 0));
        assert!(v.error && !v.done);
        // kubectl's status loop predates Recreate (1.37): it refuses it as it refuses OnDelete.
        let v = rollout_status(&set("Recreate", None, 3, 3));
        assert!(v.error && !v.done);
        assert!(v.message.contains("only available for RollingUpdate"), "{}", v.message);
        let v = rollout_status(&set("RollingUpdate", Some(0), 2, 3));
        assert_eq!(v.message, "Waiting for 1 pods to be ready");
        let v = rollout_status(&set("RollingUpdate", Some(2), 3, 0));
        assert!(!v.done);
        assert!(v.message.contains("0 out of 1 new pods"), "{}", v.message);
        // Counts alone: one updated pod above partition 2 is "complete".
        let v = rollout_status(&set("RollingUpdate", Some(2), 3, 1));
        assert!(v.done, "{v:?}");
        // Without a rollingUpdate block, the revisions decide.
        let v = rollout_status(&set("RollingUpdate", None, 3, 3));
        assert!(!v.done);
        assert!(v.message.contains("revision web-b"), "{}", v.message);
        let mut s = set("RollingUpdate", Some(0), 3, 3);
        s.metadata.generation = Some(4);
        assert!(rollout_status(&s).message.contains("to be observed"));
    }
}
