//! The header's words, as segments that flow onto lines: on a wide terminal two lines (the set,
//! mode, strategy, policy and clock; then the counts, revisions and generation), on a narrow
//! one as many as it takes, broken between segments so nothing is cut off (the observed
//! generation stays on screen at 80 columns).
//!
//! Owns the text and its semantic [`Tone`]; `ui::header` maps tones to styles, and the layout
//! reserves [`height`] rows, both from the same [`lines`]. Must not touch the terminal or styles.

use unicode_width::UnicodeWidthStr;

use super::timeline::duration_text;
use super::{HeaderView, RevLabel, StrategyView};
use crate::app::health::Health;
use crate::backend::{Connection, Mode};

/// What a piece of header text is, for its style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Title,
    Text,
    Dim,
    Good,
    Warn,
    /// A partition that holds ordinals (> 0).
    Partition,
    RevCurrent,
    RevUpdate,
    /// The ` │ ` between segments.
    Separator,
}

/// A piece of text in one tone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub text: String,
    pub tone: Tone,
}

fn p(text: impl Into<String>, tone: Tone) -> Piece {
    Piece { text: text.into(), tone }
}

/// A unit that is never broken across lines.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    pieces: Vec<Piece>,
    /// Joined to the previous segment on the same line by ` │ ` (else by two spaces).
    bar: bool,
}

fn seg(bar: bool, pieces: Vec<Piece>) -> Segment {
    Segment { pieces, bar }
}

