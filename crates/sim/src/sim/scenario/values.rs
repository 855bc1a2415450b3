//! The values of scenario arguments: names, numbers, booleans, enums, percentages, lists. Each
//! returns a [`BadValue`] saying what the value is not and what is expected.

use crate::core::spec::UpdateType;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{BadValue, DEFAULT_NAMESPACE, Name, Retention};

/// `NAME` or `NAMESPACE/NAME`.
pub(super) fn parse_name(w: &str) -> Result<Name, BadValue> {
    let (ns, name) = match w.split_once('/') {
        Some((ns, name)) => (ns, name),
        None => (DEFAULT_NAMESPACE, w),
    };
    if ns.is_empty() || name.is_empty() || name.contains('/') {
        return Err(BadValue::new(w, "is not a name", "NAME or NAMESPACE/NAME"));
    }
    Ok(Name { namespace: ns.to_string(), name: name.to_string() })
}

pub(super) fn int(v: &str) -> Result<i32, BadValue> {
    v.parse::<i32>().map_err(|_| BadValue::new(v, "is not a whole number", "e.g. 3"))
}

pub(super) fn count(v: &str) -> Result<i32, BadValue> {
    match v.parse::<i32>() {
        Ok(n) if n >= 0 => Ok(n),
        _ => Err(BadValue::new(v, "is not a count", "a whole number ≥ 0")),
    }
}

pub(super) fn positive(v: &str) -> Result<i64, BadValue> {
    match v.parse::<i64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(BadValue::new(v, "is not valid", "a whole number ≥ 1")),
    }
}

pub(super) fn boolean(v: &str) -> Result<bool, BadValue> {
    match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(BadValue::new(v, "is not a boolean", "true or false")),
    }
}

pub(super) fn strategy(v: &str) -> Result<UpdateType, BadValue> {
    UpdateType::parse(v)
        .ok_or_else(|| BadValue::new(v, "is not a strategy", "RollingUpdate, OnDelete or Recreate"))
}

pub(super) fn retention(v: &str) -> Result<Retention, BadValue> {
    match v {
        "Retain" => Ok(Retention::Retain),
        "Delete" => Ok(Retention::Delete),
        _ => Err(BadValue::new(v, "is not a retention policy", "Retain or Delete")),
    }
}

/// `N` or `P%` (the API server checks the range).
pub(super) fn int_or_percent(v: &str) -> Result<IntOrString, BadValue> {
    if let Some(p) = v.strip_suffix('%') {
        if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(IntOrString::String(v.to_string()));
        }
    } else if let Ok(n) = v.parse::<i32>() {
        return Ok(IntOrString::Int(n));
    }
    Err(BadValue::new(v, "is not a number or a percentage", "e.g. 2 or 25%"))
}

/// `a,b,c`; empty for none.
pub(super) fn list(v: &str) -> Result<Vec<String>, BadValue> {
    if v.is_empty() {
        return Ok(Vec::new());
    }
    let items: Vec<String> = v.split(',').map(str::to_string).collect();
    if items.iter().any(String::is_empty) {
        return Err(BadValue::new(v, "has an empty item", "names separated by commas"));
    }
    Ok(items)
}

/// `k=v[,k=v…]`: labels, each a key, `=`, a value, no key twice, keys and values as the API
/// server validates them (the scenario's `create` builds the set itself).
pub(super) fn labels(v: &str) -> Result<std::collections::BTreeMap<String, String>, BadValue> {
    let expected = "labels as key=value separated by commas, e.g. rollout-group=ingester";
    let mut out = std::collections::BTreeMap::new();
    for item in v.split(',') {
        let Some((k, val)) = item.split_once('=') else {
            return Err(BadValue::new(v, "has an item without '='", expected));
        };
        if k.is_empty() {
            return Err(BadValue::new(v, "has an empty key", expected));
        }
        let valid = crate::sim::validate::qualified_name(k).is_empty()
            && crate::sim::validate::label_value(val).is_empty();
        if !valid {
            let expected = "label keys and values as the API takes them: letters, digits, '-', \
                            '_' and '.', at most 63, a key with an optional DNS prefix/";
            return Err(BadValue::new(v, "has a key or value the API refuses", expected));
        }
        if out.insert(k.to_string(), val.to_string()).is_some() {
            return Err(BadValue::new(v, "names a key twice", expected));
        }
    }
    Ok(out)
}
