//! What the console keeps of an object a watch delivers: everything it reads and the advisor
//! reads, nothing else. A pod as the API server sends it holds a service-account volume (3 KB
//! as a k8s-openapi `Volume`), tolerations, security contexts and whole container specs the
//! console never shows; and serde grows a one-element `Vec` to four slots (a pod's one
//! container status takes 3 KB that way). At 10,000 pods that is most of the console's
//! memory, so each object is trimmed once, as it arrives, and its vectors fitted.
//!
//! Kept of a pod: the metadata (less managed fields and the last-applied annotation); of its spec
//! the node, hostname and subdomain, and the volumes backed by a PersistentVolumeClaim (the core's
//! `storageMatches` reads them; a non-claim volume named like a claim template fails that check
//! just as an absent one does); of its status the phase, reason, message, start time, the Ready
//! condition and every condition that does not hold (a healthy pod's PodScheduled, Initialized and
//! ContainersReady say nothing), and the container statuses' name, image, readiness, restarts and
//! states. Everything else of the pod is dropped, the container specs too: a k8s-openapi
//! `Container` is 2.3 KB even with only a name and an image (its probes, lifecycle and security
//! context are inline), a third of a lean pod. The one thing read from them, the image the detail
//! pane shows, is the pod's revision's (the template the controller built it from,
//! `Mirror::pod_image`), or what its container runs. Other kinds lose only managed fields and the
//! last-applied annotation; a StatefulSet keeps of its managed fields who wrote its partition and
//! its `ststui.io/` annotations (the server's word on who wrote a record).
//!
//! A claim volume is 3.3 KB for the same reason; it stays, since the advisor's storage check
//! needs it.
//!
//! Owns: the pruning. Must not: decide anything about what an object means.

use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodSpec, PodStatus, Volume};
use kube::Resource;

/// The annotation `kubectl apply` keeps a whole copy of the object in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// `o` with what the console never reads dropped (see the module doc).
pub fn prune<K: Resource + 'static>(mut o: K) -> K {
    let is_set = (&o as &dyn std::any::Any).is::<k8s_openapi::api::apps::v1::StatefulSet>();
    let m = o.meta_mut();
    if is_set {
        // A set keeps who wrote its partition and ststui's records: the server's word beside
        // a record's own `by` (`plan::freeze`), a few hundred bytes a set.
        if let Some(fields) = m.managed_fields.as_mut() {
            fields.retain_mut(keep_writers);
            fields.shrink_to_fit();
        }
    } else {
        m.managed_fields = None;
    }
    if let Some(a) = m.annotations.as_mut() {
        a.remove(LAST_APPLIED);
        if a.is_empty() {
            m.annotations = None;
        }
    }
    if let Some(refs) = m.owner_references.as_mut() {
        refs.shrink_to_fit();
    }
    if let Some(pod) = (&mut o as &mut dyn std::any::Any).downcast_mut::<Pod>() {
        lean_pod(pod);
    }
    o
}

/// A set's managed-fields entry reduced to the fields ststui reads of it (the partition, the
/// `ststui.io/` annotations); `false` (dropped) when it holds none of them.
fn keep_writers(
    e: &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry,
) -> bool {
    use serde_json::{Map, Value};
    let Some(fields) = e.fields_v1.as_ref().map(|f| &f.0) else { return false };
    let mut kept = Map::new();
    let partition = fields.pointer("/f:spec/f:updateStrategy/f:rollingUpdate/f:partition");
    if partition.is_some() {
        let strategy =
            serde_json::json!({"f:updateStrategy": {"f:rollingUpdate": {"f:partition": {}}}});
        kept.insert("f:spec".into(), strategy);
    }
    if let Some(Value::Object(a)) = fields.pointer("/f:metadata/f:annotations") {
        let ours: Map<String, Value> = a
            .iter()
            .filter(|(k, _)| k.starts_with("f:ststui.io/"))
            .map(|(k, _)| (k.clone(), Value::Object(Map::new())))
            .collect();
        if !ours.is_empty() {
            kept.insert("f:metadata".into(), serde_json::json!({ "f:annotations": ours }));
        }
    }
    if kept.is_empty() {
        return false;
    }
    e.fields_v1 =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldsV1(Value::Object(kept)));
    true
}

/// A pod's spec and status reduced to what the console and the advisor read.
pub fn lean_pod(pod: &mut Pod) {
    if let Some(spec) = pod.spec.take() {
        pod.spec = Some(lean_spec(spec));
    }
    if let Some(status) = pod.status.take() {
        pod.status = Some(lean_status(status));
    }
}

