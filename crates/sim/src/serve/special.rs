//! The resources that are not stored objects of the simulation: namespaces (derived from the
//! objects, plus those created through the API), `/scale` of a StatefulSet (an
//! `autoscaling/v1` Scale), SelfSubjectAccessReview (answering as `--deny` refuses) and
//! SelfSubjectReview (who am I).

use axum::http::StatusCode;
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::{Value, json};

use super::ctx::{Ctx, USER, created};
use super::patch::{self, PatchType};
use super::resources::Def;
use super::route::{Query, Route};
use super::status::Status;
use super::table;
use super::verbs::{api_status, object_key};
use super::{Reply, reply};
use crate::backend::{ObjKind, Object};

/// Namespace `name` of the cluster `cluster` (its uid differs from another served cluster's).
pub fn namespace_json(name: &str, created_at: &str, cluster: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "uid": format!("ns-{name}-{cluster}"), "resourceVersion": "1",
            "creationTimestamp": created_at, "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    })
}

/// GET / LIST / POST of namespaces.
pub async fn namespaces(
    ctx: &Ctx,
    method: &str,
    route: &Route,
    body: &[u8],
    as_table: bool,
) -> Result<Reply, Status> {
    let def = route.def;
    let (names, epoch, now) = ctx
        .on_sim(|sim| (sim.namespaces(), sim.store().clock().timestamp_at(0), sim.now()))
        .await?;
    let start = epoch.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let mut all: Vec<(String, String)> = names.into_iter().map(|n| (n, start.clone())).collect();
    for (n, at) in created(ctx) {
        if !all.iter().any(|(x, _)| *x == n) {
            all.push((n, at));
        }
    }
    all.sort();
    match (method, &route.name) {
        ("POST", _) => {
            let v: Value = serde_json::from_slice(body).map_err(|e| {
                Status::bad_request(format!("the request body is not valid JSON: {e}"))
            })?;
            let name =
                v.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string();
            if !crate::sim::validate::dns1123_label(&name).is_empty() || name.is_empty() {
                return Err(Status::invalid(
                    def,
                    &name,
                    format!(
                        "Namespace \"{name}\" is invalid: metadata.name: Invalid value: \"{name}\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
                    ),
                ));
            }
            if all.iter().any(|(n, _)| *n == name) {
                return Err(Status::already_exists(def, &name));
            }
            let at = now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
            if let Ok(mut m) = ctx.namespaces.lock() {
                m.insert(name.clone(), at.clone());
            }
            ctx.namespaces_added.send_modify(|n| *n = n.wrapping_add(1));
            Ok(reply(StatusCode::CREATED, namespace_json(&name, &at, &ctx.cluster)))
        }
        ("GET", Some(name)) => {
            let (n, at) =
                all.iter().find(|(n, _)| n == name).ok_or_else(|| Status::not_found(def, name))?;
            Ok(reply(StatusCode::OK, namespace_json(n, at, &ctx.cluster)))
        }
        ("GET", None) => {
            let items: Vec<Value> =
                all.iter().map(|(n, at)| namespace_json(n, at, &ctx.cluster)).collect();
            let rv = ctx.hub.latest().to_string();
            if as_table {
                let rows = items
                    .iter()
                    .map(|v| {
                        let meta =
                            serde_json::from_value(v["metadata"].clone()).unwrap_or_default();
                        table::namespace_cells(&meta, now)
                    })
                    .collect();
                return Ok(reply(
                    StatusCode::OK,
                    table::table(def.res, &items, rows, &rv, table::Include::Metadata),
                ));
            }
            Ok(reply(
                StatusCode::OK,
                json!({"kind": "NamespaceList", "apiVersion": "v1", "metadata": {"resourceVersion": rv}, "items": items}),
            ))
        }
        _ => Err(Status::method_not_allowed("namespaces: get, list and create only")),
    }
}

fn selector_string(set: &StatefulSet) -> String {
    crate::core::selector::to_query(&set.spec.selector)
}

fn scale_json(set: &StatefulSet) -> Value {
    let m = &set.metadata;
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {"name": m.name, "namespace": m.namespace, "uid": m.uid,
            "resourceVersion": m.resource_version, "creationTimestamp": m.creation_timestamp},
        "spec": {"replicas": set.spec.replicas.unwrap_or(1)},
        "status": {"replicas": set.status.as_ref().map_or(0, |s| s.replicas), "selector": selector_string(set)},
    })
}

