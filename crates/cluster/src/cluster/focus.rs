//! What the backend watches: the picker (the sets of a namespace, or of every namespace), and
//! one set shown (or each set of a rollout group shown as one) — the set by name and, once its selector is known, its pods, revisions and
//! claims by that selector, the Events about it and its pods, and the namespace's disruption
//! budgets. A new selector restarts them.
//!
//! `Synced` goes out once the set and the kinds the console needs (pods, revisions) have listed
//! or are known unreadable; claims and Events never hold it up. Owns: the watchers' specs and
//! their timeline derivation. Must not: touch the app.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{Event as KubeEvent, PersistentVolumeClaim, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::runtime::watcher;
use tokio::task::JoinHandle;

use super::Clients;
use super::conn::Conn;
use super::derive::Tracker;
use super::watch::{self, Seen, Spec};
use crate::backend::{BackendEvent, ObjKind, ObjRef, Object, Scope};

/// Something that happens once, awaited: a set's first frame's data listed (its Events wait for
/// it), or the backend's first view synced ([`Synced`]).
#[derive(Clone)]
pub(super) struct Latch(Arc<tokio::sync::watch::Sender<bool>>);

impl Latch {
    pub(super) fn new() -> Latch {
        Latch(Arc::new(tokio::sync::watch::channel(false).0))
    }

    /// Sets it: whether this was the first time.
    pub(super) fn set(&self) -> bool {
        self.0.send_if_modified(|s| !std::mem::replace(s, true))
    }

    /// Returns once it is set.
    pub(super) async fn wait(&self) {
        // The sender lives as long as `self`: the wait ends only when set.
        let _ = self.0.subscribe().wait_for(|s| *s).await;
    }
}

/// Whether the console has had its first view's data (`Synced`, sent once per backend): what
/// is optional (the selected pod's Events, who we are, what we may write) waits for it, so it
/// is not on the first frame's path.
#[derive(Clone)]
pub(super) struct Synced(Latch);

impl Synced {
    pub(super) fn new() -> Synced {
        Synced(Latch::new())
    }

    /// `Synced`, the first time only.
    pub(super) fn now(&self) -> Option<BackendEvent> {
        self.0.set().then_some(BackendEvent::Synced)
    }

    pub(super) fn mark(&self, conn: &Conn) {
        if let Some(ev) = self.now() {
            conn.sink(ev);
        }
    }

    /// Returns once the first view has synced.
    pub(super) async fn wait(&self) {
        self.0.wait().await;
    }
}

/// The picker: every set of the namespace (`None`: of every namespace), told to `hub` (the
/// sets of a group shown hear of their changes there). `synced`: the view it is (its first
/// listing is the first view's data), or `None` beside a group's view (the group's pods say it).
pub(super) async fn picker(
    ns: Option<String>,
    clients: Clients,
    conn: Arc<Conn>,
    synced: Option<Synced>,
    hub: super::shared::Hub,
) {
    let spec = Spec {
        api: watch::api::<StatefulSet>,
        namespace: ns.clone(),
        config: watcher::Config::default(),
        kind: ObjKind::Set,
        scope: Scope { namespace: ns.clone(), ..Scope::default() },
        what: format!("statefulsets in {}", ns.as_deref().unwrap_or("every namespace")),
        hint: ns.is_none().then(|| "pass -n NAMESPACE to list the sets of one namespace".into()),
        wrap: |s| Object::Set(Arc::new(s)),
        keep: None,
        split: None,
    };
    // A picker that may not list sets has nothing more to wait for: synced either way.
    let told = hub.clone();
    let listed = move |first: Option<Option<&StatefulSet>>| {
        if first.is_none() {
            told.unreadable();
        }
        synced.as_ref().and_then(Synced::now)
    };
    watch::run(spec, &clients, &conn, move |seen| hub.seen(seen), listed).await;
}

