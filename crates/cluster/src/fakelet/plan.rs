//! The fake kubelet's decisions, without IO: its settings (read from the `ststui-kubelet`
//! ConfigMap of a namespace), what it remembers of each pod, what is due and when, and the
//! status documents it writes. Mirrors the simulator's kubelet model (`sim::kubelet`): a pod
//! runs `start` after it was first seen, is Ready `ready` later unless its first container runs
//! the `broken` image, and a graceful deletion ends `stop` after it began; the settings a pod
//! gets are those in force when it was first seen. A broken image fails as `failure` says, in
//! the same states and reasons as the simulator's (`sim::kubelet::failure`): its probe fails,
//! its pull fails (Pending, ErrImagePull, ImagePullBackOff, retried) or it crashes
//! (CrashLoopBackOff, restarts counted), with the same back-offs. Faults arrive as an
//! annotation on the pod.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use serde_json::{Value, json};

use crate::backend::ImageFailure;
use crate::kubelet::KubeletConfig;
use crate::kubelet::failure;

/// The ConfigMap (per namespace) the fake kubelet takes its settings from.
pub const CONFIG_MAP: &str = "ststui-kubelet";
/// The pod annotation that asks for a fault: `fail`, `unready` or `ready`, optionally followed
/// by `/N` so the same fault can be asked for again.
pub const FAULT_ANNOTATION: &str = "ststui.dev/kubelet-fault";
/// The label on the Node a fake kubelet registers (how `ststui play` knows one serves the
/// cluster).
pub const NODE_LABEL: &str = "ststui.dev/fake-kubelet";

/// The settings a ConfigMap holds (`start`, `ready`, `stop` as durations such as `250ms`,
/// `broken` an image); what is missing or unreadable keeps its default, and each problem is
/// returned as a sentence for the log.
pub fn from_config_map(cm: &ConfigMap) -> (KubeletConfig, Vec<String>) {
    let mut s = KubeletConfig::default();
    let mut problems = Vec::new();
    let Some(data) = &cm.data else { return (s, problems) };
    for (key, slot) in
        [("start", &mut s.start_ms), ("ready", &mut s.ready_ms), ("stop", &mut s.stop_ms)]
    {
        if let Some(v) = data.get(key) {
            match crate::value::duration(v) {
                Ok(ms) => *slot = ms,
                Err(e) => problems.push(format!("{CONFIG_MAP} {key}={v:?}: {e}")),
            }
        }
    }
    s.broken = data.get("broken").filter(|b| !b.is_empty()).cloned();
    if let Some(v) = data.get("failure").filter(|v| !v.is_empty()) {
        match v.parse::<ImageFailure>() {
            Ok(f) => s.failure = f,
            Err(e) => problems.push(format!("{CONFIG_MAP} failure={v:?}: {e}")),
        }
    }
    (s, problems)
}

/// The ConfigMap data for `s` (what `ststui play` writes).
pub fn to_data(s: &KubeletConfig) -> BTreeMap<String, String> {
    let ms = |v: u64| format!("{v}ms");
    BTreeMap::from([
        ("start".to_string(), ms(s.start_ms)),
        ("ready".to_string(), ms(s.ready_ms)),
        ("stop".to_string(), ms(s.stop_ms)),
        ("broken".to_string(), s.broken.clone().unwrap_or_default()),
        ("failure".to_string(), s.failure.to_string()),
    ])
}

/// Where a pod is in its life, as this kubelet made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Not bound to our node yet.
    Unbound,
    /// Bound; not running yet.
    Pending,
    /// Running since `at` (ms), not Ready.
    Running {
        at: u64,
    },
    Ready,
    Failed,
    /// A broken image's pull failed at `at` (ErrImagePull); it backs off next.
    PullFailed {
        at: u64,
    },
    /// Backing off since `at` (ImagePullBackOff) before pulling again.
    PullBackOff {
        at: u64,
    },
    /// Its container crashed at `at` (CrashLoopBackOff) and restarts after the back-off.
    Crashed {
        at: u64,
    },
}

/// What this kubelet remembers of one pod.
#[derive(Debug, Clone, PartialEq)]
pub struct Tracked {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub image: String,
    pub containers: Vec<String>,
    pub settings: KubeletConfig,
    pub seen_at: u64,
    pub stage: Stage,
    /// The fault annotation last acted on.
    pub fault: Option<String>,
    /// A fault asked the pod to stay unready (until `ready`).
    pub held_unready: bool,
    /// When its graceful deletion was first seen.
    pub deleting_since: Option<u64>,
    /// Earliest time to retry after a failed write.
    pub retry_at: Option<u64>,
    /// The first container's restarts (a crash loop).
    pub restarts: i32,
    /// The back-off the next retry waits (a failed pull, a crash).
    pub backoff_ms: u64,
}

