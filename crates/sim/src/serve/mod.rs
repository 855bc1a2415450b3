//! The simulator as a Kubernetes API (`ststui sim --serve ADDR`): kubectl and kube-rs clients
//! talk to the simulated cluster over plain HTTP on loopback. Discovery, server-side tables,
//! list and watch with resourceVersions, the three patch types, `metav1.Status` errors,
//! optimistic concurrency and API validation; faults for testing clients (`api-down`,
//! `api-latency`, `drop-watches`, `compact`, `--deny`). A local demo and test endpoint: no TLS,
//! no authentication.
//!
//! Built on hyper (connections: the API going down closes the listener and every open
//! connection) and tokio, on a runtime of its own thread; the simulation stays on its thread and
//! is reached through the driver's [`Caller`]. Owns: HTTP. Must not: touch the console.

mod ctx;
mod exec;
mod guard;
mod hub;
mod leases;
mod managed;
mod openapi;
mod patch;
mod proto;
mod resources;
mod route;
mod selector;
mod smp;
mod special;
mod status;
mod table;
mod verbs;
mod watch;

use std::convert::Infallible;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use axum::body::Body;
use axum::http::{HeaderValue, Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinSet;

pub use ctx::{Deny, USER};
pub use hub::Hub;
pub use status::Status;

use crate::sim::driver::Caller;
use resources::{Res, Sub};
use route::{Query, Target};

/// Request bodies larger than this are refused (the API server's limit is 3 MiB).
pub const MAX_BODY: usize = 3 << 20;
/// Open watches at most.
pub const MAX_WATCHES: usize = 256;

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub addr: SocketAddr,
    pub deny: Vec<Deny>,
    /// The `gitVersion` reported (the controller release the simulator reproduces).
    pub git_version: String,
}

/// A running server; dropping it stops it.
pub struct Server {
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Runs `sim` in real time (× `speed`) and serves it: the driver with the hub's tap, then the
/// server. The console (or a test) gets the driver's events through `sink`.
pub fn serve_sim(
    sim: crate::sim::Sim,
    speed: f64,
    sink: crate::sim::driver::Sink,
    config: ServeConfig,
) -> std::io::Result<(crate::sim::driver::SimHandle, Server)> {
    let hub = Arc::new(Hub::new(sim.store().resource_version()));
    let tap_hub = Arc::clone(&hub);
    let tap: crate::sim::driver::Tap =
        Box::new(move |ev, speed, now| tap_hub.observe(ev, speed, now));
    let handle = crate::sim::driver::spawn_with_tap(sim, speed, sink, Some(tap));
    let server = start(config, handle.caller(), hub)?;
    Ok((handle, server))
}

/// Why `--serve` refuses an address.
#[derive(Debug, thiserror::Error)]
pub enum AddressError {
    #[error("--serve {spec:?}: {error}; expected HOST:PORT, e.g. 127.0.0.1:6443")]
    Unresolved { spec: String, error: std::io::Error },
    #[error("--serve {spec:?}: no address")]
    Empty { spec: String },
    #[error(
        "--serve {spec:?}: the simulated API has no authentication, so it binds loopback only \
         (127.0.0.1 or ::1, e.g. 127.0.0.1:6443), never an address other machines reach"
    )]
    NotLoopback { spec: String },
}

/// The one address `spec` names, if it is a loopback one; otherwise why it is refused.
pub fn loopback(spec: &str) -> Result<SocketAddr, AddressError> {
    let addrs: Vec<SocketAddr> = spec
        .to_socket_addrs()
        .map_err(|error| AddressError::Unresolved { spec: spec.to_string(), error })?
        .collect();
    let first = addrs.first().copied().ok_or_else(|| AddressError::Empty { spec: spec.into() })?;
    if !addrs.iter().all(|a| a.ip().is_loopback()) {
        return Err(AddressError::NotLoopback { spec: spec.to_string() });
    }
    Ok(first)
}

