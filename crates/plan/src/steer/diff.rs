//! Differences between two versions of a StatefulSet: as a JSON merge patch (RFC 7386), which a
//! cluster backend sends, and in words, which a conflict shows the operator.

use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::{Map, Value};

use crate::core::spec;

/// The JSON merge patch that turns `old` into `new`, over `metadata.labels`,
/// `metadata.annotations` and `spec` (status and server-owned metadata are not the client's to
/// write). With `resource_version`, the patch carries it: the API server then refuses it with
/// 409 Conflict if the set changed since (optimistic concurrency). `None` when nothing differs.
pub fn merge_patch(
    old: &StatefulSet,
    new: &StatefulSet,
    resource_version: Option<&str>,
) -> Option<Value> {
    let to_value = |s: &StatefulSet| {
        let mut v = serde_json::to_value(s).unwrap_or(Value::Null);
        let mut out = Map::new();
        if let Some(obj) = v.as_object_mut() {
            if let Some(spec) = obj.remove("spec") {
                out.insert("spec".into(), spec);
            }
            let mut meta = Map::new();
            if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                for k in ["labels", "annotations"] {
                    if let Some(x) = m.remove(k) {
                        meta.insert(k.into(), x);
                    }
                }
            }
            out.insert("metadata".into(), Value::Object(meta));
        }
        Value::Object(out)
    };
    let mut patch = diff(&to_value(old), &to_value(new))?;
    if let (Some(rv), Some(obj)) = (resource_version, patch.as_object_mut()) {
        let meta = obj.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
        if let Some(m) = meta.as_object_mut() {
            m.insert("resourceVersion".into(), Value::String(rv.into()));
        }
    }
    Some(patch)
}

/// The merge patch from `old` to `new` (`None`: equal). Objects are compared member by member
/// (a member gone is `null`); anything else is replaced whole.
fn diff(old: &Value, new: &Value) -> Option<Value> {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut out = Map::new();
            for (k, vb) in b {
                match a.get(k) {
                    Some(va) if va == vb => {}
                    Some(va @ Value::Object(_)) if vb.is_object() => {
                        if let Some(d) = diff(va, vb) {
                            out.insert(k.clone(), d);
                        }
                    }
                    _ => {
                        out.insert(k.clone(), vb.clone());
                    }
                }
            }
            for k in a.keys() {
                if !b.contains_key(k) {
                    out.insert(k.clone(), Value::Null);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        _ if old == new => None,
        _ => Some(new.clone()),
    }
}

/// What changed in the spec from `old` to `new`, in words for the operator
/// (`partition 3 → 1, image nginx:1.25 → nginx:1.26`). Empty when the spec is the same.
pub fn describe_change(old: &StatefulSet, new: &StatefulSet) -> String {
    let (sa, sb) = (spec::strategy(old), spec::strategy(new));
    let kind = |s: &spec::Strategy<'_>| if s.on_delete { "OnDelete" } else { "RollingUpdate" };
    let frozen = |s: &StatefulSet| super::frozen(s).map_or("no".into(), |f| format!("by {}", f.by));
    let (ia, ib) = (image(old), image(new));
    let fields = [
        ("replicas", spec::replicas(old).to_string(), spec::replicas(new).to_string()),
        ("strategy", kind(&sa).to_string(), kind(&sb).to_string()),
        ("partition", sa.partition.to_string(), sb.partition.to_string()),
        ("maxUnavailable", max_unavailable(old), max_unavailable(new)),
        ("image", ia.clone(), ib.clone()),
        ("frozen", frozen(old), frozen(new)),
    ];
    let mut out: Vec<String> = fields
        .into_iter()
        .filter(|(_, a, b)| a != b)
        .map(|(name, a, b)| format!("{name} {a} → {b}"))
        .collect();
    if ia == ib && old.spec.template != new.spec.template {
        out.push("the pod template".into());
    }
    if out.is_empty() && old.spec != new.spec {
        out.push("the spec".into());
    }
    out.join(", ")
}

fn max_unavailable(s: &StatefulSet) -> String {
    let value = s.spec.update_strategy.as_ref().and_then(|u| u.rolling_update.as_ref());
    let value = value.and_then(|r| r.max_unavailable.as_ref());
    value.map_or_else(|| "unset".into(), crate::core::spec::int_or_string_text)
}

fn image(s: &StatefulSet) -> String {
    let spec = s.spec.template.spec.as_ref();
    spec.and_then(|p| p.containers.first()).and_then(|c| c.image.clone()).unwrap_or_default()
}
