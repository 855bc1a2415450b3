//! Label selectors (`metav1.LabelSelectorAsSelector`, `labels.Selector`): compiling a
//! `LabelSelector` with validation, matching a label map, and the one-walk scan a sync uses to
//! match the selector and read the controller's own labels in a single pass over a pod's labels.
//!
//! Owns: selector semantics. Must not touch: ownership, effects or sets (that is `claim`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::bytes::same;
use super::labels::{POD_NAME_LABEL, REVISION_LABEL};

/// Selectors of at most this many `matchLabels` pairs (and no expressions) are matched in the
/// walk over the labels that reads the controller's labels; others fall back to
/// [`Selector::matches`] (one lookup per requirement).
const SCAN_REQUIREMENTS: usize = 64;

/// What one walk over a pod's labels found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabelScan<'p> {
    /// The selector matches the labels.
    pub selected: bool,
    /// The `controller-revision-hash` label, `""` when absent (as `getPodRevision`).
    pub revision: &'p str,
    /// The `statefulset.kubernetes.io/pod-name` label.
    pub pod_name: Option<&'p str>,
}

/// A compiled label selector (`metav1.LabelSelectorAsSelector`): `matchLabels` AND
/// `matchExpressions` (In, NotIn, Exists, DoesNotExist). An absent selector matches nothing,
/// an empty one everything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    nothing: bool,
    requirements: Vec<Requirement>,
    /// `Some(mask)` when every requirement is an Equals (matchLabels) and there are at most
    /// [`SCAN_REQUIREMENTS`]: `mask` has one bit per requirement, all set when all matched.
    equals_mask: Option<u64>,
    /// Bit `min(len, 63)` set for the length of every requirement key: a label whose key
    /// length has no bit cannot be one of them.
    key_lens: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Equals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

/// Why a label selector is invalid (`labels.NewRequirement` / operator errors upstream).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SelectorError(pub String);

impl Selector {
    /// Compiles `selector` as `LabelSelectorAsSelector` does, validating keys, values and
    /// operators.
    #[doc(alias = "LabelSelectorAsSelector")]
    pub fn from_label_selector(selector: Option<&LabelSelector>) -> Result<Self, SelectorError> {
        let Some(selector) = selector else {
            let requirements = Vec::new();
            return Ok(Selector { nothing: true, requirements, equals_mask: None, key_lens: 0 });
        };
        let mut requirements = Vec::new();
        for (key, value) in selector.match_labels.iter().flatten() {
            requirements.push(Requirement::new(key, Op::Equals, std::slice::from_ref(value))?);
        }
        for expr in selector.match_expressions.iter().flatten() {
            let op = match expr.operator.as_str() {
                "In" => Op::In,
                "NotIn" => Op::NotIn,
                "Exists" => Op::Exists,
                "DoesNotExist" => Op::DoesNotExist,
                other => {
                    return Err(SelectorError(format!(
                        "{other:?} is not a valid label selector operator \
                         (expected In, NotIn, Exists or DoesNotExist)"
                    )));
                }
            };
            requirements.push(Requirement::new(
                &expr.key,
                op,
                expr.values.as_deref().unwrap_or(&[]),
            )?);
        }
        let n = requirements.len();
        let equals_only = requirements.iter().all(|r| r.op == Op::Equals);
        let equals_mask = (equals_only && n <= SCAN_REQUIREMENTS)
            .then(|| u64::MAX.checked_shr(u32::try_from(64 - n).unwrap_or(64)).unwrap_or(0));
        let key_lens = requirements.iter().fold(0, |m, r| m | 1u64 << r.key.len().min(63));
        Ok(Selector { nothing: false, requirements, equals_mask, key_lens })
    }