/// Binds and starts serving on a thread of its own. The address is bound when this returns
/// (port 0 picks a free one: see [`Server::addr`]).
pub fn start(config: ServeConfig, caller: Caller, hub: Arc<Hub>) -> std::io::Result<Server> {
    let runtime = crate::runtime::build("serve", crate::runtime::Workers::Threads(2))?;
    // Bound here, blocking (this may run inside another runtime), so the port is known.
    let listener = std::net::TcpListener::bind(config.addr)?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let ctx = Arc::new(ctx::Ctx {
        caller,
        hub,
        deny: config.deny,
        address: addr.to_string(),
        streams_lists: watch::streams_lists(major_minor(&config.git_version).1),
        git_version: config.git_version,
        watches: Default::default(),
        namespaces: Default::default(),
        namespaces_added: tokio::sync::watch::channel(0).0,
        leases: Default::default(),
        requests: Default::default(),
        cluster: format!("{:012x}", rand::random::<u64>() & 0xffff_ffff_ffff),
    });
    let (stop, stopped) = oneshot::channel();
    let thread = std::thread::Builder::new().name("ststui-serve".into()).spawn(move || {
        runtime.block_on(async move {
            match TcpListener::from_std(listener) {
                Ok(l) => serve(l, ctx, stopped).await,
                Err(e) => tracing::error!("cannot serve: {e}"),
            }
        });
    })?;
    Ok(Server { addr, stop: Some(stop), thread: Some(thread) })
}

