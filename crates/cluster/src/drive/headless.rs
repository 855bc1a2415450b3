//! `ststui drive`: ststui's controller with no terminal, to run as the StatefulSet controller of
//! a cluster whose kube-controller-manager runs without its own (in the cluster as a
//! Deployment, `assets/drive/`, or beside it). Per namespace it drives: a candidate for the
//! namespace's Lease (`lease`) and a [`Driver`] gated on it, as `ststui --drive` runs them.
//! With `-A` every namespace, found by a watch of namespaces (a new one is driven once seen, a
//! deleted one let go).
//!
//! What it says goes to stdout as JSON lines (`docs/drive.md`, "The headless controller"): the
//! controller's timeline events (the JSONL timeline's own fields) and its own records (`start`,
//! `lease`, `driving`, `standby`, `other-controller`, `watch-error`, `stop`), each with the
//! namespace and the wall time. Health on loopback (or `--health-addr`): `/healthz` (every
//! election loop went round within three retry periods) and `/readyz` (the lease of every
//! namespace held). SIGTERM or SIGINT stops the controllers, then gives the leases up, so a
//! standby takes over at once; exit 0. Another controller seen at work stops everything too,
//! exit 4: a controller that cannot drive should fail where its supervisor sees it.
//!
//! Owns: the per-namespace composition, the records, the health endpoints, the signals. Must
//! not: decide anything the controller or the election decides.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::{Value, json};

use super::lease::{self, Elector, Gate, Role, Timings};
use super::{Calls, Config, Driver, Output};
use crate::cluster::{Session, Target};
use crate::core::Options;

/// Exit statuses: stopped by a signal (0), refused or stopped by another controller (4), a
/// usage or start-up failure (2 from the command line; 4 here).
pub const EXIT_OK: u8 = 0;
pub const EXIT_REFUSED: u8 = 4;

/// What to drive, and where health is served.
#[derive(Debug, Clone)]
pub struct Args {
    /// The namespaces (empty with `all`: every one).
    pub namespaces: Vec<String>,
    pub all: bool,
    /// Where `/healthz` and `/readyz` answer (`127.0.0.1:0`: a free loopback port, said in the
    /// `start` record).
    pub health: SocketAddr,
}

/// How long stopping waits for each lease to be given up.
const RELEASE_WAIT: Duration = Duration::from_secs(3);

/// One JSON line on stdout (a closed stdout is not a reason to stop driving).
fn emit(record: Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{record}");
    let _ = out.flush();
}

/// A record of ststui's own: `type`, the namespace (when about one), the wall time, `fields`.
pub fn record(kind: &str, namespace: Option<&str>, fields: Value) -> Value {
    let mut r = json!({"time": k8s_openapi::jiff::Timestamp::now().to_string(), "type": kind});
    if let (Some(o), Some(ns)) = (r.as_object_mut(), namespace) {
        o.insert("namespace".into(), ns.into());
    }
    if let (Some(o), Value::Object(f)) = (r.as_object_mut(), fields) {
        o.extend(f);
    }
    r
}

/// The controller's timeline event as a record: its JSONL fields, the namespace and the time.
fn event_record(ns: &str, ev: &crate::backend::Event) -> Value {
    let fields = serde_json::to_value(ev).unwrap_or_else(|_| json!({}));
    let kind = fields.get("type").and_then(Value::as_str).unwrap_or("event").to_string();
    record(&kind, Some(ns), fields)
}

/// A role as a `lease` record's fields.
pub fn role_fields(role: &Role) -> Value {
    match role {
        Role::Starting => json!({"role": "starting"}),
        Role::Leader => json!({"role": "leader"}),
        Role::Fenced { why } => json!({"role": "fenced", "message": why}),
        Role::Standby { holder, seen_ago, takes_over_in, claims } => json!({
            "role": "standby",
            "holder": holder,
            "seenAgoSeconds": seen_ago.as_secs(),
            "takesOverInSeconds": takes_over_in.as_secs(),
            "claimsSeconds": claims,
        }),
        Role::Unelected => json!({
            "role": "unelected",
            "message": "the server serves no Leases (coordination.k8s.io/v1): driving without an election",
        }),
    }
}

/// One namespace driven: its controller and its candidate.
struct Unit {
    driver: Option<Driver>,
    gate: Gate,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    elector: tokio::task::JoinHandle<()>,
}

/// What the health endpoints and the main loop share.
#[derive(Default)]
struct Shared {
    /// The gates of the namespaces driven.
    gates: Mutex<BTreeMap<String, Gate>>,
}

impl Shared {
    fn gates(&self) -> BTreeMap<String, Gate> {
        self.gates.lock().map(|g| g.clone()).unwrap_or_default()
    }
}

