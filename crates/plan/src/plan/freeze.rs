//! A freeze's record on its set, read: the partition it replaced, who froze it and when
//! (`ststui.io/frozen-*` annotations), and whether it still holds. The writes (freeze, resume)
//! are `steer`'s; the verdict (`plan::verdict`), the plan and every surface read a freeze
//! through [`frozen`] and [`holding`] only.
//!
//! Owns: the annotations' names and their one reader. Pure.

use k8s_openapi::api::apps::v1::StatefulSet;

use crate::core::spec;

/// The partition the freeze replaced (a number).
pub const FROZEN_PARTITION: &str = "ststui.io/frozen-partition";
/// Who froze the rollout.
pub const FROZEN_BY: &str = "ststui.io/frozen-by";
/// When (RFC 3339, UTC).
pub const FROZEN_AT: &str = "ststui.io/frozen-at";

/// A set's freeze, as its annotations record it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frozen {
    /// The partition resume restores; `Err(text)` when the annotation does not hold one (a
    /// number from 0 up), with what it holds.
    pub partition: Result<i32, String>,
    pub by: String,
    pub at: String,
    /// The freeze no longer holds: another writer moved the partition below the replicas (or
    /// switched to OnDelete), so ordinals roll again. The partition now (0 for OnDelete).
    pub broken: Option<i32>,
    /// Who last set the partition, when the set's managed fields say and it was not ststui.
    pub moved_by: Option<String>,
    /// Who last wrote the record's `frozen-by`, when the managed fields say it was not ststui
    /// (`by` is the record's claim; this is the server's word).
    pub written_by: Option<String>,
}

impl Frozen {
    /// The recorded partition, or the words for an invalid one.
    pub fn recorded(&self) -> String {
        match &self.partition {
            Ok(p) => p.to_string(),
            Err(raw) => format!("{raw:?} (not a partition)"),
        }
    }

    /// A sentence about set `name`: "web is frozen by ana since …", or "web's freeze is broken:
    /// partition moved to 0 by kubectl-patch …".
    pub fn of_set(&self, name: &str) -> String {
        match self.broken {
            None => format!("{name} is {}", self.words()),
            Some(_) => format!(
                "{name}'s {}",
                self.words().replacen("freeze broken", "freeze is broken", 1)
            ),
        }
    }

    /// Whether it was taken before `plan` began (the plan took it over: it is the plan's).
    pub fn before(&self, plan: &crate::plan::record::Record) -> bool {
        let at = self.at.parse::<k8s_openapi::jiff::Timestamp>();
        let started = plan.started.parse::<k8s_openapi::jiff::Timestamp>();
        matches!((at, started), (Ok(a), Ok(s)) if a <= s)
    }

    /// "frozen by ana since …", or "freeze broken: partition moved to 0 (by kubectl-patch)".
    /// Who froze it as the record says, and who wrote the record when the server says it was
    /// another: "ana", "ana (written by kubectl-patch at 10:02:11, says the server)".
    pub fn by_words(&self) -> String {
        match &self.written_by {
            Some(w) => format!("{} (written by {w}, says the server)", self.by),
            None => self.by.clone(),
        }
    }

    pub fn words(&self) -> String {
        let by = self.by_words();
        match self.broken {
            None => format!("frozen by {by} since {}", self.at),
            Some(p) => {
                let who = self.moved_by.as_ref().map(|w| format!(" by {w}")).unwrap_or_default();
                format!(
                    "freeze broken: partition moved to {p}{who} (frozen by {by} since {})",
                    self.at
                )
            }
        }
    }
}

/// The field manager ststui writes as.
pub const FIELD_MANAGER: &str = "ststui";

/// The set's freeze while it holds the rollout (a freeze whose partition another writer moved
/// does not): what halts a plan and is never undone.
pub fn holding(set: &StatefulSet) -> Option<Frozen> {
    frozen(set).filter(|f| f.broken.is_none())
}

