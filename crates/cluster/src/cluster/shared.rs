//! Several sets shown at once (a rollout group's, a fleet's members in one cluster) on **one
//! watch per kind** for all of them, not one per set: a group of 64 sets held ~530 connections
//! when each set had its own watchers (a file-descriptor limit of 1,024 is near at three
//! clusters). Here the namespace's sets come from the picker's one watch ([`Hub`]), and the
//! members' pods, revisions, claims, the Events about them and the Warnings about their pods
//! each come from one watch of the namespace, narrowed on the server by a selector covering
//! every member's (`core::selector::covering`) and matched here to each member by its own
//! selector and name; what matches none is dropped before the console sees it, and pruned as
//! every watch's objects are (`lean`). Each member keeps its own timeline tracker.
//!
//! Owns: dispatching the shared watches' objects to the members. Must not: touch the app.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{Event as KubeEvent, PersistentVolumeClaim, Pod};
use kube::runtime::watcher;
use tokio::sync::watch as channel;
use tokio::task::JoinHandle;

use super::Clients;
use super::conn::Conn;
use super::derive::Tracker;
use super::focus::{self, Latch, Synced, Tasks, Wanted, Watching};
use super::watch::{self, Seen, Spec, Split};
use crate::backend::{EventKind, ObjKind, ObjRef, Object, Scope};
use crate::core::selector::{Selector, covering, to_query};

/// A set shown among several: its key and its timeline's tracker.
pub(super) type Shown = (ObjRef, Arc<Mutex<Tracker>>);

/// What every set is watched by, as the picker last saw it (`None`: not listed yet).
type Known = Option<BTreeMap<ObjRef, Wanted>>;

/// Between the picker's watch of the namespace's sets and the sets shown as a group: each
/// member's tracker hears of its set's changes, and what each set's objects are watched by
/// (its selector, whether it has claims) is published, so the group's shared watches start once
/// the sets have listed and start again only when a member appears, goes or changes selector.
#[derive(Clone)]
pub(super) struct Hub(Arc<HubInner>);

struct HubInner {
    shown: Mutex<Vec<Shown>>,
    known: channel::Sender<Known>,
}

impl Default for Hub {
    fn default() -> Hub {
        Hub(Arc::new(HubInner { shown: Mutex::default(), known: channel::channel(None).0 }))
    }
}

impl Hub {
    /// The sets shown from now on (none: no group).
    pub(super) fn show(&self, shown: Vec<Shown>) {
        *self.0.shown.lock().unwrap_or_else(PoisonError::into_inner) = shown;
    }

    pub(super) fn subscribe(&self) -> channel::Receiver<Known> {
        self.0.known.subscribe()
    }

    /// The sets may not be listed: nothing is known of any (a group shows none of them).
    pub(super) fn unreadable(&self) {
        self.0.known.send_if_modified(|k| k.replace(BTreeMap::new()).is_none_or(|m| !m.is_empty()));
    }

    /// A change the picker's watch saw: the members' timeline lines, and what is watched by.
    pub(super) fn seen(&self, seen: Seen<'_, StatefulSet>) -> Vec<EventKind> {
        let shown = self.0.shown.lock().unwrap_or_else(PoisonError::into_inner);
        let tracker = |key: &ObjRef| shown.iter().find(|(k, _)| k == key).map(|(_, t)| t);
        let mut out = Vec::new();
        match seen {
            Seen::Listed(list) => {
                let mut all = BTreeMap::new();
                for s in list {
                    let key = ObjRef::of(&s.metadata);
                    if let Some(t) = tracker(&key) {
                        out.extend(t.lock().unwrap_or_else(PoisonError::into_inner).set(s));
                    }
                    all.insert(key, Wanted::of(s));
                }
                self.0.known.send_if_modified(|k| k.replace(all.clone()).as_ref() != Some(&all));
            }
            Seen::Applied(s) => {
                let key = ObjRef::of(&s.metadata);
                if let Some(t) = tracker(&key) {
                    out.extend(t.lock().unwrap_or_else(PoisonError::into_inner).set(s));
                }
                let w = Wanted::of(s);
                self.0.known.send_if_modified(|k| match k {
                    Some(m) => m.insert(key, w.clone()).as_ref() != Some(&w),
                    None => false,
                });
            }
            Seen::Deleted(s) => {
                let key = ObjRef::of(&s.metadata);
                self.0
                    .known
                    .send_if_modified(|k| k.as_mut().is_some_and(|m| m.remove(&key).is_some()));
            }
        }
        out
    }
}

