//! A runner's own lease as it holds it — the plan engine's on its set, a group run's on the
//! group's first set: one renewal for both (before, each kept its own three fields, and the
//! group's lacked the retry of a failed renewal until a later fix).
//!
//! What it keeps: the text last written (the next lease write's precondition), until when the
//! lease holds (counted from when the write was sent: the server may have stored it any time
//! after), and when it is renewed next. The lease's format is `record::Lease`. Pure.

use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// How often a lease is renewed, and for how long it holds.
#[derive(Debug, Clone, Copy)]
pub struct Terms {
    pub hold: SignedDuration,
    pub renew: SignedDuration,
}

/// The runner's own lease.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holding {
    text: Option<String>,
    until: Option<Timestamp>,
    renew_at: Option<Timestamp>,
}

impl Holding {
    /// The lease write of `text`, sent at `sent`, landed (its answer came at `now`).
    pub fn landed(&mut self, text: String, sent: Timestamp, now: Timestamp, terms: Terms) {
        self.text = Some(text);
        self.until = Some(sent + terms.hold);
        self.renew_at = Some(now + terms.renew);
    }

    /// The lease as last written, while it is ours.
    pub fn text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// A lease write in flight when the run stopped may have landed: its text is the release's
    /// precondition (when no other is held).
    pub fn adopt(&mut self, text: String) {
        if self.text.is_none() {
            self.text = Some(text);
        }
    }

    /// Another runner holds it now (taken, or a write refused on it): nothing to give back.
    pub fn lost(&mut self) {
        self.text = None;
    }

    /// Given back: the text to release it on, when it was ours (then nothing is held or
    /// renewed after).
    pub fn give_back(&mut self) -> Option<String> {
        let text = self.text.take()?;
        self.until = None;
        self.renew_at = None;
        Some(text)
    }

    /// Whether its renewal is due at `now`.
    pub fn due(&self, now: Timestamp) -> bool {
        self.renew_at.is_some_and(|at| now >= at)
    }

    /// When it is renewed next.
    pub fn renew_at(&self) -> Option<Timestamp> {
        self.renew_at
    }

    /// A renewal failed: tried again at `at` (until the lease runs out). A first lease has no
    /// renewal: the begin turn takes it again.
    pub fn retry(&mut self, at: Timestamp) {
        if self.renew_at.is_some() {
            self.renew_at = Some(at);
        }
    }

    /// When a wait ends: `at`, or the renewal if sooner.
    pub fn wake(&self, at: Timestamp) -> Timestamp {
        self.renew_at.map_or(at, |r| r.min(at))
    }

    /// When it ran out, if it did by `now` without a renewal landing.
    pub fn ran_out(&self, now: Timestamp) -> Option<Timestamp> {
        self.until.filter(|u| now >= *u)
    }

    /// It ran out: no longer ours (nothing given back; it holds nobody).
    pub fn expire(&mut self) {
        self.text = None;
        self.until = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    const TERMS: Terms =
        Terms { hold: SignedDuration::from_secs(30), renew: SignedDuration::from_secs(10) };

    #[test]
    fn a_lease_holds_from_its_sending_and_renews_from_its_answer() {
        let mut h = Holding::default();
        assert!(!h.due(t(1000)) && h.ran_out(t(1000)).is_none(), "nothing held, nothing due");
        h.retry(t(5));
        assert_eq!(h.renew_at(), None, "a first lease is not retried as a renewal");
        h.landed("L1".into(), t(0), t(4), TERMS);
        assert_eq!(h.text(), Some("L1"));
        assert!(!h.due(t(13)) && h.due(t(14)), "renewed 10 s after the answer");
        assert_eq!(h.ran_out(t(29)), None);
        assert_eq!(h.ran_out(t(30)), Some(t(30)), "held 30 s from the sending");
        assert_eq!(h.wake(t(100)), t(14));
        assert_eq!(h.wake(t(2)), t(2));
        h.retry(t(16));
        assert_eq!(h.renew_at(), Some(t(16)), "a failed renewal is tried again");
    }

    #[test]
    fn given_back_lost_or_expired_it_is_no_longer_ours() {
        let mut h = Holding::default();
        h.adopt("in flight".into());
        assert_eq!(h.give_back().as_deref(), Some("in flight"));
        assert_eq!(h.give_back(), None, "given back once");
        h.landed("L1".into(), t(0), t(0), TERMS);
        h.adopt("other".into());
        assert_eq!(h.text(), Some("L1"), "a held lease is not replaced by one in flight");
        h.lost();
        assert_eq!(h.give_back(), None, "another runner's lease is never released");
        h.landed("L2".into(), t(0), t(0), TERMS);
        h.expire();
        assert_eq!((h.text(), h.ran_out(t(100))), (None, None));
        assert_eq!(h.give_back(), None);
    }
}
