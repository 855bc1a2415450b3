//! What one sync needs to know about each pod, computed in a single pass (spec 3.0 predicates
//! evaluated once at the sync's `now`).
//!
//! Owns: [`Facts`], a small copyable summary of a pod relative to the set and the current and
//! update revisions, and [`Slot`] (a borrowed pod with its facts). The sync reads facts instead
//! of re-walking label maps and condition lists in every step, which keeps a 10,000-pod sync
//! linear and cache-friendly. Must not touch: effects or decisions; it only summarises.

use std::borrow::Cow;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use super::bytes::same;
use super::claim::Member;
use super::labels::{POD_NAME_LABEL, REVISION_LABEL};
use super::newpod;
use super::options::Semantics;
use super::pod;
use super::spec;
use super::types::{Now, PodWait};

/// The pod's revision label relative to the sync's revisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevisionOf {
    /// Equal to the current revision only.
    Current,
    /// Equal to the update revision only.
    Update,
    /// Current and update are the same revision and the pod is on it.
    Both,
    /// Any other value (a third revision, or no label).
    Other,
}

impl RevisionOf {
    pub fn is_current(self) -> bool {
        matches!(self, RevisionOf::Current | RevisionOf::Both)
    }
    pub fn is_update(self) -> bool {
        matches!(self, RevisionOf::Update | RevisionOf::Both)
    }
}

/// The sync-wide inputs facts are computed against.
#[derive(Debug, Clone, Copy)]
pub struct FactEnv<'a> {
    pub set: &'a StatefulSet,
    pub current: &'a str,
    pub update: &'a str,
    pub min_ready: pod::MinReady,
    pub now: Now,
    pub sem: &'a Semantics,
}

/// One pod, summarised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    pub ordinal: i32,
    pub created: bool,
    pub pending: bool,
    /// Failed or Succeeded.
    pub terminal: bool,
    pub terminating: bool,
    pub running_ready: bool,
    /// runningAndAvailable(minReadySeconds, now).
    pub available: bool,
    /// The 3.0 "unavailable" under the sync's semantics.
    pub unavailable: bool,
    pub revision: RevisionOf,
    /// `identityMatches && storageMatches` against the live set.
    pub identity_and_storage: bool,
}

impl Facts {
    /// Summarises `p` (one walk over its labels and conditions).
    pub fn of(p: &Pod, env: &FactEnv<'_>) -> Facts {
        let (rev, pod_name_label) = scan_labels(p);
        let revision = revision_of(rev, env);
        let running_ready = pod::is_running_and_ready(p);
        let available = running_ready && pod::is_running_and_available(p, env.min_ready, env.now);
        let terminating = pod::is_terminating(p);
        let up = if env.sem.availability_in_updates { available } else { running_ready };
        Facts {
            ordinal: pod::ordinal(p),
            created: pod::is_created(p),
            pending: pod::is_pending(p),
            terminal: pod::is_terminal(p),
            terminating,
            running_ready,
            available,
            unavailable: !up || terminating,
            revision,
            identity_and_storage: identity_matches(env.set, p, pod_name_label)
                && (spec::claim_templates(env.set).is_empty()
                    || newpod::storage_matches(env.set, p)),
        }
    }

    /// [`Facts::of`] for a pod that claiming found to be a member (`<set>-<digits>`, selected),
    /// reusing what claiming read: the revision and pod-name labels and the digits. Each field
    /// of the pod is read once, cheapest checks first.
    pub fn of_member(p: &Pod, env: &FactEnv<'_>, m: &Member<'_>) -> Facts {
        let ordinal = parse_digits(m.digits);
        let phase = pod::phase(p);
        // (created, pending, terminal, running)
        let (created, pending, terminal, running) = match phase {
            "" => (false, false, false, false),
            "Running" => (true, false, false, true),
            "Pending" => (true, true, false, false),
            "Failed" | "Succeeded" => (true, false, true, false),
            _ => (true, false, false, false),
        };
        let ready = if running { pod::ready_condition(p) } else { None };
        let ready = ready.filter(|c| c.status == "True");
        let running_ready = ready.is_some();
        let available = ready.is_some_and(|c| env.min_ready.reached(c, env.now));
        let terminating = pod::is_terminating(p);
        let up = if env.sem.availability_in_updates { available } else { running_ready };
        // `is_canonical_name` on `<set>-<digits>`: no leading zero, and the digits fit an int32.
        let canonical = ordinal >= 0 && (m.digits == "0" || !m.digits.starts_with('0'));
        let identity = canonical
            && m.labels.pod_name.is_some_and(|l| same(l, pod::name(p)))
            && same(p.metadata.namespace.as_deref().unwrap_or_default(), spec::namespace(env.set));
        Facts {
            ordinal,
            created,
            pending,
            terminal,
            terminating,
            running_ready,
            available,
            unavailable: !up || terminating,
            revision: revision_of(m.labels.revision, env),
            identity_and_storage: identity
                && (spec::claim_templates(env.set).is_empty()
                    || newpod::storage_matches(env.set, p)),
        }
    }

    /// Created, not terminating, not on the update revision.
    pub fn outdated(&self) -> bool {
        self.created && !self.terminating && !self.revision.is_update()
    }

    /// Upstream's "revision ≠ update and not terminating" (also true for a placeholder built
    /// at the current revision).
    pub fn deletable_for_update(&self) -> bool {
        !self.revision.is_update() && !self.terminating
    }

