//! How a broken image fails, in a kubelet's words: the container states, reasons and messages
//! a real kubelet reports (kubelet's `images` and `kuberuntime` packages), shared by the
//! simulator's kubelet model, its event recorder and the control plane's fake kubelet, so every
//! backend tells an operator the same story.
//!
//! - `probe` (the default): the container runs, its readiness probe fails (`Unhealthy`).
//! - `pull`: the image cannot be pulled; the pod stays Pending, its container waiting with
//!   `ErrImagePull`, then `ImagePullBackOff` until the next attempt.
//! - `crash`: the container starts, exits with code 1 when it would have become Ready, and waits
//!   in `CrashLoopBackOff`; each restart counts.
//!
//! Retries back off as the kubelet's do: 10 s, doubling, at most 5 minutes.

use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting,
    ContainerStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

pub use crate::backend::{FAILURE_WORDS, ImageFailure as Failure};

/// The first retry's delay (ms).
pub const FIRST_BACKOFF_MS: u64 = 10_000;
/// The longest delay between retries (ms).
pub const MAX_BACKOFF_MS: u64 = 300_000;
/// ErrImagePull → ImagePullBackOff (ms): the kubelet's next sync of the pod.
pub const PULL_TO_BACKOFF_MS: u64 = 1_000;

/// The delay after `ms`: doubled, at most [`MAX_BACKOFF_MS`].
pub fn next_backoff(ms: u64) -> u64 {
    (ms.max(FIRST_BACKOFF_MS / 2) * 2).min(MAX_BACKOFF_MS)
}

/// The exit code of a crashing container.
pub const CRASH_EXIT_CODE: i32 = 1;

/// The message of a failed pull (containerd's words for a missing image).
pub fn pull_error(image: &str) -> String {
    format!(
        "failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": \
         not found"
    )
}

/// The readiness probe's failure, as `Unhealthy` says it.
pub const PROBE_FAILED: &str = "Readiness probe failed: HTTP probe failed with statuscode: 503";

/// The container a kubelet's Event is about.
pub struct Container<'a> {
    pub pod: &'a str,
    pub ns: &'a str,
    pub name: &'a str,
    pub image: &'a str,
    pub uid: &'a str,
}

/// One Event a kubelet records: its reason, message and whether it is a Warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub reason: &'static str,
    pub message: String,
    pub warning: bool,
}

fn said(reason: &'static str, message: String, warning: bool) -> Said {
    Said { reason, message, warning }
}

/// The Events a kubelet records for a timeline `kubelet` event (`running`, `unready`,
/// `failed`, `probe-failed`, `pull-failed`, `pull-back-off`, `crashed`), in its words: the
/// simulator's recorder and the fake kubelet write the same.
pub fn kubelet_events(event: &str, c: &Container<'_>) -> Vec<Said> {
    let (image, name) = (c.image, c.name);
    match event {
        "probe-failed" => vec![said("Unhealthy", PROBE_FAILED.into(), true)],
        "pull-failed" => vec![
            said("Pulling", format!("Pulling image \"{image}\""), false),
            said(
                "Failed",
                format!("Failed to pull image \"{image}\": {}", pull_error(image)),
                true,
            ),
            said("Failed", "Error: ErrImagePull".into(), true),
        ],
        "pull-back-off" => vec![
            said("BackOff", format!("Back-off pulling image \"{image}\""), false),
            said("Failed", "Error: ImagePullBackOff".into(), true),
        ],
        "crashed" => vec![said(
            "BackOff",
            format!(
                "Back-off restarting failed container {name} in pod {}_{}({})",
                c.pod, c.ns, c.uid
            ),
            true,
        )],
        "running" => vec![said("Started", format!("Started container {name}"), false)],
        "unready" => {
            vec![said("Unhealthy", "Readiness probe failed: the pod was made unready".into(), true)]
        }
        "failed" => vec![said("Failed", format!("Container {name} failed"), true)],
        _ => Vec::new(),
    }
}

