//! Evictions against the served simulator: the `pods/eviction` subresource as a client sends it
//! (429 with the budget's cause while it allows nothing, 201 once it allows one, the budget
//! charged and the pod marked, the API server's refusals of a bad body), and ststui's own
//! eviction (the console's delete, a plan's OnDelete step, abort) through the cluster writer:
//! refused as a disruption naming the budget as it stands, or carried out.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::serve_common::*;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use ststui::backend::{ClusterOp, FailureKind, ObjRef, Write};
use ststui::cluster::write::{Writer, Written};

fn budget(min_available: i32) -> PodDisruptionBudget {
    serde_json::from_value(json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}},
    }))
    .unwrap()
}

/// POSTs an Eviction of `pod` (its body as given); the code and the parsed answer.
async fn evict(client: &kube::Client, pod: &str, body: Value) -> (u16, Value) {
    let req = hyper::Request::post(format!("/api/v1/namespaces/default/pods/{pod}/eviction"))
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&body).unwrap())
        .unwrap();
    match client.request::<Value>(req).await {
        Ok(v) => (201, v),
        Err(kube::Error::Api(s)) => (s.code, serde_json::to_value(&*s).unwrap()),
        Err(e) => panic!("{e}"),
    }
}

fn eviction(pod: &str) -> Value {
    json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod}})
}

