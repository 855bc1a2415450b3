//! Claims per ordinal, in words: each of a pod's claims (from the set's volumeClaimTemplates:
//! `<template>-<set>-<ordinal>`) with its phase, capacity, storage class and what the retention
//! policy does with it (kept or deleted on scale-down and with the set); the grid's mark for an
//! ordinal whose claim is not Bound; and why a Pending pod waits on a claim.
//!
//! Owns: these words. Reads the set and the claims only.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;

use crate::core::labels::claim_name;

/// The set's claim templates' names.
pub fn templates(set: &StatefulSet) -> Vec<&str> {
    let t = set.spec.volume_claim_templates.as_deref().unwrap_or_default();
    t.iter().filter_map(|c| c.metadata.name.as_deref()).collect()
}

fn phase(c: &PersistentVolumeClaim) -> &str {
    c.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("Pending")
}

/// `10Gi`: the bound capacity, else what it requests.
fn capacity(c: &PersistentVolumeClaim) -> Option<String> {
    let bound = c.status.as_ref().and_then(|s| s.capacity.as_ref()?.get("storage"));
    let asked = || c.spec.as_ref()?.resources.as_ref()?.requests.as_ref()?.get("storage");
    bound.or_else(asked).map(|q| q.0.clone())
}

/// What the retention policy does with an ordinal's claims: `kept` / `deleted` on scale-down
/// and with the set (both Retain when unset, as the API defaults it).
pub fn retention(set: &StatefulSet) -> String {
    let p = set.spec.persistent_volume_claim_retention_policy.as_ref();
    let word = |v: Option<&String>| match v.map(String::as_str) {
        Some("Delete") => "deleted",
        _ => "kept",
    };
    let scaled = word(p.and_then(|p| p.when_scaled.as_ref()));
    let deleted = word(p.and_then(|p| p.when_deleted.as_ref()));
    format!("{scaled} on scale-down, {deleted} with the set")
}

/// The detail's rows for ordinal `ordinal`: one `claim` row per template, then what the
/// retention policy does with them.
pub fn rows<'a>(
    set: &StatefulSet,
    ordinal: i32,
    find: impl Fn(&str) -> Option<&'a PersistentVolumeClaim>,
) -> Vec<(&'static str, String)> {
    let set_name = set.metadata.name.as_deref().unwrap_or_default();
    let names = templates(set);
    if names.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<(&'static str, String)> = names
        .iter()
        .map(|t| {
            let name = claim_name(t, set_name, ordinal);
            let words = match find(&name) {
                None => "not created".to_string(),
                Some(c) => {
                    let mut w = phase(c).to_string();
                    if c.metadata.deletion_timestamp.is_some() {
                        w.push_str(", deleting");
                    }
                    if let Some(cap) = capacity(c) {
                        w.push_str(&format!(" {cap}"));
                    }
                    let class = c.spec.as_ref().and_then(|s| s.storage_class_name.as_deref());
                    if let Some(class) = class {
                        w.push_str(&format!(" {class}"));
                    }
                    w
                }
            };
            ("claim", format!("{name} {words}"))
        })
        .collect();
    out.push(("retention", retention(set)));
    out
}

/// A claim of `ordinal` that is not Bound: `data-web-3 Pending` (`not created` when absent).
pub fn unbound<'a>(
    set: &StatefulSet,
    ordinal: i32,
    find: impl Fn(&str) -> Option<&'a PersistentVolumeClaim>,
) -> Option<String> {
    let set_name = set.metadata.name.as_deref().unwrap_or_default();
    templates(set).into_iter().find_map(|t| {
        let name = claim_name(t, set_name, ordinal);
        match find(&name) {
            None => Some(format!("{name} not created")),
            Some(c) if phase(c) != "Bound" => Some(format!("{name} {}", phase(c))),
            Some(_) => None,
        }
    })
}

/// The grid's marks: ordinal → its first claim that is not Bound, for the ordinals `cells`
/// shows whose pod exists (a pod not yet created has no claim to wait on).
pub fn marks<'a>(
    set: &StatefulSet,
    existing: impl Iterator<Item = i32>,
    find: impl Fn(&str) -> Option<&'a PersistentVolumeClaim> + Copy,
) -> BTreeMap<i32, String> {
    if templates(set).is_empty() {
        return BTreeMap::new();
    }
    existing.filter_map(|o| Some((o, unbound(set, o, find)?))).collect()
}
