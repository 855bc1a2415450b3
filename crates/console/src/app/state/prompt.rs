//! Prompts: number and text entry (partition N, scale N, new image), held as data in
//! [`crate::app::state::Modal::Prompt`].
//!
//! Owns line editing and parsing of what was typed. Must not decide what a value means for the
//! cluster (the reducer validates against the set and builds the Op).

use crate::app::refusal::Refusal;
use crate::backend::ObjRef;

/// What the prompt asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptKind {
    /// `spec.updateStrategy.rollingUpdate.partition`; `current` is the value now.
    Partition { set: ObjRef, current: i32 },
    /// `spec.replicas`.
    Scale { set: ObjRef, current: i32 },
    /// The first container's image; `rolls`: what a new one starts at once (a partition below
    /// the replicas rolls its ordinals without a plan), said before it is typed.
    Image { set: ObjRef, current: String, rolls: Option<String> },
    /// An ordinal to select, between `lo` and `hi` (what the grid shows).
    Jump { set: ObjRef, lo: i32, hi: i32 },
    /// `spec.updateStrategy.rollingUpdate.maxUnavailable`: a number or a percentage.
    MaxUnavailable { set: ObjRef, current: String },
    /// An image to break (or to fix, when it is broken): the simulator's `b`. `fixing`: the
    /// prefilled image is broken now.
    BrokenImage { fixing: bool },
    /// A rollout plan for `set`: `STEPS [bake=DUR] [stuck-after=DUR]`.
    Plan { set: ObjRef },
    /// A rollout group's plan: `STEPS|batches=N,… [bake=DUR] [zone-bake=DUR]
    /// [stuck-after=DUR]`.
    GroupPlan { group: super::GroupShown },
    /// The StatefulSet list's filter (empty: every set).
    SetFilter,
    /// Why `pod` of `set` is force-deleted past its disruption budgets (recorded on the set);
    /// `uid` the pod's when asked, `budget` what its budget allows now, in words.
    ForceReason { set: ObjRef, pod: ObjRef, uid: Option<String>, budget: String },
}

impl PromptKind {
    /// Whether only digits are accepted.
    pub fn numeric(&self) -> bool {
        !matches!(
            self,
            PromptKind::Image { .. }
                | PromptKind::MaxUnavailable { .. }
                | PromptKind::BrokenImage { .. }
                | PromptKind::Plan { .. }
                | PromptKind::GroupPlan { .. }
                | PromptKind::SetFilter
                | PromptKind::ForceReason { .. }
        )
    }

    /// The label shown before the input, e.g. `partition of default/web (now 5):`.
    pub fn label(&self) -> String {
        match self {
            PromptKind::Partition { set, current } => {
                format!("partition of {set} (now {current})")
            }
            PromptKind::Scale { set, current } => format!("replicas of {set} (now {current})"),
            PromptKind::Image { set, current, rolls: None } => {
                format!("image of {set} (now {current})")
            }
            PromptKind::Image { set, current, rolls: Some(rolls) } => {
                format!("image of {set} (now {current}; {rolls})")
            }
            PromptKind::Jump { set, lo, hi } => format!("go to ordinal of {set} ({lo}–{hi})"),
            PromptKind::MaxUnavailable { set, current } => {
                format!("maxUnavailable of {set}, a number or N% (now {current})")
            }
            PromptKind::BrokenImage { fixing: false } => {
                "break image: IMG [probe|pull|crash] (every pod of it fails; a broken one is fixed)"
                    .into()
            }
            PromptKind::BrokenImage { fixing: true } => {
                "fix image (a working one is broken instead)".into()
            }
            PromptKind::Plan { set } => {
                format!("plan for {set}: steps (counts, N%, pause) and bake=DUR")
            }
            PromptKind::GroupPlan { group } => format!(
                "plan for group {} ({} sets, {} first): each set's steps or batches=N,N, \
                 bake=DUR, zone-bake=DUR",
                crate::text::escape_controls(&group.name),
                group.sets.len(),
                group
                    .sets
                    .first()
                    .map(|k| crate::text::escape_controls(&k.name))
                    .unwrap_or_default()
            ),
            PromptKind::SetFilter => {
                "filter StatefulSets by name as you type (Enter keeps it, Esc clears)".into()
            }
            PromptKind::ForceReason { pod, budget, .. } => format!(
                "why force-delete {} past its budgets ({budget})? recorded on the set",
                pod.name
            ),
        }
    }
}

/// An open prompt: what it asks for, what was typed so far, and the last validation error
/// (shown under the input until the next edit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    pub kind: PromptKind,
    pub input: String,
    pub error: Option<String>,
}

/// Longest input accepted (an image reference is at most a few hundred bytes).
const MAX_INPUT: usize = 256;

impl Prompt {
    /// A prompt with `initial` already typed (e.g. the bumped image).
    pub fn new(kind: PromptKind, initial: impl Into<String>) -> Prompt {
        Prompt { kind, input: initial.into(), error: None }
    }

