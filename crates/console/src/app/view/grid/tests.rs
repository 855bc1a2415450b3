use super::layout::index_at_column;
use super::*;
use k8s_openapi::api::apps::v1::{StatefulSetOrdinals, StatefulSetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

fn set(replicas: i32, start: i32) -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta { name: Some("db".into()), ..Default::default() },
        spec: StatefulSetSpec {
            replicas: Some(replicas),
            ordinals: Some(StatefulSetOrdinals { start: Some(start) }),
            ..Default::default()
        },
        status: None,
    }
}

fn pod(name: &str) -> Pod {
    Pod {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        ..Default::default()
    }
}

#[test]
fn start_ordinal_and_scale_down_are_ruled_and_condemned() {
    // replicas 3 from start 5: 5..8 wanted; 3 (below start) and 9 (beyond) are condemned,
    // 4 and 8 are gaps among condemned pods, 6 is a placeholder; other sets' pods ignored.
    let s = set(3, 5);
    let pods = [pod("db-3"), pod("db-5"), pod("db-7"), pod("db-9"), pod("dbx-6"), pod("db")];
    let g = GridView::build(&s, pods.iter(), "", "");
    assert_eq!((g.first, g.end()), (3, 10));
    let states: Vec<(i32, PodState, bool)> =
        g.cells.iter().map(|c| (c.ordinal, c.state, c.condemned)).collect();
    assert_eq!(states[0], (3, PodState::Pending, true));
    assert_eq!(states[1], (4, PodState::Absent, true));
    assert_eq!(states[3], (6, PodState::Placeholder, false));
    assert_eq!(states[5], (8, PodState::Absent, true));
    assert_eq!(states[6], (9, PodState::Pending, true));
    let kinds: Vec<(RuleKind, i32)> = g.rules.iter().map(|r| (r.kind, r.before)).collect();
    assert_eq!(kinds, [(RuleKind::Start, 5), (RuleKind::Condemned, 8)]);
}

/// A set asking for 2147483647 replicas with three pods: the grid holds the pods and
/// [`PLACEHOLDER_TAIL`] placeholders, and counts the rest (it never allocates per replica).
#[test]
fn a_huge_replica_count_allocates_for_the_pods_that_exist() {
    let s = set(i32::MAX, 0);
    let pods = [pod("db-0"), pod("db-1"), pod("db-2")];
    let g = GridView::build(&s, pods.iter(), "", "");
    assert_eq!(g.cells.len(), 3 + PLACEHOLDER_TAIL as usize);
    assert_eq!(g.hidden, i64::from(i32::MAX) - 3 - i64::from(PLACEHOLDER_TAIL));
    // An ordinary set is whole.
    let g = GridView::build(&set(5, 0), pods.iter(), "", "");
    assert_eq!((g.cells.len(), g.hidden), (5, 0));
    assert_eq!(shown_end(0, 5, Some(9)), 9, "condemned pods beyond the range stay shown");
}

/// The grid follows the controller's claiming: a matching pod of another controller, a
/// name-alike that does not match the selector, and a non-numeric name are not the set's;
/// an owned `db-01` is ordinal 1, as upstream parses it.
#[test]
fn only_the_pods_the_controller_counts_are_gridded() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
    let mut s = set(3, 0);
    s.metadata.uid = Some("set-uid".into());
    s.metadata.namespace = Some("d".into());
    let labels: std::collections::BTreeMap<String, String> =
        [("app".to_string(), "db".to_string())].into();
    s.spec.selector = LabelSelector { match_labels: Some(labels.clone()), ..Default::default() };
    let owned = |name: &str, uid: &str| {
        let mut p = pod(name);
        p.metadata.namespace = Some("d".into());
        p.metadata.labels = Some(labels.clone());
        p.metadata.owner_references = Some(vec![OwnerReference {
            uid: uid.into(),
            controller: Some(true),
            ..Default::default()
        }]);
        p
    };
    let mut unowned = pod("db-9");
    unowned.metadata.namespace = Some("d".into());
    let mut orphan = owned("db-2", "x");
    orphan.metadata.owner_references = None;
    let pods = [
        owned("db-0", "set-uid"),
        owned("db-01", "set-uid"),
        orphan,
        owned("db-4", "another-controller"),
        unowned,
        owned("db-1x", "set-uid"),
    ];
    let g = GridView::build(&s, pods.iter(), "", "");
    let existing: Vec<i32> = g.cells.iter().filter(|c| c.exists).map(|c| c.ordinal).collect();
    assert_eq!(existing, [0, 1, 2], "db-01 is ordinal 1; the orphan is adopted");
    assert_eq!(g.end(), 3, "no condemned db-4 or db-9");
}

