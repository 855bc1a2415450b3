//! Snapshots of the operator's context: the log overlay at 80×24 (following, and a log that
//! cannot be read) and the pod detail with its Events and claim at 200×50.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::ui_support;

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use k8s_openapi::api::core::v1::{Event as KubeEvent, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use ststui::app::{AppState, Msg, update};
use ststui::backend::{BackendEvent, LogChunk, LogRequest, ObjRef, Object};
use ui_support::*;

fn key(st: &mut AppState, c: char) {
    update(st, Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)));
}

fn snap(name: &str, st: &AppState, w: u16, h: u16) {
    let text = screen_text(render(st, w, h).backend().buffer());
    insta::assert_snapshot!(name, text);
}

/// The blocked canary with web-4 selected.
fn canary() -> AppState {
    let mut st = blocked().state();
    st.selected_ordinal = 4;
    st
}

#[test]
fn the_log_overlay_follows_at_80x24() {
    let mut st = canary();
    key(&mut st, 'L');
    let request = LogRequest { pod: ObjRef::new("default", "web-4"), previous: false };
    let lines = (0..30).map(|i| format!("2026-11-25T10:00:{i:02}Z request {i} served")).collect();
    update(&mut st, Msg::Backend(BackendEvent::Log { request, chunk: LogChunk::Replace(lines) }));
    snap("log_following_80x24", &st, 80, 24);
}

#[test]
fn a_log_that_cannot_be_read_says_why_at_80x24() {
    let mut st = canary();
    key(&mut st, 'L');
    key(&mut st, 'p');
    let request = LogRequest { pod: ObjRef::new("default", "web-4"), previous: true };
    let why = "previous terminated container \"app\" in pod \"web-4\" not found".to_string();
    update(&mut st, Msg::Backend(BackendEvent::Log { request, chunk: LogChunk::Failed(why) }));
    snap("log_failed_80x24", &st, 80, 24);
}

#[test]
fn the_detail_lists_events_warnings_first_200x50() {
    let mut st = canary();
    let now = st.now.unwrap();
    let ev = |name: &str, reason: &str, message: &str, warning: bool, count: i32, ago: i64| {
        Object::Event(Arc::new(KubeEvent {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                ..Default::default()
            },
            involved_object: ObjectReference {
                kind: Some("Pod".into()),
                name: Some("web-4".into()),
                namespace: Some("default".into()),
                ..Default::default()
            },
            reason: Some(reason.into()),
            message: Some(message.into()),
            type_: Some(if warning { "Warning" } else { "Normal" }.into()),
            count: Some(count),
            last_timestamp: Some(Time(now - k8s_openapi::jiff::SignedDuration::from_secs(ago))),
            ..Default::default()
        }))
    };
    for o in [
        ev("a", "Pulled", "Container image \"nginx:broken\" already present", false, 1, 40),
        ev("b", "Started", "Started container app", false, 1, 39),
        ev(
            "c",
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            true,
            12,
            5,
        ),
    ] {
        update(&mut st, Msg::Backend(BackendEvent::Applied(o)));
    }
    snap("detail_events_200x50", &st, 200, 50);
}
