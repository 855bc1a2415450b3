//! Strategic merge patch (`application/strategic-merge-patch+json`), the patch kubectl sends
//! for `set image`, `rollout undo`, `rollout restart`, `patch` and `apply`.
//!
//! Written by hand: no Rust crate implements it (the Go implementation reads struct tags).
//! Lists merge by the key upstream's types declare (`patchMergeKey`) for the fields of the
//! objects this server stores: containers, env, ports, volumes, volumeMounts, ownerReferences,
//! conditions, …; every other list is replaced whole. Directives: `$patch: replace|delete` on
//! maps and list elements, `$setElementOrder/<list>`, `$deleteFromPrimitiveList/<list>`,
//! `$retainKeys`, and `null` to delete a field.

use serde_json::{Map, Value};

/// How a list field merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    /// Replaced whole (no `patchStrategy`).
    Replace,
    /// Elements matched by this key are merged; new ones appended.
    MergeBy(&'static str),
    /// A set of scalars (`finalizers`).
    MergeScalars,
}

/// The merge key upstream declares for a list field of the objects served here.
fn strategy(field: &str) -> Strategy {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "imagePullSecrets"
        | "env"
        | "resourceClaims"
        | "schedulingGates" => Strategy::MergeBy("name"),
        "ports" => Strategy::MergeBy("containerPort"),
        "volumeMounts" => Strategy::MergeBy("mountPath"),
        "volumeDevices" => Strategy::MergeBy("devicePath"),
        "ownerReferences" => Strategy::MergeBy("uid"),
        "conditions" => Strategy::MergeBy("type"),
        "hostAliases" => Strategy::MergeBy("ip"),
        "topologySpreadConstraints" => Strategy::MergeBy("topologyKey"),
        "finalizers" => Strategy::MergeScalars,
        _ => Strategy::Replace,
    }
}

const SET_ORDER: &str = "$setElementOrder/";
const DELETE_SCALARS: &str = "$deleteFromPrimitiveList/";

