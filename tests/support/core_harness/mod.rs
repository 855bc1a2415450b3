//! A tiny in-memory world for driving the controller core in tests: a store of the set's pods,
//! claims and revisions (uids, resourceVersions, creationTimestamps assigned on create), a
//! kubelet model on a test clock (Pending → Running → Ready, terminating → gone), garbage
//! collection of claims owned by a deleted pod, and the invariants of `core::invariants`
//! checked after every sync and every tick.
#![allow(dead_code, reason = "each test binary uses part of the shared support")]

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::apps::v1::{
    ControllerRevision, RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetOrdinals,
    StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetSpec, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{
    Container, PersistentVolumeClaim, PersistentVolumeClaimSpec, Pod, PodSpec, PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;
mod store;

use store::set_ready;
use ststui::core::defaults::set_defaults_stateful_set;
use ststui::core::invariants::{self, Violation};
use ststui::core::{Effect, Observed, Options, Plan, Version, reconcile};

pub const NS: &str = "default";
pub const SET_UID: &str = "uid-set-web";

/// Kubelet timings in seconds.
#[derive(Debug, Clone, Copy)]
pub struct Kubelet {
    pub start: i64,
    pub ready: i64,
    pub stop: i64,
}

#[derive(Debug, Clone, Default)]
struct Timer {
    created: i64,
    running_at: Option<i64>,
    deleted: Option<i64>,
    /// Never becomes Ready (a broken image or an `unready` fault).
    no_ready: bool,
}

/// The world: one StatefulSet `web` in namespace `default`.
pub struct World {
    pub set: StatefulSet,
    pub pods: BTreeMap<String, Pod>,
    pub claims: BTreeMap<String, PersistentVolumeClaim>,
    pub revisions: BTreeMap<String, ControllerRevision>,
    pub options: Options,
    pub kubelet: Kubelet,
    /// Seconds since the epoch on the test clock.
    pub t: i64,
    pub broken_images: BTreeSet<String>,
    timers: BTreeMap<String, Timer>,
    next_uid: u64,
    next_rv: u64,
    /// Every plan, in order.
    pub plans: Vec<Plan>,
    /// Invariant violations seen so far (checked by [`World::sync`] and [`World::tick`]).
    pub violations: Vec<String>,
    /// API errors applying effects (e.g. AlreadyExists for a released pod's name).
    pub api_errors: Vec<String>,
}

pub fn ts(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).unwrap_or(Timestamp::UNIX_EPOCH)
}

impl World {
    /// `web` with `replicas`, image `nginx:1`, OrderedReady, RollingUpdate (defaulted by the
    /// "API server": rollingUpdate {partition 0, maxUnavailable 1}).
    pub fn new(replicas: i32) -> Self {
        let labels = BTreeMap::from([("app".to_string(), "web".to_string())]);
        let set = StatefulSet {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some(NS.into()),
                uid: Some(SET_UID.into()),
                generation: Some(1),
                ..Default::default()
            },
            spec: StatefulSetSpec {
                replicas: Some(replicas),
                selector: LabelSelector {
                    match_labels: Some(labels.clone()),
                    ..Default::default()
                },
                service_name: Some("web".into()),
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta { labels: Some(labels), ..Default::default() }),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "app".into(),
                            image: Some("nginx:1".into()),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                },
                ..Default::default()
            },
            status: None,
        };
        let mut w = World {
            set,
            pods: BTreeMap::new(),
            claims: BTreeMap::new(),
            revisions: BTreeMap::new(),
            options: Options::default(),
            kubelet: Kubelet { start: 1, ready: 1, stop: 1 },
            t: 1_700_000_000,
            broken_images: BTreeSet::new(),
            timers: BTreeMap::new(),
            next_uid: 1,
            next_rv: 1,
            plans: Vec::new(),
            violations: Vec::new(),
            api_errors: Vec::new(),
        };
        w.default_set();
        w
    }

    pub fn now(&self) -> Timestamp {
        ts(self.t)
    }

    fn default_set(&mut self) {
        set_defaults_stateful_set(&mut self.set, &self.options.semantics);
    }

    /// A spec change: mutate, default, bump the generation.
    pub fn edit(&mut self, f: impl FnOnce(&mut StatefulSetSpec)) -> &mut Self {
        f(&mut self.set.spec);
        self.default_set();
        let g = self.set.metadata.generation.unwrap_or(0);
        self.set.metadata.generation = Some(g + 1);
        self
    }

    pub fn version(mut self, v: &str) -> Self {
        let version: Version = v.parse().unwrap_or_default();
        self.options = Options::for_version(version);
        if !self.options.semantics.max_unavailable_gate
            && let Some(r) = self.rolling_mut()
        {
            r.max_unavailable = None;
        }
        self.default_set();
        self
    }
    pub fn parallel(mut self) -> Self {
        self.set.spec.pod_management_policy = Some("Parallel".into());
        self
    }
    pub fn on_delete(mut self) -> Self {
        self.set.spec.update_strategy = Some(StatefulSetUpdateStrategy {
            type_: Some("OnDelete".into()),
            rolling_update: None,
        });
        self
    }
    /// Type Recreate, with the controller's `StatefulSetRecreateStrategy` gate `gate`.
    pub fn recreate(mut self, gate: bool) -> Self {
        self.set.spec.update_strategy = Some(StatefulSetUpdateStrategy {
            type_: Some("Recreate".into()),
            rolling_update: None,
        });
        self.options.semantics.recreate_gate = gate;
        self
    }
    pub fn partition(mut self, p: i32) -> Self {
        if let Some(r) = self.rolling_mut() {
            r.partition = Some(p);
        }
        self
    }
    pub fn max_unavailable(mut self, v: IntOrString) -> Self {
        if let Some(r) = self.rolling_mut() {
            r.max_unavailable = Some(v);
        }
        self
    }
    /// `type: RollingUpdate` without a rollingUpdate block (the nil branch of 3.5).
    pub fn nil_rolling_block(mut self) -> Self {
        self.set.spec.update_strategy = Some(StatefulSetUpdateStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: None,
        });
        self
    }
    pub fn min_ready(mut self, s: i32) -> Self {
        self.set.spec.min_ready_seconds = Some(s);
        self
    }
    pub fn start_ordinal(mut self, s: i32) -> Self {
        self.set.spec.ordinals = Some(StatefulSetOrdinals { start: Some(s) });
        self
    }
    pub fn history_limit(mut self, n: i32) -> Self {
        self.set.spec.revision_history_limit = Some(n);
        self
    }
    /// Claim templates named `names`, each with the label `tier=db`.
    pub fn claim_templates(mut self, names: &[&str]) -> Self {
        self.set.spec.volume_claim_templates = Some(
            names
                .iter()
                .map(|n| PersistentVolumeClaim {
                    metadata: ObjectMeta {
                        name: Some((*n).into()),
                        labels: Some(BTreeMap::from([("tier".into(), "db".into())])),
                        ..Default::default()
                    },
                    spec: Some(PersistentVolumeClaimSpec::default()),
                    status: None,
                })
                .collect(),
        );
        self.default_set();
        self
    }
    pub fn retention(mut self, when_deleted: &str, when_scaled: &str) -> Self {
        self.set.spec.persistent_volume_claim_retention_policy =
            Some(StatefulSetPersistentVolumeClaimRetentionPolicy {
                when_deleted: Some(when_deleted.into()),
                when_scaled: Some(when_scaled.into()),
            });
        self
    }
    pub fn timings(mut self, start: i64, ready: i64, stop: i64) -> Self {
        self.kubelet = Kubelet { start, ready, stop };
        self
    }

    fn rolling_mut(&mut self) -> Option<&mut RollingUpdateStatefulSetStrategy> {
        let us = self.set.spec.update_strategy.get_or_insert_with(Default::default);
        if us.type_.as_deref() == Some("OnDelete") {
            return None;
        }
        us.type_ = Some("RollingUpdate".into());
        Some(us.rolling_update.get_or_insert_with(Default::default))
    }

    // ---- spec changes (each bumps the generation, like an API update) ----

    pub fn set_image(&mut self, image: &str) -> &mut Self {
        let image = image.to_string();
        self.edit(|s| {
            if let Some(c) = s.template.spec.as_mut().and_then(|p| p.containers.first_mut()) {
                c.image = Some(image);
            }
        })
    }
    pub fn scale(&mut self, n: i32) -> &mut Self {
        self.edit(|s| s.replicas = Some(n))
    }
    pub fn set_partition(&mut self, p: i32) -> &mut Self {
        self.edit(|s| {
            let us = s.update_strategy.get_or_insert_with(Default::default);
            us.rolling_update.get_or_insert_with(Default::default).partition = Some(p);
        })
    }
    pub fn set_strategy(&mut self, on_delete: bool) -> &mut Self {
        self.edit(|s| {
            s.update_strategy = Some(if on_delete {
                StatefulSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None }
            } else {
                StatefulSetUpdateStrategy {
                    type_: Some("RollingUpdate".into()),
                    rolling_update: Some(Default::default()),
                }
            });
        })
    }
    pub fn set_policy(&mut self, parallel: bool) -> &mut Self {
        let p = if parallel { "Parallel" } else { "OrderedReady" };
        self.edit(|s| s.pod_management_policy = Some(p.into()))
    }
    pub fn set_start(&mut self, start: i32) -> &mut Self {
        self.edit(|s| s.ordinals = Some(StatefulSetOrdinals { start: Some(start) }))
    }
    pub fn set_max_unavailable(&mut self, v: IntOrString) -> &mut Self {
        self.edit(|s| {
            let us = s.update_strategy.get_or_insert_with(Default::default);
            us.rolling_update.get_or_insert_with(Default::default).max_unavailable = Some(v);
        })
    }

    // ---- faults and user actions ----

    fn pod_mut(&mut self, name: &str) -> Option<&mut Pod> {
        self.pods.get_mut(name)
    }
    fn touch(&mut self, name: &str) {
        let rv = self.rv();
        if let Some(p) = self.pods.get_mut(name) {
            p.metadata.resource_version = Some(rv);
        }
    }
    /// The pod's phase becomes Failed.
    pub fn fail(&mut self, name: &str) {
        if let Some(p) = self.pod_mut(name) {
            let st = p.status.get_or_insert_with(Default::default);
            st.phase = Some("Failed".into());
            set_ready(st, false, None);
        }
        self.touch(name);
    }
    /// Ready=False while it runs, and it stays unready until [`World::ready`].
    pub fn unready(&mut self, name: &str) {
        let t = self.t;
        if let Some(st) = self.pod_mut(name).and_then(|p| p.status.as_mut()) {
            set_ready(st, false, Some(t));
        }
        if let Some(tm) = self.timer_of(name) {
            tm.no_ready = true;
        }
        self.touch(name);
    }
    /// Lets an unready pod become Ready again (at the next tick).
    pub fn ready(&mut self, name: &str) {
        if let Some(tm) = self.timer_of(name) {
            tm.no_ready = false;
        }
    }
    /// A user's graceful delete.
    pub fn delete_pod(&mut self, name: &str) {
        let t = self.t;
        if let Some(p) = self.pod_mut(name) {
            p.metadata.deletion_timestamp.get_or_insert(Time(ts(t)));
        }
        if let Some(tm) = self.timer_of(name) {
            tm.deleted.get_or_insert(t);
        }
        self.touch(name);
    }
    /// Immediate removal (force delete), with claim GC.
    pub fn force_delete(&mut self, name: &str) {
        self.remove_pod(name);
    }

    fn timer_of(&mut self, name: &str) -> Option<&mut Timer> {
        let uid = self.pods.get(name)?.metadata.uid.clone()?;
        self.timers.get_mut(&uid)
    }

    fn uid(&mut self, kind: &str) -> String {
        self.next_uid += 1;
        format!("uid-{kind}-{}", self.next_uid)
    }
    fn rv(&mut self) -> String {
        self.next_rv += 1;
        self.next_rv.to_string()
    }

    // ---- the loop ----

    /// One sync: reconcile, check the invariants on the plan, apply its effects.
    pub fn sync(&mut self) -> Plan {
        let plan = self.plan();
        self.apply(&plan);
        self.plans.push(plan.clone());
        plan
    }

    /// Reconcile and check the invariants, without applying.
    pub fn plan(&mut self) -> Plan {
        let pods: Vec<&Pod> = self.pods.values().collect();
        let claims: Vec<&PersistentVolumeClaim> = self.claims.values().collect();
        let revisions: Vec<&ControllerRevision> = self.revisions.values().collect();
        let observed =
            Observed { set: &self.set, pods: &pods, claims: &claims, revisions: &revisions };
        let plan = reconcile(&observed, &self.options, self.now());
        let found: Vec<Violation> =
            invariants::check_plan(&observed, &plan, self.now(), &self.options.semantics);
        let t = self.t;
        self.violations.extend(found.into_iter().map(|v| format!("t={t} sync: {v}")));
        plan
    }

    /// Applies a plan's effects as an API server would.
    pub fn apply(&mut self, plan: &Plan) {
        for e in &plan.effects {
            self.apply_effect(e);
        }
    }

    /// Advances the clock by `secs`, one second at a time, moving pods along.
    pub fn tick(&mut self, secs: i64) {
        for _ in 0..secs {
            self.t += 1;
            self.kubelet_step();
        }
    }

    /// sync → tick(1) until the set has converged (rolled out, every replica ready and
    /// available, nothing terminating, no effects) or `max` rounds pass. Returns the rounds.
    pub fn settle(&mut self, max: usize) -> usize {
        for round in 0..max {
            let plan = self.sync();
            if plan.effects.iter().all(|e| matches!(e, Effect::WriteStatus(_))) && self.converged()
            {
                return round;
            }
            self.tick(1);
        }
        max
    }

    /// Rolled out, `replicas` pods all ready and available, none terminating or extra.
    pub fn converged(&self) -> bool {
        let s = self.set.status.clone().unwrap_or_default();
        let n = self.set.spec.replicas.unwrap_or(1);
        s.current_revision.is_some()
            && s.current_revision == s.update_revision
            && s.replicas == n
            && s.ready_replicas.unwrap_or(0) == n
            && s.available_replicas.unwrap_or(0) == n
            && s.updated_replicas.unwrap_or(0) == n
            && self.pods.values().all(|p| p.metadata.deletion_timestamp.is_none())
            && self.pods.len() == usize::try_from(n).unwrap_or(0)
    }

    // ---- inspection ----

    pub fn pod_names(&self) -> Vec<String> {
        let mut v: Vec<(i32, String)> =
            self.pods.keys().map(|n| (ststui::core::labels::ordinal_of(n), n.clone())).collect();
        v.sort();
        v.into_iter().map(|(_, n)| n).collect()
    }
    pub fn status(&self) -> k8s_openapi::api::apps::v1::StatefulSetStatus {
        self.set.status.clone().unwrap_or_default()
    }
    pub fn revision_of(&self, pod: &str) -> String {
        self.pods.get(pod).map(|p| ststui::core::pod::revision(p).to_string()).unwrap_or_default()
    }
    pub fn update_revision(&self) -> String {
        self.status().update_revision.unwrap_or_default()
    }
    pub fn current_revision(&self) -> String {
        self.status().current_revision.unwrap_or_default()
    }
    pub fn is_ready(&self, pod: &str) -> bool {
        self.pods.get(pod).is_some_and(ststui::core::pod::is_running_and_ready)
    }
    pub fn is_terminating(&self, pod: &str) -> bool {
        self.pods.get(pod).is_some_and(ststui::core::pod::is_terminating)
    }

    /// Fails the test if an invariant was ever violated.
    pub fn assert_invariants(&self) {
        assert!(
            self.violations.is_empty(),
            "invariant violations:\n{}",
            self.violations.join("\n")
        );
    }
}