/// One set, shown: the set by name; once its selector is known, its pods, revisions and
/// claims by that selector, and the Events about it and its pods.
pub(super) async fn focus(
    key: ObjRef,
    clients: Clients,
    conn: Arc<Conn>,
    synced: Synced,
    tracker: Arc<Mutex<Tracker>>,
    extras: bool,
) {
    // What the children watch by: the set's selector and whether it has claim templates
    // (`Some(None)`: the set is gone or unreadable).
    let (sel_tx, mut sel_rx) = tokio::sync::watch::channel::<Option<Option<Wanted>>>(None);
    let spec = Spec {
        api: watch::api::<StatefulSet>,
        namespace: Some(key.namespace.clone()),
        config: watcher::Config::default().fields(&format!("metadata.name={}", key.name)),
        kind: ObjKind::Set,
        scope: Scope {
            namespace: Some(key.namespace.clone()),
            name: Some(key.name.clone()),
            ..Scope::default()
        },
        what: format!("statefulset {key}"),
        hint: None,
        wrap: |s| Object::Set(Arc::new(s)),
        keep: None,
        split: None,
    };
    let (t, tx1, tx2) = (Arc::clone(&tracker), sel_tx.clone(), sel_tx);
    let (cl, cn) = (clients.clone(), Arc::clone(&conn));
    let set_task = tokio::spawn(async move {
        let derive = move |seen: Seen<'_, StatefulSet>| {
            let mut tr = t.lock().unwrap_or_else(PoisonError::into_inner);
            match seen {
                Seen::Applied(s) => {
                    let _ = tx1.send(Some(Some(Wanted::of(s))));
                    tr.set(s)
                }
                Seen::Listed(list) => list.first().map(|s| tr.set(s)).unwrap_or_default(),
                Seen::Deleted(_) => {
                    let _ = tx1.send(Some(None));
                    Vec::new()
                }
            }
        };
        let listed = move |first: Option<Option<&StatefulSet>>| {
            // An unreadable set: nothing more will list.
            let _ = tx2.send(Some(first.flatten().map(Wanted::of)));
            None
        };
        watch::run(spec, &cl, &cn, derive, listed).await;
    });
    // Aborted when this task is (the console opened another set): a dropped JoinHandle
    // would leave its task running, still sending the old set's objects.
    let _own = Tasks(vec![set_task]);
    let mut children = Tasks(Vec::new());
    let mut current: Option<Wanted> = None;
    while sel_rx.changed().await.is_ok() {
        let Some(wanted) = sel_rx.borrow_and_update().clone() else { continue };
        if wanted == current && !children.0.is_empty() {
            continue;
        }
        for c in children.0.drain(..) {
            c.abort();
        }
        current.clone_from(&wanted);
        match wanted {
            None => synced.mark(&conn),
            Some(wanted) => {
                let w =
                    Watching { key: &key, sel: &wanted.selector, clients: &clients, conn: &conn };
                children.0 = w.start(&tracker, &synced, wanted.claims, extras);
            }
        }
    }
}

/// Tasks that end with their owner: aborted when dropped.
pub(super) struct Tasks(pub(super) Vec<JoinHandle<()>>);

impl Drop for Tasks {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

/// The Events about one pod, sent to the console: a field selector on the involved object, so
/// a 10,000-pod set costs one pod's Events. Watched once the first view has synced.
pub(super) fn pod_events(
    pod: &ObjRef,
    clients: &Clients,
    conn: &Arc<Conn>,
    synced: &Synced,
) -> JoinHandle<()> {
    let fields = format!("involvedObject.kind=Pod,involvedObject.name={}", pod.name);
    let spec = Spec {
        api: watch::api::<KubeEvent>,
        namespace: Some(pod.namespace.clone()),
        config: watcher::Config::default().fields(&fields),
        kind: ObjKind::Event,
        scope: Scope {
            namespace: Some(pod.namespace.clone()),
            about: Some(format!("Pod/{}", pod.name)),
            ..Scope::default()
        },
        // As the namespace's Events watch says it: one permission, one message.
        what: format!("events in {}", pod.namespace),
        hint: None,
        wrap: |e| Object::Event(Arc::new(e)),
        keep: None,
        split: None,
    };
    let (cl, cn, synced) = (clients.clone(), Arc::clone(conn), synced.clone());
    tokio::spawn(async move {
        synced.wait().await;
        watch::run(spec, &cl, &cn, |_| Vec::new(), |_| None).await;
    })
}

/// What a set's children are watched by.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Wanted {
    pub(super) selector: LabelSelector,
    /// The set has volumeClaimTemplates: its claims are watched (otherwise no claim is its).
    pub(super) claims: bool,
}

