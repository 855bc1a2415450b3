//! ControllerRevision mechanics (spec 2.1–2.4, 2.7): the template patch a revision stores (as Go
//! would serialize it), the FNV-1 hash and its safe encoding, revision equality, applying a
//! revision to a set, and history truncation.
//!
//! OWNER: core-rev helper. Signatures are the contract with the sync (`reconcile`).
//!
//! Mirrors upstream `pkg/controller/history/controller_history.go` and the revision helpers of
//! `pkg/controller/statefulset/stateful_set_utils.go`. Must not choose the current/update
//! revision (that is `revisions`) nor claim objects (that is `claim`).
//!
//! Representation note: k8s-openapi holds `ControllerRevision.data` as a parsed JSON value, not
//! as the raw bytes Go keeps. The bytes upstream hashes and compares (`Data.Raw`) are recovered
//! with [`revision_bytes`], which re-encodes the value with Go's rules; for every patch a
//! controller wrote (Go-marshalled: sorted keys, no whitespace) that reproduces the stored bytes
//! exactly. `Data.Object` does not exist in k8s-openapi and is treated as nil.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{Pod, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::fnv;
use super::gojson::{self, GoEncoding};
use super::labels::{REVISION_HASH_LABEL, REVISION_LABEL};
use super::types::{Effect, SyncError};

/// Longest set-name prefix of a revision name (`ControllerRevisionName`): 223 bytes, so that
/// `<prefix>-<hash>` stays within 253.
pub const MAX_PREFIX_BYTES: usize = 223;

/// Upstream's default `revisionHistoryLimit` (`SetDefaults_StatefulSet`), used when the field is
/// unset on an object that skipped API defaulting.
pub const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;

/// `ControllerRevisionName`: `<prefix>-<hash>`, the prefix cut to 223 bytes.
#[doc(alias = "ControllerRevisionName")]
pub fn revision_name(prefix: &str, hash: &str) -> String {
    let mut cut = prefix.len().min(MAX_PREFIX_BYTES);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{hash}", &prefix[..cut])
}

/// `metav1.NewControllerRef(set, apps/v1 StatefulSet)`: controller and blockOwnerDeletion true.
#[doc(alias = "NewControllerRef")]
pub fn controller_ref(set: &StatefulSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "StatefulSet".into(),
        name: set.metadata.name.clone().unwrap_or_default(),
        uid: set.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `Data.Raw` of a revision: its data re-encoded with Go's rules (empty when there is none).
pub fn revision_bytes(revision: &ControllerRevision) -> Vec<u8> {
    match &revision.data.0 {
        Value::Null => Vec::new(),
        data => gojson::marshal(data),
    }
}

/// `.revision` (k8s-openapi 1.37 models it as optional; upstream's is a plain `int64`).
pub fn revision_number(revision: &ControllerRevision) -> i64 {
    revision.revision.unwrap_or(0)
}

/// `HashControllerRevision`: FNV-1 of `Data.Raw` plus the decimal probe, safe-encoded.
#[doc(alias = "HashControllerRevision")]
pub fn hash_revision(revision: &ControllerRevision, probe: Option<i32>) -> String {
    fnv::hash_revision(&revision_bytes(revision), probe)
}

/// The bytes of upstream `getPatch(set)`: the set's template as a `$patch: replace` strategic
/// merge patch, encoded as Go would (see [`gojson`]).
#[doc(alias = "getPatch")]
pub fn template_patch_bytes(
    template: &PodTemplateSpec,
    encoding: GoEncoding,
) -> Result<Vec<u8>, SyncError> {
    let value = gojson::template_patch(template, encoding).map_err(encode_error)?;
    Ok(gojson::marshal(&value))
}

fn encode_error(e: gojson::EncodeError) -> SyncError {
    SyncError { message: e.to_string(), retry: true }
}

/// A revision built by upstream `newRevision` (+ `history.NewControllerRevision`), together
/// with its `Data.Raw` bytes so callers compare and hash without re-encoding.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRevision {
    pub revision: ControllerRevision,
    pub raw: Vec<u8>,
}

/// Spec 2.2 `newRevision`: data = the template patch; labels = the template labels plus
/// `controller.kubernetes.io/hash`; annotations = the set's annotations; one controller ref to
/// the set; name `<set>-<hash(raw, collision_count)>`; namespace = the set's.
#[doc(alias = "newRevision")]
#[doc(alias = "NewControllerRevision")]
pub fn new_revision(
    set: &StatefulSet,
    revision: i64,
    collision_count: i32,
    encoding: GoEncoding,
) -> Result<NewRevision, SyncError> {
    let template = &set.spec.template;
    let data = gojson::template_patch(template, encoding).map_err(encode_error)?;
    let raw = gojson::marshal(&data);
    let hash = fnv::hash_revision(&raw, Some(collision_count));
    let mut labels: BTreeMap<String, String> =
        template.metadata.as_ref().and_then(|m| m.labels.clone()).unwrap_or_default();
    labels.insert(REVISION_HASH_LABEL.into(), hash.clone());
    let annotations = set.metadata.annotations.clone().filter(|a| !a.is_empty());
    let set_name = set.metadata.name.as_deref().unwrap_or_default();
    let revision = ControllerRevision {
        metadata: ObjectMeta {
            name: Some(revision_name(set_name, &hash)),
            namespace: set.metadata.namespace.clone(),
            labels: Some(labels),
            annotations,
            owner_references: Some(vec![controller_ref(set)]),
            ..ObjectMeta::default()
        },
        data: RawExtension(data),
        revision: Some(revision),
    };
    Ok(NewRevision { revision, raw })
}

