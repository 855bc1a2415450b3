//! `metadata.managedFields` as the API server records them on every write through it: one entry
//! per (manager, operation, subresource) with the time of its last write and the fields it set.
//! Who wrote what is evidence other tools read: drive mode's guard (`drive::guard`) tells its own
//! pods from another controller's by it, `ststui freeze` another writer of the partition.
//!
//! The manager is the request's `fieldManager`, else the product of its User-Agent (as the API
//! server derives it: `kubectl` for `kubectl/v1.34.0 (linux/amd64) …`). Simplified against the
//! API server, and said so in docs/simulator.md: the fields are the object's map keys a write set
//! or changed (`f:` entries; a list is owned whole, its items not itemised as `k:`/`v:`), fields
//! are not taken from another manager's entry when changed, and server-side apply (`Apply`) is not
//! served. A client's own `managedFields` in a body are ignored: the server's record stands.
//!
//! Owns: the entries. Must not: decide anything about the write itself.

use serde_json::{Map, Value, json};

/// The manager of a write: `fieldManager`, else the User-Agent's product, else `unknown`.
pub fn manager(field_manager: Option<&str>, user_agent: Option<&str>) -> String {
    if let Some(m) = field_manager.filter(|m| !m.is_empty()) {
        return m.chars().take(128).collect();
    }
    let product = user_agent.and_then(|ua| ua.split(['/', ' ']).next()).unwrap_or_default();
    if product.is_empty() { "unknown".into() } else { product.chars().take(128).collect() }
}

/// Metadata the server sets: never a manager's field.
const SERVER_SET: [&str; 7] = [
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "selfLink",
];

/// The fields of `new` that differ from `old` (all of them without `old`), as a fieldsV1 map.
fn changed(new: &Value, old: Option<&Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let Value::Object(n) = new else { return out };
    for (k, v) in n {
        let before = old.and_then(|o| o.get(k));
        if before == Some(v) {
            continue;
        }
        let inner = match (v, before) {
            (Value::Object(_), Some(b @ Value::Object(_))) => changed(v, Some(b)),
            (Value::Object(_), _) => changed(v, None),
            _ => Map::new(),
        };
        out.insert(format!("f:{k}"), Value::Object(inner));
    }
    out
}

/// Merges fieldsV1 `add` into `into`.
fn union(into: &mut Map<String, Value>, add: Map<String, Value>) {
    for (k, v) in add {
        match (into.get_mut(&k), v) {
            (Some(Value::Object(a)), Value::Object(b)) => union(a, b),
            (None, v) => {
                into.insert(k, v);
            }
            _ => {}
        }
    }
}

