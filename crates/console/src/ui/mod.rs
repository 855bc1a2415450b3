//! Pure rendering: `draw(frame, &AppState, &Theme)` paints one frame from the state's view
//! models and returns the frame's clickable geometry.
//!
//! Owns: one file per pane (header, grid rows, compact map, controller, timeline, history,
//! detail, help, confirmation and prompt, footer) and the theme. Must not touch: the state
//! (read only — never mutated from draw), the backend, the clock or the environment (the theme's
//! colour mode is decided at startup by the caller, see [`theme::ColorMode::from_env`]).
//!
//! Layout and hit-testing live in `app::view::layout`, so the reducer can map clicks without
//! depending on this module: [`hit_map`] gives the same geometry [`draw`] draws with.

pub mod confirm;
pub mod controller;
pub mod detail;
pub mod footer;
pub mod grid;
pub mod group;
pub mod header;
pub mod help;
pub mod history;
pub mod log;
pub mod map;
pub mod sets;
pub mod theme;
pub mod timeline;
mod util;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::app::state::{AppState, HitMap, Modal};
use crate::app::view::layout::{frame_layout, hit_map as layout_hit_map};
use crate::app::view::{GridMode, Screen};

pub use theme::{ColorMode, Theme};

/// Draws one frame of the console and returns its clickable geometry (hand it to the reducer
/// as `Msg::Drawn`).
pub fn draw(frame: &mut Frame<'_>, state: &AppState, theme: &Theme) -> HitMap {
    let area = frame.area();
    render(frame.buffer_mut(), area, state, theme)
}

/// Draws the console into `buf` over `area` (what [`draw`] does, without a `Frame`).
pub fn render(buf: &mut Buffer, area: Rect, state: &AppState, theme: &Theme) -> HitMap {
    let screen = Screen::of(state);
    let (areas, grid_layout) = frame_layout(&screen, area);
    if state.picking.is_some() {
        let body = Rect { height: area.height.saturating_sub(2), ..area };
        sets::render(buf, body, state, theme);
        footer::render(buf, areas.footer, state, theme);
        confirm::render_status(buf, areas.status, state, theme);
        if let Modal::Help { page } = &state.modal {
            help::render(buf, area, *page, &state.caps, theme);
        }
        return HitMap::default();
    }
    header::render(buf, areas.header, &screen, theme);
    match screen.empty {
        Some(reason) => grid::render_empty(buf, areas.grid, reason, theme),
        None => {
            match (crate::app::view::layout::matrix_layout(&screen, &areas), grid_layout.mode) {
                (Some(m), _) => group::render(buf, areas.grid, &screen, &m, theme),
                (None, GridMode::Detailed) => {
                    grid::render(buf, areas.grid, &screen, &grid_layout, theme)
                }
                (None, GridMode::Compact { .. }) => {
                    map::render(buf, areas.grid, &screen, &grid_layout, theme)
                }
            }
            if let Some(a) = areas.controller {
                controller::render(buf, a, &screen.controller, theme);
            }
            if let Some(a) = areas.detail {
                detail::render(buf, a, screen.detail(), theme);
            }
            if let Some(a) = areas.timeline {
                timeline::render(buf, a, state, theme);
            }
            if let Some(a) = areas.history {
                history::render(buf, a, &screen, theme);
            }
        }
    }
    footer::render(buf, areas.footer, state, theme);
    confirm::render_status(buf, areas.status, state, theme);
    match &state.modal {
        Modal::None | Modal::Prompt(_) => {}
        Modal::Help { page } => help::render(buf, area, *page, &state.caps, theme),
        Modal::Confirm(c) => confirm::render_confirm(buf, area, c, &state.caps, theme),
        Modal::Picker(p) => confirm::render_picker(buf, area, p, &state.caps, theme),
        Modal::Log(v) => {
            // Over the panes: the header, the footer and the status line stay.
            let top = (areas.header.y + areas.header.height).min(area.y + area.height);
            let bottom = areas.footer.y.min(areas.status.y).max(top);
            log::render(buf, Rect { y: top, height: bottom - top, ..area }, v, theme);
        }
    }
    layout_hit_map(&screen, &areas, &grid_layout)
}

/// The clickable geometry of the frame [`draw`] would draw for `state` on a terminal of `area`,
/// without drawing: a pure function of state and size.
pub fn hit_map(state: &AppState, area: Rect) -> HitMap {
    let screen = Screen::of(state);
    let (areas, grid_layout) = frame_layout(&screen, area);
    layout_hit_map(&screen, &areas, &grid_layout)
}
