//! Widget buffer tests per pane: glyphs, the partition line's position, condemned marks,
//! placeholders, the compact map's wrap and selection, hit-testing round trips, the footer and
//! help derived from the keymap, dialogs, and graceful degradation on small terminals.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::ui_support;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ststui::app::keymap::{BINDINGS, Context};
use ststui::app::state::{Hit, HitRegion, Modal, Status, StatusKind};
use ststui::app::view::grid::{GridLayout, GridMode, compact_cols};
use ststui::app::view::{GridRow, Screen};
use ststui::ui::Theme;
use ststui::ui::theme::Glyphs;
use ui_support::*;

fn screen_of(st: &ststui::app::AppState, w: u16, h: u16) -> Buffer {
    render(st, w, h).backend().buffer().clone()
}

fn text(buf: &Buffer) -> String {
    screen_text(buf)
}

/// The position of `web-<o>` in the grid's detailed rows (the row with its revision column),
/// not in the detail pane's title.
fn grid_row(buf: &Buffer, o: i32) -> (u16, u16) {
    let needle = format!("web-{o} ");
    for y in 0..buf.area.height {
        let line = row(buf, y);
        if let Some(byte) = line.find(&needle) {
            let x = line[..byte].chars().count();
            let after = line.chars().nth(x + needle.chars().count());
            if after.is_some_and(|c| "●◐○■◧□◆◈◇×!·?".contains(c)) {
                return (u16::try_from(x).unwrap_or(0), y);
            }
        }
    }
    panic!("web-{o} not found in the grid");
}

#[test]
fn detailed_rows_show_revision_glyphs_and_words() {
    let buf = screen_of(&rolling().state(), 120, 40);
    let (x0, y0) = grid_row(&buf, 0);
    let (_, y3) = grid_row(&buf, 3);
    assert!(row(&buf, y0).contains("■ 7d9c5b8f4 #1  current Ready"), "{}", row(&buf, y0));
    assert!(row(&buf, y3).contains("● 5c4f8d6b9 #2  update  Ready"), "{}", row(&buf, y3));
    // The glyph cell is coloured by revision.
    let g0 = &buf[(x0 + 6, y0)];
    let g3 = &buf[(x0 + 6, y3)];
    assert_eq!(g0.symbol(), "■");
    assert_eq!(g3.symbol(), "●");
    assert_eq!(g0.fg, Theme::colored().rev_current.fg.unwrap_or_default());
    assert_eq!(g3.fg, Theme::colored().rev_update.fg.unwrap_or_default());
}

#[test]
fn partition_line_sits_between_the_held_and_the_updated_ordinals() {
    let buf = screen_of(&paused().state(), 120, 40);
    let (_, y1) = grid_row(&buf, 1);
    let (_, y2) = grid_row(&buf, 2);
    let (_, yp) = find(&buf, "partition=2 ▲").unwrap_or_default();
    assert_eq!((y1 + 1, y1 + 2), (yp, y2), "rule must be the row between web-1 and web-2");
    assert!(row(&buf, yp).contains("──"));
}

#[test]
fn partition_line_moves_with_the_partition() {
    for p in 1..5 {
        let mut f = paused();
        f.partition = p;
        let buf = screen_of(&f.state(), 120, 40);
        let (_, above) = grid_row(&buf, p - 1);
        let (_, rule) = find(&buf, &format!("partition={p} ▲")).unwrap_or_default();
        assert_eq!(rule, above + 1, "partition {p}");
    }
}

#[test]
fn condemned_ordinals_are_marked_below_a_scale_down_rule() {
    let mut f = Fixture::web(3).pods(0..5, REV2, P::Ready);
    f.current = REV2;
    let buf = screen_of(&f.state(), 120, 40);
    let (_, y2) = grid_row(&buf, 2);
    let (_, rule) = find(&buf, "replicas=3 ▼ condemned").unwrap_or_default();
    assert_eq!(rule, y2 + 1);
    for o in [3, 4] {
        let (_, y) = grid_row(&buf, o);
        assert!(y > rule && row(&buf, y).contains("condemned"), "{}", row(&buf, y));
    }
    assert!(!row(&buf, y2).contains("condemned"));
}

