//! `ststui fake-kubelet`: a stand-in kubelet for test clusters that have no real nodes (the
//! control plane of `tests/control-plane/run`). It registers a Node labelled
//! `ststui.dev/fake-kubelet=true`, binds every unscheduled pod to it (there is no scheduler),
//! moves each Pending → Running → Ready after the delays of the scenario language, finishes
//! graceful deletions after the stop delay, and takes the scenario's kubelet settings (the
//! `ststui-kubelet` ConfigMap of a namespace, read when a pod is first seen) and faults (the
//! `ststui.dev/kubelet-fault` pod annotation) through the API, so `ststui play` can ask for them
//! on a cluster.
//!
//! Written here because no library plays a kubelet this thin: kwok (the usual choice) is Go and
//! knows nothing of the scenario's settings. Never run it against a cluster with real nodes: it
//! binds every pod nobody has scheduled.
//!
//! Owns: the loop (a kube-rs pod watcher with backoff, one timer) and the writes. The decisions
//! live in [`plan`].

pub mod exec;
pub mod plan;

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Node, Pod};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;
use tokio::time::Instant;

use plan::{Action, Tracked};

use crate::kubelet::KubeletConfig;
use crate::kubelet::event::event_object;

/// The exec endpoint asked for (`--exec-port`, `--tls-cert`, `--tls-key`).
pub struct ExecServe {
    pub port: u16,
    pub cert: String,
    pub key: String,
}

/// Runs until SIGINT or SIGTERM. Returns a message when it cannot start.
pub fn run(
    target: &crate::cluster::Target,
    node: &str,
    exec: Option<ExecServe>,
) -> Result<(), String> {
    let runtime = crate::runtime::build("client", crate::runtime::Workers::Threads(2))
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let session = crate::cluster::session(target).await?;
        let client = session.client;
        let endpoint = match exec {
            Some(e) => Some(exec::Endpoint::bind(e.port, &e.cert, &e.key).await?),
            None => None,
        };
        let port = endpoint.as_ref().map(exec::Endpoint::port);
        register(&client, node, port).await?;
        crate::text::err_line(&format!(
            "fake kubelet: node {node} registered at {}; serving pods{}",
            session.server,
            port.map(|p| format!(", exec on https://127.0.0.1:{p}")).unwrap_or_default()
        ));
        if let Some(endpoint) = endpoint {
            tokio::spawn(endpoint.serve(client.clone()));
        }
        let mut k = Kubelet::new(client, node);
        tokio::select! {
            () = k.serve() => Ok(()),
            () = stopped() => {
                crate::text::err_line("fake kubelet: stopped");
                Ok(())
            }
        }
    })
}

async fn stopped() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}

/// Creates (or takes over) the Node and marks it Ready; with an exec endpoint on `port`, says so
/// in its status (the port, and the feature that has the API server proxy WebSockets to it).
async fn register(client: &kube::Client, node: &str, port: Option<u16>) -> Result<(), String> {
    let nodes: Api<Node> = Api::all(client.clone());
    let body: Node = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": node, "labels": {
            plan::NODE_LABEL: "true", "kubernetes.io/hostname": node, "kubernetes.io/os": "linux",
        }},
    }))
    .map_err(|e| format!("node document: {e}"))?;
    match nodes.create(&PostParams::default(), &body).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => {
            return Err(format!(
                "cannot register node {node}: {}",
                crate::cluster::trouble::brief(&e)
            ));
        }
    }
    let now = plan::stamp(k8s_openapi::jiff::Timestamp::now());
    let mut status = json!({"status": {
        "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
            "message": "ststui fake kubelet", "lastHeartbeatTime": now, "lastTransitionTime": now}],
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
        "capacity": {"cpu": "64", "memory": "256Gi", "pods": "10000"},
        "allocatable": {"cpu": "64", "memory": "256Gi", "pods": "10000"},
    }});
    if let Some(port) = port {
        status["status"]["daemonEndpoints"] = json!({"kubeletEndpoint": {"Port": port}});
        status["status"]["declaredFeatures"] = json!([exec::WEBSOCKETS_FEATURE]);
    }
    nodes.patch_status(node, &PatchParams::default(), &Patch::Merge(&status)).await.map_err(
        |e| format!("cannot mark node {node} Ready: {}", crate::cluster::trouble::brief(&e)),
    )?;
    Ok(())
}

/// The patch with the pod's uid: the API refuses it for a pod recreated under the same name.
fn with_uid(mut patch: serde_json::Value, uid: &str) -> serde_json::Value {
    patch["metadata"] = json!({"uid": uid});
    patch
}

struct Kubelet {
    client: kube::Client,
    node: String,
    start: Instant,
    pods: BTreeMap<String, Tracked>,
    /// The last state seen of each pod (by uid), for faults.
    latest: BTreeMap<String, Pod>,
    /// The settings last read per namespace, with the ConfigMap's resourceVersion (problems in
    /// it are said once per version).
    settings: BTreeMap<String, (String, KubeletConfig)>,
    next_ip: u32,
    /// Pods (by uid) this kubelet is done with: a late watch event must not revive one (its
    /// writes, by name, would land on the pod recreated under that name).
    finished: std::collections::VecDeque<String>,
}

