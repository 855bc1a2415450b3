//! The timeline of a real cluster, derived from what the watches show: a pod created (with its
//! revision), terminating (with the reason the controller had, as far as the set tells),
//! gone, running, ready, unready, failed; a revision created; the set's status changed; and the
//! Warning Events about the set and its pods (`FailedCreate` with its message).
//!
//! Pure: a [`Tracker`] remembers what it last saw of the focused set and turns each change into
//! timeline entries. A complete re-listing is compared whole, so what changed during a watch
//! gap is told too. Owns: the inference. Must not: do IO.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{Event as KubeEvent, Pod};

use crate::backend::EventKind;
use crate::core::{ControllerAction, DeleteReason, labels, pod as podf, spec};

/// What a pod looked like when last seen.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    uid: String,
    phase: String,
    ready: bool,
    terminating: bool,
    /// Its `controller-revision-hash` label.
    revision: String,
    /// The first container's state: `running`, its waiting reason, `terminated`, or empty.
    container: String,
    /// The first container's restarts.
    restarts: i32,
}

/// Events already told, by uid and count (bounded).
const EVENTS_REMEMBERED: usize = 2_048;

/// Remembers the focused set's objects as last seen.
#[derive(Debug, Default)]
pub struct Tracker {
    /// The set's name before its first sight (a pod's watch event can come first).
    name: String,
    set: Option<StatefulSet>,
    pods: BTreeMap<String, Seen>,
    pods_listed: bool,
    revisions: BTreeSet<String>,
    revisions_listed: bool,
    events: VecDeque<(String, i32)>,
    /// Pods the operator deleted from this console (its own timeline line says so): their
    /// deletion is not told again as the controller's.
    operator_deletes: VecDeque<String>,
}

/// Operator deletions remembered (bounded).
const OPERATOR_DELETES: usize = 64;

fn seen(p: &Pod) -> Seen {
    Seen {
        uid: p.metadata.uid.clone().unwrap_or_default(),
        phase: podf::phase(p).to_string(),
        ready: podf::is_ready(p),
        terminating: p.metadata.deletion_timestamp.is_some(),
        revision: podf::revision(p).to_string(),
        container: first_container_state(p),
        restarts: p
            .status
            .as_ref()
            .and_then(|s| s.container_statuses.as_ref()?.first())
            .map_or(0, |c| c.restart_count),
    }
}

fn first_container_state(p: &Pod) -> String {
    let Some(state) =
        p.status.as_ref().and_then(|s| s.container_statuses.as_ref()?.first()?.state.as_ref())
    else {
        return String::new();
    };
    if state.running.is_some() {
        return "running".into();
    }
    if let Some(w) = &state.waiting {
        return w.reason.clone().unwrap_or_default();
    }
    if state.terminated.is_some() { "terminated".into() } else { String::new() }
}

impl Tracker {
    /// A tracker for the set `name` (seen or not yet).
    pub fn named(name: &str) -> Tracker {
        Tracker { name: name.into(), ..Tracker::default() }
    }

    fn set_name(&self) -> String {
        self.set.as_ref().and_then(|s| s.metadata.name.clone()).unwrap_or_else(|| self.name.clone())
    }

    /// The set changed: a status line when what the status says changed.
    pub fn set(&mut self, set: &StatefulSet) -> Vec<EventKind> {
        let before = self.set.replace(set.clone());
        let (Some(st), name) = (set.status.as_ref(), set.metadata.name.clone().unwrap_or_default())
        else {
            return Vec::new();
        };
        let same = before.as_ref().and_then(|b| b.status.as_ref()).is_some_and(|b| {
            (
                b.replicas,
                b.ready_replicas,
                b.available_replicas,
                b.current_replicas,
                b.updated_replicas,
                &b.current_revision,
                &b.update_revision,
                b.observed_generation,
            ) == (
                st.replicas,
                st.ready_replicas,
                st.available_replicas,
                st.current_replicas,
                st.updated_replicas,
                &st.current_revision,
                &st.update_revision,
                st.observed_generation,
            )
        });
        if same {
            return Vec::new();
        }
        vec![EventKind::Status {
            set: name,
            replicas: st.replicas,
            ready_replicas: st.ready_replicas.unwrap_or(0),
            available_replicas: st.available_replicas.unwrap_or(0),
            current_replicas: st.current_replicas.unwrap_or(0),
            updated_replicas: st.updated_replicas.unwrap_or(0),
            current_revision: st.current_revision.clone().unwrap_or_default(),
            update_revision: st.update_revision.clone().unwrap_or_default(),
            observed_generation: st.observed_generation.unwrap_or(0),
        }]
    }

