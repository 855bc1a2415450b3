//! Spacing a generated script for a real cluster, so that the differential check compares one
//! order of events, not whichever one a cluster's latencies happen to produce.
//!
//! The simulator runs a script line at an exact virtual instant, with every reaction to it at
//! that instant; on a cluster the controller, the kubelet and the garbage collector react some
//! milliseconds later — and sometimes, when the controller's client is throttled or a sync is
//! retried, most of a second later. A line that the simulator runs shortly *after* an event (a
//! pod became Ready, the controller deleted a pod) can then reach the cluster *before* it, and
//! the two traces differ without either controller deciding differently (the differential
//! check's generated-13 and -14 did exactly that). Lag only ever delays a cluster's events, so
//! a line is safe when no event of the controller, the kubelet or the collector happened in the
//! [`LEAD_MS`] before it, and none that the line did not cause follows within [`TRAIL_MS`] (the
//! line's own API call takes that long at most).
//!
//! [`space`] plays the script on the simulator line by line and, where a line would not be
//! safe, inserts a `wait` before it that moves it to the first safe instant, found on the
//! timeline of what comes before it (moving a line later cannot change what happened before
//! it, so each line is placed once, in order, with one run of the simulator). A line that
//! finds no safe instant within [`MAX_SHIFT_MS`] (a set the controller keeps busy without pause)
//! is left where it is; [`unsafe_lines`] names such lines, and the differential's generated
//! scripts are tested to have none.
//!
//! Owns: the spacing rule. Must not touch: what a line does (only `wait` lines are added).

use crate::backend::{Event, EventKind};
use crate::core::Options;
use crate::sim::scenario::{self, Player};
use crate::sim::{Sim, SimConfig};

/// No event of the controller, the kubelet or the collector within this long before a line.
pub const LEAD_MS: u64 = 1000;
/// No event the line did not cause within this long after it.
pub const TRAIL_MS: u64 = 150;
/// The furthest a line is moved.
pub const MAX_SHIFT_MS: u64 = 60_000;

/// Whether `line` is one whose instant matters (a change, a kubelet setting, an expectation);
/// comments, blank lines, `wait` and `settle` only pass time.
fn placed(line: &str) -> bool {
    let word = line.split_whitespace().next().unwrap_or_default();
    !(word.is_empty() || word.starts_with('#') || word == "wait" || word == "settle")
}

fn acted(e: &Event) -> bool {
    matches!(
        e.kind,
        EventKind::Controller { .. } | EventKind::Kubelet { .. } | EventKind::Gc { .. }
    )
}

/// The timeline of `lines` followed by a `wait` of `tail_ms`, on the simulator.
fn timeline(lines: &[String], tail_ms: u64, options: Options) -> Option<Vec<Event>> {
    let mut text = lines.join("\n");
    text.push_str(&format!("\nwait {tail_ms}ms\n"));
    let script = scenario::parse(&scenario::parse::inline_path(), &text).ok()?;
    let mut player = Player::new(script).ok()?;
    let mut sim = Sim::new(SimConfig { options, ..Default::default() });
    let mut events = Vec::new();
    player.run(&mut sim, &mut |ev| {
        if let Some(t) = ev.timeline() {
            events.push(t.clone());
        }
    });
    Some(events)
}

/// The instant of the line numbered `line` (1-based) and where it is in `events`.
fn instant(events: &[Event], line: usize) -> Option<(usize, u64)> {
    events
        .iter()
        .position(|e| matches!(&e.kind, EventKind::Command { line: l, .. } if *l == line))
        .map(|at| (at, events[at].t_ms))
}

/// Whether an event at `e` rules out a line at `t`: it is within the lead before it (or at its
/// instant: events due then happen before a line), or within the trail after it.
fn near(e: u64, t: u64) -> bool {
    e + LEAD_MS > t && e < t + TRAIL_MS
}

/// Whether the line numbered `line` is safe where it stands in `events` (the script's
/// timeline: what follows it at its instant is its own doing, and what follows the next line
/// that does something is that line's).
fn safe(events: &[Event], line: usize) -> bool {
    let Some((at, t)) = instant(events, line) else { return true };
    let before = events[..at].iter().filter(|e| acted(e)).all(|e| !near(e.t_ms, t));
    let next = events[at + 1..]
        .iter()
        .position(|e| matches!(&e.kind, EventKind::Command { text, .. } if placed(text)))
        .map_or(events.len(), |i| at + 1 + i);
    let after =
        events[at + 1..next].iter().filter(|e| acted(e) && e.t_ms > t).all(|e| !near(e.t_ms, t));
    before && after
}

