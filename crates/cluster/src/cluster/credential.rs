//! Exec credential plugins (a kubeconfig user's `exec:` — `aws eks get-token`,
//! `gke-gcloud-auth-plugin`, `kubelogin`, `tsh kube credentials`), run by ststui itself.
//!
//! Why not kube-rs's own: kube 5 runs the plugin with `std::process::Command::output()`,
//! synchronously inside `ClientBuilder::try_from` (up to three times while building one
//! client), with no time bound, inheriting the terminal, and never stops it. A plugin that does
//! not answer hangs every verb past its `--timeout` and the console before its first frame, and
//! outlives ststui. Here the plugin:
//!
//! - runs on the first request, not while the client is built: the console draws and quits
//!   while it is pending, and a verb's `--timeout` covers it ([`pending`] says which plugin it
//!   waits for);
//! - has [`WAIT`] to answer, then is stopped (its whole process group), and the requests fail
//!   saying so, naming it, with the last lines it wrote on stderr;
//! - ends with ststui: a run dropped (a quit, a timeout) kills its process group; on Linux it
//!   gets SIGKILL if ststui dies first; [`kill_all`] and [`reap_on_signals`] cover the ways out
//!   that run no destructor;
//! - uses the terminal (stdin, stderr) only when its `interactiveMode` allows it and no console
//!   holds the terminal ([`console_holds_terminal`]): otherwise stdin is empty and stderr is
//!   kept (bounded) for the message;
//! - answers with a token (sent as a bearer token) or a client certificate (used for TLS); the
//!   client built with it is kept until the credential's `expirationTimestamp`
//!   ([`RENEW_BEFORE`] ahead), then the plugin runs again;
//! - a credential the server refuses (401) is spent, as client-go has it: the next request
//!   runs the plugin again (authenticate again, then go on), at most once per [`REAUTH_AFTER`]
//!   of a credential's age, so refusals in a row do not run it for every request;
//! - when it fails, fails every request with the same words for [`HOLD`] before it is run
//!   again (a console's watchers retry every few seconds; a plugin that opens a browser must not
//!   open one each time).
//!
//! The requests go through [`Lazy`], a tower service holding the real client built once the
//! plugin has answered: kube-rs's errors pass through it unchanged, so `trouble` sorts them as
//! before; a plugin's failure is a [`CredentialError`], sorted as refused credentials.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use hyper::{Request, Response};
use kube::client::Body;
use kube::config::{ExecConfig, ExecInteractiveMode};
use serde::Deserialize;
use tokio::io::{AsyncRead, AsyncReadExt};
use tower::{BoxError, Service};

/// How long a plugin may take to answer (`kubelogin`'s browser sign-in fits; a hung one ends).
pub const WAIT: Duration = Duration::from_secs(60);
/// A failed run's answer is repeated this long before the plugin runs again.
pub const HOLD: Duration = Duration::from_secs(30);
/// A credential refused (401) is given up, and the plugin run again, once it is this old.
pub const REAUTH_AFTER: Duration = Duration::from_secs(5);
/// A credential is renewed this long before it expires.
pub const RENEW_BEFORE: Duration = Duration::from_secs(30);
/// The most of a plugin's stdout read (an ExecCredential is a few KiB).
const STDOUT_MAX: u64 = 1 << 20;
/// The most of a plugin's stderr kept (its last lines, for the message).
const STDERR_KEPT: usize = 4 << 10;

/// A plugin could not give a credential. Its text names the plugin and says why.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct CredentialError(String);

/// Whether a console holds the terminal (then no plugin may use it).
static CONSOLE: AtomicBool = AtomicBool::new(false);

/// The last credential each plugin gave (by its command line and environment): a verb's
/// watchers and its writer (two clients) run a plugin once between them.
static GIVEN: Mutex<Vec<(String, Credential)>> = Mutex::new(Vec::new());

/// Whether ststui is ending ([`kill_all`] ran): no plugin starts any more. Read and written
/// under [`RUNNING`]'s lock, so a plugin either is registered before the kill or never starts.
static ENDING: AtomicBool = AtomicBool::new(false);

/// The plugins running now: their process (group) ids, names, and since when.
static RUNNING: Mutex<Vec<Running>> = Mutex::new(Vec::new());