impl Wanted {
    pub(super) fn of(s: &StatefulSet) -> Wanted {
        let claims = s.spec.volume_claim_templates.as_ref().is_some_and(|t| !t.is_empty());
        Wanted { selector: s.spec.selector.clone(), claims }
    }
}

/// The `listed` callback of a watcher the first sync waits on: its first complete listing (or
/// the kind found unreadable: it never will list) counts `pending` down, and the last of them
/// sends `Synced` (once per backend) and sets `ready` (what waits for the first frame's data).
pub(super) fn first_listing<K>(
    pending: &Arc<AtomicUsize>,
    synced: &Synced,
    ready: &Latch,
) -> impl FnMut(Option<Option<&K>>) -> Option<BackendEvent> + Send + 'static {
    let (pending, synced, ready) = (Arc::clone(pending), synced.clone(), ready.clone());
    let mut first = true;
    move |_| {
        let last = std::mem::take(&mut first) && pending.fetch_sub(1, Ordering::SeqCst) == 1;
        if last {
            ready.set();
            synced.now()
        } else {
            None
        }
    }
}

/// The watchers of one set's objects.
pub(super) struct Watching<'a> {
    pub(super) key: &'a ObjRef,
    pub(super) sel: &'a LabelSelector,
    pub(super) clients: &'a Clients,
    pub(super) conn: &'a Arc<Conn>,
}

