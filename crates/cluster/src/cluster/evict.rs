//! A pod removed through the Eviction API (`POST pods/NAME/eviction`, a `policy/v1` Eviction):
//! the pod's PodDisruptionBudgets judge it on the server. The request is written here rather
//! than with kube's `Api::evict`, whose body names the options `delete_options` (the API reads
//! `deleteOptions`), so the pod's uid precondition would be dropped.
//!
//! A refusal (429) is told as the budget stands: the namespace's budgets are read, and the one
//! that selects the pod named with its counts (`pdb/web: 2 healthy, needs 3, 0 disruptions
//! allowed`); when they cannot be read, the server's cause. A lost reply is read back as a
//! deletion's is.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, ListParams};
use serde_json::json;

use super::write::{Writer, Written, failure};
use crate::backend::{Failure, FailureKind, ObjRef};
use crate::core::budget;

/// The Eviction a client sends for `pod`, with its uid as precondition when given.
pub fn eviction_body(pod: &ObjRef, uid: Option<&str>) -> serde_json::Value {
    let mut body = json!({
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": pod.name, "namespace": pod.namespace},
    });
    if let (Some(uid), Some(o)) = (uid, body.as_object_mut()) {
        o.insert("deleteOptions".into(), json!({"preconditions": {"uid": uid}}));
    }
    body
}

impl super::Writes {
    /// Whether the server would evict `pod` now (a dry run: `?dryRun=All`, nothing changes):
    /// `Err` with the budget's refusal, as an eviction's, when it would not. For previews.
    pub fn would_evict(
        &self,
        pod: &ObjRef,
        uid: Option<&str>,
        within: std::time::Duration,
    ) -> Result<(), Box<Failure>> {
        let op = format!("evict {pod} (dry run)");
        let asked = self.writer.eviction(&op, pod, uid.map(str::to_string), true);
        self.runtime.block_on(async {
            match tokio::time::timeout(within, asked).await {
                Ok(r) => r.map(drop).map_err(Box::new),
                Err(_) => Err(Box::new(Failure::new(
                    op.clone(),
                    FailureKind::Unavailable,
                    format!("no answer within {}s", within.as_secs()),
                ))),
            }
        })
    }
}

impl Writer {
    pub(super) async fn evict_pod(
        &self,
        op: &str,
        pod: &ObjRef,
        uid: Option<String>,
    ) -> Result<Written, Failure> {
        self.eviction(op, pod, uid, false).await
    }

    /// The eviction, or with `dry_run` the server's judgement of it (`?dryRun=All`).
    async fn eviction(
        &self,
        op: &str,
        pod: &ObjRef,
        uid: Option<String>,
        dry_run: bool,
    ) -> Result<Written, Failure> {
        if pod.name.is_empty() || pod.name.contains(['/', '?', '#', '%']) {
            let message = format!("{pod:?} is not a pod name: nothing evicted");
            return Err(Failure::new(op.into(), FailureKind::Invalid, message));
        }
        let dry = if dry_run { "?dryRun=All" } else { "" };
        let path = format!("/api/v1/namespaces/{}/pods/{}/eviction{dry}", pod.namespace, pod.name);
        let body = serde_json::to_vec(&eviction_body(pod, uid.as_deref())).unwrap_or_default();
        let req = hyper::Request::post(path)
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(body)
            .map_err(|e| Failure::new(op.into(), FailureKind::Invalid, e.to_string()))?;
        match self.client.request::<kube::core::Status>(req).await {
            Ok(_) => Ok(Written::Done),
            Err(kube::Error::Api(s)) if s.code == 409 => Err(Failure::new(
                op.into(),
                FailureKind::Conflict,
                format!("{pod} was recreated since you decided (another uid): nothing evicted"),
            )),
            Err(kube::Error::Api(s)) if s.code == 429 => {
                let cause = s
                    .details
                    .as_ref()
                    .and_then(|d| d.causes.iter().find(|c| c.reason == "DisruptionBudget"))
                    .map(|c| c.message.clone());
                let pdb = self.selecting_budget(pod).await;
                let message = budget::refusal(pdb.as_ref(), cause.as_deref(), &s.message);
                Err(Failure::new(op.into(), FailureKind::Disruption, message))
            }
            Err(e @ kube::Error::Api(_)) => Err(failure(op, &e)),
            Err(e) if dry_run => Err(failure(op, &e)),
            Err(e) => self.settle_pod_lost(op, pod, uid.as_deref(), e, "evicted").await,
        }
    }

    /// The one budget of the pod's namespace that selects it, as it stands now (none when the
    /// pod or the budgets cannot be read, or several select it).
    async fn selecting_budget(&self, pod: &ObjRef) -> Option<PodDisruptionBudget> {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &pod.namespace);
        let the_pod = pods.get_opt(&pod.name).await.ok().flatten()?;
        let budgets: Api<PodDisruptionBudget> =
            Api::namespaced(self.client.clone(), &pod.namespace);
        let list = budgets.list(&ListParams::default()).await.ok()?;
        let mut selecting = list.items.into_iter().filter(|b| budget::selects(b, &the_pod));
        match (selecting.next(), selecting.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    }
}
