//! A plan on a Recreate set, pure. The controller deletes every old pod at once when the
//! template changes (`core::recreate`), so nothing steps and nothing waits for a partition: the
//! plan is one step of every pod (pauses may stand around it), and its opening is its own
//! template write — `ststui rollout NAME --image IMAGE`, the image and the record in one patch
//! ([`Next::Recreate`]) once the step's `--before-step` gate passed. Then `--post-ready` runs
//! for each pod as it is back (the controller does not wait for it: a failing one halts the
//! plan, and `--on-failure undo` puts the template back), the bake and the checks as in any
//! step.
//!
//! What decides is the set, its pods and this invocation's image, never the record: a step is
//! opened when the template carries this run's image, and the revision the plan rolls out is
//! learned from the controller's status once it observed that template.
//!
//! Owns: these rules ([`begin`], [`enter`], [`learn`], [`waiting`]). Must not: do IO or read a
//! clock.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::Target;
use super::facts::{Facts, Next, observed_update_revision};
use super::record::{Phase, Record, stamp, template_hash};
use super::start::{NoStart, Start};
use crate::core::pod as podf;
use crate::core::spec;

/// Whether `set` is of type Recreate (its plans follow these rules).
pub fn applies(set: &StatefulSet) -> bool {
    spec::strategy(set).recreate
}

/// The template's first container's image.
pub fn first_image(set: &StatefulSet) -> Option<&str> {
    set.spec.template.spec.as_ref()?.containers.first()?.image.as_deref()
}

/// Whether this run's image is still to be set: asked, and not what the template holds.
fn to_set<'a>(facts: &Facts<'a>) -> Option<&'a str> {
    facts.image.filter(|i| first_image(facts.set) != Some(*i))
}

/// A new plan's first move on a Recreate set: its first step entered (recorded before anything
/// rolls), or why it cannot start.
pub fn begin(start: &Start, facts: &Facts<'_>) -> Result<Next, NoStart> {
    let set = facts.set;
    let name = set.metadata.name.as_deref().unwrap_or_default().to_string();
    let replicas = spec::replicas(set);
    let targets = start.steps.targets(replicas);
    let partial =
        targets.iter().find(|t| matches!(t, Target::Update { partition, .. } if *partition > 0));
    if let Some(Target::Update { updated, .. }) = partial {
        return Err(NoStart::RecreateSteps {
            name,
            steps: start.steps.to_string(),
            updated: *updated,
            replicas,
        });
    }
    let g = &start.gates;
    let per_pod = [
        (g.pre_delete.is_some(), "--pre-delete"),
        (g.last.is_some(), "--last"),
        (g.last_by.is_some(), "--last-by"),
    ];
    if let Some((_, flag)) = per_pod.iter().find(|(asked, _)| *asked) {
        return Err(NoStart::RecreatePerPod { name, flag });
    }
    let Some(update) = observed_update_revision(set) else {
        let generation = set.metadata.generation.unwrap_or(0);
        return Err(NoStart::Unobserved { name, generation });
    };
    let current = set.status.as_ref().and_then(|s| s.current_revision.as_deref()).unwrap_or("");
    let opens = to_set(facts).is_some();
    if !opens {
        let all_updated = facts.pods.iter().all(|(_, p)| podf::revision(p) == update);
        if current == update && all_updated {
            return Err(match facts.image {
                Some(_) => NoStart::Nothing { name, update: update.into() },
                None => NoStart::Recreate { name },
            });
        }
        // The template changed already: its old pods are going. A gate before they go comes
        // too late.
        if start.gates.before_step.is_some() {
            return Err(NoStart::RecreateBeforeStep { name });
        }
    }
    // No partition to put back (`began_at: None`): an abort reverts the template alone.
    let partition = if opens { replicas } else { 0 };
    let record = start.record(facts, (update, current), partition, None);
    Ok(super::decide::enter(&record, 1, &targets, facts))
}

/// The record of a step of every pod entered: not open yet while this run's image is still to
/// be set (`target: Some(0)`, nothing rolling), open otherwise. `None` for another strategy.
pub fn enter(record: Record, facts: &Facts<'_>) -> Option<Next> {
    if !applies(facts.set) {
        return None;
    }
    let replicas = spec::replicas(facts.set);
    Some(Next::Record(match to_set(facts) {
        Some(_) => Record { partition: replicas, target: Some(0), ..record },
        None => Record { partition: 0, target: None, ..record },
    }))
}

