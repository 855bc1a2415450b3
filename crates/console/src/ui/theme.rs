//! Colours, modifiers and glyphs: the one place the console's look is decided.
//!
//! Owns: [`Theme`] (styles for every role a pane draws) and [`Glyphs`] (the characters that
//! encode a pod's revision and state). Must not touch: application state or the terminal. The
//! colour choice is made once at startup ([`Theme::from_env`] reads `NO_COLOR`) and handed to
//! the state, so drawing never reads the environment.
//!
//! Readability without colour is a rule, not a fallback: every distinction drawn in colour is
//! also drawn as a glyph or a word, so a `NO_COLOR` terminal (or a plain-text snapshot) loses
//! nothing but colour.

use ratatui::style::{Color, Modifier, Style};

use crate::app::view::{PodState, RevClass};

/// Whether colours are used. `NO_COLOR` (any non-empty value, see no-color.org) selects
/// [`ColorMode::Monochrome`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorMode {
    #[default]
    Color,
    Monochrome,
}

impl ColorMode {
    /// Reads `NO_COLOR` once; call at startup, never while drawing.
    pub fn from_env() -> Self {
        Self::from_no_color(std::env::var_os("NO_COLOR").as_deref())
    }

    /// The decision for a given `NO_COLOR` value: set and non-empty means monochrome.
    pub fn from_no_color(value: Option<&std::ffi::OsStr>) -> Self {
        match value {
            Some(v) if !v.is_empty() => ColorMode::Monochrome,
            _ => ColorMode::Color,
        }
    }
}

/// The styles every pane draws with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub mode: ColorMode,
    /// Plain text.
    pub text: Style,
    /// Secondary text: labels, times, hints' descriptions.
    pub dim: Style,
    /// Pane titles and emphasised values.
    pub title: Style,
    /// Pane borders.
    pub border: Style,
    /// Key names in hints and help.
    pub key: Style,
    /// The update revision (the rollout target).
    pub rev_update: Style,
    /// The current revision (what the set runs now).
    pub rev_current: Style,
    /// Any other, superseded revision.
    pub rev_other: Style,
    /// Pods whose revision is unknown (no revision label).
    pub rev_unknown: Style,
    /// Failed pods and errors.
    pub bad: Style,
    /// Warnings (held, raised partition, forced-rollback hint).
    pub warn: Style,
    /// Healthy, complete.
    pub good: Style,
    /// The partition line and other separators.
    pub partition: Style,
    /// Added to the selected ordinal.
    pub selected: Style,
}

impl Theme {
    /// The theme for a colour mode.
    pub fn new(mode: ColorMode) -> Self {
        match mode {
            ColorMode::Color => Self::colored(),
            ColorMode::Monochrome => Self::monochrome(),
        }
    }

    /// Colours on a dark or light terminal: only the 16 named colours, so the user's palette
    /// decides the exact shades.
    pub fn colored() -> Self {
        let plain = Style::new();
        Theme {
            mode: ColorMode::Color,
            text: plain,
            dim: plain.fg(Color::DarkGray),
            title: plain.fg(Color::Cyan).add_modifier(Modifier::BOLD),
            border: plain.fg(Color::DarkGray),
            key: plain.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            rev_update: plain.fg(Color::Green),
            rev_current: plain.fg(Color::Blue),
            rev_other: plain.fg(Color::Magenta),
            rev_unknown: plain.fg(Color::Gray),
            bad: plain.fg(Color::Red).add_modifier(Modifier::BOLD),
            warn: plain.fg(Color::Yellow),
            good: plain.fg(Color::Green),
            partition: plain.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            selected: plain.add_modifier(Modifier::REVERSED),
        }
    }

    /// No colour at all (`NO_COLOR`): emphasis by modifiers only.
    pub fn monochrome() -> Self {
        let plain = Style::new();
        let bold = plain.add_modifier(Modifier::BOLD);
        Theme {
            mode: ColorMode::Monochrome,
            text: plain,
            dim: plain.add_modifier(Modifier::DIM),
            title: bold,
            border: plain,
            key: bold,
            rev_update: bold,
            rev_current: plain,
            rev_other: plain.add_modifier(Modifier::ITALIC),
            rev_unknown: plain.add_modifier(Modifier::DIM),
            bad: bold,
            warn: bold,
            good: plain,
            partition: bold,
            selected: plain.add_modifier(Modifier::REVERSED),
        }
    }

    /// The style of a revision class.
    pub fn rev(&self, rev: RevClass) -> Style {
        match rev {
            RevClass::Update => self.rev_update,
            RevClass::Current => self.rev_current,
            RevClass::Other => self.rev_other,
            RevClass::Unknown => self.rev_unknown,
        }
    }

    /// The style of one ordinal's cell: the revision's colour, with the state's emphasis.
    pub fn cell(&self, rev: RevClass, state: PodState) -> Style {
        match state {
            PodState::Failed => self.bad,
            PodState::Terminating => self.rev(rev).add_modifier(Modifier::DIM),
            PodState::Placeholder | PodState::Absent | PodState::Unlisted => self.dim,
            PodState::Pending | PodState::Running | PodState::Ready => self.rev(rev),
        }
    }
}

impl Default for Theme {
    fn default() -> Self {
        Self::colored()
    }
}

pub use crate::app::view::glyphs::Glyphs;

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn no_color_means_set_and_not_empty() {
        assert_eq!(ColorMode::from_no_color(None), ColorMode::Color);
        assert_eq!(ColorMode::from_no_color(Some(OsStr::new(""))), ColorMode::Color);
        assert_eq!(ColorMode::from_no_color(Some(OsStr::new("1"))), ColorMode::Monochrome);
    }

    #[test]
    fn monochrome_has_no_colours() {
        let t = Theme::monochrome();
        for s in [t.text, t.dim, t.title, t.rev_update, t.rev_current, t.rev_other, t.bad] {
            assert_eq!(s.fg, None);
            assert_eq!(s.bg, None);
        }
    }

    #[test]
    fn every_revision_and_state_pair_has_a_distinct_glyph() {
        let revs = [RevClass::Update, RevClass::Current, RevClass::Other];
        let states = [PodState::Ready, PodState::Running, PodState::Pending];
        let mut seen = std::collections::HashSet::new();
        for r in revs {
            for s in states {
                assert!(seen.insert(Glyphs::cell(r, s)), "{r:?} {s:?} reuses a glyph");
            }
        }
        assert!(!seen.contains(&Glyphs::TERMINATING) && !seen.contains(&Glyphs::PLACEHOLDER));
    }
}
