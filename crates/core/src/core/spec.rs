//! Read-only views of a StatefulSet's spec as the controller sees it after API defaulting
//! (spec 3.0 definitions, 3.5 `SetDefaults_StatefulSet`, 3.6.2 maxUnavailable resolution).
//!
//! Owns: the accessors every other sync module uses (`start`, `end`, replicas, strategy,
//! partition, maxUnavailable, retention policy). Must not touch: anything mutable; it never
//! allocates per pod. A set that was not defaulted by an API server (e.g. a manifest read from a
//! file) is read as the API server would have defaulted it.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::options::Semantics;
use super::pod::MinReady;
use super::types::SyncError;

/// `spec.updateStrategy.type` value for the rolling strategy.
pub const ROLLING_UPDATE: &str = "RollingUpdate";
/// `spec.updateStrategy.type` value for the manual strategy.
pub const ON_DELETE: &str = "OnDelete";
/// `spec.updateStrategy.type` value for the all-at-once strategy (1.37, alpha, feature gate
/// `StatefulSetRecreateStrategy`; spec 3.8).
pub const RECREATE: &str = "Recreate";
/// `spec.podManagementPolicy` value for burst mode.
pub const PARALLEL: &str = "Parallel";
/// Retention policy value that lets garbage collection delete claims.
pub const DELETE: &str = "Delete";

/// The set's name (empty when unset).
pub fn name(set: &StatefulSet) -> &str {
    set.metadata.name.as_deref().unwrap_or_default()
}

/// The set's namespace (empty when unset).
pub fn namespace(set: &StatefulSet) -> &str {
    set.metadata.namespace.as_deref().unwrap_or_default()
}

/// The set's UID (empty when unset).
pub fn uid(set: &StatefulSet) -> &str {
    set.metadata.uid.as_deref().unwrap_or_default()
}

/// The most replicas the core models. Upstream allocates a slot per replica (and Parallel
/// creates every missing pod in one sync); a set asking for more (the API allows 2147483647) is
/// not planned but refused with [`beyond_model`], so an advisor on a real cluster never
/// allocates in proportion to a hostile `spec.replicas`. The simulator's API refuses such sets.
pub const MAX_MODELLED_REPLICAS: i32 = 100_000;

/// Why a set is not modelled, when its replicas are beyond [`MAX_MODELLED_REPLICAS`].
pub fn beyond_model(set: &StatefulSet) -> Option<String> {
    let n = replicas(set);
    (n > MAX_MODELLED_REPLICAS).then(|| {
        format!(
            "spec.replicas {n} is beyond the {MAX_MODELLED_REPLICAS} replicas ststui's controller \
             model holds: the advisor does not plan this set (the grid shows the pods that exist)"
        )
    })
}

/// `spec.replicas`, defaulted to 1; a negative value (rejected by validation) reads as 0.
pub fn replicas(set: &StatefulSet) -> i32 {
    set.spec.replicas.unwrap_or(1).max(0)
}

/// `spec.ordinals.start`, or 0 (upstream `getStartOrdinal`).
#[doc(alias = "getStartOrdinal")]
pub fn start_ordinal(set: &StatefulSet) -> i32 {
    set.spec.ordinals.as_ref().and_then(|o| o.start).unwrap_or(0)
}

/// `start + replicas - 1` (upstream `getEndOrdinal`), in 64 bits as upstream's `int`: with
/// `ordinals.start` near 2³¹ the range reaches past every ordinal a pod name can parse to.
#[doc(alias = "getEndOrdinal")]
pub fn end_ordinal(set: &StatefulSet) -> i64 {
    i64::from(start_ordinal(set)) + i64::from(replicas(set)) - 1
}

/// Whether `ordinal` is in `[start, end]` (upstream `podInOrdinalRange`).
#[doc(alias = "podInOrdinalRange")]
pub fn in_range(set: &StatefulSet, ordinal: i32) -> bool {
    ordinal >= start_ordinal(set) && i64::from(ordinal) <= end_ordinal(set)
}

/// `spec.minReadySeconds` (0 when unset).
pub fn min_ready_seconds(set: &StatefulSet) -> i32 {
    set.spec.min_ready_seconds.unwrap_or(0)
}

/// When the set's Ready pods count as available, under `sem`.
#[expect(clippy::disallowed_methods, reason = "the one home of a set's availability rule")]
pub fn min_ready(set: &StatefulSet, sem: &Semantics) -> MinReady {
    MinReady::new(min_ready_seconds(set), sem)
}

/// Burst mode: `podManagementPolicy == Parallel` (upstream `allowsBurst`). Monotonic otherwise.
#[doc(alias = "allowsBurst")]
pub fn is_parallel(set: &StatefulSet) -> bool {
    set.spec.pod_management_policy.as_deref() == Some(PARALLEL)
}

