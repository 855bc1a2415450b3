//! Test fixtures shared by the plan's unit tests: the clock and a running pod.

use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// `secs` after the tests' epoch.
pub fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap_or(Timestamp::UNIX_EPOCH)
}

/// A Running pod `name` at revision `rev`, Ready since `ready_since` (`None`: not Ready).
pub fn running(name: String, rev: &str, ready_since: Option<i64>) -> Pod {
    let mut p = Pod::default();
    p.metadata.name = Some(name);
    p.metadata.labels =
        Some([(crate::core::labels::REVISION_LABEL.to_string(), rev.to_string())].into());
    let ready = PodCondition {
        type_: "Ready".into(),
        status: if ready_since.is_some() { "True" } else { "False" }.into(),
        last_transition_time: Some(Time(at(ready_since.unwrap_or(0)))),
        ..Default::default()
    };
    p.status = Some(PodStatus {
        phase: Some("Running".into()),
        conditions: Some(vec![ready]),
        ..Default::default()
    });
    p
}