struct Running {
    pid: i32,
    group: bool,
    name: String,
    since: Instant,
}

/// Forgets the credentials plugins gave (the operator asked to read the credentials again).
pub fn forget() {
    GIVEN.lock().unwrap_or_else(PoisonError::into_inner).clear();
}

/// Says that a console holds the terminal from now on: plugins get no stdin and their stderr
/// is kept, not shown.
pub fn console_holds_terminal() {
    CONSOLE.store(true, Ordering::Relaxed);
}

/// The plugin being waited for, and for how long (the longest-running one).
pub fn pending() -> Option<(String, Duration)> {
    let running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    running.iter().min_by_key(|r| r.since).map(|r| (r.name.clone(), r.since.elapsed()))
}

/// Stops every plugin still running, and every check or gate (`crate::procs`) (a way out that
/// runs no destructor follows). From then on no plugin starts: a request still in flight on
/// another thread fails instead of starting one that would outlive ststui.
pub fn kill_all() {
    crate::procs::kill_all();
    let running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    ENDING.store(true, Ordering::SeqCst);
    for r in running.iter() {
        kill(r.pid, r.group);
    }
}

/// For a process that dies of SIGINT, SIGTERM or SIGHUP as it always did (a verb): stops the
/// plugins first, then dies of the signal.
pub fn reap_on_signals() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let _ = std::thread::Builder::new().name("ststui-reap".into()).spawn(move || {
        for signal in signals.forever() {
            // A plan's runner ends itself on the first SIGINT or SIGTERM (it says where it
            // stopped and gives its lease back); anything else, or a second one, ends it now.
            if crate::procs::asked(signal) {
                continue;
            }
            kill_all();
            let _ = signal_hook::low_level::emulate_default_handler(signal);
        }
    });
}

fn kill(pid: i32, group: bool) {
    let target = if group { -pid } else { pid };
    // SAFETY: kill(2) with a pid we started; no memory is touched.
    unsafe {
        libc::kill(target, libc::SIGKILL);
    }
}

/// A plugin from the kubeconfig, and how it is shown in messages.
#[derive(Clone)]
pub struct Plugin {
    exec: ExecConfig,
    name: String,
    user: String,
    wait: Duration,
}

impl Plugin {
    /// Takes the plugin out of `config` when kube-rs would use it (no token, token file,
    /// password or auth provider comes first), leaving the rest for the client.
    pub fn take(config: &mut kube::Config, user: &str) -> Option<Plugin> {
        let a = &config.auth_info;
        let first = a.auth_provider.is_some()
            || (a.username.is_some() && a.password.is_some())
            || a.token.is_some()
            || a.token_file.is_some();
        if first {
            return None;
        }
        let exec = config.auth_info.exec.take()?;
        let command = exec.command.clone().unwrap_or_default();
        let base = command.rsplit('/').next().unwrap_or(&command).to_string();
        Some(Plugin {
            name: crate::text::escape_controls(&base).chars().take(60).collect(),
            user: crate::text::escape_controls(user).chars().take(60).collect(),
            exec,
            wait: WAIT,
        })
    }

    /// What identifies the plugin's answers: its command line and environment.
    fn key(&self) -> String {
        let e = &self.exec;
        serde_json::json!([e.api_version, e.command, e.args, e.env, e.drop_env]).to_string()
    }

    /// The credential this plugin last gave, while it is good.
    fn given(&self) -> Option<Credential> {
        let given = GIVEN.lock().unwrap_or_else(PoisonError::into_inner);
        let key = self.key();
        given.iter().find(|(k, c)| *k == key && c.fresh()).map(|(_, c)| c.clone())
    }

    /// Forgets `cred` if it is what this plugin last gave (the server refused it).
    fn spent(&self, cred: &Credential) {
        let mut given = GIVEN.lock().unwrap_or_else(PoisonError::into_inner);
        let key = self.key();
        given.retain(|(k, c)| *k != key || c != cred);
    }

    fn remember(&self, cred: &Credential) {
        let mut given = GIVEN.lock().unwrap_or_else(PoisonError::into_inner);
        let key = self.key();
        given.retain(|(k, _)| *k != key);
        given.push((key, cred.clone()));
    }

    /// The same plugin with another time bound (tests).
    pub fn with_wait(mut self, wait: Duration) -> Plugin {
        self.wait = wait;
        self
    }

