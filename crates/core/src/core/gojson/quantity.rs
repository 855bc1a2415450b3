//! `resource.Quantity` as Go re-marshals it (`ParseQuantity` then `MarshalJSON`): a parsed
//! quantity keeps its original text only when that text is already canonical, otherwise it is
//! written in canonical form (`1000m` → `1`, `1024Mi` → `1Gi`, `1.5Gi` → `1536Mi`, `0.5` →
//! `500m`, `1000` → `1k`). Values finer than a nano-unit are rounded up (away from zero).
//!
//! Values outside what is modelled here (more than 38 significant digits, suffixes beyond
//! `E`/`Ei`) are left untouched: the caller keeps the original string.

/// A parsed quantity: `±digits × 10^exp10 × 2^exp2` with the suffix family it was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

struct Parsed<'a> {
    negative: bool,
    /// Integer digits with leading zeros stripped (Go strips them).
    num: &'a str,
    /// Fraction digits.
    denom: &'a str,
    format: Format,
    /// The suffix's power: of 10 for decimal formats, of 2 for binary.
    exponent: i32,
}

fn parse(s: &str) -> Option<Parsed<'_>> {
    let (negative, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let digits_end = rest.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(digits_end);
    let (int_part, frac) = match number.split_once('.') {
        Some((i, f)) if !f.contains('.') => (i, f),
        Some(_) => return None,
        None => (number, ""),
    };
    if int_part.is_empty() && frac.is_empty() {
        return None;
    }
    let num = int_part.trim_start_matches('0');
    let (format, exponent) = match suffix {
        "" => (Format::DecimalSi, 0),
        "n" => (Format::DecimalSi, -9),
        "u" => (Format::DecimalSi, -6),
        "m" => (Format::DecimalSi, -3),
        "k" => (Format::DecimalSi, 3),
        "M" => (Format::DecimalSi, 6),
        "G" => (Format::DecimalSi, 9),
        "T" => (Format::DecimalSi, 12),
        "P" => (Format::DecimalSi, 15),
        "E" => (Format::DecimalSi, 18),
        "Ki" => (Format::BinarySi, 10),
        "Mi" => (Format::BinarySi, 20),
        "Gi" => (Format::BinarySi, 30),
        "Ti" => (Format::BinarySi, 40),
        "Pi" => (Format::BinarySi, 50),
        "Ei" => (Format::BinarySi, 60),
        other => {
            let exp = other.strip_prefix(['e', 'E'])?;
            (Format::DecimalExponent, exp.parse::<i32>().ok()?)
        }
    };
    Some(Parsed { negative, num, denom: frac, format, exponent })
}

/// Go keeps the original string when the parsed value is already canonical (the fast path of
/// `ParseQuantity`).
fn keeps_original(p: &Parsed<'_>) -> bool {
    let num = if p.num.is_empty() { "0" } else { p.num };
    let len = (num.len() + p.denom.len()) as i32;
    let shifted = format!("{num}{}", p.denom);
    let Ok(value) = shifted.parse::<i64>() else { return false };
    match p.format {
        Format::DecimalSi | Format::DecimalExponent => {
            let scale = p.exponent - p.denom.len() as i32;
            18 - len >= 0
                && scale >= -9
                && scale % 3 == 0
                && !shifted.ends_with("000")
                && !shifted.starts_with('0')
        }
        Format::BinarySi => {
            let precision = 15 - num.len() as i32 - (p.exponent as f32 * 3.0 / 10.0) as i32 - 1;
            p.denom.is_empty()
                && precision >= 0
                && value.checked_mul(1i64 << p.exponent).is_some()
                && p.exponent % 10 == 0
                && value & 0x07 != 0
        }
    }
}

/// The exact value as `mantissa × 10^exp` (decimal exponent), rounded up to nano-units.
fn decimal_value(p: &Parsed<'_>) -> Option<(i128, i32)> {
    let mut mantissa: i128 = 0;
    for b in p.num.bytes().chain(p.denom.bytes()) {
        mantissa = mantissa.checked_mul(10)?.checked_add(i128::from(b - b'0'))?;
    }
    let mut exp = -(p.denom.len() as i32);
    match p.format {
        Format::BinarySi => {
            mantissa = mantissa.checked_mul(1i128.checked_shl(p.exponent as u32)?)?
        }
        _ => exp = exp.checked_add(p.exponent)?,
    }
    if exp < -9 {
        // Round up (away from zero) to nano precision, as ParseQuantity does.
        let divisor = 10i128.checked_pow((-9 - exp) as u32)?;
        mantissa = (mantissa + divisor - 1) / divisor;
        exp = -9;
    }
    Some((if p.negative { -mantissa } else { mantissa }, exp))
}

