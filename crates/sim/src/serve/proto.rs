//! The protobuf bodies kubectl sends (a `k8s\0`-prefixed `runtime.Unknown` envelope, as
//! `application/vnd.kubernetes.protobuf`): `kubectl auth can-i`'s SelfSubjectAccessReview and
//! `kubectl create namespace`'s Namespace (its name, generateName, labels and annotations) and
//! `kubectl create poddisruptionbudget`'s PodDisruptionBudget (its metadata and spec).
//! Decoded here into the JSON the handlers read; every other protobuf body is refused with 415.
//!
//! Written by hand: a dozen lines of the wire format (varints and length-delimited fields) for
//! a few small messages, instead of a protobuf code generator and the Kubernetes .proto files.

use serde_json::{Map, Value, json};

/// A field's value: a varint, or the bytes of a length-delimited field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Val<'b> {
    Int(u64),
    Bytes(&'b [u8]),
}

/// Splits a protobuf message into (field number, value) for varint and length-delimited
/// fields; fixed-width ones are skipped. `None` when the bytes are not a message.
fn walk(mut b: &[u8]) -> Option<Vec<(u64, Val<'_>)>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let (key, rest) = varint(b)?;
        b = rest;
        match key & 7 {
            0 => {
                let (v, rest) = varint(b)?;
                out.push((key >> 3, Val::Int(v)));
                b = rest;
            }
            2 => {
                let (len, rest) = varint(b)?;
                let len = usize::try_from(len).ok()?;
                if rest.len() < len {
                    return None;
                }
                out.push((key >> 3, Val::Bytes(&rest[..len])));
                b = &rest[len..];
            }
            5 => b = b.get(4..)?,
            1 => b = b.get(8..)?,
            _ => return None,
        }
    }
    Some(out)
}

/// The length-delimited fields of a message, as (field number, bytes).
fn fields(b: &[u8]) -> Option<Vec<(u64, &[u8])>> {
    let all = walk(b)?;
    Some(
        all.into_iter()
            .filter_map(|(n, v)| match v {
                Val::Bytes(b) => Some((n, b)),
                Val::Int(_) => None,
            })
            .collect(),
    )
}

fn varint(b: &[u8]) -> Option<(u64, &[u8])> {
    let mut v = 0u64;
    for (i, byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((v, &b[i + 1..]));
        }
    }
    None
}

fn field<'b>(fs: &[(u64, &'b [u8])], n: u64) -> Option<&'b [u8]> {
    fs.iter().find(|(k, _)| *k == n).map(|(_, v)| *v)
}

/// The SelfSubjectAccessReview in a protobuf body, as JSON; `None` when it is not one.
pub fn access_review(body: &[u8]) -> Option<Value> {
    let unknown = fields(body.strip_prefix(b"k8s\0")?)?;
    let raw = field(&unknown, 2)?;
    let review = fields(raw)?;
    let spec = fields(field(&review, 2)?)?;
    let mut attrs = Map::new();
    if let Some(ra) = field(&spec, 1) {
        let names = ["namespace", "verb", "group", "version", "resource", "subresource", "name"];
        for (n, name) in (1u64..).zip(names) {
            if let Some(v) = fields(ra)?.iter().find(|(k, _)| *k == n).map(|(_, v)| *v) {
                attrs.insert(name.into(), String::from_utf8_lossy(v).into_owned().into());
            }
        }
    }
    Some(json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "metadata": {},
        "spec": {"resourceAttributes": attrs},
    }))
}

/// The Namespace in a protobuf body, as JSON; `None` when it is not one.
pub fn namespace(body: &[u8]) -> Option<Value> {
    let unknown = fields(body.strip_prefix(b"k8s\0")?)?;
    let type_meta = fields(field(&unknown, 1)?)?;
    if field(&type_meta, 2)? != b"Namespace" {
        return None;
    }
    let ns = fields(field(&unknown, 2)?)?;
    let meta = fields(field(&ns, 1).unwrap_or_default())?;
    let mut m = Map::new();
    for (n, name) in [(1, "name"), (2, "generateName")] {
        if let Some(v) = field(&meta, n) {
            m.insert(name.into(), text(v));
        }
    }
    for (n, name) in [(11, "labels"), (12, "annotations")] {
        if let Some(map) = string_map(&meta, n)? {
            m.insert(name.into(), map);
        }
    }
    Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": m}))
}

