//! The writes a cluster backend carries out ([`ClusterOp`]) and the permissions they need
//! ([`WriteKind`]).

use k8s_openapi::api::apps::v1::RollingUpdateStatefulSetStrategy;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::ObjRef;
use crate::core::spec::UpdateType;

/// The writes a cluster backend carries out: StatefulSet spec patches (with the client-side
/// logic of `steer`, shared by both backends), scale through `/scale`, pod deletion, and the
/// console's freeze / resume.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterOp {
    SetPartition {
        set: ObjRef,
        partition: i32,
    },
    /// The type to switch to. OnDelete and Recreate clear `rollingUpdate` (validation allows
    /// it under RollingUpdate only). With `rolling`, the switch to RollingUpdate also sets
    /// `spec.updateStrategy.rollingUpdate` (the console always sends one: a type-only switch
    /// leaves it nil, and the controller then creates missing pods at the current revision).
    SetStrategy {
        set: ObjRef,
        kind: crate::core::spec::UpdateType,
        rolling: Option<RollingUpdateStatefulSetStrategy>,
    },
    SetMaxUnavailable {
        set: ObjRef,
        value: IntOrString,
    },
    /// `spec.replicas`, through the `/scale` subresource on a cluster.
    Scale {
        set: ObjRef,
        replicas: i32,
    },
    /// Set the first container's image (a new template, so a new revision).
    SetImage {
        set: ObjRef,
        image: String,
    },
    /// `kubectl rollout restart`: set the `kubectl.kubernetes.io/restartedAt` annotation.
    Restart {
        set: ObjRef,
    },
    /// `kubectl rollout undo`: roll the template back to revision number `revision`, or to the
    /// previous one when `None`.
    Undo {
        set: ObjRef,
        revision: Option<i64>,
    },
    /// Delete a pod; `force` removes it at once (grace period 0). `uid`, when given, is a
    /// precondition: a pod recreated under the same name since is left alone.
    DeletePod {
        pod: ObjRef,
        force: bool,
        uid: Option<String>,
    },
    /// Evict a pod (`pods/eviction`): the disruption budgets that select it judge it, and a
    /// refusal ([`FailureKind::Disruption`]) names the budget; `uid` as for `DeletePod`. How
    /// ststui removes a pod itself (the console's delete, an OnDelete step, abort).
    EvictPod {
        pod: ObjRef,
        uid: Option<String>,
    },
    /// `ststui step`: the partition from `from` (refused when it reads otherwise) to `to`, with
    /// a record of the step on the set (`steer::step`), so a rerun after an unknown outcome
    /// does not step twice.
    Step {
        set: ObjRef,
        from: i32,
        to: i32,
    },
    /// The step's outcome is known: its record goes.
    StepSettled {
        set: ObjRef,
    },
    /// Pods deleted past their disruption budget (`ststui abort --force-delete REASON`, the
    /// console's force-delete): the record (JSON: who — the writer's identity —, when, the
    /// pods, the reason, the budget's refusal when one was seen) written on the set
    /// (`steer::FORCE_DELETED`, `steer::forced`), before the deletion, so the bypass is on the
    /// server beside what it did.
    ForceDeleted {
        set: ObjRef,
        pods: Vec<String>,
        reason: String,
        refused: Option<String>,
    },
    /// Hold the rollout: the partition goes to `replicas`, and the previous partition, who
    /// froze it (the backend's identity) and when are recorded in annotations on the set
    /// (`steer::freeze`).
    Freeze {
        set: ObjRef,
    },
    /// Undo a freeze: the recorded partition comes back and the annotations go. Refused when
    /// another writer moved the partition meanwhile (a broken freeze) or the record is not a
    /// partition, unless `force`.
    Unfreeze {
        set: ObjRef,
        force: bool,
    },
    /// A rollout plan's record (`plan::record`, JSON) written on the set; with `partition`
    /// `(from, to)`, the partition moves from `from` (refused when it reads otherwise) to `to`
    /// in the same patch, lifting a freeze that held it.
    Plan {
        set: ObjRef,
        partition: Option<(i32, i32)>,
        record: String,
    },
    /// A Recreate plan's step opened: the template's first container set to `image` and the
    /// plan's record written in the same patch (the controller then deletes every old pod, so
    /// the record never says less than what the write started). Refused when the set is no
    /// longer of type Recreate.
    PlanRecreate {
        set: ObjRef,
        image: String,
        record: String,
    },
    /// A plan runner's lease (`plan::record::Lease`, JSON), or its removal (`None`), refused
    /// when the set's lease no longer reads `seen`.
    PlanLease {
        set: ObjRef,
        lease: Option<String>,
        seen: Option<String>,
    },
    /// A rollout group's lease (`plan::group::part`, on the group's first set), or its removal,
    /// refused when it no longer reads `seen`.
    GroupLease {
        set: ObjRef,
        lease: Option<String>,
        seen: Option<String>,
    },
    /// A group member's part of the group's record (`plan::group::part::Part`, JSON), or its
    /// removal.
    GroupPart {
        set: ObjRef,
        part: Option<String>,
    },
}

