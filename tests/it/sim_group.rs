//! Rollout groups on the simulator (`rollout group=NAME …`, `expect group=`, `quota`): three
//! zones rolled one at a time (every set's partition traced: never two in motion), a pod a quota
//! keeps out holding the next zone (named), a failing gate in zone-b halting the group with
//! zone-c untouched, tiers in order, and the refusals (rollout-operator's group, a set rolling
//! by itself).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::played::{Run, play};
use ststui::backend::{EventKind, ObjRef, Object};
use ststui::sim::{ChangeKind, SimEvent};

impl Run {
    /// Every change of a set's partition after event `from`, in order: (set, partition).
    fn partition_trace(&self, from: usize) -> Vec<(String, i32)> {
        let mut last: std::collections::BTreeMap<String, i32> = Default::default();
        let mut out = Vec::new();
        for (i, ev) in self.events.iter().enumerate() {
            if let SimEvent::Watch { kind: ChangeKind::Modified, object: Object::Set(s) } = ev {
                let name = s.metadata.name.clone().unwrap_or_default();
                let p = ststui::core::spec::strategy(s).partition;
                if last.insert(name.clone(), p) != Some(p) && i > from {
                    out.push((name, p));
                }
            }
        }
        out
    }

    fn group_lines(&self) -> Vec<String> {
        self.timeline()
            .filter_map(|(_, k)| match k {
                EventKind::Group { set, text, .. } => Some(format!("{set}: {text}")),
                _ => None,
            })
            .collect()
    }

    fn error_messages(&self) -> Vec<String> {
        self.timeline()
            .filter_map(|(_, k)| match k {
                EventKind::Error { message, .. } => Some(message.clone()),
                _ => None,
            })
            .collect()
    }

    fn annotation_of(&self, set: &str, key: &str) -> Option<String> {
        let set = self.sim.set(&ObjRef::new("default", set))?;
        set.metadata.annotations.as_ref()?.get(key).cloned()
    }

    /// The event where the rollout line was played (the trace starts there).
    fn rollout_at(&self) -> usize {
        self.events
            .iter()
            .position(|e| {
                e.timeline().is_some_and(|t| {
                    matches!(&t.kind, EventKind::Command { text, .. } if text.starts_with("rollout"))
                })
            })
            .expect("a rollout line")
    }
}

/// Three zones of four pods labelled as one group, each held behind its partition with a new
/// image waiting.
fn zones(extra: &str) -> String {
    let mut s = String::from("kubelet start=1s ready=1s stop=1s\n");
    for z in ["a", "b", "c"] {
        s.push_str(&format!("create ingester-zone-{z} replicas=4 labels=rollout-group=ingester\n"));
    }
    s.push_str("settle\n");
    for z in ["a", "b", "c"] {
        s.push_str(&format!("partition ingester-zone-{z} 4\nimage ingester-zone-{z} nginx:1.26\n"));
    }
    s.push_str(extra);
    s
}

#[test]
fn three_zones_roll_one_at_a_time_and_never_two_in_motion() {
    let r = play(&zones(
        "rollout group=ingester steps=1,100% bake=10s zone-bake=1m\n\
         settle\n\
         expect ingester-zone-a updated=4 plan=done group=done\n\
         expect ingester-zone-b updated=4 plan=done group=done\n\
         expect ingester-zone-c updated=4 plan=done group=done\n",
    ));
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    let trace = r.partition_trace(r.rollout_at());
    let want: Vec<(String, i32)> = ["a", "b", "c"]
        .iter()
        .flat_map(|z| [(format!("ingester-zone-{z}"), 3), (format!("ingester-zone-{z}"), 0)])
        .collect();
    // Each zone opened 1 then all, and a zone's first write came after the last of the zone
    // before: never two in motion.
    assert_eq!(trace, want, "every set's partition, in order");
    let lines = r.group_lines();
    assert!(lines.iter().any(|l| l.contains("ingester-zone-b starts (2/3)")), "{lines:#?}");
    assert_eq!(
        lines.last().map(String::as_str),
        Some("ingester-zone-c: done: every set of 3 rolled")
    );
    // The zone bake: zone-b's first step came a minute after zone-a was done.
    let at = |needle: &str| {
        r.timeline()
            .find(|(_, k)| matches!(k, EventKind::Group { text, .. } if text.contains(needle)))
            .map(|(t, _)| t)
            .unwrap_or_else(|| panic!("no group line with {needle:?}: {lines:#?}"))
    };
    assert_eq!(at("ingester-zone-b starts (2/3)") - at("ingester-zone-a done (1/3)"), 60_000);
    // The group's lease is given back; each part stays, naming the group in order.
    assert_eq!(r.annotation_of("ingester-zone-a", "ststui.io/group-lease"), None);
    let part = r.annotation_of("ingester-zone-c", "ststui.io/group").expect("zone-c's part");
    let part: serde_json::Value = serde_json::from_str(&part).unwrap();
    assert_eq!(part["group"], "ingester");
    assert_eq!(part["place"], 2);
    assert_eq!(part["state"], "done");
    assert_eq!(
        part["sets"],
        serde_json::json!(["ingester-zone-a", "ingester-zone-b", "ingester-zone-c"])
    );
}

