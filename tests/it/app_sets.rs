//! The StatefulSet list through the reducer: what needs the operator first (Degraded before
//! Progressing before Healthy), `/` filters by name (the heading says how many match, Enter
//! opens the highlighted match, Esc clears), and a plan's progress on its row.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::app_fixtures;

use std::sync::Arc;

use app_fixtures::*;
use crossterm::event::KeyCode;
use k8s_openapi::api::apps::v1::StatefulSet;
use ststui::app::sets::{heading, rows};
use ststui::app::state::Modal;
use ststui::app::{AppState, Msg};
use ststui::backend::{BackendEvent, Capabilities, ObjRef, Object, Op, ViewOp};

/// A set in `ns` with `ready` of 3 Ready, observed, on one revision (or rolling to another).
fn a_set(ns: &str, name: &str, ready: i32, rolling: bool) -> StatefulSet {
    let mut s = set(name, 3, 0, "nginx:1.25", "a", if rolling { "b" } else { "a" });
    s.metadata.namespace = Some(ns.into());
    let st = s.status.as_mut().unwrap();
    st.observed_generation = Some(1);
    st.ready_replicas = Some(ready);
    st.updated_replicas = Some(if rolling { 1 } else { 3 });
    st.current_replicas = Some(3);
    s
}

fn list(sets: Vec<StatefulSet>) -> AppState {
    let mut st = AppState::new(Capabilities::cluster(), ststui::core::Options::default());
    st.can_pick = true;
    st.picking = Some(0);
    let mut msgs: Vec<Msg> = sets.into_iter().map(|s| applied(Object::Set(Arc::new(s)))).collect();
    msgs.push(Msg::Backend(BackendEvent::Synced));
    msgs.push(Msg::BatchEnd);
    run(&mut st, msgs);
    st
}

fn names(st: &AppState) -> Vec<String> {
    rows(st).iter().map(|r| r.key.to_string()).collect()
}

#[test]
fn the_sets_that_need_the_operator_come_first() {
    let st = list(vec![
        a_set("apps", "cache", 3, false),
        a_set("apps", "queue", 3, true),
        a_set("db", "pg", 2, false),
        a_set("apps", "api", 3, false),
    ]);
    assert_eq!(names(&st), ["db/pg", "apps/queue", "apps/api", "apps/cache"]);
    let words: Vec<&str> = rows(&st).iter().map(|r| r.health.word()).collect();
    assert_eq!(words, ["Degraded", "Progressing", "Healthy", "Healthy"]);
    // The highlight stays on its set when the list re-sorts under it.
    let mut st = st;
    run(&mut st, [key('j'), key('j'), key('j')]);
    assert_eq!(names(&st)[st.picking.unwrap()], "apps/cache");
    run(&mut st, [applied(Object::Set(Arc::new(a_set("apps", "cache", 1, false)))), Msg::BatchEnd]);
    assert_eq!(names(&st)[0..2], ["apps/cache", "db/pg"], "both Degraded now, by name");
    assert_eq!(names(&st)[st.picking.unwrap()], "apps/cache", "the highlight followed it");
    let cmds = run(&mut st, [code(KeyCode::Enter)]);
    assert!(ops(&cmds).contains(&Op::View(ViewOp::Focus(Some(ObjRef::new("apps", "cache"))))));
}

#[test]
fn slash_filters_by_name_and_enter_opens_the_match() {
    let mut st = list(vec![
        a_set("apps", "cache", 3, false),
        a_set("apps", "web", 3, false),
        a_set("db", "pg", 3, false),
        a_set("db", "pg-replica", 3, false),
    ]);
    assert_eq!(heading(&st, rows(&st).len()), "StatefulSets (4) — Enter opens one, / filters");
    run(&mut st, [key('/')]);
    assert!(matches!(st.modal, Modal::Prompt(_)), "{:?}", st.modal);
    run(&mut st, "PG".chars().map(key).chain([code(KeyCode::Enter)]));
    assert_eq!(names(&st), ["db/pg", "db/pg-replica"], "any case, namespace and name");
    assert!(heading(&st, 2).contains("(2 of 4 matching \"PG\")"), "{}", heading(&st, 2));
    run(&mut st, [key('j')]);
    let cmds = run(&mut st, [code(KeyCode::Enter)]);
    assert_eq!(st.selected_set, Some(ObjRef::new("db", "pg-replica")), "the highlighted match");
    assert!(ops(&cmds).contains(&Op::View(ViewOp::Focus(Some(ObjRef::new("db", "pg-replica"))))));
    // Back in the list, the filter holds and the set just left is highlighted; Esc clears it.
    run(&mut st, [code(KeyCode::Esc)]);
    assert_eq!(st.picking, Some(1));
    run(&mut st, [code(KeyCode::Esc)]);
    assert_eq!(names(&st).len(), 4);
    // A filter nothing matches: Enter says so.
    run(&mut st, [key('/')]);
    run(&mut st, "nope".chars().map(key).chain([code(KeyCode::Enter)]));
    run(&mut st, [code(KeyCode::Enter)]);
    assert!(
        status_text(&st).contains("no StatefulSet matches \"nope\": Esc clears"),
        "{}",
        status_text(&st)
    );
}