/// The pod-level actions of a plan as short strings: `create-pod web-0`,
/// `delete-pod web-2 update`, `update-pod web-1`, `create-pvc data-web-0`, `update-pvc …`.
pub fn actions(plan: &Plan) -> Vec<String> {
    plan.effects
        .iter()
        .filter_map(|e| match e {
            Effect::CreatePod(p) => {
                Some(format!("create-pod {}", p.metadata.name.as_deref().unwrap_or_default()))
            }
            Effect::UpdatePod(p) => {
                Some(format!("update-pod {}", p.metadata.name.as_deref().unwrap_or_default()))
            }
            Effect::DeletePod { name, reason } => {
                Some(format!("delete-pod {name} {}", reason.as_str()))
            }
            Effect::CreateClaim(c) => {
                Some(format!("create-pvc {}", c.metadata.name.as_deref().unwrap_or_default()))
            }
            Effect::UpdateClaim(c) => {
                Some(format!("update-pvc {}", c.metadata.name.as_deref().unwrap_or_default()))
            }
            _ => None,
        })
        .collect()
}

/// Only `create-pod` / `delete-pod` actions.
pub fn pod_actions(plan: &Plan) -> Vec<String> {
    actions(plan).into_iter().filter(|a| a.contains("-pod ")).collect()
}

/// Whether the plan writes the status.
pub fn writes_status(plan: &Plan) -> bool {
    plan.effects.iter().any(|e| matches!(e, Effect::WriteStatus(_)))
}

/// A percentage or integer maxUnavailable.
pub fn mu(s: &str) -> IntOrString {
    s.parse::<i32>().map_or_else(|_| IntOrString::String(s.into()), IntOrString::Int)
}