/// `/healthz`: every election loop went round lately (three retry periods).
fn live(shared: &Shared) -> (bool, String) {
    let stale: Vec<String> = shared
        .gates()
        .into_iter()
        .filter(|(_, g)| {
            let limit = g.timings().retry * 3 + g.timings().renew_deadline;
            g.last_round().is_none_or(|at| at.elapsed() > limit)
        })
        .map(|(ns, _)| ns)
        .collect();
    if stale.is_empty() {
        (true, "ok\n".into())
    } else {
        (false, format!("the lease loop of {} has not gone round lately\n", stale.join(", ")))
    }
}

/// `/readyz`: the lease of every namespace driven held (or no election where none is served).
fn ready(shared: &Shared) -> (bool, String) {
    let gates = shared.gates();
    let mut not = Vec::new();
    for (ns, g) in &gates {
        match g.role() {
            Role::Leader if g.may_write() => {}
            Role::Unelected => {}
            Role::Standby { holder, .. } => {
                not.push(format!("{ns}: standby, {} drives", crate::text::escape_controls(&holder)))
            }
            Role::Fenced { .. } => not.push(format!("{ns}: fenced")),
            _ => match g.trouble() {
                Some(why) => not.push(format!("{ns}: lease not held ({why})")),
                None => not.push(format!("{ns}: lease not held yet")),
            },
        }
    }
    if gates.is_empty() {
        return (false, "no namespace driven yet\n".into());
    }
    if not.is_empty() { (true, "ok\n".into()) } else { (false, format!("{}\n", not.join("\n"))) }
}

