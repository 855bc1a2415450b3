//! Which fields Go's `encoding/json` emits for a `core/v1.PodTemplateSpec` (k8s.io/api types as
//! of v1.34–v1.36), as opposed to what k8s-openapi emits (every `Some`, never a `None`).
//!
//! Emulated, per Go field declaration:
//! * non-pointer scalars, slices and maps tagged `omitempty` are dropped when zero/empty
//!   (`"hostNetwork":false`, `"image":""`, `"ports":[]`, `"labels":{}` never appear);
//! * non-pointer **structs** are always emitted (`omitempty` has no effect on structs):
//!   `ObjectMeta.creationTimestamp` (`null`, until v1.34's `omitzero`), `Container.resources`
//!   and `EphemeralContainer.resources` (`{}`), `ResourceFieldSelector.divisor` (`"0"`),
//!   `PreferredSchedulingTerm.preference`, `WeightedPodAffinityTerm.podAffinityTerm`,
//!   `PersistentVolumeClaimTemplate.metadata` and its `spec.resources` (`{}`);
//! * pointers and slices **without** `omitempty` are emitted as `null` when nil:
//!   `GRPCAction.service`, `ProjectedVolumeSource.sources`, `NodeSelector.nodeSelectorTerms`;
//! * pointers are kept whatever they point to (`"privileged":false` stays);
//! * quantities are re-written in canonical form (Go re-marshals the parsed `Quantity`).
//!
//! Fields not listed (newer API fields, legacy volume sources) are kept exactly as k8s-openapi
//! wrote them; that matches Go whenever the value is non-zero.

use serde_json::{Map, Value};

use super::GoEncoding;
use super::quantity::canonical_quantity;

