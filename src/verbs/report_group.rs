//! `explain` on a set of a rollout group: the whole group as any member's part names it (each
//! member's state from its own part; a fleet's members in other clusters read through the
//! contexts of this kubeconfig that reach them, found by the clusters' identities), or — for a group grafana/rollout-operator drives (its
//! label on OnDelete sets) — that it is shown read-only and what rollout-operator does next, as
//! the sets' status tells. Names and reasons come from the cluster: escaped.
//!
//! Owns: the report's group section. Reads the namespace's sets once (the verb's listing).

use k8s_openapi::api::apps::v1::StatefulSet;
use serde::Serialize;

use crate::plan::group::part::{self, ROLLOUT_GROUP};

/// The group a set is in.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupReport {
    /// `group` (its sets in one cluster) or `fleet` (in several).
    pub kind: &'static str,
    pub name: String,
    /// `ststui` (a group plan's parts) or `grafana/rollout-operator`.
    pub driver: &'static str,
    pub sets: Vec<Member>,
    pub words: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Member {
    /// A fleet's: the member's cluster as its runner's context named it (`None` in a group).
    pub cluster: Option<String>,
    pub set: String,
    /// As its part says (`waiting`, `rolling`, `done`, `halted`, `aborted`); `None`: unknown.
    pub state: Option<&'static str>,
}

/// A fleet's member in another cluster, as read from here.
#[derive(Debug, Clone)]
pub enum Reach {
    /// Its cluster answered: the set (`None`: not there).
    Read(Option<Box<StatefulSet>>),
    /// Not read: why, in words.
    Unread(String),
}

/// A fleet's members in other clusters, by place.
pub type Reached = std::collections::BTreeMap<usize, Reach>;

/// The group of `set`, from the namespace's `sets` (`None`: in none); a fleet's members in
/// other clusters as `reach` reads them (given the part).
pub fn of(
    set: &StatefulSet,
    sets: &[StatefulSet],
    reach: impl FnOnce(&part::Part) -> Reached,
) -> Option<GroupReport> {
    let esc = |t: &str| crate::text::escape_controls(t).into_owned();
    if let Some(p) = part::read(set).any() {
        let reached = if p.fleet() { reach(p) } else { Reached::new() };
        let lookup = |n: &str| sets.iter().find(|s| s.metadata.name.as_deref() == Some(n));
        let find = |i: usize| match (p.beside(i), reached.get(&i)) {
            (Some(n), _) => lookup(n).map_or(part::Found::Missing, part::Found::Set),
            (None, Some(Reach::Read(Some(s)))) => part::Found::Set(s),
            (None, Some(Reach::Read(None))) => part::Found::Missing,
            (None, Some(Reach::Unread(why))) => part::Found::Unread(why),
            (None, None) => part::Found::Unread("not read from here"),
        };
        let standing = part::whole_by(p, find);
        let cluster = |i: usize| p.clusters.as_ref().and_then(|c| c.get(i)).map(|c| c.shown());
        let members = (standing.iter().enumerate())
            .map(|(i, s)| Member {
                cluster: cluster(i),
                set: esc(&s.set),
                state: s.state.map(part::State::word),
            })
            .collect();
        return Some(GroupReport {
            kind: if p.fleet() { "fleet" } else { "group" },
            name: esc(&p.group),
            driver: "ststui",
            sets: members,
            words: part::words(p, &standing),
        });
    }
    let label = set.metadata.labels.as_ref()?.get(ROLLOUT_GROUP)?.clone();
    let mut members: Vec<&StatefulSet> = sets
        .iter()
        .filter(|s| s.metadata.labels.as_ref().and_then(|l| l.get(ROLLOUT_GROUP)) == Some(&label))
        .collect();
    members.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    let names: Vec<String> =
        members.iter().map(|s| esc(s.metadata.name.as_deref().unwrap_or_default())).collect();
    part::rollout_operator(&members)?;
    let next = part::operator_next(&members);
    Some(GroupReport {
        kind: "group",
        name: esc(&label),
        driver: "grafana/rollout-operator",
        sets: names.iter().map(|n| Member { cluster: None, set: n.clone(), state: None }).collect(),
        words: format!(
            "group {} ({}): driven by grafana/rollout-operator ({ROLLOUT_GROUP}={}, OnDelete): \
             ststui shows it and does not drive it; {next}",
            esc(&label),
            names.join(", "),
            esc(&label)
        ),
    })
}