#[test]
fn placeholders_for_ordinals_not_created_yet() {
    let f = Fixture::web(5).pods(0..2, REV1, P::Ready);
    let buf = screen_of(&f.state(), 120, 40);
    for o in [2, 3, 4] {
        let (x, y) = grid_row(&buf, o);
        assert!(row(&buf, y).contains("not created"), "{}", row(&buf, y));
        assert_eq!(buf[(x + 6, y)].symbol(), Glyphs::PLACEHOLDER.to_string());
    }
}

#[test]
fn states_have_distinct_glyphs_and_words() {
    let f = Fixture::web(5)
        .pod(0, REV1, P::Pending)
        .pod(1, REV1, P::Running)
        .pod(2, REV3, P::Ready)
        .pod(3, REV2, P::Terminating)
        .pod(4, REV2, P::Failed);
    let buf = screen_of(&f.state(), 120, 40);
    let expect = [("web-0", "□", "Pending"), ("web-1", "◧", "Running"), ("web-2", "◆", "old")];
    let more = [("web-3", "×", "Terminating"), ("web-4", "!", "Failed")];
    for (name, glyph, word) in expect.into_iter().chain(more) {
        let o: i32 = name[4..].parse().unwrap_or(0);
        let (x, y) = grid_row(&buf, o);
        assert_eq!(buf[(x + 6, y)].symbol(), glyph, "{name}");
        assert!(row(&buf, y).contains(word), "{name}: {}", row(&buf, y));
    }
}

#[test]
fn compact_map_wraps_in_groups_of_ten_with_labelled_rows() {
    let st = big(1000).state();
    let screen = Screen::of(&st);
    let area = Rect::new(0, 0, 60, 20);
    let layout = GridLayout::new(&screen.grid, screen.selected, area);
    // 60 columns minus a 5-column gutter: 55 → five groups of ten.
    assert_eq!(layout.mode, GridMode::Compact { cols: 50 });
    assert_eq!(compact_cols(54), 50);
    assert_eq!(compact_cols(53), 40);
    let spans: Vec<_> = layout
        .rows
        .iter()
        .filter_map(|r| match r {
            GridRow::Span { from, len } => Some((*from, *len)),
            _ => None,
        })
        .collect();
    for w in spans.windows(2) {
        let (a, b) = (w[0], w[1]);
        assert!(b.0 >= a.0 + i32::from(a.1), "rows overlap: {a:?} {b:?}");
    }
    // Every row but a segment's last is full.
    assert!(spans.iter().filter(|s| s.1 == 50).count() >= spans.len() - 2);
    // Group gaps: ordinal 10 of a row sits one column after ordinal 9 plus a space.
    assert_eq!(layout.column_of(9) + 2, layout.column_of(10));
}

#[test]
fn compact_map_shows_the_partition_rule_and_highlights_the_selection() {
    let st = big(1000).state();
    let buf = screen_of(&st, 200, 50);
    let (_, rule) = find(&buf, "partition=600 ▲").unwrap_or_default();
    // The row above the rule holds ordinals before 600, the row below starts at 600.
    assert!(row(&buf, rule + 1).contains("600 ●●●!"), "{}", row(&buf, rule + 1));
    // Selected ordinal 640: the pointer marks its row, its cell is reversed.
    let (px, py) = find(&buf, "▶600 ").unwrap_or_default();
    let reversed: Vec<(u16, u16)> = (0..buf.area.width)
        .flat_map(|x| (0..buf.area.height).map(move |y| (x, y)))
        .filter(|p| buf[*p].modifier.contains(Modifier::REVERSED))
        .collect();
    assert_eq!(reversed.len(), 1, "exactly one highlighted cell: {reversed:?}");
    assert_eq!(reversed[0].1, py);
    // Gutter (pointer, three digits, space), then 40 ordinals: four groups of ten and gaps.
    assert_eq!(reversed[0].0, px + 5 + 40 + 4);
    assert_eq!(buf[reversed[0]].symbol(), "●");
}

