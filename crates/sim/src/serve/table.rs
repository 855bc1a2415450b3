//! Server-side printing: the `Table` documents `kubectl get` asks for
//! (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), with the columns a real API
//! server prints for each resource (wide ones at priority 1), ages in kubectl's words.

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{Event as KubeEvent, PersistentVolumeClaim, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::resources::Res;
use crate::backend::Object;

/// How much of each object a row carries (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Include {
    None,
    #[default]
    Metadata,
    Object,
}

/// An `includeObject` the API server does not take (a 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("includeObject {0:?}: expected None, Metadata or Object")]
pub struct BadInclude(pub String);

impl From<BadInclude> for super::status::Status {
    fn from(e: BadInclude) -> Self {
        super::status::Status::bad_request(e.to_string())
    }
}

impl Include {
    pub fn parse(s: Option<&str>) -> Result<Include, BadInclude> {
        match s {
            None | Some("Metadata") => Ok(Include::Metadata),
            Some("None") => Ok(Include::None),
            Some("Object") => Ok(Include::Object),
            Some(other) => Err(BadInclude(other.to_string())),
        }
    }
}

/// (name, type, priority) of each column, in order.
fn columns(res: Res) -> &'static [(&'static str, &'static str, u8)] {
    match res {
        Res::Sets => &[
            ("Name", "string", 0),
            ("Ready", "string", 0),
            ("Age", "string", 0),
            ("Containers", "string", 1),
            ("Images", "string", 1),
        ],
        Res::Pods => &[
            ("Name", "string", 0),
            ("Ready", "string", 0),
            ("Status", "string", 0),
            ("Restarts", "string", 0),
            ("Age", "string", 0),
            ("IP", "string", 1),
            ("Node", "string", 1),
            ("Nominated Node", "string", 1),
            ("Readiness Gates", "string", 1),
        ],
        Res::Claims => &[
            ("Name", "string", 0),
            ("Status", "string", 0),
            ("Volume", "string", 0),
            ("Capacity", "string", 0),
            ("Access Modes", "string", 0),
            ("StorageClass", "string", 0),
            ("VolumeAttributesClass", "string", 0),
            ("Age", "string", 0),
            ("VolumeMode", "string", 1),
        ],
        Res::Revisions => &[
            ("Name", "string", 0),
            ("Controller", "string", 0),
            ("Revision", "integer", 0),
            ("Age", "string", 0),
        ],
        Res::Events => &[
            ("Last Seen", "string", 0),
            ("Type", "string", 0),
            ("Reason", "string", 0),
            ("Object", "string", 0),
            ("Subobject", "string", 1),
            ("Source", "string", 1),
            ("Message", "string", 0),
            ("First Seen", "string", 1),
            ("Count", "string", 1),
            ("Name", "string", 1),
        ],
        Res::Budgets => &[
            ("Name", "string", 0),
            ("Min Available", "string", 0),
            ("Max Unavailable", "string", 0),
            ("Allowed Disruptions", "integer", 0),
            ("Age", "string", 0),
        ],
        Res::Namespaces => &[("Name", "string", 0), ("Status", "string", 0), ("Age", "string", 0)],
        Res::Leases => &[("Name", "string", 0), ("Holder", "string", 0), ("Age", "string", 0)],
        Res::AccessReviews | Res::RulesReviews | Res::SelfReviews => &[("Name", "string", 0)],
    }
}

/// A Table of `rows` (objects of `res`) at resourceVersion `rv`, ages counted to `now`.
pub fn table(
    res: Res,
    objects: &[Value],
    rows: Vec<Vec<Value>>,
    rv: &str,
    include: Include,
) -> Value {
    let defs: Vec<Value> = columns(res)
        .iter()
        .map(|(name, ty, prio)| {
            let format = if *name == "Name" { "name" } else { "" };
            json!({"name": name, "type": ty, "format": format, "description": "", "priority": prio})
        })
        .collect();
    let rows: Vec<Value> = rows
        .into_iter()
        .zip(objects)
        .map(|(cells, obj)| {
            let mut row = json!({"cells": cells});
            let object = match include {
                Include::None => None,
                Include::Object => Some(obj.clone()),
                Include::Metadata => Some(json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": obj.get("metadata").cloned().unwrap_or(Value::Null),
                })),
            };
            if let (Some(o), Some(m)) = (object, row.as_object_mut()) {
                m.insert("object".into(), o);
            }
            row
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": rv},
        "columnDefinitions": defs,
        "rows": rows,
    })
}

