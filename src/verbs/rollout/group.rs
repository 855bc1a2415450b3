//! `ststui rollout --group a,b,c | --group 'ingester-zone-*' | -l rollout-group=ingester`: the
//! plan run over a group's sets (`plan::run`), carried out by the runner `rollout NAME` uses
//! (`runner`). The group's sets are watched together (one watch per kind for all of them:
//! `Sessions`); every verdict rests on a quorum read of every set of the group and its pods.
//!
//! Owns: choosing the group's sets (listed once, at the start) and `--image` on all of them.
//! Exit codes as `rollout NAME`'s.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::StatefulSet;

use super::checks::Checks;
use super::output::Output;
use super::runner::Runner;
use super::{ask, config, gates, plan_inputs};
use crate::backend::ObjRef;
use crate::cli::{OutputArg, RolloutArgs};
use crate::cluster::{Target, Writes};
use crate::plan::group::part::{self, ROLLOUT_GROUP};
use crate::plan::group::{self, Order, Pick};
use crate::plan::run::{GroupConfig, Run};
use crate::verbs::session::Sessions;
use crate::verbs::{Exit, SYNC_TIMEOUT, VerbError};

/// Runs (or resumes) the group's plan.
pub fn run(target: Target, args: &RolloutArgs, start: Instant) -> Result<Exit, VerbError> {
    let limit = args.timeout.map(|t| start + Duration::from_millis(t));
    let (steps, bake_seconds) = plan_inputs(args)?;
    let (ns, names) = members_in(&target, args)?;
    let name = group_name(args, &names);
    let writes = Writes::open(&target).map_err(|e| VerbError::new(Exit::Usage, e))?;
    let mut sessions = Sessions::open(&target, &names)?;
    sessions.sync(limit.unwrap_or(start + SYNC_TIMEOUT))?;
    for m in sessions.members() {
        crate::verbs::warn_gitops("rollout", "", m.set());
    }
    let mut out = Output::new(args.output == OutputArg::Json);
    if let Some(image) = &args.image {
        let each = vec![&writes; sessions.len()];
        image_everywhere(&mut sessions, &each, image, limit, &mut out)?;
    }
    let host = crate::cluster::hostname();
    let sets: Vec<ObjRef> = names.iter().map(|n| ObjRef::new(ns.clone(), n.clone())).collect();
    let dead = dead_group_lease(&sessions, &host);
    let cfg = GroupConfig {
        group: name,
        sets: sets.clone(),
        zone_bake_seconds: args.zone_bake / 1000,
        batches: args.batches.as_deref().and_then(|b| crate::value::batches(b).ok()),
        engine: config(sets[0].clone(), host, args, dead),
        clusters: None,
        cluster_bake_seconds: 0,
        approve_between: false,
        image: None,
    };
    let ask = ask(args, steps, bake_seconds, writes.identity());
    let mut r = Runner {
        run: Run::group(cfg, ask),
        watch: sessions,
        w: vec![writes],
        cluster_of: Vec::new(),
        out,
        limit,
        checks: Checks::new(Duration::from_millis(args.check_timeout)),
        gates: gates::Gates::new(Target { namespace: Some(ns), ..target }),
        fresh: None,
    };
    r.drive()
}

/// The group's sets in `target`'s namespace, in rolling order (a fleet's, in its cluster), and
/// the namespace.
pub(super) fn members_in(
    target: &Target,
    args: &RolloutArgs,
) -> Result<(String, Vec<String>), VerbError> {
    let (pick, order) = pick(args)?;
    let (ns, listed) = crate::cluster::lookup::sets(
        target,
        args.selector.as_deref(),
        crate::cluster::lookup::SETS_WITHIN,
    )
    .map_err(|e| VerbError::new(Exit::Api, e))?;
    let refs: Vec<&StatefulSet> = listed.iter().collect();
    let names = group::members(&pick, &order, &refs).map_err(|e| {
        let exit = if e.usage() { Exit::Usage } else { Exit::Expectation };
        let at = target.context.as_deref().map(|c| format!(" in {}", crate::text::shown(c, 80)));
        VerbError::new(exit, format!("the group{}: {e}", at.unwrap_or_default()))
    })?;
    Ok((ns, names))
}

