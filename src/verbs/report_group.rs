//! `explain` on a set of a rollout group: the whole group as any member's part names it (each
//! member's state from its own part), or — for a group grafana/rollout-operator drives (its
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
    pub name: String,
    /// `ststui` (a group plan's parts) or `grafana/rollout-operator`.
    pub driver: &'static str,
    pub sets: Vec<Member>,
    pub words: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Member {
    pub set: String,
    /// As its part says (`waiting`, `rolling`, `done`, `halted`, `aborted`); `None`: unknown.
    pub state: Option<&'static str>,
}

/// The group of `set`, from the namespace's `sets` (`None`: in none).
pub fn of(set: &StatefulSet, sets: &[StatefulSet]) -> Option<GroupReport> {
    let esc = |t: &str| crate::text::escape_controls(t).into_owned();
    if let Some(p) = part::read(set).part() {
        let lookup = |n: &str| sets.iter().find(|s| s.metadata.name.as_deref() == Some(n));
        let standing = part::whole(p, lookup);
        let members = standing
            .iter()
            .map(|s| Member { set: esc(&s.set), state: s.state.map(part::State::word) })
            .collect();
        return Some(GroupReport {
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
        name: esc(&label),
        driver: "grafana/rollout-operator",
        sets: names.iter().map(|n| Member { set: n.clone(), state: None }).collect(),
        words: format!(
            "group {} ({}): driven by grafana/rollout-operator ({ROLLOUT_GROUP}={}, OnDelete): \
             ststui shows it and does not drive it; {next}",
            esc(&label),
            names.join(", "),
            esc(&label)
        ),
    })
}
