//! A step's pods stuck broken on an older revision (`core::stuck`): what `--replace-stuck`
//! replaces first, and the offer a plan makes of it when not asked (in what it waits for and
//! beside a budget's refusal). Owns: these words. Must not: do IO or read a clock.

use super::facts::{Facts, opened};
use super::record::Record;
use crate::core::stuck::Replaceable;

/// The step's opened pods stuck broken on an older revision, highest first (`core::stuck`).
pub fn in_step(record: &Record, facts: &Facts<'_>) -> Vec<Replaceable> {
    let range = opened(facts.set, record.partition);
    let mut stuck = crate::core::stuck::replaceable(facts.set, facts.pods, &record.revision);
    stuck.retain(|s| range.contains(&s.ordinal));
    stuck
}

/// "; web-0 (CrashLoopBackOff) is stuck on an older revision, …" offering `--replace-stuck`,
/// when it is not asked and a pod is; empty otherwise.
pub fn offer(stuck: &[Replaceable], facts: &Facts<'_>) -> String {
    if facts.replace_stuck || stuck.is_empty() {
        return String::new();
    }
    let (verb, s, them) = if stuck.len() == 1 { ("is", "s", "it") } else { ("are", "", "them") };
    format!(
        "; {} {verb} stuck on an older revision and serve{s} nothing: --replace-stuck replaces \
         {them} first, at no cost in availability",
        crate::core::stuck::names(stuck)
    )
}
