//! Whole-screen snapshots (insta + ratatui TestBackend) of the console's main states, built
//! from hand-made k8s objects (tests/ui_support). Run `cargo insta review` after a deliberate
//! change of the screen.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::ui_support;

use ststui::app::state::{Confirm, Modal};
use ststui::backend::ObjRef;
use ststui::ui::Theme;
use ui_support::*;

fn snap(name: &str, state: &ststui::app::AppState, w: u16, h: u16) -> String {
    let term = render(state, w, h);
    let text = screen_text(term.backend().buffer());
    insta::assert_snapshot!(name, text);
    text
}

#[test]
fn rolling_200x60() {
    let text = snap("rolling_200x60", &rolling().state(), 200, 60);
    assert!(text.contains("next: delete web-2 for update (web-7d9c5b8f4 → web-5c4f8d6b9)"));
}

#[test]
fn rolling_80x24() {
    let text = snap("rolling_80x24", &rolling().state(), 80, 24);
    assert!(text.contains("web-4"));
    assert!(text.contains("next: delete web-2"));
}

#[test]
fn paused_partition() {
    let text = snap("paused_120x40", &paused().state(), 120, 40);
    assert!(text.contains("PAUSED"));
    assert!(text.contains("partition=2 ▲ held on current"));
}

#[test]
fn blocked_broken_canary() {
    let text = snap("blocked_120x40", &blocked().state(), 120, 40);
    assert!(text.contains("waiting: web-4 not Ready"));
}

#[test]
fn forced_rollback_hint() {
    let text = snap("forced_rollback_120x40", &forced_rollback().state(), 120, 40);
    assert!(text.contains("kubernetes#67250"));
}

#[test]
fn on_delete_strategy() {
    let text = snap("on_delete_100x30", &on_delete().state(), 100, 30);
    assert!(text.contains("OnDelete"));
}

#[test]
fn compact_map_1000() {
    let text = snap("compact_1000_200x50", &big(1000).state(), 200, 50);
    assert!(text.contains("partition=600"));
    assert!(text.contains("replicas=990 ▼ condemned"));
}

#[test]
fn compact_map_1000_80x24() {
    snap("compact_1000_80x24", &big(1000).state(), 80, 24);
}

#[test]
fn help_overlay() {
    let mut st = rolling().state();
    st.modal = Modal::Help { page: 0 };
    let text = snap("help_120x40", &st, 120, 40);
    assert!(text.contains("Help — every key"));
}

#[test]
fn help_overlay_80x24() {
    let mut st = rolling().state();
    st.modal = Modal::Help { page: 0 };
    snap("help_80x24", &st, 80, 24);
}

#[test]
fn confirmation() {
    let mut st = paused().state();
    st.modal = Modal::Confirm(Confirm {
        title: "Raise the partition of default/web?".into(),
        old: "partition 2".into(),
        new: "partition 4".into(),
        warning: Some(
            "web-2 and web-3 already run the update revision: raising the partition never \
             reverts them"
                .into(),
        ),
        ops: vec![ststui::backend::Op::from(ststui::backend::ClusterOp::SetPartition {
            set: ObjRef::new(NS, SET),
            partition: 4,
        })],
        log: "partition web 4".into(),
        ..Default::default()
    });
    let text = snap("confirm_100x30", &st, 100, 30);
    assert!(text.contains("partition 2  →  partition 4"));
}

#[test]
fn the_undo_picker_says_what_its_keys_do() {
    use ststui::app::state::{RevisionChoice, RevisionPicker};
    let mut st = rolling().state();
    let choice = |revision: i64, image: &str| RevisionChoice {
        revision,
        name: format!("web-{revision}"),
        image: Some(image.into()),
        current: revision == 1,
        update: revision == 2,
        change: None,
    };
    st.modal = Modal::Picker(RevisionPicker {
        set: ObjRef::new(NS, SET),
        choices: vec![choice(2, "nginx:1.26"), choice(1, "nginx:1.25")],
        selected: 1,
    });
    let text = screen_text(render(&st, 100, 30).backend().buffer());
    assert!(text.contains("Enter roll back   Esc cancel"), "{text}");
    assert!(!text.contains("undo to"), "{text}");
}

#[test]
fn no_color_is_readable_and_colourless() {
    let st = blocked().state();
    let (mono, _) = render_with(&st, 120, 40, &Theme::monochrome());
    let (color, _) = render_with(&st, 120, 40, &Theme::colored());
    let mono = mono.backend().buffer().clone();
    let color = color.backend().buffer().clone();
    for cell in mono.content() {
        assert_eq!(cell.fg, ratatui::style::Color::Reset, "{cell:?} has a colour");
        assert_eq!(cell.bg, ratatui::style::Color::Reset, "{cell:?} has a colour");
    }
    assert!(color.content().iter().any(|c| c.fg != ratatui::style::Color::Reset));
    // Same glyphs and words: nothing is said by colour alone.
    assert_eq!(screen_text(&mono), screen_text(&color));
    insta::assert_snapshot!("no_color_blocked_120x40", screen_text(&mono));
}
