//! The runner's output: the plan before it starts, a line per change (a live line on a
//! terminal, one line per phase's countdown in a log), the checks' output, or JSON lines.

use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;

use crate::backend::ObjRef;
use crate::core::spec;
use crate::plan::decide::Start;
use crate::plan::duration_words;
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

    pub fn waiting(&mut self, r: &Record, text: &str) {
        let at = format!("step {}/{}: {text}", r.step, r.of);
        // A countdown is one line in a log (a live line on a terminal).
        let counting = |t: &str| t.split(": ").nth(1).is_some_and(|w| w.starts_with("baking"));
        if !self.line.is_live() && counting(&at) && counting(&self.last) {
            return;
        }
        if self.json {
            if at != self.last {
                say(&json_line("waiting", Some(r), text));
            }
        } else {
            self.line.show(&at, Duration::ZERO);
        }
        self.last = at;
    }

    pub fn finish(&mut self, text: &str) {
        self.event(None, text);
    }

    /// A check's output (its last lines), indented under it.
    pub fn output(&mut self, lines: &[String]) {
        for l in lines {
            if self.json {
                say(&serde_json::json!({"kind": "check-output", "text": l}).to_string());
            } else {
                say(&format!("  | {l}"));
            }
        }
    }

    pub fn preview(&mut self, key: &ObjRef, set: &StatefulSet, start: &Start) {
        let replicas = spec::replicas(set);
        let mut lines = vec![format!(
            "plan for {key}: {} replicas, partition {} now",
            replicas,
            spec::strategy(set).partition
        )];
        for (i, (spec, t)) in start.steps.0.iter().zip(start.steps.targets(replicas)).enumerate() {
            lines.push(match t {
                crate::plan::Target::Update { updated, partition } => {
                    format!("  step {}: {spec} → {updated} of {replicas} updated (partition {partition})", i + 1)
                }
                crate::plan::Target::Gate => format!("  step {}: pause until `ststui approve {}`", i + 1, key.name),
            });
        }
        lines.push(format!(
            "  then: wait for the step's pods to be updated, Ready and available; bake {}; {}; on failure: {}",
            duration_words(start.bake_seconds * 1000),
            if start.checks.is_empty() { "no checks".to_string() } else { format!("checks {}", start.checks.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")) },
            start.on_failure.word()
        ));
        for l in lines {
            if self.json {
                say(&json_line("plan", None, &l));
            } else {
                say(&l);
            }
        }
    }
}

fn json_line(kind: &str, r: Option<&Record>, text: &str) -> String {
    let mut v = serde_json::json!({"kind": kind, "text": text});
    if let Some(r) = r {
        v["step"] = r.step.into();
        v["of"] = r.of.into();
        v["phase"] = serde_json::to_value(r.phase).unwrap_or_default();
        v["partition"] = r.partition.into();
    }
    v.to_string()
}
