//! The run's turns after it began: each member's part marked, the next set held until the
//! group allows it, the rolling set's plan, and the end (the last part written, the lease given
//! back).

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::*;
use crate::plan::engine::same_lease;

impl Run {
    pub(super) fn lease_text(&self, now: Timestamp) -> String {
        let l = Lease {
            holder: self.ask.by.clone(),
            host: self.cfg.engine.host.clone(),
            pid: self.cfg.engine.pid,
            expires: stamp(now + self.cfg.engine.hold),
        };
        serde_json::to_string(&l).unwrap_or_default()
    }

    pub(super) fn lease_write(&mut self, view: &RunView<'_>, renewal: bool) -> Step {
        let text = self.lease_text(view.now);
        let held = self.anchor(view).and_then(|a| record::lease_text_in(a, part::LEASE));
        let seen = if renewal { self.lease.text().map(str::to_string).or(held) } else { held };
        self.sent = Some(Sent::Lease { text: text.clone(), at: view.now });
        self.acting = 0;
        let op = ClusterOp::GroupLease { set: self.cfg.sets[0].clone(), lease: Some(text), seen };
        Step::Do(Act::Write(Write::new(op)))
    }

    /// The part member `index` is to carry in `state`.
    pub(super) fn part(
        &self,
        index: usize,
        state: State,
        since: Timestamp,
        reason: Option<String>,
    ) -> Part {
        Part {
            group: self.cfg.group.clone(),
            sets: self.cfg.sets.iter().map(|s| s.name.clone()).collect(),
            place: index,
            state,
            since: stamp(since),
            by: self.ask.by.clone(),
            started: self.started.clone().unwrap_or_default(),
            steps: match &self.cfg.batches {
                Some(b) => {
                    let b: Vec<String> = b.iter().map(ToString::to_string).collect();
                    format!("batches {}", b.join(","))
                }
                None => self.ask.steps.as_ref().map(ToString::to_string).unwrap_or_default(),
            },
            zone_bake_seconds: self.cfg.zone_bake_seconds,
            reason,
            clusters: self.cfg.clusters.clone(),
            cluster_bake_seconds: self.cfg.cluster_bake_seconds,
            approval: None,
        }
    }

    pub(super) fn write_part(&mut self, index: usize, part: Part) -> Step {
        let text = serde_json::to_string(&part).unwrap_or_default();
        self.sent = Some(Sent::Part { index, part: Box::new(part) });
        self.acting = index;
        let op = ClusterOp::GroupPart { set: self.cfg.sets[index].clone(), part: Some(text) };
        Step::Do(Act::Write(Write::new(op)))
    }

    /// Each member's part: kept when of this run, else waiting.
    pub(super) fn mark(&mut self, view: &RunView<'_>, next: usize) -> Step {
        let started = self.started.clone().unwrap_or_default();
        for i in next..self.cfg.sets.len() {
            let Some(set) = view.members[i].set else { continue };
            let own = part::read(set)
                .any()
                .filter(|p| p.started == started && p.group == self.cfg.group)
                .cloned();
            match own {
                Some(p) => self.parts[i] = Some(p),
                None => {
                    self.stage = Stage::Mark { next: i + 1 };
                    let p = self.part(i, State::Waiting, view.now, None);
                    return self.write_part(i, p);
                }
            }
        }
        // A part saying done is believed when the set's pods say so too: a part anyone may
        // write never skips a set whose pods are not on the update revision.
        let mut first = None;
        for i in 0..self.cfg.sets.len() {
            let done = self.parts[i].as_ref().is_some_and(|p| p.state == State::Done);
            let member = &view.members[i];
            if done && member.set.is_some_and(|s| !done_by_pods(s, member.pods)) {
                let name = self.label(i);
                self.say(
                    i,
                    format!(
                        "{name}'s part says done, but its pods are not all on the update \
                         revision: not trusted, it rolls"
                    ),
                );
                first = Some(i);
                break;
            }
            if !done {
                first = Some(i);
                break;
            }
        }
        if let Some(i) = first {
            let left: Vec<String> = (i..self.cfg.sets.len()).map(|j| self.label(j)).collect();
            self.say(i, format!("to roll, in order: {}", left.join(", ")));
        }
        self.stage = match first {
            Some(index) => Stage::Hold { index, quiet: None },
            None => Stage::Close { end: RunEnd::Done, last: None },
        };
        self.next(view)
    }

