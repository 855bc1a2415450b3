//! The timeline's `blocked` wording: the console's one-sentence explanation of why a sync waits
//! (`core::explain::blocker_step`) and the pod that is the cause, if one is.
//!
//! Owns no state and touches nothing; the wording itself belongs to the core.

use crate::core::Blocker;
use crate::core::explain::blocker_step;

/// The `blocked` reason and pod for a [`Blocker`].
pub fn blocker(b: &Blocker) -> (String, Option<String>) {
    let step = blocker_step(b);
    (step.text, step.pod)
}
