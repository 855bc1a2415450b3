//! A rollout group's plan run by the console itself (`P` in a group's view): the one plan run
//! (`plan::run`, the one `ststui rollout --group` and the simulator run) over the group's sets,
//! its turns the console's one plan's (`plan_run::turn`). While the run lasts its sets stay
//! watched whatever the console shows (`group::view_op`): its turns read them.
//!
//! What runs comes from the dialog only; a part recorded on a set says where a rerun resumes,
//! never what runs. The engine's own first turn, taken on the mirror without sending anything,
//! says before anything is asked whether it would refuse (another driver, a set rolling by
//! itself) or resume.
//!
//! Owns: the group plan's prompt, offer, start, turns and end. Must not: read a clock, touch
//! the terminal.

use super::turn::{Seen, turn};
use super::{ask, config, note};
use crate::app::msg::Command;
use crate::app::refusal::Refusal;
use crate::app::state::{AppState, Confirm, GroupForm, GroupShown, Modal};
use crate::app::state::{PlanRun, Then};
use crate::app::state::{Prompt, PromptKind};
use crate::backend::Op;
use crate::plan::group::part::{self, Reading};
use crate::plan::run::{GroupConfig, Run, RunEnd, RunView, Step};

/// What the dialog offers when the group carries no part to start from.
const SUGGESTED: &str = "1,100% zone-bake=1m";

/// `P` in a group's view: the group's plan, typed (prefilled with the group's last one); refused
/// at once when the group may not be driven from here.
pub fn prompt(state: &mut AppState, shown: GroupShown) -> Result<Vec<Command>, Refusal> {
    if let Some(run) = &state.plan_run {
        return Err(format!("this console runs {} already: one at a time", run.words()).into());
    }
    if shown.sets.is_empty() {
        return Err(format!("group {} has no sets here", name(&shown)).into());
    }
    if shown.by == crate::app::state::GroupBy::Fleet {
        return Err(crate::backend::FLEET_READ_ONLY.to_string().into());
    }
    if shown.by == crate::app::state::GroupBy::Label {
        let now = crate::app::group::labelled(state, &shown.namespace, &shown.name);
        crate::app::group::too_many(&shown.name, now.len())?;
    }
    let initial = last_plan(state, &shown);
    let form = super::parse_group(&initial)?;
    dry_run(state, &shown, &form)?;
    state.modal = Modal::Prompt(Prompt::new(PromptKind::GroupPlan { group: shown }, initial));
    Ok(Vec::new())
}

/// What the dialog prefills: the plan the group's first set's part records, when it reads as
/// one (typed again by the operator, never run as it is), else a suggestion.
fn last_plan(state: &AppState, shown: &GroupShown) -> String {
    let Some(Reading::Part(p)) = state.mirror.set(&shown.sets[0]).map(part::read) else {
        return SUGGESTED.into();
    };
    let steps = match p.steps.strip_prefix("batches ") {
        Some(b) => format!("batches={b}"),
        None => p.steps.clone(),
    };
    let text = match p.zone_bake_seconds {
        0 => steps,
        z => format!("{steps} zone-bake={z}s"),
    };
    match super::parse_group(&text) {
        Ok(_) => text,
        Err(_) => SUGGESTED.into(),
    }
}

/// The group's name as shown (read from the cluster: escaped).
fn name(shown: &GroupShown) -> String {
    crate::text::escape_controls(&shown.name).into_owned()
}

/// The engine for the group's plan `form` from this console.
fn engine(state: &AppState, shown: &GroupShown, form: &GroupForm) -> Run {
    let cfg = GroupConfig {
        group: shown.name.clone(),
        sets: shown.sets.clone(),
        zone_bake_seconds: form.zone_bake_seconds,
        batches: form.batches.clone(),
        engine: config(state, shown.sets[0].clone(), &form.form),
        clusters: None,
        cluster_bake_seconds: 0,
        approve_between: false,
        image: None,
    };
    Run::group(cfg, ask(&form.form))
}

/// The engine's first turn on the mirror, nothing sent: its refusal, else what it said (a
/// resumed run).
fn dry_run(state: &AppState, shown: &GroupShown, form: &GroupForm) -> Result<Vec<String>, Refusal> {
    let now = state.now.ok_or("the backend's clock is not known yet: try again in a moment")?;
    let mut e = engine(state, shown, form);
    let seen = Seen::mirror(state, &shown.sets);
    let members = seen.members();
    let view = RunView { members: &members, now, fresh: true, budgets: &seen.budgets };
    if let Step::End(RunEnd::Refused { why, .. }) = e.next(&view) {
        return Err(format!("group {}: {why}", name(shown)).into());
    }
    Ok(e.said().into_iter().map(|(_, s)| s.text).collect())
}

/// After the dialog: what the group's plan will do, asked first.
pub fn offer(
    state: &mut AppState,
    shown: GroupShown,
    form: GroupForm,
) -> Result<Vec<Command>, Refusal> {
    let said = dry_run(state, &shown, &form)?;
    let n = shown.sets.len();
    let mut details = vec![format!("  one set at a time, in this order ({n}):")];
    for (i, key) in shown.sets.iter().enumerate() {
        let at = match state.mirror.set(key) {
            Some(s) => {
                let st = crate::core::spec::strategy(s);
                let replicas = crate::core::spec::replicas(s);
                format!("partition {} of {replicas}", st.partition)
            }
            None => "not seen here".into(),
        };
        details.push(format!("    {}. {}: {at}", i + 1, crate::text::escape_controls(&key.name)));
    }
    details.push(
        "  a set starts only when every pod of every set of the group is updated or untouched, \
         Ready and available (every ordinal its spec wants)"
            .into(),
    );
    let zone = crate::plan::duration_words(form.zone_bake_seconds * 1000);
    let stuck = crate::plan::duration_words(form.form.stuck_after_ms);
    details.push(format!("  {zone} of that between sets (the zone bake)"));
    details.push(format!(
        "  a step that makes no progress for {stuck} halts the group; the other sets stay as \
         they are"
    ));
    let bake = crate::plan::duration_words(form.form.bake_seconds * 1000);
    state.modal = Modal::Confirm(Confirm {
        title: format!(
            "Run the group plan of {} ({n} sets) from this console, each set {} (bake {bake})?",
            name(&shown),
            form.steps_words()
        ),
        old: format!("{} first", crate::text::escape_controls(&shown.sets[0].name)),
        new: format!("one set at a time, zone bake {zone}; a failure holds"),
        warning: said.into_iter().next(),
        ops: Vec::new(),
        log: form.line(&shown.name),
        details,
        then: Some(Then::GroupPlan { group: shown, form }),
    });
    Ok(Vec::new())
}

/// Starts the group's plan (confirmed): refused while this console runs one.
pub fn start(
    state: &mut AppState,
    shown: GroupShown,
    form: GroupForm,
) -> Result<Vec<Command>, Refusal> {
    if let Some(run) = &state.plan_run {
        return Err(format!("this console runs {} already: one at a time", run.words()).into());
    }
    state.now.ok_or("the backend's clock is not known yet: try again in a moment")?;
    state.plan_run = Some(PlanRun::new(engine(state, &shown, &form)));
    note(state, format!("{}: started by this console", form.line(&name(&shown))));
    // Its sets watched whatever is shown next (they are shown now).
    let mut cmds = vec![Command::Backend(Op::View(crate::app::group::view_op(state)))];
    cmds.extend(turn(state, None));
    Ok(cmds)
}