    /// Member `index` starts once every pod of the group is fine (for the zone bake after the
    /// set before), on a fresh read.
    pub(super) fn hold(
        &mut self,
        view: &RunView<'_>,
        index: usize,
        quiet: Option<Timestamp>,
    ) -> Step {
        let now = view.now;
        if index >= self.cfg.sets.len() {
            self.say(
                index.saturating_sub(1),
                format!("done: every set of {} rolled", self.cfg.sets.len()),
            );
            self.stage = Stage::Close { end: RunEnd::Done, last: None };
            return self.next(view);
        }
        let Some(set) = view.members[index].set else {
            let why = format!("{} is gone", self.cfg.sets[index]);
            self.stage =
                Stage::Close { end: RunEnd::Stopped { why, kind: Stop::Taken }, last: None };
            return self.next(view);
        };
        let state = self.parts[index].as_ref().map(|p| p.state);
        // A set whose plan was under way when the last runner stopped goes on as soon as every
        // other set of the group allows it (its own pods are in motion): a part saying
        // "rolling" never skips the hold on the others.
        if matches!(state, Some(State::Rolling | State::Halted)) {
            let others: Vec<_> = (view.members.iter().enumerate())
                .filter(|(i, _)| *i != index)
                .map(|(_, m)| *m)
                .collect();
            if let Some(h) = crate::plan::group::hold(&others, now) {
                let words = format!("{} waits: {h}", self.label(index));
                return self.held_by(index, words, self.lease.renew_at());
            }
            return self.start(view, index, false);
        }
        // The run's image, once written, is the member's change: its controller observes it
        // before anything is judged on its pods (the stage, and its quiet, kept).
        let image_due = self.image_due(set);
        if self.imaged[index]
            && (image_due.is_some() || decide::observed_update_revision(set).is_none())
        {
            if !view.fresh && self.cfg.engine.fresh_reads {
                return Step::Do(Act::Read);
            }
            let words =
                format!("waiting for the controller to observe {}'s new image", self.label(index));
            return wait(Some(now + SignedDuration::from_secs(1)), &words);
        }
        if image_due.is_none() && nothing_to_roll(set, view.members[index].pods) {
            if !view.fresh && self.cfg.engine.fresh_reads {
                return Step::Do(Act::Read);
            }
            let rev = decide::observed_update_revision(set).unwrap_or_default().to_string();
            self.say(
                index,
                format!("{}: nothing to roll (every pod runs {rev})", self.label(index)),
            );
            self.stage = Stage::Hold { index: index + 1, quiet };
            let p = self.part(index, State::Done, now, Some("nothing to roll".into()));
            return self.write_part(index, p);
        }
        if let Some(h) = crate::plan::group::hold(view.members, now) {
            let words = format!("{} waits: {h}", self.label(index));
            self.stage = Stage::Hold { index, quiet: None };
            return self.held_by(index, words, self.lease.renew_at());
        }
        let quiet = quiet.unwrap_or(now);
        self.stage = Stage::Hold { index, quiet: Some(quiet) };
        let bake_from = self.baked_from(index).map_or(quiet, |d| d.max(quiet));
        let (seconds, bake) = self.bake_before(index);
        let until = crate::plan::later(
            bake_from,
            SignedDuration::from_secs(i64::try_from(seconds).unwrap_or(i64::MAX)),
        );
        if index > 0 && now < until {
            let words = format!(
                "{} starts at {} after the {bake} ({} with every pod of the {} updated or \
                 untouched, Ready and available)",
                self.label(index),
                stamp(until),
                crate::plan::duration_words(seconds * 1000),
                self.kind_word()
            );
            let until = self.lease.wake(until);
            return self.held_by(index, words, Some(until));
        }
        if let Some(step) = self.approval(view, index) {
            return step;
        }
        if !view.fresh && self.cfg.engine.fresh_reads {
            return Step::Do(Act::Read);
        }
        if let Some(image) = image_due {
            self.say(index, format!("{}: image {image} set, its turn come", self.label(index)));
            self.sent = Some(Sent::Image { index });
            self.acting = index;
            let op = ClusterOp::SetImage { set: self.cfg.sets[index].clone(), image };
            return Step::Do(Act::Write(Write::new(op)));
        }
        self.start(view, index, true)
    }

