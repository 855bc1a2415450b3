//! The set's `Progressing` condition as the Recreate strategy writes it (upstream v1.37
//! `setProgressingCondition`, `setStatefulSetCondition`, the `Recreate*Reason` constants).
//!
//! Owns: the condition's words and its transition-time rule. Must not touch: when it is set
//! (`recreate`, `update`, `status`).

use k8s_openapi::api::apps::v1::{StatefulSetCondition, StatefulSetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::types::Now;

/// The condition type the Recreate strategy sets.
pub const PROGRESSING: &str = "Progressing";
/// Its reason while old pods are deleted, terminate, or new ones are created.
pub const IN_PROGRESS: &str = "RecreateInProgress";
/// Its reason once every replica is on the update revision and Ready.
pub const COMPLETED: &str = "RecreateCompleted";
/// The message while old-revision pods exist.
pub const DELETING: &str = "Deleting old revision pods";
/// The message once they are gone and the new revision's pods are being created.
pub const CREATING: &str = "Waiting for new-revision pods to be created";
/// The message at completion.
pub const DONE: &str = "All pods recreated successfully";

/// The set's `Progressing` condition in `status`, if it has one.
pub fn progressing(status: &StatefulSetStatus) -> Option<&StatefulSetCondition> {
    status.conditions.as_deref()?.iter().find(|c| c.type_.as_deref() == Some(PROGRESSING))
}

/// Upstream `setProgressingCondition` (through `setStatefulSetCondition`): added when absent;
/// left alone when status, reason and message are the same; otherwise rewritten, its
/// transition time kept when the status is unchanged and `now` (whole seconds, as stored)
/// when it changes.
#[doc(alias = "setProgressingCondition")]
#[doc(alias = "setStatefulSetCondition")]
pub fn set_progressing(
    status: &mut StatefulSetStatus,
    on: bool,
    reason: &str,
    message: &str,
    now: Now,
) {
    let value = if on { "True" } else { "False" };
    let at = Time(Now::from_second(now.as_second()).unwrap_or(now));
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    let Some(c) = conditions.iter_mut().find(|c| c.type_.as_deref() == Some(PROGRESSING)) else {
        conditions.push(StatefulSetCondition {
            type_: Some(PROGRESSING.into()),
            status: Some(value.into()),
            reason: Some(reason.into()),
            message: Some(message.into()),
            last_transition_time: Some(at),
        });
        return;
    };
    let same_status = c.status.as_deref() == Some(value);
    if same_status && c.reason.as_deref() == Some(reason) && c.message.as_deref() == Some(message) {
        return;
    }
    if !same_status {
        c.last_transition_time = Some(at);
    }
    c.status = Some(value.into());
    c.reason = Some(reason.into());
    c.message = Some(message.into());
}
