//! Choosing the current and update revision on every sync (spec 2.5 `getStatefulSetRevisions`):
//! reuse, rollback by renumbering, semantic comparison, creation with collision handling.
//!
//! OWNER: core-rev helper. Signatures are the contract with the sync (`reconcile`).
//!
//! NOTE for the sync: [`resolve`] keeps its agreed signature and assumes the default version
//! (1.37). Call [`resolve_with`] with the sync's [`Options`] so the revision bytes and the
//! semantic comparison follow the selected version (creationTimestamp encoding, gate).
//!
//! Pure: upstream's API calls become effects. The create loop (`CreateControllerRevision`)
//! checks names against every revision in the namespace instead of POSTing and reading back
//! AlreadyExists; upstream's LRU cache of positive semantic comparisons (keyed by set UID,
//! generation and revision resourceVersion) is an optimisation with no observable effect and is
//! not reproduced: the comparison is simply recomputed.

use std::borrow::Cow;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};

use super::defaults::set_defaults_stateful_set;
use super::gojson::{self, GoEncoding};
use super::history::{
    NewRevision, apply_revision, equal_revision_bytes, new_revision, next_revision, revision_bytes,
    revision_name, sort_revisions,
};
use super::options::{Options, Version};
use super::types::{Effect, SyncError};

/// The outcome of spec 2.5.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub current: ControllerRevision,
    pub update: ControllerRevision,
    /// `status.collisionCount` plus any increments from this sync.
    pub collision_count: i32,
    /// CreateRevision / UpdateRevision effects, in order.
    pub effects: Vec<Effect>,
}

/// Whether `StatefulSetSemanticRevisionComparison` exists and is on by default in `version`:
/// from v1.35 and in the v1.34 backport (#135087), released in v1.34.2 (1.34 release notes).
pub fn semantic_comparison_enabled(version: Version) -> bool {
    version.minor >= 35 || (version.minor == 34 && version.patch >= 2)
}

/// Spec 2.5 with the default options (v1.37). See [`resolve_with`].
#[doc(alias = "getStatefulSetRevisions")]
pub fn resolve(
    set: &StatefulSet,
    listed: &[&ControllerRevision],
    all_in_namespace: &[&ControllerRevision],
) -> Result<Resolved, SyncError> {
    resolve_with(set, listed, all_in_namespace, &Options::default())
}

/// Spec 2.5. `listed` is the output of `claim::list_revisions` (sorted again here, stably, as
/// upstream does); `all_in_namespace` is every revision in the namespace (a name held by a
/// revision with different data is a hash collision, whoever owns it).
///
/// Branches, in upstream order:
/// * a. the newest equal revision is the latest revision → reuse the latest;
/// * b. an older revision is equal → rollback: it is renumbered to `max + 1`
///   ([`Effect::UpdateRevision`]) and keeps its name;
/// * c. (gate on, history not empty) the latest revision applied to the set and API-defaulted
///   encodes to the candidate's bytes → reuse the latest (no spurious rollout, #135017);
/// * d. create `<set>-<hash>`: a free name → [`Effect::CreateRevision`]; a name held with the
///   same bytes → reuse that object; held with other bytes → collision count + 1 and rehash.
///
/// `current` is the listed revision named `status.currentRevision`, else the update revision.
#[doc(alias = "getStatefulSetRevisions")]
pub fn resolve_with(
    set: &StatefulSet,
    listed: &[&ControllerRevision],
    all_in_namespace: &[&ControllerRevision],
    options: &Options,
) -> Result<Resolved, SyncError> {
    resolve_borrowed(set, listed, all_in_namespace, options).map(|r| Resolved {
        current: r.current.into_owned(),
        update: r.update.into_owned(),
        collision_count: r.collision_count,
        effects: r.effects,
    })
}

/// [`resolve_with`] returning the chosen revisions borrowed from the listings where they come
/// from them (the sync only reads them), copied only when renumbered or new.
#[derive(Debug, Clone)]
pub struct ResolvedRef<'a> {
    pub current: Cow<'a, ControllerRevision>,
    pub update: Cow<'a, ControllerRevision>,
    pub collision_count: i32,
    pub effects: Vec<Effect>,
}