    /// Whether an object with `labels` is selected.
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// [`Selector::matches`] plus the revision and pod-name labels, in one walk over `labels`
    /// (keys are told apart by length first, so most keys cost no string comparison).
    pub fn scan<'p>(&self, labels: Option<&'p BTreeMap<String, String>>) -> LabelScan<'p> {
        let mut out = LabelScan { selected: false, revision: "", pod_name: None };
        let mut matched = 0u64;
        let fused = self.equals_mask.is_some();
        if let Some(map) = labels {
            for (k, v) in map {
                let len = k.len();
                if len == REVISION_LABEL.len() {
                    if same(k, REVISION_LABEL) {
                        out.revision = v;
                    }
                } else if len == POD_NAME_LABEL.len() && same(k, POD_NAME_LABEL) {
                    out.pod_name = Some(v);
                }
                if fused && (self.key_lens >> len.min(63)) & 1 != 0 {
                    matched |= self.equals_matched(k, v);
                }
            }
        }
        out.selected = match self.equals_mask {
            Some(all) => matched == all,
            None => self.matches(labels),
        };
        out
    }

    /// The bits of the (Equals) requirements the label `k=v` satisfies.
    fn equals_matched(&self, k: &str, v: &str) -> u64 {
        let mut bits = 0;
        for (i, r) in self.requirements.iter().enumerate() {
            if same(&r.key, k) && r.values.first().is_some_and(|x| same(x, v)) {
                bits |= 1 << i;
            }
        }
        bits
    }

    /// True for the selector that selects everything (no requirements).
    pub fn is_everything(&self) -> bool {
        !self.nothing && self.requirements.is_empty()
    }
}

impl Requirement {
    fn new(key: &str, op: Op, values: &[String]) -> Result<Self, SelectorError> {
        validate_key(key)?;
        match op {
            Op::In | Op::NotIn if values.is_empty() => {
                return Err(SelectorError(format!(
                    "key {key:?}: the values of an In or NotIn expression must not be empty"
                )));
            }
            Op::Exists | Op::DoesNotExist if !values.is_empty() => {
                return Err(SelectorError(format!(
                    "key {key:?}: an Exists or DoesNotExist expression must have no values"
                )));
            }
            _ => {}
        }
        for value in values {
            validate_value(key, value)?;
        }
        Ok(Requirement { key: key.to_string(), op, values: values.to_vec() })
    }

    fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        self.matches_value(labels.and_then(|l| l.get(&self.key)).map(String::as_str))
    }

    /// The requirement against the value of its key (`None`: the key is absent).
    fn matches_value(&self, value: Option<&str>) -> bool {
        let listed = |v: &str| self.values.iter().any(|x| x == v);
        match self.op {
            Op::Equals => value.is_some_and(|v| self.values.first().is_some_and(|x| x == v)),
            Op::In => value.is_some_and(listed),
            Op::NotIn => value.is_none_or(|v| !listed(v)),
            Op::Exists => value.is_some(),
            Op::DoesNotExist => value.is_none(),
        }
    }
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, 1 to 63 characters.
fn is_label_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A DNS-1123 subdomain: lower-case alphanumeric labels with inner dashes, joined by dots.
pub fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter().all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        })
}

fn validate_key(key: &str) -> Result<(), SelectorError> {
    let valid = match key.split_once('/') {
        Some((prefix, name)) => {
            !name.contains('/') && is_dns_subdomain(prefix) && is_label_name(name)
        }
        None => is_label_name(key),
    };
    if valid {
        return Ok(());
    }
    Err(SelectorError(format!(
        "invalid label key {key:?}: expected an optional DNS subdomain prefix and '/', then a \
         name of 1 to 63 characters from [A-Za-z0-9-_.] starting and ending with an alphanumeric \
         (e.g. \"app\" or \"example.com/tier\")"
    )))
}

fn validate_value(key: &str, value: &str) -> Result<(), SelectorError> {
    if value.is_empty() || is_label_name(value) {
        return Ok(());
    }
    Err(SelectorError(format!(
        "invalid label value {value:?} for key {key:?}: expected at most 63 characters from \
         [A-Za-z0-9-_.] starting and ending with an alphanumeric, or an empty value"
    )))
}

/// A `LabelSelector` as the query-string form a list or watch takes (`app=web,tier in (a,b)`).
pub fn to_query(selector: &LabelSelector) -> String {
    let mut parts: Vec<String> =
        selector.match_labels.iter().flatten().map(|(k, v)| format!("{k}={v}")).collect();
    for e in selector.match_expressions.iter().flatten() {
        let values = e.values.as_deref().unwrap_or_default().join(",");
        parts.push(match e.operator.as_str() {
            "In" => format!("{} in ({values})", e.key),
            "NotIn" => format!("{} notin ({values})", e.key),
            "Exists" => e.key.clone(),
            _ => format!("!{}", e.key),
        });
    }
    parts.join(",")
}

