//! Claiming (spec 1.2 step 3, 1.3, 2.6): the adopt/release table of ClaimObject, the name
//! filter, label selectors with matchExpressions, and revision listing with adoption.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::borrow::Cow;
use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta, OwnerReference, Time,
};
use k8s_openapi::jiff::Timestamp;
use ststui::core::Effect;
use ststui::core::claim::{ClaimedPod, Selector, claim_pods, controller_of, list_revisions};

const SET_UID: &str = "set-uid";

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn set_with(selector: LabelSelector) -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("ns".into()),
            uid: Some(SET_UID.into()),
            ..Default::default()
        },
        spec: StatefulSetSpec { selector, ..Default::default() },
        status: None,
    }
}

fn set() -> StatefulSet {
    set_with(LabelSelector { match_labels: Some(labels(&[("app", "web")])), ..Default::default() })
}

fn deleting(mut set: StatefulSet) -> StatefulSet {
    set.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    set
}

fn owner(uid: &str, controller: bool) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "StatefulSet".into(),
        name: "someone".into(),
        uid: uid.into(),
        controller: Some(controller),
        block_owner_deletion: Some(true),
    }
}

fn pod(name: &str, pod_labels: &[(&str, &str)], owners: Vec<OwnerReference>) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            uid: Some(format!("{name}-uid")),
            labels: Some(labels(pod_labels)),
            owner_references: (!owners.is_empty()).then_some(owners),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn ours(name: &str, pod_labels: &[(&str, &str)]) -> Pod {
    pod(name, pod_labels, vec![owner(SET_UID, true)])
}

fn orphan(name: &str, pod_labels: &[(&str, &str)]) -> Pod {
    pod(name, pod_labels, vec![])
}

/// Names of the claimed pods and a short form of the effects.
fn claim(set: &StatefulSet, pods: &[Pod]) -> (Vec<String>, Vec<String>) {
    let refs: Vec<&Pod> = pods.iter().collect();
    let claimed = claim_pods(set, &refs).expect("valid selector");
    let names = claimed.pods.iter().map(|p| p.metadata.name.clone().unwrap_or_default()).collect();
    let effects = claimed
        .effects
        .iter()
        .map(|e| match e {
            Effect::AdoptPod { name, .. } => format!("adopt {name}"),
            Effect::ReleasePod { name, .. } => format!("release {name}"),
            other => format!("{other:?}"),
        })
        .collect();
    (names, effects)
}

const APP: &[(&str, &str)] = &[("app", "web")];

#[test]
fn owned_matching_pod_is_kept_borrowed_without_effects() {
    let pods = [ours("web-0", APP)];
    let refs: Vec<&Pod> = pods.iter().collect();
    let claimed = claim_pods(&set(), &refs).unwrap();
    assert!(claimed.effects.is_empty());
    assert!(matches!(&claimed.pods[..], [ClaimedPod::Borrowed(p)] if std::ptr::eq(*p, &pods[0])));
}

#[test]
fn owned_pod_no_longer_matching_the_selector_is_released() {
    let pods = [ours("web-0", &[("app", "other")])];
    let refs: Vec<&Pod> = pods.iter().collect();
    let claimed = claim_pods(&set(), &refs).unwrap();
    assert!(claimed.pods.is_empty());
    match claimed.effects.as_slice() {
        [Effect::ReleasePod { name, pod }] => {
            assert_eq!(name, "web-0");
            assert!(controller_of(&pod.metadata).is_none());
            assert_eq!(pod.metadata.owner_references, None);
        }
        other => panic!("expected a release, got {other:?}"),
    }
}

#[test]
fn owned_pod_with_a_foreign_name_is_released() {
    // Selector matches but isMemberOf fails: other parent, unparseable ordinal.
    for name in ["db-0", "web-x", "web"] {
        let (kept, effects) = claim(&set(), &[ours(name, APP)]);
        assert!(kept.is_empty(), "{name}");
        assert_eq!(effects, [format!("release {name}")]);
    }
}

