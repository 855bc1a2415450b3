//! The verdict by the pods (or, where they are not watched, by the status as Argo CD reads
//! it): done, held, rolling, degraded, or blocked by a pod of the update revision that does not
//! come up.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;

use super::{Facts, Move, On, Pods, Row, Tally, Verdict, name_of};
use crate::core::pod as podf;
use crate::core::spec;

/// How long a pod may stay not Ready before it stops counting as starting: a pod of the update
/// revision not Ready for longer makes the set Blocked (a canary or a rollout that does not come
/// up), any other Degraded.
pub const STUCK_AFTER_SECS: i64 = 300;

/// The update and current revisions the status names (empty when it names none).
pub(super) fn revisions(set: &StatefulSet) -> (&str, &str) {
    let st = set.status.as_ref();
    (
        st.and_then(|s| s.update_revision.as_deref()).unwrap_or(""),
        st.and_then(|s| s.current_revision.as_deref()).unwrap_or(""),
    )
}

/// Whether the controller has observed the set's spec.
pub(super) fn observed(set: &StatefulSet) -> bool {
    let seen = set.status.as_ref().and_then(|s| s.observed_generation).unwrap_or(0);
    seen >= set.metadata.generation.unwrap_or(0)
}

/// The pod at `ordinal`, if any.
pub(super) fn at<'a>(pods: &[(i32, &'a Pod)], ordinal: i32) -> Option<&'a Pod> {
    let i = pods.binary_search_by_key(&ordinal, |(o, _)| *o).ok()?;
    pods.get(i).map(|(_, p)| *p)
}

/// The counts, from the pods when seen, else the status.
pub(super) fn tally(f: &Facts<'_>) -> Tally {
    let set = f.set;
    let replicas = spec::replicas(set);
    let st = spec::strategy(set);
    let start = spec::start_ordinal(set);
    let Pods::Seen(pods) = f.pods else {
        let s = set.status.clone().unwrap_or_default();
        let updated = s.updated_replicas.unwrap_or(0);
        return Tally {
            replicas,
            updated,
            ready: s.ready_replicas.unwrap_or(0),
            held: if st.on_delete {
                (replicas - updated).max(0)
            } else {
                st.partition.clamp(0, replicas).min((replicas - updated).max(0))
            },
        };
    };
    let (update, _) = revisions(set);
    let mut t = Tally { replicas, ..Tally::default() };
    for (o, p) in pods.iter().filter(|(o, _)| spec::in_range(set, *o)) {
        if podf::is_terminating(p) {
            continue;
        }
        if podf::revision(p) == update {
            t.updated += 1;
        } else if st.on_delete || st.holds(start, i64::from(*o)) {
            t.held += 1;
        }
        if podf::is_ready(p) {
            t.ready += 1;
        }
    }
    t
}

/// The verdict by the pods alone (no record, no freeze, no advisor).
pub(super) fn judge(f: &Facts<'_>, tally: Tally) -> Verdict {
    let set = f.set;
    if !observed(set) {
        let why = format!(
            "the controller has not observed generation {} yet",
            set.metadata.generation.unwrap_or(0)
        );
        return Verdict::of(Row::Rolling, Some(On::Spec), why, tally);
    }
    match f.pods {
        Pods::Seen(pods) => by_pods(f, pods, tally),
        _ => by_status(f, tally),
    }
}

/// An ordinal not yet as the spec asks, in words.
struct Pending {
    ordinal: i32,
    what: String,
}

/// A pod of the range that is not Ready.
struct NotReady {
    ordinal: i32,
    /// It runs the update revision while an update is under way.
    update: bool,
    age_secs: i64,
    for_secs: i64,
    why: Option<String>,
}

