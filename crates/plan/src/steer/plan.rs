//! A rollout plan's writes (`crate::plan::record`): the plan's record, with its step's
//! partition in the same patch, and the runner's lease. Each is refused as a conflict when the
//! set no longer reads as it was decided on: the partition moved, or another runner's lease.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::{Change, Refused};
use crate::backend::{FailureKind, ObjRef};
use crate::core::spec;
use crate::plan::record::{LEASE, PLAN};

/// The plan's record, and, with `partition: Some((from, to))`, the partition from `from`
/// (refused when it reads otherwise) to `to`. A freeze holding the set is lifted by a
/// partition move: the plan holds the partition from then on.
pub(super) fn record(
    key: &ObjRef,
    set: &StatefulSet,
    partition: Option<(i32, i32)>,
    record: &str,
    identity: &str,
) -> Result<Change, Refused> {
    let record = &fill(record, "by", identity);
    let mut new = set.clone();
    if let Some((from, to)) = partition {
        let st = spec::strategy(set);
        if st.on_delete {
            return Err(Refused {
                kind: FailureKind::Conflict,
                message: format!(
                    "{key} switched to OnDelete since the plan decided: the partition applies to \
                     RollingUpdate only; nothing written"
                ),
            });
        }
        if st.partition != from {
            return Err(Refused {
                kind: FailureKind::Conflict,
                message: format!(
                    "{key}: the partition reads {}, not {from}, since the plan decided: someone \
                     moved it; nothing written",
                    st.partition
                ),
            });
        }
        let strategy = new.spec.update_strategy.get_or_insert_with(Default::default);
        strategy.rolling_update.get_or_insert_with(Default::default).partition = Some(to);
        if let Some(ann) = new.metadata.annotations.as_mut() {
            for k in [super::FROZEN_PARTITION, super::FROZEN_BY, super::FROZEN_AT] {
                ann.remove(k);
            }
        }
    }
    new.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(PLAN.into(), record.into());
    if new == *set {
        return Ok(Change::Unchanged(format!("{key}: the plan's record is as written already")));
    }
    Ok(Change::Set(Box::new(new)))
}

/// A Recreate plan's step opened: `image` set on the template and the record written, in one
/// patch; refused when the set is no longer of type Recreate.
pub(super) fn recreate(
    key: &ObjRef,
    set: &StatefulSet,
    image: &str,
    text: &str,
    identity: &str,
) -> Result<Change, Refused> {
    if !spec::strategy(set).recreate {
        return Err(Refused {
            kind: FailureKind::Conflict,
            message: format!(
                "{key} is no longer of type Recreate since the plan decided: its image would roll \
                 it another way; nothing written"
            ),
        });
    }
    let mut new = set.clone();
    super::set_image(&mut new.spec, key, image)?;
    match record(key, &new, None, text, identity)? {
        Change::Unchanged(_) if new != *set => Ok(Change::Set(Box::new(new))),
        change => Ok(change),
    }
}

/// The runner's lease: `lease` written (or removed, `None`) when the set's lease still reads
/// `seen`; otherwise another runner took or renewed it (a conflict naming it).
/// `group`: the group's lease (`plan::group::part::LEASE`) instead of the plan's.
pub(super) fn lease(
    key: &ObjRef,
    set: &StatefulSet,
    lease: Option<&str>,
    seen: Option<&str>,
    identity: &str,
    group: bool,
) -> Result<Change, Refused> {
    let (annotation, whose) =
        if group { (crate::plan::group::part::LEASE, "group's") } else { (LEASE, "plan's") };
    let lease = lease.map(|l| fill(l, "holder", identity));
    let lease = lease.as_deref();
    let now = set.metadata.annotations.as_ref().and_then(|a| a.get(annotation)).map(String::as_str);
    // The lease as it was read or written: the same holder's same lease (the server fills in
    // the holder and orders the fields), so a lease written and not yet seen back matches.
    let same = match (now, seen) {
        (Some(now), Some(seen)) => now == seen || crate::plan::engine::same_lease(Some(now), seen),
        (now, seen) => now == seen,
    };
    if !same {
        let holder = crate::plan::record::lease_in(set, annotation)
            .map_or_else(|| "an unreadable lease".to_string(), |l| l.words());
        return Err(Refused {
            kind: FailureKind::Conflict,
            message: format!(
                "{key}: the {whose} lease changed since it was read: held by {holder}; nothing \
                 written"
            ),
        });
    }
    let new = annotated(set, annotation, lease.map(str::to_string));
    if new == *set {
        return Ok(Change::Unchanged(format!("{key}: the lease is as written already")));
    }
    Ok(Change::Set(Box::new(new)))
}

/// A group member's part of the group's record (`plan::group::part`), its `by` filled in;
/// `None` removes it.
pub(super) fn part(
    key: &ObjRef,
    set: &StatefulSet,
    part: Option<&str>,
    identity: &str,
) -> Result<Change, Refused> {
    let part = part.map(|p| fill(p, "by", identity));
    let new = annotated(set, crate::plan::group::part::PART, part);
    if new == *set {
        return Ok(Change::Unchanged(format!("{key}: the group's part is as written already")));
    }
    Ok(Change::Set(Box::new(new)))
}

/// `set` with `annotation` set to `value`, or removed (`None`; no annotations left: none).
fn annotated(set: &StatefulSet, annotation: &str, value: Option<String>) -> StatefulSet {
    let mut new = set.clone();
    match value {
        Some(v) => {
            new.metadata
                .annotations
                .get_or_insert_with(Default::default)
                .insert(annotation.into(), v);
        }
        None => {
            if let Some(ann) = new.metadata.annotations.as_mut() {
                ann.remove(annotation);
                if ann.is_empty() {
                    new.metadata.annotations = None;
                }
            }
        }
    }
    new
}

/// `text` (a JSON object) with `field` set to `identity` when it is empty: a console names
/// itself as the write path knows it (who we are, asked of the server).
fn fill(text: &str, field: &str, identity: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(mut v) if v.get(field).and_then(serde_json::Value::as_str) == Some("") => {
            v[field] = serde_json::Value::String(identity.to_string());
            v.to_string()
        }
        _ => text.to_string(),
    }
}
