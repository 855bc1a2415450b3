//! The engine's turns while it holds the lease: renewal, the record read and checked as
//! this run's, the decision (confirmed on a fresh read), the act; a halt and the end.
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::Timestamp;

use super::*;

impl Engine {
    /// The lease is ours: the plan runs.
    pub(super) fn run(&mut self, view: &View<'_>, fresh: bool) -> Act {
        let now = view.now;
        let set = self.current(view).clone();
        // Every verdict that ends the run rests on a fresh read too: a watch behind our own
        // write shows no record yet, or the lease before ours.
        if !fresh && self.ending_verdict(&set, now) {
            return self.read(now);
        }
        if let Some(stolen) = self.stolen(&set, now) {
            return stolen;
        }
        if self.renewal_due(now) {
            let text = self.lease_text(now);
            let seen = self.seen(&set);
            self.send(now, Sending::Lease(text.clone()), None);
            return lease_write(&self.cfg.set, Some(text), seen);
        }
        if let Some(None) = self.checking {
            let at = self.mine.as_ref().map(|r| format!("{}: ", said::at(r))).unwrap_or_default();
            let words = format!("{at}running the step's checks");
            return Act::Wait { until: self.lease.renew_at(), words };
        }
        if let Some(words) = self.gate_pending() {
            let at = self.mine.as_ref().map(|r| format!("{}: ", said::at(r))).unwrap_or_default();
            return Act::Wait { until: self.lease.renew_at(), words: format!("{at}{words}") };
        }
        let Some(mine) = self.mine.clone() else { return self.first(view, &set, fresh) };
        if self.landing && fresh && !self.landed(&set, &mine) {
            // Our first write never reached the set: nothing of this run is there to go on
            // from, so it begins again on what the set holds (a new plan, or the one there).
            self.landing = false;
            self.mine = None;
            return self.first(view, &set, fresh);
        }
        let current = match record::read(&set) {
            Reading::Plan(r) => r,
            Reading::None => {
                let why = format!("{}'s plan record is gone", self.cfg.set);
                return self.taken(&set, why);
            }
            Reading::Invalid(why) => {
                let why = Reading::invalid_words(&why, &self.cfg.set.name);
                return self.taken(&set, why);
            }
        };
        if current.phase == Phase::Aborted {
            let who =
                current.reason_said().map_or_else(|| "ststui abort".into(), |r| r.into_owned());
            let why = format!("the plan was aborted ({})", crate::text::escape_controls(&who));
            self.stage =
                Stage::Over { end: End::Stopped { why, kind: Stop::Aborted }, released: false };
            return self.over_now(&set);
        }
        if current.started != mine.started {
            return self.taken(&set, "another plan replaced this one on the set".into());
        }
        let changed = crate::plan::ask::differences(&current, &self.ask_of(&mine));
        if self.gate_done() && changed.is_empty() {
            // A gate's verdict rests on a fresh read, as every move does.
            if !fresh {
                return self.read(now);
            }
            return self.judge_gate(view, &set, &current);
        }
        let next = if !changed.is_empty() && !current.phase.over() {
            let why =
                format!("the plan's record was changed by another writer: {}", changed.join("; "));
            Next::Halt(decide::halted(&current, now, why))
        } else if let Some(Some(outcome)) = self.checking.clone() {
            match outcome {
                Ok(()) => decide::advance(&current, &self.facts(view, &set)),
                Err(failed) => Next::Halt(decide::halted(&current, now, failed.to_string())),
            }
        } else {
            decide::decide(&current, &self.facts(view, &set))
        };
        let next = match next {
            Next::Check if self.cfg.runs_checks && !self.ask.checks.is_empty() => {
                if !fresh {
                    return self.read(now);
                }
                // Entering the phase said "running N check(s)" already.
                self.checking = Some(None);
                let env = said::check_env(&self.cfg.set, &current, &set);
                return Act::Check { checks: self.ask.checks.clone(), env };
            }
            Next::Check => decide::advance(&current, &self.facts(view, &set)),
            n => n,
        };
        if !matches!(next, Next::Wait(_)) && !fresh {
            return self.read(now);
        }
        self.checking = None;
        self.act(view, &set, &current, next)
    }

