//! A minimal OpenAPI v3 description: the paths of each group version with their verbs, the
//! `fieldValidation` parameter and the group-version-kind extension. Just what `kubectl apply`
//! (validation on, its default) reads to learn that the server validates fields itself, so it
//! sends `fieldValidation=Strict` and the server refuses unknown fields, as a real one does.

use serde_json::{Value, json};

use super::resources::DEFS;

/// `/openapi/v3`: where each group version's document is.
pub fn root() -> Value {
    let mut paths = serde_json::Map::new();
    for gv in ["api/v1", "apis/apps/v1"] {
        paths.insert(
            gv.into(),
            json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash=ststui")}),
        );
    }
    json!({"paths": paths})
}

/// `/openapi/v3/api/v1` or `/openapi/v3/apis/apps/v1`.
pub fn group_version(path: &str) -> Option<Value> {
    let (group, prefix) = match path {
        "api/v1" => ("", "/api/v1"),
        "apis/apps/v1" => ("apps", "/apis/apps/v1"),
        _ => return None,
    };
    let field_validation = json!({"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": true},
        "description": "Strict, Warn or Ignore: what to do with unknown fields"});
    let mut paths = serde_json::Map::new();
    for d in DEFS.iter().filter(|d| d.group == group && d.namespaced) {
        let gvk = json!({"group": d.group, "version": d.version, "kind": d.kind});
        let op = |verb: &str| {
            json!({
                "operationId": format!("{verb}{}", d.kind),
                "parameters": [field_validation.clone()],
                "x-kubernetes-action": verb,
                "x-kubernetes-group-version-kind": gvk.clone(),
                "responses": {"200": {"description": "OK"}},
            })
        };
        paths.insert(
            format!("{prefix}/namespaces/{{namespace}}/{}", d.plural),
            json!({"post": op("post")}),
        );
        paths.insert(
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", d.plural),
            json!({"put": op("put"), "patch": op("patch")}),
        );
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes (ststui simulator)", "version": "v1"},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}
