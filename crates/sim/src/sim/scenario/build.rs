//! What `create` submits and what `expect` reads: the StatefulSet a `create` line describes (as
//! `kubectl apply` would send it, before API defaulting), and the evaluation of `expect` checks
//! against the set's stored status, its pods and its last sync.
//!
//! Owns: those two translations. Must not touch: the store (reads go through the `Sim` facade).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetOrdinals,
    StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetSpec, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{
    Container, PersistentVolumeClaim, PersistentVolumeClaimSpec, Pod, PodSpec, PodTemplateSpec,
    VolumeMount, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::{Check, CreateArgs, Name};
use crate::sim::Sim;

/// The label `create` puts on the selector and the pod template.
pub const APP_LABEL: &str = "app";
/// The container `create` defines (`image` changes its image).
pub const CONTAINER_NAME: &str = "app";

/// The StatefulSet a `create` line describes. Values are passed through unchecked: the
/// simulated API server defaults and validates them.
pub fn build_set(a: &CreateArgs) -> StatefulSet {
    let labels = BTreeMap::from([(APP_LABEL.to_string(), a.set.name.clone())]);
    let mounts: Vec<VolumeMount> = a
        .claims
        .iter()
        .map(|c| VolumeMount {
            name: c.clone(),
            mount_path: format!("/data/{c}"),
            ..Default::default()
        })
        .collect();
    let claim_templates: Vec<PersistentVolumeClaim> = a.claims.iter().map(|c| claim(c)).collect();
    let rolling_type = a.strategy == crate::core::spec::UpdateType::RollingUpdate;
    let rolling =
        (rolling_type || a.partition.is_some() || a.max_unavailable.is_some()).then(|| {
            RollingUpdateStatefulSetStrategy {
                partition: Some(a.partition.unwrap_or(0)),
                max_unavailable: a.max_unavailable.clone(),
            }
        });
    let strategy = a.strategy.as_str();
    StatefulSet {
        metadata: ObjectMeta {
            name: Some(a.set.name.clone()),
            namespace: Some(a.set.namespace.clone()),
            labels: (!a.labels.is_empty()).then(|| a.labels.clone()),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            replicas: Some(a.replicas),
            selector: LabelSelector { match_labels: Some(labels.clone()), match_expressions: None },
            service_name: Some(a.set.name.clone()),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels), ..Default::default() }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: CONTAINER_NAME.into(),
                        image: Some(a.image.clone()),
                        volume_mounts: (!mounts.is_empty()).then_some(mounts),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            pod_management_policy: Some(a.policy.as_str().into()),
            update_strategy: Some(StatefulSetUpdateStrategy {
                type_: Some(strategy.into()),
                rolling_update: rolling,
            }),
            min_ready_seconds: Some(a.min_ready_seconds),
            ordinals: a.start_ordinal.map(|s| StatefulSetOrdinals { start: Some(s) }),
            revision_history_limit: Some(a.history_limit),
            persistent_volume_claim_retention_policy: Some(
                StatefulSetPersistentVolumeClaimRetentionPolicy {
                    when_deleted: Some(a.when_deleted.as_str().into()),
                    when_scaled: Some(a.when_scaled.as_str().into()),
                },
            ),
            volume_claim_templates: (!claim_templates.is_empty()).then_some(claim_templates),
        },
        status: None,
    }
}

fn claim(name: &str) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec!["ReadWriteOnce".into()]),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([("storage".into(), Quantity("1Gi".into()))])),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: None,
    }
}

/// What `expect` compares against, read from the simulation now.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Observed {
    pub replicas: i32,
    pub ready: i32,
    pub available: i32,
    pub current: i32,
    pub updated: i32,
    pub rolled_out: bool,
    pub pods: Vec<String>,
    pub blocked: bool,
    pub claims: Vec<String>,
    pub partition: i32,
    /// The plan's phase as its record names it, or `none`.
    pub plan: String,
    /// The set's state in its rollout group as its part names it, or `none`.
    pub group: String,
}

