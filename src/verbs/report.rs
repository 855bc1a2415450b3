//! `ststui explain`'s report: what the console shows about one set, as text for people and as
//! JSON for programs. The JSON is a stable interface (documented in the README, field by field,
//! and tested against that document): fields are added, never renamed or removed; `version`
//! changes only if that promise must ever be broken.
//!
//! Owns: the report's shape and its text form. Built from the console's selectors (`Screen`),
//! the advisor's plan and `core::explain`, so it says what the console says.

use k8s_openapi::api::apps::v1::StatefulSet;
use serde::Serialize;

use super::kubectl::{KubectlVerdict, rollout_status};
use crate::app::AppState;
use crate::app::view::grid::GridView;
use crate::app::view::{HeaderView, RevClass, Screen, StrategyView, explain::explain};
use crate::backend::ObjRef;
use crate::core::explain::{StuckReason, forced_rollback, next_actions};
use crate::core::{Observed, spec};

/// The JSON's version.
pub const VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub version: u32,
    pub namespace: String,
    pub name: String,
    /// Healthy, Progressing, Blocked, Frozen or Degraded.
    pub health: &'static str,
    pub replicas: Replicas,
    pub strategy: Strategy,
    pub current_revision: String,
    pub update_revision: String,
    pub frozen: Option<FrozenBy>,
    /// The rollout plan recorded on the set (`ststui rollout`), if any.
    pub plan: Option<PlanReport>,
    /// The rollout group the set is in, if any (filled by `explain`, which lists the
    /// namespace's sets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<super::report_group::GroupReport>,
    pub ordinals: Vec<Ordinal>,
    pub revisions: Vec<Revision>,
    /// The controller pane's sentences, most important first.
    pub controller: Vec<Line>,
    pub forced_rollback: Option<ForcedRollback>,
    /// Ours: done by `ststui wait`'s rule.
    pub verdict: Verdict,
    /// What `kubectl rollout status` would say now.
    pub kubectl: KubectlVerdict,
    /// Whether kubectl's verdict (done or not) differs from ours.
    pub differs: bool,
    /// The API server's version, whose controller semantics the advisor reproduced.
    pub server_version: Option<String>,
}

