//! The event recorder: core/v1 Events for what the controller and the kubelet did, as
//! upstream's `record.EventRecorder` writes them (`SuccessfulCreate` "create Pod web-0 in
//! StatefulSet web successful", `RecreatingFailedPod`, the kubelet's `Started`, `Unhealthy`), so
//! `kubectl get events` and `kubectl describe` show them on a served simulator.
//!
//! A repeat of an event (same object, reason and message) counts on the first one, as
//! upstream's correlator aggregates them: `count` grows and `lastTimestamp` moves.
//!
//! Off by default (a headless run or a soak has no use for them); bounded when on: at most
//! [`MAX_EVENTS`], and none older than [`EVENT_TTL_MS`] (the API server's default TTL), the
//! oldest deleted first. Owns: the words and the bound. Must not: change anything but Events.

use std::collections::{BTreeMap, VecDeque};

use k8s_openapi::api::core::v1::{Event as KubeEvent, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::store::Store;
use crate::backend::{Event, EventKind, ObjRef};
use crate::core::{ControllerAction, DeleteReason, UNKNOWN_STRATEGY};
use crate::kubelet::event::event_object;
use crate::kubelet::failure::{self, Said};

/// Events kept at most.
pub const MAX_EVENTS: usize = 1_000;
/// Events older than this (virtual ms) are deleted: the API server's `--event-ttl` default.
pub const EVENT_TTL_MS: u64 = 3_600_000;

/// The recorder's switch and its record of what it wrote (oldest first).
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    pub enabled: bool,
    seq: u64,
    written: VecDeque<(u64, ObjRef)>,
    /// (namespace, object, reason, message) → the Event that counts its repeats.
    repeats: BTreeMap<(String, String, &'static str, String), ObjRef>,
}

/// One event to write: about what, why, and in which words.
struct Note<'a> {
    kind: &'static str,
    api_version: &'static str,
    name: &'a str,
    reason: &'static str,
    message: String,
    warning: bool,
    component: &'static str,
}

impl Recorder {
    /// Records the Events a timeline entry about namespace `ns` stands for.
    pub fn record(&mut self, store: &mut Store, ns: &str, ev: &Event) {
        if !self.enabled {
            return;
        }
        for note in notes(store, ns, &ev.kind) {
            self.write(store, ns, &note);
        }
        self.expire(store);
    }

    fn write(&mut self, store: &mut Store, ns: &str, note: &Note<'_>) {
        let same = (ns.to_string(), note.name.to_string(), note.reason, note.message.clone());
        if let Some(key) = self.repeats.get(&same) {
            let now = store.clock().time();
            let counted = store.modify::<KubeEvent>(key, |e| {
                e.count = Some(e.count.unwrap_or(1) + 1);
                e.last_timestamp = Some(now);
            });
            if counted.is_ok() {
                return;
            }
        }
        self.seq += 1;
        let key = ObjRef::new(ns, format!("{}.{:016x}", note.name, self.seq));
        let uid = match note.kind {
            "StatefulSet" => {
                store.sets().get(&ObjRef::new(ns, note.name)).and_then(|o| o.metadata.uid.clone())
            }
            _ => store.pods().get(&ObjRef::new(ns, note.name)).and_then(|o| o.metadata.uid.clone()),
        };
        let meta = ObjectMeta {
            name: Some(key.name.clone()),
            namespace: Some(ns.to_string()),
            ..Default::default()
        };
        let about = ObjectReference {
            api_version: Some(note.api_version.into()),
            kind: Some(note.kind.into()),
            name: Some(note.name.into()),
            namespace: Some(ns.into()),
            uid,
            ..Default::default()
        };
        let said =
            Said { reason: note.reason, message: note.message.clone(), warning: note.warning };
        let host = (note.component == "kubelet").then_some(super::api::NODE_NAME);
        let event = event_object(meta, about, &said, note.component, host, store.clock().time());
        if store.create(event).is_ok() {
            self.repeats.insert(same, key.clone());
            self.written.push_back((store.clock().now_ms(), key));
        }
    }

    /// Deletes the oldest events beyond the bound or the TTL.
    fn expire(&mut self, store: &mut Store) {
        let now = store.clock().now_ms();
        while let Some((at, key)) = self.written.front() {
            let old = now.saturating_sub(*at) > EVENT_TTL_MS;
            if !old && self.written.len() <= MAX_EVENTS {
                break;
            }
            let _ = store.remove::<KubeEvent>(key);
            let gone = key.clone();
            self.repeats.retain(|_, k| *k != gone);
            self.written.pop_front();
        }
    }
}

/// The Events one timeline entry stands for, in upstream's words.
fn notes<'a>(store: &Store, ns: &str, kind: &'a EventKind) -> Vec<Note<'a>> {
    let set = |name: &'a str, reason, message, warning| Note {
        kind: "StatefulSet",
        api_version: "apps/v1",
        name,
        reason,
        message,
        warning,
        component: "statefulset-controller",
    };
    let pod = |name: &'a str, reason, message, warning| Note {
        kind: "Pod",
        api_version: "v1",
        name,
        reason,
        message,
        warning,
        component: "kubelet",
    };
    match kind {
        EventKind::Controller { set: s, action, pod: Some(p), reason, .. } => {
            let verb = match action {
                ControllerAction::CreatePod => ("SuccessfulCreate", "create"),
                ControllerAction::DeletePod => ("SuccessfulDelete", "delete"),
                ControllerAction::UpdatePod => ("SuccessfulUpdate", "update"),
                _ => return Vec::new(),
            };
            let mut out = Vec::new();
            if *reason == Some(DeleteReason::Failed) {
                let message = format!("StatefulSet {ns}/{s} is recreating failed Pod {p}");
                out.push(set(s, "RecreatingFailedPod", message, true));
            }
            let message = format!("{} Pod {p} in StatefulSet {s} successful", verb.1);
            out.push(set(s, verb.0, message, false));
            out
        }
        EventKind::Controller {
            set: s, action: ControllerAction::CreatePvc, pvc: Some(c), ..
        } => {
            let owner = c.rsplit_once(&format!("-{s}-")).map(|(_, o)| format!("{s}-{o}"));
            let message = format!(
                "create Claim {c} Pod {} in StatefulSet {s} success",
                owner.as_deref().unwrap_or("?")
            );
            vec![set(s, "SuccessfulCreate", message, false)]
        }
        EventKind::Event { object, reason, message, warning } if reason == UNKNOWN_STRATEGY => {
            match object.strip_prefix("statefulset/") {
                Some(s) => vec![set(s, UNKNOWN_STRATEGY, message.clone(), *warning)],
                None => Vec::new(),
            }
        }
        EventKind::Kubelet { pod: p, event } => {
            let object = store.pods().get(&ObjRef::new(ns, p.as_str()));
            let first = object.and_then(|o| o.spec.as_ref()?.containers.first());
            let container = first.map_or_else(|| "app".into(), |c| c.name.clone());
            let image = first.and_then(|c| c.image.clone()).unwrap_or_default();
            let uid = object.and_then(|o| o.metadata.uid.clone()).unwrap_or_default();
            let who = failure::Container { pod: p, ns, name: &container, image: &image, uid: &uid };
            failure::kubelet_events(event, &who)
                .into_iter()
                .map(|s| pod(p, s.reason, s.message, s.warning))
                .collect()
        }
        _ => Vec::new(),
    }
}
