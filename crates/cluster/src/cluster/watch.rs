//! Running one kube-rs watcher (`runtime::watcher`, with a backoff that retries within seconds)
//! and turning its events into [`BackendEvent`]s: a complete listing (`Init` … `InitDone`,
//! buffered and sent whole, so objects deleted during a gap disappear; its progress said every
//! 500 objects), then each change. What the console never reads is pruned first ([`lean`]).
//!
//! The listing is streamed (a streaming list: one watch with `sendInitialEvents`, which the
//! server answers from its cache while the client decodes; one request instead of a list per
//! 500 objects and a watch) until a server shows it does not stream lists: it refuses the watch
//! as invalid, or its watch never ends its initial events ([`STREAM_QUIET`]). Then this watcher
//! and every later one of the backend list in pages; nothing of it reaches the screen.
//!
//! Each watcher has a client of its own with a [`probe`](super::probe) and a [`Slot`] in the
//! connection's state: a listing, a watch opened or a frame of a watch (a bookmark too) says
//! the server is reachable; a failure says unreachable or answered with an error (`trouble`);
//! a 403 makes the kind unreadable (named with the permission), a 401 asks for credentials.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::Resource;
use kube::api::Api;
use kube::runtime::utils::Backoff;
use kube::runtime::{WatchStreamExt, watcher};
use serde::de::DeserializeOwned;

use super::conn::{Conn, Outcome, Slot};
use super::probe::{Route, Signal, route_key};
use super::{Clients, lean};
use crate::backend::{BackendEvent, EventKind, ObjKind, Object, Scope};

/// Retry delays: 0.5 s doubling to at most 4 s, so the console is back within seconds of the
/// server (kube-rs's default reaches 30 s).
#[derive(Debug, Clone, Default)]
pub struct QuickBackoff {
    next: Option<Duration>,
}

impl Iterator for QuickBackoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let d =
            self.next.map_or(Duration::from_millis(500), |d| (d * 2).min(Duration::from_secs(4)));
        self.next = Some(d);
        Some(d)
    }
}

impl Backoff for QuickBackoff {
    fn reset(&mut self) {
        self.next = None;
    }
}

