//! Leases (`coordination.k8s.io/v1`), served so that drive mode elects its one driver against
//! a served simulator as it does against a real API server (`drive::lease`): get, list,
//! create, update (guarded by the resourceVersion, a 409 `Conflict` when stale) and delete.
//! Nothing in the simulated cluster reads a Lease, so they are kept here, beside the
//! simulation, as the JSON a client wrote (checked against the typed Lease first), with a
//! resourceVersion counter of their own. Not watchable and not patchable: discovery says so,
//! and such a request gets the API server's 405.
//!
//! Owns: the Leases and their versions. Must not: touch the simulation.

use axum::http::StatusCode;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::ctx::{Ctx, MAX_LEASES};
use super::resources::Def;
use super::route::Route;
use super::status::{self, Status};
use super::table::{self, Include};
use super::{Reply, reply};

/// A Lease request: `verb` as RBAC names it.
pub async fn request(
    ctx: &Ctx,
    route: &Route,
    verb: &str,
    body: &[u8],
    as_table: bool,
) -> Result<Reply, Status> {
    let def = route.def;
    let ns = route.namespace.clone().unwrap_or_default();
    if !ns.is_empty() && !super::ctx::namespace_exists(ctx, &ns).await? {
        return Err(Status::namespace_not_found(&ns));
    }
    let now = Timestamp::now();
    let mut leases =
        ctx.leases.lock().map_err(|_| Status::unavailable("the Lease store failed"))?;
    match (verb, route.name.as_deref()) {
        ("list", None) => {
            let items: Vec<Value> = leases
                .items
                .iter()
                .filter(|((n, _), _)| ns.is_empty() || *n == ns)
                .map(|(_, v)| v.clone())
                .collect();
            let rv = leases.rv.to_string();
            Ok(reply(StatusCode::OK, list_json(&items, &rv, as_table, now)))
        }
        ("get", Some(name)) => {
            let v = leases
                .items
                .get(&(ns.clone(), name.to_string()))
                .ok_or_else(|| Status::not_found(def, name))?;
            if as_table {
                let rv = v.pointer("/metadata/resourceVersion").and_then(Value::as_str);
                let rows = vec![cells(v, now)];
                let t = table::table(
                    def.res,
                    std::slice::from_ref(v),
                    rows,
                    rv.unwrap_or("0"),
                    Include::None,
                );
                return Ok(reply(StatusCode::OK, t));
            }
            Ok(reply(StatusCode::OK, v.clone()))
        }
        ("create", None) => {
            let mut v = parse(def, body, &ns, None)?;
            let name = name_of(&v).ok_or_else(|| {
                Status::invalid(
                    def,
                    "",
                    "metadata.name: Required value: name or generateName is required",
                )
            })?;
            let key = (ns.clone(), name.clone());
            if leases.items.contains_key(&key) {
                return Err(Status::already_exists(def, &name));
            }
            if leases.items.len() >= MAX_LEASES {
                return Err(Status::too_many(format!(
                    "the served simulator keeps at most {MAX_LEASES} Leases: delete some first"
                )));
            }
            let rv = leases.next_rv();
            stamp(&mut v, &rv, Some(now), &format!("lease-{ns}-{name}-{rv}"));
            leases.items.insert(key, v.clone());
            Ok(reply(StatusCode::CREATED, v))
        }
        ("update", Some(name)) => {
            let mut v = parse(def, body, &ns, Some(name))?;
            let key = (ns.clone(), name.to_string());
            let Some(old) = leases.items.get(&key) else {
                return Err(Status::not_found(def, name));
            };
            let held = old.pointer("/metadata/resourceVersion").and_then(Value::as_str);
            let sent = v.pointer("/metadata/resourceVersion").and_then(Value::as_str);
            if sent.is_some_and(|s| !s.is_empty() && Some(s) != held) {
                return Err(Status::modified(def, name));
            }
            let uid =
                old.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or("").to_string();
            let created = old.pointer("/metadata/creationTimestamp").cloned();
            let rv = leases.next_rv();
            stamp(&mut v, &rv, None, &uid);
            if let (Some(c), Some(m)) =
                (created, v.get_mut("metadata").and_then(Value::as_object_mut))
            {
                m.insert("creationTimestamp".into(), c);
            }
            leases.items.insert(key, v.clone());
            Ok(reply(StatusCode::OK, v))
        }
        ("delete", Some(name)) => {
            let v = leases
                .items
                .remove(&(ns.clone(), name.to_string()))
                .ok_or_else(|| Status::not_found(def, name))?;
            let uid = v.pointer("/metadata/uid").and_then(Value::as_str);
            Ok(reply(StatusCode::OK, status::success(def, name, uid)))
        }
        _ => Err(Status::method_not_allowed(def.plural)),
    }
}