/// One thing to do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Bind,
    Run,
    Ready(bool),
    Fail,
    Remove,
    /// A pull fails: ErrImagePull.
    PullFail,
    /// ImagePullBackOff.
    PullBackOff,
    /// The container exits with code 1: CrashLoopBackOff.
    Crash,
    /// The crashed container runs again.
    Restart,
}

impl Tracked {
    pub fn new(pod: &Pod, settings: KubeletConfig, now: u64, node: &str) -> Tracked {
        let spec = pod.spec.as_ref();
        let containers: Vec<String> =
            spec.map(|s| s.containers.iter().map(|c| c.name.clone()).collect()).unwrap_or_default();
        let image = spec
            .and_then(|s| s.containers.first())
            .and_then(|c| c.image.clone())
            .unwrap_or_default();
        let bound_here = spec.and_then(|s| s.node_name.as_deref()) == Some(node);
        Tracked {
            namespace: pod.metadata.namespace.clone().unwrap_or_else(|| "default".into()),
            name: pod.metadata.name.clone().unwrap_or_default(),
            uid: pod.metadata.uid.clone().unwrap_or_default(),
            image,
            containers,
            settings,
            seen_at: now,
            stage: if bound_here { Stage::Pending } else { Stage::Unbound },
            fault: None,
            held_unready: false,
            deleting_since: None,
            retry_at: None,
            restarts: 0,
            backoff_ms: 0,
        }
    }

    fn broken(&self) -> bool {
        self.settings.broken.as_deref() == Some(self.image.as_str())
    }

    fn failing(&self, how: ImageFailure) -> bool {
        self.broken() && self.settings.failure == how
    }

    /// Takes in what the pod looks like now: a graceful deletion begun, a fault asked for.
    pub fn observe(&mut self, pod: &Pod, now: u64) {
        if pod.metadata.deletion_timestamp.is_some() && self.deleting_since.is_none() {
            self.deleting_since = Some(now);
        }
        let fault = pod.metadata.annotations.as_ref().and_then(|a| a.get(FAULT_ANNOTATION));
        if fault.is_none() {
            self.fault = None;
        }
    }

    /// The fault annotation's verb when it asks for something not yet done.
    pub fn pending_fault(&self, pod: &Pod) -> Option<(String, String)> {
        let value = pod.metadata.annotations.as_ref()?.get(FAULT_ANNOTATION)?;
        if self.fault.as_deref() == Some(value.as_str()) {
            return None;
        }
        let verb = value.split('/').next().unwrap_or_default().to_string();
        Some((verb, value.clone()))
    }

    /// When the next timed step is due (ms), if any.
    pub fn due(&self) -> Option<u64> {
        let timed = match (self.deleting_since, self.stage) {
            // Never bound: the API server removes it at once.
            (Some(_), Stage::Unbound) => None,
            (Some(since), _) => Some(since + self.settings.stop_ms),
            (None, Stage::Unbound) => Some(self.seen_at),
            (None, Stage::Pending) => Some(self.seen_at + self.settings.start_ms),
            (None, Stage::Running { at }) if self.failing(ImageFailure::Crash) => {
                Some(at + self.settings.ready_ms)
            }
            (None, Stage::Running { at }) if !self.broken() && !self.held_unready => {
                Some(at + self.settings.ready_ms)
            }
            (None, Stage::PullFailed { at }) => Some(at + failure::PULL_TO_BACKOFF_MS),
            (None, Stage::PullBackOff { at } | Stage::Crashed { at }) => Some(at + self.backoff_ms),
            _ => None,
        }?;
        Some(self.retry_at.map_or(timed, |r| r.max(timed)))
    }

    /// The timed step due at `now`.
    pub fn action(&self, now: u64) -> Option<Action> {
        if self.due()? > now {
            return None;
        }
        Some(match (self.deleting_since, self.stage) {
            (Some(_), Stage::Unbound) => return None,
            (Some(_), _) => Action::Remove,
            (None, Stage::Unbound) => Action::Bind,
            (None, Stage::Pending | Stage::PullBackOff { .. })
                if self.failing(ImageFailure::Pull) =>
            {
                Action::PullFail
            }
            (None, Stage::Pending | Stage::PullBackOff { .. }) => Action::Run,
            (None, Stage::PullFailed { .. }) => Action::PullBackOff,
            (None, Stage::Running { .. }) if self.failing(ImageFailure::Crash) => Action::Crash,
            (None, Stage::Crashed { .. }) => Action::Restart,
            (None, _) => Action::Ready(true),
        })
    }

