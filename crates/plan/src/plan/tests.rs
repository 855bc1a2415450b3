use crate::plan::fixtures::{at, running};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetStatus, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{ContainerState, ContainerStateTerminated, ContainerStatus, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::SignedDuration;

use super::decide::{Baseline, Facts, Next, baseline, decide, stuck_on};
use super::record::{Phase, Record, stamp};
use super::start::{Start, begin};
use super::*;
use crate::core::pod::MinReady;

#[test]
fn steps_parse_and_refuse_with_what_is_expected() {
    let s = Steps::parse("1, 25%,pause,50%,100%").unwrap();
    assert_eq!(s.to_string(), "1,25%,pause,50%,100%");
    for (bad, said) in [
        ("0,100%", "step 1 (\"0\"): expected a pod count from 1"),
        ("1,150%", "step 2 (\"150%\"): expected a percentage from 1% to 100%"),
        ("pause", "no step opens a pod"),
        ("50%,25%", "step 2 (25%) is less than step 1 (50%)"),
        ("1,,2", "step 2 (\"\")"),
    ] {
        let e = Steps::parse(bad).unwrap_err().to_string();
        assert!(e.starts_with(said), "{bad}: {e}");
    }
}

#[test]
fn rounding_never_opens_zero_nor_all_by_surprise() {
    let updated = |steps: &str, replicas: i32| -> Vec<i32> {
        Steps::parse(steps)
            .unwrap()
            .targets(replicas)
            .into_iter()
            .filter_map(|t| match t {
                Target::Update { updated, partition } => {
                    assert_eq!(partition, replicas - updated);
                    Some(updated)
                }
                Target::Gate => None,
            })
            .collect()
    };
    assert_eq!(updated("1,50%,100%", 4), [1, 2, 4]);
    assert_eq!(updated("25%,50%,100%", 3), [1, 2, 3], "25% of 3 rounds up to 1");
    assert_eq!(updated("90%,100%", 4), [3, 4], "90% of 4 is not everything");
    assert_eq!(updated("1%,2%,100%", 10), [1, 2, 10], "a step that opens nothing opens one more");
    assert_eq!(updated("10,100%", 4), [4, 4], "counts are capped at the replicas");
    assert_eq!(updated("50%", 1), [1], "one replica: the one step opens it");
    let t = Steps::parse("1,pause,100%").unwrap().targets(4);
    assert_eq!(t[1], Target::Gate);
}

fn set(replicas: i32, partition: i32, current: &str, update: &str) -> StatefulSet {
    let mut s = StatefulSet::default();
    s.metadata.name = Some("web".into());
    s.metadata.namespace = Some("default".into());
    s.metadata.generation = Some(2);
    s.spec.replicas = Some(replicas);
    s.spec.update_strategy = Some(StatefulSetUpdateStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateStatefulSetStrategy {
            partition: Some(partition),
            max_unavailable: None,
        }),
    });
    s.status = Some(StatefulSetStatus {
        observed_generation: Some(2),
        current_revision: Some(current.into()),
        update_revision: Some(update.into()),
        ..Default::default()
    });
    s
}

fn pod(o: i32, rev: &str, ready_since: Option<i64>) -> Pod {
    let mut p = running(format!("web-{o}"), rev, ready_since);
    p.metadata.uid = Some(format!("uid-{o}"));
    p
}

fn facts<'a>(set: &'a StatefulSet, pods: &'a [(i32, &'a Pod)], now: i64) -> Facts<'a> {
    let min_ready = MinReady::default();
    Facts {
        set,
        pods,
        now: at(now),
        min_ready,
        stuck_after_ms: 600_000,
        baseline: None,
        frozen: None,
        gating: None,
        replace_stuck: false,
        max_restarts: None,
        image: None,
    }
}

fn baked<'a>(f: Facts<'a>, base: &'a Baseline) -> Facts<'a> {
    Facts { baseline: Some(base), ..f }
}

fn start(steps: &str, bake: u64) -> Start {
    Start {
        steps: Steps::parse(steps).unwrap(),
        bake_seconds: bake,
        checks: vec!["./check".into()],
        on_failure: OnFailure::Hold,
        by: "ana".into(),
        gates: Default::default(),
    }
}

