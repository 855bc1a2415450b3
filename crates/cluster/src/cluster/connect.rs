//! Connecting: the kubeconfig (the file `--kubeconfig` names or the usual ones, the context
//! `--context` names or the current one, and its namespace unless `-n` is given), the client,
//! and what the server tells us once reachable: its version, who we are (SelfSubjectReview),
//! and which writes we may make (SelfSubjectAccessReview for each).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, ResourceRule, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
    SelfSubjectRulesReview, SelfSubjectRulesReviewSpec,
};
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};

use super::probe::{ProbeLayer, Router};
use crate::backend::WriteKind;

/// Where to connect (from the command line).
#[derive(Debug, Clone, Default)]
pub struct Target {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// `-n`; `None`: the context's namespace (or `default`).
    pub namespace: Option<String>,
    /// `-A`: every namespace (the picker).
    pub all_namespaces: bool,
    /// The StatefulSet to open; `None`: the picker.
    pub name: Option<String>,
    /// `--read-only`: no writes at all.
    pub read_only: bool,
    /// `--feature-gates`: the gates of the controller ststui plays when it drives.
    pub feature_gates: crate::core::options::FeatureGates,
}

/// The backend's client, with its [`ProbeLayer`] reporting to a [`Router`]: every watcher
/// registers its watch there and hears of its reopening and its frames.
#[derive(Clone)]
pub struct Clients {
    client: kube::Client,
    router: Arc<Router>,
    /// The server turned out not to stream lists (`sendInitialEvents`): every watcher lists
    /// in pages from then on ([`super::watch`]).
    pages: Arc<std::sync::atomic::AtomicBool>,
}

impl Clients {
    /// The client of a kubeconfig's configuration (with the probe).
    pub fn from_config(config: kube::Config) -> Result<Clients, kube::Error> {
        let router = Arc::new(Router::default());
        let client = super::http::builder(&config)?
            .with_layer(&ProbeLayer::new(Arc::clone(&router)))
            .build();
        Ok(Clients { client, router, pages: Arc::default() })
    }

    /// The client of a configuration whose exec credential plugin ststui runs itself
    /// ([`super::credential`]): the requests wait for it, the client is built once it answers.
    pub fn with_plugin(config: kube::Config, plugin: super::credential::Plugin) -> Clients {
        let namespace = config.default_namespace.clone();
        Clients::from_service(super::credential::Lazy::new(config, plugin), &namespace)
    }

    /// The client over any HTTP service: in tests, tower-test's mock.
    pub fn from_service<S, B>(service: S, namespace: &str) -> Clients
    where
        S: tower::Service<
                hyper::Request<kube::client::Body>,
                Response = hyper::Response<B>,
                Error = tower::BoxError,
            > + Send
            + 'static,
        S::Future: Send + 'static,
        B: http_body::Body<Data = bytes::Bytes> + Send + Unpin + 'static,
        B::Error: Into<tower::BoxError>,
    {
        let router = Arc::new(Router::default());
        let client = kube::client::ClientBuilder::new(service, namespace.to_string())
            .with_layer(&ProbeLayer::new(Arc::clone(&router)))
            .build();
        Clients { client, router, pages: Arc::default() }
    }

    /// The client (cheap to clone).
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// Whether watchers stream their first listing (one watch with `sendInitialEvents`, on by
    /// default from Kubernetes 1.34) rather than list in pages: until a server refuses it.
    pub fn streams_lists(&self) -> bool {
        !self.pages.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The server does not stream lists: list in pages from now on.
    pub fn list_in_pages(&self) {
        self.pages.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Signals of the watch `key` ([`super::probe::route_key`]) go to `report` while the
    /// returned route lives.
    pub fn route(&self, key: String, report: super::probe::Report) -> super::probe::Route {
        self.router.register(key, report)
    }
}

/// A client and what the kubeconfig said.
#[derive(Clone)]
pub struct Session {
    pub client: kube::Client,
    /// Clients of their own for the watchers.
    pub clients: Clients,
    /// The namespace to work in (the context's unless `-n`).
    pub namespace: String,
    /// The kubeconfig's user name for the context (who froze, when the server cannot say).
    pub user: String,
    /// The server's URL, for messages.
    pub server: String,
    /// The kubeconfig context used, by its name (`--context`, else the current context), or
    /// `in-cluster` for a pod's service account: what a driver's lease names.
    pub context: String,
}

/// Why no session could be made of the kubeconfig (or the pod's service account): what to fix.
#[derive(Debug, thiserror::Error)]
pub enum NoSession {
    #[error("cannot read the kubeconfig {path}: {why}")]
    Unreadable { path: String, why: String },
    /// No kubeconfig found where kubectl looks (`which`: `KUBECONFIG=…` or `~/.kube/config`).
    #[error(
        "cannot read a kubeconfig ({which}: {why}): pass --kubeconfig FILE, set KUBECONFIG, or use `ststui sim` for the embedded simulator"
    )]
    Missing { which: String, why: String },
    #[error("no context {context:?} in the kubeconfig; it has: {}", .known.join(", "))]
    NoContext { context: String, known: Vec<String> },
    #[error("the kubeconfig cannot be used: {0}")]
    Unusable(String),
    #[error("cannot make a client for {server}: {why}")]
    NoClient { server: String, why: String },
    #[error("--context {0:?}: there is no kubeconfig here, only the pod's service account")]
    InClusterContext(String),
    #[error("in a pod without a kubeconfig, and its service account cannot be used: {0}")]
    InCluster(String),
}

