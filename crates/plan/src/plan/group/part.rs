//! A rollout group's record: every member set carries its part (`ststui.io/group`, JSON) —
//! which group, the group's sets in rolling order, its own place and state — so the group's
//! state is derivable from any one member: its part names the others, and each of theirs says
//! how it stands. One lease for the group (`ststui.io/group-lease`, the plan lease's format) on
//! the group's first set; while a set rolls, its own plan record and lease are the plan
//! engine's as for any plan.
//!
//! [`read`] is the one reader of a part (anyone who may patch a set may write one: it is
//! size-capped, checked, and escaped before it reaches words). Owns: the formats, the group
//! as read from its members ([`whole`]), and what rollout-operator drives. Pure.

use k8s_openapi::api::apps::v1::StatefulSet;
use serde::{Deserialize, Serialize};

use super::MAX_SETS;

/// A member's part of the group's record.
pub const PART: &str = "ststui.io/group";
/// The group's lease, on its first set.
pub const LEASE: &str = "ststui.io/group-lease";
/// grafana/rollout-operator's group label (also what `-l rollout-group=x` selects).
pub const ROLLOUT_GROUP: &str = "rollout-group";
/// The longest part read (a record another writer inflated is invalid, not parsed).
const MAX_PART: usize = 16 * 1024;

/// How a member stands in its group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Not started: it waits for the sets before it.
    Waiting,
    /// Its plan runs (its own plan record says where).
    Rolling,
    /// Its plan ended done (or it had nothing to roll).
    Done,
    /// Its plan halted: the group halted with it.
    Halted,
    /// Reverted by `ststui abort`.
    Aborted,
}

impl State {
    pub fn word(self) -> &'static str {
        match self {
            State::Waiting => "waiting",
            State::Rolling => "rolling",
            State::Done => "done",
            State::Halted => "halted",
            State::Aborted => "aborted",
        }
    }
}

/// One member's part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// The group's name (a `rollout-group` label's value, or what the runner named it).
    pub group: String,
    /// The group's sets in rolling order; the first holds the group's lease.
    pub sets: Vec<String>,
    /// This set's place in `sets`.
    pub place: usize,
    pub state: State,
    /// When the state began (RFC 3339, UTC).
    pub since: String,
    pub by: String,
    /// When the group's plan started: parts of one run share it.
    pub started: String,
    /// Each set's plan steps, and the bake between sets.
    pub steps: String,
    pub zone_bake_seconds: u64,
    /// Why it halted, or what it was aborted by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A fleet's (one set, or a group of sets, rolled across clusters): each member's
    /// cluster, in the order of `sets`. `None`: a group in one cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clusters: Option<Vec<Cluster>>,
    /// A fleet's bake before each next cluster (`zone_bake_seconds`: between the sets of a
    /// cluster).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cluster_bake_seconds: u64,
    /// A fleet's `--approve-between`: this member, the first of its cluster, was asked to wait
    /// for an approval (and whether it came).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// An approval a fleet's member waits for before its cluster starts: asked by the runner,
/// given by `ststui approve` (a claim of whoever may patch the set, as a plan's `pause` is:
/// it lets the run go on, never decides what is done).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// When the runner asked (RFC 3339).
    pub asked: String,
    /// Who approved, and when; `None`: not yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

impl Approval {
    pub fn given(&self) -> bool {
        self.at.is_some()
    }
}

/// A fleet member's cluster as the record names it: a stable identity (the `kube-system`
/// namespace's uid, the same from every machine) and, as a hint for words, the context name
/// of the runner that wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Cluster {
    pub uid: String,
    pub name: String,
}

impl Cluster {
    /// The cluster's name, escaped, for words.
    pub fn shown(&self) -> String {
        escaped(&self.name)
    }
}

/// What does not hold together in a group part (written by others: names shown escaped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum BadPart {
    #[error("it names {0} sets (1 to {MAX_SETS})")]
    Sets(usize),
    #[error("its place {place} is beyond its {sets} sets")]
    Place { place: usize, sets: usize },
    /// A set's name (escaped) that is no StatefulSet name.
    #[error("{0} is not a StatefulSet name")]
    Name(String),
    #[error("it names {clusters} clusters for {sets} sets")]
    Clusters { clusters: usize, sets: usize },
    /// A cluster's identity (escaped) that is none.
    #[error("{0} is not a cluster identity")]
    Cluster(String),
}

