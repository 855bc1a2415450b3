//! A fleet's `--approve-between`: before the first member of each next cluster starts (its
//! cluster bake passed, every pod of the fleet fine), the run asks for an approval on that
//! member's part and waits until `ststui approve` gives it there. The approval is a claim of
//! whoever may patch the set, as a plan's `pause` is: it only lets the run go on; what is done
//! is still judged by the pods.

use super::*;

impl Run {
    /// `None`: member `index` may start (no approval asked of it, or given). Otherwise the step
    /// that asks for it (its part written with the question) or waits for it.
    pub(super) fn approval(&mut self, view: &RunView<'_>, index: usize) -> Option<Step> {
        if !self.cfg.approve_between || !part::crosses(self.cfg.clusters.as_deref(), index) {
            return None;
        }
        let started = self.started.clone().unwrap_or_default();
        let on_set = view.members[index]
            .set
            .and_then(|s| part::read(s).any().cloned())
            .filter(|p| p.started == started && p.group == self.cfg.group);
        if on_set.as_ref().and_then(|p| p.approval.as_ref()).is_some_and(part::Approval::given) {
            return None;
        }
        let asked = self.parts[index].as_ref().and_then(|p| p.approval.clone());
        let Some(asked) = asked else {
            let mut p = self.part(index, State::Waiting, view.now, None);
            p.approval = Some(part::Approval { asked: stamp(view.now), by: None, at: None });
            self.say(index, self.approval_words(index));
            return Some(self.write_part(index, p));
        };
        let words = format!("{} (asked {})", self.approval_words(index), asked.asked);
        Some(self.held_by(index, words, self.lease.renew_at()))
    }

    /// "us/web waits for approval: `ststui approve web --context us`".
    fn approval_words(&self, index: usize) -> String {
        let name = crate::text::escape_controls(&self.cfg.sets[index].name).into_owned();
        let context = self.cfg.clusters.as_ref().and_then(|c| c.get(index)).map(Cluster::shown);
        let on = context.map(|c| format!(" --context {c}")).unwrap_or_default();
        format!("{} waits for approval: `ststui approve {name}{on}`", self.label(index))
    }
}
