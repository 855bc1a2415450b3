//! The kubelet model: it watches pods in the journal and moves each one through
//! Pending → Running (start delay) → Ready (ready delay); a graceful deletion takes the stop
//! delay, then the pod object is removed. Pods whose first container image is broken fail as
//! [`Failure`] says: their readiness probe fails, their image cannot be pulled (Pending,
//! ErrImagePull then ImagePullBackOff, retried), or their container crashes where it would have
//! become Ready (CrashLoopBackOff, restarts counted); retries back off 10 s … 5 min. Faults:
//! fail, unready and ready act on one pod; a broken image (`set_image_broken`) on every pod that
//! runs it.
//!
//! Timeline `kubelet` events: `running` (also each restart), `ready`, `unready`, `failed`,
//! `gone` (whenever a pod object leaves the store, whatever removed it), and for broken images
//! `probe-failed`, `pull-failed`, `pull-back-off`, `crashed`.
//!
//! Owns: pod status (phase, conditions, container statuses) and the removal of terminated pods.
//! Must not: touch anything but pods, or decide deletion grace (that is `api`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

mod faults;

pub use crate::kubelet::{Failure, KubeletConfig, failure};

use super::clock::{Agenda, Due, PodStep, Ticket};
use super::store::{Change, ChangeKind, Store, key_of};
use crate::backend::{EventKind, ObjRef, Object};

