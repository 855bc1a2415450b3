//! Carrying out a console write on a cluster: the decision (`steer::decide`, the same code the
//! simulator runs) turned into a JSON merge patch of the StatefulSet, or a patch of `/scale`,
//! or a pod deletion, each with its precondition (the resourceVersion decided on; the pod's
//! uid). A 409 is never retried blindly: the set is re-read and the decision re-made on it,
//! which fails as a conflict naming what changed when the spec moved under the operator.
//!
//! A write whose reply was lost (the connection broke after it was sent, a 5xx that may have
//! been applied) is read back, retrying until the writer's deadline, and told as what the server
//! holds: written, not written, or changed by someone else. "Nothing was written" is said only
//! when it is known (no connection was made, or the read-back shows it).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, Preconditions};
use serde_json::{Value, json};

use super::QuickBackoff;
use super::trouble::{self, Trouble};
use crate::backend::{ClusterOp, Failure, FailureKind, ObjRef, Write};
use crate::steer::{self, Change};

/// Re-reads after a 409 before giving up: a set whose controller writes its status on every pod
/// change (a revert rolling back) conflicts with a write decided on a read a moment old, several
/// times in a row on a loaded machine. client-go's `RetryOnConflict` tries 5 times within
/// ~50 ms; here 8, each after a pause doubling from 25 ms (about 3 s in all), so a busy set is
/// written and a set someone else keeps writing is still said as such.
const ATTEMPTS: u32 = 8;

/// The pause before re-reading after the `n`th conflict (from 0).
fn conflict_pause(n: u32) -> Duration {
    Duration::from_millis(25 << n.min(5))
}

/// How long the console reads a write back after its reply was lost.
pub const READ_BACK: Duration = Duration::from_secs(30);

/// What a write needs.
#[derive(Clone)]
pub struct Writer {
    pub client: kube::Client,
    /// Who we are (freeze records it).
    pub identity: Arc<Mutex<String>>,
    /// How long a write whose reply was lost is read back before its outcome is called unknown.
    pub read_back: Duration,
}

/// How a write went, when it did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// The server answered: written.
    Done,
    /// There was nothing to write; the sentence says why.
    Unchanged(String),
    /// The reply was lost; reading the object back showed the server holds the change.
    ReadBack(String),
}

pub use super::trouble::failure;

/// Patches as the field manager `ststui`, so the set's managed fields say who wrote what (a
/// broken freeze names the other writer).
fn params() -> PatchParams {
    PatchParams { field_manager: Some(steer::FIELD_MANAGER.into()), ..PatchParams::default() }
}

/// Whether a failed request may have been carried out by the server: sent and not answered, a
/// 5xx (a timeout may still be processing), or answered with a body that cannot be read (a
/// success whose reply is garbled). A 429 was refused before anything was done.
fn maybe_applied(e: &kube::Error) -> bool {
    match trouble::of(e) {
        Trouble::Unreachable { maybe_sent } => maybe_sent,
        Trouble::Failing => !matches!(e, kube::Error::Api(s) if s.code == 429),
        _ => false,
    }
}

/// Whether merge patch `patch` changes nothing on `obj`.
fn holds(obj: &StatefulSet, patch: &Value) -> bool {
    let Ok(before) = serde_json::to_value(obj) else { return false };
    let mut after = before.clone();
    json_patch::merge(&mut after, patch);
    after == before
}

impl Writer {
    /// Carries out `w`.
    pub async fn write(&self, w: Write) -> Result<Written, Failure> {
        self.write_returning(w).await.map(|(written, _)| written)
    }

    /// Carries out `w`; with it, the set as the write left it when the server said (its answer
    /// to the patch, or what was read back after a lost reply): what a plan's next write is
    /// decided on, so its writes chain.
    pub async fn write_returning(
        &self,
        w: Write,
    ) -> Result<(Written, Option<StatefulSet>), Failure> {
        let op = w.op.describe();
        match &w.op {
            ClusterOp::DeletePod { pod, force, uid } => {
                self.delete_pod(&op, pod, *force, uid.clone()).await.map(|w| (w, None))
            }
            ClusterOp::EvictPod { pod, uid } => {
                self.evict_pod(&op, pod, uid.clone()).await.map(|w| (w, None))
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
    ) -> Result<Written, Failure> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &pod.namespace);
        let dp = DeleteParams {
            preconditions: uid
                .clone()
                .map(|u| Preconditions { uid: Some(u), resource_version: None }),
            grace_period_seconds: force.then_some(0),
            ..Default::default()
        };
        match api.delete(&pod.name, &dp).await {
            Ok(_) => Ok(Written::Done),
            Err(kube::Error::Api(s)) if s.code == 409 => Err(Failure::new(
                op.into(),
                FailureKind::Conflict,
                format!("{pod} was recreated since you decided (another uid): nothing deleted"),
            )),
            Err(e) => self.settle_pod_lost(op, pod, uid.as_deref(), e, "deleted").await,
        }
    }

