//! Why a pod is not Ready, on screen: the pod detail says it first ("why") and lists the
//! containers with their state and last termination; the controller pane's blocker carries the
//! reason ("web-4 not Ready (CrashLoopBackOff: exit 1, 5 restarts) — OrderedReady holds the
//! rollout"). A pod whose status says nothing more keeps the words it had.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::ui_support;

use std::sync::Arc;

use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateTerminated, ContainerStateWaiting, ContainerStatus, Pod,
};
use ststui::app::AppState;
use ststui::backend::{ObjRef, Object};
use ui_support::*;

/// The blocked canary with web-4's container in a crash loop (5 restarts, last exit 1).
fn crashing() -> AppState {
    let mut st = blocked().state();
    let key = ObjRef::new("default", "web-4");
    let mut pod: Pod = st.mirror.pod(&key).unwrap().clone();
    let status = pod.status.get_or_insert_with(Default::default);
    status.container_statuses = Some(vec![ContainerStatus {
        name: "app".into(),
        image: "nginx:broken".into(),
        ready: false,
        restart_count: 5,
        state: Some(ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some("CrashLoopBackOff".into()),
                message: Some("back-off 2m40s restarting failed container=app".into()),
            }),
            ..Default::default()
        }),
        last_state: Some(ContainerState {
            terminated: Some(ContainerStateTerminated {
                reason: Some("Error".into()),
                exit_code: 1,
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }]);
    st.mirror.apply(Object::Pod(Arc::new(pod)));
    st
}

fn screen(st: &AppState, w: u16, h: u16) -> String {
    screen_text(render(st, w, h).backend().buffer())
}

#[test]
fn the_detail_says_why_first_and_lists_the_containers() {
    let text = screen(&crashing(), 160, 90);
    assert!(text.contains("why        CrashLoopBackOff: exit 1, 5 restarts"), "{text}");
    assert!(text.contains("container  app waiting: CrashLoopBackOff — back-off 2m40s"), "{text}");
    assert!(text.contains("  last     Error, exit 1"), "{text}");
    // "why" is right under the state, before the rollout role.
    let row = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap();
    assert!(row("│ why        ") < row("│ rollout    stuck"), "{text}");
}

#[test]
fn the_controller_pane_names_the_reason_the_controller_waits() {
    let text = screen(&crashing(), 200, 50);
    assert!(
        text.contains("waiting: web-4 not Ready (CrashLoopBackOff: exit 1, 5 restarts) —"),
        "{text}"
    );
}

#[test]
fn a_pod_whose_status_says_nothing_more_keeps_its_words() {
    let text = screen(&blocked().state(), 200, 50);
    assert!(text.contains("web-4 not Ready — OrderedReady waits for it before the next"), "{text}");
    assert!(!text.contains("why "), "{text}");
}
