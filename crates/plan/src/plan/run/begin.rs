//! The run's first turn: one set's plan handed to its engine; a group's other drivers refused
//! (a set missing, rollout-operator, another group runner's lease, a member another runner or
//! group drives, a set rolling by itself), its run resumed or begun, its lease taken.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::*;

impl Run {
    /// Another runner or driver refused, the run resumed or begun, the group's lease taken.
    pub(super) fn begin(&mut self, view: &RunView<'_>) -> Step {
        let now = view.now;
        // One set's plan: its engine refuses, resumes and takes its lease.
        if self.solo {
            self.stage = Stage::Rolling { index: 0 };
            return self.rolling(view, 0);
        }
        if let Some(stop) = self.driven_by_another(view) {
            return stop;
        }
        let sets: Vec<&StatefulSet> = view.members.iter().filter_map(|m| m.set).collect();
        let Some(anchor) = self.anchor(view) else { return self.refuse("an empty group".into()) };
        // Whether a set rolls by itself is known once the controller has observed its spec.
        if let Some((i, set)) =
            sets.iter().enumerate().find(|(_, s)| decide::observed_update_revision(s).is_none())
        {
            return self.unobserved(now, i, set);
        }
        // The run resumed: the first set's part, of this group and these sets.
        let names: Vec<String> = self.cfg.sets.iter().map(|s| s.name.clone()).collect();
        // The same sets in the same order named another way (`--group a,b,c`, a pattern, the
        // label): the group recorded on them, resumed under its own name.
        let unfinished =
            sets.iter().any(|s| matches!(part::read(s).any(), Some(p) if p.state != State::Done));
        if let Some(p) = part::read(anchor).any()
            && p.sets == names
            && part::same_clusters(p.clusters.as_deref(), self.cfg.clusters.as_deref())
            && p.group != self.cfg.group
            && unfinished
        {
            let recorded = crate::text::escape_controls(&p.group).into_owned();
            self.say(
                0,
                format!("the same sets, in the same order, as rollout group {recorded}'s plan: it is resumed"),
            );
            self.cfg.group = p.group.clone();
        }
        let resumed = part::read(anchor)
            .any()
            .filter(|p| {
                p.group == self.cfg.group
                    && p.sets == names
                    && part::same_clusters(p.clusters.as_deref(), self.cfg.clusters.as_deref())
            })
            .filter(|_| {
                sets.iter()
                    .any(|s| matches!(part::read(s).any(), Some(p) if p.state != State::Done))
            })
            .map(|p| p.started.clone());
        if let Some(why) = self.members_refuse(&sets, now, resumed.as_deref()) {
            return self.refuse(why);
        }
        match &resumed {
            Some(s) => {
                self.started = Some(s.clone());
                let kind = self.kind_word();
                self.say(0, format!("resuming the {kind}'s plan started {s}"));
            }
            None => self.started = Some(stamp(now)),
        }
        self.lease_write(view, false)
    }

    /// A set missing, rollout-operator's group, or another group runner's live lease: refused
    /// (or, with `--wait-lease`, waited out).
    fn driven_by_another(&mut self, view: &RunView<'_>) -> Option<Step> {
        let now = view.now;
        if let Some((i, _)) = view.members.iter().enumerate().find(|(_, m)| m.set.is_none()) {
            return Some(self.refuse(format!("statefulset {} not found", self.cfg.sets[i])));
        }
        let sets: Vec<&StatefulSet> = view.members.iter().filter_map(|m| m.set).collect();
        if let Some(g) = part::rollout_operator(&sets) {
            return Some(self.refuse(format!(
                "grafana/rollout-operator drives this group (every set is OnDelete and labelled \
                 {}={g}): ststui shows it and does not fight another driver",
                part::ROLLOUT_GROUP
            )));
        }
        let anchor = self.anchor(view)?;
        let taken = match self.past_overclaim(now, anchor) {
            Ok(taken) => taken,
            Err(step) => return Some(*step),
        };
        match Runner::of_in(anchor, part::LEASE, now) {
            Runner::Live(l) if !taken && self.cfg.engine.dead.as_ref() != Some(&l) => {
                let words = crate::text::shown(&l.words(), 200);
                if self.cfg.engine.wait_lease {
                    let until = l.expires.parse::<Timestamp>().ok();
                    let words = format!("waiting for the group's lease of {words} to run out");
                    return Some(wait(until, &words));
                }
                let (kind, first) = (self.kind_word(), self.label(0));
                return Some(self.refuse(format!(
                    "a {kind} runner holds it: {words} (on {first}); two runners never drive one \
                     {kind}"
                )));
            }
            _ => {}
        }
        None
    }