impl ClusterOp {
    /// A short description in scenario words (`partition default/web 2`).
    pub fn describe(&self) -> String {
        let ios = crate::core::spec::int_or_string_text;
        match self {
            ClusterOp::SetPartition { set, partition } => format!("partition {set} {partition}"),
            ClusterOp::SetStrategy { set, kind, rolling } => {
                match rolling.as_ref().and_then(|r| r.partition) {
                    Some(p) if *kind == UpdateType::RollingUpdate => {
                        format!("strategy {set} RollingUpdate (partition {p})")
                    }
                    _ => format!("strategy {set} {kind}"),
                }
            }
            ClusterOp::SetMaxUnavailable { set, value } => {
                format!("maxunavailable {set} {}", ios(value))
            }
            ClusterOp::Scale { set, replicas } => format!("scale {set} {replicas}"),
            ClusterOp::SetImage { set, image } => format!("image {set} {image}"),
            ClusterOp::Restart { set } => format!("restart {set}"),
            ClusterOp::Undo { set, revision } => match revision {
                Some(r) => format!("undo {set} {r}"),
                None => format!("undo {set}"),
            },
            ClusterOp::DeletePod { pod, force: false, .. } => format!("delete-pod {pod}"),
            ClusterOp::DeletePod { pod, force: true, .. } => format!("force-delete-pod {pod}"),
            ClusterOp::EvictPod { pod, .. } => format!("evict {pod}"),
            ClusterOp::Step { set, to, .. } => format!("partition {set} {to}"),
            ClusterOp::StepSettled { set } => format!("step-settled {set}"),
            ClusterOp::Freeze { set } => format!("freeze {set}"),
            ClusterOp::ForceDeleted { set, .. } => format!("force-deleted-record {set}"),
            ClusterOp::Unfreeze { set, force: false } => format!("unfreeze {set}"),
            ClusterOp::Unfreeze { set, force: true } => format!("unfreeze {set} force"),
            ClusterOp::Plan { set, partition: Some((_, to)), .. } => {
                format!("plan {set} partition {to}")
            }
            ClusterOp::Plan { set, partition: None, .. } => format!("plan-record {set}"),
            ClusterOp::PlanRecreate { set, image, .. } => format!("plan {set} image {image}"),
            ClusterOp::PlanLease { set, lease: Some(_), .. } => format!("plan-lease {set}"),
            ClusterOp::PlanLease { set, lease: None, .. } => format!("plan-release {set}"),
            ClusterOp::GroupLease { set, lease: Some(_), .. } => format!("group-lease {set}"),
            ClusterOp::GroupLease { set, lease: None, .. } => format!("group-release {set}"),
            ClusterOp::GroupPart { set, .. } => format!("group-part {set}"),
        }
    }

    /// The object the write is about (a set, or a pod for [`ClusterOp::DeletePod`]).
    pub fn target(&self) -> &ObjRef {
        match self {
            ClusterOp::SetPartition { set, .. }
            | ClusterOp::SetStrategy { set, .. }
            | ClusterOp::SetMaxUnavailable { set, .. }
            | ClusterOp::Scale { set, .. }
            | ClusterOp::SetImage { set, .. }
            | ClusterOp::Restart { set }
            | ClusterOp::Undo { set, .. }
            | ClusterOp::Freeze { set }
            | ClusterOp::ForceDeleted { set, .. }
            | ClusterOp::Step { set, .. }
            | ClusterOp::StepSettled { set }
            | ClusterOp::Unfreeze { set, .. }
            | ClusterOp::Plan { set, .. }
            | ClusterOp::PlanRecreate { set, .. }
            | ClusterOp::PlanLease { set, .. }
            | ClusterOp::GroupLease { set, .. }
            | ClusterOp::GroupPart { set, .. } => set,
            ClusterOp::DeletePod { pod, .. } | ClusterOp::EvictPod { pod, .. } => pod,
        }
    }

    /// Which permission the write needs.
    pub fn kind(&self) -> WriteKind {
        match self {
            ClusterOp::Scale { .. } => WriteKind::Scale,
            ClusterOp::DeletePod { .. } => WriteKind::DeletePod,
            ClusterOp::EvictPod { .. } => WriteKind::EvictPod,
            _ => WriteKind::PatchSet,
        }
    }
}

/// The permissions writes need (checked with SelfSubjectAccessReview on a cluster).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WriteKind {
    /// `patch statefulsets` (apps).
    PatchSet,
    /// `patch statefulsets/scale` (apps).
    Scale,
    /// `delete pods`.
    DeletePod,
    /// `create pods/eviction`.
    EvictPod,
}

impl WriteKind {
    pub const ALL: [WriteKind; 4] =
        [WriteKind::PatchSet, WriteKind::Scale, WriteKind::DeletePod, WriteKind::EvictPod];

    /// The RBAC words: (verb, group, resource, subresource).
    pub fn rbac(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            WriteKind::PatchSet => ("patch", "apps", "statefulsets", ""),
            WriteKind::Scale => ("patch", "apps", "statefulsets", "scale"),
            WriteKind::DeletePod => ("delete", "", "pods", ""),
            WriteKind::EvictPod => ("create", "", "pods", "eviction"),
        }
    }

    /// How a permission is written in messages: `patch statefulsets/scale (apps)`.
    pub fn describe(self) -> String {
        describe_rbac(self.rbac())
    }
}

/// A permission (verb, group, resource, subresource) as messages write it:
/// `patch statefulsets/scale (apps)`.
pub fn describe_rbac((verb, group, resource, sub): (&str, &str, &str, &str)) -> String {
    let sub = if sub.is_empty() { String::new() } else { format!("/{sub}") };
    let group = if group.is_empty() { "core" } else { group };
    format!("{verb} {resource}{sub} ({group})")
}
