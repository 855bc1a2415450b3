//! PodDisruptionBudgets in the simulator: what the API server does with one (create with its
//! status zeroed and generation 1, spec updates bumping generation, status writes; validated as
//! upstream's `policy/validation`), the disruption controller that keeps its status (computed by
//! [`crate::core::budget::health`] for the namespaces whose pods, sets or budgets changed, once
//! per virtual instant: `engine::disrupt`),
//! and the eviction subresource (`pods/eviction`): judged by [`crate::core::budget::evict`],
//! charged to the budget (`disruptionsAllowed` − 1, the pod in `disruptedPods`), then the pod is
//! marked `DisruptionTarget` and deleted as a DELETE would.
//!
//! Owns: the budget verbs, the status sync, evictions. Must not: decide health or verdicts
//! (that is `core::budget`), or run anything but the store and the agenda.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, OwnerReference, Time};
use serde_json::Value;

use super::api::{self, ApiError, Deleted};
use super::clock::{Agenda, Due};
use super::store::{Change, Store, StoreError, key_of};
use super::validate::{self, FieldError, ValidationError};
use crate::backend::{ObjRef, Object};
use crate::core::budget::{self, Eviction};

/// The condition type the disruption controller keeps.
pub const ALLOWED: &str = "DisruptionAllowed";

const POLICIES: &[&str] = &["AlwaysAllow", "IfHealthyBudget"];

