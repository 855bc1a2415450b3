//! The namespace's Warnings are watched from now, never listed: the Warnings that exist at start
//! (old or recent) are history, not timeline lines; one that comes after is a line when it is
//! about the set's pods. Streamed: one watch with `sendInitialEvents=false`; a server that does
//! not stream lists: a list of one object for the resourceVersion, then a watch from it. The
//! watch resumes from the last resourceVersion seen, and from now after it expired. On the
//! mock API (`kube_mock`), paused time.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::time::Duration;

use serde_json::{Value, json};
use ststui::backend::{BackendEvent, EventKind, Op};

/// The engine's input: held while a test runs (dropped, the engine stops).
type Engine = tokio::sync::mpsc::UnboundedSender<Op>;

use super::cluster_faults::{Seen, engine, pass, synced};
use crate::support::kube_mock::{self, Fake, Streams};

/// A Warning about `pod`, last seen `ago` before now.
fn warning(uid: &str, pod: &str, reason: &str, ago: Duration) -> Value {
    let at = k8s_openapi::jiff::Timestamp::now()
        - k8s_openapi::jiff::SignedDuration::try_from(ago).unwrap();
    json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": format!("{pod}.{uid}"), "namespace": "default", "uid": uid},
        "involvedObject": {"kind": "Pod", "name": pod, "namespace": "default"},
        "reason": reason, "message": format!("{reason} of {pod}"), "type": "Warning", "count": 1,
        "firstTimestamp": at.to_string(), "lastTimestamp": at.to_string()})
}

/// The objects of the timeline's Event lines, in order.
fn lines(seen: &Seen) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            BackendEvent::Timeline(ev) => match &ev.kind {
                EventKind::Event { object, reason, .. } => Some(format!("{object} {reason}")),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// The queries of the requests for the namespace's Warnings (list or watch).
fn warning_requests(fake: &Fake) -> Vec<(bool, String)> {
    fake.lock()
        .seen
        .iter()
        .filter(|s| s.resource == "events" && s.query.contains("type%3DWarning"))
        .map(|s| (s.watch, s.query.clone()))
        .collect()
}

/// A fake with a Warning of an hour ago and one of a minute ago about the set's pods, and one
/// of a minute ago about another set's, started; the engine on `web` past its first view.
async fn started(streams: Streams) -> (Fake, Seen, Engine) {
    let (fake, mock) = kube_mock::start(3);
    {
        let mut st = fake.lock();
        st.streams = streams;
        st.events = vec![
            warning("old", "web-1", "FailedMount", Duration::from_secs(3600)),
            warning("recent", "web-2", "BackOff", Duration::from_secs(60)),
            warning("other", "db-0", "BackOff", Duration::from_secs(60)),
        ];
    }
    let (tx, seen) = engine(mock);
    pass(Duration::from_secs(3)).await;
    assert!(synced(&seen));
    (fake, seen, tx)
}

#[tokio::test(start_paused = true)]
async fn warnings_that_exist_at_start_are_never_listed_nor_shown_and_new_ones_are() {
    for streams in [Streams::Yes, Streams::Refused] {
        let (fake, seen, _engine) = started(streams).await;
        let asked = warning_requests(&fake);
        let case = format!("{streams:?}: {asked:?}");
        assert_eq!(lines(&seen), Vec::<String>::new(), "nothing from before the start: {case}");
        let watches: Vec<&String> = asked.iter().filter(|(w, _)| *w).map(|(_, q)| q).collect();
        assert_eq!(watches.len(), 1, "{case}");
        if streams == Streams::Yes {
            assert_eq!(asked.len(), 1, "one watch, no list: {case}");
            assert!(watches[0].contains("sendInitialEvents=false"), "{case}");
            assert!(watches[0].contains("resourceVersionMatch=NotOlderThan"), "{case}");
            assert!(!watches[0].contains("resourceVersion="), "from now: {case}");
        } else {
            let list = &asked[0];
            assert!(!list.0 && list.1.contains("limit=1"), "a list of one object first: {case}");
            let rv = fake.lock().rv;
            assert!(
                watches[0].contains(&format!("resourceVersion={rv}")),
                "from its version: {case}"
            );
            assert!(!watches[0].contains("sendInitialEvents"), "{case}");
        }
        fake.emit("events", "ADDED", warning("new", "web-3", "Unhealthy", Duration::ZERO));
        fake.emit("events", "ADDED", warning("new-other", "db-1", "Unhealthy", Duration::ZERO));
        pass(Duration::from_secs(1)).await;
        assert_eq!(lines(&seen), ["pod/web-3 Unhealthy"], "only the set's pods: {case}");
    }
}

#[tokio::test(start_paused = true)]
async fn the_warnings_watch_resumes_where_it_was_and_from_now_after_it_expired() {
    let (fake, seen, _engine) = started(Streams::Yes).await;
    fake.emit("events", "ADDED", warning("a", "web-0", "BackOff", Duration::ZERO));
    pass(Duration::from_secs(1)).await;
    let at = fake.lock().rv;
    // The server ends the watch (its timeout): the next one starts after the last change seen.
    fake.end_watches("events");
    pass(Duration::from_secs(1)).await;
    let asked = warning_requests(&fake);
    let last = &asked.last().unwrap().1;
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(last.contains(&format!("resourceVersion={at}")), "resumed: {last}");
    assert!(!last.contains("sendInitialEvents"), "{last}");
    // A change in between is not missed.
    fake.emit("events", "MODIFIED", {
        let mut w = warning("a", "web-0", "BackOff", Duration::ZERO);
        w["count"] = json!(2);
        w
    });
    pass(Duration::from_secs(1)).await;
    assert_eq!(lines(&seen), ["pod/web-0 BackOff", "pod/web-0 BackOff"], "its count grew");
    // Expired: from now again, said in the log only.
    let gone = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410,
        "reason": "Expired", "message": "too old resource version"});
    fake.emit("events", "ERROR", gone);
    pass(Duration::from_secs(1)).await;
    let asked = warning_requests(&fake);
    let last = &asked.last().unwrap().1;
    assert_eq!(asked.len(), 3, "{asked:?}");
    assert!(
        last.contains("sendInitialEvents=false") && !last.contains("resourceVersion="),
        "{last}"
    );
    let said = seen.lock().unwrap().iter().filter(|e| matches!(e, BackendEvent::Error(_))).count();
    assert_eq!(said, 0, "an expired watch is no error on the screen");
}
