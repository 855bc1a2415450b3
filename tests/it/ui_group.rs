//! A rollout group's view (`Z`) from a real simulator run: three zones, zone-a rolled and one of
//! its pods kept out by a quota, zones b and c held. The matrix puts the zones side by side, its
//! header names the pod that holds zone-b; ← → move between the zones, `Z` goes back to one set.
//! Drawn at 200×50 and at 80×24.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stdout)]

use crossterm::event::KeyCode;

use crate::support::app_fixtures::{code, key, ops, run};
use crate::support::ui_support::{render, screen_text};
use crate::ui_sim::console_after;
use ststui::app::{AppState, Msg};
use ststui::backend::{ObjRef, Op, ViewOp};

const SCRIPT: &str = "kubelet start=1s ready=1s stop=1s\n\
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
    rollout group=ingester steps=1,100% bake=30s zone-bake=1m\n\
    settle max=1m30s\n\
    quota pods=8\n\
    delete-pod ingester-zone-a-1\n\
    settle max=5m\n";

fn zone(z: char) -> ObjRef {
    ObjRef::new("default", format!("ingester-zone-{z}"))
}

/// The console after the script, the group opened from zone-a.
fn opened() -> (AppState, Vec<ststui::app::Command>) {
    let mut st = console_after(SCRIPT);
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
