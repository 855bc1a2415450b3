//! The engine's start: another runner refused (or waited out), the plan resolved against
//! what this invocation asks, the lease taken, the first move on a fresh read.
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::*;
use crate::plan::group::held::{First, Held};

impl Engine {
    /// Resolves the plan (refused: nothing written), then takes the lease.
    pub(super) fn begin(&mut self, view: &View<'_>, since: Option<Timestamp>) -> Act {
        let set = &self.current(view).clone();
        let name = self.cfg.set.name.clone();
        // Another runner first: two runners never drive one plan, whatever this one asks —
        // unless its lease claims more than any runner writes (forged, or broken).
        let taken = match self.past_overclaim(view.now, set) {
            Ok(taken) => taken,
            Err(act) => return *act,
        };
        match Runner::of(set, view.now) {
            Runner::Live(l) if !taken && !self.cfg.dead.as_ref().is_some_and(|d| *d == l) => {
                let words = crate::text::shown(&l.words(), 200);
                if self.cfg.wait_lease {
                    let until = l.expires.parse::<Timestamp>().ok();
                    let words = format!("waiting for the lease of {words} to run out");
                    return Act::Wait { until, words };
                }
                return self.refuse(
                    format!(
                        "a plan runner holds it: {words}; two runners never drive one plan (wait \
                         for it to end, stop it — its lease then runs out — or pass --wait-lease)"
                    ),
                    false,
                );
            }
            _ => {}
        }
        if let Some(why) = self.in_a_group(set, view.now) {
            return self.refuse(why, false);
        }
        let Some(update) = decide::observed_update_revision(set).map(str::to_string) else {
            let since = since.unwrap_or(view.now);
            self.stage = Stage::Begin { since: Some(since) };
            let words = format!("waiting for the controller to observe {name}'s spec");
            let Some(limit) = self.cfg.observe_spec else {
                return Act::Wait { until: None, words };
            };
            if view.now >= since + limit {
                return self.refuse(
                    format!(
                        "the controller has not observed {name}'s spec (generation {}) within {}: \
                         is it running?",
                        set.metadata.generation.unwrap_or(0),
                        crate::plan::duration_words(millis(limit))
                    ),
                    false,
                );
            }
            return Act::Wait { until: Some(view.now + SignedDuration::from_secs(1)), words };
        };
        match resolve(&record::read(set), Some(&update), &self.ask, &name) {
            Err(r) => return self.refuse(r.message, r.usage),
            // A new plan that cannot begin is refused before anything is written; one that can
            // is shown (the adapter prints it) before the lease.
            Ok(Begin::New(steps)) => {
                let start = self.start(steps);
                if let Err(why) = crate::plan::start::begin(&start, &self.facts(view, set)) {
                    return self.refuse(why.to_string(), false);
                }
                self.began = Some((Box::new(set.clone()), start));
            }
            // A resume is shown too, with this invocation's steps (the only ones it takes),
            // from where the set is now.
            Ok(Begin::Resume { record, .. }) => {
                if let Ok(steps) = record.parsed_steps() {
                    self.began = Some((Box::new(set.clone()), self.start(steps)));
                }
            }
        }
        let text = self.lease_text(view.now);
        let seen = record::lease_text(set);
        self.send(view.now, Sending::Lease(text.clone()), None);
        lease_write(&self.cfg.set, Some(text), seen)
    }

    /// Another runner's lease that claims more than a runner writes (or does not read): taken
    /// over with `--force` (or once nobody renews it, with `--wait-lease`; meanwhile waited
    /// for), else refused naming both. `Ok(true)`: taken over; `Ok(false)`: no such lease.
    fn past_overclaim(&mut self, now: Timestamp, set: &StatefulSet) -> Result<bool, Box<Act>> {
        use crate::plan::overclaim::{Past, seen};
        let whose = "a plan runner's lease";
        let at = (now, self.cfg.believe);
        let Some((claim, text)) = seen(set, record::LEASE, at, whose, self.cfg.dead.as_ref())
        else {
            return Ok(false);
        };
        let how = (self.cfg.take_overclaimed, self.cfg.wait_lease);
        match self.overclaim.judge(&text, &claim, now, self.cfg.hold, how) {
            Past::Take(words) => {
                self.say(None, words);
                Ok(true)
            }
            Past::Wait { until, words } => Err(Box::new(Act::Wait { until: Some(until), words })),
            Past::Refuse(why) => Err(Box::new(self.refuse(why, false))),
        }
    }