#[test]
fn hit_map_round_trips_every_visible_ordinal() {
    let st = big(1000).state();
    let (term, hits) = render_with(&st, 200, 50, &Theme::colored());
    let buf = term.backend().buffer();
    let screen = Screen::of(&st);
    let mut checked = 0;
    for region in &hits.regions {
        let HitRegion::Grid { area, .. } = region else { continue };
        for x in area.x..area.x + area.width {
            let Some(Hit::Ordinal(o)) = hits.hit(x, area.y) else {
                panic!("no ordinal at ({x}, {})", area.y);
            };
            let cell = screen.grid.cell(o).copied();
            let glyph = cell.map(|c| Glyphs::cell(c.rev, c.state).to_string());
            assert_eq!(Some(buf[(x, area.y)].symbol().to_string()), glyph, "ordinal {o}");
            checked += 1;
        }
    }
    assert!(checked > 500, "only {checked} cells checked");
    assert!(hits.grid_columns >= 10 && hits.grid_columns % 10 == 0);
    // A click on a rule or a gutter is nothing.
    let (_, rule) = find(buf, "partition=600 ▲").unwrap_or_default();
    assert_eq!(hits.hit(20, rule), None);
}

#[test]
fn hit_map_in_detailed_rows_maps_rows_to_ordinals() {
    let st = paused().state();
    let (term, hits) = render_with(&st, 120, 40, &Theme::colored());
    let buf = term.backend().buffer();
    for o in 0..5 {
        let (x, y) = grid_row(buf, o);
        assert_eq!(hits.hit(x, y), Some(Hit::Ordinal(o)));
    }
    let (x, rule) = find(buf, "partition=2 ▲").unwrap_or_default();
    assert_eq!(hits.hit(x, rule), None);
    assert_eq!(hits.grid_columns, 1);
    assert_eq!(ststui::ui::hit_map(&st, Rect::new(0, 0, 120, 40)), hits);
}

#[test]
fn revision_rows_are_clickable() {
    let st = rolling().state();
    let (term, hits) = render_with(&st, 200, 60, &Theme::colored());
    let buf = term.backend().buffer();
    let (x, y) = find(buf, "nginx:1.25 current").unwrap_or_default();
    assert_eq!(hits.hit(x, y), Some(Hit::Revision(1)));
    let (x, y) = find(buf, "nginx:1.26 update").unwrap_or_default();
    assert_eq!(hits.hit(x, y), Some(Hit::Revision(2)));
}

#[test]
fn header_names_strategy_policy_counts_revisions_and_mode() {
    let buf = screen_of(&paused().state(), 200, 60);
    let top = format!("{}{}", row(&buf, 0), row(&buf, 1));
    for needle in [
        "default/web",
        "RollingUpdate partition=2",
        "OrderedReady",
        "PAUSED",
        "×1",
        "desired 5 current 5 updated 3 ready 5 available 5",
        "7d9c5b8f4 #1 → 5c4f8d6b9 #2",
        "gen 3/3",
    ] {
        assert!(top.contains(needle), "{needle:?} not in header:\n{top}");
    }
    let buf = screen_of(&on_delete().state(), 200, 60);
    assert!(row(&buf, 0).contains("│ OnDelete │ OrderedReady"));
}

/// On a narrow terminal the header takes more rows instead of cutting words off: everything
/// the wide header says is still there, and the panes start below it.
#[test]
fn a_narrow_header_wraps_between_segments() {
    let st = paused().state();
    let screen = Screen::of(&st);
    let header = screen.header.as_ref().expect("a header");
    assert_eq!(ststui::app::view::header::height(Some(header), 200), 2);
    let rows = ststui::app::view::header::height(Some(header), 60);
    assert!(rows > 2, "60 columns should need more than two header rows");
    let buf = screen_of(&st, 60, 24);
    let top: Vec<String> = (0..rows).map(|y| row(&buf, y)).collect();
    for needle in [
        "default/web",
        "RollingUpdate partition=2",
        "OrderedReady",
        "PAUSED",
        "desired 5 current 5 updated 3 ready 5 available 5",
        "7d9c5b8f4 #1 → 5c4f8d6b9 #2",
        "gen 3/3",
    ] {
        assert!(top.iter().any(|r| r.contains(needle)), "{needle:?} not whole in:\n{top:#?}");
    }
    assert!(row(&buf, rows).starts_with('╭'), "a pane starts right below the header");
}

