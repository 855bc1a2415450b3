//! Freeze and resume: the console's way to hold a rollout on a real cluster, where the
//! controller cannot be paused. Freezing raises the partition to `replicas` (no ordinal moves
//! to the update revision any more) and records, in annotations on the set, the partition it
//! replaced, who froze it and when; so a freeze survives restarts of ststui and other operators
//! see "frozen by … since …". Resuming restores the recorded partition and removes the
//! annotations. Both are idempotent.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::{Change, Inputs, Refused};
use crate::backend::ObjRef;
use crate::core::spec;

/// The partition the freeze replaced (a number).
pub const FROZEN_PARTITION: &str = "ststui.io/frozen-partition";
/// Who froze the rollout.
pub const FROZEN_BY: &str = "ststui.io/frozen-by";
/// When (RFC 3339, UTC).
pub const FROZEN_AT: &str = "ststui.io/frozen-at";

/// A set's freeze, as its annotations record it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frozen {
    /// The partition resume restores.
    pub partition: i32,
    pub by: String,
    pub at: String,
}

/// The set's freeze, if it is frozen (a `ststui.io/frozen-partition` annotation holding a
/// number).
pub fn frozen(set: &StatefulSet) -> Option<Frozen> {
    let ann = set.metadata.annotations.as_ref()?;
    let partition = ann.get(FROZEN_PARTITION)?.trim().parse().ok()?;
    let get = |k: &str| ann.get(k).cloned().unwrap_or_else(|| "?".into());
    Some(Frozen { partition, by: get(FROZEN_BY), at: get(FROZEN_AT) })
}

pub(super) fn freeze(
    key: &ObjRef,
    set: &StatefulSet,
    inputs: Inputs<'_>,
) -> Result<Change, Refused> {
    if let Some(f) = frozen(set) {
        return Ok(Change::Unchanged(format!(
            "{key} is already frozen by {} since {}",
            f.by, f.at
        )));
    }
    let strategy = spec::strategy(set);
    if strategy.on_delete {
        return Err(Refused::invalid(format!(
            "{key} uses OnDelete: the controller replaces no pod by itself, so there is no \
             rollout to freeze"
        )));
    }
    let mut new = set.clone();
    let replicas = spec::replicas(set);
    let rolling = new
        .spec
        .update_strategy
        .get_or_insert_with(Default::default)
        .rolling_update
        .get_or_insert_with(Default::default);
    rolling.partition = Some(strategy.partition.max(replicas));
    let ann = new.metadata.annotations.get_or_insert_with(Default::default);
    ann.insert(FROZEN_PARTITION.into(), strategy.partition.to_string());
    ann.insert(FROZEN_BY.into(), inputs.identity.to_string());
    ann.insert(FROZEN_AT.into(), inputs.now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
    Ok(Change::Set(Box::new(new)))
}

pub(super) fn unfreeze(key: &ObjRef, set: &StatefulSet) -> Result<Change, Refused> {
    let Some(f) = frozen(set) else {
        return Ok(Change::Unchanged(format!("{key} is not frozen: nothing to resume")));
    };
    let mut new = set.clone();
    if let Some(ann) = new.metadata.annotations.as_mut() {
        for k in [FROZEN_PARTITION, FROZEN_BY, FROZEN_AT] {
            ann.remove(k);
        }
        if ann.is_empty() {
            new.metadata.annotations = None;
        }
    }
    let strategy = new.spec.update_strategy.get_or_insert_with(Default::default);
    if strategy.type_.as_deref() != Some("OnDelete") {
        strategy.rolling_update.get_or_insert_with(Default::default).partition = Some(f.partition);
    }
    Ok(Change::Set(Box::new(new)))
}
