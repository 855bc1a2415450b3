//! The simulated world: everything the simulation is made of (store, agenda, kubelet,
//! controller, output, the plans under way, the collector, the disruption controller). Its data,
//! named by every part that acts on it; the scheduler that moves it is `engine`.

use super::SimEvent;
use super::clock::Agenda;
use super::controller::Controller;
use super::disruption::Disruption;
use super::gc;
use super::kubelet::Kubelet;
use super::planner::state::Planner;
use super::recorder::Recorder;
use super::store::Store;
use crate::backend::Mode;

/// More syncs than this at one virtual instant is a livelock (the controller keeps writing and
/// re-triggering itself): the controller is paused and an `error` event says so.
pub const MAX_SYNCS_PER_INSTANT: u64 = 200_000;

/// Everything the simulation is made of.
#[derive(Debug)]
pub struct World {
    pub store: Store,
    pub agenda: Agenda,
    pub kubelet: Kubelet,
    pub controller: Controller,
    pub out: Vec<SimEvent>,
    /// Turns timeline entries into core/v1 Events (off unless the simulator is served).
    pub recorder: Recorder,
    /// Rollout plans under way (a scenario's `rollout` lines).
    pub planner: Planner,
    /// The garbage collector's settings (its delay).
    pub gc: gc::Gc,
    /// The disruption controller (PodDisruptionBudgets' status).
    pub disruption: Disruption,
    /// Syncs run at `instant_ms` (the livelock guard).
    pub(super) instant_syncs: u64,
    pub(super) instant_ms: u64,
    /// Livelocks the guard stopped, in order.
    pub livelocks: Vec<Livelock>,
    /// Syncs at one instant that count as a livelock.
    pub livelock_syncs: u64,
}

/// A livelock the guard stopped: when, and whether it is upstream's own behaviour (a set whose
/// `rollingUpdate` is unset: upstream's controller loops the same way) rather than a fault of
/// the simulator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Livelock {
    pub t_ms: u64,
    pub upstream: bool,
    pub message: String,
}

impl World {
    pub fn new(kubelet: Kubelet, controller: Controller) -> Self {
        World {
            store: Store::default(),
            agenda: Agenda::default(),
            kubelet,
            controller,
            out: Vec::new(),
            recorder: Recorder::default(),
            planner: Planner::default(),
            gc: gc::Gc::default(),
            disruption: Disruption::default(),
            instant_syncs: 0,
            instant_ms: 0,
            livelocks: Vec::new(),
            livelock_syncs: MAX_SYNCS_PER_INSTANT,
        }
    }

    /// Pauses or resumes the controller, reporting a mode change.
    pub fn set_paused(&mut self, paused: bool) {
        if self.controller.is_paused() != paused {
            self.controller.set_paused(paused);
            self.out.push(SimEvent::Mode(if paused { Mode::Paused } else { Mode::Live }));
        }
    }
}
