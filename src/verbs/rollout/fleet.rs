//! `ststui rollout NAME --contexts a,b,c` (or `-l SELECTOR`/`--group …` for a group in each
//! cluster): a fleet — one set, or a group of sets, rolled across clusters, one cluster at a
//! time, by the plan run every other rollout uses (`plan::run`: a fleet is a run
//! whose members are in several clusters) and the verb's one runner (`runner`). Each cluster's
//! set is watched through its own context, written through its own write path, and read fresh
//! before every verdict; a cluster starts only when every earlier one is done by revision (every
//! pod on the update revision, Ready and available, the spec observed) for `--cluster-bake`.
//!
//! Each member's part names every member's cluster by the `kube-system` namespace's uid, not by
//! the context's local name, so a rerun from a machine whose kubeconfig names the contexts
//! otherwise finds the same fleet. The fleet's lease is on the first cluster's set.
//!
//! Owns: choosing the members (the contexts, in order) and their clusters' identities.

use std::time::{Duration, Instant};

use super::checks::Checks;
use super::output::Output;
use super::runner::Runner;
use super::{ask, config, gates, plan_inputs};
use crate::backend::ObjRef;
use crate::cli::{OutputArg, RolloutArgs};
use crate::cluster::{Target, Writes};
use crate::plan::group::MAX_SETS;
use crate::plan::group::part::Cluster;
use crate::plan::run::{GroupConfig, Run};
use crate::verbs::session::Sessions;
use crate::verbs::{Exit, SYNC_TIMEOUT, VerbError};

/// How long one cluster may take to say who it is.
const IDENTITY_WITHIN: Duration = Duration::from_secs(10);

/// Runs (or resumes) the fleet's plan.
pub fn run(target: Target, args: &RolloutArgs, start: Instant) -> Result<Exit, VerbError> {
    let limit = args.timeout.map(|t| start + Duration::from_millis(t));
    let (steps, bake_seconds) = plan_inputs(args)?;
    let contexts =
        contexts(args.contexts.as_deref().unwrap_or_default(), target.context.as_deref())?;
    let in_each: Vec<Target> = (contexts.iter())
        .map(|c| Target { context: Some(c.clone()), name: None, ..target.clone() })
        .collect();
    let identities = identities(&in_each)?;
    // Each cluster's members, in order: NAME, or the group picked there.
    let mut cluster_of = Vec::new();
    let mut targets = Vec::new();
    for (k, t) in in_each.iter().enumerate() {
        let names = match &target.name {
            Some(n) => vec![n.clone()],
            None => super::group::members_in(t, args)?.1,
        };
        for n in names {
            cluster_of.push(k);
            targets.push(Target { name: Some(n), ..t.clone() });
        }
    }
    if targets.len() > MAX_SETS {
        return Err(VerbError::new(
            Exit::Usage,
            format!("the fleet: {} sets in all (at most {MAX_SETS})", targets.len()),
        ));
    }
    let name = match &target.name {
        Some(n) => n.clone(),
        None => super::group::group_name(args, &names_of(&targets, &cluster_of, 0)),
    };
    let clusters: Vec<Cluster> = cluster_of.iter().map(|&k| identities[k].clone()).collect();
    let mut writes = Vec::with_capacity(in_each.len());
    for t in &in_each {
        writes.push(Writes::open(t).map_err(|e| VerbError::new(Exit::Usage, e))?);
    }
    let mut sessions = Sessions::open_each(targets.clone())?;
    sessions.sync(limit.unwrap_or(start + SYNC_TIMEOUT))?;
    for (s, &k) in sessions.members().zip(&cluster_of) {
        let on = format!("{}: ", crate::text::shown(&contexts[k], 80));
        crate::verbs::warn_gitops("rollout", &on, s.set());
    }
    let mut out = Output::new(args.output == OutputArg::Json);
    // `--image`: every cluster's set held before the first begins (nothing rolls out of
    // turn); the run sets the image on each at its turn, so the clusters after a halt keep
    // their template.
    let mut image = None;
    if let Some(asked) = &args.image {
        for (s, &k) in sessions.members().zip(&cluster_of) {
            image = Some(super::prepare::hold(s, &writes[k], asked, limit, &mut out)?);
        }
    }
    let host = crate::cluster::hostname();
    let sets: Vec<ObjRef> = sessions.members().map(|s| s.key.clone()).collect();
    let dead = super::group::dead_group_lease(&sessions, &host);
    let identity = writes[0].identity();
    let cfg = GroupConfig {
        group: name.clone(),
        sets: sets.clone(),
        zone_bake_seconds: args.zone_bake / 1000,
        batches: args.batches.as_deref().and_then(|b| crate::value::batches(b).ok()),
        engine: config(sets[0].clone(), host, args, dead),
        clusters: Some(clusters),
        cluster_bake_seconds: args.cluster_bake / 1000,
        approve_between: args.approve_between,
        image,
    };
    let mut r = Runner {
        run: Run::group(cfg, ask(args, steps, bake_seconds, identity)),
        watch: sessions,
        cluster_of,
        w: writes,
        out,
        limit,
        checks: Checks::new(Duration::from_millis(args.check_timeout)),
        // Each gate against the cluster of the member it is about.
        gates: gates::Gates::each(in_each),
        fresh: None,
    };
    r.drive()
}

