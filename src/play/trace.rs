//! The differential check's equivalence: what of a JSONL timeline is the controller's doing
//! (a [`Trace`]), and whether two traces (the simulator's and a real cluster's) agree.
//!
//! Revisions are compared by the order the controller created them (`r1`, `r2`, …), not by
//! name: a restart's template carries the wall-clock second, so its hash differs between the
//! two. Compared, per set: the pods the controller created (ordinal and revision) and deleted
//! (ordinal and reason), in order, except that the order inside one burst of a Parallel set
//! (consecutive creations, or consecutive deletions) and inside a Recreate deletion burst (a
//! run of deletions holding a `recreate` one) is ignored; the revisions created, in
//! order; the claims created (as a set: the controller creates them just before their pod, in
//! one sync); and the set's final status (the counts and both revisions). A loop (a pod
//! created and deleted again three times in a row or more) is one entry, however many turns it
//! made. Wall-clock timing is ignored beyond that order; kubelet, collector and status lines in between are not compared.
//! Pure; documented in the README ("The differential check").

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// The controller's actions and the final status of each set, from one timeline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// Per set: `create web-0 @web-6c9f` / `delete web-2 (update)`, bursts canonicalised.
    pub pods: BTreeMap<String, Vec<String>>,
    /// Per set: revisions created, in order.
    pub revisions: BTreeMap<String, Vec<String>>,
    /// Per set: claims created.
    pub claims: BTreeMap<String, BTreeSet<String>>,
    /// Per set: the last status line.
    pub status: BTreeMap<String, String>,
}

fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

fn number(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or(0)
}

/// Reads a JSONL timeline; `parallel` names the sets whose bursts are unordered. Lines that
/// are not JSON objects are skipped.
pub fn trace(jsonl: &str, parallel: &BTreeSet<String>) -> Trace {
    let mut t = Trace::default();
    for line in jsonl.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        let set = text(&v, "set");
        match (text(&v, "type").as_str(), text(&v, "action").as_str()) {
            ("controller", "create-pod") => {
                let entry = format!("create {} @{}", text(&v, "pod"), text(&v, "revision"));
                t.pods.entry(set).or_default().push(entry);
            }
            ("controller", "delete-pod") => {
                let pod = text(&v, "pod");
                let entries = t.pods.entry(set).or_default();
                // A second deletion of a pod already deleted (no creation since) changes
                // nothing a cluster shows: the API refuses it or it is a no-op.
                let again =
                    entries.iter().rev().find(|e| e.split(' ').nth(1) == Some(pod.as_str()));
                if again.is_none_or(|e| !e.starts_with("delete ")) {
                    entries.push(format!("delete {pod} ({})", text(&v, "reason")));
                }
            }
            ("controller", "create-revision") => {
                t.revisions.entry(set).or_default().push(text(&v, "revision"));
            }
            ("controller", "create-pvc") => {
                t.claims.entry(set).or_default().insert(text(&v, "pvc"));
            }
            ("status", _) => {
                let line = format!(
                    "replicas={} ready={} available={} current={} updated={} revision={}->{}",
                    number(&v, "replicas"),
                    number(&v, "readyReplicas"),
                    number(&v, "availableReplicas"),
                    number(&v, "currentReplicas"),
                    number(&v, "updatedReplicas"),
                    text(&v, "currentRevision"),
                    text(&v, "updateRevision"),
                );
                t.status.insert(set, line);
            }
            _ => {}
        }
    }
    for (set, entries) in &mut t.pods {
        let names = t.revisions.get(set);
        for e in entries.iter_mut() {
            if let Some((head, rev)) = e.split_once(" @") {
                *e = format!("{head} @{}", numbered(names, rev));
            }
        }
        if parallel.contains(set) {
            canonical_bursts(entries);
        } else {
            canonical_recreates(entries);
        }
        collapse_loops(entries);
    }
    for (set, line) in &mut t.status {
        let names = t.revisions.get(set);
        if let Some((head, revs)) = line.split_once(" revision=") {
            let (cur, upd) = revs.split_once("->").unwrap_or((revs, ""));
            *line = format!("{head} revision={}->{}", numbered(names, cur), numbered(names, upd));
        }
    }
    for names in t.revisions.values_mut() {
        let original = names.clone();
        for n in names.iter_mut() {
            *n = numbered(Some(&original), n);
        }
    }
    t
}

