//! Drive mode's write path against a mock API server (tower-test behind kube-rs's client): a
//! status write that conflicts is read again and written on the fresh object, never blindly
//! repeated; a pod creation carries field manager `ststui` and lands in the mirror at once.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::sync::{Arc, Mutex};
use std::time::Instant;

use http_body_util::BodyExt as _;
use hyper::{Method, Request, Response};
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::client::Body;
use serde_json::json;

use super::effects::{Calls, Live};
use super::mirror::{Mirror, Watched};
use crate::backend::{FailureKind, ObjRef};
use crate::control::{Read, Write};
use crate::core::Effect;

/// What the server was asked: method, path and query, and the body's resourceVersion.
type Asked = Arc<Mutex<Vec<(Method, String, Option<String>)>>>;

fn set(rv: &str) -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            uid: Some("u1".into()),
            resource_version: Some(rv.into()),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn reply(code: u16, body: serde_json::Value) -> Response<Body> {
    Response::builder().status(code).body(Body::from(serde_json::to_vec(&body).unwrap())).unwrap()
}

/// A server whose first status write conflicts (someone wrote the set at resourceVersion 8).
fn server(rt: &tokio::runtime::Runtime) -> (kube::Client, Asked) {
    let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let asked: Asked = Arc::default();
    let log = Arc::clone(&asked);
    rt.spawn(async move {
        let mut status_writes = 0;
        while let Some((req, send)) = handle.next_request().await {
            let (parts, body) = req.into_parts();
            let bytes = body.collect().await.map(|c| c.to_bytes()).unwrap_or_default();
            let sent: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
            let rv = sent["metadata"]["resourceVersion"].as_str().map(String::from);
            let path = parts.uri.path_and_query().map(ToString::to_string).unwrap_or_default();
            log.lock().unwrap().push((parts.method.clone(), path.clone(), rv));
            let answer = match (parts.method, path.split('?').next().unwrap_or_default()) {
                (Method::PUT, "/apis/apps/v1/namespaces/default/statefulsets/web/status") => {
                    status_writes += 1;
                    if status_writes == 1 {
                        reply(409, json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                            "reason": "Conflict", "code": 409,
                            "message": "Operation cannot be fulfilled on statefulsets.apps \"web\": the object has been modified; please apply your changes to the latest version and try again"}))
                    } else {
                        let mut written = sent.clone();
                        written["metadata"]["resourceVersion"] = json!("9");
                        reply(200, written)
                    }
                }
                (Method::GET, "/apis/apps/v1/namespaces/default/statefulsets/web") => {
                    reply(200, serde_json::to_value(set("8")).unwrap())
                }
                (Method::POST, "/api/v1/namespaces/default/pods") => {
                    let mut created = sent.clone();
                    created["metadata"]["resourceVersion"] = json!("20");
                    reply(201, created)
                }
                _ => reply(201, sent),
            };
            send.send_response(answer);
        }
    });
    let _in = rt.enter();
    (kube::Client::new(svc, "default"), asked)
}

/// The runtime, the calls and the mirror one `Live` works on.
struct Rig {
    _rt: tokio::runtime::Runtime,
    calls: Calls,
    mirror: Mirror,
    say: Box<dyn FnMut(crate::backend::Event)>,
}

impl Rig {
    fn new(rt: tokio::runtime::Runtime, client: kube::Client) -> Rig {
        let calls = Calls::new(client, rt.handle().clone(), None);
        Rig { _rt: rt, calls, mirror: mirror_with_set(), say: Box::new(drop) }
    }

    fn live(&mut self) -> Live<'_> {
        Live {
            mirror: &mut self.mirror,
            calls: &self.calls,
            say: &mut *self.say,
            interrupt: None,
            gate: None,
        }
    }
}

fn mirror_with_set() -> Mirror {
    let mut m = Mirror::new("default".into(), None, Instant::now());
    m.take(Watched::Set(kube::runtime::watcher::Event::Apply(set("5"))), Instant::now());
    m
}

#[test]
fn a_conflicting_status_write_is_read_again_and_written_on_the_fresh_object() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (client, asked) = server(&rt);
    let mut rig = Rig::new(rt, client);
    let mut live = rig.live();
    let key = ObjRef::new("default", "web");
    let status =
        StatefulSetStatus { replicas: 3, observed_generation: Some(2), ..Default::default() };
    live.apply(&key, Effect::WriteStatus(Box::new(status))).expect("written after a re-read");
    let asked = asked.lock().unwrap().clone();
    let trail: Vec<(Method, &str, Option<&str>)> = asked
        .iter()
        .map(|(m, p, rv)| (m.clone(), p.split('?').next().unwrap_or_default(), rv.as_deref()))
        .collect();
    assert_eq!(
        trail,
        vec![
            (Method::PUT, "/apis/apps/v1/namespaces/default/statefulsets/web/status", Some("5")),
            (Method::GET, "/apis/apps/v1/namespaces/default/statefulsets/web", None),
            (Method::PUT, "/apis/apps/v1/namespaces/default/statefulsets/web/status", Some("8")),
        ],
        "the second write carries the version read again, not the stale one"
    );
    assert!(asked.iter().all(|(m, p, _)| *m == Method::GET || p.contains("fieldManager=ststui")));
    let held = live.set(&key).unwrap();
    assert_eq!(held.metadata.resource_version.as_deref(), Some("9"), "the answer is held");
    assert_eq!(held.status.as_ref().map(|s| s.replicas), Some(3));
}

#[test]
fn a_created_pod_is_in_the_mirror_before_its_watch_event_and_its_event_is_recorded() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (client, asked) = server(&rt);
    let mut rig = Rig::new(rt, client);
    let mut live = rig.live();
    let pod = Pod {
        metadata: ObjectMeta {
            name: Some("web-0".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    live.apply(&ObjRef::new("default", "web"), Effect::CreatePod(Box::new(pod))).unwrap();
    assert_eq!(live.pods_in("default").len(), 1);
    // The Event is posted without waiting for its answer: wait for it here.
    let deadline = Instant::now() + std::time::Duration::from_secs(10);
    while rig.calls.events_in_flight() > 0 && Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let asked = asked.lock().unwrap().clone();
    assert!(
        asked
            .iter()
            .any(|(m, p, _)| *m == Method::POST
                && p.starts_with("/api/v1/namespaces/default/events")),
        "SuccessfulCreate recorded: {asked:?}"
    );
}

#[test]
fn a_refused_write_keeps_the_servers_kind() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    rt.spawn(async move {
        while let Some((_req, send)) = handle.next_request().await {
            send.send_response(reply(
                403,
                json!({"kind": "Status", "apiVersion": "v1",
                "status": "Failure", "reason": "Forbidden", "code": 403,
                "message": "pods is forbidden: User \"ci\" cannot create resource \"pods\""}),
            ));
        }
    });
    let client = {
        let _in = rt.enter();
        kube::Client::new(svc, "default")
    };
    let mut rig = Rig::new(rt, client);
    let mut live = rig.live();
    let pod = Pod {
        metadata: ObjectMeta { name: Some("web-0".into()), ..Default::default() },
        ..Default::default()
    };
    let e =
        live.apply(&ObjRef::new("default", "web"), Effect::CreatePod(Box::new(pod))).unwrap_err();
    assert_eq!(e.kind, FailureKind::Forbidden);
    assert!(e.message.contains("cannot create resource"), "{}", e.message);
    assert!(live.pods_in("default").is_empty(), "nothing held that the server refused");
}
