//! Real clusters through kube-rs: the backend behind `ststui [--context C] [-n NS] [NAME]`.
//! kube-controller-manager drives the set; this backend watches it (never polls), reports what
//! it sees as [`BackendEvent`]s, and carries out the console's writes as patches.
//!
//! A tokio runtime on a thread of its own (the console never sees tokio; tests run [`engine`]
//! on paused time). What it watches (`focus`): the sets of the namespace (or every namespace)
//! while the picker is shown, or the opened set by name, with its pods and ControllerRevisions
//! (and claims, when it has claim templates) by the set's selector, and the Events about the set
//! and its pods. It reports the server's version (the advisor reproduces that release), who we
//! are, which writes we may make (one SelfSubjectRulesReview), the connection's state as the
//! requests see it (`conn`, `probe`, `trouble`: unreachable, answered with errors, forbidden per
//! kind), and a timeline derived from the changes (`derive`). Errors never end it: the watchers
//! retry within seconds and the console shows the last data as stale meanwhile. Writes
//! (`write`) say what the server holds, a lost reply read back.
//!
//! Owns: the cluster side. Must not: touch the app, the terminal or the simulator.

mod conn;
mod connect;
pub mod credential;
pub mod derive;
mod evict;
pub mod fleet;
mod focus;
mod fresh;
pub mod gates;
mod heartbeat;
mod http;
pub mod lean;
mod logs;
pub mod lookup;
pub mod probe;
mod shared;
mod tail;
pub mod trouble;
mod watch;
pub mod write;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub use conn::RECONNECT;
pub use connect::{
    Clients, IN_CLUSTER_USER, NoClient, NoSession, Permission, Session, Target, context_names,
    denied_of, hostname, identity as connect_identity, session,
};
pub use watch::QuickBackoff;
pub use write::{OnceError, READ_BACK, Writes, Written, write_once};

use crate::backend::{
    Backend, BackendEvent, Capabilities, Failure, FailureKind, ObjKind, ObjRef, Op, Scope, Sink,
    ViewOp, WriteKind,
};
use conn::Conn;

/// The query form of a label selector.
pub fn selector_string(sel: &LabelSelector) -> String {
    crate::core::selector::to_query(sel)
}

/// How long dropping the backend waits for its thread: a moment, or as long as the writes under
/// way are let finish ([`WRITES_AT_STOP`]).
const STOP_WAIT: Duration = Duration::from_millis(2_300);

/// The console's handle on a cluster; dropping it stops the watchers.
pub struct ClusterBackend {
    tx: mpsc::UnboundedSender<Op>,
    caps: Capabilities,
    namespace: String,
    server: String,
    done: std::sync::mpsc::Receiver<()>,
}

/// A client session's scope: the kubeconfig, its context and the namespace.
type SessionKey = (Option<std::path::PathBuf>, Option<String>, Option<String>);

impl ClusterBackend {
    /// Reads the kubeconfig and starts watching. Fails (before any screen) only when the
    /// kubeconfig cannot be used; an unreachable server is a banner, not an error.
    pub fn start(target: Target, sink: Sink) -> Result<ClusterBackend, NoClient> {
        let mut one = ClusterBackend::start_many(vec![(target.clone(), None, sink)])?;
        one.pop().ok_or(NoClient::NoBackend)
    }

    /// Backends each showing several sets of its target's namespace as one (a rollout group's
    /// runner: one backend for the group; a fleet's: one per cluster): one watch per kind for
    /// all of them ([`shared`]), never one per set.
    pub fn start_groups(
        each: Vec<(Target, Vec<String>, Sink)>,
    ) -> Result<Vec<ClusterBackend>, NoClient> {
        ClusterBackend::start_many(each.into_iter().map(|(t, g, s)| (t, Some(g), s)).collect())
    }

