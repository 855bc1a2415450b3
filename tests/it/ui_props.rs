//! Properties of the grid geometry over random sets and terminal sizes: every clickable grid
//! cell shows the glyph of the ordinal it maps to, the selected ordinal is always on screen and
//! highlighted exactly once, and nothing is drawn or clickable outside the terminal.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::ui_support;

use proptest::prelude::*;
use ratatui::style::Modifier;
use ststui::app::state::{Hit, HitRegion};
use ststui::app::view::Screen;
use ststui::ui::Theme;
use ststui::ui::theme::Glyphs;
use ui_support::*;

fn fixture(n: i32, replicas: i32, partition: i32, selected: i32) -> Fixture {
    let mut f = Fixture::web(replicas).pods(0..partition.min(n), REV1, P::Ready);
    f = f.pods(partition.min(n)..n, REV2, P::Ready);
    f.partition = partition;
    f.selected = selected;
    f
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn clicks_land_on_what_is_drawn(
        n in 1i32..2500,
        extra in 0i32..40,
        part_pct in 0i32..=100,
        sel_pct in 0i32..100,
        w in 30u16..240,
        h in 12u16..70,
    ) {
        let replicas = (n - extra).max(0);
        let partition = replicas * part_pct / 100;
        let selected = (n.max(replicas) - 1).max(0) * sel_pct / 100;
        let st = fixture(n, replicas, partition, selected).state();
        let (term, hits) = render_with(&st, w, h, &Theme::colored());
        let buf = term.backend().buffer();
        let screen = Screen::of(&st);
        let mut selected_seen = false;
        for region in &hits.regions {
            let HitRegion::Grid { area, cell_width, .. } = region else { continue };
            prop_assert!(area.right() <= w && area.bottom() <= h);
            if *cell_width != 1 {
                continue; // detailed rows: a whole row is one ordinal
            }
            for x in area.x..area.right() {
                let Some(Hit::Ordinal(o)) = hits.hit(x, area.y) else {
                    return Err(TestCaseError::fail(format!("nothing at ({x}, {})", area.y)));
                };
                let cell = screen.grid.cell(o).copied();
                let glyph = cell.map(|c| Glyphs::cell(c.rev, c.state).to_string());
                prop_assert_eq!(Some(buf[(x, area.y)].symbol().to_string()), glyph);
                let reversed = buf[(x, area.y)].modifier.contains(Modifier::REVERSED);
                prop_assert_eq!(reversed, o == selected, "ordinal {} at ({}, {})", o, x, area.y);
                selected_seen |= o == selected;
            }
        }
        let compact = hits.grid_columns > 1;
        if compact {
            prop_assert!(selected_seen, "selected {} not visible", selected);
        }
    }
}
