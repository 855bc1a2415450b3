//! The sync's fused per-pod pass agrees with the plain predicates it replaces: the one-walk
//! selector scan with `Selector::matches` and the label getters, and the facts of a claimed pod
//! (`Facts::of_member`) with `Facts::of`, over a grid of awkward pods.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta, Time,
};
use ststui::core::claim::{ClaimEnv, Selector};
use ststui::core::facts::{FactEnv, Facts};
use ststui::core::labels::{POD_NAME_LABEL, REVISION_LABEL};
use ststui::core::{Now, Version, pod};

/// A label key longer than 63 bytes (a prefixed key).
const LONG: &str = "a-rather-long-prefix.example.com/and-a-name-that-is-long-as-well";

fn t(secs: i64) -> Now {
    Now::from_second(secs).unwrap_or(Now::UNIX_EPOCH)
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn expr(key: &str, op: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.into(),
        operator: op.into(),
        values: (!values.is_empty()).then(|| values.iter().map(|v| v.to_string()).collect()),
    }
}

#[test]
fn one_walk_scan_agrees_with_matches_and_the_label_getters() {
    let sel = |ml: &[(&str, &str)], ex: Vec<LabelSelectorRequirement>| LabelSelector {
        match_labels: (!ml.is_empty()).then(|| labels(ml)),
        match_expressions: (!ex.is_empty()).then_some(ex),
    };
    let many: Vec<LabelSelectorRequirement> =
        (0..10).map(|i| expr(&format!("k{i}"), "DoesNotExist", &[])).collect();
    let selectors = [
        sel(&[("app", "web")], vec![]),
        sel(&[], vec![]),
        sel(&[("app", "web")], vec![expr("tier", "In", &["a", "b"])]),
        sel(&[], vec![expr("tier", "NotIn", &["a"]), expr("app", "Exists", &[])]),
        sel(&[("app", "web")], vec![expr("app", "In", &["web", "x"])]),
        sel(&[(REVISION_LABEL, "r1")], vec![]),
        sel(&[("app", "web"), ("tier", "a")], vec![]),
        sel(&[(LONG, "x"), ("app", "web")], vec![]),
        sel(&[("app", "web")], many),
    ];
    let maps = [
        None,
        Some(labels(&[])),
        Some(labels(&[("app", "web")])),
        Some(labels(&[("app", "web"), ("tier", "a"), (REVISION_LABEL, "r1")])),
        Some(labels(&[("app", "wex"), ("tier", "c"), (POD_NAME_LABEL, "web-0")])),
        Some(labels(&[("app", "web"), ("k3", ""), (REVISION_LABEL, "r2")])),
        Some(labels(&[("apx", "web"), ("tier", "b"), (POD_NAME_LABEL, "web-1")])),
        Some(labels(&[("app", "web"), (LONG, "x"), (REVISION_LABEL, "r1")])),
        Some(labels(&[("app", "web"), (LONG, "y")])),
    ];
    let mut selected = 0;
    for ls in &selectors {
        let s = Selector::from_label_selector(Some(ls)).expect("valid selector");
        for m in &maps {
            let scan = s.scan(m.as_ref());
            assert_eq!(scan.selected, s.matches(m.as_ref()), "{ls:?} {m:?}");
            let get = |k: &str| m.as_ref().and_then(|l| l.get(k)).map(String::as_str);
            assert_eq!(scan.revision, get(REVISION_LABEL).unwrap_or_default());
            assert_eq!(scan.pod_name, get(POD_NAME_LABEL));
            selected += usize::from(scan.selected);
        }
    }
    assert!(selected > 5 && selected < selectors.len() * maps.len(), "{selected}");
    let nothing = Selector::from_label_selector(None).expect("absent selector");
    assert!(!nothing.scan(maps[2].as_ref()).selected);
}

fn set() -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("ns".into()),
            uid: Some("uid".into()),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            selector: LabelSelector {
                match_labels: Some(labels(&[("app", "web")])),
                ..Default::default()
            },
            ..Default::default()
        },
        status: None,
    }
}

/// Pods varying every field the facts read.
fn grid() -> Vec<Pod> {
    let names = ["web-0", "web-7", "web-07", "web-99999999999", "web-2147483647"];
    let phases = [None, Some("Pending"), Some("Running"), Some("Failed"), Some("Succeeded")];
    let readiness = [None, Some(("True", Some(100))), Some(("True", None)), Some(("False", None))];
    let mut out = Vec::new();
    for (i, name) in names.iter().enumerate() {
        for (j, phase) in phases.iter().enumerate() {
            for (k, ready) in readiness.iter().enumerate() {
                let v = i + j + k;
                let pod_name = if v % 4 == 0 { "web-1".to_string() } else { name.to_string() };
                let mut l = labels(&[("app", "web"), (REVISION_LABEL, ["a", "b", "c"][v % 3])]);
                if v % 5 != 1 {
                    l.insert(POD_NAME_LABEL.into(), pod_name);
                }
                let mut conditions = vec![PodCondition {
                    type_: "Initialized".into(),
                    status: "True".into(),
                    ..Default::default()
                }];
                if let Some((status, since)) = ready {
                    conditions.push(PodCondition {
                        type_: "Ready".into(),
                        status: status.to_string(),
                        last_transition_time: since.map(|s| Time(t(s))),
                        ..Default::default()
                    });
                }
                out.push(Pod {
                    metadata: ObjectMeta {
                        name: Some(name.to_string()),
                        namespace: Some(if v % 7 == 3 { "other" } else { "ns" }.into()),
                        labels: Some(l),
                        deletion_timestamp: (v % 6 == 2).then(|| Time(t(5))),
                        ..Default::default()
                    },
                    spec: None,
                    status: phase.map(|p| PodStatus {
                        phase: Some(p.into()),
                        conditions: Some(conditions),
                        ..Default::default()
                    }),
                });
            }
        }
    }
    out
}

#[test]
fn facts_of_a_member_agree_with_facts_of() {
    let set = set();
    let claim = ClaimEnv::new(&set).expect("valid selector");
    let pods = grid();
    let mut differ = 0;
    let v133 = "1.33".parse::<Version>().expect("a known version");
    for version in [Version::V1_37, Version::V1_34, v133] {
        let sem = version.semantics();
        for (current, update) in [("a", "b"), ("a", "a")] {
            for (mrs, now) in [(0, t(0)), (10, t(105)), (10, t(110)), (10, t(200))] {
                let min_ready =
                    pod::MinReady { seconds: mrs, at_deadline: sem.available_at_deadline };
                let env = FactEnv { set: &set, current, update, min_ready, now, sem: &sem };
                for p in &pods {
                    let m = claim.member(p).expect("every grid pod is a member");
                    let fast = Facts::of_member(p, &env, &m);
                    assert_eq!(fast, Facts::of(p, &env), "{}", pod::name(p));
                    differ += usize::from(fast.available != fast.running_ready);
                }
            }
        }
    }
    assert!(differ > 0, "the grid exercises minReadySeconds");
}
