//! Real clusters through kube-rs: the backend behind `ststui [--context C] [-n NS] [NAME]`.
//! kube-controller-manager drives the set; this backend watches it (never polls), reports what
//! it sees as [`BackendEvent`]s, and carries out the console's writes as patches.
//!
//! A tokio runtime on a thread of its own (the console never sees tokio). What it watches: the
//! sets of the namespace (or every namespace) while the picker is shown, or the opened set by
//! name, with its pods, ControllerRevisions and claims by the set's selector, and the Events
//! about the set and its pods. It reports the server's version (the advisor reproduces that
//! release), who we are, which writes we may make (SelfSubjectAccessReview), the connection's
//! state, and a timeline derived from the changes (`derive`). Errors never end it: the
//! watchers retry within seconds and the console shows the last data as stale meanwhile.
//!
//! Owns: the cluster side. Must not: touch the app, the terminal or the simulator.

mod connect;
pub(crate) mod derive;
mod watch;
pub(crate) mod write;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{Event as KubeEvent, PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::Api;
use kube::runtime::watcher;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub use connect::{Session, Target, identity as connect_identity, session};
pub use watch::QuickBackoff;
pub use write::{OnceError, write_once};

use crate::backend::{
    Backend, BackendEvent, Capabilities, Failure, FailureKind, ObjKind, ObjRef, Object, Op, Scope,
    ViewOp, WriteKind,
};
use derive::Tracker;
use watch::{Conn, Seen};

/// Where the backend reports; called from several tasks.
pub type SharedSink = Arc<dyn Fn(BackendEvent) + Send + Sync>;

/// The query form of a label selector.
pub fn selector_string(sel: &LabelSelector) -> String {
    crate::core::selector::to_query(sel)
}

/// How long dropping the backend waits for its thread.
const STOP_WAIT: Duration = Duration::from_millis(200);

/// The console's handle on a cluster; dropping it stops the watchers.
pub struct ClusterBackend {
    tx: mpsc::UnboundedSender<Op>,
    caps: Capabilities,
    namespace: String,
    server: String,
    done: std::sync::mpsc::Receiver<()>,
}

impl ClusterBackend {
    /// Reads the kubeconfig and starts watching. Fails (before any screen) only when the
    /// kubeconfig cannot be used; an unreachable server is a banner, not an error.
    pub fn start(target: Target, sink: SharedSink) -> Result<ClusterBackend, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("ststui-kube")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the client runtime: {e}"))?;
        let session = runtime.block_on(connect::session(&target))?;
        let namespace = session.namespace.clone();
        let server = session.server.clone();
        let caps = caps(&target, Default::default());
        let (tx, rx) = mpsc::unbounded_channel();
        let (done_tx, done) = std::sync::mpsc::channel();
        let engine = Engine::new(target, session, sink);
        std::thread::Builder::new()
            .name("ststui-kube".into())
            .spawn(move || {
                let _done = done_tx;
                runtime.block_on(engine.run(rx));
                runtime.shutdown_timeout(Duration::from_millis(100));
            })
            .map_err(|e| format!("cannot start the client thread: {e}"))?;
        Ok(ClusterBackend { tx, caps, namespace, server, done })
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

struct Engine {
    target: Target,
    session: connect::Session,
    conn: Arc<Conn>,
    identity: Arc<Mutex<String>>,
    picker: Option<JoinHandle<()>>,
    focus: Option<(ObjRef, JoinHandle<()>)>,
    synced: Arc<AtomicBool>,
}

impl Engine {
    fn new(target: Target, session: connect::Session, sink: SharedSink) -> Engine {
        let identity = Arc::new(Mutex::new(session.user.clone()));
        Engine {
            target,
            session,
            conn: Conn::new(sink),
            identity,
            picker: None,
            focus: None,
            synced: Arc::new(AtomicBool::new(false)),
        }
    }

    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Op>) {
        let clock = tokio::spawn(clock(Arc::clone(&self.conn)));
        let mut preflight = self.preflight();
        match self.target.name.clone() {
            Some(name) => self.open(Some(ObjRef::new(self.session.namespace.clone(), name))),
            None => self.open(None),
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
                Op::View(ViewOp::Reconnect) => match connect::session(&self.target).await {
                    Ok(s) => {
                        self.session = s;
                        preflight.abort();
                        preflight = self.preflight();
                        let shown = self.focus.as_ref().map(|(k, _)| k.clone());
                        self.stop_watching();
                        self.open(shown);
                        self.conn.sink(BackendEvent::Notice(
                            "credentials read again: reconnecting".into(),
                        ));
                    }
                    Err(e) => self.conn.sink(BackendEvent::Error(e)),
                },
            }
        }
        clock.abort();
        preflight.abort();
        self.stop_watching();
    }

