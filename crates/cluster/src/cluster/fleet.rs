//! The console on a fleet (`ststui --contexts eu,us,ap NAME`): one [`ClusterBackend`] per
//! context, each watching its members with one watch per kind (`shared`), seen by the console
//! as one backend. The console's objects are keyed by namespace and name, and a fleet's members
//! share both (`default/web` in every cluster): each cluster's objects reach it in a namespace
//! of their own, `CONTEXT/NAMESPACE` (`eu/default`), so the mirror, the grid and the group
//! matrix tell them apart with no notion of clusters; what the console asks of a set in
//! `eu/default` goes to eu's backend, in `default`.
//!
//! A fleet's view is read-only (every write denied, saying why and what steers a fleet): a
//! fleet is steered by `ststui rollout … --contexts`, or one cluster's console. The console is
//! synced once every cluster is; what one cluster says of its connection, its notices and its
//! errors leads with its context.
//!
//! Owns: the namespaces' prefixes both ways and the routing. Must not: touch the app.

use std::sync::{Arc, Mutex, PoisonError};

use super::{ClusterBackend, NoClient, Target};
use crate::backend::{
    Backend, BackendEvent, Capabilities, Connection, EventKind, ObjRef, Object, Op, Scope, Sink,
    ViewOp, WriteKind,
};

/// The console's backend on a fleet: each context's, by its prefix.
pub struct FleetBackend {
    clusters: Vec<(String, ClusterBackend)>,
    caps: Capabilities,
}

/// Why a fleet's view writes nothing.
pub use crate::backend::FLEET_READ_ONLY as READ_ONLY;

impl FleetBackend {
    /// Starts one backend per context, each showing `sets` (names in its target's namespace),
    /// their events to `sink` with the namespaces prefixed by the context.
    pub fn start(each: Vec<(Target, Vec<String>)>, sink: Sink) -> Result<FleetBackend, NoClient> {
        let contexts: Vec<String> =
            each.iter().map(|(t, _)| t.context.clone().unwrap_or_default()).collect();
        let merge = Arc::new(Mutex::new(Merge::new(contexts.clone())));
        let starts = (each.into_iter().enumerate())
            .map(|(i, (t, names))| {
                let (sink, merge) = (Arc::clone(&sink), Arc::clone(&merge));
                let wrapped: Sink = Arc::new(move |ev| {
                    let said = merge.lock().unwrap_or_else(PoisonError::into_inner).said(i, ev);
                    if let Some(ev) = said {
                        sink(ev);
                    }
                });
                (t, names, wrapped)
            })
            .collect();
        let backends = ClusterBackend::start_groups(starts)?;
        let mut caps = Capabilities::cluster();
        for kind in WriteKind::ALL {
            caps.denied.insert(kind, READ_ONLY.into());
        }
        caps.set_list = false;
        Ok(FleetBackend { clusters: contexts.into_iter().zip(backends).collect(), caps })
    }

    /// The backend of the cluster whose prefix `key`'s namespace carries, and `key` in it.
    fn route(&mut self, key: &ObjRef) -> Option<(&mut ClusterBackend, ObjRef)> {
        let (ctx, ns) = key.namespace.split_once('/')?;
        let (_, b) = self.clusters.iter_mut().find(|(c, _)| c == ctx)?;
        Some((b, ObjRef::new(ns, key.name.clone())))
    }
}

impl Backend for FleetBackend {
    fn capabilities(&self) -> Capabilities {
        self.caps.clone()
    }

