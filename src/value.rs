//! The values every input takes the same way (a script line, a flag, the fake kubelet's
//! ConfigMap): durations, and the error of a value that does not parse, naming the value and
//! what is expected.

/// One value that does not parse: the value, what is wrong with it, what is expected
/// (`"x" is not a count; expected a whole number ≥ 0`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{value:?} {problem}; expected {expected}")]
pub struct BadValue {
    pub value: String,
    pub problem: &'static str,
    pub expected: std::borrow::Cow<'static, str>,
}

impl BadValue {
    pub fn new(
        value: &str,
        problem: &'static str,
        expected: impl Into<std::borrow::Cow<'static, str>>,
    ) -> BadValue {
        BadValue { value: value.to_string(), problem, expected: expected.into() }
    }
}

/// `250ms`, `2s`, `1m`, `1h`, or sums of them such as `1m30s`.
pub fn duration(v: &str) -> Result<u64, BadValue> {
    let bad = || BadValue::new(v, "is not a duration", "e.g. 250ms, 2s, 1m");
    let mut total: u64 = 0;
    let mut rest = v;
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let factor = match &rest[..unit_len] {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        total = n.checked_mul(factor).and_then(|x| total.checked_add(x)).ok_or_else(bad)?;
    }
    Ok(total)
}
