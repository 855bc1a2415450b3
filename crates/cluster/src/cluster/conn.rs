//! The connection's state, as the requests see it: each watcher (and the preflight) holds a
//! [`Slot`] and says how its last request went; the backend's [`Connection`] is the worst of
//! them (credentials refused, then unreachable, then answered with errors, else up), reported
//! on every change. A kind the user may not list is said once, as unreadable, with the
//! permission; it is reachable all the same.
//!
//! Connected means a request succeeded (a listing, a watch opened, a frame of a watch), never
//! that an object changed: a quiet set reconnects at once.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;

use super::trouble::{self, Trouble};
use crate::backend::Sink;
use crate::backend::{BackendEvent, Connection, EventKind, ObjKind};

/// The console's advice ending a credentials message (a verb leaves it out).
pub const RECONNECT: &str = ", then press R to reconnect";

/// How one watcher's (or the preflight's) requests last went.
#[derive(Debug, Clone, PartialEq)]
enum Reach {
    Up,
    Unreachable { since: Timestamp, error: String },
    Failing { since: Timestamp, error: String },
    Unauthorized { error: String },
}

#[derive(Default)]
struct Inner {
    shown: Option<Connection>,
    slots: HashMap<u64, Reach>,
    next: u64,
    /// Kinds said to be unreadable, with the reason.
    unreadable: BTreeMap<ObjKind, String>,
}

/// The connection as the watchers see it, shared by them.
pub struct Conn {
    inner: Mutex<Inner>,
    sink: Sink,
    /// When the backend started (timeline times count from it).
    pub start: Instant,
    /// When the server last said anything (a slot told it is up), in ms since `ticks`.
    heard: AtomicU64,
    /// The runtime's clock at the start (paused in tests, as the watchers' timers are).
    ticks: tokio::time::Instant,
}

impl Conn {
    pub fn new(sink: Sink) -> Arc<Conn> {
        let (heard, ticks) = (AtomicU64::new(0), tokio::time::Instant::now());
        Arc::new(Conn { inner: Mutex::default(), sink, start: Instant::now(), heard, ticks })
    }

    /// Whether the server said anything within `d` (`heartbeat`).
    pub fn heard_within(&self, d: Duration) -> bool {
        let now = u64::try_from(self.ticks.elapsed().as_millis()).unwrap_or(u64::MAX);
        let d = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        now.saturating_sub(self.heard.load(Ordering::Relaxed)) < d
    }

    pub fn sink(&self, ev: BackendEvent) {
        (self.sink)(ev);
    }

