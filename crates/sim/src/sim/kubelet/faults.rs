//! The kubelet model's faults and the storage it waits on: a pod made to fail, its readiness
//! flipped, a broken (or fixed) image, and claims that are not Bound (`break-storage`), which
//! keep a pod unscheduled until the storage is fixed.

use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateTerminated, PersistentVolumeClaim, Pod, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::{
    Failure, FaultError, Kubelet, PodStep, first_image, is_ready, note, phase, set_condition,
    set_readiness,
};
use crate::backend::ObjRef;
use crate::sim::clock::Agenda;
use crate::sim::store::{Store, key_of};

/// The scheduler's words for a pod whose claim is not Bound.
pub const UNBOUND_CLAIMS: &str = "0/1 nodes are available: pod has unbound immediate \
     PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful \
     for scheduling.";

/// PodScheduled: True, or False with the scheduler's `message` (Unschedulable).
fn set_scheduled(status: &mut PodStatus, unschedulable: Option<&str>, now: &Time) {
    set_condition(status, "PodScheduled", unschedulable.is_none(), now);
    if let Some(c) = status.conditions.iter_mut().flatten().find(|c| c.type_ == "PodScheduled") {
        c.reason = unschedulable.map(|_| "Unschedulable".into());
        c.message = unschedulable.map(str::to_string);
    }
}

fn bound(c: &PersistentVolumeClaim) -> bool {
    c.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound")
}

impl Kubelet {
    /// A pod whose claim is not Bound is not scheduled: it stays Pending, PodScheduled False
    /// with the scheduler's words, until the storage is fixed ([`Kubelet::storage_fixed`]).
    pub(super) fn waits_on_claim(&mut self, key: &ObjRef, store: &mut Store) -> bool {
        let Some(pod) = store.pods().get(key) else { return false };
        let unbound = crate::sim::api::claims_used_by(pod).any(|c| {
            let claim = store.claims().get(&ObjRef::new(key.namespace.clone(), c));
            claim.is_some_and(|c| !bound(c))
        });
        if !unbound {
            return false;
        }
        let now = store.clock().time();
        let _ = store.modify::<Pod>(key, |p| {
            set_scheduled(p.status.get_or_insert_with(Default::default), Some(UNBOUND_CLAIMS), &now)
        });
        if let Some(run) = self.pods.get_mut(key) {
            run.waits_on_claim = true;
        }
        true
    }

    /// The storage works again: every Pending claim binds, and the pods that waited on one
    /// start.
    pub fn storage_fixed(&mut self, store: &mut Store, agenda: &mut Agenda) {
        let pending: Vec<ObjRef> =
            store.claims().iter().filter(|c| !bound(c)).map(|c| key_of(&c.metadata)).collect();
        for key in pending {
            let _ = store.modify::<PersistentVolumeClaim>(&key, |c| {
                c.status.get_or_insert_with(Default::default).phase = Some("Bound".into());
            });
        }
        let now = store.clock().time();
        let now_ms = store.clock().now_ms();
        let waiting: Vec<ObjRef> =
            self.pods.iter().filter(|(_, r)| r.waits_on_claim).map(|(k, _)| k.clone()).collect();
        for key in waiting {
            if let Some(run) = self.pods.get_mut(&key) {
                run.waits_on_claim = false;
            }
            let _ = store.modify::<Pod>(&key, |p| {
                set_scheduled(p.status.get_or_insert_with(Default::default), None, &now)
            });
            self.schedule(&key, PodStep::Run, now_ms, agenda);
        }
    }

