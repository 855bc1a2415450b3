//! Carrying out one script line on a cluster. The steering lines (`image`, `scale`,
//! `partition`, `strategy`, `maxunavailable`, `undo`, `restart`, `freeze`, `unfreeze`,
//! `delete-pod`) go through the console's own write path (`cluster::write::Writer`: the same
//! decisions, patches and preconditions); `create`, `apply` and `delete` are plain API calls;
//! the kubelet lines are written where the fake kubelet reads them (the `ststui-kubelet`
//! ConfigMap, the `ststui.dev/kubelet-fault` pod annotation).
//!
//! A line's write whose reply was lost (the connection broke after it was sent) says what the
//! server holds, as the console's writes do: the steering lines through the write path; a
//! `create` or `delete` is read back; `apply`, the kubelet lines and the pod faults are
//! idempotent and sent again.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, PropagationPolicy};
use serde_json::json;

use crate::backend::{Failure, ObjRef, Write};
use crate::cluster::write::{Writer, failure};
use crate::fakelet::plan::{CONFIG_MAP, FAULT_ANNOTATION, to_data};
use crate::sim::KubeletConfig;
use crate::sim::scenario::build::{build_budget, build_set};
use crate::sim::scenario::{BudgetArgs, Cascade, Command};

/// How far the server's clock may be behind ours when a creation is read back.
const SKEW_S: i64 = 5;

/// Why a line did not take on the cluster: the message of its `error` event.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LineFailed {
    /// The API refused the write, or its outcome is not known (the write path's words).
    #[error("{}", .0.message)]
    Write(Failure),
    #[error("needs the simulator")]
    NeedsSimulator,
    #[error("apply: the manifest was not read")]
    NoManifest,
    /// Sets of an `apply` line the server refused (`name: why` each).
    #[error("{}", .0.join("; "))]
    Apply(Vec<String>),
    #[error("kubelet: cannot write ConfigMap {namespace}/{CONFIG_MAP}: {why}")]
    Kubelet { namespace: String, why: String },
    #[error("pod {0} not found: expected the name of an existing pod (e.g. web-0)")]
    NoPod(ObjRef),
    /// A `pdb` or `delete-pdb` line the server refused.
    #[error("pdb {name}: {why}")]
    Budget { name: ObjRef, why: String },
}

/// What carrying out lines needs, and the kubelet settings asked for so far.
pub struct Exec {
    pub writer: Writer,
    pub namespaces: Vec<String>,
    pub kubelet: KubeletConfig,
    /// Manifests of `apply` lines, read before anything ran (by line number).
    pub manifests: BTreeMap<usize, Vec<StatefulSet>>,
    faults: u64,
}

/// What the API said (or that it could not be reached), as the console's writes say it.
fn api_error(e: &kube::Error) -> String {
    failure("", e).message
}

impl Exec {
    pub fn new(
        writer: Writer,
        namespaces: Vec<String>,
        manifests: BTreeMap<usize, Vec<StatefulSet>>,
    ) -> Exec {
        Exec { writer, namespaces, kubelet: KubeletConfig::default(), manifests, faults: 0 }
    }

    fn client(&self) -> kube::Client {
        self.writer.client.clone()
    }