/// `r<i>` for the i-th revision created (its first creation), else the name itself.
fn numbered(created: Option<&Vec<String>>, name: &str) -> String {
    match created.and_then(|c| c.iter().position(|n| n == name)) {
        Some(i) => format!("r{}", i + 1),
        None => name.to_string(),
    }
}

/// The ordinal of the pod an entry names (`delete web-2 (update)` → 2).
fn ordinal(e: &str) -> i32 {
    crate::core::labels::ordinal_of(e.split(' ').nth(1).unwrap_or_default())
}

/// Sorts each run of consecutive deletions that holds a Recreate deletion by ordinal: the
/// Recreate strategy deletes every old pod in one burst, whatever the pod management policy.
fn canonical_recreates(entries: &mut [String]) {
    let mut start = 0;
    while start < entries.len() {
        let mut end = start;
        while end < entries.len() && entries[end].starts_with("delete ") {
            end += 1;
        }
        if entries[start..end].iter().any(|e| e.ends_with("(recreate)")) {
            entries[start..end].sort_by_key(|e| (ordinal(e), e.clone()));
        }
        start = end.max(start + 1);
    }
}

/// Sorts each run of consecutive entries of the same kind (`create …` or `delete …`) by
/// ordinal.
fn canonical_bursts(entries: &mut [String]) {
    let kind = |e: &String| e.split(' ').next().unwrap_or_default().to_string();
    let mut start = 0;
    while start < entries.len() {
        let k = kind(&entries[start]);
        let mut end = start + 1;
        while end < entries.len() && kind(&entries[end]) == k {
            end += 1;
        }
        entries[start..end].sort_by_key(|e| (ordinal(e), e.clone()));
        start = end;
    }
}

/// A pod created and deleted again this many times in a row or more is a loop.
pub const LOOP_TURNS: usize = 3;

/// Collapses each loop — the same creation and deletion of a pod, [`LOOP_TURNS`] times in a
/// row or more — into one entry, `create web-0 @r1, delete web-0 (update), over and over`: how
/// many turns a loop makes in a given time is the clock's (the kubelet's delays, each API
/// call's latency), not a decision of the controller.
fn collapse_loops(entries: &mut Vec<String>) {
    let mut out = Vec::with_capacity(entries.len());
    let mut i = 0;
    while i < entries.len() {
        let turn = entries.get(i..i + 2).filter(|t| {
            let pod = |e: &String| e.split(' ').nth(1).map(str::to_string);
            t[0].starts_with("create ") && t[1].starts_with("delete ") && pod(&t[0]) == pod(&t[1])
        });
        let turns =
            turn.map_or(0, |t| entries[i..].chunks_exact(2).take_while(|c| *c == t).count());
        if turns >= LOOP_TURNS {
            out.push(format!("{}, {}, over and over", entries[i], entries[i + 1]));
            i += 2 * turns;
        } else {
            out.push(entries[i].clone());
            i += 1;
        }
    }
    *entries = out;
}

/// The two sides' values for `set` when they differ (a missing one is empty).
fn differ<T: Default + Clone + PartialEq>(
    a: &BTreeMap<String, T>,
    b: &BTreeMap<String, T>,
    set: &str,
) -> Option<(T, T)> {
    let (x, y) = (a.get(set).cloned().unwrap_or_default(), b.get(set).cloned().unwrap_or_default());
    (x != y).then_some((x, y))
}

