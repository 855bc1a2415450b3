//! The protobuf bodies kubectl sends (a `k8s\0`-prefixed `runtime.Unknown` envelope, as
//! `application/vnd.kubernetes.protobuf`): `kubectl auth can-i`'s SelfSubjectAccessReview and
//! `kubectl create namespace`'s Namespace (its name, generateName, labels and annotations).
//! Decoded here into the JSON the handlers read; every other protobuf body is refused with 415.
//!
//! Written by hand: a dozen lines of the wire format (varints and length-delimited fields) for
//! three small messages, instead of a protobuf code generator and the Kubernetes .proto files.

use serde_json::{Map, Value, json};

/// Splits a protobuf message into (field number, wire type, bytes) for length-delimited fields;
/// varint fields are skipped. `None` when the bytes are not a message.
fn fields(mut b: &[u8]) -> Option<Vec<(u64, &[u8])>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let (key, rest) = varint(b)?;
        b = rest;
        match key & 7 {
            0 => b = varint(b)?.1,
            2 => {
                let (len, rest) = varint(b)?;
                let len = usize::try_from(len).ok()?;
                if rest.len() < len {
                    return None;
                }
                out.push((key >> 3, &rest[..len]));
                b = &rest[len..];
            }
            5 => b = b.get(4..)?,
            1 => b = b.get(8..)?,
            _ => return None,
        }
    }
    Some(out)
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
    let text = |b: &[u8]| Value::from(String::from_utf8_lossy(b).into_owned());
    let mut m = Map::new();
    for (n, name) in [(1, "name"), (2, "generateName")] {
        if let Some(v) = field(&meta, n) {
            m.insert(name.into(), text(v));
        }
    }
    for (n, name) in [(11, "labels"), (12, "annotations")] {
        let mut map = Map::new();
        for (_, entry) in meta.iter().filter(|(k, _)| *k == n) {
            let kv = fields(entry)?;
            let key = String::from_utf8_lossy(field(&kv, 1).unwrap_or_default()).into_owned();
            map.insert(key, text(field(&kv, 2).unwrap_or_default()));
        }
        if !map.is_empty() {
            m.insert(name.into(), Value::Object(map));
        }
    }
    Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": m}))
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
}