    /// Carries out `command` (line `number`).
    pub async fn perform(&mut self, number: usize, command: &Command) -> Result<(), LineFailed> {
        if let Some(op) = command.cluster_op() {
            // "Nothing to change" is not an error on a cluster either (the simulator says
            // nothing).
            let write = Write::new(op);
            return self.writer.write(write).await.map(drop).map_err(LineFailed::Write);
        }
        match command {
            Command::Create(args) => self.create(build_set(args)).await,
            Command::Apply(_) => self.apply(number).await,
            Command::Delete { set, cascade } => self.delete_set(&set.as_ref(), *cascade).await,
            Command::Kubelet(k) => {
                k.apply_to(&mut self.kubelet);
                self.write_kubelet().await
            }
            Command::Budget(b) => self.budget(b).await,
            Command::DeleteBudget { name } => self.delete_budget(&name.as_ref()).await,
            Command::Fail { pod } => self.fault(&pod.as_ref(), "fail").await,
            Command::SetReady { pod, ready } => {
                let verb = if *ready { "ready" } else { "unready" };
                self.fault(&pod.as_ref(), verb).await
            }
            Command::Api(_)
            | Command::BrokenImage { .. }
            | Command::Storage { .. }
            | Command::Quota { .. }
            | Command::Gc { .. }
            | Command::Pause
            | Command::Resume
            | Command::Rollout(_)
            | Command::Gate(_)
            | Command::Approve { .. }
            | Command::Abort { .. }
            | Command::Step(_) => Err(LineFailed::NeedsSimulator),
            // The steering lines went through `cluster_op` above.
            Command::Image { .. }
            | Command::Scale { .. }
            | Command::Partition { .. }
            | Command::Strategy { .. }
            | Command::MaxUnavailable { .. }
            | Command::Undo { .. }
            | Command::Restart { .. }
            | Command::DeletePod { .. }
            | Command::Evict { .. }
            | Command::Freeze { .. } => Ok(()),
            // Waits and checks are the player's: nothing to write.
            Command::Wait(_) | Command::Settle { .. } | Command::Expect { .. } => Ok(()),
        }
    }

    /// A creation whose reply was lost is read back: the set there, made since the line was
    /// sent (its creation second, with [`SKEW_S`] for the clocks, and never changed since), is
    /// the line's.
    async fn create(&self, set: StatefulSet) -> Result<(), LineFailed> {
        let ns = set.metadata.namespace.clone().unwrap_or_else(|| "default".into());
        let name = set.metadata.name.clone().unwrap_or_default();
        let api: Api<StatefulSet> = Api::namespaced(self.client(), &ns);
        let sent = Timestamp::now();
        let Err(e) = api.create(&PostParams::default(), &set).await else { return Ok(()) };
        let made_since = |s: Option<&StatefulSet>| {
            s.is_some_and(|s| {
                let made = s.metadata.creation_timestamp.as_ref().map(|t| t.0.as_second());
                made.is_some_and(|m| m >= sent.as_second() - SKEW_S)
                    && s.metadata.generation.unwrap_or(1) == 1
            })
        };
        let (op, what) = (format!("create {ns}/{name}"), format!("statefulset {ns}/{name}"));
        let words = ("created", "is not one this line made");
        let read = || api.get_opt(&name);
        let said = self.writer.settle_lost(&op, &what, e, read, made_since, words).await;
        said.map(drop).map_err(LineFailed::Write)
    }

    /// Server-side apply of each set of the line's manifest (`kubectl apply --server-side`).
    async fn apply(&self, number: usize) -> Result<(), LineFailed> {
        let Some(sets) = self.manifests.get(&number) else {
            return Err(LineFailed::NoManifest);
        };
        let mut errors = Vec::new();
        for set in sets {
            let ns = set.metadata.namespace.clone().unwrap_or_else(|| "default".into());
            let name = set.metadata.name.clone().unwrap_or_default();
            let api: Api<StatefulSet> = Api::namespaced(self.client(), &ns);
            let pp = PatchParams::apply("ststui").force();
            let patch = Patch::Apply(set);
            let sent = self.writer.resend(|| api.patch(&name, &pp, &patch)).await;
            if let Err(e) = sent {
                errors.push(format!("{name}: {}", api_error(&e)));
            }
        }
        if errors.is_empty() { Ok(()) } else { Err(LineFailed::Apply(errors)) }
    }