    /// The action a fault verb asks for, or why it cannot be done now.
    pub fn fault_action(&self, verb: &str) -> Result<Action, String> {
        let running = matches!(self.stage, Stage::Running { .. } | Stage::Ready);
        match verb {
            "fail" if self.stage != Stage::Failed => Ok(Action::Fail),
            "unready" | "ready" if !running => {
                Err(format!("{verb} needs a running pod; {} is not", self.name))
            }
            "unready" => Ok(Action::Ready(false)),
            "ready" => Ok(Action::Ready(true)),
            "fail" => Err(format!("{} has already failed", self.name)),
            other => Err(format!(
                "unknown fault {other:?} in {FAULT_ANNOTATION}: expected fail, unready or ready"
            )),
        }
    }

    /// Records that `action` was written.
    pub fn done(&mut self, action: &Action, now: u64) {
        self.retry_at = None;
        match action {
            Action::Bind => self.stage = Stage::Pending,
            Action::Run => self.stage = Stage::Running { at: now },
            Action::Ready(true) => {
                self.held_unready = false;
                self.stage = Stage::Ready;
            }
            Action::Ready(false) => {
                self.held_unready = true;
                if self.stage == Stage::Ready {
                    self.stage = Stage::Running { at: now };
                }
            }
            Action::Fail => self.stage = Stage::Failed,
            Action::Remove => {}
            Action::PullFail => self.stage = Stage::PullFailed { at: now },
            Action::PullBackOff => {
                self.backoff_ms = failure::next_backoff(self.backoff_ms);
                self.stage = Stage::PullBackOff { at: now };
            }
            Action::Crash => {
                self.backoff_ms = failure::next_backoff(self.backoff_ms);
                self.restarts += 1;
                self.stage = Stage::Crashed { at: now };
            }
            Action::Restart => self.stage = Stage::Running { at: now },
        }
    }
}

/// The kubelet events (`sim::kubelet::failure::kubelet_events`' words) `action` stands for, as
/// the simulator's kubelet notes them.
pub fn event_words(t: &Tracked, action: &Action) -> &'static [&'static str] {
    match action {
        Action::Run if t.failing(ImageFailure::Probe) => &["running", "probe-failed"],
        Action::Run | Action::Restart => &["running"],
        Action::Ready(false) => &["unready"],
        Action::Fail => &["failed"],
        Action::PullFail => &["pull-failed"],
        Action::PullBackOff => &["pull-back-off"],
        Action::Crash => &["crashed"],
        Action::Bind | Action::Remove | Action::Ready(true) => &[],
    }
}

/// RFC 3339 in whole seconds, as the API server stores times.
pub fn stamp(t: k8s_openapi::jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn condition(kind: &str, on: bool, at: &str) -> Value {
    json!({"type": kind, "status": if on { "True" } else { "False" }, "lastTransitionTime": at})
}

/// The status merge patch for a running pod, Ready or not.
pub fn running_status(t: &Tracked, ready: bool, at: &str, pod_ip: &str) -> Value {
    let containers: Vec<Value> = t
        .containers
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({
                "name": c, "image": if i == 0 { t.image.as_str() } else { "" },
                "imageID": "", "ready": ready, "restartCount": if i == 0 { t.restarts } else { 0 },
                "started": true,
                "state": {"running": {"startedAt": at}},
            })
        })
        .collect();
    json!({"status": {
        "phase": "Running", "hostIP": "127.0.0.1", "podIP": pod_ip, "podIPs": [{"ip": pod_ip}],
        "startTime": at,
        "conditions": [
            condition("PodScheduled", true, at), condition("Initialized", true, at),
            condition("ContainersReady", ready, at), condition("Ready", ready, at),
        ],
        "containerStatuses": containers,
    }})
}

