//! `ststui step`'s write, safe to retry. The partition moves from `from` to `to` (refused when it
//! no longer reads `from`: someone moved it since the decision) together with a record of the
//! step in an annotation on the set, in the same write. Once the verb knows the outcome (the
//! reply came, or it read the set back) it removes the record. A record left behind means a run
//! never learnt whether its step was written: the next `step` finds it, and when the partition
//! reads the record's `to`, that step did land, so it is not made a second time.

use k8s_openapi::api::apps::v1::StatefulSet;
use serde::{Deserialize, Serialize};

use super::{Change, Inputs, Refused};
use crate::backend::{FailureKind, ObjRef};
use crate::core::spec;

/// The record of a step whose outcome its run has not yet learnt (JSON).
pub const STEP_PENDING: &str = "ststui.io/step-pending";

/// A step recorded on the set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    pub from: i32,
    pub to: i32,
    pub by: String,
    pub at: String,
}

/// The set's pending step record, if it holds a readable one.
pub fn pending(set: &StatefulSet) -> Option<Pending> {
    let raw = set.metadata.annotations.as_ref()?.get(STEP_PENDING)?;
    serde_json::from_str(raw).ok()
}

pub(super) fn step(
    key: &ObjRef,
    set: &StatefulSet,
    (from, to): (i32, i32),
    inputs: Inputs<'_>,
) -> Result<Change, Refused> {
    let now = spec::strategy(set).partition;
    if now != from {
        return Err(Refused {
            kind: FailureKind::Conflict,
            message: format!(
                "{key}: the partition reads {now}, not {from}, since the step was decided: \
                 someone moved it; nothing written"
            ),
        });
    }
    let mut new = set.clone();
    let strategy = new.spec.update_strategy.get_or_insert_with(Default::default);
    if strategy.type_.as_deref() == Some("OnDelete") {
        return Err(Refused {
            kind: FailureKind::Invalid,
            message: format!("{key} uses OnDelete: the partition applies to RollingUpdate only"),
        });
    }
    strategy.rolling_update.get_or_insert_with(Default::default).partition = Some(to);
    let record = Pending {
        from,
        to,
        by: inputs.identity.to_string(),
        at: inputs.now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    };
    let text = serde_json::to_string(&record).unwrap_or_default();
    new.metadata.annotations.get_or_insert_with(Default::default).insert(STEP_PENDING.into(), text);
    Ok(Change::Set(Box::new(new)))
}

pub(super) fn settled(key: &ObjRef, set: &StatefulSet) -> Change {
    let mut new = set.clone();
    let Some(ann) = new.metadata.annotations.as_mut().filter(|a| a.contains_key(STEP_PENDING))
    else {
        return Change::Unchanged(format!("{key}: no step record to remove"));
    };
    ann.remove(STEP_PENDING);
    if ann.is_empty() {
        new.metadata.annotations = None;
    }
    Change::Set(Box::new(new))
}
