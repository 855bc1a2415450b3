//! The simulated containers' logs: what the kubelet model's app writes, rendered from the pod's
//! status (when its container started, became Ready, crashed, was asked to stop), so no line
//! is stored and a 10,000-pod simulation holds no logs at all. The same text answers the
//! served API's `pods/log` and the console's log view.
//!
//! Like the kubelet's own answers: a container that never started has no log ("is waiting to
//! start: ErrImagePull"), and `previous` needs a restart.

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use k8s_openapi::jiff::Timestamp;

/// Why a pod has no log to show, in the API server's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoLog {
    /// The container never ran (`reason`: its waiting reason, `ContainerCreating` before any).
    #[error("container \"{container}\" in pod \"{pod}\" is waiting to start: {reason}")]
    Waiting { container: String, pod: String, reason: String },
    /// `previous` asked, and the container never restarted.
    #[error("previous terminated container \"{container}\" in pod \"{pod}\" not found")]
    NoPrevious { container: String, pod: String },
    /// The pod itself is gone.
    #[error("pods \"{0}\" not found")]
    NoPod(String),
}

/// The log of `pod`'s first container (`previous`: its instance before the last restart), or
/// why there is none.
pub fn render(pod: &Pod, previous: bool) -> Result<Vec<String>, NoLog> {
    let name = pod.metadata.name.as_deref().unwrap_or_default();
    let status = pod.status.as_ref().and_then(|s| s.container_statuses.as_ref()?.first());
    let container =
        pod.spec.as_ref().and_then(|s| s.containers.first()).map_or("app", |c| c.name.as_str());
    let image =
        pod.spec.as_ref().and_then(|s| s.containers.first()?.image.as_deref()).unwrap_or_default();
    let Some(c) = status else {
        return Err(NoLog::Waiting {
            container: container.into(),
            pod: name.into(),
            reason: "ContainerCreating".into(),
        });
    };
    if previous {
        let Some(t) = c.last_state.as_ref().and_then(|s| s.terminated.as_ref()) else {
            return Err(NoLog::NoPrevious { container: container.into(), pod: name.into() });
        };
        let mut out = start_lines(t.started_at.as_ref().map(|t| t.0), image);
        out.push(crash_line(t.finished_at.as_ref().map(|t| t.0), t.exit_code));
        return Ok(out);
    }
    let state = c.state.as_ref();
    if let Some(r) = state.and_then(|s| s.running.as_ref()) {
        let mut out = start_lines(r.started_at.as_ref().map(|t| t.0), image);
        out.extend(readiness_lines(pod, c));
        if let Some(t) = pod.metadata.deletion_timestamp.as_ref() {
            out.push(format!("{} received SIGTERM: shutting down", stamp(Some(t.0))));
        }
        return Ok(out);
    }
    if let Some(t) = state.and_then(|s| s.terminated.as_ref()) {
        let mut out = start_lines(t.started_at.as_ref().map(|t| t.0), image);
        out.push(crash_line(t.finished_at.as_ref().map(|t| t.0), t.exit_code));
        return Ok(out);
    }
    // Waiting: a crash loop shows the instance that crashed; a container that never ran has
    // no log.
    let reason = state
        .and_then(|s| s.waiting.as_ref()?.reason.clone())
        .unwrap_or_else(|| "ContainerCreating".into());
    match c.last_state.as_ref().and_then(|s| s.terminated.as_ref()) {
        Some(t) => {
            let mut out = start_lines(t.started_at.as_ref().map(|t| t.0), image);
            out.push(crash_line(t.finished_at.as_ref().map(|t| t.0), t.exit_code));
            Ok(out)
        }
        None => Err(NoLog::Waiting { container: container.into(), pod: name.into(), reason }),
    }
}

fn stamp(t: Option<Timestamp>) -> String {
    t.map_or_else(|| "-".into(), |t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
}

fn start_lines(at: Option<Timestamp>, image: &str) -> Vec<String> {
    vec![
        format!("{} starting {image}", stamp(at)),
        format!("{} loaded configuration; listening on :8080", stamp(at)),
    ]
}

fn crash_line(at: Option<Timestamp>, code: i32) -> String {
    format!("{} fatal: configuration invalid: cannot serve; exiting with code {code}", stamp(at))
}

fn readiness_lines(pod: &Pod, c: &ContainerStatus) -> Vec<String> {
    let ready_at = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref()?.iter().find(|c| c.type_ == "Ready"))
        .and_then(|c| c.last_transition_time.as_ref())
        .map(|t| t.0);
    if c.ready {
        vec![format!("{} ready: serving requests", stamp(ready_at))]
    } else if ready_at.is_some() && c.started == Some(true) {
        vec![format!("{} GET /healthz 503: not ready (waiting for a dependency)", stamp(ready_at))]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubelet::failure;
    use k8s_openapi::api::core::v1::{Container, PodSpec, PodStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

    fn pod(c: ContainerStatus) -> Pod {
        Pod {
            metadata: ObjectMeta { name: Some("web-4".into()), ..Default::default() },
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "app".into(),
                    image: Some("app:bad".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            status: Some(PodStatus { container_statuses: Some(vec![c]), ..Default::default() }),
        }
    }

    #[test]
    fn a_crash_loop_shows_the_crashed_instance_and_previous_needs_a_restart() {
        let now = Time(Timestamp::from_second(1_700_000_000).unwrap());
        let mut c = failure::fresh("app", "app:bad");
        failure::running(&mut c, &now);
        let running = render(&pod(c.clone()), false).unwrap();
        assert!(running[0].ends_with("starting app:bad"), "{running:?}");
        let none = render(&pod(c.clone()), true).unwrap_err();
        assert_eq!(
            none.to_string(),
            "previous terminated container \"app\" in pod \"web-4\" not found"
        );
        failure::crashed(&mut c, &now, 10_000, "web-4", "default");
        let crashed = render(&pod(c.clone()), false).unwrap();
        assert!(crashed.last().unwrap().ends_with("exiting with code 1"), "{crashed:?}");
        assert_eq!(render(&pod(c), true).unwrap(), crashed, "previous: the instance that exited");
    }

    #[test]
    fn a_container_that_never_started_has_no_log() {
        let mut c = failure::fresh("app", "app:bad");
        failure::pull_failed(&mut c);
        assert_eq!(
            render(&pod(c), false).unwrap_err().to_string(),
            "container \"app\" in pod \"web-4\" is waiting to start: ErrImagePull"
        );
    }
}