/// How Go encodes one field.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    /// Non-pointer scalar, slice or map with `omitempty`: dropped when zero or empty.
    Omit,
    /// Pointer, or a field k8s-openapi always writes when Go does: kept as it is.
    Keep,
    /// Pointer to a struct: normalised when present.
    Ptr(&'static GoType),
    /// Non-pointer struct: `{}` when absent, then normalised.
    Struct(&'static GoType),
    /// Slice of structs with `omitempty`: dropped when empty, else each element normalised.
    List(&'static GoType),
    /// Slice of structs without `omitempty`: `null` when absent.
    ListNoOmit(&'static GoType),
    /// Pointer or slice of scalars without `omitempty`: `null` when absent.
    NullWhenAbsent,
    /// Non-pointer `resource.Quantity`: `"0"` when absent, canonical otherwise.
    Quantity,
    /// `*resource.Quantity`: canonical when present.
    QuantityPtr,
    /// `ResourceList` (`map[ResourceName]Quantity`, `omitempty`).
    ResourceList,
    /// `ObjectMeta.creationTimestamp` (non-pointer `metav1.Time`).
    CreationTimestamp,
}

/// A Go struct: its JSON field names and how each is encoded.
pub(super) struct GoType {
    pub fields: &'static [(&'static str, Kind)],
}

use Kind::*;

static OBJECT_META: GoType = GoType {
    fields: &[
        ("name", Omit),
        ("generateName", Omit),
        ("namespace", Omit),
        ("selfLink", Omit),
        ("uid", Omit),
        ("resourceVersion", Omit),
        ("generation", Omit),
        ("creationTimestamp", CreationTimestamp),
        ("labels", Omit),
        ("annotations", Omit),
        ("ownerReferences", Omit),
        ("finalizers", Omit),
        ("managedFields", Omit),
    ],
};

static POD_TEMPLATE_SPEC: GoType =
    GoType { fields: &[("metadata", Struct(&OBJECT_META)), ("spec", Struct(&POD_SPEC))] };

static POD_SPEC: GoType = GoType {
    fields: &[
        ("volumes", List(&VOLUME)),
        ("initContainers", List(&CONTAINER)),
        ("containers", ListNoOmit(&CONTAINER)),
        ("ephemeralContainers", List(&EPHEMERAL_CONTAINER)),
        ("restartPolicy", Omit),
        ("dnsPolicy", Omit),
        ("nodeSelector", Omit),
        ("serviceAccountName", Omit),
        ("serviceAccount", Omit),
        ("nodeName", Omit),
        ("hostNetwork", Omit),
        ("hostPID", Omit),
        ("hostIPC", Omit),
        ("securityContext", Ptr(&POD_SECURITY_CONTEXT)),
        ("imagePullSecrets", List(&LOCAL_OBJECT_REFERENCE)),
        ("hostname", Omit),
        ("subdomain", Omit),
        ("affinity", Ptr(&AFFINITY)),
        ("schedulerName", Omit),
        ("tolerations", List(&TOLERATION)),
        ("hostAliases", List(&HOST_ALIAS)),
        ("priorityClassName", Omit),
        ("dnsConfig", Ptr(&POD_DNS_CONFIG)),
        ("readinessGates", Omit),
        ("overhead", ResourceList),
        ("topologySpreadConstraints", List(&TOPOLOGY_SPREAD_CONSTRAINT)),
        ("os", Keep),
        ("schedulingGates", Omit),
        ("resourceClaims", Omit),
        ("resources", Ptr(&RESOURCE_REQUIREMENTS)),
    ],
};

/// `Container` fields; `EphemeralContainer` (`EphemeralContainerCommon` inline) adds
/// `targetContainerName`.
macro_rules! container_fields {
    ($($extra:expr),*) => {
        &[
            $($extra,)*
            ("image", Omit),
            ("command", Omit),
            ("args", Omit),
            ("workingDir", Omit),
            ("ports", List(&CONTAINER_PORT)),
            ("envFrom", List(&ENV_FROM_SOURCE)),
            ("env", List(&ENV_VAR)),
            ("resources", Struct(&RESOURCE_REQUIREMENTS)),
            ("resizePolicy", Omit),
            ("restartPolicyRules", Omit),
            ("volumeMounts", List(&VOLUME_MOUNT)),
            ("volumeDevices", Omit),
            ("livenessProbe", Ptr(&PROBE)),
            ("readinessProbe", Ptr(&PROBE)),
            ("startupProbe", Ptr(&PROBE)),
            ("lifecycle", Ptr(&LIFECYCLE)),
            ("terminationMessagePath", Omit),
            ("terminationMessagePolicy", Omit),
            ("imagePullPolicy", Omit),
            ("securityContext", Ptr(&SECURITY_CONTEXT)),
            ("stdin", Omit),
            ("stdinOnce", Omit),
            ("tty", Omit),
        ]
    };
}

static CONTAINER: GoType = GoType { fields: container_fields!() };
static EPHEMERAL_CONTAINER: GoType =
    GoType { fields: container_fields!(("targetContainerName", Omit)) };

static CONTAINER_PORT: GoType =
    GoType { fields: &[("name", Omit), ("hostPort", Omit), ("protocol", Omit), ("hostIP", Omit)] };
static ENV_VAR: GoType = GoType { fields: &[("value", Omit), ("valueFrom", Ptr(&ENV_VAR_SOURCE))] };
static ENV_VAR_SOURCE: GoType = GoType {
    fields: &[
        ("fieldRef", Ptr(&OBJECT_FIELD_SELECTOR)),
        ("resourceFieldRef", Ptr(&RESOURCE_FIELD_SELECTOR)),
        ("configMapKeyRef", Ptr(&NAME_ONLY)),
        ("secretKeyRef", Ptr(&NAME_ONLY)),
    ],
};
static OBJECT_FIELD_SELECTOR: GoType = GoType { fields: &[("apiVersion", Omit)] };
static RESOURCE_FIELD_SELECTOR: GoType =
    GoType { fields: &[("containerName", Omit), ("divisor", Quantity)] };
/// `LocalObjectReference` and the key selectors / env sources that embed it.
static NAME_ONLY: GoType = GoType { fields: &[("name", Omit)] };
static LOCAL_OBJECT_REFERENCE: GoType = GoType { fields: &[("name", Omit)] };
static ENV_FROM_SOURCE: GoType = GoType {
    fields: &[("prefix", Omit), ("configMapRef", Ptr(&NAME_ONLY)), ("secretRef", Ptr(&NAME_ONLY))],
};
static RESOURCE_REQUIREMENTS: GoType = GoType {
    fields: &[
        ("limits", ResourceList),
        ("requests", ResourceList),
        ("claims", List(&RESOURCE_CLAIM)),
    ],
};
static RESOURCE_CLAIM: GoType = GoType { fields: &[("request", Omit)] };
static VOLUME_MOUNT: GoType =
    GoType { fields: &[("readOnly", Omit), ("subPath", Omit), ("subPathExpr", Omit)] };
static PROBE: GoType = GoType {
    fields: &[
        ("exec", Ptr(&EXEC_ACTION)),
        ("httpGet", Ptr(&HTTP_GET_ACTION)),
        ("tcpSocket", Ptr(&TCP_SOCKET_ACTION)),
        ("grpc", Ptr(&GRPC_ACTION)),
        ("initialDelaySeconds", Omit),
        ("timeoutSeconds", Omit),
        ("periodSeconds", Omit),
        ("successThreshold", Omit),
        ("failureThreshold", Omit),
    ],
};
static EXEC_ACTION: GoType = GoType { fields: &[("command", Omit)] };
static HTTP_GET_ACTION: GoType =
    GoType { fields: &[("path", Omit), ("host", Omit), ("scheme", Omit), ("httpHeaders", Omit)] };
static TCP_SOCKET_ACTION: GoType = GoType { fields: &[("host", Omit)] };
static GRPC_ACTION: GoType = GoType { fields: &[("service", NullWhenAbsent)] };
static LIFECYCLE: GoType = GoType {
    fields: &[("postStart", Ptr(&LIFECYCLE_HANDLER)), ("preStop", Ptr(&LIFECYCLE_HANDLER))],
};
static LIFECYCLE_HANDLER: GoType = GoType {
    fields: &[
        ("exec", Ptr(&EXEC_ACTION)),
        ("httpGet", Ptr(&HTTP_GET_ACTION)),
        ("tcpSocket", Ptr(&TCP_SOCKET_ACTION)),
    ],
};
static SECURITY_CONTEXT: GoType = GoType {
    fields: &[("capabilities", Ptr(&CAPABILITIES)), ("seLinuxOptions", Ptr(&SE_LINUX_OPTIONS))],
};
static CAPABILITIES: GoType = GoType { fields: &[("add", Omit), ("drop", Omit)] };
static SE_LINUX_OPTIONS: GoType =
    GoType { fields: &[("user", Omit), ("role", Omit), ("type", Omit), ("level", Omit)] };
static POD_SECURITY_CONTEXT: GoType = GoType {
    fields: &[
        ("seLinuxOptions", Ptr(&SE_LINUX_OPTIONS)),
        ("supplementalGroups", Omit),
        ("sysctls", Omit),
    ],
};
static AFFINITY: GoType = GoType {
    fields: &[
        ("nodeAffinity", Ptr(&NODE_AFFINITY)),
        ("podAffinity", Ptr(&POD_AFFINITY)),
        ("podAntiAffinity", Ptr(&POD_AFFINITY)),
    ],
};
static NODE_AFFINITY: GoType = GoType {
    fields: &[
        ("requiredDuringSchedulingIgnoredDuringExecution", Ptr(&NODE_SELECTOR)),
        ("preferredDuringSchedulingIgnoredDuringExecution", List(&PREFERRED_SCHEDULING_TERM)),
    ],
};
static NODE_SELECTOR: GoType =
    GoType { fields: &[("nodeSelectorTerms", ListNoOmit(&NODE_SELECTOR_TERM))] };
static NODE_SELECTOR_TERM: GoType = GoType {
    fields: &[("matchExpressions", List(&REQUIREMENT)), ("matchFields", List(&REQUIREMENT))],
};
/// `NodeSelectorRequirement` and `LabelSelectorRequirement`.
static REQUIREMENT: GoType = GoType { fields: &[("values", Omit)] };
static PREFERRED_SCHEDULING_TERM: GoType =
    GoType { fields: &[("preference", Struct(&NODE_SELECTOR_TERM))] };
static POD_AFFINITY: GoType = GoType {
    fields: &[
        ("requiredDuringSchedulingIgnoredDuringExecution", List(&POD_AFFINITY_TERM)),
        ("preferredDuringSchedulingIgnoredDuringExecution", List(&WEIGHTED_POD_AFFINITY_TERM)),
    ],
};
static WEIGHTED_POD_AFFINITY_TERM: GoType =
    GoType { fields: &[("podAffinityTerm", Struct(&POD_AFFINITY_TERM))] };
static POD_AFFINITY_TERM: GoType = GoType {
    fields: &[
        ("labelSelector", Ptr(&LABEL_SELECTOR)),
        ("namespaces", Omit),
        ("namespaceSelector", Ptr(&LABEL_SELECTOR)),
        ("matchLabelKeys", Omit),
        ("mismatchLabelKeys", Omit),
    ],
};
static LABEL_SELECTOR: GoType =
    GoType { fields: &[("matchLabels", Omit), ("matchExpressions", List(&REQUIREMENT))] };
static TOLERATION: GoType =
    GoType { fields: &[("key", Omit), ("operator", Omit), ("value", Omit), ("effect", Omit)] };
static HOST_ALIAS: GoType = GoType { fields: &[("hostnames", Omit)] };
static POD_DNS_CONFIG: GoType =
    GoType { fields: &[("nameservers", Omit), ("searches", Omit), ("options", List(&DNS_OPTION))] };
static DNS_OPTION: GoType = GoType { fields: &[("name", Omit)] };
static TOPOLOGY_SPREAD_CONSTRAINT: GoType =
    GoType { fields: &[("labelSelector", Ptr(&LABEL_SELECTOR)), ("matchLabelKeys", Omit)] };
static VOLUME: GoType = GoType {
    fields: &[
        ("emptyDir", Ptr(&EMPTY_DIR)),
        ("secret", Ptr(&SECRET_VOLUME_SOURCE)),
        ("persistentVolumeClaim", Ptr(&PVC_VOLUME_SOURCE)),
        ("configMap", Ptr(&CONFIG_MAP_VOLUME_SOURCE)),
        ("downwardAPI", Ptr(&DOWNWARD_API)),
        ("projected", Ptr(&PROJECTED)),
        ("csi", Ptr(&CSI)),
        ("ephemeral", Ptr(&EPHEMERAL)),
        ("image", Ptr(&IMAGE_VOLUME_SOURCE)),
        ("nfs", Ptr(&NFS)),
    ],
};
static EMPTY_DIR: GoType = GoType { fields: &[("medium", Omit), ("sizeLimit", QuantityPtr)] };
static SECRET_VOLUME_SOURCE: GoType = GoType { fields: &[("secretName", Omit), ("items", Omit)] };
static PVC_VOLUME_SOURCE: GoType = GoType { fields: &[("readOnly", Omit)] };
static CONFIG_MAP_VOLUME_SOURCE: GoType = GoType { fields: &[("name", Omit), ("items", Omit)] };
static DOWNWARD_API: GoType = GoType { fields: &[("items", List(&DOWNWARD_API_FILE))] };
static DOWNWARD_API_FILE: GoType = GoType {
    fields: &[
        ("fieldRef", Ptr(&OBJECT_FIELD_SELECTOR)),
        ("resourceFieldRef", Ptr(&RESOURCE_FIELD_SELECTOR)),
    ],
};
static PROJECTED: GoType = GoType { fields: &[("sources", ListNoOmit(&VOLUME_PROJECTION))] };
static VOLUME_PROJECTION: GoType = GoType {
    fields: &[
        ("secret", Ptr(&KEY_PROJECTION)),
        ("downwardAPI", Ptr(&DOWNWARD_API)),
        ("configMap", Ptr(&KEY_PROJECTION)),
        ("serviceAccountToken", Ptr(&SA_TOKEN_PROJECTION)),
        ("clusterTrustBundle", Ptr(&CLUSTER_TRUST_BUNDLE)),
    ],
};
static KEY_PROJECTION: GoType = GoType { fields: &[("name", Omit), ("items", Omit)] };
static SA_TOKEN_PROJECTION: GoType = GoType { fields: &[("audience", Omit)] };
static CLUSTER_TRUST_BUNDLE: GoType = GoType { fields: &[("labelSelector", Ptr(&LABEL_SELECTOR))] };
static CSI: GoType = GoType {
    fields: &[("volumeAttributes", Omit), ("nodePublishSecretRef", Ptr(&LOCAL_OBJECT_REFERENCE))],
};
static EPHEMERAL: GoType = GoType { fields: &[("volumeClaimTemplate", Ptr(&PVC_TEMPLATE))] };
static PVC_TEMPLATE: GoType =
    GoType { fields: &[("metadata", Struct(&OBJECT_META)), ("spec", Struct(&PVC_SPEC))] };
static PVC_SPEC: GoType = GoType {
    fields: &[
        ("accessModes", Omit),
        ("selector", Ptr(&LABEL_SELECTOR)),
        ("resources", Struct(&VOLUME_RESOURCE_REQUIREMENTS)),
        ("volumeName", Omit),
    ],
};
static VOLUME_RESOURCE_REQUIREMENTS: GoType =
    GoType { fields: &[("limits", ResourceList), ("requests", ResourceList)] };
static IMAGE_VOLUME_SOURCE: GoType =
    GoType { fields: &[("reference", Omit), ("pullPolicy", Omit)] };
static NFS: GoType = GoType { fields: &[("readOnly", Omit)] };

/// Go's `omitempty` notion of empty.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// The Go zero `metav1.Time` as k8s-openapi would write it.
const GO_ZERO_TIME: &str = "0001-01-01T00:00:00Z";

/// Normalises a JSON pod template (as k8s-openapi serialised it) to Go's field set.
pub(super) fn normalize_pod_template(template: &mut Map<String, Value>, enc: GoEncoding) {
    normalize(template, &POD_TEMPLATE_SPEC, enc);
}

fn normalize(obj: &mut Map<String, Value>, ty: &GoType, enc: GoEncoding) {
    for &(name, kind) in ty.fields {
        match kind {
            Keep => {}
            Omit => {
                if obj.get(name).is_some_and(is_zero) {
                    obj.remove(name);
                }
            }
            Ptr(t) => {
                if let Some(Value::Object(child)) = obj.get_mut(name) {
                    normalize(child, t, enc);
                }
            }
            Struct(t) => {
                let slot = obj.entry(name).or_insert_with(|| Value::Object(Map::new()));
                if slot.is_null() {
                    *slot = Value::Object(Map::new());
                }
                if let Value::Object(child) = slot {
                    normalize(child, t, enc);
                }
            }
            List(t) => match obj.get_mut(name) {
                Some(Value::Array(items)) if !items.is_empty() => normalize_items(items, t, enc),
                Some(v) if is_zero(v) => {
                    obj.remove(name);
                }
                _ => {}
            },
            ListNoOmit(t) => match obj.get_mut(name) {
                Some(Value::Array(items)) => normalize_items(items, t, enc),
                Some(_) => {}
                None => {
                    obj.insert(name.into(), Value::Null);
                }
            },
            NullWhenAbsent => {
                obj.entry(name).or_insert(Value::Null);
            }
            Quantity => {
                let slot = obj.entry(name).or_insert_with(|| Value::String("0".into()));
                canonicalize(slot);
            }
            QuantityPtr => {
                if let Some(slot) = obj.get_mut(name) {
                    canonicalize(slot);
                }
            }
            ResourceList => match obj.get_mut(name) {
                Some(Value::Object(list)) if !list.is_empty() => {
                    list.values_mut().for_each(canonicalize)
                }
                Some(v) if is_zero(v) => {
                    obj.remove(name);
                }
                _ => {}
            },
            CreationTimestamp => creation_timestamp(obj, name, enc),
        }
    }
}

fn normalize_items(items: &mut [Value], ty: &GoType, enc: GoEncoding) {
    for item in items {
        if let Value::Object(child) = item {
            normalize(child, ty, enc);
        }
    }
}

fn creation_timestamp(obj: &mut Map<String, Value>, name: &str, enc: GoEncoding) {
    let zero = match obj.get(name) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s == GO_ZERO_TIME,
        Some(_) => false,
    };
    if !zero {
        return;
    }
    if enc.creation_timestamp_null {
        obj.insert(name.into(), Value::Null);
    } else {
        obj.remove(name);
    }
}

fn canonicalize(slot: &mut Value) {
    if let Value::String(s) = slot
        && let Some(canonical) = canonical_quantity(s)
    {
        *s = canonical;
    }
}
