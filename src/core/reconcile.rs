//! The sync entry point (spec 1.2 and 3.1): one call is one upstream `sync(key)` for one set.
//!
//! OWNER: core-sync helper.

use super::options::Options;
use super::types::{Now, Observed, Plan};

/// One sync of `observed.set` at time `now`: the effects upstream would issue, in order, the
/// computed status, and why it stopped early. Pure and deterministic.
#[doc(alias = "sync")]
#[doc(alias = "UpdateStatefulSet")]
pub fn reconcile(observed: &Observed<'_>, options: &Options, now: Now) -> Plan {
    let _ = (observed, options, now);
    Plan::default()
}