/// A step opened by our template write records no revision (the controller names it once it
/// observed the template): learned here, once the template carries this run's image. `None`:
/// nothing to learn.
pub fn learn(record: &Record, facts: &Facts<'_>) -> Option<Next> {
    if record.phase != Phase::Waiting || !record.revision.is_empty() || !applies(facts.set) {
        return None;
    }
    let set = facts.set;
    let name = set.metadata.name.as_deref().unwrap_or_default();
    let Some(image) = facts.image else {
        return Some(halt(
            record,
            facts,
            format!(
                "step {} set the template's image, which this run was not given: rerun with \
                 the same --image (and --continue)",
                record.step
            ),
        ));
    };
    if first_image(set) != Some(image) {
        let now = crate::text::shown(first_image(set).unwrap_or("none"), 200);
        return Some(halt(
            record,
            facts,
            format!(
                "the template changed under the plan: its image is {now}, not {image} (another \
                 writer)"
            ),
        ));
    }
    let Some(update) = observed_update_revision(set) else {
        return Some(Next::Wait(format!(
            "waiting for the controller to observe {name}'s new template"
        )));
    };
    Some(Next::Record(Record {
        revision: update.to_string(),
        template: template_hash(set),
        since: stamp(facts.now),
        ..record.clone()
    }))
}

/// A waiting step of a Recreate plan not open yet: its before-step gate, then the write that
/// opens it. `None` once open (the ungated rules wait for every pod; [`super::gated`] asks each
/// one's post-ready as it is back).
pub fn waiting(record: &Record, facts: &Facts<'_>) -> Option<Next> {
    record.target?;
    if !applies(facts.set) {
        return None;
    }
    if let Some(g) = facts.gating
        && let Some(next) = super::gated::before_step(record, facts, g)
    {
        return Some(next);
    }
    let Some(image) = to_set(facts) else {
        return Some(match facts.image {
            // The template carries it: someone set it outside the plan.
            Some(_) => halt(
                record,
                facts,
                "the template changed under the plan before its step opened (another writer)"
                    .into(),
            ),
            None => halt(
                record,
                facts,
                format!(
                    "step {} opens by setting the template's image, which this run was not \
                     given: rerun with --image (and --continue)",
                    record.step
                ),
            ),
        });
    };
    let opened = Record {
        partition: 0,
        target: None,
        revision: String::new(),
        template: String::new(),
        since: stamp(facts.now),
        ..record.clone()
    };
    Some(Next::Recreate { image: image.to_string(), record: opened })
}

