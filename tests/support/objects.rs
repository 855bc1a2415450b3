//! The objects most tests start from: the set `web` in `default`, built as a manifest would
//! write it, and the kubelet's timings.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use ststui::backend::ObjRef;
use ststui::sim::KubeletConfig;

/// `default/web`.
pub fn web() -> ObjRef {
    ObjRef::new("default", "web")
}

/// `default/NAME`.
pub fn key(name: &str) -> ObjRef {
    ObjRef::new("default", name)
}

/// A set `name` with `replicas`: one container `app` on nginx:1.25, selector and pod label
/// app=NAME, serviceName NAME, no namespace (the default one).
pub fn set(name: &str, replicas: i32) -> StatefulSet {
    let labels: BTreeMap<String, String> = [("app".to_string(), name.to_string())].into();
    StatefulSet {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        spec: StatefulSetSpec {
            replicas: Some(replicas),
            selector: LabelSelector { match_labels: Some(labels.clone()), ..Default::default() },
            service_name: Some(name.into()),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels), ..Default::default() }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: Some("nginx:1.25".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A kubelet whose pods start, turn Ready and stop after `ms` each.
pub fn kubelet(ms: u64) -> KubeletConfig {
    KubeletConfig {
        start_ms: ms,
        ready_ms: ms,
        stop_ms: ms,
        broken: None,
        failure: Default::default(),
    }
}

/// A kubelet whose pods start, turn Ready and stop after `ms` each, except that pods on
/// `broken` never turn Ready.
pub fn kubelet_breaking(ms: u64, broken: &str) -> KubeletConfig {
    KubeletConfig { broken: Some(broken.into()), ..kubelet(ms) }
}
