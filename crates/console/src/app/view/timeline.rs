//! Timeline lines: the last entries of the state's timeline, in words, with their backend time.
//!
//! Owns the wording of timeline entries for the console (the JSONL form is the backend's).
//! Pure; only the entries that fit are formatted.

use crate::app::state::{AppState, Origin, TimelineEntry};
use crate::backend::EventKind;

/// Where a line came from, for its style and its tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    Controller,
    Kubelet,
    Gc,
    Blocked,
    Status,
    Operator,
    Script,
    Error,
    /// A cluster Event (Normal).
    Event,
    /// A cluster Event of type Warning.
    Warning,
    /// The advisor and the cluster disagreed.
    Differs,
    /// ststui itself: the connection, the server, a notice.
    Notice,
    /// A rollout plan moved.
    Plan,
}

impl Source {
    /// The short tag printed after the time.
    pub fn tag(self) -> &'static str {
        match self {
            Source::Controller => "ctrl",
            Source::Kubelet => "kubelet",
            Source::Gc => "gc",
            Source::Blocked => "blocked",
            Source::Status => "status",
            Source::Operator => "you",
            Source::Script => "script",
            Source::Error => "error",
            Source::Event => "event",
            Source::Warning => "warning",
            Source::Differs => "differs",
            Source::Plan => "plan",
            Source::Notice => "ststui",
        }
    }
}

/// The mark of a line seen while catching up after an outage (its time is when it was seen).
pub const LATE_MARK: &str = "↺";

/// One formatted timeline line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineLine {
    pub time: String,
    pub source: Source,
    /// The set the line is about, when the console shows several sets.
    pub set: Option<String>,
    pub text: String,
}

/// The `n` entries the pane shows, oldest first: the newest ones at the bottom, or, scrolled
/// back, the ones that many entries earlier. With several sets each line names its set.
pub fn last_lines(state: &AppState, n: usize) -> Vec<TimelineLine> {
    let back = state.timeline.back(n);
    let shown: Vec<&TimelineEntry> = state.timeline.iter().rev().skip(back).take(n).collect();
    let several = state.mirror.sets().nth(1).is_some();
    shown
        .into_iter()
        .rev()
        .map(|e| {
            let set = e.set.clone().filter(|_| several);
            let mut l = line(e);
            // The set column names it: a command's own set word is not repeated
            // ("you pg undo 1", not "you pg undo pg 1").
            if let (Some(s), Source::Operator | Source::Script) = (&set, l.source) {
                l.text = without_set_word(&l.text, s);
            }
            TimelineLine { set, ..l }
        })
        .collect()
}

/// `undo pg 1` without its set word `pg` (the second word), when it is that.
fn without_set_word(text: &str, set: &str) -> String {
    let mut words = text.splitn(3, ' ');
    match (words.next(), words.next(), words.next()) {
        (Some(verb), Some(w), rest) if w == set || w.rsplit('/').next() == Some(set) => {
            match rest {
                Some(rest) => format!("{verb} {rest}"),
                None => verb.to_string(),
            }
        }
        _ => text.to_string(),
    }
}

/// The pane's title: how many lines, the filter, what was dropped, the scroll position.
pub fn title(state: &AppState, rows: usize, newer_key: &str) -> String {
    let t = &state.timeline;
    let mut out = match (t.only_pod(), t.only()) {
        (Some(pod), _) => format!("Timeline: {pod} only ({} lines)", t.len()),
        (None, Some(set)) => format!("Timeline: {set} only ({} lines)", t.len()),
        (None, None) => format!("Timeline ({})", t.pushed()),
    };
    if t.dropped() > 0 {
        out.push_str(&format!(" — {} older dropped", t.dropped()));
    }
    let back = t.back(rows);
    if back > 0 {
        out.push_str(&format!(" — scrolled back: {back} newer below, {newer_key} to return"));
    }
    out
}

/// `1m05s`, `12.5s`, `3s`: a backend time in milliseconds, compact.
pub fn duration_text(ms: u64) -> String {
    let secs = ms / 1000;
    if secs >= 3600 {
        format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60)
    } else if secs >= 60 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else if ms.is_multiple_of(1000) {
        format!("{secs}s")
    } else {
        format!("{secs}.{}s", (ms % 1000) / 100)
    }
}

/// One entry in words.
pub fn line(entry: &TimelineEntry) -> TimelineLine {
    let (source, text) = match &entry.kind {
        EventKind::Command { text, .. } => {
            let source = match entry.origin {
                Origin::Operator => Source::Operator,
                Origin::Backend => Source::Script,
                Origin::Notice => Source::Notice,
            };
            (source, text.clone())
        }
        EventKind::Notice { text } => (Source::Notice, text.clone()),
        EventKind::Controller { action, pod, pvc, revision, reason, .. } => {
            let object = pod.as_deref().or(pvc.as_deref()).or(revision.as_deref()).unwrap_or("");
            let why = reason.map(|r| format!(" ({r})")).unwrap_or_default();
            (Source::Controller, format!("{action} {object}{why}"))
        }
        EventKind::Kubelet { pod, event } => (Source::Kubelet, format!("{pod} {event}")),
        EventKind::Gc { pod, pvc } => {
            let object = pod.as_deref().or(pvc.as_deref()).unwrap_or("");
            (Source::Gc, format!("removed {object}"))
        }
        EventKind::Blocked { reason, .. } => (Source::Blocked, reason.clone()),
        EventKind::Status {
            set,
            replicas,
            ready_replicas,
            updated_replicas,
            current_revision,
            update_revision,
            ..
        } => (
            Source::Status,
            format!(
                "replicas={replicas} ready={ready_replicas} updated={updated_replicas} {} → {}",
                super::short_hash(set, current_revision),
                super::short_hash(set, update_revision)
            ),
        ),
        EventKind::Expect { ok, detail, .. } => {
            let verdict = if *ok { "ok" } else { "FAILED" };
            (Source::Script, format!("expect {verdict}: {detail}"))
        }
        EventKind::Error { message, .. } => (Source::Error, message.clone()),
        EventKind::Event { object, reason, message, warning } => {
            let source = if *warning { Source::Warning } else { Source::Event };
            (source, format!("{object} {reason}: {message}"))
        }
        EventKind::Differs { expected, observed, .. } => {
            (Source::Differs, format!("advisor expected {expected}, the cluster {observed}"))
        }
        EventKind::Plan { text, .. } => (Source::Plan, text.clone()),
        EventKind::Group { group, text, .. } => (Source::Plan, format!("group {group}: {text}")),
    };
    let time = match entry.late {
        true => format!("{LATE_MARK}{}", duration_text(entry.t_ms)),
        false => duration_text(entry.t_ms),
    };
    TimelineLine { time, source, set: None, text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_compact() {
        assert_eq!(duration_text(0), "0s");
        assert_eq!(duration_text(1500), "1.5s");
        assert_eq!(duration_text(65_000), "1m05s");
        assert_eq!(duration_text(3_725_000), "1h02m");
    }
}