    fn stop_watching(&mut self) {
        if let Some(p) = self.picker.take() {
            p.abort();
        }
        if let Some((_, f)) = self.focus.take() {
            f.abort();
        }
    }

    /// The server's version (retried until it answers), who we are, what we may write.
    fn preflight(&self) -> JoinHandle<()> {
        let (s, conn, identity, target) = (
            self.session.clone(),
            Arc::clone(&self.conn),
            Arc::clone(&self.identity),
            self.target.clone(),
        );
        tokio::spawn(async move {
            loop {
                match s.client.apiserver_version().await {
                    Ok(v) => {
                        conn.ok();
                        conn.sink(BackendEvent::Server { version: v.git_version });
                        break;
                    }
                    Err(e) => {
                        conn.error("read the server's version", &e);
                        tokio::time::sleep(Duration::from_secs(2)).await;
                    }
                }
            }
            let who = connect::identity(&s).await;
            if let Ok(mut i) = identity.lock() {
                i.clone_from(&who);
            }
            conn.sink(BackendEvent::Notice(format!("connected to {} as {who}", s.server)));
            let denied = connect::denied(&s, &s.namespace).await;
            conn.sink(BackendEvent::Capabilities(caps(&target, denied)));
        })
    }

    fn write(&self, w: crate::backend::Write) {
        let conn = Arc::clone(&self.conn);
        if self.target.read_only {
            let f = Failure::new(
                w.op.describe(),
                FailureKind::Forbidden,
                "--read-only: ststui makes no writes",
            );
            conn.sink(BackendEvent::OpFailed(f));
            return;
        }
        let writer = write::Writer {
            client: self.session.client.clone(),
            identity: Arc::clone(&self.identity),
        };
        tokio::spawn(async move {
            match writer.write(w).await {
                Ok(Some(said)) => conn.sink(BackendEvent::Notice(said)),
                Ok(None) => {}
                Err(f) => conn.sink(BackendEvent::OpFailed(f)),
            }
        });
    }

    /// Shows one set (its objects watched) or the picker (the sets only).
    fn open(&mut self, set: Option<ObjRef>) {
        if let Some((old, task)) = self.focus.take() {
            task.abort();
            // What is no longer shown leaves the mirror.
            for kind in [ObjKind::Pod, ObjKind::Revision, ObjKind::Claim] {
                let scope = Scope::namespace(old.namespace.clone());
                self.conn.sink(BackendEvent::Listed { kind, scope, objects: Vec::new() });
            }
        }
        match set {
            Some(key) => {
                let task = tokio::spawn(focus(
                    key.clone(),
                    self.session.client.clone(),
                    Arc::clone(&self.conn),
                    Arc::clone(&self.synced),
                ));
                self.focus = Some((key, task));
            }
            None if self.picker.is_none() => {
                let ns = (!self.target.all_namespaces).then(|| self.session.namespace.clone());
                self.picker = Some(tokio::spawn(picker(
                    ns,
                    self.session.client.clone(),
                    Arc::clone(&self.conn),
                    Arc::clone(&self.synced),
                )));
            }
            None => {}
        }
    }
}

/// The backend's clock: wall time, once a second.
async fn clock(conn: Arc<Conn>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        conn.sink(BackendEvent::Clock { now: k8s_openapi::jiff::Timestamp::now(), speed: 1.0 });
    }
}

fn mark_synced(conn: &Conn, synced: &AtomicBool) {
    if let Some(ev) = synced_now(synced) {
        conn.sink(ev);
    }
}

/// `Synced`, the first time only.
fn synced_now(synced: &AtomicBool) -> Option<BackendEvent> {
    (!synced.swap(true, Ordering::SeqCst)).then_some(BackendEvent::Synced)
}

