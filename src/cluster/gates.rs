//! Gates that reach a pod, for a plan's runner: an HTTP GET through the API server's pod proxy
//! (`http::PORT/PATH`), a command in a container through the API's exec (`exec:C -- …`), and
//! the zone of a pod's node (a gate's `{zone}`).
//!
//! They run on a client runtime of their own with a worker thread, so a gate of minutes runs
//! while the runner's loop renews its lease; each reports its [`Outcome`] on a channel. A
//! proxy's 429 and 503 are the pod's "not yet" and are never retried by the client (see
//! `http::Retries`). The API server failing or out of reach (a reset, its own 5xx or 429) is
//! not the gate's answer: "not yet", asked again within the gate's tries; a refusal (a
//! container the pod lacks, a missing permission) fails it. Output is kept as lines (their last
//! ones); nothing of it is executed or printed raw here.
//!
//! Owns: these requests. Must not: decide what a verdict means beyond the contract
//! (`plan::gate::Verdict`).

use std::sync::mpsc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::Api;
use kube::api::AttachParams;

use crate::plan::gate::{Outcome, Verdict};

/// Lines of a gate's output kept.
const TAIL: usize = 20;
/// Bytes of an HTTP answer read (its last lines kept).
const BODY: usize = 64 * 1024;

/// A client for gates.
pub struct GateClient {
    runtime: tokio::runtime::Runtime,
    client: kube::Client,
}

impl GateClient {
    pub fn open(target: &super::Target) -> Result<GateClient, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the gates' client runtime: {e}"))?;
        let client =
            runtime.block_on(async { super::connect::session(target).await.map(|s| s.client) })?;
        Ok(GateClient { runtime, client })
    }

    /// The zone label of `pod`'s node (`topology.kubernetes.io/zone`), when it can be read.
    pub fn zone(&self, namespace: &str, pod: &str) -> Option<String> {
        let client = self.client.clone();
        let (ns, pod) = (namespace.to_string(), pod.to_string());
        self.runtime.block_on(async move {
            let read = async {
                let p = Api::<Pod>::namespaced(client.clone(), &ns).get(&pod).await.ok()?;
                let node = p.spec.and_then(|s| s.node_name)?;
                let n = Api::<Node>::all(client).get(&node).await.ok()?;
                n.metadata.labels?.get("topology.kubernetes.io/zone").cloned()
            };
            tokio::time::timeout(Duration::from_secs(5), read).await.ok().flatten()
        })
    }

    /// A GET of `path` on `pod`'s `port` through the API server's pod proxy; its outcome on the
    /// channel: 2xx go, 503 and 429 not yet, anything else (or no answer in `timeout`) fails.
    #[allow(clippy::too_many_arguments)]
    pub fn http(
        &self,
        namespace: &str,
        pod: &str,
        tls: bool,
        port: u16,
        path: &str,
        timeout: Duration,
    ) -> mpsc::Receiver<Outcome> {
        let (tx, rx) = mpsc::channel();
        let scheme = if tls { "https:" } else { "" };
        let uri = format!("/api/v1/namespaces/{namespace}/pods/{scheme}{pod}:{port}/proxy{path}");
        let client = self.client.clone();
        self.runtime.spawn(async move {
            let started = Instant::now();
            let ask = async {
                let req =
                    hyper::Request::get(&uri).body(kube::client::Body::empty()).map_err(|e| {
                        Unasked { words: format!("bad request {uri:?}: {e}"), transient: false }
                    })?;
                let res = client.send(req).await.map_err(|e| Unasked::of(&e))?;
                let status = res.status().as_u16();
                let body = read_body(res.into_body()).await;
                Ok::<_, Unasked>((status, body))
            };
            let answered = tokio::time::timeout(timeout, ask).await.map(|r| {
                r.map(|(status, body)| {
                    if status >= 500 && api_status(&body) {
                        // The API server's own failure, not the pod's answer: asked again.
                        let how = format!("HTTP {status} from the API server, not the pod");
                        return (Verdict::NotYet, how, body);
                    }
                    (Verdict::of_http(status), format!("HTTP {status}"), body)
                })
            });
            let outcome = judged(answered, "no answer", timeout, started);
            let _ = tx.send(outcome);
        });
        rx
    }

    /// `argv` run in `container` of `pod` through the API's exec; exit 0 goes, 75 is "not
    /// yet", anything else (or no end within `timeout`) fails.
    pub fn exec(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
        argv: Vec<String>,
        timeout: Duration,
    ) -> mpsc::Receiver<Outcome> {
        let (tx, rx) = mpsc::channel();
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let (pod, container) = (pod.to_string(), container.to_string());
        self.runtime.spawn(async move {
            let started = Instant::now();
            let run = async {
                let ap = AttachParams::default()
                    .container(container)
                    .stdin(false)
                    .stdout(true)
                    .stderr(true);
                let mut p = api.exec(&pod, argv, &ap).await.map_err(|e| Unasked::of(&e))?;
                let status = p.take_status();
                // Both streams at once: one left unread would stall the other.
                let read = |half: Option<tokio::io::ReadHalf<tokio::io::SimplexStream>>| async {
                    use tokio::io::AsyncReadExt as _;
                    let mut buf = Vec::new();
                    if let Some(h) = half {
                        let _ = h.take(BODY as u64).read_to_end(&mut buf).await;
                    }
                    String::from_utf8_lossy(&buf).into_owned()
                };
                let (o, e) = tokio::join!(read(p.stdout()), read(p.stderr()));
                let out = format!("{o}{e}");
                let status = match status {
                    Some(s) => s.await,
                    None => None,
                };
                let _ = p.join().await;
                Ok::<_, Unasked>((exit_code(status.as_ref()), out))
            };
            let answered = tokio::time::timeout(timeout, run).await.map(|r| {
                r.map(|(code, out)| {
                    let how = code.map_or("no exit code".into(), |c| format!("exit {c}"));
                    (Verdict::of_exit(code), how, out)
                })
            });
            let outcome = judged(answered, "exec refused", timeout, started);
            let _ = tx.send(outcome);
        });
        rx
    }
}