    /// Backends each its own engine (its watches, state and writes) showing its target's set,
    /// or the group of sets named, on one runtime and one client session per cluster and
    /// namespace: a fleet of three clusters is three engines on two worker threads, its
    /// kubeconfig read once per context.
    fn start_many(
        each: Vec<(Target, Option<Vec<String>>, Sink)>,
    ) -> Result<Vec<ClusterBackend>, NoClient> {
        let runtime = crate::runtime::build("kube", crate::runtime::Workers::Threads(2))?;
        // One session (client) per cluster and namespace: a fleet's members are in several.
        let mut sessions: Vec<(SessionKey, connect::Session)> = Vec::new();
        let mut backends = Vec::with_capacity(each.len());
        let mut runs = Vec::with_capacity(each.len());
        for (t, group, sink) in each {
            let key = (t.kubeconfig.clone(), t.context.clone(), t.namespace.clone());
            let session = match sessions.iter().find(|(k, _)| *k == key) {
                Some((_, s)) => s.clone(),
                None => {
                    let s = runtime.block_on(connect::session(&t))?;
                    sessions.push((key, s.clone()));
                    s
                }
            };
            let caps = caps(&t, Default::default());
            let group = group.map(|names| {
                names.into_iter().map(|n| ObjRef::new(session.namespace.clone(), n)).collect()
            });
            let (tx, run) = engine_showing(t, session.clone(), sink, group);
            let (done_tx, done) = std::sync::mpsc::channel::<()>();
            // Each backend's drop waits for its own engine only.
            runs.push(runtime.spawn(async move {
                run.await;
                drop(done_tx);
            }));
            let (namespace, server) = (session.namespace.clone(), session.server.clone());
            backends.push(ClusterBackend { tx, caps, namespace, server, done });
        }
        std::thread::Builder::new()
            .name("ststui-kube".into())
            .spawn(move || {
                runtime.block_on(async {
                    for r in runs {
                        let _ = r.await;
                    }
                });
                runtime.shutdown_timeout(Duration::from_millis(100));
            })
            .map_err(NoClient::Thread)?;
        Ok(backends)
    }

    /// The namespace the console works in.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The server's URL, for messages.
    pub fn server(&self) -> &str {
        &self.server
    }
}

impl Drop for ClusterBackend {
    fn drop(&mut self) {
        let (tx, _) = mpsc::unbounded_channel();
        drop(std::mem::replace(&mut self.tx, tx));
        let _ = self.done.recv_timeout(STOP_WAIT);
    }
}

impl Backend for ClusterBackend {
    fn capabilities(&self) -> Capabilities {
        self.caps.clone()
    }

    fn execute(&mut self, op: Op) {
        let _ = self.tx.send(op);
    }
}

/// The backend's engine on a runtime the caller chooses (the backend's own thread, or a test's
/// runtime on paused time): the sender of ops, and the future that runs until the sender is
/// dropped.
pub fn engine(
    target: Target,
    session: Session,
    sink: Sink,
) -> (mpsc::UnboundedSender<Op>, impl std::future::Future<Output = ()> + Send) {
    engine_showing(target, session, sink, None)
}

/// [`engine`], showing the `group` of sets from the start (`None`: the target's set).
fn engine_showing(
    target: Target,
    session: Session,
    sink: Sink,
    group: Option<Vec<ObjRef>>,
) -> (mpsc::UnboundedSender<Op>, impl std::future::Future<Output = ()> + Send) {
    let (tx, rx) = mpsc::unbounded_channel();
    (tx, Engine::new(target, session, sink).run(rx, group))
}

/// A cluster's capabilities: writes only, less what is denied (or all of them, read-only).
fn caps(
    target: &Target,
    mut denied: std::collections::BTreeMap<WriteKind, String>,
) -> Capabilities {
    if target.read_only {
        for kind in WriteKind::ALL {
            denied.insert(kind, "--read-only: ststui makes no writes".into());
        }
    }
    Capabilities { denied, ..Capabilities::cluster() }
}

/// How long writes under way are let finish when the backend stops (below the drop's wait).
const WRITES_AT_STOP: Duration = Duration::from_secs(2);

struct Engine {
    target: Target,
    session: connect::Session,
    conn: Arc<Conn>,
    identity: Arc<Mutex<String>>,
    picker: Option<JoinHandle<()>>,
    /// What the picker's watch tells a group shown (its members' set changes and selectors).
    hub: shared::Hub,
    /// The sets shown (one, or a rollout group's), each with its timeline tracker (told of the
    /// operator's own pod deletions, so they are not told again as the controller's).
    focus: Vec<(ObjRef, Arc<Mutex<derive::Tracker>>)>,
    /// Their watchers: one set's own, or the group's shared ones.
    focus_tasks: Vec<JoinHandle<()>>,
    /// The selected pod's Events, watched (`ViewOp::PodEvents`).
    pod_events: Option<(ObjRef, focus::Tasks)>,
    /// The log followed (`ViewOp::Logs`).
    log: Option<focus::Tasks>,
    synced: focus::Synced,
    /// Writes under way: the last ones (a plan's lease given back as the console quits) are
    /// let finish, for a moment, before the engine stops.
    writes: Vec<JoinHandle<()>>,
}

