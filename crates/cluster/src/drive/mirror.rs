//! What drive mode's controller reads: one namespace's StatefulSets, pods, claims and
//! ControllerRevisions as the watches last showed them (upstream's informer caches), plus what
//! the controller itself just wrote (so its next sync does not act on what it already did;
//! the watch's copy replaces it when it arrives, an older one never does). The watch's copy of
//! our own write is still a change for the event handlers, as upstream's informer delivers it
//! (a status write enqueues the set again, and that sync truncates the history).
//!
//! A re-list (kube-rs `Init` … `InitDone`) is buffered and swapped in whole; the changes it
//! implies are handed to the event handlers like any other, so a pod deleted during a watch
//! gap still enqueues its set.
//!
//! Owns: the objects and the changes between two sights of them. Must not: write anything.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::runtime::watcher;

use super::consistency::{Consistency, Resource};
use crate::backend::{ObjRef, Object};
use crate::control::{ChangeKind, Read, Unseen};
use crate::core::Now;

/// One change: kind, new (or last) state, previous state, and whether it is the watch's copy
/// of our own write.
pub type Change = (ChangeKind, Object, Option<Object>, bool);

/// A watch event of one of the four kinds.
#[derive(Debug, Clone)]
pub enum Watched {
    Set(watcher::Event<StatefulSet>),
    Pod(watcher::Event<Pod>),
    Claim(watcher::Event<PersistentVolumeClaim>),
    Revision(watcher::Event<ControllerRevision>),
}

/// Whether `new` is at least as recent as `old` (resourceVersions compared as numbers where
/// both are, as etcd's are; otherwise the newer arrival wins).
fn not_older(old: Option<&String>, new: Option<&String>) -> bool {
    match (old.and_then(|o| o.parse::<u64>().ok()), new.and_then(|n| n.parse::<u64>().ok())) {
        (Some(o), Some(n)) => n >= o,
        _ => true,
    }
}

/// One kind's objects by name, and a re-list in progress.
#[derive(Debug)]
struct Table<T> {
    objects: BTreeMap<String, Arc<T>>,
    relist: Option<BTreeMap<String, Arc<T>>>,
    listed: bool,
    /// Our writes the watch has not shown yet: name → (resourceVersion, created by us).
    echo: BTreeMap<String, (String, bool)>,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table { objects: BTreeMap::new(), relist: None, listed: false, echo: BTreeMap::new() }
    }
}

/// Our writes awaiting their watch event, at most (a watch that lost them re-lists anyway).
const ECHOES: usize = 4096;

type Raw<T> = (ChangeKind, Arc<T>, Option<Arc<T>>, bool);

impl<T: kube::Resource> Table<T> {
    fn name(o: &T) -> String {
        o.meta().name.clone().unwrap_or_default()
    }

    /// Puts `o` unless what is held is newer; the change, if there was one.
    fn put(&mut self, o: Arc<T>) -> Option<Raw<T>> {
        let name = Self::name(&o);
        let old = self.objects.get(&name).cloned();
        if let Some(old) = &old {
            let (a, b) = (old.meta().resource_version.as_ref(), o.meta().resource_version.as_ref());
            if a == b {
                // The watch's copy of our own write: a change to the handlers, not the mirror.
                let (rv, created) = self.echo.remove(&name)?;
                let ours = b.is_some_and(|b| *b == rv);
                let kind = if created { ChangeKind::Added } else { ChangeKind::Modified };
                return ours.then(|| (kind, o, (!created).then(|| Arc::clone(old)), true));
            }
            if !not_older(a, b) {
                return None;
            }
        }
        self.echo.remove(&name);
        self.objects.insert(name, Arc::clone(&o));
        let kind = if old.is_some() { ChangeKind::Modified } else { ChangeKind::Added };
        Some((kind, o, old, false))
    }

    /// What the server answered to our write: held at once, its watch event awaited.
    fn wrote(&mut self, o: Arc<T>) {
        let name = Self::name(&o);
        let created = !self.objects.contains_key(&name);
        let rv = o.meta().resource_version.clone().unwrap_or_default();
        if self.put(o).is_some() {
            if self.echo.len() >= ECHOES {
                self.echo.pop_first();
            }
            self.echo.insert(name, (rv, created));
        }
    }

