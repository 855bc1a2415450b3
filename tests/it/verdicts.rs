//! The one verdict, every row of its table through every surface: each row has a fixture (a
//! scenario played on the simulator, sometimes with a record changed after it, as a runner
//! killed or another writer would leave it), and the console's header, the set list,
//! `explain` (text and JSON), `wait` and the Argo CD health script all judge it and agree with
//! the table (`plan::verdict::Row::about`). docs/verdicts.md's table is generated from the same
//! table (`UPDATE_README=1 cargo test --test it verdicts` rewrites it).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::StatefulSet;
use ststui::app::{AppState, Msg, update};
use ststui::backend::{BackendEvent, Capabilities, Mode, ObjRef, Object};
use ststui::plan::verdict::{Kind, Row};
use ststui::verbs::progress::{Goal, Progress, Verdict as Waited};
use ststui::verbs::report::Report;

use crate::support::played::{Run, play};

const BASE: &str = "kubelet start=1s ready=1s stop=1s\ncreate web replicas=5\nsettle\n";

const GROUP: &str = "kubelet start=1s ready=1s stop=1s\n\
     create ingester-zone-a replicas=3 labels=rollout-group=ingester\n\
     create ingester-zone-b replicas=3 labels=rollout-group=ingester\n\
     create ingester-zone-c replicas=3 labels=rollout-group=ingester\n\
     settle\n\
     partition ingester-zone-a 3\npartition ingester-zone-b 3\npartition ingester-zone-c 3\n";

/// A row's fixture: the world, the set judged, and whether the simulator's controller is paused.
struct Fixture {
    run: Run,
    set: &'static str,
    paused: bool,
    /// Annotations changed after the scenario (a runner killed, a record forged): (set, key,
    /// value; `None` removes it).
    edits: Vec<(&'static str, &'static str, Option<&'static str>)>,
    /// Pods unreadable (a permission missing).
    pods_unknown: bool,
}

fn fixture(script: &str, set: &'static str) -> Fixture {
    let run = play(script);
    assert!(run.outcome.passed(), "{script}\n{:?}", run.outcome.failures);
    Fixture { run, set, paused: false, edits: vec![], pods_unknown: false }
}

/// The fixture of each row of the table.
fn of(row: Row) -> Fixture {
    use ststui::plan::record::{LEASE, PLAN};
    let web = "web";
    match row {
        Row::Healthy => fixture(BASE, web),
        Row::Held => {
            fixture(&format!("{BASE}partition web 3\nimage web nginx:1.26\nsettle\n"), web)
        }
        Row::Rolling => fixture(&format!("{BASE}image web nginx:1.26\nwait 1500ms\n"), web),
        Row::Degraded => fixture(&format!("{BASE}wait 6m\nunready web-2\nwait 1s\n"), web),
        Row::Blocked => fixture(
            &format!(
                "{BASE}kubelet broken=nginx:broken\npartition web 4\nimage web nginx:broken\n\
                 wait 6m\n"
            ),
            web,
        ),
        Row::Paused => Fixture {
            paused: true,
            ..fixture(&format!("{BASE}image web nginx:1.26\nwait 1500ms\n"), web)
        },
        Row::Frozen => fixture(&format!("{BASE}freeze web\nimage web nginx:1.26\nsettle\n"), web),
        Row::FrozenIdle => fixture(&format!("{BASE}freeze web\nsettle\n"), web),
        Row::Plan => fixture(
            &format!(
                "{BASE}partition web 5\nimage web nginx:1.26\nrollout web steps=1,100% \
                 bake=10m\nwait 30s\nexpect web plan=baking\n"
            ),
            web,
        ),
        Row::Approval => fixture(
            &format!(
                "{BASE}partition web 5\nimage web nginx:1.26\nrollout web steps=1,pause,100%\n\
                 settle\nexpect web plan=gate\n"
            ),
            web,
        ),
        Row::Stalled => Fixture {
            // The runner killed: its lease gone, its record still under way.
            edits: vec![("web", LEASE, None)],
            ..of(Row::Plan)
        },
        Row::Halted => fixture(
            &format!(
                "{BASE}kubelet broken=nginx:broken\npartition web 5\nimage web nginx:broken\n\
                 rollout web steps=1,100% stuck-after=1m\nsettle\nexpect web plan=halted\n"
            ),
            web,
        ),
        Row::Invalid => {
            Fixture { edits: vec![("web", PLAN, Some("{not json"))], ..of(Row::Healthy) }
        }
        Row::GroupWaiting => fixture(
            &format!(
                "{GROUP}image ingester-zone-a nginx:1.26\nimage ingester-zone-b nginx:1.26\n\
                 image ingester-zone-c nginx:1.26\n\
                 rollout group=ingester steps=1,100% bake=10m\nwait 30s\n\
                 expect ingester-zone-b group=waiting\n"
            ),
            "ingester-zone-b",
        ),
        Row::GroupHalted => fixture(
            &format!(
                "{GROUP}kubelet broken=nginx:broken\nimage ingester-zone-a nginx:broken\n\
                 image ingester-zone-b nginx:1.26\nimage ingester-zone-c nginx:1.26\n\
                 rollout group=ingester steps=1,100% stuck-after=1m\nsettle\n\
                 expect ingester-zone-a group=halted\nexpect ingester-zone-b group=waiting\n"
            ),
            "ingester-zone-b",
        ),
        Row::GroupStalled => Fixture {
            edits: vec![
                ("ingester-zone-a", ststui::plan::group::part::LEASE, None),
                ("ingester-zone-a", LEASE, None),
            ],
            ..of(Row::GroupWaiting)
        },
        Row::Unknown => Fixture { pods_unknown: true, ..of(Row::Rolling) },
    }
}

impl Fixture {
    fn sets(&self) -> Vec<StatefulSet> {
        self.run
            .sim
            .sets()
            .map(|s| {
                let mut s = s.clone();
                for (name, k, v) in &self.edits {
                    if s.metadata.name.as_deref() != Some(name) {
                        continue;
                    }
                    let ann = s.metadata.annotations.get_or_insert_default();
                    match v {
                        Some(v) => ann.insert(k.to_string(), v.to_string()),
                        None => ann.remove(*k),
                    };
                }
                s
            })
            .collect()
    }