/// Serves `/healthz` (`/livez`) and `/readyz` on `addr`; the address bound.
async fn health(addr: SocketAddr, shared: Arc<Shared>) -> std::io::Result<SocketAddr> {
    use axum::http::StatusCode;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let answer = |(ok, body): (bool, String)| {
        let code = if ok { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
        (code, body)
    };
    let (a, b) = (Arc::clone(&shared), shared);
    let app = axum::Router::new()
        .route("/healthz", axum::routing::get(move || std::future::ready(answer(live(&a)))))
        .route("/livez", axum::routing::get(|| std::future::ready((StatusCode::OK, "ok\n"))))
        .route("/readyz", axum::routing::get(move || std::future::ready(answer(ready(&b)))));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(bound)
}

/// Runs the headless controller until a signal (0) or another controller (4).
pub fn run(target: &Target, args: &Args) -> u8 {
    let runtime = match crate::runtime::build("drive-io", crate::runtime::Workers::Threads(2)) {
        Ok(r) => r,
        Err(e) => {
            crate::text::err_line(&format!("ststui drive: {e}"));
            return EXIT_REFUSED;
        }
    };
    let code = runtime.block_on(drive(target, args));
    // Watchers and the health server end with the runtime, at once.
    runtime.shutdown_timeout(Duration::from_millis(200));
    code
}

/// Why the headless controller does not start on a server: it did not say its version, or
/// the gates given do not fit its release.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct NoStart(String);

/// The server's version and the options ststui's controller plays it with (the gates given
/// over its release's defaults).
async fn options_for(
    session: &crate::cluster::Session,
    target: &Target,
) -> Result<(k8s_openapi::apimachinery::pkg::version::Info, Options), NoStart> {
    let version = super::access::server_version(session).await.map_err(NoStart)?;
    let options = Options::for_server(&version.git_version, &target.feature_gates);
    match target.feature_gates.refused_by(options.version) {
        Some(why) => Err(NoStart(why)),
        None => Ok((version, options)),
    }
}

async fn drive(target: &Target, args: &Args) -> u8 {
    let fail = |why: String| {
        crate::text::err_line(&format!("ststui drive: {why}"));
        emit(record("stop", None, json!({"message": why})));
        EXIT_REFUSED
    };
    let session = match crate::cluster::session(target).await {
        Ok(s) => s,
        Err(e) => return fail(e.to_string()),
    };
    let (version, options) = match options_for(&session, target).await {
        Ok(v) => v,
        Err(e) => return fail(e.0),
    };
    let given = if args.namespaces.is_empty() {
        vec![session.namespace.clone()]
    } else {
        args.namespaces.clone()
    };
    let shared = Arc::new(Shared::default());
    let health_at = match health(args.health, Arc::clone(&shared)).await {
        Ok(a) => a,
        Err(e) => return fail(format!("cannot serve health on {}: {e}", args.health)),
    };
    let me = lease::identity(&session.context);
    emit(record(
        "start",
        None,
        json!({
            "server": session.server,
            "serverVersion": version.git_version,
            "identity": me,
            "namespaces": if args.all { json!("*") } else { json!(given) },
            "health": health_at.to_string(),
        }),
    ));
    // Another controller seen, in any namespace: everything stops.
    let (other_tx, mut other_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let ctx =
        UnitCtx { session: session.clone(), options, me, other: other_tx, epoch: Instant::now() };
    let mut units: BTreeMap<String, Unit> = BTreeMap::new();
    let mut namespaces = if args.all {
        let api = kube::Api::<Namespace>::all(session.client.clone());
        watcher(api, watcher::Config::default())
            .backoff(crate::cluster::QuickBackoff::default())
            .boxed()
    } else {
        for ns in &given {
            if let Err(why) = super::access::may_drive(&session, ns).await {
                stop_all(std::mem::take(&mut units), &shared).await;
                return fail(why);
            }
            units.insert(ns.clone(), ctx.start(ns, &shared).await);
        }
        futures::stream::pending().boxed()
    };
    let mut refused_in: std::collections::BTreeSet<String> = Default::default();
    let code = loop {
        tokio::select! {
            () = signal() => break EXIT_OK,
            Some(words) = other_rx.recv() => {
                crate::text::err_line(&format!("ststui drive: {words}"));
                break EXIT_REFUSED;
            }
            Some(ev) = namespaces.next() => match ev {
                Ok(watcher::Event::Apply(n) | watcher::Event::InitApply(n)) => {
                    let Some(ns) = n.metadata.name.clone() else { continue };
                    let phase = n.status.as_ref().and_then(|s| s.phase.as_deref());
                    let terminating = phase == Some("Terminating");
                    if terminating || units.contains_key(&ns) || refused_in.contains(&ns) {
                        continue;
                    }
                    if let Err(why) = super::access::may_drive(&session, &ns).await {
                        emit(record("error", Some(&ns), json!({"message": why})));
                        refused_in.insert(ns);
                        continue;
                    }
                    units.insert(ns.clone(), ctx.start(&ns, &shared).await);
                }
                Ok(watcher::Event::Delete(n)) => {
                    let Some(ns) = n.metadata.name.clone() else { continue };
                    refused_in.remove(&ns);
                    if let Some(u) = units.remove(&ns) {
                        let why = json!({"message": "the namespace was deleted"});
                        emit(record("let-go", Some(&ns), why));
                        stop_all(BTreeMap::from([(ns, u)]), &shared).await;
                    }
                }
                Ok(_) => {}
                Err(e) => emit(record("watch-error", None, json!({
                    "watch": "watch namespaces",
                    "message": crate::cluster::trouble::watcher_brief(&e),
                }))),
            },
        }
    };
    stop_all(units, &shared).await;
    emit(record("stop", None, json!({"exit": code})));
    code
}

/// Waits for SIGTERM, SIGINT or SIGHUP.
async fn signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let kinds = [SignalKind::terminate(), SignalKind::interrupt(), SignalKind::hangup()];
    let mut streams: Vec<_> = kinds.into_iter().filter_map(|k| signal(k).ok()).collect();
    if streams.is_empty() {
        return std::future::pending().await;
    }
    let waits = streams.iter_mut().map(|s| Box::pin(s.recv()));
    let _ = futures::future::select_all(waits).await;
}

/// Stops each unit's controller first (nothing more is written), then gives its lease up.
async fn stop_all(units: BTreeMap<String, Unit>, shared: &Shared) {
    let mut electors = Vec::new();
    for (ns, mut u) in units {
        if let Ok(mut g) = shared.gates.lock() {
            g.remove(&ns);
        }
        let driver = u.driver.take();
        // Dropping a driver waits (briefly) for a call under way: not on a runtime thread.
        let _ = tokio::task::spawn_blocking(move || drop(driver)).await;
        // Whether it held the lease, asked before the candidate gives it up.
        let held = u.gate.may_write();
        if let Some(stop) = u.stop.take() {
            let _ = stop.send(());
        }
        electors.push((ns, u.elector, held));
    }
    for (ns, e, held) in electors {
        let released = tokio::time::timeout(RELEASE_WAIT, e).await.is_ok();
        if held {
            let fields = json!({"role": if released { "released" } else { "release-timed-out" }});
            emit(record("lease", Some(&ns), fields));
        }
    }
}

/// What starting a namespace's unit needs.
struct UnitCtx {
    session: Session,
    options: Options,
    me: String,
    other: tokio::sync::mpsc::UnboundedSender<String>,
    epoch: Instant,
}

impl UnitCtx {
    /// The candidate (its first round run before the controller lists, so a leader never
    /// passes for a standby) and the controller of `ns`.
    async fn start(&self, ns: &str, shared: &Shared) -> Unit {
        let gate = Gate::new(Timings::default());
        let mut candidate =
            Elector::new(self.session.client.clone(), ns, self.me.clone(), gate.clone());
        let first = tokio::time::timeout(super::access::VERSION_WAIT, candidate.round()).await;
        let mut last = first.ok();
        if let Some(role) = &last {
            emit(record("lease", Some(ns), role_fields(role)));
        }
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let name = ns.to_string();
        let (watched, mut said_trouble) = (gate.clone(), None::<String>);
        let report = move |role: &Role| {
            // Why the Lease cannot be read or written (a namespace that does not exist, a
            // permission denied): said once per cause.
            let trouble = watched.trouble();
            if trouble != said_trouble {
                if let Some(why) = &trouble {
                    emit(record("lease-error", Some(&name), json!({"message": why})));
                }
                said_trouble = trouble;
            }
            // A standby's every round moves only its counters: said when the role changes.
            let same = match (&last, role) {
                (Some(Role::Standby { holder: a, .. }), Role::Standby { holder: b, .. }) => a == b,
                (Some(a), b) => a == b,
                (None, _) => false,
            };
            if !same {
                emit(record("lease", Some(&name), role_fields(role)));
            }
            last = Some(role.clone());
        };
        let elector = tokio::spawn(candidate.run(report, stopped));
        if let Ok(mut g) = shared.gates.lock() {
            g.insert(ns.to_string(), gate.clone());
        }
        let config = Config {
            namespace: ns.to_string(),
            only: None,
            options: self.options,
            epoch: self.epoch,
            paused: false,
            tee: None,
            gate: Some(gate.clone()),
        };
        let calls =
            Calls::new(self.session.client.clone(), tokio::runtime::Handle::current(), None);
        let (name, other, held) = (ns.to_string(), self.other.clone(), gate.clone());
        let out = Box::new(move |o: Output| match o {
            Output::Line(ev) => emit(event_record(&name, &ev)),
            Output::Mode(_) | Output::Stepped(_) => {}
            Output::Driving => emit(record("driving", Some(&name), json!({}))),
            // Listed without the lease: a standby while another holds it, else waiting for it.
            Output::Standby => match held.role() {
                Role::Standby { holder, .. } => {
                    emit(record("standby", Some(&name), json!({"holder": holder})));
                }
                _ => {
                    let why = held.trouble().unwrap_or_else(|| "the lease not held yet".into());
                    emit(record("waiting", Some(&name), json!({"message": why})));
                }
            },
            Output::OtherController(words) => {
                emit(record("other-controller", Some(&name), json!({"message": words})));
                let _ = other.send(words);
            }
            Output::WatchError(e) => {
                emit(record("watch-error", Some(&name), json!({"watch": e.what, "message": e.why})))
            }
        });
        let driver = match Driver::start(calls, config, out) {
            Ok(d) => Some(d),
            Err(e) => {
                emit(record("error", Some(ns), json!({"message": e})));
                let _ = self.other.send(e);
                None
            }
        };
        Unit { driver, gate, stop: Some(stop), elector }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_carry_type_namespace_and_time_and_the_events_own_fields() {
        let r = record("driving", Some("prod"), json!({}));
        assert_eq!(r["type"], "driving");
        assert_eq!(r["namespace"], "prod");
        assert!(r["time"].as_str().is_some_and(|t| t.ends_with('Z')), "{r}");
        let ev = crate::backend::Event {
            t_ms: 1500,
            kind: crate::backend::EventKind::Notice { text: "x\u{1b}[2J".into() },
        };
        let e = event_record("prod", &ev);
        assert_eq!(e["type"], "notice");
        assert_eq!(e["t"], 1.5);
        // Written by others, escaped by JSON: no escape code reaches a terminal raw.
        assert!(!e.to_string().contains('\u{1b}'), "{e}");
        let s = role_fields(&Role::Standby {
            holder: "h/ststui-1/c".into(),
            seen_ago: Duration::from_secs(3),
            takes_over_in: Duration::from_secs(12),
            claims: Some(86_400),
        });
        assert_eq!(
            (s["role"].as_str(), s["takesOverInSeconds"].as_u64(), s["claimsSeconds"].as_u64()),
            (Some("standby"), Some(12), Some(86_400))
        );
    }

    #[test]
    fn ready_only_while_every_lease_is_held() {
        let shared = Shared::default();
        assert!(!ready(&shared).0, "nothing driven yet is not ready");
        let g = Gate::new(Timings::default());
        shared.gates.lock().unwrap().insert("a".into(), g.clone());
        let (ok, why) = ready(&shared);
        assert!(!ok);
        assert!(why.contains("a: lease not held yet"), "{why}");
        assert!(!live(&shared).0, "no round yet: not live");
    }
}