    fn remove(&mut self, name: &str) -> Option<Raw<T>> {
        self.echo.remove(name);
        self.objects.remove(name).map(|o| (ChangeKind::Deleted, o, None, false))
    }

    fn take(&mut self, ev: watcher::Event<T>) -> Vec<Raw<T>> {
        match ev {
            watcher::Event::Apply(o) => self.put(Arc::new(o)).into_iter().collect(),
            // A delete we made (already gone from the mirror) still reaches the handlers.
            watcher::Event::Delete(o) => {
                let name = Self::name(&o);
                let gone = self.remove(&name).map_or_else(|| Arc::new(o), |(_, held, ..)| held);
                vec![(ChangeKind::Deleted, gone, None, false)]
            }
            watcher::Event::Init => {
                self.relist = Some(BTreeMap::new());
                Vec::new()
            }
            watcher::Event::InitApply(o) => {
                let o = Arc::new(o);
                self.relist.get_or_insert_default().insert(Self::name(&o), o);
                Vec::new()
            }
            watcher::Event::InitDone => {
                self.listed = true;
                let fresh = self.relist.take().unwrap_or_default();
                let gone: Vec<String> =
                    self.objects.keys().filter(|k| !fresh.contains_key(*k)).cloned().collect();
                let mut out: Vec<Raw<T>> = gone.iter().filter_map(|k| self.remove(k)).collect();
                for o in fresh.into_values() {
                    let name = Self::name(&o);
                    let old = self.objects.insert(name, Arc::clone(&o));
                    let same = old.as_ref().is_some_and(|old| {
                        old.meta().resource_version == o.meta().resource_version
                    });
                    if !same {
                        let kind =
                            if old.is_some() { ChangeKind::Modified } else { ChangeKind::Added };
                        out.push((kind, o, old, false));
                    }
                }
                out
            }
        }
    }
}

/// Drops what the controller never reads of a pod, claim or revision: its managed fields
/// (often the larger part of a small object). A write of it without them keeps the server's.
pub fn lean(w: &mut Watched) {
    fn strip<T: kube::Resource>(e: &mut watcher::Event<T>) {
        if let watcher::Event::Apply(o) | watcher::Event::InitApply(o) | watcher::Event::Delete(o) =
            e
        {
            o.meta_mut().managed_fields = None;
        }
    }
    match w {
        Watched::Set(_) => {}
        Watched::Pod(e) => strip(e),
        Watched::Claim(e) => strip(e),
        Watched::Revision(e) => strip(e),
    }
}

fn wrap<T>(raw: Vec<Raw<T>>, f: fn(Arc<T>) -> Object) -> Vec<Change> {
    raw.into_iter().map(|(k, o, old, ours)| (k, f(o), old.map(f), ours)).collect()
}

/// The namespace's objects as the controller sees them.
#[derive(Debug)]
pub struct Mirror {
    pub namespace: String,
    /// Only this set is driven (`None`: every set of the namespace).
    only: Option<String>,
    sets: Table<StatefulSet>,
    pods: Table<Pod>,
    claims: Table<PersistentVolumeClaim>,
    revisions: Table<ControllerRevision>,
    /// Pods we asked to create and heard nothing back about (the connection broke, no answer
    /// in time): when one appears, it may be ours, never evidence of another controller.
    unanswered: BTreeSet<String>,
    /// How each unanswered creation turned out, to be said once (`take_resolved`).
    resolved: Vec<String>,
    /// Our writes per set and how far each watch has read (read your own writes).
    consistency: Consistency,
    epoch: Instant,
}

/// A watch event's part in [`Consistency`]: how far the watch has read.
fn account<T: kube::Resource>(
    c: &mut Consistency,
    r: Resource,
    e: &watcher::Event<T>,
    emitted: Instant,
) {
    match e {
        watcher::Event::Apply(o) | watcher::Event::Delete(o) => {
            c.shown(r, o.meta().resource_version.as_deref());
        }
        watcher::Event::Init => c.relisting(r, emitted),
        watcher::Event::InitApply(o) => c.listed(r, o.meta().resource_version.as_deref()),
        watcher::Event::InitDone => c.relisted(r),
    }
}