    fn key(&self) -> ObjRef {
        ObjRef::new("default", self.set)
    }

    /// The console's state of this world, the set selected, as the simulator backend feeds it.
    fn state(&self) -> AppState {
        let mut st = AppState::new(Capabilities::simulator(), ststui::core::Options::default());
        let store = self.run.sim.store();
        let mut msgs =
            vec![Msg::Backend(BackendEvent::Clock { now: self.run.sim.now(), speed: 1.0 })];
        for s in self.sets() {
            msgs.push(Msg::Backend(BackendEvent::Applied(Object::Set(Arc::new(s)))));
        }
        for r in store.revisions().iter() {
            msgs.push(Msg::Backend(BackendEvent::Applied(Object::Revision(Arc::new(r.clone())))));
        }
        for b in store.budgets().iter() {
            msgs.push(Msg::Backend(BackendEvent::Applied(Object::Budget(Arc::new(b.clone())))));
        }
        if self.pods_unknown {
            msgs.push(Msg::Backend(BackendEvent::Access {
                kind: ststui::backend::ObjKind::Pod,
                denied: Some("you may not list pods in default".into()),
            }));
        } else {
            for p in self.run.sim.all_pods() {
                msgs.push(Msg::Backend(BackendEvent::Applied(Object::Pod(Arc::new(p.clone())))));
            }
        }
        if self.paused {
            msgs.push(Msg::Backend(BackendEvent::Mode(Mode::Paused)));
        }
        msgs.push(Msg::Backend(BackendEvent::Synced));
        msgs.push(Msg::BatchEnd);
        for m in msgs {
            update(&mut st, m);
        }
        st.selected_set = Some(self.key());
        update(&mut st, Msg::BatchEnd);
        st
    }