/// Finished uids remembered.
const FINISHED_REMEMBERED: usize = 4096;

impl Kubelet {
    fn new(client: kube::Client, node: &str) -> Kubelet {
        Kubelet {
            client,
            node: node.into(),
            start: Instant::now(),
            pods: BTreeMap::new(),
            latest: BTreeMap::new(),
            settings: BTreeMap::new(),
            next_ip: 0,
            finished: std::collections::VecDeque::new(),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    async fn serve(&mut self) {
        let mut pods = watcher(Api::<Pod>::all(self.client.clone()), watcher::Config::default())
            .backoff(crate::cluster::QuickBackoff::default())
            .boxed();
        loop {
            let due = self.pods.values().filter_map(Tracked::due).min();
            let sleep = due.map_or(Duration::from_secs(3600), |d| {
                Duration::from_millis(d.saturating_sub(self.now()))
            });
            tokio::select! {
                ev = pods.next() => match ev {
                    Some(Ok(e)) => self.pod_event(e).await,
                    Some(Err(e)) => tracing::warn!(
                        "fake kubelet watch: {}",
                        crate::cluster::trouble::watcher_brief(&e)
                    ),
                    None => return,
                },
                () = tokio::time::sleep(sleep) => self.tick().await,
            }
        }
    }

    /// The namespace's settings as the API has them now (the last ones read if it cannot say).
    async fn settings_of(&mut self, ns: &str) -> KubeletConfig {
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), ns);
        match api.get_opt(plan::CONFIG_MAP).await {
            Ok(Some(cm)) => {
                let rv = cm.metadata.resource_version.clone().unwrap_or_default();
                if let Some((seen, s)) = self.settings.get(ns)
                    && *seen == rv
                {
                    return s.clone();
                }
                let (s, problems) = plan::from_config_map(&cm);
                for p in problems {
                    crate::text::err_line(&format!("fake kubelet: {ns}: {p}"));
                }
                tracing::info!("settings for {ns}: {s:?}");
                self.settings.insert(ns.to_string(), (rv, s.clone()));
                s
            }
            Ok(None) => KubeletConfig::default(),
            Err(e) => {
                let e = crate::cluster::trouble::brief(&e);
                tracing::warn!("reading {ns}/{}: {e}", plan::CONFIG_MAP);
                self.settings.get(ns).map(|(_, s)| s.clone()).unwrap_or_default()
            }
        }
    }

    async fn pod_event(&mut self, e: watcher::Event<Pod>) {
        match e {
            watcher::Event::Apply(p) | watcher::Event::InitApply(p) => self.pod(p).await,
            watcher::Event::Delete(p) => self.finish(&p.metadata.uid.unwrap_or_default()),
            watcher::Event::Init | watcher::Event::InitDone => {}
        }
    }

    fn finish(&mut self, uid: &str) {
        self.pods.remove(uid);
        self.latest.remove(uid);
        if !self.finished.iter().any(|u| u == uid) {
            self.finished.push_back(uid.to_string());
            if self.finished.len() > FINISHED_REMEMBERED {
                self.finished.pop_front();
            }
        }
    }

    async fn pod(&mut self, p: Pod) {
        let node = p.spec.as_ref().and_then(|s| s.node_name.clone());
        if node.as_deref().is_some_and(|n| n != self.node) {
            return; // another node's
        }
        let uid = p.metadata.uid.clone().unwrap_or_default();
        let ns = p.metadata.namespace.clone().unwrap_or_default();
        if self.finished.contains(&uid) {
            return;
        }
        if !self.pods.contains_key(&uid) {
            // Read the settings now rather than trust the ConfigMap's watch: `ststui play`
            // writes them just before the line that creates pods, and the two watches do not
            // keep each other's order.
            let settings = self.settings_of(&ns).await;
            let t = Tracked::new(&p, settings, self.now(), &self.node);
            self.pods.insert(uid.clone(), t);
        }
        let now = self.now();
        let Some(t) = self.pods.get_mut(&uid) else { return };
        t.observe(&p, now);
        let fault = t.pending_fault(&p);
        self.latest.insert(uid.clone(), p);
        if let Some((verb, value)) = fault {
            let Some(t) = self.pods.get(&uid) else { return };
            match t.fault_action(&verb) {
                Ok(action) => {
                    if self.act(&uid, &action).await
                        && let Some(t) = self.pods.get_mut(&uid)
                    {
                        t.fault = Some(value);
                    }
                }
                Err(why) => {
                    crate::text::err_line(&format!(
                        "fake kubelet: {}/{}: {why}",
                        t.namespace, t.name
                    ));
                    if let Some(t) = self.pods.get_mut(&uid) {
                        t.fault = Some(value);
                    }
                }
            }
        }
        self.tick().await;
    }

    /// Does every timed step that is due.
    async fn tick(&mut self) {
        let now = self.now();
        let due: Vec<(String, Action)> =
            self.pods.iter().filter_map(|(uid, t)| Some((uid.clone(), t.action(now)?))).collect();
        for (uid, action) in due {
            self.act(&uid, &action).await;
        }
    }