async fn allowed(budgets: &Api<PodDisruptionBudget>, want: i32) -> PodDisruptionBudget {
    eventually(&format!("the budget allows {want}"), || async {
        let b = budgets.get("web").await.ok()?;
        let n = b.status.as_ref()?.disruptions_allowed?;
        (n == want).then_some(b)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_eviction_subresource_judges_by_the_budget() {
    // Pod steps of a second: an evicted pod is not back before the next eviction is asked.
    let (_handle, server) = serve(vec![set("web", 3)], &[], kubelet(1000));
    let s = Served { client: plain_client(server.addr).await, handle: _handle, server };
    let budgets: Api<PodDisruptionBudget> = Api::default_namespaced(s.client.clone());
    budgets.create(&PostParams::default(), &budget(3)).await.unwrap();
    let b = allowed(&budgets, 0).await;
    let st = b.status.unwrap();
    assert_eq!(
        (st.current_healthy, st.desired_healthy, st.expected_pods),
        (Some(3), Some(3), Some(3))
    );
    let (code, answer) = evict(&s.client, "web-2", eviction("web-2")).await;
    assert_eq!(code, 429, "{answer}");
    assert_eq!(answer["reason"], "TooManyRequests");
    assert_eq!(
        answer["message"],
        "Cannot evict pod as it would violate the pod's disruption budget."
    );
    assert_eq!(
        answer["details"]["causes"][0],
        json!({"reason": "DisruptionBudget", "message": "The disruption budget web needs 3 healthy pods and has 3 currently"})
    );
    let pods: Api<Pod> = Api::default_namespaced(s.client.clone());
    assert!(
        pods.get("web-2").await.unwrap().metadata.deletion_timestamp.is_none(),
        "nothing deleted"
    );
    // A body that is not an Eviction of this pod is refused before any budget is asked.
    assert_eq!(evict(&s.client, "web-2", eviction("web-1")).await.0, 400);
    assert_eq!(evict(&s.client, "web-2", json!({"kind": "Pod"})).await.0, 400);
    assert_eq!(evict(&s.client, "web-9", eviction("web-9")).await.0, 404);
    // A uid precondition that does not hold is a conflict.
    let mut stale = eviction("web-2");
    stale["deleteOptions"] = json!({"preconditions": {"uid": "not-its-uid"}});
    assert_eq!(evict(&s.client, "web-2", stale).await.0, 409);

    let p = json!({"spec": {"minAvailable": 2}});
    budgets.patch("web", &PatchParams::default(), &Patch::Merge(&p)).await.unwrap();
    allowed(&budgets, 1).await;
    // A dry run is judged and changes nothing.
    let dry = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web-2"},
                     "deleteOptions": {"dryRun": ["All"]}});
    assert_eq!(evict(&s.client, "web-2", dry).await.0, 201);
    assert!(pods.get("web-2").await.unwrap().metadata.deletion_timestamp.is_none(), "dry run");
    let uid = pods.get("web-2").await.unwrap().metadata.uid.unwrap();
    let mut real = eviction("web-2");
    real["deleteOptions"] = json!({"preconditions": {"uid": uid}});
    let (code, answer) = evict(&s.client, "web-2", real).await;
    assert_eq!((code, answer["status"].as_str()), (201, Some("Success")), "{answer}");
    // Charged before the deletion is seen: nothing more allowed, the pod recorded.
    let charged = budgets.get("web").await.unwrap().status.unwrap();
    assert_eq!(charged.disruptions_allowed, Some(0));
    let evicted = pods.get("web-2").await.unwrap();
    if evicted.metadata.uid.as_deref() == Some(uid.as_str()) {
        assert!(evicted.metadata.deletion_timestamp.is_some(), "terminating");
        let conditions = evicted.status.unwrap().conditions.unwrap_or_default();
        let target = conditions.iter().find(|c| c.type_ == "DisruptionTarget").unwrap();
        assert_eq!(target.reason.as_deref(), Some("EvictionByEvictionAPI"));
    }
    let (code, _) = evict(&s.client, "web-1", eviction("web-1")).await;
    assert_eq!(code, 429, "the next one waits for web-2 to be back");
    // Back Ready: the budget allows one again, and the record of web-2's eviction is gone.
    let b = allowed(&budgets, 1).await;
    assert_eq!(b.status.unwrap().disrupted_pods, None);
}

/// A client that sends each request once (kube-rs's default retries a 429 up to 15 times).
async fn plain_client(addr: std::net::SocketAddr) -> kube::Client {
    kube::Client::try_from(config(addr).await).unwrap()
}

async fn config(addr: std::net::SocketAddr) -> kube::Config {
    let kc = kube::config::Kubeconfig::from_yaml(&ststui::serve::kubeconfig(addr)).unwrap();
    let options = kube::config::KubeConfigOptions::default();
    let mut config = kube::Config::from_custom_kubeconfig(kc, &options).await.unwrap();
    config.default_retry = false;
    config
}

fn writer(client: &kube::Client) -> Writer {
    Writer {
        client: client.clone(),
        identity: Arc::new(Mutex::new("test".into())),
        read_back: Duration::from_secs(5),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ststui_evicts_and_a_refusal_names_the_budget_as_it_stands() {
    let s = served(vec![set("web", 3)], &[]).await;
    // ststui's own client: its retries of transient errors on, an eviction's 429 not retried
    // (the refusal comes back at once, and nothing is evicted behind the operator's back).
    let mut own = config(s.server.addr).await;
    own.default_retry = true;
    let ststui_client = ststui::cluster::Clients::from_config(own).unwrap().client();
    let budgets: Api<PodDisruptionBudget> = Api::default_namespaced(s.client.clone());
    budgets.create(&PostParams::default(), &budget(3)).await.unwrap();
    allowed(&budgets, 0).await;
    let pods: Api<Pod> = Api::default_namespaced(s.client.clone());
    let uid = pods.get("web-1").await.unwrap().metadata.uid;
    let op = ClusterOp::EvictPod { pod: ObjRef::new("default", "web-1"), uid: uid.clone() };
    let w = writer(&ststui_client);
    let f = w.write(Write::new(op.clone())).await.unwrap_err();
    assert_eq!(f.kind, FailureKind::Disruption, "{f:?}");
    assert_eq!(f.op, "evict default/web-1");
    assert_eq!(
        f.message,
        "refused by pdb/web: 3 healthy, needs 3, 0 disruptions allowed: nothing deleted"
    );
    let p = json!({"spec": {"minAvailable": 2}});
    budgets.patch("web", &PatchParams::default(), &Patch::Merge(&p)).await.unwrap();
    allowed(&budgets, 1).await;
    assert_eq!(w.write(Write::new(op)).await.unwrap(), Written::Done);
    let gone = pods.get_opt("web-1").await.unwrap();
    assert!(
        gone.is_none_or(|p| p.metadata.uid != uid || p.metadata.deletion_timestamp.is_some()),
        "web-1 evicted"
    );
    // A pod recreated since (another uid) is left alone.
    let stale =
        ClusterOp::EvictPod { pod: ObjRef::new("default", "web-0"), uid: Some("old".into()) };
    let f = w.write(Write::new(stale)).await.unwrap_err();
    assert_eq!(f.kind, FailureKind::Conflict, "{f:?}");
}
