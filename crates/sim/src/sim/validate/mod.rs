//! StatefulSet validation as the API server performs it, with the messages a user would get
//! (upstream `pkg/apis/apps/validation/validation.go`).
//!
//! The API layer (`sim::api`) calls, after defaulting (`core::defaults`):
//! - [`validate_create`]`(&set) -> Result<(), ValidationError>` on create;
//! - [`validate_update`]`(&old, &new) -> Result<(), ValidationError>` on update (spec changes).
//!
//! The error's `Display` is the API server's message, e.g.
//! `StatefulSet.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or
//! equal to 0`; several problems are listed in brackets, comma-separated, as upstream's aggregate
//! error does. Invalid values are rendered as JSON (numbers bare, strings quoted, maps as objects),
//! as current API servers print them.
//!
//! Callers need no checks of their own for these fields: e.g. `scale web -1` through the API
//! layer gets `spec.replicas: Invalid value: -1: must be greater than or equal to 0`, the message
//! `kubectl scale` would show.
//!
//! Owns: the rules and messages. Must not touch: the store, defaulting, the controller.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::Value;

mod names;
pub use names::dns1123_label;
pub(crate) use names::{label_value, qualified_name};

/// The kind of a field error, as upstream's `field.ErrorType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldErrorType {
    Required,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
}

/// One field-level problem (upstream `field.Error`).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    pub kind: FieldErrorType,
    /// The field path, e.g. `spec.updateStrategy.rollingUpdate.partition`.
    pub field: String,
    /// The offending value (for Invalid and NotSupported).
    pub value: Option<Value>,
    pub detail: String,
}

impl FieldError {
    pub(crate) fn invalid(field: &str, value: Value, detail: impl Into<String>) -> Self {
        FieldError {
            kind: FieldErrorType::Invalid,
            field: field.into(),
            value: Some(value),
            detail: detail.into(),
        }
    }

