//! The resources the served simulator offers, and the discovery documents derived from them
//! (`/api`, `/apis`, `/api/v1`, `/apis/apps/v1`, …): one table, so discovery, routing and
//! error messages agree.

use serde_json::{Value, json};

/// Which resource a request is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Res {
    Namespaces,
    Pods,
    Claims,
    Events,
    Sets,
    Revisions,
    Budgets,
    Leases,
    AccessReviews,
    RulesReviews,
    SelfReviews,
}

/// A subresource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sub {
    Status,
    Scale,
    /// A pod's log (`pods/log`, GET).
    Log,
    /// A pod's eviction (`pods/eviction`, POST of a `policy/v1` Eviction).
    Eviction,
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Def {
    pub res: Res,
    /// `""` for the core group.
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub kind: &'static str,
    pub short: &'static [&'static str],
    pub namespaced: bool,
    pub verbs: &'static [&'static str],
    /// (name, kind, verbs) of each subresource.
    pub subs: &'static [(&'static str, &'static str, &'static [&'static str])],
    pub categories: &'static [&'static str],
}

const CRUD: &[&str] =
    &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
const STATUS: &[&str] = &["get", "patch", "update"];

/// Every resource, in discovery order.
pub const DEFS: &[Def] = &[
    Def {
        res: Res::Namespaces,
        group: "",
        version: "v1",
        plural: "namespaces",
        singular: "namespace",
        kind: "Namespace",
        short: &["ns"],
        namespaced: false,
        verbs: &["create", "get", "list", "watch"],
        subs: &[],
        categories: &[],
    },
    Def {
        res: Res::Pods,
        group: "",
        version: "v1",
        plural: "pods",
        singular: "pod",
        kind: "Pod",
        short: &["po"],
        namespaced: true,
        verbs: CRUD,
        subs: &[
            ("status", "Pod", STATUS),
            ("log", "Pod", &["get"]),
            ("eviction", "Eviction", &["create"]),
            // Served as kube-apiserver serves them (gates run through them), and so refusable
            // with --deny (create:pods/exec, get:pods/proxy).
            ("exec", "PodExecOptions", &["create", "get"]),
            ("proxy", "PodProxyOptions", &["create", "delete", "get", "patch", "update"]),
        ],
        categories: &["all"],
    },
    Def {
        res: Res::Claims,
        group: "",
        version: "v1",
        plural: "persistentvolumeclaims",
        singular: "persistentvolumeclaim",
        kind: "PersistentVolumeClaim",
        short: &["pvc"],
        namespaced: true,
        verbs: CRUD,
        subs: &[("status", "PersistentVolumeClaim", STATUS)],
        categories: &[],
    },
    Def {
        res: Res::Events,
        group: "",
        version: "v1",
        plural: "events",
        singular: "event",
        kind: "Event",
        short: &["ev"],
        namespaced: true,
        verbs: CRUD,
        subs: &[],
        categories: &[],
    },
    Def {
        res: Res::Sets,
        group: "apps",
        version: "v1",
        plural: "statefulsets",
        singular: "statefulset",
        kind: "StatefulSet",
        short: &["sts"],
        namespaced: true,
        verbs: CRUD,
        subs: &[("status", "StatefulSet", STATUS), ("scale", "Scale", STATUS)],
        categories: &["all"],
    },
    Def {
        res: Res::Revisions,
        group: "apps",
        version: "v1",
        plural: "controllerrevisions",
        singular: "controllerrevision",
        kind: "ControllerRevision",
        short: &[],
        namespaced: true,
        verbs: CRUD,
        subs: &[],
        categories: &[],
    },
    Def {
        res: Res::Budgets,
        group: "policy",
        version: "v1",
        plural: "poddisruptionbudgets",
        singular: "poddisruptionbudget",
        kind: "PodDisruptionBudget",
        short: &["pdb"],
        namespaced: true,
        verbs: CRUD,
        subs: &[("status", "PodDisruptionBudget", STATUS)],
        categories: &[],
    },
    Def {
        res: Res::Leases,
        group: "coordination.k8s.io",
        version: "v1",
        plural: "leases",
        singular: "lease",
        kind: "Lease",
        short: &[],
        namespaced: true,
        // Neither watched nor patched by anything ststui runs: not served (see `leases`).
        verbs: &["create", "delete", "get", "list", "update"],
        subs: &[],
        categories: &[],
    },
    Def {
        res: Res::AccessReviews,
        group: "authorization.k8s.io",
        version: "v1",
        plural: "selfsubjectaccessreviews",
        singular: "selfsubjectaccessreview",
        kind: "SelfSubjectAccessReview",
        short: &[],
        namespaced: false,
        verbs: &["create"],
        subs: &[],
        categories: &[],
    },
    Def {
        res: Res::RulesReviews,
        group: "authorization.k8s.io",
        version: "v1",
        plural: "selfsubjectrulesreviews",
        singular: "selfsubjectrulesreview",
        kind: "SelfSubjectRulesReview",
        short: &[],
        namespaced: false,
        verbs: &["create"],
        subs: &[],
        categories: &[],
    },
    Def {
        res: Res::SelfReviews,
        group: "authentication.k8s.io",
        version: "v1",
        plural: "selfsubjectreviews",
        singular: "selfsubjectreview",
        kind: "SelfSubjectReview",
        short: &[],
        namespaced: false,
        verbs: &["create"],
        subs: &[],
        categories: &[],
    },
];