    /// The bake before member `index` starts, and its name: a fleet's cluster bake before the
    /// first member of each next cluster, else the zone bake.
    fn bake_before(&self, index: usize) -> (u64, &'static str) {
        match part::crosses(self.cfg.clusters.as_deref(), index) {
            true => (self.cfg.cluster_bake_seconds, "cluster bake"),
            false => (self.cfg.zone_bake_seconds, "zone bake"),
        }
    }

    /// The run's image, when `set` does not hold it yet.
    fn image_due(&self, set: &StatefulSet) -> Option<String> {
        let image = self.cfg.image.as_ref()?;
        (crate::plan::recreate::first_image(set) != Some(image.as_str())).then(|| image.clone())
    }

    /// A wait before member `index` starts: said on the timeline once per change of `words`
    /// (the wait itself then says nothing more).
    pub(super) fn held_by(
        &mut self,
        index: usize,
        words: String,
        until: Option<Timestamp>,
    ) -> Step {
        if self.held.as_deref() == Some(words.as_str()) {
            return wait(until, "");
        }
        self.say(index, words.clone());
        self.held = Some(words);
        wait(until, "")
    }

    /// When the set before `index` was done (its part's since).
    pub(super) fn baked_from(&self, index: usize) -> Option<Timestamp> {
        let before = self.parts.get(index.checked_sub(1)?)?.as_ref()?;
        before.since.parse::<Timestamp>().ok()
    }

    /// Member `index`'s plan begins (its part says rolling first when `mark`).
    pub(super) fn start(&mut self, view: &RunView<'_>, index: usize, mark: bool) -> Step {
        self.held = None;
        if mark {
            let n = self.cfg.sets.len();
            let of = self.kind_word();
            self.say(index, format!(
                "{} starts ({}/{n}): every pod of the {of} is updated or untouched, Ready and available",
                self.label(index),
                index + 1
            ));
            self.stage = Stage::Rolling { index };
            let p = self.part(index, State::Rolling, view.now, None);
            return self.write_part(index, p);
        }
        self.stage = Stage::Rolling { index };
        self.next(view)
    }

    /// Member `index`'s plan engine: this run's ask (a group's batches resolved on the set's
    /// replicas), the dead runner's plan lease on it taken over.
    fn member_engine(&self, view: &RunView<'_>, index: usize) -> Engine {
        let key = self.cfg.sets[index].clone();
        // The set's plan lease of the dead runner whose group lease this run took over (one
        // set's: the adapter's own finding).
        let dead = match self.solo {
            true => self.cfg.engine.dead.clone(),
            false => self.cfg.engine.dead.as_ref().and_then(|d| {
                view.members[index]
                    .set
                    .and_then(record::lease)
                    .filter(|l| l.host == d.host && l.pid == d.pid)
            }),
        };
        let group = (!self.solo).then(|| self.cfg.group.clone());
        let cfg = Config { set: key, group, dead, ..self.cfg.engine.clone() };
        let mut ask = self.ask.clone();
        if let (Some(b), Some(set)) = (&self.cfg.batches, view.members[index].set) {
            ask.steps = Some(super::batch_steps(b, crate::core::spec::replicas(set)));
        }
        Engine::new(cfg, ask)
    }