/// The body as a Lease: well-formed, of this kind, in this namespace, named as the path says.
fn parse(def: &Def, body: &[u8], ns: &str, name: Option<&str>) -> Result<Value, Status> {
    let mut v: Value = serde_json::from_slice(body)
        .map_err(|e| Status::bad_request(format!("the request body is not valid JSON: {e}")))?;
    if let Some(k) = v.get("kind").and_then(Value::as_str).filter(|k| *k != def.kind) {
        return Err(Status::bad_request(format!(
            "the body is a {k}, but the request is about {}: expected kind {}",
            def.qualified(),
            def.kind
        )));
    }
    let lease: Lease = serde_json::from_value(v.clone()).map_err(|e| {
        Status::bad_request(format!("Lease in version \"v1\" cannot be handled as a Lease: {e}"))
    })?;
    let given = lease.metadata.name.as_deref().unwrap_or_default();
    if let Some(name) = name
        && given != name
    {
        return Err(Status::bad_request(format!(
            "the name of the object ({given}) does not match the name on the URL ({name})"
        )));
    }
    if let Some(other) = lease.metadata.namespace.as_deref().filter(|n| !n.is_empty() && *n != ns) {
        return Err(Status::bad_request(format!(
            "the namespace of the provided object ({other}) does not match the namespace sent on \
             the request ({ns})"
        )));
    }
    let spec = lease.spec.unwrap_or_default();
    if spec.lease_duration_seconds.is_some_and(|d| d <= 0) {
        return Err(Status::invalid(
            def,
            given,
            "spec.leaseDurationSeconds: Invalid value: must be greater than 0",
        ));
    }
    let o = v.as_object_mut().ok_or_else(|| Status::bad_request("a Lease must be an object"))?;
    o.insert("apiVersion".into(), def.api_version().into());
    o.insert("kind".into(), def.kind.into());
    let meta = o.entry("metadata").or_insert_with(|| json!({}));
    if let Some(m) = meta.as_object_mut() {
        m.insert("namespace".into(), ns.into());
    }
    Ok(v)
}

fn name_of(v: &Value) -> Option<String> {
    v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
}

/// The server's part of the metadata: resourceVersion, uid, creation time (on create).
fn stamp(v: &mut Value, rv: &str, created: Option<Timestamp>, uid: &str) {
    let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    m.insert("resourceVersion".into(), rv.into());
    m.insert("uid".into(), uid.into());
    if let Some(t) = created {
        m.insert("creationTimestamp".into(), t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string().into());
    }
}

fn list_json(items: &[Value], rv: &str, as_table: bool, now: Timestamp) -> Value {
    if as_table {
        let rows = items.iter().map(|v| cells(v, now)).collect();
        return table::table(super::resources::Res::Leases, items, rows, rv, Include::Metadata);
    }
    json!({
        "kind": "LeaseList",
        "apiVersion": "coordination.k8s.io/v1",
        "metadata": {"resourceVersion": rv},
        "items": items,
    })
}

/// A Lease's row: name, holder, age (`kubectl get leases`).
fn cells(v: &Value, now: Timestamp) -> Vec<Value> {
    let holder = v.pointer("/spec/holderIdentity").and_then(Value::as_str).unwrap_or("");
    let age = v
        .pointer("/metadata/creationTimestamp")
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<Timestamp>().ok())
        .map_or_else(
            || "<unknown>".to_string(),
            |t| table::human_duration(now.as_millisecond() - t.as_millisecond()),
        );
    vec![json!(name_of(v)), json!(holder), json!(age)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_must_be_a_lease_named_as_the_path_says() {
        let def = Def::of(super::super::resources::Res::Leases);
        let ok =
            br#"{"metadata":{"name":"l"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15}}"#;
        let v = parse(def, ok, "default", Some("l")).unwrap();
        assert_eq!(v["metadata"]["namespace"], "default");
        assert_eq!(v["kind"], "Lease");
        let other = parse(def, ok, "default", Some("m")).unwrap_err();
        assert_eq!(other.code, 400, "{}", other.message);
        let kind = parse(def, br#"{"kind":"Pod","metadata":{"name":"l"}}"#, "default", None);
        assert!(kind.unwrap_err().message.contains("expected kind Lease"));
        let zero = br#"{"metadata":{"name":"l"},"spec":{"leaseDurationSeconds":0}}"#;
        assert_eq!(parse(def, zero, "default", None).unwrap_err().code, 422);
        let ns = br#"{"metadata":{"name":"l","namespace":"prod"}}"#;
        assert!(parse(def, ns, "default", None).unwrap_err().message.contains("prod"));
    }
}
