//! Console and script operations ([`Op`]) applied to the simulation: StatefulSet spec patches
//! (partition, strategy, maxUnavailable, replicas, image, `kubectl rollout restart` and
//! `kubectl rollout undo`), pod deletion, kubelet faults, and pause / resume / step.
//!
//! Bad input is refused with an [`OpError`] that names what was wrong and what is expected.
//! Owns: turning an Op into API calls. Must not: bypass the API layer, or handle speed (the
//! real-time driver's business).

use k8s_openapi::api::apps::v1::{
    ControllerRevision, RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetSpec,
};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::api::{self, ApiError};
use super::engine::{self, World};
use super::kubelet::FaultError;
use super::store::{Store, StoreError};
use crate::backend::{ObjRef, Op};
use crate::core::labels::RESTARTED_AT_ANNOTATION;

/// Why an operation was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OpError {
    #[error("statefulset {0} not found: expected the name of an existing StatefulSet")]
    SetNotFound(ObjRef),
    #[error("pod {0} not found: expected the name of an existing pod (e.g. web-0)")]
    PodNotFound(ObjRef),
    /// A bad value: the message says what was wrong and what is expected.
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error(transparent)]
    Fault(#[from] FaultError),
    #[error("step needs the controller paused (press space to pause first)")]
    NotPaused,
    #[error("speed applies to the real-time console; a headless run has no wall clock")]
    SpeedNeedsDriver,
    #[error("{set} has no previous revision to roll back to (it has {count})")]
    NoPreviousRevision { set: ObjRef, count: usize },
    #[error("revision {revision} of {set} not found: expected one of {available}")]
    RevisionNotFound { set: ObjRef, revision: i64, available: String },
}

/// A short description of an op, for `OpFailed` and logs (e.g. `partition default/web 2`).
pub fn describe(op: &Op) -> String {
    match op {
        Op::SetPartition { set, partition } => format!("partition {set} {partition}"),
        Op::SetOnDelete { set, on_delete: true, .. } => format!("strategy {set} OnDelete"),
        Op::SetOnDelete { set, on_delete: false, rolling } => {
            match rolling.as_ref().and_then(|r| r.partition) {
                Some(p) => format!("strategy {set} RollingUpdate (partition {p})"),
                None => format!("strategy {set} RollingUpdate"),
            }
        }
        Op::SetMaxUnavailable { set, value } => {
            format!("maxunavailable {set} {}", int_or_str(value))
        }
        Op::Scale { set, replicas } => format!("scale {set} {replicas}"),
        Op::SetImage { set, image } => format!("image {set} {image}"),
        Op::Restart { set } => format!("restart {set}"),
        Op::Undo { set, revision } => match revision {
            Some(r) => format!("undo {set} {r}"),
            None => format!("undo {set}"),
        },
        Op::DeletePod { pod, force: false } => format!("delete-pod {pod}"),
        Op::DeletePod { pod, force: true } => format!("force-delete-pod {pod}"),
        Op::FailPod { pod } => format!("fail {pod}"),
        Op::SetPodReady { pod, ready: true } => format!("ready {pod}"),
        Op::SetPodReady { pod, ready: false } => format!("unready {pod}"),
        Op::BreakPod { pod } => format!("break {pod}"),
        Op::Pause => "pause".into(),
        Op::Resume => "resume".into(),
        Op::Step { n } => format!("step {n}"),
        Op::SetSpeed { speed } => format!("speed {speed}"),
    }
}

