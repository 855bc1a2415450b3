//! Shared helpers for the simulator integration tests: set builders and a small stand-in
//! reconciler (Parallel-style: create missing ordinals, delete condemned and failed pods, write
//! status, wait on the first unready pod, set claims' ownerRefs from the retention policy), so
//! the loop can be tested independently of the real core.
#![allow(dead_code, reason = "each test binary uses part of the shared support")]

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetSpec,
    StatefulSetStatus,
};
use k8s_openapi::api::core::v1::{
    Container, PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod, PodSpec,
    PodTemplateSpec, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use k8s_openapi::jiff::Timestamp;
use ststui::backend::{EventKind, ObjRef};
use ststui::core::labels::{is_member_name, ordinal_of};
use ststui::core::{Blocker, DeleteReason, Effect, Observed, Options, Plan, PodWait};
use ststui::sim::{Sim, SimConfig, SimEvent};

pub use super::objects::{key, set};

/// Adds a claim template `data` and a retention policy.
pub fn with_claims(mut s: StatefulSet, when_deleted: &str, when_scaled: &str) -> StatefulSet {
    s.spec.volume_claim_templates = Some(vec![PersistentVolumeClaim {
        metadata: ObjectMeta { name: Some("data".into()), ..Default::default() },
        ..Default::default()
    }]);
    s.spec.persistent_volume_claim_retention_policy =
        Some(StatefulSetPersistentVolumeClaimRetentionPolicy {
            when_deleted: Some(when_deleted.into()),
            when_scaled: Some(when_scaled.into()),
        });
    s
}

pub fn sim_with_fake(kubelet: ststui::sim::KubeletConfig) -> Sim {
    Sim::new(SimConfig { seed: 1, kubelet, ..Default::default() }).with_reconciler(fake_reconcile)
}

fn owner(kind: &str, name: &str, uid: &str) -> OwnerReference {
    OwnerReference {
        api_version: if kind == "Pod" { "v1" } else { "apps/v1" }.into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

fn phase(p: &Pod) -> &str {
    p.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("")
}

pub fn ready(p: &Pod) -> bool {
    p.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn ready_since(p: &Pod) -> Option<Timestamp> {
    let c = p.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == "Ready")?;
    (c.status == "True").then(|| c.last_transition_time.as_ref().map(|t| t.0))?
}

fn claim_templates(set: &StatefulSet) -> Vec<String> {
    let t = set.spec.volume_claim_templates.iter().flatten();
    t.filter_map(|t| t.metadata.name.clone()).collect()
}

fn policy(set: &StatefulSet) -> (bool, bool) {
    let p = set.spec.persistent_volume_claim_retention_policy.as_ref();
    let del = |v: Option<&String>| v.is_some_and(|v| v == "Delete");
    (del(p.and_then(|p| p.when_deleted.as_ref())), del(p.and_then(|p| p.when_scaled.as_ref())))
}

fn new_pod(set: &StatefulSet, uid: &str, ordinal: i32) -> Pod {
    let name = set.metadata.name.clone().unwrap_or_default();
    let pod_name = format!("{name}-{ordinal}");
    let mut spec = set.spec.template.spec.clone().unwrap_or_default();
    for t in claim_templates(set) {
        spec.volumes.get_or_insert_with(Vec::new).push(Volume {
            name: t.clone(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: format!("{t}-{name}-{ordinal}"),
                read_only: None,
            }),
            ..Default::default()
        });
    }
    Pod {
        metadata: ObjectMeta {
            name: Some(pod_name),
            namespace: set.metadata.namespace.clone(),
            labels: set.spec.template.metadata.as_ref().and_then(|m| m.labels.clone()),
            owner_references: Some(vec![owner("StatefulSet", &name, uid)]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    }
}

/// The stand-in core. Parallel: every missing ordinal is created in one sync.
pub fn fake_reconcile(o: &Observed<'_>, opts: &Options, now: Timestamp) -> Plan {
    let set = o.set;
    let name = set.metadata.name.clone().unwrap_or_default();
    let uid = set.metadata.uid.clone().unwrap_or_default();
    let replicas = set.spec.replicas.unwrap_or(1);
    let min_ready = i64::from(set.spec.min_ready_seconds.unwrap_or(0));
    let (when_deleted, when_scaled) = policy(set);
    let owned: Vec<&Pod> = o
        .pods
        .iter()
        .copied()
        .filter(|p| is_member_name(&name, p.metadata.name.as_deref().unwrap_or("")))
        .filter(|p| p.metadata.owner_references.iter().flatten().any(|r| r.uid == uid))
        .collect();
    let find = |n: &str| owned.iter().find(|p| p.metadata.name.as_deref() == Some(n));
    let mut effects = Vec::new();
    let mut waiting = None;
    for i in 0..replicas {
        let pod_name = format!("{name}-{i}");
        match find(&pod_name) {
            None => {
                for t in claim_templates(set) {
                    let claim = format!("{t}-{name}-{i}");
                    if o.claims.iter().any(|c| c.metadata.name.as_deref() == Some(&claim)) {
                        continue;
                    }
                    let refs = when_deleted.then(|| vec![owner("StatefulSet", &name, &uid)]);
                    effects.push(Effect::CreateClaim(Box::new(PersistentVolumeClaim {
                        metadata: ObjectMeta {
                            name: Some(claim),
                            owner_references: refs,
                            ..Default::default()
                        },
                        ..Default::default()
                    })));
                }
                effects.push(Effect::CreatePod(Box::new(new_pod(set, &uid, i))));
            }
            Some(p) if phase(p) == "Failed" && p.metadata.deletion_timestamp.is_none() => {
                let reason = DeleteReason::Failed;
                effects.push(Effect::DeletePod { name: pod_name, reason });
            }
            Some(p) if !ready(p) && waiting.is_none() => {
                let wait = if phase(p) == "Running" { PodWait::NotReady } else { PodWait::Pending };
                waiting = Some(Blocker::Ordered { pod: pod_name, ordinal: i, wait });
            }
            _ => {}
        }
    }
    for p in &owned {
        let pod_name = p.metadata.name.clone().unwrap_or_default();
        let ord = ordinal_of(&pod_name);
        if ord < replicas || p.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if when_scaled {
            for t in claim_templates(set) {
                let claim = format!("{t}-{name}-{ord}");
                if let Some(c) =
                    o.claims.iter().find(|c| c.metadata.name.as_deref() == Some(&claim))
                {
                    let mut c = (*c).clone();
                    let pod_uid = p.metadata.uid.clone().unwrap_or_default();
                    c.metadata.owner_references = Some(vec![owner("Pod", &pod_name, &pod_uid)]);
                    effects.push(Effect::UpdateClaim(Box::new(c)));
                }
            }
        }
        effects.push(Effect::DeletePod { name: pod_name, reason: DeleteReason::ScaleDown });
    }
    let created: Vec<&&Pod> = owned.iter().filter(|p| !phase(p).is_empty()).collect();
    let ready_n = created.iter().filter(|p| ready(p) && phase(p) == "Running").count() as i32;
    let available = created
        .iter()
        .filter(|p| ready(p) && phase(p) == "Running")
        .filter(|p| {
            let at_deadline = opts.semantics.available_at_deadline;
            min_ready == 0
                || ready_since(p).is_some_and(|t| {
                    let (deadline, now) = (t.as_second() + min_ready, now.as_second());
                    deadline < now || (at_deadline && deadline == now)
                })
        })
        .count() as i32;
    let status = StatefulSetStatus {
        replicas: created.len() as i32,
        ready_replicas: Some(ready_n),
        available_replicas: Some(available),
        current_replicas: Some(created.len() as i32),
        updated_replicas: Some(created.len() as i32),
        current_revision: Some(format!("{name}-rev")),
        update_revision: Some(format!("{name}-rev")),
        observed_generation: set.metadata.generation,
        collision_count: Some(0),
        conditions: None,
    };
    if set.status.as_ref() != Some(&status) {
        effects.push(Effect::WriteStatus(Box::new(status.clone())));
    }
    let requeue_after_ms =
        (min_ready > 0 && available != replicas).then_some(min_ready as u64 * 1000);
    Plan { effects, status, waiting_on: waiting, requeue_after_ms, ..Default::default() }
}

/// The timeline entries among `events`, as their JSONL lines.
pub fn timeline(events: &[SimEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(SimEvent::timeline)
        .map(|e| serde_json::to_string(e).unwrap_or_default())
        .collect()
}

/// The (kind-word, detail) pairs of the timeline, e.g. ("kubelet", "web-0 ready").
pub fn lines(events: &[SimEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(SimEvent::timeline)
        .map(|e| {
            let body = match &e.kind {
                EventKind::Controller { action, pod, pvc, revision, reason, .. } => {
                    let what = pod.clone().or(pvc.clone()).or(revision.clone()).unwrap_or_default();
                    let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
                    format!("controller {action} {what}{why}")
                }
                EventKind::Kubelet { pod, event } => format!("kubelet {pod} {event}"),
                EventKind::Gc { pod, pvc } => {
                    format!("gc {}", pod.clone().or(pvc.clone()).unwrap_or_default())
                }
                EventKind::Blocked { reason, .. } => format!("blocked {reason}"),
                EventKind::Status { replicas, ready_replicas, .. } => {
                    format!("status {replicas}/{ready_replicas}")
                }
                EventKind::Error { message, .. } => format!("error {message}"),
                other => format!("{other:?}"),
            };
            format!("{:>6} {body}", e.t_ms)
        })
        .collect()
}
