//! Rollout plans on the simulator (a scenario's `rollout` and `approve` lines, `expect plan=`
//! and `partition=`): the partitions written and nothing else, the bake, the gate that holds
//! `settle`, a halt on a broken step or a bake that fails, undo deleting exactly the stuck pod,
//! a freeze that halts and is never undone, the lease, refusals, and the same timeline through
//! the real-time driver's polling.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::path::Path;
use ststui::backend::{EventKind, ObjRef, Object};

use crate::support::played::{Run, play};
use ststui::sim::scenario::{Player, parse};
use ststui::sim::{ChangeKind, Sim, SimConfig, SimEvent};

impl Run {
    /// Every partition the set was stored with, in order, repeats collapsed.
    fn partitions(&self) -> Vec<i32> {
        let mut out: Vec<i32> = Vec::new();
        for ev in &self.events {
            if let SimEvent::Watch { kind: ChangeKind::Modified, object: Object::Set(s) } = ev {
                let p = ststui::core::spec::strategy(s).partition;
                if out.last() != Some(&p) {
                    out.push(p);
                }
            }
        }
        out
    }

    /// The `plan` lines' texts.
    fn plan_lines(&self) -> Vec<String> {
        self.timeline()
            .filter_map(|(_, k)| match k {
                EventKind::Plan { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    fn errors(&self) -> Vec<(Option<usize>, String)> {
        self.timeline()
            .filter_map(|(_, k)| match k {
                EventKind::Error { line, message } => Some((*line, message.clone())),
                _ => None,
            })
            .collect()
    }

    /// Pods deleted by anyone other than the controller's rolling update (the plan's undo).
    fn deleted_by_plan(&self) -> Vec<String> {
        self.plan_lines()
            .iter()
            .filter_map(|l| l.strip_prefix("undo: evicted "))
            .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
            .collect()
    }

    fn annotation(&self, key: &str) -> Option<String> {
        let set = self.sim.set(&ObjRef::new("default", "web"))?;
        set.metadata.annotations.as_ref()?.get(key).cloned()
    }
}

const BASE: &str = "kubelet start=1s ready=1s stop=1s\n\
                    create web replicas=4\n\
                    settle\n\
                    partition web 4\n\
                    settle\n";

#[test]
fn a_plan_writes_its_partitions_in_order_and_no_other_bakes_and_ends_done() {
    let r = play(&format!(
        "{BASE}image web nginx:1.26\n\
         rollout web steps=1,50%,100% bake=30s\n\
         settle\n\
         expect web partition=0 updated=4 rolledOut=true plan=done\n"
    ));
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    assert_eq!(r.partitions(), vec![0, 4, 3, 2, 0], "the partitions the set was stored with");
    let lines = r.plan_lines();
    assert_eq!(lines.first().map(String::as_str), Some("step 1/3: partition 4 → 3 (opens web-3)"));
    assert_eq!(
        lines.last().map(String::as_str),
        Some("plan done: 3 steps (1,50%,100%), partition 0")
    );
    // Each step baked 30 s: the next opened no sooner than 30 s after its bake began.
    let at = |needle: &str| {
        r.timeline()
            .find(|(_, k)| matches!(k, EventKind::Plan { text, .. } if text.contains(needle)))
            .map(|(t, _)| t)
            .unwrap_or_else(|| panic!("no plan line with {needle:?}: {lines:?}"))
    };
    let baked = at("step 1/3: updated, Ready and available: baking 30s");
    let second = at("step 2/3: partition 3 → 2");
    assert_eq!(second - baked, 30_000, "bake of step 1");
    // Its lease is given back when it ends; its record stays for every console and explain.
    assert_eq!(r.annotation("ststui.io/plan-lease"), None);
    assert!(r.annotation("ststui.io/plan").is_some_and(|p| p.contains("\"phase\":\"done\"")));
}

#[test]
fn a_gate_holds_until_approve_and_settle_ends_there() {
    let r = play(&format!(
        "{BASE}image web nginx:1.26\n\
         rollout web steps=1,pause,100%\n\
         settle\n\
         expect web partition=3 updated=1 plan=gate\n\
         wait 10m\n\
         expect web partition=3 updated=1 plan=gate\n\
         approve web\n\
         settle\n\
         expect web partition=0 updated=4 plan=done\n"
    ));
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    // The first settle ended at the gate, not at its 10-minute bound.
    let gate = r
        .timeline()
        .find(|(_, k)| matches!(k, EventKind::Plan { phase, .. } if phase == "gate"))
        .map(|(t, _)| t)
        .unwrap_or_default();
    assert!(gate < 60_000, "gate reached at {gate} ms");
    let lease = r.annotation("ststui.io/plan-lease");
    assert_eq!(lease, None, "a done plan holds no lease");
}

#[test]
fn a_broken_step_halts_at_stuck_after_and_undo_deletes_exactly_the_stuck_pod() {
    let r = play(&format!(
        "{BASE}break-image nginx:bad\n\
         image web nginx:bad\n\
         rollout web steps=1,50%,100% stuck-after=2m on-failure=undo\n\
         settle max=1m\n\
         expect web partition=3 plan=waiting\n\
         settle\n\
         expect web partition=4 plan=aborted rolledOut=true ready=4\n"
    ));
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    // Nothing opened past step 1; undone as abort does: the partition back where it began.
    assert_eq!(r.partitions(), vec![0, 4, 3, 4], "nothing opened past step 1");
    assert_eq!(r.deleted_by_plan(), vec!["web-3".to_string()]);
    let halted = r.plan_lines().into_iter().find(|l| l.starts_with("plan halted")).unwrap();
    assert!(
        halted.contains("step 1 made no progress for 2m: web-3 Running, not Ready"),
        "{halted}"
    );
}

#[test]
fn hold_leaves_the_broken_step_as_it_is() {
    let r = play(&format!(
        "{BASE}break-image nginx:bad\n\
         image web nginx:bad\n\
         rollout web steps=1,100% stuck-after=1m\n\
         settle\n\
         expect web partition=3 plan=halted updated=1 rolledOut=false\n"
    ));
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    assert!(r.deleted_by_plan().is_empty());
}

/// `abort NAME` (the console's abort key, replayed): the halted plan recorded aborted, the
/// partition back where it began, the template reverted and the stuck pod recreated on it.
#[test]
fn abort_ends_the_halted_plan_puts_the_partition_back_and_rolls_back() {
    let r = play(&format!(
        "{BASE}break-image nginx:bad\n\
         image web nginx:bad\n\
         rollout web steps=1,100% stuck-after=1m\n\
         settle\n\
         expect web partition=3 plan=halted updated=1\n\
         abort web\n\
         settle\n\
         expect web partition=4 plan=aborted ready=4 rolledOut=true\n"
    ));
    assert!(r.outcome.passed(), "{:?} {:?}", r.outcome.failures, r.errors());
    assert_eq!(r.partitions(), vec![0, 4, 3, 4]);
    let set = r.sim.set(&ObjRef::new("default", "web")).unwrap();
    let image = set.spec.template.spec.as_ref().unwrap().containers[0].image.clone();
    assert_eq!(image.as_deref(), Some("nginx:1.25"));
}

#[test]
fn a_pod_unready_while_baking_halts_the_step() {
    let r = play(&format!(
        "{BASE}image web nginx:1.26\n\
         rollout web steps=1,100% bake=1m\n\
         wait 20s\n\
         expect web plan=baking\n\
         unready web-1\n\
         settle\n\
         expect web partition=3 plan=halted\n"
    ));
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    let halted = r.plan_lines().into_iter().find(|l| l.starts_with("plan halted")).unwrap();
    assert!(halted.contains("while baking step 1: web-1: not Ready"), "{halted}");
}

#[test]
fn a_freeze_halts_the_plan_and_is_never_undone() {
    let r = play(&format!(
        "{BASE}image web nginx:1.26\n\
         rollout web steps=1,100% bake=1m on-failure=undo\n\
         wait 20s\n\
         freeze web\n\
         settle\n\
         expect web plan=halted updated=1\n"
    ));
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    let lines = r.plan_lines();
    let halted = lines.iter().find(|l| l.starts_with("plan halted")).unwrap();
    assert!(halted.contains("a freeze halts the plan"), "{halted}");
    assert!(halted.ends_with("the set is frozen: nothing further opens"), "{halted}");
    assert!(!lines.iter().any(|l| l.starts_with("undo")), "{lines:?}");
}

#[test]
fn refusals_name_the_line_and_what_is_expected() {
    let r = play(&format!(
        "{BASE}rollout web steps=1\n\
         image web nginx:1.26\n\
         rollout web steps=1,pause,100%\n\
         rollout web steps=1\n\
         approve web\n\
         rollout nope steps=1\n\
         settle\n\
         expect web plan=gate\n"
    ));
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    let errors = r.errors();
    let at = |line: usize| {
        errors
            .iter()
            .find(|(l, _)| *l == Some(line))
            .map(|(_, m)| m.clone())
            .unwrap_or_else(|| panic!("no error for line {line}: {errors:?}"))
    };
    assert!(at(6).contains("nothing to roll out"), "{}", at(6));
    assert!(at(9).contains("a plan already runs on default/web"), "{}", at(9));
    assert!(at(10).contains("has no rollout plan to approve"), "{}", at(10));
    assert!(at(11).contains("statefulset default/nope not found"), "{}", at(11));
    assert_eq!(r.outcome.errors, 4);
    // While it runs, the simulator holds the plan's lease: another runner would refuse.
    let lease = r.annotation("ststui.io/plan-lease").unwrap_or_default();
    assert!(lease.contains("\"host\":\"ststui-sim\""), "{lease}");
}

#[test]
fn the_real_time_driver_plays_a_plan_as_headless_does() {
    let text = format!(
        "{BASE}image web nginx:1.26\n\
         rollout web steps=1,pause,100% bake=30s\n\
         settle\n\
         approve web\n\
         settle\n\
         expect web plan=done\n"
    );
    let headless: Vec<_> =
        play(&text).events.iter().filter_map(|e| e.timeline().cloned()).collect();
    let script = parse(Path::new("<test>"), &text).unwrap_or_else(|e| panic!("{e}"));
    let mut p = Player::new(script).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Sim::new(SimConfig::default());
    let mut polled = Vec::new();
    let mut due = Some(sim.now_ms());
    let mut polls = 0;
    while let Some(t) = due {
        sim.advance_to(t);
        due = p.poll(&mut sim);
        polls += 1;
        assert!(polls < 10_000, "the player does not finish");
        polled.extend(sim.drain_events().iter().filter_map(|e| e.timeline().cloned()));
    }
    assert!(p.outcome().passed(), "{:?}", p.outcome().failures);
    assert_eq!(polled, headless);
}

#[test]
fn on_delete_a_plan_deletes_its_pods_one_at_a_time_from_the_highest() {
    let r = play(
        "kubelet start=1s ready=1s stop=1s\n\
         create web replicas=4 strategy=OnDelete\n\
         settle\n\
         image web nginx:1.26\n\
         rollout web steps=1,100%\n\
         settle\n\
         expect web plan=done updated=4\n",
    );
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    let deleted: Vec<(u64, String)> = r
        .timeline()
        .filter_map(|(t, k)| match k {
            EventKind::Plan { text, .. } if text.contains(": evicted ") => {
                Some((t, text.split(": evicted ").nth(1)?.split(' ').next()?.to_string()))
            }
            _ => None,
        })
        .collect();
    let names: Vec<&str> = deleted.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(names, ["web-3", "web-2", "web-1", "web-0"]);
    // One at a time: each after the one before came back Ready (start 1s + ready 1s + stop 1s).
    for pair in deleted.windows(2) {
        assert!(pair[1].0 >= pair[0].0 + 3_000, "{deleted:?}");
    }
}

/// The Argo CD health script shipped in `assets/argocd` (Lua 5.1, as Argo CD runs it), on the
/// sets the simulator leaves: it reads the plan ststui records and the freeze, and is Healthy
/// only when the rollout is done.
pub(crate) mod argocd {
    use super::*;

    const SCRIPT: &str = include_str!("../../assets/argocd/statefulset-health.lua");

    /// (status, message) of the script on the set `web` of `r`.
    fn health(r: &Run) -> (String, String) {
        judged(r.sim.set(&ObjRef::new("default", "web")).unwrap())
    }

    /// (status, message) of the script on `set`, as Argo CD hands it over: the object as
    /// JSON, nulls absent.
    pub(crate) fn judged(set: &k8s_openapi::api::apps::v1::StatefulSet) -> (String, String) {
        use mlua::LuaSerdeExt as _;
        let json = without_nulls(serde_json::to_value(set).unwrap());
        let lua = mlua::Lua::new();
        let obj = lua.to_value(&json).unwrap();
        lua.globals().set("obj", obj).unwrap();
        let hs: mlua::Table = lua.load(SCRIPT).eval().unwrap_or_else(|e| panic!("{e}"));
        (hs.get("status").unwrap(), hs.get("message").unwrap())
    }

    #[test]
    fn progressing_while_a_plan_runs_suspended_at_its_gate_healthy_only_when_done() {
        let baking = play(&format!(
            "{BASE}image web nginx:1.26\nrollout web steps=1,100% bake=10m\nwait 30s\n\
             expect web plan=baking\n"
        ));
        assert!(baking.outcome.passed(), "{:?}", baking.outcome.failures);
        let (status, message) = health(&baking);
        assert_eq!((status.as_str(), message.as_str()), ("Progressing", "plan 1/2: baking"));
        let gate = play(&format!(
            "{BASE}image web nginx:1.26\nrollout web steps=1,pause,100%\nsettle\n\
             expect web plan=gate\n"
        ));
        let (status, message) = health(&gate);
        assert_eq!(status, "Suspended");
        assert!(message.contains("waits for approval"), "{message}");
        let done = play(&format!(
            "{BASE}image web nginx:1.26\nrollout web steps=1,100%\nsettle\nexpect web plan=done\n"
        ));
        assert_eq!(health(&done).0, "Healthy");
    }

    #[test]
    fn degraded_when_halted_suspended_when_frozen_or_held_never_healthy_before_ondelete_rolls() {
        let halted = play(&format!(
            "{BASE}image web nginx:broken\nkubelet broken=nginx:broken\n\
             rollout web steps=1,100% stuck-after=1m\nsettle\nexpect web plan=halted\n"
        ));
        assert!(halted.outcome.passed(), "{:?}", halted.outcome.failures);
        let (status, message) = health(&halted);
        assert_eq!(status, "Degraded");
        assert!(message.contains("plan 1/2 halted: step 1 made no progress"), "{message}");
        let frozen = play(&format!("{BASE}freeze web\nimage web nginx:1.26\nsettle\n"));
        assert_eq!(health(&frozen).0, "Suspended");
        let held = play(&format!("{BASE}image web nginx:1.26\npartition web 3\nsettle\n"));
        let (status, message) = health(&held);
        assert_eq!(status, "Suspended");
        assert!(message.contains("partition 3 holds 3 pods"), "{message}");
        let on_delete = play(
            "kubelet start=1s ready=1s stop=1s\ncreate web replicas=4 strategy=OnDelete\n\
             settle\nimage web nginx:1.26\nsettle\n",
        );
        let (status, message) = health(&on_delete);
        assert_eq!(status, "Suspended", "Argo CD's own check says Healthy here: {message}");
        assert!(message.contains("OnDelete: 0 of 4"), "{message}");
    }

    #[test]
    fn a_recreate_is_progressing_until_every_pod_is_new_and_ready_then_healthy() {
        let mut config = ststui::sim::SimConfig::default();
        config.options.semantics.recreate_gate = true;
        let base = "kubelet start=1s ready=1s stop=5s\ncreate web replicas=3 strategy=Recreate\n\
                    settle\nimage web nginx:1.26\n";
        let deleting =
            crate::support::played::play_with(&format!("{base}wait 2s\n"), config.clone());
        let (status, message) = health(&deleting);
        assert_eq!(status, "Progressing", "{message}");
        assert!(message.contains("0 of 3 pods updated"), "{message}");
        let creating =
            crate::support::played::play_with(&format!("{base}wait 7s\n"), config.clone());
        assert_eq!(health(&creating).0, "Progressing", "the new pods come one by one");
        let done = crate::support::played::play_with(&format!("{base}settle\n"), config);
        let (status, message) = health(&done);
        assert_eq!(status, "Healthy", "{message}");
    }

    /// `v` without its null members (Argo CD hands the script no nulls).
    fn without_nulls(v: serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Value::Object(m) => Value::Object(
                m.into_iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k, without_nulls(v)))
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.into_iter().map(without_nulls).collect()),
            other => other,
        }
    }

    /// The ConfigMap patch shipped beside it holds the same script.
    #[test]
    fn the_configmap_patch_holds_the_script() {
        let cm = include_str!("../../assets/argocd/argocd-cm.yaml");
        let v: serde_json::Value = serde_yaml_ng::from_str(cm).unwrap();
        let held = v["data"]["resource.customizations.health.apps_StatefulSet"].as_str().unwrap();
        assert_eq!(held.trim_end(), SCRIPT.trim_end());
    }
}