/// 1,50%,100% on 4 replicas held at partition 4: partitions 3, 2, 0, each after its pods are
/// updated, Ready and baked, and its checks ran.
#[test]
fn a_plan_opens_its_steps_in_order_through_wait_bake_and_checks() {
    let s = set(4, 4, "a", "b");
    let old: Vec<Pod> = (0..4).map(|o| pod(o, "a", Some(0))).collect();
    let pods: Vec<(i32, &Pod)> = old.iter().enumerate().map(|(o, p)| (o as i32, p)).collect();
    let Ok(Next::Open { from: 4, to: 3, record }) =
        begin(&start("1,50%,100%", 30), &facts(&s, &pods, 0))
    else {
        panic!("the first step opens web-3")
    };
    assert_eq!((record.step, record.of, record.phase, record.partition), (1, 3, Phase::Waiting, 3));
    // The partition is written; web-3 not yet updated.
    let s = set(4, 3, "a", "b");
    let Next::Wait(w) = decide(&record, &facts(&s, &pods, 5)) else { panic!() };
    assert_eq!(w, "waiting for web-3 to be updated");
    // web-3 comes back updated and Ready: bake.
    let new3 = pod(3, "b", Some(20));
    let pods: Vec<(i32, &Pod)> = vec![(0, &old[0]), (1, &old[1]), (2, &old[2]), (3, &new3)];
    let Next::Record(baking) = decide(&record, &facts(&s, &pods, 21)) else { panic!() };
    assert_eq!(baking.phase, Phase::Baking);
    // A runner without the bake's baseline (resumed) starts the bake over.
    let Next::Record(again) = decide(&baking, &facts(&s, &pods, 25)) else { panic!() };
    assert_eq!((again.phase, again.since), (Phase::Baking, stamp(at(25))));
    let base = baseline(&pods);
    let Next::Wait(w) = decide(&baking, &baked(facts(&s, &pods, 31), &base)) else { panic!() };
    assert_eq!(w, "baking, 20s left");
    let Next::Record(checking) = decide(&baking, &baked(facts(&s, &pods, 51), &base)) else {
        panic!()
    };
    assert_eq!(checking.phase, Phase::Checking);
    assert_eq!(decide(&checking, &facts(&s, &pods, 52)), Next::Check);
    let Next::Open { from: 3, to: 2, record } = advance(&checking, &facts(&s, &pods, 53)) else {
        panic!()
    };
    assert_eq!((record.step, record.partition), (2, 2));
    let s = set(4, 2, "a", "b");
    let Next::Open { from: 2, to: 0, record } = advance(&record, &facts(&s, &pods, 60)) else {
        panic!()
    };
    assert_eq!((record.step, record.partition), (3, 0));
    let s = set(4, 0, "a", "b");
    let Next::Record(done) = advance(&record, &facts(&s, &pods, 70)) else { panic!() };
    assert_eq!(done.phase, Phase::Done);
    assert_eq!(decide(&done, &facts(&s, &pods, 71)), Next::Done);
}

use super::decide::advance;