    /// The rolling set's plan: its acts pass through; its end is recorded on its part.
    pub(super) fn rolling(&mut self, view: &RunView<'_>, index: usize) -> Step {
        let key = self.cfg.sets[index].clone();
        if self.inner.is_none() || self.inner_at != index {
            self.inner = Some(self.member_engine(view, index));
            self.inner_at = index;
        }
        self.acting = index;
        let m = view.members[index];
        // The run's image written, a watch that does not show it yet is not what the member's
        // plan begins on.
        if self.imaged[index] && !view.fresh && m.set.is_some_and(|s| self.image_due(s).is_some()) {
            return Step::Do(Act::Read);
        }
        let empty = StatefulSet::default();
        let set = m.set.unwrap_or(&empty);
        if m.set.is_none()
            && let Some(inner) = self.inner.as_mut()
        {
            inner.stop(format!("{key} no longer exists"));
        }
        let v = View {
            set,
            pods: m.pods,
            now: view.now,
            min_ready: m.min_ready,
            frozen: m.frozen,
            fresh: view.fresh,
            budgets: view.budgets,
        };
        let Some(inner) = self.inner.as_mut() else { return wait(None, "") };
        let act = inner.next(&v);
        let end = match act {
            Act::End(end) => end,
            Act::Write(w) => {
                if !self.solo {
                    self.sent = Some(Sent::Inner);
                }
                return Step::Do(Act::Write(w));
            }
            other => return Step::Do(other),
        };
        // Its lines before the group's.
        self.said.extend(inner.said().into_iter().map(|s| (index, s)));
        self.ended = inner.plan().cloned();
        self.inner = None;
        if self.solo {
            let end = match end {
                End::Done(_) => RunEnd::Done,
                End::Halted(record) => RunEnd::Halted { set: key, record },
                End::Refused { why, usage } => RunEnd::Refused { why, usage },
                End::Stopped { why, kind } => RunEnd::Stopped { why, kind },
            };
            self.stage = Stage::Over { end: end.clone(), released: true };
            return Step::End(end);
        }
        let now = view.now;
        match end {
            End::Done(_) => {
                let n = self.cfg.sets.len();
                self.say(index, format!("{} done ({}/{n})", self.label(index), index + 1));
                self.stage = Stage::Hold { index: index + 1, quiet: None };
                let p = self.part(index, State::Done, now, None);
                self.write_part(index, p)
            }
            End::Halted(record) => {
                let why = record.reason_said().map_or_else(|| "halted".into(), |r| r.into_owned());
                let rest: Vec<String> =
                    (index + 1..self.cfg.sets.len()).map(|j| self.label(j)).collect();
                let untouched = if rest.is_empty() {
                    String::new()
                } else {
                    format!("; {} untouched", rest.join(", "))
                };
                self.say(
                    index,
                    format!(
                        "halted at {}: {}{untouched}",
                        self.label(index),
                        crate::text::escape_controls(&why)
                    ),
                );
                let end = RunEnd::Halted { set: key, record };
                self.stage = Stage::Close { end, last: Some((index, State::Halted, Some(why))) };
                self.next(view)
            }
            End::Refused { why, usage } => {
                let end = RunEnd::Refused { why: format!("{key}: {why}"), usage };
                self.stage = Stage::Close { end, last: Some((index, State::Waiting, None)) };
                self.next(view)
            }
            End::Stopped { why, kind } => {
                self.stage = Stage::Close { end: RunEnd::Stopped { why, kind }, last: None };
                self.next(view)
            }
        }
    }

    pub(super) fn close(
        &mut self,
        view: &RunView<'_>,
        end: RunEnd,
        last: Option<(usize, State, Option<String>)>,
    ) -> Step {
        if let Some((index, state, reason)) = last
            && self.lease.text().is_some()
        {
            self.stage = Stage::Close { end, last: None };
            let p = self.part(index, state, view.now, reason);
            return self.write_part(index, p);
        }
        self.stage = Stage::Over { end, released: false };
        self.next(view)
    }

    pub(super) fn over(&mut self, view: &RunView<'_>, end: RunEnd, released: bool) -> Step {
        if !released && let Some(mine) = self.lease.give_back() {
            self.stage = Stage::Over { end, released: true };
            let held = self
                .anchor(view)
                .and_then(|a| a.metadata.annotations.as_ref()?.get(part::LEASE).cloned());
            let seen = held.filter(|h| same_lease(Some(h), &mine)).or(Some(mine));
            self.sent = None;
            self.acting = 0;
            let op = ClusterOp::GroupLease { set: self.cfg.sets[0].clone(), lease: None, seen };
            // Not awaited: it runs out anyway.
            return Step::Do(Act::Write(Write::new(op)));
        }
        self.stage = Stage::Over { end: end.clone(), released: true };
        Step::End(end)
    }
}
