//! The cluster backend under the faults a real network makes, on paused tokio time with kube-rs's
//! client over tower-test's mock service (`kube_mock`): a quiet set reconnects as soon as a
//! watch reopens, a silent watch is restarted, one 500 is answered-with-errors (not
//! unreachable) and then passes, a kind the user may not list is unknown and holds nothing up,
//! a write whose reply was lost is read back, and an idempotent one is sent again.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::kube_mock;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::objects::web;
use hyper::Method;
use kube_mock::{Fault, Streams};
use ststui::backend::{BackendEvent, ClusterOp, Connection, FailureKind, ObjKind, Op, Write};
use ststui::cluster::{Clients, Session, Target, Written};

pub(crate) type Seen = Arc<Mutex<Vec<BackendEvent>>>;

/// The engine on this (paused) runtime, against the fake, opened on `web`.
pub(crate) fn engine(mock: kube_mock::Mock) -> (tokio::sync::mpsc::UnboundedSender<Op>, Seen) {
    engine_with(mock, Target { name: Some("web".into()), ..Target::default() })
}

/// [`engine`] for `target`.
fn engine_with(
    mock: kube_mock::Mock,
    target: Target,
) -> (tokio::sync::mpsc::UnboundedSender<Op>, Seen) {
    let clients = Clients::from_service(mock, "default");
    let session = Session {
        client: clients.client(),
        clients,
        namespace: "default".into(),
        user: "tester".into(),
        server: "https://fake".into(),
        context: "fake".into(),
    };
    let seen: Seen = Arc::default();
    let s = Arc::clone(&seen);
    let sink = Arc::new(move |ev| s.lock().unwrap_or_else(|e| e.into_inner()).push(ev));
    let (tx, run) = ststui::cluster::engine(target, session, sink);
    tokio::spawn(run);
    (tx, seen)
}

/// Lets virtual time pass in steps (the fake and the engine run between them).
pub(crate) async fn pass(d: Duration) {
    let step = Duration::from_millis(50);
    let mut gone = Duration::ZERO;
    while gone < d {
        tokio::time::sleep(step).await;
        gone += step;
    }
}

fn connections(seen: &Seen) -> Vec<Connection> {
    seen.lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            BackendEvent::Connection(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

pub(crate) fn synced(seen: &Seen) -> bool {
    seen.lock().unwrap().iter().any(|e| matches!(e, BackendEvent::Synced))
}

fn changes(seen: &Seen) -> usize {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, BackendEvent::Applied(_) | BackendEvent::Deleted(_)))
        .count()
}

