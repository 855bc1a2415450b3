//! One-sentence wording of why a sync waits, for the timeline's `blocked` events: the sentence
//! and the pod that is the cause, if one is.
//!
//! A local stand-in until `core::explain` (the console's wording) is on main; then this module
//! only forwards to it. Owns no state and touches nothing.

use crate::core::{Blocker, PodWait};

fn wait(w: &PodWait) -> String {
    match w {
        PodWait::NotCreated => "is not created yet".into(),
        PodWait::Pending => "is Pending".into(),
        PodWait::NotReady => "is Running but not Ready".into(),
        PodWait::NotAvailable { min_ready_seconds } => {
            format!("is Ready but not yet available (minReadySeconds={min_ready_seconds})")
        }
        PodWait::Terminating => "is terminating".into(),
        PodWait::Terminal => "has failed and is being replaced".into(),
    }
}

/// The `blocked` reason and pod for a [`Blocker`].
pub fn blocker(b: &Blocker) -> (String, Option<String>) {
    let pod = |p: &String| Some(p.clone());
    match b {
        Blocker::SetDeleting => (
            "the StatefulSet is being deleted: nothing is created, updated or deleted".into(),
            None,
        ),
        Blocker::Ordered { pod: p, wait: w, .. } => {
            (format!("OrderedReady waits for {p}, which {}", wait(w)), pod(p))
        }
        Blocker::TerminalPod { pod: p, .. } => {
            (format!("{p} failed and was deleted; it is recreated once it is gone"), pod(p))
        }
        Blocker::StaleClaim { pod: p, claim } => (
            format!("{claim} still belongs to a previous {p}; {p} is created once it is collected"),
            pod(p),
        ),
        Blocker::ClaimTerminating { pod: p, claim } => {
            (format!("{claim} is being deleted; {p} cannot be created until it is gone"), pod(p))
        }
        Blocker::CondemnedTerminating { pod: p } => {
            (format!("scale-down waits for {p} to finish terminating"), pod(p))
        }
        Blocker::CondemnedUnhealthy { pod: p, first_unavailable } => {
            let first = first_unavailable.as_deref().unwrap_or("another pod");
            (format!("scale-down is blocked: {p} is unhealthy and {first} must go first"), pod(p))
        }
        Blocker::ScaleDownStep { pod: p } => {
            (format!("scale-down deleted {p}; the next pod waits until it is gone"), pod(p))
        }
        Blocker::UpdateStep { pod: p } => {
            (format!("the rolling update deleted {p}; one pod is updated at a time"), pod(p))
        }
        Blocker::UpdateWaiting { pod: p, wait: w } => {
            (format!("the rolling update waits for {p}, which {}", wait(w)), pod(p))
        }
        Blocker::MaxUnavailable { unavailable, max } => (
            format!(
                "the rolling update waits: {unavailable} pods unavailable, maxUnavailable is {max}"
            ),
            None,
        ),
        Blocker::Error { message } => (format!("the sync failed: {message}"), None),
    }
}