fn halt(record: &Record, facts: &Facts<'_>, why: String) -> Next {
    Next::Halt(super::decide::halted(record, facts.now, why))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::{StatefulSetStatus, StatefulSetUpdateStrategy};
    use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};

    use super::*;
    use crate::core::pod::MinReady;
    use crate::plan::fixtures::{at, record, running};

    fn recreate_set(image: &str, update: &str) -> StatefulSet {
        let mut s = StatefulSet::default();
        s.metadata.name = Some("web".into());
        s.metadata.generation = Some(2);
        s.spec.replicas = Some(3);
        s.spec.update_strategy = Some(StatefulSetUpdateStrategy {
            type_: Some("Recreate".into()),
            rolling_update: None,
        });
        let container =
            Container { name: "app".into(), image: Some(image.into()), ..Default::default() };
        s.spec.template.spec = Some(PodSpec { containers: vec![container], ..Default::default() });
        s.status = Some(StatefulSetStatus {
            observed_generation: Some(2),
            current_revision: Some("web-a".into()),
            update_revision: Some(update.into()),
            ..Default::default()
        });
        s
    }

    fn facts<'a>(
        set: &'a StatefulSet,
        pods: &'a [(i32, &'a Pod)],
        image: Option<&'a str>,
    ) -> Facts<'a> {
        Facts {
            set,
            pods,
            now: at(0),
            min_ready: MinReady::default(),
            stuck_after_ms: 600_000,
            baseline: None,
            frozen: None,
            gating: None,
            replace_stuck: false,
            max_restarts: None,
            image,
        }
    }

    /// A step opened by our write: no revision recorded yet.
    fn opened() -> Record {
        Record {
            revision: String::new(),
            began_at: None,
            ..record("100%", 1, Phase::Waiting, 0, "", 0)
        }
    }

    #[test]
    fn a_step_not_open_yet_opens_with_this_runs_image_in_one_write() {
        let set = recreate_set("nginx:1.25", "web-a");
        let pods: Vec<Pod> =
            (0..3).map(|o| running(format!("web-{o}"), "web-a", Some(-50))).collect();
        let pods: Vec<(i32, &Pod)> = pods.iter().enumerate().map(|(o, p)| (o as i32, p)).collect();
        let waiting = Record {
            template: template_hash(&set),
            target: Some(0),
            began_at: None,
            ..record("100%", 1, Phase::Waiting, 3, "web-a", 0)
        };
        let next = crate::plan::decide::decide(&waiting, &facts(&set, &pods, Some("nginx:1.27")));
        let Next::Recreate { image, record } = next else { panic!("{next:?}") };
        assert_eq!(image, "nginx:1.27");
        assert_eq!((record.partition, record.target, record.revision.as_str()), (0, None, ""));
        // Without this run's image nothing is written: the plan halts, saying what to give.
        let next = crate::plan::decide::decide(&waiting, &facts(&set, &pods, None));
        let Next::Halt(r) = next else { panic!("{next:?}") };
        assert!(r.reason.unwrap().contains("rerun with --image"));
    }

    #[test]
    fn the_revision_is_learned_from_the_template_never_from_the_record() {
        let pods: Vec<(i32, &Pod)> = Vec::new();
        // The template carries this run's image and the controller observed it: learned.
        let set = recreate_set("nginx:1.27", "web-b");
        let next = learn(&opened(), &facts(&set, &pods, Some("nginx:1.27")));
        let Some(Next::Record(r)) = next else { panic!("{next:?}") };
        assert_eq!((r.revision.as_str(), r.template), ("web-b", template_hash(&set)));
        // A record claiming its step opened while the template holds another image (forged,
        // or another writer): a halt, never the old revision adopted as the plan's.
        let old = recreate_set("nginx:1.25", "web-a");
        let Some(Next::Halt(r)) = learn(&opened(), &facts(&old, &pods, Some("nginx:1.27"))) else {
            panic!("not a halt")
        };
        assert!(r.reason.unwrap().contains("its image is nginx:1.25, not nginx:1.27"));
        let Some(Next::Halt(_)) = learn(&opened(), &facts(&old, &pods, None)) else {
            panic!("not a halt")
        };
        // Not observed yet: waited for.
        let mut unobserved = set.clone();
        unobserved.metadata.generation = Some(3);
        let next = learn(&opened(), &facts(&unobserved, &pods, Some("nginx:1.27")));
        assert!(matches!(next, Some(Next::Wait(w)) if w.contains("to observe")));
    }

    #[test]
    fn a_rerun_with_the_image_resumes_a_step_its_write_opened() {
        use crate::plan::ask::{Ask, Begin, resolve};
        use crate::plan::record::Reading;
        let ask = Ask {
            steps: Some(crate::plan::Steps::parse("100%").unwrap()),
            bake_seconds: 60,
            checks: vec![],
            on_failure: crate::plan::OnFailure::Hold,
            force: false,
            continue_halted: false,
            by: "ana".into(),
            gates: Default::default(),
            replace_stuck: false,
            max_restarts: None,
            image: Some("nginx:1.27".into()),
        };
        let reading = Reading::Plan(Box::new(opened()));
        let begun = resolve(&reading, Some("web-b"), &ask, "web").unwrap();
        assert!(matches!(begun, Begin::Resume { .. }), "{begun:?}");
        // Without the image the record is another revision's: history, a new plan.
        let bare = Ask { image: None, ..ask };
        let begun = resolve(&reading, Some("web-b"), &bare, "web").unwrap();
        assert!(matches!(begun, Begin::New(_)), "{begun:?}");
    }
}
