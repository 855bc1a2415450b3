//! A scenario played headless on the simulator, with everything it emitted: what the simulator
//! tests of plans and groups read their timelines and partitions from.

use std::path::Path;

use ststui::backend::EventKind;
use ststui::sim::scenario::{Outcome, Player, parse};
use ststui::sim::{Sim, SimConfig, SimEvent};

/// The simulator after the script, what it emitted, and how the script's expectations went.
pub struct Run {
    pub sim: Sim,
    pub events: Vec<SimEvent>,
    pub outcome: Outcome,
}

/// Plays `text` to its end.
pub fn play(text: &str) -> Run {
    play_with(text, SimConfig::default())
}

/// Plays `text` to its end on a simulator made with `config` (a release, its gates).
pub fn play_with(text: &str, config: SimConfig) -> Run {
    let script = parse(Path::new("<test>"), text).unwrap_or_else(|e| panic!("{e}"));
    let mut player = Player::new(script).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = Sim::new(config);
    let mut events = Vec::new();
    let outcome = player.run(&mut sim, &mut |ev| events.push(ev.clone()));
    Run { sim, events, outcome }
}

impl Run {
    /// The timeline: (virtual ms, what happened).
    pub fn timeline(&self) -> impl Iterator<Item = (u64, &EventKind)> {
        self.events.iter().filter_map(|e| e.timeline().map(|t| (t.t_ms, &t.kind)))
    }
}