#[test]
fn a_plan_shows_on_its_row() {
    use ststui::plan::record::{PLAN, Phase, Record, stamp};
    let mut web = a_set("apps", "web", 3, true);
    let r = Record {
        steps: "1,50%,100%".into(),
        bake_seconds: 60,
        checks: Vec::new(),
        on_failure: "hold".into(),
        revision: "b".into(),
        template: String::new(),
        step: 2,
        of: 3,
        phase: Phase::Baking,
        since: stamp(t0()),
        partition: 1,
        by: "ana".into(),
        started: stamp(t0()),
        reason: None,
        began_at: None,
        from: String::new(),
        gates: Default::default(),
        target: None,
        gate: None,
    };
    web.metadata.annotations =
        Some([(PLAN.to_string(), serde_json::to_string(&r).unwrap())].into());
    let mut halted = a_set("apps", "api", 3, true);
    let h = Record { phase: Phase::Halted, reason: Some("x".into()), ..r.clone() };
    halted.metadata.annotations =
        Some([(PLAN.to_string(), serde_json::to_string(&h).unwrap())].into());
    let st = list(vec![web, halted, a_set("apps", "cache", 3, false)]);
    let plans: Vec<(String, String)> =
        rows(&st).iter().map(|r| (r.key.name.clone(), r.plan.clone())).collect();
    // No lease on the set: nobody runs it, and the row says so.
    assert!(plans.contains(&("web".into(), "2/3 baking (no runner)".into())), "{plans:?}");
    assert!(plans.contains(&("api".into(), "halted at 2/3".into())), "{plans:?}");
    assert!(plans.contains(&("cache".into(), String::new())), "{plans:?}");
}

#[test]
fn a_group_shows_on_its_rows_and_in_the_drawn_list() {
    use ststui::plan::group::part::{PART, Part, State};
    let sets: Vec<String> = ["ingester-zone-a", "ingester-zone-b"].map(String::from).to_vec();
    let part = |place: usize, state: State| Part {
        group: "ingester".into(),
        sets: sets.clone(),
        place,
        state,
        since: "2026-01-01T00:00:00Z".into(),
        by: "ana".into(),
        started: "2026-01-01T00:00:00Z".into(),
        steps: "1,100%".into(),
        zone_bake_seconds: 60,
        reason: None,
        clusters: None,
        cluster_bake_seconds: 0,
        approval: None,
    };
    let with = |name: &str, p: Part| {
        let mut s = a_set("apps", name, 3, false);
        s.metadata.annotations =
            Some([(PART.to_string(), serde_json::to_string(&p).unwrap())].into());
        s
    };
    let mut operator = a_set("apps", "compactor-zone-a", 3, false);
    operator.metadata.labels =
        Some([("rollout-group".to_string(), "compactor".to_string())].into());
    operator.spec.update_strategy = Some(k8s_openapi::api::apps::v1::StatefulSetUpdateStrategy {
        type_: Some("OnDelete".into()),
        rolling_update: None,
    });
    // A part written by someone else: it names the group with a control character.
    let mut odd = a_set("apps", "odd", 3, false);
    let mut bad = part(0, State::Waiting);
    bad.sets = vec!["odd".into()];
    bad.group = "in\u{1b}[2Jgest".into();
    odd.metadata.annotations =
        Some([(PART.to_string(), serde_json::to_string(&bad).unwrap())].into());
    let st = list(vec![
        with("ingester-zone-a", part(0, State::Done)),
        with("ingester-zone-b", part(1, State::Rolling)),
        operator,
        odd,
        a_set("apps", "cache", 3, false),
    ]);
    let groups: std::collections::BTreeMap<String, String> =
        rows(&st).iter().map(|r| (r.key.name.clone(), r.group.clone())).collect();
    assert_eq!(groups["ingester-zone-a"], "ingester 1/2 done");
    assert_eq!(groups["ingester-zone-b"], "ingester 2/2 rolling");
    assert_eq!(groups["compactor-zone-a"], "compactor (rollout-operator)");
    assert_eq!(groups["cache"], "");
    assert!(!groups["odd"].contains('\u{1b}'), "escaped: {:?}", groups["odd"]);
    let term = crate::support::ui_support::render(&st, 140, 12);
    let screen = crate::support::ui_support::screen_text(term.backend().buffer());
    assert!(screen.contains("GROUP"), "{screen}");
    assert!(screen.contains("ingester 2/2 rolling"), "{screen}");
}

