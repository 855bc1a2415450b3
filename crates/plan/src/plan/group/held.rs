//! Whether a rollout group's plan holds a set: the one answer to "may anything else move it?"
//! that the step verb, the console's keys, a plan's begin, the verdict and `abort` read, each
//! wording it from the same value (before, each asked its own way, and a waiting member of a
//! dead runner moved by the console's key but not by `ststui step`).
//!
//! The part is a claim (anyone who may patch a set may write one); the answer rests on the
//! group's lease on its first set as read now, and on whether that set exists. Pure: the caller
//! says what it sees of the first set.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::Timestamp;

use super::part::{self, Part};
use crate::plan::record::Runner;

/// What a caller sees of a group's first set (which holds the group's lease).
#[derive(Debug, Clone, Copy)]
pub enum First<'a> {
    /// The set as read now.
    Seen(&'a StatefulSet),
    /// Not there: the namespace's sets were read and it is not among them.
    Absent,
    /// Not looked at, or not readable from here.
    Unseen,
}

/// How a group's plan holds a set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// No group's plan moves it: no part, or a part done, halted or aborted.
    Free,
    /// Its group's plan has it waiting or rolling, and the group's runner holds the lease (or a
    /// lease that cannot be read, held as live): the group moves it in turn.
    Driven { part: Box<Part>, runner: Runner },
    /// Waiting or rolling, and nothing drives the group: its lease ran out or is gone
    /// (`Runner::None` also when the first set does not exist).
    Orphaned { part: Box<Part>, runner: Runner },
    /// Waiting or rolling; whether its runner lives is not known from here.
    Unknown(Box<Part>),
}

impl Held {
    /// How `set` is held at `now`; `first` is asked for the group's first set by name (not
    /// asked when `set` is that set).
    pub fn of<'a>(
        set: &'a StatefulSet,
        first: impl FnOnce(&str) -> First<'a>,
        now: Timestamp,
    ) -> Held {
        let Some(p) = part::read(set).any().filter(|p| p.in_turn()).cloned() else {
            return Held::Free;
        };
        let part = Box::new(p);
        // A fleet's first set is in another cluster: not seen from here.
        let seen = match part.beside(0) {
            _ if part.place == 0 => First::Seen(set),
            Some(name) => first(name),
            None => First::Unseen,
        };
        match seen {
            First::Seen(s) => match Runner::of_in(s, part::LEASE, now) {
                runner if runner.alive() => Held::Driven { part, runner },
                runner => Held::Orphaned { part, runner },
            },
            First::Absent => Held::Orphaned { part, runner: Runner::None },
            First::Unseen => Held::Unknown(part),
        }
    }

    /// The part, when a group's plan has it in turn.
    pub fn part(&self) -> Option<&Part> {
        match self {
            Held::Free => None,
            Held::Driven { part, .. } | Held::Orphaned { part, .. } | Held::Unknown(part) => {
                Some(part)
            }
        }
    }

    /// Whether moving it by anything else would put a second set of the group in motion: its
    /// group's runner drives it, or may (not seen from here). An orphaned member moves by hand.
    pub fn driven(&self) -> bool {
        matches!(self, Held::Driven { .. } | Held::Unknown(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::group::part::{LEASE, PART, State};
    use crate::plan::record::{Lease, stamp};

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + s).unwrap()
    }

    fn set(name: &str, notes: &[(&str, String)]) -> StatefulSet {
        let mut s = StatefulSet::default();
        s.metadata.name = Some(name.into());
        s.metadata.annotations =
            Some(notes.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect());
        s
    }

    fn part_of(place: usize, state: State) -> String {
        let p = Part {
            group: "g".into(),
            sets: vec!["a".into(), "b".into()],
            place,
            state,
            since: stamp(t(0)),
            by: "ana".into(),
            started: stamp(t(0)),
            steps: "100%".into(),
            zone_bake_seconds: 0,
            reason: None,
            clusters: None,
            cluster_bake_seconds: 0,
            approval: None,
        };
        serde_json::to_string(&p).unwrap()
    }

    fn lease(until: i64) -> String {
        let l = Lease { holder: "ana".into(), host: "h".into(), pid: 1, expires: stamp(t(until)) };
        serde_json::to_string(&l).unwrap()
    }

    #[test]
    fn each_state_of_the_first_set_gives_its_answer() {
        let b = set("b", &[(PART, part_of(1, State::Waiting))]);
        let live = set("a", &[(LEASE, lease(60))]);
        let lapsed = set("a", &[(LEASE, lease(-60))]);
        let none = set("a", &[]);
        let unreadable = set("a", &[(LEASE, "{".into())]);
        let of = |f: First<'_>| Held::of(&b, |n| if n == "a" { f } else { First::Unseen }, t(0));
        assert!(matches!(of(First::Seen(&live)), Held::Driven { runner: Runner::Live(_), .. }));
        assert!(matches!(of(First::Seen(&unreadable)), Held::Driven { .. }));
        assert!(matches!(
            of(First::Seen(&lapsed)),
            Held::Orphaned { runner: Runner::Lapsed(_), .. }
        ));
        assert!(matches!(of(First::Seen(&none)), Held::Orphaned { runner: Runner::None, .. }));
        assert!(matches!(of(First::Absent), Held::Orphaned { runner: Runner::None, .. }));
        assert!(matches!(of(First::Unseen), Held::Unknown(_)));
        assert!(of(First::Seen(&live)).driven() && of(First::Unseen).driven());
        assert!(!of(First::Seen(&lapsed)).driven() && !of(First::Absent).driven());
        assert_eq!(of(First::Absent).part().map(|p| p.place), Some(1));
    }

    #[test]
    fn a_part_out_of_turn_or_none_is_free_and_the_first_set_reads_its_own_lease() {
        for state in [State::Done, State::Halted, State::Aborted] {
            let b = set("b", &[(PART, part_of(1, state))]);
            assert_eq!(Held::of(&b, |_| First::Unseen, t(0)), Held::Free, "{state:?}");
        }
        assert_eq!(Held::of(&set("b", &[]), |_| First::Unseen, t(0)), Held::Free);
        let a = set("a", &[(PART, part_of(0, State::Rolling)), (LEASE, lease(60))]);
        let asked = std::cell::Cell::new(false);
        let held = Held::of(
            &a,
            |_| {
                asked.set(true);
                First::Unseen
            },
            t(0),
        );
        assert!(matches!(held, Held::Driven { .. }) && !asked.get());
    }
}