/// A set switched to RollingUpdate by type alone has no rollingUpdate: mid-rollout the pane
/// warns about the churn it allows and names the key that sets a partition.
#[test]
fn an_unset_rolling_update_is_warned_about() {
    let mut st = rolling().state();
    let warning = "rollingUpdate is unset";
    assert!(!text(&screen_of(&st, 200, 60)).contains(warning));
    let mut set = st.set().cloned().expect("a set");
    if let Some(u) = set.spec.update_strategy.as_mut() {
        u.rolling_update = None;
    }
    let applied = ststui::backend::BackendEvent::Applied(ststui::backend::Object::Set(
        std::sync::Arc::new(set),
    ));
    ststui::app::update(&mut st, ststui::app::Msg::Backend(applied));
    let buf = screen_of(&st, 200, 60);
    let t = text(&buf);
    assert!(t.contains(warning), "{t}");
    assert!(t.contains("press p to"), "{t}");
    assert!(row(&buf, 0).contains("RollingUpdate rollingUpdate unset"), "{}", row(&buf, 0));
}

/// The selected ordinal's detail says where it stands in the rollout and what the next sync
/// does with it, right after its revision.
#[test]
fn detail_says_the_rollout_role_and_the_next_step() {
    let row_of = |st: &ststui::app::AppState, label: &str| {
        let screen = Screen::of(st);
        let d = screen.detail().expect("a selected ordinal");
        d.rows.iter().position(|(l, _)| *l == label).map(|i| (i, d.rows[i].1.clone()))
    };
    let rolling = rolling().state();
    assert_eq!(
        row_of(&rolling, "rollout"),
        Some((2, "open: the rolling update replaces it".to_string()))
    );
    let next = row_of(&rolling, "next").map(|(_, v)| v).unwrap_or_default();
    assert!(next.starts_with("delete web-2 for update"), "{next}");
    let paused = paused().state();
    let held = row_of(&paused, "rollout").map(|(_, v)| v).unwrap_or_default();
    assert_eq!(held, "held by partition 2: stays on the revision it has");
    assert_eq!(row_of(&paused, "next"), None, "the sync does nothing with a held pod");
    let od = on_delete().state();
    let role = row_of(&od, "rollout").map(|(_, v)| v).unwrap_or_default();
    assert_eq!(role, "OnDelete: updated only when it is deleted");
}

#[test]
fn controller_pane_says_next_and_waiting_in_words() {
    let t = text(&screen_of(&rolling().state(), 200, 60));
    assert!(t.contains("next: delete web-2 for update (web-7d9c5b8f4 → web-5c4f8d6b9)"));
    let t = text(&screen_of(&paused().state(), 200, 60));
    assert!(t.contains("held: partition 2 holds web-0..web-1 — press [ to lower it"), "{t}");
    let t = text(&screen_of(&forced_rollback().state(), 200, 60));
    assert!(t.contains("hint: web-4 is on web-6b8fd7c45, not the update revision"), "{t}");
    assert!(t.contains("press ctrl-d"), "{t}");
    let st = forced_rollback().state();
    let lines = Screen::of(&st).controller;
    let hint = lines.iter().find(|l| l.kind == ststui::app::view::LineKind::Hint);
    assert!(hint.is_some_and(|h| h.text.contains("kubernetes#67250")), "{lines:?}");
}

#[test]
fn raised_partition_warns_that_updated_pods_are_not_reverted() {
    let mut f = paused();
    f.partition = 4;
    let t = text(&screen_of(&f.state(), 200, 60));
    assert!(t.contains("warning: 2 pods from web-2 below the partition already run"), "{t}");
}