#[tokio::test(start_paused = true)]
async fn a_quiet_set_is_live_again_as_soon_as_its_watches_reopen() {
    let (fake, mock) = kube_mock::start(3);
    let (_tx, seen) = engine(mock);
    pass(Duration::from_secs(2)).await;
    assert!(synced(&seen), "the first view came");
    // The connection to the server breaks: the pods watch resets, and reopening it is refused
    // twice (the server is away), then answered. No object changes at all.
    fake.fault(
        Method::GET,
        "pods",
        Some(true),
        Fault::Transport(std::io::ErrorKind::ConnectionRefused),
        2,
    );
    let before = changes(&seen);
    fake.reset_watches("pods");
    pass(Duration::from_secs(1)).await;
    let shown = connections(&seen);
    assert!(
        matches!(shown.last(), Some(Connection::Unreachable { .. })),
        "refused: unreachable, not 'answered with an error': {shown:?}"
    );
    pass(Duration::from_secs(5)).await;
    assert_eq!(connections(&seen).last(), Some(&Connection::Up), "live once the watch reopened");
    assert_eq!(changes(&seen), before, "and not because an object changed");
    assert_eq!(
        connections(&seen).iter().filter(|c| matches!(c, Connection::Unreachable { .. })).count(),
        1
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_that_stops_answering_is_unreachable_within_seconds_and_up_when_it_speaks() {
    let (fake, mock) = kube_mock::start(3);
    let (_tx, seen) = engine(mock);
    pass(Duration::from_secs(2)).await;
    assert!(synced(&seen));
    // A quiet set on a healthy server: asked once it has been quiet a while, and up.
    pass(Duration::from_secs(15)).await;
    assert!(fake.count("readyz", false) >= 1, "the quiet server was asked");
    assert_eq!(connections(&seen).last(), Some(&Connection::Up));
    // The server hangs (SIGSTOP): its watches fall silent and it answers nothing.
    fake.fault(Method::GET, "readyz", Some(false), Fault::Silent, 100);
    let hung = tokio::time::Instant::now();
    let unreachable = loop {
        pass(Duration::from_millis(500)).await;
        if let Some(Connection::Unreachable { error, .. }) = connections(&seen).last() {
            break error.clone();
        }
        assert!(hung.elapsed() < Duration::from_secs(30), "{:?}", connections(&seen));
    };
    assert!(hung.elapsed() <= Duration::from_secs(19), "said after {:?}", hung.elapsed());
    assert!(unreachable.contains("no answer to GET /readyz within 5 s"), "{unreachable}");
    // It speaks again (a bookmark on a watch): up at once, whatever the check said.
    fake.bookmark("pods", "Pod", "v1");
    pass(Duration::from_secs(3)).await;
    assert_eq!(connections(&seen).last(), Some(&Connection::Up));
}

#[tokio::test(start_paused = true)]
async fn a_server_shutting_down_is_said_failing_by_its_readyz() {
    let (fake, mock) = kube_mock::start(3);
    let (_tx, seen) = engine(mock);
    pass(Duration::from_secs(2)).await;
    fake.fault(Method::GET, "readyz", Some(false), Fault::Status(500), 100);
    pass(Duration::from_secs(15)).await;
    match connections(&seen).last() {
        Some(Connection::Failing { error, .. }) => {
            assert!(error.contains("GET /readyz: the server says it is not ready"), "{error}");
        }
        other => panic!("not failing: {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_watch_silent_past_twice_the_bookmark_interval_is_restarted() {
    let (fake, mock) = kube_mock::start(3);
    let (_tx, _seen) = engine(mock);
    pass(Duration::from_secs(2)).await;
    assert_eq!(fake.count("pods", true), 1);
    // Bookmarks keep a quiet watch alive.
    for _ in 0..3 {
        pass(Duration::from_secs(60)).await;
        fake.bookmark("pods", "Pod", "v1");
    }
    assert_eq!(fake.count("pods", true), 1, "a watch with bookmarks is not restarted");
    // Silence: headers sent, then nothing. Restarted after two minutes, not before.
    pass(Duration::from_secs(110)).await;
    assert_eq!(fake.count("pods", true), 1);
    pass(Duration::from_secs(15)).await;
    assert_eq!(fake.count("pods", true), 2, "the silent watch was opened again");
}

/// Streamed (the listing is a watch) or in pages (a server that refuses streamed lists: the
/// watchers fall back to lists), one 500 on the pods' first listing is said as server errors,
/// as a list, and retried.
#[tokio::test(start_paused = true)]
async fn one_500_on_the_first_pods_list_is_retried_and_said_as_server_errors() {
    for streams in [Streams::Yes, Streams::Refused] {
        let (fake, mock) = kube_mock::start(3);
        fake.lock().streams = streams;
        let watch = streams == Streams::Yes;
        fake.fault(Method::GET, "pods", Some(watch), Fault::Status(500), 1);
        let (_tx, seen) = engine(mock);
        pass(Duration::from_secs(5)).await;
        let shown = connections(&seen);
        let failing = shown.iter().find(|c| !matches!(c, Connection::Up));
        assert!(
            matches!(failing, Some(Connection::Failing { error, .. }) if error.contains("list pods in default: 500")),
            "{streams:?}: {shown:?}"
        );
        assert_eq!(shown.last(), Some(&Connection::Up));
        assert!(synced(&seen));
        if watch {
            assert_eq!(fake.count("pods", true), 2, "streamed again after the 500");
            assert_eq!(fake.count("pods", false), 0, "never listed in pages");
        } else {
            assert_eq!(fake.count("pods", false), 2, "listed again after the 500");
        }
    }
}

/// A malformed answer, to a list or to a streamed listing, is said as the server's error (not
/// unreachable) and passes.
#[tokio::test(start_paused = true)]
async fn a_malformed_body_is_an_answer_not_an_outage() {
    for streams in [Streams::Yes, Streams::Refused] {
        let (fake, mock) = kube_mock::start(3);
        fake.lock().streams = streams;
        let watch = streams == Streams::Yes;
        fake.fault(Method::GET, "pods", Some(watch), Fault::Malformed, 1);
        let (_tx, seen) = engine(mock);
        pass(Duration::from_secs(5)).await;
        let shown = connections(&seen);
        assert!(
            shown.iter().any(|c| matches!(c, Connection::Failing { .. })),
            "{streams:?}: {shown:?}"
        );
        assert_eq!(shown.last(), Some(&Connection::Up), "{shown:?}");
        assert!(!shown.iter().any(|c| matches!(c, Connection::Unreachable { .. })), "{shown:?}");
        assert!(synced(&seen));
    }
}

#[tokio::test(start_paused = true)]
async fn a_kind_that_may_not_be_listed_is_unknown_and_holds_nothing_up() {
    let (fake, mock) = kube_mock::start(3);
    // A set with claims (its claims are watched).
    fake.lock().set["spec"]["volumeClaimTemplates"] = serde_json::json!([{
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    }]);
    fake.fault(Method::GET, "events", None, Fault::Status(403), 1000);
    fake.fault(Method::GET, "persistentvolumeclaims", None, Fault::Status(403), 1000);
    let (_tx, seen) = engine(mock);
    pass(Duration::from_secs(5)).await;
    let v = seen.lock().unwrap().clone();
    let denied: Vec<(ObjKind, String)> = v
        .iter()
        .filter_map(|e| match e {
            BackendEvent::Access { kind, denied: Some(why) } => Some((*kind, why.clone())),
            _ => None,
        })
        .collect();
    assert!(
        denied.iter().any(|(k, w)| *k == ObjKind::Event
            && (w.starts_with("you may not list events in default")
                || w.starts_with("you may not watch events in default"))),
        "{denied:?}"
    );
    assert!(denied.iter().any(|(k, _)| *k == ObjKind::Claim), "{denied:?}");
    assert_eq!(denied.len(), 2, "said once each, not at every retry: {denied:?}");
    assert!(synced(&seen), "Events and claims never hold up the first view");
    assert_eq!(
        connections(&seen).last().cloned().unwrap_or(Connection::Up),
        Connection::Up,
        "a 403 is an answer"
    );
    // Pods forbidden: unknown, and the first view still comes (the console says why).
    let (fake, mock) = kube_mock::start(3);
    fake.fault(Method::GET, "pods", None, Fault::Status(403), 1000);
    let (_tx, seen) = engine(mock);
    pass(Duration::from_secs(5)).await;
    let v = seen.lock().unwrap().clone();
    assert!(
        v.iter().any(|e| matches!(e, BackendEvent::Access { kind: ObjKind::Pod, denied: Some(_) }))
    );
    assert!(!v.iter().any(|e| matches!(e, BackendEvent::Listed { kind: ObjKind::Pod, objects, .. } if !objects.is_empty())));
    assert!(synced(&seen));
}

fn writer(mock: kube_mock::Mock, read_back: Duration) -> ststui::cluster::write::Writer {
    let clients = Clients::from_service(mock, "default");
    ststui::cluster::write::Writer {
        client: clients.client(),
        identity: Arc::new(Mutex::new("tester".into())),
        read_back,
    }
}

/// A partition write on `web` (3 → 2) decided on the set as it is, with `faults` queued
/// first and a read-back of `read_back` seconds: the fake, and what the write said.
async fn lost_write(
    faults: &[(Method, Fault)],
    read_back: u64,
) -> (kube_mock::Fake, Result<Written, ststui::backend::Failure>) {
    let (fake, mock) = kube_mock::start(3);
    for (method, fault) in faults {
        fake.fault(method.clone(), "statefulsets", None, fault.clone(), 1000);
    }
    let basis = kube_mock::the_set(&fake);
    let op = ClusterOp::SetPartition { set: web(), partition: 2 };
    let out = writer(mock, Duration::from_secs(read_back))
        .write(Write::on(op, Some(Box::new(basis))))
        .await;
    (fake, out)
}

/// An idempotent write (`play`'s apply, kubelet and fault lines) whose reply was lost is sent
/// again until answered; with every reply lost, the last error once the read-back time is over.
#[tokio::test(start_paused = true)]
async fn an_idempotent_write_whose_reply_was_lost_is_sent_again() {
    use k8s_openapi::api::apps::v1::StatefulSet;
    use kube::api::{Api, Patch, PatchParams};
    let patch =
        serde_json::json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 1}}}});
    for (lost, answered) in [(1, true), (1000, false)] {
        let (fake, mock) = kube_mock::start(3);
        fake.fault(Method::PATCH, "statefulsets", None, Fault::ApplyThenReset, lost);
        let w = writer(mock, Duration::from_secs(10));
        let api: Api<StatefulSet> = Api::namespaced(w.client.clone(), "default");
        let pp = PatchParams::default();
        let merge = Patch::Merge(&patch);
        let out = w.resend(|| api.patch("web", &pp, &merge)).await;
        assert_eq!(out.is_ok(), answered, "{lost} lost: {out:?}");
        assert_eq!(fake.partition(), 1, "carried out either way");
        let sent = fake.count("statefulsets", false);
        if answered {
            assert_eq!(sent, 2, "sent once more");
        } else {
            assert!(sent > 2, "sent again while the read-back time lasted: {sent}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_write_whose_reply_was_lost_is_read_back() {
    use std::io::ErrorKind::{ConnectionRefused, ConnectionReset};
    let patch = |f: Fault| (Method::PATCH, f);
    // Written, reply lost: read back, it is told as written.
    let (fake, out) = lost_write(&[patch(Fault::ApplyThenReset)], 30).await;
    assert!(
        matches!(&out, Ok(Written::ReadBack(s)) if s.contains("written (the reply was lost")),
        "{out:?}"
    );
    assert_eq!(fake.partition(), 2);
    // Refused before sending (no connection): known not written, without reading back.
    let (fake, out) = lost_write(&[patch(Fault::Transport(ConnectionRefused))], 30).await;
    let f = out.unwrap_err();
    assert!(f.message.starts_with("nothing was written"), "{}", f.message);
    assert_eq!(fake.count("statefulsets", false), 1, "no read-back needed");
    // Sent, reply lost, not applied: read back, known not written.
    let (fake, out) = lost_write(&[patch(Fault::Transport(ConnectionReset))], 30).await;
    let f = out.unwrap_err();
    assert!(f.message.ends_with("read back: nothing was written"), "{}", f.message);
    assert_eq!(fake.partition(), 3);
    // Answered with a body that cannot be read: read back too.
    let (_, out) = lost_write(&[patch(Fault::Malformed)], 30).await;
    let f = out.unwrap_err();
    assert!(f.message.ends_with("read back: nothing was written"), "{}", f.message);
    // Sent, reply lost, and the server stays away: unknown, never "nothing was written".
    let gone = (Method::GET, Fault::Transport(ConnectionRefused));
    let (_, out) = lost_write(&[patch(Fault::ApplyThenReset), gone], 10).await;
    let f = out.unwrap_err();
    assert_eq!(f.kind, FailureKind::Unknown, "{f:?}");
    assert!(f.message.contains("may or may not be written"), "{}", f.message);
    assert!(!f.message.contains("nothing was written"), "{}", f.message);
}

/// Requests until the first complete view of a 1,000-pod set: the server's version, the set,
/// its pods and revisions, each one streamed watch (a server that refuses streamed lists: the
/// refusal, then lists — two pages of 500 pods — and watches); no claims for a set without claim
/// templates. Nothing optional before the pods and revisions have listed: then the set's Events
/// (by the involved object) and the namespace's Warnings, never its whole Event history, who
/// we are and one rules review (not three access reviews; with `--read-only` neither of these),
/// the budgets, and one discovery of the EvictionRequest API's group.
#[tokio::test(start_paused = true)]
async fn the_first_view_of_a_thousand_pods_takes_at_most_ten_requests_and_events_come_after() {
    for streams in [Streams::Yes, Streams::Refused] {
        for read_only in [false, true] {
            first_view_of_a_thousand_pods(streams, read_only).await;
        }
    }
}

async fn first_view_of_a_thousand_pods(streams: Streams, read_only: bool) {
    let (fake, mock) = kube_mock::start_with(3, 1000);
    fake.lock().streams = streams;
    let target = Target { name: Some("web".into()), read_only, ..Target::default() };
    let (_tx, seen) = engine_with(mock, target);
    pass(Duration::from_secs(3)).await;
    assert!(synced(&seen));
    let listed: usize = seen
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            BackendEvent::Listed { kind: ObjKind::Pod, objects, .. } => Some(objects.len()),
            _ => None,
        })
        .sum();
    assert_eq!(listed, 1000);
    let requests: Vec<String> = fake
        .lock()
        .seen
        .iter()
        .map(|s| format!("{} {}{}", s.method, s.resource, if s.watch { " (watch)" } else { "" }))
        .collect();
    let case = format!("{streams:?}, read-only {read_only}: {requests:?}");
    let optional = |r: &String| {
        ["events", "selfsubject", "poddisruptionbudgets", "discovery"].iter().any(|o| r.contains(o))
    };
    let first_optional = requests.iter().position(optional);
    let before = &requests[..first_optional.unwrap_or(requests.len())];
    let streamed = streams == Streams::Yes;
    // Streamed: version, set, pods, revisions. In pages: version, the set's refused watch, its
    // list and watch, two pages of pods and their watch, the revisions' list and watch.
    let most = if streamed { 4 } else { 9 };
    assert!(before.len() <= most, "{} requests before the optional ones: {case}", before.len());
    let last = |what: &str| requests.iter().rposition(|r| r == what);
    let (pods, revisions) = if streamed {
        ("GET pods (watch)", "GET controllerrevisions (watch)")
    } else {
        ("GET pods", "GET controllerrevisions")
    };
    assert!(
        first_optional > last(pods) && first_optional > last(revisions),
        "nothing optional before the first view's listings: {case}"
    );
    let events: Vec<&String> = requests.iter().filter(|r| r.contains("events")).collect();
    let per_watch = if streamed { 1 } else { 2 };
    assert_eq!(events.len(), 2 * per_watch, "the set's Events and the Warnings: {case}");
    for q in fake.lock().seen.iter().filter(|s| s.resource == "events").map(|s| &s.query) {
        let by_set = q.contains("involvedObject.kind%3DStatefulSet")
            && q.contains("involvedObject.name%3Dweb");
        assert!(by_set || q.contains("type%3DWarning"), "never every Event: {q}");
    }
    let asked = if read_only { 0 } else { 2 };
    assert_eq!(requests.iter().filter(|r| r.contains("selfsubject")).count(), asked, "{case}");
    let budgets = requests.iter().filter(|r| r.contains("poddisruptionbudgets")).count();
    assert_eq!(budgets, per_watch, "the namespace's budgets, after the first view: {case}");
    let discovery = requests.iter().filter(|r| r.contains("discovery")).count();
    assert_eq!(discovery, 1, "one look for the EvictionRequest API, after the first view: {case}");
    assert!(requests.len() <= most + events.len() + asked + budgets + discovery, "{case}");
    if streamed {
        assert_eq!((fake.count("pods", false), fake.count("pods", true)), (0, 1), "{case}");
    } else {
        assert_eq!(fake.count("pods", false), 2, "two pages of 500: {case}");
    }
    assert!(!requests.iter().any(|r| r.contains("selfsubjectaccessreviews")), "{case}");
    assert!(!requests.iter().any(|r| r.contains("persistentvolumeclaims")), "{case}");
}