/// The sets `shown` (in one namespace), watched as one: once the picker has listed them (`known`),
/// one watch per kind for all of them, started again when a member appears, goes or changes.
/// `Synced` once their pods and revisions have listed, or at once when none of them exists.
pub(super) async fn group(
    shown: Vec<Shown>,
    mut known: channel::Receiver<Known>,
    clients: Clients,
    conn: Arc<Conn>,
    synced: Synced,
) {
    let mut children = Tasks(Vec::new());
    let mut current: Option<Vec<Option<Wanted>>> = None;
    loop {
        let wanted: Option<Vec<Option<Wanted>>> = known
            .borrow_and_update()
            .as_ref()
            .map(|m| shown.iter().map(|(k, _)| m.get(k).cloned()).collect());
        if let Some(wanted) = wanted
            && current.as_ref() != Some(&wanted)
        {
            drop(std::mem::replace(&mut children, Tasks(Vec::new())));
            let members = Members::of(&shown, &wanted);
            match members.0.is_empty() {
                true => synced.mark(&conn),
                false => children = Tasks(start(Arc::new(members), &clients, &conn, &synced)),
            }
            current = Some(wanted);
        }
        if known.changed().await.is_err() {
            return;
        }
    }
}

/// A member seen: its key, tracker, compiled selector and whether it has claim templates.
struct Member {
    key: ObjRef,
    tracker: Arc<Mutex<Tracker>>,
    wanted: Wanted,
    selector: Selector,
}

/// The members that exist, and which of them an object is.
struct Members(Vec<Member>, BTreeMap<String, usize>);

impl Members {
    fn of(shown: &[Shown], wanted: &[Option<Wanted>]) -> Members {
        let members: Vec<Member> = (shown.iter().zip(wanted))
            .filter_map(|((key, tracker), w)| {
                let w = w.clone()?;
                // A selector that does not compile selects nothing (as the controller's).
                let selector = Selector::from_label_selector(Some(&w.selector)).ok()?;
                Some(Member { key: key.clone(), tracker: Arc::clone(tracker), wanted: w, selector })
            })
            .collect();
        let by_name = members.iter().enumerate().map(|(i, m)| (m.key.name.clone(), i)).collect();
        Members(members, by_name)
    }

    fn named(&self, name: &str) -> Option<usize> {
        self.1.get(name).copied()
    }

    /// The member whose pod `p` is: named after it, selected by it.
    fn pod(&self, p: &Pod) -> Option<usize> {
        let (parent, _) = crate::core::labels::parent_and_ordinal(p.metadata.name.as_deref()?)?;
        let i = self.named(parent)?;
        self.0[i].selector.matches(p.metadata.labels.as_ref()).then_some(i)
    }

    /// The member a revision is of: its controller's owner, else named after and selected by it.
    fn revision(&self, r: &ControllerRevision) -> Option<usize> {
        let owner = r
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.controller == Some(true) && o.kind == "StatefulSet");
        if let Some(o) = owner {
            return self.named(&o.name);
        }
        let name = r.metadata.name.as_deref()?;
        let (parent, _) = name.rsplit_once('-')?;
        let i = self.named(parent)?;
        self.0[i].selector.matches(r.metadata.labels.as_ref()).then_some(i)
    }

    /// Whether a claim may be a member's (one with claim templates selects its labels).
    fn claim(&self, c: &PersistentVolumeClaim) -> bool {
        self.0.iter().any(|m| m.wanted.claims && m.selector.matches(c.metadata.labels.as_ref()))
    }

    /// The member an Event is about (`kind`: the object's kind, `Pod` for a member's pod).
    fn about(&self, e: &KubeEvent, kind: &str) -> Option<usize> {
        let io = &e.involved_object;
        if io.kind.as_deref() != Some(kind) {
            return None;
        }
        let name = io.name.as_deref()?;
        match kind {
            "Pod" => self.named(crate::core::labels::parent_and_ordinal(name)?.0),
            _ => self.named(name),
        }
    }

    fn tracker(&self, i: usize) -> std::sync::MutexGuard<'_, Tracker> {
        self.0[i].tracker.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Each member's share of a listing (every member, its share empty or not).
    fn split<'l, K>(&self, list: &'l [K], of: impl Fn(&K) -> Option<usize>) -> Vec<Vec<&'l K>> {
        let mut each: Vec<Vec<&K>> = self.0.iter().map(|_| Vec::new()).collect();
        for o in list {
            if let Some(i) = of(o) {
                each[i].push(o);
            }
        }
        each
    }
}