    /// Records the Events a kubelet writes for `action` (the simulator's words), on a task of
    /// their own: a pod's progress never waits on its Events, and a refused one is only logged.
    fn record(&self, t: &Tracked, action: &Action) {
        let words = plan::event_words(t, action);
        if words.is_empty() {
            return;
        }
        let who = crate::kubelet::failure::Container {
            pod: &t.name,
            ns: &t.namespace,
            name: t.containers.first().map_or("app", String::as_str),
            image: &t.image,
            uid: &t.uid,
        };
        let said: Vec<_> =
            words.iter().flat_map(|w| crate::kubelet::failure::kubelet_events(w, &who)).collect();
        let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::now(),
        );
        let events: Vec<Event> = said
            .iter()
            .map(|s| {
                let meta = kube::api::ObjectMeta {
                    generate_name: Some(format!("{}.", t.name)),
                    namespace: Some(t.namespace.clone()),
                    ..Default::default()
                };
                let about = k8s_openapi::api::core::v1::ObjectReference {
                    api_version: Some("v1".into()),
                    kind: Some("Pod".into()),
                    name: Some(t.name.clone()),
                    namespace: Some(t.namespace.clone()),
                    uid: Some(t.uid.clone()),
                    ..Default::default()
                };
                let host = Some(self.node.as_str());
                let mut e = event_object(meta, about, s, "kubelet", host, now.clone());
                e.reporting_instance = Some(self.node.clone());
                e
            })
            .collect();
        let api: Api<Event> = Api::namespaced(self.client.clone(), &t.namespace);
        tokio::spawn(async move {
            for e in events {
                if let Err(err) = api.create(&PostParams::default(), &e).await {
                    tracing::info!("event not recorded: {err}");
                }
            }
        });
    }

    /// Writes `action` for the pod; `true` when it was written.
    async fn act(&mut self, uid: &str, action: &Action) -> bool {
        let Some(t) = self.pods.get(uid).cloned() else { return false };
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &t.namespace);
        let at = plan::stamp(k8s_openapi::jiff::Timestamp::now());
        let pp = PatchParams::default();
        let result = match action {
            Action::Bind => {
                let binding = json!({
                    "apiVersion": "v1", "kind": "Binding",
                    "metadata": {"name": t.name, "uid": t.uid},
                    "target": {"apiVersion": "v1", "kind": "Node", "name": self.node},
                });
                api.create_subresource::<_, serde_json::Value>(
                    "binding",
                    &t.name,
                    &PostParams::default(),
                    &binding,
                )
                .await
                .map(drop)
            }
            Action::Run | Action::Ready(_) | Action::Restart => {
                let ready = matches!(action, Action::Ready(true));
                if matches!(action, Action::Run) {
                    self.next_ip += 1;
                }
                let ip =
                    format!("10.244.{}.{}", (self.next_ip / 250) % 250, self.next_ip % 250 + 2);
                let ip = self
                    .latest
                    .get(uid)
                    .and_then(|p| p.status.as_ref()?.pod_ip.clone())
                    .unwrap_or(ip);
                let body = with_uid(plan::running_status(&t, ready, &at, &ip), &t.uid);
                api.patch_status(&t.name, &pp, &Patch::Merge(body)).await.map(drop)
            }
            Action::PullFail | Action::PullBackOff | Action::Crash => {
                let now = k8s_openapi::jiff::Timestamp::now();
                let body = with_uid(plan::waiting_status(&t, action, &at, now), &t.uid);
                api.patch_status(&t.name, &pp, &Patch::Merge(body)).await.map(drop)
            }
            Action::Fail => {
                let body = with_uid(plan::failed_status(&t, &at), &t.uid);
                api.patch_status(&t.name, &pp, &Patch::Merge(body)).await.map(drop)
            }
            Action::Remove => {
                let dp = DeleteParams {
                    grace_period_seconds: Some(0),
                    preconditions: Some(Preconditions {
                        uid: Some(t.uid.clone()),
                        resource_version: None,
                    }),
                    ..Default::default()
                };
                api.delete(&t.name, &dp).await.map(drop)
            }
        };
        let now = self.now();
        match result {
            Ok(()) => {
                tracing::info!("{}/{}: {action:?}", t.namespace, t.name);
                self.record(&t, action);
                if let Some(t) = self.pods.get_mut(uid) {
                    t.done(action, now);
                }
                true
            }
            Err(kube::Error::Api(s)) if matches!(s.code, 404 | 409) => {
                // Gone, or replaced under the same name: done with this one.
                tracing::info!("{}/{}: {action:?}: {}", t.namespace, t.name, s.message);
                self.finish(uid);
                false
            }
            Err(e) => {
                crate::text::err_line(&format!(
                    "fake kubelet: {}/{}: {action:?} failed: {e}; retrying",
                    t.namespace, t.name
                ));
                if let Some(t) = self.pods.get_mut(uid) {
                    t.retry_at = Some(now + 1000);
                }
                false
            }
        }
    }
}
