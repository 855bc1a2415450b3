//! Gates that reach a pod, for a plan's runner: an HTTP GET through the API server's pod proxy
//! (`http::PORT/PATH`), a command in a container through the API's exec (`exec:C -- …`), and
//! the zone of a pod's node (a gate's `{zone}`).
//!
//! They run on a client runtime of their own with a worker thread, so a gate of minutes runs
//! while the runner's loop renews its lease; each reports its [`Outcome`] on a channel. A
//! proxy's 429 and 503 are the pod's "not yet" and are never retried by the client (see
//! `http::Retries`). An HTTP answer through the proxy is the pod's, judged by its code alone
//! (a pod may answer a `Status`-shaped body of its own). The API server failing or out of reach
//! before any answer (a reset, an exec it could not start with its 5xx or 429) is not the
//! gate's answer: "not yet", asked again within the gate's tries; a refusal (a container the
//! pod lacks, a missing permission) fails it. Output is kept as lines (their last ones, at most
//! [`BODY`] bytes read, the rest drained so the stream ends); nothing of it is executed or
//! printed raw here.
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
    pub fn open(target: &super::Target) -> Result<GateClient, super::connect::NoClient> {
        let runtime = crate::runtime::build("gates", crate::runtime::Workers::Threads(1))?;
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
            // An HTTP answer through the proxy is the pod's, whatever its body looks like (a
            // pod may answer a Status of its own): only its code decides. Where the API server
            // could not carry the request (no connection, a reset) there is no answer, and that
            // is "not yet" ([`Unasked`]); the proxy's own "cannot reach the pod" is a 503,
            // "not yet" by the contract as the pod's own 503 is.
            let answered = tokio::time::timeout(timeout, ask).await.map(|r| {
                r.map(|(status, body)| (Verdict::of_http(status), format!("HTTP {status}"), body))
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
                // Both streams at once, each to its end: one left unread would stall the
                // other, and the exec ends only once both are drained.
                let (o, e) = tokio::join!(read_drained(p.stdout()), read_drained(p.stderr()));
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

/// The first [`BODY`] bytes of an exec's stream; the rest read to its end and dropped (a
/// stream left unread stalls the exec: its status never comes).
async fn read_drained(half: Option<impl tokio::io::AsyncRead + Unpin>) -> String {
    use tokio::io::AsyncReadExt as _;
    let mut buf = Vec::new();
    if let Some(mut h) = half {
        let _ = (&mut h).take(BODY as u64).read_to_end(&mut buf).await;
        let _ = tokio::io::copy(&mut h, &mut tokio::io::sink()).await;
    }
    String::from_utf8_lossy(&buf).into_owned()
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
    fn an_execs_output_past_the_cap_is_drained_so_its_stream_ends() {
        let rt = crate::runtime::build("gates-test", crate::runtime::Workers::Current).unwrap();
        rt.block_on(async {
            use tokio::io::AsyncWriteExt as _;
            // A pipe of a few KiB, as an exec's stream is: a writer of 160 KiB ends only when
            // every byte is read.
            let (read, mut write) = tokio::io::simplex(4096);
            let writer = tokio::spawn(async move {
                write.write_all(&vec![b'x'; 160 * 1024]).await.unwrap();
                write.shutdown().await.unwrap();
            });
            let hang = Duration::from_secs(30);
            let out = tokio::time::timeout(hang, read_drained(Some(read))).await.unwrap();
            assert_eq!(out.len(), BODY, "the cap kept");
            tokio::time::timeout(hang, writer).await.unwrap().unwrap();
        });
    }

    #[test]
    fn a_pods_answer_is_judged_by_its_code_whatever_its_body() {
        // A pod answering 500 with a Status-shaped body has failed its gate: never retried as
        // the API server's blip.
        let body = r#"{"kind":"Status","apiVersion":"v1","code":500}"#.to_string();
        let answer = (Verdict::of_http(500), "HTTP 500".to_string(), body);
        let o = judged(Ok(Ok(answer)), "no answer", Duration::from_secs(1), Instant::now());
        assert_eq!((o.verdict, o.how.as_str()), (Verdict::Fail, "HTTP 500"), "{o:?}");
        assert_eq!(Verdict::of_http(503), Verdict::NotYet, "the proxy's cannot-reach");
    }
}