/// The update strategy after defaulting: an absent type is RollingUpdate with an empty
/// `rollingUpdate` block (partition 0); an explicit RollingUpdate keeps a nil block as nil.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strategy<'a> {
    pub on_delete: bool,
    pub rolling: bool,
    /// The type is `Recreate`. What a sync does with it depends on the release and its gate:
    /// see [`Strategy::recreates`].
    pub recreate: bool,
    /// Whether `rollingUpdate` is non-nil (decides the placeholder rule, 3.5).
    pub has_rolling_block: bool,
    /// `rollingUpdate.partition` (0 when the block is nil or the field unset).
    pub partition: i32,
    pub max_unavailable: Option<&'a IntOrString>,
}

impl Strategy<'_> {
    /// Whether a controller with semantics `sem` runs the Recreate phases (3.8) for this type.
    /// Before 1.37 the type is unknown to the controller and rolls as a RollingUpdate with no
    /// `rollingUpdate` block; from 1.37 with the gate off the set is not reconciled at all.
    pub fn recreates(&self, sem: &Semantics) -> bool {
        self.recreate && sem.recreate_known && sem.recreate_gate
    }

    /// Whether the partition is what a rollout steps: RollingUpdate, or Recreate on a release
    /// that does not know it (it rolls as RollingUpdate there).
    pub fn steps_partition(&self, sem: &Semantics) -> bool {
        self.rolling || (self.recreate && !sem.recreate_known)
    }

    /// Why the controller deletes a pod for being on an old revision: the Recreate burst under
    /// Recreate, else the rolling update.
    pub fn outdated_reason(&self) -> super::types::DeleteReason {
        if self.recreate {
            super::types::DeleteReason::Recreate
        } else {
            super::types::DeleteReason::Update
        }
    }

    /// RollingUpdate with no `rollingUpdate` at all: what a type-only switch from OnDelete
    /// leaves (the API defaults the block only when the type is empty too). Missing pods are
    /// then created at the current revision below `status.currentReplicas` (3.5).
    pub fn rolling_block_unset(&self) -> bool {
        self.rolling && !self.has_rolling_block
    }

    /// Whether the partition holds `ordinal` (below `start + partition`, the partition being
    /// an offset from `start`): the rolling update leaves it alone. Never under OnDelete.
    pub fn holds(&self, start: i32, ordinal: i64) -> bool {
        self.has_rolling_block && ordinal < i64::from(start) + i64::from(self.partition)
    }
}

/// Reads `spec.updateStrategy` as the API server would have defaulted it.
pub fn strategy(set: &StatefulSet) -> Strategy<'_> {
    let us = set.spec.update_strategy.as_ref();
    let ty = us.and_then(|u| u.type_.as_deref());
    let block = us.and_then(|u| u.rolling_update.as_ref());
    let defaulted_block = ty.is_none();
    Strategy {
        on_delete: ty == Some(ON_DELETE),
        rolling: ty.is_none() || ty == Some(ROLLING_UPDATE),
        recreate: ty == Some(RECREATE),
        has_rolling_block: block.is_some() || defaulted_block,
        partition: block.and_then(|b| b.partition).unwrap_or(0),
        max_unavailable: block.and_then(|b| b.max_unavailable.as_ref()),
    }
}

/// The three values `spec.updateStrategy.type` may take, as the operator names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UpdateType {
    RollingUpdate,
    OnDelete,
    Recreate,
}

impl UpdateType {
    /// Every type, in the order the console's toggle cycles them.
    pub const ALL: [UpdateType; 3] =
        [UpdateType::RollingUpdate, UpdateType::OnDelete, UpdateType::Recreate];

    /// The value of `spec.updateStrategy.type`.
    pub fn as_str(self) -> &'static str {
        match self {
            UpdateType::RollingUpdate => ROLLING_UPDATE,
            UpdateType::OnDelete => ON_DELETE,
            UpdateType::Recreate => RECREATE,
        }
    }

    /// The type named `word` exactly (the API's spelling).
    pub fn parse(word: &str) -> Option<UpdateType> {
        UpdateType::ALL.into_iter().find(|t| t.as_str() == word)
    }

    /// The set's type after defaulting; an unknown value (refused by validation) reads as
    /// RollingUpdate, as the controller treats it.
    pub fn of(set: &StatefulSet) -> UpdateType {
        let st = strategy(set);
        if st.on_delete {
            UpdateType::OnDelete
        } else if st.recreate {
            UpdateType::Recreate
        } else {
            UpdateType::RollingUpdate
        }
    }
}

impl std::fmt::Display for UpdateType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a controller with semantics `sem` does not reconcile `set`: type Recreate on 1.37 with
/// the gate off. Upstream's message, word for word (its `UnknownStrategy` Event and sync error).
pub fn recreate_refused(set: &StatefulSet, sem: &Semantics) -> Option<String> {
    let st = strategy(set);
    (st.recreate && sem.recreate_known && !sem.recreate_gate).then(|| {
        format!(
            "statefulset {}/{} uses Recreate strategy but feature gate {} is disabled",
            namespace(set),
            name(set),
            super::options::RECREATE_GATE
        )
    })
}