/// The accept loop: one task per connection. While the API is down (`api-down`) the listener is
/// closed (connections are refused) and every open connection is dropped.
async fn serve(listener: TcpListener, ctx: Arc<ctx::Ctx>, mut stop: oneshot::Receiver<()>) {
    let addr = ctx.address.clone();
    let mut listener = Some(listener);
    let mut conns = JoinSet::new();
    let mut faults = ctx.hub.subscribe();
    loop {
        if let Some(until) = ctx.hub.down_until() {
            listener = None;
            conns.abort_all();
            tokio::select! {
                _ = &mut stop => return,
                () = tokio::time::sleep_until(until.into()) => {}
            }
            continue;
        }
        let Some(l) = listener.as_ref() else {
            match TcpListener::bind(&addr).await {
                Ok(l) => listener = Some(l),
                Err(e) => {
                    tracing::warn!("cannot listen on {addr} again: {e}; retrying");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
            continue;
        };
        tokio::select! {
            _ = &mut stop => return,
            accepted = l.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let ctx = Arc::clone(&ctx);
                conns.spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let ctx = Arc::clone(&ctx);
                        async move { Ok::<_, Infallible>(handle(ctx, req).await) }
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .with_upgrades();
                    if let Err(e) = conn.await {
                        tracing::debug!("connection ended: {e}");
                    }
                });
            }
            _ = faults.changed() => {}
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

/// What a handler answers.
pub struct Reply {
    code: StatusCode,
    body: Body,
    json: bool,
    warnings: Vec<String>,
}

/// A JSON answer.
pub fn reply(code: StatusCode, v: Value) -> Reply {
    Reply::json(code, serde_json::to_vec(&v).unwrap_or_default())
}

impl Reply {
    /// A JSON body already serialized.
    pub fn json(code: StatusCode, bytes: Vec<u8>) -> Reply {
        Reply { code, body: Body::from(bytes), json: true, warnings: Vec::new() }
    }

    fn warn(mut self, warnings: Vec<String>) -> Reply {
        self.warnings = warnings;
        self
    }

    pub(super) fn into_response(self) -> Response<Body> {
        let mut r = Response::new(self.body);
        *r.status_mut() = self.code;
        let ct = if self.json { "application/json" } else { "text/plain; charset=utf-8" };
        r.headers_mut().insert("content-type", HeaderValue::from_static(ct));
        for w in self.warnings {
            if let Ok(v) = HeaderValue::from_str(&format!("299 - {:?}", w)) {
                r.headers_mut().append("warning", v);
            }
        }
        r
    }
}

impl From<Status> for Reply {
    fn from(st: Status) -> Reply {
        let code = StatusCode::from_u16(st.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        reply(code, st.to_json())
    }
}

/// Where a benchmark reads how many requests a client made (not an API path: not counted).
pub const REQUESTS_PATH: &str = "/ststui/requests";

/// `GET /ststui/requests`: `{"count": N, "first": ["GET /api/v1/…", …]}`.
fn requests(ctx: &ctx::Ctx, method: &Method) -> Response<Body> {
    if method != Method::GET {
        return Reply::from(Status::method_not_allowed(REQUESTS_PATH)).into_response();
    }
    let r = ctx.requests.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    reply(StatusCode::OK, serde_json::json!({"count": r.count, "first": r.first})).into_response()
}

/// One request, start to end.
async fn handle(ctx: Arc<ctx::Ctx>, req: Request<Incoming>) -> Response<Body> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let query = Query::parse(req.uri().query());
    let headers = req.headers().clone();
    tracing::debug!(%method, %path, "request");
    if path == REQUESTS_PATH {
        return requests(&ctx, &method);
    }
    ctx.requests.lock().unwrap_or_else(std::sync::PoisonError::into_inner).record(|| {
        match req.uri().query() {
            Some(q) => format!("{method} {path}?{q}"),
            None => format!("{method} {path}"),
        }
    });
    if let Some((ns, pod)) = exec::route(&path) {
        if let Err(st) = api_faults(&ctx, &path).await {
            return Reply::from(st).into_response();
        }
        return exec::handle(ctx, req, ns, pod).await;
    }
    let reply = match respond(&ctx, req, &method, &path, &query, &headers).await {
        Ok(r) => r,
        Err(st) => Reply::from(st),
    };
    // A write of state: an access or identity review is a question, not a write.
    let write = matches!(method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE)
        && !path.contains("/selfsubject");
    if write && reply.code.is_success() && ctx.hub.lose_reply() {
        // Carried out, but the answer never arrives whole: the body fails, and the
        // connection closes under it (`api-lose-replies`).
        tracing::info!(%method, %path, "the reply of this write is lost (api-lose-replies)");
        let lost = futures::stream::once(async {
            Err::<bytes::Bytes, std::io::Error>(std::io::Error::other("reply lost"))
        });
        let mut r = Response::new(Body::from_stream(lost));
        *r.status_mut() = reply.code;
        return r;
    }
    reply.into_response()
}

/// The served API's faults (`api-down`, `api-unauthorized`, `api-errors`, `api-latency`), as
/// they apply to this request.
async fn api_faults(ctx: &ctx::Ctx, path: &str) -> Result<(), Status> {
    if let Some(until) = ctx.hub.down_until() {
        let left = until.saturating_duration_since(std::time::Instant::now()).as_secs_f64();
        return Err(Status::unavailable(format!(
            "the simulated API server is down (api-down) for another {left:.1}s"
        )));
    }
    if ctx.hub.unauthorized_until().is_some() && path.starts_with("/api") {
        return Err(Status::new(401, "Unauthorized", "Unauthorized"));
    }
    if path.starts_with("/api") && ctx.hub.error() {
        return Err(Status::new(
            500,
            "InternalError",
            "Internal error occurred: the simulated API server failed this request (api-errors)",
        ));
    }
    let latency = ctx.hub.latency();
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    Ok(())
}

async fn respond(
    ctx: &Arc<ctx::Ctx>,
    req: Request<Incoming>,
    method: &Method,
    path: &str,
    q: &Query,
    headers: &axum::http::HeaderMap,
) -> Result<Reply, Status> {
    guard::browser(method, headers)?;
    api_faults(ctx, path).await?;
    let body = axum::body::to_bytes(Body::new(req.into_body()), MAX_BODY).await.map_err(|_| {
        Status::new(
            413,
            "RequestEntityTooLarge",
            format!("the request body is larger than {MAX_BODY} bytes"),
        )
    })?;
    let as_table = route::wants_table(headers);
    let content_type =
        headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
    let protobuf = content_type.starts_with("application/vnd.kubernetes.protobuf");
    // What kubectl sends in protobuf, by where it goes: an access review, a namespace, a
    // disruption budget; anything else in protobuf is 415.
    let decoded = match path {
        _ if !protobuf => None,
        p if p.ends_with("/selfsubjectaccessreviews") => proto::access_review(&body),
        "/api/v1/namespaces" => proto::namespace(&body),
        p if p.ends_with("/poddisruptionbudgets") => proto::budget(&body),
        _ => None,
    };
    let body = match decoded {
        Some(v) => bytes::Bytes::from(serde_json::to_vec(&v).unwrap_or_default()),
        None if protobuf => {
            return Err(Status::new(
                415,
                "UnsupportedMediaType",
                "the simulated API server reads JSON bodies only (application/json)",
            ));
        }
        _ => body,
    };
    let get_only = |r: Value| {
        if method == Method::GET {
            Ok(reply(StatusCode::OK, r))
        } else {
            Err(Status::method_not_allowed(path))
        }
    };
    if let Some(rest) = path.strip_prefix("/openapi/v3") {
        let doc = match rest.trim_start_matches('/') {
            "" => Some(openapi::root()),
            gv => openapi::group_version(gv),
        };
        return doc.map_or_else(|| Err(Status::path_not_found(path)), get_only);
    }
    match route::parse(path)? {
        Target::Version => get_only(version(&ctx.git_version)),
        Target::Health => Ok(Reply {
            code: StatusCode::OK,
            body: Body::from("ok"),
            json: false,
            warnings: Vec::new(),
        }),
        Target::PodProxy { namespace, pod } => {
            if let Some(st) = ctx.forbidden("get", "", "pods/proxy", Some(&namespace), Some(&pod)) {
                return Err(st);
            }
            if method != Method::GET {
                return Err(Status::method_not_allowed("pods/proxy"));
            }
            special::pod_proxy(ctx, namespace, pod).await
        }
        Target::Api => get_only(resources::api_versions(&ctx.address)),
        Target::Apis => get_only(resources::group_list()),
        Target::Group(g) => {
            resources::group(&g).map_or_else(|| Err(Status::path_not_found(path)), get_only)
        }
        Target::ResourceList { group, version } => resources::resource_list(&group, &version)
            .map_or_else(|| Err(Status::path_not_found(path)), get_only),
        Target::Resource(route) => {
            let verb = route::verb(method, &route, q);
            let resource = match route.sub {
                Some(Sub::Status) => format!("{}/status", route.def.plural),
                Some(Sub::Scale) => format!("{}/scale", route.def.plural),
                Some(Sub::Log) => format!("{}/log", route.def.plural),
                Some(Sub::Eviction) => format!("{}/eviction", route.def.plural),
                None => route.def.plural.to_string(),
            };
            let group = route.def.group;
            if let Some(st) = ctx.forbidden(
                verb,
                group,
                &resource,
                route.namespace.as_deref(),
                route.name.as_deref(),
            ) {
                return Err(st);
            }
            let manager = managed::manager(
                q.get("fieldManager"),
                headers.get("user-agent").and_then(|v| v.to_str().ok()),
            );
            let request =
                ResourceRequest { verb, method, q, content_type, manager: &manager, as_table };
            resource_request(ctx, &route, &request, &body).await
        }
    }
}

/// What a resource request says besides its path and body.
struct ResourceRequest<'a> {
    verb: &'a str,
    method: &'a Method,
    q: &'a Query,
    content_type: &'a str,
    /// Who writes (`managed::manager`).
    manager: &'a str,
    as_table: bool,
}

async fn resource_request(
    ctx: &Arc<ctx::Ctx>,
    route: &route::Route,
    r: &ResourceRequest<'_>,
    body: &[u8],
) -> Result<Reply, Status> {
    let ResourceRequest { verb, method, q, content_type, manager, as_table } = *r;
    match route.def.res {
        Res::Namespaces if verb == "watch" => stream(watch::watch(ctx, route, q, as_table).await?),
        Res::Namespaces => special::namespaces(ctx, method.as_str(), route, body, as_table).await,
        Res::Leases => leases::request(ctx, route, verb, body, as_table).await,
        Res::AccessReviews if verb == "create" => special::access_review(ctx, body),
        Res::RulesReviews if verb == "create" => special::rules_review(ctx, body),
        Res::SelfReviews if verb == "create" => Ok(special::self_review()),
        Res::AccessReviews | Res::RulesReviews | Res::SelfReviews => {
            Err(Status::method_not_allowed(route.def.plural))
        }
        _ if route.sub == Some(Sub::Scale) => {
            special::scale(ctx, method.as_str(), route, q, content_type, body, manager).await
        }
        _ if route.sub == Some(Sub::Log) && verb == "get" => {
            let text = special::pod_log(ctx, route, q).await?;
            Ok(Reply {
                code: StatusCode::OK,
                body: Body::from(text),
                json: false,
                warnings: Vec::new(),
            })
        }
        _ if route.sub == Some(Sub::Log) => Err(Status::method_not_allowed("pods/log")),
        _ if route.sub == Some(Sub::Eviction) && verb == "create" => {
            special::evict(ctx, route, q, body).await
        }
        _ if route.sub == Some(Sub::Eviction) => Err(Status::method_not_allowed("pods/eviction")),
        _ => match verb {
            "list" => verbs::list(ctx, route, q, as_table).await,
            "watch" => stream(watch::watch(ctx, route, q, as_table).await?),
            "get" => verbs::get(ctx, route, q, as_table).await,
            "create" => verbs::create(ctx, route, q, body, manager).await,
            "update" => verbs::update(ctx, route, q, body, manager).await,
            "patch" => verbs::patch(ctx, route, q, content_type, body, manager).await,
            "delete" => verbs::delete(ctx, route, q, body).await,
            "deletecollection" => verbs::delete_collection(ctx, route, q, body).await,
            _ => Err(Status::method_not_allowed(route.def.plural)),
        },
    }
}

fn stream(body: Body) -> Result<Reply, Status> {
    Ok(Reply { code: StatusCode::OK, body, json: true, warnings: Vec::new() })
}

/// `/version`.
fn version(git_version: &str) -> Value {
    let (major, minor) = major_minor(git_version);
    json!({
        "major": major, "minor": minor, "gitVersion": git_version, "gitCommit": "", "gitTreeState": "clean",
        "buildDate": "", "goVersion": "", "compiler": "rustc", "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    })
}

/// The major and minor release of a `gitVersion` (`v1.37.0+ststui-sim`: `1`, `37`).
pub(crate) fn major_minor(git_version: &str) -> (&str, &str) {
    let core = git_version.trim_start_matches('v');
    let core = core.split(['+', '-']).next().unwrap_or_default();
    let mut parts = core.split('.');
    (parts.next().unwrap_or("1"), parts.next().unwrap_or("0"))
}

/// The kubeconfig for a served simulator at `addr` (context `ststui-sim`, namespace default).
pub fn kubeconfig(addr: SocketAddr) -> String {
    kubeconfig_of(&[("ststui-sim", addr)])
}

/// The kubeconfig for served simulators, one cluster, user and context per `(name, addr)`
/// (namespace default), the first current.
pub fn kubeconfig_of(served: &[(&str, SocketAddr)]) -> String {
    let mut clusters = String::new();
    let mut contexts = String::new();
    let mut users = String::new();
    for (name, addr) in served {
        clusters.push_str(&format!("- name: {name}\n  cluster:\n    server: http://{addr}\n"));
        contexts.push_str(&format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n    namespace: default\n"
        ));
        users.push_str(&format!("- name: {name}\n  user: {{}}\n"));
    }
    let current = served.first().map(|(n, _)| *n).unwrap_or_default();
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n{clusters}contexts:\n{contexts}current-context: {current}\nusers:\n{users}"
    )
}

/// Writes [`kubeconfig`] to `path` (through a temporary file, so a reader never sees half).
pub fn write_kubeconfig(path: &Path, addr: SocketAddr) -> std::io::Result<()> {
    write_kubeconfig_of(path, &[("ststui-sim", addr)])
}

/// Writes [`kubeconfig_of`] to `path` (through a temporary file, so a reader never sees half).
pub fn write_kubeconfig_of(path: &Path, served: &[(&str, SocketAddr)]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp-ststui");
    std::fs::write(&tmp, kubeconfig_of(served))?;
    std::fs::rename(&tmp, path)
}
