//! The ControllerRevision hash (spec 2.3): FNV-1 32-bit (Go's `hash/fnv.New32`, *not* FNV-1a)
//! over the stored patch bytes, the decimal collision count appended, and the result written as
//! a decimal number with every digit replaced through `rand.SafeEncodeString`'s alphabet.
//!
//! Owns only this arithmetic; it must not know about Kubernetes objects (see `history` for that).

/// FNV-1 32-bit offset basis.
const OFFSET_BASIS: u32 = 0x811c_9dc5;
/// FNV-1 32-bit prime.
const PRIME: u32 = 0x0100_0193;

/// `k8s.io/apimachinery/pkg/util/rand`'s alphabet: no vowels, no `0`, `1`, `3` (no bad words,
/// no look-alikes).
const SAFE_ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

/// A streaming FNV-1 32-bit hasher (`hash/fnv.New32`): multiply, then XOR each byte.
#[derive(Debug, Clone, Copy)]
pub struct Fnv1_32(u32);

impl Default for Fnv1_32 {
    fn default() -> Self {
        Fnv1_32(OFFSET_BASIS)
    }
}

impl Fnv1_32 {
    /// Feeds `bytes` into the hash.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.wrapping_mul(PRIME) ^ u32::from(b);
        }
    }

    /// The hash so far (`Sum32`).
    pub fn sum32(&self) -> u32 {
        self.0
    }
}

/// FNV-1 32-bit of `bytes` in one call.
pub fn fnv1_32(bytes: &[u8]) -> u32 {
    let mut h = Fnv1_32::default();
    h.write(bytes);
    h.sum32()
}

/// `rand.SafeEncodeString`: each byte `c` of `s` becomes `alphabet[c % 27]`. Applied to a decimal
/// number this maps `0123456789` to `456789bcdf`, so the output has the same length as `s`.
#[doc(alias = "SafeEncodeString")]
pub fn safe_encode(s: &str) -> String {
    s.bytes().map(|b| char::from(SAFE_ALPHABET[usize::from(b) % SAFE_ALPHABET.len()])).collect()
}

/// `history.HashControllerRevision`: FNV-1 over `raw`, then (when `probe` is given) the decimal
/// form of the collision count, formatted as a decimal `uint32` and safe-encoded. The controller
/// always passes a probe, so `"0"` is hashed even when there has never been a collision.
#[doc(alias = "HashControllerRevision")]
pub fn hash_revision(raw: &[u8], probe: Option<i32>) -> String {
    let mut h = Fnv1_32::default();
    h.write(raw);
    if let Some(count) = probe {
        h.write(count.to_string().as_bytes());
    }
    safe_encode(&h.sum32().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1_is_not_fnv1a() {
        // Published FNV-1 32-bit test vectors.
        assert_eq!(fnv1_32(b""), 0x811c_9dc5);
        assert_eq!(fnv1_32(b"a"), 0x050c_5d7e);
        assert_eq!(fnv1_32(b"foobar"), 0x31f0_b262);
        // FNV-1a of "a" would be 0xe40c292c.
        assert_ne!(fnv1_32(b"a"), 0xe40c_292c);
    }

    #[test]
    fn safe_encoding_maps_digits_as_the_spec_table() {
        assert_eq!(safe_encode("0123456789"), "456789bcdf");
        assert_eq!(safe_encode("733928534"), "c77f6d978");
    }

    #[test]
    fn probe_changes_the_hash() {
        assert_ne!(hash_revision(b"x", Some(0)), hash_revision(b"x", Some(1)));
        assert_ne!(hash_revision(b"x", Some(0)), hash_revision(b"x", None));
        assert_eq!(hash_revision(b"x", Some(12)), {
            let mut h = Fnv1_32::default();
            h.write(b"x12");
            safe_encode(&h.sum32().to_string())
        });
    }
}
