//! Disruption budgets (`policy/v1` PodDisruptionBudget): the status kube-controller-manager's
//! disruption controller computes for one (`pkg/controller/disruption`, v1.37), and how the API
//! server's eviction subresource judges an eviction against it
//! (`pkg/registry/core/pod/storage/eviction.go`). Read upstream and written anew; what a plan
//! and the simulator build on: a rollout step that waits while a budget allows nothing, an
//! eviction refused with the budget's own words.
//!
//! Pure, as the rest of the core: the pods, the controllers' scales and the clock are inputs.
//!
//! - **Selected pods**: those of the budget's namespace its selector matches (no selector: none;
//!   an empty one: every pod of the namespace, as `policy/v1` reads it).
//! - **Expected pods and the healthy pods wanted**: `minAvailable` as a number wants that many
//!   and expects the pods selected; `minAvailable` as a percentage and `maxUnavailable` (either
//!   form) expect the sum of the replicas of the pods' controllers (each counted once), rounding
//!   a percentage up. A pod without a controller is left out of that sum; one whose controller
//!   is not known makes the status fail (nothing allowed: upstream's fail-safe).
//! - **Healthy**: Ready, not being deleted, and not evicted within the last two minutes (the
//!   budget's `disruptedPods`, which an eviction fills before the pod's deletion is seen).
//! - **Disruptions allowed**: healthy − wanted, never below 0, and 0 while nothing is expected.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::selector::Selector;

/// How long an evicted pod counts as disrupted before its deletion is seen (upstream's
/// `DeletionTimeout`).
pub const DELETION_TIMEOUT: SignedDuration = SignedDuration::from_secs(120);

/// A budget's status, as the disruption controller writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Health {
    /// Pods the budget expects (`expectedPods`).
    pub expected: i32,
    /// Healthy pods it wants (`desiredHealthy`).
    pub desired: i32,
    /// Healthy pods now (`currentHealthy`).
    pub current: i32,
    /// Pods that may be disrupted now (`disruptionsAllowed`).
    pub allowed: i32,
}

/// Whether `pdb` selects `pod` (its namespace, its selector).
pub fn selects(pdb: &PodDisruptionBudget, pod: &Pod) -> bool {
    let ns = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        m.namespace.clone().unwrap_or_else(|| "default".into())
    };
    if ns(&pdb.metadata) != ns(&pod.metadata) {
        return false;
    }
    let selector = pdb.spec.as_ref().and_then(|s| s.selector.as_ref());
    Selector::from_label_selector(selector).is_ok_and(|s| s.matches(pod.metadata.labels.as_ref()))
}

/// Why a budget's status cannot be computed (upstream's words, its `SyncFailed` condition's
/// message): the budget then allows nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unknowable {
    /// A selected pod's controller is not known (its scale cannot be read).
    #[error("found no controllers for pod {0:?}")]
    NoController(String),
    /// A percentage that does not parse.
    #[error("invalid value for IntOrString: invalid value {0:?}")]
    BadValue(String),
}

