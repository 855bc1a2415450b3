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
