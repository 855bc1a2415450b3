//! The processes ststui starts for the operator — a plan's checks and `cmd:` gates — each in a
//! process group of its own, so that a timeout kills everything it started (`sh -c 'a; b'`
//! leaves `b` running when only `sh` is killed), and so that none outlives ststui: every group
//! still running is killed when ststui ends, on its way out or on SIGINT, SIGTERM or SIGHUP
//! (`cluster::credential::kill_all`, which the verbs' exit path and signal reaper call).
//!
//! Owns: the registry of those groups. Must not: decide when a process has run long enough.

use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, PoisonError};

/// Whether this process ends itself on SIGINT or SIGTERM (a plan's runner: it says where it
/// stopped and gives its lease back), and the signal asked, once asked (0: none).
static GRACEFUL: AtomicBool = AtomicBool::new(false);
static ASKED: AtomicI32 = AtomicI32::new(0);

/// This process ends itself when asked by SIGINT or SIGTERM ([`interrupted`] says so); a
/// second signal ends it at once.
pub fn graceful() {
    GRACEFUL.store(true, Ordering::SeqCst);
}

/// The signal that asked this process to end, if one did (and it ends itself).
pub fn interrupted() -> Option<i32> {
    Some(ASKED.load(Ordering::SeqCst)).filter(|s| *s != 0)
}

/// A signal arrived: whether the process ends itself (the first SIGINT or SIGTERM of a
/// graceful process) instead of at once.
pub fn asked(signal: i32) -> bool {
    let ends_itself = signal == libc::SIGINT || signal == libc::SIGTERM;
    if !GRACEFUL.load(Ordering::SeqCst) || !ends_itself {
        return false;
    }
    ASKED.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst).is_ok()
}

/// "SIGTERM", "SIGINT", "signal 1".
pub fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        n => format!("signal {n}"),
    }
}

/// The process groups running now (each the id of the process that leads it).
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Whether ststui is ending ([`kill_all`] ran): nothing starts any more. Read and written under
/// [`GROUPS`]' lock, so a group either is registered before the kill or never starts.
static ENDING: AtomicBool = AtomicBool::new(false);

/// Starts `command` as the leader of a new process group, registered until [`ended`]; refused
/// once ststui is ending (a check started on another thread as it quits would outlive it).
pub fn spawn(command: &mut Command) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt as _;
    let mut groups = GROUPS.lock().unwrap_or_else(PoisonError::into_inner);
    if ENDING.load(Ordering::SeqCst) {
        return Err(std::io::Error::other("not started: ststui is ending"));
    }
    let child = command.process_group(0).spawn()?;
    if let Ok(pid) = i32::try_from(child.id()) {
        groups.push(pid);
    }
    Ok(child)
}

/// The group of `child` is over (waited for): no longer killed at the end.
pub fn ended(child: &Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        GROUPS.lock().unwrap_or_else(PoisonError::into_inner).retain(|p| *p != pid);
    }
}

/// Kills `child`'s whole group (SIGKILL).
pub fn kill(child: &Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        kill_group(pid);
    }
}

/// Kills every group still running.
pub fn kill_all() {
    let mut groups = GROUPS.lock().unwrap_or_else(PoisonError::into_inner);
    ENDING.store(true, Ordering::SeqCst);
    for pid in groups.drain(..) {
        kill_group(pid);
    }
}

fn kill_group(pid: i32) {
    if pid > 1 {
        // SAFETY: kill(2) on a process group we started; no memory is touched.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alive(pid: i32) -> bool {
        // SAFETY: signal 0 only asks whether the process exists.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    #[test]
    fn killing_a_group_kills_what_its_shell_started() {
        let mut c = Command::new("sh");
        c.arg("-c").arg("sleep 30 & echo $!; wait").stdout(std::process::Stdio::piped());
        let mut child = spawn(&mut c).unwrap();
        let mut line = String::new();
        use std::io::BufRead as _;
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let sleeper: i32 = line.trim().parse().unwrap();
        assert!(alive(sleeper));
        kill(&child);
        let _ = child.wait();
        ended(&child);
        // The sleeper was the shell's child, in its group: gone (reaped by init, so poll).
        let gone = (0..100).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(20));
            !alive(sleeper)
        });
        assert!(gone, "sleep {sleeper} outlived its group");
    }
}