#[test]
fn timeline_lists_the_newest_entries_last_with_times() {
    let buf = screen_of(&rolling().state(), 200, 60);
    let (_, first) = find(&buf, "image web nginx:1.26").unwrap_or_default();
    let (_, last) = find(&buf, "web-3 ready").unwrap_or_default();
    assert!(last > first);
    assert!(row(&buf, last).contains("1m08s kubelet"));
    assert!(row(&buf, first).contains("you"));
}

#[test]
fn footer_is_derived_from_the_keymap() {
    let st = rolling().state();
    let buf = screen_of(&st, 200, 60);
    let footer = row(&buf, 58);
    for b in BINDINGS.iter().filter(|b| b.context == Context::Normal && b.when.holds(&st.caps)) {
        if let (Some(label), Some(key)) = (b.footer, b.keys.first()) {
            assert!(footer.contains(&format!("{} {label}", key.label())), "{label}: {footer}");
        }
    }
    let mut st = st;
    st.modal = Modal::Help { page: 0 };
    let buf = screen_of(&st, 200, 60);
    assert!(row(&buf, 58).contains("Esc close"), "{}", row(&buf, 58));
}

/// At 80 columns the hints do not all fit: whole hints are left out, never cut, and help and
/// quit always stay.
#[test]
fn a_narrow_footer_drops_whole_hints_and_keeps_help_and_quit() {
    let st = rolling().state();
    let footer = row(&screen_of(&st, 80, 24), 22);
    assert!(footer.trim_end().ends_with("? help  q quit"), "{footer:?}");
    assert!(footer.contains("[ partition−"), "{footer:?}");
    let labels: Vec<&str> =
        BINDINGS.iter().filter(|b| b.context == Context::Normal).filter_map(|b| b.footer).collect();
    let shown = labels.iter().filter(|l| footer.contains(&format!(" {l} "))).count();
    assert!(shown < labels.len(), "80 columns cannot hold every hint: {footer:?}");
    // Every word on the row belongs to a whole hint.
    for (key, label) in
        ststui::app::keymap::footer(Context::Normal, &ststui::backend::Capabilities::simulator())
    {
        let whole = format!("{key} {label}");
        let partial = label.get(..label.len().saturating_sub(1)).unwrap_or_default();
        assert!(
            footer.contains(&whole) || !footer.contains(&format!("{key} {partial}")),
            "{whole:?} is cut: {footer:?}"
        );
    }
}

#[test]
fn help_lists_every_binding() {
    let mut st = rolling().state();
    st.modal = Modal::Help { page: 0 };
    let t = text(&screen_of(&st, 200, 60));
    for b in BINDINGS.iter().filter(|b| b.when.holds(&st.caps)) {
        // Long texts wrap (see `help_wraps_long_texts_on_narrow_terminals` for their order).
        for word in b.help.split_whitespace() {
            assert!(t.contains(word), "help text {:?}: {word:?} missing", b.help);
        }
        for k in b.keys {
            assert!(t.contains(&k.label()), "key {:?} missing", k.label());
        }
    }
}

/// On a small terminal the help takes pages instead of cutting text off: every binding's keys
/// and whole help text are on one of the pages, and the title says which page and how to turn.
#[test]
fn help_pages_on_small_terminals_lose_nothing() {
    let mut st = rolling().state();
    let pages = ststui::app::view::help::layout(
        Rect::new(0, 0, 80, 24),
        &ststui::backend::Capabilities::simulator(),
    )
    .pages
    .len();
    assert!(pages > 1, "80×24 should need more than one page");
    let mut all = String::new();
    for page in 0..pages {
        st.modal = Modal::Help { page };
        let t = text(&screen_of(&st, 80, 24));
        assert!(t.contains(&format!("page {} of {pages}", page + 1)), "{t}");
        all.push_str(&t);
    }
    for b in BINDINGS.iter().filter(|b| b.when.holds(&st.caps)) {
        assert!(all.contains(b.help), "help text {:?} cut or missing at 80×24", b.help);
        let keys = b.keys.iter().map(|k| k.label()).collect::<Vec<_>>().join(" ");
        assert!(all.contains(&format!("{keys} {}", b.help)), "{keys} {} missing", b.help);
    }
}