/// The status merge patch for a broken image's pod waiting (`action`: a failed pull, its
/// back-off, a crash), its first container's state in the simulator's words.
pub fn waiting_status(
    t: &Tracked,
    action: &Action,
    at: &str,
    now: k8s_openapi::jiff::Timestamp,
) -> Value {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    let mut c = failure::fresh(t.containers.first().map_or("app", String::as_str), &t.image);
    c.restart_count = t.restarts;
    let time = Time(now);
    let phase = match action {
        Action::PullFail => {
            failure::pull_failed(&mut c);
            "Pending"
        }
        Action::PullBackOff => {
            failure::pull_backing_off(&mut c);
            "Pending"
        }
        _ => {
            // Written before `done` counts it: `crashed` counts this restart.
            failure::running(&mut c, &time);
            failure::crashed(
                &mut c,
                &time,
                failure::next_backoff(t.backoff_ms),
                &t.name,
                &t.namespace,
            );
            "Running"
        }
    };
    let first = serde_json::to_value(&c).unwrap_or(Value::Null);
    json!({"status": {
        "phase": phase, "hostIP": "127.0.0.1",
        "conditions": [
            condition("PodScheduled", true, at), condition("Initialized", true, at),
            condition("ContainersReady", false, at), condition("Ready", false, at),
        ],
        "containerStatuses": [first],
    }})
}

