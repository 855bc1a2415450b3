//! The fake kubelet's own HTTPS endpoint: `exec`, so a plan's `exec:` gate can run "in the pod"
//! on the test control plane. kube-apiserver (1.36 and later) proxies an exec's WebSocket
//! straight to the kubelet of a node that declares `ExtendWebSocketsToKubelet` in its status,
//! at `https://ADDRESS:PORT/exec/NAMESPACE/POD/CONTAINER?command=…`, with the port from the
//! node's `daemonEndpoints`; it verifies the kubelet's certificate only when it was given
//! `--kubelet-certificate-authority` (the test control plane is not), so a self-signed pair made
//! by `tests/control-plane/run` serves.
//!
//! Like the simulator's, this exec runs nothing: the command answers as a readiness check —
//! exit 0 while the pod is Running and Ready, 75 ("not yet") otherwise — saying what it was
//! asked (the stream is [`crate::kubelet::exec`]'s). The pod is read from the API at each
//! request. Nothing authenticates the caller: the listener is on loopback and executes nothing.
//! TLS by tokio-rustls (already in the tree through kube-rs), HTTP by hyper.
//!
//! Owns: this listener. Must not: execute anything.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The node status feature that makes kube-apiserver proxy exec WebSockets to us.
pub const WEBSOCKETS_FEATURE: &str = "ExtendWebSocketsToKubelet";

/// The listener, bound: its port goes into the node's status.
pub struct Endpoint {
    listener: TcpListener,
    tls: TlsAcceptor,
}

impl Endpoint {
    /// Binds `127.0.0.1:port` (0: any free port) with the PEM certificate chain and key.
    pub async fn bind(port: u16, cert: &str, key: &str) -> Result<Endpoint, String> {
        let chain = CertificateDer::pem_file_iter(cert)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("--tls-cert {cert}: {e} (expected a PEM certificate)"))?;
        if chain.is_empty() {
            return Err(format!("--tls-cert {cert}: no certificate in it (expected PEM)"));
        }
        let key = PrivateKeyDer::from_pem_file(key)
            .map_err(|e| format!("--tls-key {key}: {e} (expected a PEM private key)"))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| format!("--tls-cert/--tls-key: {e}"))?;
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
        Ok(Endpoint { listener, tls: TlsAcceptor::from(Arc::new(config)) })
    }

    pub fn port(&self) -> u16 {
        self.listener.local_addr().map(|a| a.port()).unwrap_or(0)
    }

    /// Serves until dropped.
    pub async fn serve(self, client: kube::Client) {
        loop {
            let Ok((tcp, _)) = self.listener.accept().await else { continue };
            let tls = self.tls.clone();
            let client = client.clone();
            tokio::spawn(async move {
                let Ok(stream) = tls.accept(tcp).await else { return };
                let service = hyper::service::service_fn(move |req| {
                    let client = client.clone();
                    async move { Ok::<_, Infallible>(handle(client, req).await) }
                });
                let conn = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .with_upgrades();
                if let Err(e) = conn.await {
                    tracing::debug!("fake kubelet endpoint: {e}");
                }
            });
        }
    }
}

fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut r = Response::new(Body::from(text));
    *r.status_mut() = status;
    r
}

/// `/exec/NAMESPACE/POD/CONTAINER`.
fn route(path: &str) -> Option<(&str, &str, &str)> {
    match path.trim_matches('/').split('/').collect::<Vec<_>>().as_slice() {
        ["exec", ns, pod, container] => Some((ns, pod, container)),
        _ => None,
    }
}

async fn handle(client: kube::Client, mut req: Request<Incoming>) -> Response<Body> {
    let path = req.uri().path().to_string();
    let Some((ns, pod, container)) = route(&path) else {
        return plain(
            StatusCode::NOT_FOUND,
            format!("the fake kubelet serves only /exec, not {path}"),
        );
    };
    let (ns, pod, container) = (ns.to_string(), pod.to_string(), container.to_string());
    let argv = crate::kubelet::exec::command(req.uri().query());
    if argv.is_empty() {
        return plain(StatusCode::BAD_REQUEST, "you must specify at least 1 command".into());
    }
    let p = match Api::<Pod>::namespaced(client, &ns).get_opt(&pod).await {
        Ok(Some(p)) => p,
        Ok(None) => return plain(StatusCode::NOT_FOUND, format!("pod {ns}/{pod} not found")),
        Err(e) => {
            let e = crate::cluster::trouble::brief(&e);
            return plain(StatusCode::SERVICE_UNAVAILABLE, format!("reading pod {ns}/{pod}: {e}"));
        }
    };
    let code = match crate::kubelet::exec::readiness(&p, Some(&container)) {
        Ok((_, code)) => code,
        Err(why) => return plain(StatusCode::BAD_REQUEST, why.to_string()),
    };
    let asked = crate::text::escape_controls(&argv.join(" ")).into_owned();
    crate::text::err_line(&format!(
        "fake kubelet: exec in {ns}/{pod}/{container}: {asked} → exit {code}"
    ));
    let Some(upgrade) = crate::kubelet::exec::websocket(&req) else {
        let text = crate::kubelet::exec::needs_websocket("the fake kubelet");
        return plain(StatusCode::BAD_REQUEST, text);
    };
    let said = format!("fake kubelet exec in {pod}/{container}: {asked}\n");
    crate::kubelet::exec::answer(&mut req, upgrade, code, said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_containers_exec_is_routed() {
        assert_eq!(route("/exec/ns/web-0/app"), Some(("ns", "web-0", "app")));
        assert_eq!(route("/exec/ns/web-0"), None);
        assert_eq!(route("/run/ns/web-0/app"), None);
        assert_eq!(route("/exec/ns/web-0/app/extra"), None);
    }
}