/// Why a fault could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FaultError {
    #[error("pod {0} not found: expected the name of an existing pod (e.g. web-0)")]
    NotFound(ObjRef),
    #[error("pod {pod} is {phase}: {action} needs a Running pod")]
    NotRunning { pod: ObjRef, phase: String, action: &'static str },
    #[error("pod {pod} is already {state}")]
    Already { pod: ObjRef, state: &'static str },
}

/// One pod's kubelet state: the timing it was created with and its next transition.
#[derive(Debug, Clone)]
struct Run {
    uid: String,
    ready_ms: u64,
    stop_ms: u64,
    broken: Option<Failure>,
    /// The next retry's delay (a failed pull, a crash).
    backoff_ms: u64,
    /// Not scheduled: a claim of it is not Bound.
    waits_on_claim: bool,
    next: Option<(Ticket, PodStep)>,
}

/// The kubelet: configuration for new pods, per-pod state, and the broken images.
#[derive(Debug, Default)]
pub struct Kubelet {
    config: KubeletConfig,
    pods: BTreeMap<ObjRef, Run>,
    /// Images whose pods never become Ready, and how they fail ([`Kubelet::set_image_broken`]).
    broken_images: BTreeMap<String, Failure>,
}

/// The image of a pod's first container.
fn first_image(pod: &Pod) -> Option<&str> {
    pod.spec.as_ref()?.containers.first()?.image.as_deref()
}

pub use crate::core::pod::is_ready;

fn phase(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("")
}

/// Sets a condition, moving lastTransitionTime only when the status changes.
fn set_condition(status: &mut PodStatus, type_: &str, value: bool, now: &Time) {
    let value = if value { "True" } else { "False" };
    let conds = status.conditions.get_or_insert_with(Vec::new);
    match conds.iter_mut().find(|c| c.type_ == type_) {
        Some(c) if c.status == value => {}
        Some(c) => {
            c.status = value.to_string();
            c.last_transition_time = Some(now.clone());
        }
        None => conds.push(PodCondition {
            type_: type_.to_string(),
            status: value.to_string(),
            last_transition_time: Some(now.clone()),
            ..Default::default()
        }),
    }
}

fn set_readiness(status: &mut PodStatus, ready: bool, now: &Time) {
    set_condition(status, "ContainersReady", ready, now);
    set_condition(status, "Ready", ready, now);
    for c in status.container_statuses.iter_mut().flatten() {
        c.ready = ready;
    }
}

fn running_statuses(pod: &Pod, now: &Time) -> Vec<ContainerStatus> {
    let mut statuses = fresh_statuses(pod);
    for c in &mut statuses {
        failure::running(c, now);
    }
    statuses
}

/// A timeline `kubelet` line about pod `key`.
fn note(store: &mut Store, key: &ObjRef, event: &str) {
    store
        .note_in(&key.namespace, EventKind::Kubelet { pod: key.name.clone(), event: event.into() });
}

/// Each container's status before anything ran.
fn fresh_statuses(pod: &Pod) -> Vec<ContainerStatus> {
    let containers = pod.spec.as_ref().map(|s| s.containers.as_slice()).unwrap_or_default();
    containers.iter().map(|c| failure::fresh(&c.name, c.image.as_deref().unwrap_or(""))).collect()
}

/// Changes the first container's status (the one whose image is broken).
fn first_container(pod: &mut Pod, f: impl FnOnce(&mut ContainerStatus)) {
    let st = pod.status.get_or_insert_with(Default::default);
    if let Some(c) = st.container_statuses.iter_mut().flatten().next() {
        f(c);
    }
}

impl Kubelet {
    pub fn new(config: KubeletConfig) -> Self {
        Kubelet { config, pods: BTreeMap::new(), broken_images: BTreeMap::new() }
    }

    pub fn config(&self) -> &KubeletConfig {
        &self.config
    }

    /// Timing for pods created from now on; running pods keep theirs.
    pub fn configure(&mut self, config: KubeletConfig) {
        self.config = config;
    }

    /// Whether a transition is scheduled for any pod (a broken image's retries do not count).
    pub fn is_busy(&self) -> bool {
        self.pods.values().any(|r| r.next.is_some_and(|(_, s)| !s.recurs()))
    }

    /// How pods of `image` fail, if it is broken.
    fn failure_of(&self, image: Option<&str>) -> Option<Failure> {
        let image = image?;
        if self.config.broken.as_deref() == Some(image) {
            return Some(self.config.failure);
        }
        self.broken_images.get(image).copied()
    }

    fn schedule(&mut self, key: &ObjRef, step: PodStep, at_ms: u64, agenda: &mut Agenda) {
        let Some(run) = self.pods.get_mut(key) else { return };
        if let Some((t, _)) = run.next.take() {
            agenda.cancel(t);
        }
        let due = Due::Kubelet { pod: key.clone(), uid: run.uid.clone(), step };
        run.next = Some((agenda.schedule(at_ms, due), step));
    }

    fn cancel(&mut self, key: &ObjRef, steps: &[PodStep], agenda: &mut Agenda) -> bool {
        let Some(run) = self.pods.get_mut(key) else { return false };
        match run.next {
            Some((t, step)) if steps.contains(&step) => {
                agenda.cancel(t);
                run.next = None;
                true
            }
            _ => false,
        }
    }

    /// Reacts to a journal change: new pods start, newly terminating pods stop, removed pods
    /// are forgotten (and reported `gone`).
    pub fn observe(&mut self, change: &Change, store: &mut Store, agenda: &mut Agenda) {
        let Object::Pod(pod) = &change.object else { return };
        let key = key_of(&pod.metadata);
        let now = store.clock().now_ms();
        match change.kind {
            ChangeKind::Added => {
                let run = Run {
                    uid: pod.metadata.uid.clone().unwrap_or_default(),
                    ready_ms: self.config.ready_ms,
                    stop_ms: self.config.stop_ms,
                    broken: self.failure_of(first_image(pod)),
                    backoff_ms: 0,
                    waits_on_claim: false,
                    next: None,
                };
                self.pods.insert(key.clone(), run);
                if pod.metadata.deletion_timestamp.is_some() {
                    self.schedule(&key, PodStep::Gone, now + self.config.stop_ms, agenda);
                } else if phase(pod) == "Pending" {
                    self.schedule(&key, PodStep::Run, now + self.config.start_ms, agenda);
                }
            }
            ChangeKind::Modified => {
                let was = match &change.old {
                    Some(Object::Pod(old)) => old.metadata.deletion_timestamp.is_some(),
                    _ => false,
                };
                if pod.metadata.deletion_timestamp.is_some() && !was {
                    let stop = self.pods.get(&key).map_or(self.config.stop_ms, |r| r.stop_ms);
                    self.schedule(&key, PodStep::Gone, now + stop, agenda);
                }
            }
            ChangeKind::Deleted => {
                if let Some(Run { next: Some((t, _)), .. }) = self.pods.remove(&key) {
                    agenda.cancel(t);
                }
                store.note_in(
                    &key.namespace,
                    EventKind::Kubelet { pod: key.name.clone(), event: "gone".into() },
                );
            }
        }
    }

    /// Runs a due transition. Stale items (a different pod under the same name) are ignored.
    pub fn fire(
        &mut self,
        key: &ObjRef,
        uid: &str,
        step: PodStep,
        store: &mut Store,
        agenda: &mut Agenda,
    ) {
        let Some(run) = self.pods.get_mut(key) else { return };
        if run.uid != uid || run.next.map(|(_, s)| s) != Some(step) {
            return;
        }
        run.next = None;
        let broken = run.broken;
        let now = store.clock().time();
        let now_ms = store.clock().now_ms();
        if step == PodStep::Run && self.waits_on_claim(key, store) {
            return;
        }
        let event = match step {
            PodStep::Run if broken == Some(Failure::Pull) => {
                let res = store.modify::<Pod>(key, |p| {
                    let mut statuses = fresh_statuses(p);
                    statuses.first_mut().map(failure::pull_failed);
                    let st = p.status.get_or_insert_with(Default::default);
                    st.start_time = Some(now.clone());
                    st.container_statuses = Some(statuses);
                    set_condition(st, "Initialized", true, &now);
                    set_readiness(st, false, &now);
                });
                if res.is_ok() {
                    let at = now_ms + failure::PULL_TO_BACKOFF_MS;
                    self.schedule(key, PodStep::BackOff, at, agenda);
                }
                "pull-failed"
            }
            PodStep::Run => {
                let res = store.modify::<Pod>(key, |p| {
                    let statuses = running_statuses(p, &now);
                    let st = p.status.get_or_insert_with(Default::default);
                    st.phase = Some("Running".into());
                    st.start_time = Some(now.clone());
                    st.container_statuses = Some(statuses);
                    set_condition(st, "Initialized", true, &now);
                    set_readiness(st, false, &now);
                });
                if res.is_ok() {
                    self.after_start(key, broken, now_ms, agenda);
                }
                "running"
            }
            PodStep::Ready => {
                let _ = store.modify::<Pod>(key, |p| {
                    set_readiness(p.status.get_or_insert_with(Default::default), true, &now)
                });
                "ready"
            }
            PodStep::Gone => {
                // The Deleted change reports `gone` when observed.
                let _ = store.remove::<Pod>(key);
                return;
            }
            PodStep::BackOff => {
                let _ = store.modify::<Pod>(key, |p| first_container(p, failure::pull_backing_off));
                let backoff = self.next_backoff(key);
                self.schedule(key, PodStep::Retry, now_ms + backoff, agenda);
                "pull-back-off"
            }
            PodStep::Crash => {
                let backoff = self.next_backoff(key);
                let (pod, ns) = (key.name.as_str(), key.namespace.as_str());
                let _ = store.modify::<Pod>(key, |p| {
                    first_container(p, |c| failure::crashed(c, &now, backoff, pod, ns));
                    set_readiness(p.status.get_or_insert_with(Default::default), false, &now);
                });
                self.schedule(key, PodStep::Retry, now_ms + backoff, agenda);
                "crashed"
            }
            PodStep::Retry | PodStep::Recover => return self.retry(key, broken, store, agenda),
        };
        note(store, key, event);
        if step == PodStep::Run && broken == Some(Failure::Probe) {
            note(store, key, "probe-failed");
        }
    }

    /// A container has started: it becomes Ready after the ready delay, or crashes then.
    fn after_start(
        &mut self,
        key: &ObjRef,
        broken: Option<Failure>,
        now_ms: u64,
        agenda: &mut Agenda,
    ) {
        let Some(ready_ms) = self.pods.get(key).map(|r| r.ready_ms) else { return };
        match broken {
            None => self.schedule(key, PodStep::Ready, now_ms + ready_ms, agenda),
            Some(Failure::Crash) => self.schedule(key, PodStep::Crash, now_ms + ready_ms, agenda),
            Some(Failure::Probe | Failure::Pull) => {}
        }
    }

    /// The back-off to wait now, doubling the next one.
    fn next_backoff(&mut self, key: &ObjRef) -> u64 {
        let Some(run) = self.pods.get_mut(key) else { return failure::FIRST_BACKOFF_MS };
        run.backoff_ms = failure::next_backoff(run.backoff_ms);
        run.backoff_ms
    }

    /// A back-off ended: a pod still Pending pulls again (failing while the image is broken
    /// for pulls), a crashed container restarts.
    fn retry(
        &mut self,
        key: &ObjRef,
        broken: Option<Failure>,
        store: &mut Store,
        agenda: &mut Agenda,
    ) {
        let Some(pod) = store.pods().get(key) else { return };
        let (pending, now, now_ms) =
            (phase(pod) != "Running", store.clock().time(), store.clock().now_ms());
        let event = if pending && broken == Some(Failure::Pull) {
            let _ = store.modify::<Pod>(key, |p| first_container(p, failure::pull_failed));
            self.schedule(key, PodStep::BackOff, now_ms + failure::PULL_TO_BACKOFF_MS, agenda);
            "pull-failed"
        } else {
            let _ = store.modify::<Pod>(key, |p| {
                let st = p.status.get_or_insert_with(Default::default);
                st.phase = Some("Running".into());
                for c in st.container_statuses.iter_mut().flatten() {
                    failure::running(c, &now);
                }
                set_readiness(st, false, &now);
            });
            self.after_start(key, broken, now_ms, agenda);
            if broken == Some(Failure::Probe) {
                note(store, key, "running");
                "probe-failed"
            } else {
                "running"
            }
        };
        note(store, key, event);
    }
}