    /// A pod's removal (`done`: deleted, evicted) whose reply was lost: the pod gone, deleting
    /// or recreated (another uid than `uid`) shows it was carried out.
    pub(super) async fn settle_pod_lost(
        &self,
        op: &str,
        pod: &ObjRef,
        uid: Option<&str>,
        e: kube::Error,
        done: &str,
    ) -> Result<Written, Failure> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &pod.namespace);
        let gone = |p: Option<&Pod>| match p {
            None => true,
            Some(p) => {
                p.metadata.deletion_timestamp.is_some()
                    || uid.is_some_and(|u| p.metadata.uid.as_deref() != Some(u))
            }
        };
        let read = || api.get_opt(&pod.name);
        self.settle_lost(op, &pod.to_string(), e, read, gone, (done, "is not deleting")).await
    }

    /// A write that failed with `e`: refused, it is that failure; its reply lost (it may have
    /// been carried out), `what` is read back with `get` and `holds` says whether the object as
    /// read (`None`: absent) shows the write — `done` (`deleted`) — or not — `not` (`is not
    /// deleting`) and nothing was written; not read back in time, unknown.
    pub async fn settle_lost<T, F, Fut>(
        &self,
        op: &str,
        what: &str,
        e: kube::Error,
        get: F,
        holds: impl Fn(Option<&T>) -> bool,
        (done, not): (&str, &str),
    ) -> Result<Written, Failure>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<Option<T>, kube::Error>>,
    {
        if !maybe_applied(&e) {
            return Err(failure(op, &e));
        }
        let lost = trouble::brief(&e);
        tracing::info!("{op}: the reply was lost ({lost}); reading {what} back");
        match self.read_back(get).await {
            Some(read) if holds(read.as_ref()) => Ok(Written::ReadBack(format!(
                "{op}: {done} (the reply was lost: {lost}; read back)"
            ))),
            Some(_) => Err(Failure::new(
                op.into(),
                FailureKind::Unavailable,
                format!(
                    "the reply was lost ({lost}); read back, {what} {not}: nothing was written"
                ),
            )),
            None => Err(unknown(op, &lost, what)),
        }
    }

    /// Sends an idempotent write (a server-side apply, a merge patch of fixed values) again
    /// while its reply is lost or the server is briefly away, until it is answered or the
    /// read-back time is over (then its last error).
    pub async fn resend<T, F, Fut>(&self, send: F) -> Result<T, kube::Error>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, kube::Error>>,
    {
        let again = |e: &kube::Error| maybe_applied(e) || trouble::of(e).transient();
        self.retried(send, again, "sending a write again").await
    }

    /// Reads with `get` until it answers or the read-back time is over (`None`).
    pub(crate) async fn read_back<T, F, Fut>(&self, get: F) -> Option<T>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, kube::Error>>,
    {
        let again = |e: &kube::Error| trouble::of(e).transient();
        let read = self.retried(get, again, "reading back a write").await;
        read.inspect_err(|e| tracing::warn!("reading back a write: {}", trouble::brief(e))).ok()
    }

    /// Calls `call` again, backing off, while its error is one `again` says may pass, until it
    /// answers or the read-back time is over: its last answer.
    async fn retried<T, F, Fut>(
        &self,
        call: F,
        again: impl Fn(&kube::Error) -> bool,
        what: &str,
    ) -> Result<T, kube::Error>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T, kube::Error>>,
    {
        let deadline = tokio::time::Instant::now() + self.read_back;
        let mut backoff = QuickBackoff::default();
        loop {
            match call().await {
                Err(e) if again(&e) => {
                    let wait = backoff.next().unwrap_or(Duration::from_secs(4));
                    if tokio::time::Instant::now() + wait > deadline {
                        return Err(e);
                    }
                    tracing::info!("{what}: {}", trouble::brief(&e));
                    tokio::time::sleep(wait).await;
                }
                other => return other,
            }
        }
    }

    async fn set_write(
        &self,
        op: &str,
        w: Write,
    ) -> Result<(Written, Option<StatefulSet>), Failure> {
        let key = w.op.target().clone();
        let sets: Api<StatefulSet> = Api::namespaced(self.client.clone(), &key.namespace);
        let mut fresh = match &w.basis {
            Some(b) => (**b).clone(),
            None => sets.get(&key.name).await.map_err(|e| failure(op, &e))?,
        };
        for attempt in 0..ATTEMPTS {
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
                        .then(|| Write::on(w.op.clone(), Some(Box::new(fresh.clone()))));
                    let id = Some(w.id);
                    Failure { op: op.into(), kind: r.kind, message: r.message, write, id }
                })?;
            let new = match decided {
                Change::Unchanged(why) => return Ok((Written::Unchanged(why), Some(fresh))),
                Change::Set(new) => new,
            };
            let rv = fresh.metadata.resource_version.clone();
            // The change as a merge patch without the precondition (for reading back), and as
            // sent.
            let (change, sent) = match w.op {
                ClusterOp::Scale { replicas, .. } => {
                    let p = json!({"metadata": {"resourceVersion": rv}, "spec": {"replicas": replicas}});
                    let sent = sets
                        .patch_scale(&key.name, &params(), &Patch::Merge(&p))
                        .await
                        .map(|_| None);
                    (json!({"spec": {"replicas": replicas}}), sent)
                }
                _ => match steer::merge_patch(&fresh, &new, rv.as_deref()) {
                    Some(p) => {
                        let sent =
                            sets.patch(&key.name, &params(), &Patch::Merge(&p)).await.map(Some);
                        (steer::merge_patch(&fresh, &new, None).unwrap_or(Value::Null), sent)
                    }
                    None => {
                        let why = format!("{key}: nothing to change");
                        return Ok((Written::Unchanged(why), Some(fresh)));
                    }
                },
            };
            match sent {
                Ok(set) => return Ok((Written::Done, set)),
                Err(kube::Error::Api(s)) if s.code == 409 => {
                    tracing::info!("{op}: 409, re-reading {key} and deciding again");
                    tokio::time::sleep(conflict_pause(attempt)).await;
                    fresh = sets.get(&key.name).await.map_err(|e| failure(op, &e))?;
                }
                Err(e) if maybe_applied(&e) => {
                    let undo = steer::merge_patch(&new, &fresh, None).unwrap_or(Value::Null);
                    return self.lost(op, &key, &sets, (&change, &undo), &e).await;
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
            id: Some(w.id),
            write: Some(Write::on(w.op, Some(Box::new(fresh)))),
        })
    }

    /// A set write whose reply was lost: read back, it is written (`change` holds), not written
    /// (`undo` holds: the set still reads as before), or neither — someone wrote after, and
    /// whether ours landed first is not known (never "nothing written": the set does not say).
    async fn lost(
        &self,
        op: &str,
        key: &ObjRef,
        sets: &Api<StatefulSet>,
        (change, undo): (&Value, &Value),
        e: &kube::Error,
    ) -> Result<(Written, Option<StatefulSet>), Failure> {
        let lost = trouble::brief(e);
        tracing::info!("{op}: the reply was lost ({lost}); reading {key} back");
        let Some(now) = self.read_back(|| sets.get(&key.name)).await else {
            return Err(unknown(op, &lost, &key.to_string()));
        };
        if holds(&now, change) {
            let said = format!("{op}: written (the reply was lost: {lost}; read back)");
            return Ok((Written::ReadBack(said), Some(now)));
        }
        if holds(&now, undo) {
            return Err(Failure::new(
                op.into(),
                FailureKind::Unavailable,
                format!("the reply was lost ({lost}); read back: nothing was written"),
            ));
        }
        Err(Failure::new(
            op.into(),
            FailureKind::Unknown,
            format!(
                "the reply was lost ({lost}); read back, {key} holds neither your change nor \
                 what you decided on: someone else wrote after, and whether yours landed first \
                 is not known; look before repeating it (ststui explain)"
            ),
        ))
    }

    /// The set's ControllerRevisions (by its selector), for undo.
    async fn revisions(&self, set: &StatefulSet) -> Result<Vec<ControllerRevision>, kube::Error> {
        let ns = set.metadata.namespace.clone().unwrap_or_else(|| "default".into());
        let api: Api<ControllerRevision> = Api::namespaced(self.client.clone(), &ns);
        let lp = ListParams::default().labels(&super::selector_string(&set.spec.selector));
        Ok(api.list(&lp).await?.items)
    }
}