/// The hash label parsed as upstream does (`strconv.ParseInt(hs, 10, 32)`), if it parses.
fn numeric_hash(revision: &ControllerRevision) -> Option<u32> {
    let label = revision.metadata.labels.as_ref()?.get(REVISION_HASH_LABEL)?;
    label.parse::<i32>().ok().map(|h| h as u32)
}

/// `EqualRevision` with the `Data.Raw` bytes already computed: unequal numeric hash labels make
/// revisions unequal; otherwise the bytes decide.
pub fn equal_revision_bytes(
    lhs: &ControllerRevision,
    lhs_raw: &[u8],
    rhs: &ControllerRevision,
    rhs_raw: &[u8],
) -> bool {
    if let (Some(l), Some(r)) = (numeric_hash(lhs), numeric_hash(rhs))
        && l != r
    {
        return false;
    }
    lhs_raw == rhs_raw
}

/// Spec 2.4 `EqualRevision`: both absent, or (numeric hash labels, when both parse, are equal
/// and) `Data.Raw` is byte-for-byte equal.
#[doc(alias = "EqualRevision")]
pub fn equal_revision(lhs: Option<&ControllerRevision>, rhs: Option<&ControllerRevision>) -> bool {
    match (lhs, rhs) {
        (None, None) => true,
        (Some(l), Some(r)) => equal_revision_bytes(l, &revision_bytes(l), r, &revision_bytes(r)),
        _ => false,
    }
}

/// `FindEqualRevisions`: the revisions equal to `needle`, in the given order.
#[doc(alias = "FindEqualRevisions")]
pub fn find_equal_revisions<'a>(
    revisions: &[&'a ControllerRevision],
    needle: &ControllerRevision,
) -> Vec<&'a ControllerRevision> {
    let needle_raw = revision_bytes(needle);
    revisions
        .iter()
        .copied()
        .filter(|r| equal_revision_bytes(r, &revision_bytes(r), needle, &needle_raw))
        .collect()
}

/// `byRevision.Less`: ascending `.revision`, ties by creationTimestamp (unset first, as Go's
/// zero time), then by name.
pub fn revision_order(a: &ControllerRevision, b: &ControllerRevision) -> Ordering {
    revision_number(a)
        .cmp(&revision_number(b))
        .then_with(|| {
            let ta = a.metadata.creation_timestamp.as_ref().map(|t| t.0);
            let tb = b.metadata.creation_timestamp.as_ref().map(|t| t.0);
            ta.cmp(&tb)
        })
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// `SortControllerRevisions` (stable).
#[doc(alias = "SortControllerRevisions")]
pub fn sort_revisions(revisions: &mut [&ControllerRevision]) {
    revisions.sort_by(|a, b| revision_order(a, b));
}

/// `nextRevision`: one more than the last (highest) sorted revision, or 1.
#[doc(alias = "nextRevision")]
pub fn next_revision(sorted: &[&ControllerRevision]) -> i64 {
    sorted.last().map_or(1, |r| revision_number(r).saturating_add(1))
}

/// Spec 2.1 `ApplyRevision`: the set with its `spec.template` replaced by the stored one.
///
/// A patch of the shape the controller writes (`{"spec":{"template":{"$patch":"replace",…}}}`)
/// is applied directly: the stored template is decoded and put in place of the live one, the
/// rest of the set (status, claim templates, strategy…) stays the live set's. Any other patch
/// (e.g. an adopted revision written by something else) goes through a strategic-merge subset:
/// objects merge key by key, `null` deletes, `"$patch":"replace"` replaces an object, lists are
/// replaced whole (upstream would merge some lists by their patch merge key).
#[doc(alias = "ApplyRevision")]
pub fn apply_revision(
    set: &StatefulSet,
    revision: &ControllerRevision,
) -> Result<StatefulSet, SyncError> {
    let name = revision.metadata.name.as_deref().unwrap_or_default();
    let fail = |what: String| SyncError {
        message: format!("cannot apply ControllerRevision {name} to the StatefulSet: {what}"),
        retry: true,
    };
    let data = &revision.data.0;
    if data.is_null() {
        return Ok(set.clone());
    }
    if let Some(template) = replace_template(data) {
        // Unknown members (the `$patch` directive among them) are ignored by the decoder.
        let template = PodTemplateSpec::deserialize(template)
            .map_err(|e| fail(format!("the stored pod template does not decode: {e}")))?;
        return Ok(with_template(set, template));
    }
    let mut doc = serde_json::to_value(set).map_err(|e| fail(e.to_string()))?;
    merge_patch(&mut doc, data);
    serde_json::from_value(doc).map_err(|e| fail(format!("the patched set does not decode: {e}")))
}

/// The template of a controller-shaped patch (still carrying its `$patch` directive).
fn replace_template(data: &Value) -> Option<&Value> {
    let root = data.as_object().filter(|o| o.len() == 1)?;
    let spec = root.get("spec")?.as_object().filter(|o| o.len() == 1)?;
    let template = spec.get("template")?;
    if template.get("$patch").and_then(Value::as_str) != Some("replace") {
        return None;
    }
    Some(template)
}

/// A copy of `set` with `template` in place of its own (which is not cloned).
fn with_template(set: &StatefulSet, template: PodTemplateSpec) -> StatefulSet {
    let s = &set.spec;
    StatefulSet {
        metadata: set.metadata.clone(),
        spec: StatefulSetSpec {
            min_ready_seconds: s.min_ready_seconds,
            ordinals: s.ordinals.clone(),
            persistent_volume_claim_retention_policy: s
                .persistent_volume_claim_retention_policy
                .clone(),
            pod_management_policy: s.pod_management_policy.clone(),
            replicas: s.replicas,
            revision_history_limit: s.revision_history_limit,
            selector: s.selector.clone(),
            service_name: s.service_name.clone(),
            template,
            update_strategy: s.update_strategy.clone(),
            volume_claim_templates: s.volume_claim_templates.clone(),
        },
        status: set.status.clone(),
    }
}

/// The strategic-merge subset described on [`apply_revision`].
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        *target = strip_directives(patch);
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(t) = target else { return };
    for (key, value) in p {
        if key.starts_with('$') {
            continue;
        }
        if value.is_null() {
            t.remove(key);
        } else if let Some(existing) = t.get_mut(key).filter(|_| value.is_object()) {
            merge_patch(existing, value);
        } else {
            t.insert(key.clone(), strip_directives(value));
        }
    }
}

