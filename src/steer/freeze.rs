//! Freeze and resume: the console's way to hold a rollout on a real cluster, where the
//! controller cannot be paused. Freezing raises the partition to `replicas` (no ordinal moves
//! to the update revision any more) and records, in annotations on the set, the partition it
//! replaced, who froze it and when; so a freeze survives restarts of ststui and other operators
//! see "frozen by … since …". Resuming restores the recorded partition and removes the
//! annotations. Both are idempotent.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::{Change, Inputs, Refused};
use crate::backend::FailureKind;
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
    /// The partition resume restores; `Err(text)` when the annotation does not hold one (a
    /// number from 0 up), with what it holds.
    pub partition: Result<i32, String>,
    pub by: String,
    pub at: String,
    /// The freeze no longer holds: another writer moved the partition below the replicas (or
    /// switched to OnDelete), so ordinals roll again. The partition now (0 for OnDelete).
    pub broken: Option<i32>,
    /// Who last set the partition, when the set's managed fields say and it was not ststui.
    pub moved_by: Option<String>,
}

impl Frozen {
    /// The recorded partition, or the words for an invalid one.
    pub fn recorded(&self) -> String {
        match &self.partition {
            Ok(p) => p.to_string(),
            Err(raw) => format!("{raw:?} (not a partition)"),
        }
    }

    /// A sentence about set `name`: "web is frozen by ana since …", or "web's freeze is broken:
    /// partition moved to 0 by kubectl-patch …".
    pub fn of_set(&self, name: &str) -> String {
        match self.broken {
            None => format!("{name} is {}", self.words()),
            Some(_) => format!(
                "{name}'s {}",
                self.words().replacen("freeze broken", "freeze is broken", 1)
            ),
        }
    }

    /// "frozen by ana since …", or "freeze broken: partition moved to 0 (by kubectl-patch)".
    pub fn words(&self) -> String {
        match self.broken {
            None => format!("frozen by {} since {}", self.by, self.at),
            Some(p) => {
                let who = self.moved_by.as_ref().map(|w| format!(" by {w}")).unwrap_or_default();
                format!(
                    "freeze broken: partition moved to {p}{who} (frozen by {} since {})",
                    self.by, self.at
                )
            }
        }
    }
}

/// The field manager ststui writes as.
pub const FIELD_MANAGER: &str = "ststui";

/// The set's freeze while it holds the rollout (a freeze whose partition another writer moved
/// does not): what halts a plan and is never undone.
pub fn holding(set: &StatefulSet) -> Option<Frozen> {
    frozen(set).filter(|f| f.broken.is_none())
}

/// The set's freeze, if it has one (a `ststui.io/frozen-partition` annotation): whether it
/// still holds (the partition at or above the replicas, RollingUpdate) and whether the
/// recorded partition is valid.
pub fn frozen(set: &StatefulSet) -> Option<Frozen> {
    let ann = set.metadata.annotations.as_ref()?;
    let raw = ann.get(FROZEN_PARTITION)?;
    let partition = match raw.trim().parse::<i32>() {
        Ok(p) if p >= 0 => Ok(p),
        _ => Err(raw.clone()),
    };
    let get = |k: &str| ann.get(k).cloned().unwrap_or_else(|| "?".into());
    let strategy = spec::strategy(set);
    let broken = if strategy.on_delete {
        Some(0)
    } else {
        (strategy.partition < spec::replicas(set)).then_some(strategy.partition)
    };
    let moved_by = broken.and_then(|_| partition_writer(set));
    Some(Frozen { partition, by: get(FROZEN_BY), at: get(FROZEN_AT), broken, moved_by })
}

/// Who last wrote the partition, from the managed fields (not ststui itself).
fn partition_writer(set: &StatefulSet) -> Option<String> {
    let fields = set.metadata.managed_fields.as_ref()?;
    fields
        .iter()
        .filter(|m| m.manager.as_deref() != Some(FIELD_MANAGER))
        .filter(|m| {
            m.fields_v1.as_ref().is_some_and(|f| {
                f.0.pointer("/f:spec/f:updateStrategy/f:rollingUpdate/f:partition").is_some()
            })
        })
        .max_by_key(|m| m.time.as_ref().map(|t| t.0))
        .map(|m| {
            let who = m.manager.clone().unwrap_or_else(|| "another writer".into());
            match &m.time {
                Some(t) => format!("{who} at {}", t.0.strftime("%H:%M:%S")),
                None => who,
            }
        })
}

pub(super) fn freeze(
    key: &ObjRef,
    set: &StatefulSet,
    inputs: Inputs<'_>,
) -> Result<Change, Refused> {
    let strategy = spec::strategy(set);
    let existing = frozen(set);
    if let Some(f) = &existing
        && f.broken.is_none()
    {
        return Ok(Change::Unchanged(format!("{key} is already {}", f.words())));
    }
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
    // Freezing a broken freeze again keeps the partition recorded first.
    let recorded = match existing.map(|f| f.partition) {
        Some(Ok(p)) => p,
        _ => strategy.partition,
    };
    ann.insert(FROZEN_PARTITION.into(), recorded.to_string());
    ann.insert(FROZEN_BY.into(), inputs.identity.to_string());
    ann.insert(FROZEN_AT.into(), inputs.now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string());
    Ok(Change::Set(Box::new(new)))
}

/// Resume: the recorded partition comes back and the annotations go. Refused when the freeze
/// is broken (another writer moved the partition: resuming would write over theirs) or the
/// recorded partition is not one, unless `force` (then a broken freeze restores the recorded
/// partition, and an invalid record is dropped, leaving the partition as it is).
pub(super) fn unfreeze(key: &ObjRef, set: &StatefulSet, force: bool) -> Result<Change, Refused> {
    let Some(f) = frozen(set) else {
        return Ok(Change::Unchanged(format!("{key} is not frozen: nothing to resume")));
    };
    if let (Some(_), false) = (f.broken, force) {
        return Err(Refused {
            kind: FailureKind::Conflict,
            message: format!(
                "{key}: {}; resuming would set partition {} over it: pass --force to restore \
                 it anyway, or freeze again",
                f.words(),
                f.recorded()
            ),
        });
    }
    if let (Err(raw), false) = (&f.partition, force) {
        return Err(Refused::invalid(format!(
            "{key}: {FROZEN_PARTITION} holds {raw:?}, not a partition (a number from 0 up): \
             pass --force to drop the freeze and keep the partition as it is ({})",
            spec::strategy(set).partition
        )));
    }
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
    if let (Ok(p), false) = (f.partition, strategy.type_.as_deref() == Some("OnDelete")) {
        strategy.rolling_update.get_or_insert_with(Default::default).partition = Some(p);
    }
    Ok(Change::Set(Box::new(new)))
}