/// One selector that selects everything any of `selectors` selects (and perhaps more), for one
/// watch of several sets' objects: the `matchLabels` pairs every one of them holds, and for a
/// key every one of them matches by value, `key in (their values)`. Their expressions are left
/// out (a looser selector), so the result may select everything (no requirement at all). The
/// objects it lists are then matched against each selector itself.
pub fn covering(selectors: &[&LabelSelector]) -> LabelSelector {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;
    let labels = |s: &&LabelSelector| s.match_labels.clone().unwrap_or_default();
    let Some((first, rest)) = selectors.split_first() else { return LabelSelector::default() };
    let mut same = labels(first);
    let mut values: BTreeMap<String, std::collections::BTreeSet<String>> =
        same.iter().map(|(k, v)| (k.clone(), [v.clone()].into())).collect();
    for s in rest {
        let l = labels(s);
        same.retain(|k, v| l.get(k) == Some(v));
        values.retain(|k, vs| match l.get(k) {
            Some(v) => {
                vs.insert(v.clone());
                true
            }
            None => false,
        });
    }
    let expressions: Vec<LabelSelectorRequirement> = values
        .into_iter()
        .filter(|(k, _)| !same.contains_key(k))
        .map(|(key, vs)| LabelSelectorRequirement {
            key,
            operator: "In".into(),
            values: Some(vs.into_iter().collect()),
        })
        .collect();
    LabelSelector {
        match_labels: (!same.is_empty()).then_some(same),
        match_expressions: (!expressions.is_empty()).then_some(expressions),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    fn labels(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn sel(kv: &[(&str, &str)]) -> LabelSelector {
        LabelSelector { match_labels: Some(labels(kv)), match_expressions: None }
    }

    #[test]
    fn zones_of_one_app_are_covered_by_their_shared_label_and_the_zones_they_name() {
        let a = sel(&[("app", "ingester"), ("zone", "a")]);
        let b = sel(&[("app", "ingester"), ("zone", "b"), ("tier", "x")]);
        let c = covering(&[&a, &b]);
        assert_eq!(to_query(&c), "app=ingester,zone in (a,b)");
        let compiled = Selector::from_label_selector(Some(&c)).unwrap();
        assert!(compiled.matches(Some(&labels(&[("app", "ingester"), ("zone", "b")]))));
        assert!(!compiled.matches(Some(&labels(&[("app", "ingester"), ("zone", "c")]))));
        assert!(!compiled.matches(Some(&labels(&[("app", "other"), ("zone", "a")]))));
    }

    #[test]
    fn sets_with_no_key_in_common_are_covered_by_everything() {
        let c = covering(&[&sel(&[("app", "web")]), &sel(&[("name", "db")])]);
        assert_eq!(c, LabelSelector::default());
        assert!(Selector::from_label_selector(Some(&c)).unwrap().is_everything());
        // One set: its own pairs; its expressions are left to the match on each object.
        let mut one = sel(&[("app", "web")]);
        one.match_expressions = Some(vec![LabelSelectorRequirement {
            key: "tier".into(),
            operator: "NotIn".into(),
            values: Some(vec!["x".into()]),
        }]);
        assert_eq!(to_query(&covering(&[&one])), "app=web");
        assert_eq!(covering(&[]), LabelSelector::default());
    }

    #[test]
    fn whatever_one_of_them_selects_the_covering_selects() {
        // Every combination of three small selectors over two keys and the objects they match.
        let keys = ["app", "zone"];
        let vals = ["a", "b"];
        let mut all: Vec<LabelSelector> = Vec::new();
        for mask in 0..9u32 {
            let mut kv = Vec::new();
            for (i, k) in keys.iter().enumerate() {
                match (mask / 3u32.pow(i as u32)) % 3 {
                    0 => {}
                    n => kv.push((*k, vals[n as usize - 1])),
                }
            }
            all.push(sel(&kv));
        }
        let objects: Vec<BTreeMap<String, String>> = (0..9u32)
            .map(|m| {
                let mut l = BTreeMap::new();
                for (i, k) in keys.iter().enumerate() {
                    if let n @ 1..=2 = (m / 3u32.pow(i as u32)) % 3 {
                        l.insert(k.to_string(), vals[n as usize - 1].to_string());
                    }
                }
                l
            })
            .collect();
        for x in &all {
            for y in &all {
                for z in &all {
                    let group = [x, y, z];
                    let c = Selector::from_label_selector(Some(&covering(&group))).unwrap();
                    for o in &objects {
                        let any = group.iter().any(|s| {
                            Selector::from_label_selector(Some(s)).unwrap().matches(Some(o))
                        });
                        assert!(!any || c.matches(Some(o)), "{group:?} {o:?}");
                    }
                }
            }
        }
    }
}
