//! [`GridMemo`]: what the grid read of each pod version, so a change of one pod among 10,000
//! rebuilds the grid without touching the other 9,999 (each pod's labels, owner references,
//! conditions and container statuses lie elsewhere in memory: reading them all again was most
//! of a rebuild, 4–6 ms at 10,000 pods).
//!
//! A pod version is its allocation (`Arc<Pod>`; the mirror replaces the `Arc` when the pod
//! changes). The memo holds each `Arc` it read, so an address is never reused while remembered.
//! What a pod's brief depends on beyond the pod — whether the set claims it (its uid, name,
//! namespace, selector, deletion) — is the memo's key: when that moves, everything is read
//! again. Classification against the set's revisions and replica range is not memoized (it
//! reads no pod).
//!
//! Owns: the memo. Written only by the reducer (`app::derived::refresh`).

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use super::{GridView, OrdinalCell, PodState, RevClass, classify, intern, pod_revision, restarts};
use crate::core::claim::ClaimEnv;

impl GridView {
    /// [`GridView::build`] from the set's ordinal index (`Mirror::indexed`), reading only the
    /// pods that changed since the memo last saw them (`memo`).
    pub fn build_memo<'a>(
        set: &StatefulSet,
        pods: impl Iterator<Item = (i32, &'a Arc<Pod>)>,
        current: &str,
        update: &str,
        memo: &mut GridMemo,
    ) -> GridView {
        let spec = &set.spec;
        let replicas = spec.replicas.unwrap_or(1).max(0);
        let start = spec.ordinals.as_ref().and_then(|o| o.start).unwrap_or(0);
        let end = start.saturating_add(replicas);
        let env = crate::core::claim::ClaimEnv::new(set).ok();
        memo.begin(set);
        // Memo name index → (class, grid name index), decided once per distinct revision.
        let mut classes: Vec<Option<(RevClass, u16)>> = Vec::new();
        let mut revisions: Vec<String> = Vec::new();
        let mut members = Vec::new();
        for (ordinal, p) in pods {
            let Some(b) = memo.brief(env.as_ref(), p).filter(|_| ordinal >= 0) else { continue };
            let (rev, revision) = match b.revision.map(usize::from) {
                None => (classify(None, current, update), None),
                Some(i) => {
                    if classes.len() <= i {
                        classes.resize(i + 1, None);
                    }
                    let (rev, idx) = *classes[i].get_or_insert_with(|| {
                        let name = memo.names.get(i).map_or("", String::as_str);
                        (classify(Some(name), current, update), intern(&mut revisions, name))
                    });
                    (rev, Some(idx))
                }
            };
            let condemned = ordinal < start || ordinal >= end;
            let (state, restarts, exists) = (b.state, b.restarts, true);
            members.push(OrdinalCell {
                ordinal,
                exists,
                state,
                rev,
                revision,
                condemned,
                restarts,
            });
        }
        memo.end();
        Self::assemble(set, members, revisions)
    }
}

/// What the grid reads of one pod: `None` when the set does not count it as its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Brief {
    pub state: PodState,
    /// The pod's revision name: an index into [`GridMemo::names`].
    pub revision: Option<u16>,
    pub restarts: i32,
}

/// Briefs by pod version, under one set's claim rules.
#[derive(Debug, Clone, Default)]
pub struct GridMemo {
    /// The claim rules the briefs were made under (see the module doc).
    rules: String,
    /// Revision names seen, indexed by [`Brief::revision`].
    pub names: Vec<String>,
    pods: HashMap<usize, Entry>,
    /// The build under way (entries it read carry it).
    build: u64,
    /// Entries read by the build under way.
    used: usize,
}

/// A remembered pod version.
#[derive(Debug, Clone)]
struct Entry {
    /// Held so that its address is not reused while remembered.
    _pod: Arc<Pod>,
    brief: Option<Brief>,
    /// The last build that read it.
    seen: u64,
}

/// Versions remembered beyond those the last build read (older versions, pods gone): each
/// holds a whole pod, so they are forgotten soon.
const SLACK: usize = 64;

/// The identity of a set's claim rules.
fn rules_of(set: &StatefulSet) -> String {
    let m = &set.metadata;
    format!(
        "{:?}/{:?}/{:?}/{}/{:?}",
        m.namespace,
        m.name,
        m.uid,
        m.deletion_timestamp.is_some(),
        set.spec.selector
    )
}

impl GridMemo {
    /// Starts a build for `set`: forgets everything when its claim rules moved.
    pub fn begin(&mut self, set: &StatefulSet) {
        let rules = rules_of(set);
        if rules != self.rules {
            *self = GridMemo { rules, ..GridMemo::default() };
        }
        self.used = 0;
        self.build += 1;
    }

    /// The brief of `pod` (read now unless this version was read before).
    pub fn brief(&mut self, env: Option<&ClaimEnv<'_>>, pod: &Arc<Pod>) -> Option<Brief> {
        self.used += 1;
        let key = Arc::as_ptr(pod) as usize;
        if let Some(e) = self.pods.get_mut(&key) {
            e.seen = self.build;
            return e.brief;
        }
        let claimed = env.is_none_or(|e| e.claims(pod));
        let brief = claimed.then(|| Brief {
            state: PodState::of(pod),
            revision: pod_revision(pod).map(|n| intern(&mut self.names, n)),
            restarts: restarts(pod),
        });
        self.pods.insert(key, Entry { _pod: Arc::clone(pod), brief, seen: self.build });
        brief
    }

    /// Ends a build: past [`SLACK`] versions the build did not read, those are forgotten.
    pub fn end(&mut self) {
        if self.pods.len() > self.used + SLACK {
            let build = self.build;
            self.pods.retain(|_, e| e.seen == build);
        }
    }

    /// Pod versions remembered.
    pub fn len(&self) -> usize {
        self.pods.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }
}
