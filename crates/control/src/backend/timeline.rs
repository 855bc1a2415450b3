//! The timeline vocabulary: one [`Event`] per thing that happened, at backend time. Its serde
//! form is the public JSONL line of `spec/scenario.md` (`{"t":1.5,"type":"controller",...}`):
//! fields are added compatibly, never renamed.

use serde::Serialize;

/// One timeline entry: `t` (virtual milliseconds since start) and what happened. Serializes to
/// the JSONL line of `spec/scenario.md`: `{"t":1.5,"type":"controller",...}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    #[serde(rename = "t", serialize_with = "millis_as_seconds")]
    pub t_ms: u64,
    #[serde(flatten)]
    pub kind: EventKind,
}

fn millis_as_seconds<S: serde::Serializer>(ms: &u64, s: S) -> Result<S::Ok, S::Error> {
    if ms.is_multiple_of(1000) {
        s.serialize_u64(ms / 1000)
    } else {
        s.serialize_f64(*ms as f64 / 1000.0)
    }
}

/// The timeline event types of `spec/scenario.md`. Optional fields are omitted when absent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum EventKind {
    Command {
        line: usize,
        text: String,
    },
    /// ststui's own word in a console's timeline: the connection, the server's version, a plan
    /// it runs (never a script line; the simulator's timeline has none).
    Notice {
        text: String,
    },
    Controller {
        set: String,
        action: crate::core::ControllerAction,
        #[serde(skip_serializing_if = "Option::is_none")]
        pod: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pvc: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        revision: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<crate::core::DeleteReason>,
    },
    Kubelet {
        pod: String,
        event: String,
    },
    Gc {
        #[serde(skip_serializing_if = "Option::is_none")]
        pod: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pvc: Option<String>,
    },
    Blocked {
        set: String,
        reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        pod: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Status {
        set: String,
        replicas: i32,
        ready_replicas: i32,
        available_replicas: i32,
        current_replicas: i32,
        updated_replicas: i32,
        current_revision: String,
        update_revision: String,
        observed_generation: i64,
    },
    Expect {
        line: usize,
        ok: bool,
        detail: String,
    },
    Error {
        #[serde(skip_serializing_if = "Option::is_none")]
        line: Option<usize>,
        message: String,
    },
    /// A core/v1 Event worth a line on a cluster (a Warning such as `FailedCreate`): the object
    /// it is about (`pod/web-3`), its reason and message.
    Event {
        object: String,
        reason: String,
        message: String,
        warning: bool,
    },
    /// A rollout plan moved (ststui extension): the set, the step it is at (from 1) of how
    /// many, its phase as the record names it (`waiting`, `baking`, `gate`, `approved`,
    /// `halted`, `done`), the partition it holds, and what happened in words.
    Plan {
        set: String,
        step: usize,
        of: usize,
        phase: String,
        partition: i32,
        text: String,
    },
    /// A rollout group moved (ststui extension): the group, the set the line is about, and
    /// what happened in words (`ingester-zone-b waits: ingester-zone-a-3 is not Ready`).
    Group {
        group: String,
        set: String,
        text: String,
    },
    /// The advisor and the cluster's controller disagreed: what the advisor expected the next
    /// sync to do, and what the cluster did (field evidence of where the port differs).
    Differs {
        set: String,
        expected: String,
        observed: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeline_event_serializes_to_the_spec_jsonl_shape() {
        let ev = Event {
            t_ms: 1500,
            kind: EventKind::Controller {
                set: "web".into(),
                action: crate::core::ControllerAction::DeletePod,
                pod: Some("web-2".into()),
                pvc: None,
                revision: None,
                reason: Some(crate::core::DeleteReason::Update),
            },
        };
        let json = serde_json::to_string(&ev).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"t":1.5,"type":"controller","set":"web","action":"delete-pod","pod":"web-2","reason":"update"}"#
        );
        let st = Event {
            t_ms: 3000,
            kind: EventKind::Status {
                set: "web".into(),
                replicas: 3,
                ready_replicas: 2,
                available_replicas: 2,
                current_replicas: 1,
                updated_replicas: 2,
                current_revision: "web-a".into(),
                update_revision: "web-b".into(),
                observed_generation: 2,
            },
        };
        let json = serde_json::to_string(&st).unwrap_or_default();
        assert!(
            json.starts_with(
                r#"{"t":3,"type":"status","set":"web","replicas":3,"readyReplicas":2,"#
            ),
            "{json}"
        );
    }
}
