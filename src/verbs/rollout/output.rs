//! The runner's output: the plan before it starts, a line per change (a live line on a
//! terminal, one line per phase's countdown in a log), the checks' output, or JSON lines, each
//! with the time it was said.

use k8s_openapi::api::apps::v1::StatefulSet;

use crate::backend::ObjRef;
use crate::plan::decide::Start;
use crate::plan::record::Record;
use crate::verbs::say;

/// The runner's output: a line per change (a live line on a terminal), or JSON lines.
pub struct Output {
    json: bool,
    line: crate::verbs::progress::Line,
    last: String,
}

impl Output {
    /// JSON lines, or text (live on a terminal).
    pub fn new(json: bool) -> Output {
        use std::io::IsTerminal as _;
        let line = crate::verbs::progress::Line::new(!json && std::io::stdout().is_terminal());
        Output { json, line, last: String::new() }
    }

    pub fn event(&mut self, r: Option<&Record>, text: &str) {
        if self.json {
            say(&json_line("event", r, text));
        } else {
            self.line.finish(text);
        }
        self.last.clear();
    }

    /// What the plan waits for (`step 1/3: baking, 1m left`): a line each time the words change,
    /// a countdown one line in a log (a live line on a terminal).
    pub fn waiting(&mut self, r: Option<&Record>, text: &str) {
        let counting = |t: &str| t.split(": ").nth(1).is_some_and(|w| w.starts_with("baking"));
        if !self.line.is_live() && counting(text) && counting(&self.last) {
            return;
        }
        if self.json {
            if text != self.last {
                say(&json_line("waiting", r, text));
            }
        } else {
            self.line.show(text, "");
        }
        self.last = text.to_string();
    }

    pub fn finish(&mut self, text: &str) {
        self.event(None, text);
    }

    /// A check's output (its last lines), indented under it.
    pub fn output(&mut self, kind: &str, lines: &[String]) {
        for l in lines {
            if self.json {
                say(&serde_json::json!({"kind": kind, "text": l, "at": now()}).to_string());
            } else {
                say(&format!("  | {l}"));
            }
        }
    }

    pub fn preview(&mut self, key: &ObjRef, set: &StatefulSet, start: &Start) {
        for l in crate::plan::said::preview(key, set, start) {
            if self.json {
                say(&json_line("plan", None, &l));
            } else {
                say(&l);
            }
        }
    }
}

/// Now, as the JSON lines stamp it (RFC 3339, milliseconds, UTC).
fn now() -> String {
    k8s_openapi::jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

fn json_line(kind: &str, r: Option<&Record>, text: &str) -> String {
    let mut v = serde_json::json!({"kind": kind, "text": text, "at": now()});
    if let Some(r) = r {
        v["step"] = r.step.into();
        v["of"] = r.of.into();
        v["phase"] = serde_json::to_value(r.phase).unwrap_or_default();
        v["partition"] = r.partition.into();
    }
    v.to_string()
}
