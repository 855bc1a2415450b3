//! A tower layer on the backend's client that tells the connection's truth as the requests
//! themselves see it, below kube-rs's watcher, and routes what it sees to the watcher that made
//! the request (a [`Router`] keyed by the watch's path and selectors):
//!
//! - a watch request answered with a success status means the server is reachable, at once.
//!   kube-rs's watcher restarts a broken watch from its resourceVersion and yields nothing when
//!   that succeeds, so on a quiet set nothing above it would know the connection is back;
//! - every frame of a watch (an event, or a bookmark, which kube-rs consumes silently) says the
//!   watch is alive;
//! - a watch silent for longer than [`IDLE_LIMIT`] (twice the API server's bookmark interval)
//!   ends with a [`Stalled`] error, so the watcher restarts it instead of showing a stream that
//!   stopped (headers sent, then nothing) as live forever.
//!
//! Written by hand because no library reports these: kube-rs exposes neither a watch's restart
//! nor its bookmarks, and tower-http's timeouts bound a whole response, not the silence between
//! the frames of an endless one.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use http_body::{Body, Frame, SizeHint};
use hyper::{Request, Response};
use tower::{BoxError, Layer, Service};

/// The API server sends a bookmark on every watch about once a minute (the watch cache's
/// `defaultBookmarkFrequency`; `sim --serve` does the same).
pub const BOOKMARK_INTERVAL: Duration = Duration::from_secs(60);

/// A watch silent for longer than this is restarted: twice the bookmark interval.
pub const IDLE_LIMIT: Duration = Duration::from_secs(2 * BOOKMARK_INTERVAL.as_secs());

/// What a probe saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// A watch request was answered with a success status: the server is reachable.
    WatchOpened,
    /// A frame arrived on a watch (an event or a bookmark): it is alive.
    Frame,
    /// A watch was silent for [`IDLE_LIMIT`] and is being restarted.
    Stalled,
}

/// Where a probe reports.
pub type Report = Arc<dyn Fn(Signal) + Send + Sync>;

/// Which watch a request is: its path and its label and field selectors (decoded).
pub fn route_key(path: &str, labels: Option<&str>, fields: Option<&str>) -> String {
    format!("{path}|{}|{}", labels.unwrap_or_default(), fields.unwrap_or_default())
}

/// The key of a request, from its URI.
fn key_of(uri: &hyper::Uri) -> String {
    let (mut labels, mut fields) = (None, None);
    for (k, v) in form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes()) {
        match &*k {
            "labelSelector" => labels = Some(v.into_owned()),
            "fieldSelector" => fields = Some(v.into_owned()),
            _ => {}
        }
    }
    route_key(uri.path(), labels.as_deref(), fields.as_deref())
}

/// Who hears about which watch: each watcher registers its key while it runs.
#[derive(Default)]
pub struct Router {
    routes: std::sync::Mutex<Vec<(String, u64, Report)>>,
    next: std::sync::atomic::AtomicU64,
}

/// A watcher's registration; dropping it unregisters.
pub struct Route {
    router: Arc<Router>,
    id: u64,
}

impl Drop for Route {
    fn drop(&mut self) {
        if let Ok(mut r) = self.router.routes.lock() {
            r.retain(|(_, id, _)| *id != self.id);
        }
    }
}

impl Router {
    /// Signals for watches of `key` go to `report` until the returned [`Route`] is dropped.
    pub fn register(self: &Arc<Router>, key: String, report: Report) -> Route {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Ok(mut r) = self.routes.lock() {
            r.push((key, id, report));
        }
        Route { router: Arc::clone(self), id }
    }

    /// Tells every watcher registered for `key`.
    fn tell(&self, key: &str, sig: Signal) {
        let reports: Vec<Report> = match self.routes.lock() {
            Ok(r) => r.iter().filter(|(k, _, _)| k == key).map(|(_, _, f)| Arc::clone(f)).collect(),
            Err(_) => Vec::new(),
        };
        for f in reports {
            f(sig);
        }
    }
}

/// The error a stalled watch ends with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the watch was silent for {secs} s (the server sends a bookmark every minute): restarted")]
pub struct Stalled {
    pub secs: u64,
}

/// The layer: one on the backend's client, reporting through its [`Router`].
#[derive(Clone)]
pub struct ProbeLayer {
    router: Arc<Router>,
    idle: Duration,
}

