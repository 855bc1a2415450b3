//! Go-compatible JSON (spec 2.1): the exact bytes upstream stores in a ControllerRevision.
//!
//! Upstream `getPatch` encodes the set with the apps/v1 codec, decodes it into a
//! `map[string]interface{}`, adds `"$patch":"replace"` to `spec.template` and re-encodes it with
//! Go's `encoding/json`. The bytes therefore follow Go's rules, which this module reproduces:
//!
//! * **keys sorted** byte-wise at every level (Go marshals maps in sorted key order);
//! * **numbers round-trip through `float64`**: integers print as integers (exactly the float's
//!   value, so integers above 2^53 lose precision as in Go), `1e21` and above or below `1e-6`
//!   use Go's exponent form (`1e+21`, `1.5e-7`);
//! * **HTML-safe escaping**: `<`, `>`, `&` become `\u003c`, `\u003e`, `\u0026`; U+2028/U+2029
//!   become `\u2028`/`\u2029`; `\b \f \n \r \t` use their short escapes (Go ≥ 1.22); other
//!   control characters `\u00XX` with lower-case hex; no other escaping (no `/`, no DEL);
//! * **which fields exist**: k8s-openapi omits every `None`, Go's struct encoding does not. The
//!   field table in [`schema`] re-creates what the Go types emit (see that module for the list:
//!   `"creationTimestamp":null` up to v1.33, `"resources":{}` on every container, `"divisor":"0"`,
//!   `"service":null` for gRPC probes, `"sources":null`, PVC-template `metadata`/`resources`)
//!   and drops zero values Go's `omitempty` would drop (`hostNetwork:false`, `image:""`, `[]`).
//!   Quantities are written in Go's canonical form (`1000m` → `1`).
//!
//! Owns: encoding only. Must not touch revisions, hashing or defaulting (see `history`, `fnv`,
//! `defaults`).

mod quantity;
mod schema;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde_json::{Map, Number, Value};

pub use quantity::{canonical_quantity, round_up_milli};

use super::options::Version;

/// The version-dependent parts of Go's encoding of a pod template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GoEncoding {
    /// Up to v1.33 `ObjectMeta.creationTimestamp` (a non-pointer `metav1.Time`) is always
    /// emitted, as `null` when unset. v1.34 tagged it `omitzero` (kubernetes #130989), which
    /// changed every revision's bytes and caused the spurious rollouts of #134773 / #135017.
    pub creation_timestamp_null: bool,
}

impl GoEncoding {
    /// The encoding kube-controller-manager `version` produces.
    pub fn for_version(version: Version) -> Self {
        GoEncoding { creation_timestamp_null: version.minor <= 33 }
    }
}

impl Default for GoEncoding {
    fn default() -> Self {
        GoEncoding::for_version(Version::LATEST)
    }
}

/// Why a template could not be turned into patch data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot encode the pod template as JSON: {0}")]
pub struct EncodeError(pub String);

/// The value upstream's `getPatch` stores: `{"spec":{"template":{"$patch":"replace", …}}}` with
/// the template's fields as Go would encode them. Encode it with [`marshal`] for the bytes.
#[doc(alias = "getPatch")]
pub fn template_patch(
    template: &PodTemplateSpec,
    encoding: GoEncoding,
) -> Result<Value, EncodeError> {
    let mut value = serde_json::to_value(template).map_err(|e| EncodeError(e.to_string()))?;
    let Value::Object(fields) = &mut value else {
        return Err(EncodeError("a pod template must encode as a JSON object".into()));
    };
    schema::normalize_pod_template(fields, encoding);
    fields.insert("$patch".into(), Value::String("replace".into()));
    let mut spec = Map::new();
    spec.insert("template".into(), value);
    let mut root = Map::new();
    root.insert("spec".into(), Value::Object(spec));
    Ok(Value::Object(root))
}

/// Normalises a JSON-encoded pod template in place to the fields Go's encoding has (the same
/// pass [`template_patch`] applies). Exposed for callers that already hold the JSON.
pub fn normalize_pod_template(template: &mut Map<String, Value>, encoding: GoEncoding) {
    schema::normalize_pod_template(template, encoding);
}

/// `json.Marshal` of a decoded `interface{}` tree: the bytes Go would produce for `value`.
pub fn marshal(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    marshal_into(value, &mut out);
    out
}