/// What in a strategic merge patch is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    #[error("a strategic merge patch must be a JSON object")]
    NotAnObject,
    #[error("unknown patch directive {0:?}: expected replace or delete")]
    Directive(String),
    #[error("{0} must be a list")]
    NotAList(String),
    #[error("{field}: expected objects with {key:?} in a merge list")]
    NotObjects { field: String, key: &'static str },
    #[error("{field}: every element needs its merge key {key:?}")]
    NoMergeKey { field: String, key: &'static str },
}

/// Applies `patch` to `original`; the error says what in the patch is wrong.
pub fn apply(original: &Value, patch: &Value) -> Result<Value, PatchError> {
    match (original, patch) {
        (_, Value::Object(p)) => merge_map(original.as_object(), p).map(|m| match m {
            Some(m) => Value::Object(m),
            None => Value::Null,
        }),
        _ => Err(PatchError::NotAnObject),
    }
}

/// Merges map `patch` into `original`; `None` when the patch deletes the map.
fn merge_map(
    original: Option<&Map<String, Value>>,
    patch: &Map<String, Value>,
) -> Result<Option<Map<String, Value>>, PatchError> {
    let directive = patch.get("$patch").and_then(Value::as_str);
    let mut out = match directive {
        Some("delete") => return Ok(None),
        Some("replace") => Map::new(),
        Some(other) => {
            return Err(PatchError::Directive(other.to_string()));
        }
        None => original.cloned().unwrap_or_default(),
    };
    let mut orders: Vec<(&str, &Vec<Value>)> = Vec::new();
    for (k, v) in patch {
        if k == "$patch" || k == "$retainKeys" {
            continue;
        }
        if let Some(field) = k.strip_prefix(SET_ORDER) {
            let list = v.as_array().ok_or_else(|| PatchError::NotAList(k.clone()))?;
            orders.push((field, list));
            continue;
        }
        if let Some(field) = k.strip_prefix(DELETE_SCALARS) {
            let gone = v.as_array().ok_or_else(|| PatchError::NotAList(k.clone()))?;
            if let Some(Value::Array(list)) = out.get_mut(field) {
                list.retain(|x| !gone.contains(x));
            }
            continue;
        }
        match v {
            Value::Null => {
                out.remove(k);
            }
            Value::Object(pm) => {
                let merged = merge_map(out.get(k).and_then(Value::as_object), pm)?;
                match merged {
                    Some(m) => out.insert(k.clone(), Value::Object(m)),
                    None => out.remove(k),
                };
            }
            Value::Array(pl) => {
                let merged = merge_list(k, out.get(k).and_then(Value::as_array), pl)?;
                out.insert(k.clone(), Value::Array(merged));
            }
            scalar => {
                out.insert(k.clone(), scalar.clone());
            }
        }
    }
    for (field, order) in orders {
        if let Some(Value::Array(list)) = out.get_mut(field) {
            reorder(list, strategy(field), order);
        }
    }
    if let Some(Value::Array(keep)) = patch.get("$retainKeys") {
        let keep: Vec<&str> = keep.iter().filter_map(Value::as_str).collect();
        out.retain(|k, _| keep.contains(&k.as_str()));
    }
    Ok(Some(out))
}

fn merge_list(
    field: &str,
    original: Option<&Vec<Value>>,
    patch: &[Value],
) -> Result<Vec<Value>, PatchError> {
    let replace_all =
        patch.iter().any(|e| e.get("$patch").and_then(Value::as_str) == Some("replace"));
    match strategy(field) {
        _ if replace_all => {
            Ok(patch.iter().filter(|e| e.get("$patch").is_none()).cloned().collect())
        }
        Strategy::Replace => Ok(patch.to_vec()),
        Strategy::MergeScalars => {
            let mut out = original.cloned().unwrap_or_default();
            for v in patch {
                if !out.contains(v) {
                    out.push(v.clone());
                }
            }
            Ok(out)
        }
        Strategy::MergeBy(key) => {
            let mut out = original.cloned().unwrap_or_default();
            for pe in patch {
                let Some(pm) = pe.as_object() else {
                    return Err(PatchError::NotObjects { field: field.to_string(), key });
                };
                let id = pm
                    .get(key)
                    .ok_or_else(|| PatchError::NoMergeKey { field: field.to_string(), key })?;
                let at = out.iter().position(|e| e.get(key) == Some(id));
                match (at, pm.get("$patch").and_then(Value::as_str)) {
                    (Some(i), Some("delete")) => {
                        out.remove(i);
                    }
                    (None, Some("delete")) => {}
                    (Some(i), _) => {
                        let merged = merge_map(out[i].as_object(), pm)?;
                        match merged {
                            Some(m) => out[i] = Value::Object(m),
                            None => {
                                out.remove(i);
                            }
                        }
                    }
                    (None, _) => {
                        if let Some(m) = merge_map(None, pm)? {
                            out.push(Value::Object(m));
                        }
                    }
                }
            }
            Ok(out)
        }
    }
}

/// `$setElementOrder`: the listed elements in that order, the others after them as they were.
fn reorder(list: &mut Vec<Value>, strategy: Strategy, order: &[Value]) {
    let id = |e: &Value| -> Value {
        match strategy {
            Strategy::MergeBy(key) => e.get(key).cloned().unwrap_or(Value::Null),
            _ => e.clone(),
        }
    };
    let rank = |e: &Value| {
        let i = id(e);
        order.iter().position(|o| match strategy {
            Strategy::MergeBy(key) => o.get(key) == Some(&i),
            _ => *o == i,
        })
    };
    let mut ranked: Vec<(usize, usize, Value)> = list
        .drain(..)
        .enumerate()
        .map(|(pos, e)| (rank(&e).unwrap_or(usize::MAX), pos, e))
        .collect();
    ranked.sort_by_key(|(r, pos, _)| (*r, *pos));
    list.extend(ranked.into_iter().map(|(_, _, e)| e));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sts() -> Value {
        json!({"metadata": {"name": "web", "labels": {"app": "web"}, "finalizers": ["a"]},
            "spec": {"replicas": 3, "template": {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [
                {"name": "app", "image": "nginx:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                {"name": "side", "image": "busybox"}]}}}})
    }

    #[test]
    fn set_image_merges_containers_by_name() {
        let patch = json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "app"}, {"name": "side"}],
            "containers": [{"name": "app", "image": "nginx:2"}]}}}});
        let out = apply(&sts(), &patch).unwrap();
        let c = &out["spec"]["template"]["spec"]["containers"];
        assert_eq!(c[0]["image"], "nginx:2");
        assert_eq!(c[0]["env"][1]["name"], "B", "untouched fields stay");
        assert_eq!(c[1]["name"], "side");
    }

    #[test]
    fn replace_and_delete_directives_and_nulls() {
        // `kubectl rollout undo`: the revision's template replaces the set's.
        let undo = json!({"spec": {"template": {"$patch": "replace",
            "spec": {"containers": [{"name": "app", "image": "nginx:0"}]}}}});
        let out = apply(&sts(), &undo).unwrap();
        assert_eq!(out["spec"]["template"]["metadata"], Value::Null, "replaced, not merged");
        assert_eq!(out["spec"]["template"]["spec"]["containers"].as_array().unwrap().len(), 1);
        let del = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "side", "$patch": "delete"},
            {"name": "app", "env": [{"name": "A", "$patch": "delete"}]}]}}},
            "metadata": {"labels": {"app": null}, "$deleteFromPrimitiveList/finalizers": ["a"]}});
        let out = apply(&sts(), &del).unwrap();
        let c = out["spec"]["template"]["spec"]["containers"].as_array().unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0]["env"].as_array().unwrap().len(), 1);
        assert_eq!(out["metadata"]["labels"], json!({}));
        assert_eq!(out["metadata"]["finalizers"], json!([]));
        // Lists without a merge key are replaced whole.
        let ports = json!({"spec": {"template": {"spec": {"containers": [{"name": "app",
            "ports": [{"containerPort": 80}], "args": ["x"]}]}}}});
        let out = apply(&out, &ports).unwrap();
        assert_eq!(out["spec"]["template"]["spec"]["containers"][0]["args"], json!(["x"]));
        let partition = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}}}});
        let out = apply(&out, &partition).unwrap();
        assert_eq!(out["spec"]["updateStrategy"]["rollingUpdate"]["partition"], 2);
        assert!(apply(&sts(), &json!({"$patch": "bogus"})).is_err());
    }
}