    /// A timeline entry now.
    pub fn note(&self, kind: EventKind) {
        let t_ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.sink(BackendEvent::Timeline(crate::backend::Event { t_ms, kind }));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new slot (a watcher, the preflight); dropping it forgets what it said.
    pub fn slot(self: &Arc<Conn>) -> Slot {
        let id = {
            let mut i = self.lock();
            i.next += 1;
            i.next
        };
        Slot { conn: Arc::clone(self), id }
    }

    fn set(&self, id: u64, reach: Option<Reach>) {
        if reach == Some(Reach::Up) {
            let now = u64::try_from(self.ticks.elapsed().as_millis()).unwrap_or(u64::MAX);
            self.heard.store(now, Ordering::Relaxed);
        }
        let (changed, shown) = {
            let mut i = self.lock();
            let before = i.slots.get(&id).cloned();
            if before == reach {
                return;
            }
            match reach {
                Some(r) => i.slots.insert(id, r),
                None => i.slots.remove(&id),
            };
            let now = aggregate(i.slots.values());
            // Another slot failing the same way changes nothing worth saying: the state shown
            // keeps when it began and what failed first.
            let same_kind = i
                .shown
                .as_ref()
                .is_some_and(|s| std::mem::discriminant(s) == std::mem::discriminant(&now));
            let changed = !same_kind;
            if changed {
                i.shown = Some(now.clone());
            }
            (changed, now)
        };
        if changed {
            self.sink(BackendEvent::Connection(shown));
        }
    }

    /// Whether `kind` may be listed: said on a change only. The first denial stands until the
    /// kind is readable again (two watches of one kind, one listing and one watching from now,
    /// are refused in their own words: said once).
    pub fn readable(&self, kind: ObjKind, denied: Option<String>) {
        let changed = {
            let mut i = self.lock();
            match &denied {
                Some(_) if i.unreadable.contains_key(&kind) => false,
                Some(why) => i.unreadable.insert(kind, why.clone()).is_none(),
                None => i.unreadable.remove(&kind).is_some(),
            }
        };
        if changed {
            self.sink(BackendEvent::Access { kind, denied });
        }
    }
}

/// The worst of the slots: credentials refused, unreachable (the earliest), failing, up.
fn aggregate<'a>(slots: impl Iterator<Item = &'a Reach>) -> Connection {
    let (mut unauth, mut down, mut failing) = (None, None::<(Timestamp, String)>, None);
    for r in slots {
        match r {
            Reach::Up => {}
            Reach::Unauthorized { error } => unauth = Some(error.clone()),
            Reach::Unreachable { since, error } => {
                if down.as_ref().is_none_or(|(s, _)| since < s) {
                    down = Some((*since, error.clone()));
                }
            }
            Reach::Failing { since, error } => {
                if failing.as_ref().is_none_or(|(s, _): &(Timestamp, String)| since < s) {
                    failing = Some((*since, error.clone()));
                }
            }
        }
    }
    match (unauth, down, failing) {
        (Some(error), _, _) => Connection::Unauthorized { error },
        (None, Some((since, error)), _) => Connection::Unreachable { since, error },
        (None, None, Some((since, error))) => Connection::Failing { since, error },
        (None, None, None) => Connection::Up,
    }
}

/// One watcher's (or the preflight's) say in the connection's state.
pub struct Slot {
    conn: Arc<Conn>,
    id: u64,
}

/// What a failed request means to its caller, once the connection's state is updated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Transient (unreachable, failing, stalled): the caller retries.
    Retry,
    /// 403: `kind` cannot be read; the message names the permission.
    Forbidden(String),
    /// Credentials refused: nothing works until they are renewed.
    Unauthorized,
    /// Anything else the server refused: the message.
    Refused(String),
}

impl Slot {
    pub fn conn(&self) -> &Arc<Conn> {
        &self.conn
    }

    /// A request succeeded: the server is reachable.
    pub fn ok(&self) {
        self.conn.set(self.id, Some(Reach::Up));
    }

    /// The server gave no answer: unreachable, with `error` (since the first time said).
    pub fn down(&self, error: String) {
        let since = self.since();
        self.conn.set(self.id, Some(Reach::Unreachable { since, error }));
    }

    /// The server answered that it cannot serve: failing, with `error`.
    pub fn failing(&self, error: String) {
        let since = self.since();
        self.conn.set(self.id, Some(Reach::Failing { since, error }));
    }

    /// When this slot's trouble began: now, unless it was already in trouble.
    fn since(&self) -> Timestamp {
        match self.conn.lock().slots.get(&self.id) {
            Some(Reach::Unreachable { since, .. } | Reach::Failing { since, .. }) => *since,
            _ => Timestamp::now(),
        }
    }

