//! Running one kube-rs watcher (`runtime::watcher`, with a backoff that retries within seconds)
//! and turning its events into [`BackendEvent`]s: a complete listing (`Init` … `InitDone`,
//! buffered and sent whole, so objects deleted during a gap disappear), then each change. Bulk
//! the console never shows (managed fields, the last-applied annotation) is pruned first. The
//! connection's state follows: an error that means the server is unreachable marks it down (the
//! banner), 401 asks for credentials, 403 says which watch is refused, and the next good event
//! marks it up again.

use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::Resource;
use kube::api::Api;
use kube::runtime::utils::Backoff;
use kube::runtime::{WatchStreamExt, watcher};
use serde::de::DeserializeOwned;

use super::SharedSink;
use crate::backend::{BackendEvent, Connection, EventKind, ObjKind, Object, Scope};

/// The annotation `kubectl apply` keeps a whole copy of the object in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Retry delays: 0.5 s doubling to at most 4 s, so the console is back within seconds of the
/// server (kube-rs's default reaches 30 s).
#[derive(Debug, Clone, Default)]
pub struct QuickBackoff {
    next: Option<Duration>,
}

impl Iterator for QuickBackoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let d =
            self.next.map_or(Duration::from_millis(500), |d| (d * 2).min(Duration::from_secs(4)));
        self.next = Some(d);
        Some(d)
    }
}

impl Backoff for QuickBackoff {
    fn reset(&mut self) {
        self.next = None;
    }
}

/// The connection as the watchers see it, shared by them; reports transitions.
pub struct Conn {
    state: Mutex<Connection>,
    sink: SharedSink,
    /// When the backend started (timeline times count from it).
    pub start: Instant,
    /// Watches already said to be forbidden (said once each).
    forbidden: Mutex<Vec<String>>,
}

impl Conn {
    pub fn new(sink: SharedSink) -> Arc<Conn> {
        Arc::new(Conn {
            state: Mutex::new(Connection::Up),
            sink,
            start: Instant::now(),
            forbidden: Mutex::default(),
        })
    }

    pub fn sink(&self, ev: BackendEvent) {
        (self.sink)(ev);
    }

    /// A timeline entry now.
    pub fn note(&self, kind: EventKind) {
        let t_ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.sink(BackendEvent::Timeline(crate::backend::Event { t_ms, kind }));
    }

    fn set(&self, c: Connection) {
        let changed = match self.state.lock() {
            Ok(mut s) if *s != c => {
                *s = c.clone();
                true
            }
            _ => false,
        };
        if changed {
            self.sink(BackendEvent::Connection(c));
        }
    }

    /// Something came back from the server: it is reachable.
    pub fn ok(&self) {
        let up = self.state.lock().map(|s| *s == Connection::Up).unwrap_or(true);
        if !up {
            self.set(Connection::Up);
        }
    }

    /// A client error: down, unauthorized, or a refused watch (`what`).
    pub fn error(&self, what: &str, e: &kube::Error) {
        match e {
            kube::Error::Api(s) if s.code == 401 => self.set(Connection::Unauthorized {
                error: format!(
                    "the server refused our credentials (401 {}): renew them (e.g. log in again), then press R to reconnect",
                    s.message
                ),
            }),
            kube::Error::Api(s) if s.code == 403 => {
                let first = self.forbidden.lock().map(|mut f| {
                    let new = !f.iter().any(|x| x == what);
                    if new {
                        f.push(what.to_string());
                    }
                    new
                });
                if first.unwrap_or(false) {
                    self.sink(BackendEvent::Error(format!("cannot {what}: {}", s.message)));
                }
            }
            kube::Error::Api(s) if s.code < 500 && s.code != 429 => {
                self.sink(BackendEvent::Error(format!("{what}: {}", s.message)));
            }
            other => {
                let down = self.state.lock().map(|s| matches!(*s, Connection::Down { .. })).unwrap_or(false);
                if !down {
                    self.set(Connection::Down {
                        since: k8s_openapi::jiff::Timestamp::now(),
                        error: other.to_string(),
                    });
                }
            }
        }
    }
}

