//! `ststui rollout NAME --contexts a,b,c`: a fleet — one set rolled across clusters, one
//! cluster at a time, by the plan run every other rollout uses (`plan::run`: a fleet is a run
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
    let name = target.name.clone().unwrap_or_default();
    let contexts =
        contexts(args.contexts.as_deref().unwrap_or_default(), target.context.as_deref())?;
    let targets: Vec<Target> =
        contexts.iter().map(|c| Target { context: Some(c.clone()), ..target.clone() }).collect();
    let clusters = identities(&targets)?;
    let mut writes = Vec::with_capacity(targets.len());
    for t in &targets {
        writes.push(Writes::open(t).map_err(|e| VerbError::new(Exit::Usage, e))?);
    }
    let mut sessions = Sessions::open_each(targets.clone())?;
    sessions.sync(limit.unwrap_or(start + SYNC_TIMEOUT))?;
    for (s, c) in sessions.members().zip(&contexts) {
        crate::verbs::warn_gitops("rollout", &format!("{}: ", crate::text::shown(c, 80)), s.set());
    }
    let mut out = Output::new(args.output == OutputArg::Json);
    // `--image`: every cluster's set held before the first begins (nothing rolls out of
    // turn); the run sets the image on each at its turn, so the clusters after a halt keep
    // their template.
    let mut image = None;
    if let Some(asked) = &args.image {
        for (s, w) in sessions.members().zip(&writes) {
            image = Some(super::prepare::hold(s, w, asked, limit, &mut out)?);
        }
    }
    let host = crate::cluster::hostname();
    let sets: Vec<ObjRef> = sessions.members().map(|s| s.key.clone()).collect();
    let dead = super::group::dead_group_lease(&sessions, &host);
    let identity = writes[0].identity();
    let cfg = GroupConfig {
        group: name.clone(),
        sets: sets.clone(),
        zone_bake_seconds: args.cluster_bake / 1000,
        batches: None,
        engine: config(sets[0].clone(), host, args, dead),
        clusters: Some(clusters),
        image,
    };
    let mut r = Runner {
        run: Run::group(cfg, ask(args, steps, bake_seconds, identity)),
        watch: sessions,
        cluster_of: (0..writes.len()).collect(),
        w: writes,
        out,
        limit,
        checks: Checks::new(Duration::from_millis(args.check_timeout)),
        // Each gate against the cluster of the member it is about.
        gates: gates::Gates::each(targets.clone()),
        fresh: None,
    };
    r.drive()
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
