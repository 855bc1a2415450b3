//! The console's abort key: the forced rollback of the selected set, decided by
//! `steer::abort` as `ststui abort` decides it, shown as the verb shows it, asked, then sent in
//! order. A plan this console runs on the set stops first (its lease given back).

use super::{Outcome, ask, selected};
use crate::app::state::{AppState, Confirm};
use crate::backend::Op;

/// `U`: the preview and the question.
pub(super) fn abort(state: &mut AppState) -> Outcome {
    let (key, set) = selected(state)?;
    let set = set.clone();
    let now = state.now.ok_or("the backend's clock is not known yet: try again in a moment")?;
    let pods: Vec<(i32, &k8s_openapi::api::core::v1::Pod)> = state.mirror.pods_of(&key).collect();
    let revisions = state.mirror.revisions_of(&key);
    let a = crate::steer::abort::abort(&key, &set, &revisions, &pods, now, "a console")
        .map_err(|r| r.message)?;
    let mut details = a.preview();
    // Its first line ("will revert the template …") is the question's title's.
    details.remove(0);
    // What the budgets this console watches say of each eviction now (the API server's
    // judgement, made here): a refusal is said before anything is asked.
    let force = super::key(crate::app::action::Action::ForceDeletePod);
    for (name, uid) in &a.stuck {
        let pod = pods.iter().map(|(_, p)| *p).find(|p| p.metadata.uid.as_deref() == Some(uid));
        if let Some(refused) =
            pod.and_then(|p| super::pod::budget_refusal(state, &key.namespace, p))
        {
            details.push(format!(
                "  {name}: its eviction would be {refused} now: it stays on {} until the budget \
                 allows it, unless force-deleted ({force}, asks why, recorded on the set)",
                a.revision
            ));
        }
    }
    let ours = state.plan_run.as_ref().is_some_and(|r| r.covers(&key));
    if ours {
        details.push("  this console's plan on it stops first (its lease given back)".into());
    }
    let confirm = Confirm {
        title: format!("Abort {key}: the forced rollback?"),
        old: a.revision.clone(),
        // Said again once it ran ("old → new"): what the set goes back to, not "will revert".
        new: {
            let image = a.image.as_ref().map(|i| format!(" ({i})")).unwrap_or_default();
            format!("the template back to revision {}{image}", a.back)
        },
        warning: (!a.stuck.is_empty()).then(|| format!("{} pod(s) will be deleted", a.stuck.len())),
        ops: a.writes().into_iter().map(Op::Cluster).collect(),
        log: format!("abort {}", key.name),
        details,
        then: ours.then_some(crate::app::state::Then::StopPlan),
    };
    Ok(ask(state, confirm))
}