impl Mirror {
    pub fn new(namespace: String, only: Option<String>, epoch: Instant) -> Mirror {
        Mirror {
            namespace,
            only,
            sets: Table::default(),
            pods: Table::default(),
            claims: Table::default(),
            revisions: Table::default(),
            unanswered: BTreeSet::new(),
            resolved: Vec::new(),
            consistency: Consistency::default(),
            epoch,
        }
    }

    /// Our creation of pod `name` got no answer: the server may have made it.
    pub fn unanswered_create(&mut self, name: &str) {
        if self.unanswered.len() >= ECHOES {
            self.unanswered.pop_first();
        }
        self.unanswered.insert(name.to_string());
    }

    /// Our creation of pod `name` was answered: if an earlier one of it went unanswered, the
    /// server had not made it then.
    pub fn answered_create(&mut self, name: &str) {
        if self.unanswered.remove(name) {
            self.resolve(format!(
                "create-pod {name}: the earlier attempt, whose answer was lost, had not made it; \
                 made now"
            ));
        }
    }

    fn resolve(&mut self, words: String) {
        if self.resolved.len() < ECHOES {
            self.resolved.push(words);
        }
    }

    /// How unanswered pod creations turned out since last asked, in order.
    pub fn take_resolved(&mut self) -> Vec<String> {
        std::mem::take(&mut self.resolved)
    }

    /// Every kind has been listed once (upstream waits for its caches to sync).
    pub fn listed(&self) -> bool {
        self.sets.listed && self.pods.listed && self.claims.listed && self.revisions.listed
    }

    /// Takes in a watch event its watcher emitted at `emitted`; the changes it made.
    pub fn take(&mut self, w: Watched, emitted: Instant) -> Vec<Change> {
        let c = &mut self.consistency;
        match &w {
            Watched::Set(e) => {
                account(c, Resource::Sets, e, emitted);
                if let watcher::Event::Delete(s) = e {
                    c.forget(s.metadata.name.as_deref().unwrap_or_default());
                }
            }
            Watched::Pod(e) => account(c, Resource::Pods, e, emitted),
            Watched::Claim(e) => account(c, Resource::Claims, e, emitted),
            Watched::Revision(_) => {}
        }
        match w {
            Watched::Set(e) => wrap(self.sets.take(e), Object::Set),
            Watched::Pod(e) => {
                if let watcher::Event::Apply(p) | watcher::Event::InitApply(p) = &e {
                    let name = p.metadata.name.as_deref().unwrap_or_default();
                    if self.unanswered.remove(name) {
                        self.resolve(format!(
                            "create-pod {name}: the server made it after all (its answer was \
                             lost; seen on the watch)"
                        ));
                    }
                }
                wrap(self.pods.take(e), Object::Pod)
            }
            Watched::Claim(e) => wrap(self.claims.take(e), Object::Claim),
            Watched::Revision(e) => wrap(self.revisions.take(e), Object::Revision),
        }
    }

    /// What the server answered to the controller's write for `set`: held at once, and
    /// awaited on its watch before the set's next sync (pods, claims and the set's status, as
    /// upstream records them).
    pub fn wrote_for(&mut self, set: &str, o: Object) {
        let resource = match &o {
            Object::Pod(_) => Some(Resource::Pods),
            Object::Claim(_) => Some(Resource::Claims),
            Object::Set(_) => Some(Resource::Sets),
            _ => None,
        };
        if let Some(r) = resource {
            let meta = o.metadata();
            let name = meta.name.as_deref().unwrap_or_default();
            self.consistency.wrote(set, r, name, meta.resource_version.as_deref());
        }
        self.wrote(o);
    }