    pub(crate) fn required(field: &str, detail: impl Into<String>) -> Self {
        FieldError {
            kind: FieldErrorType::Required,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }

    pub(crate) fn forbidden(field: &str, detail: impl Into<String>) -> Self {
        FieldError {
            kind: FieldErrorType::Forbidden,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }

    pub(crate) fn too_long(field: &str, limit: usize) -> Self {
        FieldError {
            kind: FieldErrorType::TooLong,
            field: field.into(),
            value: None,
            detail: format!("must have at most {limit} bytes"),
        }
    }

    pub(crate) fn not_supported(field: &str, value: &str, supported: &[&str]) -> Self {
        let quoted: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        FieldError {
            kind: FieldErrorType::NotSupported,
            field: field.into(),
            value: Some(Value::String(value.into())),
            detail: format!("supported values: {}", quoted.join(", ")),
        }
    }
}

impl FieldError {
    /// The error without its field (upstream `ErrorBody`): a Status cause's message.
    pub fn body(&self) -> String {
        let word = match self.kind {
            FieldErrorType::Required => "Required value",
            FieldErrorType::Invalid => "Invalid value",
            FieldErrorType::NotSupported => "Unsupported value",
            FieldErrorType::Forbidden => "Forbidden",
            FieldErrorType::TooLong => "Too long",
        };
        let mut out = word.to_string();
        if let Some(v) = &self.value {
            out.push_str(&format!(": {v}"));
        }
        if !self.detail.is_empty() {
            out.push_str(&format!(": {}", self.detail));
        }
        out
    }

    /// A Status cause's reason (`FieldValueInvalid`, …).
    pub fn reason(&self) -> &'static str {
        match self.kind {
            FieldErrorType::Required => "FieldValueRequired",
            FieldErrorType::Invalid => "FieldValueInvalid",
            FieldErrorType::NotSupported => "FieldValueNotSupported",
            FieldErrorType::Forbidden => "FieldValueForbidden",
            FieldErrorType::TooLong => "FieldValueTooLong",
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// A rejected object: the API server's `Invalid` status error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ValidationError {
    /// The kind as the message names it (`StatefulSet.apps`, `Pod`).
    pub kind: &'static str,
    /// The object's name.
    pub name: String,
    /// Every problem found, in upstream's order, without duplicates.
    pub errors: Vec<FieldError>,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?} is invalid: ", self.kind, self.name)?;
        match self.errors.as_slice() {
            [one] => write!(f, "{one}"),
            many => {
                let parts: Vec<String> = many.iter().map(ToString::to_string).collect();
                write!(f, "[{}]", parts.join(", "))
            }
        }
    }
}

fn finish(name: &str, errors: Vec<FieldError>) -> Result<(), ValidationError> {
    finish_kind("StatefulSet.apps", name, errors)
}

/// The error for `errors` about the object `kind`/`name`, if there are any (duplicates dropped).
pub(crate) fn finish_kind(
    kind: &'static str,
    name: &str,
    errors: Vec<FieldError>,
) -> Result<(), ValidationError> {
    let mut unique: Vec<FieldError> = Vec::with_capacity(errors.len());
    for e in errors {
        if !unique.iter().any(|u| u.to_string() == e.to_string()) {
            unique.push(e);
        }
    }
    if unique.is_empty() {
        Ok(())
    } else {
        Err(ValidationError { kind, name: name.to_string(), errors: unique })
    }
}

/// Validates a StatefulSet on create (upstream `ValidateStatefulSet`). Expects a defaulted set;
/// unset fields count as Go's zero values, as they would after conversion.
#[doc(alias = "ValidateStatefulSet")]
pub fn validate_create(set: &StatefulSet) -> Result<(), ValidationError> {
    validate_create_with(set, SetOpts::default())
}

/// [`validate_create`] under an API server's options (its gates).
pub fn validate_create_with(set: &StatefulSet, opts: SetOpts) -> Result<(), ValidationError> {
    let name = set.metadata.name.clone().unwrap_or_default();
    let mut errs = validate_object_meta(set);
    errs.extend(validate_spec(&spec_of(set), opts));
    finish(&name, errs)
}

/// Validates an update of `old` to `new` (upstream `ValidateStatefulSetUpdate`): the new spec must
/// be valid and only replicas, ordinals, template, updateStrategy,
/// persistentVolumeClaimRetentionPolicy, minReadySeconds and revisionHistoryLimit may change.
#[doc(alias = "ValidateStatefulSetUpdate")]
pub fn validate_update(old: &StatefulSet, new: &StatefulSet) -> Result<(), ValidationError> {
    validate_update_with(old, new, SetOpts::default())
}

/// [`validate_update`] under an API server's options (its gates).
pub fn validate_update_with(
    old: &StatefulSet,
    new: &StatefulSet,
    opts: SetOpts,
) -> Result<(), ValidationError> {
    // A stored Recreate set stays valid with the gate off (upstream's update strategy).
    let stored_recreate = crate::core::spec::strategy(old).recreate;
    let opts = SetOpts { allow_recreate: opts.allow_recreate || stored_recreate };
    let name = new.metadata.name.clone().unwrap_or_default();
    let mut errs = Vec::new();
    for (field, a, b) in [
        ("metadata.name", &old.metadata.name, &new.metadata.name),
        ("metadata.namespace", &old.metadata.namespace, &new.metadata.namespace),
        ("metadata.uid", &old.metadata.uid, &new.metadata.uid),
    ] {
        // An unset uid on the new object means "unchanged" (the API server fills it in).
        if field == "metadata.uid" && b.is_none() {
            continue;
        }
        if a != b {
            let v = b.clone().map_or(Value::Null, Value::String);
            errs.push(FieldError::invalid(field, v, "field is immutable"));
        }
    }
    errs.extend(validate_annotations(new));
    let new_spec = spec_of(new);
    let old_spec = spec_of(old);
    errs.extend(validate_spec(&new_spec, opts));
    let mut clone = new_spec;
    clone.replicas = old_spec.replicas;
    clone.template = old_spec.template.clone();
    clone.update_strategy = old_spec.update_strategy.clone();
    clone.min_ready_seconds = old_spec.min_ready_seconds;
    clone.ordinals = old_spec.ordinals.clone();
    clone.persistent_volume_claim_retention_policy =
        old_spec.persistent_volume_claim_retention_policy.clone();
    clone.revision_history_limit = old_spec.revision_history_limit;
    if clone != old_spec {
        errs.push(FieldError::forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', \
             'template', 'updateStrategy', 'revisionHistoryLimit', \
             'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
    finish(&name, errs)
}

fn spec_of(set: &StatefulSet) -> StatefulSetSpec {
    set.spec.clone()
}

fn validate_object_meta(set: &StatefulSet) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match set.metadata.name.as_deref() {
        None | Some("") => {
            errs.push(FieldError::required("metadata.name", "name or generateName is required"))
        }
        Some(name) => {
            for msg in dns1123_label(name) {
                errs.push(FieldError::invalid("metadata.name", Value::String(name.into()), msg));
            }
        }
    }
    match set.metadata.namespace.as_deref() {
        None | Some("") => errs.push(FieldError::required("metadata.namespace", "")),
        Some(ns) => {
            for msg in dns1123_label(ns) {
                errs.push(FieldError::invalid("metadata.namespace", Value::String(ns.into()), msg));
            }
        }
    }
    errs.extend(validate_annotations(set));
    errs
}

/// The most bytes an object's annotations may hold, keys and values together (upstream
/// `TotalAnnotationSizeLimitB`).
pub const ANNOTATIONS_MAX: usize = 256 * 1024;

/// Upstream `ValidateAnnotations`' size rule: what anyone may write on a set (a record, a
/// forged one) is bounded as on a real API server.
fn validate_annotations(set: &StatefulSet) -> Vec<FieldError> {
    let total: usize =
        set.metadata.annotations.iter().flatten().map(|(k, v)| k.len() + v.len()).sum();
    if total > ANNOTATIONS_MAX {
        return vec![FieldError::too_long("metadata.annotations", ANNOTATIONS_MAX)];
    }
    Vec::new()
}

/// Upstream `ValidateStatefulSetSpec`, in its order.
#[doc(alias = "ValidateStatefulSetSpec")]
/// What the API server's release and gates allow (upstream `StatefulSetValidationOptions`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SetOpts {
    /// `updateStrategy.type: Recreate` is valid: `StatefulSetRecreateStrategy` is on.
    pub allow_recreate: bool,
}

impl SetOpts {
    /// The options of an API server with semantics `sem` (the simulator's API server and its
    /// controller share one release and one set of gates).
    pub fn of(sem: &crate::core::Semantics) -> SetOpts {
        SetOpts { allow_recreate: sem.recreate_known && sem.recreate_gate }
    }
}

fn validate_spec(spec: &StatefulSetSpec, opts: SetOpts) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match spec.pod_management_policy.as_deref().unwrap_or("") {
        "" => errs.push(FieldError::required("spec.podManagementPolicy", "")),
        "OrderedReady" | "Parallel" => {}
        other => errs.push(FieldError::invalid(
            "spec.podManagementPolicy",
            Value::String(other.into()),
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    errs.extend(validate_update_strategy(spec, opts));
    if let Some(policy) = &spec.persistent_volume_claim_retention_policy {
        let base = "spec.persistentVolumeClaimRetentionPolicy";
        for (field, value) in
            [("whenDeleted", &policy.when_deleted), ("whenScaled", &policy.when_scaled)]
        {
            let v = value.as_deref().unwrap_or("");
            if v != "Retain" && v != "Delete" {
                let path = format!("{base}.{field}");
                errs.push(FieldError::not_supported(&path, v, &["Retain", "Delete"]));
            }
        }
    }
    errs.extend(nonnegative("spec.replicas", spec.replicas.unwrap_or(0)));
    errs.extend(nonnegative("spec.minReadySeconds", spec.min_ready_seconds.unwrap_or(0)));
    if let Some(ordinals) = &spec.ordinals {
        errs.extend(nonnegative("spec.ordinals.start", ordinals.start.unwrap_or(0)));
    }
    errs.extend(validate_selector_and_template(spec));
    let pod_spec = spec.template.spec.clone().unwrap_or_default();
    let restart = pod_spec.restart_policy.as_deref().unwrap_or("");
    if restart != "Always" {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            restart,
            &["Always"],
        ));
    }
    if pod_spec.active_deadline_seconds.is_some() {
        errs.push(FieldError::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            "activeDeadlineSeconds in StatefulSet is not Supported",
        ));
    }
    errs
}

