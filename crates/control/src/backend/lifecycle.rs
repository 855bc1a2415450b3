//! `lifecycle.k8s.io/v1alpha1` Eviction (Kubernetes 1.37: alpha, off by default — the
//! `EvictionRequestAPI` feature gate and `--runtime-config lifecycle.k8s.io/v1alpha1=true`): a
//! pod's eviction as its requesters asked for it (EvictionRequests, gathered by the
//! evictionrequest-controller into `status.requesters`) and as its responders carry it out, one
//! at a time by priority (`status.targetResponders`, `status.responders`). The pod's detail shows
//! them; nothing acts on them.
//!
//! Written here because k8s-openapi has no alpha APIs: the fields the detail shows are read with
//! serde (the rest ignored), and k8s-openapi's `Resource` and `Metadata` are implemented by hand
//! as its generated types do, so kube and the watcher take it like any other kind. Owns: these types and their words. Must not:
//! trust them (every string is the cluster's: escaped where shown).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use serde::{Deserialize, Serialize};

pub const GROUP: &str = "lifecycle.k8s.io";
pub const VERSION: &str = "v1alpha1";
pub const PLURAL: &str = "evictions";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Eviction {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: EvictionSpec,
    #[serde(default)]
    pub status: EvictionStatus,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvictionSpec {
    #[serde(default)]
    pub target: Target,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Target {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<PodRef>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PodRef {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub uid: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictionStatus {
    #[serde(default)]
    pub requesters: Vec<Requester>,
    #[serde(default)]
    pub target_responders: Vec<TargetResponder>,
    #[serde(default)]
    pub responders: Vec<ResponderStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Requester {
    #[serde(default)]
    pub name: String,
    /// `Eviction` or `Withdrawn`.
    #[serde(default)]
    pub intent: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetResponder {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub priority: Option<i32>,
    /// Inactive, Active, Interrupted, Canceled or Completed.
    #[serde(default)]
    pub state: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResponderStatus {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub heartbeat_time: Option<Time>,
    #[serde(default)]
    pub completion_time: Option<Time>,
    #[serde(default)]
    pub message: Option<String>,
}

// k8s-openapi's traits, as its generated types implement them: kube's `Resource` follows.
impl k8s_openapi::Resource for Eviction {
    const API_VERSION: &'static str = "lifecycle.k8s.io/v1alpha1";
    const GROUP: &'static str = GROUP;
    const KIND: &'static str = "Eviction";
    const VERSION: &'static str = VERSION;
    const URL_PATH_SEGMENT: &'static str = PLURAL;
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::ListableResource for Eviction {
    const LIST_KIND: &'static str = "EvictionList";
}

impl k8s_openapi::Metadata for Eviction {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl Eviction {
    /// Whether it targets the pod `name` with `uid` (an eviction of an earlier pod of that name
    /// is not this one's).
    pub fn targets(&self, name: &str, uid: &str) -> bool {
        self.spec.target.pod.as_ref().is_some_and(|p| p.name == name && p.uid == uid)
    }

    /// The detail's rows: who asked (`eviction`), then each responder in priority order
    /// (`responder`), its state, heartbeat (`ago` words it) and message. Cluster text, raw: the
    /// pane escapes it.
    pub fn rows(&self, ago: impl Fn(&Time) -> String) -> Vec<(&'static str, String)> {
        let mut rows = Vec::new();
        let asked: Vec<String> = self
            .status
            .requesters
            .iter()
            .map(|r| match r.intent.as_str() {
                "Eviction" | "" => r.name.clone(),
                other => format!("{} ({})", r.name, other.to_lowercase()),
            })
            .collect();
        rows.push((
            "eviction",
            match asked.is_empty() {
                true => "requested (no requester recorded yet)".to_string(),
                false => format!("requested by {}", asked.join(", ")),
            },
        ));
        let mut responders: Vec<&TargetResponder> = self.status.target_responders.iter().collect();
        responders.sort_by_key(|t| std::cmp::Reverse(t.priority.unwrap_or(0)));
        for t in responders {
            let st = self.status.responders.iter().find(|r| r.name == t.name);
            let mut text = format!("{} ({}): {}", t.name, t.priority.unwrap_or(0), t.state);
            if let Some(at) = st.and_then(|s| s.completion_time.as_ref()) {
                text.push_str(&format!(", completed {}", ago(at)));
            } else if let Some(at) = st.and_then(|s| s.heartbeat_time.as_ref()) {
                text.push_str(&format!(", heartbeat {}", ago(at)));
            }
            if let Some(m) = st.and_then(|s| s.message.as_deref()).filter(|m| !m.is_empty()) {
                text.push_str(&format!(" — {m}"));
            }
            rows.push(("responder", text));
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eviction_reads_as_its_requesters_and_its_responders_by_priority() {
        let e: Eviction = serde_json::from_value(serde_json::json!({
            "apiVersion": "lifecycle.k8s.io/v1alpha1", "kind": "Eviction",
            "metadata": {"name": "e1", "namespace": "db"},
            "spec": {"target": {"pod": {"name": "web-2", "uid": "u2"}}},
            "status": {
                "requesters": [{"name": "acme.io/drainer", "intent": "Eviction"},
                               {"name": "acme.io/autoscaler", "intent": "Withdrawn"}],
                "targetResponders": [
                    {"name": "imperative-eviction.k8s.io/evictor", "priority": 100, "state": "Inactive"},
                    {"name": "acme.io/db", "priority": 10000, "state": "Active"}],
                "responders": [{"name": "acme.io/db", "heartbeatTime": "2026-01-01T00:00:00Z",
                                "message": "moving leaders: 3 left"}],
                "someFutureField": 1,
            },
        }))
        .unwrap();
        assert!(e.targets("web-2", "u2"));
        assert!(!e.targets("web-2", "an earlier pod's uid"));
        let rows = e.rows(|_| "10s ago".into());
        assert_eq!(
            rows,
            [
                ("eviction", "requested by acme.io/drainer, acme.io/autoscaler (withdrawn)".into()),
                (
                    "responder",
                    "acme.io/db (10000): Active, heartbeat 10s ago — moving leaders: 3 left".into()
                ),
                ("responder", "imperative-eviction.k8s.io/evictor (100): Inactive".into()),
            ]
        );
        use kube::Resource as _;
        assert_eq!(Eviction::api_version(&()), "lifecycle.k8s.io/v1alpha1");
        assert_eq!(
            Eviction::url_path(&(), Some("db")),
            "/apis/lifecycle.k8s.io/v1alpha1/namespaces/db/evictions"
        );
    }
}
