//! A pod's eviction requests and responders (the EvictionRequest API's Eviction of Kubernetes
//! 1.37) in its detail: who asked, each responder by priority with its state, heartbeat and
//! message — escaped, since they are the cluster's — and nothing for another pod, or for an
//! earlier pod of the same name (another uid).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::ui_support::*;
use ststui::backend::Object;

fn eviction(name: &str, pod: &str, uid: &str) -> Object {
    Object::Eviction(std::sync::Arc::new(
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"target": {"pod": {"name": pod, "uid": uid}}},
            "status": {
                "requesters": [{"name": "acme.io/drainer", "intent": "Eviction"}],
                "targetResponders": [
                    {"name": "imperative-eviction.k8s.io/evictor", "priority": 100, "state": "Inactive"},
                    {"name": "acme.io/db", "priority": 10000, "state": "Active"}],
                "responders": [{"name": "acme.io/db",
                    "message": "moving leaders \u{1b}]0;pwned\u{7}"}],
            },
        }))
        .unwrap(),
    ))
}

#[test]
fn a_pods_eviction_requests_and_responders_are_in_its_detail() {
    let mut f = rolling();
    f.selected = 2;
    let mut st = f.state();
    let mut pod = st
        .mirror
        .pods_in("default")
        .find(|p| p.metadata.name.as_deref() == Some("web-2"))
        .unwrap()
        .clone();
    pod.metadata.uid = Some("u-web-2".into());
    st.mirror.apply(Object::Pod(std::sync::Arc::new(pod)));
    let uid = "u-web-2";
    st.mirror.apply(eviction("e-web-2", "web-2", uid));
    st.mirror.apply(eviction("e-web-1", "web-1", "another"));
    st.mirror.apply(eviction("e-old", "web-2", "an earlier web-2"));
    let buf = render(&st, 200, 50).backend().buffer().clone();
    let rows: Vec<String> = (0..50).map(|y| row(&buf, y)).collect();
    let all = rows.join("\n");
    assert_eq!(all.matches("requested by acme.io/drainer").count(), 1, "{all}");
    let active = all.find("acme.io/db (10000): Active").unwrap_or_else(|| panic!("{all}"));
    let fallback = all
        .find("imperative-eviction.k8s.io/evictor (100): Inactive")
        .unwrap_or_else(|| panic!("{all}"));
    assert!(active < fallback, "by priority: {all}");
    assert!(all.contains("moving leaders"), "{all}");
    assert!(!all.contains('\u{1b}') && !all.contains('\u{7}'), "escaped: {all}");
}
