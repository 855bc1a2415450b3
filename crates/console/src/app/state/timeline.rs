//! The console's timeline: a bounded ring of entries (the newest [`TIMELINE_CAPACITY`]; how many
//! older ones were dropped is counted, never hidden), each attributed to the StatefulSet it is
//! about, with a filter to one set and a scroll position.
//!
//! Owns the ring, the attribution rule ([`set_of`]) and the view position. Must not format
//! lines (that is `view::timeline`) or touch anything but itself.

use std::collections::VecDeque;

use crate::app::refusal::Refusal;
use crate::backend::EventKind;
use crate::core::labels::parent_and_ordinal;

/// Where a timeline entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Reported by the backend (controller, kubelet, gc, status, script commands).
    Backend,
    /// The operator, from this console (commands and failed Ops).
    Operator,
    /// ststui itself: the connection, the server's version, a notice (not a script line).
    Notice,
}

/// How many timeline entries are kept (oldest dropped first).
pub const TIMELINE_CAPACITY: usize = 2_000;

/// One timeline entry: backend time in milliseconds since start, the event (the same vocabulary
/// as the JSONL timeline of `spec/scenario.md`), and the set it is about, when one is.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEntry {
    pub t_ms: u64,
    pub kind: EventKind,
    pub origin: Origin,
    /// The StatefulSet's name ([`set_of`]), `None` for lines about no set (`kubelet start=2s`).
    pub set: Option<String>,
    /// Seen while catching up after an outage: it happened during the outage, and its time is
    /// when it was seen (the pane marks it).
    pub late: bool,
}

impl TimelineEntry {
    /// An entry attributed by [`set_of`] against the `sets` known now.
    pub fn new(t_ms: u64, kind: EventKind, origin: Origin, sets: &[&str]) -> TimelineEntry {
        let set = set_of(&kind, sets);
        TimelineEntry { t_ms, kind, origin, set, late: false }
    }
}

/// A bounded ring of timeline entries ([`TIMELINE_CAPACITY`]), optionally filtered to one set.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    entries: VecDeque<TimelineEntry>,
    /// Entries ever pushed (including dropped ones): a cheap change marker for renderers.
    pushed: u64,
    /// How far the view is scrolled back from the newest shown entry (0: it follows new
    /// entries). While scrolled back, new entries keep the same lines on screen.
    back: usize,
    /// Only lines about this set (and lines about no set) are shown.
    only: Option<String>,
    /// Only lines that name this pod are shown (its kubelet, the controller's actions on it,
    /// its Events, commands and plan moves naming it).
    pod: Option<String>,
    /// Entries kept that the filter shows (all of them without one), kept as entries come and
    /// go so a frame never counts the ring.
    shown: usize,
}

impl Timeline {
    pub fn push(&mut self, entry: TimelineEntry) {
        if self.entries.len() == TIMELINE_CAPACITY
            && let Some(old) = self.entries.pop_front()
            && self.shows(&old)
        {
            self.shown -= 1;
        }
        let shown = self.shows(&entry);
        self.entries.push_back(entry);
        self.pushed += 1;
        if shown {
            self.shown += 1;
            if self.back > 0 {
                self.back = (self.back + 1).min(self.shown);
            }
        }
    }

    fn shows(&self, e: &TimelineEntry) -> bool {
        if let Some(pod) = &self.pod {
            return names_pod(&e.kind, pod);
        }
        match (&self.only, &e.set) {
            (Some(only), Some(set)) => only == set,
            _ => true,
        }
    }

    /// The pod the view is filtered to, if any.
    pub fn only_pod(&self) -> Option<&str> {
        self.pod.as_deref()
    }

    /// Shows only the lines that name `pod`, or lifts that filter with `None` (the set filter,
    /// if any, applies again); the view follows the newest entries again.
    pub fn filter_pod(&mut self, pod: Option<String>) {
        self.pod = pod;
        self.refilter();
    }

    /// The set the view is filtered to, if any.
    pub fn only(&self) -> Option<&str> {
        self.only.as_deref()
    }

    /// Shows only `set`'s lines (and lines about no set), or every line with `None`; the view
    /// follows the newest entries again.
    pub fn filter(&mut self, set: Option<String>) {
        self.only = set;
        self.refilter();
    }

    /// After a filter changed: recount what it shows and follow the newest entries again.
    fn refilter(&mut self) {
        self.back = 0;
        self.shown = self.entries.iter().filter(|e| self.shows(e)).count();
    }

    /// Entries the view is scrolled back by, for a pane showing `rows` lines (clamped so the
    /// oldest entry is at most at the top).
    pub fn back(&self, rows: usize) -> usize {
        self.back.min(self.len().saturating_sub(rows))
    }

