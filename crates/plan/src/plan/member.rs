//! One member of a plan run as a runner sees it now — a set (or its absence), its own pods with
//! their ordinals, its `minReadySeconds` under the server's semantics, and the operator's
//! freeze on it: the one view of a member that the run ([`crate::plan::run`]), a group's
//! readiness rule ([`crate::plan::group::hold`]) and every adapter build and read.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use crate::core::options::Semantics;
use crate::core::pod::MinReady;

/// One member now.
#[derive(Debug, Clone, Copy)]
pub struct Member<'a> {
    /// `None`: the set is gone.
    pub set: Option<&'a StatefulSet>,
    pub pods: &'a [(i32, &'a Pod)],
    pub min_ready: MinReady,
    /// The operator's freeze holding the set, in its words.
    pub frozen: Option<&'a str>,
}

impl<'a> Member<'a> {
    /// `set` and its own `pods` as read, its `minReadySeconds` under `semantics`, no freeze
    /// said (a runner that says it fills [`Member::frozen`]).
    pub fn of(set: &'a StatefulSet, pods: &'a [(i32, &'a Pod)], semantics: &Semantics) -> Self {
        let min_ready = crate::core::spec::min_ready(set, semantics);
        Member { set: Some(set), pods, min_ready, frozen: None }
    }
}

/// Every member of a run as seen (in the run's order): its set (`None`: gone), its own pods,
/// the words of the freeze holding it (the adapter's `steer::holding`), and its
/// `minReadySeconds` under the semantics of its server (`semantics` of its index).
pub fn members<'a>(
    sets: &[Option<&'a StatefulSet>],
    pods: &'a [Vec<(i32, &'a Pod)>],
    frozen: &'a [Option<String>],
    semantics: impl Fn(usize) -> Semantics,
) -> Vec<Member<'a>> {
    (sets.iter().zip(pods).zip(frozen).enumerate())
        .map(|(i, ((set, pods), frozen))| Member {
            set: *set,
            pods,
            min_ready: set
                .map(|s| crate::core::spec::min_ready(s, &semantics(i)))
                .unwrap_or_default(),
            frozen: frozen.as_deref(),
        })
        .collect()
}