    /// The operator deleted pod `name` from this console: the deletion is theirs, not the
    /// controller's.
    pub fn operator_deleted(&mut self, name: &str) {
        self.operator_deletes.push_back(name.to_string());
        if self.operator_deletes.len() > OPERATOR_DELETES {
            self.operator_deletes.pop_front();
        }
    }

    /// Whether the deletion of `name` was the operator's (forgotten once told).
    fn by_operator(&mut self, name: &str) -> bool {
        match self.operator_deletes.iter().position(|n| n == name) {
            Some(i) => {
                self.operator_deletes.remove(i);
                true
            }
            None => false,
        }
    }

    /// The controller deleting `name` (with `reason`): after `create-revision` of the update
    /// revision when a rollout's first deletion is seen before the revision's own watch event
    /// (two watches race), so the timeline never shows an update before its revision.
    fn deletion(&mut self, name: &str, reason: Option<DeleteReason>) -> Vec<EventKind> {
        if self.by_operator(name) {
            return Vec::new();
        }
        let mut out = Vec::new();
        if matches!(reason, Some(DeleteReason::Update | DeleteReason::Recreate))
            && self.revisions_listed
            && let Some(update) =
                self.set.as_ref().and_then(|s| s.status.as_ref()?.update_revision.clone())
            && self.revisions.insert(update.clone())
        {
            out.push(EventKind::Controller {
                set: self.set_name(),
                action: ControllerAction::CreateRevision,
                pod: None,
                pvc: None,
                revision: Some(update),
                reason: None,
            });
        }
        out.push(controller(&self.set_name(), ControllerAction::DeletePod, name, None, reason));
        out
    }

    /// A pod was added or changed (`deleted`: it is gone).
    pub fn pod(&mut self, p: &Pod, deleted: bool) -> Vec<EventKind> {
        let name = p.metadata.name.clone().unwrap_or_default();
        if deleted {
            return match self.pods.remove(&name) {
                Some(was) => self.went(&name, &was),
                None => Vec::new(),
            };
        }
        let now = seen(p);
        let before = self.pods.insert(name.clone(), now.clone());
        let mut out = Vec::new();
        // Replaced while the watch was not looking (a gap, a re-list): the old pod went first.
        if let Some(old) = before.as_ref().filter(|b| b.uid != now.uid) {
            out.extend(self.went(&name, old));
        }
        out.extend(self.changes(&name, p, before.as_ref(), &now));
        out
    }

    /// A pod that is gone: `gone`, after the deletion when it was never seen terminating (the
    /// watch skipped that state: a gap, a re-list, or both changes folded into one event), so
    /// the timeline never shows a pod vanish without its deletion.
    fn went(&mut self, name: &str, was: &Seen) -> Vec<EventKind> {
        let mut out = Vec::new();
        if !was.terminating {
            // Kept in the log: how often a watch skips the terminating state, and after what.
            tracing::info!(
                pod = name,
                "gone without its terminating state seen: deletion inferred"
            );
            let reason = self.reason(name, &was.phase, &was.revision);
            out.extend(self.deletion(name, reason));
        }
        out.push(kubelet(name, "gone"));
        out
    }

    fn changes(
        &mut self,
        name: &str,
        p: &Pod,
        before: Option<&Seen>,
        now: &Seen,
    ) -> Vec<EventKind> {
        let mut out = Vec::new();
        let fresh = before.is_none_or(|b| b.uid != now.uid);
        if fresh && self.pods_listed {
            let revision = Some(podf::revision(p).to_string()).filter(|r| !r.is_empty());
            out.push(controller(
                &self.set_name(),
                ControllerAction::CreatePod,
                name,
                revision,
                None,
            ));
        }
        let was = before.filter(|_| !fresh);
        if now.terminating && !was.is_some_and(|b| b.terminating) && (self.pods_listed || !fresh) {
            let reason = self.reason(name, podf::phase(p), podf::revision(p));
            out.extend(self.deletion(name, reason));
        }
        if now.phase == "Running" && was.is_none_or(|b| b.phase != "Running") && !fresh {
            out.push(kubelet(name, "running"));
        }
        if now.phase == "Failed" && was.is_some_and(|b| b.phase != "Failed") {
            out.push(kubelet(name, "failed"));
        }
        out.extend(container_changes(name, was, now));
        match (was.map(|b| b.ready), now.ready) {
            (Some(false), true) => out.push(kubelet(name, "ready")),
            (Some(true), false) if !now.terminating => out.push(kubelet(name, "unready")),
            _ => {}
        }
        out
    }

