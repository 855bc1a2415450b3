//! Pods stuck broken on an older revision while the set updates: a container waiting in
//! CrashLoopBackOff, ImagePullBackOff / ErrImagePull, CreateContainerError /
//! CreateContainerConfigError or InvalidImageName. Such a pod serves nothing already, so
//! replacing it with the update revision costs no availability (grafana/rollout-operator PR#466);
//! yet it holds an OrderedReady set, and the disruption budget it makes short refuses the
//! evictions of healthy pods. ststui offers the replacement (a hint, `--replace-stuck`), never
//! does it unasked.
//!
//! Only pods a delete brings back on the update revision count: with OnDelete any, with
//! RollingUpdate those at or above the partition (below it, the controller recreates the same
//! revision). Owns: this rule. Must not: do IO or read a clock.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use super::{pod, spec};

/// The container waiting reasons that mean "broken, not starting".
pub const BROKEN: [&str; 6] = [
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "CreateContainerError",
    "CreateContainerConfigError",
    "InvalidImageName",
];

/// A pod that could be replaced at no cost in availability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaceable {
    pub pod: String,
    pub uid: String,
    pub ordinal: i32,
    /// The revision it is on (not the update revision).
    pub revision: String,
    /// Its container and why it waits: `CrashLoopBackOff` (`app: CrashLoopBackOff` with several).
    pub reason: String,
}

/// Why `p` is broken (one of [`BROKEN`], with its container when it has several), if it is.
pub fn broken(p: &Pod) -> Option<String> {
    if pod::is_ready(p) {
        return None;
    }
    let status = p.status.as_ref()?;
    let all = status
        .init_container_statuses
        .iter()
        .flatten()
        .chain(status.container_statuses.iter().flatten());
    let many = status.container_statuses.as_ref().map_or(0, Vec::len)
        + status.init_container_statuses.as_ref().map_or(0, Vec::len)
        > 1;
    all.filter_map(|c| {
        let reason = c.state.as_ref()?.waiting.as_ref()?.reason.as_deref()?;
        let reason = BROKEN.into_iter().find(|b| *b == reason)?;
        Some(if many { format!("{}: {reason}", c.name) } else { reason.to_string() })
    })
    .next()
}

/// The set's pods stuck broken on a revision other than `update_revision` that a delete would
/// bring back on it, highest ordinal first. `pods`: the set's pods with their ordinals.
pub fn replaceable(
    set: &StatefulSet,
    pods: &[(i32, &Pod)],
    update_revision: &str,
) -> Vec<Replaceable> {
    if update_revision.is_empty() {
        return Vec::new();
    }
    let st = spec::strategy(set);
    let start = spec::start_ordinal(set);
    let end = i64::from(start) + i64::from(spec::replicas(set));
    let mut out: Vec<Replaceable> = pods
        .iter()
        .filter(|(o, p)| {
            let o = i64::from(*o);
            o >= i64::from(start)
                && o < end
                && !st.holds(start, o)
                && !pod::is_terminating(p)
                && pod::revision(p) != update_revision
        })
        .filter_map(|(o, p)| {
            Some(Replaceable {
                pod: pod::name(p).to_string(),
                uid: pod::uid(p).to_string(),
                ordinal: *o,
                revision: pod::revision(p).to_string(),
                reason: broken(p)?,
            })
        })
        .collect();
    out.sort_by_key(|r| std::cmp::Reverse(r.ordinal));
    out
}

/// "web-3 (CrashLoopBackOff), web-1 (ImagePullBackOff)".
pub fn names(stuck: &[Replaceable]) -> String {
    stuck.iter().map(|s| format!("{} ({})", s.pod, s.reason)).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(strategy: serde_json::Value) -> StatefulSet {
        serde_json::from_value(json!({
            "metadata": {"name": "web"},
            "spec": {"replicas": 4, "selector": {}, "serviceName": "web",
                "template": {"spec": {"containers": [{"name": "app"}]}},
                "updateStrategy": strategy},
        }))
        .unwrap()
    }

    fn pod(name: &str, rev: &str, waiting: Option<&str>, ready: bool) -> Pod {
        let state = match waiting {
            Some(r) => json!({"waiting": {"reason": r}}),
            None => json!({"running": {}}),
        };
        serde_json::from_value(json!({
            "metadata": {"name": name, "uid": format!("u-{name}"),
                "labels": {"controller-revision-hash": rev}},
            "status": {"phase": "Running",
                "conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}],
                "containerStatuses": [{"name": "app", "ready": ready, "restartCount": 3,
                    "image": "i", "imageID": "", "state": state}]},
        }))
        .unwrap()
    }

    #[test]
    fn broken_old_pods_a_delete_would_update_are_replaceable_highest_first() {
        let pods = [
            pod("web-0", "old", Some("CrashLoopBackOff"), false),
            pod("web-1", "old", None, true),
            pod("web-2", "old", Some("ImagePullBackOff"), false),
            pod("web-3", "new", Some("CrashLoopBackOff"), false),
        ];
        let with: Vec<(i32, &Pod)> = pods.iter().zip(0..).map(|(p, o)| (o, p)).collect();
        let on_delete = set(json!({"type": "OnDelete"}));
        let found = replaceable(&on_delete, &with, "new");
        assert_eq!(names(&found), "web-2 (ImagePullBackOff), web-0 (CrashLoopBackOff)");
        assert_eq!(found[0].uid, "u-web-2");
        // Below the partition a delete brings back the old revision: not offered.
        let rolling = set(json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}));
        assert_eq!(names(&replaceable(&rolling, &with, "new")), "web-2 (ImagePullBackOff)");
        assert!(replaceable(&on_delete, &with, "").is_empty());
    }

    #[test]
    fn a_not_ready_pod_that_is_not_broken_is_not_replaceable() {
        assert_eq!(broken(&pod("web-0", "old", Some("ContainerCreating"), false)), None);
        assert_eq!(broken(&pod("web-0", "old", None, false)), None);
        assert_eq!(broken(&pod("web-0", "old", Some("CrashLoopBackOff"), true)), None);
        for r in BROKEN {
            assert_eq!(broken(&pod("web-0", "old", Some(r), false)).as_deref(), Some(r));
        }
    }
}
