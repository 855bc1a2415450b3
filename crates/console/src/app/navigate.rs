//! Navigation actions that read the advisor or the timeline: jump to the pod the controller
//! waits on, filter the timeline to the selected set, export the timeline; and, after each
//! batch, the selected pod's Events follow the selection.
//!
//! Owns those actions' rules and words. Must not write anything but the selection, the
//! timeline's filter, the followed pod and the status line (through the reducer's helpers); the export's file is
//! written by the event loop (`Command::Export`).

use super::msg::Command;
use super::notify::info;
use super::selection::select;
use super::state::AppState;
use crate::app::refusal::Refusal;
use crate::backend::ObjRef;
use crate::core::explain::{Step, StepKind, waited_pod};
use crate::core::labels::parent_and_ordinal;

/// `w`: selects the pod the controller's next sync waits on (the OrderedReady blocker, the
/// terminating pod, the stale claim's pod …), else the pod the next action is about.
pub fn jump_to_waited(state: &mut AppState) -> Result<(), Refusal> {
    let set = state.selected_set.clone().ok_or("there is no StatefulSet on screen")?;
    let plan =
        state.plan_for(&set).ok_or("the advisor has not run yet: nothing is known to wait")?;
    let waited = waited_pod(plan);
    let (pod, why) = match waited {
        Some(pod) => (pod, "the controller waits on it"),
        None => {
            let acts =
                |s: &&Step| !matches!(s.kind, StepKind::Wait | StepKind::Hold | StepKind::Status);
            let next = state
                .derived
                .as_ref()
                .filter(|d| d.key.set == set)
                .and_then(|d| d.steps.iter().filter(acts).find_map(|s| s.pod.clone()));
            match next {
                Some(pod) => (pod, "nothing waits; the next sync acts on it"),
                None => return Err("the controller waits on no pod and has nothing to do".into()),
            }
        }
    };
    let ordinal = parent_and_ordinal(&pod)
        .filter(|(parent, _)| *parent == set.name)
        .map(|(_, o)| o)
        .ok_or_else(|| format!("{pod} is not an ordinal of {}", set.name))?;
    select(state, ordinal);
    info(state, format!("{pod}: {why}"));
    Ok(())
}

/// `T`: the timeline shows only the selected set's lines (and lines about no set), or every
/// line again.
pub fn toggle_timeline_filter(state: &mut AppState) -> Result<(), Refusal> {
    // Every set → the selected set → the selected pod → every set.
    if state.timeline.only_pod().is_some() {
        state.timeline.filter_pod(None);
        state.timeline.filter(None);
        info(state, "timeline: every set's lines".into());
        return Ok(());
    }
    let set = state.selected_set.as_ref().ok_or("there is no StatefulSet to filter on")?;
    let name = set.name.clone();
    if state.timeline.only().is_some() {
        let pod = crate::core::labels::pod_name(&name, state.selected_ordinal);
        state.timeline.filter_pod(Some(pod.clone()));
        info(state, format!("timeline: only the lines about {pod}"));
        return Ok(());
    }
    state.timeline.filter(Some(name.clone()));
    info(state, format!("timeline: only {name}'s lines (and lines about no set)"));
    Ok(())
}

/// `X`: every timeline line held, as the JSONL of `spec/scenario.md` (one event per line, `t`
/// in seconds since the backend's start), for the event loop to write to a new file.
pub fn export_timeline(state: &mut AppState) -> Vec<super::msg::Command> {
    let mut text = String::new();
    let mut lines = 0;
    for e in state.timeline.all() {
        let ev = crate::backend::Event { t_ms: e.t_ms, kind: e.kind.clone() };
        if let Ok(line) = serde_json::to_string(&ev) {
            text.push_str(&line);
            text.push('\n');
            lines += 1;
        }
    }
    let set = state.selected_set.as_ref().map_or("session", |s| s.name.as_str());
    let name = match state.now {
        Some(t) => format!("ststui-timeline-{set}-{}.jsonl", t.strftime("%Y%m%dT%H%M%S")),
        None => format!("ststui-timeline-{set}.jsonl"),
    };
    info(state, format!("exporting {lines} timeline lines to {name}"));
    vec![super::msg::Command::Export { name, text, lines }]
}

/// The export's outcome, said.
pub fn exported(state: &mut AppState, path: &str, lines: usize, error: Option<String>) {
    match error {
        None => {
            let dropped = state.timeline.dropped();
            let older = if dropped > 0 {
                format!(
                    " ({dropped} older lines had been dropped: the console keeps the last {})",
                    super::state::TIMELINE_CAPACITY
                )
            } else {
                String::new()
            };
            info(state, format!("timeline exported: {lines} lines to {path} (JSONL){older}"));
        }
        Some(why) => super::notify::error(state, format!("cannot export the timeline: {why}")),
    }
}

/// After a batch: when the selected pod changed, forgets the Events of the one before and asks
/// the backend for the new one's (one request per change of selection, not per key repeat: a
/// batch folds the keys read together).
pub fn follow_events(state: &mut AppState) -> Vec<Command> {
    let wanted = match (&state.selected_set, state.picking.is_some()) {
        (Some(set), false) => Some(ObjRef::new(
            set.namespace.clone(),
            crate::core::labels::pod_name(&set.name, state.selected_ordinal),
        )),
        _ => None,
    };
    if wanted == state.events_pod {
        return Vec::new();
    }
    if state.mirror.keep_pod_events(wanted.as_ref()) {
        state.dirty = true;
    }
    state.events_pod = wanted.clone();
    let op = crate::backend::Op::View(crate::backend::ViewOp::PodEvents(wanted));
    vec![Command::Backend(op)]
}
