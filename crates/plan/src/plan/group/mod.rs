//! Rollout groups: several StatefulSets (zones, racks, tiers) rolled as one plan — never two in
//! motion at once, and a set starts only when every pod of every set of the group is updated
//! or untouched, Ready and available. The pure half: which sets make the group and in what
//! order ([`members`]), and what holds the group now ([`hold`]) — where "every pod" means every
//! ordinal a set's spec says should exist, so a pod never created (a quota, an admission
//! webhook, a Pending claim) holds the group, named (grafana/rollout-operator#246 judged such a
//! set done and rolled the next zone).
//!
//! Owns: group membership, order and the group's readiness rule. Must not: do IO, read a clock
//! (time is an input), or know which backend lists the sets (a label selector is the
//! adapter's: the API server filters, the caller passes what it listed).

pub mod held;
pub mod part;

use k8s_openapi::api::apps::v1::StatefulSet;

use crate::core::pod as podf;
use crate::core::types::Now;
pub use crate::plan::member::Member;

/// How the group's sets are named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pick {
    /// These sets, each of which must exist (`--group a,b,c`).
    Names(Vec<String>),
    /// The sets whose name matches a shell pattern (`ingester-zone-*`: `*` any run, `?` one
    /// character).
    Pattern(String),
    /// Every set given (the adapter listed them with a label selector, `-l rollout-group=x`).
    Listed,
}

/// In what order the group's sets roll.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Order {
    /// As named (`Pick::Names`), else alphabetical.
    AsGiven,
    /// By name.
    Alphabetical,
    /// By tiers (`--order fe,be`): a set rolls with the first tier its name contains as a
    /// dash-separated word (`starrocks-fe` is tier `fe`), alphabetical within a tier; a set of
    /// no tier is refused (the operator named the order: nothing is guessed).
    Tiers(Vec<String>),
}

/// The most sets a group may have (a typo'd pattern must not plan a whole namespace).
pub const MAX_SETS: usize = 64;

/// Why a group cannot be made of the sets given: what was wrong and what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadGroup {
    #[error("no StatefulSet named {} in the namespace: a group names existing sets", .0.join(", "))]
    Missing(Vec<String>),
    #[error("{0} is named twice in the group")]
    Twice(String),
    #[error("no StatefulSet matches {0:?} (`*` any run, `?` one character)")]
    NoMatch(String),
    #[error("no StatefulSet carries the group's labels")]
    NoneListed,
    #[error("{0} sets: a group has at most {MAX_SETS}")]
    TooMany(usize),
    #[error(
        "{set} is in no tier of --order {}: name a tier its name contains as a dash-separated word",
        .tiers.join(",")
    )]
    NoTier { set: String, tiers: Vec<String> },
}

impl BadGroup {
    /// Whether the operator asked for what cannot be (exit 2: too many sets, an order naming no
    /// tier of a set), rather than for sets the namespace does not hold as asked (exit 1).
    pub fn usage(&self) -> bool {
        matches!(self, BadGroup::TooMany(_) | BadGroup::NoTier { .. })
    }
}

/// The group's set names in rolling order, chosen from `sets` (those in the namespace, or
/// those a selector listed).
pub fn members(pick: &Pick, order: &Order, sets: &[&StatefulSet]) -> Result<Vec<String>, BadGroup> {
    let names: Vec<&str> = sets.iter().filter_map(|s| s.metadata.name.as_deref()).collect();
    let mut chosen: Vec<String> = match pick {
        Pick::Names(given) => {
            let missing: Vec<String> =
                given.iter().filter(|g| !names.contains(&g.as_str())).cloned().collect();
            if !missing.is_empty() {
                return Err(BadGroup::Missing(missing));
            }
            let mut seen = Vec::new();
            for g in given {
                if seen.contains(g) {
                    return Err(BadGroup::Twice(g.clone()));
                }
                seen.push(g.clone());
            }
            seen
        }
        Pick::Pattern(p) => {
            let mut m: Vec<String> =
                names.iter().filter(|n| wildcard(p, n)).map(|n| n.to_string()).collect();
            m.sort();
            if m.is_empty() {
                return Err(BadGroup::NoMatch(p.clone()));
            }
            m
        }
        Pick::Listed => {
            let mut m: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            m.sort();
            if m.is_empty() {
                return Err(BadGroup::NoneListed);
            }
            m
        }
    };
    if chosen.len() > MAX_SETS {
        return Err(BadGroup::TooMany(chosen.len()));
    }
    match order {
        Order::AsGiven => {}
        Order::Alphabetical => chosen.sort(),
        Order::Tiers(tiers) => {
            let tier_of = |name: &str| tiers.iter().position(|t| name.split('-').any(|w| w == t));
            if let Some(none) = chosen.iter().find(|n| tier_of(n).is_none()) {
                return Err(BadGroup::NoTier { set: none.clone(), tiers: tiers.clone() });
            }
            chosen.sort_by(|a, b| (tier_of(a), a).cmp(&(tier_of(b), b)));
        }
    }
    Ok(chosen)
}

