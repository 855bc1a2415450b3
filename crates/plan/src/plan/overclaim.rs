//! A plan or group lease that claims more than any runner writes: an expiry further ahead than
//! we believe (a runner writes its own term ahead, 30 s for ours; a forged `2099-…` or
//! `"never"` claims years), or a lease that does not read. Such a record is a claim, not a fact:
//! it still holds the set against a plain `rollout` (a runner whose clock runs far ahead might
//! be behind it), but it never holds the operator for good — `--force` takes it over, and
//! `--wait-lease` waits for it only while it is renewed: once its text has stood unchanged for a
//! whole term of ours since we first saw it, nobody renews it and it is taken over. What is
//! believed of a lease is what we observed of it, never the time it states (client-go's leader
//! election does the same with its observed time).
//!
//! Owns: that judgement and its words, for the plan engine and the group engine alike. Pure.

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use k8s_openapi::api::apps::v1::StatefulSet;

use super::record::{self, Lease, Runner};

/// How far ahead of now a lease's expiry is believed, at least: our own term with room for a
/// runner whose clock runs ahead of ours. A runner configured with a longer term (the
/// simulator's) believes up to its own.
pub const BELIEVED: SignedDuration = SignedDuration::from_mins(5);

/// The term the simulator's planner writes its leases for (given back when its plan ends): in
/// the simulator a lease is believed this far ahead.
pub const SIMULATOR_TERM: SignedDuration = SignedDuration::from_hours(24 * 365);

/// Whether `lease` (`None`: one that does not read) claims more than a runner writes, at `now`,
/// believing an expiry up to `term` ahead (never less than [`BELIEVED`]).
pub fn overclaims(lease: Option<&Lease>, now: Timestamp, term: SignedDuration) -> bool {
    let Some(lease) = lease else { return true };
    let most = crate::plan::later(now, term.max(BELIEVED));
    lease.expires.parse::<Timestamp>().map_or(true, |t| t > most)
}

/// "a plan runner's lease claims ana on h (pid 1) until never: more than any runner writes
/// (ststui believes 5m ahead)": `lease` says what the lease claims (clipped, escaped).
pub fn claim_words(lease: &str, term: SignedDuration) -> String {
    let believed = crate::plan::duration_words(millis(BELIEVED.max(term)));
    format!("{lease}: more than any runner writes (ststui believes {believed} ahead)")
}

/// The lease in `annotation` of `set` when it claims more than a runner writes (believed up to
/// `believe` ahead) or does not read: what it claims, in words (`whose`: "a plan runner's
/// lease"), and its text as held (the take-over's precondition). `None`: no such lease, or it
/// is `dead`'s (a runner of this host whose process is gone: taken over at once anyway).
pub fn seen(
    set: &StatefulSet,
    annotation: &str,
    (now, believe): (Timestamp, SignedDuration),
    whose: &str,
    dead: Option<&Lease>,
) -> Option<(String, String)> {
    let claim = match Runner::of_in(set, annotation, now) {
        Runner::Live(l) if dead != Some(&l) && overclaims(Some(&l), now, believe) => {
            let lease = format!("{whose} claims {}", crate::text::shown(&l.words(), 200));
            claim_words(&lease, believe)
        }
        Runner::Unreadable => format!("{whose} ({annotation}) does not read"),
        _ => return None,
    };
    Some((claim, record::lease_text_in(set, annotation).unwrap_or_default()))
}

/// What to do about an overclaiming lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Past {
    /// Take it over (its precondition is its text, as for any lease): said in these words.
    Take(String),
    /// Wait for it (`--wait-lease`), until then at the latest.
    Wait { until: Timestamp, words: String },
    /// Refused, in these words (naming the ways past).
    Refuse(String),
}

/// The overclaiming lease seen, and since when unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overclaim {
    seen: Option<(String, Timestamp)>,
}

impl Overclaim {
    /// Judges the overclaiming lease whose text is `text` (`claim`: what it says, in words),
    /// seen at `now` by a runner whose term is `term`, as the operator asked (`force`,
    /// `wait_lease`).
    pub fn judge(
        &mut self,
        text: &str,
        claim: &str,
        now: Timestamp,
        term: SignedDuration,
        (force, wait_lease): (bool, bool),
    ) -> Past {
        let since = match &self.seen {
            Some((t, since)) if t == text => *since,
            _ => {
                self.seen = Some((text.to_string(), now));
                now
            }
        };
        let said = |how: &str| format!("{claim}; {how}");
        if force {
            return Past::Take(said("taken over (--force)"));
        }
        if wait_lease {
            let until = crate::plan::later(since, term);
            if now >= until {
                let unchanged = crate::plan::duration_words(millis(term));
                return Past::Take(said(&format!(
                    "taken over: nobody renewed it for {unchanged} (--wait-lease)"
                )));
            }
            let words = said("waiting while it is renewed (--wait-lease)");
            return Past::Wait { until, words };
        }
        Past::Refuse(said(
            "--force takes it over, --wait-lease takes it over once nobody renews it",
        ))
    }
}

fn millis(d: SignedDuration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(expires: &str) -> Lease {
        Lease { holder: "x".into(), host: "h".into(), pid: 1, expires: expires.into() }
    }

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + secs).unwrap()
    }

    #[test]
    fn a_lease_of_our_term_is_believed_and_a_forged_one_is_not() {
        let term = SignedDuration::from_secs(30);
        let ours = crate::plan::record::stamp(at(30));
        assert!(!overclaims(Some(&lease(&ours)), at(0), term));
        let skewed = crate::plan::record::stamp(at(240));
        assert!(!overclaims(Some(&lease(&skewed)), at(0), term), "a clock 4 minutes ahead");
        for forged in ["never", "2099-01-01T00:00:00Z", "-9999-01-01T00:00:00Z", ""] {
            assert!(overclaims(Some(&lease(forged)), at(0), term), "{forged}");
        }
        assert!(overclaims(None, at(0), term), "a lease that does not read");
        let year = SignedDuration::from_hours(24 * 365);
        let sims = crate::plan::record::stamp(at(3600));
        assert!(!overclaims(Some(&lease(&sims)), at(0), year), "the simulator's own term");
    }

    #[test]
    fn force_takes_it_over_and_wait_lease_waits_only_while_it_is_renewed() {
        let term = SignedDuration::from_secs(30);
        let mut o = Overclaim::default();
        let Past::Refuse(why) = o.judge("a", "its lease says never", at(0), term, (false, false))
        else {
            panic!("refused")
        };
        assert!(why.contains("--force takes it over") && why.contains("--wait-lease"), "{why}");
        assert!(matches!(o.judge("a", "c", at(1), term, (true, false)), Past::Take(_)));
        let mut o = Overclaim::default();
        let Past::Wait { until, .. } = o.judge("a", "c", at(0), term, (false, true)) else {
            panic!("waits")
        };
        assert_eq!(until, at(30));
        // Renewed (its text changed): waited for again from then.
        let Past::Wait { until, .. } = o.judge("b", "c", at(20), term, (false, true)) else {
            panic!("waits")
        };
        assert_eq!(until, at(50));
        assert!(matches!(o.judge("b", "c", at(49), term, (false, true)), Past::Wait { .. }));
        let Past::Take(words) = o.judge("b", "c", at(50), term, (false, true)) else {
            panic!("taken over")
        };
        assert!(words.contains("nobody renewed it for 30s"), "{words}");
    }
}