    /// What the server answered to a write (ahead of the watch, never behind it).
    pub fn wrote(&mut self, o: Object) {
        match o {
            Object::Set(s) => self.sets.wrote(s),
            Object::Pod(p) => self.pods.wrote(lean_arc(p)),
            Object::Claim(c) => self.claims.wrote(lean_arc(c)),
            Object::Revision(r) => self.revisions.wrote(lean_arc(r)),
            Object::Event(_) | Object::Budget(_) | Object::Eviction(_) => {}
        }
    }

    /// The pod a watch event brings that the mirror does not hold yet and that is not one we
    /// asked for without an answer.
    pub fn new_pod<'w>(&self, w: &'w Watched) -> Option<&'w Pod> {
        match w {
            Watched::Pod(watcher::Event::Apply(p) | watcher::Event::InitApply(p)) => {
                let name = p.metadata.name.as_deref().unwrap_or_default();
                let new = !self.pods.objects.contains_key(name) && !self.unanswered.contains(name);
                new.then_some(p)
            }
            _ => None,
        }
    }

    /// A delete the server carried out at once.
    pub fn removed(&mut self, kind: crate::backend::ObjKind, name: &str) {
        match kind {
            crate::backend::ObjKind::Pod => drop(self.pods.remove(name)),
            crate::backend::ObjKind::Revision => drop(self.revisions.remove(name)),
            crate::backend::ObjKind::Claim => drop(self.claims.remove(name)),
            _ => {}
        }
    }

    /// Whether the set is one this mirror drives.
    pub fn drives(&self, name: &str) -> bool {
        self.only.as_deref().is_none_or(|o| o == name)
    }

    /// The sets driven.
    pub fn driven(&self) -> impl Iterator<Item = &StatefulSet> {
        self.sets
            .objects
            .values()
            .map(|s| &**s)
            .filter(|s| self.drives(s.metadata.name.as_deref().unwrap_or_default()))
    }

    /// The pods, as held.
    pub fn pods(&self) -> impl Iterator<Item = &Pod> {
        self.pods.objects.values().map(|p| &**p)
    }
}

/// `o` without managed fields (the server's answer to our write is ours alone: no copy).
fn lean_arc<T: kube::Resource + Clone>(mut o: Arc<T>) -> Arc<T> {
    if o.meta().managed_fields.is_some() {
        Arc::make_mut(&mut o).meta_mut().managed_fields = None;
    }
    o
}

