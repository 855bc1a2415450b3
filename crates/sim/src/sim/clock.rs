//! Virtual time: the [`Clock`] (milliseconds since the simulation started, mapped onto a fixed
//! epoch so timestamps are reproducible) and the [`Agenda`] of timed things (kubelet transitions,
//! delayed and back-off enqueues), ordered by (time, sequence) so equal times keep their
//! scheduling order.
//!
//! Owns: time bookkeeping only. The run loop that consumes the agenda lives in `engine`; this
//! module never touches objects.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use crate::backend::ObjRef;

/// The wall-clock instant virtual time 0 maps to: 2026-01-01T00:00:00Z. Fixed, so the same
/// script gives the same timestamps (creationTimestamp, restartedAt, lastTransitionTime).
pub const EPOCH_UNIX_MS: i64 = 1_767_225_600_000;

/// Virtual time in milliseconds since the start of the simulation, and the wall instant that
/// start maps to ([`EPOCH_UNIX_MS`] unless set: a served simulator starts at the real now, so
/// clients that compute ages from timestamps see sensible ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    now_ms: u64,
    epoch_unix_ms: i64,
}

impl Default for Clock {
    fn default() -> Self {
        Clock { now_ms: 0, epoch_unix_ms: EPOCH_UNIX_MS }
    }
}

impl Clock {
    /// Milliseconds since start.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// Moves time forward; never backwards.
    pub(crate) fn set(&mut self, ms: u64) {
        self.now_ms = self.now_ms.max(ms);
    }

    /// The current virtual instant as a timestamp.
    pub fn timestamp(&self) -> Timestamp {
        self.timestamp_at(self.now_ms)
    }

    /// The timestamp of virtual millisecond `ms`.
    pub fn timestamp_at(&self, ms: u64) -> Timestamp {
        let unix = self.epoch_unix_ms.saturating_add(i64::try_from(ms).unwrap_or(i64::MAX / 2));
        Timestamp::from_millisecond(unix).unwrap_or(Timestamp::MAX)
    }

    /// The wall instant virtual time 0 maps to (Unix ms).
    pub fn epoch_unix_ms(&self) -> i64 {
        self.epoch_unix_ms
    }

    /// Maps virtual time 0 onto `unix_ms` (before anything happened).
    pub(crate) fn set_epoch(&mut self, unix_ms: i64) {
        self.epoch_unix_ms = unix_ms;
    }

    /// The current virtual instant as a Kubernetes `Time`, in whole seconds (rounded down) as
    /// the API server stores every `Time` (creation, deletion, condition transitions): a
    /// fractional kubelet delay must change minReadySeconds decisions as it does on a cluster.
    pub fn time(&self) -> Time {
        let whole = Timestamp::from_second(self.timestamp().as_second());
        Time(whole.unwrap_or(Timestamp::MAX))
    }
}

/// A kubelet transition of one pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PodStep {
    /// Pending → Running (the start delay has passed).
    Run,
    /// Running → Ready (the ready delay has passed).
    Ready,
    /// Terminating → gone (the stop delay has passed).
    Gone,
    /// A failed pull backs off: ErrImagePull → ImagePullBackOff.
    BackOff,
    /// A back-off ended: pull again, or restart the crashed container.
    Retry,
    /// A crashing container exits.
    Crash,
    /// A back-off ends after the image was fixed: the pull or the restart succeeds. Like
    /// [`PodStep::Retry`], but pending work for `settle` (the pod will come up).
    Recover,
}

impl PodStep {
    /// Steps of a failure that repeats for as long as the image is broken: `settle` does not
    /// wait for them.
    pub fn recurs(self) -> bool {
        matches!(self, PodStep::BackOff | PodStep::Retry | PodStep::Crash)
    }
}

