//! Disruption budgets (`core::budget`): the status the disruption controller computes (expected
//! pods, healthy pods wanted and counted, disruptions allowed) and the eviction subresource's
//! verdicts, against hand-built pods and budgets; and a property: what a budget allows never
//! exceeds its healthy pods beyond what it wants.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::api::policy::v1::{
    PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta, OwnerReference, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;
use ststui::core::budget::{self, Eviction, Health};

fn now() -> Timestamp {
    "2026-11-27T12:00:00Z".parse().unwrap()
}

/// Pod `web-N` of the set `web` (uid `set-uid`) in `default`, Running, Ready or not.
fn pod(n: usize, ready: bool) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("web-{n}")),
            namespace: Some("default".into()),
            labels: Some(BTreeMap::from([("app".to_string(), "web".to_string())])),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps/v1".into(),
                kind: "StatefulSet".into(),
                name: "web".into(),
                uid: "set-uid".into(),
                controller: Some(true),
                ..OwnerReference::default()
            }]),
            ..ObjectMeta::default()
        },
        status: Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![PodCondition {
                type_: "Ready".into(),
                status: if ready { "True" } else { "False" }.into(),
                ..PodCondition::default()
            }]),
            ..PodStatus::default()
        }),
        ..Pod::default()
    }
}

fn pdb(min: Option<IntOrString>, max: Option<IntOrString>) -> PodDisruptionBudget {
    PodDisruptionBudget {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            generation: Some(1),
            ..ObjectMeta::default()
        },
        spec: Some(PodDisruptionBudgetSpec {
            min_available: min,
            max_unavailable: max,
            selector: Some(LabelSelector {
                match_labels: Some(BTreeMap::from([("app".to_string(), "web".to_string())])),
                ..LabelSelector::default()
            }),
            ..PodDisruptionBudgetSpec::default()
        }),
        status: None,
    }
}

/// The budget's health with the set `web` at `replicas`.
fn health(p: &PodDisruptionBudget, pods: &[Pod], replicas: i32) -> Health {
    let pods: Vec<&Pod> = pods.iter().collect();
    budget::health(p, &pods, now(), |o| (o.uid == "set-uid").then_some(replicas)).unwrap()
}

fn h(expected: i32, desired: i32, current: i32, allowed: i32) -> Health {
    Health { expected, desired, current, allowed }
}

#[test]
fn min_available_as_a_number_expects_the_pods_selected() {
    let pods: Vec<Pod> = (0..3).map(|i| pod(i, true)).collect();
    assert_eq!(health(&pdb(Some(IntOrString::Int(2)), None), &pods, 3), h(3, 2, 3, 1));
    assert_eq!(health(&pdb(Some(IntOrString::Int(3)), None), &pods, 3), h(3, 3, 3, 0));
    assert_eq!(health(&pdb(Some(IntOrString::Int(5)), None), &pods, 3), h(3, 5, 3, 0), "never < 0");
}

#[test]
fn max_unavailable_and_percentages_expect_the_controllers_replicas() {
    // Five replicas, three pods made so far: the two never created count as unavailable.
    let pods: Vec<Pod> = (0..3).map(|i| pod(i, true)).collect();
    assert_eq!(health(&pdb(None, Some(IntOrString::Int(1))), &pods, 5), h(5, 4, 3, 0));
    assert_eq!(health(&pdb(None, Some(IntOrString::Int(2))), &pods, 5), h(5, 3, 3, 0));
    assert_eq!(health(&pdb(None, Some(IntOrString::Int(3))), &pods, 5), h(5, 2, 3, 1));
    // 50 % of 5, rounded up: 3 wanted; 50 % unavailable: 3 may go, 2 wanted.
    let half = || Some(IntOrString::String("50%".into()));
    assert_eq!(health(&pdb(half(), None), &pods, 5), h(5, 3, 3, 0));
    assert_eq!(health(&pdb(None, half()), &pods, 5), h(5, 2, 3, 1));
    // The controller's pods count it once.
    let all: Vec<Pod> = (0..5).map(|i| pod(i, true)).collect();
    assert_eq!(health(&pdb(None, Some(IntOrString::Int(1))), &all, 5), h(5, 4, 5, 1));
}

