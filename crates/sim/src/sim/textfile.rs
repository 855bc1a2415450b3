//! Reading a script or a manifest as editors write it: a regular file of a sane size (never
//! `/dev/zero`, a FIFO or a directory), UTF-8 with or without a byte-order mark, lines ended by
//! LF, CRLF or a lone CR (classic Mac). Errors name the file and the problem, and for bad UTF-8
//! the line and column, never a made-up line 0.
//!
//! Owns: that reading. Pure but for the one file read.

use std::io::Read;
use std::path::Path;

/// The largest script or manifest read (a 1,000-set manifest is well under 1 MiB).
pub const MAX_BYTES: u64 = 8 * 1024 * 1024;

/// Why a file cannot be read as text (without the file's name, which the caller adds).
#[derive(Debug, thiserror::Error)]
pub enum TextError {
    #[error("no such file")]
    Missing,
    #[error("permission denied")]
    Denied,
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("is a directory; expected a file")]
    Directory,
    #[error("is not a regular file (a device, FIFO or socket); expected a file")]
    NotRegular,
    #[error("is {0} bytes; at most {MAX_BYTES} are read")]
    TooLarge(u64),
    #[error("grew past {MAX_BYTES} bytes while it was read")]
    Grew,
    #[error("is not UTF-8 text: an invalid byte at line {line}, column {column}")]
    NotUtf8 { line: usize, column: usize },
}

/// Reads `path` as text.
pub fn read(path: &Path) -> Result<String, TextError> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => TextError::Missing,
        std::io::ErrorKind::PermissionDenied => TextError::Denied,
        _ => TextError::Io(e),
    })?;
    if meta.is_dir() {
        return Err(TextError::Directory);
    }
    if !meta.is_file() {
        return Err(TextError::NotRegular);
    }
    if meta.len() > MAX_BYTES {
        return Err(TextError::TooLarge(meta.len()));
    }
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    // A file growing while it is read still stops at the limit.
    file.take(MAX_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(TextError::Grew);
    }
    decode(bytes)
}

/// UTF-8 (a leading byte-order mark dropped) with every line ending made `\n`.
pub fn decode(bytes: Vec<u8>) -> Result<String, TextError> {
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..at];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let start = before.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
        let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
        TextError::NotUtf8 { line, column }
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if !text.contains('\r') {
        return Ok(text.to_string());
    }
    Ok(text.replace("\r\n", "\n").replace('\r', "\n"))
}

pub use crate::text::escape_controls;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_text_as_editors_write_it() {
        let ok = |b: &[u8]| decode(b.to_vec()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ok(b"a\r\nb\r\n"), "a\nb\n");
        assert_eq!(ok(b"a\rb\r"), "a\nb\n");
        assert_eq!(ok(b"\xef\xbb\xbfcreate web"), "create web");
        let e = decode(b"one\ntw\xffo".to_vec()).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(e, "is not UTF-8 text: an invalid byte at line 2, column 3");
    }

    #[test]
    fn refuses_what_is_not_a_sane_regular_file() {
        let dir = std::env::temp_dir();
        assert!(
            read(&dir).err().map(|e| e.to_string()).unwrap_or_default().contains("is a directory")
        );
        let missing = dir.join("ststui-no-such-file");
        assert_eq!(read(&missing).err().map(|e| e.to_string()).unwrap_or_default(), "no such file");
        #[cfg(unix)]
        assert!(
            read(Path::new("/dev/zero"))
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
                .contains("not a regular")
        );
    }
}