impl From<NoSession> for String {
    fn from(e: NoSession) -> String {
        e.to_string()
    }
}

/// Why a client of our own (the console's backend, a verb's writes, the gates') could not be
/// opened: no runtime or thread to run it on, or no session.
#[derive(Debug, thiserror::Error)]
pub enum NoClient {
    #[error(transparent)]
    Runtime(#[from] crate::runtime::NoRuntime),
    #[error(transparent)]
    Session(#[from] NoSession),
    #[error("cannot start the client thread: {0}")]
    Thread(std::io::Error),
    /// None started where one was asked (never seen: `start_many` starts one per target).
    #[error("no backend started")]
    NoBackend,
}

impl From<NoClient> for String {
    fn from(e: NoClient) -> String {
        e.to_string()
    }
}

/// The contexts a kubeconfig names (`kubeconfig`: the file given, else `KUBECONFIG`'s files or
/// `~/.kube/config`, as kubectl reads them), in its order; none when it cannot be read.
pub fn context_names(kubeconfig: Option<&std::path::Path>) -> Vec<String> {
    let read = match kubeconfig {
        Some(path) => Kubeconfig::read_from(path),
        None => from_env_or_home(),
    };
    read.map(|k| k.contexts.into_iter().map(|c| c.name).collect()).unwrap_or_default()
}

/// Reads the kubeconfig and builds a client. No network yet, and no credential plugin run
/// yet; errors say what to fix.
pub async fn session(t: &Target) -> Result<Session, NoSession> {
    if let Some(s) = in_cluster(t)? {
        return Ok(s);
    }
    let options = KubeConfigOptions { context: t.context.clone(), ..Default::default() };
    let kubeconfig = match &t.kubeconfig {
        Some(path) => Kubeconfig::read_from(path).map_err(|e| NoSession::Unreadable {
            path: path.display().to_string(),
            why: innermost(&e),
        })?,
        None => from_env_or_home().map_err(|e| {
            let which = match std::env::var_os("KUBECONFIG") {
                Some(v) => format!("KUBECONFIG={}", v.to_string_lossy()),
                None => "~/.kube/config".to_string(),
            };
            NoSession::Missing { which, why: innermost(&e) }
        })?,
    };
    let context_name = t.context.clone().or_else(|| kubeconfig.current_context.clone());
    let user = context_name
        .as_ref()
        .and_then(|c| kubeconfig.contexts.iter().find(|x| &x.name == c))
        .and_then(|c| c.context.as_ref()?.user.clone())
        .unwrap_or_else(|| "unknown".into());
    if let Some(c) = &t.context
        && !kubeconfig.contexts.iter().any(|x| &x.name == c)
    {
        let known = kubeconfig.contexts.iter().map(|x| x.name.clone()).collect();
        return Err(NoSession::NoContext { context: c.clone(), known });
    }
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .map_err(|e| NoSession::Unusable(e.to_string()))?;
    // `insecure-skip-tls-verify` without a CA verifies no certificate: an empty trust store
    // spares kube-rs loading the system's (every file under /etc/ssl/certs, 20–30 ms before the
    // first request) for a verifier it then replaces.
    if config.accept_invalid_certs && config.root_cert.is_none() {
        config.root_cert = Some(Vec::new());
    }
    let namespace = t.namespace.clone().unwrap_or_else(|| config.default_namespace.clone());
    let server = config.cluster_url.to_string();
    // An exec plugin runs on the first request, bounded and ended with ststui: never here,
    // where kube-rs would run it unbounded (see `credential`).
    let clients = match super::credential::Plugin::take(&mut config, &user) {
        Some(plugin) => Clients::with_plugin(config, plugin),
        None => Clients::from_config(config)
            .map_err(|e| NoSession::NoClient { server: server.clone(), why: e.to_string() })?,
    };
    let client = clients.client();
    let context = context_name.unwrap_or_else(|| "no-context".into());
    Ok(Session { client, clients, namespace, user, server, context })
}

/// The user of a session on a pod's service account.
pub const IN_CLUSTER_USER: &str = "serviceaccount";
/// The context a session on a pod's service account is said to be in.
pub const IN_CLUSTER_CONTEXT: &str = "in-cluster";

/// In a pod with no kubeconfig (none given, `KUBECONFIG` unset, no `~/.kube/config`) and a
/// service account's token mounted, the pod's own identity, as kubectl and client-go take it
/// (`ststui drive` in a Deployment, `assets/drive/`); `None` anywhere else.
fn in_cluster(t: &Target) -> Result<Option<Session>, NoSession> {
    let no_kubeconfig = t.kubeconfig.is_none()
        && std::env::var_os("KUBECONFIG").is_none_or(|v| v.is_empty())
        && std::env::var_os("HOME")
            .is_none_or(|h| !std::path::Path::new(&h).join(".kube/config").exists());
    if !no_kubeconfig || std::env::var_os("KUBERNETES_SERVICE_HOST").is_none() {
        return Ok(None);
    }
    if let Some(c) = &t.context {
        return Err(NoSession::InClusterContext(c.clone()));
    }
    let config = kube::Config::incluster().map_err(|e| NoSession::InCluster(e.to_string()))?;
    let namespace = t.namespace.clone().unwrap_or_else(|| config.default_namespace.clone());
    let server = config.cluster_url.to_string();
    let clients = Clients::from_config(config)
        .map_err(|e| NoSession::NoClient { server: server.clone(), why: e.to_string() })?;
    let client = clients.client();
    let user = IN_CLUSTER_USER.to_string();
    let context = IN_CLUSTER_CONTEXT.to_string();
    Ok(Some(Session { client, clients, namespace, user, server, context }))
}

/// The kubeconfig of `KUBECONFIG` (its files merged, the first naming a value winning, as
/// kubectl does), else of `~/.kube/config`. A file of the list that does not exist is skipped,
/// as kubectl skips it (kube-rs fails on it); none existing is an error naming them.
fn from_env_or_home() -> Result<Kubeconfig, kube::config::KubeconfigError> {
    use kube::config::KubeconfigError;
    let Some(value) = std::env::var_os("KUBECONFIG") else { return Kubeconfig::read() };
    let paths: Vec<PathBuf> =
        std::env::split_paths(&value).filter(|p| !p.as_os_str().is_empty()).collect();
    if paths.is_empty() {
        return Kubeconfig::read();
    }
    let mut merged: Option<Kubeconfig> = None;
    for path in &paths {
        let next = match Kubeconfig::read_from(path) {
            Ok(k) => k,
            Err(KubeconfigError::ReadConfig(e, _)) if e.kind() == std::io::ErrorKind::NotFound => {
                tracing::info!("KUBECONFIG: {} does not exist: skipped", path.display());
                continue;
            }
            Err(e) => return Err(e),
        };
        merged = Some(match merged {
            Some(m) => m.merge(next)?,
            None => next,
        });
    }
    merged.ok_or_else(|| {
        let err =
            std::io::Error::new(std::io::ErrorKind::NotFound, "none of the files it names exists");
        KubeconfigError::ReadConfig(err, paths.first().cloned().unwrap_or_default())
    })
}

/// The innermost cause of an error (kube-rs's outer errors repeat the path the message names).
fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// This host's name, as ststui writes it into the cluster (a plan runner's lease, the drive
/// lease's holder): `HOSTNAME`, else the kernel's, else `localhost`.
pub fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname").ok().map(|h| h.trim().to_string())
        })
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// Who the server says we are; the kubeconfig's user name when it cannot say.
pub async fn identity(s: &Session) -> String {
    let api: Api<SelfSubjectReview> = Api::all(s.client.clone());
    match api.create(&PostParams::default(), &SelfSubjectReview::default()).await {
        Ok(r) => r
            .status
            .and_then(|st| st.user_info)
            .and_then(|u| u.username)
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| s.user.clone()),
        Err(_) => s.user.clone(),
    }
}

