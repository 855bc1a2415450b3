//! A rollout group's view (`Z`) from a real simulator run: three zones, zone-a rolled and one of
//! its pods kept out by a quota, zones b and c held. The matrix puts the zones side by side, its
//! header names the pod that holds zone-b; ← → move between the zones, `Z` goes back to one set.
//! Drawn at 200×50 and at 80×24.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crossterm::event::KeyCode;

use crate::support::app_fixtures::{code, key, ops, run};
use crate::support::ui_support::{render, screen_text};
use crate::ui_sim::console_after;
use ststui::app::{AppState, Msg};
use ststui::backend::{ObjRef, Op, ViewOp};

/// Three zones held at their partitions, a new image waiting.
const HELD: &str = "kubelet start=1s ready=1s stop=1s\n\
    create ingester-zone-a replicas=3 labels=rollout-group=ingester\n\
    create ingester-zone-b replicas=3 labels=rollout-group=ingester\n\
    create ingester-zone-c replicas=3 labels=rollout-group=ingester\n\
    settle\n\
    partition ingester-zone-a 3\n\
    partition ingester-zone-b 3\n\
    partition ingester-zone-c 3\n\
    image ingester-zone-a nginx:1.26\n\
    image ingester-zone-b nginx:1.26\n\
    image ingester-zone-c nginx:1.26\n\
    settle\n";

/// The simulator's group plan rolls zone-a; then a quota keeps zone-a-1 out.
const QUOTA: &str = "rollout group=ingester steps=1,100% bake=30s zone-bake=1m\n\
    settle max=1m30s\n\
    quota pods=8\n\
    delete-pod ingester-zone-a-1\n\
    settle max=5m\n";

fn zone(z: char) -> ObjRef {
    ObjRef::new("default", format!("ingester-zone-{z}"))
}

/// The console after the script, the group opened from zone-a.
fn opened() -> (AppState, Vec<ststui::app::Command>) {
    let mut st = console_after(&format!("{HELD}{QUOTA}"));
    st.selected_set = Some(zone('a'));
    let cmds = run(&mut st, [key('Z'), Msg::BatchEnd]);
    (st, cmds)
}

#[test]
fn z_opens_the_group_and_the_backend_watches_every_member() {
    let (st, cmds) = opened();
    let sets = vec![zone('a'), zone('b'), zone('c')];
    assert!(ops(&cmds).contains(&Op::View(ViewOp::Group(sets.clone()))), "{cmds:?}");
    assert_eq!(st.group.as_ref().map(|g| g.sets.clone()), Some(sets));
}

