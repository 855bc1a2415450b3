//! What `ststui play` knows of the cluster: the sets, pods, ControllerRevisions and claims of
//! the namespaces the script uses, as the watches last showed them, the timeline derived from
//! each change (the console's inference, `cluster::derive`, one tracker per set), and the two
//! questions the script asks: what an `expect` reads, and whether the cluster has settled.
//!
//! Pure: the IO loop feeds it watch events with the time they arrived. Owns: attribution
//! (a pod the script deleted is the script's, a pod of a deleted set is the collector's).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::runtime::watcher;

use crate::backend::{EventKind, ObjRef};
use crate::cluster::derive::Tracker;
use crate::core::{
    ControllerAction, DeleteReason, Observed as CoreObserved, Options, labels, pod as podf,
    reconcile,
};
use crate::sim::scenario::build::Observed;

/// One watch event, of one of the kinds play watches (the same four drive mode's mirror takes).
pub use crate::drive::mirror::Watched as Change;

fn key(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> ObjRef {
    ObjRef::new(
        meta.namespace.clone().unwrap_or_else(|| "default".into()),
        meta.name.clone().unwrap_or_default(),
    )
}

/// The set a pod or revision belongs to: its controller (a StatefulSet), else the set its
/// name says (`<set>-<n>` for a pod).
fn owner(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> Option<String> {
    let by_ref = meta
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true) && r.kind == "StatefulSet");
    match by_ref {
        Some(r) => Some(r.name.clone()),
        None => labels::parent_and_ordinal(meta.name.as_deref()?).map(|(p, _)| p.to_string()),
    }
}

/// The mirror and the derivation.
#[derive(Default)]
pub struct World {
    pub sets: BTreeMap<ObjRef, StatefulSet>,
    pub pods: BTreeMap<ObjRef, Pod>,
    pub revisions: BTreeMap<ObjRef, ControllerRevision>,
    pub claims: BTreeMap<ObjRef, PersistentVolumeClaim>,
    trackers: BTreeMap<ObjRef, Tracker>,
    /// Listings still to come before the mirror can be trusted.
    pub unlisted: usize,
    /// When something last changed (ms since start).
    pub last_change: u64,
    /// Pods the script deleted, by name and the uid of the pod deleted (that pod's deletion is
    /// not the controller's; a later pod of the name is another pod).
    script_deleted: BTreeMap<ObjRef, String>,
    /// Sets deleted while playing: their pods' deletions are the garbage collector's.
    gone: BTreeSet<ObjRef>,
    /// Claims seen (a new one after the listing is the controller's `create-pvc`).
    claims_listed: bool,
    /// New claims whose set has not been seen yet (its watch event can come later).
    unclaimed: Vec<ObjRef>,
}

impl World {
    pub fn new(listings: usize) -> World {
        World { unlisted: listings, ..World::default() }
    }

    fn tracker(&mut self, set: ObjRef) -> &mut Tracker {
        let listed = self.unlisted == 0;
        self.trackers.entry(set.clone()).or_insert_with(|| {
            let mut t = Tracker::named(&set.name);
            if listed {
                t.pods_listed(&[] as &[Pod]);
                t.revisions_listed(&[] as &[ControllerRevision]);
            }
            t
        })
    }

    /// The script deletes this pod (gracefully or not): the pod of that name seen now. A name
    /// with no pod marks nothing (the deletion is refused, and a later pod of the name is the
    /// controller's to delete).
    pub fn deleted_by_script(&mut self, pod: ObjRef) {
        if let Some(uid) = self.pods.get(&pod).and_then(|p| p.metadata.uid.clone()) {
            self.script_deleted.insert(pod, uid);
        }
    }

    /// The script's deletion of `pod` was refused: its later deletion is not the script's.
    pub fn deletion_refused(&mut self, pod: &ObjRef) {
        self.script_deleted.remove(pod);
    }

    /// Takes in one watch event at `now`; returns the timeline entries it makes.
    pub fn apply(&mut self, change: Change, now: u64) -> Vec<EventKind> {
        self.last_change = now;
        match change {
            Change::Set(e) => self.set(e),
            Change::Pod(e) => self.pod(e),
            Change::Revision(e) => self.revision(e),
            Change::Claim(e) => self.claim(e),
        }
    }

