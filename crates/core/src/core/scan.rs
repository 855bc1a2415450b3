//! The one pass over the namespace's pods a sync makes (spec 1.3 fused with 3.2 steps 2–5):
//! claiming (`ClaimPods`, with the decisions of [`ClaimEnv`]) and the per-pod summary
//! ([`Facts`]) in a single visit of each pod, then the claimed pods sorted out into in-range
//! replicas (by index; placeholders fill the gaps) and condemned pods (by ordinal descending),
//! with the status counts over all of them.
//!
//! Owns: the visiting order, which must give what `claim::claim_pods` followed by a pass over
//! its output would give: pods controlled by the set in input order, then adopted orphans in
//! input order (so of two pods parsing to the same ordinal the later one wins, as upstream).
//! Must not touch: decisions (they stay in `claim`, `facts` and `update`) or any effect other
//! than the claim patches. Pods are borrowed; only adopted pods are copies.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use super::claim::{ClaimEnv, Ownership};
use super::facts::{FactEnv, Facts, RevisionOf, Slot};
use super::newpod;
use super::pod::MinReady;
use super::spec;
use super::status::Counts;
use super::types::{Effect, Now};

/// The claimed pods, summarised and sorted out.
#[derive(Debug)]
pub struct Scanned<'a> {
    /// The section 4 counts over every claimed pod.
    pub counts: Counts,
    /// The counts of the claimed pods in neither list (ordinal −1, or an ordinal taken by a
    /// later pod).
    dropped: Counts,
    /// In-range replicas by index (`ordinal - start`); gaps are placeholders.
    pub replicas: Vec<Slot<'a>>,
    /// Pods outside the range, by ordinal descending (after [`Scanned::finish`]).
    pub condemned: Vec<Slot<'a>>,
    /// Revision labels of claimed pods that are neither current nor update.
    pub other_revisions: Vec<String>,
    /// ReleasePod and AdoptPod effects, in upstream order.
    pub effects: Vec<Effect>,
    /// The first instant a claimed pod that is Ready but not yet available becomes available
    /// (upstream `FindMinNextPodAvailabilityCheck`, read while counting).
    pub next_available: Option<Now>,
    min_ready: MinReady,
    now: Now,
    start: i32,
    end: i64,
}

impl<'a> Scanned<'a> {
    fn new(set: &StatefulSet, env: &FactEnv<'_>) -> Self {
        let n = usize::try_from(spec::replicas(set)).unwrap_or(0);
        let gap = Slot { pod: None, f: Facts::placeholder(-1, false, env) };
        Scanned {
            counts: Counts::default(),
            dropped: Counts::default(),
            replicas: vec![gap; n],
            condemned: Vec::new(),
            other_revisions: Vec::new(),
            effects: Vec::new(),
            next_available: None,
            min_ready: env.min_ready,
            now: env.now,
            start: spec::start_ordinal(set),
            end: spec::end_ordinal(set),
        }
    }

    /// Keeps the earliest instant a Ready pod not yet available will be.
    #[cold]
    fn note_not_yet_available(&mut self, p: &Pod) {
        let at = super::pod::ready_condition(p).and_then(|c| self.min_ready.deadline(c));
        if let Some(t) = at.filter(|t| *t > self.now) {
            self.next_available = Some(self.next_available.map_or(t, |n| n.min(t)));
        }
    }

