//! kube-rs against the served simulator: list, get, watch (resume from a version, 410 after a
//! compaction and the watcher's re-list), patch with a conflict, delete with preconditions,
//! `/scale`, `/status` validation, access reviews, the API going down, and a streaming list
//! (`sendInitialEvents`: every object whole, then the initial-events-end bookmark; refused as
//! invalid by a release with the `WatchList` gate off, and the console listing instead).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::serve_common;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::runtime::watcher;
use serde_json::json;
use serve_common::*;
use std::sync::{Arc, Mutex};
use ststui::backend::{BackendEvent, ObjKind};
use ststui::cluster::Target;
use ststui::sim::ApiFault;

fn api_code(e: &kube::Error) -> Option<(u16, String)> {
    match e {
        kube::Error::Api(s) => Some((s.code, s.reason.clone())),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_get_and_not_found() {
    let s = served(vec![set("web", 3), set("db", 1)], &[]).await;
    let sets: Api<StatefulSet> = Api::default_namespaced(s.client.clone());
    let list = sets.list(&ListParams::default()).await.unwrap();
    let names: Vec<_> = list.items.iter().filter_map(|s| s.metadata.name.clone()).collect();
    assert_eq!(names, ["db", "web"]);
    assert!(list.metadata.resource_version.is_some());
    let web = sets.get("web").await.unwrap();
    assert_eq!(web.status.and_then(|s| s.ready_replicas), Some(3));
    let err = sets.get("nope").await.unwrap_err();
    assert_eq!(api_code(&err), Some((404, "NotFound".into())));
    let pods: Api<Pod> = Api::default_namespaced(s.client.clone());
    let lp = ListParams::default().labels("app=web").fields("metadata.name!=web-0");
    let names: Vec<_> =
        pods.list(&lp).await.unwrap().items.into_iter().filter_map(|p| p.metadata.name).collect();
    assert_eq!(names, ["web-1", "web-2"]);
    // Pagination: two pages of one and the rest.
    let page = pods.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(page.items.len(), 2);
    let token = page.metadata.continue_.clone().unwrap_or_default();
    let rest = pods.list(&ListParams::default().limit(2).continue_token(&token)).await.unwrap();
    assert_eq!(rest.items.len(), 2, "db-0 and web-2");
    let bad = pods.list(&ListParams::default().fields("spec.bogus=1")).await.unwrap_err();
    assert_eq!(api_code(&bad).map(|c| c.0), Some(400));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_resumes_from_a_version_and_expired_versions_get_410() {
    let s = served(vec![set("web", 2)], &[]).await;
    let sets: Api<StatefulSet> = Api::default_namespaced(s.client.clone());
    let rv = list_version(&sets).await;
    let patch = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 1}}}});
    sets.patch("web", &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap();
    // Resumed from the list's version, the watch sees the change made after it.
    let wp = WatchParams::default().timeout(5);
    let mut stream = sets.watch(&wp, &rv).await.unwrap().boxed();
    let first = stream.try_next().await.unwrap();
    match first {
        Some(WatchEvent::Modified(o)) => {
            assert_eq!(
                o.spec.update_strategy.and_then(|u| u.rolling_update).and_then(|r| r.partition),
                Some(1)
            );
        }
        other => panic!("expected MODIFIED, got {other:?}"),
    }
    drop(stream);
    // After a compaction the old version is gone: 410 Expired, as an ERROR event.
    s.handle.caller().call(Box::new(|sim| sim.api_fault(ApiFault::Compact)));
    let old = eventually("compaction", || {
        let sets = sets.clone();
        let rv = rv.clone();
        async move {
            let mut st = sets.watch(&WatchParams::default().timeout(2), &rv).await.ok()?.boxed();
            match st.try_next().await {
                Ok(Some(WatchEvent::Error(e))) => Some(e),
                _ => None,
            }
        }
    })
    .await;
    assert_eq!((old.code, old.reason.as_str()), (410, "Expired"));
    assert!(old.message.contains("too old resource version"), "{}", old.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runtime_watcher_relists_after_an_outage_and_a_compaction() {
    let s = served(vec![set("web", 2)], &[]).await;
    let pods: Api<Pod> = Api::default_namespaced(s.client.clone());
    let mut events = watcher(pods.clone(), watcher::Config::default()).boxed();
    let (mut inits, mut errors) = (0, 0);
    let caller = s.handle.caller();
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while let Some(ev) = events.next().await {
            match ev {
                Ok(watcher::Event::InitDone) => {
                    inits += 1;
                    if inits == 1 {
                        // While the API is down, web-2 is created and the history compacted:
                        // the watcher's version is too old when it comes back.
                        caller.call(Box::new(|sim| {
                            sim.api_fault(ApiFault::Down { ms: 800 });
                            let key = ststui::backend::ObjRef::new("default", "web");
                            let op = ststui::backend::ClusterOp::Scale { set: key, replicas: 3 };
                            let _ = sim.apply_op(op.into());
                            sim.advance(1);
                            sim.api_fault(ApiFault::Compact);
                        }));
                    }
                }
                Ok(watcher::Event::InitApply(p))
                    if inits >= 1 && p.metadata.name.as_deref() == Some("web-2") =>
                {
                    return true;
                }
                Err(_) => errors += 1,
                _ => {}
            }
        }
        false
    })
    .await;
    assert_eq!(outcome, Ok(true), "no re-list with web-2 ({inits} listings, {errors} errors)");
    assert!(errors >= 1, "the outage and the 410 reach the watcher as errors");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_resource_version_is_a_conflict_and_preconditions_hold() {
    let s = served(vec![set("web", 2)], &[]).await;
    let sets: Api<StatefulSet> = Api::default_namespaced(s.client.clone());
    let web = sets.get("web").await.unwrap();
    let rv = web.metadata.resource_version.clone().unwrap_or_default();
    let p = json!({"metadata": {"resourceVersion": rv}, "spec": {"replicas": 3}});
    sets.patch("web", &PatchParams::default(), &Patch::Merge(&p)).await.unwrap();
    // The same version again is stale now.
    let err = sets.patch("web", &PatchParams::default(), &Patch::Merge(&p)).await.unwrap_err();
    assert_eq!(api_code(&err), Some((409, "Conflict".into())));
    let mut stale = web.clone();
    stale.spec.replicas = Some(1);
    let err = sets.replace("web", &PostParams::default(), &stale).await.unwrap_err();
    assert_eq!(api_code(&err), Some((409, "Conflict".into())));
    // Delete with a uid precondition: the wrong uid is refused, the right one deletes.
    let pods: Api<Pod> = Api::default_namespaced(s.client.clone());
    let pod = pods.get("web-1").await.unwrap();
    let wrong = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: Some("nope".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    let err = pods.delete("web-1", &wrong).await.unwrap_err();
    assert_eq!(api_code(&err).map(|c| c.0), Some(409));
    let right = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: pod.metadata.uid.clone(),
            resource_version: None,
        }),
        grace_period_seconds: Some(0),
        ..Default::default()
    };
    pods.delete("web-1", &right).await.unwrap();
    let old_uid = pod.metadata.uid.clone();
    let again = eventually("web-1 recreated", || {
        let (pods, old) = (pods.clone(), old_uid.clone());
        async move { pods.get("web-1").await.ok().filter(|p| p.metadata.uid != old) }
    })
    .await;
    assert_ne!(again.metadata.uid, old_uid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_status_and_access_reviews() {
    let s = served(vec![set("web", 2)], &["patch:statefulsets/scale"]).await;
    let sets: Api<StatefulSet> = Api::default_namespaced(s.client.clone());
    let scale = sets.get_scale("web").await.unwrap();
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(2));
    assert_eq!(scale.status.map(|s| s.selector), Some(Some("app=web".to_string())));
    let p = json!({"spec": {"replicas": 4}});
    let err =
        sets.patch_scale("web", &PatchParams::default(), &Patch::Merge(&p)).await.unwrap_err();
    assert_eq!(api_code(&err), Some((403, "Forbidden".into())));
    let review = |resource: &str, sub: Option<&str>| SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: Some("default".into()),
                verb: Some("patch".into()),
                group: Some("apps".into()),
                resource: Some(resource.into()),
                subresource: sub.map(str::to_string),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let reviews: Api<SelfSubjectAccessReview> = Api::all(s.client.clone());
    let scale_review = reviews
        .create(&PostParams::default(), &review("statefulsets", Some("scale")))
        .await
        .unwrap();
    assert_eq!(scale_review.status.map(|s| s.allowed), Some(false), "consistent with the 403");
    let patch_review =
        reviews.create(&PostParams::default(), &review("statefulsets", None)).await.unwrap();
    assert_eq!(patch_review.status.map(|s| s.allowed), Some(true));
    // A status the real API server refuses is refused here.
    let bad = json!({"status": {"replicas": 2, "currentReplicas": -1}});
    let err =
        sets.patch_status("web", &PatchParams::default(), &Patch::Merge(&bad)).await.unwrap_err();
    let kube::Error::Api(st) = err else { panic!("{err:?}") };
    assert_eq!((st.code, st.reason.as_str()), (422, "Invalid"));
    assert!(st.message.contains("status.currentReplicas: Invalid value: -1"), "{}", st.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_going_down_refuses_connections_and_comes_back() {
    let s = served(vec![set("web", 1)], &[]).await;
    let sets: Api<StatefulSet> = Api::default_namespaced(s.client.clone());
    sets.get("web").await.unwrap();
    s.handle.caller().call(Box::new(|sim| sim.api_fault(ApiFault::Down { ms: 1500 })));
    let down = eventually("the API to go down", || {
        let sets = sets.clone();
        async move { sets.get("web").await.err() }
    })
    .await;
    assert!(!matches!(down, kube::Error::Api(_)), "a refused connection, not a Status: {down:?}");
    eventually("the API to come back", || {
        let sets = sets.clone();
        async move { sets.get("web").await.ok() }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookmarks_when_asked_and_bounded_requests() {
    let s = served(vec![set("web", 1)], &[]).await;
    let sets: Api<StatefulSet> = Api::default_namespaced(s.client.clone());
    let rv = list_version(&sets).await;
    let wp = WatchParams::default().timeout(1);
    let events: Vec<_> = sets.watch(&wp, &rv).await.unwrap().collect().await;
    let last = events.last().and_then(|e| e.as_ref().ok());
    assert!(
        matches!(last, Some(WatchEvent::Bookmark(b)) if b.metadata.resource_version == rv),
        "{events:?}"
    );
    // A body over 3 MiB is refused with 413, before anything is decoded.
    let big = format!(
        "{{\"metadata\":{{\"name\":\"x\",\"annotations\":{{\"a\":\"{}\"}}}}}}",
        "x".repeat(4 << 20)
    );
    let req = axum::http::Request::post("/api/v1/namespaces/default/pods")
        .header("content-type", "application/json")
        .body(big.into_bytes())
        .unwrap();
    let err = s.client.request::<Pod>(req).await.unwrap_err();
    assert_eq!(api_code(&err).map(|c| c.0), Some(413), "{err:?}");
}

/// The resourceVersion of a list of the sets.
async fn list_version(sets: &Api<StatefulSet>) -> String {
    sets.list(&ListParams::default()).await.unwrap().metadata.resource_version.unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_list_brings_every_object_whole_then_its_end() {
    let s = served(vec![set("web", 3)], &[]).await;
    let pods: Api<Pod> = Api::default_namespaced(s.client.clone());
    let config = watcher::Config::default().streaming_lists();
    let mut events = watcher(pods, config).boxed();
    let mut names = Vec::new();
    loop {
        let ev = tokio::time::timeout(std::time::Duration::from_secs(10), events.next())
            .await
            .expect("the initial events' end within 10 s")
            .expect("the stream goes on")
            .expect("no error");
        match ev {
            watcher::Event::Init => {}
            watcher::Event::InitApply(p) => {
                // Whole objects, as a list brings them: spec and status decoded.
                assert!(p.spec.is_some_and(|s| !s.containers.is_empty()), "{:?}", p.metadata.name);
                assert!(p.status.and_then(|s| s.phase).is_some(), "{:?}", p.metadata.name);
                names.push(p.metadata.name.unwrap_or_default());
            }
            watcher::Event::InitDone => break,
            other => panic!("before the initial events ended: {other:?}"),
        }
    }
    names.sort();
    assert_eq!(names, ["web-0", "web-1", "web-2"]);
}

/// The console's backend against a release that streams lists (1.37) and one whose `WatchList`
/// gate is off by default (1.33, which refuses a streamed list as invalid, as the served
/// simulator reproduces): the same first view either way. Streamed, the pods come in one watch
/// and are never listed; refused, the first watcher's refusal is the only one, the others list
/// and watch, and nothing is said to the operator.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_streams_its_lists_and_lists_in_pages_where_refused() {
    for (git_version, streams) in [("v1.37.0+ststui-sim", true), ("v1.33.0+ststui-sim", false)] {
        let sim = sim(vec![set("web", 3)], kubelet(100), false);
        let (_handle, server) = serve_sim_at(sim, &[], git_version);
        let dir = std::env::temp_dir().join(format!(
            "ststui-streams-{}-{}",
            std::process::id(),
            u8::from(streams)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let kubeconfig = dir.join("kubeconfig");
        ststui::serve::write_kubeconfig(&kubeconfig, server.addr).unwrap();
        let target = Target {
            kubeconfig: Some(kubeconfig),
            name: Some("web".into()),
            read_only: true,
            ..Target::default()
        };
        let seen: Arc<Mutex<Vec<BackendEvent>>> = Arc::default();
        let s = Arc::clone(&seen);
        let sink: ststui::backend::Sink =
            Arc::new(move |ev| s.lock().unwrap_or_else(|e| e.into_inner()).push(ev));
        let session = ststui::cluster::session(&target).await.unwrap();
        let (tx, run) = ststui::cluster::engine(target, session, sink);
        let task = tokio::spawn(run);
        let pods = eventually("the first view", || {
            let v = seen.lock().unwrap().clone();
            async move {
                let synced = v.iter().any(|e| matches!(e, BackendEvent::Synced));
                let pods = v.iter().find_map(|e| match e {
                    BackendEvent::Listed { kind: ObjKind::Pod, objects, .. } => Some(objects.len()),
                    _ => None,
                });
                pods.filter(|_| synced)
            }
        })
        .await;
        assert_eq!(pods, 3, "{git_version}");
        let addr = server.addr;
        let requests = || async move {
            let get = hyper::Request::get(ststui::serve::REQUESTS_PATH).body(Vec::new()).unwrap();
            let answer = client(addr).await.request_text(get).await.unwrap();
            let requests: serde_json::Value = serde_json::from_str(&answer).unwrap();
            requests["first"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|r| r.as_str().map(str::to_string))
                .collect::<Vec<String>>()
        };
        // The namespace's Warnings: watched from now, never listed whole.
        let warnings = eventually("the Warnings watched", || async move {
            let asked: Vec<String> =
                requests().await.into_iter().filter(|r| r.contains("type%3DWarning")).collect();
            asked.iter().any(|r| r.contains("watch=true")).then_some(asked)
        })
        .await;
        if streams {
            assert_eq!(warnings.len(), 1, "{warnings:?}");
            assert!(warnings[0].contains("sendInitialEvents=false"), "{warnings:?}");
        } else {
            assert_eq!(warnings.len(), 2, "{warnings:?}");
            assert!(
                warnings[0].contains("limit=1") && !warnings[0].contains("watch="),
                "{warnings:?}"
            );
            assert!(warnings[1].contains("resourceVersion="), "{warnings:?}");
        }
        drop(tx);
        task.abort();
        let _ = std::fs::remove_dir_all(&dir);
        let requests = requests().await;
        let of_pods: Vec<&String> = requests.iter().filter(|r| r.contains("/pods?")).collect();
        let streamed = |r: &&String| r.contains("sendInitialEvents=true");
        let watch = |r: &&String| r.contains("watch=true");
        if streams {
            assert!(of_pods.iter().any(streamed), "{of_pods:?}");
            assert!(of_pods.iter().all(watch), "never listed: {of_pods:?}");
        } else {
            let refused = requests.iter().filter(streamed).count();
            assert_eq!(refused, 1, "asked once, by the first watcher: {requests:?}");
            assert!(of_pods.iter().any(|r| !watch(r)), "listed: {of_pods:?}");
        }
        let v = seen.lock().unwrap();
        let errors: Vec<&BackendEvent> =
            v.iter().filter(|e| matches!(e, BackendEvent::Error(_))).collect();
        assert!(errors.is_empty(), "{git_version}: {errors:?}");
    }
}