    /// `the exec credential plugin "aws" (user "eks-admin")`.
    fn called(&self) -> String {
        format!("the exec credential plugin {:?} (kubeconfig user {:?})", self.name, self.user)
    }

    fn fail(&self, why: impl std::fmt::Display) -> CredentialError {
        CredentialError(format!("{} {why}", self.called()))
    }

    /// Runs the plugin once, within its time bound.
    pub async fn run(&self) -> Result<Credential, CredentialError> {
        let interactive = self.exec.interactive_mode != Some(ExecInteractiveMode::Never)
            && !CONSOLE.load(Ordering::Relaxed)
            && std::io::IsTerminal::is_terminal(&std::io::stdin());
        if self.exec.interactive_mode == Some(ExecInteractiveMode::Always) && !interactive {
            return Err(self.fail(
                "needs a terminal (interactiveMode: Always), and there is none to give it: \
                 sign in with it from a shell first, or run the verb in a terminal",
            ));
        }
        let mut cmd = self.command(interactive)?;
        let (mut child, mut running) = self.start(&mut cmd, !interactive)?;
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let work = async {
            let (out, (), status) =
                tokio::join!(read_capped(stdout), keep_tail(stderr, &tail), child.wait());
            (out, status)
        };
        let waited = tokio::time::timeout(self.wait, work).await;
        let err = {
            let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
            String::from_utf8_lossy(tail.make_contiguous()).into_owned()
        };
        // Ended by itself (an exit code, not a signal: a plugin killed from outside, or by
        // its parent's death, did not end itself): what it left running (an agent of its
        // own) is its business.
        running.ended =
            waited.as_ref().is_ok_and(|(_, st)| st.as_ref().is_ok_and(|s| s.code().is_some()));
        let Ok((out, status)) = waited else {
            return Err(self.fail(format_args!(
                "gave no answer within {} s; ststui stopped it{}",
                self.wait.as_secs(),
                said(&err)
            )));
        };
        let status = status.map_err(|e| self.fail(format_args!("could not be waited for: {e}")))?;
        if !status.success() {
            return Err(self.fail(format_args!("failed ({status}){}", said(&err))));
        }
        let out = out.map_err(|e| self.fail(e))?;
        parse(&out).map_err(|e| self.fail(format_args!("{e}{}", said(&err))))
    }

    /// Starts the plugin and registers it in one step under [`RUNNING`]'s lock, unless ststui
    /// is ending.
    fn start(
        &self,
        cmd: &mut tokio::process::Command,
        group: bool,
    ) -> Result<(tokio::process::Child, Registered), CredentialError> {
        let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        if ENDING.load(Ordering::SeqCst) {
            return Err(self.fail("was not started: ststui is ending"));
        }
        let child = cmd.spawn().map_err(|e| {
            let hint = self.exec.install_hint.as_deref().map(crate::text::escape_controls);
            let hint = hint.map(|h| format!("; {}", h.trim())).unwrap_or_default();
            self.fail(format_args!("could not be started: {e}{hint}"))
        })?;
        let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
        if pid > 0 {
            let (name, since) = (self.name.clone(), Instant::now());
            running.push(Running { pid, group, name, since });
        }
        Ok((child, Registered { pid, group, ended: false }))
    }

    fn command(&self, interactive: bool) -> Result<tokio::process::Command, CredentialError> {
        let Some(program) = &self.exec.command else {
            return Err(self.fail("names no command"));
        };
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(self.exec.args.iter().flatten());
        for pair in self.exec.env.iter().flatten() {
            if let (Some(k), Some(v)) = (pair.get("name"), pair.get("value")) {
                cmd.env(k, v);
            }
        }
        let spec = serde_json::json!({
            "interactive": interactive,
            "cluster": if self.exec.provide_cluster_info { self.exec.cluster.as_ref() } else { None },
        });
        let info = serde_json::json!({
            "apiVersion": self.exec.api_version,
            "kind": "ExecCredential",
            "spec": spec,
        });
        cmd.env("KUBERNETES_EXEC_INFO", info.to_string());
        for name in self.exec.drop_env.iter().flatten() {
            cmd.env_remove(name);
        }
        cmd.stdout(Stdio::piped()).kill_on_drop(true);
        if interactive {
            cmd.stdin(Stdio::inherit()).stderr(Stdio::inherit());
        } else {
            // Its own process group, so all it started can be stopped with it (a terminal's
            // ctrl-c does not reach it: ststui stops it).
            cmd.stdin(Stdio::null()).stderr(Stdio::piped()).process_group(0);
        }
        #[cfg(target_os = "linux")]
        // SAFETY: prctl(2) is async-signal-safe and touches no memory of the parent.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        Ok(cmd)
    }
}