#[test]
fn release_keeps_other_owner_references() {
    let mut p = ours("web-0", &[("app", "other")]);
    p.metadata.owner_references.as_mut().unwrap().push(owner("node-uid", false));
    let pods = [p];
    let refs: Vec<&Pod> = pods.iter().collect();
    let claimed = claim_pods(&set(), &refs).unwrap();
    let Some(Effect::ReleasePod { pod, .. }) = claimed.effects.first() else {
        panic!("expected a release")
    };
    let uids: Vec<&str> =
        pod.metadata.owner_references.iter().flatten().map(|r| r.uid.as_str()).collect();
    assert_eq!(uids, ["node-uid"]);
}

#[test]
fn nothing_is_released_while_the_set_is_being_deleted() {
    let (kept, effects) = claim(&deleting(set()), &[ours("web-0", &[("app", "other")])]);
    assert!(kept.is_empty());
    assert!(effects.is_empty());
    // Owned and matching pods are still claimed during deletion.
    let (kept, effects) = claim(&deleting(set()), &[ours("web-1", APP)]);
    assert_eq!(kept, ["web-1"]);
    assert!(effects.is_empty());
}

#[test]
fn pods_of_other_controllers_are_ignored() {
    let foreign = pod("web-0", APP, vec![owner("other-uid", true)]);
    let (kept, effects) = claim(&set(), &[foreign]);
    assert!(kept.is_empty() && effects.is_empty());
    // A non-controller ref to us does not make the pod ours: it is an orphan (adopted).
    let weak = pod("web-1", APP, vec![owner(SET_UID, false)]);
    let (kept, effects) = claim(&set(), &[weak]);
    assert_eq!((kept, effects), (vec!["web-1".to_string()], vec!["adopt web-1".to_string()]));
}

#[test]
fn matching_orphan_is_adopted_with_a_controller_ref() {
    let pods = [orphan("web-2", APP)];
    let refs: Vec<&Pod> = pods.iter().collect();
    let claimed = claim_pods(&set(), &refs).unwrap();
    let [ClaimedPod::Owned(adopted)] = claimed.pods.as_slice() else {
        panic!("adopted copy expected")
    };
    let r = controller_of(&adopted.metadata).expect("controller ref");
    assert_eq!((r.uid.as_str(), r.name.as_str(), r.kind.as_str()), (SET_UID, "web", "StatefulSet"));
    assert_eq!((r.api_version.as_str(), r.block_owner_deletion), ("apps/v1", Some(true)));
    match claimed.effects.as_slice() {
        [Effect::AdoptPod { name, pod }] => {
            assert_eq!(name, "web-2");
            assert_eq!(pod, adopted);
        }
        other => panic!("expected an adoption, got {other:?}"),
    }
}

#[test]
fn orphans_are_not_adopted_while_the_set_is_being_deleted() {
    let (kept, effects) = claim(&deleting(set()), &[orphan("web-0", APP)]);
    assert!(kept.is_empty() && effects.is_empty());
}

#[test]
fn terminating_orphans_are_not_adopted() {
    let mut p = orphan("web-0", APP);
    p.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    let (kept, effects) = claim(&set(), &[p]);
    assert!(kept.is_empty() && effects.is_empty());
}

#[test]
fn orphans_failing_the_selector_or_the_name_filter_are_ignored() {
    let pods = [orphan("web-0", &[("app", "db")]), orphan("db-0", APP), orphan("web-0-x", APP)];
    let (kept, effects) = claim(&set(), &pods);
    assert!(kept.is_empty() && effects.is_empty());
}

#[test]
fn orphans_in_another_namespace_are_ignored() {
    let mut p = orphan("web-0", APP);
    p.metadata.namespace = Some("elsewhere".into());
    let (kept, effects) = claim(&set(), &[p]);
    assert!(kept.is_empty() && effects.is_empty());
}