    /// Whether what `set` shows would end the run: another runner's live lease, or a record
    /// that is gone, invalid, aborted or another plan's.
    fn ending_verdict(&self, set: &StatefulSet, now: Timestamp) -> bool {
        let stolen = !self.ours(set) && self.sent.is_none() && Runner::of(set, now).alive();
        let Some(mine) = &self.mine else { return stolen };
        stolen
            || match record::read(set) {
                Reading::Plan(r) => r.phase == Phase::Aborted || r.started != mine.started,
                Reading::None | Reading::Invalid(_) => true,
            }
    }

    /// Whether `set` holds `mine` as this run's first write left it.
    fn landed(&self, set: &StatefulSet, mine: &Record) -> bool {
        record::read(set).plan().is_some_and(|r| {
            r.started == mine.started
                && crate::plan::ask::differences(r, &self.ask_of(mine)).is_empty()
        })
    }

    pub(super) fn renewal_due(&self, now: Timestamp) -> bool {
        matches!(self.stage, Stage::Run | Stage::Halt { .. }) && self.lease.due(now)
    }

    /// The lease on the set is another runner's: the run stops.
    pub(super) fn stolen(&mut self, set: &StatefulSet, now: Timestamp) -> Option<Act> {
        if self.ours(set) || self.sent.is_some() {
            return None;
        }
        match Runner::of(set, now) {
            Runner::Live(l) => {
                self.lease.lost();
                let why = format!("another runner took the plan's lease: {}", l.words());
                Some(self.taken(set, why))
            }
            _ => None,
        }
    }

    pub(super) fn taken(&mut self, set: &StatefulSet, why: String) -> Act {
        self.stage = Stage::Over { end: End::Stopped { why, kind: Stop::Taken }, released: false };
        self.over_now(set)
    }

    pub(super) fn over_now(&mut self, set: &StatefulSet) -> Act {
        self.seen_at_end = self.seen(set);
        match self.stage.clone() {
            Stage::Over { end, released } => self.over_view(end, released),
            _ => self.end_act(),
        }
    }

    /// What this run would ask of `r`: this invocation's bake, checks and policy, `r`'s steps.
    pub(super) fn ask_of(&self, r: &Record) -> Ask {
        Ask { steps: r.parsed_steps().ok(), ..self.ask.clone() }
    }