/// The shared watches of `m`'s members (one namespace's).
fn start(
    m: Arc<Members>,
    clients: &Clients,
    conn: &Arc<Conn>,
    synced: &Synced,
) -> Vec<JoinHandle<()>> {
    let ns = m.0[0].key.namespace.clone();
    let selectors: Vec<_> = m.0.iter().map(|x| &x.wanted.selector).collect();
    let cover = covering(&selectors);
    let pending = Arc::new(std::sync::atomic::AtomicUsize::new(2));
    let ready = Latch::new();
    let labels = to_query(&cover);
    let mut tasks = Vec::new();
    // Pods.
    let (mm, keep) = (Arc::clone(&m), Arc::clone(&m));
    let pods = Spec {
        keep: Some(Box::new(move |p: &Pod| keep.pod(p).is_some())),
        ..in_namespace(&ns, ObjKind::Pod, "pods", &labels, |p| Object::Pod(Arc::new(p)))
    };
    let derive = move |seen: Seen<'_, Pod>| match seen {
        Seen::Listed(l) => (mm.split(l, |p| mm.pod(p)).into_iter().enumerate())
            .flat_map(|(i, own)| mm.tracker(i).pods_listed(&own))
            .collect(),
        Seen::Applied(p) => mm.pod(p).map(|i| mm.tracker(i).pod(p, false)).unwrap_or_default(),
        Seen::Deleted(p) => mm.pod(p).map(|i| mm.tracker(i).pod(p, true)).unwrap_or_default(),
    };
    tasks.push(run(pods, clients, conn, derive, focus::first_listing(&pending, synced, &ready)));
    // Revisions.
    let (mm, keep) = (Arc::clone(&m), Arc::clone(&m));
    let revisions = Spec {
        keep: Some(Box::new(move |r: &ControllerRevision| keep.revision(r).is_some())),
        ..in_namespace(&ns, ObjKind::Revision, "controllerrevisions", &labels, |r| {
            Object::Revision(Arc::new(r))
        })
    };
    let derive = move |seen: Seen<'_, ControllerRevision>| match seen {
        Seen::Listed(l) => (mm.split(l, |r| mm.revision(r)).into_iter().enumerate())
            .flat_map(|(i, own)| mm.tracker(i).revisions_listed(&own))
            .collect(),
        Seen::Applied(r) => mm.revision(r).map(|i| mm.tracker(i).revision(r)).unwrap_or_default(),
        Seen::Deleted(_) => Vec::new(),
    };
    let listed = focus::first_listing(&pending, synced, &ready);
    tasks.push(run(revisions, clients, conn, derive, listed));
    // Claims, where a member has claim templates: by the selector covering those members'.
    if m.0.iter().any(|x| x.wanted.claims) {
        let with: Vec<_> =
            m.0.iter().filter(|x| x.wanted.claims).map(|x| &x.wanted.selector).collect();
        let keep = Arc::clone(&m);
        let labels = to_query(&covering(&with));
        let claims = Spec {
            keep: Some(Box::new(move |c: &PersistentVolumeClaim| keep.claim(c))),
            ..in_namespace(&ns, ObjKind::Claim, "persistentvolumeclaims", &labels, |c| {
                Object::Claim(Arc::new(c))
            })
        };
        tasks.push(run(claims, clients, conn, |_| Vec::new(), |_| None));
    }
    tasks.extend(events(&m, &ns, clients, conn, &ready));
    let first = &m.0[0];
    let w = Watching { key: &first.key, sel: &first.wanted.selector, clients, conn };
    tasks.push(w.budgets(&ready));
    tasks.push(w.evictions(&ready));
    tasks
}