fn strip_directives(value: &Value) -> Value {
    match value {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(strip_directives).collect()),
        other => other.clone(),
    }
}

/// The live revision names of spec 2.7: current, update and every pod's
/// `controller-revision-hash` label (a pod without the label contributes `""`, as upstream).
pub fn live_revisions<'a>(
    current: &'a str,
    update: &'a str,
    pods: impl IntoIterator<Item = &'a Pod>,
) -> HashSet<&'a str> {
    let mut live: HashSet<&str> = HashSet::from([current, update]);
    for pod in pods {
        let label = pod.metadata.labels.as_ref().and_then(|l| l.get(REVISION_LABEL));
        live.insert(label.map_or("", String::as_str));
    }
    live
}

/// Spec 2.7 `truncateHistory`: delete the oldest non-live revisions beyond the limit.
/// `listed` is sorted ascending (as listed at the start of the sync); `live` holds the current
/// and update revision names and every claimed pod's revision label.
///
/// A negative limit is treated as unlimited (spec 2.7). Upstream has no such guard (it would
/// slice past the history and crash) but API validation rejects negative limits, so it never
/// sees one. An unset limit (an object that skipped API defaulting) is upstream's default of
/// 10. Deletions are issued oldest (lowest `.revision`) first.
#[doc(alias = "truncateHistory")]
pub fn truncate_history(
    set: &StatefulSet,
    listed: &[&ControllerRevision],
    live: &HashSet<&str>,
) -> Vec<Effect> {
    let limit = set.spec.revision_history_limit.unwrap_or(DEFAULT_REVISION_HISTORY_LIMIT);
    if limit < 0 {
        return Vec::new();
    }
    let history: Vec<&ControllerRevision> = listed
        .iter()
        .copied()
        .filter(|r| !live.contains(r.metadata.name.as_deref().unwrap_or_default()))
        .collect();
    let excess = history.len().saturating_sub(limit as usize);
    history
        .into_iter()
        .take(excess)
        .map(|r| Effect::DeleteRevision { name: r.metadata.name.clone().unwrap_or_default() })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_prefix_is_cut_at_223_bytes() {
        let long = "a".repeat(300);
        let name = revision_name(&long, "abc");
        assert_eq!(name.len(), 223 + 4);
        assert!(name.ends_with("a-abc"));
        assert_eq!(revision_name("web", "c77f6d978"), "web-c77f6d978");
    }

    #[test]
    fn merge_subset_replaces_and_deletes() {
        let mut doc = serde_json::json!({"a": {"b": 1, "c": 2}, "d": [1, 2]});
        let patch = serde_json::json!({"a": {"c": null, "e": 3}, "d": [3], "f": {"$patch": "replace", "g": 1}});
        merge_patch(&mut doc, &patch);
        assert_eq!(doc, serde_json::json!({"a": {"b": 1, "e": 3}, "d": [3], "f": {"g": 1}}));
    }
}
