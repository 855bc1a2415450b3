//! A screen from a real simulator run: a scenario played headless on virtual time, every event
//! fed through the reducer (`app::update`) as the console's event loop would, the advisor run,
//! then the frame drawn. Checks that sim, app and ui agree end to end (structure, not the
//! exact text: that is pinned by the fixture-built snapshots in `ui_screens.rs`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::ui_support;

use ststui::app::{AppState, Msg, update};
use ststui::backend::{BackendEvent, Capabilities};
use ststui::core::Options;
use ststui::sim::scenario::parse::inline_path;
use ststui::sim::scenario::{Player, parse};
use ststui::sim::{Sim, SimConfig};
use ui_support::{render, screen_text};

/// Plays `script` and returns the console state after every event was applied.
pub(crate) fn console_after(script: &str) -> AppState {
    let script = parse(&inline_path(), script).unwrap_or_else(|e| panic!("script: {e}"));
    let mut player = Player::new(script).unwrap_or_else(|e| panic!("player: {e}"));
    let mut sim = Sim::new(SimConfig::default());
    let start = sim.now();
    let mut events = Vec::new();
    let outcome = player.run(&mut sim, &mut |e| events.push(e.clone().into_backend()));
    assert!(player.finished(), "{outcome:?}");
    let caps = Capabilities::simulator();
    let mut st = AppState::new(caps, Options::default());
    update(&mut st, Msg::Backend(BackendEvent::Clock { now: start, speed: 1.0 }));
    for ev in events {
        update(&mut st, Msg::Backend(ev));
    }
    update(&mut st, Msg::Backend(BackendEvent::Synced));
    update(&mut st, Msg::Backend(BackendEvent::Clock { now: sim.now(), speed: 1.0 }));
    update(&mut st, Msg::BatchEnd);
    st
}

#[test]
fn a_partitioned_rollout_from_the_simulator() {
    let st = console_after(
        "create web replicas=5\n\
         settle\n\
         partition web 3\n\
         image web nginx:1.26\n\
         settle\n",
    );
    let text = screen_text(render(&st, 120, 36).backend().buffer());
    for needle in [
        "default/web │ ● live",
        "RollingUpdate partition=3",
        "desired 5 current 5 updated 2 ready 5 available 5",
        "partition=3 ▲ held on current",
        "held: partition 3 holds web-0..web-2",
        "Revisions (2)",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
    // web-3 and web-4 are on the update revision (●), web-0..2 on the current one (■).
    let lines: Vec<&str> = text.lines().collect();
    for (o, glyph) in [(0, '■'), (2, '■'), (3, '●'), (4, '●')] {
        let row = lines
            .iter()
            .find(|l| l.contains(&format!("web-{o} {glyph}")))
            .copied()
            .unwrap_or_default();
        assert!(!row.is_empty(), "web-{o} is not drawn with {glyph}:\n{text}");
    }
    // No whole-screen snapshot here: revision hashes and blocker wording belong to the core and
    // the simulator, and change with them; the fixture-built snapshots pin the layout.
}