impl Observed {
    /// What `expect` reads of `set`, given its pods and claims (as `expect` lists them) and
    /// whether the controller waits; on the simulator and on a cluster alike.
    pub fn of(
        set: &StatefulSet,
        pods: &[&Pod],
        claims: &[&PersistentVolumeClaim],
        blocked: bool,
    ) -> Observed {
        let status = set.status.clone().unwrap_or_default();
        let current = status.current_revision.unwrap_or_default();
        let update = status.update_revision.unwrap_or_default();
        let names = |m: &ObjectMeta| m.name.clone();
        Observed {
            replicas: status.replicas,
            ready: status.ready_replicas.unwrap_or(0),
            available: status.available_replicas.unwrap_or(0),
            current: status.current_replicas.unwrap_or(0),
            updated: status.updated_replicas.unwrap_or(0),
            rolled_out: !update.is_empty() && current == update,
            pods: pods.iter().filter_map(|p| names(&p.metadata)).collect(),
            blocked,
            claims: claims.iter().filter_map(|c| names(&c.metadata)).collect(),
            partition: crate::core::spec::strategy(set).partition,
            plan: match crate::plan::record::read(set) {
                crate::plan::record::Reading::None => "none".into(),
                crate::plan::record::Reading::Plan(r) => r.phase.name().into(),
                crate::plan::record::Reading::Invalid(_) => "invalid".into(),
            },
            group: match crate::plan::group::part::read(set) {
                crate::plan::group::part::Reading::None => "none".into(),
                crate::plan::group::part::Reading::Part(p)
                | crate::plan::group::part::Reading::Fleet(p) => p.state.word().into(),
                crate::plan::group::part::Reading::Invalid(_) => "invalid".into(),
            },
        }
    }
}

/// Reads the set's status, pods and last sync; `None` when the set does not exist.
pub fn observe(sim: &Sim, set: &Name) -> Option<Observed> {
    let key = set.as_ref();
    let s = sim.set(&key)?;
    let blocked = sim.last_plan(&key).is_some_and(|p| p.waiting_on.is_some());
    Some(Observed::of(s, &sim.pods_of(&key), &sim.claims_of(&key), blocked))
}

/// What the set has for `check`, in the script's notation.
fn actual(o: &Observed, check: &Check) -> String {
    match check {
        Check::Replicas(_) => o.replicas.to_string(),
        Check::Ready(_) => o.ready.to_string(),
        Check::Available(_) => o.available.to_string(),
        Check::Current(_) => o.current.to_string(),
        Check::Updated(_) => o.updated.to_string(),
        Check::RolledOut(_) => o.rolled_out.to_string(),
        Check::Pods(_) => o.pods.join(","),
        Check::Blocked(_) => o.blocked.to_string(),
        Check::Claims(_) => o.claims.join(","),
        Check::Partition(_) => o.partition.to_string(),
        Check::Plan(_) => o.plan.clone(),
        Check::Group(_) => o.group.clone(),
    }
}

/// Evaluates an `expect` line: whether every check held, and the `detail` of the event
/// (`web: replicas=3 ready=3` when it held; what differed otherwise).
pub fn evaluate(sim: &Sim, set: &Name, checks: &[Check]) -> (bool, String) {
    judge(observe(sim, set), set, checks)
}

/// Judges an `expect` line against what was observed of the set (`None`: it does not exist),
/// on the simulator or on a cluster (`ststui play`).
pub fn judge(observed: Option<Observed>, set: &Name, checks: &[Check]) -> (bool, String) {
    let Some(o) = observed else {
        return (false, format!("{set}: statefulset not found; expected it to exist"));
    };
    let mut wrong = Vec::new();
    for c in checks {
        let got = actual(&o, c);
        let want = c.value();
        if got != want {
            let show = |v: &str| if v.is_empty() { "(none)".to_string() } else { v.to_string() };
            wrong.push(format!("{}: expected {}, got {}", c.key(), show(&want), show(&got)));
        }
    }
    if wrong.is_empty() {
        let all: Vec<String> =
            checks.iter().map(|c| format!("{}={}", c.key(), c.value())).collect();
        (true, format!("{set}: {}", all.join(" ")))
    } else {
        (false, format!("{set}: {}", wrong.join("; ")))
    }
}

/// The PodDisruptionBudget a `pdb` line describes, selecting as `selector` (the set's own).
pub fn build_budget(
    a: &super::BudgetArgs,
    selector: LabelSelector,
) -> k8s_openapi::api::policy::v1::PodDisruptionBudget {
    use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
    PodDisruptionBudget {
        metadata: ObjectMeta {
            name: Some(a.name.name.clone()),
            namespace: Some(a.name.namespace.clone()),
            ..Default::default()
        },
        spec: Some(PodDisruptionBudgetSpec {
            min_available: a.min_available.clone(),
            max_unavailable: a.max_unavailable.clone(),
            selector: Some(selector),
            unhealthy_pod_eviction_policy: a.unhealthy.clone(),
        }),
        status: None,
    }
}
