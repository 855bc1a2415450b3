//! The fleet's view: each cluster's objects in a namespace of their own, what the clusters say
//! merged, and each view op sent to the cluster it is about.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test asserts by panicking and prints what it saw"
)]

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Event as KubeEvent;

use super::*;
use crate::backend::ObjKind;

fn set(ns: &str) -> Object {
    let mut s = StatefulSet::default();
    s.metadata.name = Some("web".into());
    s.metadata.namespace = Some(ns.into());
    Object::Set(Arc::new(s))
}

#[test]
fn each_clusters_objects_and_listings_are_in_its_own_namespace() {
    let ev = prefixed(BackendEvent::Applied(set("default")), "eu");
    let BackendEvent::Applied(o) = ev else { panic!() };
    assert_eq!(ObjRef::of(o.metadata()), ObjRef::new("eu/default", "web"));
    let listed = BackendEvent::Listed {
        kind: ObjKind::Set,
        scope: Scope::namespace("default"),
        objects: vec![set("default")],
    };
    let BackendEvent::Listed { scope, objects, .. } = prefixed(listed, "us") else { panic!() };
    assert_eq!(scope.namespace.as_deref(), Some("us/default"));
    assert!(scope.covers(objects[0].metadata()), "the listing covers its own objects");
    assert!(!scope.covers(set("eu/default").metadata()), "and not another cluster's");
    // An Event's involved object moves with it (the set's Events are found by it).
    let mut e = KubeEvent::default();
    e.metadata.namespace = Some("default".into());
    e.involved_object.namespace = Some("default".into());
    let BackendEvent::Applied(Object::Event(e)) =
        prefixed(BackendEvent::Applied(Object::Event(Arc::new(e))), "ap")
    else {
        panic!()
    };
    assert_eq!(e.involved_object.namespace.as_deref(), Some("ap/default"));
    // Words lead with the cluster.
    let BackendEvent::Notice(n) = prefixed(BackendEvent::Notice("connected".into()), "eu") else {
        panic!()
    };
    assert_eq!(n, "eu: connected");
}

#[test]
fn synced_once_every_cluster_is_and_the_first_cluster_in_trouble_is_said() {
    let mut m = Merge::new(vec!["eu".into(), "us".into()]);
    assert_eq!(m.said(0, BackendEvent::Synced), None);
    assert_eq!(m.said(1, BackendEvent::Synced), Some(BackendEvent::Synced));
    let v = |s: &str| BackendEvent::Server { version: s.into() };
    assert_eq!(m.said(0, v("v1.37.2")), Some(v("v1.37.2")));
    assert_eq!(m.said(0, v("v1.37.2")), None);
    assert!(
        matches!(m.said(1, v("v1.36.0")), Some(BackendEvent::Notice(n)) if n.starts_with("us: server v1.36.0"))
    );
    let since = k8s_openapi::jiff::Timestamp::UNIX_EPOCH;
    let down = Connection::Unreachable { since, error: "refused".into() };
    let Some(BackendEvent::Connection(c)) = m.said(1, BackendEvent::Connection(down.clone()))
    else {
        panic!("us unreachable not said")
    };
    assert_eq!(c, Connection::Unreachable { since, error: "us: refused".into() });
    assert_eq!(m.said(0, BackendEvent::Connection(Connection::Up)), None, "us is still down");
    assert_eq!(
        m.said(1, BackendEvent::Connection(Connection::Up)),
        Some(BackendEvent::Connection(Connection::Up))
    );
    assert_eq!(m.said(0, BackendEvent::Capabilities(Capabilities::cluster())), None);
}

#[test]
fn a_key_goes_to_its_cluster_without_its_prefix() {
    assert_eq!(
        unprefixed(&ObjRef::new("eu/default", "web"), "eu"),
        Some(ObjRef::new("default", "web"))
    );
    assert_eq!(unprefixed(&ObjRef::new("eu/default", "web"), "us"), None);
    assert_eq!(unprefixed(&ObjRef::new("default", "web"), "eu"), None);
}