    /// Why the controller deletes pod `name` (in `phase`, at `revision`), as far as the set
    /// tells: beyond the replicas, failed, or outdated.
    fn reason(&self, name: &str, phase: &str, revision: &str) -> Option<DeleteReason> {
        let set = self.set.as_ref()?;
        if !spec::in_range(set, labels::ordinal_of(name)) {
            return Some(DeleteReason::ScaleDown);
        }
        if matches!(phase, "Failed" | "Succeeded") {
            return Some(DeleteReason::Failed);
        }
        let update = set.status.as_ref()?.update_revision.as_deref()?;
        (revision != update).then_some(spec::strategy(set).outdated_reason())
    }

    /// A complete listing of the set's pods: what changed since the last one (nothing the first
    /// time: those pods were there before we looked).
    pub fn pods_listed(&mut self, pods: &[impl std::borrow::Borrow<Pod>]) -> Vec<EventKind> {
        let mut out = Vec::new();
        let listed: BTreeSet<String> =
            pods.iter().filter_map(|p| p.borrow().metadata.name.clone()).collect();
        let gone: Vec<String> =
            self.pods.keys().filter(|n| !listed.contains(*n)).cloned().collect();
        for name in gone {
            if let Some(was) = self.pods.remove(&name) {
                out.extend(self.went(&name, &was));
            }
        }
        for p in pods {
            out.extend(self.pod(p.borrow(), false));
        }
        self.pods_listed = true;
        out
    }

    /// A revision was added.
    pub fn revision(&mut self, r: &ControllerRevision) -> Vec<EventKind> {
        let name = r.metadata.name.clone().unwrap_or_default();
        if self.revisions.insert(name.clone()) && self.revisions_listed {
            return vec![EventKind::Controller {
                set: self.set_name(),
                action: ControllerAction::CreateRevision,
                pod: None,
                pvc: None,
                revision: Some(name),
                reason: None,
            }];
        }
        Vec::new()
    }

    /// A revision was deleted: one created again under the same name is told again.
    pub fn revision_gone(&mut self, name: &str) {
        self.revisions.remove(name);
    }

    /// A complete listing of the set's revisions.
    pub fn revisions_listed(
        &mut self,
        revs: &[impl std::borrow::Borrow<ControllerRevision>],
    ) -> Vec<EventKind> {
        let out = revs.iter().flat_map(|r| self.revision(r.borrow())).collect();
        self.revisions_listed = true;
        out
    }

    /// An Event about the set or one of its pods: Warnings become a line (once per count).
    pub fn event(&mut self, e: &KubeEvent) -> Vec<EventKind> {
        if e.type_.as_deref() != Some("Warning") {
            return Vec::new();
        }
        let key = (e.metadata.uid.clone().unwrap_or_default(), e.count.unwrap_or(1));
        if self.events.contains(&key) {
            return Vec::new();
        }
        self.events.push_back(key);
        if self.events.len() > EVENTS_REMEMBERED {
            self.events.pop_front();
        }
        let io = &e.involved_object;
        vec![EventKind::Event {
            object: format!(
                "{}/{}",
                io.kind.as_deref().unwrap_or_default().to_lowercase(),
                io.name.as_deref().unwrap_or_default()
            ),
            reason: e.reason.clone().unwrap_or_default(),
            message: e.message.clone().unwrap_or_default().trim().to_string(),
            warning: true,
        }]
    }
}

/// What the first container's state says a kubelet did: a failed pull, its back-off, a crash
/// (the restart count grew), a restart (running again after a crash loop's wait).
fn container_changes(name: &str, was: Option<&Seen>, now: &Seen) -> Vec<EventKind> {
    let Some(was) = was else { return Vec::new() };
    let mut out = Vec::new();
    if now.restarts > was.restarts {
        out.push(kubelet(name, "crashed"));
    }
    if now.container != was.container {
        match now.container.as_str() {
            "ErrImagePull" => out.push(kubelet(name, "pull-failed")),
            "ImagePullBackOff" => out.push(kubelet(name, "pull-back-off")),
            "running" if was.phase == "Running" && !was.container.is_empty() => {
                out.push(kubelet(name, "running"));
            }
            _ => {}
        }
    }
    out
}

fn kubelet(pod: &str, event: &str) -> EventKind {
    EventKind::Kubelet { pod: pod.into(), event: event.into() }
}

fn controller(
    set: &str,
    action: ControllerAction,
    pod: &str,
    revision: Option<String>,
    reason: Option<DeleteReason>,
) -> EventKind {
    EventKind::Controller {
        set: set.into(),
        action,
        pod: Some(pod.into()),
        pvc: None,
        revision,
        reason,
    }
}

#[cfg(test)]
mod tests;
