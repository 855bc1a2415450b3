//! API defaulting as kube-apiserver applies it to a StatefulSet on create/update and on read
//! from etcd (`legacyscheme.Scheme.Default`): `SetDefaults_StatefulSet` (pkg/apis/apps/v1) and
//! the pod template / claim template defaulters of pkg/apis/core/v1 (spec 3.5, 2.5 c).
//!
//! The simulator's manifest loader calls [`set_defaults_stateful_set`] so its objects look like
//! a real API server's; the revision logic calls it for the semantic comparison (2.5 c).
//!
//! Covered (upstream function → effect):
//! * `SetDefaults_StatefulSet`: podManagementPolicy `OrderedReady`; updateStrategy type
//!   `RollingUpdate` **and** rollingUpdate `{}` when the type is empty; for RollingUpdate with a
//!   rollingUpdate block: partition 0, and maxUnavailable 1 when the MaxUnavailableStatefulSet
//!   gate is on; PVC retention `Retain`/`Retain`; replicas 1; revisionHistoryLimit 10.
//! * `SetDefaults_PodSpec`: dnsPolicy `ClusterFirst`, restartPolicy `Always`,
//!   securityContext `{}`, terminationGracePeriodSeconds 30, schedulerName `default-scheduler`.
//!   (Host-port defaulting for hostNetwork moved to `SetDefaults_Pod`: not applied to templates.)
//! * `SetDefaults_Container` (init, regular and ephemeral containers): imagePullPolicy `Always`
//!   for a `:latest` or untagged, undigested image, else `IfNotPresent` (also when the image
//!   does not parse); terminationMessagePath `/dev/termination-log`; terminationMessagePolicy
//!   `File`. `SetDefaults_ContainerPort`: protocol `TCP`. `SetDefaults_ObjectFieldSelector`:
//!   apiVersion `v1` (env and downward API). `SetDefaults_ResourceList`: quantities rounded up
//!   to milli-units (container resources, overhead, pod resources, claim templates).
//! * `SetDefaults_Probe` (liveness/readiness/startup): timeoutSeconds 1, periodSeconds 10,
//!   successThreshold 1, failureThreshold 3; `SetDefaults_HTTPGetAction` (probes and lifecycle
//!   hooks): path `/`, scheme `HTTP`; gRPC probe `service` `""` (`+default=""` marker).
//! * Volumes: `SetDefaults_Volume` (no source → `emptyDir: {}`; image volume pullPolicy as for
//!   containers), hostPath type `""`, secret/configMap/downwardAPI/projected defaultMode 420,
//!   serviceAccountToken expirationSeconds 3600, iSCSI interface `default`, RBD pool/user/keyring,
//!   ScaleIO storageMode/fsType, AzureDisk cachingMode/kind/fsType/readOnly, ephemeral claim
//!   template volumeMode `Filesystem`.
//! * `volumeClaimTemplates`: `SetDefaults_PersistentVolumeClaim` (status.phase `Pending`) and
//!   `SetDefaults_PersistentVolumeClaimSpec` (volumeMode `Filesystem`).
//! * [`set_defaults_pod`] adds the Pod-only defaults (`SetDefaults_Pod`): requests default to
//!   limits, enableServiceLinks true, host ports for hostNetwork pods.
//!
//! Not covered: feature-gated pod defaults (in-place resize policies, pod-level resource
//! requests), Service/Secret/ConfigMap defaults (not part of a StatefulSet).
//!
//! Must not touch anything but the object passed in.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy,
    StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{
    HTTPGetAction, Lifecycle, PersistentVolumeClaim, PersistentVolumeClaimSpec,
    PersistentVolumeClaimStatus, Pod, PodSecurityContext, PodSpec, PodTemplateSpec, Probe, Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::gojson::round_up_milli;
use super::options::Semantics;

/// `SetDefaults_Container` and the nested defaulters (ports, env field refs, resource lists,
/// probes, lifecycle hooks). A macro because `Container` and `EphemeralContainer` are distinct
/// k8s-openapi types with the same fields.
macro_rules! default_container {
    ($c:expr) => {{
        let c = $c;
        if c.image_pull_policy.as_deref().unwrap_or_default().is_empty() {
            c.image_pull_policy =
                Some(default_pull_policy(c.image.as_deref().unwrap_or_default()).into());
        }
        default_str(&mut c.termination_message_path, "/dev/termination-log");
        default_str(&mut c.termination_message_policy, "File");
        for port in c.ports.iter_mut().flatten() {
            default_str(&mut port.protocol, "TCP");
        }
        for env in c.env.iter_mut().flatten() {
            if let Some(field) = env.value_from.as_mut().and_then(|v| v.field_ref.as_mut()) {
                default_str(&mut field.api_version, "v1");
            }
        }
        if let Some(resources) = c.resources.as_mut() {
            round_resource_list(&mut resources.limits);
            round_resource_list(&mut resources.requests);
        }
        for probe in [&mut c.liveness_probe, &mut c.readiness_probe, &mut c.startup_probe] {
            if let Some(probe) = probe.as_mut() {
                set_defaults_probe(probe);
            }
        }
        if let Some(lifecycle) = c.lifecycle.as_mut() {
            set_defaults_lifecycle(lifecycle);
        }
    }};
}

/// `SetDefaults_StatefulSet` plus the nested pod template and claim template defaulters, as
/// `Scheme.Default(set)` runs them. `semantics.max_unavailable_gate` decides whether
/// `maxUnavailable` is defaulted to 1.
#[doc(alias = "SetDefaults_StatefulSet")]
pub fn set_defaults_stateful_set(set: &mut StatefulSet, semantics: &Semantics) {
    let spec = &mut set.spec;
    if spec.pod_management_policy.as_deref().unwrap_or_default().is_empty() {
        spec.pod_management_policy = Some("OrderedReady".into());
    }
    let strategy = spec.update_strategy.get_or_insert_with(StatefulSetUpdateStrategy::default);
    if strategy.type_.as_deref().unwrap_or_default().is_empty() {
        strategy.type_ = Some("RollingUpdate".into());
        strategy.rolling_update.get_or_insert_with(RollingUpdateStatefulSetStrategy::default);
    }
    if strategy.type_.as_deref() == Some("RollingUpdate")
        && let Some(rolling) = strategy.rolling_update.as_mut()
    {
        rolling.partition.get_or_insert(0);
        if semantics.max_unavailable_gate {
            rolling.max_unavailable.get_or_insert(IntOrString::Int(1));
        }
    }
    let retention = spec
        .persistent_volume_claim_retention_policy
        .get_or_insert_with(StatefulSetPersistentVolumeClaimRetentionPolicy::default);
    for policy in [&mut retention.when_deleted, &mut retention.when_scaled] {
        if policy.as_deref().unwrap_or_default().is_empty() {
            *policy = Some("Retain".into());
        }
    }
    spec.replicas.get_or_insert(1);
    spec.revision_history_limit.get_or_insert(10);
    set_defaults_pod_template_spec(&mut spec.template);
    for claim in spec.volume_claim_templates.iter_mut().flatten() {
        set_defaults_persistent_volume_claim(claim);
    }
}

/// The defaulters that apply to a `PodTemplateSpec` (its `PodSpec` and everything inside).
pub fn set_defaults_pod_template_spec(template: &mut PodTemplateSpec) {
    set_defaults_pod_spec(template.spec.get_or_insert_with(PodSpec::default));
}

/// `SetDefaults_PodSpec` and the defaulters of its volumes, containers and resource lists.
#[doc(alias = "SetDefaults_PodSpec")]
pub fn set_defaults_pod_spec(spec: &mut PodSpec) {
    default_str(&mut spec.dns_policy, "ClusterFirst");
    default_str(&mut spec.restart_policy, "Always");
    spec.security_context.get_or_insert_with(PodSecurityContext::default);
    spec.termination_grace_period_seconds.get_or_insert(30);
    default_str(&mut spec.scheduler_name, "default-scheduler");
    for volume in spec.volumes.iter_mut().flatten() {
        set_defaults_volume(volume);
    }
    for c in spec.init_containers.iter_mut().flatten() {
        default_container!(c);
    }
    for c in &mut spec.containers {
        default_container!(c);
    }
    for c in spec.ephemeral_containers.iter_mut().flatten() {
        default_container!(c);
    }
    round_resource_list(&mut spec.overhead);
    if let Some(resources) = spec.resources.as_mut() {
        round_resource_list(&mut resources.limits);
        round_resource_list(&mut resources.requests);
    }
}

/// `SetDefaults_Probe` with its handler defaults.
#[doc(alias = "SetDefaults_Probe")]
pub fn set_defaults_probe(probe: &mut Probe) {
    default_int(&mut probe.timeout_seconds, 1);
    default_int(&mut probe.period_seconds, 10);
    default_int(&mut probe.success_threshold, 1);
    default_int(&mut probe.failure_threshold, 3);
    if let Some(http) = probe.http_get.as_mut() {
        set_defaults_http_get(http);
    }
    if let Some(grpc) = probe.grpc.as_mut() {
        grpc.service.get_or_insert_with(String::new);
    }
}

fn set_defaults_lifecycle(lifecycle: &mut Lifecycle) {
    for handler in [&mut lifecycle.post_start, &mut lifecycle.pre_stop].into_iter().flatten() {
        if let Some(http) = handler.http_get.as_mut() {
            set_defaults_http_get(http);
        }
    }
}

/// `SetDefaults_HTTPGetAction`: path `/`, scheme `HTTP`.
#[doc(alias = "SetDefaults_HTTPGetAction")]
pub fn set_defaults_http_get(action: &mut HTTPGetAction) {
    default_str(&mut action.path, "/");
    default_str(&mut action.scheme, "HTTP");
}

/// `SetDefaults_Volume` and the per-source defaulters.
#[doc(alias = "SetDefaults_Volume")]
pub fn set_defaults_volume(volume: &mut Volume) {
    if *volume == (Volume { name: volume.name.clone(), ..Volume::default() }) {
        volume.empty_dir = Some(Default::default());
    }
    if let Some(image) = volume.image.as_mut()
        && image.pull_policy.as_deref().unwrap_or_default().is_empty()
    {
        let policy = default_pull_policy(image.reference.as_deref().unwrap_or_default());
        image.pull_policy = Some(policy.into());
    }
    if let Some(host_path) = volume.host_path.as_mut() {
        host_path.type_.get_or_insert_with(String::new);
    }
    if let Some(secret) = volume.secret.as_mut() {
        secret.default_mode.get_or_insert(0o644);
    }
    if let Some(config_map) = volume.config_map.as_mut() {
        config_map.default_mode.get_or_insert(0o644);
    }
    if let Some(downward) = volume.downward_api.as_mut() {
        downward.default_mode.get_or_insert(0o644);
        for item in downward.items.iter_mut().flatten() {
            if let Some(field) = item.field_ref.as_mut() {
                default_str(&mut field.api_version, "v1");
            }
        }
    }
    if let Some(projected) = volume.projected.as_mut() {
        projected.default_mode.get_or_insert(0o644);
        for source in projected.sources.iter_mut().flatten() {
            for item in source.downward_api.iter_mut().flat_map(|d| d.items.iter_mut().flatten()) {
                if let Some(field) = item.field_ref.as_mut() {
                    default_str(&mut field.api_version, "v1");
                }
            }
            if let Some(token) = source.service_account_token.as_mut() {
                token.expiration_seconds.get_or_insert(3600);
            }
        }
    }
    set_defaults_legacy_volume_sources(volume);
    if let Some(spec) = volume
        .ephemeral
        .as_mut()
        .and_then(|e| e.volume_claim_template.as_mut())
        .map(|t| &mut t.spec)
    {
        set_defaults_persistent_volume_claim_spec(spec);
    }
}

fn set_defaults_legacy_volume_sources(volume: &mut Volume) {
    if let Some(iscsi) = volume.iscsi.as_mut() {
        default_str(&mut iscsi.iscsi_interface, "default");
    }
    if let Some(rbd) = volume.rbd.as_mut() {
        default_str(&mut rbd.pool, "rbd");
        default_str(&mut rbd.user, "admin");
        default_str(&mut rbd.keyring, "/etc/ceph/keyring");
    }
    if let Some(scale_io) = volume.scale_io.as_mut() {
        default_str(&mut scale_io.storage_mode, "ThinProvisioned");
        default_str(&mut scale_io.fs_type, "xfs");
    }
    if let Some(azure) = volume.azure_disk.as_mut() {
        azure.caching_mode.get_or_insert_with(|| "ReadWrite".into());
        azure.kind.get_or_insert_with(|| "Shared".into());
        azure.fs_type.get_or_insert_with(|| "ext4".into());
        azure.read_only.get_or_insert(false);
    }
}

/// `SetDefaults_PersistentVolumeClaim` (status phase `Pending`) and its spec defaults.
#[doc(alias = "SetDefaults_PersistentVolumeClaim")]
pub fn set_defaults_persistent_volume_claim(claim: &mut PersistentVolumeClaim) {
    let status = claim.status.get_or_insert_with(PersistentVolumeClaimStatus::default);
    default_str(&mut status.phase, "Pending");
    set_defaults_persistent_volume_claim_spec(claim.spec.get_or_insert_with(Default::default));
}

/// `SetDefaults_PersistentVolumeClaimSpec`: volumeMode `Filesystem`; resource lists rounded.
#[doc(alias = "SetDefaults_PersistentVolumeClaimSpec")]
pub fn set_defaults_persistent_volume_claim_spec(spec: &mut PersistentVolumeClaimSpec) {
    spec.volume_mode.get_or_insert_with(|| "Filesystem".into());
    if let Some(resources) = spec.resources.as_mut() {
        round_resource_list(&mut resources.limits);
        round_resource_list(&mut resources.requests);
    }
}

/// `SetDefaults_Pod` plus [`set_defaults_pod_spec`]: what the API server adds to a created pod
/// beyond its template's defaults. Requests default to limits (containers and init containers),
/// `enableServiceLinks` to true, and with hostNetwork every container port's hostPort to its
/// containerPort.
#[doc(alias = "SetDefaults_Pod")]
pub fn set_defaults_pod(pod: &mut Pod) {
    let spec = pod.spec.get_or_insert_with(PodSpec::default);
    set_defaults_pod_spec(spec);
    let host_network = spec.host_network == Some(true);
    let containers = spec.containers.iter_mut().chain(spec.init_containers.iter_mut().flatten());
    for c in containers {
        if let Some(resources) = c.resources.as_mut()
            && let Some(limits) = resources.limits.as_ref().filter(|l| !l.is_empty())
        {
            let requests = resources.requests.get_or_insert_with(BTreeMap::new);
            for (k, v) in limits {
                requests.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        if host_network {
            for port in c.ports.iter_mut().flatten() {
                if port.host_port.unwrap_or(0) == 0 {
                    port.host_port = Some(port.container_port);
                }
            }
        }
    }
    spec.enable_service_links.get_or_insert(true);
}

/// `imagePullPolicy` for an image without one: `Always` when the reference's tag is `latest`
/// (an untagged reference without a digest counts as `latest`), else `IfNotPresent`; an image
/// that does not parse as a reference gets `IfNotPresent` (upstream ignores the parse error).
pub fn default_pull_policy(image: &str) -> &'static str {
    if image_tag(image).as_deref() == Some("latest") { "Always" } else { "IfNotPresent" }
}

/// The tag `parsers.ParseImageName` reports: the explicit tag, `latest` when there is neither a
/// tag nor a digest, `""` with only a digest; `None` when the reference does not parse.
pub fn image_tag(image: &str) -> Option<String> {
    let (name_tag, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    if let Some(d) = digest {
        let (alg, hex) = d.split_once(':')?;
        let alg_ok = alg.starts_with(|c: char| c.is_ascii_alphabetic())
            && alg.chars().all(|c| c.is_ascii_alphanumeric() || "-_+.".contains(c));
        if !alg_ok || hex.len() < 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
    }
    let last_slash = name_tag.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match name_tag[last_slash..].rfind(':') {
        Some(i) => (&name_tag[..last_slash + i], Some(&name_tag[last_slash + i + 1..])),
        None => (name_tag, None),
    };
    if !valid_image_name(name) {
        return None;
    }
    match tag {
        Some(t) => {
            let ok = !t.is_empty()
                && t.len() <= 128
                && !t.starts_with(['.', '-'])
                && t.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
            ok.then(|| t.to_string())
        }
        None if digest.is_some() => Some(String::new()),
        None => Some("latest".into()),
    }
}

/// The name part of a reference (docker reference grammar, normalised form): an optional
/// domain (first component with `.` or `:`, or `localhost`, or upper-case letters) and
/// lower-case path components separated by `.`, `_`, `__` or dashes.
fn valid_image_name(name: &str) -> bool {
    if name.is_empty() || name.len() > 255 {
        return false;
    }
    let mut parts: Vec<&str> = name.split('/').collect();
    let first = parts[0];
    let is_domain = parts.len() > 1
        && (first.contains(['.', ':']) || first == "localhost" || first != first.to_lowercase());
    if is_domain {
        let host = first.split(':').next().unwrap_or_default();
        let port_ok = first
            .split_once(':')
            .is_none_or(|(_, p)| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
        let host_ok = !host.is_empty()
            && host.split('.').all(|c| {
                !c.is_empty()
                    && !c.starts_with('-')
                    && !c.ends_with('-')
                    && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-')
            });
        if !host_ok || !port_ok {
            return false;
        }
        parts.remove(0);
    }
    if parts.len() == 1 && parts[0].len() == 64 && parts[0].chars().all(|c| c.is_ascii_hexdigit()) {
        return false;
    }
    parts.iter().all(|p| valid_path_component(p))
}

fn valid_path_component(p: &str) -> bool {
    let bytes = p.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    if bytes.is_empty() || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if alnum(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let sep = &p[start..i];
        let ok = sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|b| b == b'-');
        if !ok {
            return false;
        }
    }
    true
}

fn default_str(field: &mut Option<String>, value: &str) {
    if field.as_deref().unwrap_or_default().is_empty() {
        *field = Some(value.into());
    }
}

/// For Go `int32` fields defaulted when zero (an explicit 0 is defaulted too).
fn default_int(field: &mut Option<i32>, value: i32) {
    if field.unwrap_or(0) == 0 {
        *field = Some(value);
    }
}

/// `SetDefaults_ResourceList`: every quantity rounded up to milli-units.
fn round_resource_list(list: &mut Option<BTreeMap<String, Quantity>>) {
    for q in list.iter_mut().flat_map(|l| l.values_mut()) {
        if let Some(rounded) = round_up_milli(&q.0) {
            q.0 = rounded;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy_follows_the_tag() {
        assert_eq!(default_pull_policy("test"), "Always");
        assert_eq!(default_pull_policy("nginx:latest"), "Always");
        assert_eq!(default_pull_policy("nginx:1.25"), "IfNotPresent");
        assert_eq!(default_pull_policy("localhost:5000/nginx"), "Always");
        assert_eq!(default_pull_policy("registry.io:5000/team/app:v2"), "IfNotPresent");
        let digest = format!("nginx@sha256:{}", "a".repeat(64));
        assert_eq!(default_pull_policy(&digest), "IfNotPresent");
        let both = format!("nginx:latest@sha256:{}", "a".repeat(64));
        assert_eq!(default_pull_policy(&both), "Always");
        assert_eq!(default_pull_policy("NGINX"), "IfNotPresent");
        assert_eq!(default_pull_policy(""), "IfNotPresent");
        assert_eq!(default_pull_policy("nginx:Latest"), "IfNotPresent");
    }
}