/// [`marshal`] appending to `out`.
pub fn marshal_into(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                marshal_into(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            // Go sorts map keys byte-wise; do not rely on serde_json's map order (the
            // `preserve_order` feature may be enabled by another crate in the build), but use
            // it when it is already sorted (the default BTreeMap: no sort, no lookups).
            out.push(b'{');
            if map.keys().is_sorted() {
                for (i, (key, v)) in map.iter().enumerate() {
                    write_member(i, key, v, out);
                }
            } else {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_unstable();
                for (i, key) in keys.into_iter().enumerate() {
                    if let Some(v) = map.get(key) {
                        write_member(i, key, v, out);
                    }
                }
            }
            out.push(b'}');
        }
    }
}

/// `"key":value`, preceded by a comma unless it is the object's first member.
fn write_member(i: usize, key: &str, v: &Value, out: &mut Vec<u8>) {
    if i > 0 {
        out.push(b',');
    }
    write_string(key, out);
    out.push(b':');
    marshal_into(v, out);
}

fn write_number(n: &Number, out: &mut Vec<u8>) {
    // Go decodes every JSON number into float64 before re-encoding it.
    let f = if let Some(i) = n.as_i64() {
        i as f64
    } else if let Some(u) = n.as_u64() {
        u as f64
    } else {
        n.as_f64().unwrap_or(0.0)
    };
    out.extend_from_slice(format_float(f).as_bytes());
}

/// Go's `encoding/json` float64 encoding: shortest round-trip digits, plain decimal notation for
/// `1e-6 <= |f| < 1e21` (and 0), otherwise exponent notation with a signed exponent of at least
/// one digit after `e-` and two after `e+` (`1e+21`, `5e-7`, `1.5e-10`).
pub fn format_float(f: f64) -> String {
    let abs = f.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        // Rust's Display prints the shortest round-trip digits without an exponent, padding
        // with zeros exactly like Go's 'f' format with precision -1.
        return format!("{f}");
    }
    let s = format!("{f:e}");
    match s.split_once('e') {
        Some((mantissa, exp)) => match exp.strip_prefix('-') {
            Some(digits) => format!("{mantissa}e-{digits}"),
            None if exp.len() < 2 => format!("{mantissa}e+0{exp}"),
            None => format!("{mantissa}e+{exp}"),
        },
        None => s,
    }
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let short: Option<&[u8]> = match c {
            '"' => Some(b"\\\""),
            '\\' => Some(b"\\\\"),
            '\n' => Some(b"\\n"),
            '\r' => Some(b"\\r"),
            '\t' => Some(b"\\t"),
            '\u{8}' => Some(b"\\b"),
            '\u{c}' => Some(b"\\f"),
            _ => None,
        };
        let needs_u = matches!(c, '\u{0}'..='\u{1f}' | '<' | '>' | '&' | '\u{2028}' | '\u{2029}');
        if short.is_none() && !needs_u {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        start = i + c.len_utf8();
        if let Some(esc) = short {
            out.extend_from_slice(esc);
        } else {
            let code = u32::from(c);
            out.extend_from_slice(b"\\u");
            for shift in [12u32, 8, 4, 0] {
                out.push(HEX[((code >> shift) & 0xf) as usize]);
            }
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(v: Value) -> String {
        String::from_utf8(marshal(&v)).unwrap_or_default()
    }

    #[test]
    fn floats_follow_go() {
        assert_eq!(format_float(30.0), "30");
        assert_eq!(format_float(-0.5), "-0.5");
        assert_eq!(format_float(1e20), "100000000000000000000");
        assert_eq!(format_float(1e21), "1e+21");
        assert_eq!(format_float(1.5e-7), "1.5e-7");
        assert_eq!(format_float(1e-6), "0.000001");
        assert_eq!(format_float(2.5e-10), "2.5e-10");
        assert_eq!(format_float(0.0), "0");
    }

    #[test]
    fn escapes_like_go() {
        assert_eq!(m(Value::String("a<b>&c".into())), r#""a\u003cb\u003e\u0026c""#);
        assert_eq!(m(Value::String("\u{2028}\u{2029}".into())), r#""\u2028\u2029""#);
        assert_eq!(m(Value::String("\"\\\n\r\t\u{8}\u{c}".into())), r#""\"\\\n\r\t\b\f""#);
        assert_eq!(m(Value::String("\u{1}\u{1f}\u{7f}/é".into())), "\"\\u0001\\u001f\u{7f}/é\"");
    }

    #[test]
    fn sorts_keys_bytewise() {
        let v = serde_json::json!({"b": 1, "B": 2, "$patch": "x", "a": {"z": [], "y": null}});
        assert_eq!(m(v), r#"{"$patch":"x","B":2,"a":{"y":null,"z":[]},"b":1}"#);
    }
}
