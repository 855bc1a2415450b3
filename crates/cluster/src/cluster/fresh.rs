//! The quorum read a plan's verdict rests on (`Act::Read`), one for the console's backend and
//! the pipeline verbs: the set (for its selector), its pods, then the set again — so any pod
//! change a spec change caused is read with that spec change — and, for a RollingUpdate set,
//! the namespace's PodDisruptionBudgets, so a step opens on what the budgets allow now, not on
//! what a watch last said. Plain GET/LIST without a resourceVersion: served from etcd.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, ListParams};

use crate::backend::{Failure, FailureKind, Fresh, ObjRef};

/// Reads `key` fresh, within `within`.
pub async fn read(client: kube::Client, key: &ObjRef, within: Duration) -> Result<Fresh, Failure> {
    let what = format!("read {key}");
    match tokio::time::timeout(within, read_now(client, key)).await {
        Ok(r) => {
            r.map_err(|(step, e)| super::trouble::read_failure(&format!("{what}: {step}"), &e))
        }
        Err(_) => Err(Failure::new(
            what,
            FailureKind::Unavailable,
            format!("no answer within {}s", within.as_secs()),
        )),
    }
}

async fn read_now(
    client: kube::Client,
    key: &ObjRef,
) -> Result<Fresh, (&'static str, kube::Error)> {
    let sets: Api<StatefulSet> = Api::namespaced(client.clone(), &key.namespace);
    let first = sets.get(&key.name).await.map_err(|e| ("the set", e))?;
    let lp = ListParams::default().labels(&super::selector_string(&first.spec.selector));
    let pods: Api<Pod> = Api::namespaced(client.clone(), &key.namespace);
    let pods = pods.list(&lp).await.map_err(|e| ("its pods", e))?.items;
    let set = sets.get(&key.name).await.map_err(|e| ("the set", e))?;
    let budgets = if crate::core::spec::strategy(&set).on_delete {
        None
    } else {
        let api: Api<PodDisruptionBudget> = Api::namespaced(client, &key.namespace);
        match api.list(&ListParams::default()).await {
            Ok(list) => Some(list.items.into_iter().map(Arc::new).collect()),
            // Not ours to read (or not served): the watch's budgets stand in, as everywhere.
            Err(kube::Error::Api(s)) if matches!(s.code, 403 | 404) => None,
            Err(e) => return Err(("the budgets", e)),
        }
    };
    Ok(Fresh { set: Arc::new(set), pods: pods.into_iter().map(Arc::new).collect(), budgets })
}