#[test]
fn the_matrix_at_200x50_reads_zones_across_and_names_what_holds_the_next() {
    let (st, _) = opened();
    let text = screen_text(render(&st, 200, 50).backend().buffer());
    for needle in [
        "Group ingester: 3 sets, ordinals 0–2",
        "ingester-zone-b waits: ingester-zone-a-1 was never created",
        "ststui's group plan: group ingester: ingester-zone-a done, ingester-zone-b waiting",
        "│ingester-zone-a",
        "│waiting p=3",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
    // Ordinal 1 across the zones: not created in zone-a, held on current in b and c.
    let row = text.lines().find(|l| l.contains("   1 │")).expect("ordinal 1's row");
    assert!(row.contains("· not created"), "{row}");
    assert_eq!(row.matches("Ready current").count(), 2, "{row}");
    assert_eq!(row.matches("held").count(), 2, "{row}");
    let zero = text.lines().find(|l| l.contains("  0 │")).expect("ordinal 0's row");
    assert!(zero.contains("Ready update"), "{zero}");
}

/// Zone-a's pods all updated while its plan bakes its last step: its plan is not over, so
/// zone-a still rolls and zone-b waits for it (never "may start", never "every set done").
#[test]
fn a_set_whose_plan_bakes_its_last_step_still_rolls() {
    let script =
        format!("{HELD}rollout group=ingester steps=100% bake=5m zone-bake=0s\nsettle max=1m\n");
    let mut st = console_after(&script);
    st.selected_set = Some(zone('a'));
    run(&mut st, [key('Z'), Msg::BatchEnd]);
    let text = screen_text(render(&st, 200, 50).backend().buffer());
    let want = "ingester-zone-a rolls (rolling 3/3, its plan not over) · ingester-zone-b waits: \
                ingester-zone-a rolls first";
    assert!(text.contains(want), "{want:?} missing:\n{text}");
    assert!(!text.contains("may start"), "{text}");
}

#[test]
fn the_matrix_at_80x24_keeps_the_zones_apart_and_the_reason_first() {
    let (st, _) = opened();
    let text = screen_text(render(&st, 80, 24).backend().buffer());
    for needle in ["…gester-zone-a", "…gester-zone-b", "…gester-zone-c", "ingester-zone-b waits:"]
    {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
    assert!(text.contains("not created"), "{text}");
}

#[test]
fn arrows_move_between_the_zones_and_z_goes_back_to_one_set() {
    let (mut st, _) = opened();
    run(&mut st, [code(KeyCode::Down), code(KeyCode::Right), Msg::BatchEnd]);
    assert_eq!(st.selected_set, Some(zone('b')));
    assert_eq!(st.selected_ordinal, 1, "the ordinal is kept across zones");
    run(&mut st, [code(KeyCode::Right), code(KeyCode::Right), Msg::BatchEnd]);
    assert_eq!(st.selected_set, Some(zone('c')), "→ stops at the last zone");
    run(&mut st, [code(KeyCode::Tab)]);
    assert_eq!(st.selected_set, Some(zone('a')), "Tab wraps around the group");
    let text = screen_text(render(&st, 200, 50).backend().buffer());
    assert!(text.contains("ingester-zone-a-1"), "the detail follows the cell:\n{text}");
    let cmds = run(&mut st, [key('Z'), Msg::BatchEnd]);
    assert!(st.group.is_none());
    assert!(ops(&cmds).contains(&Op::View(ViewOp::Focus(Some(zone('a'))))), "{cmds:?}");
    let text = screen_text(render(&st, 200, 50).backend().buffer());
    assert!(!text.contains("Group ingester"), "{text}");
}

#[test]
fn z_on_a_set_in_no_group_says_why() {
    let mut st = console_after("create web replicas=2\nsettle\n");
    let cmds = run(&mut st, [key('Z')]);
    assert!(cmds.is_empty());
    assert!(st.group.is_none());
    let said = st.status.as_ref().map(|s| s.text.clone()).unwrap_or_default();
    assert!(said.contains("web is in no rollout group"), "{said}");
}

#[test]
fn z_on_a_group_of_65_sets_is_refused_as_the_cli_refuses_it_never_cut_short() {
    let mut script = String::new();
    for i in 0..65 {
        script.push_str(&format!("create grp-{i:02} replicas=1 labels=rollout-group=big\n"));
    }
    script.push_str("settle\n");
    let mut st = console_after(&script);
    st.selected_set = Some(ObjRef::new("default", "grp-00"));
    let cmds = run(&mut st, [key('Z')]);
    assert!(cmds.is_empty() && st.group.is_none(), "{cmds:?}");
    let said = st.status.as_ref().map(|s| s.text.clone()).unwrap_or_default();
    assert!(said.contains("65 sets: a group has at most 64"), "{said}");
}

fn prompt_error(st: &AppState) -> Option<String> {
    match &st.modal {
        ststui::app::state::Modal::Prompt(p) => p.error.clone(),
        other => panic!("no prompt: {other:?}"),
    }
}

fn typed(st: &mut AppState, text: &str) {
    run(
        st,
        [Msg::Key(crossterm::event::KeyEvent::new(
            KeyCode::Char('u'),
            crossterm::event::KeyModifiers::CONTROL,
        ))],
    );
    run(st, text.chars().map(key).collect::<Vec<_>>());
}

#[test]
fn p_in_the_group_view_plans_the_group_names_a_bad_entry_and_keeps_its_sets_watched() {
    use ststui::app::state::Modal;
    let mut st = console_after(HELD);
    st.selected_set = Some(zone('a'));
    run(&mut st, [key('Z'), Msg::BatchEnd, key('P')]);
    let Modal::Prompt(p) = &st.modal else { panic!("no prompt: {:?}", st.status) };
    assert!(p.kind.label().contains("plan for group ingester (3 sets, ingester-zone-a first)"));
    assert_eq!(p.input, "1,100% zone-bake=1m");
    typed(&mut st, "1,100% foo=1");
    run(&mut st, [code(KeyCode::Enter)]);
    let e = prompt_error(&st).expect("a bad word named");
    assert!(e.contains("\"foo=1\": expected the steps first (or batches=1,2,4)"), "{e}");
    typed(&mut st, "1,100% batches=1,2");
    run(&mut st, [code(KeyCode::Enter)]);
    assert_eq!(prompt_error(&st).as_deref(), Some("give the steps or batches=, not both"));
    typed(&mut st, "batches=1,2 zone-bake=30s");
    run(&mut st, [code(KeyCode::Enter)]);
    let Modal::Confirm(q) = &st.modal else { panic!("no question: {:?}", st.modal) };
    assert!(q.title.contains("each set batches 1,2"), "{}", q.title);
    assert!(q.details.iter().any(|d| d.contains("2. ingester-zone-b: partition 3 of 3")));
    assert!(q.details.iter().any(|d| d.contains("30s of that between sets")), "{:?}", q.details);
    assert_eq!(q.log, "rollout group=ingester batches=1,2 bake=0s zone-bake=30s stuck-after=10m");
    let cmds = run(&mut st, [key('y')]);
    assert!(st.plan_run.as_ref().and_then(|r| r.run.group_name()).is_some());
    // Its first write: the group's lease, on its first set.
    let first = ops(&cmds).into_iter().find_map(|op| match op {
        Op::Cluster(w) => Some(w.op),
        _ => None,
    });
    assert!(
        matches!(&first, Some(ststui::backend::ClusterOp::GroupLease { set, lease: Some(_), .. }) if *set == zone('a')),
        "{first:?}"
    );
    // Back to one set while it runs: every set of the group stays watched, the one shown first.
    let cmds = run(&mut st, [key('Z')]);
    let all = vec![zone('a'), zone('b'), zone('c')];
    assert!(ops(&cmds).contains(&Op::View(ViewOp::Group(all))), "{cmds:?}");
    // A second plan is refused while it runs, by name.
    run(&mut st, [key('P')]);
    let said = st.status.as_ref().map(|s| s.text.clone()).unwrap_or_default();
    assert!(said.contains("the group plan of ingester (3 sets)"), "{said}");
}

#[test]
fn while_another_runner_holds_the_group_p_and_the_partition_keys_are_refused() {
    // The simulator's own group plan holds the group (zone-b waiting on the quota).
    let (mut st, _) = opened();
    run(&mut st, [key('P')]);
    assert!(matches!(st.modal, ststui::app::state::Modal::None), "{:?}", st.modal);
    let said = st.status.as_ref().map(|s| s.text.clone()).unwrap_or_default();
    assert!(said.contains("group ingester: a group runner holds it"), "{said}");
    // Nor does a partition key move a set waiting in it (a second set in motion).
    let cmds = run(&mut st, [code(KeyCode::Right), key('[')]);
    assert_eq!(st.selected_set, Some(zone('b')));
    assert!(cmds.is_empty(), "{cmds:?}");
    let said = st.status.as_ref().map(|s| s.text.clone()).unwrap_or_default();
    assert!(
        said.contains("ingester-zone-b is waiting in rollout group ingester's plan (2/3)"),
        "{said}"
    );
}

/// During the zone bake after zone-a, the matrix's line for zone-b is the one verdict's (what
/// `wait` and `explain` say): it waits for the zone bake, with its clock — never "may start"
/// while the group's runner would hold it.
#[test]
fn during_the_zone_bake_the_next_zone_waits_for_it() {
    let mut st = console_after(&format!(
        "{HELD}rollout group=ingester steps=1,100% zone-bake=10m\nsettle max=30s\n\
         expect ingester-zone-a group=done\nexpect ingester-zone-b group=waiting\n"
    ));
    st.selected_set = Some(zone('a'));
    run(&mut st, [key('Z'), Msg::BatchEnd]);
    let text = screen_text(render(&st, 200, 50).backend().buffer());
    assert!(
        text.contains("ingester-zone-b waits: the zone bake of 10m after ingester-zone-a first"),
        "{text}"
    );
    assert!(text.contains("left)"), "the clock: {text}");
    assert!(!text.contains("may start"), "{text}");
    // The verdict explain and wait read says the same of zone-b.
    let v = ststui::app::health::verdict(&st, &zone('b'), Some(&[]), None).unwrap();
    assert_eq!(v.row, ststui::plan::verdict::Row::GroupWaiting);
    assert!(v.why.ends_with("the zone bake of 10m after ingester-zone-a first"), "{}", v.why);
}

/// The group plan's question, its input and the error fit a 200-column line whole: the question
/// gives way (shortened, marked …) before the input and the error are cut.
#[test]
fn the_group_plan_question_keeps_its_input_and_error_in_200_columns() {
    let mut st = console_after(HELD);
    st.selected_set = Some(zone('a'));
    run(&mut st, [key('Z'), Msg::BatchEnd, key('P')]);
    typed(&mut st, "1,100% foo=1");
    run(&mut st, [code(KeyCode::Enter)]);
    let e = prompt_error(&st).expect("a bad word named");
    let text = screen_text(render(&st, 200, 50).backend().buffer());
    let line = text.lines().rev().find(|l| l.contains("plan for group")).expect("the prompt line");
    assert!(line.starts_with(" plan for group ingester (3 sets"), "{line}");
    assert!(line.contains("…: 1,100% foo=1█"), "{line}");
    assert!(line.trim_end().ends_with(e.trim_end()), "{line}\n{e}");
}