#[test]
fn owned_pods_are_claimed_before_orphans() {
    let pods = [
        ours("web-1", APP),
        orphan("web-0", APP),
        ours("web-5", &[("app", "gone")]),
        pod("web-2", APP, vec![owner("x", true)]),
        ours("web-3", APP),
    ];
    let (kept, effects) = claim(&set(), &pods);
    // Owned pods first (FilterPodsByOwner's owner index), then orphans: releases before
    // adoptions whatever the input order.
    assert_eq!(kept, ["web-1", "web-3", "web-0"]);
    assert_eq!(effects, ["release web-5", "adopt web-0"]);
}

fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
    }
}

fn selector(match_labels: &[(&str, &str)], exprs: Vec<LabelSelectorRequirement>) -> Selector {
    let ls = LabelSelector {
        match_labels: (!match_labels.is_empty()).then(|| labels(match_labels)),
        match_expressions: (!exprs.is_empty()).then_some(exprs),
    };
    Selector::from_label_selector(Some(&ls)).expect("valid")
}

#[test]
fn match_expressions_in_notin_exists_doesnotexist() {
    let m = |s: &Selector, l: &[(&str, &str)]| s.matches(Some(&labels(l)));
    let s_in = selector(&[], vec![expr("tier", "In", &["a", "b"])]);
    assert!(m(&s_in, &[("tier", "a")]) && m(&s_in, &[("tier", "b")]));
    assert!(!m(&s_in, &[("tier", "c")]) && !m(&s_in, &[]));
    let s_notin = selector(&[], vec![expr("tier", "NotIn", &["a"])]);
    assert!(m(&s_notin, &[("tier", "b")]) && m(&s_notin, &[]));
    assert!(!m(&s_notin, &[("tier", "a")]));
    let s_exists = selector(&[], vec![expr("tier", "Exists", &[])]);
    assert!(m(&s_exists, &[("tier", "")]) && !m(&s_exists, &[("x", "y")]));
    let s_absent = selector(&[], vec![expr("canary", "DoesNotExist", &[])]);
    assert!(m(&s_absent, &[("app", "web")]) && !m(&s_absent, &[("canary", "true")]));
    // matchLabels AND every expression.
    let both = selector(&[("app", "web")], vec![expr("tier", "In", &["a"])]);
    assert!(m(&both, &[("app", "web"), ("tier", "a")]));
    assert!(!m(&both, &[("app", "web")]) && !m(&both, &[("tier", "a")]));
    // Empty selects everything; an absent selector nothing.
    let everything = selector(&[], vec![]);
    assert!(everything.is_everything() && everything.matches(None));
    assert!(!Selector::from_label_selector(None).unwrap().matches(Some(&labels(&[("a", "b")]))));
}

#[test]
fn match_expressions_drive_claiming() {
    let set = set_with(LabelSelector {
        match_labels: Some(labels(&[("app", "web")])),
        match_expressions: Some(vec![expr("track", "NotIn", &["canary"])]),
    });
    let pods = [orphan("web-1", APP), ours("web-0", &[("app", "web"), ("track", "canary")])];
    let (kept, effects) = claim(&set, &pods);
    assert_eq!(kept, ["web-1"]);
    assert_eq!(effects, ["release web-0", "adopt web-1"]);
}

#[test]
fn invalid_selector_is_a_non_retried_error() {
    let cases = [
        LabelSelector { match_labels: Some(labels(&[("bad key", "x")])), ..Default::default() },
        LabelSelector { match_labels: Some(labels(&[("app", "-bad-")])), ..Default::default() },
        LabelSelector {
            match_expressions: Some(vec![expr("a", "Gt", &["1"])]),
            ..Default::default()
        },
        LabelSelector { match_expressions: Some(vec![expr("a", "In", &[])]), ..Default::default() },
        LabelSelector {
            match_expressions: Some(vec![expr("a", "Exists", &["x"])]),
            ..Default::default()
        },
        LabelSelector {
            match_labels: Some(labels(&[("Bad.Prefix/x", "y")])),
            ..Default::default()
        },
    ];
    for ls in cases {
        let err = claim_pods(&set_with(ls.clone()), &[]).expect_err("invalid selector");
        assert!(!err.retry, "{err}");
        assert!(err.message.contains("StatefulSet web has an invalid spec.selector"), "{err}");
        let err = list_revisions(&set_with(ls), &[]).expect_err("invalid selector");
        assert!(!err.retry);
    }
    // Valid edge cases.
    let ok = LabelSelector {
        match_labels: Some(labels(&[("example.com/tier", ""), ("a.b_c-d", "X_y.z-1")])),
        ..Default::default()
    };
    assert!(claim_pods(&set_with(ok), &[]).is_ok());
}

