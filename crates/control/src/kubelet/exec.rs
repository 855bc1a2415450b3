//! What a kubelet answers to an exec, shared by the served simulator (`pods/exec`) and the fake
//! kubelet of the test control plane (its `/exec/…` endpoint, which kube-apiserver proxies a
//! WebSocket to when the node declares `ExtendWebSocketsToKubelet`): the command asked for (the
//! `command` query parameters), the subprotocol (`v5.channel.k8s.io`, `v4.channel.k8s.io`), and
//! the stream — the output on channel 1, then the `metav1.Status` on channel 3 (`Success`, or
//! `NonZeroExitCode` with the code as its cause), then a normal close.
//!
//! Neither runs anything: the caller decides the exit code and the output (a readiness answer,
//! 0 while the pod is Running and Ready, 75 otherwise). The upgrade is done by hand on hyper's
//! connection (axum's WebSocket extractor would bring a second tungstenite version), framed by
//! tokio-tungstenite. Owns: the protocol. Must not: execute anything.

use axum::body::Body;
use futures::SinkExt as _;
use hyper::body::Incoming;
use hyper::header::HeaderValue;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::core::v1::Pod;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;

const STDOUT: u8 = 1;
const STATUS: u8 = 3;

/// The subprotocols answered, best first.
pub const PROTOCOLS: [&str; 2] = ["v5.channel.k8s.io", "v4.channel.k8s.io"];

/// The words of the command asked for, in order (`command=…` repeated in the query).
pub fn command(query: Option<&str>) -> Vec<String> {
    form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .filter(|(k, _)| k == "command")
        .map(|(_, v)| v.into_owned())
        .collect()
}

/// The WebSocket upgrade asked for: its key and the subprotocol answered, or `None` when the
/// request is not a WebSocket with one of [`PROTOCOLS`].
pub fn websocket<B>(req: &Request<B>) -> Option<(Vec<u8>, &'static str)> {
    let headers = req.headers();
    let key = headers.get("sec-websocket-key")?.as_bytes().to_vec();
    let offered = headers.get("sec-websocket-protocol")?.to_str().ok()?;
    let protocol = PROTOCOLS.into_iter().find(|p| offered.split(',').any(|o| o.trim() == *p))?;
    Some((key, protocol))
}

/// Why a command cannot run in a pod, in the kubelet's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoExec {
    /// The pod has no container of that name.
    #[error("container {container} is not valid for pod {pod}")]
    NoContainer { container: String, pod: String },
    /// The pod does not run.
    #[error("unable to upgrade connection: container not found (\"{0}\")")]
    NotRunning(String),
}

/// What a command run in `container` of `pod` (its first container when `None`) answers here:
/// the container it ran in and the exit code — 0 while the pod is Running and Ready, 75 ("not
/// yet") otherwise — or why it is refused, in the kubelet's words (a container the pod does
/// not have; a pod that does not run).
pub fn readiness(pod: &Pod, container: Option<&str>) -> Result<(String, i32), NoExec> {
    let containers: Vec<&str> =
        pod.spec.iter().flat_map(|s| s.containers.iter().map(|c| c.name.as_str())).collect();
    let container = container.or(containers.first().copied()).unwrap_or_default().to_string();
    if !containers.contains(&container.as_str()) {
        return Err(NoExec::NoContainer { container, pod: crate::core::pod::name(pod).into() });
    }
    if crate::core::pod::phase(pod) != "Running" {
        return Err(NoExec::NotRunning(container));
    }
    let code = if crate::core::pod::is_running_and_ready(pod) { 0 } else { 75 };
    Ok((container, code))
}

/// Why an exec without a usable upgrade is refused (neither server speaks SPDY).
pub fn needs_websocket(who: &str) -> String {
    format!(
        "exec needs a WebSocket upgrade with the v5.channel.k8s.io or v4.channel.k8s.io \
         subprotocol ({who} speaks no SPDY)"
    )
}

/// Switches `req`'s connection to the WebSocket and streams `said` then the exit `code` on it.
pub fn answer(
    req: &mut Request<Incoming>,
    (key, protocol): (Vec<u8>, &'static str),
    code: i32,
    said: String,
) -> Response<Body> {
    let upgrade = hyper::upgrade::on(req);
    tokio::spawn(async move {
        let Ok(upgraded) = upgrade.await else { return };
        let mut ws = tokio_tungstenite::WebSocketStream::from_raw_socket(
            TokioIo::new(upgraded),
            Role::Server,
            None,
        )
        .await;
        let _ = ws.send(framed(STDOUT, said.as_bytes())).await;
        let _ = ws.send(framed(STATUS, status(code).to_string().as_bytes())).await;
        let normal = tokio_tungstenite::tungstenite::protocol::CloseFrame {
            code: tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode::Normal,
            reason: "".into(),
        };
        let _ = ws.close(Some(normal)).await;
    });
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(&key);
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = r.headers_mut();
    h.insert("connection", HeaderValue::from_static("Upgrade"));
    h.insert("upgrade", HeaderValue::from_static("websocket"));
    if let Ok(v) = HeaderValue::from_str(&accept) {
        h.insert("sec-websocket-accept", v);
    }
    h.insert("sec-websocket-protocol", HeaderValue::from_static(protocol));
    r
}

fn framed(channel: u8, data: &[u8]) -> Message {
    let mut v = Vec::with_capacity(data.len() + 1);
    v.push(channel);
    v.extend_from_slice(data);
    Message::binary(v)
}

/// The Status closing the stream: what kubectl and kube-rs read the exit code from.
fn status(code: i32) -> serde_json::Value {
    if code == 0 {
        serde_json::json!({"metadata": {}, "status": "Success"})
    } else {
        serde_json::json!({
            "metadata": {}, "status": "Failure",
            "message": format!("command terminated with non-zero exit code: exit status {code}"),
            "reason": "NonZeroExitCode",
            "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_is_every_command_parameter_in_order() {
        let q = "container=app&command=sh&command=-c&command=echo%20a%26b&stdout=true";
        assert_eq!(command(Some(q)), ["sh", "-c", "echo a&b"]);
        assert!(command(None).is_empty());
    }

    #[test]
    fn the_best_offered_subprotocol_is_answered() {
        let req = |proto: &str| {
            Request::builder()
                .header("sec-websocket-key", "k")
                .header("sec-websocket-protocol", proto)
                .body(())
                .unwrap()
        };
        assert_eq!(
            websocket(&req("v4.channel.k8s.io, v5.channel.k8s.io")).unwrap().1,
            PROTOCOLS[0]
        );
        assert_eq!(websocket(&req("v4.channel.k8s.io")).unwrap().1, PROTOCOLS[1]);
        assert!(websocket(&req("SPDY/3.1")).is_none());
        assert!(websocket(&Request::builder().body(()).unwrap()).is_none());
    }

    #[test]
    fn a_non_zero_exit_is_a_status_with_its_code() {
        assert_eq!(status(0)["status"], "Success");
        let s = status(75);
        assert_eq!(s["reason"], "NonZeroExitCode");
        assert_eq!(s["details"]["causes"][0]["message"], "75");
    }
}
