//! `pods/exec` over a WebSocket (`v5.channel.k8s.io`, `v4.channel.k8s.io`), what `kubectl
//! exec` and a plan's `exec:` gate send. The simulator runs no processes: a command "run" in a
//! pod answers as a readiness check would — exit 0 while the pod is Running and Ready, exit 75
//! ("not yet") otherwise — printing what it was asked on stdout; a container the pod does not
//! have, or a pod that does not run, is refused as the kubelet refuses it.
//!
//! The upgrade is done by hand on hyper's connection (the server is hyper's; axum's WebSocket
//! extractor would bring a second tungstenite version for one route), framed by
//! tokio-tungstenite. Owns: this route. Must not: execute anything.

use std::sync::Arc;

use axum::body::Body;
use futures::SinkExt as _;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::status::Status;
use super::{Reply, ctx};
use crate::backend::ObjRef;

const STDOUT: u8 = 1;
const STATUS: u8 = 3;

/// Whether `path` is a pod's exec: `(namespace, pod)`.
pub fn route(path: &str) -> Option<(String, String)> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segs.as_slice() {
        ["api", "v1", "namespaces", ns, "pods", pod, "exec"] => {
            Some((ns.to_string(), pod.to_string()))
        }
        _ => None,
    }
}

/// What the simulated command answers: its exit code and its output.
async fn answer(
    ctx: &ctx::Ctx,
    key: ObjRef,
    container: Option<String>,
    argv: Vec<String>,
) -> Result<(i32, String), Status> {
    let def = super::resources::Def::of(super::resources::Res::Pods);
    ctx.on_sim(move |sim| {
        let Some(p) = sim.pod(&key) else { return Err(Status::not_found(def, &key.name)) };
        let containers: Vec<String> = p
            .spec
            .as_ref()
            .map(|s| s.containers.iter().map(|c| c.name.clone()).collect())
            .unwrap_or_default();
        let container = match container {
            Some(c) => c,
            None => containers.first().cloned().unwrap_or_default(),
        };
        if !containers.contains(&container) {
            return Err(Status::bad_request(format!(
                "container {container} is not valid for pod {}",
                key.name
            )));
        }
        if crate::core::pod::phase(p) != "Running" {
            return Err(Status::bad_request(format!(
                "unable to upgrade connection: container not found (\"{container}\")"
            )));
        }
        let code = if crate::core::pod::is_running_and_ready(p) { 0 } else { 75 };
        let said = format!("simulated exec in {}/{container}: {}\n", key.name, argv.join(" "));
        Ok((code, said))
    })
    .await?
}

/// The exec request: upgraded and answered, or refused with a Status.
pub async fn handle(
    ctx: Arc<ctx::Ctx>,
    mut req: Request<Incoming>,
    ns: String,
    pod: String,
) -> Response<Body> {
    if let Some(st) = ctx.forbidden("create", "", "pods/exec", Some(&ns), Some(&pod)) {
        return Reply::from(st).into_response();
    }
    let query = super::route::Query::parse(req.uri().query());
    let pairs = form_urlencoded::parse(req.uri().query().unwrap_or_default().as_bytes());
    let argv: Vec<String> =
        pairs.filter(|(k, _)| k == "command").map(|(_, v)| v.into_owned()).collect();
    let container = query.get("container").map(str::to_string);
    let headers = req.headers();
    let key = headers.get("sec-websocket-key").map(|k| k.as_bytes().to_vec());
    let offered = headers
        .get("sec-websocket-protocol")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let protocol = ["v5.channel.k8s.io", "v4.channel.k8s.io"]
        .into_iter()
        .find(|p| offered.split(',').any(|o| o.trim() == *p));
    if argv.is_empty() {
        let st = Status::bad_request("you must specify at least 1 command");
        return Reply::from(st).into_response();
    }
    // The pod and container first, so a client falling back to SPDY hears the same refusal.
    let answered = answer(&ctx, ObjRef::new(ns, pod), container, argv).await;
    let (code, said) = match answered {
        Ok(a) => a,
        Err(st) => return Reply::from(st).into_response(),
    };
    let (Some(key), Some(protocol)) = (key, protocol) else {
        let st = Status::bad_request(
            "exec needs a WebSocket upgrade with the v5.channel.k8s.io or v4.channel.k8s.io \
             subprotocol (the simulated API server speaks no SPDY)",
        );
        return Reply::from(st).into_response();
    };
    let upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        let Ok(upgraded) = upgrade.await else { return };
        let mut ws = tokio_tungstenite::WebSocketStream::from_raw_socket(
            TokioIo::new(upgraded),
            Role::Server,
            None,
        )
        .await;
        let status = if code == 0 {
            serde_json::json!({"metadata": {}, "status": "Success"})
        } else {
            serde_json::json!({
                "metadata": {}, "status": "Failure",
                "message": format!("command terminated with non-zero exit code: exit status {code}"),
                "reason": "NonZeroExitCode",
                "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]},
            })
        };
        let framed = |channel: u8, data: &[u8]| {
            let mut v = Vec::with_capacity(data.len() + 1);
            v.push(channel);
            v.extend_from_slice(data);
            Message::binary(v)
        };
        let _ = ws.send(framed(STDOUT, said.as_bytes())).await;
        let _ = ws.send(framed(STATUS, status.to_string().as_bytes())).await;
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
    h.insert("connection", hyper::header::HeaderValue::from_static("Upgrade"));
    h.insert("upgrade", hyper::header::HeaderValue::from_static("websocket"));
    if let Ok(v) = hyper::header::HeaderValue::from_str(&accept) {
        h.insert("sec-websocket-accept", v);
    }
    h.insert("sec-websocket-protocol", hyper::header::HeaderValue::from_static(protocol));
    r
}
