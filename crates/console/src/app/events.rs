//! [`EventLog`]: the core/v1 Events the console holds — those about the open set and about the
//! selected pod, the only ones a backend is asked to send (`ViewOp::PodEvents`) — and their
//! order for reading: Warnings first, then the newest.
//!
//! Bounded: at most [`MAX_HELD`] Events (the oldest dropped first), and the selected pod's
//! Events are forgotten when another pod is selected, so memory does not grow with the set.
//! Owns the Event map. Written only by the reducer, through the mirror.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Event as KubeEvent;
use k8s_openapi::jiff::Timestamp;

use crate::backend::ObjRef;

/// Events held at most.
pub const MAX_HELD: usize = 256;

/// The Events about the open set and the selected pod.
#[derive(Debug, Clone, Default)]
pub struct EventLog {
    events: BTreeMap<ObjRef, Arc<KubeEvent>>,
    /// Bumped on every change (the controller pane is derived again when it moves).
    generation: u64,
}

/// What an Event is about: `(kind, namespace, name)` of its involved object.
fn about(e: &KubeEvent) -> (&str, &str, &str) {
    let io = &e.involved_object;
    let ns = io.namespace.as_deref().or(e.metadata.namespace.as_deref()).unwrap_or("default");
    (io.kind.as_deref().unwrap_or(""), ns, io.name.as_deref().unwrap_or(""))
}

/// When an Event last happened: its last timestamp, its series, or its event time.
pub fn last_seen(e: &KubeEvent) -> Option<Timestamp> {
    e.last_timestamp
        .as_ref()
        .map(|t| t.0)
        .or_else(|| e.series.as_ref()?.last_observed_time.as_ref().map(|t| t.0))
        .or_else(|| e.event_time.as_ref().map(|t| t.0))
        .or_else(|| e.first_timestamp.as_ref().map(|t| t.0))
        .or_else(|| e.metadata.creation_timestamp.as_ref().map(|t| t.0))
}

/// How many times it happened (`count`, or the series' count).
pub fn count(e: &KubeEvent) -> i32 {
    e.count.or_else(|| e.series.as_ref().and_then(|s| s.count)).unwrap_or(1).max(1)
}

pub fn is_warning(e: &KubeEvent) -> bool {
    e.type_.as_deref() == Some("Warning")
}

impl EventLog {
    /// Adds or replaces an Event. Returns whether anything changed.
    pub fn apply(&mut self, e: Arc<KubeEvent>) -> bool {
        let key = ObjRef::of(&e.metadata);
        if self.events.get(&key).is_some_and(|old| Arc::ptr_eq(old, &e) || **old == *e) {
            return false;
        }
        self.events.insert(key, e);
        self.generation += 1;
        while self.events.len() > MAX_HELD {
            let oldest =
                self.events.iter().min_by_key(|(_, e)| last_seen(e)).map(|(k, _)| k.clone());
            match oldest {
                Some(k) => self.events.remove(&k),
                None => break,
            };
        }
        true
    }

    /// Removes an Event. Returns whether it was held.
    pub fn delete(&mut self, e: &KubeEvent) -> bool {
        let gone = self.events.remove(&ObjRef::of(&e.metadata)).is_some();
        self.generation += u64::from(gone);
        gone
    }

    /// Changes so far.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// A complete listing of the Events about `(kind, namespace, name)`: what it lacks is gone.
    pub fn replace(
        &mut self,
        kind: &str,
        ns: &str,
        name: &str,
        listed: Vec<Arc<KubeEvent>>,
    ) -> bool {
        let before = self.events.len();
        self.events.retain(|_, e| about(e) != (kind, ns, name));
        let mut changed = self.events.len() != before;
        self.generation += u64::from(changed);
        for e in listed {
            changed |= self.apply(e);
        }
        changed
    }

    /// Forgets the Events about pods other than `keep` (the newly selected pod).
    pub fn keep_pod(&mut self, keep: Option<&ObjRef>) -> bool {
        let before = self.events.len();
        self.events.retain(|_, e| {
            let (kind, ns, name) = about(e);
            kind != "Pod" || keep.is_some_and(|k| k.namespace == ns && k.name == name)
        });
        let changed = self.events.len() != before;
        self.generation += u64::from(changed);
        changed
    }

    /// The Events about `(kind, namespace, name)`: Warnings first, then the newest first.
    pub fn about(&self, kind: &str, obj: &ObjRef) -> Vec<&KubeEvent> {
        let mut out: Vec<&KubeEvent> = self
            .events
            .values()
            .filter(|e| about(e) == (kind, obj.namespace.as_str(), obj.name.as_str()))
            .map(|e| &**e)
            .collect();
        out.sort_by(|a, b| {
            is_warning(b).cmp(&is_warning(a)).then_with(|| last_seen(b).cmp(&last_seen(a)))
        });
        out
    }

    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ObjectReference;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

    fn ev(name: &str, pod: &str, warning: bool, at_s: i64) -> Arc<KubeEvent> {
        Arc::new(KubeEvent {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                ..Default::default()
            },
            involved_object: ObjectReference {
                kind: Some("Pod".into()),
                name: Some(pod.into()),
                namespace: Some("default".into()),
                ..Default::default()
            },
            type_: Some(if warning { "Warning" } else { "Normal" }.into()),
            last_timestamp: Some(Time(Timestamp::from_second(at_s).unwrap())),
            ..Default::default()
        })
    }

    #[test]
    fn warnings_come_first_then_the_newest() {
        let mut log = EventLog::default();
        log.apply(ev("a", "web-0", false, 30));
        log.apply(ev("b", "web-0", true, 10));
        log.apply(ev("c", "web-0", true, 20));
        log.apply(ev("d", "web-1", true, 40));
        let names: Vec<_> = log
            .about("Pod", &ObjRef::new("default", "web-0"))
            .iter()
            .map(|e| e.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(names, ["c", "b", "a"]);
    }

    #[test]
    fn bounded_and_forgetting_the_pods_not_selected() {
        let mut log = EventLog::default();
        for i in 0..(MAX_HELD as i64 + 10) {
            log.apply(ev(&format!("e{i}"), "web-0", false, i));
        }
        assert_eq!(log.len(), MAX_HELD);
        let kept = log.about("Pod", &ObjRef::new("default", "web-0"));
        assert_eq!(
            kept.last().and_then(|e| e.metadata.name.as_deref()),
            Some("e10"),
            "oldest went"
        );
        log.apply(ev("x", "web-1", true, 1_000));
        assert!(log.keep_pod(Some(&ObjRef::new("default", "web-1"))));
        assert_eq!(log.len(), 1);
        assert!(log.replace("Pod", "default", "web-1", Vec::new()), "a listing without it");
        assert!(log.is_empty());
    }
}