#[test]
fn a_plan_halts_on_another_writer_a_freeze_a_stuck_step_and_an_unsteady_bake() {
    let old: Vec<Pod> = (0..4).map(|o| pod(o, "a", Some(0))).collect();
    let pods: Vec<(i32, &Pod)> = old.iter().enumerate().map(|(o, p)| (o as i32, p)).collect();
    let record = Record {
        steps: "1,100%".into(),
        bake_seconds: 60,
        checks: Vec::new(),
        on_failure: "hold".into(),
        revision: "b".into(),
        template: String::new(),
        step: 1,
        of: 2,
        phase: Phase::Waiting,
        since: stamp(at(0)),
        partition: 3,
        by: "ana".into(),
        started: stamp(at(0)),
        reason: None,
        began_at: None,
        from: String::new(),
        gates: Default::default(),
        target: None,
        gate: None,
    };
    let reason = |n: Next| match n {
        Next::Halt(r) => {
            assert_eq!(r.phase, Phase::Halted);
            r.reason.unwrap_or_default()
        }
        other => panic!("not halted: {other:?}"),
    };
    let moved = set(4, 0, "a", "b");
    assert!(
        reason(decide(&record, &facts(&moved, &pods, 1))).contains("partition moved from 3 to 0")
    );
    let template = set(4, 3, "a", "c");
    assert!(reason(decide(&record, &facts(&template, &pods, 1))).contains("template changed"));
    // A template change is seen before the controller names its revision.
    let s = set(4, 3, "a", "b");
    let hashed = Record { template: super::record::template_hash(&s), ..record.clone() };
    assert!(matches!(decide(&hashed, &facts(&s, &pods, 1)), Next::Wait(_)));
    let mut changed = s.clone();
    changed.spec.template.metadata = Some(Default::default());
    changed.spec.template.metadata.as_mut().unwrap().labels =
        Some([("v".to_string(), "2".to_string())].into());
    assert!(reason(decide(&hashed, &facts(&changed, &pods, 1))).contains("template changed"));
    let scaled = set(5, 3, "a", "b");
    assert!(reason(decide(&record, &facts(&scaled, &pods, 1))).contains("replicas changed"));
    let mut frozen = set(4, 4, "a", "b");
    frozen.metadata.annotations = Some(
        [
            (crate::steer::FROZEN_PARTITION.to_string(), "3".to_string()),
            (crate::steer::FROZEN_BY.to_string(), "bo".to_string()),
        ]
        .into(),
    );
    let words = crate::steer::holding(&frozen).map(|f| f.words());
    let held = Facts { frozen: words.as_deref(), ..facts(&frozen, &pods, 1) };
    assert!(reason(decide(&record, &held)).contains("frozen by bo"));
    // web-3 never comes up: halted after stuck_after, naming it.
    let s = set(4, 3, "a", "b");
    let broken = pod(3, "b", None);
    let with_broken: Vec<(i32, &Pod)> =
        vec![(0, &old[0]), (1, &old[1]), (2, &old[2]), (3, &broken)];
    assert!(matches!(decide(&record, &facts(&s, &with_broken, 599)), Next::Wait(_)));
    let why = reason(decide(&record, &facts(&s, &with_broken, 601)));
    assert_eq!(why, "step 1 made no progress for 10m: web-3 Running, not Ready");
    // Progress (a pod of the step created, or turning Ready) restarts the count: a step of
    // several pods halts only when nothing moved for stuck_after.
    let wide = Record { steps: "50%,100%".into(), partition: 2, ..record.clone() };
    let s2 = set(4, 2, "a", "b");
    let up = pod(3, "b", Some(500));
    let mut late = pod(2, "b", None);
    late.metadata.creation_timestamp = Some(Time(at(520)));
    let moving: Vec<(i32, &Pod)> = vec![(0, &old[0]), (1, &old[1]), (2, &late), (3, &up)];
    assert!(matches!(decide(&wide, &facts(&s2, &moving, 1000)), Next::Wait(_)));
    assert_eq!(
        super::decide::stuck_deadline(&wide, &facts(&s2, &moving, 1000)),
        Some(at(1120)),
        "10m after web-2 was created"
    );
    let why = reason(decide(&wide, &facts(&s2, &moving, 1121)));
    assert_eq!(why, "step 1 made no progress for 10m: web-2 Running, not Ready");
    // Baking: a restart after the bake began halts, naming the container.
    let baking = Record { phase: Phase::Baking, since: stamp(at(100)), ..record.clone() };
    let fine = pod(3, "b", Some(50));
    let steady: Vec<(i32, &Pod)> = vec![(0, &old[0]), (1, &old[1]), (2, &old[2]), (3, &fine)];
    let base = baseline(&steady);
    assert!(matches!(decide(&baking, &baked(facts(&s, &steady, 130), &base)), Next::Wait(_)));
    let mut restarted = pod(3, "b", Some(50));
    restarted.status.as_mut().unwrap().container_statuses = Some(vec![ContainerStatus {
        name: "app".into(),
        restart_count: 1,
        last_state: Some(ContainerState {
            terminated: Some(ContainerStateTerminated {
                exit_code: 137,
                reason: Some("OOMKilled".into()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }]);
    let pods: Vec<(i32, &Pod)> = vec![(0, &old[0]), (1, &old[1]), (2, &old[2]), (3, &restarted)];
    let why = reason(decide(&baking, &baked(facts(&s, &pods, 130), &base)));
    assert_eq!(
        why,
        "while baking step 1: web-3: container app restarted (exit code 137, OOMKilled)"
    );
    // A pod held on the current revision whose readiness changed halts the bake too (its
    // time is compared with the baseline's, never with the runner's clock).
    let flapped = pod(1, "a", Some(110));
    let pods: Vec<(i32, &Pod)> = vec![(0, &old[0]), (1, &flapped), (2, &old[2]), (3, &fine)];
    let why = reason(decide(&baking, &baked(facts(&s, &pods, 130), &base)));
    assert!(why.contains("web-1: its readiness changed"), "{why}");
    let mut again = pod(2, "a", Some(0));
    again.metadata.uid = Some("another".into());
    let pods: Vec<(i32, &Pod)> = vec![(0, &old[0]), (1, &old[1]), (2, &again), (3, &fine)];
    let why = reason(decide(&baking, &baked(facts(&s, &pods, 130), &base)));
    assert!(why.contains("web-2: was deleted and created again"), "{why}");
}

#[test]
fn a_plan_starts_where_the_partition_is_and_refuses_when_there_is_nothing_to_do() {
    let old: Vec<Pod> = (0..4).map(|o| pod(o, "a", Some(0))).collect();
    let pods: Vec<(i32, &Pod)> = old.iter().enumerate().map(|(o, p)| (o as i32, p)).collect();
    // Partition 3 already (a halted plan left it there): the 1-pod step is entered, its pod
    // checked and baked — never counted as done, never skipped to 50%.
    let s = set(4, 3, "a", "b");
    let Ok(Next::Record(record)) = begin(&start("1,50%,100%", 0), &facts(&s, &pods, 0)) else {
        panic!()
    };
    assert_eq!((record.step, record.partition, record.phase), (1, 3, Phase::Waiting));
    assert_eq!(record.began_at, Some(3));
    // Between two steps: the next one opens.
    let Ok(Next::Open { from: 3, to: 2, record }) =
        begin(&start("2,100%", 0), &facts(&s, &pods, 0))
    else {
        panic!()
    };
    assert_eq!((record.step, record.partition), (1, 2));
    // Partition 0 with pods not updated: the last step is entered (checked, baked).
    let s = set(4, 0, "a", "b");
    let Ok(Next::Record(last)) = begin(&start("1,50%,100%", 0), &facts(&s, &pods, 0)) else {
        panic!()
    };
    assert_eq!((last.step, last.partition), (3, 0));
    // Past the plan's last step: nothing it could open.
    let e = begin(&start("1,50%", 0), &facts(&s, &pods, 0)).unwrap_err();
    assert!(matches!(e, crate::plan::start::NoStart::AllOpen { .. }), "{e}");
    assert!(e.to_string().contains("every step of the plan is open already"), "{e}");
    let s = set(4, 4, "b", "b");
    let new: Vec<Pod> = (0..4).map(|o| pod(o, "b", Some(0))).collect();
    let pods: Vec<(i32, &Pod)> = new.iter().enumerate().map(|(o, p)| (o as i32, p)).collect();
    let e = begin(&start("1,100%", 0), &facts(&s, &pods, 0)).unwrap_err();
    assert!(e.to_string().starts_with("nothing to roll out"), "{e}");
    let mut unobserved = set(4, 4, "a", "b");
    unobserved.metadata.generation = Some(3);
    let e = begin(&start("1,100%", 0), &facts(&unobserved, &pods, 0)).unwrap_err();
    assert!(e.to_string().contains("has not observed"), "{e}");
}

#[test]
fn on_delete_a_step_deletes_its_pods_one_at_a_time_from_the_highest() {
    let mut s = set(4, 0, "a", "b");
    s.spec.update_strategy =
        Some(StatefulSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None });
    let old: Vec<Pod> = (0..4).map(|o| pod(o, "a", Some(0))).collect();
    let pods: Vec<(i32, &Pod)> = old.iter().enumerate().map(|(o, p)| (o as i32, p)).collect();
    let Ok(Next::Record(record)) = begin(&start("50%,100%", 0), &facts(&s, &pods, 0)) else {
        panic!("OnDelete: no partition to write")
    };
    assert_eq!(record.partition, 2);
    let Next::Delete { pod: name, uid, .. } = decide(&record, &facts(&s, &pods, 1)) else {
        panic!()
    };
    assert_eq!((name.as_str(), uid.as_str()), ("web-3", "uid-3"));
    // web-3 is on its way back: nothing else is deleted meanwhile.
    let coming = pod_not_ready(3, "b");
    let pods2: Vec<(i32, &Pod)> = vec![(0, &old[0]), (1, &old[1]), (2, &old[2]), (3, &coming)];
    assert!(matches!(decide(&record, &facts(&s, &pods2, 2)), Next::Wait(_)));
    let back = pod(3, "b", Some(3));
    let pods3: Vec<(i32, &Pod)> = vec![(0, &old[0]), (1, &old[1]), (2, &old[2]), (3, &back)];
    let Next::Delete { pod, .. } = decide(&record, &facts(&s, &pods3, 4)) else { panic!() };
    assert_eq!(pod, "web-2");
}

fn pod_not_ready(o: i32, rev: &str) -> Pod {
    pod(o, rev, None)
}

/// A pod on `rev` whose container waits in `reason` (CrashLoopBackOff…), not Ready.
fn broken(o: i32, rev: &str, reason: &str) -> Pod {
    let mut p = pod(o, rev, None);
    if let Some(s) = p.status.as_mut() {
        s.container_statuses = Some(vec![ContainerStatus {
            name: "app".into(),
            state: Some(ContainerState {
                waiting: Some(k8s_openapi::api::core::v1::ContainerStateWaiting {
                    reason: Some(reason.into()),
                    message: None,
                }),
                ..Default::default()
            }),
            ..Default::default()
        }]);
    }
    p
}

#[test]
fn a_pod_stuck_broken_on_the_old_revision_is_offered_and_replaced_first_only_when_asked() {
    let mut s = set(4, 0, "a", "b");
    s.spec.update_strategy =
        Some(StatefulSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None });
    let (p0, p1, crashing, coming) = (
        pod(0, "a", Some(0)),
        pod(1, "a", Some(0)),
        broken(2, "a", "CrashLoopBackOff"),
        pod_not_ready(3, "b"),
    );
    let pods: Vec<(i32, &Pod)> = vec![(0, &p0), (1, &p1), (2, &crashing), (3, &coming)];
    let Ok(Next::Record(record)) = begin(&start("100%", 0), &facts(&s, &pods, 0)) else { panic!() };
    // Not asked: web-3 is on its way, so the plan waits, and says what --replace-stuck would do.
    let Next::Wait(words) = decide(&record, &facts(&s, &pods, 1)) else { panic!() };
    assert!(
        words.contains(
            "web-2 (CrashLoopBackOff) is stuck on an older revision and serves nothing: \
                        --replace-stuck replaces it first"
        ),
        "{words}"
    );
    // Asked: replaced at once although web-3 is on its way (it serves nothing either way).
    let asked = Facts { replace_stuck: true, ..facts(&s, &pods, 1) };
    let Next::Delete { pod: name, uid, stuck, .. } = decide(&record, &asked) else { panic!() };
    assert_eq!((name.as_str(), uid.as_str()), ("web-2", "uid-2"));
    assert_eq!(stuck.as_deref(), Some("CrashLoopBackOff"));
    // RollingUpdate: only a pod the partition opened (below it, a delete brings back the old
    // revision).
    let rolling = set(4, 2, "a", "b");
    let crash1 = broken(1, "a", "ImagePullBackOff");
    let pods: Vec<(i32, &Pod)> = vec![(0, &p0), (1, &crash1), (2, &crashing), (3, &coming)];
    let record = Record { partition: 2, steps: "50%,100%".into(), of: 2, ..record.clone() };
    let asked = Facts { replace_stuck: true, ..facts(&rolling, &pods, 1) };
    let Next::Delete { pod: name, .. } = decide(&record, &asked) else { panic!() };
    assert_eq!(name, "web-2");
    let healed = pod(2, "b", None);
    let pods: Vec<(i32, &Pod)> = vec![(0, &p0), (1, &crash1), (2, &healed), (3, &coming)];
    let Next::Wait(words) =
        decide(&record, &Facts { replace_stuck: true, ..facts(&rolling, &pods, 2) })
    else {
        panic!()
    };
    assert!(!words.contains("web-1"), "{words}");
}

#[test]
fn the_stuck_pods_of_a_broken_revision_are_named_highest_first() {
    let pods_owned =
        [pod(0, "a", Some(0)), pod(2, "b", None), pod(3, "b", None), pod(1, "b", Some(0))];
    let pods: Vec<(i32, &Pod)> =
        vec![(0, &pods_owned[0]), (2, &pods_owned[1]), (3, &pods_owned[2]), (1, &pods_owned[3])];
    let stuck: Vec<String> = stuck_on("b", &pods).into_iter().map(|(n, _)| n).collect();
    assert_eq!(stuck, ["web-3", "web-2"]);
}

#[test]
fn the_record_reads_as_the_console_says_it() {
    let r = Record {
        steps: "1,50%,100%".into(),
        bake_seconds: 120,
        checks: Vec::new(),
        on_failure: "hold".into(),
        revision: "b".into(),
        template: String::new(),
        step: 2,
        of: 3,
        phase: Phase::Baking,
        since: stamp(at(0)),
        partition: 2,
        by: "ana".into(),
        started: stamp(at(0)),
        reason: None,
        began_at: None,
        from: String::new(),
        gates: Default::default(),
        target: None,
        gate: None,
    };
    assert_eq!(r.words(at(48)), "plan 2/3 (50%): baking, 1m12s left");
    let h =
        Record { phase: Phase::Halted, reason: Some("check `./c` exited 1".into()), ..r.clone() };
    assert_eq!(h.words(at(48)), "plan halted at 2/3 (50%): check `./c` exited 1");
    let text = serde_json::to_string(&r).unwrap();
    assert!(
        text.contains("\"bakeSeconds\":120") && text.contains("\"phase\":\"baking\""),
        "{text}"
    );
    let _ = (Arc::new(()), SignedDuration::ZERO);
}

#[test]
fn long_lists_of_pods_are_a_few_words() {
    use super::decide::{opens, pending_words};
    let s = set(1000, 1000, "a", "b");
    assert_eq!(opens(&s, 999, 1000), " (opens web-999)");
    assert_eq!(opens(&s, 998, 1000), " (opens web-999, web-998)");
    assert_eq!(opens(&s, 900, 999), " (opens web-998 … web-900, 99 pods)");
    let mut pending: Vec<(i32, &str)> = (500..699).map(|o| (o, "not updated")).collect();
    pending.push((699, "not running"));
    assert_eq!(
        pending_words("web", &pending),
        "web-500 … web-698 not updated (199 pods), web-699 not running"
    );
    // Scattered: a few groups named, the rest counted.
    let scattered: Vec<(i32, &str)> =
        (0..40).map(|o| (o * 2, if o % 2 == 0 { "not running" } else { "terminating" })).collect();
    let words = pending_words("web", &scattered);
    assert!(
        words.starts_with("web-0 not running, web-2 terminating, web-4 not running"),
        "{words}"
    );
    assert!(words.ends_with("and 36 more"), "{words}");
}

/// A gate's `{old}` is the revision its pod leaves: the pod's own label before it goes, the
/// plan's recorded `from` after it is back — never the status's current revision, which names
/// the plan's revision once its last pod is updated.
#[test]
fn a_gates_old_revision_comes_from_the_pod_or_the_record_never_a_status_that_moved_on() {
    use super::gate::{GateKind, GatePod};
    let moved_on = set(4, 0, "b", "b");
    let key = crate::backend::ObjRef::new("default", "web");
    let r = Record { from: "a".into(), ..record_at(4, 0) };
    let old = |kind, pod: &GatePod, r: &Record| {
        let env = said::gate_env(&key, r, &moved_on, kind, Some(pod));
        env.into_iter().find(|(k, _)| *k == "STSTUI_OLD_REVISION").map(|(_, v)| v)
    };
    let back = GatePod { name: "web-0".into(), ordinal: 0, uid: "u".into(), revision: "b".into() };
    assert_eq!(old(GateKind::PostReady, &back, &r).as_deref(), Some("a"), "the last pod, back");
    let going = GatePod { name: "web-0".into(), ordinal: 0, uid: "u".into(), revision: "z".into() };
    assert_eq!(old(GateKind::PreDelete, &going, &r).as_deref(), Some("z"), "the pod's own");
    let older = Record { from: String::new(), ..r.clone() };
    assert_eq!(old(GateKind::PostReady, &back, &older).as_deref(), Some(""), "never the new one");
}

/// A plan begun on a frozen set records the partition the freeze replaced; its abort puts that
/// back (lifting the freeze), also when nothing opened yet.
#[test]
fn a_plan_on_a_frozen_set_began_where_the_freeze_found_it_and_its_abort_goes_back_there() {
    let old: Vec<Pod> = (0..4).map(|o| pod(o, "a", Some(0))).collect();
    let pods: Vec<(i32, &Pod)> = old.iter().enumerate().map(|(o, p)| (o as i32, p)).collect();
    let mut frozen = set(4, 4, "a", "b");
    frozen.metadata.annotations = Some(
        [
            (crate::plan::freeze::FROZEN_PARTITION.to_string(), "0".to_string()),
            (crate::plan::freeze::FROZEN_BY.to_string(), "ana".to_string()),
            (crate::plan::freeze::FROZEN_AT.to_string(), "2026-01-01T00:00:00Z".to_string()),
        ]
        .into(),
    );
    let start = Start {
        steps: Steps::parse("1,100%").unwrap(),
        bake_seconds: 0,
        checks: vec![],
        on_failure: OnFailure::Hold,
        by: "ana".into(),
        gates: Default::default(),
    };
    let Ok(Next::Open { record, .. }) = begin(&start, &facts(&frozen, &pods, 0)) else { panic!() };
    assert_eq!((record.began_at, record.from.as_str()), (Some(0), "a"));
    // Aborted while still frozen at 4 (nothing opened): back to 0, the freeze lifted.
    let (aborted, back) = super::decide::aborted(&record, &frozen, at(9), "aborted".into());
    assert_eq!((aborted.phase, back), (Phase::Aborted, Some((4, 0))));
    // Opened to 3, the freeze gone: back to 0 as well.
    let opened = set(4, 3, "a", "b");
    assert_eq!(super::decide::aborted(&record, &opened, at(9), "x".into()).1, Some((3, 0)));
    // Where it began already and no freeze: nothing to move.
    let began = set(4, 0, "a", "b");
    assert_eq!(super::decide::aborted(&record, &began, at(9), "x".into()).1, None);
}

fn record_at(partition: i32, step: usize) -> Record {
    let r =
        crate::plan::fixtures::record("1,100%", step.max(1), Phase::Waiting, partition, "b", 10);
    Record { bake_seconds: 0, since: stamp(at(0)), started: stamp(at(0)), ..r }
}
/// `--max-restarts N`: a crash-looping pod of the step halts the plan as soon as it restarted N
/// times (named, with why it is not Ready), not after `--stuck-after`; below N it waits.
#[test]
fn max_restarts_halts_a_crash_looping_step_at_once() {
    let mut canary = pod(3, "b", None);
    canary.status.as_mut().unwrap().container_statuses = Some(vec![ContainerStatus {
        name: "app".into(),
        restart_count: 3,
        state: Some(ContainerState {
            waiting: Some(k8s_openapi::api::core::v1::ContainerStateWaiting {
                reason: Some("CrashLoopBackOff".into()),
                message: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    }]);
    let old: Vec<Pod> = (0..3).map(|o| pod(o, "a", Some(0))).collect();
    let mut pods: Vec<(i32, &Pod)> = old.iter().enumerate().map(|(o, p)| (o as i32, p)).collect();
    pods.push((3, &canary));
    let s = set(4, 3, "a", "b");
    let r = record_at(3, 1);
    let at_most = |n| Facts { max_restarts: Some(n), ..facts(&s, &pods, 5) };
    let Next::Halt(h) = decide(&r, &at_most(3)) else { panic!("not halted") };
    let why = h.reason.unwrap_or_default();
    assert!(why.contains("web-3 restarted 3 times (CrashLoopBackOff"), "{why}");
    assert!(why.contains("--max-restarts 3"), "{why}");
    assert!(matches!(decide(&r, &at_most(4)), Next::Wait(_)), "below the limit it waits");
    assert!(matches!(decide(&r, &facts(&s, &pods, 5)), Next::Wait(_)), "not asked: it waits");
}
