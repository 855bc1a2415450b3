//! What every request handler shares: the way onto the simulation's thread, the watch hub, the
//! denied permissions, the namespaces created through the API, and the served identity.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use super::hub::Hub;
use super::status::Status;
use crate::sim::Sim;
use crate::sim::driver::Caller;

/// The user every request is served as (there is no authentication: a local endpoint).
pub const USER: &str = "ststui-sim-operator";

/// A permission the server refuses (`--deny VERB:RESOURCE`, e.g. `patch:statefulsets`,
/// `patch:statefulsets/scale`, `delete:pods`, `*:pods`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deny {
    pub verb: String,
    /// `plural` or `plural/subresource`; `*` for any.
    pub resource: String,
}

/// The verbs a `--deny` may name (RBAC's, and `*`).
const DENY_VERBS: [&str; 9] =
    ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "*"];

/// Why a `--deny` does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadDeny {
    #[error("--deny {0:?}: expected VERB:RESOURCE, e.g. patch:statefulsets or delete:pods")]
    Form(String),
    #[error("--deny {deny:?}: unknown verb {verb:?}; expected one of {}", DENY_VERBS.join(", "))]
    Verb { deny: String, verb: String },
    #[error(
        "--deny {deny:?}: unknown resource {resource:?}; expected e.g. statefulsets, statefulsets/scale, pods, persistentvolumeclaims"
    )]
    Resource { deny: String, resource: String },
}

impl FromStr for Deny {
    type Err = BadDeny;

    fn from_str(s: &str) -> Result<Deny, BadDeny> {
        let (verb, resource) = s.split_once(':').ok_or_else(|| BadDeny::Form(s.into()))?;
        if !DENY_VERBS.contains(&verb) {
            return Err(BadDeny::Verb { deny: s.into(), verb: verb.into() });
        }
        let known = super::resources::DEFS.iter().any(|d| {
            resource == "*"
                || resource == d.plural
                || d.subs.iter().any(|(sub, _, _)| resource == format!("{}/{sub}", d.plural))
        });
        if !known {
            return Err(BadDeny::Resource { deny: s.into(), resource: resource.into() });
        }
        Ok(Deny { verb: verb.into(), resource: resource.into() })
    }
}

impl Deny {
    pub fn covers(&self, verb: &str, resource: &str) -> bool {
        (self.verb == "*" || self.verb == verb)
            && (self.resource == "*" || self.resource == resource)
    }
}

/// The handlers' shared state.
pub struct Ctx {
    pub caller: Caller,
    pub hub: Arc<Hub>,
    pub deny: Vec<Deny>,
    /// `host:port` the server answers on.
    pub address: String,
    /// The `gitVersion` `/version` reports.
    pub git_version: String,
    /// Whether that release streams lists (`sendInitialEvents`; see `watch::streams_lists`).
    pub streams_lists: bool,
    /// Open watches (capped at [`super::MAX_WATCHES`]).
    pub watches: AtomicUsize,
    /// Namespaces created through the API: name → creation time (RFC 3339).
    pub namespaces: Mutex<BTreeMap<String, String>>,
    /// Counts the namespaces created through the API: a namespace watch wakes on it.
    pub namespaces_added: tokio::sync::watch::Sender<u64>,
    /// The Leases clients hold (drive mode's election).
    pub leases: Mutex<Leases>,
    /// The requests served, for a client's benchmark (`GET /ststui/requests`).
    pub requests: Mutex<Requests>,
    /// This server's cluster, random per server: in every namespace's uid, so two served
    /// simulators are two clusters to whoever tells clusters apart by `kube-system`'s uid.
    pub cluster: String,
}

/// How many requests were served, and the first [`Requests::KEPT`] of them as
/// `METHOD path?query` (bounded: a long run keeps counting, not remembering).
#[derive(Debug, Default)]
pub struct Requests {
    pub count: u64,
    pub first: Vec<String>,
}

impl Requests {
    pub const KEPT: usize = 1000;

    /// Counts a request; `line` is made only while there is room to keep it.
    pub fn record(&mut self, line: impl FnOnce() -> String) {
        self.count += 1;
        if self.first.len() < Self::KEPT {
            self.first.push(line());
        }
    }
}

impl Ctx {
    /// Runs `f` on the simulation's thread and waits for its answer.
    pub async fn on_sim<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Sim) -> T + Send + 'static,
    ) -> Result<T, Status> {
        let (tx, rx) = oneshot::channel();
        let sent = self.caller.call(Box::new(move |sim| {
            let _ = tx.send(f(sim));
        }));
        let gone = || Status::unavailable("the simulator has stopped");
        if !sent {
            return Err(gone());
        }
        rx.await.map_err(|_| gone())
    }

    /// Why `verb` on `resource` (`plural[/sub]`) is refused, if it is: the API server's words.
    pub fn forbidden(
        &self,
        verb: &str,
        group: &str,
        resource: &str,
        namespace: Option<&str>,
        name: Option<&str>,
    ) -> Option<Status> {
        if !self.deny.iter().any(|d| d.covers(verb, resource)) {
            return None;
        }
        let plural = resource.split('/').next().unwrap_or(resource);
        let what = match (name, group.is_empty()) {
            (Some(n), true) => format!("{plural} \"{n}\""),
            (Some(n), false) => format!("{plural}.{group} \"{n}\""),
            (None, true) => plural.to_string(),
            (None, false) => format!("{plural}.{group}"),
        };
        let scope = match namespace {
            Some(ns) => format!(" in the namespace \"{ns}\""),
            None => " at the cluster scope".to_string(),
        };
        Some(Status::forbidden(format!(
            "{what} is forbidden: User \"{USER}\" cannot {verb} resource \"{resource}\" in API group \"{group}\"{scope}"
        )))
    }
}

/// The Leases held, by (namespace, name).
#[derive(Debug, Default)]
pub struct Leases {
    pub(super) items: BTreeMap<(String, String), serde_json::Value>,
    /// The last resourceVersion given.
    pub(super) rv: u64,
}

/// At most this many Leases are kept (memory stays bounded whatever clients create).
pub const MAX_LEASES: usize = 10_000;

impl Leases {
    pub(super) fn next_rv(&mut self) -> String {
        self.rv += 1;
        self.rv.to_string()
    }
}

/// Whether namespace `ns` exists (built in, holding objects, or created through the API).
pub async fn namespace_exists(ctx: &Ctx, ns: &str) -> Result<bool, Status> {
    if ns.is_empty() || created(ctx).contains_key(ns) {
        return Ok(true);
    }
    let ns = ns.to_string();
    ctx.on_sim(move |sim| sim.namespaces().contains(&ns)).await
}

pub fn created(ctx: &Ctx) -> std::collections::BTreeMap<String, String> {
    ctx.namespaces.lock().map(|m| m.clone()).unwrap_or_default()
}