impl ProbeLayer {
    pub fn new(router: Arc<Router>) -> ProbeLayer {
        ProbeLayer { router, idle: IDLE_LIMIT }
    }
}

impl<S> Layer<S> for ProbeLayer {
    type Service = Probe<S>;

    fn layer(&self, inner: S) -> Probe<S> {
        Probe { inner, router: Arc::clone(&self.router), idle: self.idle }
    }
}

/// The service [`ProbeLayer`] makes.
#[derive(Clone)]
pub struct Probe<S> {
    inner: S,
    router: Arc<Router>,
    idle: Duration,
}

/// Whether a request is a watch (`?watch=true` or `?watch=1`).
fn is_watch(uri: &hyper::Uri) -> bool {
    uri.query().is_some_and(|q| {
        q.split('&').any(|kv| matches!(kv, "watch=true" | "watch=1" | "watch=True"))
    })
}

impl<S, B> Service<Request<kube::client::Body>> for Probe<S>
where
    S: Service<Request<kube::client::Body>, Response = Response<B>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<Watched<B>>;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Self::Response, BoxError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Request<kube::client::Body>) -> Self::Future {
        let watch = is_watch(req.uri());
        let key = if watch { key_of(req.uri()) } else { String::new() };
        let router = Arc::clone(&self.router);
        let report: Report = Arc::new(move |sig| router.tell(&key, sig));
        let idle = self.idle;
        let fut = self.inner.call(req);
        Box::pin(async move {
            let res = fut.await.map_err(Into::into)?;
            let watching = watch && res.status().is_success();
            if watching {
                report(Signal::WatchOpened);
            }
            Ok(res.map(|body| Watched::new(body, watching.then_some((report, idle)))))
        })
    }
}

/// A response body; for a watch, its frames reported and its silence bounded.
pub struct Watched<B> {
    inner: B,
    watch: Option<Watch>,
}

struct Watch {
    report: Report,
    idle: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    ended: bool,
}

impl<B> Watched<B> {
    fn new(inner: B, watch: Option<(Report, Duration)>) -> Watched<B> {
        let watch = watch.map(|(report, idle)| Watch {
            report,
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
            ended: false,
        });
        Watched { inner, watch }
    }
}

impl<B> Body for Watched<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        let Some(w) = this.watch.as_mut() else {
            return Pin::new(&mut this.inner).poll_frame(cx).map_err(Into::into);
        };
        if w.ended {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                (w.report)(Signal::Frame);
                let deadline = tokio::time::Instant::now() + w.idle;
                w.timer.as_mut().reset(deadline);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(other) => Poll::Ready(other.map(|r| r.map_err(Into::into))),
            Poll::Pending => match w.timer.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    w.ended = true;
                    (w.report)(Signal::Stalled);
                    let secs = w.idle.as_secs();
                    Poll::Ready(Some(Err(Box::new(Stalled { secs }))))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.watch.as_ref().is_some_and(|w| w.ended) || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_is_routed_by_its_path_and_selectors() {
        let uri: hyper::Uri =
            "/api/v1/namespaces/d/pods?&watch=true&labelSelector=app%3Dweb&resourceVersion=9"
                .parse()
                .unwrap();
        assert_eq!(key_of(&uri), route_key("/api/v1/namespaces/d/pods", Some("app=web"), None));
        let router = Arc::new(Router::default());
        let heard = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let h = Arc::clone(&heard);
        let route = router.register(
            key_of(&uri),
            Arc::new(move |_| {
                h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }),
        );
        router.tell(&key_of(&uri), Signal::Frame);
        router.tell("/api/v1/namespaces/d/events||", Signal::Frame);
        assert_eq!(heard.load(std::sync::atomic::Ordering::SeqCst), 1, "only its own watch");
        drop(route);
        router.tell(&key_of(&uri), Signal::Frame);
        assert_eq!(heard.load(std::sync::atomic::Ordering::SeqCst), 1, "unregistered");
    }

    #[test]
    fn watches_are_told_by_their_query() {
        let uri = |s: &str| s.parse::<hyper::Uri>().unwrap();
        assert!(is_watch(&uri("/api/v1/namespaces/d/pods?watch=true&resourceVersion=5")));
        assert!(is_watch(&uri("/api/v1/pods?labelSelector=a%3Db&watch=1")));
        assert!(!is_watch(&uri("/api/v1/namespaces/d/pods?limit=500")));
        assert!(!is_watch(&uri("/api/v1/namespaces/d/pods")));
    }
}