/// `1`, `0.5`, `16`: a speed without trailing zeros.
pub fn speed_text(speed: f64) -> String {
    let t = format!("{speed:.2}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The two groups of segments; each group starts a new line.
fn groups(h: &HeaderView<'_>) -> [Vec<Segment>; 2] {
    let (mode, strategy) = (mode_pieces(h), strategy_pieces(h));
    let mut clock = vec![p(format!("t {}", duration_text(h.elapsed_ms / 1000 * 1000)), Tone::Dim)];
    if h.set_count > 1 {
        clock.push(p(format!("  ({} sets, Tab)", h.set_count), Tone::Dim));
    }
    // The mode comes right after the set: it is what changes under the operator's keys.
    let first = vec![
        seg(true, vec![p(h.set.to_string(), Tone::Title)]),
        seg(true, mode),
        seg(true, strategy),
        seg(true, vec![p(h.policy, Tone::Text)]),
        seg(false, clock),
    ];
    [first, second_group(h)]
}

/// The mode and what qualifies it: the connection, driving, read-only, a freeze, a plan, another
/// manager, re-lists, the speed.
fn mode_pieces(h: &HeaderView<'_>) -> Vec<Piece> {
    let mode = match (h.connection, h.mode) {
        (Connection::Unreachable { since, .. }, _) => p(
            format!("⚠ unreachable since {}, retrying (stale)", since.strftime("%H:%M:%S")),
            Tone::Warn,
        ),
        (Connection::Failing { since, .. }, _) => p(
            format!("⚠ server errors since {}, retrying (stale)", since.strftime("%H:%M:%S")),
            Tone::Warn,
        ),
        (Connection::Unauthorized { .. }, _) => {
            p("⚠ credentials refused (stale): R reconnects", Tone::Warn)
        }
        (Connection::Up, _) if let Some(holder) = h.standby => {
            p(format!("◌ standby: {}", crate::text::escape_controls(holder)), Tone::Warn)
        }
        (Connection::Up, Mode::Live) if h.drives => p("● driving, live", Tone::Good),
        (Connection::Up, Mode::Paused) if h.drives => p("❚❚ driving, PAUSED", Tone::Warn),
        (Connection::Up, Mode::Live) => p("● live", Tone::Good),
        (Connection::Up, Mode::Paused) => p("❚❚ PAUSED", Tone::Warn),
    };
    let mut mode = vec![mode];
    match h.read_only {
        super::ReadOnly::No => {}
        super::ReadOnly::Wholly => mode.push(p(" read-only", Tone::Warn)),
        super::ReadOnly::Partly => mode.push(p(" writes partly denied", Tone::Warn)),
    }
    if let Some(f) = &h.frozen {
        let text = match f.broken {
            None => format!(" ❄ frozen by {} since {}", f.by_words(), f.at),
            Some(_) => format!(" ❄ {}", f.words()),
        };
        mode.push(p(text, Tone::Warn));
    }
    if let Some((words, halted)) = &h.plan {
        mode.push(p(format!(" ▶ {words}"), if *halted { Tone::Warn } else { Tone::Text }));
    }
    if let Some(m) = &h.manager {
        mode.push(p(format!(" ⎇ managed by {m}"), Tone::Warn));
    }
    if h.relists > 0 {
        mode.push(p(format!(" ↻{}", h.relists), Tone::Dim));
    }
    match (h.speed, h.pace) {
        (Some(speed), Some(achieved)) => mode.push(p(
            format!(" ×{} asked, ×{} achieved", speed_text(speed), speed_text(achieved)),
            Tone::Warn,
        )),
        (Some(speed), None) => mode.push(p(format!(" ×{}", speed_text(speed)), Tone::Text)),
        _ => {}
    }
    mode
}

fn strategy_pieces(h: &HeaderView<'_>) -> Vec<Piece> {
    match &h.strategy {
        StrategyView::RollingUpdate { unset: true, .. } => {
            vec![p("RollingUpdate ", Tone::Text), p("rollingUpdate unset", Tone::Warn)]
        }
        StrategyView::RollingUpdate { partition, max_unavailable, .. } => {
            let tone = if *partition > 0 { Tone::Partition } else { Tone::Text };
            let mut v =
                vec![p("RollingUpdate ", Tone::Text), p(format!("partition={partition}"), tone)];
            if let Some(m) = max_unavailable {
                v.push(p(format!(" maxUnavailable={m}"), Tone::Text));
            }
            v
        }
        StrategyView::OnDelete => vec![p("OnDelete", Tone::Warn)],
        StrategyView::Recreate => vec![p("Recreate", Tone::Warn)],
    }
}

/// The second line: health, the counts, the revisions, the generation.
fn second_group(h: &HeaderView<'_>) -> Vec<Segment> {
    let count = |label: &str, n: i32| {
        let tone = if n < h.desired { Tone::Warn } else { Tone::Text };
        [p(label, Tone::Dim), p(n.to_string(), tone)]
    };
    let mut counts = vec![p("desired ", Tone::Dim), p(h.desired.to_string(), Tone::Title)];
    counts.extend(count(" current ", h.current));
    counts.extend(count(" updated ", h.updated));
    counts.extend(count(" ready ", h.ready));
    counts.extend(count(" available ", h.available));
    let mut revs = rev(&h.current_rev, Tone::RevCurrent).to_vec();
    if h.current_rev.name == h.update_rev.name {
        revs.push(p(" (current = update)", Tone::Good));
    } else {
        revs.push(p(" → ", Tone::Text));
        revs.extend(rev(&h.update_rev, Tone::RevUpdate));
    }
    let show = |g: Option<i64>| g.map_or("-".to_string(), |g| g.to_string());
    let mut second = Vec::new();
    if let Some(health) = h.health {
        let tone = match health {
            Health::Healthy => Tone::Good,
            Health::Progressing | Health::Unknown => Tone::Text,
            Health::Held
            | Health::Waiting
            | Health::Stalled
            | Health::Blocked
            | Health::Degraded
            | Health::Paused
            | Health::Frozen
            | Health::Halted => Tone::Warn,
        };
        second.push(seg(true, vec![p(health.word(), tone)]));
    }
    let gen_tone = if h.observed_generation == h.generation { Tone::Text } else { Tone::Warn };
    let generation = vec![
        p("gen ", Tone::Dim),
        p(format!("{}/{}", show(h.observed_generation), show(h.generation)), gen_tone),
    ];
    second.extend([seg(true, counts), seg(true, revs), seg(true, generation)]);
    second
}

fn rev(r: &RevLabel<'_>, tone: Tone) -> [Piece; 2] {
    let hash = if r.hash.is_empty() { "-" } else { r.hash };
    [p(hash, tone), p(r.number.map(|n| format!(" #{n}")).unwrap_or_default(), Tone::Dim)]
}

fn width(pieces: &[Piece]) -> usize {
    pieces.iter().map(|x| x.text.width()).sum()
}

/// The header's lines for a terminal `width` columns wide: each starts with a one-column
/// margin; segments are joined on a line while they fit and moved whole to the next otherwise.
pub fn lines(h: &HeaderView<'_>, width_cols: u16) -> Vec<Vec<Piece>> {
    let max = usize::from(width_cols);
    let mut out: Vec<Vec<Piece>> = Vec::new();
    for group in groups(h) {
        let mut line: Vec<Piece> = Vec::new();
        for s in group {
            let joiner = if s.bar { " │ " } else { "  " };
            if !line.is_empty() && width(&line) + joiner.width() + width(&s.pieces) > max {
                out.push(std::mem::take(&mut line));
            }
            if line.is_empty() {
                line.push(p(" ", Tone::Text));
            } else {
                line.push(p(joiner, if s.bar { Tone::Separator } else { Tone::Text }));
            }
            line.extend(s.pieces);
        }
        out.push(line);
    }
    out
}

/// Rows the header takes on a terminal `width_cols` wide: two, or more on a narrow one.
pub fn height(h: Option<&HeaderView<'_>>, width_cols: u16) -> u16 {
    h.map_or(2, |h| u16::try_from(lines(h, width_cols).len()).unwrap_or(u16::MAX).max(2))
}