    fn execute(&mut self, op: Op) {
        match op {
            Op::View(ViewOp::Group(sets)) => {
                for (ctx, b) in &mut self.clusters {
                    let own: Vec<ObjRef> = sets.iter().filter_map(|k| unprefixed(k, ctx)).collect();
                    b.execute(Op::View(ViewOp::Group(own)));
                }
            }
            Op::View(ViewOp::Focus(Some(key))) => {
                if let Some((b, key)) = self.route(&key) {
                    b.execute(Op::View(ViewOp::Group(vec![key])));
                }
            }
            Op::View(ViewOp::PodEvents(pod)) => {
                let at = pod
                    .as_ref()
                    .and_then(|p| p.namespace.split_once('/').map(|(c, _)| c.to_string()));
                for (ctx, b) in &mut self.clusters {
                    let own = pod.as_ref().filter(|_| at.as_deref() == Some(ctx.as_str()));
                    b.execute(Op::View(ViewOp::PodEvents(own.and_then(|p| unprefixed(p, ctx)))));
                }
            }
            Op::View(ViewOp::Logs(req)) => {
                let at = req
                    .as_ref()
                    .and_then(|r| r.pod.namespace.split_once('/').map(|(c, _)| c.to_string()));
                for (ctx, b) in &mut self.clusters {
                    let own = req.as_ref().filter(|_| at.as_deref() == Some(ctx.as_str()));
                    let own = own.and_then(|r| {
                        Some(crate::backend::LogRequest {
                            pod: unprefixed(&r.pod, ctx)?,
                            ..r.clone()
                        })
                    });
                    b.execute(Op::View(ViewOp::Logs(own)));
                }
            }
            Op::View(ViewOp::Read(key)) => {
                if let Some((b, key)) = self.route(&key) {
                    b.execute(Op::View(ViewOp::Read(key)));
                }
            }
            Op::View(ViewOp::Reconnect) => {
                for (_, b) in &mut self.clusters {
                    b.execute(Op::View(ViewOp::Reconnect));
                }
            }
            // The list of sets and the writes: a fleet's view has neither (each cluster's
            // backend refuses a write it is sent; none is sent: every write is denied).
            Op::View(ViewOp::Focus(None)) | Op::Cluster(_) | Op::Sim(_) => {}
        }
    }
}

/// What the clusters said, merged into what the console of the fleet hears.
struct Merge {
    contexts: Vec<String>,
    synced: Vec<bool>,
    /// The first cluster's version, which the advisor plays.
    server: Option<String>,
    connections: Vec<Connection>,
    said: Connection,
}

impl Merge {
    fn new(contexts: Vec<String>) -> Merge {
        let n = contexts.len();
        Merge {
            contexts,
            synced: vec![false; n],
            server: None,
            connections: vec![Connection::Up; n],
            said: Connection::Up,
        }
    }

    /// Cluster `i`'s event as the console hears it (`None`: not said, or not yet).
    fn said(&mut self, i: usize, ev: BackendEvent) -> Option<BackendEvent> {
        let ctx = self.contexts.get(i)?.clone();
        match ev {
            // Synced once every cluster is.
            BackendEvent::Synced => {
                self.synced[i] = true;
                self.synced.iter().all(|s| *s).then_some(BackendEvent::Synced)
            }
            // The advisor plays one release: the first cluster's; another is said.
            BackendEvent::Server { version } => match &self.server {
                Some(v) if *v == version => None,
                Some(v) => Some(BackendEvent::Notice(format!(
                    "{ctx}: server {} (the advisor plays {v}, the first cluster's)",
                    crate::text::shown(&version, 64)
                ))),
                None => {
                    self.server = Some(version.clone());
                    Some(BackendEvent::Server { version })
                }
            },
            // Read-only, whatever each cluster would allow.
            BackendEvent::Capabilities(_) => None,
            // The first cluster in trouble, named; up when every one is.
            BackendEvent::Connection(c) => {
                self.connections[i] = c;
                let worst = (self.connections.iter().zip(&self.contexts))
                    .find(|(c, _)| c.stale())
                    .map_or(Connection::Up, |(c, ctx)| named(c.clone(), ctx));
                (worst != self.said).then(|| {
                    self.said = worst.clone();
                    BackendEvent::Connection(worst)
                })
            }
            ev => Some(prefixed(ev, &ctx)),
        }
    }
}

/// A cluster's connection state, its words leading with its context.
fn named(c: Connection, ctx: &str) -> Connection {
    match c {
        Connection::Up => Connection::Up,
        Connection::Unreachable { since, error } => {
            Connection::Unreachable { since, error: format!("{ctx}: {error}") }
        }
        Connection::Failing { since, error } => {
            Connection::Failing { since, error: format!("{ctx}: {error}") }
        }
        Connection::Unauthorized { error } => {
            Connection::Unauthorized { error: format!("{ctx}: {error}") }
        }
    }
}