/// Something due at a virtual instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Due {
    /// A kubelet transition; `uid` guards against a pod recreated under the same name.
    Kubelet { pod: ObjRef, uid: String, step: PodStep },
    /// A delayed enqueue of a StatefulSet key (requeue-after, minReadySeconds, back-off).
    Enqueue(ObjRef),
    /// The garbage collector's turn to collect the dependents of a removed owner (`uid` in
    /// namespace `ns`), when it runs with a delay.
    Collect { ns: String, uid: String },
    /// A rollout plan's bake or `stuck-after` comes due (`planner`).
    Plan(ObjRef),
    /// The disruption controller's recheck of a namespace's budgets: an eviction it recorded
    /// stops counting (`disruption`).
    Budgets(String),
}

/// A handle to a scheduled item, for cancelling it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ticket {
    pub at_ms: u64,
    seq: u64,
}

impl Ticket {
    pub fn new(at_ms: u64, seq: u64) -> Ticket {
        Ticket { at_ms, seq }
    }

    /// The insertion sequence (with `at_ms`, what identifies the item).
    pub fn seq(self) -> u64 {
        self.seq
    }
}

/// The deterministic agenda: items ordered by (time, insertion sequence).
#[derive(Debug, Default)]
pub struct Agenda {
    items: BTreeMap<(u64, u64), Due>,
    seq: u64,
}

impl Agenda {
    /// Schedules `due` at virtual millisecond `at_ms`.
    pub fn schedule(&mut self, at_ms: u64, due: Due) -> Ticket {
        self.seq += 1;
        self.items.insert((at_ms, self.seq), due);
        Ticket { at_ms, seq: self.seq }
    }

    /// Removes a scheduled item; `None` when it already ran or was cancelled.
    pub fn cancel(&mut self, ticket: Ticket) -> Option<Due> {
        self.items.remove(&(ticket.at_ms, ticket.seq))
    }

    /// Removes and returns the earliest item due at or before `until_ms`.
    pub fn pop_due(&mut self, until_ms: u64) -> Option<(u64, Due)> {
        let (&(at, seq), _) = self.items.first_key_value()?;
        if at > until_ms {
            return None;
        }
        self.items.remove(&(at, seq)).map(|d| (at, d))
    }

    /// The time of the earliest item.
    pub fn next_due(&self) -> Option<u64> {
        self.items.first_key_value().map(|(&(at, _), _)| at)
    }

    /// The time of the earliest item that `counts`.
    pub fn next_matching(&self, counts: impl Fn(&Due) -> bool) -> Option<u64> {
        self.items.iter().find(|(_, d)| counts(d)).map(|(&(at, _), _)| at)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: &str) -> ObjRef {
        ObjRef::new("default", n)
    }

    #[test]
    fn items_come_out_by_time_then_scheduling_order() {
        let mut a = Agenda::default();
        a.schedule(20, Due::Enqueue(key("late")));
        a.schedule(10, Due::Enqueue(key("first")));
        let t = a.schedule(10, Due::Enqueue(key("second")));
        a.schedule(10, Due::Enqueue(key("third")));
        assert_eq!(a.next_due(), Some(10));
        assert_eq!(a.cancel(t), Some(Due::Enqueue(key("second"))));
        assert_eq!(a.cancel(t), None);
        let order: Vec<_> = std::iter::from_fn(|| a.pop_due(15)).collect();
        assert_eq!(order, vec![(10, Due::Enqueue(key("first"))), (10, Due::Enqueue(key("third")))]);
        assert_eq!(a.pop_due(15), None);
        assert_eq!(a.next_due(), Some(20));
    }

    #[test]
    fn clock_maps_onto_the_fixed_epoch_and_never_goes_back() {
        let mut c = Clock::default();
        assert_eq!(c.timestamp().to_string(), "2026-01-01T00:00:00Z");
        c.set(1500);
        c.set(100);
        assert_eq!(c.now_ms(), 1500);
        assert_eq!(c.timestamp().to_string(), "2026-01-01T00:00:01.5Z");
        assert_eq!(c.time().0.to_string(), "2026-01-01T00:00:01Z", "stored times: whole seconds");
        c.set(1999);
        assert_eq!(c.time().0.to_string(), "2026-01-01T00:00:01Z");
    }
}