/// Where two traces differ, one sentence per difference (empty: they agree).
pub fn differences(sim: &Trace, cluster: &Trace) -> Vec<String> {
    let mut out = Vec::new();
    let sets: BTreeSet<&String> = [sim, cluster]
        .iter()
        .flat_map(|t| {
            t.pods.keys().chain(t.revisions.keys()).chain(t.claims.keys()).chain(t.status.keys())
        })
        .collect();
    for set in sets {
        if let Some((a, b)) = differ(&sim.pods, &cluster.pods, set) {
            let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
            out.push(format!(
                "{set}: pod actions differ from action {} on: simulator {:?}, cluster {:?}",
                at + 1,
                a.get(at).map_or("(end)", String::as_str),
                b.get(at).map_or("(end)", String::as_str),
            ));
        }
        if let Some((a, b)) = differ(&sim.revisions, &cluster.revisions, set) {
            out.push(format!("{set}: revisions created differ: simulator {a:?}, cluster {b:?}"));
        }
        if let Some((a, b)) = differ(&sim.claims, &cluster.claims, set) {
            out.push(format!("{set}: claims created differ: simulator {a:?}, cluster {b:?}"));
        }
        if sim.status.get(set) != cluster.status.get(set) {
            out.push(format!(
                "{set}: final status differs: simulator {}, cluster {}",
                sim.status.get(set).map_or("(none)", String::as_str),
                cluster.status.get(set).map_or("(none)", String::as_str)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIM: &str = r#"{"t":0,"type":"command","line":1,"text":"create web replicas=2"}
{"t":0,"type":"controller","set":"web","action":"create-revision","revision":"web-a"}
{"t":0,"type":"controller","set":"web","action":"create-pvc","pvc":"data-web-0"}
{"t":0,"type":"controller","set":"web","action":"create-pod","pod":"web-0","revision":"web-a"}
{"t":0,"type":"controller","set":"web","action":"create-pvc","pvc":"data-web-1"}
{"t":0,"type":"controller","set":"web","action":"create-pod","pod":"web-1","revision":"web-a"}
{"t":2,"type":"kubelet","pod":"web-0","event":"ready"}
{"t":3,"type":"controller","set":"web","action":"delete-pod","pod":"web-1","reason":"update"}
{"t":3,"type":"status","set":"web","replicas":2,"readyReplicas":2,"availableReplicas":2,"currentReplicas":2,"updatedReplicas":2,"currentRevision":"web-a","updateRevision":"web-a","observedGeneration":1}"#;

    #[test]
    fn a_trace_keeps_the_controllers_actions_and_the_last_status() {
        let t = trace(SIM, &BTreeSet::new());
        assert_eq!(
            t.pods["web"],
            vec!["create web-0 @r1", "create web-1 @r1", "delete web-1 (update)"]
        );
        assert_eq!(t.revisions["web"], vec!["r1"]);
        assert!(t.status["web"].ends_with("revision=r1->r1"), "{:?}", t.status);
        assert_eq!(t.claims["web"].len(), 2);
        assert!(t.status["web"].starts_with("replicas=2 ready=2"), "{:?}", t.status);
        assert!(differences(&t, &t.clone()).is_empty());
    }

    #[test]
    fn order_inside_a_recreate_burst_is_ignored_even_for_ordered_sets() {
        let del = |pod: &str, reason: &str| {
            format!(
                "{{\"t\":5,\"type\":\"controller\",\"set\":\"web\",\"action\":\"delete-pod\",\"pod\":\"{pod}\",\"reason\":\"{reason}\"}}"
            )
        };
        let a = [del("web-0", "recreate"), del("web-2", "scale-down"), del("web-1", "recreate")];
        let b = [del("web-2", "scale-down"), del("web-1", "recreate"), del("web-0", "recreate")];
        let (a, b) = (format!("{SIM}\n{}", a.join("\n")), format!("{SIM}\n{}", b.join("\n")));
        let none = BTreeSet::new();
        assert!(differences(&trace(&a, &none), &trace(&b, &none)).is_empty());
        // Two rolling-update deletions in another order still differ.
        let (c, d) = (del("web-3", "update"), del("web-4", "update"));
        let one = format!("{SIM}\n{c}\n{d}");
        let other = format!("{SIM}\n{d}\n{c}");
        assert!(!differences(&trace(&one, &none), &trace(&other, &none)).is_empty());
    }

    #[test]
    fn order_inside_a_parallel_burst_is_ignored_but_not_for_ordered_sets() {
        let swapped = SIM
            .replace(r#""pod":"web-0","revision":"web-a"}"#, r#""pod":"TMP","revision":"web-a"}"#)
            .replace(r#""pod":"web-1","revision":"web-a"}"#, r#""pod":"web-0","revision":"web-a"}"#)
            .replace(r#""pod":"TMP","revision":"web-a"}"#, r#""pod":"web-1","revision":"web-a"}"#);
        let parallel = BTreeSet::from(["web".to_string()]);
        assert!(differences(&trace(SIM, &parallel), &trace(&swapped, &parallel)).is_empty());
        let d = differences(&trace(SIM, &BTreeSet::new()), &trace(&swapped, &BTreeSet::new()));
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0].contains("from action 1 on"), "{d:?}");
    }

    #[test]
    fn a_second_deletion_of_a_deleted_pod_is_not_an_action() {
        let twice = SIM.replace(
            r#"{"t":3,"type":"status""#,
            "{\"t\":3,\"type\":\"controller\",\"set\":\"web\",\"action\":\"delete-pod\",\"pod\":\"web-1\",\"reason\":\"failed\"}\n{\"t\":3,\"type\":\"status\"",
        );
        let none = BTreeSet::new();
        assert_eq!(trace(&twice, &none).pods["web"].len(), 3, "{:?}", trace(&twice, &none));
        assert!(differences(&trace(SIM, &none), &trace(&twice, &none)).is_empty());
    }

    #[test]
    fn revisions_are_compared_by_creation_order_not_by_name() {
        let renamed = SIM.replace("web-a", "web-b");
        let none = BTreeSet::new();
        assert!(differences(&trace(SIM, &none), &trace(&renamed, &none)).is_empty());
        let two = format!(
            "{SIM}\n{}",
            r#"{"t":4,"type":"controller","set":"web","action":"create-revision","revision":"web-c"}"#
        );
        let d = differences(&trace(SIM, &none), &trace(&two, &none));
        assert_eq!(
            d,
            vec![r#"web: revisions created differ: simulator ["r1"], cluster ["r1", "r2"]"#]
        );
    }

    fn turns(n: usize) -> String {
        let turn = r#"{"t":5,"type":"controller","set":"web","action":"create-pod","pod":"web-0","revision":"web-a"}
{"t":5,"type":"controller","set":"web","action":"delete-pod","pod":"web-0","reason":"update"}"#;
        let mut s = SIM.to_string();
        for _ in 0..n {
            s.push('\n');
            s.push_str(turn);
        }
        s
    }

    #[test]
    fn a_loop_is_compared_by_what_turns_not_by_how_often() {
        let none = BTreeSet::new();
        let (a, b) = (trace(&turns(27), &none), trace(&turns(25), &none));
        assert!(differences(&a, &b).is_empty(), "{:?}", differences(&a, &b));
        assert_eq!(
            a.pods["web"].last().map(String::as_str),
            Some("create web-0 @r1, delete web-0 (update), over and over")
        );
        // Fewer than three turns are actions like any others.
        let d = differences(&trace(&turns(2), &none), &trace(&turns(1), &none));
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(!differences(&trace(&turns(3), &none), &trace(&turns(2), &none)).is_empty());
        assert_eq!(trace(&turns(2), &none).pods["web"].len(), 7);
    }

    #[test]
    fn a_different_reason_revision_or_status_is_named() {
        let other = SIM
            .replace("\"reason\":\"update\"", "\"reason\":\"scale-down\"")
            .replace("\"readyReplicas\":2", "\"readyReplicas\":1");
        let d = differences(&trace(SIM, &BTreeSet::new()), &trace(&other, &BTreeSet::new()));
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].contains("\"delete web-1 (update)\"") && d[0].contains("(scale-down)"));
        assert!(d[1].contains("final status differs"), "{d:?}");
    }
}
