//! The contract between a backend (the embedded simulator, or a real cluster through kube-rs)
//! and the console: what a backend reports ([`BackendEvent`]), what the console asks of it
//! ([`Op`]), and what it can do ([`Capabilities`]).
//!
//! Plain data plus one small trait. This module owns no behaviour: the simulator implements
//! [`Backend`] in `sim`, the real-cluster adapter in `cluster`; `app` only sees these types.
//! The timeline [`Event`] is also the simulator's public JSONL format (`spec/scenario.md`), so
//! its serialization is part of the public interface.

use k8s_openapi::api::apps::v1::{
    ControllerRevision, RollingUpdateStatefulSetStrategy, StatefulSet,
};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::Serialize;

/// A namespaced object name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ObjRef {
    pub namespace: String,
    pub name: String,
}

impl ObjRef {
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        ObjRef { namespace: namespace.into(), name: name.into() }
    }
}

impl std::fmt::Display for ObjRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// Any object a backend watches.
#[derive(Debug, Clone, PartialEq)]
pub enum Object {
    Set(Box<StatefulSet>),
    Pod(Box<Pod>),
    Claim(Box<PersistentVolumeClaim>),
    Revision(Box<ControllerRevision>),
}

/// Whether the controller is reconciling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The controller reconciles as events arrive.
    Live,
    /// Simulator only: reconciliation stopped; `Op::Step` runs single syncs.
    Paused,
    /// Real cluster: the rollout is frozen by raising the partition to `replicas`
    /// (kube-controller-manager keeps running; only updates stop).
    Frozen,
}

/// What a backend can do; the console greys out what is not offered and says why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// Reconciliation itself can be paused and single-stepped (simulator only).
    pub pause_reconcile: bool,
    /// Faults can be injected into pods (fail, unready, broken).
    pub inject_faults: bool,
    /// Virtual time whose speed can be changed.
    pub speed: bool,
}

/// Everything a backend reports, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum BackendEvent {
    /// An object was added or modified (watch ADDED / MODIFIED).
    Applied(Object),
    /// An object was deleted (watch DELETED); carries its last state.
    Deleted(Object),
    /// The initial listing is complete: the mirror may now be trusted (watcher InitDone).
    Synced,
    /// Something happened worth a timeline line.
    Timeline(Event),
    /// The backend's clock: virtual time in the simulator, wall time on a real cluster.
    Clock { now: k8s_openapi::jiff::Timestamp, speed: f64 },
    /// Reconciliation mode changed.
    Mode(Mode),
    /// An [`Op`] failed; `message` says what was wrong and what is expected.
    OpFailed { op: String, message: String },
    /// A backend-level problem (watch error, lost connection) the user should see.
    Error(String),
    /// Something the user should know that is not a problem (a script played to its end).
    Notice(String),
}

/// Slowest and fastest simulator speed (virtual seconds per wall second), everywhere a speed
/// is accepted: `--speed`, the console's `<` / `>`, and the driver.
pub const SPEED_RANGE: (f64, f64) = (0.01, 1000.0);

/// What the console asks a backend to do. Set operations are patches of the StatefulSet spec,
/// in both backends.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    SetPartition {
        set: ObjRef,
        partition: i32,
    },
    /// `true` for OnDelete (which clears `rollingUpdate`, as validation requires), `false` for
    /// RollingUpdate. With `rolling`, the switch to RollingUpdate also sets
    /// `spec.updateStrategy.rollingUpdate` (the console always sends one: a type-only switch
    /// leaves it nil, and the controller then creates missing pods at the current revision).
    SetOnDelete {
        set: ObjRef,
        on_delete: bool,
        rolling: Option<RollingUpdateStatefulSetStrategy>,
    },
    SetMaxUnavailable {
        set: ObjRef,
        value: IntOrString,
    },
    Scale {
        set: ObjRef,
        replicas: i32,
    },
    /// Set the first container's image (a new template, so a new revision).
    SetImage {
        set: ObjRef,
        image: String,
    },
    /// `kubectl rollout restart`: set the `kubectl.kubernetes.io/restartedAt` annotation.
    Restart {
        set: ObjRef,
    },
    /// `kubectl rollout undo`: roll the template back to revision number `revision`, or to the
    /// previous one when `None`.
    Undo {
        set: ObjRef,
        revision: Option<i64>,
    },
    DeletePod {
        pod: ObjRef,
        force: bool,
    },
    /// Simulator faults.
    FailPod {
        pod: ObjRef,
    },
    SetPodReady {
        pod: ObjRef,
        ready: bool,
    },
    /// The pod's containers run but never become Ready again (a crash-looping image).
    BreakPod {
        pod: ObjRef,
    },
    /// Simulator: stop / restart reconciliation; run `n` syncs while paused.
    Pause,
    Resume,
    Step {
        n: u32,
    },
    /// Simulator: virtual seconds per wall second.
    SetSpeed {
        speed: f64,
    },
}

/// A backend: it executes [`Op`]s and reports [`BackendEvent`]s through the sink it was built
/// with. `execute` never blocks on IO; failures arrive as [`BackendEvent::OpFailed`].
pub trait Backend: Send {
    fn capabilities(&self) -> Capabilities;
    fn execute(&mut self, op: Op);
}

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
    Controller {
        set: String,
        action: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        pod: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pvc: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        revision: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
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
                action: "delete-pod".into(),
                pod: Some("web-2".into()),
                pvc: None,
                revision: None,
                reason: Some("update".into()),
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