/// `key` in the cluster `ctx`, when its namespace carries that cluster's prefix.
fn unprefixed(key: &ObjRef, ctx: &str) -> Option<ObjRef> {
    let (c, ns) = key.namespace.split_once('/')?;
    (c == ctx).then(|| ObjRef::new(ns, key.name.clone()))
}

/// `ns` in the cluster `ctx`: `ctx/ns`.
pub fn prefix(ctx: &str, ns: &str) -> String {
    format!("{ctx}/{ns}")
}

/// What a cluster's backend said, as the console of the fleet hears it: every namespace it
/// names prefixed by the cluster's context, its words leading with it.
fn prefixed(ev: BackendEvent, ctx: &str) -> BackendEvent {
    match ev {
        BackendEvent::Applied(o) => BackendEvent::Applied(object(o, ctx)),
        BackendEvent::Deleted(o) => BackendEvent::Deleted(object(o, ctx)),
        BackendEvent::Listed { kind, scope, objects } => BackendEvent::Listed {
            kind,
            scope: Scope { namespace: scope.namespace.map(|n| prefix(ctx, &n)), ..scope },
            objects: objects.into_iter().map(|o| object(o, ctx)).collect(),
        },
        BackendEvent::Read { set, read } => BackendEvent::Read {
            set: ObjRef::new(prefix(ctx, &set.namespace), set.name),
            read: read.map(|mut f| {
                let set = Arc::make_mut(&mut f.set);
                set.metadata.namespace = set.metadata.namespace.take().map(|n| prefix(ctx, &n));
                for p in &mut f.pods {
                    let p = Arc::make_mut(p);
                    p.metadata.namespace = p.metadata.namespace.take().map(|n| prefix(ctx, &n));
                }
                f
            }),
        },
        BackendEvent::Timeline(mut e) => {
            timeline(&mut e.kind, ctx);
            BackendEvent::Timeline(e)
        }
        BackendEvent::Notice(n) => BackendEvent::Notice(format!("{ctx}: {n}")),
        BackendEvent::Error(n) => BackendEvent::Error(format!("{ctx}: {n}")),
        ev => ev,
    }
}

/// A timeline line's set named with its cluster (`eu/web`).
fn timeline(kind: &mut EventKind, ctx: &str) {
    match kind {
        EventKind::Controller { set, .. } | EventKind::Status { set, .. } => {
            *set = format!("{ctx}/{set}");
        }
        EventKind::Kubelet { pod, .. } => *pod = format!("{ctx}/{pod}"),
        _ => {}
    }
}

/// The object in its cluster's namespace (an Event's involved object's too).
fn object(o: Object, ctx: &str) -> Object {
    match o {
        Object::Set(s) => Object::Set(moved(s, ctx)),
        Object::Pod(p) => Object::Pod(moved(p, ctx)),
        Object::Claim(c) => Object::Claim(moved(c, ctx)),
        Object::Revision(r) => Object::Revision(moved(r, ctx)),
        Object::Budget(b) => Object::Budget(moved(b, ctx)),
        Object::Eviction(e) => Object::Eviction(moved(e, ctx)),
        Object::Event(e) => {
            let mut e = moved(e, ctx);
            let io = &mut Arc::make_mut(&mut e).involved_object.namespace;
            *io = io.take().map(|n| prefix(ctx, &n));
            Object::Event(e)
        }
    }
}

/// `o` in its cluster's namespace (copied first only if another holds it too).
fn moved<K>(mut o: Arc<K>, ctx: &str) -> Arc<K>
where
    K: Clone
        + k8s_openapi::Metadata<Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>,
{
    let meta = Arc::make_mut(&mut o).metadata_mut();
    let n = meta.namespace.take().unwrap_or_else(|| crate::backend::DEFAULT_NAMESPACE.into());
    meta.namespace = Some(prefix(ctx, &n));
    o
}

#[cfg(test)]
#[path = "fleet_tests.rs"]
mod tests;
