//! Watching from now: the changes of a kind, never the objects that exist. The timeline takes
//! the namespace's Warnings about the set's pods from it: their history is not news (the
//! selected pod's own Events, all of them, come from a watch of their own), and a busy
//! namespace holds thousands, which streaming them all at start sent beside the grid's data.
//!
//! kube-rs's watcher always lists first (or streams the list), so this is a small loop of its
//! own on the API's watch request:
//!
//! - where the server streams lists (the `WatchList` gate, on from 1.34), one watch with
//!   `sendInitialEvents=false` and no resourceVersion: the server starts at its current revision
//!   and sends only what changes after it;
//! - elsewhere (that watch refused as invalid, or the session lists in pages), a list of one
//!   object gives the collection's resourceVersion, and the watch starts there;
//! - the server ending the watch (its timeout) resumes it from the last resourceVersion seen (an
//!   object's or a bookmark's); that revision expired (410) starts from now again, and the log
//!   says the changes of the gap were not shown.
//!
//! Its failures are said as a watcher's ([`super::watch`]): the connection's state, the kind
//! unreadable after a 403, a refusal once; it retries on the watchers' backoff.

use std::fmt::Debug;
use std::sync::Arc;

use futures::StreamExt;
use kube::Resource;
use kube::api::{ListParams, WatchEvent};
use kube::runtime::utils::Backoff;
use kube::runtime::watcher;
use serde::de::DeserializeOwned;

use super::Clients;
use super::conn::Conn;
use super::watch::{QuickBackoff, Seen, Spec};
use crate::backend::EventKind;

/// How long the server may keep one watch open (kube-rs's watcher asks the same).
const WATCH_TIMEOUT_SECS: u32 = 290;

