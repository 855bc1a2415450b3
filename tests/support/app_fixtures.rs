//! Hand-built k8s objects and a fake-backend driver for the app tests (no simulator needed).
#![allow(dead_code, reason = "each test binary uses part of the shared support")]

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use k8s_openapi::api::apps::v1::{
    ControllerRevision, RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetSpec,
    StatefulSetStatus, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{
    Container, Pod, PodCondition, PodSpec, PodStatus, PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use k8s_openapi::jiff::Timestamp;
use ststui::app::{AppState, Command, Msg, update};
use ststui::backend::{BackendEvent, Capabilities, ClusterOp, Object, Op, Write};
use ststui::core::Options;

pub const NS: &str = "default";

pub fn sim_caps() -> Capabilities {
    Capabilities::simulator()
}

pub fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A set `name` with `replicas`, RollingUpdate `partition`, and status revisions.
pub fn set(
    name: &str,
    replicas: i32,
    partition: i32,
    image: &str,
    cur: &str,
    upd: &str,
) -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            uid: Some(format!("uid-{name}")),
            generation: Some(1),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels(&[("app", name)])),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(&[("app", name)])),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: Some(image.into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            update_strategy: Some(StatefulSetUpdateStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(RollingUpdateStatefulSetStrategy {
                    partition: Some(partition),
                    max_unavailable: None,
                }),
            }),
            ..Default::default()
        },
        status: Some(StatefulSetStatus {
            replicas,
            current_revision: Some(cur.into()),
            update_revision: Some(upd.into()),
            ..Default::default()
        }),
    }
}

pub fn on_delete(mut s: StatefulSet) -> StatefulSet {
    s.spec.update_strategy =
        Some(StatefulSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None });
    s
}

/// Pod `<set>-<ordinal>` at revision `rev`, Running and Ready when `ready`.
pub fn pod(set: &str, ordinal: i32, rev: &str, ready: bool) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("{set}-{ordinal}")),
            namespace: Some(NS.into()),
            labels: Some(labels(&[("app", set), ("controller-revision-hash", rev)])),
            owner_references: Some(vec![owner(set)]),
            ..Default::default()
        },
        spec: None,
        status: Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![PodCondition {
                type_: "Ready".into(),
                status: if ready { "True" } else { "False" }.into(),
                ..Default::default()
            }]),
            ..Default::default()
        }),
    }
}

pub fn owner(set: &str) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "StatefulSet".into(),
        name: set.into(),
        uid: format!("uid-{set}"),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

pub fn revision(set: &str, name: &str, number: i64, image: &str) -> ControllerRevision {
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            owner_references: Some(vec![owner(set)]),
            ..Default::default()
        },
        data: RawExtension(serde_json::json!({
            "spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}
        })),
        revision: Some(number),
    }
}

pub fn t0() -> Timestamp {
    Timestamp::from_second(1_700_000_000).unwrap_or(Timestamp::UNIX_EPOCH)
}

pub fn applied(o: Object) -> Msg {
    Msg::Backend(BackendEvent::Applied(o))
}

pub fn key(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
}

pub fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

pub fn code(c: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

/// Sends `msgs` in order; returns every command.
pub fn run(state: &mut AppState, msgs: impl IntoIterator<Item = Msg>) -> Vec<Command> {
    msgs.into_iter().flat_map(|m| update(state, m)).collect()
}

/// Only the backend Ops among `cmds`.
/// The ops of `cmds`, without what they were decided on (the basis set, a pod's uid), so tests
/// compare what is asked; `decided_ops` keeps it.
pub fn ops(cmds: &[Command]) -> Vec<Op> {
    decided_ops(cmds).into_iter().map(bare).collect()
}

/// The ops of `cmds` as sent.
pub fn decided_ops(cmds: &[Command]) -> Vec<Op> {
    cmds.iter()
        .filter_map(|c| match c {
            Command::Backend(op) => Some(op.clone()),
            Command::Quit | Command::Suspend | Command::Export { .. } => None,
        })
        .collect()
}

/// `op` without its basis (and a delete without its uid precondition).
pub fn bare(op: Op) -> Op {
    match op {
        Op::Cluster(Write { op: ClusterOp::DeletePod { pod, force, .. }, .. }) => {
            Op::from(ClusterOp::DeletePod { pod, force, uid: None })
        }
        Op::Cluster(Write { op: ClusterOp::EvictPod { pod, .. }, .. }) => {
            Op::from(ClusterOp::EvictPod { pod, uid: None })
        }
        Op::Cluster(Write { op, .. }) => Op::from(op),
        other => other,
    }
}

/// The demo: `web`, 5 replicas all Ready on revision `web-a` (nginx:1.25), a new revision
/// `web-b` (nginx:1.26) held by partition 5.
pub fn demo(caps: Capabilities) -> AppState {
    let mut st = AppState::new(caps, Options::default());
    let mut msgs = vec![
        Msg::Backend(BackendEvent::Clock { now: t0(), speed: 1.0 }),
        applied(Object::Set(std::sync::Arc::new(set("web", 5, 5, "nginx:1.26", "web-a", "web-b")))),
        applied(Object::Revision(std::sync::Arc::new(revision("web", "web-a", 1, "nginx:1.25")))),
        applied(Object::Revision(std::sync::Arc::new(revision("web", "web-b", 2, "nginx:1.26")))),
    ];
    for o in 0..5 {
        msgs.push(applied(Object::Pod(std::sync::Arc::new(pod("web", o, "web-a", true)))));
    }
    msgs.push(Msg::Backend(BackendEvent::Synced));
    msgs.push(Msg::BatchEnd);
    run(&mut st, msgs);
    st
}

pub fn status_text(st: &AppState) -> String {
    st.status.as_ref().map(|s| s.text.clone()).unwrap_or_default()
}

/// The demo with revisions named as the core names them (`<set>-<hash of the template>`), so
/// the advisor's plan agrees with the set's status: `(state, current, update)` revision names.
/// Partition `partition`; pods at or above it are on the update revision.
pub fn demo_real(partition: i32) -> (AppState, String, String) {
    use ststui::core::Version;
    use ststui::core::gojson::GoEncoding;
    use ststui::core::history::new_revision;
    let enc = GoEncoding::for_version(Version::LATEST);
    let old = set("web", 5, partition, "nginx:1.25", "", "");
    let new = set("web", 5, partition, "nginx:1.26", "", "");
    let (Ok(r1), Ok(r2)) = (new_revision(&old, 1, 0, enc), new_revision(&new, 2, 0, enc)) else {
        panic!("revisions");
    };
    let cur = r1.revision.metadata.name.clone().unwrap_or_default();
    let upd = r2.revision.metadata.name.clone().unwrap_or_default();
    let mut st = AppState::new(sim_caps(), Options::default());
    let mut msgs = vec![
        Msg::Backend(BackendEvent::Clock { now: t0(), speed: 1.0 }),
        applied(Object::Set(std::sync::Arc::new(set(
            "web",
            5,
            partition,
            "nginx:1.26",
            &cur,
            &upd,
        )))),
        applied(Object::Revision(std::sync::Arc::new(r1.revision))),
        applied(Object::Revision(std::sync::Arc::new(r2.revision))),
    ];
    for o in 0..5 {
        let rev = if o >= partition { &upd } else { &cur };
        msgs.push(applied(Object::Pod(std::sync::Arc::new(pod("web", o, rev, true)))));
    }
    msgs.push(Msg::Backend(BackendEvent::Synced));
    msgs.push(Msg::BatchEnd);
    run(&mut st, msgs);
    (st, cur, upd)
}