fn by_pods(f: &Facts<'_>, pods: &[(i32, &Pod)], tally: Tally) -> Verdict {
    let set = f.set;
    let name = name_of(set);
    let st = spec::strategy(set);
    let start = spec::start_ordinal(set);
    let replicas = spec::replicas(set);
    let (update, current) = revisions(set);
    let mut pending = Vec::new();
    let mut not_ready = Vec::new();
    for o in start..start.saturating_add(replicas.max(0)) {
        let Some(p) = at(pods, o) else {
            pending.push(Pending { ordinal: o, what: "not created yet".into() });
            continue;
        };
        if podf::is_terminating(p) {
            pending.push(Pending { ordinal: o, what: "terminating".into() });
            continue;
        }
        let rev = podf::revision(p);
        if rev != update && !st.on_delete && !st.holds(start, i64::from(o)) {
            pending.push(Pending { ordinal: o, what: "to be updated".into() });
        }
        if !podf::is_ready(p) {
            not_ready.push(not_ready_of(f, o, p, current != update && rev == update));
        }
    }
    for (o, p) in pods.iter().filter(|(o, _)| !spec::in_range(set, *o)) {
        let what = if podf::is_terminating(p) { "terminating" } else { "condemned, not yet gone" };
        pending.push(Pending { ordinal: *o, what: what.into() });
    }
    pending.sort_by_key(|p| p.ordinal);
    let pod = |o: i32| crate::core::labels::pod_name(&name, o);
    if let Some(n) = not_ready.iter().find(|n| n.update && n.for_secs >= STUCK_AFTER_SECS) {
        let why = format!(
            "{} of the update revision has not been Ready for {}{}",
            pod(n.ordinal),
            super::super::duration_words(u64::try_from(n.for_secs).unwrap_or(0) * 1000),
            n.why.as_ref().map(|w| format!(" ({w})")).unwrap_or_default()
        );
        let abort =
            Move::new(format!("ststui abort {name}"), "rolls back to the previous revision");
        return Verdict::of(Row::Blocked, Some(On::Pods), why, tally)
            .naming(Some(pod(n.ordinal)))
            .then(abort);
    }
    if let Some(first) = pending.first() {
        let more = match pending.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        let why = match &f.advisor.waiting {
            Some(w) => w.clone(),
            None => format!("waiting for {} {}{more}", pod(first.ordinal), first.what),
        };
        return Verdict::of(Row::Rolling, Some(On::Pods), why, tally)
            .naming(Some(pod(first.ordinal)));
    }
    if let Some(n) = not_ready.first() {
        let why_not = n.why.as_ref().map(|w| format!(" ({w})")).unwrap_or_default();
        if not_ready.iter().any(|n| n.age_secs < STUCK_AFTER_SECS) {
            let why = format!("waiting for {} to be Ready{why_not}", pod(n.ordinal));
            return Verdict::of(Row::Rolling, Some(On::Pods), why, tally)
                .naming(Some(pod(n.ordinal)));
        }
        let why = format!(
            "{} is not Ready{why_not}: {} of {replicas} Ready, nothing rolling",
            pod(n.ordinal),
            tally.ready
        );
        return Verdict::of(Row::Degraded, Some(On::Pods), why, tally).naming(Some(pod(n.ordinal)));
    }
    if !st.on_delete && st.partition <= 0 && current != update {
        let why = format!("waiting for the status to name {update} current (it names {current})");
        return Verdict::of(Row::Rolling, Some(On::Pods), why, tally);
    }
    if tally.held > 0 {
        return held(f, tally);
    }
    let why = format!("{}/{replicas} Ready on {update}", tally.ready);
    Verdict::of(Row::Healthy, None, why, tally)
}

fn not_ready_of(f: &Facts<'_>, ordinal: i32, p: &Pod, update: bool) -> NotReady {
    let secs = |t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>| {
        t.map_or(0, |t| f.now.duration_since(t.0).as_secs().max(0))
    };
    let age_secs = secs(p.metadata.creation_timestamp.as_ref());
    let ready = p
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"));
    let for_secs =
        ready.and_then(|c| c.last_transition_time.as_ref()).map_or(age_secs, |t| secs(Some(t)));
    let why = crate::core::why::reason(p).map(|w| crate::text::escape_controls(&w).into_owned());
    NotReady { ordinal, update, age_secs, for_secs, why }
}

/// Done as the spec asks, pods held on an older revision: Held, with what moves it on.
fn held(f: &Facts<'_>, tally: Tally) -> Verdict {
    let name = name_of(f.set);
    let st = spec::strategy(f.set);
    let pods = if tally.held == 1 { "1 pod waits" } else { "pods wait" };
    let count = if tally.held == 1 { String::new() } else { format!("{} ", tally.held) };
    if st.on_delete {
        let why = format!(
            "held: {count}{pods} on an older revision (OnDelete: each updates when deleted)"
        );
        let next =
            Move::new(format!("ststui rollout {name} --steps 1,100%"), "rolls them, one at a time");
        return Verdict::of(Row::Held, Some(On::Operator), why, tally).then(next);
    }
    let why = format!("held: {count}{pods} behind partition {}", st.partition);
    let next = Move::new(format!("ststui step {name}"), "opens the next ordinal");
    Verdict::of(Row::Held, Some(On::Operator), why, tally).then(next)
}

/// The verdict by the status alone (the set list, Argo CD): its counts.
fn by_status(f: &Facts<'_>, tally: Tally) -> Verdict {
    let set = f.set;
    let replicas = spec::replicas(set);
    let st = spec::strategy(set);
    let s = set.status.clone().unwrap_or_default();
    let (update, current) = revisions(set);
    let wanted = if st.on_delete { 0 } else { replicas - st.partition.clamp(0, replicas) };
    let updated = s.updated_replicas.unwrap_or(0);
    let ready = s.ready_replicas.unwrap_or(0);
    if updated < wanted || s.replicas != replicas {
        let why = format!("{updated} of {wanted} pods updated");
        return Verdict::of(Row::Rolling, Some(On::Pods), why, tally);
    }
    if ready < replicas {
        let why = format!("{ready} of {replicas} Ready");
        let starting = current != update && !st.on_delete;
        let row = if starting { Row::Rolling } else { Row::Degraded };
        return Verdict::of(row, Some(On::Pods), why, tally);
    }
    if current != update || updated < replicas {
        if !st.on_delete && st.partition <= 0 {
            let why = format!("waiting for the status to name {update} current");
            return Verdict::of(Row::Rolling, Some(On::Pods), why, tally);
        }
        return held(f, tally);
    }
    let why = format!("{ready}/{replicas} Ready on {update}");
    Verdict::of(Row::Healthy, None, why, tally)
}