/// An int-or-string as written (`2`, `25%`).
pub fn int_or_string_text(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// Resolves maxUnavailable against `spec.replicas` (upstream `getStatefulSetMaxUnavailable`):
/// nil means 1, a percentage is rounded down, and the result is at least 1.
#[doc(alias = "getStatefulSetMaxUnavailable")]
pub fn max_unavailable(set: &StatefulSet) -> Result<i32, SyncError> {
    let st = strategy(set);
    if !st.has_rolling_block {
        return Ok(1);
    }
    let value = match st.max_unavailable {
        None => 1,
        Some(IntOrString::Int(n)) => *n,
        Some(IntOrString::String(s)) => scaled_percent(s, replicas(set))?,
    };
    Ok(value.max(1))
}

/// `intstr.GetScaledValueFromIntOrPercent(.., roundUp=false)` for the string form.
fn scaled_percent(s: &str, total: i32) -> Result<i32, SyncError> {
    let bad = || SyncError {
        message: format!(
            "invalid value for IntOrString: invalid value {s:?} for maxUnavailable: expected an \
             integer or a percentage such as \"25%\""
        ),
        retry: true,
    };
    let digits = s.strip_suffix('%').ok_or_else(bad)?;
    let pct: i64 = digits.parse().map_err(|_| bad())?;
    let v = pct.saturating_mul(i64::from(total)) / 100;
    Ok(i32::try_from(v).unwrap_or(i32::MAX))
}

/// The PVC retention policy, nil treated as Retain/Retain (3.7). `(when_deleted, when_scaled)`
/// are `true` for Delete.
#[doc(alias = "getPersistentVolumeClaimRetentionPolicy")]
pub fn retention(set: &StatefulSet) -> Retention {
    let p = set.spec.persistent_volume_claim_retention_policy.as_ref();
    Retention {
        when_deleted_delete: p.and_then(|p| p.when_deleted.as_deref()) == Some(DELETE),
        when_scaled_delete: p.and_then(|p| p.when_scaled.as_deref()) == Some(DELETE),
    }
}

/// The retention policy as two switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub when_deleted_delete: bool,
    pub when_scaled_delete: bool,
}

impl Retention {
    /// Retain/Retain: no ownerRefs are ever managed.
    pub fn is_retain_retain(self) -> bool {
        !self.when_deleted_delete && !self.when_scaled_delete
    }
}

/// `spec.serviceName` (empty when unset).
pub fn service_name(set: &StatefulSet) -> &str {
    set.spec.service_name.as_deref().unwrap_or_default()
}

/// `spec.volumeClaimTemplates` (empty when unset).
pub fn claim_templates(set: &StatefulSet) -> &[k8s_openapi::api::core::v1::PersistentVolumeClaim] {
    set.spec.volume_claim_templates.as_deref().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{
        RollingUpdateStatefulSetStrategy, StatefulSetSpec, StatefulSetUpdateStrategy,
    };

    fn set_with(replicas: i32, mu: Option<IntOrString>) -> StatefulSet {
        StatefulSet {
            spec: StatefulSetSpec {
                replicas: Some(replicas),
                update_strategy: Some(StatefulSetUpdateStrategy {
                    type_: Some(ROLLING_UPDATE.into()),
                    rolling_update: Some(RollingUpdateStatefulSetStrategy {
                        max_unavailable: mu,
                        partition: None,
                    }),
                }),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn max_unavailable_resolution_matches_the_upstream_table() {
        let pct = |p: &str| Some(IntOrString::String(p.into()));
        let cases = [
            (25, pct("10%"), 2),
            (5, pct("50%"), 2),
            (5, pct("10%"), 1),
            (5, pct("100%"), 5),
            (0, Some(IntOrString::Int(3)), 3),
            (5, Some(IntOrString::Int(0)), 1),
            (5, pct("0%"), 1),
            (5, pct("1%"), 1),
            (5, None, 1),
        ];
        for (replicas, mu, want) in cases {
            assert_eq!(max_unavailable(&set_with(replicas, mu.clone())), Ok(want), "{mu:?}");
        }
        assert!(max_unavailable(&set_with(5, pct("abc"))).is_err());
        assert!(max_unavailable(&set_with(5, pct("5"))).is_err());
    }

    #[test]
    fn absent_strategy_defaults_to_rolling_update_with_a_block() {
        let set = StatefulSet { spec: StatefulSetSpec::default(), ..Default::default() };
        let st = strategy(&set);
        assert!(st.rolling && st.has_rolling_block && !st.on_delete);
        assert_eq!(st.partition, 0);
        assert_eq!(replicas(&set), 1);
        assert_eq!(end_ordinal(&set), 0);
    }
}