/// `/scale` of a StatefulSet: GET, PUT and PATCH of an autoscaling/v1 Scale.
pub async fn scale(
    ctx: &Ctx,
    method: &str,
    route: &Route,
    q: &Query,
    content_type: &str,
    body: &[u8],
    manager: &str,
) -> Result<Reply, Status> {
    let def: &'static Def = route.def;
    let manager = manager.to_string();
    let key = object_key(route)?;
    let method = method.to_string();
    let body = body.to_vec();
    let ptype =
        if method == "PATCH" { Some(PatchType::from_content_type(content_type)?) } else { None };
    let dry = q.dry_run();
    let out = ctx
        .on_sim(move |sim| -> Result<Value, Status> {
            let Some(Object::Set(set)) = sim.rest_get(ObjKind::Set, &key) else {
                return Err(Status::not_found(def, &key.name));
            };
            let current = scale_json(&set);
            let wanted = match (method.as_str(), ptype) {
                ("GET", _) => return Ok(current),
                ("PUT", _) => serde_json::from_slice::<Value>(&body)
                    .map_err(|e| Status::bad_request(format!("the request body is not a Scale: {e}")))?,
                (_, Some(p)) => patch::apply(p, &current, &body)?,
                _ => return Err(Status::method_not_allowed("scale: get, update and patch only")),
            };
            let replicas = wanted
                .pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .ok_or_else(|| Status::bad_request("a Scale needs spec.replicas (a number)"))?;
            let replicas = i32::try_from(replicas).map_err(|_| {
                Status::invalid(def, &key.name, format!("Scale.autoscaling \"{}\" is invalid: spec.replicas: Invalid value: {replicas}: must be a 32-bit integer", key.name))
            })?;
            let mut new = (*set).clone();
            new.metadata.resource_version =
                wanted.pointer("/metadata/resourceVersion").and_then(Value::as_str).map(str::to_string);
            new.spec.replicas = Some(replicas);
            let new = super::verbs::stamped(
                def,
                super::hub::to_json(&Object::Set(std::sync::Arc::new(new))),
                Some(&Object::Set(set)),
                &manager,
                Some("scale"),
                sim.now(),
            )?;
            let stored = sim.rest_update(new, false, dry).map_err(|e| api_status(def, &key.name, &e))?;
            match stored {
                Object::Set(s) => Ok(scale_json(&s)),
                _ => Ok(current),
            }
        })
        .await??;
    Ok(reply(StatusCode::OK, out))
}

/// POST of a SelfSubjectAccessReview: allowed unless `--deny` refuses it.
pub fn access_review(ctx: &Ctx, body: &[u8]) -> Result<Reply, Status> {
    let mut v: Value = serde_json::from_slice(body)
        .map_err(|e| Status::bad_request(format!("the request body is not valid JSON: {e}")))?;
    let attr = v.pointer("/spec/resourceAttributes").cloned().unwrap_or(Value::Null);
    let s = |k: &str| attr.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let (verb, group, resource, sub) = (s("verb"), s("group"), s("resource"), s("subresource"));
    let full = if sub.is_empty() { resource.clone() } else { format!("{resource}/{sub}") };
    let ns = s("namespace");
    let name = s("name");
    let denied = ctx.forbidden(
        &verb,
        &group,
        &full,
        Some(ns.as_str()).filter(|n| !n.is_empty()),
        Some(name.as_str()).filter(|n| !n.is_empty()),
    );
    let status = match &denied {
        // As RBAC answers: not allowed, no reason (kubectl auth can-i prints a bare "no").
        Some(_) => json!({"allowed": false}),
        None => json!({"allowed": true, "reason": "the simulated API server allows it"}),
    };
    if let Some(o) = v.as_object_mut() {
        o.insert("status".into(), status);
        o.insert("kind".into(), "SelfSubjectAccessReview".into());
        o.insert("apiVersion".into(), "authorization.k8s.io/v1".into());
    }
    Ok(reply(StatusCode::CREATED, v))
}

/// POST of a SelfSubjectRulesReview: what the served user may do, as RBAC lists it (allow rules
/// only): every verb of every resource and subresource the server offers, less what `--deny`
/// refuses. Complete (`incomplete: false`): the simulated authorizer knows everything.
pub fn rules_review(ctx: &Ctx, body: &[u8]) -> Result<Reply, Status> {
    let mut v: Value = serde_json::from_slice(body)
        .map_err(|e| Status::bad_request(format!("the request body is not valid JSON: {e}")))?;
    let mut rules = Vec::new();
    for def in super::resources::DEFS {
        let mut targets = vec![(def.plural.to_string(), def.verbs)];
        targets
            .extend(def.subs.iter().map(|(n, _, verbs)| (format!("{}/{n}", def.plural), *verbs)));
        for (resource, verbs) in targets {
            let allowed: Vec<&str> = verbs
                .iter()
                .copied()
                .filter(|verb| ctx.forbidden(verb, def.group, &resource, None, None).is_none())
                .collect();
            if !allowed.is_empty() {
                rules.push(
                    json!({"verbs": allowed, "apiGroups": [def.group], "resources": [resource]}),
                );
            }
        }
    }
    if let Some(o) = v.as_object_mut() {
        o.insert(
            "status".into(),
            json!({"resourceRules": rules, "nonResourceRules": [], "incomplete": false}),
        );
        o.insert("kind".into(), "SelfSubjectRulesReview".into());
        o.insert("apiVersion".into(), "authorization.k8s.io/v1".into());
    }
    Ok(reply(StatusCode::CREATED, v))
}