#[test]
fn healthy_is_ready_not_deleting_and_not_just_evicted() {
    let mut pods: Vec<Pod> = (0..4).map(|i| pod(i, true)).collect();
    pods[1] = pod(1, false);
    pods[2].metadata.deletion_timestamp = Some(Time(now()));
    let mut p = pdb(Some(IntOrString::Int(1)), None);
    let evicted = |ago: i64| Time(now() - SignedDuration::from_secs(ago));
    p.status = Some(PodDisruptionBudgetStatus {
        disrupted_pods: Some(BTreeMap::from([("web-3".to_string(), evicted(30))])),
        ..PodDisruptionBudgetStatus::default()
    });
    assert_eq!(health(&p, &pods, 4), h(4, 1, 1, 0), "web-0 only");
    // Evicted more than two minutes ago and still there: healthy again.
    p.status = Some(PodDisruptionBudgetStatus {
        disrupted_pods: Some(BTreeMap::from([("web-3".to_string(), evicted(121))])),
        ..PodDisruptionBudgetStatus::default()
    });
    assert_eq!(health(&p, &pods, 4), h(4, 1, 2, 1));
}

#[test]
fn nothing_expected_allows_nothing_and_an_unknown_controller_is_an_error() {
    assert_eq!(health(&pdb(Some(IntOrString::Int(0)), None), &[], 0), h(0, 0, 0, 0));
    let pods = [pod(0, true)];
    let refs: Vec<&Pod> = pods.iter().collect();
    let err = budget::health(&pdb(None, Some(IntOrString::Int(1))), &refs, now(), |_| None);
    assert_eq!(err, Err(budget::Unknowable::NoController("web-0".into())));
    assert_eq!(err.unwrap_err().to_string(), "found no controllers for pod \"web-0\"");
    let bad = pdb(None, Some(IntOrString::String("half".into())));
    let err = budget::health(&bad, &refs, now(), |_| Some(1));
    assert_eq!(err, Err(budget::Unknowable::BadValue("half".into())));
}

#[test]
fn a_budget_selects_by_namespace_and_selector_and_none_without_one() {
    let p = pdb(Some(IntOrString::Int(1)), None);
    let mut other_ns = pod(0, true);
    other_ns.metadata.namespace = Some("prod".into());
    assert!(budget::selects(&p, &pod(0, true)));
    assert!(!budget::selects(&p, &other_ns));
    let mut unlabelled = pod(1, true);
    unlabelled.metadata.labels = None;
    assert!(!budget::selects(&p, &unlabelled));
    let mut every = p.clone();
    every.spec.as_mut().unwrap().selector = Some(LabelSelector::default());
    assert!(budget::selects(&every, &unlabelled), "an empty selector: every pod");
    let mut none = p.clone();
    none.spec.as_mut().unwrap().selector = None;
    assert!(!budget::selects(&none, &pod(0, true)), "no selector: none");
}

/// `pdb` with the status its controller would write for `allowed` (current 3, desired 2 +
/// … as given).
fn with_status(current: i32, desired: i32, allowed: i32) -> PodDisruptionBudget {
    let mut p = pdb(Some(IntOrString::Int(desired)), None);
    p.status = Some(PodDisruptionBudgetStatus {
        current_healthy: Some(current),
        desired_healthy: Some(desired),
        disruptions_allowed: Some(allowed),
        expected_pods: Some(3),
        observed_generation: Some(1),
        ..PodDisruptionBudgetStatus::default()
    });
    p
}