fn lean_spec(spec: PodSpec) -> PodSpec {
    let volumes: Vec<Volume> = spec
        .volumes
        .into_iter()
        .flatten()
        .filter(|v| v.persistent_volume_claim.is_some())
        .map(|v| Volume {
            name: v.name,
            persistent_volume_claim: v.persistent_volume_claim,
            ..Default::default()
        })
        .collect();
    let mut volumes = volumes;
    volumes.shrink_to_fit();
    PodSpec {
        node_name: spec.node_name,
        hostname: spec.hostname,
        subdomain: spec.subdomain,
        volumes: (!volumes.is_empty()).then_some(volumes),
        ..Default::default()
    }
}

fn lean_status(status: PodStatus) -> PodStatus {
    let fit = |cs: Vec<ContainerStatus>| -> Vec<ContainerStatus> {
        let mut cs = cs
            .into_iter()
            .map(|c| ContainerStatus {
                name: c.name,
                image: c.image,
                ready: c.ready,
                restart_count: c.restart_count,
                started: c.started,
                state: c.state,
                last_state: c.last_state,
                ..Default::default()
            })
            .collect::<Vec<_>>();
        cs.shrink_to_fit();
        cs
    };
    // Ready (what the console and the advisor read) and every condition that does not hold
    // (what keeps a pod from running: unschedulable, not initialized); a healthy pod's other
    // conditions say nothing.
    let conditions = status.conditions.map(|c| {
        let mut c: Vec<_> =
            c.into_iter().filter(|c| c.type_ == "Ready" || c.status != "True").collect();
        c.shrink_to_fit();
        c
    });
    PodStatus {
        phase: status.phase,
        reason: status.reason,
        message: status.message,
        start_time: status.start_time,
        conditions,
        container_statuses: status.container_statuses.map(fit),
        init_container_statuses: status.init_container_statuses.map(fit),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::StatefulSet;

    /// A pod as kube-apiserver returns it for a set with one claim template: a service-account
    /// volume, tolerations, a full container spec and status.
    fn served_pod() -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {
                "name": "web-0", "namespace": "default", "uid": "u-0",
                "labels": {"app": "web", "controller-revision-hash": "web-a"},
                "annotations": {LAST_APPLIED: "{}", "kubectl.kubernetes.io/restartedAt": "t"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                    "name": "web", "uid": "s-1", "controller": true}],
                "managedFields": [{"manager": "kube-controller-manager"}]
            },
            "spec": {
                "nodeName": "n1", "hostname": "web-0", "subdomain": "web",
                "serviceAccountName": "default",
                "containers": [{"name": "app", "image": "nginx:1.25",
                    "ports": [{"containerPort": 80}], "env": [{"name": "A", "value": "b"}],
                    "readinessProbe": {"httpGet": {"path": "/", "port": 80}}}],
                "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
                "volumes": [
                    {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
                    {"name": "kube-api-access-x", "projected": {"sources": [
                        {"serviceAccountToken": {"path": "token"}}]}}
                ]
            },
            "status": {
                "phase": "Running", "podIP": "10.0.0.1", "qosClass": "BestEffort",
                "conditions": [
                    {"type": "PodScheduled", "status": "True"},
                    {"type": "Initialized", "status": "False", "reason": "Init"},
                    {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                     "lastTransitionTime": "2026-11-25T10:00:00Z"}
                ],
                "containerStatuses": [{"name": "app", "image": "nginx:1.25",
                    "imageID": "sha256:x", "containerID": "containerd://y", "ready": false,
                    "restartCount": 3,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 1}}}]
            }
        }))
        .unwrap()
    }

    #[test]
    fn a_pod_keeps_what_is_read_and_loses_the_rest() {
        let pod = prune(served_pod());
        let m = &pod.metadata;
        assert!(m.managed_fields.is_none());
        let annotations = m.annotations.as_ref().unwrap();
        assert!(!annotations.contains_key(LAST_APPLIED));
        assert!(annotations.contains_key("kubectl.kubernetes.io/restartedAt"));
        assert_eq!(m.owner_references.as_ref().map(|r| r[0].uid.as_str()), Some("s-1"));
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!(spec.node_name.as_deref(), Some("n1"));
        assert!(spec.containers.is_empty() && spec.init_containers.is_none());
        assert!(spec.tolerations.is_none() && spec.service_account_name.is_none());
        let volumes = spec.volumes.as_ref().unwrap();
        assert_eq!(volumes.len(), 1, "only the claim volume stays: {volumes:?}");
        assert_eq!(volumes[0].persistent_volume_claim.as_ref().unwrap().claim_name, "data-web-0");
        let status = pod.status.as_ref().unwrap();
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert!(status.pod_ip.is_none() && status.qos_class.is_none());
        let conditions = status.conditions.as_ref().unwrap();
        let kept: Vec<&str> = conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(kept, ["Initialized", "Ready"], "a condition that holds says nothing");
        let ready = conditions.iter().find(|c| c.type_ == "Ready");
        assert_eq!(ready.and_then(|c| c.reason.as_deref()), Some("ContainersNotReady"));
        assert!(ready.and_then(|c| c.last_transition_time.as_ref()).is_some());
        let cs = &status.container_statuses.as_ref().unwrap()[0];
        assert_eq!(cs.restart_count, 3);
        let waiting = cs.state.as_ref().and_then(|s| s.waiting.as_ref());
        assert_eq!(waiting.and_then(|w| w.reason.as_deref()), Some("CrashLoopBackOff"));
        assert!(cs.image_id.is_empty() && cs.container_id.is_none());
        assert_eq!(status.container_statuses.as_ref().unwrap().capacity(), 1);
    }

    #[test]
    fn what_the_console_and_the_advisor_read_is_the_same_after_pruning() {
        let set: StatefulSet = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "default", "uid": "s-1"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "serviceName": "web",
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}},
                "volumeClaimTemplates": [{"metadata": {"name": "data"}}]}
        }))
        .unwrap();
        let (full, lean) = (served_pod(), prune(served_pod()));
        use crate::core::{newpod, pod};
        assert_eq!(newpod::storage_matches(&set, &full), newpod::storage_matches(&set, &lean));
        assert!(newpod::storage_matches(&set, &lean));
        assert_eq!(pod::is_ready(&full), pod::is_ready(&lean));
        assert_eq!(pod::revision(&full), pod::revision(&lean));
        assert_eq!(pod::phase(&full), pod::phase(&lean));
        let restarts = |p: &Pod| -> Vec<i32> {
            let cs = p.status.as_ref().and_then(|s| s.container_statuses.as_ref());
            cs.into_iter().flatten().map(|c| c.restart_count).collect()
        };
        assert_eq!(restarts(&full), restarts(&lean));
    }

    #[test]
    fn a_statefulset_keeps_its_template_whole() {
        let mut set = StatefulSet::default();
        set.metadata.annotations = Some([(LAST_APPLIED.to_string(), "{}".to_string())].into());
        let mut tpl = k8s_openapi::api::core::v1::PodTemplateSpec::default();
        let container = k8s_openapi::api::core::v1::Container {
            name: "app".into(),
            env: Some(Vec::new()),
            ..Default::default()
        };
        tpl.spec = Some(PodSpec { containers: vec![container], ..Default::default() });
        set.spec.template = tpl.clone();
        let set = prune(set);
        assert!(set.metadata.annotations.is_none());
        assert_eq!(set.spec.template, tpl);
    }

    #[test]
    fn a_statefulset_keeps_who_wrote_its_partition_and_ststuis_records() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
        let entry = |manager: &str, fields: serde_json::Value| ManagedFieldsEntry {
            manager: Some(manager.into()),
            fields_v1: Some(FieldsV1(fields)),
            ..Default::default()
        };
        let mut set = StatefulSet::default();
        set.metadata.managed_fields = Some(vec![
            entry("kube-controller-manager", serde_json::json!({"f:status": {"f:replicas": {}}})),
            entry(
                "kubectl-annotate",
                serde_json::json!({"f:metadata": {"f:annotations": {
                    "f:ststui.io/frozen-by": {}, "f:team": {}}}}),
            ),
            entry(
                "kubectl-patch",
                serde_json::json!({"f:spec": {"f:replicas": {},
                    "f:updateStrategy": {"f:rollingUpdate": {"f:partition": {}}}}}),
            ),
        ]);
        let fields = prune(set).metadata.managed_fields.unwrap();
        let managers: Vec<_> = fields.iter().filter_map(|e| e.manager.as_deref()).collect();
        assert_eq!(managers, ["kubectl-annotate", "kubectl-patch"]);
        assert_eq!(
            fields[0].fields_v1.as_ref().unwrap().0,
            serde_json::json!({"f:metadata": {"f:annotations": {"f:ststui.io/frozen-by": {}}}})
        );
        let partition = "/f:spec/f:updateStrategy/f:rollingUpdate/f:partition";
        assert!(fields[1].fields_v1.as_ref().unwrap().0.pointer(partition).is_some());
        assert!(fields[1].fields_v1.as_ref().unwrap().0.pointer("/f:spec/f:replicas").is_none());
    }
}