/// The PodDisruptionBudget in a protobuf body (`kubectl create poddisruptionbudget`), as JSON:
/// its metadata's name, namespace, labels and annotations, and its spec; `None` when it is not
/// one.
pub fn budget(body: &[u8]) -> Option<Value> {
    let unknown = fields(body.strip_prefix(b"k8s\0")?)?;
    let type_meta = fields(field(&unknown, 1)?)?;
    if field(&type_meta, 2)? != b"PodDisruptionBudget" {
        return None;
    }
    let pdb = fields(field(&unknown, 2)?)?;
    let meta = fields(field(&pdb, 1).unwrap_or_default())?;
    let mut m = Map::new();
    for (n, name) in [(1, "name"), (2, "generateName"), (3, "namespace")] {
        // Go writes every string field, empty or not: empty is unset.
        if let Some(v) = field(&meta, n).filter(|v| !v.is_empty()) {
            m.insert(name.into(), text(v));
        }
    }
    for (n, name) in [(11, "labels"), (12, "annotations")] {
        if let Some(map) = string_map(&meta, n)? {
            m.insert(name.into(), map);
        }
    }
    let spec = fields(field(&pdb, 2).unwrap_or_default())?;
    let mut sp = Map::new();
    for (n, name) in [(1, "minAvailable"), (3, "maxUnavailable")] {
        if let Some(v) = field(&spec, n) {
            sp.insert(name.into(), int_or_string(v)?);
        }
    }
    if let Some(sel) = field(&spec, 2) {
        sp.insert("selector".into(), label_selector(sel)?);
    }
    if let Some(p) = field(&spec, 4) {
        sp.insert("unhealthyPodEvictionPolicy".into(), text(p));
    }
    Some(
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": m, "spec": sp}),
    )
}

fn text(b: &[u8]) -> Value {
    Value::from(String::from_utf8_lossy(b).into_owned())
}

/// A `map<string, string>` field (`n`) of a message, as a JSON object; `Ok(None)` when absent.
fn string_map(msg: &[(u64, &[u8])], n: u64) -> Option<Option<Value>> {
    let mut map = Map::new();
    for (_, entry) in msg.iter().filter(|(k, _)| *k == n) {
        let kv = fields(entry)?;
        let key = String::from_utf8_lossy(field(&kv, 1).unwrap_or_default()).into_owned();
        map.insert(key, text(field(&kv, 2).unwrap_or_default()));
    }
    Some((!map.is_empty()).then_some(Value::Object(map)))
}

/// An `IntOrString` (type 1 = string, else int).
fn int_or_string(b: &[u8]) -> Option<Value> {
    let all = walk(b)?;
    let int = |n: u64| {
        all.iter().find_map(|(k, v)| match v {
            Val::Int(i) if *k == n => Some(*i),
            _ => None,
        })
    };
    if int(1) == Some(1) {
        let s = all.iter().find_map(|(k, v)| match v {
            Val::Bytes(b) if *k == 3 => Some(*b),
            _ => None,
        });
        return Some(text(s.unwrap_or_default()));
    }
    // An int32 on the wire: a negative one is sign-extended to ten bytes.
    let raw = int(2).unwrap_or(0);
    Some(Value::from(i64::from(raw as u32 as i32)))
}

