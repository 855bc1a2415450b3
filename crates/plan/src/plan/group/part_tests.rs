use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;

fn part(place: usize, state: State) -> Part {
    let p = crate::plan::fixtures::part(&["zone-a", "zone-b"], place, state);
    Part { zone_bake_seconds: 60, ..p }
}

fn set(name: &str, annotation: Option<String>) -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            annotations: annotation.map(|a| [(PART.to_string(), a)].into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn json(p: &Part) -> String {
    serde_json::to_string(p).unwrap_or_default()
}

#[test]
fn a_part_must_name_the_set_it_is_on_and_hold_together() {
    assert_eq!(read(&set("zone-a", None)), Reading::None);
    assert!(matches!(read(&set("zone-a", Some(json(&part(0, State::Done))))), Reading::Part(_)));
    // Copied onto another set: not this set's part.
    let Reading::Invalid(why) = read(&set("zone-c", Some(json(&part(0, State::Done))))) else {
        panic!("a part naming another set read as valid")
    };
    assert!(why.contains("places zone-a at 0, not this set"), "{why}");
    let Reading::Invalid(why) = read(&set("zone-a", Some(json(&part(2, State::Done))))) else {
        panic!("a place beyond the sets read as valid")
    };
    assert!(why.contains("its place 2 is beyond its 2 sets"), "{why}");
    // Written by anyone who may patch the set: control characters never reach the words.
    let mut odd = part(0, State::Done);
    odd.sets[1] = "zone-\u{1b}[2J".into();
    let Reading::Invalid(why) = read(&set("zone-a", Some(json(&odd)))) else {
        panic!("a set name with an escape read as valid")
    };
    assert!(!why.contains('\u{1b}') && why.contains("is not a StatefulSet name"), "{why}");
    let Reading::Invalid(why) = read(&set("zone-a", Some("x".repeat(20_000)))) else {
        panic!("an inflated part was parsed")
    };
    assert!(why.contains("20000 bytes"), "{why}");
    assert!(matches!(read(&set("zone-a", Some("{".into()))), Reading::Invalid(_)));
}

#[test]
fn the_whole_group_reads_from_any_member() {
    let a = set("zone-a", Some(json(&part(0, State::Done))));
    let b = set("zone-b", Some(json(&part(1, State::Rolling))));
    let sets = [a.clone(), b];
    let lookup = |n: &str| sets.iter().find(|s| s.metadata.name.as_deref() == Some(n));
    let p = part(0, State::Done);
    let standing = whole(&p, lookup);
    let states: Vec<Option<State>> = standing.iter().map(|s| s.state).collect();
    assert_eq!(states, [Some(State::Done), Some(State::Rolling)]);
    assert_eq!(words(&p, &standing), "group ingester: zone-a done, zone-b rolling");
    // Zone-b gone, or carrying another run's part: unknown, said why.
    let other = Part { started: "2026-02-01T00:00:00Z".into(), ..part(1, State::Waiting) };
    let sets = [a, set("zone-b", Some(json(&other)))];
    let lookup = |n: &str| sets.iter().find(|s| s.metadata.name.as_deref() == Some(n));
    let standing = whole(&p, lookup);
    assert_eq!(standing[1].state, None);
    assert_eq!(standing[1].note.as_deref(), Some("carries group ingester's part"));
    let none = whole(&p, |_| None);
    assert_eq!(none[0].note.as_deref(), Some("not found"));
}

#[test]
fn rollout_operator_drives_a_group_only_with_its_label_on_every_ondelete_set() {
    let labelled = |name: &str, value: &str, on_delete: bool| {
        let mut s = set(name, None);
        s.metadata.labels = Some([(ROLLOUT_GROUP.to_string(), value.to_string())].into());
        if on_delete {
            s.spec.update_strategy = Some(k8s_openapi::api::apps::v1::StatefulSetUpdateStrategy {
                type_: Some("OnDelete".into()),
                rolling_update: None,
            });
        }
        s
    };
    let (a, b) = (labelled("zone-a", "ingester", true), labelled("zone-b", "ingester", true));
    assert_eq!(rollout_operator(&[&a, &b]).as_deref(), Some("ingester"));
    let rolling = labelled("zone-b", "ingester", false);
    assert_eq!(rollout_operator(&[&a, &rolling]), None, "RollingUpdate: not its group");
    let other = labelled("zone-b", "compactor", true);
    assert_eq!(rollout_operator(&[&a, &other]), None, "two groups");
    assert_eq!(rollout_operator(&[]), None);
}

#[test]
fn batches_resolve_per_set_on_its_replicas() {
    use crate::plan::run::batch_steps;
    assert_eq!(batch_steps(&[1, 2, 4], 4).to_string(), "1,3,100%");
    assert_eq!(batch_steps(&[1, 2, 4], 20).to_string(), "1,3,7,11,15,19,100%");
    assert_eq!(batch_steps(&[5], 3).to_string(), "100%");
    assert_eq!(batch_steps(&[1], 1).to_string(), "100%");
}

fn fleet(place: usize, state: State) -> Part {
    let p = crate::plan::fixtures::part(&["web", "web", "web"], place, state);
    let c = |uid: &str, name: &str| Cluster { uid: uid.into(), name: name.into() };
    Part { clusters: Some(vec![c("u-eu", "eu"), c("u-us", "us"), c("u-ap", "ap")]), ..p }
}

#[test]
fn a_fleets_part_is_never_read_as_a_groups_and_its_other_members_are_not_looked_up_here() {
    let on = |p: &Part| set("web", Some(json(p)));
    let Reading::Fleet(p) = read(&on(&fleet(1, State::Waiting))) else {
        panic!("a fleet's part read as a group's, or invalid")
    };
    assert_eq!(read(&on(&p)).part(), None, "group readers never see it");
    assert_eq!(read(&on(&p)).any().map(|p| p.place), Some(1));
    assert_eq!(p.place_words(), "waiting in fleet ingester's plan (2/3, cluster us)");
    assert_eq!((p.beside(0), p.beside(1), p.beside(2)), (None, Some("web"), None));
    // Every "web" beside it is itself: only its own standing is read; the others are named.
    let own = on(&p);
    let standing = whole(&p, |_| Some(&own));
    assert_eq!(standing[1].state, Some(State::Waiting));
    assert_eq!(standing[0].state, None);
    assert_eq!(standing[0].note.as_deref(), Some("in cluster eu: not read from here"));
    // Its first set is in another cluster: whether its runner lives is not known here.
    let held = super::super::held::Held::of(
        &own,
        |_| panic!("looked up"),
        k8s_openapi::jiff::Timestamp::now(),
    );
    assert!(matches!(held, super::super::held::Held::Unknown(_)) && held.driven());
    // Clusters that do not pair with the sets, or an empty identity: invalid.
    let mut odd = fleet(0, State::Done);
    odd.clusters.as_mut().unwrap().pop();
    let Reading::Invalid(why) = read(&on(&odd)) else { panic!("read as valid") };
    assert!(why.contains("it names 2 clusters for 3 sets"), "{why}");
    let mut odd = fleet(0, State::Done);
    odd.clusters.as_mut().unwrap()[1].uid = String::new();
    assert!(matches!(read(&on(&odd)), Reading::Invalid(_)));
    // A group's part and a fleet's are never one run.
    let group = Part { clusters: None, ..fleet(0, State::Done) };
    assert!(!group.same_run(&fleet(0, State::Done)));
}

/// A fleet of groups: `a,b` in eu then `a,b` in us.
fn fleet_of_groups(place: usize) -> Part {
    let c = |uid: &str, name: &str| Cluster { uid: uid.into(), name: name.into() };
    let p = crate::plan::fixtures::part(&["a", "b", "a", "b"], place, State::Waiting);
    Part { clusters: Some(vec![c("1", "eu"), c("1", "eu"), c("2", "us"), c("2", "us")]), ..p }
}

#[test]
fn a_fleet_of_groups_looks_up_its_own_clusters_members_and_crosses_between_clusters() {
    let p = fleet_of_groups(2);
    assert_eq!((p.beside(0), p.beside(1)), (None, None), "eu's sets are not read from us");
    assert_eq!((p.beside(2), p.beside(3)), (Some("a"), Some("b")));
    assert_eq!(fleet_of_groups(1).beside(0), Some("a"));
    let crossing: Vec<bool> = (0..4).map(|i| p.crosses(i)).collect();
    assert_eq!(
        crossing,
        [false, false, true, false],
        "only us's first set follows another cluster"
    );
    assert!(!part(1, State::Waiting).crosses(1), "a group never crosses");
}

#[test]
fn an_approval_is_kept_on_the_part_and_an_old_part_reads_without_one() {
    let mut p = fleet_of_groups(2);
    p.approval = Some(Approval { asked: "2026-12-04T10:00:00Z".into(), by: None, at: None });
    let read_back = match read(&set("a", Some(json(&p)))) {
        Reading::Fleet(r) => *r,
        other => panic!("{other:?}"),
    };
    assert!(!read_back.approval.as_ref().unwrap().given());
    p.approval.as_mut().unwrap().at = Some("2026-12-04T10:05:00Z".into());
    assert!(p.approval.as_ref().unwrap().given());
    // Written before approvals and cluster bakes existed: neither, and nothing else changes.
    let old = json(&fleet_of_groups(2));
    assert!(!old.contains("approval") && !old.contains("clusterBake"), "{old}");
    assert!(matches!(read(&set("a", Some(old))), Reading::Fleet(r) if r.approval.is_none()));
}

#[test]
fn a_fleets_words_name_each_members_cluster_and_this_sets_place() {
    let p = fleet_of_groups(2);
    let sets: Vec<StatefulSet> = ["a", "b"]
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let state = if i == 0 { State::Rolling } else { State::Waiting };
            set(n, Some(json(&Part { place: 2 + i, state, ..p.clone() })))
        })
        .collect();
    let standing = whole_by(&p, |i| match (i, p.beside(i)) {
        (0, _) => Found::Unread("unreachable"),
        (1, _) => Found::Missing,
        (_, Some(_)) => Found::Set(&sets[i - 2]),
        _ => Found::Missing,
    });
    assert_eq!(
        words(&p, &standing),
        "fleet ingester (this set 3/4, cluster us): eu/a unknown (in cluster eu: unreachable), eu/b \
         unknown (not found), us/a rolling, us/b waiting"
    );
}