/// A fleet's view (the console on several contexts): for each context of `list`, its target
/// (`namespace` resolved), the namespace and its members — `name`, or the sets `selector` lists
/// there, alphabetical. Contexts named twice or two of one cluster are refused, as `rollout
/// --contexts` refuses them.
pub fn fleet_members(
    target: &Target,
    list: &str,
    name: Option<&str>,
    selector: Option<&str>,
) -> Result<Vec<(Target, String, Vec<String>)>, VerbError> {
    let contexts = contexts(list, target.context.as_deref())?;
    let in_each: Vec<Target> = (contexts.iter())
        .map(|c| Target { context: Some(c.clone()), name: None, ..target.clone() })
        .collect();
    identities(&in_each)?;
    let mut out = Vec::with_capacity(in_each.len());
    for t in in_each {
        let within = crate::cluster::lookup::SETS_WITHIN;
        let (ns, listed) = crate::cluster::lookup::sets(&t, selector, within)
            .map_err(|e| VerbError::new(Exit::Api, e))?;
        let names = match (name, selector) {
            (Some(n), _) => vec![n.to_string()],
            (None, Some(sel)) => {
                let mut names: Vec<String> =
                    listed.iter().filter_map(|s| s.metadata.name.clone()).collect();
                names.sort();
                if names.is_empty() {
                    let at = crate::text::shown(t.context.as_deref().unwrap_or_default(), 80);
                    let sel = crate::text::shown(sel, 120);
                    return Err(VerbError::new(
                        Exit::Expectation,
                        format!("{at}: no StatefulSet of {ns} matches -l {sel}"),
                    ));
                }
                names
            }
            (None, None) => {
                return Err(VerbError::new(
                    Exit::Usage,
                    "--contexts: name the set (NAME) or the sets (-l SELECTOR) to show in each \
                     cluster",
                ));
            }
        };
        out.push((Target { namespace: Some(ns.clone()), ..t }, ns, names));
    }
    let all: usize = out.iter().map(|(_, _, n)| n.len()).sum();
    if all > MAX_SETS {
        return Err(VerbError::new(
            Exit::Usage,
            format!("the fleet: {all} sets in all (at most {MAX_SETS})"),
        ));
    }
    Ok(out)
}

/// The names of cluster `k`'s members.
fn names_of(targets: &[Target], cluster_of: &[usize], k: usize) -> Vec<String> {
    (targets.iter().zip(cluster_of))
        .filter(|(_, c)| **c == k)
        .filter_map(|(t, _)| t.name.clone())
        .collect()
}

/// The contexts, in rolling order: named, each once, at most [`MAX_SETS`].
pub(crate) fn contexts(list: &str, global: Option<&str>) -> Result<Vec<String>, VerbError> {
    let usage = |m: String| Err(VerbError::new(Exit::Usage, m));
    if global.is_some() {
        return usage(
            "--contexts names every cluster of the fleet; --context does not go with it".into(),
        );
    }
    let names: Vec<String> =
        list.split(',').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect();
    if names.is_empty() {
        return usage(format!("--contexts {list:?}: expected kubeconfig contexts, a,b,c"));
    }
    if names.len() > MAX_SETS {
        return usage(format!("--contexts: {} clusters (at most {MAX_SETS})", names.len()));
    }
    if let Some(twice) = names.iter().enumerate().find(|(i, c)| names[..*i].contains(c)) {
        return usage(format!(
            "--contexts: {} is named twice; a fleet rolls each cluster once",
            crate::text::escape_controls(twice.1)
        ));
    }
    Ok(names)
}

/// Each context's cluster by its stable identity; two contexts of one cluster refused.
pub(crate) fn identities(targets: &[Target]) -> Result<Vec<Cluster>, VerbError> {
    let mut clusters: Vec<Cluster> = Vec::with_capacity(targets.len());
    for t in targets {
        let c = crate::cluster::lookup::cluster(t, IDENTITY_WITHIN)
            .map_err(|e| VerbError::new(Exit::Api, e.to_string()))?;
        if let Some(same) = clusters.iter().find(|x| x.uid == c.uid) {
            return Err(VerbError::new(
                Exit::Usage,
                format!(
                    "--contexts: {} and {} are one cluster (kube-system uid {}); a fleet rolls \
                     each cluster once",
                    same.shown(),
                    c.shown(),
                    crate::text::shown(&c.uid, 64)
                ),
            ));
        }
        clusters.push(c);
    }
    Ok(clusters)
}