/// A watch of `ns`'s objects of a kind (`plural` names it), by `labels` (empty: all of them).
fn in_namespace<K>(
    ns: &str,
    kind: ObjKind,
    plural: &str,
    labels: &str,
    wrap: fn(K) -> Object,
) -> Spec<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    <K as kube::Resource>::DynamicType: Default,
{
    let config = watcher::Config::default();
    Spec {
        api: watch::api::<K>,
        namespace: Some(ns.to_string()),
        config: if labels.is_empty() { config } else { config.labels(labels) },
        kind,
        scope: Scope::namespace(ns),
        what: format!("{plural} in {ns}"),
        hint: None,
        wrap,
        keep: None,
        split: None,
    }
}

fn run<K>(
    spec: Spec<K>,
    clients: &Clients,
    conn: &Arc<Conn>,
    derive: impl FnMut(Seen<'_, K>) -> Vec<EventKind> + Send + 'static,
    listed: impl FnMut(Option<Option<&K>>) -> Option<crate::backend::BackendEvent> + Send + 'static,
) -> JoinHandle<()>
where
    K: kube::Resource
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let (cl, cn) = (clients.clone(), Arc::clone(conn));
    tokio::spawn(async move { watch::run(spec, &cl, &cn, derive, listed).await })
}

/// The Events about the members (one listing about each) and, from now on, the Warnings about
/// their pods (timeline lines only): two watches of the namespace, started once `ready`.
fn events(
    m: &Arc<Members>,
    ns: &str,
    clients: &Clients,
    conn: &Arc<Conn>,
    ready: &Latch,
) -> [JoinHandle<()>; 2] {
    let spec = |fields: &str| Spec {
        api: watch::api::<KubeEvent>,
        namespace: Some(ns.to_string()),
        config: watcher::Config::default().fields(fields),
        kind: ObjKind::Event,
        scope: Scope::namespace(ns),
        what: format!("events in {ns}"),
        hint: None,
        wrap: |e| Object::Event(Arc::new(e)),
        keep: None,
        split: None,
    };
    let (keep, of) = (Arc::clone(m), Arc::clone(m));
    let scopes = (m.0.iter())
        .map(|x| Scope {
            namespace: Some(ns.to_string()),
            about: Some(format!("StatefulSet/{}", x.key.name)),
            ..Scope::default()
        })
        .collect();
    let about_sets = Spec {
        keep: Some(Box::new(move |e: &KubeEvent| keep.about(e, "StatefulSet").is_some())),
        split: Some(Split { scopes, of: Box::new(move |e| of.about(e, "StatefulSet")) }),
        ..spec("involvedObject.kind=StatefulSet")
    };
    let mm = Arc::clone(m);
    let derive = move |seen: Seen<'_, KubeEvent>| match seen {
        Seen::Listed(l) => (l.iter())
            .filter(|e| focus::recent(e))
            .filter_map(|e| Some(mm.tracker(mm.about(e, "StatefulSet")?).event(e)))
            .flatten()
            .collect(),
        Seen::Applied(e) => {
            mm.about(e, "StatefulSet").map(|i| mm.tracker(i).event(e)).unwrap_or_default()
        }
        Seen::Deleted(_) => Vec::new(),
    };
    let (cl, cn, r) = (clients.clone(), Arc::clone(conn), ready.clone());
    let sets = tokio::spawn(async move {
        r.wait().await;
        watch::run(about_sets, &cl, &cn, derive, |_| None).await;
    });
    // Timeline lines only: nothing of this watch is held, and it lists nothing.
    let warnings = Spec { keep: Some(Box::new(|_: &KubeEvent| false)), ..spec("type=Warning") };
    let mm = Arc::clone(m);
    let derive = move |seen: Seen<'_, KubeEvent>| match seen {
        Seen::Applied(e) if focus::recent(e) => {
            mm.about(e, "Pod").map(|i| mm.tracker(i).event(e)).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    let (cl, cn, r) = (clients.clone(), Arc::clone(conn), ready.clone());
    let pods = tokio::spawn(async move {
        r.wait().await;
        super::tail::run(warnings, &cl, &cn, derive).await;
    });
    [sets, pods]
}

#[cfg(test)]
#[path = "shared_tests.rs"]
mod tests;