#[test]
fn an_eviction_is_charged_to_the_budget_or_refused_in_its_words() {
    let ready = pod(0, true);
    assert_eq!(budget::evict(&ready, &[]), Eviction::Delete { charged: None });
    let open = with_status(3, 2, 1);
    assert_eq!(budget::evict(&ready, &[&open]), Eviction::Delete { charged: Some("web".into()) });
    let full = with_status(3, 3, 0);
    assert_eq!(
        budget::evict(&ready, &[&full]),
        Eviction::Refused {
            code: 429,
            message: budget::VIOLATES.into(),
            cause: Some(
                "The disruption budget web needs 3 healthy pods and has 3 currently".into()
            ),
            retry_after: 0,
        }
    );
    match budget::evict(&ready, &[&open, &full]) {
        Eviction::Refused { code: 500, message, .. } => assert!(message.contains("more than one")),
        other => panic!("{other:?}"),
    }
    let mut behind = with_status(3, 2, 1);
    behind.metadata.generation = Some(2);
    match budget::evict(&ready, &[&behind]) {
        Eviction::Refused { code: 429, cause: Some(c), retry_after, .. } => {
            assert!(c.contains("still being processed"), "{c}");
            assert_eq!(retry_after, 10, "the API server suggests 10 s while the status is behind");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn pods_that_do_not_count_are_deleted_without_charging_the_budget() {
    let full = with_status(3, 3, 0);
    let mut pending = pod(0, false);
    pending.status.as_mut().unwrap().phase = Some("Pending".into());
    assert_eq!(budget::evict(&pending, &[&full]), Eviction::Delete { charged: None });
    let mut deleting = pod(0, true);
    deleting.metadata.deletion_timestamp = Some(Time(now()));
    assert_eq!(budget::evict(&deleting, &[&full]), Eviction::Delete { charged: None });
    // Unready, the budget met: it disrupts nothing.
    assert_eq!(budget::evict(&pod(0, false), &[&full]), Eviction::Delete { charged: None });
    // Unready, the budget short: refused as any other, unless AlwaysAllow.
    let short = with_status(1, 3, 0);
    assert!(matches!(
        budget::evict(&pod(0, false), &[&short]),
        Eviction::Refused { code: 429, .. }
    ));
    let mut always = short.clone();
    always.spec.as_mut().unwrap().unhealthy_pod_eviction_policy = Some("AlwaysAllow".into());
    assert_eq!(budget::evict(&pod(0, false), &[&always]), Eviction::Delete { charged: None });
}

proptest! {
    /// Whatever the pods' readiness and the budget's form: the pods it allows may be evicted
    /// one after the other (each charged to it, as the API server records), the next ready one
    /// is then refused, and the healthy pods left are never fewer than it wants.
    #[test]
    fn evicting_what_a_budget_allows_never_takes_it_below_what_it_wants(
        ready in proptest::collection::vec(any::<bool>(), 0..12),
        replicas in 0i32..15,
        value in 0i32..15,
        percent in any::<bool>(),
        max_form in any::<bool>(),
    ) {
        let pods: Vec<Pod> = ready.iter().enumerate().map(|(i, r)| pod(i, *r)).collect();
        let v = if percent {
            IntOrString::String(format!("{}%", value * 7))
        } else {
            IntOrString::Int(value)
        };
        let mut p = if max_form { pdb(None, Some(v)) } else { pdb(Some(v), None) };
        let got = health(&p, &pods, replicas);
        let healthy = i32::try_from(ready.iter().filter(|r| **r).count()).unwrap();
        prop_assert_eq!(got.current, healthy);
        prop_assert!(got.allowed >= 0 && got.allowed <= got.current);
        if got.expected <= 0 {
            prop_assert_eq!(got.allowed, 0);
        }
        let status = |h: Health, disrupted: &BTreeMap<String, Time>| PodDisruptionBudgetStatus {
            current_healthy: Some(h.current),
            desired_healthy: Some(h.desired),
            expected_pods: Some(h.expected),
            disruptions_allowed: Some(h.allowed),
            disrupted_pods: Some(disrupted.clone()),
            observed_generation: Some(1),
            ..PodDisruptionBudgetStatus::default()
        };
        let mut disrupted = BTreeMap::new();
        p.status = Some(status(got, &disrupted));
        let ready_pods: Vec<&Pod> = pods.iter().filter(|p| ready[index(p)]).collect();
        for (k, victim) in ready_pods.iter().enumerate() {
            let verdict = budget::evict(victim, &[&p]);
            if i32::try_from(k).unwrap() < got.allowed {
                prop_assert_eq!(verdict, Eviction::Delete { charged: Some("web".into()) });
                disrupted.insert(victim.metadata.name.clone().unwrap(), Time(now()));
                let again = health(&p_with(&p, &disrupted), &pods, replicas);
                p.status = Some(status(again, &disrupted));
                prop_assert!(again.current >= again.desired);
            } else {
                let refused = matches!(verdict, Eviction::Refused { code: 429, .. });
                prop_assert!(refused, "{:?}", verdict);
                break;
            }
        }
    }
}

/// The ordinal of a `web-N` pod.
fn index(p: &Pod) -> usize {
    p.metadata.name.as_deref().and_then(|n| n.strip_prefix("web-")).unwrap().parse().unwrap()
}

/// `p` with `disrupted` as its disrupted pods.
fn p_with(p: &PodDisruptionBudget, disrupted: &BTreeMap<String, Time>) -> PodDisruptionBudget {
    let mut p = p.clone();
    p.status.get_or_insert_with(Default::default).disrupted_pods = Some(disrupted.clone());
    p
}

#[test]
fn a_budget_is_described_by_its_counts_or_as_not_yet_processed() {
    let mut b = with_status(2, 3, 0);
    b.metadata.generation = Some(1);
    assert_eq!(budget::describe(&b), "pdb/web: 2 healthy, needs 3, 0 disruptions allowed");
    let one = with_status(4, 3, 1);
    assert_eq!(budget::describe(&one), "pdb/web: 4 healthy, needs 3, 1 disruption allowed");
    // Its spec changed since the disruption controller wrote the counts: they say nothing.
    b.metadata.generation = Some(2);
    let said = budget::describe(&b);
    assert!(said.starts_with("pdb/web: not yet processed by the disruption controller"), "{said}");
}
