//! Rendering the timeline (`spec/scenario.md`, "Timeline"): one line per [`Event`], either the
//! JSONL form (the serde form of `backend::Event`, a public interface) or the aligned text form
//! for people (`--format text`), with the virtual time in seconds.
//!
//! Owns: the two line formats. Must not touch: where lines go (the headless runner writes them
//! to stdout), how events are produced.

use crate::backend::{Event, EventKind};

/// How the timeline is printed: `text` for people (the default) or `jsonl`, one JSON object per
/// line (`spec/scenario.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    Jsonl,
}

/// One line (without the newline) in `format`.
pub fn render(event: &Event, format: Format) -> String {
    match format {
        Format::Jsonl => jsonl(event),
        Format::Text => text(event),
    }
}

/// The JSONL line: `{"t":1.5,"type":"kubelet","pod":"web-0","event":"running"}`.
pub fn jsonl(event: &Event) -> String {
    // Serializing plain strings and numbers cannot fail; an empty object is the fallback.
    serde_json::to_string(event).unwrap_or_else(|_| "{}".to_string())
}

/// `t` as people read it: `12.250s`.
pub fn seconds(t_ms: u64) -> String {
    format!("{}.{:03}s", t_ms / 1000, t_ms % 1000)
}

/// The `type` word of an event, as in JSONL.
pub fn type_word(kind: &EventKind) -> &'static str {
    match kind {
        EventKind::Command { .. } => "command",
        EventKind::Notice { .. } => "notice",
        EventKind::Controller { .. } => "controller",
        EventKind::Kubelet { .. } => "kubelet",
        EventKind::Gc { .. } => "gc",
        EventKind::Blocked { .. } => "blocked",
        EventKind::Status { .. } => "status",
        EventKind::Expect { .. } => "expect",
        EventKind::Error { .. } => "error",
        EventKind::Event { .. } => "event",
        EventKind::Differs { .. } => "differs",
        EventKind::Plan { .. } => "plan",
        EventKind::Group { .. } => "group",
    }
}

/// The aligned text line: time (right-aligned), type (padded), then what happened.
///
/// ```text
///    2.000s  kubelet     web-0 ready
///    2.000s  controller  web create-pod web-1
/// ```
pub fn text(event: &Event) -> String {
    // Text from a script or the API (a command, an Event's message) never drives the terminal.
    let body = body(&event.kind);
    let body = crate::sim::textfile::escape_controls(&body);
    format!("{:>9}  {:<10}  {body}", seconds(event.t_ms), type_word(&event.kind))
}

fn body(kind: &EventKind) -> String {
    match kind {
        EventKind::Command { line, text } => format!("[{line}] {text}"),
        EventKind::Notice { text } => text.clone(),
        EventKind::Controller { set, action, pod, pvc, revision, reason } => {
            let object = [pod, pvc, revision]
                .into_iter()
                .flatten()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(" ");
            let reason = reason.as_ref().map(|r| format!(" ({r})")).unwrap_or_default();
            format!("{set} {action} {object}{reason}").trim_end().to_string()
        }
        EventKind::Kubelet { pod, event } => format!("{pod} {event}"),
        EventKind::Gc { pod, pvc } => {
            let mut parts = Vec::new();
            if let Some(p) = pod {
                parts.push(format!("pod {p}"));
            }
            if let Some(c) = pvc {
                parts.push(format!("pvc {c}"));
            }
            parts.join(" ")
        }
        EventKind::Blocked { set, reason, pod } => match pod {
            Some(p) => format!("{set} [{p}] {reason}"),
            None => format!("{set} {reason}"),
        },
        EventKind::Status {
            set,
            replicas,
            ready_replicas,
            available_replicas,
            current_replicas,
            updated_replicas,
            current_revision,
            update_revision,
            observed_generation,
        } => {
            let revisions = if current_revision == update_revision {
                format!("revision={update_revision}")
            } else {
                format!("revision={current_revision}->{update_revision}")
            };
            format!(
                "{set} replicas={replicas} ready={ready_replicas} available={available_replicas} \
                 current={current_replicas} updated={updated_replicas} {revisions} \
                 generation={observed_generation}"
            )
        }
        EventKind::Expect { line, ok, detail } => {
            let verdict = if *ok { "ok" } else { "FAILED" };
            format!("[{line}] {verdict}: {detail}")
        }
        EventKind::Error { line, message } => match line {
            Some(l) => format!("[{l}] {message}"),
            None => message.clone(),
        },
        EventKind::Event { object, reason, message, .. } => format!("{object} {reason}: {message}"),
        EventKind::Differs { set, expected, observed } => {
            format!("{set} advisor expected {expected}, the cluster {observed}")
        }
        EventKind::Plan { set, text, .. } => format!("{set} {text}"),
        EventKind::Group { group, text, .. } => format!("{group} {text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t_ms: u64, kind: EventKind) -> Event {
        Event { t_ms, kind }
    }

    #[test]
    fn text_lines_are_aligned_with_the_virtual_time() {
        let a = text(&ev(2000, EventKind::Kubelet { pod: "web-0".into(), event: "ready".into() }));
        let b = text(&ev(
            12_250,
            EventKind::Controller {
                set: "web".into(),
                action: crate::core::ControllerAction::DeletePod,
                pod: Some("web-2".into()),
                pvc: None,
                revision: None,
                reason: Some(crate::core::DeleteReason::Update),
            },
        ));
        assert_eq!(a, "   2.000s  kubelet     web-0 ready");
        assert_eq!(b, "  12.250s  controller  web delete-pod web-2 (update)");
        assert_eq!(a.find("web-0"), b.find("web "));
    }

    #[test]
    fn jsonl_is_the_serde_form() {
        let e = ev(0, EventKind::Expect { line: 4, ok: false, detail: "ready=3 (got 2)".into() });
        assert_eq!(
            jsonl(&e),
            r#"{"t":0,"type":"expect","line":4,"ok":false,"detail":"ready=3 (got 2)"}"#
        );
        assert_eq!(render(&e, Format::Text), "   0.000s  expect      [4] FAILED: ready=3 (got 2)");
    }
}