fn decimal_suffix(exp: i32, format: Format) -> Option<String> {
    if format == Format::DecimalExponent {
        return Some(if exp == 0 { String::new() } else { format!("e{exp}") });
    }
    let s = match exp {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        0 => "",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => return None,
    };
    Some(s.to_string())
}

/// `CanonicalizeBytes` for a value `mantissa × 10^exp` in `format`.
fn canonical(mut mantissa: i128, mut exp: i32, mut format: Format) -> Option<String> {
    if mantissa == 0 {
        return Some("0".into());
    }
    if format == Format::BinarySi {
        let integer = if exp >= 0 {
            mantissa.checked_mul(10i128.checked_pow(exp as u32)?)
        } else {
            let div = 10i128.checked_pow((-exp) as u32)?;
            (mantissa % div == 0).then(|| mantissa / div)
        };
        match integer {
            Some(v) if v.abs() >= 1024 => {
                let (mut v, mut times) = (v, 0u32);
                while v % 1024 == 0 {
                    v /= 1024;
                    times += 1;
                }
                let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"].get(times as usize)?;
                return Some(format!("{v}{suffix}"));
            }
            _ => format = Format::DecimalSi,
        }
    }
    while mantissa % 10 == 0 {
        mantissa /= 10;
        exp += 1;
    }
    while exp % 3 != 0 {
        mantissa = mantissa.checked_mul(10)?;
        exp -= 1;
    }
    Some(format!("{mantissa}{}", decimal_suffix(exp, format)?))
}

/// The string Go's `Quantity.MarshalJSON` writes for a quantity parsed from `s`, or `None` when
/// `s` is not a quantity this module models (the caller keeps it as it is).
pub fn canonical_quantity(s: &str) -> Option<String> {
    let p = parse(s)?;
    if keeps_original(&p) {
        return Some(s.to_string());
    }
    let (mantissa, exp) = decimal_value(&p)?;
    canonical(mantissa, exp, p.format)
}

/// `SetDefaults_ResourceList`: round a quantity up to milli-units (`RoundUp(-3)`). Returns the
/// canonical text when rounding changed the value, else the original canonical form.
pub fn round_up_milli(s: &str) -> Option<String> {
    let p = parse(s)?;
    let (mut mantissa, mut exp) = decimal_value(&p)?;
    if exp >= -3 {
        return canonical_quantity(s);
    }
    let divisor = 10i128.checked_pow((-3 - exp) as u32)?;
    let rounded = (mantissa.abs() + divisor - 1) / divisor;
    mantissa = if mantissa < 0 { -rounded } else { rounded };
    exp = -3;
    canonical(mantissa, exp, p.format)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> String {
        canonical_quantity(s).unwrap_or_else(|| format!("<{s}>"))
    }

    #[test]
    fn canonical_forms_match_go() {
        assert_eq!(c("1000m"), "1");
        assert_eq!(c("1500m"), "1500m");
        assert_eq!(c("0.5"), "500m");
        assert_eq!(c("1.0"), "1");
        assert_eq!(c("1000"), "1k");
        assert_eq!(c("100M"), "100M");
        assert_eq!(c("1e3"), "1e3");
        assert_eq!(c("1.5k"), "1500");
        assert_eq!(c("1Gi"), "1Gi");
        assert_eq!(c("1024Mi"), "1Gi");
        assert_eq!(c("1.5Gi"), "1536Mi");
        assert_eq!(c("500Mi"), "500Mi");
        assert_eq!(c("0.5Ki"), "512");
        assert_eq!(c("0"), "0");
        assert_eq!(c("0m"), "0");
        assert_eq!(c("0.0000000001"), "1n");
        assert_eq!(c("250m"), "250m");
        assert_eq!(c("2"), "2");
        assert_eq!(c("-1500m"), "-1500m");
        assert!(canonical_quantity("abc").is_none());
        assert!(canonical_quantity("1Zi").is_none());
    }

    #[test]
    fn round_up_to_milli() {
        assert_eq!(round_up_milli("0.0001").as_deref(), Some("1m"));
        assert_eq!(round_up_milli("1.0001").as_deref(), Some("1001m"));
        assert_eq!(round_up_milli("100m").as_deref(), Some("100m"));
        assert_eq!(round_up_milli("1Gi").as_deref(), Some("1Gi"));
    }
}