    /// Scrolls `by` entries towards older (positive) or newer (negative) ones, for a pane
    /// showing `rows` lines. Refuses, saying why, when it is already at that end.
    pub fn scroll(&mut self, by: isize, rows: usize) -> Result<(), Refusal> {
        let max = self.len().saturating_sub(rows);
        let now = self.back(rows);
        let to = now.saturating_add_signed(by).min(max);
        if to == now {
            return Err(if by > 0 {
                let dropped = match self.dropped() {
                    0 => String::new(),
                    n => format!("; {n} older were dropped"),
                };
                format!(
                    "the timeline's oldest entry is on screen (it keeps the last \
                     {TIMELINE_CAPACITY}{dropped})"
                )
                .into()
            } else {
                "the timeline already follows the newest entries".into()
            });
        }
        self.back = to;
        Ok(())
    }

    /// The entries the view shows (the filter applied), oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &TimelineEntry> {
        self.entries.iter().filter(|e| self.shows(e))
    }

    /// Every entry kept, whatever the filter, oldest first.
    pub fn all(&self) -> impl DoubleEndedIterator<Item = &TimelineEntry> + ExactSizeIterator {
        self.entries.iter()
    }

    /// Entries the view shows.
    pub fn len(&self) -> usize {
        self.shown
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// Entries dropped to keep the ring bounded.
    pub fn dropped(&self) -> u64 {
        self.pushed.saturating_sub(self.entries.len() as u64)
    }
}

/// Commands whose first argument names a set (`partition web 2`, `undo db/pg 3`).
const SET_COMMANDS: [&str; 12] = [
    "create",
    "image",
    "scale",
    "partition",
    "strategy",
    "maxunavailable",
    "undo",
    "restart",
    "delete",
    "freeze",
    "unfreeze",
    "expect",
];

/// Commands whose first argument names a pod.
const POD_COMMANDS: [&str; 6] =
    ["delete-pod", "force-delete-pod", "fail", "unready", "ready", "break"];

/// The StatefulSet a timeline event is about, if one: its `set` field; the set a pod belongs
/// to by name (`web-3` → `web`); a claim's set among `sets` (`data-web-0` → `web`); the set a
/// command names (scenario syntax: the console logs in it too).
pub fn set_of(kind: &EventKind, sets: &[&str]) -> Option<String> {
    let pod_set = |pod: &str| parent_and_ordinal(pod).map(|(parent, _)| parent.to_string());
    let name = |word: &str| word.rsplit('/').next().unwrap_or(word).to_string();
    match kind {
        EventKind::Controller { set, .. }
        | EventKind::Blocked { set, .. }
        | EventKind::Status { set, .. }
        | EventKind::Differs { set, .. }
        | EventKind::Plan { set, .. }
        | EventKind::Group { set, .. } => Some(set.clone()),
        EventKind::Kubelet { pod, .. } => pod_set(pod),
        EventKind::Gc { pod: Some(pod), .. } => pod_set(pod),
        EventKind::Gc { pvc: Some(pvc), .. } => claim_set(pvc, sets),
        EventKind::Gc { .. } | EventKind::Notice { .. } => None,
        EventKind::Event { object, .. } => match object.split_once('/') {
            Some(("pod", pod)) => pod_set(pod),
            Some((_, other)) => Some(other.to_string()),
            None => None,
        },
        EventKind::Expect { detail, .. } => detail.split_once(':').map(|(set, _)| name(set)),
        EventKind::Error { message, .. } => {
            let rest = message.strip_prefix("sync ")?;
            rest.split_once(':').map(|(set, _)| name(set))
        }
        EventKind::Command { text, .. } => {
            let mut words = text.split_whitespace();
            let (verb, arg) = (words.next()?, words.next()?);
            if SET_COMMANDS.contains(&verb) {
                Some(name(arg))
            } else if POD_COMMANDS.contains(&verb) {
                pod_set(&name(arg))
            } else {
                None
            }
        }
    }
}

/// The set a claim `<template>-<set>-<ordinal>` belongs to, among `sets` (the longest match).
fn claim_set(pvc: &str, sets: &[&str]) -> Option<String> {
    let (prefix, _) = parent_and_ordinal(pvc)?;
    sets.iter()
        .filter(|s| prefix.strip_suffix(*s).is_some_and(|head| head.ends_with('-')))
        .max_by_key(|s| s.len())
        .map(|s| s.to_string())
}