    /// Another group runner's lease on the first set that claims more than a runner writes (or
    /// does not read): taken over with `--force` (or once nobody renews it, with
    /// `--wait-lease`), else refused naming both — as a set's plan lease is.
    fn past_overclaim(&mut self, now: Timestamp, anchor: &StatefulSet) -> Result<bool, Box<Step>> {
        use crate::plan::overclaim::{Past, seen};
        let (term, believe) = (self.cfg.engine.hold, self.cfg.engine.believe);
        let whose = format!("the group's lease on {}", self.cfg.sets[0]);
        let dead = self.cfg.engine.dead.as_ref();
        let Some((claim, text)) = seen(anchor, part::LEASE, (now, believe), &whose, dead) else {
            return Ok(false);
        };
        let how = (self.cfg.engine.take_overclaimed, self.cfg.engine.wait_lease);
        match self.overclaim.judge(&text, &claim, now, term, how) {
            Past::Take(words) => {
                self.say(0, words);
                Ok(true)
            }
            Past::Wait { until, words } => Err(Box::new(wait(Some(until), &words))),
            Past::Refuse(why) => Err(Box::new(self.refuse(why))),
        }
    }

    /// A member's spec not yet observed: waited for (within `observe_spec`).
    fn unobserved(&mut self, now: Timestamp, i: usize, set: &StatefulSet) -> Step {
        let since = *self.unobserved.get_or_insert(now);
        let name = &self.cfg.sets[i].name;
        let words = format!("waiting for the controller to observe {name}'s spec");
        let Some(limit) = self.cfg.engine.observe_spec else { return wait(None, &words) };
        if now >= since + limit {
            return self.refuse(format!(
                "the controller has not observed {name}'s spec (generation {}) within {}: is \
                 it running?",
                set.metadata.generation.unwrap_or(0),
                crate::plan::duration_words(u64::try_from(limit.as_millis()).unwrap_or(0))
            ));
        }
        wait(Some(now + SignedDuration::from_secs(1)), &words)
    }

    /// Why a member may not be driven now: another runner's plan lease, another group's plan,
    /// or rolling by itself before the group began (`resumed`: the run's start when resumed).
    fn members_refuse(
        &self,
        sets: &[&StatefulSet],
        now: Timestamp,
        resumed: Option<&str>,
    ) -> Option<String> {
        let names: Vec<String> = self.cfg.sets.iter().map(|s| s.name.clone()).collect();
        for (i, set) in sets.iter().enumerate() {
            let key = &self.cfg.sets[i];
            if crate::core::spec::strategy(set).recreate {
                let name = set.metadata.name.clone().unwrap_or_default();
                let why = crate::plan::start::NoStart::RecreateInGroup { name };
                return Some(format!("{key}: {why}"));
            }
            let dead = self.cfg.engine.dead.as_ref();
            let believe = self.cfg.engine.believe;
            if let Runner::Live(l) = Runner::of(set, now)
                && !dead.is_some_and(|d| d.host == l.host && d.pid == l.pid)
            {
                // A lease claiming more than a runner writes is taken over by the member's
                // plan with --force (it says so); a believable one is never.
                let forged = crate::plan::overclaim::overclaims(Some(&l), now, believe);
                let words = crate::text::shown(&l.words(), 200);
                match (forged, self.cfg.engine.take_overclaimed) {
                    (true, true) => {}
                    (true, false) => {
                        let lease = format!("{key}: a plan runner's lease claims {words}");
                        let claim = crate::plan::overclaim::claim_words(&lease, believe);
                        return Some(format!("{claim}; --force takes it over"));
                    }
                    _ => return Some(format!("{key}: a plan runner holds it: {words}")),
                }
            }
            if let Some(p) = part::read(set).any()
                && matches!(p.state, State::Waiting | State::Rolling)
                && Some(p.started.as_str()) != resumed
                && !(p.group == self.cfg.group
                    && p.sets == names
                    && part::same_clusters(p.clusters.as_deref(), self.cfg.clusters.as_deref()))
                && !self.ask.force
            {
                return Some(format!(
                    "{key} is in another group's plan ({}, {}): a set rolls in one group at a \
                     time (--force takes it into this group, its part rewritten: only when that \
                     group's runner is gone for good)",
                    crate::text::clip(&crate::text::escape_controls(&p.group), 64),
                    p.state.word()
                ));
            }
        }
        // Every set that has to roll and has not begun must be held: the group moves one at a
        // time, and a set rolling by itself is a second one in motion.
        for (i, set) in sets.iter().enumerate() {
            if let Some(why) = unheld(set) {
                let started = resumed.is_some()
                    && part::read(set).any().is_some_and(|p| p.state != State::Waiting);
                if !started {
                    return Some(format!(
                        "{} rolls by itself ({why}): hold it first (`ststui freeze {}`); a group \
                         never has two sets in motion",
                        self.cfg.sets[i], self.cfg.sets[i].name
                    ));
                }
            }
        }
        None
    }
}