/// The status of `pdb` over `pods` (all of its namespace's, or just those it selects) at `now`.
/// `scale` gives the replicas of a pod's controller (`None`: not known). An error says why the
/// status cannot be computed (the budget then allows nothing).
pub fn health(
    pdb: &PodDisruptionBudget,
    pods: &[&Pod],
    now: Timestamp,
    scale: impl Fn(&OwnerReference) -> Option<i32>,
) -> Result<Health, Unknowable> {
    let selected: Vec<&Pod> = pods.iter().copied().filter(|p| selects(pdb, p)).collect();
    let spec = pdb.spec.clone().unwrap_or_default();
    let controllers_scale = || -> Result<i32, Unknowable> {
        let mut seen: BTreeMap<&str, i32> = BTreeMap::new();
        for p in &selected {
            let owner =
                p.metadata.owner_references.iter().flatten().find(|o| o.controller == Some(true));
            let Some(owner) = owner else { continue };
            if seen.contains_key(owner.uid.as_str()) {
                continue;
            }
            let n = scale(owner).ok_or_else(|| {
                Unknowable::NoController(p.metadata.name.clone().unwrap_or_default())
            })?;
            seen.insert(owner.uid.as_str(), n);
        }
        Ok(seen.values().sum())
    };
    let (expected, desired) = match (&spec.max_unavailable, &spec.min_available) {
        (Some(max), _) => {
            let expected = controllers_scale()?;
            let max = scaled(max, expected)?;
            (expected, (expected - max).max(0))
        }
        (None, Some(IntOrString::Int(min))) => (count(selected.len()), *min),
        (None, Some(min @ IntOrString::String(_))) => {
            let expected = controllers_scale()?;
            (expected, scaled(min, expected)?)
        }
        (None, None) => (0, 0),
    };
    let disrupted = pdb.status.as_ref().and_then(|s| s.disrupted_pods.as_ref());
    let recently_evicted = |p: &Pod| {
        let name = p.metadata.name.as_deref().unwrap_or_default();
        disrupted.and_then(|d| d.get(name)).is_some_and(|t| t.0 + DELETION_TIMEOUT > now)
    };
    let current = count(
        selected
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .filter(|p| !recently_evicted(p))
            .filter(|p| super::pod::is_ready(p))
            .count(),
    );
    let allowed = if expected <= 0 { 0 } else { (current - desired).max(0) };
    Ok(Health { expected, desired, current, allowed })
}

fn count(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// A number, or a percentage of `total` rounded up (`intstr.GetScaledValueFromIntOrPercent`).
fn scaled(v: &IntOrString, total: i32) -> Result<i32, Unknowable> {
    match v {
        IntOrString::Int(n) => Ok(*n),
        IntOrString::String(s) => {
            let pct: i64 = s
                .strip_suffix('%')
                .and_then(|p| p.parse().ok())
                .ok_or_else(|| Unknowable::BadValue(s.clone()))?;
            let v = (pct * i64::from(total) + 99).div_euclid(100);
            Ok(i32::try_from(v).unwrap_or(i32::MAX))
        }
    }
}

/// What the eviction subresource does with an eviction of a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Eviction {
    /// The pod is deleted. `charged`: the budget whose `disruptionsAllowed` goes down by one and
    /// whose `disruptedPods` gets the pod (none: no budget, or one the pod does not count
    /// against).
    Delete { charged: Option<String> },
    /// Refused, with the HTTP code (429: retry later; 403; 500) and the API's words: its
    /// message, and the budget's cause; `retry_after`: the seconds a 429 suggests (10 while the
    /// budget's status is behind its spec, else 0: none said).
    Refused { code: u16, message: String, cause: Option<String>, retry_after: u32 },
}

/// Evictions a budget may have pending (evicted, their deletion not yet seen) before it
/// refuses more (upstream's `MaxDisruptedPodSize`).
pub const MAX_DISRUPTED_PODS: usize = 2000;

/// A 403 about budget `name`.
fn forbidden(name: &str, why: &str, cause: String) -> Eviction {
    let message = format!("poddisruptionbudget.policy {name:?} is forbidden: {why}");
    Eviction::Refused { code: 403, message, cause: Some(cause), retry_after: 0 }
}