impl Watching<'_> {
    fn spec<K>(&self, kind: ObjKind, plural: &str, wrap: fn(K) -> Object) -> Spec<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        let ns = self.key.namespace.clone();
        let labels = super::selector_string(self.sel);
        Spec {
            api: watch::api::<K>,
            namespace: Some(ns.clone()),
            config: watcher::Config::default().labels(&labels),
            kind,
            scope: Scope {
                namespace: Some(ns.clone()),
                selector: Some(self.sel.clone()),
                ..Scope::default()
            },
            what: format!("{plural} in {ns}"),
            hint: None,
            wrap,
            keep: None,
            split: None,
        }
    }

    /// Pods, revisions, claims (by the selector; only with claim templates) and Events. Synced
    /// once pods and revisions have listed, or are known unreadable; the Events start only
    /// then, so nothing optional is on the first frame's path. `extras`: the namespace's
    /// budgets and evictions too (one set of a group's view watches them for all).
    fn start(
        &self,
        tracker: &Arc<Mutex<Tracker>>,
        synced: &Synced,
        claims: bool,
        extras: bool,
    ) -> Vec<JoinHandle<()>> {
        let pending = Arc::new(AtomicUsize::new(2));
        let ready = Latch::new();
        let mut tasks = Vec::new();
        let (t, cl, cn) = (Arc::clone(tracker), self.clients.clone(), Arc::clone(self.conn));
        let spec = self.spec::<Pod>(ObjKind::Pod, "pods", |p| Object::Pod(Arc::new(p)));
        let listed = first_listing::<Pod>(&pending, synced, &ready);
        tasks.push(tokio::spawn(async move {
            let derive = move |seen: Seen<'_, Pod>| {
                let mut tr = t.lock().unwrap_or_else(PoisonError::into_inner);
                match seen {
                    Seen::Listed(l) => tr.pods_listed(l),
                    Seen::Applied(p) => tr.pod(p, false),
                    Seen::Deleted(p) => tr.pod(p, true),
                }
            };
            watch::run(spec, &cl, &cn, derive, listed).await;
        }));
        let (t, cl, cn) = (Arc::clone(tracker), self.clients.clone(), Arc::clone(self.conn));
        let spec = self.spec::<ControllerRevision>(ObjKind::Revision, "controllerrevisions", |r| {
            Object::Revision(Arc::new(r))
        });
        let listed = first_listing::<ControllerRevision>(&pending, synced, &ready);
        tasks.push(tokio::spawn(async move {
            let derive = move |seen: Seen<'_, ControllerRevision>| {
                let mut tr = t.lock().unwrap_or_else(PoisonError::into_inner);
                match seen {
                    Seen::Listed(l) => tr.revisions_listed(l),
                    Seen::Applied(r) => tr.revision(r),
                    Seen::Deleted(_) => Vec::new(),
                }
            };
            watch::run(spec, &cl, &cn, derive, listed).await;
        }));
        if claims {
            let (cl, cn) = (self.clients.clone(), Arc::clone(self.conn));
            let spec =
                self.spec::<PersistentVolumeClaim>(ObjKind::Claim, "persistentvolumeclaims", |c| {
                    Object::Claim(Arc::new(c))
                });
            tasks.push(tokio::spawn(async move {
                watch::run(spec, &cl, &cn, |_| Vec::new(), |_| None).await;
            }));
        }
        tasks.extend(self.events(tracker, &ready));
        if extras {
            tasks.push(self.budgets(&ready));
            tasks.push(self.evictions(&ready));
        }
        tasks
    }

    /// The namespace's PodDisruptionBudgets (a plan's RollingUpdate step opens only while
    /// those selecting the set's pods allow a disruption; a budget's selector cannot be
    /// matched by the server, so all of the namespace's, which are few). Started once the first
    /// frame's data has listed: never on its path.
    pub(super) fn budgets(&self, ready: &Latch) -> JoinHandle<()> {
        let spec = self.whole_namespace::<PodDisruptionBudget>(
            ObjKind::Budget,
            "poddisruptionbudgets",
            |b| Object::Budget(Arc::new(b)),
        );
        let (cl, cn, ready) = (self.clients.clone(), Arc::clone(self.conn), ready.clone());
        tokio::spawn(async move {
            ready.wait().await;
            watch::run(spec, &cl, &cn, |_| Vec::new(), |_| None).await;
        })
    }

    /// A watch of every object of a kind in the set's namespace (`plural` names it).
    fn whole_namespace<K>(&self, kind: ObjKind, plural: &str, wrap: fn(K) -> Object) -> Spec<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        let ns = self.key.namespace.clone();
        Spec {
            api: watch::api::<K>,
            namespace: Some(ns.clone()),
            config: watcher::Config::default(),
            kind,
            scope: Scope::namespace(ns.clone()),
            what: format!("{plural} in {ns}"),
            hint: None,
            wrap,
            keep: None,
            split: None,
        }
    }

    /// The namespace's Evictions (`lifecycle.k8s.io/v1alpha1`, the EvictionRequest API of
    /// Kubernetes 1.37, off by default): what a pod's detail shows of its eviction requests and
    /// responders. Only where the server says it serves them (discovery, once the first frame's
    /// data has listed); elsewhere nothing is asked.
    pub(super) fn evictions(&self, ready: &Latch) -> JoinHandle<()> {
        use crate::backend::lifecycle::{Eviction, GROUP, PLURAL, VERSION};
        let what = format!("{PLURAL}.{GROUP}");
        let spec = self.whole_namespace::<Eviction>(ObjKind::Eviction, &what, |e| {
            Object::Eviction(Arc::new(e))
        });
        let (cl, cn, ready) = (self.clients.clone(), Arc::clone(self.conn), ready.clone());
        tokio::spawn(async move {
            ready.wait().await;
            let served = cl.client().list_api_group_resources(&format!("{GROUP}/{VERSION}")).await;
            match served {
                Ok(list) if list.resources.iter().any(|r| r.name == PLURAL) => {
                    watch::run(spec, &cl, &cn, |_| Vec::new(), |_| None).await;
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!("no {GROUP}/{VERSION} here: {}", super::trouble::brief(&e))
                }
            }
        })
    }

    /// The Events about the set (all of them, by a field selector on the involved object: the
    /// controller pane reads its FailedCreate and the successes after it) and, from now on, the
    /// namespace's Warnings (`type=Warning`) about its pods, as timeline lines; never the
    /// namespace's history. Both start once the first frame's data has listed (`ready`).
    fn events(&self, tracker: &Arc<Mutex<Tracker>>, ready: &Latch) -> [JoinHandle<()>; 2] {
        let ns = self.key.namespace.clone();
        let set = self.key.name.clone();
        let spec =
            |fields: String, about: Option<String>, keep: Option<watch::Keep<KubeEvent>>| Spec {
                api: watch::api::<KubeEvent>,
                namespace: Some(ns.clone()),
                config: watcher::Config::default().fields(&fields),
                kind: ObjKind::Event,
                scope: Scope { namespace: Some(ns.clone()), about, ..Scope::default() },
                what: format!("events in {ns}"),
                hint: None,
                wrap: |e| Object::Event(Arc::new(e)),
                keep,
                split: None,
            };
        let about_set = spec(
            format!("involvedObject.kind=StatefulSet,involvedObject.name={set}"),
            Some(format!("StatefulSet/{set}")),
            None,
        );
        // Timeline lines only: nothing of this watch is held (no scope to list into), and it
        // lists nothing (a namespace's Warnings may be thousands, none of them news).
        let warnings = spec("type=Warning".into(), None, Some(Box::new(|_: &KubeEvent| false)));
        let of_pods = move |e: &KubeEvent| {
            e.involved_object.kind.as_deref() == Some("Pod")
                && crate::core::labels::is_member_name(
                    &set,
                    e.involved_object.name.as_deref().unwrap_or_default(),
                )
        };
        [
            self.events_task(tracker, ready, about_set, |_: &KubeEvent| true, false),
            self.events_task(tracker, ready, warnings, of_pods, true),
        ]
    }

    /// One watch of Events, started once `ready`: those `about` it (recent ones at first) are
    /// timeline lines. `from_now`: the changes only, never what exists ([`super::tail`]).
    fn events_task(
        &self,
        tracker: &Arc<Mutex<Tracker>>,
        ready: &Latch,
        spec: Spec<KubeEvent>,
        about: impl Fn(&KubeEvent) -> bool + Send + 'static,
        from_now: bool,
    ) -> JoinHandle<()> {
        let t = Arc::clone(tracker);
        let (cl, cn) = (self.clients.clone(), Arc::clone(self.conn));
        let ready = ready.clone();
        tokio::spawn(async move {
            ready.wait().await;
            let derive = move |seen: Seen<'_, KubeEvent>| {
                let mut tr = t.lock().unwrap_or_else(PoisonError::into_inner);
                match seen {
                    Seen::Listed(l) => l
                        .iter()
                        .filter(|e| about(e) && recent(e))
                        .flat_map(|e| tr.event(e))
                        .collect(),
                    // From now: one older than ten minutes is history (a server that ignores
                    // `sendInitialEvents=false` sends what exists).
                    Seen::Applied(e) if about(e) && (!from_now || recent(e)) => tr.event(e),
                    _ => Vec::new(),
                }
            };
            if from_now {
                super::tail::run(spec, &cl, &cn, derive).await;
            } else {
                watch::run(spec, &cl, &cn, derive, |_| None).await;
            }
        })
    }
}

/// Events of the last ten minutes (older ones at start are history, not news).
pub(super) fn recent(e: &KubeEvent) -> bool {
    let at = e.last_timestamp.as_ref().map(|t| t.0).or(e.event_time.as_ref().map(|t| t.0));
    let cutoff =
        k8s_openapi::jiff::Timestamp::now() - k8s_openapi::jiff::SignedDuration::from_secs(600);
    at.is_some_and(|t| t >= cutoff)
}