/// Watches `spec`'s kind from now until aborted: `derive` turns each change into timeline
/// entries; the changes `spec.keep` keeps go to the console.
pub async fn run<K>(
    spec: Spec<K>,
    clients: &Clients,
    conn: &Arc<Conn>,
    mut derive: impl FnMut(Seen<'_, K>) -> Vec<EventKind> + Send,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    let (slot, _route) = super::watch::register(&spec, clients, conn);
    let client = clients.client();
    let path = (spec.api)(client.clone(), spec.namespace.as_deref()).resource_url().to_string();
    let mut backoff = QuickBackoff::default();
    // Where the next watch starts: `None`, now.
    let mut from: Option<String> = None;
    let mut refused: Option<String> = None;
    let mut readable = false;
    loop {
        let opened = open::<K>(&client, &path, &spec, clients, from.as_deref()).await;
        let mut stream = match opened {
            Ok(stream) => stream,
            Err(Failure::NotStreamed(why)) => {
                tracing::info!(
                    "{}: the server does not watch from now without a resourceVersion ({why}); \
                     listing one object for it",
                    spec.what
                );
                clients.list_in_pages();
                continue;
            }
            Err(Failure::Error(e)) => {
                let (said, forbidden) = super::watch::failed(&spec, &slot, e, refused, false);
                refused = said;
                // Said unreadable: readable again once a watch opens.
                readable &= !forbidden;
                tokio::time::sleep(backoff.next().unwrap_or_default()).await;
                continue;
            }
        };
        slot.ok();
        if !readable {
            conn.readable(spec.kind, None);
            readable = true;
        }
        let mut broke = false;
        while let Some(item) = stream.next().await {
            let ev = match item {
                Ok(ev) => ev,
                Err(e) => {
                    let e = watcher::Error::WatchFailed(e);
                    refused = super::watch::failed(&spec, &slot, e, refused, false).0;
                    broke = true;
                    break;
                }
            };
            backoff.reset();
            refused = None;
            let (o, deleted) = match ev {
                WatchEvent::Added(o) | WatchEvent::Modified(o) => (o, false),
                WatchEvent::Deleted(o) => (o, true),
                WatchEvent::Bookmark(b) => {
                    from = Some(b.metadata.resource_version);
                    continue;
                }
                WatchEvent::Error(s) if s.code == 410 => {
                    tracing::info!(
                        "watch {}: expired ({}); watching from now, the changes in between \
                         not shown",
                        spec.what,
                        crate::text::escape_controls(&s.message)
                    );
                    from = None;
                    break;
                }
                WatchEvent::Error(s) => {
                    let e = watcher::Error::WatchError(s);
                    refused = super::watch::failed(&spec, &slot, e, refused, false).0;
                    broke = true;
                    break;
                }
            };
            if let Some(rv) = o.meta().resource_version.clone() {
                from = Some(rv);
            }
            super::watch::deliver(&spec, conn, &mut derive, super::lean::prune(o), deleted);
        }
        if broke {
            tokio::time::sleep(backoff.next().unwrap_or_default()).await;
        }
    }
}

/// Why a watch did not open.
enum Failure {
    /// The server refused `sendInitialEvents=false` as invalid: it does not stream lists.
    NotStreamed(String),
    Error(watcher::Error),
}

type Changes<K> = futures::stream::BoxStream<'static, kube::Result<WatchEvent<K>>>;

/// Opens the watch from `from`, or from now.
async fn open<K>(
    client: &kube::Client,
    path: &str,
    spec: &Spec<K>,
    clients: &Clients,
    from: Option<&str>,
) -> Result<Changes<K>, Failure>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    let (labels, fields) =
        (spec.config.label_selector.as_deref(), spec.config.field_selector.as_deref());
    let streamed = from.is_none() && clients.streams_lists();
    let from = match from {
        Some(rv) => Some(rv.to_string()),
        None if streamed => None,
        None => Some(current_version(client, spec).await.map_err(Failure::Error)?),
    };
    let mut req = hyper::Request::get(watch_uri(path, labels, fields, from.as_deref()))
        .body(Vec::new())
        .map_err(|e| Failure::Error(watcher::Error::WatchStartFailed(kube::Error::HttpError(e))))?;
    req.extensions_mut().insert("watch");
    match client.request_events::<K>(req).await {
        Ok(s) => Ok(s.boxed()),
        Err(e) => match super::watch::refused_as_invalid(&e).filter(|_| streamed) {
            Some(why) => Err(Failure::NotStreamed(why)),
            None => Err(Failure::Error(watcher::Error::WatchStartFailed(e))),
        },
    }
}

/// The watch's URI: from `from`, or (`None`) from now, without the objects that exist.
fn watch_uri(path: &str, labels: Option<&str>, fields: Option<&str>, from: Option<&str>) -> String {
    let mut q = form_urlencoded::Serializer::for_suffix(format!("{path}?"), path.len() + 1);
    q.append_pair("watch", "true");
    if let Some(l) = labels {
        q.append_pair("labelSelector", l);
    }
    if let Some(f) = fields {
        q.append_pair("fieldSelector", f);
    }
    q.append_pair("timeoutSeconds", &WATCH_TIMEOUT_SECS.to_string());
    q.append_pair("allowWatchBookmarks", "true");
    match from {
        Some(rv) => q.append_pair("resourceVersion", rv),
        None => q
            .append_pair("sendInitialEvents", "false")
            .append_pair("resourceVersionMatch", "NotOlderThan"),
    };
    q.finish()
}

/// The collection's current resourceVersion, from a list of at most one object's metadata.
async fn current_version<K>(client: &kube::Client, spec: &Spec<K>) -> Result<String, watcher::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    let api = (spec.api)(client.clone(), spec.namespace.as_deref());
    let mut lp = ListParams::default().limit(1);
    if let Some(l) = &spec.config.label_selector {
        lp = lp.labels(l);
    }
    if let Some(f) = &spec.config.field_selector {
        lp = lp.fields(f);
    }
    let list = api.list_metadata(&lp).await.map_err(watcher::Error::InitialListFailed)?;
    list.metadata
        .resource_version
        .filter(|rv| !rv.is_empty())
        .ok_or(watcher::Error::NoResourceVersion)
}
