//! Pod predicates of spec 3.0 (upstream `stateful_set_utils.go`): created, pending, failed,
//! succeeded, terminating, runningAndReady, runningAndAvailable, unavailable, and the pod's
//! revision label and ordinal.
//!
//! Owns: pure questions about one pod. Must not touch: sets, claims or effects. Nothing here
//! allocates.
//!
//! Upstream finding (spec 3.0 "unavailable (v1.34+) … exact body unsure"): since #130909 the
//! body is `!isRunningAndAvailable(pod, minReadySeconds, now) || isTerminating(pod)` (the form
//! first proposed in #123915 and carried by #123975/#130909); before it, `isHealthy` was
//! `isRunningAndReady && !isTerminating`. [`is_unavailable`] picks the form from
//! [`Semantics::availability_in_updates`].

use k8s_openapi::api::core::v1::{Pod, PodCondition};

use super::labels::{REVISION_LABEL, ordinal_of};
use super::options::Semantics;
use super::types::{Now, PodWait};

/// `metadata.name` (empty when unset).
pub fn name(pod: &Pod) -> &str {
    pod.metadata.name.as_deref().unwrap_or_default()
}

/// `metadata.uid` (empty when unset, e.g. a placeholder).
pub fn uid(pod: &Pod) -> &str {
    pod.metadata.uid.as_deref().unwrap_or_default()
}

/// The ordinal parsed from the name, `-1` when it does not parse (upstream `getOrdinal`).
#[doc(alias = "getOrdinal")]
pub fn ordinal(pod: &Pod) -> i32 {
    ordinal_of(name(pod))
}

/// `status.phase`, `""` when unset.
pub fn phase(pod: &Pod) -> &str {
    pod.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default()
}

/// The `controller-revision-hash` label (the revision *name*), `""` when absent
/// (upstream `getPodRevision`).
#[doc(alias = "getPodRevision")]
pub fn revision(pod: &Pod) -> &str {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(REVISION_LABEL))
        .map(String::as_str)
        .unwrap_or_default()
}

/// `status.phase != ""`: the API server has the pod (placeholders have no phase).
#[doc(alias = "isCreated")]
pub fn is_created(pod: &Pod) -> bool {
    !phase(pod).is_empty()
}

#[doc(alias = "isPending")]
pub fn is_pending(pod: &Pod) -> bool {
    phase(pod) == "Pending"
}

#[doc(alias = "isFailed")]
pub fn is_failed(pod: &Pod) -> bool {
    phase(pod) == "Failed"
}

#[doc(alias = "isSucceeded")]
pub fn is_succeeded(pod: &Pod) -> bool {
    phase(pod) == "Succeeded"
}

/// Failed or Succeeded: deleted and recreated (3.3 a).
pub fn is_terminal(pod: &Pod) -> bool {
    is_failed(pod) || is_succeeded(pod)
}

/// `metadata.deletionTimestamp != nil`.
#[doc(alias = "isTerminating")]
pub fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// The Ready condition, if the pod has one.
pub(crate) fn ready_condition(pod: &Pod) -> Option<&PodCondition> {
    pod.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == "Ready")
}

/// `podutil.IsPodReady`: the Ready condition is True.
pub fn is_ready(pod: &Pod) -> bool {
    ready_condition(pod).is_some_and(|c| c.status == "True")
}

/// Phase Running and Ready=True (upstream `isRunningAndReady`).
#[doc(alias = "isRunningAndReady")]
pub fn is_running_and_ready(pod: &Pod) -> bool {
    phase(pod) == "Running" && is_ready(pod)
}

pub use super::types::MinReady;

/// runningAndReady, and either minReadySeconds is 0 or the Ready condition has a
/// lastTransitionTime with `lastTransitionTime + minReadySeconds` before `now` (or at it, from
/// v1.34: [`MinReady`]) (upstream `isRunningAndAvailable` over `podutil.IsPodAvailable`).
#[doc(alias = "isRunningAndAvailable")]
pub fn is_running_and_available(pod: &Pod, min_ready: MinReady, now: Now) -> bool {
    if !is_running_and_ready(pod) {
        return false;
    }
    ready_condition(pod).is_some_and(|c| min_ready.reached(c, now))
}

/// The "unavailable" concept of 3.0 used for `firstUnavailablePod`, the legacy update wait and
/// the maxUnavailable count. With #130909 (`availability_in_updates`): not runningAndAvailable
/// or terminating; before it ("unhealthy"): not runningAndReady or terminating.
#[doc(alias = "isUnavailable")]
#[doc(alias = "isHealthy")]
pub fn is_unavailable(pod: &Pod, min_ready: MinReady, now: Now, sem: &Semantics) -> bool {
    let up = if sem.availability_in_updates {
        is_running_and_available(pod, min_ready, now)
    } else {
        is_running_and_ready(pod)
    };
    !up || is_terminating(pod)
}