impl Part {
    /// Whether `other` is a part of the same group run (same group, sets and start).
    pub fn same_run(&self, other: &Part) -> bool {
        (&self.group, &self.sets, &self.started) == (&other.group, &other.sets, &other.started)
            && same_clusters(self.clusters.as_deref(), other.clusters.as_deref())
    }

    /// Whether it is a fleet's part (its members in several clusters).
    pub fn fleet(&self) -> bool {
        self.clusters.is_some()
    }

    /// Member `i`'s set name where it can be looked up beside this set (same cluster and
    /// namespace): a group's every member; a fleet's those in this member's cluster.
    pub fn beside(&self, i: usize) -> Option<&str> {
        let here = |c: &[Cluster]| {
            let uid = |j: usize| c.get(j).map(|x| x.uid.as_str());
            uid(i).is_some() && uid(i) == uid(self.place)
        };
        let beside = self.clusters.as_deref().is_none_or(here);
        beside.then(|| self.sets.get(i).map(String::as_str))?
    }

    /// Whether member `i` is the first of its cluster after another cluster's (a fleet's
    /// cluster bake and approval come before it).
    pub fn crosses(&self, i: usize) -> bool {
        crosses(self.clusters.as_deref(), i)
    }

    /// Whether it holds together: a place among at most [`MAX_SETS`] named sets.
    fn check(&self) -> Result<(), BadPart> {
        if self.sets.is_empty() || self.sets.len() > MAX_SETS {
            return Err(BadPart::Sets(self.sets.len()));
        }
        if self.place >= self.sets.len() {
            return Err(BadPart::Place { place: self.place, sets: self.sets.len() });
        }
        let bad = |n: &String| {
            n.is_empty()
                || n.len() > 253
                || !n
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-.".contains(c))
        };
        if let Some(n) = self.sets.iter().find(|n| bad(n)) {
            return Err(BadPart::Name(escaped(n)));
        }
        if let Some(c) = &self.clusters {
            if c.len() != self.sets.len() {
                return Err(BadPart::Clusters { clusters: c.len(), sets: self.sets.len() });
            }
            let bad =
                |id: &str| id.is_empty() || id.len() > 253 || id.chars().any(char::is_control);
            if let Some(c) = c.iter().find(|c| bad(&c.uid) || c.name.len() > 253) {
                return Err(BadPart::Cluster(escaped(&c.uid)));
            }
        }
        Ok(())
    }

    /// Whether its group's plan has it waiting or rolling: the group moves it in turn, and a
    /// move by anything else (a plan of its own, a step by hand) would be a second set of the
    /// group in motion.
    pub fn in_turn(&self) -> bool {
        matches!(self.state, State::Waiting | State::Rolling)
    }

    /// "waiting in rollout group G's plan (2/3)", "waiting in fleet F's plan (2/3, cluster
    /// us)", names escaped.
    pub fn place_words(&self) -> String {
        let group = crate::text::escape_controls(&self.group);
        let (at, n) = (self.place + 1, self.sets.len());
        match self.clusters.as_ref().and_then(|c| c.get(self.place)) {
            Some(c) => {
                format!(
                    "{} in fleet {group}'s plan ({at}/{n}, cluster {})",
                    self.state.word(),
                    c.shown()
                )
            }
            None => format!("{} in rollout group {group}'s plan ({at}/{n})", self.state.word()),
        }
    }

    /// The set it is the part of.
    pub fn own(&self) -> &str {
        &self.sets[self.place.min(self.sets.len() - 1)]
    }
}

/// Whether member `i` of a fleet whose members are in `clusters` is the first of its cluster
/// after another cluster's members.
pub fn crosses(clusters: Option<&[Cluster]>, i: usize) -> bool {
    let Some(c) = clusters else { return false };
    i > 0 && c.get(i).map(|x| &x.uid) != c.get(i - 1).map(|x| &x.uid)
}