/// The group's (or fleet's) lease on its first set when it names a process of this host that
/// is gone: taken over at once.
pub(super) fn dead_group_lease(
    sessions: &Sessions,
    host: &str,
) -> Option<crate::plan::record::Lease> {
    sessions.member(0).set().and_then(|s| {
        crate::plan::record::lease_in(s, part::LEASE)
            .filter(|l| l.host == host && l.pid != std::process::id() && !super::alive(l.pid))
    })
}

/// `--image` for a group: every set held first (frozen, unless held already) and its image set,
/// before the first set rolls — nothing rolls out of turn; then the watches show every new
/// template before the plan starts on them.
pub(super) fn image_everywhere(
    sessions: &mut Sessions,
    w: &[&Writes],
    image: &str,
    limit: Option<Instant>,
    out: &mut Output,
) -> Result<(), VerbError> {
    let mut set_to = Vec::new();
    for (s, w) in sessions.members().zip(w) {
        set_to.push(super::prepare::hold_and_set(s, w, image, limit, out)?);
    }
    let until = Instant::now() + Duration::from_secs(10);
    let shown =
        |all: &Sessions| all.members().zip(&set_to).all(|(s, i)| super::prepare::shows(s, i));
    while Instant::now() < until && !shown(sessions) {
        sessions.next(Some(until.min(Instant::now() + Duration::from_millis(200))), true)?;
    }
    Ok(())
}

/// How the group's sets are named and ordered.
fn pick(args: &RolloutArgs) -> Result<(Pick, Order), VerbError> {
    if args.selector.as_deref().is_some_and(|s| s.trim().is_empty()) {
        return Err(VerbError::new(
            Exit::Usage,
            "-l/--selector: an empty selector lists every set of the namespace; name the \
             group's label, e.g. -l rollout-group=ingester",
        ));
    }
    let pick = match (&args.group, &args.selector) {
        (Some(g), _) if g.contains(['*', '?']) => Pick::Pattern(g.trim().to_string()),
        (Some(g), _) => {
            let names: Vec<String> =
                g.split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect();
            if names.is_empty() {
                return Err(VerbError::new(Exit::Usage, "--group: expected set names, a,b,c"));
            }
            Pick::Names(names)
        }
        (None, _) => Pick::Listed,
    };
    let order = match args.order.as_deref().map(str::trim) {
        None if matches!(pick, Pick::Names(_)) => Order::AsGiven,
        None | Some("alphabetical") => Order::Alphabetical,
        Some(list) => {
            let tiers: Vec<String> = list.split(',').map(|t| t.trim().to_string()).collect();
            if tiers.iter().any(String::is_empty) {
                return Err(VerbError::new(
                    Exit::Usage,
                    format!("--order {list:?}: expected alphabetical or tiers like fe,be"),
                ));
            }
            Order::Tiers(tiers)
        }
    };
    Ok((pick, order))
}

/// The group's name: the `rollout-group` label's value a selector names, else the dash-words
/// its sets' names share (`ingester-zone`), else the first set's name.
pub(super) fn group_name(args: &RolloutArgs, names: &[String]) -> String {
    if let Some(sel) = &args.selector
        && let Some(v) = sel
            .split(',')
            .filter_map(|t| t.trim().split_once('='))
            .find(|(k, _)| k.trim() == ROLLOUT_GROUP)
            .map(|(_, v)| v.trim().trim_start_matches('=').to_string())
    {
        return v;
    }
    let words: Vec<Vec<&str>> = names.iter().map(|n| n.split('-').collect()).collect();
    let first = &words[0];
    let shared =
        (0..first.len()).take_while(|&i| words.iter().all(|w| w.get(i) == first.get(i))).count();
    match shared {
        0 => names[0].clone(),
        n => first[..n].join("-"),
    }
}
