//! Claims per ordinal, on screen: the pod detail lists each claim (phase, capacity, storage
//! class) and what the retention policy does with it; the grid marks an ordinal whose claim is
//! not Bound; the controller pane names the claim a Pending pod waits on.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::ui_support;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy};
use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimSpec, PersistentVolumeClaimStatus, Pod,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use ststui::app::AppState;
use ststui::backend::{ObjRef, Object};
use ui_support::*;

fn claim(name: &str, phase: &str) -> Object {
    let storage = |q: &str| BTreeMap::from([("storage".to_string(), Quantity(q.into()))]);
    Object::Claim(Arc::new(PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: Some(PersistentVolumeClaimSpec {
            storage_class_name: Some("fast".into()),
            resources: Some(k8s_openapi::api::core::v1::VolumeResourceRequirements {
                requests: Some(storage("10Gi")),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: Some(PersistentVolumeClaimStatus {
            phase: Some(phase.into()),
            capacity: (phase == "Bound").then(|| storage("10Gi")),
            ..Default::default()
        }),
    }))
}

/// The blocked canary with a claim template `data` (deleted on scale-down, kept with the set):
/// web-0..web-3's claims Bound, web-4's Pending and web-4 itself Pending.
fn waiting_on_storage() -> AppState {
    let mut st = blocked().state();
    let set_ref = ObjRef::new("default", "web");
    let mut set: StatefulSet = st.mirror.set(&set_ref).unwrap().clone();
    set.spec.volume_claim_templates = Some(vec![PersistentVolumeClaim {
        metadata: ObjectMeta { name: Some("data".into()), ..Default::default() },
        ..Default::default()
    }]);
    set.spec.persistent_volume_claim_retention_policy =
        Some(StatefulSetPersistentVolumeClaimRetentionPolicy {
            when_scaled: Some("Delete".into()),
            when_deleted: Some("Retain".into()),
        });
    st.mirror.apply(Object::Set(Arc::new(set)));
    for o in 0..4 {
        st.mirror.apply(claim(&format!("data-web-{o}"), "Bound"));
    }
    st.mirror.apply(claim("data-web-4", "Pending"));
    let key = ObjRef::new("default", "web-4");
    let mut pod: Pod = st.mirror.pod(&key).unwrap().clone();
    let status = pod.status.get_or_insert_with(Default::default);
    status.phase = Some("Pending".into());
    status.container_statuses = None;
    st.mirror.apply(Object::Pod(Arc::new(pod)));
    st
}

fn screen(st: &AppState, w: u16, h: u16) -> String {
    screen_text(render(st, w, h).backend().buffer())
}

#[test]
fn the_detail_lists_the_claims_and_what_the_retention_policy_does() {
    let text = screen(&waiting_on_storage(), 160, 90);
    assert!(text.contains("claim      data-web-4 Pending 10Gi fast"), "{text}");
    assert!(text.contains("retention  deleted on scale-down, kept with the set"), "{text}");
}

#[test]
fn the_grid_marks_the_ordinal_whose_claim_is_not_bound_and_only_it() {
    let text = screen(&waiting_on_storage(), 160, 50);
    let row = |name: &str| text.lines().find(|l| l.contains(&format!(" {name} "))).unwrap();
    assert!(row("web-4").contains("claim data-web-4 Pending"), "{text}");
    assert!(!row("web-3").contains("claim"), "{text}");
}

#[test]
fn the_controller_pane_names_the_claim_a_pending_pod_waits_on() {
    let text = screen(&waiting_on_storage(), 220, 50);
    assert!(text.contains("web-4 not Ready (claim data-web-4 Pending) — OrderedReady"), "{text}");
}