fn revision(
    name: &str,
    number: i64,
    rev_labels: &[(&str, &str)],
    owners: Vec<OwnerReference>,
) -> ControllerRevision {
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            labels: Some(labels(rev_labels)),
            owner_references: (!owners.is_empty()).then_some(owners),
            ..Default::default()
        },
        revision: Some(number),
        ..Default::default()
    }
}

#[test]
fn revisions_are_filtered_adopted_and_sorted() {
    let revs = [
        revision("web-c", 3, APP, vec![owner(SET_UID, true)]),
        revision("web-a", 1, APP, vec![]),
        revision("web-x", 2, APP, vec![owner("other", true)]),
        revision("web-b", 2, APP, vec![owner(SET_UID, true)]),
        revision("db-a", 1, &[("app", "db")], vec![]),
    ];
    let refs: Vec<&ControllerRevision> = revs.iter().collect();
    let listed = list_revisions(&set(), &refs).unwrap();
    let names: Vec<&str> =
        listed.revisions.iter().map(|r| r.metadata.name.as_deref().unwrap_or_default()).collect();
    assert_eq!(names, ["web-a", "web-b", "web-c"]);
    match listed.effects.as_slice() {
        [Effect::AdoptRevision { name, revision }] => {
            assert_eq!(name, "web-a");
            let r = controller_of(&revision.metadata).expect("controller ref");
            assert_eq!(r.uid, SET_UID);
        }
        other => panic!("expected one adoption, got {other:?}"),
    }
    // The listed copy of the adopted revision carries the ref; owned ones stay borrowed.
    assert!(matches!(&listed.revisions[0], Cow::Owned(r) if controller_of(&r.metadata).is_some()));
    assert!(matches!(&listed.revisions[1], Cow::Borrowed(_)));
}

#[test]
fn revision_ties_sort_by_creation_time_then_name() {
    let mut late = revision("web-a", 1, APP, vec![owner(SET_UID, true)]);
    late.metadata.creation_timestamp = Some(Time(Timestamp::from_second(100).unwrap()));
    let mut early = revision("web-z", 1, APP, vec![owner(SET_UID, true)]);
    early.metadata.creation_timestamp = Some(Time(Timestamp::from_second(50).unwrap()));
    let mut same = revision("web-m", 1, APP, vec![owner(SET_UID, true)]);
    same.metadata.creation_timestamp = Some(Time(Timestamp::from_second(100).unwrap()));
    let refs = [&late, &same, &early];
    let listed = list_revisions(&set(), &refs).unwrap();
    let names: Vec<&str> =
        listed.revisions.iter().map(|r| r.metadata.name.as_deref().unwrap_or_default()).collect();
    assert_eq!(names, ["web-z", "web-a", "web-m"]);
}

#[test]
fn orphan_revisions_cannot_be_adopted_by_a_set_being_deleted() {
    let revs = [revision("web-a", 1, APP, vec![])];
    let refs: Vec<&ControllerRevision> = revs.iter().collect();
    let err = list_revisions(&deleting(set()), &refs).expect_err("can't adopt");
    assert!(err.retry);
    assert!(err.message.starts_with("can't adopt ControllerRevisions"), "{err}");
    // Without orphans a deleting set lists its revisions normally.
    let owned = [revision("web-b", 1, APP, vec![owner(SET_UID, true)])];
    let refs: Vec<&ControllerRevision> = owned.iter().collect();
    assert_eq!(list_revisions(&deleting(set()), &refs).unwrap().revisions.len(), 1);
}