/// Why `pod` would hold an OrderedReady sync at 3.3 d, in upstream's check order (terminating,
/// not runningAndReady, not available), or `None` when it would not.
pub fn ordered_wait(pod: &Pod, min_ready: MinReady, now: Now) -> Option<PodWait> {
    if !is_created(pod) {
        return Some(PodWait::NotCreated);
    }
    if is_terminating(pod) {
        return Some(PodWait::Terminating);
    }
    if is_terminal(pod) {
        return Some(PodWait::Terminal);
    }
    if !is_running_and_ready(pod) {
        return Some(if is_pending(pod) { PodWait::Pending } else { PodWait::NotReady });
    }
    if !is_running_and_available(pod, min_ready, now) {
        return Some(PodWait::NotAvailable { min_ready_seconds: min_ready.seconds });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{PodCondition, PodStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn t(secs: i64) -> Now {
        Now::from_second(secs).unwrap_or(Now::UNIX_EPOCH)
    }

    fn running(ready_at: Option<i64>) -> Pod {
        Pod {
            status: Some(PodStatus {
                phase: Some("Running".into()),
                conditions: Some(vec![PodCondition {
                    type_: "Ready".into(),
                    status: if ready_at.is_some() { "True" } else { "False" }.into(),
                    last_transition_time: ready_at.map(|s| Time(t(s))),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn mr(seconds: i32, at_deadline: bool) -> MinReady {
        MinReady { seconds, at_deadline }
    }

    #[test]
    #[expect(clippy::disallowed_methods, reason = "tests the constructor min_ready calls")]
    fn availability_at_the_deadline_follows_the_version() {
        let p = running(Some(100));
        for at_deadline in [false, true] {
            assert!(is_running_and_available(&p, mr(0, at_deadline), t(100)));
            assert!(!is_running_and_available(&p, mr(10, at_deadline), t(109)));
            assert!(is_running_and_available(&p, mr(10, at_deadline), t(111)));
        }
        assert!(!is_running_and_available(&p, mr(10, false), t(110)), "before 1.34: strictly");
        assert!(is_running_and_available(&p, mr(10, true), t(110)), "from 1.34: at the deadline");
        let v = |s: &str| s.parse::<crate::core::Version>().map(|v| v.semantics());
        assert_eq!(v("1.33").map(|s| MinReady::new(10, &s)), Ok(mr(10, false)));
        assert_eq!(v("1.34").map(|s| MinReady::new(10, &s)), Ok(mr(10, true)));
        let no_time = {
            let mut p = running(Some(0));
            if let Some(c) =
                p.status.as_mut().and_then(|s| s.conditions.as_mut()).and_then(|c| c.first_mut())
            {
                c.last_transition_time = None;
            }
            p
        };
        assert!(!is_running_and_available(&no_time, mr(1, true), t(1_000)));
        assert!(is_running_and_available(&no_time, mr(0, true), t(1_000)));
    }

    #[test]
    fn unavailable_follows_the_version_switch() {
        let p = running(Some(100));
        let new =
            Semantics { availability_in_updates: true, ..crate::core::Version::V1_37.semantics() };
        let old = Semantics { availability_in_updates: false, ..new };
        assert!(is_unavailable(&p, mr(30, true), t(110), &new));
        assert!(!is_unavailable(&p, mr(30, true), t(110), &old));
        let mut term = p.clone();
        term.metadata.deletion_timestamp = Some(Time(t(105)));
        assert!(is_unavailable(&term, mr(0, true), t(110), &old));
        assert!(
            is_unavailable(&Pod::default(), mr(0, true), t(0), &old),
            "a placeholder is unavailable"
        );
    }

    #[test]
    fn ordered_wait_reports_upstream_check_order() {
        assert_eq!(ordered_wait(&Pod::default(), mr(0, true), t(0)), Some(PodWait::NotCreated));
        assert_eq!(ordered_wait(&running(None), mr(0, true), t(0)), Some(PodWait::NotReady));
        assert_eq!(
            ordered_wait(&running(Some(0)), mr(5, true), t(3)),
            Some(PodWait::NotAvailable { min_ready_seconds: 5 })
        );
        assert_eq!(ordered_wait(&running(Some(0)), mr(5, true), t(5)), None);
    }
}
