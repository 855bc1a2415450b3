//! Freeze and resume: the console's way to hold a rollout on a real cluster, where the
//! controller cannot be paused. Freezing raises the partition to `replicas` (no ordinal moves
//! to the update revision any more) and records, in annotations on the set, the partition it
//! replaced, who froze it and when; so a freeze survives restarts of ststui and other operators
//! see "frozen by … since …". Resuming restores the recorded partition and removes the
//! annotations. Both are idempotent. The record's reader is `plan::freeze`.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::{Change, Inputs, Refused};
use crate::backend::FailureKind;
use crate::backend::ObjRef;
use crate::core::spec;
pub use crate::plan::freeze::{
    FIELD_MANAGER, FROZEN_AT, FROZEN_BY, FROZEN_PARTITION, Frozen, frozen, holding,
};

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
    // A plan under way holds the set: its freeze is the plan's, and a resume would move the
    // partition under it (the plan halts on that).
    if let (Some(r), false) =
        (crate::plan::verdict::current_plan(set).filter(|r| !r.phase.over()), force)
    {
        return Err(Refused {
            kind: FailureKind::Conflict,
            message: format!(
                "{key} is held by its rollout plan ({}): the plan opens it step by step; \
                 resuming would move the partition under it and halt it (`ststui abort {}` \
                 rolls back; --force resumes anyway)",
                r.phase_words(),
                key.name
            ),
        });
    }
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