    /// A request of `what` (`list pods in default`) failed with `e`.
    pub fn failed(&self, what: &str, e: &kube::Error) -> Outcome {
        let t = trouble::of(e);
        let brief = trouble::brief(e);
        let since = |r: Option<&Reach>| match r {
            Some(Reach::Unreachable { since, .. } | Reach::Failing { since, .. }) => *since,
            _ => Timestamp::now(),
        };
        let before = self.conn.lock().slots.get(&self.id).cloned();
        match t {
            Trouble::Unreachable { .. } => {
                let error = format!("{}: {brief}", trouble::words(t));
                let since = since(before.as_ref());
                self.conn.set(self.id, Some(Reach::Unreachable { since, error }));
                Outcome::Retry
            }
            Trouble::Failing => {
                let error = format!("{what}: {brief}");
                let since = since(before.as_ref());
                self.conn.set(self.id, Some(Reach::Failing { since, error }));
                Outcome::Retry
            }
            Trouble::Stalled => Outcome::Retry,
            Trouble::Unauthorized => {
                let error = if trouble::no_credential(e) {
                    format!("no credentials: {brief}; mend the plugin or sign in{RECONNECT}")
                } else {
                    format!(
                        "the server refused our credentials ({brief}): renew them (e.g. log in \
                         again){RECONNECT}"
                    )
                };
                self.conn.set(self.id, Some(Reach::Unauthorized { error }));
                Outcome::Unauthorized
            }
            Trouble::Forbidden => {
                self.ok();
                Outcome::Forbidden(format!("you may not {what} ({brief})"))
            }
            Trouble::Refused(_) => {
                self.ok();
                Outcome::Refused(format!("{what}: {brief}"))
            }
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.conn.set(self.id, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> (Arc<Conn>, Arc<Mutex<Vec<BackendEvent>>>) {
        let seen: Arc<Mutex<Vec<BackendEvent>>> = Arc::default();
        let s = Arc::clone(&seen);
        (Conn::new(Arc::new(move |ev| s.lock().unwrap().push(ev))), seen)
    }

    fn refused() -> kube::Error {
        kube::Error::Service(Box::new(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "connection refused",
        )))
    }

    fn api(code: u16) -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status { code, ..Default::default() }))
    }

    fn connections(seen: &Mutex<Vec<BackendEvent>>) -> Vec<Connection> {
        let v = seen.lock().unwrap();
        v.iter()
            .filter_map(|e| match e {
                BackendEvent::Connection(c) => Some(c.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_worst_slot_is_shown_and_one_success_each_brings_it_back() {
        let (c, seen) = conn();
        let (a, b) = (c.slot(), c.slot());
        a.ok();
        b.ok();
        assert_eq!(a.failed("list pods in d", &refused()), Outcome::Retry);
        assert_eq!(b.failed("list pods in d", &api(500)), Outcome::Retry);
        b.ok();
        a.ok();
        let shown = connections(&seen);
        assert!(matches!(shown[0], Connection::Up), "{shown:?}");
        assert!(matches!(shown[1], Connection::Unreachable { .. }), "{shown:?}");
        assert_eq!(shown.last(), Some(&Connection::Up), "{shown:?}");
        assert_eq!(shown.len(), 3, "no change while one slot stays down: {shown:?}");
    }

    #[test]
    fn answered_with_errors_is_not_unreachable_and_a_403_is_reachable() {
        let (c, seen) = conn();
        let a = c.slot();
        assert_eq!(a.failed("list pods in d", &api(503)), Outcome::Retry);
        assert!(
            matches!(&connections(&seen)[0], Connection::Failing { error, .. } if error.starts_with("list pods in d: 503"))
        );
        assert!(
            matches!(a.failed("list pods in d", &api(403)), Outcome::Forbidden(m) if m.starts_with("you may not list pods in d"))
        );
        assert_eq!(connections(&seen).last(), Some(&Connection::Up));
        drop(a);
        c.readable(ObjKind::Pod, Some("you may not list pods".into()));
        c.readable(ObjKind::Pod, Some("you may not list pods".into()));
        let access = seen
            .lock()
            .unwrap()
            .iter()
            .filter(|e| matches!(e, BackendEvent::Access { .. }))
            .count();
        assert_eq!(access, 1, "said once");
    }

    #[test]
    fn a_dropped_slot_no_longer_counts() {
        let (c, seen) = conn();
        let a = c.slot();
        a.failed("watch", &refused());
        drop(a);
        assert_eq!(connections(&seen).last(), Some(&Connection::Up));
    }
}
