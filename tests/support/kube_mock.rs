//! A fake API server behind kube-rs's client, on tower-test's mock service, for the cluster
//! paths a served fault cannot express (a lost reply, a silent watch, one 500, a 403 on one
//! kind), on paused tokio time as kube-rs tests its own watcher.
//!
//! It holds one set `web` (3 replicas) with its pods and a revision, answers lists, opens
//! watches as streams the test writes to (or leaves silent), applies merge patches, and plays
//! queued faults to the next request that matches.
#![allow(dead_code, reason = "each test binary uses part of the shared support")]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http_body_util::StreamBody;
use hyper::body::Frame;
use hyper::{Method, Request, Response, StatusCode};
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::{Value, json};
use tower::BoxError;

pub type Body = StreamBody<BoxStream<'static, Result<Frame<Bytes>, BoxError>>>;
pub type Handle = tower_test::mock::Handle<Request<kube::client::Body>, Response<Body>>;
pub type Mock = tower_test::mock::Mock<Request<kube::client::Body>, Response<Body>>;

/// What a request was: its method, resource (the path's last plural: `pods`, `statefulsets`,
/// `version` …), and whether it is a watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub method: Method,
    pub resource: String,
    pub watch: bool,
    /// The query string (selectors, paging).
    pub query: String,
    pub at: tokio::time::Instant,
}

/// A reply the test queues for the next matching request.
#[derive(Debug, Clone)]
pub enum Fault {
    /// An API error status.
    Status(u16),
    /// No answer: the transport fails with this kind (refused: never sent; reset: maybe).
    Transport(std::io::ErrorKind),
    /// A body that is not JSON of the kind.
    Malformed,
    /// Carry the request out (a PATCH is applied), then lose the reply.
    ApplyThenReset,
    /// No answer at all, ever (a hung server): the request waits.
    Silent,
}

pub struct Rule {
    pub method: Method,
    pub resource: &'static str,
    pub watch: Option<bool>,
    pub fault: Fault,
    /// How many times (then the rule is used up).
    pub times: usize,
}

/// How the fake answers a watch that asks for its initial events (`sendInitialEvents=true`, a
/// streamed list).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Streams {
    /// As kube-apiserver from 1.34: the objects as ADDED, then the bookmark that ends them.
    #[default]
    Yes,
    /// As one with the `WatchList` gate off (1.27–1.31, 1.33): 422 Invalid.
    Refused,
    /// As a server that ignores the parameter: the objects as ADDED, and no bookmark ever.
    Ignored,
}

/// The sender of an open watch's stream.
pub type WatchTx = futures::channel::mpsc::UnboundedSender<Result<Bytes, BoxError>>;

#[derive(Default)]
pub struct State {
    pub streams: Streams,
    pub set: Value,
    pub pods: Vec<Value>,
    pub revisions: Vec<Value>,
    pub rv: u64,
    pub rules: VecDeque<Rule>,
    pub seen: Vec<Seen>,
    /// Events (lists and streamed lists pass them through the request's field selector).
    pub events: Vec<Value>,
    /// Open watches: resource, the request's query, and the stream's sender.
    pub watches: Vec<(String, String, WatchTx)>,
    /// Requests never answered (`Fault::Silent`), held so that they wait.
    pub unanswered: Vec<tower_test::mock::SendResponse<Response<Body>>>,
}

#[derive(Clone)]
pub struct Fake(pub Arc<Mutex<State>>);

impl Fake {
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues a fault for the next `times` requests matching.
    pub fn fault(
        &self,
        method: Method,
        resource: &'static str,
        watch: Option<bool>,
        fault: Fault,
        times: usize,
    ) {
        self.lock().rules.push_back(Rule { method, resource, watch, fault, times });
    }

    /// Requests seen of `resource` (watches or not).
    pub fn count(&self, resource: &str, watch: bool) -> usize {
        self.lock().seen.iter().filter(|s| s.resource == resource && s.watch == watch).count()
    }

    /// Breaks every open watch of `resource` (a connection reset).
    pub fn reset_watches(&self, resource: &str) {
        let mut st = self.lock();
        for (r, _, tx) in st.watches.iter() {
            if r == resource {
                let _ = tx.unbounded_send(Err(Box::new(std::io::Error::from(
                    std::io::ErrorKind::ConnectionReset,
                ))));
                tx.close_channel();
            }
        }
        st.watches.retain(|(r, _, _)| r != resource);
    }

    /// Ends every open watch of `resource` as the server ends one at its timeout.
    pub fn end_watches(&self, resource: &str) {
        let mut st = self.lock();
        for (_, _, tx) in st.watches.iter().filter(|(r, _, _)| r == resource) {
            tx.close_channel();
        }
        st.watches.retain(|(r, _, _)| r != resource);
    }

