//! What the adapter reports back: a write's outcome (its set, or a failure judged by kind:
//! another runner, a permission, a blip retried within the lease's slack), a failed read, the
//! checks' and the revert's outcomes.
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::Timestamp;

use super::*;

impl Engine {
    /// How the last [`Act::Write`] went: `Ok` with the set as the write left it when known.
    pub fn wrote(&mut self, now: Timestamp, result: Result<Option<StatefulSet>, Box<Failure>>) {
        let Some(sent) = self.sent.take() else { return };
        match result {
            // Written, but no object to decide on: the view is awaited (it shows the write
            // within the observe time, or it lags and the write counts all the same).
            Ok(None) if !matches!(sent.what, Sending::Delete { .. }) => {
                self.sent = Some(Sent { answered: true, ..sent });
            }
            Ok(set) => self.settled(now, Some(sent), set),
            Err(f) => self.failed(now, sent, *f),
        }
    }

    /// A write that landed (its answer, a read-back, or the view showing it).
    pub(super) fn settled(&mut self, now: Timestamp, sent: Option<Sent>, set: Option<StatefulSet>) {
        let Some(sent) = sent else { return };
        self.failing = None;
        if let Some(s) = set {
            self.known = Some(s);
        }
        if let Some(said) = sent.said {
            self.said.push(said);
        }
        match sent.what {
            Sending::Lease(text) => {
                self.lease.landed(text, sent.at, now, self.cfg.terms());
                if matches!(self.stage, Stage::Begin { .. }) {
                    self.stage = Stage::Run;
                }
            }
            Sending::Record(r) => {
                if let Stage::Halt { record, reverted, .. } = &self.stage {
                    self.stage =
                        Stage::Halt { record: record.clone(), recorded: true, reverted: *reverted };
                } else if self.mine.is_some() {
                    self.mine = Some(*r);
                    self.landing = false;
                }
            }
            Sending::Delete { .. } => self.held = None,
        }
    }

    pub(super) fn failed(&mut self, now: Timestamp, sent: Sent, f: Failure) {
        // What a pre-delete gate passed for did not happen: it is asked again before it does.
        if matches!(sent.what, Sending::Delete { .. } | Sending::Record(_)) {
            self.forget_pre_delete();
        }
        let what = match &sent.what {
            Sending::Lease(_) => "the plan's lease",
            Sending::Record(_) => "the plan's record",
            Sending::Delete { .. } => "a pod of the step",
        };
        let words = format!("{what}: {}", f.message);
        match (f.kind, &sent.what) {
            (FailureKind::Conflict, Sending::Lease(_))
                if matches!(self.stage, Stage::Begin { .. }) =>
            {
                self.stage =
                    Stage::Over { end: End::Refused { why: words, usage: false }, released: true };
            }
            (FailureKind::Conflict, Sending::Lease(_)) => {
                self.lease.lost();
                self.stage = Stage::Over {
                    end: End::Stopped { why: words, kind: Stop::Taken },
                    released: true,
                };
            }
            (FailureKind::Forbidden, _) => {
                let released = matches!(self.stage, Stage::Begin { .. });
                self.stage = Stage::Over {
                    end: End::Stopped {
                        why: format!("permission denied: {words}"),
                        kind: Stop::Unreachable,
                    },
                    released,
                };
            }
            (FailureKind::Unavailable | FailureKind::Unknown | FailureKind::Unauthorized, what) => {
                // Within the lease's slack: again after a pause, on a fresh read (the record on
                // the set tells whether it landed). Refused credentials too: the client
                // authenticates again (an exec plugin runs again), and a refusal that lasts
                // ends the plan when the lease runs out, saying so.
                if matches!(what, Sending::Lease(_)) {
                    self.lease.retry(now + self.cfg.retry);
                }
                self.failing = Some(words.clone());
                self.trouble = Some((words, now + self.cfg.retry));
                self.reading = None;
            }
            (FailureKind::Disruption, what) => {
                // A budget allows no disruption now: asked again after a pause, said once
                // (and again when the budget's words change).
                let pod = match what {
                    Sending::Delete { pod, .. } => pod.as_str(),
                    _ => "a pod",
                };
                let words = format!("evicting {pod}: {}{}", f.message, self.offer);
                if self.held.as_deref() != Some(words.as_str()) {
                    let record = sent.said.as_ref().and_then(|s| s.record.clone());
                    let at = record.as_ref().map(|r| format!("{}: ", said::at(r)));
                    let text =
                        format!("{}{words}; asked again until it allows", at.unwrap_or_default());
                    self.say(record.as_ref(), text);
                    self.held = Some(words.clone());
                }
                self.trouble = Some((words, now + self.cfg.retry));
            }
            _ => {
                // Refused on what the set holds now (moved, recreated, gone): decide again.
                self.trouble = Some((words, now));
            }
        }
    }

    /// A fresh read failed: tried again after a pause, within the lease's slack.
    pub fn read_failed(&mut self, now: Timestamp, f: Failure) {
        self.reading = None;
        let words = format!("reading the set: {}", f.message);
        self.failing = Some(words.clone());
        self.trouble = Some((words, now + self.cfg.retry));
    }

    /// The checks' outcome (`Err`: which failed and how, with its last output line).
    pub fn checked(&mut self, outcome: Result<(), super::CheckFailed>) {
        if self.checking.is_some() {
            self.checking = Some(Some(outcome));
        }
    }

    /// The revert's outcome (said by the adapter as it goes); the run ends halted either way.
    pub fn reverted(&mut self, outcome: Result<(), String>) {
        self.undone = Some(outcome.is_ok());
        if let Err(why) = outcome {
            self.say(None, format!("undo failed: {why}"));
        }
    }
}
