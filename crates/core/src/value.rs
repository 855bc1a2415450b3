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

/// The longest duration any input may say (a flag, a scenario line, a key's prompt): 24 h, the
/// longest a plan bakes. Nothing ststui waits for, bakes or times out is longer, and times
/// computed from it never overflow.
pub const MAX_DURATION_MS: u64 = 24 * 3_600_000;

/// `250ms`, `2s`, `1m`, `1h`, or sums of them such as `1m30s`; at most [`MAX_DURATION_MS`].
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
        let long = || BadValue::new(v, "is longer than 24h", "at most 24h, e.g. 10m or 2h");
        total = n.checked_mul(factor).and_then(|x| total.checked_add(x)).ok_or_else(long)?;
        if total > MAX_DURATION_MS {
            return Err(long());
        }
    }
    Ok(total)
}

/// The most characters a reason given on the command line may have (it is written on the set).
pub const MAX_REASON: usize = 200;

/// A reason an operator gives for bypassing a guard (`--force-delete REASON`): words, not
/// blank, without control characters, at most [`MAX_REASON`] characters.
pub fn reason(v: &str) -> Result<String, BadValue> {
    let v = v.trim();
    if v.is_empty() {
        return Err(BadValue::new(
            v,
            "is blank",
            "a reason in words, e.g. \"node-3 lost, INC-42\"",
        ));
    }
    if v.chars().any(char::is_control) {
        return Err(BadValue::new(v, "has control characters", "a reason on one line"));
    }
    if v.chars().count() > MAX_REASON {
        return Err(BadValue::new(v, "is too long", format!("at most {MAX_REASON} characters")));
    }
    Ok(v.to_string())
}

/// `1,2,4`: batches of pods (a group's `--batches`), each from 1.
pub fn batches(v: &str) -> Result<Vec<u32>, BadValue> {
    v.split(',')
        .map(|w| match w.trim().parse::<u32>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(BadValue::new(w, "is not a batch of pods", "counts from 1, e.g. 1,2,4")),
        })
        .collect()
}