/// Whether `name` matches the shell pattern `pattern` (`*`, `?`; no classes). Written by hand:
/// two wildcards over a DNS name, not worth a dependency.
fn wildcard(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // The classic two-pointer match with one backtrack point for the last `*`.
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|c| *c == '*')
}

/// What holds the group now: a set whose spec its controller has not observed yet (`pod` is then
/// the set's name), the first pod (in rolling order, by ordinal) that is not updated or
/// untouched, Ready and available, or an ordinal the spec wants that has no pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    pub set: String,
    pub pod: String,
    pub why: String,
}

impl std::fmt::Display for Hold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.pod, self.why)
    }
}

/// The first thing that keeps the next set of the group from starting (`None`: every pod of
/// every set is updated or untouched, Ready and available). `members` in rolling order (a
/// member whose set is gone is skipped: the caller says it is gone).
pub fn hold(members: &[Member<'_>], now: Now) -> Option<Hold> {
    first_unfit(members, now, true)
}

/// [`hold`] without the revision rule: every pod the specs want exists and is Ready and
/// available, whatever its revision — what an abort waits for between the sets it reverts (a
/// canary left on the aborted revision behind the restored partition is no reason to wait).
pub fn unsettled(members: &[Member<'_>], now: Now) -> Option<Hold> {
    first_unfit(members, now, false)
}

fn first_unfit(members: &[Member<'_>], now: Now, revisions: bool) -> Option<Hold> {
    for m in members {
        let Some(set) = m.set else { continue };
        let name = set.metadata.name.clone().unwrap_or_default();
        let status = set.status.clone().unwrap_or_default();
        let (current, update) = (
            status.current_revision.unwrap_or_default(),
            status.update_revision.unwrap_or_default(),
        );
        // A spec its controller has not acted on yet (a revert, a step just written): its
        // pods say nothing of what is about to move.
        if let Some(g) = set.metadata.generation
            && status.observed_generation.unwrap_or(0) < g
        {
            let why = format!(
                "has a spec its controller has not observed yet (generation {g}, observed {})",
                status.observed_generation.unwrap_or(0)
            );
            return Some(Hold { set: name.clone(), pod: name, why });
        }
        let start = crate::core::spec::start_ordinal(set);
        let replicas = crate::core::spec::replicas(set).max(0);
        let mr = m.min_ready;
        for ordinal in start..start.saturating_add(replicas) {
            let pod_name = crate::core::labels::pod_name(&name, ordinal);
            let found = m.pods.iter().find(|(o, _)| *o == ordinal).map(|(_, p)| *p);
            let why = match found {
                None => Some(
                    "was never created (a quota, an admission webhook or a pending \
                              claim may keep it out)"
                        .to_string(),
                ),
                Some(p) if podf::is_terminating(p) => Some("is terminating".into()),
                Some(p) => {
                    let rev = podf::revision(p);
                    if revisions && rev != current && rev != update {
                        Some(format!("is on revision {rev}, neither current nor update"))
                    } else if !podf::is_running_and_ready(p) {
                        Some("is not Ready".into())
                    } else if !podf::is_running_and_available(p, mr, now) {
                        Some("is Ready but not yet available (minReadySeconds)".into())
                    } else {
                        None
                    }
                }
            };
            if let Some(why) = why {
                return Some(Hold { set: name, pod: pod_name, why });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