#[test]
fn compact_columns_skip_group_gaps() {
    assert_eq!(index_at_column(0), Some(0));
    assert_eq!(index_at_column(9), Some(9));
    assert_eq!(index_at_column(10), None);
    assert_eq!(index_at_column(11), Some(10));
    assert_eq!(compact_cols(5), 5);
    assert_eq!(compact_cols(21), 20);
}

#[test]
fn revision_classes() {
    assert_eq!(classify(Some("a"), "a", "b"), RevClass::Current);
    assert_eq!(classify(Some("b"), "a", "b"), RevClass::Update);
    assert_eq!(classify(Some("b"), "b", "b"), RevClass::Update);
    assert_eq!(classify(Some("c"), "a", "b"), RevClass::Other);
    assert_eq!(classify(None, "a", "b"), RevClass::Unknown);
}

/// The memoized build reads only changed pod versions yet always equals a build from scratch:
/// through pods added, changed (revision, state), deleted, and the set's claim rules moving
/// (another uid: none of the pods is its own any more); and it forgets versions it no longer
/// needs.
#[test]
fn the_memoized_grid_equals_a_fresh_one_through_every_change() {
    use crate::app::mirror::Mirror;
    use crate::backend::{ObjRef, Object};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use std::sync::Arc;
    let key = ObjRef::new("d", "db");
    let mut s = set(4, 0);
    s.metadata.uid = Some("u1".into());
    s.metadata.namespace = Some("d".into());
    let versioned = |o: i32, rev: &str, deleting: bool| {
        let mut p = pod(&format!("db-{o}"));
        p.metadata.namespace = Some("d".into());
        p.metadata.labels = Some([(REVISION_LABEL.to_string(), rev.to_string())].into());
        p.metadata.owner_references = Some(vec![OwnerReference {
            uid: "u1".into(),
            controller: Some(true),
            ..Default::default()
        }]);
        if deleting {
            p.metadata.deletion_timestamp =
                Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Default::default()));
        }
        Object::Pod(Arc::new(p))
    };
    let mut m = Mirror::default();
    let mut memo = GridMemo::default();
    let check = |m: &Mirror, s: &StatefulSet, memo: &mut GridMemo, what: &str| {
        let fresh = GridView::build(s, m.pods_in("d"), "a", "b");
        let memoized = GridView::build_memo(s, m.indexed(&key), "a", "b", memo);
        assert_eq!(memoized, fresh, "{what}");
        memoized
    };
    for o in 0..4 {
        m.apply(versioned(o, "a", false));
    }
    m.apply(Object::Set(Arc::new(s.clone())));
    check(&m, &s, &mut memo, "four current pods");
    m.apply(versioned(3, "b", false));
    let g = check(&m, &s, &mut memo, "db-3 updated");
    assert_eq!(g.cell(3).map(|c| c.rev), Some(RevClass::Update));
    m.apply(versioned(2, "a", true));
    let g = check(&m, &s, &mut memo, "db-2 terminating");
    assert_eq!(g.cell(2).map(|c| c.state), Some(PodState::Terminating));
    m.delete(&versioned(2, "a", true));
    check(&m, &s, &mut memo, "db-2 gone");
    s.metadata.uid = Some("u2".into());
    let g = check(&m, &s, &mut memo, "a new set of the same name owns none of them");
    assert!(g.cells.iter().all(|c| !c.exists));
    s.metadata.uid = Some("u1".into());
    check(&m, &s, &mut memo, "back");
    for i in 0..1_000 {
        m.apply(versioned(0, if i % 2 == 0 { "b" } else { "a" }, false));
        GridView::build_memo(&s, m.indexed(&key), "a", "b", &mut memo);
    }
    assert!(memo.len() <= 4 + 64, "old versions are forgotten: {}", memo.len());
}
