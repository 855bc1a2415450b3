//! Carrying out a console write on a cluster: the decision (`steer::decide`, the same code the
//! simulator runs) turned into a JSON merge patch of the StatefulSet, or a patch of `/scale`,
//! or a pod deletion, each with its precondition (the resourceVersion decided on; the pod's
//! uid). A 409 is never retried blindly: the set is re-read and the decision re-made on it,
//! which fails as a conflict naming what changed when the spec moved under the operator.

use std::sync::{Arc, Mutex};

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, Preconditions};
use serde_json::json;

use crate::backend::{ClusterOp, Failure, FailureKind, ObjRef, Write};
use crate::steer::{self, Change};

/// Re-reads after a 409 before giving up.
const ATTEMPTS: usize = 3;

/// What a write needs.
#[derive(Clone)]
pub struct Writer {
    pub client: kube::Client,
    /// Who we are (freeze records it).
    pub identity: Arc<Mutex<String>>,
}

/// A client error as a failure of `op`.
pub fn failure(op: &str, e: &kube::Error) -> Failure {
    match e {
        kube::Error::Api(s) => {
            Failure::new(op.into(), FailureKind::from_status(s.code), s.message.clone())
        }
        other => Failure::new(
            op.into(),
            FailureKind::Unavailable,
            format!("cannot reach the server ({other}); nothing was written"),
        ),
    }
}

impl Writer {
    /// Carries out `w`; `Ok(Some(sentence))` when there was nothing to write.
    pub async fn write(&self, w: Write) -> Result<Option<String>, Failure> {
        let op = w.op.describe();
        match &w.op {
            ClusterOp::DeletePod { pod, force, uid } => {
                self.delete_pod(&op, pod, *force, uid.clone()).await.map(|()| None)
            }
            _ => self.set_write(&op, w).await,
        }
    }

    async fn delete_pod(
        &self,
        op: &str,
        pod: &ObjRef,
        force: bool,
        uid: Option<String>,
    ) -> Result<(), Failure> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &pod.namespace);
        let dp = DeleteParams {
            preconditions: uid.map(|u| Preconditions { uid: Some(u), resource_version: None }),
            grace_period_seconds: force.then_some(0),
            ..Default::default()
        };
        match api.delete(&pod.name, &dp).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 409 => Err(Failure::new(
                op.into(),
                FailureKind::Conflict,
                format!("{pod} was recreated since you decided (another uid): nothing deleted"),
            )),
            Err(e) => Err(failure(op, &e)),
        }
    }

    async fn set_write(&self, op: &str, w: Write) -> Result<Option<String>, Failure> {
        let key = w.op.target().clone();
        let sets: Api<StatefulSet> = Api::namespaced(self.client.clone(), &key.namespace);
        let mut fresh = match &w.basis {
            Some(b) => (**b).clone(),
            None => sets.get(&key.name).await.map_err(|e| failure(op, &e))?,
        };
        for _ in 0..ATTEMPTS {
            let revisions = match w.op {
                ClusterOp::Undo { .. } => {
                    self.revisions(&fresh).await.map_err(|e| failure(op, &e))?
                }
                _ => Vec::new(),
            };
            let refs: Vec<&ControllerRevision> = revisions.iter().collect();
            let identity = self.identity.lock().map(|i| i.clone()).unwrap_or_default();
            let inputs = steer::Inputs {
                now: k8s_openapi::jiff::Timestamp::now(),
                identity: &identity,
                revisions: &refs,
            };
            let decided =
                steer::decide(&w.op, &key, w.basis.as_deref(), &fresh, inputs).map_err(|r| {
                    let write = (r.kind == FailureKind::Conflict)
                        .then(|| Write { op: w.op.clone(), basis: Some(Box::new(fresh.clone())) });
                    Failure { op: op.into(), kind: r.kind, message: r.message, write }
                })?;
            let Change::Set(new) = decided else {
                return Ok(match decided {
                    Change::Unchanged(why) => Some(why),
                    Change::Set(_) => None,
                });
            };
            let rv = fresh.metadata.resource_version.clone();
            let sent = match w.op {
                ClusterOp::Scale { replicas, .. } => {
                    let p = json!({"metadata": {"resourceVersion": rv}, "spec": {"replicas": replicas}});
                    sets.patch_scale(&key.name, &PatchParams::default(), &Patch::Merge(&p))
                        .await
                        .map(drop)
                }
                _ => match steer::merge_patch(&fresh, &new, rv.as_deref()) {
                    Some(p) => sets
                        .patch(&key.name, &PatchParams::default(), &Patch::Merge(&p))
                        .await
                        .map(drop),
                    None => return Ok(Some(format!("{key}: nothing to change"))),
                },
            };
            match sent {
                Ok(()) => return Ok(None),
                Err(kube::Error::Api(s)) if s.code == 409 => {
                    tracing::info!("{op}: 409, re-reading {key} and deciding again");
                    fresh = sets.get(&key.name).await.map_err(|e| failure(op, &e))?;
                }
                Err(e) => return Err(failure(op, &e)),
            }
        }
        Err(Failure {
            op: op.into(),
            kind: FailureKind::Conflict,
            message: format!(
                "{key} kept changing while it was written ({ATTEMPTS} attempts): try again"
            ),
            write: Some(Write { op: w.op, basis: Some(Box::new(fresh)) }),
        })
    }

    /// The set's ControllerRevisions (by its selector), for undo.
    async fn revisions(&self, set: &StatefulSet) -> Result<Vec<ControllerRevision>, kube::Error> {
        let ns = set.metadata.namespace.clone().unwrap_or_else(|| "default".into());
        let api: Api<ControllerRevision> = Api::namespaced(self.client.clone(), &ns);
        let lp = ListParams::default().labels(&super::selector_string(&set.spec.selector));
        Ok(api.list(&lp).await?.items)
    }
}

/// Why [`write_once`] wrote nothing.
#[derive(Debug)]
pub enum OnceError {
    /// The kubeconfig (or the client runtime) cannot be used: nothing was sent.
    Setup(String),
    /// The write was refused or failed.
    Failed(Box<Failure>),
}

/// One write outside a console (the pipeline verbs): reads the kubeconfig, learns who we are
/// (freeze records it), and carries out `w` as the console would, on a runtime of its own.
/// `make` builds the write from the namespace the target resolves to. `Ok(Some(sentence))` when
/// there was nothing to write.
pub fn write_once(
    target: &super::Target,
    make: impl FnOnce(&str) -> Write,
) -> Result<Option<String>, OnceError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| OnceError::Setup(format!("cannot start the client runtime: {e}")))?;
    runtime.block_on(async {
        let session = super::connect::session(target).await.map_err(OnceError::Setup)?;
        let w = make(&session.namespace);
        let identity = super::connect::identity(&session).await;
        let writer = Writer { client: session.client, identity: Arc::new(Mutex::new(identity)) };
        writer.write(w).await.map_err(|f| OnceError::Failed(Box::new(f)))
    })
}