/// Spec 2.5 as [`resolve_with`], without copying the revisions it picks from the listings.
#[doc(alias = "getStatefulSetRevisions")]
pub fn resolve_borrowed<'a>(
    set: &StatefulSet,
    listed: &[&'a ControllerRevision],
    all_in_namespace: &[&'a ControllerRevision],
    options: &Options,
) -> Result<ResolvedRef<'a>, SyncError> {
    let encoding = GoEncoding::for_version(options.version);
    let mut sorted = listed.to_vec();
    sort_revisions(&mut sorted);
    let status = set.status.as_ref();
    let mut collision_count = status.and_then(|s| s.collision_count).unwrap_or(0);

    let candidate = new_revision(set, next_revision(&sorted), collision_count, encoding)?;
    let mut raw = ListedBytes::new(&sorted);
    let equal: Vec<usize> =
        (0..sorted.len()).filter(|&i| raw.equal_to_candidate(i, &candidate)).collect();

    let mut effects = Vec::new();
    let latest = sorted.len().checked_sub(1);
    let update = match (equal.last(), latest) {
        (Some(&last_equal), Some(latest)) if raw.equal(latest, last_equal) => {
            Cow::Borrowed(sorted[latest])
        }
        (Some(&last_equal), _) => {
            if sorted[last_equal].revision == candidate.revision.revision {
                Cow::Borrowed(sorted[last_equal])
            } else {
                let mut renumbered = sorted[last_equal].clone();
                renumbered.revision = candidate.revision.revision;
                effects.push(Effect::UpdateRevision(Box::new(renumbered.clone())));
                Cow::Owned(renumbered)
            }
        }
        (None, Some(latest))
            if semantic_comparison_enabled(options.version)
                && matches_semantically(set, sorted[latest], &candidate.raw, options) =>
        {
            Cow::Borrowed(sorted[latest])
        }
        (None, _) => {
            let (update, created) = create_revision(
                set,
                candidate.revision,
                &candidate.raw,
                all_in_namespace,
                &mut collision_count,
            );
            if created {
                effects.push(Effect::CreateRevision(Box::new(update.clone().into_owned())));
            }
            update
        }
    };

    let current_name = status.and_then(|s| s.current_revision.as_deref());
    let current = sorted
        .iter()
        .find(|r| current_name.is_some() && r.metadata.name.as_deref() == current_name)
        .map_or_else(|| update.clone(), |r| Cow::Borrowed(*r));
    Ok(ResolvedRef { current, update, collision_count, effects })
}

/// The listed revisions' `Data.Raw`, encoded only when needed: revisions whose data is equal
/// as a JSON value have equal bytes (the encoding is a function of the value), so the bytes are
/// only computed to compare values that differ.
struct ListedBytes<'r, 'a> {
    sorted: &'r [&'a ControllerRevision],
    raw: Vec<Option<Vec<u8>>>,
}

impl<'r, 'a> ListedBytes<'r, 'a> {
    fn new(sorted: &'r [&'a ControllerRevision]) -> Self {
        ListedBytes { sorted, raw: vec![None; sorted.len()] }
    }
    /// Encodes `sorted[i]` if it has not been yet.
    fn fill(&mut self, i: usize) {
        let r = self.sorted[i];
        self.raw[i].get_or_insert_with(|| revision_bytes(r));
    }

    fn get(&self, i: usize) -> &[u8] {
        self.raw[i].as_deref().unwrap_or_default()
    }

    /// `EqualRevision(sorted[i], candidate)`.
    fn equal_to_candidate(&mut self, i: usize, candidate: &NewRevision) -> bool {
        let r = self.sorted[i];
        // Equal values encode to equal bytes (a null value encodes to no bytes; the candidate's
        // data is never null).
        if !r.data.0.is_null() && r.data.0 == candidate.revision.data.0 {
            return equal_revision_bytes(r, &[], &candidate.revision, &[]);
        }
        self.fill(i);
        equal_revision_bytes(r, self.get(i), &candidate.revision, &candidate.raw)
    }

    /// `EqualRevision(sorted[i], sorted[j])`.
    fn equal(&mut self, i: usize, j: usize) -> bool {
        let (a, b) = (self.sorted[i], self.sorted[j]);
        if a.data.0 == b.data.0 {
            return equal_revision_bytes(a, &[], b, &[]);
        }
        self.fill(i);
        self.fill(j);
        equal_revision_bytes(a, self.get(i), b, self.get(j))
    }
}

/// Spec 2.5 c: apply `latest` to the set, default it as the API server would, and compare the
/// bytes of the rebuilt revision with the candidate's. Any failure counts as "not equal".
fn matches_semantically(
    set: &StatefulSet,
    latest: &ControllerRevision,
    candidate_raw: &[u8],
    options: &Options,
) -> bool {
    let Ok(mut applied) = apply_revision(set, latest) else { return false };
    set_defaults_stateful_set(&mut applied, &options.semantics);
    let encoding = GoEncoding::for_version(options.version);
    match gojson::template_patch(&applied.spec.template, encoding) {
        Ok(patch) => gojson::marshal(&patch) == candidate_raw,
        Err(_) => false,
    }
}

/// `CreateControllerRevision` against the namespace's revisions: returns the revision to use
/// and whether it is new (to be POSTed). Only the name changes on a collision: upstream keeps
/// the `controller.kubernetes.io/hash` label computed with the collision count the sync started
/// with.
#[doc(alias = "CreateControllerRevision")]
fn create_revision<'a>(
    set: &StatefulSet,
    mut revision: ControllerRevision,
    raw: &[u8],
    all_in_namespace: &[&'a ControllerRevision],
    collision_count: &mut i32,
) -> (Cow<'a, ControllerRevision>, bool) {
    let set_name = set.metadata.name.as_deref().unwrap_or_default();
    // Each collision moves to a name held by a different revision, so this ends within
    // `all_in_namespace.len() + 1` rounds.
    for _ in 0..=all_in_namespace.len() {
        let hash = crate::core::fnv::hash_revision(raw, Some(*collision_count));
        let name = revision_name(set_name, &hash);
        let existing =
            all_in_namespace.iter().find(|r| r.metadata.name.as_deref() == Some(name.as_str()));
        match existing {
            Some(existing) if revision_bytes(existing) == raw => {
                return (Cow::Borrowed(*existing), false);
            }
            Some(_) => *collision_count = collision_count.wrapping_add(1),
            None => {
                revision.metadata.name = Some(name);
                return (Cow::Owned(revision), true);
            }
        }
    }
    (Cow::Owned(revision), true)
}