/// The picker: every set of the namespace (`None`: of every namespace).
async fn picker(
    ns: Option<String>,
    client: kube::Client,
    conn: Arc<Conn>,
    synced: Arc<AtomicBool>,
) {
    let api: Api<StatefulSet> = match &ns {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    };
    let scope = Scope { namespace: ns.clone(), ..Scope::default() };
    let what = format!("watch statefulsets in {}", ns.as_deref().unwrap_or("every namespace"));
    watch::run(
        api,
        watcher::Config::default(),
        ObjKind::Set,
        scope,
        what,
        conn,
        |s| Object::Set(std::sync::Arc::new(s)),
        |_| Vec::new(),
        move |_| synced_now(&synced),
        true,
    )
    .await;
}

/// One set, shown: the set by name; once its selector is known, its pods, revisions and
/// claims by that selector, and the Events about it and its pods. A new selector restarts them.
async fn focus(key: ObjRef, client: kube::Client, conn: Arc<Conn>, synced: Arc<AtomicBool>) {
    let tracker = Arc::new(Mutex::new(Tracker::default()));
    let (sel_tx, mut sel_rx) = tokio::sync::watch::channel::<Option<Option<LabelSelector>>>(None);
    let sets: Api<StatefulSet> = Api::namespaced(client.clone(), &key.namespace);
    let cfg = watcher::Config::default().fields(&format!("metadata.name={}", key.name));
    let scope = Scope {
        namespace: Some(key.namespace.clone()),
        name: Some(key.name.clone()),
        ..Scope::default()
    };
    let (t, tx1, tx2) = (Arc::clone(&tracker), sel_tx.clone(), sel_tx);
    let what = format!("watch statefulset {key}");
    let set_task = tokio::spawn(watch::run(
        sets,
        cfg,
        ObjKind::Set,
        scope,
        what,
        Arc::clone(&conn),
        |s| Object::Set(std::sync::Arc::new(s)),
        move |seen| {
            let mut tr = t.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match seen {
                Seen::Applied(s) => {
                    let _ = tx1.send(Some(Some(s.spec.selector.clone())));
                    tr.set(s)
                }
                Seen::Listed(list) => list.first().map(|s| tr.set(s)).unwrap_or_default(),
                Seen::Deleted(_) => {
                    let _ = tx1.send(Some(None));
                    Vec::new()
                }
            }
        },
        move |list: &[StatefulSet]| {
            let _ = tx2.send(Some(list.first().map(|s| s.spec.selector.clone())));
            None
        },
        true,
    ));
    let mut children: Vec<JoinHandle<()>> = Vec::new();
    let mut current: Option<LabelSelector> = None;
    while sel_rx.changed().await.is_ok() {
        let Some(wanted) = sel_rx.borrow_and_update().clone() else { continue };
        if wanted == current && !children.is_empty() {
            continue;
        }
        for c in children.drain(..) {
            c.abort();
        }
        current.clone_from(&wanted);
        match wanted {
            None => mark_synced(&conn, &synced),
            Some(sel) => {
                children = watch_set_objects(&key, &sel, &client, &conn, &tracker, &synced)
            }
        }
    }
    set_task.abort();
    for c in children {
        c.abort();
    }
}

/// The `listed` callback of one of several watchers: its first complete listing counts
/// `pending` down, and the last of them to list sends `Synced` (once per backend).
fn first_listing<K>(
    pending: &Arc<AtomicUsize>,
    synced: &Arc<AtomicBool>,
) -> impl FnMut(&[K]) -> Option<BackendEvent> + Send + 'static {
    let (pending, synced) = (Arc::clone(pending), Arc::clone(synced));
    let mut first = true;
    move |_| {
        let last = std::mem::take(&mut first) && pending.fetch_sub(1, Ordering::SeqCst) == 1;
        if last { synced_now(&synced) } else { None }
    }
}

