//! Why a pod is not Ready, in words, from what its status says, as `kubectl describe pod` shows
//! it: scheduling (PodScheduled False: Unschedulable and the scheduler's message), an init
//! container that has not completed, each container's waiting or terminated reason
//! (ImagePullBackOff, ErrImagePull, CreateContainerConfigError, CrashLoopBackOff with the last
//! exit code or OOMKilled and the restarts), a container running but not ready (its readiness
//! probe failing: the kubelet marks a running container unready for nothing else), or the
//! Ready condition's own reason (a readiness gate).
//!
//! [`reason`] is the short form the controller pane appends to its blocker ("web-4 not Ready
//! (CrashLoopBackOff: exit 1, 5 restarts)"); [`containers`] the detail pane's lines, one per
//! container with its state and last termination.
//!
//! Owns: these words. Must not: read anything but the pod (events are the timeline's).

use k8s_openapi::api::core::v1::{ContainerState, ContainerStatus, Pod, PodCondition};

/// A message cut to `max` characters (an ellipsis marks the cut).
fn cut(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

fn condition<'a>(pod: &'a Pod, type_: &str) -> Option<&'a PodCondition> {
    pod.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

fn statuses(pod: &Pod, init: bool) -> &[ContainerStatus] {
    let s = pod.status.as_ref();
    let list = if init {
        s.and_then(|s| s.init_container_statuses.as_ref())
    } else {
        s.and_then(|s| s.container_statuses.as_ref())
    };
    list.map_or(&[], Vec::as_slice)
}

/// The last termination's few words: `exit 1`, `OOMKilled`, `OOMKilled (exit 137)`.
fn last_exit(c: &ContainerStatus) -> Option<String> {
    let t = c.last_state.as_ref()?.terminated.as_ref()?;
    Some(match t.reason.as_deref() {
        Some("OOMKilled") => format!("OOMKilled (exit {})", t.exit_code),
        _ => format!("exit {}", t.exit_code),
    })
}

fn restarts_words(n: i32) -> String {
    if n == 1 { "1 restart".into() } else { format!("{n} restarts") }
}

/// What keeps one container from being ready, if anything: short.
fn container_reason(c: &ContainerStatus) -> Option<String> {
    let state = c.state.as_ref();
    if let Some(w) = state.and_then(|s| s.waiting.as_ref()) {
        let reason = w.reason.as_deref().unwrap_or("waiting");
        return Some(match (reason, last_exit(c)) {
            ("CrashLoopBackOff", Some(exit)) => {
                format!("CrashLoopBackOff: {exit}, {}", restarts_words(c.restart_count))
            }
            ("CrashLoopBackOff", None) => {
                format!("CrashLoopBackOff, {}", restarts_words(c.restart_count))
            }
            (r, _) => r.to_string(),
        });
    }
    if let Some(t) = state.and_then(|s| s.terminated.as_ref()) {
        let reason = t.reason.as_deref().unwrap_or("terminated");
        return Some(format!("{reason}: exit {}", t.exit_code));
    }
    if state.and_then(|s| s.running.as_ref()).is_some() && !c.ready {
        return Some(match (c.restart_count, last_exit(c)) {
            // Not "failing": a pod just started has not passed its probe yet either.
            (0, _) => "readiness probe not passing".into(),
            (n, Some(exit)) => {
                format!("readiness probe not passing, {}, last {exit}", restarts_words(n))
            }
            (n, None) => format!("readiness probe not passing, {}", restarts_words(n)),
        });
    }
    None
}

/// Why `pod` is not Ready, in a few words; `None` when it is Ready or its status says nothing.
pub fn reason(pod: &Pod) -> Option<String> {
    if condition(pod, "Ready").is_some_and(|c| c.status == "True") {
        return None;
    }
    if let Some(c) = condition(pod, "PodScheduled").filter(|c| c.status == "False") {
        let why = c.reason.as_deref().unwrap_or("not scheduled");
        return Some(match c.message.as_deref() {
            Some(m) if !m.is_empty() => format!("{why}: {}", cut(m, 80)),
            _ => why.to_string(),
        });
    }
    for c in statuses(pod, true) {
        let done =
            c.state.as_ref().and_then(|s| s.terminated.as_ref()).is_some_and(|t| t.exit_code == 0);
        if !done && let Some(r) = container_reason(c).or_else(|| Some("running".into())) {
            return Some(format!("init container {}: {r}", c.name));
        }
    }
    let many = statuses(pod, false).len() > 1;
    for c in statuses(pod, false) {
        if let Some(r) = container_reason(c) {
            return Some(if many { format!("{}: {r}", c.name) } else { r });
        }
    }
    let ready = condition(pod, "Ready")?;
    match ready.reason.as_deref() {
        Some("ContainersNotReady") | None => None,
        Some(r) => Some(match ready.message.as_deref() {
            Some(m) if !m.is_empty() => format!("{r}: {}", cut(m, 80)),
            _ => r.to_string(),
        }),
    }
}

/// The detail pane's lines of the pod's containers (init containers first): `(name, words)`,
/// its state with reason and message, then (indented) its last termination.
pub fn containers(pod: &Pod) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let all = statuses(pod, true).iter().map(|c| (true, c));
    for (init, c) in all.chain(statuses(pod, false).iter().map(|c| (false, c))) {
        let name = if init { format!("init {}", c.name) } else { c.name.clone() };
        out.push((name, state_words(c.state.as_ref(), c.ready, c.restart_count)));
        if let Some(t) = c.last_state.as_ref().and_then(|s| s.terminated.as_ref()) {
            let reason = t.reason.as_deref().unwrap_or("terminated");
            let msg =
                t.message.as_deref().map(|m| format!(" — {}", cut(m, 60))).unwrap_or_default();
            out.push(("  last".into(), format!("{reason}, exit {}{msg}", t.exit_code)));
        }
    }
    out
}