/// A write sent whose reply was lost and that could not be read back.
fn unknown(op: &str, lost: &str, what: &str) -> Failure {
    Failure::new(
        op.into(),
        FailureKind::Unknown,
        format!(
            "the reply was lost ({lost}) and {what} could not be read back: it may or may not \
             be written; look before repeating it (ststui explain, kubectl get)"
        ),
    )
}

/// A writer that lives across writes (a plan's runner, approve, abort): one client runtime and
/// session, who we are asked once.
pub struct Writes {
    pub(super) runtime: tokio::runtime::Runtime,
    pub(super) writer: Writer,
}

impl Writes {
    /// Reads the kubeconfig and learns who we are.
    pub fn open(target: &super::Target) -> Result<Writes, super::connect::NoClient> {
        let runtime = crate::runtime::build("client", crate::runtime::Workers::Current)?;
        let writer = runtime.block_on(async {
            let session = super::connect::session(target).await?;
            let identity = super::connect::identity(&session).await;
            Ok::<_, super::connect::NoSession>(Writer {
                client: session.client,
                identity: Arc::new(Mutex::new(identity)),
                read_back: READ_BACK,
            })
        })?;
        Ok(Writes { runtime, writer })
    }

    /// Who writes (what freeze and a plan record).
    pub fn identity(&self) -> String {
        self.writer.identity.lock().map(|i| i.clone()).unwrap_or_default()
    }

