//! Where the log goes and how it is opened. The default is a per-user place, never a shared
//! one: `$XDG_STATE_HOME/ststui/ststui.log` (an absolute `XDG_STATE_HOME` only, as the XDG
//! spec says), else `~/.local/state/ststui/ststui.log`, else `$XDG_RUNTIME_DIR/ststui/`, and only
//! without any of those `$TMPDIR/ststui-UID/`. The directory is created 0700 and must be a real
//! directory of ours that nobody else may write to; the file is created 0600, and a symlink in
//! its place is refused (`O_NOFOLLOW`): someone who planted one in a shared directory must not
//! make ststui append to the file it points at. A `--log-file` the operator names is opened as
//! named (a symlink there is their choice), also created 0600.
//!
//! Written by hand: the XDG base-directory crates find the directory but neither create it
//! privately nor check who owns it, and the checks are the point here.
//!
//! Owns: the log's path and opening it. Must not: write to it (tracing does).

use std::ffi::OsString;
use std::fs::{DirBuilder, File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Why the log could not be opened: names the path and what is expected.
#[derive(Debug, thiserror::Error)]
pub enum LogFileError {
    #[error("cannot create the log directory {0}: {1}; or pass --log-file FILE")]
    Dir(PathBuf, #[source] std::io::Error),
    #[error(
        "the log directory {0} is {1}: expected a directory of this user's that only it may \
         write to (or pass --log-file FILE)"
    )]
    UnsafeDir(PathBuf, &'static str),
    #[error(
        "the log file {0} is a symlink: refusing to follow it; remove it or pass --log-file FILE"
    )]
    Symlink(PathBuf),
    #[error("cannot open the log file {0}: {1}; pass --log-file FILE")]
    Open(PathBuf, #[source] std::io::Error),
    #[error("the log file {0} belongs to another user: pass --log-file FILE")]
    NotOurs(PathBuf),
}

impl LogFileError {
    /// Whether the log's place looks tampered with (a symlink, someone else's directory or
    /// file), as against merely unwritable.
    pub fn tampered(&self) -> bool {
        matches!(self, Self::UnsafeDir(..) | Self::Symlink(_) | Self::NotOurs(_))
    }
}

/// The default log file, read from `env` (the process environment in use): see the module doc.
pub fn default_path(env: impl Fn(&str) -> Option<OsString>, uid: u32) -> PathBuf {
    let absolute = |k: &str| env(k).map(PathBuf::from).filter(|p| p.is_absolute());
    let dir = absolute("XDG_STATE_HOME")
        .map(|d| d.join("ststui"))
        .or_else(|| absolute("HOME").map(|h| h.join(".local/state/ststui")))
        .or_else(|| absolute("XDG_RUNTIME_DIR").map(|d| d.join("ststui")))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("ststui-{uid}")));
    dir.join("ststui.log")
}

/// This process's user.
pub fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// Opens `named` (created 0600, followed as named), or the default log (`path`, from
/// [`default_path`]) with its directory created private and checked, a symlink refused.
pub fn open(named: Option<&Path>, default: &Path) -> Result<File, LogFileError> {
    if let Some(path) = named {
        return OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| LogFileError::Open(path.to_path_buf(), e));
    }
    let me = uid();
    if let Some(dir) = default.parent() {
        private_dir(dir, me)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(default)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => LogFileError::Symlink(default.to_path_buf()),
            _ => LogFileError::Open(default.to_path_buf(), e),
        })?;
    let meta = file.metadata().map_err(|e| LogFileError::Open(default.to_path_buf(), e))?;
    if meta.uid() != me {
        return Err(LogFileError::NotOurs(default.to_path_buf()));
    }
    // A file left by an older ststui (created 0644) is made private too.
    if meta.mode() & 0o077 != 0 {
        let _ = file.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
    Ok(file)
}

/// `dir` exists (created 0700 where missing), is a directory (not a symlink to one), belongs
/// to `uid` and is writable by nobody else.
fn private_dir(dir: &Path, uid: u32) -> Result<(), LogFileError> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| LogFileError::Dir(dir.to_path_buf(), e))?;
    let meta =
        std::fs::symlink_metadata(dir).map_err(|e| LogFileError::Dir(dir.to_path_buf(), e))?;
    let unsafe_as = if meta.file_type().is_symlink() {
        Some("a symlink")
    } else if !meta.is_dir() {
        Some("not a directory")
    } else if meta.uid() != uid {
        Some("another user's")
    } else if meta.mode() & 0o022 != 0 {
        Some("writable by others")
    } else {
        None
    };
    match unsafe_as {
        Some(why) => Err(LogFileError::UnsafeDir(dir.to_path_buf(), why)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ststui-logfile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn the_default_is_per_user_and_never_the_shared_temp_file() {
        let p = |pairs: &[(&str, &str)]| default_path(env(pairs), 1000);
        assert_eq!(
            p(&[("XDG_STATE_HOME", "/s"), ("HOME", "/h")]),
            Path::new("/s/ststui/ststui.log")
        );
        assert_eq!(
            p(&[("XDG_STATE_HOME", "rel"), ("HOME", "/h")]),
            Path::new("/h/.local/state/ststui/ststui.log"),
            "a relative XDG_STATE_HOME is ignored, as the spec says"
        );
        assert_eq!(
            p(&[("XDG_RUNTIME_DIR", "/run/user/1000")]),
            Path::new("/run/user/1000/ststui/ststui.log")
        );
        let bare = p(&[]);
        assert!(bare.ends_with("ststui-1000/ststui.log"), "{}", bare.display());
    }

    #[test]
    fn the_default_file_is_private_and_its_directory_too() {
        let d = scratch("private");
        let log = d.join("state/ststui/ststui.log");
        open(None, &log).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o777;
        assert_eq!(mode(&log), 0o600);
        assert_eq!(mode(log.parent().unwrap()), 0o700);
        // A file an older ststui left world-readable is made private.
        std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
        open(None, &log).unwrap();
        assert_eq!(mode(&log), 0o600);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_planted_symlink_is_refused_and_its_target_untouched() {
        let d = scratch("symlink");
        let target = d.join("victim");
        std::fs::write(&target, "theirs\n").unwrap();
        let dir = d.join("ststui");
        DirBuilder::new().mode(0o700).create(&dir).unwrap();
        let log = dir.join("ststui.log");
        std::os::unix::fs::symlink(&target, &log).unwrap();
        let err = open(None, &log).unwrap_err();
        assert!(matches!(err, LogFileError::Symlink(_)), "{err}");
        assert!(err.to_string().contains("refusing to follow"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs\n");
        // A symlinked or shared directory is refused too, naming why.
        let linked = d.join("linked");
        std::os::unix::fs::symlink(&dir, &linked).unwrap();
        let err = open(None, &linked.join("ststui.log")).unwrap_err();
        assert!(err.to_string().contains("is a symlink: expected a directory"), "{err}");
        let shared = d.join("shared");
        DirBuilder::new().mode(0o777).create(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = open(None, &shared.join("ststui.log")).unwrap_err();
        assert!(err.to_string().contains("writable by others"), "{err}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_named_file_is_created_private() {
        let d = scratch("named");
        let log = d.join("mine.log");
        open(Some(&log), Path::new("/nonexistent/unused")).unwrap();
        assert_eq!(std::fs::metadata(&log).unwrap().mode() & 0o777, 0o600);
        let _ = std::fs::remove_dir_all(&d);
    }
}