fn validate_update_strategy(spec: &StatefulSetSpec, opts: SetOpts) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    let rolling = strategy.rolling_update.as_ref();
    match strategy.type_.as_deref().unwrap_or("") {
        "" => errs.push(FieldError::required("spec.updateStrategy", "")),
        "Recreate" if opts.allow_recreate => {
            if let Some(ru) = rolling {
                errs.push(FieldError::invalid(
                    "spec.updateStrategy.rollingUpdate",
                    serde_json::to_value(ru).unwrap_or(Value::Null),
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "OnDelete" => {
            if let Some(ru) = rolling {
                errs.push(FieldError::invalid(
                    "spec.updateStrategy.rollingUpdate",
                    serde_json::to_value(ru).unwrap_or(Value::Null),
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "RollingUpdate" => {
            if let Some(ru) = rolling {
                let base = "spec.updateStrategy.rollingUpdate";
                errs.extend(nonnegative(&format!("{base}.partition"), ru.partition.unwrap_or(0)));
                if let Some(mu) = &ru.max_unavailable {
                    errs.extend(validate_max_unavailable(&format!("{base}.maxUnavailable"), mu));
                }
            }
        }
        _ => errs.push(FieldError::invalid(
            "spec.updateStrategy",
            serde_json::to_value(&strategy).unwrap_or(Value::Null),
            if opts.allow_recreate {
                "must be 'RollingUpdate', 'OnDelete', or 'Recreate'"
            } else {
                "must be 'RollingUpdate' or 'OnDelete'"
            },
        )),
    }
    errs
}

/// Upstream `validateRollingUpdateStatefulSet` for maxUnavailable: a non-negative integer or a
/// valid percentage, not 0 (nor 0%), not more than 100%.
fn validate_max_unavailable(path: &str, value: &IntOrString) -> Vec<FieldError> {
    let mut errs = positive_int_or_percent(path, value);
    // getIntOrPercentValue: a percentage's number, else the int value (an unparsable string is 0).
    let number = match (percent_value(value), value) {
        (Some(p), _) => p,
        (None, IntOrString::Int(i)) => i64::from(*i),
        (None, IntOrString::String(s)) => s.parse::<i64>().unwrap_or(0),
    };
    if number == 0 {
        let json = serde_json::to_value(value).unwrap_or(Value::Null);
        errs.push(FieldError::invalid(path, json, "cannot be 0"));
    }
    errs.extend(not_over_100_percent(path, value));
    errs
}

/// Upstream `ValidatePositiveIntOrPercent`: a non-negative integer or a valid percentage.
pub(crate) fn positive_int_or_percent(path: &str, value: &IntOrString) -> Vec<FieldError> {
    match value {
        IntOrString::Int(i) => nonnegative(path, *i).into_iter().collect(),
        IntOrString::String(s) if percent_value(value).is_none() => vec![FieldError::invalid(
            path,
            Value::String(s.clone()),
            "a valid percent string must be a numeric string followed by an ending '%' \
             (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        )],
        IntOrString::String(_) => Vec::new(),
    }
}

/// Upstream `IsNotMoreThan100Percent`.
pub(crate) fn not_over_100_percent(path: &str, value: &IntOrString) -> Option<FieldError> {
    let json = serde_json::to_value(value).unwrap_or(Value::Null);
    percent_value(value)
        .filter(|p| *p > 100)
        .map(|_| FieldError::invalid(path, json, "must not be greater than 100%"))
}

fn percent_value(value: &IntOrString) -> Option<i64> {
    let IntOrString::String(s) = value else { return None };
    let digits = s.strip_suffix('%')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Upstream Atoi: a value too large for an int is 0 after the (ignored) error.
    Some(digits.parse::<i64>().unwrap_or(0))
}

fn validate_selector_and_template(spec: &StatefulSetSpec) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let sel = &spec.selector;
    // k8s-openapi cannot tell a missing selector from `{}`: a selector with neither field set
    // counts as missing (upstream's nil), one with empty fields as the empty selector.
    let missing = sel.match_labels.is_none() && sel.match_expressions.is_none();
    let n_requirements = sel.match_labels.as_ref().map_or(0, BTreeMap::len)
        + sel.match_expressions.as_ref().map_or(0, Vec::len);
    let selector_json = serde_json::to_value(sel).unwrap_or(Value::Null);
    if missing {
        errs.push(FieldError::required("spec.selector", ""));
    } else {
        errs.extend(validate_label_selector("spec.selector", sel));
        if n_requirements == 0 {
            errs.push(FieldError::invalid(
                "spec.selector",
                selector_json.clone(),
                "empty selector is invalid for statefulset",
            ));
        }
    }
    let template_labels = spec.template.metadata.as_ref().and_then(|m| m.labels.as_ref());
    let convertible = sel
        .match_expressions
        .iter()
        .flatten()
        .all(|r| matches!(r.operator.as_str(), "In" | "NotIn" | "Exists" | "DoesNotExist"));
    if !convertible {
        errs.push(FieldError::invalid("spec.selector", selector_json, ""));
        return errs;
    }
    // A nil selector selects nothing (upstream `labels.Nothing()`), so it never matches; an empty
    // one selects everything and is not checked.
    let empty = !missing && n_requirements == 0;
    let empty_labels = BTreeMap::new();
    // As upstream: a selector that does not compile is reported above, not as a mismatch.
    let mismatch = || {
        crate::core::selector::Selector::from_label_selector(Some(sel))
            .is_ok_and(|s| !s.matches(Some(template_labels.unwrap_or(&empty_labels))))
    };
    if !empty && (missing || mismatch()) {
        let value =
            template_labels.map_or(Value::Null, |l| serde_json::to_value(l).unwrap_or(Value::Null));
        errs.push(FieldError::invalid(
            "spec.template.metadata.labels",
            value,
            "`selector` does not match template `labels`",
        ));
    }
    if let Some(labels) = template_labels {
        errs.extend(validate_labels("spec.template.labels", labels));
    }
    errs
}

/// A label selector's problems, its fields named under `path` (`spec.selector`).
pub(crate) fn validate_label_selector(path: &str, sel: &LabelSelector) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (i, req) in sel.match_expressions.iter().flatten().enumerate() {
        let base = format!("{path}.matchExpressions[{i}]");
        let n_values = req.values.as_ref().map_or(0, Vec::len);
        match req.operator.as_str() {
            "In" | "NotIn" if n_values == 0 => errs.push(FieldError::required(
                &format!("{base}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if n_values > 0 => errs.push(FieldError::forbidden(
                &format!("{base}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errs.push(FieldError::not_supported(
                &format!("{base}.operator"),
                other,
                &["In", "NotIn", "Exists", "DoesNotExist"],
            )),
        }
        for msg in qualified_name(&req.key) {
            let v = Value::String(req.key.clone());
            errs.push(FieldError::invalid(&format!("{base}.key"), v, msg));
        }
    }
    if let Some(labels) = &sel.match_labels {
        errs.extend(validate_labels(&format!("{path}.matchLabels"), labels));
    }
    errs
}

pub(crate) fn validate_labels(path: &str, labels: &BTreeMap<String, String>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (k, v) in labels {
        for msg in qualified_name(k) {
            errs.push(FieldError::invalid(path, Value::String(k.clone()), msg));
        }
        for msg in label_value(v) {
            errs.push(FieldError::invalid(path, Value::String(v.clone()), msg));
        }
    }
    errs
}

fn nonnegative(path: &str, v: i32) -> Option<FieldError> {
    (v < 0).then(|| FieldError::invalid(path, Value::from(v), "must be greater than or equal to 0"))
}