    /// Carries out a decision.
    pub(super) fn act(
        &mut self,
        view: &View<'_>,
        set: &StatefulSet,
        current: &Record,
        next: Next,
    ) -> Act {
        let now = view.now;
        let key = self.cfg.set.clone();
        match next {
            Next::Open { from, to, record } => {
                if let Some(words) = self.held_by_budget(view, set, &record) {
                    // A pre-delete gate's pass is for going now: asked again once it may.
                    self.forget_pre_delete();
                    if matches!(record::read(set), Reading::None) {
                        // A new plan's first step: nothing recorded yet, so begun again (on a
                        // fresh read) once the pause is over.
                        self.mine = None;
                        let again = view.now + self.cfg.retry;
                        self.trouble = Some((words.clone(), again));
                        return Act::Wait { until: Some(self.wake(again)), words };
                    }
                    return Act::Wait { until: self.lease.renew_at(), words };
                }
                let said = Said {
                    record: Some(record.clone()),
                    text: said::opened(set, &record, from, to),
                };
                self.send(now, Sending::Record(Box::new(record.clone())), Some(said));
                let text = json(&record);
                let op = ClusterOp::Plan { set: key, partition: Some((from, to)), record: text };
                Act::Write(Write::on(op, Some(Box::new(set.clone()))))
            }
            Next::Recreate { image, record } => {
                let said = Said {
                    record: Some(record.clone()),
                    text: said::recreating(set, &record, &image),
                };
                self.send(now, Sending::Record(Box::new(record.clone())), Some(said));
                let op = ClusterOp::PlanRecreate { set: key, image, record: json(&record) };
                Act::Write(Write::on(op, Some(Box::new(set.clone()))))
            }
            Next::Record(record) => {
                self.baseline =
                    (record.phase == Phase::Baking).then(|| decide::baseline(view.pods));
                let text = said::entered(set, &record);
                let said = Said { record: Some(record.clone()), text };
                self.send(now, Sending::Record(Box::new(record.clone())), Some(said));
                let op = ClusterOp::Plan { set: key, partition: None, record: json(&record) };
                Act::Write(Write::on(op, Some(Box::new(set.clone()))))
            }
            Next::Delete { pod, uid, record, stuck } => {
                let text = match &stuck {
                    Some(how) => format!(
                        "{}: evicted {pod}, stuck in {how} on an older revision (--replace-stuck: \
                         it served nothing; it comes back on the update revision)",
                        said::at(&record)
                    ),
                    None => format!(
                        "{}: evicted {pod} (OnDelete: it comes back on the update revision)",
                        said::at(&record)
                    ),
                };
                let facts = self.facts(view, set);
                self.offer = crate::plan::stuck::offer(
                    &crate::plan::stuck::in_step(&record, &facts),
                    &facts,
                );
                let said = Said { record: Some(record), text };
                self.send(now, Sending::Delete { pod: pod.clone(), uid: uid.clone() }, Some(said));
                let pod = ObjRef::new(key.namespace, pod);
                let op = ClusterOp::EvictPod { pod, uid: Some(uid) };
                Act::Write(Write::new(op))
            }
            Next::Halt(record) => {
                let recorded = current.phase == Phase::Halted;
                if recorded {
                    let text = said::halted(&record, set, now, view.frozen.is_some());
                    self.say(Some(&record), text);
                }
                self.stage =
                    Stage::Halt { record: Box::new(record.clone()), recorded, reverted: false };
                self.halting(view, record, recorded, false)
            }
            Next::Done => {
                self.stage =
                    Stage::Over { end: End::Done(Box::new(current.clone())), released: false };
                self.over_now(set)
            }
            Next::Wait(words) => {
                let until = wake(current, &self.facts(view, set)).map(|t| self.wake(t));
                Act::Wait {
                    until: until.or(self.lease.renew_at()),
                    words: format!("{}: {words}", said::at(current)),
                }
            }
            Next::Check => Act::Wait { until: self.lease.renew_at(), words: String::new() },
            Next::Gate { kind, key, pod, record } => {
                self.start_gate(view, set, &record, kind, key, pod)
            }
        }
    }

    /// Why a RollingUpdate step may not open now: a budget selecting the set's pods allows no
    /// disruption (the StatefulSet controller deletes the step's pods and asks none, so the plan
    /// asks for it). Said on the timeline once per change of the budget's words.
    fn held_by_budget(
        &mut self,
        view: &View<'_>,
        set: &StatefulSet,
        record: &Record,
    ) -> Option<String> {
        if crate::core::spec::strategy(set).on_delete {
            return None;
        }
        let pdb = budget_refusing(view)?;
        let words = format!(
            "{}: waits to open: {pdb} (the controller deletes a rolling update's pods without \
             asking it)",
            said::at(record)
        );
        if self.held.as_deref() != Some(words.as_str()) {
            self.say(Some(record), words.clone());
            self.held = Some(words.clone());
        }
        Some(words)
    }

    /// Forgets every pre-delete pass of this run: a pass is the last word before a pod goes,
    /// good for going at once; a wait (a budget, a failed write) means asking again.
    pub(super) fn forget_pre_delete(&mut self) {
        use crate::plan::gate::{GateKind, Key};
        self.gating.passed.retain(|k, _| !matches!(k, Key::Pod(GateKind::PreDelete, _)));
    }

