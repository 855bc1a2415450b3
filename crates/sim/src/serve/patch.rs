//! PATCH bodies by content type: JSON merge patch (RFC 7386), JSON patch (RFC 6902), both from
//! the `json-patch` crate, and strategic merge patch (`smp`). Server-side apply is refused with
//! a message saying what to use instead.

use serde_json::Value;

use super::smp;
use super::status::Status;

/// The patch formats the API accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    Merge,
    Json,
    Strategic,
}

impl PatchType {
    /// The type a `Content-Type` names, or the 415 that says which ones are accepted.
    pub fn from_content_type(ct: &str) -> Result<PatchType, Status> {
        let base = ct.split(';').next().unwrap_or_default().trim();
        match base {
            "application/merge-patch+json" => Ok(PatchType::Merge),
            "application/json-patch+json" => Ok(PatchType::Json),
            "application/strategic-merge-patch+json" => Ok(PatchType::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Err(Status::new(
                415,
                "UnsupportedMediaType",
                "server-side apply is not supported by the simulated API server: use client-side \
                 `kubectl apply` (without --server-side)",
            )),
            other => Err(Status::new(
                415,
                "UnsupportedMediaType",
                format!(
                    "the body of the request was in an unknown format {other:?} - accepted media \
                     types include: application/json-patch+json, application/merge-patch+json, \
                     application/strategic-merge-patch+json"
                ),
            )),
        }
    }
}

/// Applies `patch` (the request body) to `current`.
pub fn apply(kind: PatchType, current: &Value, patch: &[u8]) -> Result<Value, Status> {
    let bad = |e: String| Status::bad_request(e);
    match kind {
        PatchType::Merge => {
            let p: Value = serde_json::from_slice(patch)
                .map_err(|e| bad(format!("invalid JSON merge patch: {e}")))?;
            let mut out = current.clone();
            json_patch::merge(&mut out, &p);
            Ok(out)
        }
        PatchType::Json => {
            let p: json_patch::Patch = serde_json::from_slice(patch)
                .map_err(|e| bad(format!("invalid JSON patch: {e}")))?;
            let mut out = current.clone();
            json_patch::patch(&mut out, &p).map_err(|e| {
                Status::new(
                    422,
                    "Invalid",
                    format!("the server rejected our request due to an error in our request: {e}"),
                )
            })?;
            Ok(out)
        }
        PatchType::Strategic => {
            let p: Value = serde_json::from_slice(patch)
                .map_err(|e| bad(format!("invalid strategic merge patch: {e}")))?;
            smp::apply(current, &p).map_err(|e| bad(e.to_string()))
        }
    }
}

/// Fields of `input` (a JSON object from a client) that the typed object dropped: unknown fields,
/// as strict field validation reports them (`.spec.replica`). Nulls are not unknown.
pub fn unknown_fields(input: &Value, typed: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(input, typed, String::new(), &mut out);
    out
}

fn walk(input: &Value, typed: &Value, path: String, out: &mut Vec<String>) {
    match (input, typed) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                if v.is_null() || k.starts_with('$') {
                    continue;
                }
                let p = format!("{path}.{k}");
                match b.get(k) {
                    Some(tv) => walk(v, tv, p, out),
                    // An empty object or list the typed form leaves out is not unknown.
                    None if is_empty(v) => {}
                    None => out.push(p),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (v, tv)) in a.iter().zip(b).enumerate() {
                walk(v, tv, format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.values().all(is_empty),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_are_named_by_path() {
        let input = json!({"spec": {"replica": 4, "replicas": 3, "template": {"spec": {"containers": [{"name": "a", "imag": "x"}]}}}, "status": null});
        let typed =
            json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "a"}]}}}});
        assert_eq!(
            unknown_fields(&input, &typed),
            vec![".spec.replica", ".spec.template.spec.containers[0].imag"]
        );
    }

    #[test]
    fn the_three_patch_types_apply() {
        let cur = json!({"spec": {"replicas": 3, "x": [1, 2]}});
        let m = apply(PatchType::Merge, &cur, br#"{"spec":{"replicas":5,"x":null}}"#).unwrap();
        assert_eq!(m, json!({"spec": {"replicas": 5}}));
        let j = apply(
            PatchType::Json,
            &cur,
            br#"[{"op":"replace","path":"/spec/replicas","value":1}]"#,
        )
        .unwrap();
        assert_eq!(j["spec"]["replicas"], 1);
        let bad =
            apply(PatchType::Json, &cur, br#"[{"op":"test","path":"/spec/replicas","value":9}]"#);
        assert_eq!(bad.unwrap_err().code, 422);
        assert_eq!(
            PatchType::from_content_type("application/apply-patch+yaml").unwrap_err().code,
            415
        );
    }
}