/// Whether two lists of clusters name the same clusters in the same order — by identity: the
/// context names are the writers' own (another machine's kubeconfig names them otherwise).
pub fn same_clusters(a: Option<&[Cluster]>, b: Option<&[Cluster]>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.uid == y.uid),
        _ => false,
    }
}

/// What a set's group part says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    None,
    /// Not a part: why, the text escaped and cut.
    Invalid(String),
    /// A group's part (its members in this cluster).
    Part(Box<Part>),
    /// A fleet's part (its members in several clusters): what reads a group's members beside
    /// the set never takes it for a group's.
    Fleet(Box<Part>),
}

impl Reading {
    /// A group's part (a fleet's is not).
    pub fn part(&self) -> Option<&Part> {
        match self {
            Reading::Part(p) => Some(p),
            _ => None,
        }
    }

    /// A group's or a fleet's part: what the run and "what holds this set" read.
    pub fn any(&self) -> Option<&Part> {
        match self {
            Reading::Part(p) | Reading::Fleet(p) => Some(p),
            _ => None,
        }
    }
}

/// Reads the set's part (the one reader); a part must name the set it is on.
pub fn read(set: &StatefulSet) -> Reading {
    let Some(raw) = set.metadata.annotations.as_ref().and_then(|a| a.get(PART)) else {
        return Reading::None;
    };
    if raw.len() > MAX_PART {
        return Reading::Invalid(format!("{PART} is {} bytes (at most {MAX_PART})", raw.len()));
    }
    let part = match serde_json::from_str::<Part>(raw) {
        Ok(p) => p,
        Err(e) => {
            return Reading::Invalid(format!("{PART} cannot be read ({e}): {}", escaped(raw)));
        }
    };
    if let Err(why) = part.check() {
        return Reading::Invalid(format!("{PART}: {why}"));
    }
    let name = set.metadata.name.as_deref().unwrap_or_default();
    if part.own() != name {
        return Reading::Invalid(format!(
            "{PART} places {} at {}, not this set",
            escaped(part.own()),
            part.place
        ));
    }
    match part.fleet() {
        true => Reading::Fleet(Box::new(part)),
        false => Reading::Part(Box::new(part)),
    }
}

/// `text` with control characters escaped, cut at 80 characters.
fn escaped(text: &str) -> String {
    crate::text::shown(text, 80)
}

/// One member of a group as read from the members' parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub set: String,
    /// Its part, when it carries one of the same run; `None`: missing, unreadable, or of
    /// another run (said in `note`).
    pub state: Option<State>,
    pub since: String,
    pub reason: Option<String>,
    pub note: Option<String>,
}

/// A member as a reader found it.
#[derive(Debug, Clone, Copy)]
pub enum Found<'s> {
    Set(&'s StatefulSet),
    /// Its cluster answered: no such set.
    Missing,
    /// Not read (a fleet's member in a cluster not reached from here): why, in words.
    Unread(&'s str),
}

/// The whole group as `part` (any member's) names it, each member as its own part says
/// (`lookup` finds a set by name in the part's namespace; a fleet's members in other clusters
/// are not read from here).
pub fn whole<'s>(part: &Part, lookup: impl Fn(&str) -> Option<&'s StatefulSet>) -> Vec<Standing> {
    whole_by(part, |i| match part.beside(i) {
        Some(name) => lookup(name).map_or(Found::Missing, Found::Set),
        None => Found::Unread("not read from here"),
    })
}

