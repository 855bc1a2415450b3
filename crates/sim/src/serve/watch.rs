//! Watches as the API server streams them: one JSON event per line (`ADDED`, `MODIFIED`,
//! `DELETED`, `BOOKMARK`, `ERROR`), from a resourceVersion (or from a fresh list, with the
//! current objects as `ADDED`), filtered by namespace and selectors, bookmarks when asked,
//! `sendInitialEvents` (`true`: the current objects, then the bookmark that ends them; `false`
//! without a resourceVersion: from the current revision; refused as the reproduced release
//! refuses it: see [`streams_lists`]),
//! `timeoutSeconds`, and `410 Gone` as an `ERROR` event for a version the history no longer
//! holds. Tables when `kubectl get -w` asks for them.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use serde_json::{Value, json};

use super::MAX_WATCHES;
use super::ctx::Ctx;
use super::hub::{Change, Next, fields_of, selectable, to_json, write_json};
use super::resources::{Def, Res};
use super::route::{Query, Route};
use super::selector::{Fields, Labels};
use super::status::Status;
use super::table::{self, Include};
use super::verbs::decode;
use crate::backend::Object;

/// Bookmarks go out this often when asked for: once a minute, as the API server's watch cache
/// sends them (`defaultBookmarkFrequency`); a client may take two minutes of silence for a stalled
/// watch.
const BOOKMARK_EVERY: Duration = Duration::from_secs(60);
/// A watch without `timeoutSeconds` ends after this (the API server picks 30–60 minutes).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

struct Filter {
    res: Res,
    namespace: Option<String>,
    labels: Labels,
    fields: Fields,
}

impl Filter {
    fn passes(&self, c: &Change) -> bool {
        c.res == self.res
            && self.namespace.as_ref().is_none_or(|ns| *ns == c.namespace)
            && self.labels.matches(c.labels.as_ref())
            && self.fields.matches(|k| {
                c.fields.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone()).unwrap_or_default()
            })
    }

    fn passes_object(&self, o: &Object) -> bool {
        let f = fields_of(o);
        self.labels.matches(o.metadata().labels.as_ref())
            && self.fields.matches(|k| {
                f.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone()).unwrap_or_default()
            })
    }
}