    /// Why an OrderedReady sync would wait on this pod at 3.3 d (same order as
    /// [`pod::ordered_wait`]).
    pub fn ordered_wait(&self, min_ready_seconds: i32) -> Option<PodWait> {
        if !self.created {
            Some(PodWait::NotCreated)
        } else if self.terminating {
            Some(PodWait::Terminating)
        } else if self.terminal {
            Some(PodWait::Terminal)
        } else if !self.running_ready {
            Some(if self.pending { PodWait::Pending } else { PodWait::NotReady })
        } else if !self.available {
            Some(PodWait::NotAvailable { min_ready_seconds })
        } else {
            None
        }
    }
}

/// `digits` (ASCII digits only) as an int32, `-1` when it does not fit (as `getOrdinal`).
fn parse_digits(digits: &str) -> i32 {
    digits
        .bytes()
        .try_fold(0i32, |n, b| n.checked_mul(10)?.checked_add(i32::from(b.wrapping_sub(b'0'))))
        .unwrap_or(-1)
}

/// Where a revision label stands relative to the sync's revisions.
fn revision_of(rev: &str, env: &FactEnv<'_>) -> RevisionOf {
    match (same(rev, env.current), same(rev, env.update)) {
        (true, true) => RevisionOf::Both,
        (true, false) => RevisionOf::Current,
        (false, true) => RevisionOf::Update,
        (false, false) => RevisionOf::Other,
    }
}

/// The revision label and the pod-name label in one walk over the labels (keys told apart by
/// length first, so most keys cost no string comparison).
fn scan_labels(p: &Pod) -> (&str, Option<&str>) {
    let (mut rev, mut name) = ("", None);
    for (k, v) in p.metadata.labels.iter().flatten() {
        if k.len() == REVISION_LABEL.len() && k == REVISION_LABEL {
            rev = v.as_str();
        } else if k.len() == POD_NAME_LABEL.len() && k == POD_NAME_LABEL {
            name = Some(v.as_str());
        }
    }
    (rev, name)
}

/// [`newpod::identity_matches`] with the pod-name label already found.
fn identity_matches(set: &StatefulSet, p: &Pod, pod_name_label: Option<&str>) -> bool {
    let name = pod::name(p);
    pod_name_label == Some(name)
        && p.metadata.namespace.as_deref().unwrap_or_default() == spec::namespace(set)
        && newpod::is_canonical_name(spec::name(set), name)
}

impl Facts {
    /// The facts of a placeholder (3.2 step 4) at `ordinal`: not created, unavailable, with
    /// identity and storage of a new pod, on the revision the 3.5 rule gives it.
    pub fn placeholder(ordinal: i32, gets_current: bool, env: &FactEnv<'_>) -> Facts {
        let same = env.current == env.update;
        let revision = match (same, gets_current) {
            (true, _) => RevisionOf::Both,
            (false, true) => RevisionOf::Current,
            (false, false) => RevisionOf::Update,
        };
        Facts {
            ordinal,
            created: false,
            pending: false,
            terminal: false,
            terminating: false,
            running_ready: false,
            available: false,
            unavailable: true,
            revision,
            identity_and_storage: true,
        }
    }
}

/// A pod of the sync with its facts. `pod` is `None` for a placeholder: its object is only
/// built when it is created (upstream builds every placeholder up front; here a monotonic
/// scale-up does not clone the template for every missing ordinal on every sync).
#[derive(Debug, Clone, Copy)]
pub struct Slot<'a> {
    pub pod: Option<&'a Pod>,
    pub f: Facts,
}

impl Slot<'_> {
    /// The pod's name (`<set>-<ordinal>` for a placeholder).
    pub fn name(&self, set: &StatefulSet) -> Cow<'_, str> {
        match self.pod {
            Some(p) => Cow::Borrowed(pod::name(p)),
            None => Cow::Owned(format!("{}-{}", spec::name(set), self.f.ordinal)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::labels::POD_NAME_LABEL;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use std::collections::BTreeMap;

    #[test]
    fn identity_fact_agrees_with_identity_matches() {
        let set = StatefulSet {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("ns".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        let sem = crate::core::Version::V1_37.semantics();
        let env = FactEnv {
            set: &set,
            current: "a",
            update: "b",
            min_ready: pod::MinReady::default(),
            now: Now::UNIX_EPOCH,
            sem: &sem,
        };
        let pod = |name: &str, ns: &str, label: Option<&str>| Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some(ns.into()),
                labels: label.map(|l| BTreeMap::from([(POD_NAME_LABEL.to_string(), l.into())])),
                ..Default::default()
            },
            ..Default::default()
        };
        let cases = [
            pod("web-1", "ns", Some("web-1")),
            pod("web-1", "other", Some("web-1")),
            pod("web-1", "ns", None),
            pod("web-1", "ns", Some("web-2")),
            pod("web-01", "ns", Some("web-01")),
            pod("webx-1", "ns", Some("webx-1")),
        ];
        let got: Vec<bool> =
            cases.iter().map(|p| Facts::of(p, &env).identity_and_storage).collect();
        let want: Vec<bool> = cases.iter().map(|p| newpod::identity_matches(&set, p)).collect();
        assert_eq!(got, want);
        assert_eq!(got, [true, false, false, false, false, false]);
    }
}