    fn done_listing(&mut self) {
        self.unlisted = self.unlisted.saturating_sub(1);
    }

    fn set(&mut self, e: watcher::Event<StatefulSet>) -> Vec<EventKind> {
        match e {
            watcher::Event::Apply(s) | watcher::Event::InitApply(s) => {
                let k = key(&s.metadata);
                self.gone.remove(&k);
                let mut out = self.tracker(k.clone()).set(&s);
                self.sets.insert(k, s);
                let waiting = std::mem::take(&mut self.unclaimed);
                for c in waiting {
                    out.extend(self.created_claim(c));
                }
                out
            }
            watcher::Event::Delete(s) => {
                let k = key(&s.metadata);
                self.sets.remove(&k);
                self.gone.insert(k);
                Vec::new()
            }
            watcher::Event::Init => Vec::new(),
            watcher::Event::InitDone => {
                self.done_listing();
                Vec::new()
            }
        }
    }

    fn pod(&mut self, e: watcher::Event<Pod>) -> Vec<EventKind> {
        let (p, deleted) = match e {
            watcher::Event::Apply(p) | watcher::Event::InitApply(p) => (p, false),
            watcher::Event::Delete(p) => (p, true),
            watcher::Event::Init => return Vec::new(),
            watcher::Event::InitDone => {
                self.done_listing();
                let sets: Vec<ObjRef> = self.trackers.keys().cloned().collect();
                for s in sets {
                    let pods: Vec<Pod> = self
                        .pods
                        .values()
                        .filter(|p| owner(&p.metadata).as_deref() == Some(s.name.as_str()))
                        .cloned()
                        .collect();
                    self.tracker(s).pods_listed(&pods);
                }
                return Vec::new();
            }
        };
        let k = key(&p.metadata);
        let terminating_before =
            self.pods.get(&k).is_some_and(|old| old.metadata.deletion_timestamp.is_some());
        if deleted {
            self.pods.remove(&k);
            self.script_deleted.remove(&k);
        } else {
            self.pods.insert(k.clone(), p.clone());
        }
        let Some(set) = owner(&p.metadata) else { return Vec::new() };
        let set = ObjRef::new(k.namespace.clone(), set);
        let by_script =
            self.script_deleted.get(&k).is_some_and(|uid| p.metadata.uid.as_ref() == Some(uid));
        let collected = self.gone.contains(&set);
        // Under Recreate the controller's deletions of outdated pods are its burst.
        let outdated_reason = self
            .sets
            .get(&set)
            .map_or(DeleteReason::Update, |s| crate::core::spec::strategy(s).outdated_reason());
        let out = self.tracker(set).pod(&p, deleted);
        let starts_terminating = p.metadata.deletion_timestamp.is_some() && !terminating_before;
        out.into_iter()
            .filter_map(|ev| match ev {
                EventKind::Controller { action: ControllerAction::DeletePod, .. }
                    if starts_terminating && by_script =>
                {
                    None
                }
                EventKind::Controller { action: ControllerAction::DeletePod, ref pod, .. }
                    if collected =>
                {
                    Some(EventKind::Gc { pod: pod.clone(), pvc: None })
                }
                // The controller deletes a pod beyond the replicas, a failed one, or an
                // outdated one: neither of the first two (as far as the set tells), so
                // outdated. (The set's status names the new revision only after the sync.)
                // Outdated means the rolling update, or the Recreate strategy's burst.
                EventKind::Controller {
                    set,
                    action: action @ ControllerAction::DeletePod,
                    pod,
                    pvc,
                    revision,
                    reason: None,
                } => {
                    let reason = Some(outdated_reason);
                    Some(EventKind::Controller { set, action, pod, pvc, revision, reason })
                }
                other => Some(other),
            })
            .collect()
    }