/// The cells of one object's row.
pub fn cells(obj: &Object, now: Timestamp) -> Vec<Value> {
    match obj {
        Object::Set(s) => set_cells(s, now),
        Object::Pod(p) => pod_cells(p, now),
        Object::Claim(c) => claim_cells(c, now),
        Object::Revision(r) => revision_cells(r, now),
        Object::Event(e) => event_cells(e, now),
        Object::Budget(b) => budget_cells(b, now),
        // Not a resource the simulator serves.
        Object::Eviction(_) => Vec::new(),
    }
}

/// A namespace's row.
pub fn namespace_cells(meta: &ObjectMeta, now: Timestamp) -> Vec<Value> {
    vec![json!(meta.name), json!("Active"), json!(age(meta, now))]
}

fn age(meta: &ObjectMeta, now: Timestamp) -> String {
    match &meta.creation_timestamp {
        Some(t) => human_duration(now.as_millisecond() - t.0.as_millisecond()),
        None => "<unknown>".into(),
    }
}

fn set_cells(s: &StatefulSet, now: Timestamp) -> Vec<Value> {
    let ready = s.status.as_ref().and_then(|st| st.ready_replicas).unwrap_or(0);
    let desired = s.spec.replicas.unwrap_or(1);
    let containers =
        s.spec.template.spec.as_ref().map(|p| p.containers.as_slice()).unwrap_or_default();
    let names: Vec<&str> = containers.iter().map(|c| c.name.as_str()).collect();
    let images: Vec<&str> = containers.iter().filter_map(|c| c.image.as_deref()).collect();
    vec![
        json!(s.metadata.name),
        json!(format!("{ready}/{desired}")),
        json!(age(&s.metadata, now)),
        json!(names.join(",")),
        json!(images.join(",")),
    ]
}

fn pod_cells(p: &Pod, now: Timestamp) -> Vec<Value> {
    let total = p.spec.as_ref().map_or(0, |s| s.containers.len());
    let statuses =
        p.status.as_ref().and_then(|s| s.container_statuses.as_deref()).unwrap_or_default();
    let ready = statuses.iter().filter(|c| c.ready).count();
    let restarts: i32 = statuses.iter().map(|c| c.restart_count).sum();
    let mut reason = p
        .status
        .as_ref()
        .and_then(|s| s.reason.clone().or_else(|| s.phase.clone()))
        .unwrap_or_else(|| "Pending".into());
    for c in statuses {
        if let Some(w) =
            c.state.as_ref().and_then(|s| s.waiting.as_ref()).and_then(|w| w.reason.clone())
        {
            reason = w;
        }
    }
    if p.metadata.deletion_timestamp.is_some() {
        reason = "Terminating".into();
    }
    let status = p.status.as_ref();
    vec![
        json!(p.metadata.name),
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts.to_string()),
        json!(age(&p.metadata, now)),
        json!(status.and_then(|s| s.pod_ip.clone()).unwrap_or_else(|| "<none>".into())),
        json!(p.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_else(|| "<none>".into())),
        json!("<none>"),
        json!("<none>"),
    ]
}

fn claim_cells(c: &PersistentVolumeClaim, now: Timestamp) -> Vec<Value> {
    let spec = c.spec.as_ref();
    let phase = c.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_else(|| "Pending".into());
    let capacity = c
        .status
        .as_ref()
        .and_then(|s| s.capacity.as_ref())
        .or_else(|| spec.and_then(|s| s.resources.as_ref()?.requests.as_ref()))
        .and_then(|m| m.get("storage"))
        .map(|q| q.0.clone())
        .unwrap_or_default();
    let modes: Vec<&str> = spec
        .and_then(|s| s.access_modes.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|m| match m.as_str() {
            "ReadWriteOnce" => "RWO",
            "ReadOnlyMany" => "ROX",
            "ReadWriteMany" => "RWX",
            "ReadWriteOncePod" => "RWOP",
            other => other,
        })
        .collect();
    vec![
        json!(c.metadata.name),
        json!(phase),
        json!(spec.and_then(|s| s.volume_name.clone()).unwrap_or_default()),
        json!(capacity),
        json!(modes.join(",")),
        json!(spec.and_then(|s| s.storage_class_name.clone()).unwrap_or_else(|| "<unset>".into())),
        json!("<unset>"),
        json!(age(&c.metadata, now)),
        json!(spec.and_then(|s| s.volume_mode.clone()).unwrap_or_else(|| "Filesystem".into())),
    ]
}