/// ` (it said: …)` for a plugin's last stderr lines, or nothing.
fn said(err: &str) -> String {
    let lines: Vec<&str> = err.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
    if tail.is_empty() {
        return String::new();
    }
    let tail: String = crate::text::escape_controls(&tail).chars().take(300).collect();
    format!(" (it said: {tail})")
}

/// A running plugin in [`RUNNING`]; dropping it before the plugin ended (its time is up, the
/// request was dropped) stops the plugin's whole process group.
struct Registered {
    pid: i32,
    group: bool,
    ended: bool,
}

impl Drop for Registered {
    fn drop(&mut self) {
        if self.pid <= 0 {
            return;
        }
        let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        running.retain(|r| r.pid != self.pid);
        if self.group && !self.ended {
            kill(self.pid, true);
        }
    }
}

async fn read_capped(out: Option<impl AsyncRead + Unpin>) -> Result<Vec<u8>, String> {
    let Some(out) = out else { return Ok(Vec::new()) };
    let mut buf = Vec::new();
    out.take(STDOUT_MAX + 1).read_to_end(&mut buf).await.map_err(|e| format!("stdout: {e}"))?;
    if buf.len() as u64 > STDOUT_MAX {
        return Err(format!("wrote more than {} KiB on stdout", STDOUT_MAX >> 10));
    }
    Ok(buf)
}

/// Reads a stream to its end, keeping its last [`STDERR_KEPT`] bytes in `tail` as they come
/// (a plugin stopped for its time still leaves what it said).
async fn keep_tail(err: Option<impl AsyncRead + Unpin>, tail: &Mutex<VecDeque<u8>>) {
    let Some(mut err) = err else { return };
    let mut chunk = [0u8; 1024];
    loop {
        match err.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
                tail.extend(&chunk[..n]);
                let extra = tail.len().saturating_sub(STDERR_KEPT);
                tail.drain(..extra);
            }
        }
    }
}

/// What a plugin answered.
#[derive(Clone, PartialEq)]
pub enum Credential {
    Token { token: String, expires: Option<k8s_openapi::jiff::Timestamp> },
    Certificate { cert: String, key: String, expires: Option<k8s_openapi::jiff::Timestamp> },
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credential::Token { expires, .. } => write!(f, "Token(expires {expires:?})"),
            Credential::Certificate { expires, .. } => {
                write!(f, "Certificate(expires {expires:?})")
            }
        }
    }
}

impl Credential {
    fn expires(&self) -> Option<k8s_openapi::jiff::Timestamp> {
        match self {
            Credential::Token { expires, .. } | Credential::Certificate { expires, .. } => *expires,
        }
    }

    /// Whether it is still good: no expiry, or [`RENEW_BEFORE`] ahead of it.
    fn fresh(&self) -> bool {
        let ahead = k8s_openapi::jiff::SignedDuration::try_from(RENEW_BEFORE).unwrap_or_default();
        self.expires().is_none_or(|t| k8s_openapi::jiff::Timestamp::now() < t - ahead)
    }