/// The groups besides the core one, in discovery order.
const GROUPS: &[&str] =
    &["apps", "policy", "coordination.k8s.io", "authorization.k8s.io", "authentication.k8s.io"];

impl Def {
    /// The row for `res`.
    pub fn of(res: Res) -> &'static Def {
        DEFS.iter().find(|d| d.res == res).unwrap_or(&DEFS[0])
    }

    /// The row for a group, version and plural of a URL.
    pub fn find(group: &str, version: &str, plural: &str) -> Option<&'static Def> {
        DEFS.iter().find(|d| d.group == group && d.version == version && d.plural == plural)
    }

    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// How the API server names the resource in messages: `statefulsets.apps`, `pods`.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// Whether the subresource exists for this resource.
    pub fn has(&self, sub: Sub) -> bool {
        let name = match sub {
            Sub::Status => "status",
            Sub::Scale => "scale",
            Sub::Log => "log",
            Sub::Eviction => "eviction",
        };
        self.subs.iter().any(|(n, _, _)| *n == name)
    }
}

/// `/api`: the core group's versions.
pub fn api_versions(address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    })
}

fn group_json(name: &str) -> Value {
    let gv = json!({"groupVersion": format!("{name}/v1"), "version": "v1"});
    json!({"name": name, "versions": [gv], "preferredVersion": gv})
}

/// `/apis`: the named groups.
pub fn group_list() -> Value {
    let groups: Vec<Value> = GROUPS.iter().map(|g| group_json(g)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/GROUP`, when the group exists.
pub fn group(name: &str) -> Option<Value> {
    GROUPS.contains(&name).then(|| {
        let mut g = group_json(name);
        if let Some(o) = g.as_object_mut() {
            o.insert("kind".into(), "APIGroup".into());
            o.insert("apiVersion".into(), "v1".into());
        }
        g
    })
}

/// `/api/v1` or `/apis/GROUP/VERSION`: the resource list, when the group version exists.
pub fn resource_list(group: &str, version: &str) -> Option<Value> {
    if version != "v1" || !(group.is_empty() || GROUPS.contains(&group)) {
        return None;
    }
    let mut resources = Vec::new();
    for d in DEFS.iter().filter(|d| d.group == group) {
        resources.push(json!({
            "name": d.plural,
            "singularName": d.singular,
            "namespaced": d.namespaced,
            "kind": d.kind,
            "verbs": d.verbs,
            "shortNames": d.short,
            "categories": d.categories,
        }));
        for (sub, kind, verbs) in d.subs {
            let (grp, ver) = match *kind {
                "Scale" => ("autoscaling", "v1"),
                "Eviction" => ("policy", "v1"),
                _ => ("", ""),
            };
            let mut r = json!({
                "name": format!("{}/{sub}", d.plural),
                "singularName": "",
                "namespaced": d.namespaced,
                "kind": kind,
                "verbs": verbs,
            });
            if !grp.is_empty()
                && let Some(o) = r.as_object_mut()
            {
                o.insert("group".into(), grp.into());
                o.insert("version".into(), ver.into());
            }
            resources.push(r);
        }
    }
    let gv = if group.is_empty() { version.to_string() } else { format!("{group}/{version}") };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
    )
}
