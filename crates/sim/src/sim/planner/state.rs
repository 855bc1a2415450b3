//! The plans under way, as the simulated world holds them (a leaf: the world names its type,
//! the planner's turns fill it): each plan's run (one set's or a group's), its wake-up and
//! rehearsed gate, and how rehearsed gates answer.

use std::collections::BTreeMap;

use super::super::clock::Ticket;
use super::super::store::Change;
use crate::backend::{ObjKind, ObjRef};
use crate::plan::gate::GateKind;
use crate::plan::run::Run;

/// The plans under way.
#[derive(Debug, Default)]
pub struct Planner {
    pub(super) runs: BTreeMap<ObjRef, Running>,
    pub(super) dirty: bool,
    /// (instant, evaluations then): the guard against a plan writing in circles.
    pub(super) instant: (u64, u32),
    /// How rehearsed gates answer, by namespace, pod (or set) and gate.
    pub faults: Faults,
}

#[derive(Debug, Clone)]
pub(super) struct Running {
    /// The script line that started it.
    pub(super) line: usize,
    pub(super) run: Box<Run>,
    /// The agenda's wake-up for this plan (one at a time).
    pub(super) wake: Option<Ticket>,
    /// A rehearsed gate under way: when it answers (virtual ms) and how.
    pub(super) gate: Option<(u64, crate::plan::gate::Outcome)>,
}

impl Planner {
    /// A change of a set or a pod in a namespace a plan under way has a member in (a fleet
    /// rehearsed has them in several): evaluate again.
    pub fn observe(&mut self, change: &Change) {
        let kind = change.object.kind();
        if self.runs.is_empty() || !matches!(kind, ObjKind::Set | ObjKind::Pod | ObjKind::Budget) {
            return;
        }
        let ns = change.object.metadata().namespace.as_deref().unwrap_or_default();
        if self.runs.values().any(|r| r.run.sets().iter().any(|k| k.namespace == ns)) {
            self.dirty = true;
        }
    }

    /// A plan's bake or `stuck-after` came due.
    pub fn wake(&mut self) {
        self.dirty = true;
    }

    /// Whether a plan is to be evaluated now.
    pub fn wants_run(&self) -> bool {
        self.dirty && !self.runs.is_empty()
    }

    /// Whether a plan runs on `set`.
    pub fn runs_on(&self, set: &ObjRef) -> bool {
        self.runs.values().any(|r| r.run.sets().contains(set))
    }
}

/// How rehearsed gates answer: (namespace, pod or set, gate) → fault.
pub type Faults = BTreeMap<(String, String, GateKind), Fault>;

/// How one rehearsed gate answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fault {
    pub fail: bool,
    pub slow_ms: Option<u64>,
    /// "Not yet" answers left.
    pub not_yet: u32,
    pub leader: Option<String>,
}
