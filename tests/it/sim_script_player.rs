//! The player's real-time interface: driven the way the interactive driver drives it (advance
//! the clock to the time `poll` asked for, then poll again), a script produces exactly the
//! timeline it produces headless.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::path::Path;

use ststui::backend::Event;
use ststui::sim::scenario::{Player, parse};
use ststui::sim::{Sim, SimConfig};

fn player(text: &str) -> Player {
    let script = parse(Path::new("<test>"), text).unwrap_or_else(|e| panic!("{e}"));
    Player::new(script).unwrap_or_else(|e| panic!("{e}"))
}

fn headless(text: &str) -> Vec<Event> {
    let mut sim = Sim::new(SimConfig::default());
    let mut events = Vec::new();
    let outcome = player(text).run(&mut sim, &mut |ev| events.extend(ev.timeline().cloned()));
    assert!(outcome.passed(), "{:?}", outcome.failures);
    events
}

/// What the driver does: advance to the time asked for, poll, repeat; count the polls.
fn polled(text: &str) -> (Vec<Event>, usize) {
    let mut sim = Sim::new(SimConfig::default());
    let mut p = player(text);
    let mut events = Vec::new();
    let mut due = Some(sim.now_ms());
    let mut polls = 0;
    while let Some(t) = due {
        assert!(t >= sim.now_ms(), "poll asked for the past: {t} < {}", sim.now_ms());
        sim.advance_to(t);
        due = p.poll(&mut sim);
        polls += 1;
        assert!(polls < 10_000, "the player does not finish");
        events.extend(sim.drain_events().iter().filter_map(|e| e.timeline().cloned()));
    }
    assert!(p.finished());
    assert!(p.outcome().passed(), "{:?}", p.outcome().failures);
    (events, polls)
}

#[test]
fn polling_gives_the_headless_timeline() {
    for name in ["ordered-scale", "broken-rollback", "parallel", "min-ready-seconds"] {
        let file =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("assets/scenarios/{name}.scenario"));
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}"));
        let (events, polls) = polled(&text);
        assert_eq!(events, headless(&text), "{name}");
        // `wait` and `settle` hand control back to the driver instead of running time forward.
        assert!(polls > 5, "{name}: {polls} polls");
    }
}

#[test]
fn poll_returns_the_end_of_a_wait_and_none_at_the_end() {
    let mut sim = Sim::new(SimConfig::default());
    let mut p = player("create web\nwait 2s\nscale web 2\nwait 500ms\n");
    assert_eq!(p.poll(&mut sim), Some(2000));
    // Polled early (the driver woke for something else): still waiting.
    sim.advance_to(1500);
    assert_eq!(p.poll(&mut sim), Some(2000));
    sim.advance_to(2000);
    assert_eq!(p.poll(&mut sim), Some(2500));
    sim.advance_to(2500);
    assert_eq!(p.poll(&mut sim), None);
    assert!(p.finished());
    assert_eq!(
        sim.set(&ststui::backend::ObjRef::new("default", "web")).and_then(|s| s.spec.replicas),
        Some(2)
    );
}

#[test]
fn settle_polls_until_nothing_is_pending() {
    let mut sim = Sim::new(SimConfig::default());
    let mut p = player("create web replicas=2\nsettle max=1m\nexpect web ready=2\n");
    let mut due = p.poll(&mut sim);
    let mut times = Vec::new();
    while let Some(t) = due {
        times.push(t);
        sim.advance_to(t);
        due = p.poll(&mut sim);
    }
    // Pods start after 1s and become Ready after 2s, one after the other: the player asks to be
    // woken at those instants, never past the settle bound.
    assert!(times.contains(&1000) && times.contains(&2000) && times.contains(&4000), "{times:?}");
    assert!(times.iter().all(|t| *t <= 60_000));
    assert_eq!(p.outcome().expects, 1);
    assert!(p.outcome().passed(), "{:?}", p.outcome().failures);
}

/// What the console says when a script played in real time ends: how its checks went.
#[test]
fn the_summary_counts_expectations_and_names_the_first_failure() {
    use ststui::sim::driver::Script;
    let text = "create web replicas=2\nsettle\nexpect web ready=2\nexpect web ready=3\n";
    let summary = Script::summary(&play_to_end(text));
    assert!(
        summary.starts_with("script finished: 1 of 2 expectation(s) failed (first: line 4:"),
        "{summary}"
    );
    let done = play_to_end("create web replicas=2\nsettle\nexpect web ready=2\n");
    assert_eq!(Script::summary(&done), "script finished: 1 expectation(s) held");
}

/// Polls `text` on a fresh simulation until it has played every line (pass or fail).
fn play_to_end(text: &str) -> Player {
    let mut sim = Sim::new(SimConfig::default());
    let mut p = player(text);
    while let Some(at) = p.poll(&mut sim) {
        sim.advance_to(at);
    }
    p
}

/// `break-image` breaks every pod of the image, now and later: a canary on it blocks the
/// rollout, deleting the pod does not help (it comes back broken), `fix-image` heals it.
#[test]
fn break_image_and_fix_image() {
    headless(
        "kubelet start=1s ready=1s stop=1s
create web replicas=3 image=nginx:1.25 partition=2
settle
image web nginx:1.26
settle
break-image nginx:1.26
settle max=30s
expect web ready=2 updated=1 blocked=true
delete-pod web-2
settle max=30s
expect web ready=2 updated=1
fix-image nginx:1.26
settle
expect web ready=3 updated=1
",
    );
}

/// `gc delay=DUR`: a claim whose pod was scaled away is collected only after the delay, and
/// meanwhile a scale-up waits on the stale claim (upstream's `PodClaimIsStale`). As upstream,
/// the claim's removal wakes nothing (the controller has no claim event handler): the next
/// event about the set does. Without the delay the claim is gone at once and nothing waits.
#[test]
fn a_delayed_collector_leaves_a_stale_claim_that_blocks_a_scale_up() {
    // A claimed pod scaled away and straight back.
    let away_and_back = "kubelet start=0s ready=0s stop=0s
create web replicas=1 claims=data whenScaled=Delete
settle
scale web 0
wait 1s
scale web 1
wait 1s
";
    let events = headless(&format!(
        "gc delay=5s
{away_and_back}expect web pods= blocked=true claims=data-web-0
wait 10s
expect web pods= claims=
scale web 2
settle
expect web pods=web-0,web-1 ready=2 claims=data-web-0,data-web-1
"
    ));
    let gc_at = events.iter().find_map(|e| match &e.kind {
        ststui::backend::EventKind::Gc { pvc: Some(_), .. } => Some(e.t_ms),
        _ => None,
    });
    let gone_at = events.iter().find_map(|e| match &e.kind {
        ststui::backend::EventKind::Kubelet { event, .. } if event == "gone" => Some(e.t_ms),
        _ => None,
    });
    assert_eq!(gc_at.zip(gone_at).map(|(g, p)| g - p), Some(5000), "collected 5 s after");
    // Without a delay the claim goes with its pod and the scale-up goes through at once.
    headless(&format!("{away_and_back}expect web pods=web-0 blocked=false claims=data-web-0\n"));
}