fn state_words(state: Option<&ContainerState>, ready: bool, restarts: i32) -> String {
    let restarts = match restarts {
        0 => String::new(),
        n => format!(", {}", restarts_words(n)),
    };
    let Some(state) = state else { return format!("no state yet{restarts}") };
    if let Some(w) = &state.waiting {
        let reason = w.reason.as_deref().unwrap_or("waiting");
        let msg = w.message.as_deref().map(|m| format!(" — {}", cut(m, 60))).unwrap_or_default();
        return format!("waiting: {reason}{msg}{restarts}");
    }
    if let Some(t) = &state.terminated {
        let reason = t.reason.as_deref().unwrap_or("terminated");
        return format!("terminated: {reason}, exit {}{restarts}", t.exit_code);
    }
    let ready = if ready { "ready" } else { "not ready" };
    format!("running, {ready}{restarts}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting, PodStatus,
    };

    fn pod(containers: Vec<ContainerStatus>, conditions: Vec<PodCondition>) -> Pod {
        Pod {
            status: Some(PodStatus {
                container_statuses: Some(containers),
                conditions: Some(conditions),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn cond(
        type_: &str,
        status: &str,
        reason: Option<&str>,
        message: Option<&str>,
    ) -> PodCondition {
        PodCondition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.map(Into::into),
            message: message.map(Into::into),
            ..Default::default()
        }
    }

    fn waiting(name: &str, reason: &str, message: &str) -> ContainerStatus {
        ContainerStatus {
            name: name.into(),
            state: Some(ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some(reason.into()),
                    message: Some(message.into()),
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn last(mut c: ContainerStatus, reason: &str, exit: i32, restarts: i32) -> ContainerStatus {
        c.restart_count = restarts;
        c.last_state = Some(ContainerState {
            terminated: Some(ContainerStateTerminated {
                reason: Some(reason.into()),
                exit_code: exit,
                ..Default::default()
            }),
            ..Default::default()
        });
        c
    }

    #[test]
    fn the_reason_is_what_kubectl_describe_would_point_at() {
        let not_ready = || vec![cond("Ready", "False", Some("ContainersNotReady"), None)];
        let pull =
            pod(vec![waiting("app", "ImagePullBackOff", "Back-off pulling image")], not_ready());
        assert_eq!(reason(&pull).as_deref(), Some("ImagePullBackOff"));
        let crash = last(waiting("app", "CrashLoopBackOff", "back-off 5m0s"), "Error", 1, 5);
        assert_eq!(
            reason(&pod(vec![crash], not_ready())).as_deref(),
            Some("CrashLoopBackOff: exit 1, 5 restarts")
        );
        let oom = last(waiting("app", "CrashLoopBackOff", ""), "OOMKilled", 137, 1);
        assert_eq!(
            reason(&pod(vec![oom], not_ready())).as_deref(),
            Some("CrashLoopBackOff: OOMKilled (exit 137), 1 restart")
        );
        let running = ContainerStatus {
            name: "app".into(),
            ready: false,
            state: Some(ContainerState {
                running: Some(ContainerStateRunning::default()),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            reason(&pod(vec![running.clone()], not_ready())).as_deref(),
            Some("readiness probe not passing")
        );
        // Two containers: the one that is not ready is named.
        let ok = ContainerStatus { name: "sidecar".into(), ready: true, ..running.clone() };
        let two = pod(
            vec![ok, waiting("db", "CreateContainerConfigError", "secret missing")],
            not_ready(),
        );
        assert_eq!(reason(&two).as_deref(), Some("db: CreateContainerConfigError"));
        // Not scheduled: the scheduler's reason and message.
        let pending = pod(
            vec![],
            vec![cond(
                "PodScheduled",
                "False",
                Some("Unschedulable"),
                Some("0/3 nodes are available: 3 Insufficient cpu."),
            )],
        );
        assert_eq!(
            reason(&pending).as_deref(),
            Some("Unschedulable: 0/3 nodes are available: 3 Insufficient cpu.")
        );
        // A readiness gate.
        let gate = pod(
            vec![ContainerStatus { ready: true, ..running.clone() }],
            vec![cond(
                "Ready",
                "False",
                Some("ReadinessGatesNotReady"),
                Some("corresponding condition of pod readiness gate \"x\" does not exist."),
            )],
        );
        assert!(
            reason(&gate).unwrap_or_default().starts_with("ReadinessGatesNotReady: corresponding")
        );
        // Ready: nothing to say.
        let fine = pod(
            vec![ContainerStatus { ready: true, ..running }],
            vec![cond("Ready", "True", None, None)],
        );
        assert_eq!(reason(&fine), None);
    }

    #[test]
    fn the_detail_lists_each_container_with_its_last_termination() {
        let crash = last(
            waiting("app", "CrashLoopBackOff", "back-off 5m0s restarting failed container=app"),
            "Error",
            1,
            5,
        );
        let lines = containers(&pod(vec![crash], vec![]));
        assert_eq!(
            lines,
            vec![
                ("app".to_string(), "waiting: CrashLoopBackOff — back-off 5m0s restarting failed container=app, 5 restarts".to_string()),
                ("  last".to_string(), "Error, exit 1".to_string()),
            ]
        );
        assert_eq!(cut("abcdef", 3), "abc…");
    }
}
