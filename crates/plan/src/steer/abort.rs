//! The forced rollback of a whole set (kubernetes#67250), as `ststui abort` and the console's
//! abort key both carry it out: a plan recorded on the set is ended as aborted (the partition
//! put back where the plan began, in the same write), the template goes back to the previous
//! revision (`kubectl rollout undo`), and the pods stuck on the broken revision are deleted,
//! each with its uid as precondition. Decided once, shown before anything is written (in the
//! future tense: nothing has happened yet), carried out in that order.
//!
//! Owns: what an abort writes and how it is previewed. Pure.

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

use super::Refused;
use crate::backend::{ClusterOp, ObjRef, Write};
use crate::plan::decide::{observed_update_revision, stuck_on};
use crate::plan::record::{Phase, Reading, Record, Runner, read, stamp};

/// What an abort of one set will do.
#[derive(Debug, Clone, PartialEq)]
pub struct Abort {
    pub set: ObjRef,
    /// The set as decided on.
    pub basis: StatefulSet,
    /// The revision number the template goes back to, and its first image.
    pub back: i64,
    pub image: Option<String>,
    /// The broken revision (the update revision now).
    pub revision: String,
    /// The plan ended (its record as written, aborted) and its words before.
    pub plan: Option<(Record, String)>,
    /// The partition moved back to where the plan began (before any freeze it took over):
    /// (from, to).
    pub restore: Option<(i32, i32)>,
    /// A lease no runner holds any more (run out, unreadable): removed, with its text as the
    /// precondition.
    pub stale_lease: Option<String>,
    /// The pods stuck on the broken revision (name, uid), highest first.
    pub stuck: Vec<(String, String)>,
}

/// Decides an abort of `key` as `set`, its `revisions` and its `pods` show it; `who` names the
/// writer in the record (`aborted by ana`).
pub fn abort(
    key: &ObjRef,
    set: &StatefulSet,
    revisions: &[&ControllerRevision],
    pods: &[(i32, &Pod)],
    now: Timestamp,
    who: &str,
) -> Result<Abort, Refused> {
    let revision = observed_update_revision(set).unwrap_or_default().to_string();
    let target = super::undo_target(key, set, revisions, None)?;
    let image =
        super::revision_template(target).and_then(|t| t.spec?.containers.first()?.image.clone());
    let plan = match read(set) {
        Reading::Plan(r) if !matches!(r.phase, Phase::Aborted | Phase::Done) => Some(*r),
        _ => None,
    };
    let ended = plan.map(|r| {
        let why = format!("aborted by {who} at {}", stamp(now));
        let (aborted, restore) = crate::plan::decide::aborted(&r, set, now, why);
        ((aborted, r.words(now)), restore)
    });
    let restore = ended.as_ref().and_then(|(_, back)| *back);
    let plan = ended.map(|(p, _)| p);
    let stale_lease = match Runner::of(set, now) {
        Runner::Lapsed(_) | Runner::Unreadable => crate::plan::record::lease_text(set),
        Runner::None | Runner::Live(_) => None,
    };
    Ok(Abort {
        set: key.clone(),
        basis: set.clone(),
        back: target.revision.unwrap_or(0),
        image,
        stuck: stuck_on(&revision, pods),
        revision,
        plan,
        restore,
        stale_lease,
    })
}

impl Abort {
    /// What it will do, one line each.
    pub fn preview(&self) -> Vec<String> {
        let image = self.image.as_ref().map(|i| format!(" ({i})")).unwrap_or_default();
        let mut lines = vec![format!(
            "abort {}: will revert the template to revision {}{image}",
            self.set, self.back
        )];
        if let Some((_, words)) = &self.plan {
            lines.push(format!("  will end the plan, recorded as aborted ({words})"));
        }
        if let Some((from, to)) = self.restore {
            lines.push(match from == to {
                true => format!(
                    "  will lift the freeze: the partition stays {to}, where the plan began"
                ),
                false => format!(
                    "  will put the partition back from {from} to {to}, where the plan began \
                     (and lift any freeze)"
                ),
            });
        }
        if self.stale_lease.is_some() {
            lines.push("  will remove the plan's lease, which no runner holds".into());
        }
        lines.push(match self.stuck.is_empty() {
            true => "  no pod is stuck on the broken revision: none will be deleted".to_string(),
            false => format!(
                "  will delete, as stuck on {} (not Ready): {}",
                self.revision,
                self.stuck.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
            ),
        });
        lines
    }

    /// The plan's end (with the partition back), when there is a plan: decided on the basis.
    pub fn end_plan(&self) -> Option<Write> {
        let (record, _) = self.plan.as_ref()?;
        let op = ClusterOp::Plan {
            set: self.set.clone(),
            partition: self.restore,
            record: serde_json::to_string(record).unwrap_or_default(),
        };
        // After the undo (it lowers the partition), decided on the set as the server then holds it.
        let basis = (!self.lowers()).then(|| Box::new(self.basis.clone()));
        Some(Write::on(op, basis))
    }

    /// The template back, decided on `basis` (the set after the plan's end, when known; else
    /// read fresh by the write path).
    pub fn undo(&self, basis: Option<StatefulSet>) -> Write {
        let op = ClusterOp::Undo { set: self.set.clone(), revision: None };
        Write::on(op, basis.map(Box::new))
    }

    /// The stuck pods' evictions (their disruption budgets asked), each with its uid as
    /// precondition.
    pub fn deletions(&self) -> Vec<Write> {
        self.stuck
            .iter()
            .map(|(name, uid)| {
                let pod = ObjRef::new(self.set.namespace.clone(), name.clone());
                Write::new(ClusterOp::EvictPod { pod, uid: Some(uid.clone()) })
            })
            .collect()
    }

    /// Whether the plan's end lowers the partition: then it comes after the undo (lowered
    /// first, the controller would roll pods onto the broken revision in between).
    pub fn lowers(&self) -> bool {
        self.restore.is_some_and(|(from, to)| to < from)
    }

    /// The stale lease's removal, when there is one.
    pub fn release(&self) -> Option<Write> {
        let seen = self.stale_lease.clone()?;
        let op = ClusterOp::PlanLease { set: self.set.clone(), lease: None, seen: Some(seen) };
        Some(Write::new(op))
    }

    /// Every write, in order: the plan's end before the undo, unless it lowers the partition
    /// (then after it); the stale lease; the stuck pods' evictions.
    pub fn writes(&self) -> Vec<Write> {
        let mut out: Vec<Write> = Vec::new();
        let end = self.end_plan();
        if self.lowers() {
            out.push(self.undo(Some(self.basis.clone())));
            out.extend(end);
        } else {
            let basis = end.is_none().then(|| self.basis.clone());
            out.extend(end);
            out.push(self.undo(basis));
        }
        out.extend(self.release());
        out.extend(self.deletions());
        out
    }
}