    /// A halt: recorded, `--on-failure undo` carried out (never under a freeze), then over.
    pub(super) fn halting(
        &mut self,
        view: &View<'_>,
        record: Record,
        recorded: bool,
        reverted: bool,
    ) -> Act {
        let set = self.current(view).clone();
        if !recorded {
            let text = said::halted(&record, &set, view.now, view.frozen.is_some());
            let said = Said { record: Some(record.clone()), text };
            self.send(view.now, Sending::Record(Box::new(record.clone())), Some(said));
            let op = ClusterOp::Plan {
                set: self.cfg.set.clone(),
                partition: None,
                record: json(&record),
            };
            return Act::Write(Write::on(op, Some(Box::new(set))));
        }
        // Never under an operator's freeze (one taken after the plan began); a freeze the plan
        // took over when it began is the plan's.
        let operators = crate::plan::freeze::holding(&set).is_some_and(|f| !f.before(&record));
        let undo = self.ask.on_failure == OnFailure::Undo && !operators;
        if undo && !reverted {
            self.stage = Stage::Halt { record: Box::new(record.clone()), recorded, reverted: true };
            let stuck = decide::stuck_on(&record.revision, view.pods);
            return Act::Revert { basis: Box::new(set), revision: record.revision, stuck };
        }
        // Undone: as `ststui abort` does, the plan ends aborted with the partition from before
        // it (and its freeze) back, once the template is reverted (lowered before, the broken
        // revision would roll).
        if undo && self.undone == Some(true) && !self.restored {
            self.restored = true;
            let why = format!(
                "{}; undone (--on-failure undo): the template reverted",
                record.reason_said().unwrap_or("halted".into())
            );
            let (aborted, back) = decide::aborted(&record, &set, view.now, why);
            let text = match back {
                Some((from, to)) if from != to => format!(
                    "{}: the plan is aborted; partition {from} → {to}, where the plan began",
                    said::at(&aborted)
                ),
                _ => format!("{}: the plan is aborted", said::at(&aborted)),
            };
            let said = Said { record: Some(aborted.clone()), text };
            self.send(view.now, Sending::Record(Box::new(aborted.clone())), Some(said));
            let op = ClusterOp::Plan {
                set: self.cfg.set.clone(),
                partition: back,
                record: json(&aborted),
            };
            // Decided on the set as the server holds it after the revert.
            return Act::Write(Write::new(op));
        }
        self.stage = Stage::Over { end: End::Halted(Box::new(record)), released: false };
        self.over_now(&set)
    }

    pub(super) fn over(&mut self, view: &View<'_>, end: End, released: bool) -> Act {
        self.seen_at_end = self.seen(self.current(view));
        self.over_view(end, released)
    }

    /// Gives the lease back (not awaited: it runs out anyway), then ends.
    pub(super) fn over_view(&mut self, end: End, released: bool) -> Act {
        if !released && self.lease.give_back().is_some() {
            self.stage = Stage::Over { end, released: true };
            return lease_write(&self.cfg.set, None, self.seen_at_end.take());
        }
        self.stage = Stage::Over { end: end.clone(), released: true };
        Act::End(end)
    }
}

/// A disruption budget over the set's pods that allows no disruption now, described (a
/// budget's words come from its status, written by the disruption controller).
pub(super) fn budget_refusing(view: &View<'_>) -> Option<String> {
    let pdb = view.budgets.iter().copied().find(|b| {
        let allowed = b.status.as_ref().and_then(|s| s.disruptions_allowed).unwrap_or(0);
        allowed <= 0 && view.pods.iter().any(|(_, p)| crate::core::budget::selects(b, p))
    })?;
    Some(crate::core::budget::describe(pdb))
}