    /// Types one character. Returns false (and sets `error`) when it is not accepted.
    pub fn push(&mut self, c: char) -> bool {
        let percent = matches!(self.kind, PromptKind::MaxUnavailable { .. });
        let spaced = matches!(
            self.kind,
            PromptKind::Plan { .. }
                | PromptKind::GroupPlan { .. }
                | PromptKind::BrokenImage { .. }
                | PromptKind::ForceReason { .. }
        );
        let ok = if self.kind.numeric() {
            c.is_ascii_digit()
        } else if spaced {
            c == ' ' || (!c.is_control() && !c.is_whitespace())
        } else if percent {
            c.is_ascii_digit() || c == '%'
        } else {
            !c.is_control() && !c.is_whitespace()
        };
        if !ok {
            self.error = Some(if self.kind.numeric() {
                format!("{c:?} is not a digit: type a whole number")
            } else if percent {
                format!("{c:?}: type a number, or a percentage like 25%")
            } else if self.kind == PromptKind::SetFilter {
                "a name has no spaces".to_string()
            } else {
                "an image reference has no spaces".to_string()
            });
            return false;
        }
        if self.input.len() >= MAX_INPUT {
            self.error = Some(format!("input is limited to {MAX_INPUT} characters"));
            return false;
        }
        self.input.push(c);
        self.error = None;
        true
    }

    /// Deletes the last character.
    pub fn backspace(&mut self) {
        self.input.pop();
        self.error = None;
    }

    /// Clears the input (ctrl-u).
    pub fn clear(&mut self) {
        self.input.clear();
        self.error = None;
    }

    /// The typed number, or a message saying what is expected.
    pub fn number(&self) -> Result<i32, Refusal> {
        let t = self.input.trim();
        if t.is_empty() {
            return Err("type a number, Enter to apply, Esc to cancel".into());
        }
        t.parse::<i32>()
            .map_err(|_| format!("{t} is not a whole number from 0 to {}", i32::MAX).into())
    }

    /// The typed maxUnavailable: a positive number or a percentage (`2`, `25%`).
    pub fn int_or_percent(
        &self,
    ) -> Result<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString, Refusal> {
        use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
        let t = self.input.trim();
        if t.is_empty() {
            return Err(
                "type a number (e.g. 2) or a percentage (e.g. 25%), Enter to apply, Esc to cancel"
                    .into(),
            );
        }
        let bad =
            || Refusal(format!("{t:?} is not a number or a percentage: expected e.g. 2 or 25%"));
        match t.strip_suffix('%') {
            Some(p) if p.parse::<u32>().is_ok_and(|n| (1..=100).contains(&n)) => {
                Ok(IntOrString::String(t.to_string()))
            }
            Some(_) => Err(bad()),
            None => match t.parse::<i32>() {
                Ok(n) if n >= 1 => Ok(IntOrString::Int(n)),
                Ok(_) => Err("maxUnavailable must be at least 1 (or a percentage)".into()),
                Err(_) => Err(bad()),
            },
        }
    }

    /// The typed text, or a message when it is empty.
    pub fn text(&self) -> Result<String, Refusal> {
        let t = self.input.trim();
        if t.is_empty() {
            return Err("type an image, e.g. nginx:1.27; Esc to cancel".into());
        }
        Ok(t.to_string())
    }
}

/// The next image for a new revision: the last number in the tag bumped by one
/// (`nginx:1.25` → `nginx:1.26`, `app:v9` → `app:v10`), `:2` appended when there is no tag,
/// `-2` appended to a tag without digits. Digests (`@sha256:`) are left to the operator.
pub fn bump_image(image: &str) -> String {
    let (repo, tag) = match image.rfind(':') {
        Some(i) if !image[i..].contains('/') && !image.contains('@') => {
            (&image[..i], Some(&image[i + 1..]))
        }
        _ => (image, None),
    };
    let Some(tag) = tag else {
        return format!("{repo}:2");
    };
    let bytes = tag.as_bytes();
    let Some(end) = bytes.iter().rposition(u8::is_ascii_digit).map(|e| e + 1) else {
        return format!("{repo}:{tag}-2");
    };
    let start = bytes[..end].iter().rposition(|b| !b.is_ascii_digit()).map_or(0, |s| s + 1);
    let digits = &tag[start..end];
    let bumped = match digits.parse::<u64>() {
        Ok(n) => (n.saturating_add(1)).to_string(),
        Err(_) => format!("{digits}1"),
    };
    format!("{repo}:{}{bumped}{}", &tag[..start], &tag[end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bumps_the_last_number_of_the_tag() {
        assert_eq!(bump_image("nginx:1.25"), "nginx:1.26");
        assert_eq!(bump_image("app:v9"), "app:v10");
        assert_eq!(bump_image("app:1.2.3-alpine"), "app:1.2.4-alpine");
        assert_eq!(bump_image("nginx"), "nginx:2");
        assert_eq!(bump_image("registry:5000/nginx"), "registry:5000/nginx:2");
        assert_eq!(bump_image("registry:5000/nginx:1.0"), "registry:5000/nginx:1.1");
        assert_eq!(bump_image("nginx:latest"), "nginx:latest-2");
    }

    #[test]
    fn numeric_prompt_takes_digits_only() {
        let set = ObjRef::new("default", "web");
        let mut p = Prompt::new(PromptKind::Partition { set, current: 5 }, "");
        assert!(p.push('3'));
        assert!(!p.push('x'));
        assert!(p.error.as_deref().is_some_and(|e| e.contains("not a digit")));
        assert_eq!(p.number(), Ok(3));
        p.backspace();
        assert!(p.number().is_err());
        assert!(p.push('9') && p.push('9') && p.push('9') && p.push('9'));
        for _ in 0..7 {
            p.push('9');
        }
        assert!(p.number().is_err_and(|e| e.0.contains("not a whole number")));
    }
}
