//! The HTTP stack under every cluster client: kube-rs's own (`ClientBuilder::try_from`: TLS
//! from the kubeconfig, connect and write timeouts, the server's base URI, retries of the
//! server's transient errors, credentials, extra headers), built here only to set TCP_NODELAY,
//! which kube-rs leaves off. Off, the first request on every new connection waited about 40 ms:
//! written right after the TLS handshake's last message, Nagle's algorithm held it until the
//! server acknowledged that message, which a loopback kube-apiserver did only when its delayed
//! ACK fired (seen with strace: the request's write, then 41–48 ms to the answer; each watch is
//! a connection of its own, so the console's start-up paid it twice in a row).
//!
//! Written by hand because kube-rs builds its connector inside and offers no way to set a
//! socket option on it. Of kube-rs's request tracing, what the log needs is kept: an answer of
//! the server's errors (5xx) and a request that failed, as kube-rs words them. Its retries are
//! kept too, but for an eviction's 429 (see [`Retries`]).

use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::client::{ClientBuilder, ConfigExt, DynBody};
use tower::{BoxError, ServiceBuilder, ServiceExt};

/// The service a [`ClientBuilder`] of [`builder`] wraps.
pub type Stack = tower::util::BoxService<
    hyper::Request<kube::client::Body>,
    hyper::Response<Box<DynBody>>,
    BoxError,
>;

/// kube-rs's client stack for `config`, on connections with TCP_NODELAY.
pub fn builder(config: &kube::Config) -> Result<ClientBuilder<Stack>, kube::Error> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    let https = config.rustls_https_connector_with_connector(http)?;
    let mut connector = hyper_timeout::TimeoutConnector::new(https);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let client: hyper_util::client::legacy::Client<_, kube::client::Body> =
        hyper_util::client::legacy::Builder::new(TokioExecutor::new()).build(connector);
    let retry = config.default_retry.then(|| {
        tower::retry::RetryLayer::new(Retries(kube::client::retry::RetryPolicy::server_retry()))
    });
    let service = ServiceBuilder::new()
        .map_result(said)
        .layer(config.base_uri_layer())
        .option_layer(retry)
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .service(client)
        .map_response(|r| {
            r.map(|body| {
                Box::new(http_body_util::BodyExt::map_err(body, BoxError::from)) as Box<DynBody>
            })
        })
        .boxed();
    Ok(ClientBuilder::new(service, config.default_namespace.clone()))
}

/// Logs a server error (5xx) or a failed request, as kube-rs's tracing layer did.
fn said<B>(r: Result<hyper::Response<B>, BoxError>) -> Result<hyper::Response<B>, BoxError> {
    match &r {
        Ok(answer) if answer.status().is_server_error() => {
            tracing::error!("failed with status {}", answer.status());
        }
        Ok(_) => {}
        Err(e) => tracing::error!("failed with error {e}"),
    }
    r
}

/// kube-rs's retries of the server's transient errors (429, 503, 504, with backoff), except an
/// eviction's 429: that is a disruption budget's refusal, which the caller tells and asks again
/// on its own schedule. Retried here, a refused eviction would hang for minutes (fifteen tries,
/// the backoff doubling from 5 ms) and could land later, unannounced, once the budget allowed.
/// Whether `path` goes through the API server to a pod (`…/pods/NAME[:PORT]/proxy…`).
fn pod_proxy(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    parts.iter().position(|p| *p == "pods").is_some_and(|i| parts.get(i + 2) == Some(&"proxy"))
}

#[derive(Clone)]
struct Retries(kube::client::retry::RetryPolicy);

impl<Res> tower::retry::Policy<hyper::Request<kube::client::Body>, hyper::Response<Res>, BoxError>
    for Retries
{
    type Future = tokio::time::Sleep;

    fn retry(
        &mut self,
        req: &mut hyper::Request<kube::client::Body>,
        result: &mut Result<hyper::Response<Res>, BoxError>,
    ) -> Option<Self::Future> {
        let refused = matches!(result, Ok(r) if r.status() == hyper::StatusCode::TOO_MANY_REQUESTS);
        if refused && req.uri().path().ends_with("/eviction") {
            return None;
        }
        // A pod's own answer through the proxy (a gate's "not yet"): the gate's to judge.
        if pod_proxy(req.uri().path()) {
            return None;
        }
        self.0.retry(req, result)
    }

    fn clone_request(
        &mut self,
        req: &hyper::Request<kube::client::Body>,
    ) -> Option<hyper::Request<kube::client::Body>> {
        <kube::client::retry::RetryPolicy as tower::retry::Policy<
            hyper::Request<kube::client::Body>,
            hyper::Response<Res>,
            BoxError,
        >>::clone_request(&mut self.0, req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::retry::Policy;

    fn ask(policy: &mut Retries, path: &str, code: u16) -> bool {
        let mut req = hyper::Request::post(path).body(kube::client::Body::empty()).unwrap();
        let res = hyper::Response::builder().status(code).body(()).unwrap();
        policy.retry(&mut req, &mut Ok(res)).is_some()
    }

    #[tokio::test]
    async fn an_evictions_429_is_not_retried_and_the_rest_are() {
        let mut p = Retries(kube::client::retry::RetryPolicy::server_retry());
        let eviction = "/api/v1/namespaces/default/pods/web-2/eviction";
        assert!(!ask(&mut p, eviction, 429), "a budget's refusal is the caller's to tell");
        assert!(ask(&mut p, eviction, 503), "an unavailable server is retried");
        assert!(ask(&mut p, "/api/v1/namespaces/default/pods", 429), "throttling is retried");
        assert!(!ask(&mut p, "/api/v1/namespaces/default/pods", 404));
        let gate = "/api/v1/namespaces/default/pods/web-2:9644/proxy/v1/ready";
        assert!(!ask(&mut p, gate, 503), "a gate's not-yet is the gate's to judge");
        assert!(!ask(&mut p, gate, 429));
        assert!(ask(&mut p, "/api/v1/namespaces/default/pods/proxy", 503), "a pod named proxy");
    }
}
