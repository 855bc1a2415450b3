//! What changed between two ControllerRevisions: their pod templates (the revision's `data`,
//! `spec.template`) compared field by field, in short phrases an operator reads at a glance:
//! `image: nginx:1.25 → nginx:1.26` (the container named when there are several),
//! `restartedAt 10:02:11`, `containers app env DEBUG value: 0 → 1`.
//! A restart's revision differs from its parent by one annotation; without this the pane showed
//! two identical rows.
//!
//! Owns: flattening a template into paths (containers keyed by name, not index) and wording the
//! differences. Pure. Must not touch state.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use serde_json::Value;

/// The annotation `kubectl rollout restart` sets.
const RESTARTED_AT: &str = "kubectl.kubernetes.io/restartedAt";

/// The differences from `older` to `newer`, most telling first (images, then restarts, then
/// the rest in path order). Empty when the templates are the same (or unreadable).
pub fn changes(older: &ControllerRevision, newer: &ControllerRevision) -> Vec<String> {
    let (Some(a), Some(b)) = (template(older), template(newer)) else { return Vec::new() };
    let (a, b) = (flatten(a), flatten(b));
    // With one container, its name says nothing: `image: a → b`.
    let containers: std::collections::BTreeSet<&str> =
        a.keys().chain(b.keys()).filter_map(|k| container_image(k)).collect();
    let named = containers.len() > 1;
    let mut out: Vec<(u8, String)> = Vec::new();
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for k in keys {
        let (old, new) = (a.get(k), b.get(k));
        if old == new {
            continue;
        }
        out.push(phrase(k, old.map(String::as_str), new.map(String::as_str), named));
    }
    out.sort_by_key(|(rank, _)| *rank);
    out.into_iter().map(|(_, p)| p).collect()
}

/// One line: the first change and how many more (`image app: a → b (+2 more)`); `None` when
/// nothing differs.
pub fn summary(older: &ControllerRevision, newer: &ControllerRevision) -> Option<String> {
    let all = changes(older, newer);
    let first = all.first()?.clone();
    Some(match all.len() {
        1 => first,
        n => format!("{first} (+{} more)", n - 1),
    })
}

fn template(rev: &ControllerRevision) -> Option<&Value> {
    rev.data.0.pointer("/spec/template")
}

/// `path → value` for every leaf of the template; containers (and init containers) keyed by
/// name, env and ports by name, other lists by index. `$patch` markers are left out.
fn flatten(v: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(v, String::new(), &mut out);
    out
}

fn walk(v: &Value, path: String, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                if k == "$patch" {
                    continue;
                }
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                walk(child, p, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                let key = child
                    .get("name")
                    .and_then(Value::as_str)
                    .map_or_else(|| i.to_string(), str::to_string);
                walk(child, format!("{path}[{key}]"), out);
            }
        }
        Value::String(s) => {
            out.insert(path, s.clone());
        }
        other => {
            out.insert(path, other.to_string());
        }
    }
}

/// A change in words, with its rank (0 images, 1 restarts, 2 the rest).
fn phrase(path: &str, old: Option<&str>, new: Option<&str>, named: bool) -> (u8, String) {
    let short = |s: &str| -> String {
        if s.chars().count() > 40 {
            format!("{}…", s.chars().take(39).collect::<String>())
        } else {
            s.to_string()
        }
    };
    if let Some(container) = container_image(path) {
        let container = if named { format!(" {container}") } else { String::new() };
        let text = match (old, new) {
            (Some(o), Some(n)) => format!("image{container}: {} → {}", short(o), short(n)),
            (None, Some(n)) => format!("image{container}: {}", short(n)),
            (Some(o), None) => format!("image{container} removed ({})", short(o)),
            (None, None) => String::new(),
        };
        return (0, text);
    }
    if path.ends_with(RESTARTED_AT) {
        let at = new.map_or("removed".to_string(), |t| clock_of(t).to_string());
        return (1, format!("restartedAt {at}"));
    }
    let name = readable(path);
    let text = match (old, new) {
        (Some(o), Some(n)) => format!("{name}: {} → {}", short(o), short(n)),
        (None, Some(n)) => format!("{name}: +{}", short(n)),
        (Some(o), None) => format!("{name}: −{}", short(o)),
        (None, None) => name,
    };
    (2, text)
}

/// The container whose image `path` is (`spec.containers[app].image` → `app`).
fn container_image(path: &str) -> Option<&str> {
    let rest = path.strip_prefix("spec.containers[")?.strip_suffix("].image")?;
    (!rest.contains('[')).then_some(rest)
}

/// `spec.containers[app].env[DEBUG].value` → `containers app env DEBUG value`: the path
/// without its `spec.`, brackets read as words.
fn readable(path: &str) -> String {
    let p = path.strip_prefix("spec.").unwrap_or(path);
    let p = p.strip_prefix("metadata.").unwrap_or(p);
    p.replace("].", " ").replace('[', " ").replace(']', "").replace('.', " ")
}

/// `2026-11-24T10:02:11Z` → `10:02:11` (the time is what tells two restarts apart).
fn clock_of(t: &str) -> &str {
    t.split_once('T').map_or(t, |(_, time)| time.trim_end_matches('Z'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
    use serde_json::json;

    fn rev(template: Value) -> ControllerRevision {
        ControllerRevision {
            data: RawExtension(json!({"spec": {"template": template}})),
            ..Default::default()
        }
    }

    #[test]
    fn an_image_change_and_a_restart_are_named() {
        let a = rev(json!({"$patch": "replace", "spec": {"containers": [
            {"name": "app", "image": "nginx:1.25"}]}}));
        let b = rev(json!({"$patch": "replace", "spec": {"containers": [
            {"name": "app", "image": "nginx:1.26"}]}}));
        assert_eq!(summary(&a, &b).as_deref(), Some("image: nginx:1.25 → nginx:1.26"));
        let c = rev(json!({"metadata": {"annotations": {RESTARTED_AT: "2026-11-24T10:02:11Z"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}}));
        assert_eq!(summary(&b, &c).as_deref(), Some("restartedAt 10:02:11"));
        assert_eq!(summary(&b, &b), None);
    }

    #[test]
    fn containers_are_matched_by_name_and_several_changes_counted() {
        let a = rev(json!({"spec": {"containers": [
            {"name": "app", "image": "a:1", "env": [{"name": "DEBUG", "value": "0"}]},
            {"name": "side", "image": "s:1"}]}}));
        let b = rev(json!({"spec": {"containers": [
            {"name": "side", "image": "s:1"},
            {"name": "app", "image": "a:2", "env": [{"name": "DEBUG", "value": "1"}]}]}}));
        let all = changes(&a, &b);
        assert_eq!(all, ["image app: a:1 → a:2", "containers app env DEBUG value: 0 → 1"]);
        assert_eq!(summary(&a, &b).as_deref(), Some("image app: a:1 → a:2 (+1 more)"));
    }
}