#[test]
fn a_pod_a_quota_keeps_out_holds_the_next_zone_named_until_it_exists() {
    let r = play(&zones(
        "rollout group=ingester steps=1,100% zone-bake=30s\n\
         settle max=15s\n\
         expect ingester-zone-a group=done partition=0\n\
         quota pods=11\n\
         delete-pod ingester-zone-a-1\n\
         settle max=5m\n\
         expect ingester-zone-a pods=ingester-zone-a-0,ingester-zone-a-2,ingester-zone-a-3\n\
         expect ingester-zone-b group=waiting partition=4\n\
         quota off\n\
         settle\n\
         expect ingester-zone-b group=done updated=4\n\
         expect ingester-zone-c group=done updated=4\n",
    ));
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    let lines = r.group_lines();
    assert!(
        lines.iter().any(|l| l.contains(
            "ingester-zone-b waits: ingester-zone-a-1 was never created (a quota, an admission \
             webhook or a pending claim may keep it out)"
        )),
        "{lines:#?}"
    );
    assert!(
        r.error_messages().iter().any(|e| e.contains("exceeded quota: pods")),
        "the controller's FailedCreate: {:?}",
        r.error_messages()
    );
}

#[test]
fn a_failing_gate_in_zone_b_halts_the_group_and_zone_c_is_untouched() {
    let r = play(&zones(
        "gate ingester-zone-b-3 post-ready fail\n\
         rollout group=ingester steps=1,100% gates=post-ready\n\
         settle\n\
         expect ingester-zone-a group=done plan=done updated=4\n\
         expect ingester-zone-b group=halted plan=halted partition=3\n\
         expect ingester-zone-c group=waiting plan=none partition=4 updated=0\n",
    ));
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    let lines = r.group_lines();
    let halted = lines.iter().find(|l| l.contains("halted at ingester-zone-b")).expect("halt line");
    assert!(halted.ends_with("; ingester-zone-c untouched"), "{halted}");
    assert!(r.partition_trace(r.rollout_at()).iter().all(|(s, _)| s != "ingester-zone-c"));
    assert_eq!(
        r.annotation_of("ingester-zone-a", "ststui.io/group-lease"),
        None,
        "lease given back"
    );
}

#[test]
fn tiers_roll_in_the_order_given() {
    let r = play(
        "kubelet start=1s ready=1s stop=1s\n\
         create sr-be replicas=2 labels=rollout-group=sr\n\
         create sr-fe replicas=2 labels=rollout-group=sr\n\
         settle\n\
         partition sr-be 2\nimage sr-be nginx:1.26\n\
         partition sr-fe 2\nimage sr-fe nginx:1.26\n\
         rollout group=sr steps=100% order=fe,be\n\
         settle\n\
         expect sr-be group=done updated=2\n",
    );
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    let trace = r.partition_trace(r.rollout_at());
    let sets: Vec<&str> = trace.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(sets, ["sr-fe", "sr-be"], "fe before be, though be sorts first");
}