    /// Carries out `w` as the console would; a lost reply is read back for `read_back`.
    pub fn write(&self, w: Write, read_back: Duration) -> Result<Written, Box<Failure>> {
        let writer = Writer { read_back, ..self.writer.clone() };
        self.runtime.block_on(writer.write(w)).map_err(Box::new)
    }

    /// [`Writes::write`], with the set as the write left it when known.
    pub fn write_returning(
        &self,
        w: Write,
        read_back: Duration,
    ) -> Result<(Written, Option<StatefulSet>), Box<Failure>> {
        let writer = Writer { read_back, ..self.writer.clone() };
        self.runtime.block_on(writer.write_returning(w)).map_err(Box::new)
    }

    /// A quorum read of `key`, its pods and (RollingUpdate) its namespace's budgets
    /// ([`super::fresh`]), within `within`.
    pub fn read(
        &self,
        key: &ObjRef,
        within: Duration,
    ) -> Result<crate::backend::Fresh, Box<Failure>> {
        let client = self.writer.client.clone();
        self.runtime.block_on(super::fresh::read(client, key, within)).map_err(Box::new)
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
/// `make` builds the write from the namespace the target resolves to; a lost reply is read back
/// for at most `read_back`. `look` is shown the set before the write when it is read for it
/// (a write of a set without a basis: read first, and that read is its basis), so a verb can
/// warn before it writes.
pub fn write_once(
    target: &super::Target,
    read_back: Duration,
    make: impl FnOnce(&str) -> Write,
    look: impl FnOnce(&StatefulSet),
) -> Result<Written, OnceError> {
    let runtime = crate::runtime::build("client", crate::runtime::Workers::Current)
        .map_err(|e| OnceError::Setup(e.to_string()))?;
    runtime.block_on(async {
        let session =
            super::connect::session(target).await.map_err(|e| OnceError::Setup(e.to_string()))?;
        let mut w = make(&session.namespace);
        if w.basis.is_none()
            && !matches!(w.op, ClusterOp::DeletePod { .. } | ClusterOp::EvictPod { .. })
        {
            let key = w.op.target();
            let sets: Api<StatefulSet> = Api::namespaced(session.client.clone(), &key.namespace);
            // A failed read is the write's to say: it reads the set itself.
            if let Ok(set) = sets.get(&key.name).await {
                look(&set);
                w.basis = Some(Box::new(set));
            }
        }
        let identity = super::connect::identity(&session).await;
        let writer =
            Writer { client: session.client, identity: Arc::new(Mutex::new(identity)), read_back };
        writer.write(w).await.map_err(|f| OnceError::Failed(Box::new(f)))
    })
}

#[cfg(test)]
#[path = "write_tests.rs"]
mod tests;
