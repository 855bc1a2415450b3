//! `ststui abort NAME --contexts a,b,c`: a fleet's abort — the clusters its plan touched
//! reverted newest first, as a group's sets are (`group::revert_touched`). The contexts may be
//! named in any order and otherwise than the runner named them: each member is found by its
//! cluster's identity (the `kube-system` namespace's uid) in the fleet's part.
//!
//! Owns: matching the fleet's members to the contexts.

use std::time::Instant;

use super::group::{Members, revert_touched};
use crate::cli::AbortArgs;
use crate::cluster::{Target, Writes};
use crate::plan::group::part::{self, Part};
use crate::verbs::rollout::fleet::{contexts, identities};
use crate::verbs::session::Sessions;
use crate::verbs::{Exit, VerbError};

pub fn abort(
    target: &Target,
    args: &AbortArgs,
    list: &str,
    deadline: Instant,
) -> Result<Exit, VerbError> {
    let named = contexts(list, target.context.as_deref())?;
    let of = |c: &String| Target {
        context: Some(c.clone()),
        name: Some(args.name.clone()),
        ..target.clone()
    };
    let targets: Vec<Target> = named.iter().map(of).collect();
    let clusters = identities(&targets)?;
    // The fleet's part, from the first member that carries one.
    let mut seen = Sessions::open_each(targets.clone())?;
    seen.sync(deadline)?;
    let fleet: Option<Part> = seen
        .members()
        .find_map(|s| s.set().and_then(|set| part::read(set).any().filter(|p| p.fleet()).cloned()));
    drop(seen);
    let Some(fleet) = fleet else {
        return Err(VerbError::new(
            Exit::Expectation,
            format!(
                "{}: in no fleet's plan in these clusters; nothing written",
                crate::text::escape_controls(&args.name)
            ),
        ));
    };
    // The members in the fleet's order, each in the context that reaches its cluster.
    let mut order = Vec::new();
    for c in fleet.clusters.iter().flatten() {
        let Some(k) = clusters.iter().position(|x| x.uid == c.uid) else {
            return Err(VerbError::new(
                Exit::Usage,
                format!(
                    "fleet {}: its cluster {} (kube-system uid {}) is not among --contexts; name \
                     every cluster the fleet rolls",
                    crate::text::escape_controls(&fleet.group),
                    c.shown(),
                    crate::text::shown(&c.uid, 64)
                ),
            ));
        };
        order.push(k);
    }
    // Each member in its cluster's context (a group in each cluster: several per context).
    let member_targets: Vec<Target> = (order.iter().zip(&fleet.sets))
        .map(|(&k, set)| Target { name: Some(set.clone()), ..targets[k].clone() })
        .collect();
    let mut writes = Vec::with_capacity(targets.len());
    for t in &targets {
        writes.push(Writes::open(t).map_err(|e| VerbError::new(Exit::Usage, e))?);
    }
    let mut sessions = Sessions::open_each(member_targets)?;
    sessions.sync(deadline)?;
    let parts: Vec<Option<Part>> = sessions
        .members()
        .map(|s| s.set().and_then(|set| part::read(set).any().cloned()))
        .collect();
    let labels: Vec<String> = (order.iter().zip(&fleet.sets))
        .map(|(&k, set)| format!("{}/{}", clusters[k].shown(), crate::text::escape_controls(set)))
        .collect();
    let members = Members { sessions, cluster_of: order, writes, labels };
    revert_touched(members, &parts, &fleet, args, deadline)
}
