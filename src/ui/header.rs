//! The header: the set, its strategy and pod management policy, replica counts, current and
//! update revision, observed generation, and the controller mode and speed (two lines, Argo
//! Rollouts' vocabulary).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;

use crate::app::view::timeline::duration_text;
use crate::app::view::{HeaderView, RevLabel, Screen, StrategyView};
use crate::backend::Mode;

use super::theme::Theme;
use super::util::put_spans;

/// Draws the header (two rows) into `area`.
pub fn render(buf: &mut Buffer, area: Rect, screen: &Screen<'_>, theme: &Theme) {
    if area.height == 0 {
        return;
    }
    let right = area.x + area.width;
    let Some(h) = &screen.header else {
        let spans = [Span::styled(" ststui ", theme.title), Span::styled("no set", theme.dim)];
        put_spans(buf, area.x, area.y, &spans, right);
        return;
    };
    put_spans(buf, area.x, area.y, &first_line(h, theme), right);
    if area.height > 1 {
        put_spans(buf, area.x, area.y + 1, &second_line(h, theme), right);
    }
}

fn mode_span(mode: Mode, theme: &Theme) -> Span<'static> {
    match mode {
        Mode::Live => Span::styled("● live", theme.good),
        Mode::Paused => Span::styled("❚❚ PAUSED", theme.warn),
        Mode::Frozen => Span::styled("❄ FROZEN", theme.warn),
    }
}

fn sep(theme: &Theme) -> Span<'static> {
    Span::styled(" │ ", theme.border)
}

/// `default/web │ ● live ×2 │ RollingUpdate partition=3 │ OrderedReady  t 1m05s`
pub fn first_line<'a>(h: &HeaderView<'a>, theme: &Theme) -> Vec<Span<'a>> {
    // The mode comes right after the set: on a narrow terminal the line is cut from the right.
    let mut s = vec![Span::styled(format!(" {}", h.set), theme.title), sep(theme)];
    s.push(mode_span(h.mode, theme));
    if let Some(speed) = h.speed {
        s.push(Span::styled(format!(" ×{}", speed_text(speed)), theme.text));
    }
    s.push(sep(theme));
    match &h.strategy {
        StrategyView::RollingUpdate { partition, max_unavailable } => {
            s.push(Span::styled("RollingUpdate ", theme.text));
            let p_style = if *partition > 0 { theme.partition } else { theme.text };
            s.push(Span::styled(format!("partition={partition}"), p_style));
            if let Some(m) = max_unavailable {
                s.push(Span::styled(format!(" maxUnavailable={m}"), theme.text));
            }
        }
        StrategyView::OnDelete => s.push(Span::styled("OnDelete", theme.warn)),
    }
    s.push(sep(theme));
    s.push(Span::styled(h.policy, theme.text));
    s.push(Span::styled(format!("  t {}", duration_text(h.elapsed_ms / 1000 * 1000)), theme.dim));
    if h.set_count > 1 {
        s.push(Span::styled(format!("  ({} sets, Tab)", h.set_count), theme.dim));
    }
    s
}

/// `1`, `0.5`, `16`: a speed without trailing zeros.
pub fn speed_text(speed: f64) -> String {
    let t = format!("{speed:.2}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn count<'a>(label: &'a str, n: i32, of: i32, theme: &Theme) -> [Span<'a>; 2] {
    let style = if n < of { theme.warn } else { theme.text };
    [Span::styled(label, theme.dim), Span::styled(n.to_string(), style)]
}

fn rev_spans<'a>(rev: &RevLabel<'a>, style: Style, theme: &Theme) -> [Span<'a>; 2] {
    let number = rev.number.map(|n| format!(" #{n}")).unwrap_or_default();
    let hash = if rev.hash.is_empty() { "-" } else { rev.hash };
    [Span::styled(hash, style), Span::styled(number, theme.dim)]
}

/// `desired 5 current 5 updated 3 ready 4 available 4 │ 7d9 #1 → 5c4 #2 │ gen 2/2`
pub fn second_line<'a>(h: &HeaderView<'a>, theme: &Theme) -> Vec<Span<'a>> {
    let mut s = vec![
        Span::styled(" desired ", theme.dim),
        Span::styled(h.desired.to_string(), theme.title),
    ];
    s.extend(count(" current ", h.current, h.desired, theme));
    s.extend(count(" updated ", h.updated, h.desired, theme));
    s.extend(count(" ready ", h.ready, h.desired, theme));
    s.extend(count(" available ", h.available, h.desired, theme));
    s.push(sep(theme));
    s.extend(rev_spans(&h.current_rev, theme.rev_current, theme));
    if h.current_rev.name == h.update_rev.name {
        s.push(Span::styled(" (current = update)", theme.good));
    } else {
        s.push(Span::styled(" → ", theme.text));
        s.extend(rev_spans(&h.update_rev, theme.rev_update, theme));
    }
    s.push(sep(theme));
    let observed = h.observed_generation.map_or("-".to_string(), |g| g.to_string());
    let generation = h.generation.map_or("-".to_string(), |g| g.to_string());
    let style = if h.observed_generation == h.generation { theme.text } else { theme.warn };
    s.push(Span::styled("gen ", theme.dim));
    s.push(Span::styled(format!("{observed}/{generation}"), style));
    s
}
