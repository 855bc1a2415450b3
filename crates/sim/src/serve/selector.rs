//! Label and field selectors as query strings (`labelSelector=app=web,tier!=db`,
//! `fieldSelector=metadata.name=web-0`), parsed as the API server parses them, and matched.
//!
//! Written by hand: `core::selector` matches the structured `LabelSelector` of a spec; the
//! query-string grammar (`in (…)`, `notin`, `!key`, `==`) has no maintained Rust parser.

use std::collections::BTreeMap;

/// Why a selector is refused (a 400, in the API server's words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    #[error("unable to parse requirement: {requirement:?}: {why}")]
    Requirement { requirement: String, why: Requirement },
    #[error("invalid selector: {0:?}; expected field=value or field!=value")]
    Field(String),
    #[error("field label not supported: {field} (supported: {supported})")]
    Unsupported { field: String, supported: String },
}

/// What is wrong with one label requirement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Requirement {
    #[error("invalid label key {0:?}")]
    Key(String),
    #[error("invalid label value {0:?}")]
    Value(String),
    #[error("expected =, ==, !=, in or notin after the key")]
    Operator,
    #[error("expected a parenthesised list of values, e.g. (a,b)")]
    List,
}

impl From<SelectorError> for super::status::Status {
    fn from(e: SelectorError) -> Self {
        super::status::Status::bad_request(e.to_string())
    }
}

/// One label requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Label {
    Eq(String, String),
    Ne(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    Absent(String),
}

/// A parsed label selector (all requirements must hold).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Labels(Vec<Label>);

impl Labels {
    /// Parses `labelSelector`; the error says what was wrong.
    pub fn parse(s: &str) -> Result<Labels, SelectorError> {
        let mut out = Vec::new();
        for part in split_top(s) {
            let p = part.trim();
            if p.is_empty() {
                continue;
            }
            out.push(requirement(p)?);
        }
        Ok(Labels(out))
    }

    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        let get = |k: &str| labels.and_then(|l| l.get(k));
        self.0.iter().all(|r| match r {
            Label::Eq(k, v) => get(k) == Some(v),
            Label::Ne(k, v) => get(k) != Some(v),
            Label::In(k, vs) => get(k).is_some_and(|x| vs.contains(x)),
            Label::NotIn(k, vs) => get(k).is_none_or(|x| !vs.contains(x)),
            Label::Exists(k) => get(k).is_some(),
            Label::Absent(k) => get(k).is_none(),
        })
    }
}

/// Splits on commas outside parentheses.
fn split_top(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn requirement(p: &str) -> Result<Label, SelectorError> {
    let bad = |why: Requirement| SelectorError::Requirement { requirement: p.to_string(), why };
    if let Some(k) = p.strip_prefix('!') {
        return Ok(Label::Absent(key(k.trim()).map_err(bad)?));
    }
    for (op, neg) in [("!=", true), ("==", false), ("=", false)] {
        if let Some((k, v)) = p.split_once(op) {
            let (k, v) = (key(k.trim()).map_err(bad)?, value(v.trim()).map_err(bad)?);
            return Ok(if neg { Label::Ne(k, v) } else { Label::Eq(k, v) });
        }
    }
    let words: Vec<&str> = p.splitn(2, char::is_whitespace).collect();
    if let [k, rest] = words[..] {
        let rest = rest.trim();
        let (neg, list) = if let Some(l) = rest.strip_prefix("notin") {
            (true, l)
        } else if let Some(l) = rest.strip_prefix("in") {
            (false, l)
        } else {
            return Err(bad(Requirement::Operator));
        };
        let list = list.trim();
        let inner = list
            .strip_prefix('(')
            .and_then(|l| l.strip_suffix(')'))
            .ok_or_else(|| bad(Requirement::List))?;
        let values = inner
            .split(',')
            .map(|v| value(v.trim()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(bad)?;
        let k = key(k).map_err(bad)?;
        return Ok(if neg { Label::NotIn(k, values) } else { Label::In(k, values) });
    }
    Ok(Label::Exists(key(p).map_err(bad)?))
}

fn key(k: &str) -> Result<String, Requirement> {
    let ok = !k.is_empty()
        && k.len() <= 317
        && k.chars().all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    if ok { Ok(k.to_string()) } else { Err(Requirement::Key(k.to_string())) }
}

fn value(v: &str) -> Result<String, Requirement> {
    let ok = v.len() <= 63 && v.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok { Ok(v.to_string()) } else { Err(Requirement::Value(v.to_string())) }
}

/// A parsed field selector: (field, value, negated) requirements.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fields(Vec<(String, String, bool)>);

impl Fields {
    /// Parses `fieldSelector`, accepting only the fields in `supported`.
    pub fn parse(s: &str, supported: &[&str]) -> Result<Fields, SelectorError> {
        let mut out = Vec::new();
        for p in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v, neg) = if let Some((k, v)) = p.split_once("!=") {
                (k, v, true)
            } else if let Some((k, v)) = p.split_once("==") {
                (k, v, false)
            } else if let Some((k, v)) = p.split_once('=') {
                (k, v, false)
            } else {
                return Err(SelectorError::Field(p.to_string()));
            };
            let k = k.trim();
            if !supported.contains(&k) {
                let (field, supported) = (k.to_string(), supported.join(", "));
                return Err(SelectorError::Unsupported { field, supported });
            }
            out.push((k.to_string(), v.trim().to_string(), neg));
        }
        Ok(Fields(out))
    }

    /// Whether it selects everything (no requirement).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether an object whose fields read `get` matches.
    pub fn matches(&self, get: impl Fn(&str) -> String) -> bool {
        self.0.iter().all(|(k, v, neg)| (get(k) == *v) != *neg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn label_selectors_parse_and_match_as_the_api_server_does() {
        let l = labels(&[("app", "web"), ("tier", "front")]);
        let yes = [
            "app=web",
            "app==web",
            "app",
            "!db",
            "tier in (front, back)",
            "app notin (db)",
            "app=web,tier!=back",
            "",
        ];
        for s in yes {
            assert!(Labels::parse(s).unwrap().matches(Some(&l)), "{s}");
        }
        let no =
            ["app=db", "db", "!app", "tier in (back)", "tier notin (front)", "app=web,tier=back"];
        for s in no {
            assert!(!Labels::parse(s).unwrap().matches(Some(&l)), "{s}");
        }
        assert!(Labels::parse("app in web").unwrap_err().to_string().contains("parenthesised"));
        assert!(Labels::parse("a b c").is_err());
    }

    #[test]
    fn field_selectors_refuse_unsupported_fields() {
        let f = Fields::parse("metadata.name=web-0", &["metadata.name"]).unwrap();
        assert!(f.matches(|k| if k == "metadata.name" { "web-0".into() } else { String::new() }));
        assert!(!f.matches(|_| "web-1".into()));
        let err = Fields::parse("spec.foo=1", &["metadata.name"]).unwrap_err().to_string();
        assert!(err.contains("field label not supported: spec.foo"), "{err}");
    }
}