    /// Sends `{"type": kind, "object": object}` on every open watch of `resource` whose field
    /// selector passes the object, an `ERROR` on every one (the resourceVersion moves on
    /// first; the object gets it).
    pub fn emit(&self, resource: &str, kind: &str, mut object: Value) {
        let mut st = self.lock();
        st.rv += 1;
        object["metadata"]["resourceVersion"] = json!(st.rv.to_string());
        let line = format!("{}\n", json!({"type": kind, "object": object}));
        for (_, q, tx) in st.watches.iter().filter(|(r, _, _)| r == resource) {
            if kind == "ERROR" || passes(q, &object) {
                let _ = tx.unbounded_send(Ok(Bytes::from(line.clone())));
            }
        }
    }

    /// Sends a bookmark on every open watch of `resource`.
    pub fn bookmark(&self, resource: &str, kind: &str, api_version: &str) {
        let st = self.lock();
        let line = json!({"type": "BOOKMARK", "object": {"kind": kind, "apiVersion": api_version,
            "metadata": {"resourceVersion": st.rv.to_string()}}});
        for (_, _, tx) in st.watches.iter().filter(|(r, _, _)| r == resource) {
            let _ = tx.unbounded_send(Ok(Bytes::from(format!("{line}\n"))));
        }
    }

    pub fn partition(&self) -> i64 {
        self.lock().set["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
            .as_i64()
            .unwrap_or(-1)
    }
}

pub fn set_json(partition: i32) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default", "uid": "uid-web", "resourceVersion": "1", "generation": 1},
        "spec": {
            "replicas": 3, "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}
        },
        "status": {"replicas": 3, "readyReplicas": 3, "currentReplicas": 3, "updatedReplicas": 3,
            "availableReplicas": 3, "currentRevision": "web-1", "updateRevision": "web-1", "observedGeneration": 1}
    })
}

fn pod_json(i: usize) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("web-{i}"), "namespace": "default", "uid": format!("uid-pod-{i}"),
            "resourceVersion": "1", "labels": {"app": "web", "controller-revision-hash": "web-1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                "uid": "uid-web", "controller": true}]},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    })
}

/// The fake with `web` at `partition`, and its service; the server task is spawned.
pub fn start(partition: i32) -> (Fake, Mock) {
    start_with(partition, 3)
}