    fn revision(&mut self, e: watcher::Event<ControllerRevision>) -> Vec<EventKind> {
        match e {
            watcher::Event::Apply(r) | watcher::Event::InitApply(r) => {
                let k = key(&r.metadata);
                let set = owner(&r.metadata).or_else(|| {
                    r.metadata.name.as_deref()?.rsplit_once('-').map(|(s, _)| s.to_string())
                });
                self.revisions.insert(k.clone(), r.clone());
                match set {
                    Some(s) => self.tracker(ObjRef::new(k.namespace, s)).revision(&r),
                    None => Vec::new(),
                }
            }
            watcher::Event::Delete(r) => {
                let k = key(&r.metadata);
                self.revisions.remove(&k);
                for t in self.trackers.values_mut() {
                    t.revision_gone(&k.name);
                }
                Vec::new()
            }
            watcher::Event::Init => Vec::new(),
            watcher::Event::InitDone => {
                self.done_listing();
                let sets: Vec<ObjRef> = self.trackers.keys().cloned().collect();
                let revs: Vec<ControllerRevision> = self.revisions.values().cloned().collect();
                for s in sets {
                    self.tracker(s).revisions_listed(&revs);
                }
                Vec::new()
            }
        }
    }

    fn claim(&mut self, e: watcher::Event<PersistentVolumeClaim>) -> Vec<EventKind> {
        match e {
            watcher::Event::Apply(c) | watcher::Event::InitApply(c) => {
                let k = key(&c.metadata);
                let fresh = self.claims.insert(k.clone(), c).is_none();
                if !(fresh && self.claims_listed) {
                    return Vec::new();
                }
                self.created_claim(k)
            }
            watcher::Event::Delete(c) => {
                let k = key(&c.metadata);
                self.claims.remove(&k);
                vec![EventKind::Gc { pod: None, pvc: Some(k.name) }]
            }
            watcher::Event::Init => Vec::new(),
            watcher::Event::InitDone => {
                self.done_listing();
                self.claims_listed = true;
                Vec::new()
            }
        }
    }

    /// A claim created while playing: the controller's `create-pvc` for the set whose claim
    /// templates name it (held back until that set has been seen).
    fn created_claim(&mut self, k: ObjRef) -> Vec<EventKind> {
        let set = self.sets.iter().find_map(|(sk, s)| {
            let found = claim_templates(s)
                .iter()
                .any(|t| labels::claim_pod(&k.name, t, &sk.name).is_some());
            (sk.namespace == k.namespace && found).then(|| sk.name.clone())
        });
        let Some(set) = set else {
            if self.claims.contains_key(&k) && self.unclaimed.len() < 10_000 {
                self.unclaimed.push(k);
            }
            return Vec::new();
        };
        vec![EventKind::Controller {
            set,
            action: ControllerAction::CreatePvc,
            pod: None,
            pvc: Some(k.name),
            revision: None,
            reason: None,
        }]
    }

    /// A write of the script's own: the quiet period starts again (its watch events follow).
    pub fn touched(&mut self, now: u64) {
        self.last_change = now;
    }

    /// Why the cluster has not settled, if something says so: a pod still starting or
    /// terminating, a set whose latest spec the controller has not yet observed, a set whose
    /// status counts Ready pods not yet available. With the controller `paused`, only the pods
    /// count: the sets wait for it.
    pub fn busy(&self, paused: bool) -> Option<String> {
        if self.unlisted > 0 {
            return Some("the first listings are still arriving".into());
        }
        for (k, p) in &self.pods {
            if p.metadata.deletion_timestamp.is_some() {
                return Some(format!("{} is terminating", k.name));
            }
            if podf::phase(p) == "Pending" || podf::phase(p).is_empty() {
                return Some(format!("{} is Pending", k.name));
            }
        }
        if paused {
            return None;
        }
        for (k, s) in &self.sets {
            let status = s.status.as_ref();
            let observed = status.and_then(|st| st.observed_generation).unwrap_or(0);
            if observed < s.metadata.generation.unwrap_or(0) {
                return Some(format!("{} has a spec the controller has not observed", k.name));
            }
            // No watch event marks a pod becoming available: the controller's own requeue
            // (up to twice minReadySeconds later, before v1.36) updates the status.
            let ready = status.and_then(|st| st.ready_replicas).unwrap_or(0);
            let available = status.and_then(|st| st.available_replicas).unwrap_or(0);
            if ready > available {
                let n = ready - available;
                return Some(format!("{}: {n} Ready pod(s) not yet available", k.name));
            }
        }
        None
    }