    /// `config` with this credential in place of the plugin.
    fn into_config(self, mut config: kube::Config) -> kube::Config {
        use base64::Engine as _;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        match self {
            Credential::Token { token, .. } => config.auth_info.token = Some(token.into()),
            Credential::Certificate { cert, key, .. } => {
                config.auth_info.client_certificate_data = Some(b64(&cert));
                config.auth_info.client_key_data = Some(b64(&key).into());
            }
        }
        config
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredential {
    kind: Option<String>,
    status: Option<ExecStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecStatus {
    token: Option<String>,
    expiration_timestamp: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
}

/// An ExecCredential's status, as client-go reads it.
fn parse(out: &[u8]) -> Result<Credential, String> {
    let cred: ExecCredential = serde_json::from_slice(out)
        .map_err(|e| format!("answered something that is not an ExecCredential ({e})"))?;
    if cred.kind.as_deref().is_some_and(|k| k != "ExecCredential") {
        return Err("answered an object that is not an ExecCredential".into());
    }
    let status = cred.status.ok_or("answered an ExecCredential without a status")?;
    let expires = match status.expiration_timestamp.as_deref() {
        Some(t) => Some(
            t.parse::<k8s_openapi::jiff::Timestamp>()
                .map_err(|e| format!("answered an expirationTimestamp that is not a time ({e})"))?,
        ),
        None => None,
    };
    match (status.token, status.client_certificate_data, status.client_key_data) {
        (Some(token), _, _) if !token.is_empty() => Ok(Credential::Token { token, expires }),
        (_, Some(cert), Some(key)) => Ok(Credential::Certificate { cert, key, expires }),
        (_, Some(_), None) | (_, None, Some(_)) => {
            Err("answered a client certificate without its key (or a key without one)".into())
        }
        _ => Err("answered neither a token nor a client certificate".into()),
    }
}

/// The requests' service: the real client, built once the plugin has answered, rebuilt when
/// the credential expires.
#[derive(Clone)]
pub struct Lazy {
    shared: Arc<Shared>,
}

struct Shared {
    plugin: Plugin,
    config: kube::Config,
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The client, the credential it sends, and since when this service holds it.
    client: Option<(kube::Client, Credential, Instant)>,
    failed: Option<(Instant, CredentialError)>,
}

impl Lazy {
    pub fn new(config: kube::Config, plugin: Plugin) -> Lazy {
        Lazy { shared: Arc::new(Shared { plugin, config, state: tokio::sync::Mutex::default() }) }
    }
}

impl Shared {
    /// The client and the credential it sends, running the plugin first when there is none or
    /// its credential expires.
    async fn client(&self) -> Result<(kube::Client, Credential), BoxError> {
        let mut state = self.state.lock().await;
        if let Some((client, cred, _)) = &state.client
            && cred.fresh()
        {
            return Ok((client.clone(), cred.clone()));
        }
        if let Some((at, e)) = &state.failed
            && at.elapsed() < HOLD
        {
            return Err(Box::new(e.clone()));
        }
        let given = self.plugin.given();
        let answer = match given {
            Some(cred) => Ok(cred),
            None => self.plugin.run().await,
        };
        match answer {
            Ok(cred) => {
                self.plugin.remember(&cred);
                let config = cred.clone().into_config(self.config.clone());
                let client = super::http::builder(&config)
                    .map_err(|e| {
                        self.plugin.fail(format_args!("answered unusable credentials: {e}"))
                    })?
                    .build();
                state.failed = None;
                state.client = Some((client.clone(), cred.clone(), Instant::now()));
                Ok((client, cred))
            }
            Err(e) => {
                tracing::warn!("{e}");
                state.failed = Some((Instant::now(), e.clone()));
                Err(Box::new(e))
            }
        }
    }
}

impl Service<Request<Body>> for Lazy {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response<Body>, BoxError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<Body>) -> Self::Future {
        let shared = Arc::clone(&self.shared);
        Box::pin(async move {
            let (client, cred) = shared.client().await?;
            let response = client.send(req).await.map_err(BoxError::from)?;
            if response.status() == hyper::StatusCode::UNAUTHORIZED {
                shared.refused(&cred).await;
            }
            Ok(response)
        })
    }
}

impl Shared {
    /// The server refused `cred`: once it is [`REAUTH_AFTER`] old, it is given up, so the next
    /// request runs the plugin again (a credential revoked or expired early, a server that
    /// rotated its keys). The refusal itself goes back to the caller as it came.
    async fn refused(&self, cred: &Credential) {
        let mut state = self.state.lock().await;
        let Some((_, held, since)) = &state.client else { return };
        if held != cred || since.elapsed() < REAUTH_AFTER {
            return;
        }
        tracing::info!(
            "{} gave a credential the server refused: running it again",
            self.plugin.called()
        );
        state.client = None;
        self.plugin.spent(cred);
    }
}

#[cfg(test)]
#[path = "credential_tests.rs"]
mod tests;