/// A container waiting with `reason` and `message`.
pub fn waiting(status: &mut ContainerStatus, reason: &str, message: String) {
    status.ready = false;
    status.started = Some(false);
    status.state = Some(ContainerState {
        waiting: Some(ContainerStateWaiting {
            reason: Some(reason.into()),
            message: Some(message),
        }),
        ..Default::default()
    });
}

/// A container's status before anything ran: waiting (`ContainerCreating`'s place).
pub fn fresh(name: &str, image: &str) -> ContainerStatus {
    ContainerStatus { name: name.into(), image: image.into(), ..Default::default() }
}

/// A failed pull: waiting with `ErrImagePull`.
pub fn pull_failed(status: &mut ContainerStatus) {
    let message = pull_error(&status.image);
    waiting(status, "ErrImagePull", message);
}

/// Between attempts: waiting with `ImagePullBackOff`.
pub fn pull_backing_off(status: &mut ContainerStatus) {
    let message = format!("Back-off pulling image \"{}\"", status.image);
    waiting(status, "ImagePullBackOff", message);
}

/// The container exited: its last state is the termination, it waits in `CrashLoopBackOff`
/// for `backoff_ms`, and the restart counts.
pub fn crashed(status: &mut ContainerStatus, now: &Time, backoff_ms: u64, pod: &str, ns: &str) {
    let started = status.state.as_ref().and_then(|s| s.running.as_ref()?.started_at.clone());
    status.last_state = Some(ContainerState {
        terminated: Some(ContainerStateTerminated {
            exit_code: CRASH_EXIT_CODE,
            reason: Some("Error".into()),
            started_at: started,
            finished_at: Some(now.clone()),
            ..Default::default()
        }),
        ..Default::default()
    });
    status.restart_count += 1;
    let message = format!(
        "back-off {} restarting failed container={} pod={pod}_{ns}",
        words_of_ms(backoff_ms),
        status.name
    );
    waiting(status, "CrashLoopBackOff", message);
}

/// The container runs (again), not Ready.
pub fn running(status: &mut ContainerStatus, now: &Time) {
    status.ready = false;
    status.started = Some(true);
    status.state = Some(ContainerState {
        running: Some(ContainerStateRunning { started_at: Some(now.clone()) }),
        ..Default::default()
    });
}

/// `10s`, `5m0s`: Go's duration words, as the kubelet's message prints them.
fn words_of_ms(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 60 { format!("{}m{}s", s / 60, s % 60) } else { format!("{s}s") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_off_doubles_from_ten_seconds_to_five_minutes() {
        let mut ms = 0;
        let mut seen = Vec::new();
        for _ in 0..7 {
            ms = next_backoff(ms);
            seen.push(ms / 1000);
        }
        assert_eq!(seen, [10, 20, 40, 80, 160, 300, 300]);
    }

    #[test]
    fn a_crash_keeps_the_termination_counts_the_restart_and_waits() {
        let now = Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
        let mut c = fresh("app", "app:bad");
        running(&mut c, &now);
        crashed(&mut c, &now, 20_000, "web-3", "default");
        assert_eq!(c.restart_count, 1);
        let last = c.last_state.as_ref().and_then(|s| s.terminated.as_ref()).unwrap();
        assert_eq!((last.exit_code, last.reason.as_deref()), (1, Some("Error")));
        let w = c.state.as_ref().and_then(|s| s.waiting.as_ref()).unwrap();
        assert_eq!(w.reason.as_deref(), Some("CrashLoopBackOff"));
        assert_eq!(
            w.message.as_deref(),
            Some("back-off 20s restarting failed container=app pod=web-3_default")
        );
        assert!(!c.ready);
    }

    #[test]
    fn failures_parse_and_print_their_words_and_name_a_bad_one() {
        for f in [Failure::Probe, Failure::Pull, Failure::Crash] {
            assert_eq!(f.to_string().parse::<Failure>(), Ok(f));
        }
        let e = "oom".parse::<Failure>().unwrap_err().to_string();
        assert!(e.contains("\"oom\"") && e.contains(FAILURE_WORDS), "{e}");
    }
}