/// `kubectl get pdb`'s row: a bound not set reads `N/A`.
fn budget_cells(b: &PodDisruptionBudget, now: Timestamp) -> Vec<Value> {
    let bound = |v: Option<&IntOrString>| match v {
        Some(IntOrString::Int(n)) => n.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
        None => "N/A".into(),
    };
    let spec = b.spec.as_ref();
    let allowed = b.status.as_ref().and_then(|s| s.disruptions_allowed).unwrap_or(0);
    vec![
        json!(b.metadata.name),
        json!(bound(spec.and_then(|s| s.min_available.as_ref()))),
        json!(bound(spec.and_then(|s| s.max_unavailable.as_ref()))),
        json!(allowed),
        json!(age(&b.metadata, now)),
    ]
}

fn revision_cells(r: &ControllerRevision, now: Timestamp) -> Vec<Value> {
    let owner = r.metadata.owner_references.iter().flatten().find(|o| o.controller == Some(true));
    let controller = owner.map_or_else(
        || "<none>".to_string(),
        |o| {
            let group = o.api_version.split_once('/').map_or("", |(g, _)| g);
            let kind = o.kind.to_lowercase();
            if group.is_empty() {
                format!("{kind}/{}", o.name)
            } else {
                format!("{kind}.{group}/{}", o.name)
            }
        },
    );
    vec![json!(r.metadata.name), json!(controller), json!(r.revision), json!(age(&r.metadata, now))]
}

fn event_cells(e: &KubeEvent, now: Timestamp) -> Vec<Value> {
    let since = |t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>| {
        t.map_or_else(
            || "<unknown>".to_string(),
            |t| human_duration(now.as_millisecond() - t.0.as_millisecond()),
        )
    };
    let io = &e.involved_object;
    let object = format!(
        "{}/{}",
        io.kind.as_deref().unwrap_or_default().to_lowercase(),
        io.name.as_deref().unwrap_or_default()
    );
    let source = e.source.as_ref().and_then(|s| s.component.clone()).unwrap_or_default();
    vec![
        json!(since(e.last_timestamp.as_ref())),
        json!(e.type_),
        json!(e.reason),
        json!(object),
        json!(io.field_path.clone().unwrap_or_default()),
        json!(source),
        json!(e.message.as_deref().unwrap_or_default().trim()),
        json!(since(e.first_timestamp.as_ref())),
        json!(e.count.unwrap_or(1).to_string()),
        json!(e.metadata.name),
    ]
}

/// A duration in kubectl's words: `45s`, `3m20s`, `15m`, `5h10m`, `2d3h`, `40d`, `2y30d`.
/// Exact seconds below two minutes, then coarser as it grows.
pub fn human_duration(ms: i64) -> String {
    let s = ms / 1000;
    if s < -1 {
        return "<invalid>".into();
    }
    if s < 120 {
        return format!("{}s", s.max(0));
    }
    let (m, h, d) = (s / 60, s / 3600, s / 86_400);
    let with = |big: i64, unit: &str, small: i64, unit2: &str| {
        if small == 0 { format!("{big}{unit}") } else { format!("{big}{unit}{small}{unit2}") }
    };
    match () {
        _ if m < 10 => with(m, "m", s % 60, "s"),
        _ if m < 180 => format!("{m}m"),
        _ if h < 8 => with(h, "h", m % 60, "m"),
        _ if h < 48 => format!("{h}h"),
        _ if h < 24 * 8 => with(d, "d", h % 24, "h"),
        _ if d < 365 * 2 => format!("{d}d"),
        _ if d < 365 * 8 => with(d / 365, "y", d % 365, "d"),
        _ => format!("{}y", d / 365),
    }
}

#[cfg(test)]
mod tests {
    use super::human_duration;

    #[test]
    fn ages_read_as_kubectl_prints_them() {
        let cases = [
            (0, "0s"),
            (45_000, "45s"),
            (119_000, "119s"),
            (200_000, "3m20s"),
            (180_000, "3m"),
            (900_000, "15m"),
            (3 * 3_600_000 + 600_000, "3h10m"),
            (10 * 3_600_000, "10h"),
            (50 * 3_600_000, "2d2h"),
            (40 * 86_400_000, "40d"),
            (-5_000, "<invalid>"),
        ];
        for (ms, want) in cases {
            assert_eq!(human_duration(ms), want, "{ms}");
        }
    }
}
