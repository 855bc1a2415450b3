//! Frame build + render cost: `ui::draw` (selectors, layout, every pane, hit map) into a
//! 200×50 TestBackend, for 1,000 and 10,000 ordinals in the compact map (target at 10,000:
//! ≤ 4 ms per frame), the selectors alone, and what a state change costs once (the grid and
//! the controller's sentences, `app::derived`, cached until the next change).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

#[path = "../tests/support/ui_support.rs"]
mod ui_support;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ststui::app::state::Derived;
use ststui::app::view::Screen;
use ststui::ui::{self, Theme};

fn frames(c: &mut Criterion) {
    let theme = Theme::colored();
    for n in [1_000, 10_000] {
        let mut state = ui_support::big(n).state();
        // As the console does at the end of every batch: derive once per state change.
        ststui::app::update(&mut state, ststui::app::Msg::BatchEnd);
        let Ok(mut term) = Terminal::new(TestBackend::new(200, 50));
        c.bench_function(&format!("draw 200x50, {n} ordinals"), |b| {
            b.iter(|| {
                // A fresh frame each time: clear forces every cell to be diffed and written.
                let _ = term.clear();
                let _ = term.draw(|f| {
                    black_box(ui::draw(f, black_box(&state), &theme));
                });
            })
        });
        c.bench_function(&format!("selectors only, {n} ordinals"), |b| {
            b.iter(|| black_box(Screen::of(black_box(&state)).grid.cells.len()))
        });
        c.bench_function(&format!("derive once per state change, {n} ordinals"), |b| {
            b.iter(|| black_box(Derived::of(black_box(&state)).map(|d| d.grid.cells.len())))
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = frames
}
criterion_main!(benches);
