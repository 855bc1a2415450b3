//! The world's API server and kubelet: applying plan effects to the store, pod lifecycle on
//! the test clock, and garbage collection of claims owned by a removed pod.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use ststui::core::Effect;
use ststui::core::invariants;

use super::{Timer, World, ts};

impl World {
    pub(super) fn remove_pod(&mut self, name: &str) {
        let Some(p) = self.pods.remove(name) else { return };
        let uid = p.metadata.uid.unwrap_or_default();
        self.timers.remove(&uid);
        let before: Vec<PersistentVolumeClaim> = self.claims.values().cloned().collect();
        self.claims.retain(|_, c| {
            !c.metadata
                .owner_references
                .as_deref()
                .unwrap_or_default()
                .iter()
                .any(|r| r.controller == Some(true) && r.uid == uid)
        });
        let before: Vec<&PersistentVolumeClaim> = before.iter().collect();
        let after: Vec<&PersistentVolumeClaim> = self.claims.values().collect();
        for v in invariants::check_claims_kept(&self.set, &before, &after) {
            self.violations.push(format!("t={} gc of {name}: {v}", self.t));
        }
    }

    pub(super) fn apply_effect(&mut self, e: &Effect) {
        let t = self.t;
        match e {
            Effect::AdoptRevision { revision, .. } | Effect::UpdateRevision(revision) => {
                let mut r = (**revision).clone();
                r.metadata.resource_version = Some(self.rv());
                self.revisions.insert(name_of_rev(revision), r);
            }
            Effect::CreateRevision(r) => {
                let name = name_of_rev(r);
                assert!(
                    !self.revisions.contains_key(&name),
                    "create-revision {name}: AlreadyExists"
                );
                let mut r = (**r).clone();
                r.metadata.uid = Some(self.uid("rev"));
                r.metadata.resource_version = Some(self.rv());
                r.metadata.creation_timestamp = Some(Time(ts(t)));
                self.revisions.insert(name, r);
            }
            Effect::DeleteRevision { name } => {
                self.revisions.remove(name);
            }
            Effect::CreateClaim(c) => {
                let name = c.metadata.name.clone().unwrap_or_default();
                assert!(!self.claims.contains_key(&name), "create-pvc {name}: AlreadyExists");
                let mut c = (**c).clone();
                c.metadata.uid = Some(self.uid("pvc"));
                c.metadata.resource_version = Some(self.rv());
                c.metadata.creation_timestamp = Some(Time(ts(t)));
                self.claims.insert(name, c);
            }
            Effect::UpdateClaim(c) => {
                let name = c.metadata.name.clone().unwrap_or_default();
                let rv = self.rv();
                let stored = self.claims.get_mut(&name);
                assert!(stored.is_some(), "update-pvc {name}: NotFound");
                if let Some(s) = stored {
                    s.metadata.owner_references.clone_from(&c.metadata.owner_references);
                    s.metadata.resource_version = Some(rv);
                }
            }
            Effect::CreatePod(p) => self.create_pod(p),
            Effect::UpdatePod(p)
            | Effect::AdoptPod { pod: p, .. }
            | Effect::ReleasePod { pod: p, .. } => {
                let name = p.metadata.name.clone().unwrap_or_default();
                let rv = self.rv();
                if let Some(s) = self.pods.get_mut(&name) {
                    s.metadata.labels.clone_from(&p.metadata.labels);
                    s.metadata.owner_references.clone_from(&p.metadata.owner_references);
                    s.metadata.resource_version = Some(rv);
                    if let (Some(ss), Some(ps)) = (s.spec.as_mut(), p.spec.as_ref()) {
                        ss.volumes.clone_from(&ps.volumes);
                    }
                }
            }
            Effect::DeletePod { name, .. } => {
                if self.pods.contains_key(name) {
                    self.delete_pod(name);
                }
            }
            Effect::WriteStatus(s) => {
                self.set.status = Some((**s).clone());
            }
        }
    }

    fn create_pod(&mut self, p: &Pod) {
        let name = p.metadata.name.clone().unwrap_or_default();
        if self.pods.contains_key(&name) {
            self.api_errors.push(format!("create-pod {name}: AlreadyExists"));
            return;
        }
        let mut p = p.clone();
        let uid = self.uid("pod");
        p.metadata.uid = Some(uid.clone());
        p.metadata.resource_version = Some(self.rv());
        p.metadata.creation_timestamp = Some(Time(ts(self.t)));
        p.status = Some(PodStatus { phase: Some("Pending".into()), ..Default::default() });
        let image = p
            .spec
            .as_ref()
            .and_then(|s| s.containers.first())
            .and_then(|c| c.image.clone())
            .unwrap_or_default();
        let no_ready = self.broken_images.contains(&image);
        self.timers.insert(uid, Timer { created: self.t, no_ready, ..Default::default() });
        self.pods.insert(name, p);
    }

    pub(super) fn kubelet_step(&mut self) {
        let t = self.t;
        let k = self.kubelet;
        let names: Vec<String> = self.pods.keys().cloned().collect();
        for name in names {
            let Some(uid) = self.pods.get(&name).and_then(|p| p.metadata.uid.clone()) else {
                continue;
            };
            let Some(tm) = self.timers.get(&uid).cloned() else { continue };
            if let Some(d) = tm.deleted {
                if t >= d + k.stop {
                    self.remove_pod(&name);
                }
                continue;
            }
            let phase = self
                .pods
                .get(&name)
                .map(|p| ststui::core::pod::phase(p).to_string())
                .unwrap_or_default();
            if phase == "Pending" && t >= tm.created + k.start {
                if let Some(p) = self.pods.get_mut(&name) {
                    let st = p.status.get_or_insert_with(Default::default);
                    st.phase = Some("Running".into());
                    set_ready(st, false, Some(t));
                }
                if let Some(tm) = self.timers.get_mut(&uid) {
                    tm.running_at = Some(t);
                }
                self.touch(&name);
            } else if phase == "Running" && !tm.no_ready {
                let ready = self.pods.get(&name).is_some_and(ststui::core::pod::is_ready);
                if !ready && t >= tm.running_at.unwrap_or(t) + k.ready {
                    if let Some(st) = self.pods.get_mut(&name).and_then(|p| p.status.as_mut()) {
                        set_ready(st, true, Some(t));
                    }
                    self.touch(&name);
                }
            }
        }
    }
}

fn name_of_rev(r: &ControllerRevision) -> String {
    r.metadata.name.clone().unwrap_or_default()
}

pub(super) fn set_ready(st: &mut PodStatus, ready: bool, at: Option<i64>) {
    let conds = st.conditions.get_or_insert_with(Vec::new);
    let status = if ready { "True" } else { "False" };
    match conds.iter_mut().find(|c| c.type_ == "Ready") {
        Some(c) if c.status == status => {}
        Some(c) => {
            c.status = status.into();
            c.last_transition_time = at.map(|s| Time(ts(s)));
        }
        None => conds.push(PodCondition {
            type_: "Ready".into(),
            status: status.into(),
            last_transition_time: at.map(|s| Time(ts(s))),
            ..Default::default()
        }),
    }
}