/// A rollout plan as its record on the set says, with its runner's lease.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanReport {
    /// "plan 2/4 (50%): baking, 1m12s left", as the console says it.
    pub words: String,
    /// The record (`ststui.io/plan`), or why it is invalid.
    pub record: Option<crate::plan::record::Record>,
    pub error: Option<String>,
    /// The runner driving it, while its lease holds.
    pub runner: Option<crate::plan::record::Lease>,
    /// Who runs it, in words: the live runner, or none (its lease ran out, or never taken).
    pub runner_words: String,
    /// It rolls out the revision the set rolls out now; false: history (a plan of an earlier
    /// template: it says nothing of the set now).
    pub current: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Replicas {
    pub desired: i32,
    pub current: i32,
    pub updated: i32,
    pub ready: i32,
    pub available: i32,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Strategy {
    /// RollingUpdate or OnDelete.
    #[serde(rename = "type")]
    pub type_: &'static str,
    /// The partition (0 for OnDelete).
    pub partition: i32,
    pub max_unavailable: Option<String>,
    /// RollingUpdate with no `rollingUpdate` block at all.
    pub rolling_update_unset: bool,
    pub pod_management_policy: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FrozenBy {
    pub by: String,
    /// `by`, and who wrote the record when the server's managed fields name another writer
    /// (the text lines; not in the JSON).
    #[serde(skip)]
    pub by_words: String,
    pub at: String,
    /// The partition `ststui resume` restores; `null` when the annotation does not hold one.
    pub partition: Option<i32>,
    /// What the annotation holds (the partition, or the invalid text).
    pub recorded: String,
    /// The freeze no longer holds: another writer moved the partition to this (below the
    /// replicas); `null` while it holds.
    pub broken: Option<i32>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ordinal {
    pub ordinal: i32,
    /// The pod's name, `null` when the ordinal has no pod.
    pub pod: Option<String>,
    /// The pod's revision (ControllerRevision name).
    pub revision: Option<String>,
    /// update, current, old, or none (no pod, or no revision label).
    pub revision_class: &'static str,
    /// Ready, Running, Pending, Terminating, Failed, "not created", "gone".
    pub state: &'static str,
    /// Below the partition: stays on the revision it has.
    pub held: bool,
    /// Beyond the replicas: scale-down deletes it.
    pub condemned: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Revision {
    pub name: String,
    pub number: i64,
    pub image: Option<String>,
    pub current: bool,
    pub update: bool,
    pub pods: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Line {
    /// next, waiting, held, done, hint, warning or error.
    pub kind: &'static str,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForcedRollback {
    pub pod: String,
    /// old-revision (certain) or broken-update (a suspicion).
    pub reason: &'static str,
    pub text: String,
}

/// The one verdict (`plan::verdict`): what `ststui wait`, the console and the Argo CD script say.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// Done as the spec asks: `ststui wait` exits 0.
    pub done: bool,
    /// Why: what it waits on, the rule that has it stuck, or what done means here.
    pub message: String,
    /// The row of the verdict table (docs/verdicts.md): healthy, held, rolling, plan, …
    pub state: &'static str,
    /// The health word.
    pub word: &'static str,
    /// What `ststui wait` does: done (exit 0), waiting, stuck (exit 3).
    pub wait: crate::plan::verdict::Kind,
    /// What it waits on: spec, pods, bake, checks, gate, budget, approval, runner, group,
    /// operator; null when it does not wait.
    pub waiting_on: Option<crate::plan::verdict::On>,
    /// The pod the rule names.
    pub pod: Option<String>,
    /// The command that moves it on.
    pub next: Option<crate::plan::verdict::Move>,
    /// The other way (an abort beside a continue).
    pub or: Option<crate::plan::verdict::Move>,
    /// Every pod on the update revision and Ready (`ststui wait --full`).
    pub complete: bool,
    /// The Argo CD health script's status for such a set (null where Argo CD cannot see it).
    pub argo: Option<&'static str>,
}

impl Verdict {
    fn of(v: &crate::plan::verdict::Verdict) -> Verdict {
        let about = v.row.about();
        Verdict {
            done: v.done(),
            message: v.why.clone(),
            state: about.id,
            word: about.word.word(),
            wait: about.kind,
            waiting_on: v.on,
            pod: v.pod.clone(),
            next: v.next.clone(),
            or: v.or.clone(),
            complete: v.complete(),
            argo: about.argo.map(crate::plan::verdict::Argo::word),
        }
    }
}

impl Report {
    /// The report on `key`, when the state holds it.
    pub fn of(state: &AppState, key: &ObjRef) -> Option<Report> {
        let screen = Screen::of(state);
        let header = screen.header.as_ref()?;
        let set = state.mirror.set(key)?;
        let plan = state.plan_for(key);
        let ns = key.namespace.as_str();
        let pods: Vec<_> = state.mirror.pods_in(ns).collect();
        let claims: Vec<_> = state.mirror.claims_in(ns).collect();
        let all_revisions: Vec<_> = state.mirror.revisions_in(ns).collect();
        let observed = Observed { set, pods: &pods, claims: &claims, revisions: &all_revisions };
        let now = state.now.unwrap_or_default();
        let (controller, stuck) = match plan {
            Some(plan) => {
                let steps = next_actions(&observed, plan);
                let planned = crate::plan::record::under_way(set).is_some();
                let offer = crate::app::view::explain::Offer::words_only(planned);
                let members: Vec<_> = state.mirror.pods_of(key).collect();
                let lines = explain(&observed, &members, plan, &steps, &screen.grid, now, offer);
                (lines, forced_rollback(&observed, plan, now))
            }
            None => (Vec::new(), None),
        };
        // The console's verdict (the one rule, on the same state).
        let judged =
            screen.verdict.as_deref().cloned().or_else(|| {
                crate::app::health::verdict(state, key, Some(&screen.controller), None)
            })?;
        let health = judged.word();
        let mut controller = controller;
        if let Some(line) = crate::app::derived::verdict_line(&judged) {
            controller.insert(0, line);
        }
        let strategy = strategy_of(header);
        let ordinals = ordinals_of(&screen.grid, set, key);
        let revisions = screen
            .revisions
            .iter()
            .map(|r| Revision {
                name: r.name.to_string(),
                number: r.number,
                image: r.image.map(str::to_string),
                current: r.current,
                update: r.update,
                pods: r.pods,
            })
            .collect();
        let verdict = Verdict::of(&judged);
        let kubectl = rollout_status(set);
        Some(Report {
            version: VERSION,
            namespace: key.namespace.clone(),
            name: key.name.clone(),
            health: health.word(),
            replicas: Replicas {
                desired: header.desired,
                current: header.current,
                updated: header.updated,
                ready: header.ready,
                available: header.available,
            },
            strategy,
            current_revision: header.current_rev.name.to_string(),
            update_revision: header.update_rev.name.to_string(),
            frozen: header.frozen.as_ref().map(|f| FrozenBy {
                by: f.by.clone(),
                by_words: f.by_words(),
                at: f.at.clone(),
                partition: f.partition.clone().ok(),
                recorded: f.recorded(),
                broken: f.broken,
            }),
            plan: plan_report(set, state.now),
            group: None,
            ordinals,
            revisions,
            controller: controller
                .into_iter()
                .map(|l| Line { kind: l.kind.label(), text: l.text })
                .collect(),
            forced_rollback: stuck.map(|s| ForcedRollback {
                pod: s.pod.clone(),
                reason: match s.reason {
                    StuckReason::OldRevision { .. } => "old-revision",
                    StuckReason::BrokenUpdate => "broken-update",
                },
                text: s.to_string(),
            }),
            differs: kubectl.done != verdict.done,
            verdict,
            kubectl,
            server_version: state.server_version.clone(),
        })
    }

    /// The text form.
    pub fn text(&self) -> String {
        let mut o = String::new();
        self.summary_text(&mut o);
        o.push('\n');
        self.ordinals_text(&mut o);
        o.push('\n');
        self.controller_text(&mut o);
        o
    }

    /// The set's lines: health, strategy, replicas, revisions, freeze, plan.
    fn summary_text(&self, o: &mut String) {
        let mut line = |s: String| {
            o.push_str(&s);
            o.push('\n');
        };
        line(format!("statefulset {}/{}: {}", self.namespace, self.name, self.health));
        let s = &self.strategy;
        let mut strategy = format!("{} {}", s.type_, s.pod_management_policy);
        if s.type_ == "RollingUpdate" {
            strategy.push_str(&format!(" partition {}", s.partition));
            if let Some(m) = &s.max_unavailable {
                strategy.push_str(&format!(" maxUnavailable {m}"));
            }
            if s.rolling_update_unset {
                strategy.push_str(" (rollingUpdate unset)");
            }
        }
        line(format!("strategy:   {strategy}"));
        let r = &self.replicas;
        line(format!(
            "replicas:   {} desired, {} current, {} updated, {} ready, {} available",
            r.desired, r.current, r.updated, r.ready, r.available
        ));
        line(format!(
            "revisions:  current {} → update {}",
            self.current_revision, self.update_revision
        ));
        // A freeze a plan under way took over is the plan's: an abort puts its partition back.
        let plan_holds = self
            .plan
            .as_ref()
            .is_some_and(|p| p.current && p.record.as_ref().is_some_and(|r| !r.phase.over()));
        if let Some(f) = &self.frozen {
            match f.broken {
                None if plan_holds => line(format!(
                    "frozen:     by {} since {}, taken over by the plan (`ststui abort {}` puts \
                     partition {} back)",
                    f.by_words, f.at, self.name, f.recorded
                )),
                None => line(format!(
                    "frozen:     by {} since {} (resume restores partition {})",
                    f.by_words, f.at, f.recorded
                )),
                Some(p) => line(format!(
                    "frozen:     broken: the partition was moved to {p} after {} froze it at {} \
                     (the record says {}; resume refuses without --force)",
                    f.by_words, f.at, f.recorded
                )),
            }
        }
        if let Some(p) = &self.plan {
            let under_way = p.current && p.record.as_ref().is_some_and(|r| !r.phase.over());
            let runner = match &p.runner {
                Some(_) => format!(" ({})", p.runner_words),
                None if under_way => {
                    // The verdict's command (its steps, its group's own when in one).
                    let go = self.verdict.next.as_ref().map(|m| m.words());
                    format!(
                        " ({}: {})",
                        p.runner_words,
                        go.unwrap_or_else(|| "rerun to resume".into())
                    )
                }
                None => String::new(),
            };
            let history = if p.current {
                ""
            } else {
                " (an earlier template's plan: history, it says nothing of the set now)"
            };
            line(format!("plan:       {}{runner}{history}", p.words));
        }
        if let Some(g) = &self.group {
            line(format!("group:      {}", g.words));
        }
    }

    /// The ordinal table.
    fn ordinals_text(&self, o: &mut String) {
        let mut line = |s: String| {
            o.push_str(&s);
            o.push('\n');
        };
        let short = |r: &str| -> String {
            r.strip_prefix(&self.name).and_then(|x| x.strip_prefix('-')).unwrap_or(r).to_string()
        };
        let revs: Vec<String> =
            self.ordinals.iter().map(|c| c.revision.as_deref().map_or("-".into(), short)).collect();
        let pod_w = self.ordinals.iter().filter_map(|c| c.pod.as_ref()).map(String::len).max();
        let pod_w = pod_w.unwrap_or(0).max(3);
        let rev_w = revs.iter().map(String::len).max().unwrap_or(0).max("REVISION".len());
        let state_w = self.ordinals.iter().map(|c| c.state.len()).max().unwrap_or(0).max(5);
        line(format!(
            "{:<7} {:<pod_w$} {:<rev_w$} {:<state_w$} ROLE",
            "ORDINAL", "POD", "REVISION", "STATE"
        ));
        for (c, rev) in self.ordinals.iter().zip(&revs) {
            let role = match (c.condemned, c.held) {
                (true, _) => "condemned",
                (_, true) => "held",
                _ if c.revision_class == "none" => "-",
                _ => c.revision_class,
            };
            line(format!(
                "{:<7} {:<pod_w$} {:<rev_w$} {:<state_w$} {role}",
                c.ordinal,
                c.pod.as_deref().unwrap_or("-"),
                rev,
                c.state
            ));
        }
    }

    /// The revision history, the controller's sentences and the verdicts.
    fn controller_text(&self, o: &mut String) {
        let mut line = |s: String| {
            o.push_str(&s);
            o.push('\n');
        };
        line("history:".into());
        for r in &self.revisions {
            let mark = match (r.current, r.update) {
                (true, true) => " current, update",
                (true, false) => " current",
                (false, true) => " update",
                _ => "",
            };
            line(format!(
                "  {:>3}  {}  {}  {} pods{mark}",
                r.number,
                r.name,
                r.image.as_deref().unwrap_or("-"),
                r.pods
            ));
        }
        line(String::new());
        line("controller:".into());
        for l in &self.controller {
            line(format!("  {:<8} {}", l.kind, l.text));
        }
        if let Some(f) = &self.forced_rollback {
            line(format!("  {:<8} {}", "stuck", f.text));
        }
        line(String::new());
        let v = &self.verdict;
        let ours = match v.wait {
            crate::plan::verdict::Kind::Done => "done",
            crate::plan::verdict::Kind::Waiting => "not done",
            crate::plan::verdict::Kind::Stuck => "stuck",
        };
        line(format!("verdict:    {ours}: {}", v.message));
        for m in [&v.next, &v.or].into_iter().flatten() {
            line(format!("next:       {}", m.words()));
        }
        if self.differs || self.kubectl.error {
            let theirs = match (self.kubectl.error, self.kubectl.done) {
                (true, _) => "fails",
                (_, true) => "says done",
                _ => "says not done",
            };
            line(format!("kubectl:    rollout status {theirs}: {}", self.kubectl.message));
        }
    }
}

/// The set's plan for the report.
fn plan_report(
    set: &k8s_openapi::api::apps::v1::StatefulSet,
    now: Option<k8s_openapi::jiff::Timestamp>,
) -> Option<PlanReport> {
    use crate::plan::record::{Reading, Runner};
    let now = now.unwrap_or_else(k8s_openapi::jiff::Timestamp::now);
    let who = Runner::of(set, now);
    let runner_words = who.words();
    let runner = match who {
        Runner::Live(l) => Some(l),
        _ => None,
    };
    Some(match crate::plan::record::read(set) {
        Reading::None => return None,
        Reading::Plan(r) => {
            let current = crate::plan::verdict::current_plan(set).is_some();
            let words = r.words(now);
            PlanReport { words, record: Some(*r), error: None, runner, runner_words, current }
        }
        Reading::Invalid(why) => {
            let words = Reading::invalid_words(&why, set.metadata.name.as_deref().unwrap_or(""));
            PlanReport {
                words,
                record: None,
                error: Some(why),
                runner,
                runner_words,
                current: true,
            }
        }
    })
}

/// The strategy as the header shows it.
fn strategy_of(header: &HeaderView) -> Strategy {
    match &header.strategy {
        StrategyView::Recreate => Strategy {
            type_: "Recreate",
            partition: 0,
            max_unavailable: None,
            rolling_update_unset: false,
            pod_management_policy: header.policy.to_string(),
        },
        StrategyView::OnDelete => Strategy {
            type_: "OnDelete",
            partition: 0,
            max_unavailable: None,
            rolling_update_unset: false,
            pod_management_policy: header.policy.to_string(),
        },
        StrategyView::RollingUpdate { partition, max_unavailable, unset } => Strategy {
            type_: "RollingUpdate",
            partition: *partition,
            max_unavailable: max_unavailable.clone(),
            rolling_update_unset: *unset,
            pod_management_policy: header.policy.to_string(),
        },
    }
}

/// One row per ordinal of the grid: its pod, revision, state and role.
fn ordinals_of(grid: &GridView, set: &StatefulSet, key: &ObjRef) -> Vec<Ordinal> {
    let st = spec::strategy(set);
    let start = spec::start_ordinal(set);
    grid.cells
        .iter()
        .map(|c| Ordinal {
            ordinal: c.ordinal,
            pod: c.exists.then(|| crate::core::labels::pod_name(&key.name, c.ordinal)),
            revision: grid.revision_name(c).map(str::to_string),
            revision_class: match c.rev {
                RevClass::Update => "update",
                RevClass::Current => "current",
                RevClass::Other => "old",
                RevClass::Unknown => "none",
            },
            state: c.state.word(),
            held: !c.condemned && !st.on_delete && st.holds(start, i64::from(c.ordinal)),
            condemned: c.condemned,
        })
        .collect()
}