/// Narrower still, help texts wrap: the pieces of each text, in order, make the whole text.
#[test]
fn help_wraps_long_texts_on_narrow_terminals() {
    use ststui::app::view::help::{HelpLine, layout};
    let help = layout(Rect::new(0, 0, 34, 12), &ststui::backend::Capabilities::simulator());
    let mut texts: Vec<String> = Vec::new();
    for line in help.pages.iter().flatten().flatten() {
        match line {
            HelpLine::Binding { keys, text } if keys.is_empty() => {
                let last = texts.last_mut().expect("a continuation follows a binding");
                last.push(' ');
                last.push_str(text);
            }
            HelpLine::Binding { text, .. } => texts.push(text.clone()),
            HelpLine::Heading(_) => {}
        }
    }
    let caps = ststui::backend::Capabilities::simulator();
    let on_sim = BINDINGS.iter().filter(|b| b.when.holds(&caps));
    let legend = ststui::app::view::glyphs::Glyphs::legend();
    let wanted: Vec<&str> = on_sim.map(|b| b.help).chain(legend.iter().map(|e| e.long)).collect();
    let mut got: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut want = wanted.clone();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
    assert!(
        help.pages.iter().flatten().all(|col| col.len() <= 10),
        "a column is taller than the overlay's inside"
    );
    assert!(
        help.pages.iter().flatten().all(|col| !matches!(col.last(), Some(HelpLine::Heading(_)))),
        "a column ends on a heading"
    );
}

#[test]
fn status_line_shows_refusals_and_the_prompt() {
    let mut st = rolling().state();
    st.status = Some(Status {
        text: "the partition is already 0".into(),
        kind: StatusKind::Refusal,
        ticks_left: 3,
    });
    let buf = screen_of(&st, 120, 40);
    assert!(row(&buf, 39).contains("can't: the partition is already 0"));
    let set = ststui::backend::ObjRef::new(NS, SET);
    let kind = ststui::app::state::PromptKind::Partition { set, current: 0 };
    let mut prompt = ststui::app::state::Prompt::new(kind, "3");
    prompt.error = Some("too big".into());
    st.modal = Modal::Prompt(prompt);
    let buf = screen_of(&st, 120, 40);
    assert!(row(&buf, 39).contains("partition of default/web (now 0): 3█  too big"));
}

#[test]
fn every_size_renders_without_panicking() {
    let synced_empty = ststui::app::AppState { synced: true, ..Default::default() };
    let states = [
        rolling().state(),
        big(1000).state(),
        Fixture::web(0).state(),
        ststui::app::AppState::default(),
        synced_empty,
    ];
    for st in &states {
        for (w, h) in [(0, 0), (1, 1), (10, 3), (20, 5), (40, 10), (79, 23), (80, 24), (300, 90)] {
            let (term, hits) = render_with(st, w, h, &Theme::colored());
            assert_eq!(term.backend().buffer().area, Rect::new(0, 0, w, h));
            for r in &hits.regions {
                if let HitRegion::Grid { area, .. } = r {
                    assert!(area.right() <= w && area.bottom() <= h, "{area:?} outside {w}x{h}");
                }
            }
        }
    }
}

#[test]
fn without_a_set_the_screen_says_why() {
    let t = text(&screen_of(&ststui::app::AppState::default(), 80, 24));
    assert!(t.contains("loading: waiting for the backend's initial listing"), "{t}");
    let st = ststui::app::AppState { synced: true, ..Default::default() };
    let t = text(&screen_of(&st, 80, 24));
    assert!(t.contains("no StatefulSet yet"), "{t}");
}

#[test]
fn at_80x24_the_essential_panes_survive() {
    let t = text(&screen_of(&big(1000).state(), 80, 24));
    assert!(t.contains("Controller") && t.contains("Ordinals") && t.contains("web-640"));
    let t = text(&screen_of(&rolling().state(), 80, 24));
    assert!(t.contains("Timeline") && t.contains("next: delete web-2"));
}