/// The status merge patch for a pod whose containers exited with an error.
pub fn failed_status(t: &Tracked, at: &str) -> Value {
    let containers: Vec<Value> = t
        .containers
        .iter()
        .map(|c| {
            json!({
                "name": c, "image": t.image, "imageID": "", "ready": false, "restartCount": 0,
                "started": false,
                "state": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": at, "finishedAt": at}},
            })
        })
        .collect();
    json!({"status": {
        "phase": "Failed",
        "conditions": [
            condition("PodScheduled", true, at), condition("Initialized", true, at),
            condition("ContainersReady", false, at), condition("Ready", false, at),
        ],
        "containerStatuses": containers,
    }})
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container, PodSpec};

    fn pod(image: &str, node: Option<&str>) -> Pod {
        Pod {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some("web-0".into()),
                namespace: Some("ns".into()),
                uid: Some("u1".into()),
                ..Default::default()
            },
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "c".into(),
                    image: Some(image.into()),
                    ..Default::default()
                }],
                node_name: node.map(Into::into),
                ..Default::default()
            }),
            status: None,
        }
    }

    #[test]
    fn a_pod_is_bound_then_runs_after_start_then_is_ready_after_ready() {
        let s = KubeletConfig {
            start_ms: 500,
            ready_ms: 2000,
            stop_ms: 100,
            broken: None,
            failure: Default::default(),
        };
        let mut t = Tracked::new(&pod("app:v1", None), s, 1000, "n0");
        assert_eq!(t.action(1000), Some(Action::Bind));
        t.done(&Action::Bind, 1000);
        assert_eq!(t.action(1499), None);
        assert_eq!(t.due(), Some(1500));
        assert_eq!(t.action(1500), Some(Action::Run));
        t.done(&Action::Run, 1510);
        assert_eq!(t.due(), Some(3510));
        assert_eq!(t.action(3510), Some(Action::Ready(true)));
        t.done(&Action::Ready(true), 3510);
        assert_eq!(t.due(), None);
    }

    #[test]
    fn a_broken_image_runs_but_never_becomes_ready_and_a_deletion_takes_the_stop_delay() {
        let s = KubeletConfig { broken: Some("app:bad".into()), ..KubeletConfig::default() };
        let mut p = pod("app:bad", Some("n0"));
        let mut t = Tracked::new(&p, s, 0, "n0");
        assert_eq!(t.stage, Stage::Pending);
        assert_eq!(event_words(&t, &Action::Run), ["running", "probe-failed"], "Unhealthy too");
        t.done(&Action::Run, 1000);
        assert_eq!(t.due(), None, "broken: no Ready step");
        p.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        ));
        t.observe(&p, 5000);
        assert_eq!(t.due(), Some(6000));
        assert_eq!(t.action(6000), Some(Action::Remove));
    }

    /// Runs `t`'s due actions up to `until` ms, returning them with their times.
    fn play(t: &mut Tracked, until: u64) -> Vec<(u64, Action)> {
        let mut out = Vec::new();
        while let Some(at) = t.due().filter(|at| *at <= until) {
            let a = t.action(at).unwrap();
            t.done(&a, at);
            out.push((at, a));
        }
        out
    }

    #[test]
    fn a_pull_failure_backs_off_and_retries_as_the_simulators_kubelet_does() {
        let s = KubeletConfig {
            broken: Some("app:bad".into()),
            failure: ImageFailure::Pull,
            ..KubeletConfig::default()
        };
        let mut t = Tracked::new(&pod("app:bad", Some("n0")), s, 0, "n0");
        let seen = play(&mut t, 35_000);
        assert_eq!(
            seen,
            [
                (1000, Action::PullFail),
                (2000, Action::PullBackOff),
                (12_000, Action::PullFail),
                (13_000, Action::PullBackOff),
                (33_000, Action::PullFail),
                (34_000, Action::PullBackOff),
            ]
        );
        let doc =
            waiting_status(&t, &Action::PullBackOff, "t", k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
        let c = &doc["status"]["containerStatuses"][0];
        assert_eq!(c["state"]["waiting"]["reason"], "ImagePullBackOff");
        assert_eq!(doc["status"]["phase"], "Pending");
    }

    #[test]
    fn a_crash_loop_counts_restarts_with_the_simulators_back_off() {
        let s = KubeletConfig {
            broken: Some("app:bad".into()),
            failure: ImageFailure::Crash,
            ..KubeletConfig::default()
        };
        let mut t = Tracked::new(&pod("app:bad", Some("n0")), s, 0, "n0");
        let seen = play(&mut t, 16_000);
        assert_eq!(
            seen,
            [
                (1000, Action::Run),
                (2000, Action::Crash),
                (12_000, Action::Restart),
                (13_000, Action::Crash),
            ]
        );
        assert_eq!(t.restarts, 2);
        assert_eq!(event_words(&t, &Action::Crash), ["crashed"]);
        assert_eq!(event_words(&t, &Action::Restart), ["running"]);
        t.restarts = 1; // as written before the second crash counted
        let doc = waiting_status(&t, &Action::Crash, "t", k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
        let c = &doc["status"]["containerStatuses"][0];
        assert_eq!(c["state"]["waiting"]["reason"], "CrashLoopBackOff");
        assert_eq!(c["lastState"]["terminated"]["exitCode"], 1);
        assert_eq!(c["restartCount"], 2);
    }

    #[test]
    fn faults_come_from_the_annotation_once_each_and_unready_holds_until_ready() {
        let mut p = pod("app:v1", Some("n0"));
        let mut t = Tracked::new(&p, KubeletConfig::default(), 0, "n0");
        assert_eq!(
            t.fault_action("unready"),
            Err("unready needs a running pod; web-0 is not".into())
        );
        t.done(&Action::Run, 1000);
        t.done(&Action::Ready(true), 2000);
        p.metadata.annotations =
            Some(BTreeMap::from([(FAULT_ANNOTATION.to_string(), "unready/1".to_string())]));
        let (verb, value) = t.pending_fault(&p).expect("a fault");
        assert_eq!(verb, "unready");
        assert_eq!(t.fault_action(&verb), Ok(Action::Ready(false)));
        t.done(&Action::Ready(false), 3000);
        t.fault = Some(value);
        assert_eq!(t.pending_fault(&p), None, "acted on once");
        assert_eq!(t.due(), None, "held unready: no timed Ready");
        assert!(t.fault_action("explode").is_err_and(|e| e.contains("expected fail")));
    }

    #[test]
    fn settings_round_trip_through_the_config_map_and_bad_values_are_named() {
        let s = KubeletConfig {
            start_ms: 250,
            ready_ms: 0,
            stop_ms: 3000,
            broken: Some("x:1".into()),
            failure: Default::default(),
        };
        let cm = ConfigMap { data: Some(to_data(&s)), ..Default::default() };
        assert_eq!(from_config_map(&cm), (s, Vec::new()));
        let bad = ConfigMap {
            data: Some(BTreeMap::from([("start".to_string(), "soon".to_string())])),
            ..Default::default()
        };
        let (got, problems) = from_config_map(&bad);
        assert_eq!(got, KubeletConfig::default());
        assert!(problems[0].contains("start=\"soon\""), "{problems:?}");
    }

    #[test]
    fn status_documents_say_running_ready_and_failed_with_whole_second_times() {
        let t = Tracked::new(&pod("app:v1", Some("n0")), KubeletConfig::default(), 0, "n0");
        let at = stamp(k8s_openapi::jiff::Timestamp::from_millisecond(1_500).unwrap_or_default());
        assert_eq!(at, "1970-01-01T00:00:01Z");
        let v = running_status(&t, true, &at, "10.0.0.1");
        assert_eq!(v["status"]["phase"], "Running");
        assert_eq!(v["status"]["conditions"][3]["type"], "Ready");
        assert_eq!(v["status"]["conditions"][3]["status"], "True");
        assert_eq!(v["status"]["containerStatuses"][0]["ready"], true);
        let f = failed_status(&t, &at);
        assert_eq!(f["status"]["phase"], "Failed");
        assert_eq!(f["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 1);
    }
}