    /// What `expect` reads for `set`; `None` when the set does not exist.
    pub fn observe(&self, set: &ObjRef, options: &Options) -> Option<Observed> {
        let s = self.sets.get(set)?;
        let in_ns = |k: &&ObjRef| k.namespace == set.namespace;
        let pods: Vec<&Pod> = self.pods.iter().filter(|(k, _)| in_ns(k)).map(|x| x.1).collect();
        let claims: Vec<&PersistentVolumeClaim> =
            self.claims.iter().filter(|(k, _)| in_ns(k)).map(|x| x.1).collect();
        let revisions: Vec<&ControllerRevision> =
            self.revisions.iter().filter(|(k, _)| in_ns(k)).map(|x| x.1).collect();
        let core = CoreObserved { set: s, pods: &pods, claims: &claims, revisions: &revisions };
        let plan = reconcile(&core, options, k8s_openapi::jiff::Timestamp::now());
        let members = labels::members(&set.name, s.metadata.uid.as_deref(), pods.iter().copied());
        let templates = claim_templates(s);
        let member_claims = labels::member_claims(&set.name, &templates, claims.iter().copied());
        Some(Observed::of(s, &members, &member_claims, plan.waiting_on.is_some()))
    }
}

fn claim_templates(s: &StatefulSet) -> Vec<String> {
    s.spec.volume_claim_templates.iter().flatten().filter_map(|t| t.metadata.name.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

    fn pod(uid: &str, terminating: bool) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("web-1".into()),
                namespace: Some("default".into()),
                uid: Some(uid.into()),
                deletion_timestamp: terminating
                    .then_some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn deletions(w: &mut World, p: Pod) -> usize {
        w.apply(Change::Pod(watcher::Event::Apply(p)), 0)
            .iter()
            .filter(|e| {
                matches!(e, EventKind::Controller { action: ControllerAction::DeletePod, .. })
            })
            .count()
    }

    #[test]
    fn a_paused_controller_leaves_only_the_pods_motion_to_wait_for() {
        use k8s_openapi::api::apps::v1::{StatefulSetSpec, StatefulSetStatus};
        use k8s_openapi::api::core::v1::PodStatus;
        let mut w = World::new(0);
        let set = StatefulSet {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("default".into()),
                generation: Some(2),
                ..Default::default()
            },
            spec: StatefulSetSpec::default(),
            status: Some(StatefulSetStatus { observed_generation: Some(1), ..Default::default() }),
        };
        w.apply(Change::Set(watcher::Event::Apply(set)), 0);
        // A pod the kubelet is still starting: waited for, paused or not.
        w.apply(Change::Pod(watcher::Event::Apply(pod("a", false))), 0);
        assert!(w.busy(true).is_some_and(|why| why.contains("Pending")));
        assert!(w.busy(false).is_some_and(|why| why.contains("Pending")));
        let mut running = pod("a", false);
        running.status = Some(PodStatus { phase: Some("Running".into()), ..Default::default() });
        w.apply(Change::Pod(watcher::Event::Apply(running)), 0);
        // The set's new spec waits for the controller: not while it is paused.
        assert!(w.busy(false).is_some_and(|why| why.contains("not observed")));
        assert_eq!(w.busy(true), None);
    }

    #[test]
    fn the_scripts_deletion_is_of_the_pod_it_deleted_not_of_a_later_one_of_the_name() {
        let mut w = World::new(0);
        let web1 = ObjRef::new("default", "web-1");
        // The script deletes web-1 while none exists: refused, and it marks nothing.
        w.deleted_by_script(web1.clone());
        assert_eq!(deletions(&mut w, pod("a", false)), 0);
        assert_eq!(deletions(&mut w, pod("a", true)), 1, "the controller's deletion is told");
        w.apply(Change::Pod(watcher::Event::Delete(pod("a", true))), 0);
        // The script deletes pod b: its terminating state is not the controller's doing …
        assert_eq!(deletions(&mut w, pod("b", false)), 0);
        w.deleted_by_script(web1.clone());
        assert_eq!(deletions(&mut w, pod("b", true)), 0);
        w.apply(Change::Pod(watcher::Event::Delete(pod("b", true))), 0);
        // … and pod c of the same name, deleted later, is the controller's again.
        assert_eq!(deletions(&mut w, pod("c", false)), 0);
        assert_eq!(deletions(&mut w, pod("c", true)), 1);
        // A refused deletion of a pod that exists marks nothing either.
        assert_eq!(deletions(&mut w, pod("d", false)), 0);
        w.deleted_by_script(web1.clone());
        w.deletion_refused(&web1);
        assert_eq!(deletions(&mut w, pod("d", true)), 1);
    }
}