/// The set's freeze, if it has one (a `ststui.io/frozen-partition` annotation): whether it
/// still holds (the partition at or above the replicas, RollingUpdate) and whether the
/// recorded partition is valid.
pub fn frozen(set: &StatefulSet) -> Option<Frozen> {
    let ann = set.metadata.annotations.as_ref()?;
    let raw = ann.get(FROZEN_PARTITION)?;
    let partition = match raw.trim().parse::<i32>() {
        Ok(p) if p >= 0 => Ok(p),
        _ => Err(crate::text::clip(raw, 40).into_owned()),
    };
    // Anyone may write them: never shown whole (a time is at most 40 characters, a who 120).
    let get = |k: &str, most: usize| {
        ann.get(k).map_or_else(|| "?".into(), |v| crate::text::clip(v, most).into_owned())
    };
    let strategy = spec::strategy(set);
    let broken = if strategy.on_delete {
        Some(0)
    } else {
        (strategy.partition < spec::replicas(set)).then_some(strategy.partition)
    };
    let moved_by = broken.and_then(|_| partition_writer(set));
    let written_by = annotation_writer(set, FROZEN_BY);
    Some(Frozen {
        partition,
        by: get(FROZEN_BY, 120),
        at: get(FROZEN_AT, 40),
        broken,
        moved_by,
        written_by,
    })
}

/// Who last wrote annotation `key` of `set`, by the server's managed fields, when that was not
/// ststui: a record's own `by` is a claim anyone may write, the managed fields are the server's
/// word. `None` when they do not say, or say ststui.
pub fn annotation_writer(set: &StatefulSet, key: &str) -> Option<String> {
    let field = format!("f:{key}").replace('~', "~0").replace('/', "~1");
    let pointer = format!("/f:metadata/f:annotations/{field}");
    let fields = set.metadata.managed_fields.as_ref()?;
    let newest = fields
        .iter()
        .filter(|m| m.fields_v1.as_ref().is_some_and(|f| f.0.pointer(&pointer).is_some()))
        .max_by_key(|m| m.time.as_ref().map(|t| t.0))?;
    (newest.manager.as_deref() != Some(FIELD_MANAGER)).then(|| manager_words(newest))
}

/// "kubectl-patch at 10:02:11", "another writer".
fn manager_words(m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry) -> String {
    let who = m.manager.as_deref().map(|w| crate::text::shown(w, 64));
    let who = who.unwrap_or_else(|| "another writer".into());
    match &m.time {
        Some(t) => format!("{who} at {}", t.0.strftime("%H:%M:%S")),
        None => who,
    }
}

/// Who last wrote the partition, from the managed fields (not ststui itself).
fn partition_writer(set: &StatefulSet) -> Option<String> {
    let fields = set.metadata.managed_fields.as_ref()?;
    fields
        .iter()
        .filter(|m| m.manager.as_deref() != Some(FIELD_MANAGER))
        .filter(|m| {
            m.fields_v1.as_ref().is_some_and(|f| {
                f.0.pointer("/f:spec/f:updateStrategy/f:rollingUpdate/f:partition").is_some()
            })
        })
        .max_by_key(|m| m.time.as_ref().map(|t| t.0))
        .map(manager_words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry, Time};

    #[test]
    fn a_freeze_another_writer_recorded_says_who_wrote_it() {
        let mut set = StatefulSet::default();
        set.metadata.annotations = Some(
            [(FROZEN_PARTITION, "0"), (FROZEN_BY, "ana"), (FROZEN_AT, "2026-11-28T10:00:00Z")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into(),
        );
        set.spec.replicas = Some(0);
        assert_eq!(frozen(&set).unwrap().words(), "frozen by ana since 2026-11-28T10:00:00Z");
        set.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
            manager: Some("kubectl-edit".into()),
            time: Some(Time("2026-11-28T10:00:00Z".parse().unwrap())),
            fields_v1: Some(FieldsV1(serde_json::json!({
                "f:metadata": {"f:annotations": {"f:ststui.io/frozen-by": {}}}
            }))),
            ..Default::default()
        }]);
        assert_eq!(
            frozen(&set).unwrap().words(),
            "frozen by ana (written by kubectl-edit at 10:00:00, says the server) since \
             2026-11-28T10:00:00Z"
        );
        // Anyone's to write: never shown whole.
        let ann = set.metadata.annotations.as_mut().unwrap();
        ann.insert(FROZEN_BY.into(), "b".repeat(5000));
        ann.insert(FROZEN_PARTITION.into(), "x".repeat(5000));
        let f = frozen(&set).unwrap();
        assert!(f.words().len() < 400 && f.recorded().len() < 100, "{}", f.words());
    }
}