    fn existing<'a>(store: &'a Store, key: &ObjRef) -> Result<&'a Pod, FaultError> {
        store.pods().get(key).ok_or_else(|| FaultError::NotFound(key.clone()))
    }

    /// Fault: the pod's phase becomes Failed (its containers exited with an error).
    pub fn fail(
        &mut self,
        key: &ObjRef,
        store: &mut Store,
        agenda: &mut Agenda,
    ) -> Result<(), FaultError> {
        let pod = Self::existing(store, key)?;
        if matches!(phase(pod), "Failed" | "Succeeded") {
            return Err(FaultError::Already { pod: key.clone(), state: "terminated" });
        }
        self.cancel(key, &[PodStep::Run, PodStep::Ready], agenda);
        let now = store.clock().time();
        let _ = store.modify::<Pod>(key, |p| {
            let st = p.status.get_or_insert_with(Default::default);
            st.phase = Some("Failed".into());
            set_readiness(st, false, &now);
            for c in st.container_statuses.iter_mut().flatten() {
                c.started = Some(false);
                c.state = Some(ContainerState {
                    terminated: Some(ContainerStateTerminated {
                        exit_code: 1,
                        reason: Some("Error".into()),
                        finished_at: Some(now.clone()),
                        ..Default::default()
                    }),
                    ..Default::default()
                });
            }
        });
        note(store, key, "failed");
        Ok(())
    }

    /// Fault: flip a Running pod's Ready condition. `unready` also cancels a pending readiness,
    /// so the pod stays unready until `ready`.
    pub fn set_ready(
        &mut self,
        key: &ObjRef,
        ready: bool,
        store: &mut Store,
        agenda: &mut Agenda,
    ) -> Result<(), FaultError> {
        let pod = Self::existing(store, key)?;
        let action = if ready { "ready" } else { "unready" };
        if phase(pod) != "Running" {
            let phase = match phase(pod) {
                "" => "not started".to_string(),
                p => p.to_string(),
            };
            return Err(FaultError::NotRunning { pod: key.clone(), phase, action });
        }
        let was_ready = is_ready(pod);
        let cancelled = self.cancel(key, &[PodStep::Ready], agenda);
        if was_ready == ready && !cancelled {
            let state = if ready { "Ready" } else { "unready" };
            return Err(FaultError::Already { pod: key.clone(), state });
        }
        let now = store.clock().time();
        let _ = store.modify::<Pod>(key, |p| {
            set_readiness(p.status.get_or_insert_with(Default::default), ready, &now)
        });
        note(store, key, action);
        Ok(())
    }

    /// Fault: `image` is broken (`Some`: how it fails) or fixed (`None`), for every pod running
    /// it as its first container's image, now and later. A broken image's running pods lose
    /// readiness at once (`probe`), crash at once (`crash`), or run on (`pull`: the image is
    /// already there); new pods of it fail as it says. Fixed, its running pods become Ready after
    /// the ready delay, and pods backing off recover at their next retry. Deleting a pod of a
    /// broken image brings it back just as broken: the image is at fault, not the pod
    /// (kubernetes#67250).
    pub fn set_image_broken(
        &mut self,
        image: &str,
        broken: Option<Failure>,
        store: &mut Store,
        agenda: &mut Agenda,
    ) {
        match broken {
            Some(f) => {
                self.broken_images.insert(image.to_string(), f);
            }
            None => {
                self.broken_images.remove(image);
                if self.config.broken.as_deref() == Some(image) {
                    self.config.broken = None;
                }
            }
        }
        let now = store.clock().time();
        let now_ms = store.clock().now_ms();
        let keys: Vec<ObjRef> = self.pods.keys().cloned().collect();
        for key in keys {
            let Some(pod) = store.pods().get(&key) else { continue };
            if first_image(pod) != Some(image) || pod.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let (running, was_ready) = (phase(pod) == "Running", is_ready(pod));
            let Some(run) = self.pods.get_mut(&key) else { continue };
            run.broken = broken;
            let ready_ms = run.ready_ms;
            match broken {
                Some(Failure::Probe) => {
                    self.cancel(&key, &[PodStep::Ready], agenda);
                    if running && was_ready {
                        let _ = store.modify::<Pod>(&key, |p| {
                            let st = p.status.get_or_insert_with(Default::default);
                            set_readiness(st, false, &now)
                        });
                        note(store, &key, "unready");
                    }
                }
                Some(Failure::Crash) if running => {
                    if self.cancel(&key, &[PodStep::Ready], agenda) || was_ready {
                        self.schedule(&key, PodStep::Crash, now_ms, agenda);
                    }
                }
                Some(_) => {}
                None => {
                    self.cancel(&key, &[PodStep::Crash], agenda);
                    // A pod backing off comes up at its next retry: that is work to wait for.
                    let retry = self.pods.get(&key).and_then(|r| r.next);
                    if let Some((t, PodStep::Retry | PodStep::BackOff)) = retry {
                        self.cancel(&key, &[PodStep::Retry, PodStep::BackOff], agenda);
                        self.schedule(&key, PodStep::Recover, t.at_ms, agenda);
                    }
                    let idle = self.pods.get(&key).is_some_and(|r| r.next.is_none());
                    if running && !was_ready && idle {
                        self.schedule(&key, PodStep::Ready, now_ms + ready_ms, agenda);
                    }
                }
            }
        }
    }

    /// The images broken by [`Kubelet::set_image_broken`], sorted by name.
    pub fn broken_images(&self) -> impl Iterator<Item = (&str, Failure)> {
        self.broken_images.iter().map(|(i, f)| (i.as_str(), *f))
    }
}
