//! The syntax of names, label keys and label values, with upstream's messages
//! (`k8s.io/apimachinery/pkg/util/validation`: `IsDNS1123Label`, `IsQualifiedName`,
//! `IsValidLabelValue`), for the validation beside it.
//!
//! Owns: those three rules and their words. Pure.

/// Upstream `IsDNS1123Label` messages.
pub fn dns1123_label(s: &str) -> Vec<String> {
    let mut msgs = Vec::new();
    if s.len() > 63 {
        msgs.push("must be no more than 63 characters".to_string());
    }
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let ok = !b.is_empty()
        && b.first().is_some_and(alnum)
        && b.last().is_some_and(alnum)
        && b.iter().all(|c| alnum(c) || *c == b'-');
    if !ok {
        msgs.push(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \
             '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or \
             '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
                .to_string(),
        );
    }
    msgs
}

fn name_part_ok(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// Upstream `IsQualifiedName` (label keys), the common messages.
pub(crate) fn qualified_name(key: &str) -> Vec<String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let mut msgs = Vec::new();
    if let Some(p) = prefix {
        let subdomain_ok = !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|l| dns1123_label(l).is_empty() && l.len() <= 63);
        if !subdomain_ok {
            msgs.push(
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case \
                 alphanumeric characters, '-' or '.', and must start and end with an alphanumeric \
                 character (e.g. 'example.com', regex used for validation is \
                 '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                    .to_string(),
            );
        }
    }
    if name.is_empty() {
        msgs.push("name part must be non-empty".to_string());
    } else {
        if name.len() > 63 {
            msgs.push("name part must be no more than 63 characters".to_string());
        }
        if !name_part_ok(name) {
            msgs.push(
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must \
                 start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
                 '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
                    .to_string(),
            );
        }
    }
    msgs
}

/// Upstream `IsValidLabelValue`.
pub(crate) fn label_value(v: &str) -> Vec<String> {
    let mut msgs = Vec::new();
    if v.len() > 63 {
        msgs.push("must be no more than 63 characters".to_string());
    }
    if !v.is_empty() && !name_part_ok(v) {
        msgs.push(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', \
             '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  \
             or 'my_value',  or '12345', regex used for validation is \
             '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
                .to_string(),
        );
    }
    msgs
}
