//! `pods/exec` over a WebSocket (`v5.channel.k8s.io`, `v4.channel.k8s.io`), what `kubectl
//! exec` and a plan's `exec:` gate send. The simulator runs no processes: a command "run" in a
//! pod answers as a readiness check would — exit 0 while the pod is Running and Ready, exit 75
//! ("not yet") otherwise — printing what it was asked on stdout; a container the pod does not
//! have, or a pod that does not run, is refused as the kubelet refuses it. The stream is
//! [`crate::kubelet::exec`]'s. Owns: this route. Must not: execute anything.

use std::sync::Arc;

use axum::body::Body;
use hyper::body::Incoming;
use hyper::{Request, Response};

use super::status::Status;
use super::{Reply, ctx};
use crate::backend::ObjRef;

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
        let (container, code) = crate::kubelet::exec::readiness(p, container.as_deref())
            .map_err(|e| Status::bad_request(e.to_string()))?;
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
    let argv = crate::kubelet::exec::command(req.uri().query());
    let container = query.get("container").map(str::to_string);
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
    let Some(upgrade) = crate::kubelet::exec::websocket(&req) else {
        let st =
            Status::bad_request(crate::kubelet::exec::needs_websocket("the simulated API server"));
        return Reply::from(st).into_response();
    };
    crate::kubelet::exec::answer(&mut req, upgrade, code, said)
}