/// A permission in RBAC's words, as the reviews ask about it.
pub trait Permission: Copy + Ord {
    /// (verb, group, resource, subresource).
    fn rbac(self) -> (&'static str, &'static str, &'static str, &'static str);
    /// How it is written in messages: `patch statefulsets/scale (apps)`.
    fn describe(self) -> String {
        crate::backend::describe_rbac(self.rbac())
    }
}

impl Permission for WriteKind {
    fn rbac(self) -> (&'static str, &'static str, &'static str, &'static str) {
        WriteKind::rbac(self)
    }
}

/// Whether `rules` allow `kind` (`*` matches any verb, group or resource).
fn rules_allow(rules: &[ResourceRule], kind: impl Permission) -> bool {
    let (verb, group, resource, sub) = kind.rbac();
    let full = if sub.is_empty() { resource.to_string() } else { format!("{resource}/{sub}") };
    let has = |list: &[String], want: &str| list.iter().any(|x| x == "*" || x == want);
    rules.iter().any(|r| {
        has(&r.verbs, verb)
            && has(r.api_groups.as_deref().unwrap_or_default(), group)
            && r.resources.as_deref().is_some_and(|rs| {
                rs.iter().any(|x| x == "*" || *x == full || (sub.is_empty() && *x == resource))
            })
            && r.resource_names.as_ref().is_none_or(Vec::is_empty)
    })
}