/// A server that ignores `sendInitialEvents` (its watch sends the objects and never the
/// bookmark that ends them): after a quiet while the watchers list in pages, and the first view
/// holds each pod once.
#[tokio::test(start_paused = true)]
async fn a_server_that_never_ends_a_streamed_list_is_listed_in_pages() {
    let (fake, mock) = kube_mock::start_with(3, 1000);
    fake.lock().streams = Streams::Ignored;
    let (_tx, seen) = engine(mock);
    pass(Duration::from_secs(3)).await;
    assert!(!synced(&seen), "not yet: the streamed lists have not ended");
    pass(Duration::from_secs(10)).await;
    assert!(synced(&seen));
    let v = seen.lock().unwrap().clone();
    let pods: Vec<usize> = v
        .iter()
        .filter_map(|e| match e {
            BackendEvent::Listed { kind: ObjKind::Pod, objects, .. } => Some(objects.len()),
            _ => None,
        })
        .collect();
    assert_eq!(pods, vec![1000], "one listing, each pod once");
    assert_eq!(fake.count("pods", false), 2, "listed in two pages");
    let shown = connections(&seen);
    assert!(shown.iter().all(|c| matches!(c, Connection::Up)), "nothing to say: {shown:?}");
}

/// A server that refuses streamed lists (422, the `WatchList` gate off) is told apart from a
/// failing one: nothing is said, and after the first refusal no watcher asks for one again.
#[tokio::test(start_paused = true)]
async fn a_refused_streamed_list_is_not_an_error_and_is_asked_once() {
    let (fake, mock) = kube_mock::start(3);
    fake.lock().streams = Streams::Refused;
    let (_tx, seen) = engine(mock);
    pass(Duration::from_secs(3)).await;
    assert!(synced(&seen));
    let shown = connections(&seen);
    assert!(shown.iter().all(|c| matches!(c, Connection::Up)), "{shown:?}");
    assert!(!seen.lock().unwrap().iter().any(|e| matches!(e, BackendEvent::Error(_))));
    let asked: Vec<String> = fake
        .lock()
        .seen
        .iter()
        .filter(|s| s.query.contains("sendInitialEvents=true"))
        .map(|s| s.resource.clone())
        .collect();
    assert_eq!(asked, vec!["statefulsets".to_string()], "only the first watcher asked");
    assert_eq!(fake.count("pods", false), 1, "the pods listed");
}

/// `-A` without permission to list every namespace's sets: the set list is unknown, says so with
/// the permission and suggests `-n`, and the first view comes (never "loading" forever).
#[tokio::test(start_paused = true)]
async fn every_namespace_forbidden_says_so_and_suggests_n() {
    let (fake, mock) = kube_mock::start(3);
    fake.fault(Method::GET, "statefulsets", None, Fault::Status(403), 1000);
    let (_tx, seen) = engine_with(mock, Target { all_namespaces: true, ..Target::default() });
    pass(Duration::from_secs(3)).await;
    assert!(synced(&seen), "not loading forever");
    let v = seen.lock().unwrap().clone();
    let why = v.iter().find_map(|e| match e {
        BackendEvent::Access { kind: ObjKind::Set, denied: Some(w) } => Some(w.clone()),
        _ => None,
    });
    let why = why.unwrap_or_else(|| panic!("no access event: {v:?}"));
    assert!(why.starts_with("you may not list statefulsets in every namespace"), "{why}");
    assert!(why.ends_with("pass -n NAMESPACE to list the sets of one namespace"), "{why}");
}