impl Read for Mirror {
    fn set(&self, key: &ObjRef) -> Option<&StatefulSet> {
        if key.namespace != self.namespace || !self.drives(&key.name) {
            return None;
        }
        self.sets.objects.get(&key.name).map(|s| &**s)
    }
    fn sets_in(&self, ns: &str) -> Vec<&StatefulSet> {
        if ns != self.namespace {
            return Vec::new();
        }
        self.driven().collect()
    }
    fn pods_in(&self, ns: &str) -> Vec<&Pod> {
        if ns != self.namespace {
            return Vec::new();
        }
        self.pods().collect()
    }
    fn claims_in(&self, ns: &str) -> Vec<&PersistentVolumeClaim> {
        if ns != self.namespace {
            return Vec::new();
        }
        self.claims.objects.values().map(|c| &**c).collect()
    }
    fn revisions_in(&self, ns: &str) -> Vec<&ControllerRevision> {
        if ns != self.namespace {
            return Vec::new();
        }
        self.revisions.objects.values().map(|r| &**r).collect()
    }
    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
    fn now(&self) -> Now {
        k8s_openapi::jiff::Timestamp::now()
    }
    fn unseen(&self, key: &ObjRef) -> Option<Unseen> {
        if key.namespace != self.namespace {
            return None;
        }
        self.consistency.unseen(&key.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn pod(name: &str, rv: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                resource_version: Some(rv.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn a_write_is_seen_at_once_and_an_older_watch_event_does_not_undo_it() {
        let mut m = Mirror::new("default".into(), None, Instant::now());
        m.wrote(Object::Pod(Arc::new(pod("web-0", "10"))));
        assert_eq!(m.pods_in("default").len(), 1);
        let older = m.take(Watched::Pod(watcher::Event::Apply(pod("web-0", "9"))), Instant::now());
        assert!(older.is_empty(), "an older resourceVersion changes nothing");
        let echo = m.take(Watched::Pod(watcher::Event::Apply(pod("web-0", "10"))), Instant::now());
        assert_eq!(echo.len(), 1, "the watch's copy of our own write reaches the handlers");
        assert_eq!(echo[0].0, ChangeKind::Added, "as the creation it was");
        let again = m.take(Watched::Pod(watcher::Event::Apply(pod("web-0", "10"))), Instant::now());
        assert!(again.is_empty(), "once");
        let newer = m.take(Watched::Pod(watcher::Event::Apply(pod("web-0", "11"))), Instant::now());
        assert_eq!(newer.len(), 1);
        assert_eq!(newer[0].0, ChangeKind::Modified);
    }

    #[test]
    fn a_relist_replaces_what_is_held_and_reports_what_went() {
        let mut m = Mirror::new("default".into(), None, Instant::now());
        for n in ["web-0", "web-1"] {
            m.take(Watched::Pod(watcher::Event::Apply(pod(n, "1"))), Instant::now());
        }
        m.take(Watched::Pod(watcher::Event::Init), Instant::now());
        m.take(Watched::Pod(watcher::Event::InitApply(pod("web-0", "1"))), Instant::now());
        m.take(Watched::Pod(watcher::Event::InitApply(pod("web-2", "5"))), Instant::now());
        let changes = m.take(Watched::Pod(watcher::Event::InitDone), Instant::now());
        let kinds: Vec<_> = changes
            .iter()
            .map(|(k, o, ..)| (*k, o.metadata().name.clone().unwrap_or_default()))
            .collect();
        assert_eq!(
            kinds,
            vec![(ChangeKind::Deleted, "web-1".into()), (ChangeKind::Added, "web-2".into())]
        );
        let names: Vec<_> = m.pods().filter_map(|p| p.metadata.name.clone()).collect();
        assert_eq!(names, ["web-0", "web-2"]);
    }

    #[test]
    fn only_the_named_set_is_read_when_one_is_driven() {
        let mut m = Mirror::new("default".into(), Some("web".into()), Instant::now());
        for n in ["web", "db"] {
            let s = StatefulSet {
                metadata: ObjectMeta {
                    name: Some(n.into()),
                    namespace: Some("default".into()),
                    ..Default::default()
                },
                ..Default::default()
            };
            m.take(Watched::Set(watcher::Event::Apply(s)), Instant::now());
        }
        assert!(m.set(&ObjRef::new("default", "web")).is_some());
        assert!(m.set(&ObjRef::new("default", "db")).is_none());
        assert_eq!(m.sets_in("default").len(), 1);
    }

    #[test]
    fn a_pod_whose_creation_got_no_answer_is_not_new_once_and_only_once() {
        let mut m = Mirror::new("default".into(), None, Instant::now());
        m.unanswered_create("web-3");
        let w = Watched::Pod(watcher::Event::Apply(pod("web-3", "12")));
        assert!(m.new_pod(&w).is_none(), "possibly ours: not another creator's");
        let other = Watched::Pod(watcher::Event::Apply(pod("web-4", "13")));
        assert!(m.new_pod(&other).is_some(), "a pod we did not ask for is new");
        // Once seen, a later pod of the name (after this one went) is judged again.
        m.take(w, Instant::now());
        m.take(Watched::Pod(watcher::Event::Delete(pod("web-3", "14"))), Instant::now());
        let again = Watched::Pod(watcher::Event::Apply(pod("web-3", "15")));
        assert!(m.new_pod(&again).is_some());
        let said = m.take_resolved();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("create-pod web-3: the server made it after all"), "{said:?}");
        assert!(m.take_resolved().is_empty(), "said once");
        // An unanswered creation that a later one makes: it had not been made.
        m.unanswered_create("web-5");
        m.answered_create("web-5");
        m.answered_create("web-6");
        let said = m.take_resolved();
        assert_eq!(said.len(), 1, "only an unanswered one is resolved: {said:?}");
        assert!(said[0].contains("had not made it; made now"), "{said:?}");
    }
}
