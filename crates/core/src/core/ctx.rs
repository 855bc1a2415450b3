//! The working state of one `updateStatefulSet` pass: its inputs ([`UpdateInput`]) and the
//! per-sync context ([`Ctx`]) that both halves of the pod work read and write: the replica and
//! condemned items (`update`) and the rolling update (`rolling`). Kept apart from both so neither
//! depends on the other's module.
//!
//! Owns: the shape of that state and its one shared effect helper. Must not: decide anything.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::options::Semantics;
use super::pvc::{ClaimIndex, Sink};
use super::types::{DeleteReason, Effect, Now};

/// Everything `updateStatefulSet` reads.
#[derive(Debug, Clone, Copy)]
pub struct UpdateInput<'a> {
    /// The live set.
    pub set: &'a StatefulSet,
    /// The set with the current / update revision's template applied (2.1).
    pub current_set: &'a StatefulSet,
    pub update_set: &'a StatefulSet,
    pub current_revision: &'a str,
    pub update_revision: &'a str,
    pub collision_count: i32,
    pub claims: &'a ClaimIndex<'a>,
    pub sem: &'a Semantics,
    pub now: Now,
}

/// Per-sync working state shared by the item functions.
pub(crate) struct Ctx<'a> {
    pub inp: UpdateInput<'a>,
    pub monotonic: bool,
    pub mrs: i32,
    pub sink: Sink,
    /// The update revision's set has no volumeClaimTemplates.
    pub no_claim_templates: bool,
}

impl Ctx<'_> {
    pub(crate) fn delete(&mut self, name: &str, reason: DeleteReason) {
        self.sink.push(Effect::DeletePod { name: name.into(), reason });
    }
}
