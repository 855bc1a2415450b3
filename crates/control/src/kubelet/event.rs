//! The core/v1 Event object as a recorder writes it: the simulator's recorder, the fake kubelet
//! and drive mode's controller write their Events with it.

use k8s_openapi::api::core::v1::{Event as KubeEvent, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::failure::Said;

/// A core/v1 Event about `about` as a recorder writes it: first and last seen `now`, counted
/// once, reported by `component` (on node `host`, for a kubelet). The fake kubelet writes its
/// Events with it too.
pub fn event_object(
    meta: ObjectMeta,
    about: ObjectReference,
    said: &Said,
    component: &str,
    host: Option<&str>,
    now: Time,
) -> KubeEvent {
    KubeEvent {
        metadata: meta,
        involved_object: about,
        reason: Some(said.reason.into()),
        message: Some(said.message.clone()),
        type_: Some(if said.warning { "Warning" } else { "Normal" }.into()),
        source: Some(EventSource { component: Some(component.into()), host: host.map(Into::into) }),
        first_timestamp: Some(now.clone()),
        last_timestamp: Some(now),
        count: Some(1),
        reporting_component: Some(component.into()),
        reporting_instance: Some(String::new()),
        ..Default::default()
    }
}