#[test]
fn a_scale_up_starting_its_pods_is_progressing_not_degraded() {
    use k8s_openapi::jiff::{SignedDuration, Timestamp};
    let t0: Timestamp = "2026-11-27T10:00:00Z".parse().unwrap();
    let clock = |t: Timestamp| Msg::Backend(BackendEvent::Clock { now: t, speed: 1.0 });
    let web = |wanted: i32, created: i32, ready: i32| {
        let mut s = a_set("apps", "web", ready, false);
        s.spec.replicas = Some(wanted);
        let st = s.status.as_mut().unwrap();
        st.replicas = created;
        st.updated_replicas = Some(created);
        st.current_replicas = Some(created);
        applied(Object::Set(Arc::new(s)))
    };
    let word = |st: &AppState| rows(st)[0].health.word();
    let mut st = list(vec![]);
    run(&mut st, [clock(t0), web(3, 3, 3), Msg::BatchEnd]);
    assert_eq!(word(&st), "Healthy");
    // Scaled to 5: both pods created, neither Ready yet (Parallel), then one of them.
    run(&mut st, [web(5, 3, 3), web(5, 5, 3), Msg::BatchEnd]);
    assert_eq!(word(&st), "Progressing");
    run(&mut st, [clock(t0 + SignedDuration::from_secs(20)), web(5, 5, 4), Msg::BatchEnd]);
    assert_eq!(word(&st), "Progressing");
    // No progress for five minutes: the pod that does not get Ready is a fault.
    run(&mut st, [clock(t0 + SignedDuration::from_secs(20 + 300)), Msg::BatchEnd]);
    assert_eq!(word(&st), "Degraded");
    // A pod that stops being Ready is no progress: Degraded at once.
    let mut st = list(vec![]);
    run(&mut st, [clock(t0), web(3, 3, 3), web(3, 3, 2), Msg::BatchEnd]);
    assert_eq!(word(&st), "Degraded");
    // First seen short of Ready pods: nothing known of its way, Degraded as the status says.
    let mut st = list(vec![]);
    run(&mut st, [clock(t0), web(5, 5, 4), Msg::BatchEnd]);
    assert_eq!(word(&st), "Degraded");
}

#[test]
fn the_filter_applies_as_it_is_typed_and_esc_in_it_clears() {
    let mut st = list(vec![
        a_set("apps", "cache", 3, false),
        a_set("db", "pg", 3, false),
        a_set("db", "pg-replica", 3, false),
    ]);
    run(&mut st, [key('/'), key('p')]);
    assert_eq!(names(&st).len(), 3, "apps/cache holds a p too");
    run(&mut st, [key('g')]);
    assert!(matches!(st.modal, Modal::Prompt(_)), "still typing");
    assert_eq!(names(&st), ["db/pg", "db/pg-replica"], "filtered before Enter");
    assert!(heading(&st, 2).contains("(2 of 3 matching \"pg\")"), "{}", heading(&st, 2));
    run(&mut st, "-r".chars().map(key));
    assert_eq!(names(&st), ["db/pg-replica"]);
    run(&mut st, [code(KeyCode::Backspace), code(KeyCode::Backspace)]);
    assert_eq!(names(&st), ["db/pg", "db/pg-replica"], "backspace widens it again");
    // Enter keeps the filter and closes the prompt; Enter then opens the highlighted match.
    run(&mut st, [code(KeyCode::Enter)]);
    assert!(matches!(st.modal, Modal::None), "{:?}", st.modal);
    assert_eq!(names(&st).len(), 2);
    // Esc while typing clears the filter and closes the prompt.
    run(&mut st, [key('/'), key('x'), code(KeyCode::Esc)]);
    assert!(matches!(st.modal, Modal::None), "{:?}", st.modal);
    assert_eq!(names(&st).len(), 3);
    assert!(st.set_filter.is_empty());
}