/// The first instant at or after `t0` that no event of `events` (a timeline without the line
/// to place, so none of them is the line's doing) rules out, at most [`MAX_SHIFT_MS`] later.
fn first_safe(events: &[Event], t0: u64) -> Option<u64> {
    let times: Vec<u64> = events.iter().filter(|e| acted(e)).map(|e| e.t_ms).collect();
    let mut candidates: Vec<u64> =
        times.iter().map(|e| e + LEAD_MS).filter(|c| *c > t0).chain([t0]).collect();
    candidates.sort_unstable();
    candidates
        .into_iter()
        .take_while(|c| *c <= t0 + MAX_SHIFT_MS)
        .find(|c| times.iter().all(|e| !near(*e, *c)))
}

/// `script` with a `wait` before each line that would not be safe on a cluster (see the module
/// doc), played with `options`' controller semantics. A script the simulator refuses is
/// returned as it is.
pub fn space(script: &str, options: Options) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in script.lines() {
        if placed(line) {
            // Where the line would run (the tail `wait`'s instant), and what happens from there
            // without it.
            let tail = MAX_SHIFT_MS + LEAD_MS + TRAIL_MS;
            let found = timeline(&out, tail, options).and_then(|events| {
                let (_, t0) = instant(&events, out.len() + 1)?;
                Some((t0, first_safe(&events, t0)?))
            });
            if let Some((t0, t)) = found
                && t > t0
            {
                out.push(format!("wait {}ms", t - t0));
            }
        }
        out.push(line.to_string());
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// The lines of `script` (1-based numbers, with their text) that are not safe on a cluster.
pub fn unsafe_lines(script: &str, options: Options) -> Vec<(usize, String)> {
    let lines: Vec<String> = script.lines().map(str::to_string).collect();
    let Some(events) = timeline(&lines, LEAD_MS + TRAIL_MS, options) else {
        return vec![(0, "the simulator refuses the script".to_string())];
    };
    lines
        .iter()
        .enumerate()
        .filter(|(i, l)| placed(l) && !safe(&events, i + 1))
        .map(|(i, l)| (i + 1, l.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> Options {
        Options::default()
    }

    #[test]
    fn a_line_just_after_a_pod_becomes_ready_waits_the_lead() {
        // web-0 is Ready at 2 s; a scale 100 ms later would race its readiness on a cluster.
        let script = "kubelet start=1s ready=1s stop=1s\ncreate web replicas=1\nwait 2100ms\n\
                      scale web 3\n";
        assert_eq!(unsafe_lines(script, opts()), [(4, "scale web 3".to_string())]);
        let spaced = space(script, opts());
        assert!(spaced.contains("wait 900ms\nscale web 3"), "{spaced}");
        assert!(unsafe_lines(&spaced, opts()).is_empty(), "{spaced}");
    }

    #[test]
    fn a_line_just_before_an_event_it_did_not_cause_moves_past_it() {
        // web-0 becomes Ready at 2 s; an image change at 1.9 s is not its cause.
        let script = "kubelet start=1s ready=1s stop=1s\ncreate web replicas=1\nwait 1900ms\n\
                      image web app:v2\n";
        assert_eq!(unsafe_lines(script, opts()).len(), 1);
        let spaced = space(script, opts());
        assert!(unsafe_lines(&spaced, opts()).is_empty(), "{spaced}");
        // Moved to a lead after the Ready at 2 s: 1.1 s more.
        assert!(spaced.contains("wait 1100ms\nimage web app:v2"), "{spaced}");
    }

    #[test]
    fn two_changes_in_one_instant_are_pulled_apart_when_the_first_has_an_effect() {
        // The settle ends at web-0's Ready; the failed web-0 is deleted and made again at
        // once, Running a second later and Ready the next: the scale goes a lead after that.
        let script = "create web replicas=1\nsettle\nfail web-0\nscale web 2\n";
        let spaced = space(script, opts());
        assert_eq!(
            spaced,
            "create web replicas=1\nsettle\nwait 1000ms\nfail web-0\nwait 3000ms\nscale web 2\n"
        );
        assert_eq!(unsafe_lines(script, opts()).len(), 2);
        assert!(unsafe_lines(&spaced, opts()).is_empty());
        // A line whose predecessor did nothing stays with it.
        let quiet = "create web replicas=1\nsettle\nwait 2s\nkubelet stop=3s\nscale web 2\n";
        assert_eq!(space(quiet, opts()), quiet);
    }

    #[test]
    fn a_safe_script_is_unchanged_and_comments_and_waits_never_move() {
        let script = "# a comment\ncreate web replicas=2\nsettle\nwait 2s\nscale web 1\nsettle\n\
                      wait 2s\nexpect web replicas=1\n";
        assert_eq!(space(script, opts()), script);
    }
}
