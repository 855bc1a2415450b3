//! The grid's glyphs: the one-character encoding of an ordinal, and the legend that explains
//! every glyph the grid draws. The border legend (`ui::grid`) and the help overlay's "Grid"
//! section both come from [`Glyphs::legend`], so neither can leave a glyph out.
//!
//! Owns the characters and their meanings. Must not touch styles or the terminal.

use super::grid::{PodState, RevClass};

/// The one-character encoding of an ordinal. Revision is the shape family (circle = update,
/// square = current, diamond = other revision), state is the fill (full = Ready, half = Running
/// but not Ready, hollow = Pending); Terminating, Failed and placeholders have their own marks.
pub struct Glyphs;

/// One legend entry: the glyphs, what they mean in the border legend (short), and in the help
/// overlay (a sentence). An entry without glyphs explains the ones before it (the fills).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegendEntry {
    pub glyphs: &'static str,
    pub short: &'static str,
    pub long: &'static str,
}

const fn entry(glyphs: &'static str, short: &'static str, long: &'static str) -> LegendEntry {
    LegendEntry { glyphs, short, long }
}

impl LegendEntry {
    /// What the help overlay shows in its key column.
    pub fn key(&self) -> &'static str {
        if self.glyphs.is_empty() { "fill" } else { self.glyphs }
    }
}

impl Glyphs {
    pub const PLACEHOLDER: char = '·';
    pub const ABSENT: char = ' ';
    pub const TERMINATING: char = '×';
    pub const FAILED: char = '!';
    pub const UNKNOWN: char = '?';
    /// An ordinal whose pod is not known yet: the pods are still being listed.
    pub const UNLISTED: char = '…';
    /// The horizontal rule of the partition and scale-down lines.
    pub const RULE: char = '─';
    /// Marks the selected row in detailed rows and the selected row of the compact map.
    pub const POINTER: char = '▶';

    const UPDATE: [char; 3] = ['●', '◐', '○'];
    const CURRENT: [char; 3] = ['■', '◧', '□'];
    const OTHER: [char; 3] = ['◆', '◈', '◇'];

    /// The glyph for a pod of revision `rev` in state `state`.
    pub fn cell(rev: RevClass, state: PodState) -> char {
        match state {
            PodState::Placeholder => return Self::PLACEHOLDER,
            PodState::Absent => return Self::ABSENT,
            PodState::Terminating => return Self::TERMINATING,
            PodState::Failed => return Self::FAILED,
            PodState::Unlisted => return Self::UNLISTED,
            PodState::Pending | PodState::Running | PodState::Ready => {}
        }
        let fill = match state {
            PodState::Ready => 0,
            PodState::Running => 1,
            _ => 2,
        };
        let family = match rev {
            RevClass::Update => Self::UPDATE,
            RevClass::Current => Self::CURRENT,
            RevClass::Other => Self::OTHER,
            RevClass::Unknown => return Self::UNKNOWN,
        };
        family[fill]
    }

    /// Every glyph the grid draws, in the order the legends list them (the most needed first:
    /// a narrow border legend keeps the first entries whole and points to the help for the
    /// rest).
    pub fn legend() -> [LegendEntry; 10] {
        [
            entry("●◐○", "update", "a pod on the update revision: Ready, running, pending"),
            entry("■◧□", "current", "a pod on the current revision: Ready, running, pending"),
            entry("◆◈◇", "other", "a pod on any other revision: Ready, running, pending"),
            entry(
                "",
                "(Ready/running/pending)",
                "the fill: full Ready, half running, hollow pending",
            ),
            entry("×", "terminating", "the pod is terminating (being deleted)"),
            entry("!", "failed", "the pod failed (phase Failed or Succeeded)"),
            entry("·", "not created", "an ordinal of the range with no pod yet"),
            entry("?", "no revision", "a pod without a revision label"),
            entry("…", "listing", "the pods are being listed: this ordinal's pod is not known yet"),
            entry(
                "▶ ─",
                "selected, rules",
                "▶ the selected ordinal; ─ a rule: the partition (▲ held · ▼ updated), the \
                 replica count (▼ condemned) or the start ordinal",
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every glyph `cell` can return is in the legend.
    #[test]
    fn the_legend_lists_every_glyph_the_grid_draws() {
        let legend: String = Glyphs::legend().iter().map(|e| e.glyphs).collect();
        let revs = [RevClass::Update, RevClass::Current, RevClass::Other, RevClass::Unknown];
        let states = [
            PodState::Placeholder,
            PodState::Pending,
            PodState::Running,
            PodState::Ready,
            PodState::Terminating,
            PodState::Failed,
            PodState::Unlisted,
        ];
        for rev in revs {
            for state in states {
                let g = Glyphs::cell(rev, state);
                assert!(legend.contains(g), "{g} ({rev:?}, {state:?}) is not in the legend");
            }
        }
        for g in [Glyphs::POINTER, Glyphs::RULE] {
            assert!(legend.contains(g), "{g} is not in the legend");
        }
    }
}