fn int_or_str(v: &IntOrString) -> String {
    match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

/// Applies `op`. Effects show up as events once the world runs (`advance`/`settle`/`step`).
pub fn apply(w: &mut World, op: Op) -> Result<(), OpError> {
    match op {
        // Values are validated by the API layer, with the API server's own messages.
        Op::SetPartition { set, partition } => {
            patch_rolling(w, &set, "partition", |ru| ru.partition = Some(partition))
        }
        Op::SetOnDelete { set, on_delete, rolling } => patch_spec(w, &set, |spec| {
            let strategy = spec.update_strategy.get_or_insert_with(Default::default);
            strategy.type_ = Some(if on_delete { "OnDelete" } else { "RollingUpdate" }.into());
            if on_delete {
                strategy.rolling_update = None;
            } else if rolling.is_some() {
                strategy.rolling_update = rolling;
            }
            Ok(())
        }),
        Op::SetMaxUnavailable { set, value } => {
            patch_rolling(w, &set, "maxUnavailable", |ru| ru.max_unavailable = Some(value))
        }
        Op::Scale { set, replicas } => patch_spec(w, &set, |spec| {
            spec.replicas = Some(replicas);
            Ok(())
        }),
        Op::SetImage { set, image } => set_image(w, &set, image),
        Op::Restart { set } => {
            let at = w.store.clock().timestamp().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
            patch_spec(w, &set, |spec| {
                let meta = spec.template.metadata.get_or_insert_with(Default::default);
                meta.annotations
                    .get_or_insert_with(Default::default)
                    .insert(RESTARTED_AT_ANNOTATION.into(), at);
                Ok(())
            })
        }
        Op::Undo { set, revision } => undo(w, &set, revision),
        Op::DeletePod { pod, force } => match api::delete_pod(&mut w.store, &pod, force) {
            Err(ApiError::Store(StoreError::NotFound { .. })) => Err(OpError::PodNotFound(pod)),
            other => other.map(drop).map_err(OpError::from),
        },
        Op::FailPod { pod } => Ok(w.kubelet.fail(&pod, &mut w.store, &mut w.agenda)?),
        Op::SetPodReady { pod, ready } => {
            Ok(w.kubelet.set_ready(&pod, ready, &mut w.store, &mut w.agenda)?)
        }
        Op::BreakPod { pod } => Ok(w.kubelet.break_pod(&pod, &mut w.store, &mut w.agenda)?),
        Op::Pause => {
            w.set_paused(true);
            Ok(())
        }
        Op::Resume => {
            w.set_paused(false);
            Ok(())
        }
        Op::Step { n } => {
            if !w.controller.is_paused() {
                return Err(OpError::NotPaused);
            }
            engine::step(w, n);
            Ok(())
        }
        Op::SetSpeed { .. } => Err(OpError::SpeedNeedsDriver),
    }
}

/// Reads the set, lets `f` change its spec, and PUTs it through the API layer.
fn patch_spec(
    w: &mut World,
    key: &ObjRef,
    f: impl FnOnce(&mut StatefulSetSpec) -> Result<(), OpError>,
) -> Result<(), OpError> {
    let mut set: StatefulSet =
        w.store.sets().get(key).cloned().ok_or_else(|| OpError::SetNotFound(key.clone()))?;
    f(&mut set.spec)?;
    let semantics = w.controller.options().semantics;
    api::update_set(&mut w.store, set, &semantics)?;
    Ok(())
}

/// A patch of `spec.updateStrategy.rollingUpdate`; refused for OnDelete sets.
fn patch_rolling(
    w: &mut World,
    key: &ObjRef,
    field: &str,
    f: impl FnOnce(&mut RollingUpdateStatefulSetStrategy),
) -> Result<(), OpError> {
    patch_spec(w, key, |spec| {
        let strategy = spec.update_strategy.get_or_insert_with(Default::default);
        if strategy.type_.as_deref() == Some("OnDelete") {
            return Err(OpError::Invalid(format!(
                "{field} applies to the RollingUpdate strategy; {key} uses OnDelete (switch the strategy first)"
            )));
        }
        f(strategy.rolling_update.get_or_insert_with(Default::default));
        Ok(())
    })
}

fn set_image(w: &mut World, key: &ObjRef, image: String) -> Result<(), OpError> {
    if image.trim().is_empty() {
        return Err(OpError::Invalid(
            "image is empty: expected an image reference like nginx:1.27".into(),
        ));
    }
    patch_spec(w, key, |spec| {
        let containers = &mut spec.template.spec.get_or_insert_with(Default::default).containers;
        let Some(first) = containers.first_mut() else {
            return Err(OpError::Invalid(format!(
                "{key} has no containers: expected at least one"
            )));
        };
        first.image = Some(image);
        Ok(())
    })
}

/// The pod template a revision stores (`{"spec":{"template":{"$patch":"replace", ...}}}`).
fn revision_template(
    rev: &k8s_openapi::api::apps::v1::ControllerRevision,
) -> Option<PodTemplateSpec> {
    let mut template = rev.data.0.get("spec")?.get("template")?.clone();
    if let Some(obj) = template.as_object_mut() {
        obj.remove("$patch");
    }
    serde_json::from_value(template).ok()
}

/// The ControllerRevisions `set` controls, by revision number (what `kubectl rollout history`
/// lists).
pub(crate) fn controlled_revisions<'s>(
    store: &'s Store,
    set: &StatefulSet,
) -> Vec<&'s ControllerRevision> {
    let (ns, uid) = (set.metadata.namespace.as_deref().unwrap_or_default(), &set.metadata.uid);
    let mut revs: Vec<&ControllerRevision> = store
        .revisions()
        .in_namespace(ns)
        .filter(|r| {
            let refs = r.metadata.owner_references.iter().flatten();
            refs.into_iter().any(|o| o.controller == Some(true) && Some(&o.uid) == uid.as_ref())
        })
        .collect();
    revs.sort_by_key(|r| r.revision);
    revs
}

/// `kubectl rollout undo`: the set's revisions (controlled by it), by number; the target is
/// `revision`, or the second newest when `None`. A template that already matches is a no-op.
fn undo(w: &mut World, key: &ObjRef, revision: Option<i64>) -> Result<(), OpError> {
    let set = w.store.sets().get(key).ok_or_else(|| OpError::SetNotFound(key.clone()))?;
    let history = controlled_revisions(&w.store, set);
    let target = match revision {
        None | Some(0) => {
            if history.len() <= 1 {
                return Err(OpError::NoPreviousRevision { set: key.clone(), count: history.len() });
            }
            history.get(history.len() - 2).copied()
        }
        Some(n) => history.iter().find(|r| r.revision == Some(n)).copied(),
    };
    let Some(target) = target else {
        let available: Vec<String> =
            history.iter().filter_map(|r| r.revision.map(|n| n.to_string())).collect();
        let available =
            if available.is_empty() { "none".to_string() } else { available.join(", ") };
        let revision = revision.unwrap_or(0);
        return Err(OpError::RevisionNotFound { set: key.clone(), revision, available });
    };
    let template = revision_template(target).ok_or_else(|| {
        let name = target.metadata.name.clone().unwrap_or_default();
        OpError::Invalid(format!(
            "revision {name} holds no pod template: expected spec.template in its data"
        ))
    })?;
    if set.spec.template == template {
        return Ok(());
    }
    patch_spec(w, key, |spec| {
        spec.template = template;
        Ok(())
    })
}