    /// Why this plan may not run on `set`: a group's plan has it waiting or rolling (the group
    /// rolls it in turn; a plan of its own would be a second set in motion). `--force` runs it
    /// all the same (a group whose runner is gone for good). The engine does not see the
    /// group's first set, so any member in turn is held ([`Held::Unknown`] at best).
    fn in_a_group(&self, set: &StatefulSet, now: Timestamp) -> Option<String> {
        let held = Held::of(set, |_| First::Unseen, now);
        let p = held.part()?;
        if self.cfg.group.as_deref() == Some(p.group.as_str()) || self.ask.force {
            return None;
        }
        Some(format!(
            "it is {}: the group rolls it in turn (rerun the group's rollout to resume it, \
             `ststui abort {}` reverts the group, --force runs a plan on this set alone)",
            p.place_words(),
            self.cfg.set.name
        ))
    }

    /// A new plan of `steps` as this invocation asks it.
    fn start(&self, steps: crate::plan::Steps) -> Start {
        Start {
            steps,
            bake_seconds: self.ask.bake_seconds,
            checks: self.ask.checks.clone(),
            on_failure: self.ask.on_failure,
            by: self.ask.by.clone(),
            gates: self.ask.gates.clone(),
        }
    }

    /// Whether the lease `set` holds is this run's (its holder is filled in on the way when
    /// empty, so host, process and expiry tell).
    pub(super) fn ours(&self, set: &StatefulSet) -> bool {
        let Some(mine) = self.lease.text() else { return false };
        same_lease(record::lease_text(set).as_deref(), mine)
    }

    /// The precondition of our next lease write: the set's text when it is ours.
    pub(super) fn seen(&self, set: &StatefulSet) -> Option<String> {
        if self.ours(set) { record::lease_text(set) } else { self.lease.text().map(str::to_string) }
    }

    pub(super) fn refuse(&mut self, why: String, usage: bool) -> Act {
        self.stage = Stage::Over { end: End::Refused { why, usage }, released: true };
        self.end_act()
    }

    pub(super) fn read(&mut self, now: Timestamp) -> Act {
        self.reading = Some(now);
        Act::Read
    }

    pub(super) fn lease_text(&self, now: Timestamp) -> String {
        let l = Lease {
            holder: self.ask.by.clone(),
            host: self.cfg.host.clone(),
            pid: self.cfg.pid,
            expires: stamp(now + self.cfg.hold),
        };
        serde_json::to_string(&l).unwrap_or_default()
    }

    pub(super) fn send(&mut self, now: Timestamp, what: Sending, said: Option<Said>) {
        self.sent = Some(Sent { what, at: now, said, answered: false });
    }

    /// The first move, on fresh data: a new plan's first step, or the resumed plan.
    pub(super) fn first(&mut self, view: &View<'_>, set: &StatefulSet, fresh: bool) -> Act {
        if !fresh {
            return self.read(view.now);
        }
        let name = self.cfg.set.name.clone();
        let update = decide::observed_update_revision(set).map(str::to_string);
        let begin = match resolve(&record::read(set), update.as_deref(), &self.ask, &name) {
            Ok(b) => b,
            Err(r) => {
                self.stage = Stage::Over {
                    end: End::Refused { why: r.message, usage: r.usage },
                    released: false,
                };
                return self.over_now(set);
            }
        };
        match begin {
            Begin::New(steps) => {
                let start = self.start(steps);
                match crate::plan::start::begin(&start, &self.facts(view, set)) {
                    Err(why) => {
                        self.stage = Stage::Over {
                            end: End::Refused { why: why.to_string(), usage: false },
                            released: false,
                        };
                        self.over_now(set)
                    }
                    Ok(next) => {
                        let record = match &next {
                            Next::Open { record, .. } | Next::Record(record) => record.clone(),
                            _ => return self.act(view, set, &Record::default_for(&start), next),
                        };
                        self.mine = Some(record.clone());
                        self.landing = true;
                        self.act(view, set, &record, next)
                    }
                }
            }
            Begin::Resume { record, rewrite } => {
                // What this command states anew (a continue or a forced resume) is said: it is
                // recorded over what the record held.
                let restated = crate::plan::ask::differences(&record, &self.ask);
                let restated = match restated.is_empty() {
                    true => String::new(),
                    false => format!(" (this command's, recorded: {})", restated.join("; ")),
                };
                let words = match record.phase {
                    Phase::Halted => format!(
                        "continuing the plan halted at {}/{}: {}",
                        record.step,
                        record.of,
                        record.reason_said().unwrap_or("no reason recorded".into())
                    ),
                    _ => format!("resuming: {}", record.words(view.now)),
                };
                let words = format!("{words}{restated}");
                self.say(Some(&record), words);
                match rewrite {
                    Some(w) => {
                        self.mine = Some((*w).clone());
                        self.landing = true;
                        let w = Record { since: stamp(view.now), ..*w };
                        self.act(view, set, &record, Next::Record(w))
                    }
                    None => {
                        self.mine = Some(*record);
                        self.run(view, fresh)
                    }
                }
            }
        }
    }
}
