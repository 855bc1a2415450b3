//! Events in words: the pod detail's newest Events (Warnings first, each with its count and
//! age, as `kubectl describe` lists them), and the set's Warning that blocks a rollout
//! (FailedCreate: a quota, an invalid name, a denied admission) for the controller pane.
//!
//! Owns: these words. Reads the mirror's Events only (`app::events`).

use k8s_openapi::api::core::v1::Event as KubeEvent;
use k8s_openapi::jiff::Timestamp;

use crate::app::events::{count, is_warning, last_seen};
use crate::app::state::AppState;
use crate::backend::ObjRef;

/// Events the detail lists at most (the rest are counted).
pub const SHOWN: usize = 4;

/// A set's Warning counts as news for this long after it last happened.
const RECENT_S: i64 = 600;

/// `12s`, `3m`, `2h`: how long ago `t` was, by the backend's clock.
fn age(now: Option<Timestamp>, t: Option<Timestamp>) -> Option<String> {
    let secs = now?.as_second().saturating_sub(t?.as_second()).max(0);
    Some(match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s => format!("{}h", s / 3600),
    })
}

/// One Event in a line: `BackOff ×5, 20s ago: Back-off restarting failed container …` (no
/// age without `now`).
pub fn words(e: &KubeEvent, now: Option<Timestamp>) -> String {
    let reason = e.reason.as_deref().unwrap_or("?");
    let n = count(e);
    let times = if n > 1 { format!(" ×{n}") } else { String::new() };
    let ago = now.and_then(|n| age(Some(n), last_seen(e)));
    let ago = ago.map(|a| format!(", {a} ago")).unwrap_or_default();
    let message = e.message.as_deref().unwrap_or("").split_whitespace().collect::<Vec<_>>();
    format!("{reason}{times}{ago}: {}", message.join(" "))
}

/// The detail's rows for the Events about `pod`: `warning`/`event` and their words, newest
/// Warnings first, at most [`SHOWN`], then how many more. Only the pod as it is now: a pod of
/// the same name before it (an ordinal is recreated under its name) had Events of its own,
/// told apart by the involved object's uid, as `kubectl describe` does.
pub fn pod_rows(state: &AppState, pod: &ObjRef) -> Vec<(&'static str, String)> {
    let uid = state.mirror.pod(pod).and_then(|p| p.metadata.uid.as_deref());
    let mut all = state.mirror.events().about("Pod", pod);
    if let Some(uid) = uid {
        all.retain(|e| e.involved_object.uid.as_deref().is_none_or(|u| u == uid));
    }
    let mut rows: Vec<(&'static str, String)> = all
        .iter()
        .take(SHOWN)
        .map(|e| (if is_warning(e) { "warning" } else { "event" }, words(e, state.now)))
        .collect();
    if all.len() > SHOWN {
        let more = all.len() - SHOWN;
        rows.push(("events", format!("{more} more (kubectl describe pod {})", pod.name)));
    }
    rows
}

/// The set's newest Warning of the last ten minutes that stops pods being made or removed
/// (`FailedCreate`, `FailedDelete`, `FailedUpdate`): what the controller pane adds to its
/// blocker, since the controller itself only retries. Not once the controller has succeeded
/// since (a `SuccessfulCreate`, `SuccessfulDelete` or `SuccessfulUpdate` of the set seen in the
/// same second or later): a write whose reply was lost, a conflict, a passing outage are over
/// when the next one passes, and a failure that lasts is recorded again on each retry (its
/// Event seen later than any success).
pub fn set_blocker(state: &AppState, set: &ObjRef) -> Option<String> {
    let now = state.now;
    let recent = |e: &&KubeEvent| match (now, last_seen(e)) {
        (Some(n), Some(t)) => n.as_second() - t.as_second() <= RECENT_S,
        _ => true,
    };
    let events = state.mirror.events().about("StatefulSet", set);
    let failed = events.iter().copied().filter(|e| is_warning(e)).filter(recent).find(|e| {
        // UnknownStrategy: a 1.37 kube-controller-manager without StatefulSetRecreateStrategy
        // refusing a Recreate set the API server stored (the advisor assumes the gate on).
        matches!(
            e.reason.as_deref(),
            Some("FailedCreate" | "FailedDelete" | "FailedUpdate" | "UnknownStrategy")
        )
    })?;
    let succeeded_since = events.iter().any(|e| {
        matches!(
            e.reason.as_deref(),
            Some("SuccessfulCreate" | "SuccessfulDelete" | "SuccessfulUpdate")
        ) && last_seen(e) >= last_seen(failed)
    });
    // No age: the pane is derived when something changes, not every second.
    (!succeeded_since).then(|| format!("the controller retries: {}", words(failed, None)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    #[test]
    fn an_event_reads_reason_count_age_and_message_on_one_line() {
        let at = Timestamp::from_second(1_000).unwrap();
        let e = KubeEvent {
            reason: Some("Unhealthy".into()),
            message: Some("Readiness probe failed:\n HTTP 503".into()),
            count: Some(12),
            last_timestamp: Some(Time(at)),
            ..Default::default()
        };
        let now = Some(Timestamp::from_second(1_180).unwrap());
        assert_eq!(words(&e, now), "Unhealthy ×12, 3m ago: Readiness probe failed: HTTP 503");
        let once = KubeEvent { count: None, ..e };
        assert_eq!(words(&once, None), "Unhealthy: Readiness probe failed: HTTP 503");
    }
}
