//! Quick questions for the command line, each bounded in time and answered before any screen:
//! the namespace's StatefulSet names (shell completion, `kubectl ststui <TAB>`) and whether a
//! set exists (a console NAME that looks like a mistyped verb). A question that cannot be
//! answered in time answers nothing (completion offers no names; the console opens as asked).

use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use kube::api::{Api, ListParams};

use super::Target;

/// How long completion may take to list the names (a shell waits for it).
pub const NAMES_WITHIN: Duration = Duration::from_secs(5);
/// How long the console's near-verb check may take before opening as asked.
pub const EXISTS_WITHIN: Duration = Duration::from_secs(5);

fn block_on<T>(f: impl std::future::Future<Output = T>) -> Option<T> {
    let rt = crate::runtime::build("lookup", crate::runtime::Workers::Current).ok()?;
    rt.block_on(f).into()
}

/// The names of the StatefulSets in the target's namespace that start with `prefix`, sorted;
/// none when the cluster cannot say within `within`. Only names the API server could have
/// accepted (DNS subdomains) are offered: nothing else reaches the shell.
pub fn set_names(target: &Target, prefix: &str, within: Duration) -> Vec<String> {
    let names = block_on(async {
        let session = super::session(target).await.ok()?;
        let api: Api<StatefulSet> = Api::namespaced(session.client, &session.namespace);
        let lp = ListParams::default().limit(500);
        let list = tokio::time::timeout(within, api.list_metadata(&lp)).await.ok()?.ok()?;
        Some(list.items.into_iter().filter_map(|s| s.metadata.name).collect::<Vec<_>>())
    })
    .flatten()
    .unwrap_or_default();
    let mut names: Vec<String> = names
        .into_iter()
        .filter(|n| n.starts_with(prefix) && crate::core::selector::is_dns_subdomain(n))
        .collect();
    names.sort();
    names
}

/// Whether the target's set exists: `Some(false)` only when the server said 404.
pub fn set_exists(target: &Target, name: &str, within: Duration) -> Option<bool> {
    block_on(async {
        let session = super::session(target).await.ok()?;
        let api: Api<StatefulSet> = Api::namespaced(session.client, &session.namespace);
        match tokio::time::timeout(within, api.get_metadata_opt(name)).await.ok()? {
            Ok(found) => Some(found.is_some()),
            Err(_) => None,
        }
    })
    .flatten()
}

/// How long a group runner may take to list the namespace's StatefulSets.
pub const SETS_WITHIN: Duration = Duration::from_secs(15);

/// The target's namespace and its StatefulSets (those `selector` selects, when given): a group
/// runner's members. `Err` says what failed (the kubeconfig, the server, a permission, the
/// selector the server refused).
pub fn sets(
    target: &Target,
    selector: Option<&str>,
    within: Duration,
) -> Result<(String, Vec<StatefulSet>), String> {
    let rt = crate::runtime::build("lookup", crate::runtime::Workers::Current)
        .map_err(|e| e.to_string())?;
    rt.block_on(async {
        let session = super::session(target).await?;
        let api: Api<StatefulSet> = Api::namespaced(session.client, &session.namespace);
        let mut lp = ListParams::default();
        if let Some(s) = selector {
            lp = lp.labels(s);
        }
        let list = tokio::time::timeout(within, api.list(&lp))
            .await
            .map_err(|_| {
                format!("listing the StatefulSets of {} took over {within:?}", session.namespace)
            })?
            .map_err(|e| {
                format!(
                    "listing the StatefulSets of {}: {}",
                    session.namespace,
                    super::write::failure("list statefulsets", &e).message
                )
            })?;
        Ok((session.namespace, list.items))
    })
}

