//! The server's answers to the run: how its last write went (a conflict read again, a lease
//! lost, a refusal), and a fresh read that failed — between members, reads failing longer than
//! the lease's slack stop the run at the member not read (a cluster out of reach halts a fleet
//! there; it is never skipped).

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::Timestamp;

use super::*;

impl Run {
    /// How the last write went (the group's own, or the rolling set's plan's).
    pub fn wrote(&mut self, now: Timestamp, result: Result<Option<StatefulSet>, Box<Failure>>) {
        match self.sent.take() {
            Some(Sent::Inner) => {
                if let Some(inner) = self.inner.as_mut() {
                    inner.wrote(now, result);
                }
            }
            Some(Sent::Lease { text, at }) => match result {
                Ok(_) => {
                    self.trouble = None;
                    self.lease.landed(text, at, now, self.cfg.engine.terms());
                    if matches!(self.stage, Stage::Begin) {
                        self.stage = Stage::Mark { next: 0 };
                    }
                }
                Err(f) => self.failed(now, "the group's lease", *f, true),
            },
            Some(Sent::Image { index }) => match result {
                Ok(_) => {
                    self.trouble = None;
                    self.imaged[index] = true;
                }
                Err(f) => {
                    let what = format!("{}'s image", self.label(index));
                    self.failed(now, &what, *f, false);
                }
            },
            Some(Sent::Part { index, part }) => match result {
                Ok(_) => {
                    self.trouble = None;
                    self.parts[index] = Some(*part);
                }
                Err(f) => {
                    let what = format!("{}'s part of the group", self.cfg.sets[index].name);
                    self.failed(now, &what, *f, false);
                }
            },
            // One set's writes are its engine's alone (it waits for them itself).
            None if self.solo => {
                if let Some(inner) = self.inner.as_mut() {
                    inner.wrote(now, result);
                }
            }
            None => {}
        }
    }

    fn failed(&mut self, now: Timestamp, what: &str, f: Failure, lease: bool) {
        let words = format!("{what}: {}", f.message);
        match f.kind {
            FailureKind::Conflict if lease => {
                let begun = !matches!(self.stage, Stage::Begin);
                self.lease.lost();
                let end = if begun {
                    RunEnd::Stopped { why: words, kind: Stop::Taken }
                } else {
                    RunEnd::Refused { why: words, usage: false }
                };
                self.stage = Stage::Over { end, released: true };
            }
            // Refused credentials are tried again, as the engine does (`Engine::wrote`).
            FailureKind::Forbidden | FailureKind::NotFound => {
                let why = format!("{words}; the sets stay where the plan left them");
                let kind =
                    if f.kind == FailureKind::NotFound { Stop::Taken } else { Stop::Unreachable };
                self.stage = Stage::Over {
                    end: RunEnd::Stopped { why, kind },
                    released: self.lease.text().is_none(),
                };
            }
            _ => {
                let again = now + self.cfg.engine.retry;
                // A renewal that failed is tried again after the pause (until the lease runs
                // out); a first lease is taken again by the begin turn.
                if lease {
                    self.lease.retry(again);
                }
                self.trouble = Some((words, again));
            }
        }
    }

    /// A fresh read of member `member` failed. Between members (none rolling), reads that fail
    /// for longer than the lease's slack stop the run at the member not read, named: a cluster
    /// out of reach halts a fleet there (it is never skipped), and the same command resumes it.
    pub fn read_failed(&mut self, now: Timestamp, member: usize, f: Failure) {
        if let Some(inner) = self.inner.as_mut() {
            return inner.read_failed(now, f);
        }
        let label = self.label(member);
        let words = format!("reading the {}: {label} not read: {}", self.kind_word(), f.message);
        let since = *self.unread.get_or_insert(now);
        let slack = self.cfg.engine.hold - self.cfg.engine.renew;
        let long = now.duration_since(since) >= slack;
        if !long || matches!(self.stage, Stage::Over { .. } | Stage::Close { .. }) {
            self.trouble = Some((words, now + self.cfg.engine.retry));
            return;
        }
        let where_ = match &self.cfg.clusters {
            Some(_) => "the fleet stops at it (no cluster is skipped)",
            None => "the group stops at it",
        };
        let why = format!(
            "{label} could not be read for {}s ({}): {where_}; the sets stay where the plan left \
             them (the same command resumes it)",
            slack.as_secs(),
            f.message
        );
        self.stage =
            Stage::Close { end: RunEnd::Stopped { why, kind: Stop::Unreachable }, last: None };
    }
}