/// The 429's message, upstream's.
pub const VIOLATES: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// How an eviction of `pod` is judged against the budgets that select it (`budgets`, with
/// their status as last written).
pub fn evict(pod: &Pod, budgets: &[&PodDisruptionBudget]) -> Eviction {
    let phase = super::pod::phase(pod);
    // Already disrupted (terminal, not started, being deleted): deleted whatever the budgets.
    if matches!(phase, "Succeeded" | "Failed" | "Pending")
        || pod.metadata.deletion_timestamp.is_some()
    {
        return Eviction::Delete { charged: None };
    }
    let pdb = match budgets {
        [] => return Eviction::Delete { charged: None },
        [one] => *one,
        _ => {
            return Eviction::Refused {
                code: 500,
                message: "This pod has more than one PodDisruptionBudget, which the eviction \
                          subresource does not support."
                    .into(),
                cause: None,
                retry_after: 0,
            };
        }
    };
    let name = pdb.metadata.name.clone().unwrap_or_default();
    let status = pdb.status.clone().unwrap_or_default();
    let (current, desired) =
        (status.current_healthy.unwrap_or(0), status.desired_healthy.unwrap_or(0));
    let allowed = status.disruptions_allowed.unwrap_or(0);
    if !super::pod::is_ready(pod) {
        let always = pdb.spec.as_ref().and_then(|s| s.unhealthy_pod_eviction_policy.as_deref())
            == Some("AlwaysAllow");
        // An unready pod does not count: deleting it disrupts nothing while the budget holds.
        if always || (current >= desired && desired > 0) {
            return Eviction::Delete { charged: None };
        }
    }
    if status.observed_generation.unwrap_or(0) < pdb.metadata.generation.unwrap_or(0) {
        let cause = format!("The disruption budget {name} is still being processed by the server.");
        let (message, cause) = (VIOLATES.into(), Some(cause));
        return Eviction::Refused { code: 429, message, cause, retry_after: 10 };
    }
    if allowed < 0 {
        let cause = format!(
            "The disruption budget {name} does not allow evicting pods currently: pdb \
             disruptions allowed is negative"
        );
        return forbidden(&name, "pdb disruptions allowed is negative", cause);
    }
    if status.disrupted_pods.as_ref().is_some_and(|d| d.len() > MAX_DISRUPTED_PODS) {
        let cause = format!(
            "The disruption budget {name} does not allow evicting pods currently: too many \
             pending evictions not confirmed by PDB controller"
        );
        let why = "DisruptedPods map too big - too many evictions not confirmed by PDB controller";
        return forbidden(&name, why, cause);
    }
    if allowed == 0 {
        let failed = status.conditions.iter().flatten().find(|c| {
            c.type_ == "DisruptionAllowed" && c.status == "False" && !c.message.is_empty()
        });
        let cause = match failed {
            Some(c) if c.reason == "SyncFailed" => format!(
                "The disruption budget {name} does not allow evicting pods currently because it \
                 failed sync: {}",
                c.message
            ),
            _ if current <= desired => format!(
                "The disruption budget {name} needs {desired} healthy pods and has {current} \
                 currently"
            ),
            Some(c) => format!(
                "The disruption budget {name} does not allow evicting pods currently ({}): {}",
                c.reason, c.message
            ),
            None => format!("The disruption budget {name} does not allow evicting pods currently"),
        };
        let (message, cause) = (VIOLATES.into(), Some(cause));
        return Eviction::Refused { code: 429, message, cause, retry_after: 0 };
    }
    Eviction::Delete { charged: Some(name) }
}

/// A budget as a refusal names it, from its status: `pdb/web: 2 healthy, needs 3, 0
/// disruptions allowed`.
pub fn describe(pdb: &PodDisruptionBudget) -> String {
    let name = pdb.metadata.name.as_deref().unwrap_or_default();
    let s = pdb.status.clone().unwrap_or_default();
    if s.observed_generation.unwrap_or(0) < pdb.metadata.generation.unwrap_or(0) {
        return format!(
            "pdb/{name}: not yet processed by the disruption controller (nothing allowed until \
             it is)"
        );
    }
    let allowed = s.disruptions_allowed.unwrap_or(0);
    let noun = if allowed == 1 { "disruption" } else { "disruptions" };
    format!(
        "pdb/{name}: {} healthy, needs {}, {allowed} {noun} allowed",
        s.current_healthy.unwrap_or(0),
        s.desired_healthy.unwrap_or(0)
    )
}

/// Why an eviction was refused, in ststui's words: the budget as it stands when it is known
/// (its status), else the API server's cause, else its message.
pub fn refusal(budget: Option<&PodDisruptionBudget>, cause: Option<&str>, message: &str) -> String {
    match (budget, cause) {
        (Some(b), _) => format!("refused by {}: nothing deleted", describe(b)),
        (None, Some(c)) => format!("refused: {c}: nothing deleted"),
        (None, None) => format!("refused: {message}: nothing deleted"),
    }
}