/// A change a watcher reports, for the timeline's derivation.
pub enum Seen<'a, K> {
    Listed(&'a [K]),
    Applied(&'a K),
    Deleted(&'a K),
}

/// Drops what the console never shows (nor the advisor reads): managed fields, the
/// last-applied annotation, and in a pod's containers everything but name and image.
fn prune<K: Resource + 'static>(mut o: K) -> K {
    let m = o.meta_mut();
    m.managed_fields = None;
    if let Some(a) = m.annotations.as_mut() {
        a.remove(LAST_APPLIED);
    }
    if let Some(pod) =
        (&mut o as &mut dyn std::any::Any).downcast_mut::<k8s_openapi::api::core::v1::Pod>()
        && let Some(spec) = pod.spec.as_mut()
    {
        let lean = |c: &mut k8s_openapi::api::core::v1::Container| {
            *c = k8s_openapi::api::core::v1::Container {
                name: std::mem::take(&mut c.name),
                image: c.image.take(),
                ..Default::default()
            };
        };
        spec.containers.iter_mut().for_each(lean);
        spec.init_containers.iter_mut().flatten().for_each(lean);
        spec.ephemeral_containers = None;
    }
    o
}

/// Runs a watcher until the stream ends (never, unless aborted). `wrap` makes the backend
/// object; `derive` turns a change into timeline entries (sent before the change itself, so the
/// console compares with what it held before); `listed` sees each complete listing and may
/// return an event to send after it (Synced); without
/// `forward` only the timeline goes out (Events).
#[allow(clippy::too_many_arguments)]
pub async fn run<K>(
    api: Api<K>,
    config: watcher::Config,
    kind: ObjKind,
    scope: Scope,
    what: String,
    conn: Arc<Conn>,
    wrap: fn(K) -> Object,
    mut derive: impl FnMut(Seen<'_, K>) -> Vec<EventKind> + Send,
    mut listed: impl FnMut(&[K]) -> Option<BackendEvent> + Send,
    forward: bool,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    let mut stream = watcher(api, config).backoff(QuickBackoff::default()).boxed();
    let mut buffer: Vec<K> = Vec::new();
    while let Some(ev) = stream.next().await {
        let ev = match ev {
            Ok(ev) => {
                conn.ok();
                ev
            }
            Err(
                watcher::Error::InitialListFailed(e)
                | watcher::Error::WatchStartFailed(e)
                | watcher::Error::WatchFailed(e),
            ) => {
                conn.error(&what, &e);
                continue;
            }
            Err(watcher::Error::WatchError(s)) if s.code == 410 => {
                // The watcher re-lists by itself; changes in the gap arrive folded.
                tracing::info!("{what}: watch expired ({}), re-listing", s.message);
                continue;
            }
            Err(other) => {
                tracing::warn!("{what}: {other}");
                continue;
            }
        };
        let (o, deleted) = match ev {
            watcher::Event::Init => {
                tracing::debug!("{what}: listing");
                buffer.clear();
                continue;
            }
            watcher::Event::InitApply(o) => {
                buffer.push(prune(o));
                continue;
            }
            watcher::Event::InitDone => {
                let objects = std::mem::take(&mut buffer);
                for t in derive(Seen::Listed(&objects)) {
                    conn.note(t);
                }
                let after = listed(&objects);
                if forward {
                    let wrapped = objects.into_iter().map(wrap).collect();
                    conn.sink(BackendEvent::Listed {
                        kind,
                        scope: scope.clone(),
                        objects: wrapped,
                    });
                }
                if let Some(ev) = after {
                    conn.sink(ev);
                }
                continue;
            }
            watcher::Event::Apply(o) => (prune(o), false),
            watcher::Event::Delete(o) => (prune(o), true),
        };
        let seen = if deleted { Seen::Deleted(&o) } else { Seen::Applied(&o) };
        for t in derive(seen) {
            conn.note(t);
        }
        if forward {
            let o = wrap(o);
            conn.sink(if deleted { BackendEvent::Deleted(o) } else { BackendEvent::Applied(o) });
        }
    }
}