/// Counts a watch while it is open.
struct Slot(Arc<Ctx>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.watches.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Stream {
    ctx: Arc<Ctx>,
    def: &'static Def,
    filter: Filter,
    cursor: u64,
    drops: u64,
    deadline: tokio::time::Instant,
    bookmarks: bool,
    table: Option<Include>,
    out: VecDeque<Bytes>,
    done: bool,
    /// A watch of namespaces: those already said, and the wake-up of an API creation.
    namespaces: Option<Namespaces>,
    _slot: Slot,
}

/// A namespace exists while an object is in it or once created through the API; the served
/// simulator deletes none. Its watch says each new one `ADDED` (from a change in a namespace
/// not yet said, or a creation).
struct Namespaces {
    known: BTreeSet<String>,
    added: tokio::sync::watch::Receiver<u64>,
}

/// Starts a watch; the response streams until the timeout, a dropped watch or the client goes.
pub async fn watch(
    ctx: &Arc<Ctx>,
    route: &Route,
    q: &Query,
    as_table: bool,
) -> Result<Body, Status> {
    let unstreamed = (!ctx.streams_lists).then(|| super::major_minor(&ctx.git_version).1);
    let start = start(q, unstreamed)?;
    let def = route.def;
    let kind = super::verbs::obj_kind(def.res);
    let filter = Filter {
        res: def.res,
        namespace: route.namespace.clone(),
        labels: Labels::parse(q.get("labelSelector").unwrap_or_default())?,
        fields: Fields::parse(q.get("fieldSelector").unwrap_or_default(), selectable(def.res))?,
    };
    let table = if as_table { Some(Include::parse(q.get("includeObject"))?) } else { None };
    if ctx.watches.fetch_add(1, Ordering::SeqCst) >= MAX_WATCHES {
        ctx.watches.fetch_sub(1, Ordering::SeqCst);
        return Err(Status::too_many(format!(
            "too many open watches (at most {MAX_WATCHES}): close some and try again"
        )));
    }
    let slot = Slot(Arc::clone(ctx));
    let timeout = q.number("timeoutSeconds")?.map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    let mut s = Stream {
        ctx: Arc::clone(ctx),
        def,
        filter,
        cursor: 0,
        drops: ctx.hub.drops(),
        deadline: tokio::time::Instant::now() + timeout,
        bookmarks: q.flag("allowWatchBookmarks"),
        table,
        out: VecDeque::new(),
        done: false,
        namespaces: None,
        _slot: slot,
    };
    let initial = matches!(start, Start::Listed { .. });
    match (start, kind) {
        (Start::Listed { bookmark }, Some(kind)) => {
            let ns = route.namespace.clone();
            let (items, list_rv) =
                ctx.on_sim(move |sim| sim.rest_list(kind, ns.as_deref())).await?;
            let shown: Vec<&Object> = items.iter().filter(|o| s.filter.passes_object(o)).collect();
            for o in shown {
                if s.table.is_some() {
                    s.push_event("ADDED", to_json(o), o);
                } else {
                    // Written straight from the object, as the changes after it are.
                    s.out.push_back(event_line("ADDED", |b| write_json(b, o)));
                }
            }
            s.cursor = list_rv;
            if bookmark {
                s.bookmark(true);
            }
        }
        (Start::Listed { .. } | Start::Now, _) => s.cursor = ctx.hub.latest(),
        (Start::From(rv), _) => s.cursor = rv,
    }
    if def.res == Res::Namespaces {
        let mut added = ctx.namespaces_added.subscribe();
        added.borrow_and_update();
        let names = ctx.on_sim(|sim| sim.namespaces()).await?;
        let mut known: BTreeSet<String> = names.into_iter().collect();
        known.extend(super::ctx::created(ctx).into_keys());
        if initial {
            let start = ctx.hub.now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
            for n in &known {
                s.namespace_added(n, &start);
            }
        }
        s.namespaces = Some(Namespaces { known, added });
    }
    let stream = futures::stream::unfold(s, |mut s| async move {
        loop {
            // A stalled watch holds what it has (`api-stall-watches`); the connection stays.
            if let Some(until) = s.ctx.hub.stalled_until(s.def.plural) {
                tokio::time::sleep_until(until.into()).await;
                continue;
            }
            if let Some(b) = s.out.pop_front() {
                return Some((Ok::<Bytes, std::convert::Infallible>(b), s));
            }
            if s.done {
                return None;
            }
            s.fill().await;
        }
    });
    Ok(Body::from_stream(stream))
}

impl Stream {
    fn line(&mut self, v: &Value) {
        let mut bytes = serde_json::to_vec(v).unwrap_or_default();
        bytes.push(b'\n');
        self.out.push_back(Bytes::from(bytes));
    }

    fn push_event(&mut self, kind: &str, value: Value, obj: &Object) {
        let object = match self.table {
            None => value,
            Some(include) => {
                let rows = vec![table::cells(obj, self.ctx.hub.now())];
                table::table(self.def.res, &[value], rows, &self.cursor.to_string(), include)
            }
        };
        self.line(&json!({"type": kind, "object": object}));
    }

    fn bookmark(&mut self, initial_end: bool) {
        let mut meta = json!({"resourceVersion": self.cursor.to_string()});
        if initial_end && let Some(m) = meta.as_object_mut() {
            m.insert("annotations".into(), json!({"k8s.io/initial-events-end": "true"}));
        }
        let object =
            json!({"kind": self.def.kind, "apiVersion": self.def.api_version(), "metadata": meta});
        self.line(&json!({"type": "BOOKMARK", "object": object}));
    }

    fn error(&mut self, st: &Status) {
        self.line(&json!({"type": "ERROR", "object": st.to_json()}));
        self.done = true;
    }

    /// `ADDED` of namespace `name`, created at `at`.
    fn namespace_added(&mut self, name: &str, at: &str) {
        let v = super::special::namespace_json(name, at, &self.ctx.cluster);
        let object = match self.table {
            None => v,
            Some(include) => {
                let meta = serde_json::from_value(v["metadata"].clone()).unwrap_or_default();
                let rows = vec![table::namespace_cells(&meta, self.ctx.hub.now())];
                table::table(self.def.res, &[v], rows, &self.cursor.to_string(), include)
            }
        };
        self.line(&json!({"type": "ADDED", "object": object}));
    }

    /// The namespaces not said yet among `seen` and those created through the API.
    fn new_namespaces(&mut self, seen: Vec<String>) {
        let Some(ns) = self.namespaces.as_mut() else { return };
        let mut fresh: Vec<String> = Vec::new();
        let created = super::ctx::created(&self.ctx);
        for n in seen.into_iter().chain(created.keys().cloned()) {
            if !n.is_empty() && ns.known.insert(n.clone()) {
                fresh.push(n);
            }
        }
        let now = self.ctx.hub.now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
        for n in fresh {
            let at = created.get(&n).cloned().unwrap_or_else(|| now.clone());
            self.namespace_added(&n, &at);
        }
    }

    /// Waits for the next changes (or a bookmark, the end, an error) and queues their lines.
    async fn fill(&mut self) {
        let now = tokio::time::Instant::now();
        if now >= self.deadline {
            // As the API server does, a last bookmark before the timeout closes the watch.
            if self.bookmarks {
                self.bookmark(false);
            }
            self.done = true;
            return;
        }
        let wait = (self.deadline - now).min(BOOKMARK_EVERY);
        let ctx = Arc::clone(&self.ctx);
        let next = match self.namespaces.as_mut() {
            None => ctx.hub.next(self.cursor, self.drops, wait).await,
            Some(ns) => {
                tokio::select! {
                    next = ctx.hub.next(self.cursor, self.drops, wait) => next,
                    _ = ns.added.changed() => Next::Changes(Vec::new()),
                }
            }
        };
        if self.namespaces.is_some() {
            let seen = match &next {
                Next::Changes(cs) => cs.iter().map(|c| c.namespace.clone()).collect(),
                _ => Vec::new(),
            };
            self.new_namespaces(seen);
        }
        match next {
            Next::Changes(changes) => {
                for c in changes {
                    self.cursor = self.cursor.max(c.rv);
                    if !self.filter.passes(&c) {
                        continue;
                    }
                    match self.table {
                        None => {
                            let json = &c.json;
                            self.out.push_back(event_line(c.kind, |b| b.extend_from_slice(json)));
                        }
                        Some(_) => {
                            let v: Value = serde_json::from_slice(&c.json).unwrap_or(Value::Null);
                            if let Ok(obj) = decode(self.def, v.clone()) {
                                self.push_event(c.kind, v, &obj);
                            }
                        }
                    }
                }
            }
            Next::Expired { oldest } => {
                let st = Status::expired(format!(
                    "too old resource version: {} ({oldest})",
                    self.cursor
                ));
                self.error(&st);
            }
            Next::Dropped => self.done = true,
            Next::Idle => {
                if self.bookmarks {
                    self.bookmark(false);
                }
            }
        }
    }
}

/// Where a watch starts, read from its parameters as kube-apiserver reads them.
#[derive(Debug, PartialEq, Eq)]
enum Start {
    /// With the current objects as `ADDED` (no resourceVersion, or `0`; or `sendInitialEvents`,
    /// ended by a `BOOKMARK` marked as the end of the initial events).
    Listed { bookmark: bool },
    /// From the current revision, nothing before it (`sendInitialEvents=false` and no
    /// resourceVersion).
    Now,
    /// After that resourceVersion.
    From(u64),
}

/// A watch's start; refused as kube-apiserver refuses it: `sendInitialEvents` where the release
/// does not stream lists (`unstreamed`: its minor version), or without
/// `resourceVersionMatch=NotOlderThan`; that match without it; a resourceVersion that is not one.
fn start(q: &Query, unstreamed: Option<&str>) -> Result<Start, Status> {
    let send = q.get("sendInitialEvents");
    let invalid = |m: String| Err(Status::new(422, "Invalid", m));
    if let (Some(_), Some(minor)) = (send, unstreamed) {
        return invalid(format!(
            "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the \
             WatchList feature gate is enabled (off by default in 1.{minor})"
        ));
    }
    match (send.is_some(), q.get("resourceVersionMatch")) {
        (true, Some("NotOlderThan")) | (false, None) => {}
        (true, _) => {
            return invalid(
                "resourceVersionMatch: Forbidden: sendInitialEvents requires setting \
                 resourceVersionMatch to NotOlderThan"
                    .into(),
            );
        }
        (false, Some(_)) => {
            return invalid(
                "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch \
                 unless sendInitialEvents is provided"
                    .into(),
            );
        }
    }
    // An empty resourceVersion is none (`Query::get`).
    let rv = q.get("resourceVersion");
    Ok(match (send, rv) {
        (Some(_), _) if q.flag("sendInitialEvents") => Start::Listed { bookmark: true },
        (Some(_), None | Some("0")) => Start::Now,
        (None, None | Some("0")) => Start::Listed { bookmark: false },
        (_, Some(rv)) => Start::From(rv.parse().map_err(|_| {
            Status::bad_request(format!(
                "resourceVersion: Invalid value: {rv:?}: expected a resourceVersion from a list \
                 or a watch"
            ))
        })?),
    })
}

/// Whether the release the simulator reproduces (its minor) answers a streamed list (a watch
/// with `sendInitialEvents`): its `WatchList` feature gate is off by default in 1.27–1.31 and
/// 1.33, which refuse one as invalid (422), so that a client's fallback to lists can be tried
/// against the simulator.
pub fn streams_lists(minor: &str) -> bool {
    minor.parse::<u32>().is_ok_and(|m| !((27..=31).contains(&m) || m == 33))
}

/// One watch event's line, `{"type":KIND,"object":…}`, the object written by `object`.
fn event_line(kind: &str, object: impl FnOnce(&mut Vec<u8>)) -> Bytes {
    let mut bytes = format!("{{\"type\":\"{kind}\",\"object\":").into_bytes();
    object(&mut bytes);
    bytes.extend_from_slice(b"}\n");
    Bytes::from(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start_of(q: &str, unstreamed: Option<&str>) -> Result<Start, u16> {
        start(&Query::parse(Some(q)), unstreamed).map_err(|s| s.code)
    }

    #[test]
    fn a_watch_starts_where_kube_apiserver_would_start_it() {
        let streamed = "sendInitialEvents=true&resourceVersionMatch=NotOlderThan";
        assert_eq!(start_of(streamed, None), Ok(Start::Listed { bookmark: true }));
        assert_eq!(
            start_of(&format!("{streamed}&resourceVersion=0"), None),
            Ok(Start::Listed { bookmark: true })
        );
        let from_now = "sendInitialEvents=false&resourceVersionMatch=NotOlderThan";
        assert_eq!(start_of(from_now, None), Ok(Start::Now));
        assert_eq!(start_of(&format!("{from_now}&resourceVersion="), None), Ok(Start::Now));
        assert_eq!(start_of(&format!("{from_now}&resourceVersion=7"), None), Ok(Start::From(7)));
        assert_eq!(start_of("", None), Ok(Start::Listed { bookmark: false }));
        assert_eq!(start_of("resourceVersion=0", None), Ok(Start::Listed { bookmark: false }));
        assert_eq!(start_of("resourceVersion=12", None), Ok(Start::From(12)));
    }

    #[test]
    fn a_watch_kube_apiserver_refuses_is_refused_as_it_refuses_it() {
        // Either value of sendInitialEvents, where the release does not stream lists.
        for send in ["true", "false"] {
            let q = format!("sendInitialEvents={send}&resourceVersionMatch=NotOlderThan");
            assert_eq!(start_of(&q, Some("33")), Err(422), "{q}");
            assert!(start_of(&q, None).is_ok(), "{q}");
        }
        assert_eq!(start_of("sendInitialEvents=false", None), Err(422), "needs the match");
        assert_eq!(
            start_of("sendInitialEvents=true&resourceVersionMatch=Exact", None),
            Err(422),
            "only NotOlderThan"
        );
        assert_eq!(start_of("resourceVersionMatch=NotOlderThan", None), Err(422), "needs it");
        assert_eq!(start_of("resourceVersion=abc", None), Err(400));
    }
}
