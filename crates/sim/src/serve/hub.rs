//! The watch history: every change the simulation makes, serialized once, in resourceVersion
//! order, bounded in count and bytes. Watchers read it from their own cursor (a slow client
//! costs a cursor, not a buffer); one that falls behind what the history still holds, or asks
//! for a version older than it, gets `410 Gone`. It also holds the served API's faults
//! (down, latency, dropped watches, compaction), set by scenario commands through the tap.
//!
//! Owns: the history and the fault state. Must not: touch the simulation (it is fed by the
//! driver's tap on the simulation's thread).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::watch;

use super::resources::Res;
use crate::backend::Object;
use crate::sim::store::ChangeKind;
use crate::sim::{ApiFault, SimEvent};

/// Changes kept at most, and their serialized size at most: beyond either, the oldest go (and
/// watches still behind them get 410).
pub const MAX_CHANGES: usize = 8_192;
pub const MAX_BYTES: usize = 48 << 20;

/// One change as watchers see it.
#[derive(Debug)]
pub struct Change {
    pub rv: u64,
    pub res: Res,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub kind: &'static str,
    pub namespace: String,
    pub labels: Option<BTreeMap<String, String>>,
    /// The fields field selectors read.
    pub fields: Vec<(&'static str, String)>,
    /// The object as JSON (with apiVersion and kind).
    pub json: Bytes,
}

/// What a watcher's wait ended with.
#[derive(Debug)]
pub enum Next {
    Changes(Vec<Arc<Change>>),
    /// The history no longer reaches back to the cursor.
    Expired {
        oldest: u64,
    },
    /// `drop-watches` (or the API going down) closed every watch.
    Dropped,
    /// Nothing happened within the wait.
    Idle,
}

#[derive(Debug, Default)]
struct State {
    changes: VecDeque<Arc<Change>>,
    bytes: usize,
    /// Watches from a version below this get 410.
    compacted_through: u64,
    latest: u64,
    drops: u64,
    down_until: Option<Instant>,
    unauthorized_until: Option<Instant>,
    latency: Duration,
    /// Successful writes whose replies are still to be lost (`api-lose-replies`).
    lose_replies: u32,
    /// Watches send nothing until then (`api-stall-watches`).
    stalled_until: Option<Instant>,
    /// The watches of one resource send nothing until then (`api-stall-watches DUR pods`).
    stalled: std::collections::BTreeMap<&'static str, Instant>,
    /// API requests still to be answered 500 (`api-errors`).
    errors: u32,
    /// The simulation's time at the last event, the wall instant then, and the speed.
    clock: Option<(k8s_openapi::jiff::Timestamp, Instant, f64)>,
}

/// The history and fault state, shared by the tap and the request handlers.
#[derive(Debug)]
pub struct Hub {
    state: Mutex<State>,
    notify: watch::Sender<u64>,
}

impl Hub {
    /// A hub whose history starts at resourceVersion `rv` (what the simulation has now).
    pub fn new(rv: u64) -> Hub {
        let state = State { compacted_through: rv, latest: rv, ..Default::default() };
        Hub { state: Mutex::new(state), notify: watch::channel(0).0 }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn wake(&self) {
        self.notify.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The tap: records a change or applies an API fault (`speed` turns virtual durations into
    /// wall ones; `now` is the simulation's time).
    pub fn observe(&self, ev: &SimEvent, speed: f64, now: k8s_openapi::jiff::Timestamp) {
        self.lock().clock = Some((now, Instant::now(), speed));
        match ev {
            SimEvent::Watch { kind, object } => {
                if let Some(change) = change(*kind, object) {
                    self.push(change);
                }
            }
            SimEvent::Api(fault) => self.fault(*fault, speed),
            _ => {}
        }
    }

    fn push(&self, change: Change) {
        let mut s = self.lock();
        s.latest = s.latest.max(change.rv);
        s.bytes += change.json.len();
        s.changes.push_back(Arc::new(change));
        while s.changes.len() > MAX_CHANGES || s.bytes > MAX_BYTES {
            let Some(old) = s.changes.pop_front() else { break };
            s.bytes -= old.json.len();
            s.compacted_through = s.compacted_through.max(old.rv);
        }
        drop(s);
        self.wake();
    }

    fn fault(&self, fault: ApiFault, speed: f64) {
        let wall = |ms: u64| Duration::from_secs_f64(ms as f64 / 1000.0 / speed.max(0.01));
        let mut s = self.lock();
        match fault {
            ApiFault::Down { ms } => {
                s.down_until = Some(Instant::now() + wall(ms));
                s.drops += 1;
            }
            ApiFault::Latency { ms } => s.latency = wall(ms),
            ApiFault::Unauthorized { ms } => {
                s.unauthorized_until = Some(Instant::now() + wall(ms));
                s.drops += 1;
            }
            ApiFault::DropWatches => s.drops += 1,
            ApiFault::Compact => {
                s.compacted_through = s.latest;
                s.changes.clear();
                s.bytes = 0;
            }
            ApiFault::LoseReplies { n } => s.lose_replies = n,
            ApiFault::StallWatches { ms, resource } => {
                let until = Instant::now() + wall(ms);
                match resource {
                    None => s.stalled_until = Some(until),
                    Some(r) => drop(s.stalled.insert(r, until)),
                }
            }
            ApiFault::Errors { n } => s.errors = n,
        }
        drop(s);
        self.wake();
    }

    /// The simulation's time now, from its last event and the wall time since (× speed).
    pub fn now(&self) -> k8s_openapi::jiff::Timestamp {
        match self.lock().clock {
            Some((t, at, speed)) => {
                let ms = (at.elapsed().as_secs_f64() * speed * 1000.0) as i64;
                t.checked_add(k8s_openapi::jiff::SignedDuration::from_millis(ms)).unwrap_or(t)
            }
            None => k8s_openapi::jiff::Timestamp::now(),
        }
    }

    /// The newest resourceVersion recorded.
    pub fn latest(&self) -> u64 {
        self.lock().latest
    }

    /// The oldest version a watch may start from.
    pub fn oldest(&self) -> u64 {
        self.lock().compacted_through
    }

    /// The drop generation (a watch ends when it moves).
    pub fn drops(&self) -> u64 {
        self.lock().drops
    }

    /// Whether the reply of a write that succeeded is to be lost now (counts it down).
    pub fn lose_reply(&self) -> bool {
        let mut s = self.lock();
        let lose = s.lose_replies > 0;
        s.lose_replies = s.lose_replies.saturating_sub(1);
        lose
    }

    /// Whether this API request is to be answered 500 (counts it down).
    pub fn error(&self) -> bool {
        let mut s = self.lock();
        let error = s.errors > 0;
        s.errors = s.errors.saturating_sub(1);
        error
    }

    /// When the watches of `resource` (a plural) are stalled, until when.
    pub fn stalled_until(&self, resource: &str) -> Option<Instant> {
        let s = self.lock();
        let one = s.stalled.get(resource).copied();
        s.stalled_until.max(one).filter(|t| *t > Instant::now())
    }

    /// When the API is down, until when.
    pub fn down_until(&self) -> Option<Instant> {
        self.lock().down_until.filter(|t| *t > Instant::now())
    }

    /// When requests are refused as 401, until when.
    pub fn unauthorized_until(&self) -> Option<Instant> {
        self.lock().unauthorized_until.filter(|t| *t > Instant::now())
    }

    pub fn latency(&self) -> Duration {
        self.lock().latency
    }

    /// A receiver that wakes on every change or fault.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.notify.subscribe()
    }

    /// The changes after `cursor`, waiting up to `wait` for one; `drops` is the generation the
    /// watch started in.
    pub async fn next(&self, cursor: u64, drops: u64, wait: Duration) -> Next {
        let mut rx = self.subscribe();
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            rx.borrow_and_update();
            {
                let s = self.lock();
                if s.drops != drops {
                    return Next::Dropped;
                }
                if cursor < s.compacted_through {
                    return Next::Expired { oldest: s.compacted_through };
                }
                let start = s.changes.partition_point(|c| c.rv <= cursor);
                if start < s.changes.len() {
                    return Next::Changes(s.changes.range(start..).cloned().collect());
                }
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return Next::Idle,
            }
        }
    }
}

/// The resource an object belongs to (`None`: one the simulator does not serve).
pub fn res_of(object: &Object) -> Option<Res> {
    Some(match object {
        Object::Set(_) => Res::Sets,
        Object::Pod(_) => Res::Pods,
        Object::Claim(_) => Res::Claims,
        Object::Revision(_) => Res::Revisions,
        Object::Event(_) => Res::Events,
        Object::Budget(_) => Res::Budgets,
        Object::Eviction(_) => return None,
    })
}

/// The JSON of an object, with apiVersion and kind.
pub fn to_json(object: &Object) -> serde_json::Value {
    let v = match object {
        Object::Set(o) => serde_json::to_value(o),
        Object::Pod(o) => serde_json::to_value(o),
        Object::Claim(o) => serde_json::to_value(o),
        Object::Revision(o) => serde_json::to_value(o),
        Object::Event(o) => serde_json::to_value(o),
        Object::Budget(o) => serde_json::to_value(o),
        Object::Eviction(o) => serde_json::to_value(o),
    };
    v.unwrap_or(serde_json::Value::Null)
}

/// Appends `object`'s JSON to `out`, written straight from the object (no `Value` between:
/// lists and initial watch events of thousands of pods are most of the served simulator's
/// time otherwise); `null` if it cannot be written.
pub fn write_json(out: &mut Vec<u8>, object: &Object) {
    let written = match object {
        Object::Set(o) => serde_json::to_writer(&mut *out, &**o),
        Object::Pod(o) => serde_json::to_writer(&mut *out, &**o),
        Object::Claim(o) => serde_json::to_writer(&mut *out, &**o),
        Object::Revision(o) => serde_json::to_writer(&mut *out, &**o),
        Object::Event(o) => serde_json::to_writer(&mut *out, &**o),
        Object::Budget(o) => serde_json::to_writer(&mut *out, &**o),
        Object::Eviction(o) => serde_json::to_writer(&mut *out, &**o),
    };
    if written.is_err() {
        out.extend_from_slice(b"null");
    }
}

/// The fields a field selector of `res` may name.
pub fn selectable(res: Res) -> &'static [&'static str] {
    match res {
        Res::Pods => &["metadata.name", "metadata.namespace", "spec.nodeName", "status.phase"],
        Res::Events => &[
            "metadata.name",
            "metadata.namespace",
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "type",
            "source",
            "reportingComponent",
        ],
        Res::Namespaces => &["metadata.name", "status.phase"],
        _ => &["metadata.name", "metadata.namespace"],
    }
}

/// The selectable fields' values of an object.
pub fn fields_of(object: &Object) -> Vec<(&'static str, String)> {
    let m = object.metadata();
    let mut out = vec![
        ("metadata.name", m.name.clone().unwrap_or_default()),
        ("metadata.namespace", m.namespace.clone().unwrap_or_default()),
    ];
    match object {
        Object::Pod(p) => {
            out.push((
                "spec.nodeName",
                p.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default(),
            ));
            out.push((
                "status.phase",
                p.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default(),
            ));
        }
        Object::Event(e) => {
            let io = &e.involved_object;
            let s = |v: &Option<String>| v.clone().unwrap_or_default();
            out.extend([
                ("involvedObject.kind", s(&io.kind)),
                ("involvedObject.namespace", s(&io.namespace)),
                ("involvedObject.name", s(&io.name)),
                ("involvedObject.uid", s(&io.uid)),
                ("involvedObject.apiVersion", s(&io.api_version)),
                ("involvedObject.resourceVersion", s(&io.resource_version)),
                ("involvedObject.fieldPath", s(&io.field_path)),
                ("reason", s(&e.reason)),
                ("type", s(&e.type_)),
                ("source", e.source.as_ref().and_then(|x| x.component.clone()).unwrap_or_default()),
                ("reportingComponent", s(&e.reporting_component)),
            ]);
        }
        _ => {}
    }
    out
}

fn change(kind: ChangeKind, object: &Object) -> Option<Change> {
    let m = object.metadata();
    let rv = m.resource_version.as_deref()?.parse().ok()?;
    let mut json = Vec::new();
    write_json(&mut json, object);
    Some(Change {
        rv,
        res: res_of(object)?,
        kind: match kind {
            ChangeKind::Added => "ADDED",
            ChangeKind::Modified => "MODIFIED",
            ChangeKind::Deleted => "DELETED",
        },
        namespace: m.namespace.clone().unwrap_or_default(),
        labels: m.labels.clone(),
        fields: fields_of(object),
        json: Bytes::from(json),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(rv: u64, bytes: usize) -> Change {
        Change {
            rv,
            res: Res::Pods,
            kind: "MODIFIED",
            namespace: "default".into(),
            labels: None,
            fields: Vec::new(),
            json: Bytes::from(vec![b' '; bytes]),
        }
    }

    #[tokio::test]
    async fn the_history_is_bounded_and_what_falls_out_expires() {
        let hub = Hub::new(10);
        for rv in 11..11 + MAX_CHANGES as u64 + 5 {
            hub.push(change(rv, 1));
        }
        assert_eq!(hub.oldest(), 15, "the five oldest went");
        assert!(matches!(hub.next(12, 0, Duration::ZERO).await, Next::Expired { oldest: 15 }));
        assert!(
            matches!(hub.next(15, 0, Duration::ZERO).await, Next::Changes(c) if c.len() == MAX_CHANGES)
        );
        // Bytes bound too: two changes of more than half the budget cannot both stay.
        let hub = Hub::new(0);
        hub.push(change(1, MAX_BYTES / 2 + 1));
        hub.push(change(2, MAX_BYTES / 2 + 1));
        assert_eq!(hub.oldest(), 1);
        // A dropped generation ends a waiting watch.
        let hub = Hub::new(0);
        hub.fault(ApiFault::DropWatches, 1.0);
        assert!(matches!(hub.next(0, 0, Duration::from_secs(5)).await, Next::Dropped));
        assert!(matches!(hub.next(0, 1, Duration::ZERO).await, Next::Idle));
    }
}