/// Whether an entry is about `pod`: its pod field, an Event about `pod/NAME`, or a text that
/// holds the name as a word (`delete-pod web-3`, a plan's `opens web-3`; `web-30` is another).
pub fn names_pod(kind: &EventKind, pod: &str) -> bool {
    let word = |text: &str| {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.')).any(|w| w == pod)
    };
    match kind {
        EventKind::Kubelet { pod: p, .. } => p == pod,
        EventKind::Controller { pod: Some(p), .. }
        | EventKind::Gc { pod: Some(p), .. }
        | EventKind::Blocked { pod: Some(p), .. } => p == pod,
        EventKind::Event { object, .. } => object.strip_prefix("pod/") == Some(pod),
        EventKind::Command { text, .. }
        | EventKind::Plan { text, .. }
        | EventKind::Group { text, .. }
        | EventKind::Notice { text } => word(text),
        EventKind::Error { message, .. } => word(message),
        EventKind::Blocked { reason, .. } => word(reason),
        EventKind::Expect { detail, .. } => word(detail),
        EventKind::Differs { expected, observed, .. } => word(expected) || word(observed),
        EventKind::Controller { .. } | EventKind::Gc { .. } | EventKind::Status { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(text: &str) -> EventKind {
        EventKind::Command { line: 0, text: text.into() }
    }

    #[test]
    fn lines_are_attributed_to_their_set() {
        let sets = ["web", "db"];
        assert_eq!(set_of(&cmd("partition web 2"), &sets).as_deref(), Some("web"));
        assert_eq!(set_of(&cmd("undo prod/db 3"), &sets).as_deref(), Some("db"));
        assert_eq!(set_of(&cmd("delete-pod db-3"), &sets).as_deref(), Some("db"));
        assert_eq!(set_of(&cmd("kubelet start=2s"), &sets), None);
        let kubelet = EventKind::Kubelet { pod: "web-10".into(), event: "ready".into() };
        assert_eq!(set_of(&kubelet, &sets).as_deref(), Some("web"));
        let gc = EventKind::Gc { pod: None, pvc: Some("data-db-0".into()) };
        assert_eq!(set_of(&gc, &sets).as_deref(), Some("db"));
        let err = EventKind::Error { line: None, message: "sync default/db: create-pod".into() };
        assert_eq!(set_of(&err, &sets).as_deref(), Some("db"));
        let exp = EventKind::Expect { line: 3, ok: true, detail: "web: ready=3".into() };
        assert_eq!(set_of(&exp, &sets).as_deref(), Some("web"));
    }

    fn entry(set: Option<&str>) -> TimelineEntry {
        TimelineEntry {
            t_ms: 0,
            kind: cmd("x"),
            origin: Origin::Backend,
            set: set.map(Into::into),
            late: false,
        }
    }

    #[test]
    fn the_filter_keeps_one_set_and_lines_about_none() {
        let mut t = Timeline::default();
        for s in [Some("web"), Some("db"), None, Some("web")] {
            t.push(entry(s));
        }
        assert_eq!(t.len(), 4);
        t.filter(Some("web".into()));
        assert_eq!(t.len(), 3);
        assert!(t.iter().all(|e| e.set.as_deref() != Some("db")));
        t.filter(None);
        assert_eq!(t.len(), 4);
    }

    /// The count a filtered view keeps stays that of the entries it shows as the ring drops
    /// old ones.
    #[test]
    fn the_filtered_count_follows_the_ring() {
        let mut t = Timeline::default();
        t.filter(Some("web".into()));
        for i in 0..TIMELINE_CAPACITY + 7 {
            t.push(entry(Some(if i % 3 == 0 { "web" } else { "db" })));
        }
        assert_eq!(t.len(), t.iter().count());
        t.filter(None);
        assert_eq!(t.len(), TIMELINE_CAPACITY);
    }

    #[test]
    fn dropped_entries_are_counted_and_said() {
        let mut t = Timeline::default();
        for _ in 0..TIMELINE_CAPACITY + 5 {
            t.push(entry(None));
        }
        assert_eq!(t.len(), TIMELINE_CAPACITY);
        assert_eq!(t.dropped(), 5);
        let _ = t.scroll(isize::MAX / 2, 10);
        let why = t.scroll(1, 10).err().map(|r| r.0).unwrap_or_default();
        assert!(why.contains("5 older were dropped"), "{why}");
    }

    #[test]
    fn the_pod_filter_shows_the_lines_that_name_the_pod() {
        let sets = ["web"];
        let kinds = [
            EventKind::Kubelet { pod: "web-3".into(), event: "ready".into() },
            EventKind::Kubelet { pod: "web-30".into(), event: "ready".into() },
            cmd("delete-pod web-3"),
            EventKind::Plan {
                set: "web".into(),
                step: 1,
                of: 2,
                phase: "waiting".into(),
                partition: 3,
                text: "step 1/2: partition 4 → 3 (opens web-3)".into(),
            },
            EventKind::Event {
                object: "pod/web-3".into(),
                reason: "Unhealthy".into(),
                message: "Readiness probe failed".into(),
                warning: true,
            },
            cmd("scale web 5"),
            EventKind::Controller {
                set: "web".into(),
                action: crate::core::ControllerAction::CreateRevision,
                pod: None,
                pvc: None,
                revision: Some("web-3c".into()),
                reason: None,
            },
        ];
        let mut t = Timeline::default();
        for k in &kinds {
            t.push(TimelineEntry::new(0, k.clone(), Origin::Backend, &sets));
        }
        t.filter(Some("web".into()));
        t.filter_pod(Some("web-3".into()));
        assert_eq!(t.len(), 4, "kubelet, the command, the plan move, the Event");
        assert_eq!(t.only_pod(), Some("web-3"));
        t.filter_pod(None);
        assert_eq!(t.len(), 7, "the set filter again");
    }
}