/// Upstream `ValidatePodDisruptionBudgetSpec`.
pub fn validate(pdb: &PodDisruptionBudget) -> Result<(), ValidationError> {
    let name = pdb.metadata.name.clone().unwrap_or_default();
    let spec = pdb.spec.clone().unwrap_or_default();
    let mut errs = Vec::new();
    if spec.min_available.is_some() && spec.max_unavailable.is_some() {
        let v = serde_json::to_value(&spec).unwrap_or(Value::Null);
        errs.push(FieldError::invalid(
            "spec",
            v,
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for (path, v) in
        [("spec.minAvailable", &spec.min_available), ("spec.maxUnavailable", &spec.max_unavailable)]
    {
        if let Some(v) = v {
            errs.extend(validate::positive_int_or_percent(path, v));
            errs.extend(validate::not_over_100_percent(path, v));
        }
    }
    if let Some(sel) = &spec.selector {
        errs.extend(validate::validate_label_selector("spec.selector", sel));
    }
    if let Some(p) = spec.unhealthy_pod_eviction_policy.as_deref().filter(|p| !POLICIES.contains(p))
    {
        errs.push(FieldError::not_supported("spec.unhealthyPodEvictionPolicy", p, POLICIES));
    }
    validate::finish_kind("PodDisruptionBudget.policy", &name, errs)
}

/// POST a budget: validated; its status starts empty (every count 0), as upstream's strategy.
pub fn create_budget(
    store: &mut Store,
    ns: &str,
    mut pdb: PodDisruptionBudget,
) -> Result<PodDisruptionBudget, ApiError> {
    pdb.metadata.namespace = Some(ns.to_string());
    validate(&pdb)?;
    pdb.status = Some(PodDisruptionBudgetStatus {
        current_healthy: Some(0),
        desired_healthy: Some(0),
        disruptions_allowed: Some(0),
        expected_pods: Some(0),
        ..Default::default()
    });
    Ok(store.create(pdb)?.clone())
}

/// PUT a budget's main resource: validated; status kept; generation bumped on a spec change.
pub fn update_budget(
    store: &mut Store,
    ns: &str,
    mut pdb: PodDisruptionBudget,
) -> Result<(), ApiError> {
    pdb.metadata.namespace = Some(ns.to_string());
    validate(&pdb)?;
    store.update_budget(pdb)?;
    Ok(())
}

/// PUT a budget's `/status`: counts may not be negative (upstream's status validation).
pub fn write_status(
    store: &mut Store,
    key: &ObjRef,
    status: PodDisruptionBudgetStatus,
) -> Result<(), ApiError> {
    let counts = [
        ("status.disruptionsAllowed", status.disruptions_allowed),
        ("status.currentHealthy", status.current_healthy),
        ("status.desiredHealthy", status.desired_healthy),
        ("status.expectedPods", status.expected_pods),
    ];
    let errs = counts
        .iter()
        .filter(|(_, v)| v.unwrap_or(0) < 0)
        .map(|(p, v)| {
            FieldError::invalid(
                p,
                Value::from(v.unwrap_or(0)),
                "must be greater than or equal to 0",
            )
        })
        .collect();
    validate::finish_kind("PodDisruptionBudget.policy", &key.name, errs)?;
    store.modify::<PodDisruptionBudget>(key, |b| b.status = Some(status))?;
    Ok(())
}

/// The disruption controller: which namespaces' budgets need their status computed again.
#[derive(Debug, Default)]
pub struct Disruption {
    dirty: BTreeSet<String>,
}

impl Disruption {
    /// A change of a pod, a set or a budget makes its namespace's budgets due.
    pub fn observe(&mut self, change: &Change) {
        if matches!(change.object, Object::Pod(_) | Object::Set(_) | Object::Budget(_)) {
            let ns = change.object.metadata().namespace.as_deref().unwrap_or("default");
            if !self.dirty.contains(ns) {
                self.dirty.insert(ns.to_string());
            }
        }
    }

    /// A recheck came due (an eviction's record expiring).
    pub fn wake(&mut self, ns: String) {
        self.dirty.insert(ns);
    }

    /// Whether some namespace's budgets are due.
    pub fn wants_run(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// Writes the status of every budget of the namespaces due whose status changed; `true`
    /// when anything was written (its changes are then in the journal).
    pub fn sync(&mut self, store: &mut Store, agenda: &mut Agenda) -> bool {
        let mut wrote = false;
        for ns in std::mem::take(&mut self.dirty) {
            let budgets: Vec<PodDisruptionBudget> =
                store.budgets().in_namespace(&ns).cloned().collect();
            for pdb in budgets {
                let (status, recheck) = status_of(store, &pdb);
                if pdb.status.as_ref() != Some(&status) {
                    let key = key_of(&pdb.metadata);
                    wrote |= store
                        .modify::<PodDisruptionBudget>(&key, |b| b.status = Some(status))
                        .is_ok();
                }
                if let Some(at) = recheck {
                    agenda.schedule(at, Due::Budgets(ns.clone()));
                }
            }
        }
        wrote
    }
}

/// The status the controller writes for `pdb` now, and when to look again (an eviction it
/// counts stops counting then).
fn status_of(store: &Store, pdb: &PodDisruptionBudget) -> (PodDisruptionBudgetStatus, Option<u64>) {
    let ns = pdb.metadata.namespace.as_deref().unwrap_or("default");
    let clock = store.clock();
    let now = clock.timestamp();
    let pods: Vec<&Pod> =
        store.pods().in_namespace(ns).filter(|p| budget::selects(pdb, p)).collect();
    let old = pdb.status.clone().unwrap_or_default();
    let generation = pdb.metadata.generation;
    // Evictions still counted: their pod exists, is not being deleted, and the record is young.
    let mut disrupted = BTreeMap::new();
    let mut recheck: Option<u64> = None;
    for p in &pods {
        let name = p.metadata.name.clone().unwrap_or_default();
        let Some(at) = old.disrupted_pods.as_ref().and_then(|d| d.get(&name)) else { continue };
        if p.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let due_ms = u64::try_from(
            (at.0 + budget::DELETION_TIMEOUT).as_millisecond() - clock.epoch_unix_ms(),
        )
        .unwrap_or(0);
        if due_ms >= clock.now_ms() {
            recheck = Some(recheck.map_or(due_ms, |r| r.min(due_ms)));
            disrupted.insert(name, at.clone());
        }
    }
    let counted = PodDisruptionBudget {
        status: Some(PodDisruptionBudgetStatus {
            disrupted_pods: Some(disrupted.clone()),
            ..old.clone()
        }),
        ..pdb.clone()
    };
    let scale = |o: &OwnerReference| scale_of(store, ns, o);
    let mut status = match budget::health(&counted, &pods, now, scale) {
        Ok(h) => PodDisruptionBudgetStatus {
            current_healthy: Some(h.current),
            desired_healthy: Some(h.desired),
            expected_pods: Some(h.expected),
            disruptions_allowed: Some(h.allowed),
            disrupted_pods: (!disrupted.is_empty()).then_some(disrupted),
            observed_generation: generation,
            conditions: old.conditions.clone(),
        },
        Err(why) => {
            // Upstream's fail-safe: nothing allowed, the rest as it was, and why.
            let mut s = PodDisruptionBudgetStatus { disruptions_allowed: Some(0), ..old.clone() };
            let at = s.observed_generation;
            set_condition(&mut s, Time(now), "False", "SyncFailed", why.to_string(), at);
            return (s, recheck);
        }
    };
    let allowed = status.disruptions_allowed.unwrap_or(0) > 0;
    let (st, reason) =
        if allowed { ("True", "SufficientPods") } else { ("False", "InsufficientPods") };
    set_condition(&mut status, Time(now), st, reason, String::new(), generation);
    (status, recheck)
}

/// Upstream `meta.SetStatusCondition` for the budget's one condition: the transition time
/// moves only when the status does.
fn set_condition(
    s: &mut PodDisruptionBudgetStatus,
    now: Time,
    status: &str,
    reason: &str,
    message: String,
    generation: Option<i64>,
) {
    let conditions = s.conditions.get_or_insert_with(Vec::new);
    let old = conditions.iter().position(|c| c.type_ == ALLOWED);
    let since = old
        .map(|i| &conditions[i])
        .filter(|c| c.status == status)
        .map_or(now, |c| c.last_transition_time.clone());
    let c = Condition {
        type_: ALLOWED.into(),
        status: status.into(),
        reason: reason.into(),
        message,
        observed_generation: generation,
        last_transition_time: since,
    };
    match old {
        Some(i) => conditions[i] = c,
        None => conditions.push(c),
    }
}

/// The replicas of a pod's controller, when it is a set of this namespace (the only workload
/// the simulator runs; any other controller is not known, as a missing one upstream).
fn scale_of(store: &Store, ns: &str, owner: &OwnerReference) -> Option<i32> {
    if owner.kind != "StatefulSet" {
        return None;
    }
    let set: &StatefulSet = store.sets().get(&ObjRef::new(ns, owner.name.clone()))?;
    (set.metadata.uid.as_deref() == Some(owner.uid.as_str()))
        .then(|| set.spec.replicas.unwrap_or(1))
}

/// What an eviction asks beyond the pod: its delete options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EvictOptions {
    /// `deleteOptions.gracePeriodSeconds` (0: the pod goes at once).
    pub grace_seconds: Option<i64>,
    /// `deleteOptions.preconditions`.
    pub uid: Option<String>,
    pub resource_version: Option<String>,
    pub dry_run: bool,
}

/// POST `pods/eviction`: the pod is judged against the budgets that select it; when allowed,
/// the budget is charged, the pod marked `DisruptionTarget` and deleted. A refusal is
/// [`ApiError::Refused`] with the API server's words.
pub fn evict(store: &mut Store, key: &ObjRef, opts: &EvictOptions) -> Result<Deleted, ApiError> {
    let Some(pod) = store.pods().get(key).cloned() else {
        return Err(StoreError::NotFound { kind: "Pod", key: key.clone() }.into());
    };
    if opts.uid.as_deref().is_some_and(|u| Some(u) != pod.metadata.uid.as_deref()) {
        return Err(ApiError::Conflict(format!(
            "the UID in the precondition ({}) does not match the UID in record ({}). The object \
             might have been deleted and then recreated",
            opts.uid.as_deref().unwrap_or_default(),
            pod.metadata.uid.as_deref().unwrap_or_default()
        )));
    }
    if opts
        .resource_version
        .as_deref()
        .is_some_and(|v| Some(v) != pod.metadata.resource_version.as_deref())
    {
        return Err(ApiError::Conflict(format!(
            "the ResourceVersion in the precondition ({}) does not match the ResourceVersion in \
             record ({}). The object might have been modified",
            opts.resource_version.as_deref().unwrap_or_default(),
            pod.metadata.resource_version.as_deref().unwrap_or_default()
        )));
    }
    let budgets: Vec<&PodDisruptionBudget> =
        store.budgets().in_namespace(&key.namespace).filter(|b| budget::selects(b, &pod)).collect();
    let charged = match budget::evict(&pod, &budgets) {
        Eviction::Refused { code, message, cause, retry_after } => {
            let about = match budgets.as_slice() {
                [one] => one.metadata.name.clone(),
                _ => None,
            };
            return Err(ApiError::Refused { code, message, cause, retry_after, budget: about });
        }
        Eviction::Delete { charged } => charged,
    };
    if opts.dry_run {
        return Ok(if pod.metadata.deletion_timestamp.is_some() {
            Deleted::AlreadyTerminating
        } else {
            Deleted::Terminating
        });
    }
    let now = store.clock().time();
    if let Some(name) = charged {
        let bkey = ObjRef::new(key.namespace.clone(), name);
        store.modify::<PodDisruptionBudget>(&bkey, |b| {
            let s = b.status.get_or_insert_with(Default::default);
            let left = s.disruptions_allowed.unwrap_or(0) - 1;
            s.disruptions_allowed = Some(left);
            if left == 0 {
                let at = s.observed_generation;
                set_condition(s, now.clone(), "False", "InsufficientPods", String::new(), at);
            }
            s.disrupted_pods
                .get_or_insert_with(BTreeMap::new)
                .insert(key.name.clone(), now.clone());
        })?;
    }
    if pod.metadata.deletion_timestamp.is_none() {
        store.modify::<Pod>(key, |p| mark_disruption_target(p, now))?;
    }
    api::delete_pod(store, key, opts.grace_seconds == Some(0))
}

/// The condition the API server adds before an eviction's delete.
fn mark_disruption_target(p: &mut Pod, now: Time) {
    let conditions =
        p.status.get_or_insert_with(Default::default).conditions.get_or_insert_with(Vec::new);
    conditions.retain(|c| c.type_ != "DisruptionTarget");
    conditions.push(PodCondition {
        type_: "DisruptionTarget".into(),
        status: "True".into(),
        reason: Some("EvictionByEvictionAPI".into()),
        message: Some("Eviction API: evicting".into()),
        last_transition_time: Some(now),
        ..Default::default()
    });
}