    /// The Argo CD script's status of the set (`sim_plan::argocd`).
    fn argo(&self) -> String {
        let set = self.sets().into_iter().find(|s| s.metadata.name.as_deref() == Some(self.set));
        crate::sim_plan::argocd::judged(&set.unwrap()).0
    }
}

/// What every surface says of the fixture of `row`, checked against the table.
fn agree(row: Row) {
    let about = row.about();
    let fx = of(row);
    let st = fx.state();
    let key = fx.key();
    let word = about.word.word();
    let context = || format!("row {}", about.id);
    // The console's header.
    let screen = ststui::app::view::Screen::of(&st);
    let header = screen.header.as_ref().and_then(|h| h.health).map(|h| h.word());
    let verdict = screen.verdict.as_deref().cloned();
    assert_eq!(
        verdict.as_ref().map(|v| v.row),
        Some(row),
        "{}: the console judged {verdict:#?}\ncontroller: {:#?}",
        context(),
        screen.controller
    );
    assert_eq!(header, Some(word), "{}: header", context());
    // The set list (its pods are in the mirror; where they are unknown it reads the status).
    if !fx.pods_unknown {
        let rows = ststui::app::sets::rows(&st);
        let listed = rows.iter().find(|r| *r.key == key).map(|r| r.health.word());
        assert_eq!(listed, Some(word), "{}: set list", context());
    }
    // explain, text and JSON.
    let report = Report::of(&st, &key).unwrap_or_else(|| panic!("{}: no report", context()));
    assert_eq!(report.health, word, "{}: explain's health", context());
    assert_eq!(report.verdict.state, about.id, "{}: explain's state", context());
    assert_eq!(report.verdict.done, about.kind == Kind::Done, "{}: explain's done", context());
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["verdict"]["done"], about.kind == Kind::Done, "{}", context());
    assert_eq!(json["verdict"]["word"], word, "{}", context());
    assert_eq!(json["health"], word, "{}", context());
    let text = report.text();
    assert!(text.starts_with(&format!("statefulset default/{}: {word}\n", fx.set)), "{text}");
    let said = match about.kind {
        Kind::Done => "verdict:    done: ",
        Kind::Waiting => "verdict:    not done: ",
        Kind::Stuck => "verdict:    stuck: ",
    };
    assert!(text.contains(said), "{}: {text}", context());
    if let Some(next) = &report.verdict.next {
        assert!(text.contains(&format!("next:       `{}`", next.command)), "{text}");
    }
    // wait: done (0), stuck (3) or waiting on.
    let mut progress = Progress::new(Duration::from_secs(600), Instant::now());
    let waited = progress.assess(&st, &key, &Goal::Rollout { full: false }, Instant::now());
    let kind = match &waited {
        Waited::Done(_) => Kind::Done,
        Waited::Waiting(..) => Kind::Waiting,
        Waited::Stuck { .. } => Kind::Stuck,
    };
    assert_eq!(kind, about.kind, "{}: wait said {waited:?}", context());
    // The Argo CD health script.
    if let Some(argo) = about.argo {
        assert_eq!(fx.argo(), argo.word(), "{}: Argo CD", context());
    }
}

#[test]
fn every_row_is_judged_alike_by_every_surface() {
    for row in Row::ALL {
        agree(row);
    }
}

/// The table in markdown, one row per state.
fn table() -> String {
    let mut out = String::from(
        "| state | word | `wait` | `explain`'s `done` | Argo CD | when | what moves it on |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for row in Row::ALL {
        let a = row.about();
        let wait = match a.kind {
            Kind::Done => "0 (done)",
            Kind::Waiting => "waits (1 at `--timeout`)",
            Kind::Stuck => "3 (stuck)",
        };
        let argo = a.argo.map_or("—", |a| a.word());
        out.push_str(&format!(
            "| `{}` | {} | {wait} | {} | {argo} | {} | {} |\n",
            a.id,
            a.word.word(),
            a.kind == Kind::Done,
            a.when,
            a.moves
        ));
    }
    out
}

#[test]
fn the_docs_table_is_the_verdicts_table() {
    crate::readme::check("docs/verdicts.md", "verdicts", &table());
}