/// [`start`] with `pods` pods (the set's replicas too); lists are paged as the API server
/// pages them (`limit`, `continue`).
pub fn start_with(partition: i32, pods: usize) -> (Fake, Mock) {
    let (mock, handle) = tower_test::mock::pair::<Request<kube::client::Body>, Response<Body>>();
    let revision = json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": "web-1", "namespace": "default", "resourceVersion": "1",
            "labels": {"app": "web", "controller-revision-hash": "web-1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                "uid": "uid-web", "controller": true}]},
        "revision": 1, "data": {"spec": {"template": {"$patch": "replace", "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}}}}});
    let mut set = set_json(partition);
    set["spec"]["replicas"] = json!(pods);
    let state = State {
        set,
        pods: (0..pods).map(pod_json).collect(),
        revisions: vec![revision],
        rv: 10,
        ..State::default()
    };
    let fake = Fake(Arc::new(Mutex::new(state)));
    tokio::spawn(serve(handle, fake.clone()));
    (fake, mock)
}

fn body(bytes: Bytes) -> Body {
    StreamBody::new(futures::stream::once(async move { Ok(Frame::data(bytes)) }).boxed())
}

fn reply(code: u16, v: &Value) -> Response<Body> {
    let mut r = Response::new(body(Bytes::from(v.to_string())));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r
}

fn status(code: u16) -> Value {
    let reason = match code {
        403 => "Forbidden",
        404 => "NotFound",
        409 => "Conflict",
        429 => "TooManyRequests",
        _ => "InternalError",
    };
    json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
        "reason": reason, "message": format!("fake {code}")})
}

fn list(kind: &str, items: &[Value], rv: u64) -> Value {
    json!({"kind": format!("{kind}List"), "apiVersion": "v1",
        "metadata": {"resourceVersion": rv.to_string()}, "items": items})
}

async fn serve(mut handle: Handle, fake: Fake) {
    while let Some((req, send)) = handle.next_request().await {
        let (parts, b) = req.into_parts();
        let bytes = b.collect_bytes().await.unwrap_or_default();
        let path = parts.uri.path().to_string();
        let query = parts.uri.query().unwrap_or_default().to_string();
        let watch = query.split('&').any(|kv| kv == "watch=true");
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let resource = resource_of(&segments);
        let method = parts.method.clone();
        let fault = {
            let mut st = fake.lock();
            st.seen.push(Seen {
                method: method.clone(),
                resource: resource.clone(),
                watch,
                query: query.clone(),
                at: tokio::time::Instant::now(),
            });
            let i = st.rules.iter().position(|r| {
                r.method == method && r.resource == resource && r.watch.is_none_or(|w| w == watch)
            });
            i.map(|i| {
                let f = st.rules[i].fault.clone();
                st.rules[i].times -= 1;
                if st.rules[i].times == 0 {
                    st.rules.remove(i);
                }
                f
            })
        };
        match fault {
            Some(Fault::Status(code)) => send.send_response(reply(code, &status(code))),
            Some(Fault::Transport(kind)) => send.send_error(std::io::Error::from(kind)),
            Some(Fault::Malformed) => {
                send.send_response(reply(200, &json!({"kind": "PodList", "items": 7})))
            }
            Some(Fault::Silent) => fake.lock().unanswered.push(send),
            Some(Fault::ApplyThenReset) => {
                let _ = answer(&fake, &method, &segments, &resource, (watch, &query), &bytes);
                send.send_error(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
            }
            None => send.send_response(answer(
                &fake,
                &method,
                &segments,
                &resource,
                (watch, &query),
                &bytes,
            )),
        }
    }
}

/// The resource a path names: `/apis/apps/v1/namespaces/default/statefulsets/web` is
/// `statefulsets`; `/version` is `version`.
fn resource_of(segments: &[&str]) -> String {
    let known = [
        "statefulsets",
        "pods",
        "controllerrevisions",
        "persistentvolumeclaims",
        "events",
        "poddisruptionbudgets",
        "selfsubjectreviews",
        "selfsubjectaccessreviews",
        "selfsubjectrulesreviews",
        "version",
        "readyz",
    ];
    let mut found = segments.iter().rev().find(|s| known.contains(s)).map(|s| s.to_string());
    if segments.last() == Some(&"scale") {
        found = Some("scale".into());
    }
    // `/apis/GROUP/VERSION`: a group's discovery document.
    if let ["apis", group, _] = segments {
        found = Some(format!("discovery {group}"));
    }
    found.unwrap_or_default()
}

/// `limit` and `continue` of a list query: (offset, page size).
fn page(query: &str) -> (usize, Option<usize>) {
    let get = |k: &str| {
        query.split('&').find_map(|kv| kv.strip_prefix(k)).and_then(|v| v.parse::<usize>().ok())
    };
    (get("continue=").unwrap_or(0), get("limit="))
}

/// One page of `items` from `offset` (the continue token is the next offset).
fn paged(kind: &str, items: &[Value], rv: u64, (offset, limit): (usize, Option<usize>)) -> Value {
    let end = limit.map_or(items.len(), |l| (offset + l).min(items.len()));
    let mut v = list(kind, &items[offset.min(items.len())..end], rv);
    if end < items.len() {
        v["metadata"]["continue"] = Value::String(end.to_string());
    }
    v
}

fn answer(
    fake: &Fake,
    method: &Method,
    segments: &[&str],
    resource: &str,
    (watch, query): (bool, &str),
    bytes: &[u8],
) -> Response<Body> {
    let mut st = fake.lock();
    let rv = st.rv;
    if watch {
        let initial = query.split('&').any(|kv| kv == "sendInitialEvents=true");
        let asks = query.split('&').any(|kv| kv.starts_with("sendInitialEvents="));
        if asks && st.streams == Streams::Refused {
            let mut s = status(422);
            s["reason"] = json!("Invalid");
            s["message"] = json!(
                "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"
            );
            return reply(422, &s);
        }
        let (tx, rx) = futures::channel::mpsc::unbounded::<Result<Bytes, BoxError>>();
        // One that ignores the parameter answers a watch without a resourceVersion with what
        // exists, as before streamed lists.
        let from_now = asks && !initial && !query.contains("resourceVersion=");
        if initial || (from_now && st.streams == Streams::Ignored) {
            for o in objects(&st, resource).iter().filter(|o| passes(query, o)) {
                let _ = tx.unbounded_send(Ok(Bytes::from(format!(
                    "{}\n",
                    json!({"type": "ADDED", "object": o})
                ))));
            }
            if st.streams == Streams::Yes && initial {
                let (kind, api_version) = kind_of(resource);
                let end = json!({"type": "BOOKMARK", "object": {"kind": kind, "apiVersion": api_version,
                    "metadata": {"resourceVersion": rv.to_string(),
                        "annotations": {"k8s.io/initial-events-end": "true"}}}});
                let _ = tx.unbounded_send(Ok(Bytes::from(format!("{end}\n"))));
            }
        }
        st.watches.push((resource.to_string(), query.to_string(), tx));
        let frames = rx.map(|r| r.map(Frame::data)).boxed();
        return Response::new(StreamBody::new(frames));
    }
    match (method.as_str(), resource) {
        ("GET", "version") => reply(
            200,
            &json!({"major": "1", "minor": "34", "gitVersion": "v1.34.2",
            "gitCommit": "x", "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
            "goVersion": "go", "compiler": "gc", "platform": "linux/amd64"}),
        ),
        ("POST", "selfsubjectreviews") => reply(
            201,
            &json!({"apiVersion": "authentication.k8s.io/v1",
            "kind": "SelfSubjectReview", "status": {"userInfo": {"username": "tester"}}}),
        ),
        ("POST", "selfsubjectrulesreviews") => reply(
            201,
            &json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
                "spec": {}, "status": {"incomplete": false, "nonResourceRules": [],
                    "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]}}),
        ),
        ("POST", "selfsubjectaccessreviews") => reply(
            201,
            &json!({"apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview", "spec": {}, "status": {"allowed": true}}),
        ),
        ("GET", "statefulsets") if segments.last() == Some(&"web") => reply(200, &st.set),
        ("GET", "statefulsets") => {
            reply(200, &list("StatefulSet", std::slice::from_ref(&st.set), rv))
        }
        ("GET", "pods") => reply(200, &paged("Pod", &st.pods, rv, page(query))),
        ("GET", "controllerrevisions") => {
            reply(200, &list("ControllerRevision", &st.revisions, rv))
        }
        ("GET", "persistentvolumeclaims") => reply(200, &list("PersistentVolumeClaim", &[], rv)),
        ("GET", "poddisruptionbudgets") => reply(200, &list("PodDisruptionBudget", &[], rv)),
        ("GET", "events") => {
            let passed: Vec<Value> =
                st.events.iter().filter(|e| passes(query, e)).cloned().collect();
            reply(200, &paged("Event", &passed, rv, page(query)))
        }
        ("PATCH", "statefulsets") => {
            let patch: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
            let want_rv = patch["metadata"]["resourceVersion"].as_str().map(str::to_string);
            let have_rv = st.set["metadata"]["resourceVersion"].as_str().map(str::to_string);
            if want_rv.is_some() && want_rv != have_rv {
                return reply(409, &status(409));
            }
            let mut patch = patch;
            if let Some(m) = patch.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("resourceVersion");
            }
            json_patch::merge(&mut st.set, &patch);
            st.rv += 1;
            let new_rv = st.rv.to_string();
            st.set["metadata"]["resourceVersion"] = Value::String(new_rv);
            reply(200, &st.set)
        }
        _ => reply(404, &status(404)),
    }
}

/// What a list of `resource` holds.
fn objects(st: &State, resource: &str) -> Vec<Value> {
    match resource {
        "statefulsets" => vec![st.set.clone()],
        "pods" => st.pods.clone(),
        "controllerrevisions" => st.revisions.clone(),
        "events" => st.events.clone(),
        _ => Vec::new(),
    }
}

/// Whether `o` passes the field selector of `query` (`type`, `involvedObject.kind` and
/// `involvedObject.name`, the fields the console selects Events by; `a=b` terms only).
fn passes(query: &str, o: &Value) -> bool {
    let Some((_, fields)) =
        form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "fieldSelector")
    else {
        return true;
    };
    fields.split(',').filter(|t| !t.is_empty()).all(|term| {
        let (k, v) = term.split_once('=').unwrap_or((term, ""));
        let have = match k {
            "type" => &o["type"],
            "involvedObject.kind" => &o["involvedObject"]["kind"],
            "involvedObject.name" => &o["involvedObject"]["name"],
            _ => return true,
        };
        have.as_str() == Some(v)
    })
}

/// The kind and apiVersion of a resource's objects.
fn kind_of(resource: &str) -> (&'static str, &'static str) {
    match resource {
        "statefulsets" => ("StatefulSet", "apps/v1"),
        "pods" => ("Pod", "v1"),
        "controllerrevisions" => ("ControllerRevision", "apps/v1"),
        "persistentvolumeclaims" => ("PersistentVolumeClaim", "v1"),
        "poddisruptionbudgets" => ("PodDisruptionBudget", "policy/v1"),
        _ => ("Event", "v1"),
    }
}

/// The set as the fake holds it.
pub fn the_set(fake: &Fake) -> StatefulSet {
    serde_json::from_value(fake.lock().set.clone()).unwrap_or_default()
}