/// An exec's exit code from its closing Status: Success is 0; NonZeroExitCode carries it as a
/// cause `ExitCode`.
fn exit_code(s: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Status>) -> Option<i32> {
    let s = s?;
    if s.status.as_deref() == Some("Success") {
        return Some(0);
    }
    let causes = s.details.as_ref().and_then(|d| d.causes.as_ref())?;
    causes
        .iter()
        .find(|c| c.reason.as_deref() == Some("ExitCode"))
        .and_then(|c| c.message.as_deref()?.parse().ok())
}

async fn read_body(body: kube::client::Body) -> String {
    use http_body_util::BodyExt as _;
    let mut out = Vec::new();
    let mut body = body;
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(data) = frame.into_data() {
            out.extend_from_slice(&data);
            if out.len() > BODY {
                break;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn tail(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(TAIL)..].iter().map(|l| l.to_string()).collect()
}

fn ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Why a gate's request got no answer from the pod: the client's error in words, and whether
/// it may pass by itself (no connection, a broken one, the API server's 5xx or 429 — an API
/// blip is not the gate's "no") or was refused (a container the pod does not have, a missing
/// permission, refused credentials).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Unasked {
    words: String,
    transient: bool,
}

impl Unasked {
    fn of(e: &kube::Error) -> Unasked {
        Unasked { words: super::trouble::brief(e), transient: super::trouble::of(e).transient() }
    }
}

/// Whether an error answer's body is the API server's own (a `metav1.Status`), not the pod's.
fn api_status(body: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(body)
        .is_ok_and(|v| v["kind"] == "Status" && v["apiVersion"] == "v1")
}

/// A run's outcome: its verdict, how and output; a request the API could not carry out —
/// "not yet" when that may pass (asked again within the gate's tries), else a refusal
/// (`refused`, the error as its output); or no end within `timeout`.
fn judged(
    answered: Result<Result<(Verdict, String, String), Unasked>, tokio::time::error::Elapsed>,
    refused: &str,
    timeout: Duration,
    started: Instant,
) -> Outcome {
    match answered {
        Ok(Ok((verdict, how, out))) => {
            Outcome { verdict, how, tail: tail(&out), took_ms: ms(started) }
        }
        Ok(Err(Unasked { words, transient: true })) => Outcome {
            verdict: Verdict::NotYet,
            how: "the API server did not carry it out".into(),
            tail: vec![words],
            took_ms: ms(started),
        },
        Ok(Err(Unasked { words, transient: false })) => Outcome {
            verdict: Verdict::Fail,
            how: refused.into(),
            tail: vec![words],
            took_ms: ms(started),
        },
        Err(_) => timed_out(timeout, started),
    }
}

fn timed_out(timeout: Duration, started: Instant) -> Outcome {
    Outcome {
        verdict: Verdict::Fail,
        how: format!(
            "no end within {}",
            crate::plan::duration_words(u64::try_from(timeout.as_millis()).unwrap_or(0))
        ),
        tail: Vec::new(),
        took_ms: ms(started),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16, reason: &str) -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status {
            code,
            reason: reason.into(),
            message: "m".into(),
            ..Default::default()
        }))
    }

    fn outcome(e: kube::Error) -> Outcome {
        judged(Ok(Err(Unasked::of(&e))), "exec refused", Duration::from_secs(1), Instant::now())
    }

    #[test]
    fn an_api_blip_is_not_yet_and_a_refusal_fails() {
        for e in [api(500, "InternalError"), api(429, "TooManyRequests"), api(503, "")] {
            assert_eq!(outcome(e).verdict, Verdict::NotYet);
        }
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        let o = outcome(kube::Error::Service(Box::new(reset)));
        assert_eq!(o.verdict, Verdict::NotYet, "{o:?}");
        assert_eq!(o.how, "the API server did not carry it out");
        for e in [api(400, "BadRequest"), api(403, "Forbidden"), api(401, "Unauthorized")] {
            let o = outcome(e);
            assert_eq!((o.verdict, o.how.as_str()), (Verdict::Fail, "exec refused"), "{o:?}");
        }
    }

    #[test]
    fn only_the_api_servers_own_status_body_is_its_failure() {
        assert!(api_status(r#"{"kind":"Status","apiVersion":"v1","code":500}"#));
        assert!(!api_status("internal error"), "a pod's own 500");
        assert!(!api_status(r#"{"kind":"Status"}"#));
    }
}