/// The part of an object a write to `subresource` owns: `status` for `/status`, everything but
/// `status` (and the server's metadata) for the main resource.
fn owned_part(v: &Value, subresource: Option<&str>) -> Value {
    let Value::Object(o) = v else { return Value::Null };
    let mut out = Map::new();
    for (k, x) in o {
        let take = match subresource {
            Some("status") => k == "status",
            _ => k != "status" && k != "apiVersion" && k != "kind",
        };
        if !take {
            continue;
        }
        if k == "metadata"
            && let Value::Object(m) = x
        {
            let m: Map<String, Value> = m
                .iter()
                .filter(|(k, _)| !SERVER_SET.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            out.insert(k.clone(), Value::Object(m));
        } else {
            out.insert(k.clone(), x.clone());
        }
    }
    Value::Object(out)
}

/// Records the write of `new` (over `old`, `None` for a create) by `manager` at `time` (RFC 3339)
/// in `new`'s managedFields, starting from `old`'s entries.
pub fn record(
    new: &mut Value,
    old: Option<&Value>,
    manager: &str,
    subresource: Option<&str>,
    api_version: &str,
    time: &str,
) {
    let fields =
        changed(&owned_part(new, subresource), old.map(|o| owned_part(o, subresource)).as_ref());
    let mut entries: Vec<Value> = old
        .and_then(|o| o.pointer("/metadata/managedFields"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let same = |e: &Value| {
        e.get("manager").and_then(Value::as_str) == Some(manager)
            && e.get("operation").and_then(Value::as_str) == Some("Update")
            && e.get("subresource").and_then(Value::as_str) == subresource
    };
    let at = entries.iter().position(same);
    if fields.is_empty() && at.is_none() {
        // A write that changed nothing this manager owns: no entry (as the API server).
        set_entries(new, entries);
        return;
    }
    let mut owned = at
        .and_then(|i| entries[i].pointer("/fieldsV1").and_then(Value::as_object).cloned())
        .unwrap_or_default();
    union(&mut owned, fields);
    let mut entry = json!({
        "manager": manager,
        "operation": "Update",
        "apiVersion": api_version,
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": owned,
    });
    if let (Some(sub), Some(e)) = (subresource, entry.as_object_mut()) {
        e.insert("subresource".into(), sub.into());
    }
    match at {
        Some(i) => entries[i] = entry,
        None => entries.push(entry),
    }
    set_entries(new, entries);
}

fn set_entries(new: &mut Value, entries: Vec<Value>) {
    let Some(m) = new.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    if entries.is_empty() {
        m.remove("managedFields");
    } else {
        m.insert("managedFields".into(), Value::Array(entries));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manager_is_the_field_manager_else_the_user_agents_product() {
        assert_eq!(manager(Some("ststui"), Some("kube-rs/5")), "ststui");
        assert_eq!(manager(None, Some("kubectl/v1.34.0 (linux/amd64) kubernetes/abc")), "kubectl");
        assert_eq!(manager(Some(""), None), "unknown");
    }

    #[test]
    fn a_create_owns_what_it_set_and_an_update_adds_what_it_changed() {
        let mut pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-0", "uid": "u", "ownerReferences": [{"name": "web"}],
                "managedFields": [{"manager": "spoofed"}]},
            "spec": {"containers": [{"name": "app"}]},
            "status": {"phase": "Pending"},
        });
        record(&mut pod, None, "ststui", None, "v1", "2026-11-27T09:00:00Z");
        let mf = pod["metadata"]["managedFields"].as_array().unwrap().clone();
        assert_eq!(mf.len(), 1, "a body's own entries are not taken: {mf:?}");
        assert_eq!(mf[0]["manager"], "ststui");
        let f = &mf[0]["fieldsV1"];
        assert!(f["f:metadata"].get("f:ownerReferences").is_some(), "{f}");
        assert!(f["f:metadata"].get("f:uid").is_none(), "server-set fields are no one's: {f}");
        assert!(f.get("f:status").is_none(), "the main resource does not own status: {f}");
        // The kubelet writes the status: an entry of its own, for the status subresource.
        let old = pod.clone();
        pod["status"]["phase"] = json!("Running");
        record(&mut pod, Some(&old), "kubelet", Some("status"), "v1", "2026-11-27T09:00:01Z");
        let mf = pod["metadata"]["managedFields"].as_array().unwrap().clone();
        assert_eq!(mf.len(), 2, "{mf:?}");
        assert_eq!(mf[1]["subresource"], "status");
        assert!(mf[1]["fieldsV1"]["f:status"].get("f:phase").is_some());
        // The same manager again: one entry, its time moved, its fields the union.
        let old = pod.clone();
        pod["metadata"]["labels"] = json!({"a": "b"});
        record(&mut pod, Some(&old), "ststui", None, "v1", "2026-11-27T09:00:02Z");
        let mf = pod["metadata"]["managedFields"].as_array().unwrap().clone();
        assert_eq!(mf.len(), 2);
        assert_eq!(mf[0]["time"], "2026-11-27T09:00:02Z");
        assert!(mf[0]["fieldsV1"]["f:metadata"].get("f:labels").is_some());
        assert!(mf[0]["fieldsV1"]["f:metadata"].get("f:ownerReferences").is_some());
        // A write that changes nothing adds no entry.
        let old = pod.clone();
        record(&mut pod, Some(&old), "other", None, "v1", "2026-11-27T09:00:03Z");
        assert_eq!(pod["metadata"]["managedFields"].as_array().unwrap().len(), 2);
    }
}