#[test]
fn mode_survives_a_narrow_header() {
    let buf = screen_of(&paused().state(), 60, 24);
    assert!(row(&buf, 0).contains("default/web │ ❚❚ PAUSED ×1"), "{}", row(&buf, 0));
}

/// A rollout plan on the set (run from any pipeline or console) shows in the header, live:
/// its step and phase with the bake's countdown, or why it halted; a finished one does not.
#[test]
fn the_header_shows_a_plan_recorded_on_the_set() {
    use ststui::backend::Object;
    use ststui::plan::record::{PLAN, Phase, Record, stamp};
    let mut st = rolling().state();
    let key = ststui::backend::ObjRef::new("default", "web");
    let now = st.now.unwrap();
    let record = Record {
        steps: "1,50%,100%".into(),
        bake_seconds: 120,
        checks: Vec::new(),
        on_failure: "hold".into(),
        revision: "web-5c4f8d6b9".into(),
        template: String::new(),
        step: 2,
        of: 3,
        phase: Phase::Baking,
        since: stamp(now.checked_sub(k8s_openapi::jiff::SignedDuration::from_secs(48)).unwrap()),
        partition: 3,
        by: "ana".into(),
        started: stamp(now),
        reason: None,
        began_at: None,
        from: String::new(),
        gates: Default::default(),
        target: None,
        gate: None,
    };
    let with = |st: &mut ststui::app::AppState, r: &Record| {
        let mut set = st.mirror.set(&key).unwrap().clone();
        set.metadata.annotations =
            Some([(PLAN.to_string(), serde_json::to_string(r).unwrap())].into());
        st.mirror.apply(Object::Set(std::sync::Arc::new(set)));
    };
    with(&mut st, &record);
    let top = row(&screen_of(&st, 200, 60), 0);
    assert!(top.contains("▶ plan 2/3 (50%): baking, 1m12s left"), "{top}");
    // Nobody holds its lease: the header says nothing drives it (no false "live" countdown).
    assert!(top.contains("no runner"), "{top}");
    // A runner whose lease ran out: named, and said to be gone.
    let lease = ststui::plan::record::Lease {
        holder: "ana".into(),
        host: "build-7".into(),
        pid: 4242,
        expires: stamp(now.checked_sub(k8s_openapi::jiff::SignedDuration::from_secs(5)).unwrap()),
    };
    let mut set = st.mirror.set(&key).unwrap().clone();
    set.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert(ststui::plan::record::LEASE.into(), serde_json::to_string(&lease).unwrap());
    st.mirror.apply(Object::Set(std::sync::Arc::new(set.clone())));
    let top = screen_of(&st, 240, 60);
    let top = (0..3).map(|y| row(&top, y)).collect::<Vec<_>>().join(" ");
    assert!(top.contains("no runner (its lease ran out at"), "{top}");
    assert!(top.contains("ana on build-7, pid 4242"), "{top}");
    // A live runner is named.
    let live = ststui::plan::record::Lease {
        expires: stamp(now.checked_add(k8s_openapi::jiff::SignedDuration::from_secs(25)).unwrap()),
        ..lease
    };
    set.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert(ststui::plan::record::LEASE.into(), serde_json::to_string(&live).unwrap());
    st.mirror.apply(Object::Set(std::sync::Arc::new(set)));
    let top = row(&screen_of(&st, 240, 60), 0);
    assert!(top.contains("· ana on build-7"), "{top}");
    let halted = Record {
        phase: Phase::Halted,
        reason: Some("check `./c` exited 1".into()),
        ..record.clone()
    };
    with(&mut st, &halted);
    let top = row(&screen_of(&st, 200, 60), 0);
    assert!(top.contains("▶ plan halted at 2/3 (50%): check `./c` exited 1"), "{top}");
    with(&mut st, &Record { phase: Phase::Done, ..record });
    assert!(!row(&screen_of(&st, 200, 60), 0).contains("plan"));
}