    /// Adds one claimed pod (3.2 steps 2–5): counted, then placed by ordinal. Ordinal −1 is
    /// dropped from both lists.
    #[inline(always)]
    fn add(&mut self, p: &'a Pod, f: Facts) {
        self.counts.add_facts(&f);
        if f.running_ready && !f.available {
            self.note_not_yet_available(p);
        }
        if f.revision == RevisionOf::Other {
            let r = super::pod::revision(p);
            if !self.other_revisions.iter().any(|o| o == r) {
                self.other_revisions.push(r.to_string());
            }
        }
        let ord = f.ordinal;
        let s = Slot { pod: Some(p), f };
        if ord >= self.start && i64::from(ord) <= self.end {
            let index = usize::try_from(ord - self.start).ok();
            match index.and_then(|i| self.replicas.get_mut(i)) {
                Some(slot) => {
                    if slot.pod.is_some() {
                        self.dropped.add_facts(&slot.f);
                    }
                    *slot = s;
                }
                None => self.dropped.add_facts(&f),
            }
        } else if ord >= 0 {
            self.condemned.push(s);
        } else {
            self.dropped.add_facts(&f);
        }
    }

    /// The counts over the replica and condemned lists (upstream `updateStatus` after the
    /// pod loop): every claimed pod but the dropped ones (placeholders count nothing).
    pub fn placed_counts(&self) -> Counts {
        self.counts.minus(self.dropped)
    }

    /// Adds the adopted orphans (after every pod controlled by the set, as upstream lists them).
    pub fn add_adopted(
        mut self,
        adopted: &'a [Box<Pod>],
        claim: &ClaimEnv<'_>,
        env: &FactEnv<'_>,
    ) -> Self {
        for p in adopted {
            if let Some(m) = claim.member(p) {
                self.add(p, Facts::of_member(p, env, &m));
            }
        }
        self
    }

    /// Fills the gaps with placeholders on the revision spec 3.5 gives them (read from the set
    /// with the current revision applied) and orders the condemned pods by ordinal descending.
    pub fn finish(&mut self, current_set: &StatefulSet, env: &FactEnv<'_>) {
        let start = i64::from(self.start);
        for (i, s) in self.replicas.iter_mut().enumerate().filter(|(_, s)| s.pod.is_none()) {
            let ord = start + i64::try_from(i).unwrap_or(i64::MAX / 2);
            let current = newpod::gets_current_revision(current_set, ord);
            // Past int32 upstream names the new pod after parsing its own name back, which
            // fails: `<set>--1`, whose pod-index label "-1" the API server refuses.
            let ord = i32::try_from(ord).unwrap_or(-1);
            *s = Slot { pod: None, f: Facts::placeholder(ord, current, env) };
        }
        self.condemned.sort_by_key(|s| std::cmp::Reverse(s.f.ordinal));
    }
}

/// The claim pass over `all_pods`: pods controlled by the set are kept (summarised and placed)
/// or released; orphans are returned, in input order, for [`adopt`].
#[doc(alias = "getPodsForStatefulSet")]
#[doc(alias = "ClaimPods")]
pub fn scan<'a>(
    claim: &ClaimEnv<'_>,
    env: &FactEnv<'_>,
    all_pods: &[&'a Pod],
) -> (Scanned<'a>, Vec<&'a Pod>) {
    let mut out = Scanned::new(claim.set, env);
    let mut orphans = Vec::new();
    for &p in all_pods {
        match claim.ownership(p) {
            Ownership::Orphan => orphans.push(p),
            Ownership::Other => {}
            Ownership::Ours => match claim.member(p) {
                Some(m) => out.add(p, Facts::of_member(p, env, &m)),
                None if claim.deleting => {}
                None => out.effects.push(claim.release(p)),
            },
        }
    }
    (out, orphans)
}

/// Adopts the orphans `ClaimObject` would adopt, in order: their AdoptPod effects go to
/// `effects`, the patched copies are returned for [`Scanned::add_adopted`].
pub fn adopt(claim: &ClaimEnv<'_>, orphans: &[&Pod], effects: &mut Vec<Effect>) -> Vec<Box<Pod>> {
    let mut adopted = Vec::new();
    for p in orphans {
        if claim.can_adopt(p) && claim.member(p).is_some() {
            let (effect, pod) = claim.adopt(p);
            effects.push(effect);
            adopted.push(pod);
        }
    }
    adopted
}
