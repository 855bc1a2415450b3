//! Requests as the API server reads them: the path (which resource, namespace, name and
//! subresource), the verb, the query parameters and the formats asked for.

use std::collections::BTreeMap;

use axum::http::{HeaderMap, Method};

use super::resources::{Def, Res, Sub};
use super::status::Status;

/// What a path addresses.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Version,
    Health,
    Api,
    Apis,
    Group(String),
    ResourceList {
        group: String,
        version: String,
    },
    /// An object or a collection of a resource.
    Resource(Route),
    /// `/api/v1/namespaces/NS/pods/[SCHEME:]NAME[:PORT]/proxy/…`: a request to the pod through
    /// the API server (what a plan's `http::` gate sends).
    PodProxy {
        namespace: String,
        pod: String,
    },
}

/// A resource path: `/apis/apps/v1/namespaces/default/statefulsets/web/scale`.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub def: &'static Def,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub sub: Option<Sub>,
}

/// Parses a request path.
pub fn parse(path: &str) -> Result<Target, Status> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    let not_found = || Status::path_not_found(path);
    match segs.as_slice() {
        ["version"] => Ok(Target::Version),
        ["healthz" | "livez" | "readyz", ..] => Ok(Target::Health),
        ["api"] => Ok(Target::Api),
        ["apis"] => Ok(Target::Apis),
        ["api", v] => Ok(Target::ResourceList { group: String::new(), version: v.to_string() }),
        ["apis", g] => Ok(Target::Group(g.to_string())),
        ["apis", g, v] => Ok(Target::ResourceList { group: g.to_string(), version: v.to_string() }),
        ["api", "v1", "namespaces", ns, "pods", name, "proxy", ..] => {
            let name = name.strip_prefix("https:").or(name.strip_prefix("http:")).unwrap_or(name);
            let pod = name.split(':').next().unwrap_or(name);
            Ok(Target::PodProxy { namespace: ns.to_string(), pod: pod.to_string() })
        }
        ["api", v, rest @ ..] => resource("", v, rest).ok_or_else(not_found),
        ["apis", g, v, rest @ ..] => resource(g, v, rest).ok_or_else(not_found),
        _ => Err(not_found()),
    }
}

fn resource(group: &str, version: &str, rest: &[&str]) -> Option<Target> {
    let sub = |s: &str| match s {
        "status" => Some(Sub::Status),
        "scale" => Some(Sub::Scale),
        "log" => Some(Sub::Log),
        "eviction" => Some(Sub::Eviction),
        _ => None,
    };
    let route = |plural: &str, ns: Option<&str>, name: Option<&str>, s: Option<&str>| {
        let def = Def::find(group, version, plural)?;
        if def.namespaced != ns.is_some() && !(ns.is_none() && name.is_none()) {
            return None;
        }
        let sub = match s {
            None => None,
            Some(s) => Some(sub(s).filter(|x| def.has(*x))?),
        };
        Some(Target::Resource(Route {
            def,
            namespace: ns.map(str::to_string),
            name: name.map(str::to_string),
            sub,
        }))
    };
    match rest {
        ["namespaces", ns] if group.is_empty() => {
            let def = Def::of(Res::Namespaces);
            Some(Target::Resource(Route {
                def,
                namespace: None,
                name: Some(ns.to_string()),
                sub: None,
            }))
        }
        ["namespaces", ns, plural] => route(plural, Some(ns), None, None),
        ["namespaces", ns, plural, name] => route(plural, Some(ns), Some(name), None),
        ["namespaces", ns, plural, name, s] => route(plural, Some(ns), Some(name), Some(s)),
        [plural] => route(plural, None, None, None),
        [plural, name] => route(plural, None, Some(name), None),
        [plural, name, s] => route(plural, None, Some(name), Some(s)),
        _ => None,
    }
}

/// The RBAC verb of a request on `route`.
pub fn verb(method: &Method, route: &Route, query: &Query) -> &'static str {
    match (method.as_str(), route.name.is_some()) {
        ("GET", true) => "get",
        ("GET", false) if query.flag("watch") => "watch",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PUT", _) => "update",
        ("PATCH", _) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => "unknown",
    }
}

/// The query parameters.
#[derive(Debug, Clone, Default)]
pub struct Query(BTreeMap<String, String>);

impl Query {
    pub fn parse(q: Option<&str>) -> Query {
        let pairs = form_urlencoded::parse(q.unwrap_or_default().as_bytes());
        Query(pairs.map(|(k, v)| (k.into_owned(), v.into_owned())).collect())
    }

    pub fn get(&self, k: &str) -> Option<&str> {
        self.0.get(k).map(String::as_str).filter(|v| !v.is_empty())
    }

    /// A boolean parameter (`watch=true`, `watch=1`).
    pub fn flag(&self, k: &str) -> bool {
        matches!(self.get(k), Some("true" | "1"))
    }

    /// A non-negative number, or the 400 that says which parameter is wrong.
    pub fn number(&self, k: &str) -> Result<Option<u64>, Status> {
        self.get(k)
            .map(|v| {
                v.parse::<u64>().map_err(|_| {
                    Status::bad_request(format!(
                        "{k}: invalid value {v:?}: expected a non-negative integer"
                    ))
                })
            })
            .transpose()
    }

    pub fn dry_run(&self) -> bool {
        self.get("dryRun") == Some("All")
    }
}

/// Whether the client asked for a server-side Table.
pub fn wants_table(headers: &HeaderMap) -> bool {
    headers
        .get_all("accept")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|part| part.contains("as=Table"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_to_resources_and_bad_ones_to_404() {
        let Ok(Target::Resource(r)) = parse("/apis/apps/v1/namespaces/prod/statefulsets/web/scale")
        else {
            panic!()
        };
        assert_eq!(
            (r.def.res, r.namespace.as_deref(), r.name.as_deref(), r.sub),
            (Res::Sets, Some("prod"), Some("web"), Some(Sub::Scale))
        );
        let Ok(Target::Resource(r)) = parse("/api/v1/pods") else { panic!() };
        assert_eq!((r.def.res, r.namespace, r.name), (Res::Pods, None, None));
        let Ok(Target::Resource(r)) = parse("/api/v1/namespaces/kube-system") else { panic!() };
        assert_eq!((r.def.res, r.name.as_deref()), (Res::Namespaces, Some("kube-system")));
        for bad in
            ["/apis/apps/v1/namespaces/x/deployments", "/api/v1/namespaces/x/pods/a/scale", "/nope"]
        {
            assert_eq!(parse(bad).unwrap_err().code, 404, "{bad}");
        }
    }
}
