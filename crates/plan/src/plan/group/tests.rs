use crate::plan::fixtures::{at, running};
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::Pod;

use super::*;

fn named(name: &str) -> StatefulSet {
    let mut s = StatefulSet::default();
    s.metadata.name = Some(name.into());
    s.spec.replicas = Some(2);
    s.status = Some(StatefulSetStatus {
        current_revision: Some(format!("{name}-a")),
        update_revision: Some(format!("{name}-b")),
        ..Default::default()
    });
    s
}

fn pod(set: &str, o: i32, rev: &str, ready_since: Option<i64>) -> Pod {
    running(format!("{set}-{o}"), rev, ready_since)
}

fn zones() -> Vec<StatefulSet> {
    ["ingester-zone-c", "ingester-zone-a", "store-gateway", "ingester-zone-b"]
        .into_iter()
        .map(named)
        .collect()
}

#[test]
fn a_group_is_named_matched_or_listed_and_ordered() {
    let sets = zones();
    let refs: Vec<&StatefulSet> = sets.iter().collect();
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let given = Pick::Names(names(&["ingester-zone-b", "ingester-zone-a"]));
    assert_eq!(
        members(&given, &Order::AsGiven, &refs).unwrap(),
        ["ingester-zone-b", "ingester-zone-a"]
    );
    assert_eq!(
        members(&given, &Order::Alphabetical, &refs).unwrap(),
        ["ingester-zone-a", "ingester-zone-b"]
    );
    let pattern = Pick::Pattern("ingester-zone-*".into());
    assert_eq!(
        members(&pattern, &Order::AsGiven, &refs).unwrap(),
        ["ingester-zone-a", "ingester-zone-b", "ingester-zone-c"]
    );
    let one = Pick::Pattern("ingester-zone-?".into());
    assert_eq!(members(&one, &Order::AsGiven, &refs).unwrap().len(), 3);
    let tiers = Order::Tiers(names(&["store", "ingester"]));
    assert_eq!(
        members(&Pick::Listed, &tiers, &refs).unwrap(),
        ["store-gateway", "ingester-zone-a", "ingester-zone-b", "ingester-zone-c"]
    );
}

#[test]
fn a_group_that_cannot_be_made_says_why() {
    let sets = zones();
    let refs: Vec<&StatefulSet> = sets.iter().collect();
    let missing = Pick::Names(vec!["ingester-zone-a".into(), "ingester-zone-d".into()]);
    let e = members(&missing, &Order::AsGiven, &refs).unwrap_err();
    assert_eq!(e, BadGroup::Missing(vec!["ingester-zone-d".into()]));
    assert!(e.to_string().contains("no StatefulSet named ingester-zone-d"), "{e}");
    let twice = Pick::Names(vec!["ingester-zone-a".into(), "ingester-zone-a".into()]);
    let e = members(&twice, &Order::AsGiven, &refs).unwrap_err();
    assert!(e.to_string().contains("named twice"), "{e}");
    let e = members(&Pick::Pattern("querier-*".into()), &Order::AsGiven, &refs).unwrap_err();
    assert!(e.to_string().contains("no StatefulSet matches \"querier-*\""), "{e}");
    let e = members(&Pick::Listed, &Order::Tiers(vec!["ingester".into()]), &refs).unwrap_err();
    assert!(e.to_string().starts_with("store-gateway is in no tier of --order ingester"), "{e}");
    assert!(members(&Pick::Listed, &Order::AsGiven, &[]).is_err());
}

#[test]
fn wildcards_match_whole_names() {
    assert!(wildcard("a*", "abc") && wildcard("*c", "abc") && wildcard("a*c", "ac"));
    assert!(wildcard("*", "") && wildcard("a?c", "abc") && wildcard("*b*", "abc"));
    assert!(!wildcard("a?c", "ac") && !wildcard("ab", "abc") && !wildcard("*d", "abc"));
    assert!(wildcard("ingester-*-a", "ingester-zone-a") && !wildcard("ingester-*-a", "ingester-a"));
}

#[test]
fn every_ordinal_of_every_set_holds_the_group_until_ready_and_available() {
    let (a, b) = (named("zone-a"), named("zone-b"));
    let a_pods = [pod("zone-a", 0, "zone-a-b", Some(0)), pod("zone-a", 1, "zone-a-b", Some(0))];
    let b_pods = [pod("zone-b", 0, "zone-b-a", Some(0))];
    let own = |pods: &[Pod]| -> Vec<(i32, Pod)> {
        pods.iter()
            .map(|p| {
                (crate::core::labels::ordinal_of(p.metadata.name.as_deref().unwrap()), p.clone())
            })
            .collect()
    };
    let (a_own, mut b_own) = (own(&a_pods), own(&b_pods));
    let view = |a_own: &[(i32, Pod)], b_own: &[(i32, Pod)]| {
        let a_refs: Vec<(i32, &Pod)> = a_own.iter().map(|(o, p)| (*o, p)).collect();
        let b_refs: Vec<(i32, &Pod)> = b_own.iter().map(|(o, p)| (*o, p)).collect();
        let members = [Member::of(&a, &a_refs, &sem()), Member::of(&b, &b_refs, &sem())];
        hold(&members, at(100))
    };
    // zone-b's second ordinal was never created: it holds the group, named.
    let h = view(&a_own, &b_own).expect("held");
    assert_eq!((h.set.as_str(), h.pod.as_str()), ("zone-b", "zone-b-1"));
    assert!(h.why.starts_with("was never created"), "{h}");
    b_own.push((1, pod("zone-b", 1, "zone-b-a", None)));
    assert_eq!(view(&a_own, &b_own).unwrap().to_string(), "zone-b-1 is not Ready");
    b_own[1] = (1, pod("zone-b", 1, "zone-b-a", Some(90)));
    assert_eq!(view(&a_own, &b_own), None, "every pod updated or untouched, Ready and available");
    // A pod on a third revision holds it.
    b_own[1] = (1, pod("zone-b", 1, "zone-b-old", Some(0)));
    let h = view(&a_own, &b_own).unwrap();
    assert!(h.why.contains("neither current nor update"), "{h}");
}

#[test]
fn min_ready_seconds_is_honoured_and_an_unobserved_spec_holds() {
    let mut a = named("zone-a");
    a.spec.min_ready_seconds = Some(30);
    a.spec.replicas = Some(1);
    let p = pod("zone-a", 0, "zone-a-b", Some(90));
    let pods = [(0, &p)];
    let members = [Member::of(&a, &pods, &sem())];
    let h = hold(&members, at(100)).expect("ready 10s ago, 30s asked");
    assert!(h.why.contains("not yet available"), "{h}");
    assert_eq!(hold(&members, at(130)), None);
    // A spec not yet observed (a revert just written) holds it, whatever its pods say: for an
    // abort between the sets it reverts too.
    let mut a = a.clone();
    a.metadata.generation = Some(3);
    a.status.as_mut().unwrap().observed_generation = Some(2);
    let members = [Member::of(&a, &pods, &sem())];
    let h = hold(&members, at(130)).expect("not observed");
    assert_eq!(
        h.to_string(),
        "zone-a has a spec its controller has not observed yet (generation 3, observed 2)"
    );
    assert_eq!(unsettled(&members, at(130)), Some(h));
    a.status.as_mut().unwrap().observed_generation = Some(3);
    let members = [Member::of(&a, &pods, &sem())];
    assert_eq!(unsettled(&members, at(130)), None);
}

fn sem() -> crate::core::options::Semantics {
    crate::core::Options::default().semantics
}
