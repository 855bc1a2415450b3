//! The console as a new user met it (issue: hardening): detailed rows that stay in use for
//! sets of tens of pods and show age, restarts and node; the health word beside the
//! controller's own completion; a legend that lists every glyph; the per-change cache of the
//! grid and the controller's sentences.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::ui_support;

use ststui::app::health::Health;
use ststui::app::state::Derived;
use ststui::app::view::Screen;
use ststui::app::view::glyphs::Glyphs;
use ststui::app::view::grid::{GridLayout, GridMode};
use ststui::app::{Msg, update};
use ui_support::*;

/// 60 pods at 120×40: one detailed row per ordinal (scrolling), not the compact map, with the
/// pods' age, restarts and node.
#[test]
fn sixty_pods_at_120x40_keep_detailed_rows_with_age_restarts_and_node() {
    let mut f = Fixture::web(60).pods(0..58, REV1, P::Ready).pod(58, REV2, P::Running);
    f.selected = 40;
    let st = f.state();
    let text = screen_text(render(&st, 120, 40).backend().buffer());
    assert!(text.contains("web-40 ■ 7d9c5b8f4 #1  current Ready"), "{text}");
    assert!(text.contains("rows "), "the title says which rows are shown:\n{text}");
    let row40 = text.lines().find(|l| l.contains("▶ web-40")).unwrap_or_default();
    assert!(row40.contains("age 45s"), "{row40}");
    assert!(row40.contains("sim-node"), "{row40}");
    // Scrolled to the end, the restarted pod shows its restarts.
    let mut st = st;
    st.selected_ordinal = 58;
    let text = screen_text(render(&st, 120, 40).backend().buffer());
    let row58 = text.lines().find(|l| l.contains("▶ web-58")).unwrap_or_default();
    assert!(row58.contains("↻3"), "{row58}");
    // The layout agrees: detailed rows, more rows than fit.
    let screen = Screen::of(&st);
    let area = ratatui::layout::Rect::new(0, 0, 70, 20);
    let layout = GridLayout::new(&screen.grid, screen.selected, area);
    assert_eq!(layout.mode, GridMode::Detailed);
    assert!(layout.total > layout.rows.len());
}

/// Beyond the scrolling limit the compact map comes back (10,000 ordinals never scroll by
/// rows).
#[test]
fn large_sets_use_the_compact_map() {
    let st = big(1_000).state();
    let screen = Screen::of(&st);
    let layout =
        GridLayout::new(&screen.grid, screen.selected, ratatui::layout::Rect::new(0, 0, 120, 30));
    assert!(matches!(layout.mode, GridMode::Compact { .. }));
}

/// "Rollout complete" by the controller's rule while no pod is Ready: while the pods start the
/// header says Progressing; once they have been not Ready for longer than starting takes
/// (`health::STUCK_AFTER_SECS`), Degraded, and the controller pane says what the completion
/// does not count.
#[test]
fn complete_but_not_ready_is_degraded_not_healthy() {
    let mut f = Fixture::web(3).pods(0..3, REV2, P::Running);
    f.current = REV2;
    let d = Derived::of(&f.state()).unwrap_or_else(|| panic!("no derived view"));
    assert_eq!(d.verdict.word(), Health::Progressing, "pods 25–37 s old are starting");
    f.now_secs = 40 + ststui::app::health::STUCK_AFTER_SECS;
    let st = f.state();
    let d = Derived::of(&st).unwrap_or_else(|| panic!("no derived view"));
    assert_eq!(d.verdict.word(), Health::Degraded);
    let text = screen_text(render(&st, 120, 40).backend().buffer());
    assert!(text.contains(" Degraded │ desired 3"), "{text}");
    assert!(text.contains("done: rollout complete"), "{text}");
    assert!(text.contains("Degraded: 0 of 3 pods Ready"), "{text}");
    // All Ready: Healthy, and no such warning.
    let mut f = Fixture::web(3).pods(0..3, REV2, P::Ready);
    f.current = REV2;
    let st = f.state();
    let text = screen_text(render(&st, 120, 40).backend().buffer());
    assert!(text.contains(" Healthy │ desired 3"), "{text}");
    assert!(!text.contains("pods Ready — complete"), "{text}");
}

/// The help overlay lists every glyph of the grid, from the same table as the border legend.
#[test]
fn the_help_lists_the_whole_legend() {
    let mut st = rolling().state();
    st.modal = ststui::app::state::Modal::Help { page: 0 };
    let text = screen_text(render(&st, 200, 60).backend().buffer());
    assert!(text.contains("Grid legend"), "{text}");
    for e in Glyphs::legend() {
        assert!(text.contains(e.key()), "{} missing from the help:\n{text}", e.key());
    }
}