/// Why a cluster could not say who it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoIdentity {
    /// The kubeconfig or the context cannot be used.
    #[error("{0}")]
    Session(String),
    #[error("{context}: reading namespace kube-system took over {within:?}")]
    Slow { context: String, within: Duration },
    #[error("{context}: reading namespace kube-system (its uid names the cluster): {message}")]
    Refused { context: String, message: String },
    #[error("{context}: namespace kube-system has no uid to name the cluster by")]
    NoUid { context: String },
}

/// A cluster as a fleet's record names it: the `kube-system` namespace's uid (the same from
/// every machine, whatever its kubeconfig calls the context) and the context's name here.
pub fn cluster(
    target: &Target,
    within: Duration,
) -> Result<crate::plan::group::part::Cluster, NoIdentity> {
    use k8s_openapi::api::core::v1::Namespace;
    let rt = crate::runtime::build("lookup", crate::runtime::Workers::Current)
        .map_err(|e| NoIdentity::Session(e.to_string()))?;
    rt.block_on(async {
        let session =
            super::session(target).await.map_err(|e| NoIdentity::Session(e.to_string()))?;
        let context = session.context.clone();
        let api: Api<Namespace> = Api::all(session.client);
        let ns = tokio::time::timeout(within, api.get_metadata("kube-system"))
            .await
            .map_err(|_| NoIdentity::Slow { context: context.clone(), within })?
            .map_err(|e| NoIdentity::Refused {
                context: context.clone(),
                message: super::write::failure("get namespaces", &e).message,
            })?;
        let uid = ns.metadata.uid.filter(|u| !u.is_empty());
        let uid = uid.ok_or_else(|| NoIdentity::NoUid { context: context.clone() })?;
        Ok(crate::plan::group::part::Cluster { uid, name: context })
    })
}

/// No context of this kubeconfig reached a fleet's cluster.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no context of this kubeconfig reaches it (kube-system uid {uid}) within {}s", within.as_secs())]
pub struct NotReached {
    /// The cluster's identity, shown (escaped, clipped).
    pub uid: String,
    pub within: Duration,
}

/// A fleet's members in another cluster, read from here: the context of this kubeconfig that
/// reaches the cluster `uid` names (`hint`, the context its runner named it by, tried first;
/// then the others, side by side), and each of `names` in `namespace` there (`None`: the
/// server said it is not there).
pub fn in_cluster(
    base: &Target,
    uid: &str,
    hint: &str,
    namespace: &str,
    names: &[String],
    within: Duration,
) -> Result<(String, Vec<Option<StatefulSet>>), NotReached> {
    let mut contexts = super::context_names(base.kubeconfig.as_deref());
    contexts.sort_by_key(|c| c != hint);
    let read = |context: String| async move {
        let t = Target {
            context: Some(context.clone()),
            namespace: Some(namespace.to_string()),
            name: None,
            ..base.clone()
        };
        let session = super::session(&t).await.ok()?;
        let namespaces: Api<k8s_openapi::api::core::v1::Namespace> =
            Api::all(session.client.clone());
        let ns = namespaces.get_metadata("kube-system").await.ok()?;
        if ns.metadata.uid.as_deref() != Some(uid) {
            return None;
        }
        let api: Api<StatefulSet> = Api::namespaced(session.client, namespace);
        let mut sets = Vec::with_capacity(names.len());
        for n in names {
            sets.push(api.get_opt(n).await.ok()?);
        }
        Some((context, sets))
    };
    let found = block_on(async {
        let first = contexts.first().filter(|c| *c == hint).cloned();
        if let Some(c) = first
            && let Ok(Some(hit)) = tokio::time::timeout(within, read(c)).await
        {
            return Some(hit);
        }
        let others = contexts.iter().filter(|c| *c != hint).cloned().map(|c| Box::pin(read(c)));
        let all = futures::future::join_all(others);
        let all = tokio::time::timeout(within, all).await.ok()?;
        all.into_iter().flatten().next()
    })
    .flatten();
    found.ok_or_else(|| NotReached { uid: crate::text::shown(uid, 64), within })
}
