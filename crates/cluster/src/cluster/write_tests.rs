//! The set write path against a mock API server (tower-test behind kube-rs's client): a set
//! whose status keeps changing (its controller writing after every pod change) conflicts
//! several times in a row and is still written, each time decided again on a fresh read; one
//! that never stops changing is said as such, with nothing written.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::sync::{Arc, Mutex};

use http_body_util::BodyExt as _;
use hyper::{Method, Request, Response};
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::client::Body;
use serde_json::json;

use super::*;

fn set(rv: u32) -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            uid: Some("u1".into()),
            resource_version: Some(rv.to_string()),
            ..Default::default()
        },
        spec: StatefulSetSpec { replicas: Some(3), ..Default::default() },
        ..Default::default()
    }
}

fn reply(code: u16, body: serde_json::Value) -> Response<Body> {
    Response::builder().status(code).body(Body::from(serde_json::to_vec(&body).unwrap())).unwrap()
}

/// The resourceVersion each PATCH was sent with, in order.
type Patches = Arc<Mutex<Vec<Option<String>>>>;

/// A server whose set moves on (a status write) before each of the first `conflicts` patches
/// lands: each is refused 409, and each GET shows the newer set.
fn server(rt: &tokio::runtime::Runtime, conflicts: usize) -> (kube::Client, Patches) {
    let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let patches: Patches = Arc::default();
    let log = Arc::clone(&patches);
    rt.spawn(async move {
        let mut rv = 10;
        while let Some((req, send)) = handle.next_request().await {
            let (parts, body) = req.into_parts();
            let bytes = body.collect().await.map(|c| c.to_bytes()).unwrap_or_default();
            let sent: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
            let answer = match parts.method {
                Method::GET => reply(200, serde_json::to_value(set(rv)).unwrap()),
                Method::PATCH => {
                    let mut seen = log.lock().unwrap();
                    seen.push(sent["metadata"]["resourceVersion"].as_str().map(String::from));
                    if seen.len() <= conflicts {
                        rv += 1;
                        reply(
                            409,
                            json!({"kind": "Status", "apiVersion": "v1",
                            "status": "Failure", "reason": "Conflict", "code": 409,
                            "message": "the object has been modified"}),
                        )
                    } else {
                        rv += 1;
                        let mut written = serde_json::to_value(set(rv)).unwrap();
                        written["spec"]["updateStrategy"] = sent["spec"]["updateStrategy"].clone();
                        reply(200, written)
                    }
                }
                m => panic!("unexpected {m} {}", parts.uri),
            };
            send.send_response(answer);
        }
    });
    let _in = rt.enter();
    (kube::Client::new(svc, "default"), patches)
}

fn freeze(rt: &tokio::runtime::Runtime, client: kube::Client) -> Result<Written, Box<Failure>> {
    let writer =
        Writer { client, identity: Arc::new(Mutex::new("alice".into())), read_back: READ_BACK };
    let op = ClusterOp::Freeze { set: ObjRef::new("default", "web") };
    rt.block_on(writer.write(Write::new(op))).map_err(Box::new)
}

/// A runtime on paused time: the pauses between attempts take none.
fn paused() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap()
}

#[test]
fn a_set_whose_status_keeps_moving_is_written_once_it_holds_still() {
    let rt = paused();
    let (client, patches) = server(&rt, 5);
    let written = freeze(&rt, client);
    assert!(matches!(written, Ok(Written::Done)), "{written:?}");
    let sent = patches.lock().unwrap().clone();
    // Each attempt decided again on the set read after the conflict, never a blind repeat.
    let expected: Vec<Option<String>> = (10..16).map(|rv| Some(rv.to_string())).collect();
    assert_eq!(sent, expected);
}

#[test]
fn a_set_that_never_holds_still_is_said_to_keep_changing_with_nothing_written() {
    let rt = paused();
    let (client, patches) = server(&rt, usize::MAX);
    let failed = freeze(&rt, client).expect_err("no write lands");
    assert_eq!(failed.kind, FailureKind::Conflict);
    assert!(failed.message.contains("kept changing"), "{}", failed.message);
    assert_eq!(patches.lock().unwrap().len(), ATTEMPTS as usize);
}
