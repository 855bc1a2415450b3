//! The runner's output: the plan before it starts, a line per change (a live line on a
//! terminal, one line per phase's countdown in a log), the checks' output, or JSON lines, each
//! with the time it was said.

use k8s_openapi::api::apps::v1::StatefulSet;

use crate::backend::ObjRef;
use crate::plan::record::Record;
use crate::plan::start::Start;
use crate::verbs::say;

/// The runner's output: a line per change (a live line on a terminal), or JSON lines.
pub struct Output {
    json: bool,
    line: crate::verbs::progress::Line,
    last: String,
    /// What the plan waits on, said since its step or phase last changed, its counters masked
    /// (a log gets a line when the state changes: a gate asked again says nothing new).
    said: std::collections::HashSet<String>,
    /// The step and phase those were said in.
    at: Option<(usize, &'static str)>,
    /// The set's verdict as the runner's state shows it (`plan::verdict`): JSON lines carry
    /// its state and word, as `explain` and `wait` say them.
    verdict: Option<(&'static str, &'static str)>,
}

impl Output {
    /// JSON lines, or text (live on a terminal).
    pub fn new(json: bool) -> Output {
        use std::io::IsTerminal as _;
        let line = crate::verbs::progress::Line::new(!json && std::io::stdout().is_terminal());
        Output {
            json,
            line,
            last: String::new(),
            said: std::collections::HashSet::new(),
            at: None,
            verdict: None,
        }
    }

    pub fn is_json(&self) -> bool {
        self.json
    }

    /// The set's verdict now, for the JSON lines.
    pub fn verdict(&mut self, v: Option<&crate::plan::verdict::Verdict>) {
        self.verdict = v.map(|v| (v.row.about().id, v.word().word()));
    }

    pub fn event(&mut self, r: Option<&Record>, text: &str) {
        if self.json {
            say(&json_line("event", r, text, self.verdict));
        } else {
            self.line.finish(text);
        }
        self.last.clear();
    }

    /// What the plan waits for (`step 1/3: baking, 1m left`): on a terminal a live line; in a
    /// log (or JSON) a line when the state changes — the same wait said again within a step and
    /// phase (a gate asked again, a countdown) makes none.
    pub fn waiting(&mut self, r: Option<&Record>, text: &str) {
        if !self.line.is_live() {
            let at = r.map(|r| (r.step, r.phase.name()));
            if at != self.at {
                self.at = at;
                self.said.clear();
            }
            if !self.said.insert(crate::plan::said::counters_masked(text)) {
                return;
            }
        }
        if self.json {
            if text != self.last {
                say(&json_line("waiting", r, text, self.verdict));
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
                say(&json_line("plan", None, &l, None));
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

fn json_line(kind: &str, r: Option<&Record>, text: &str, verdict: Option<(&str, &str)>) -> String {
    let mut v = serde_json::json!({"kind": kind, "text": text, "at": now()});
    if let Some((state, word)) = verdict {
        v["state"] = state.into();
        v["word"] = word.into();
    }
    if let Some(r) = r {
        v["step"] = r.step.into();
        v["of"] = r.of.into();
        v["phase"] = serde_json::to_value(r.phase).unwrap_or_default();
        v["partition"] = r.partition.into();
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn counters_are_masked_and_names_are_not() {
        let m = crate::plan::said::counters_masked;
        assert_eq!(m("baking, 1m12s left"), m("baking, 59s left"));
        assert_eq!(
            m("not yet; asked again at 2026-11-29T08:47:29Z"),
            m("not yet; asked again at 2026-11-29T08:47:31Z")
        );
        assert_eq!(m("(try 1 of 180)"), m("(try 2 of 180)"));
        assert_ne!(m("waiting for web-1"), m("waiting for web-2"));
        assert_ne!(m("step 1/2"), m("step 2/2"));
    }
}