impl Engine {
    fn new(target: Target, session: connect::Session, sink: Sink) -> Engine {
        let identity = Arc::new(Mutex::new(session.user.clone()));
        Engine {
            target,
            session,
            conn: Conn::new(sink),
            identity,
            picker: None,
            hub: shared::Hub::default(),
            focus: Vec::new(),
            focus_tasks: Vec::new(),
            pod_events: None,
            log: None,
            synced: focus::Synced::new(),
            writes: Vec::new(),
        }
    }

    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Op>, group: Option<Vec<ObjRef>>) {
        let clock = tokio::spawn(clock(Arc::clone(&self.conn)));
        let mut pulse =
            tokio::spawn(heartbeat::run(self.session.client.clone(), Arc::clone(&self.conn)));
        let mut preflight = self.preflight();
        match (group, self.target.name.clone()) {
            (Some(sets), _) => self.open_group(sets),
            (None, Some(name)) => {
                self.open(Some(ObjRef::new(self.session.namespace.clone(), name)));
            }
            (None, None) => self.open(None),
        }
        while let Some(op) = rx.recv().await {
            match op {
                Op::Cluster(w) => self.write(w),
                Op::Sim(_) => {
                    let f = Failure::new(
                        op.describe(),
                        FailureKind::Unsupported,
                        "pause, step, speed and faults exist in the simulator only (ststui sim)",
                    );
                    self.conn.sink(BackendEvent::OpFailed(f));
                }
                Op::View(ViewOp::Focus(set)) => self.open(set),
                Op::View(ViewOp::Group(sets)) => self.open_group(sets),
                Op::View(ViewOp::PodEvents(pod)) => self.pod_events(pod),
                Op::View(ViewOp::Read(key)) => self.read(key),
                Op::View(ViewOp::Logs(req)) => {
                    self.log = req.map(|r| {
                        let (client, conn) = (self.session.client.clone(), Arc::clone(&self.conn));
                        focus::Tasks(vec![tokio::spawn(logs::follow(client, conn, r))])
                    });
                }
                Op::View(ViewOp::Reconnect) => match reread(&self.target).await {
                    Ok(s) => {
                        self.session = s;
                        preflight.abort();
                        preflight = self.preflight();
                        pulse.abort();
                        let (client, conn) = (self.session.client.clone(), Arc::clone(&self.conn));
                        pulse = tokio::spawn(heartbeat::run(client, conn));
                        let shown: Vec<ObjRef> =
                            self.focus.iter().map(|(k, _)| k.clone()).collect();
                        let pod = self.pod_events.as_ref().map(|(p, _)| p.clone());
                        self.stop_watching();
                        match shown.len() {
                            0 | 1 => self.open(shown.into_iter().next()),
                            _ => self.open_group(shown),
                        }
                        self.pod_events(pod);
                        self.conn.sink(BackendEvent::Notice(
                            "credentials read again: reconnecting".into(),
                        ));
                    }
                    Err(e) => self.conn.sink(BackendEvent::Error(e.to_string())),
                },
            }
        }
        clock.abort();
        pulse.abort();
        preflight.abort();
        self.stop_watching();
        let pending = std::mem::take(&mut self.writes);
        let _ = tokio::time::timeout(WRITES_AT_STOP, futures::future::join_all(pending)).await;
    }

    fn stop_watching(&mut self) {
        if let Some(p) = self.picker.take() {
            p.abort();
        }
        self.focus.clear();
        self.hub.show(Vec::new());
        for f in self.focus_tasks.drain(..) {
            f.abort();
        }
        self.pod_events = None;
    }

    /// The server's version (retried until it answers); once the first view has synced, who we
    /// are and what we may write.
    fn preflight(&self) -> JoinHandle<()> {
        let (s, conn, identity, target, synced) = (
            self.session.clone(),
            Arc::clone(&self.conn),
            Arc::clone(&self.identity),
            self.target.clone(),
            self.synced.clone(),
        );
        tokio::spawn(async move {
            let slot = conn.slot();
            let mut backoff = QuickBackoff::default();
            loop {
                match s.client.apiserver_version().await {
                    Ok(v) => {
                        slot.ok();
                        conn.sink(BackendEvent::Server { version: v.git_version });
                        break;
                    }
                    Err(e) => {
                        if let conn::Outcome::Refused(m) | conn::Outcome::Forbidden(m) =
                            slot.failed("read the server's version", &e)
                        {
                            tracing::warn!("{m}");
                        }
                        let wait = backoff.next().unwrap_or(Duration::from_secs(4));
                        tokio::time::sleep(wait).await;
                    }
                }
            }
            drop(slot);
            // Read-only makes no writes: neither who writes (freeze records it) nor what may
            // be written is asked.
            if target.read_only {
                conn.sink(BackendEvent::Notice(format!("connected to {} (read-only)", s.server)));
                return;
            }
            // Asked once the first view has synced: not on the first frame's path.
            synced.wait().await;
            let (who, denied) =
                tokio::join!(connect::identity(&s), connect::denied(&s, &s.namespace));
            if let Ok(mut i) = identity.lock() {
                i.clone_from(&who);
            }
            conn.sink(BackendEvent::Notice(format!("connected to {} as {who}", s.server)));
            conn.sink(BackendEvent::Capabilities(caps(&target, denied)));
        })
    }

    /// A quorum read of `key`, its pods and (RollingUpdate) its namespace's budgets
    /// ([`fresh`]), answered as [`BackendEvent::Read`].
    fn read(&self, key: ObjRef) {
        let (client, conn) = (self.session.client.clone(), Arc::clone(&self.conn));
        tokio::spawn(async move {
            let read = fresh::read(client, &key, Duration::from_secs(10)).await;
            conn.sink(BackendEvent::Read { set: key, read });
        });
    }

    fn write(&mut self, w: crate::backend::Write) {
        let conn = Arc::clone(&self.conn);
        if self.target.read_only {
            let f = Failure::new(
                w.op.describe(),
                FailureKind::Forbidden,
                "--read-only: ststui makes no writes",
            );
            conn.sink(BackendEvent::OpFailed(f.of(w.id)));
            return;
        }
        let parent = |pod: &ObjRef| {
            let (set, _) = crate::core::labels::parent_and_ordinal(&pod.name)?;
            self.focus.iter().find(|(k, _)| k.name == set && k.namespace == pod.namespace)
        };
        if let crate::backend::ClusterOp::DeletePod { pod, .. }
        | crate::backend::ClusterOp::EvictPod { pod, .. } = &w.op
            && let Some((_, tracker)) = parent(pod)
        {
            tracker
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .operator_deleted(&pod.name);
        }
        let writer = write::Writer {
            client: self.session.client.clone(),
            identity: Arc::clone(&self.identity),
            read_back: READ_BACK,
        };
        self.writes.retain(|t| !t.is_finished());
        self.writes.push(tokio::spawn(async move {
            let id = w.id;
            match writer.write(w).await {
                Ok(Written::Unchanged(said) | Written::ReadBack(said)) => {
                    conn.sink(BackendEvent::Notice(said.clone()));
                    conn.sink(BackendEvent::OpDone { id, said: Some(said) });
                }
                Ok(Written::Done) => conn.sink(BackendEvent::OpDone { id, said: None }),
                Err(f) => conn.sink(BackendEvent::OpFailed(f.of(id))),
            }
        }));
    }

    /// Watches the Events about `pod` instead of those about the pod before.
    fn pod_events(&mut self, pod: Option<ObjRef>) {
        if let Some((old, tasks)) = self.pod_events.take() {
            drop(tasks);
            self.forget_events("Pod", &old);
        }
        if let Some(pod) = pod {
            let task = focus::pod_events(&pod, &self.session.clients, &self.conn, &self.synced);
            self.pod_events = Some((pod, focus::Tasks(vec![task])));
        }
    }

    /// The Events about an object no longer watched leave the mirror.
    fn forget_events(&self, kind: &str, obj: &ObjRef) {
        let scope = Scope {
            namespace: Some(obj.namespace.clone()),
            about: Some(format!("{kind}/{}", obj.name)),
            ..Scope::default()
        };
        self.conn.sink(BackendEvent::Listed { kind: ObjKind::Event, scope, objects: Vec::new() });
    }

    /// The sets shown are no longer watched; what they showed leaves the mirror.
    fn close_focus(&mut self) {
        let closed: Vec<_> = self.focus.drain(..).collect();
        self.hub.show(Vec::new());
        for task in self.focus_tasks.drain(..) {
            task.abort();
        }
        let mut namespaces: Vec<&str> = Vec::new();
        for (old, _) in &closed {
            self.forget_events("StatefulSet", old);
            if !namespaces.contains(&old.namespace.as_str()) {
                namespaces.push(&old.namespace);
            }
        }
        for ns in namespaces {
            for kind in [ObjKind::Pod, ObjKind::Revision, ObjKind::Claim] {
                let scope = Scope::namespace(ns);
                self.conn.sink(BackendEvent::Listed { kind, scope, objects: Vec::new() });
            }
        }
    }

    /// Watches `key`'s objects alone (one set shown, with the namespace's budgets and
    /// evictions).
    fn watch_set(&mut self, key: ObjRef) {
        let tracker = Arc::new(Mutex::new(derive::Tracker::named(&key.name)));
        let task = tokio::spawn(focus::focus(
            key.clone(),
            self.session.clients.clone(),
            Arc::clone(&self.conn),
            self.synced.clone(),
            Arc::clone(&tracker),
            true,
        ));
        self.focus.push((key, tracker));
        self.focus_tasks.push(task);
    }

    /// Shows a rollout group: the namespace's sets (the picker's watch, among which a group by
    /// label finds its members, and which tells the members' changes), and one watch per kind
    /// for all the members' objects ([`shared`]).
    fn open_group(&mut self, sets: Vec<ObjRef>) {
        // First: a group by label opened from its one set shown finds its other members there.
        self.picker_beside();
        let shown: Vec<&ObjRef> = self.focus.iter().map(|(k, _)| k).collect();
        if shown.len() == sets.len() && shown.iter().zip(&sets).all(|(a, b)| *a == b) {
            return;
        }
        self.close_focus();
        self.conn.sink(BackendEvent::Listing {
            kind: ObjKind::Pod,
            so_far: 0,
            objects: Vec::new(),
        });
        let shown: Vec<shared::Shown> = (sets.into_iter())
            .map(|k| {
                let tracker = Arc::new(Mutex::new(derive::Tracker::named(&k.name)));
                (k, tracker)
            })
            .collect();
        self.hub.show(shown.clone());
        self.focus_tasks.push(tokio::spawn(shared::group(
            shown.clone(),
            self.hub.subscribe(),
            self.session.clients.clone(),
            Arc::clone(&self.conn),
            self.synced.clone(),
        )));
        self.focus = shown;
    }

    /// Shows one set (its objects watched) or the picker (the sets only).
    fn open(&mut self, set: Option<ObjRef>) {
        self.close_focus();
        match set {
            Some(key) => {
                // Until its pods have listed, the set's grid says so (never "not created").
                self.conn.sink(BackendEvent::Listing {
                    kind: ObjKind::Pod,
                    so_far: 0,
                    objects: Vec::new(),
                });
                self.watch_set(key);
            }
            None => self.picker(Some(self.synced.clone())),
        }
    }

    /// The namespace's sets watched beside a group's view (which says when it has synced).
    fn picker_beside(&mut self) {
        self.picker(None);
    }

    /// The namespace's sets watched (the list's), unless they are already; `synced`: its first
    /// listing is the view's first data.
    fn picker(&mut self, synced: Option<focus::Synced>) {
        if self.picker.is_some() {
            return;
        }
        let ns = (!self.target.all_namespaces).then(|| self.session.namespace.clone());
        self.picker = Some(tokio::spawn(focus::picker(
            ns,
            self.session.clients.clone(),
            Arc::clone(&self.conn),
            synced,
            self.hub.clone(),
        )));
    }
}

/// The backend's clock: wall time, once a second.
/// The session made again from the kubeconfig, a credential plugin run again (`R`).
async fn reread(target: &Target) -> Result<Session, connect::NoSession> {
    credential::forget();
    connect::session(target).await
}

async fn clock(conn: Arc<Conn>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    // A credential plugin slow to answer is said once per wait (the console is drawn meanwhile).
    let mut said = false;
    loop {
        tick.tick().await;
        conn.sink(BackendEvent::Clock { now: k8s_openapi::jiff::Timestamp::now(), speed: 1.0 });
        match credential::pending() {
            Some((plugin, waited)) if !said && waited >= Duration::from_secs(2) => {
                said = true;
                conn.sink(BackendEvent::Notice(format!(
                    "waiting for credentials: the exec credential plugin {plugin:?} has not \
                     answered yet (stopped after {} s; q quits)",
                    credential::WAIT.as_secs()
                )));
            }
            Some(_) => {}
            None => said = false,
        }
    }
}