    async fn delete_set(&self, set: &ObjRef, cascade: Cascade) -> Result<(), LineFailed> {
        let api: Api<StatefulSet> = Api::namespaced(self.client(), &set.namespace);
        let dp = DeleteParams {
            propagation_policy: Some(match cascade {
                Cascade::Background => PropagationPolicy::Background,
                Cascade::Orphan => PropagationPolicy::Orphan,
            }),
            ..Default::default()
        };
        let Err(e) = api.delete(&set.name, &dp).await else { return Ok(()) };
        // Gone or going, it is deleted.
        let deleting =
            |s: Option<&StatefulSet>| s.is_none_or(|s| s.metadata.deletion_timestamp.is_some());
        let read = || api.get_opt(&set.name);
        let (op, words) = (format!("delete {set}"), ("deleted", "is not deleting"));
        let said = self.writer.settle_lost(&op, &set.to_string(), e, read, deleting, words).await;
        said.map(drop).map_err(LineFailed::Write)
    }

    /// A `pdb` line: the budget applied (server-side, as `ststui`) with the set's own selector.
    async fn budget(&self, b: &BudgetArgs) -> Result<(), LineFailed> {
        let name = b.name.as_ref();
        let fail = |why: String| LineFailed::Budget { name: name.clone(), why };
        let sets: Api<StatefulSet> = Api::namespaced(self.client(), &name.namespace);
        let set = self
            .writer
            .resend(|| sets.get_opt(&b.set))
            .await
            .map_err(|e| fail(api_error(&e)))?
            .ok_or_else(|| {
                fail(format!(
                    "statefulset {}/{} not found: create it first, or name it with set=SET",
                    name.namespace, b.set
                ))
            })?;
        let mut pdb = build_budget(b, set.spec.selector);
        pdb.metadata.managed_fields = None;
        let mut body = serde_json::to_value(&pdb).map_err(|e| fail(e.to_string()))?;
        if let Some(o) = body.as_object_mut() {
            o.insert("apiVersion".into(), "policy/v1".into());
            o.insert("kind".into(), "PodDisruptionBudget".into());
        }
        let api: Api<PodDisruptionBudget> = Api::namespaced(self.client(), &name.namespace);
        let pp = PatchParams::apply("ststui").force();
        let patch = Patch::Apply(&body);
        self.writer
            .resend(|| api.patch(&name.name, &pp, &patch))
            .await
            .map_err(|e| fail(api_error(&e)))?;
        Ok(())
    }

    /// A `delete-pdb` line (gone already counts as deleted).
    async fn delete_budget(&self, name: &ObjRef) -> Result<(), LineFailed> {
        let api: Api<PodDisruptionBudget> = Api::namespaced(self.client(), &name.namespace);
        let dp = DeleteParams::default();
        match self.writer.resend(|| api.delete(&name.name, &dp)).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => Err(LineFailed::Budget { name: name.clone(), why: api_error(&e) }),
        }
    }

    /// The kubelet settings as the fake kubelet reads them, in every namespace the script uses.
    async fn write_kubelet(&self) -> Result<(), LineFailed> {
        for ns in &self.namespaces {
            let api: Api<ConfigMap> = Api::namespaced(self.client(), ns);
            let cm = json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": CONFIG_MAP, "namespace": ns},
                "data": to_data(&self.kubelet),
            });
            let pp = PatchParams::apply("ststui").force();
            let patch = Patch::Apply(&cm);
            self.writer
                .resend(|| api.patch(CONFIG_MAP, &pp, &patch))
                .await
                .map_err(|e| LineFailed::Kubelet { namespace: ns.clone(), why: api_error(&e) })?;
        }
        Ok(())
    }

    /// Asks the fake kubelet for a fault on `pod` (a numbered annotation, so the same fault can
    /// be asked for twice).
    async fn fault(&mut self, pod: &ObjRef, verb: &str) -> Result<(), LineFailed> {
        self.faults += 1;
        let api: Api<Pod> = Api::namespaced(self.client(), &pod.namespace);
        let value = format!("{verb}/{}", self.faults);
        let patch = json!({"metadata": {"annotations": {FAULT_ANNOTATION: value}}});
        let pp = PatchParams::default();
        let patch = Patch::Merge(&patch);
        match self.writer.resend(|| api.patch(&pod.name, &pp, &patch)).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Err(LineFailed::NoPod(pod.clone())),
            Err(e) => Err(LineFailed::Write(failure(verb, &e))),
        }
    }
}
