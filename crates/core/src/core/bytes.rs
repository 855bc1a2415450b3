//! Equality of the short strings a sync compares for every pod (UIDs, names, label keys and
//! values, revision names), written inline as word compares instead of a `memcmp` call per
//! comparison: with tens of comparisons per pod the calls were a large share of a sync.
//!
//! Owns: byte comparison only. Same answers as `==` on `str`.

/// The 8 bytes of `s` at `i` as a word (`i + 8 <= s.len()`).
#[inline(always)]
fn word(s: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[i..i + 8]);
    u64::from_ne_bytes(w)
}

/// The 4 bytes of `s` at `i` as a word (`i + 4 <= s.len()`).
#[inline(always)]
fn half(s: &[u8], i: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&s[i..i + 4]);
    u32::from_ne_bytes(w)
}

/// `a == b`.
#[inline]
pub fn same(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n >= 8 {
        // Whole words, then the last 8 bytes (overlapping the previous word).
        let mut i = 0;
        while i + 8 <= n {
            if word(a, i) != word(b, i) {
                return false;
            }
            i += 8;
        }
        return i == n || word(a, n - 8) == word(b, n - 8);
    }
    if n >= 4 {
        return half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4);
    }
    a.iter().zip(b).all(|(x, y)| x == y)
}

/// `s.strip_prefix(prefix)`.
#[inline]
pub fn strip_prefix<'s>(s: &'s str, prefix: &str) -> Option<&'s str> {
    let n = prefix.len();
    let head = s.as_bytes().get(..n)?;
    if !same_bytes(head, prefix.as_bytes()) {
        return None;
    }
    s.get(n..)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_str_eq_on_every_length() {
        let base = "0123456789abcdefghijklmnopqrstuvwxyz-0123456789";
        for n in 0..base.len() {
            let a = &base[..n];
            let copy: String = a.into();
            assert!(same(a, &copy));
            assert!(!same(a, &base[..n + 1]));
            for i in 0..n {
                let mut b = a.as_bytes().to_vec();
                b[i] ^= 1;
                let b = String::from_utf8(b).unwrap();
                assert!(!same(a, &b), "{a} {b}");
            }
        }
        assert_eq!(strip_prefix("web-12", "web"), Some("-12"));
        assert_eq!(strip_prefix("web-12", "wex"), None);
        assert_eq!(strip_prefix("we", "web"), None);
        assert_eq!(strip_prefix("é-1", "é"), Some("-1"));
    }
}