/// The pods, revisions and claims of a set (by its selector) and its Events. Synced once the
/// three have listed.
fn watch_set_objects(
    key: &ObjRef,
    sel: &LabelSelector,
    client: &kube::Client,
    conn: &Arc<Conn>,
    tracker: &Arc<Mutex<Tracker>>,
    synced: &Arc<AtomicBool>,
) -> Vec<JoinHandle<()>> {
    let ns = key.namespace.clone();
    let labels = selector_string(sel);
    let scope = Scope { namespace: Some(ns.clone()), selector: Some(sel.clone()), name: None };
    // Pages of 100 keep the listing's transient memory small (kube-rs's default is 500).
    let cfg = || watcher::Config::default().labels(&labels).page_size(100);
    let pending = Arc::new(AtomicUsize::new(3));
    let mut tasks = Vec::new();
    let t = Arc::clone(tracker);
    tasks.push(tokio::spawn(watch::run(
        Api::<Pod>::namespaced(client.clone(), &ns),
        cfg(),
        ObjKind::Pod,
        scope.clone(),
        format!("watch pods in {ns}"),
        Arc::clone(conn),
        |p| Object::Pod(std::sync::Arc::new(p)),
        move |seen| {
            let mut tr = t.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match seen {
                Seen::Listed(l) => tr.pods_listed(l),
                Seen::Applied(p) => tr.pod(p, false),
                Seen::Deleted(p) => tr.pod(p, true),
            }
        },
        first_listing::<Pod>(&pending, synced),
        true,
    )));
    let t = Arc::clone(tracker);
    tasks.push(tokio::spawn(watch::run(
        Api::<ControllerRevision>::namespaced(client.clone(), &ns),
        cfg(),
        ObjKind::Revision,
        scope.clone(),
        format!("watch controllerrevisions in {ns}"),
        Arc::clone(conn),
        |r| Object::Revision(std::sync::Arc::new(r)),
        move |seen| {
            let mut tr = t.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match seen {
                Seen::Listed(l) => tr.revisions_listed(l),
                Seen::Applied(r) => tr.revision(r),
                Seen::Deleted(_) => Vec::new(),
            }
        },
        first_listing::<ControllerRevision>(&pending, synced),
        true,
    )));
    tasks.push(tokio::spawn(watch::run(
        Api::<PersistentVolumeClaim>::namespaced(client.clone(), &ns),
        cfg(),
        ObjKind::Claim,
        scope,
        format!("watch persistentvolumeclaims in {ns}"),
        Arc::clone(conn),
        |c| Object::Claim(std::sync::Arc::new(c)),
        |_| Vec::new(),
        first_listing::<PersistentVolumeClaim>(&pending, synced),
        true,
    )));
    for (kind, name_ok) in [("StatefulSet", true), ("Pod", false)] {
        let fields = if name_ok {
            format!("involvedObject.kind=StatefulSet,involvedObject.name={}", key.name)
        } else {
            format!("involvedObject.kind={kind}")
        };
        let (t, set_name) = (Arc::clone(tracker), key.name.clone());
        tasks.push(tokio::spawn(watch::run(
            Api::<KubeEvent>::namespaced(client.clone(), &ns),
            watcher::Config::default().fields(&fields),
            ObjKind::Event,
            Scope::namespace(ns.clone()),
            format!("watch events in {ns}"),
            Arc::clone(conn),
            |e| Object::Event(std::sync::Arc::new(e)),
            move |seen| {
                let mut tr = t.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let about_us = |e: &KubeEvent| {
                    let n = e.involved_object.name.as_deref().unwrap_or_default();
                    n == set_name || crate::core::labels::is_member_name(&set_name, n)
                };
                match seen {
                    Seen::Listed(l) => l
                        .iter()
                        .filter(|e| about_us(e) && recent(e))
                        .flat_map(|e| tr.event(e))
                        .collect(),
                    Seen::Applied(e) if about_us(e) => tr.event(e),
                    _ => Vec::new(),
                }
            },
            |_: &[KubeEvent]| None,
            false,
        )));
    }
    tasks
}

/// Events of the last ten minutes (older ones at start are history, not news).
fn recent(e: &KubeEvent) -> bool {
    let at = e.last_timestamp.as_ref().map(|t| t.0).or(e.event_time.as_ref().map(|t| t.0));
    let cutoff =
        k8s_openapi::jiff::Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_secs(600);
    at.is_some_and(|t| t >= cutoff)
}