/// The grid and the controller's sentences are computed once per state change: a batch end
/// caches them, a frame reads the cache, and nothing moves when nothing changed.
#[test]
fn derived_data_is_cached_per_state_change() {
    let mut st = rolling().state();
    assert!(st.derived.is_none());
    update(&mut st, Msg::BatchEnd);
    let cached = st.derived.clone().unwrap_or_else(|| panic!("BatchEnd did not cache"));
    assert!(cached.is_fresh(&st));
    assert_eq!(Some(&cached), Derived::of(&st).as_ref());
    st.dirty = false;
    update(&mut st, Msg::BatchEnd);
    assert!(!st.dirty, "an unchanged state is not derived again");
    // The clock moving does not make a steady set stale (nothing waits, no minReadySeconds):
    // an idle console does not derive 10,000 ordinals again every second.
    if let Some(a) = st.advisor.as_mut() {
        a.plan.waiting_on = None;
    }
    update(&mut st, Msg::BatchEnd);
    let steady = st.derived.clone().unwrap_or_else(|| panic!("not derived"));
    st.now = st.now.map(|t| t + std::time::Duration::from_secs(5));
    assert!(steady.is_fresh(&st), "a clock tick re-derived a steady set");
    // A change to the mirror makes it stale; the next batch end replaces it.
    let mut p = pod(4, REV1, P::Pending, &rolling().revisions);
    p.metadata.name = Some("web-4".into());
    st.mirror.apply(ststui::backend::Object::Pod(std::sync::Arc::new(p)));
    assert!(!cached.is_fresh(&st));
    update(&mut st, Msg::BatchEnd);
    assert!(st.derived.as_ref().is_some_and(|d| d.is_fresh(&st)));
    assert!(st.dirty);
}

/// A long warning wraps inside the dialog instead of being cut, at 80 columns.
#[test]
fn confirmation_warnings_wrap() {
    use ststui::app::state::{Confirm, Modal};
    let mut st = rolling().state();
    let warning = "web-2, web-3 and web-4 already run the update revision: raising the \
                   partition never reverts them, they stay updated until deleted";
    st.modal = Modal::Confirm(Confirm {
        title: "Raise the partition of default/web?".into(),
        old: "partition 2".into(),
        new: "partition 5".into(),
        warning: Some(warning.into()),
        ops: Vec::new(),
        log: String::new(),
        ..Default::default()
    });
    let text = screen_text(render(&st, 80, 24).backend().buffer());
    // Every word of the warning is on screen, in order, inside the dialog.
    let inside: String = text
        .lines()
        .map(str::to_string)
        .filter(|l| l.contains('│'))
        .map(|l| l.chars().map(|c| if "│╰╭╮╯─".contains(c) { ' ' } else { c }).collect())
        .collect::<Vec<String>>()
        .join(" ");
    let words: Vec<&str> = inside.split_whitespace().collect();
    let want: Vec<&str> = warning.split_whitespace().collect();
    let found = words.windows(want.len()).any(|w| w == want.as_slice());
    assert!(found, "the warning is cut:\n{text}");
    assert!(text.contains("y yes"), "{text}");
}

/// The pod detail and the controller pane tell one story: the pod the controller waits on for
/// good is "stuck", not "open: the rolling update replaces it".
#[test]
fn the_waited_pod_is_stuck_in_the_detail_too() {
    let mut f = forced_rollback();
    f.selected = 4;
    let st = f.state();
    let screen = Screen::of(&st);
    let detail = screen.detail().unwrap_or_else(|| panic!("no detail"));
    let role = detail.rows.iter().find(|(l, _)| *l == "rollout").map(|(_, v)| v.clone());
    let role = role.unwrap_or_default();
    assert!(role.starts_with("stuck: the controller waits on it"), "{role}");
    let controller: Vec<String> = screen.controller.iter().map(|l| l.text.clone()).collect();
    assert!(controller.iter().any(|l| l.contains("waits for it forever")), "{controller:?}");
}

/// The undo picker says, under each revision, what rolling back to it changes.
#[test]
fn the_undo_picker_shows_what_rolling_back_changes() {
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut st = rolling().state();
    update(&mut st, Msg::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::NONE)));
    let text = screen_text(render(&st, 120, 40).backend().buffer());
    assert!(text.contains("undo changes image: nginx:1.26 → nginx:1.25"), "{text}");
}