/// A `LabelSelector`: matchLabels (1) and matchExpressions (2: key 1, operator 2, values 3).
fn label_selector(b: &[u8]) -> Option<Value> {
    let sel = fields(b)?;
    let mut out = Map::new();
    if let Some(labels) = string_map(&sel, 1)? {
        out.insert("matchLabels".into(), labels);
    }
    let mut exprs = Vec::new();
    for (_, e) in sel.iter().filter(|(k, _)| *k == 2) {
        let r = fields(e)?;
        let values: Vec<Value> = r.iter().filter(|(k, _)| *k == 3).map(|(_, v)| text(v)).collect();
        let mut req = json!({
            "key": text(field(&r, 1).unwrap_or_default()),
            "operator": text(field(&r, 2).unwrap_or_default()),
        });
        if let (false, Some(o)) = (values.is_empty(), req.as_object_mut()) {
            o.insert("values".into(), Value::Array(values));
        }
        exprs.push(req);
    }
    if !exprs.is_empty() {
        out.insert("matchExpressions".into(), Value::Array(exprs));
    }
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ld(n: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![(n << 3) | 2, u8::try_from(bytes.len()).unwrap()];
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn decodes_kubectl_auth_can_i() {
        let ra =
            [ld(1, b"default"), ld(2, b"patch"), ld(3, b"apps"), ld(5, b"statefulsets")].concat();
        let review = [ld(1, b""), ld(2, &ld(1, &ra))].concat();
        let type_meta =
            [ld(1, b"authorization.k8s.io/v1"), ld(2, b"SelfSubjectAccessReview")].concat();
        let body = [b"k8s\0".to_vec(), ld(1, &type_meta), ld(2, &review)].concat();
        let v = access_review(&body).unwrap();
        assert_eq!(
            v["spec"]["resourceAttributes"],
            json!({"namespace": "default", "verb": "patch", "group": "apps", "resource": "statefulsets"})
        );
        assert!(access_review(b"{}").is_none());
    }

    #[test]
    fn decodes_kubectl_create_namespace() {
        let label = [ld(1, b"team"), ld(2, b"db")].concat();
        let meta = [ld(1, b"ops"), ld(11, &label)].concat();
        let type_meta = [ld(1, b"v1"), ld(2, b"Namespace")].concat();
        let body = [b"k8s\0".to_vec(), ld(1, &type_meta), ld(2, &ld(1, &meta))].concat();
        let v = namespace(&body).unwrap();
        assert_eq!(v["metadata"], json!({"name": "ops", "labels": {"team": "db"}}));
        let other = [ld(1, b"v1"), ld(2, b"Pod")].concat();
        let body = [b"k8s\0".to_vec(), ld(1, &other), ld(2, &ld(1, &meta))].concat();
        assert!(namespace(&body).is_none(), "only a Namespace");
    }

    #[test]
    fn decodes_kubectl_create_pdb() {
        let label = [ld(1, b"app"), ld(2, b"web")].concat();
        let selector = ld(1, &label);
        let min = [vec![1 << 3, 0], vec![2 << 3, 3]].concat();
        let pct = [vec![1 << 3, 1], ld(3, b"25%")].concat();
        let spec = [ld(1, &min), ld(2, &selector), ld(4, b"AlwaysAllow")].concat();
        let type_meta = [ld(1, b"policy/v1"), ld(2, b"PodDisruptionBudget")].concat();
        let pdb = [ld(1, &ld(1, b"web")), ld(2, &spec)].concat();
        let body = [b"k8s\0".to_vec(), ld(1, &type_meta), ld(2, &pdb)].concat();
        let v = budget(&body).unwrap();
        assert_eq!(v["metadata"], json!({"name": "web"}));
        assert_eq!(
            v["spec"],
            json!({"minAvailable": 3, "selector": {"matchLabels": {"app": "web"}},
                   "unhealthyPodEvictionPolicy": "AlwaysAllow"})
        );
        let spec = [ld(3, &pct)].concat();
        let pdb = [ld(1, &ld(1, b"web")), ld(2, &spec)].concat();
        let body = [b"k8s\0".to_vec(), ld(1, &type_meta), ld(2, &pdb)].concat();
        assert_eq!(budget(&body).unwrap()["spec"], json!({"maxUnavailable": "25%"}));
        assert!(namespace(&body).is_none() && budget(b"k8s\0").is_none());
    }
}