#[test]
fn a_group_that_cannot_roll_is_refused_with_nothing_written() {
    // rollout-operator's contract: the label and OnDelete on every set.
    let r = play(
        "create ingester-zone-a replicas=2 strategy=OnDelete labels=rollout-group=ingester\n\
         create ingester-zone-b replicas=2 strategy=OnDelete labels=rollout-group=ingester\n\
         settle\n\
         image ingester-zone-a nginx:1.26\n\
         rollout group=ingester steps=100%\n\
         settle\n",
    );
    let errors = r.error_messages();
    assert!(
        errors.iter().any(|e| e.contains("grafana/rollout-operator drives this group")),
        "{errors:?}"
    );
    assert_eq!(r.annotation_of("ingester-zone-a", "ststui.io/group"), None);
    assert_eq!(r.annotation_of("ingester-zone-a", "ststui.io/group-lease"), None);
    // A set rolling by itself (partition 0, a new revision) is a second one in motion.
    let r = play(
        "kubelet start=1s ready=1s stop=1s\n\
         create ingester-zone-a replicas=2 labels=rollout-group=ingester\n\
         create ingester-zone-b replicas=2 labels=rollout-group=ingester\n\
         settle\n\
         partition ingester-zone-a 2\n\
         image ingester-zone-a nginx:1.26\n\
         image ingester-zone-b nginx:1.26\n\
         rollout group=ingester steps=100%\n\
         settle\n",
    );
    let errors = r.error_messages();
    assert!(
        errors.iter().any(|e| e.contains("ingester-zone-b rolls by itself")
            && e.contains("ststui freeze ingester-zone-b")),
        "{errors:?}"
    );
    assert_eq!(r.annotation_of("ingester-zone-a", "ststui.io/group"), None);
    // No set carries the label.
    let r = play("create web replicas=1\nrollout group=nothing steps=100%\n");
    assert!(
        r.error_messages().iter().any(|e| e.contains("no StatefulSet carries the group's labels")),
        "{:?}",
        r.error_messages()
    );
}

#[test]
fn a_flapping_zone_holds_the_next_and_the_zone_bake_starts_again_once_it_is_steady() {
    let r = play(&zones(
        "rollout group=ingester steps=100% zone-bake=1m\n\
         settle max=20s\n\
         expect ingester-zone-a group=done\n\
         settle max=30s\n\
         unready ingester-zone-a-2\n\
         settle max=2m\n\
         expect ingester-zone-b group=waiting partition=4\n\
         ready ingester-zone-a-2\n\
         settle max=59s\n\
         expect ingester-zone-b group=waiting partition=4\n\
         settle\n\
         expect ingester-zone-b group=done\n\
         expect ingester-zone-c group=done\n",
    ));
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    let lines = r.group_lines();
    assert!(
        lines.iter().any(|l| l.contains("ingester-zone-b waits: ingester-zone-a-2 is not Ready")),
        "{lines:#?}"
    );
    let at = |needle: &str| {
        r.timeline()
            .find(|(_, k)| match k {
                EventKind::Group { text, .. } => text.contains(needle),
                EventKind::Command { text, .. } => text.starts_with(needle),
                _ => false,
            })
            .map(|(t, _)| t)
            .unwrap_or_else(|| panic!("no line with {needle:?}: {lines:#?}"))
    };
    // A full minute of quiet after the pod came back, not what was left of the first bake.
    assert_eq!(at("ingester-zone-b starts (2/3)") - at("ready ingester-zone-a-2"), 60_000);
}

#[test]
fn batches_open_each_set_one_then_two_more_then_the_rest() {
    let r = play(&zones(
        "rollout group=ingester batches=1,2\n\
         settle\n\
         expect ingester-zone-c updated=4 group=done\n",
    ));
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    let want: Vec<(String, i32)> = ["a", "b", "c"]
        .iter()
        .flat_map(|z| [3, 1, 0].map(|p| (format!("ingester-zone-{z}"), p)))
        .collect();
    assert_eq!(r.partition_trace(r.rollout_at()), want);
    let part = r.annotation_of("ingester-zone-a", "ststui.io/group").expect("a part");
    assert!(part.contains("\"steps\":\"batches 1,2\""), "{part}");
}