/// A change a watcher reports, for the timeline's derivation.
pub enum Seen<'a, K> {
    Listed(&'a [K]),
    Applied(&'a K),
    Deleted(&'a K),
}

/// One watcher: what it lists and watches, and how its objects reach the console.
pub struct Spec<K> {
    /// The API, given the watcher's own client.
    pub api: fn(kube::Client, Option<&str>) -> Api<K>,
    /// The namespace (`None`: every namespace).
    pub namespace: Option<String>,
    pub config: watcher::Config,
    pub kind: ObjKind,
    pub scope: Scope,
    /// What it reads, for messages: `pods in default`.
    pub what: String,
    /// Said after a 403 (`-A` without cluster-wide permission suggests `-n`).
    pub hint: Option<String>,
    pub wrap: fn(K) -> Object,
    /// The objects sent to the console: all (`None`), or those it keeps (the namespace's
    /// Events, of which the console holds the set's; the rest only make timeline lines).
    pub keep: Option<Keep<K>>,
    /// A complete listing sent as one per scope (`None`: one, in `scope`).
    pub split: Option<Split<K>>,
}

/// A listing sent as several (a group's Events, one listing about each set): every scope is
/// sent, empty or not, so what is gone from one leaves it; each object goes to the scope `of`
/// names (`None`: none of them, not sent).
pub struct Split<K> {
    pub scopes: Vec<Scope>,
    pub of: Place<K>,
}

/// Which of a [`Split`]'s scopes an object goes to.
pub type Place<K> = Box<dyn Fn(&K) -> Option<usize> + Send + Sync>;

/// Which objects of a watch go to the console.
pub type Keep<K> = Box<dyn Fn(&K) -> bool + Send + Sync>;

/// The namespaced or cluster-wide API of `K`.
pub fn api<K>(client: kube::Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    <K as Resource>::DynamicType: Default,
{
    match namespace {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    }
}

/// A watcher's slot in the connection's state, and its route from the probe (the watch's
/// opening and frames say the server is up), registered while the route lives.
pub(super) fn register<K: Resource>(
    spec: &Spec<K>,
    clients: &Clients,
    conn: &Arc<Conn>,
) -> (Arc<Slot>, Route) {
    let slot = Arc::new(conn.slot());
    let s = Arc::clone(&slot);
    let what = spec.what.clone();
    let report = Arc::new(move |sig: Signal| match sig {
        Signal::WatchOpened | Signal::Frame => s.ok(),
        Signal::Stalled => tracing::info!("watch {what}: silent too long, restarting it"),
    });
    let api = (spec.api)(clients.client(), spec.namespace.as_deref());
    let key = route_key(
        api.resource_url(),
        spec.config.label_selector.as_deref(),
        spec.config.field_selector.as_deref(),
    );
    (slot, clients.route(key, report))
}

/// Objects of a first listing between two progress reports at most (kube-rs's page size).
const PAGE: usize = 500;

/// A first listing of pods is sent as it arrives, at most this often (a frame at 60 Hz): the
/// grid draws the pods known so far instead of nothing until the last page.
const ARRIVING_EVERY: Duration = Duration::from_millis(16);

/// What of a first listing of pods the console has been sent so far (see [`ARRIVING_EVERY`]).
struct Arriving {
    /// Objects of the buffer sent.
    sent: usize,
    /// When the listing began or objects were last sent.
    last: tokio::time::Instant,
}

impl Arriving {
    fn new() -> Arriving {
        Arriving { sent: 0, last: tokio::time::Instant::now() }
    }

    /// Sends the buffer's objects not sent yet when a page of them waits or a frame's time has
    /// passed since the last, with how many have arrived (the objects the spec keeps, in its
    /// split's scopes; the complete listing follows as ever, and replaces them).
    fn offer<K: Clone>(&mut self, spec: &Spec<K>, conn: &Conn, buffer: &[K]) {
        let waiting = buffer.len().saturating_sub(self.sent);
        let due = self.last.elapsed() >= ARRIVING_EVERY;
        if waiting == 0 || !(due || waiting >= PAGE) {
            return;
        }
        let kept = buffer[self.sent..].iter().filter(|o| spec.keep.as_ref().is_none_or(|k| k(o)));
        // In the scopes the complete listing will have (a split's), flattened.
        let scoped = listings(spec, kept.cloned());
        let objects = scoped.into_iter().flat_map(|(_, objects)| objects).collect();
        conn.sink(BackendEvent::Listing { kind: spec.kind, so_far: buffer.len(), objects });
        self.sent = buffer.len();
        self.last = tokio::time::Instant::now();
    }
}

/// Runs a watcher until the stream ends (never, unless aborted). `derive` turns a change into
/// timeline entries (sent before the change itself, so the console compares with what it held
/// before); `listed` is told of each complete listing, after the console has it, with its
/// first object (`Some(None)`: it was empty; `None`: the kind turned out unreadable), and may
/// return an event to send after it (Synced).
pub async fn run<K>(
    spec: Spec<K>,
    clients: &Clients,
    conn: &Arc<Conn>,
    mut derive: impl FnMut(Seen<'_, K>) -> Vec<EventKind> + Send,
    mut listed: impl FnMut(Option<Option<&K>>) -> Option<BackendEvent> + Send,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    let (slot, _route) = register(&spec, clients, conn);
    let api = (spec.api)(clients.client(), spec.namespace.as_deref());
    let start = |streaming: bool| {
        let config = spec.config.clone();
        let config = if streaming { config.streaming_lists() } else { config };
        watcher(api.clone(), config).backoff(QuickBackoff::default()).boxed()
    };
    let mut streaming = clients.streams_lists();
    let mut stream = start(streaming);
    let mut buffer: Vec<K> = Vec::new();
    let mut first = true;
    // Between a listing's `Init` and its `InitDone`.
    let mut listing = false;
    // No listing complete yet (or the last watch expired): a streamed listing's watch is the
    // listing, and its failures are said as one.
    let mut unlisted = true;
    let mut refused: Option<String> = None;
    let mut arriving: Option<Arriving> = None;
    loop {
        let next = if streaming && listing {
            tokio::time::timeout(STREAM_QUIET, stream.next()).await
        } else {
            Ok(stream.next().await)
        };
        let unstreamed = match &next {
            Err(_) => Some(format!("no end of its initial events in {} s", STREAM_QUIET.as_secs())),
            Ok(Some(ev)) if streaming => not_streamed(ev),
            Ok(_) => None,
        };
        if let Some(why) = unstreamed {
            tracing::info!(
                "{}: the server does not stream lists ({why}); listing in pages",
                spec.what
            );
            clients.list_in_pages();
            (streaming, listing) = (false, false);
            stream = start(false);
            continue;
        }
        let Ok(Some(ev)) = next else { break };
        let ev = match ev {
            Ok(ev) => {
                slot.ok();
                ev
            }
            Err(e) => {
                // An expired watch lists again.
                unlisted |= matches!(&e, watcher::Error::WatchError(s) if s.code == 410);
                let (said, forbidden) = failed(&spec, &slot, e, refused, streaming && unlisted);
                refused = said;
                if forbidden && let Some(ev) = listed(None) {
                    conn.sink(ev);
                }
                continue;
            }
        };
        let (o, deleted) = match ev {
            watcher::Event::Init => {
                tracing::debug!("{}: listing", spec.what);
                buffer.clear();
                listing = true;
                // The grid draws a first listing of pods as it arrives.
                arriving = (first && spec.kind == ObjKind::Pod).then(Arriving::new);
                continue;
            }
            watcher::Event::InitApply(o) => {
                buffer.push(lean::prune(o));
                match arriving.as_mut() {
                    Some(a) => a.offer(&spec, conn, &buffer),
                    None if first && buffer.len().is_multiple_of(PAGE) => {
                        let (kind, so_far) = (spec.kind, buffer.len());
                        conn.sink(BackendEvent::Listing { kind, so_far, objects: Vec::new() });
                    }
                    None => {}
                }
                continue;
            }
            watcher::Event::InitDone => {
                first = false;
                arriving = None;
                (listing, unlisted) = (false, false);
                refused = None;
                conn.readable(spec.kind, None);
                let objects = std::mem::take(&mut buffer);
                for t in derive(Seen::Listed(&objects)) {
                    conn.note(t);
                }
                // The listing reaches the console before anything `listed` sets off (the set's
                // selector starts its pods' watchers, whose listings send `Synced`): a verb
                // synced before its set had arrived said the set was not found.
                let first_object = objects.first().cloned();
                let kept = objects.into_iter().filter(|o| spec.keep.as_ref().is_none_or(|k| k(o)));
                for (scope, objects) in listings(&spec, kept) {
                    conn.sink(BackendEvent::Listed { kind: spec.kind, scope, objects });
                }
                if let Some(ev) = listed(Some(first_object.as_ref())) {
                    conn.sink(ev);
                }
                continue;
            }
            watcher::Event::Apply(o) => (lean::prune(o), false),
            watcher::Event::Delete(o) => (lean::prune(o), true),
        };
        deliver(&spec, conn, &mut derive, o, deleted);
    }
}

/// A complete listing's objects kept, as the listings the console is sent: one in the spec's
/// scope, or one per scope of its split.
fn listings<K>(spec: &Spec<K>, kept: impl Iterator<Item = K>) -> Vec<(Scope, Vec<Object>)> {
    let Some(split) = &spec.split else {
        return vec![(spec.scope.clone(), kept.map(spec.wrap).collect())];
    };
    let mut each: Vec<(Scope, Vec<Object>)> =
        split.scopes.iter().map(|s| (s.clone(), Vec::new())).collect();
    for o in kept {
        if let Some((_, objects)) = (split.of)(&o).and_then(|i| each.get_mut(i)) {
            objects.push((spec.wrap)(o));
        }
    }
    each
}

/// One change seen (pruned already): its timeline entries first (`derive` compares with what
/// the console held before), then the object itself when `spec` keeps it.
pub(super) fn deliver<K>(
    spec: &Spec<K>,
    conn: &Conn,
    derive: &mut impl FnMut(Seen<'_, K>) -> Vec<EventKind>,
    o: K,
    deleted: bool,
) {
    let seen = if deleted { Seen::Deleted(&o) } else { Seen::Applied(&o) };
    for t in derive(seen) {
        conn.note(t);
    }
    if spec.keep.as_ref().is_none_or(|k| k(&o)) {
        let o = (spec.wrap)(o);
        conn.sink(if deleted { BackendEvent::Deleted(o) } else { BackendEvent::Applied(o) });
    }
}

/// A streamed listing whose watch has sent nothing for this long, before the bookmark that ends
/// its initial events, is taken for a server that ignores `sendInitialEvents` (one that sends
/// the objects and then nothing more would never end it): the watcher lists in pages instead.
const STREAM_QUIET: Duration = Duration::from_secs(5);

/// Why an event of a watcher streaming its listing says the server does not stream lists: the
/// watch refused as invalid (a server before 1.27 refuses `resourceVersionMatch` on a watch; one
/// with the `WatchList` gate off, by default 1.27–1.31 and 1.33, refuses `sendInitialEvents`).
fn not_streamed<K>(ev: &Result<watcher::Event<K>, watcher::Error>) -> Option<String> {
    match ev {
        Err(watcher::Error::WatchStartFailed(e)) => refused_as_invalid(e),
        _ => None,
    }
}

/// A watch request refused as invalid (422, or 400 before 1.27), in words for the log: how a
/// server says it does not stream lists, nor watch from now without a resourceVersion.
pub(super) fn refused_as_invalid(e: &kube::Error) -> Option<String> {
    match e {
        kube::Error::Api(s) if s.code == 422 || s.code == 400 => {
            Some(format!("{} {}", s.code, crate::text::escape_controls(&s.message)))
        }
        _ => None,
    }
}

/// A watcher's error: the connection's state, an unreadable kind, or a refusal said once.
/// Returns the last refusal said, and whether the kind is unreadable. `streamed`: the watch
/// that failed was the listing (a streamed one), said as a list.
pub(super) fn failed<K>(
    spec: &Spec<K>,
    slot: &Slot,
    e: watcher::Error,
    refused: Option<String>,
    streamed: bool,
) -> (Option<String>, bool) {
    let watch = if streamed { "list" } else { "watch" };
    let (verb, err) = match e {
        watcher::Error::InitialListFailed(e) => ("list", e),
        watcher::Error::WatchStartFailed(e) => (watch, e),
        // A line of the watch that is not an event: the server answered, with something wrong
        // (kube-rs reads one that is not even JSON of an event as a status, of no code).
        watcher::Error::WatchFailed(kube::Error::Api(s)) if s.code == 0 => {
            let e = serde::de::Error::custom("a watch line that is not an event");
            (watch, kube::Error::SerdeError(e))
        }
        watcher::Error::WatchFailed(e @ (kube::Error::SerdeError(_) | kube::Error::Api(_))) => {
            (watch, e)
        }
        watcher::Error::WatchFailed(e) => {
            // The stream broke (a reset, a stall): the watcher opens it again at once, and that
            // request says whether the server is there.
            tracing::info!("watch {}: {}", spec.what, super::trouble::brief(&e));
            return (refused, false);
        }
        watcher::Error::WatchError(s) if s.code == 410 => {
            // The watcher re-lists by itself; changes in the gap arrive folded.
            tracing::info!("watch {}: expired ({}), re-listing", spec.what, s.message);
            return (refused, false);
        }
        watcher::Error::WatchError(s) => ("watch", kube::Error::Api(s)),
        watcher::Error::NoResourceVersion => {
            let e = serde::de::Error::custom("a list without metadata.resourceVersion");
            ("list", kube::Error::SerdeError(e))
        }
    };
    let what = format!("{verb} {}", spec.what);
    match slot.failed(&what, &err) {
        Outcome::Retry | Outcome::Unauthorized => (refused, false),
        Outcome::Forbidden(message) => {
            let hint = spec.hint.as_ref().map(|h| format!("; {h}")).unwrap_or_default();
            slot.conn().readable(spec.kind, Some(format!("{message}{hint}")));
            (refused, true)
        }
        Outcome::Refused(message) if refused.as_ref() != Some(&message) => {
            slot.conn().sink(BackendEvent::Error(message.clone()));
            (Some(message), false)
        }
        Outcome::Refused(_) => (refused, false),
    }
}