/// [`whole`], member `i` as `find(i)` finds it (a fleet's report reads the other clusters).
pub fn whole_by<'s>(part: &Part, find: impl Fn(usize) -> Found<'s>) -> Vec<Standing> {
    (part.sets.iter().enumerate())
        .map(|(i, name)| {
            let found = match find(i) {
                Found::Set(s) => Some(s),
                Found::Missing => None,
                Found::Unread(why) => {
                    let at = part.clusters.as_ref().and_then(|c| c.get(i)).map(Cluster::shown);
                    let note = format!("in cluster {}: {why}", at.unwrap_or_default());
                    let none = (None, String::new(), None);
                    return Standing {
                        set: name.clone(),
                        state: none.0,
                        since: none.1,
                        reason: none.2,
                        note: Some(note),
                    };
                }
            };
            let (state, since, reason, note) = match found.map(read) {
                None => (None, String::new(), None, Some("not found".to_string())),
                Some(Reading::None) => (None, String::new(), None, Some("carries no part".into())),
                Some(Reading::Invalid(why)) => (None, String::new(), None, Some(why)),
                Some(Reading::Part(p) | Reading::Fleet(p)) if !p.same_run(part) => (
                    None,
                    String::new(),
                    None,
                    Some(format!("carries group {}'s part", escaped(&p.group))),
                ),
                Some(Reading::Part(p) | Reading::Fleet(p)) => {
                    (Some(p.state), p.since.clone(), p.reason.clone(), None)
                }
            };
            Standing { set: name.clone(), state, since, reason, note }
        })
        .collect()
}

/// The group's state in words: `group ingester: ingester-zone-a done, ingester-zone-b rolling,
/// ingester-zone-c waiting`; a fleet's, `fleet web (this set 2/3, cluster us): eu/web done,
/// us/web rolling, ap/web waiting` (names and reasons escaped).
pub fn words(part: &Part, standing: &[Standing]) -> String {
    let each: Vec<String> = (standing.iter().enumerate())
        .map(|(i, s)| {
            let set = match part.clusters.as_ref().and_then(|c| c.get(i)) {
                Some(c) => format!("{}/{}", c.shown(), escaped(&s.set)),
                None => escaped(&s.set),
            };
            let what = match (s.state, &s.note) {
                (Some(st), _) => st.word().to_string(),
                (None, Some(n)) => format!("unknown ({n})"),
                (None, None) => "unknown".into(),
            };
            let why = s.reason.as_deref().map(|r| format!(": {}", escaped(r))).unwrap_or_default();
            format!("{set} {what}{why}")
        })
        .collect();
    match part.clusters.as_ref().and_then(|c| c.get(part.place)) {
        Some(c) => format!(
            "fleet {} (this set {}/{}, cluster {}): {}",
            escaped(&part.group),
            part.place + 1,
            part.sets.len(),
            c.shown(),
            each.join(", ")
        ),
        None => format!("group {}: {}", escaped(&part.group), each.join(", ")),
    }
}

/// The group grafana/rollout-operator drives, when every one of `sets` carries its
/// `rollout-group` label (one value) and the OnDelete strategy it requires: ststui shows such a
/// group and does not drive it (two drivers of one group fight).
pub fn rollout_operator(sets: &[&StatefulSet]) -> Option<String> {
    let label = |s: &StatefulSet| s.metadata.labels.as_ref()?.get(ROLLOUT_GROUP).cloned();
    let first = label(sets.first()?)?;
    let all = sets.iter().all(|s| {
        label(s).as_deref() == Some(first.as_str()) && crate::core::spec::strategy(s).on_delete
    });
    all.then_some(first)
}

/// What rollout-operator does next, as the sets' status says: it waits while a set has pods not
/// Ready; otherwise it deletes the pods of the first set (by name) not yet updated.
pub fn operator_next(sets: &[&StatefulSet]) -> String {
    let name = |s: &StatefulSet| {
        crate::text::escape_controls(s.metadata.name.as_deref().unwrap_or_default()).into_owned()
    };
    for s in sets {
        let want = crate::core::spec::replicas(s);
        let ready = s.status.as_ref().and_then(|st| st.ready_replicas).unwrap_or(0);
        if ready < want {
            return format!("next: it waits, {} has {ready}/{want} Ready", name(s));
        }
    }
    for s in sets {
        let want = crate::core::spec::replicas(s);
        let updated = s.status.as_ref().and_then(|st| st.updated_replicas).unwrap_or(0);
        if updated < want {
            return format!(
                "next: it deletes {}'s pods not on the update revision ({updated}/{want} updated)",
                name(s)
            );
        }
    }
    "next: nothing (every set updated)".into()
}

#[cfg(test)]
#[path = "part_tests.rs"]
mod tests;