/// POST of a SelfSubjectReview: the served user.
pub fn self_review() -> Reply {
    reply(
        StatusCode::CREATED,
        json!({"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1", "metadata": {},
            "status": {"userInfo": {"username": USER, "groups": ["system:authenticated"]}}}),
    )
}

/// `GET pods/NAME/log[?previous=true]`: the simulated container's log as its kubelet model
/// renders it (`sim::kubelet::log`). A `follow` request gets the log so far and the stream
/// ends: the simulator does not stream logs to HTTP clients.
pub async fn pod_log(ctx: &Ctx, route: &Route, q: &Query) -> Result<String, Status> {
    let def: &'static Def = route.def;
    let key = object_key(route)?;
    let previous = q.flag("previous");
    let tail = q.number("tailLines")?;
    ctx.on_sim(move |sim| -> Result<String, Status> {
        let Some(pod) = sim.pod(&key) else { return Err(Status::not_found(def, &key.name)) };
        let mut lines = crate::kubelet::log::render(pod, previous)
            .map_err(|e| Status::bad_request(e.to_string()))?;
        if let Some(n) = tail.and_then(|n| usize::try_from(n).ok()) {
            let skip = lines.len().saturating_sub(n);
            lines.drain(..skip);
        }
        Ok(lines.iter().map(|l| format!("{l}\n")).collect())
    })
    .await?
}

/// `POST pods/NAME/eviction`: a `policy/v1` (or `v1beta1`) Eviction, judged by the pod's
/// disruption budgets as the API server does (`sim::disruption`). 201 with a Success status
/// when the pod goes; a refusal names the budget in `details.causes`.
pub async fn evict(ctx: &Ctx, route: &Route, q: &Query, body: &[u8]) -> Result<Reply, Status> {
    let def: &'static Def = route.def;
    let key = object_key(route)?;
    let v: Value = serde_json::from_slice(body).map_err(|e| {
        Status::bad_request(format!("the request body is not an Eviction (policy/v1): {e}"))
    })?;
    if let Some(k) = v.get("kind").and_then(Value::as_str).filter(|k| *k != "Eviction") {
        return Err(Status::bad_request(format!("not a Eviction object: {k}; expected Eviction")));
    }
    let named = v.pointer("/metadata/name").and_then(Value::as_str);
    if named.is_some_and(|n| n != key.name) {
        return Err(Status::bad_request("name in URL does not match name in Eviction object"));
    }
    let opts = v.get("deleteOptions");
    let text = |p: &str| opts.and_then(|o| o.pointer(p)).and_then(Value::as_str).map(String::from);
    let body_dry = opts
        .and_then(|o| o.get("dryRun"))
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|x| x == "All"));
    let opts = crate::sim::disruption::EvictOptions {
        grace_seconds: opts.and_then(|o| o.get("gracePeriodSeconds")).and_then(Value::as_i64),
        uid: text("/preconditions/uid"),
        resource_version: text("/preconditions/resourceVersion"),
        dry_run: q.dry_run() || body_dry,
    };
    ctx.on_sim(move |sim| sim.rest_evict(&key, &opts).map_err(|e| api_status(def, &key.name, &e)))
        .await??;
    let ok = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"});
    Ok(reply(StatusCode::CREATED, ok))
}

/// `GET pods/NAME[:PORT]/proxy/…`: the simulator's pods answer as a readiness endpoint would —
/// 200 `ok` while Running and Ready, 503 otherwise (what a plan's `http::` gate reads as "not
/// yet"); a pod that does not exist is a 404 Status, as the API server's.
pub async fn pod_proxy(ctx: &Ctx, namespace: String, pod: String) -> Result<Reply, Status> {
    let key = crate::backend::ObjRef::new(namespace, pod);
    let def = Def::of(super::resources::Res::Pods);
    ctx.on_sim(move |sim| -> Result<Reply, Status> {
        let Some(p) = sim.pod(&key) else { return Err(Status::not_found(def, &key.name)) };
        let (code, text) = if crate::core::pod::is_running_and_ready(p) {
            (StatusCode::OK, "ok\n".to_string())
        } else {
            (StatusCode::SERVICE_UNAVAILABLE, format!("{} is not Ready\n", key.name))
        };
        Ok(Reply { code, body: axum::body::Body::from(text), json: false, warnings: Vec::new() })
    })
    .await?
}