/// The writes we may not make in `namespace`, each with the reason: one SelfSubjectRulesReview,
/// and a SelfSubjectAccessReview only for a write its rules do not allow while they are
/// incomplete (an authorizer other than RBAC may still allow it). A review that cannot be made
/// counts as allowed: the write itself will say.
pub async fn denied(s: &Session, namespace: &str) -> BTreeMap<WriteKind, String> {
    denied_of(s, namespace, &WriteKind::ALL).await
}

/// Which of `all` we may not do in `namespace`, each with the reason (as [`denied`]).
pub async fn denied_of<P: Permission>(
    s: &Session,
    namespace: &str,
    all: &[P],
) -> BTreeMap<P, String> {
    let rules: Api<SelfSubjectRulesReview> = Api::all(s.client.clone());
    let review = SelfSubjectRulesReview {
        spec: SelfSubjectRulesReviewSpec { namespace: Some(namespace.into()) },
        ..Default::default()
    };
    let unsure: Vec<P> = match rules.create(&PostParams::default(), &review).await {
        Ok(r) => {
            let st = r.status.unwrap_or_default();
            let mut out = BTreeMap::new();
            let mut unsure = Vec::new();
            for &kind in all.iter().filter(|k| !rules_allow(&st.resource_rules, **k)) {
                if st.incomplete {
                    unsure.push(kind);
                } else {
                    out.insert(kind, format!("you may not {} in {namespace}", kind.describe()));
                }
            }
            if unsure.is_empty() {
                return out;
            }
            let mut rest = access_reviews(s, namespace, &unsure).await;
            rest.extend(out);
            return rest;
        }
        Err(e) => {
            tracing::info!("rules review: {}; asking write by write", super::trouble::brief(&e));
            all.to_vec()
        }
    };
    access_reviews(s, namespace, &unsure).await
}

/// SelfSubjectAccessReview for each of `kinds`.
async fn access_reviews<P: Permission>(
    s: &Session,
    namespace: &str,
    kinds: &[P],
) -> BTreeMap<P, String> {
    let api: Api<SelfSubjectAccessReview> = Api::all(s.client.clone());
    let mut out = BTreeMap::new();
    for &kind in kinds {
        let (verb, group, resource, sub) = kind.rbac();
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    namespace: Some(namespace.into()),
                    verb: Some(verb.into()),
                    group: Some(group.into()),
                    resource: Some(resource.into()),
                    subresource: (!sub.is_empty()).then(|| sub.to_string()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        if let Ok(r) = api.create(&PostParams::default(), &review).await
            && let Some(st) = r.status
            && !st.allowed
        {
            let why =
                st.reason.filter(|r| !r.is_empty()).map(|r| format!(" ({r})")).unwrap_or_default();
            out.insert(kind, format!("you may not {} in {namespace}{why}", kind.describe()));
        }
    }
    out
}
