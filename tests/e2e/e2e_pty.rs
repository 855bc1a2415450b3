//! End to end: the real `ststui sim` binary in a pseudo-terminal (100×30), its screen parsed by a
//! terminal emulator (vt100). Presses pause, partition down, step and quit, checks the screen
//! after each, and that the terminal was restored on the way out (main screen, cursor shown,
//! mouse reporting off, canonical mode and echo back on).
//!
//! Never asserts on wall-clock time: every wait polls the screen up to a generous deadline.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]
#![cfg(unix)]

use crate::support::pty_support;

use std::time::{Duration, Instant};

use portable_pty::PtySize;
use pty_support::*;

#[test]
fn pause_step_partition_down_and_quit_restore_the_terminal() {
    let log = std::env::temp_dir().join(format!("ststui-e2e-{}.log", std::process::id()));
    let log_arg = log.to_string_lossy().to_string();
    let mut c = Console::start(&["sim", "--log-file", &log_arg]);

    // The demo: web, 5 replicas, a new revision held by partition=5.
    c.wait_for("the demo set", |s| {
        s.contains("default/web") && s.contains("partition=5") && s.contains("web-4")
    });
    // The demo's own commands are in the timeline (how the set got here), its checks are not.
    c.wait_for("the demo's commands", |s| {
        s.lines().any(|l| l.contains("script") && l.contains("image web nginx:1.26"))
    });
    assert!(!c.screen().contains("script  expect"), "{}", c.screen());
    assert!(c.parser.screen().alternate_screen(), "the console runs on the alternate screen");
    assert!(c.parser.screen().hide_cursor(), "the cursor is hidden while the console runs");
    #[cfg(target_os = "linux")]
    {
        let flags = c.local_flags().unwrap_or_else(|| panic!("no termios"));
        assert_eq!(flags & (ICANON | ECHO), 0, "raw mode while the console runs");
    }

    // Pause: the header says so.
    c.press(" ");
    c.wait_for("paused in the header", |s| header(s).to_lowercase().contains("paused"));

    // Partition down: the set is patched, the header shows the new partition.
    c.press("[");
    c.wait_for("partition=4", |s| header(s).contains("partition=4"));

    // Paused: the controller does nothing on its own; the advisor says what the next sync does.
    c.wait_for("the advisor's next action", |s| s.contains("next: delete web-4 for update"));
    assert!(!c.screen().contains("delete-pod web-4"), "paused: no sync ran yet");

    // Step: exactly that sync runs: web-4 is deleted for the update.
    c.press("n");
    c.wait_for("the step in the timeline", |s| {
        s.lines().any(|l| l.contains("you") && l.contains("step"))
    });
    c.wait_for("web-4 deleted by the step", |s| s.contains("delete-pod web-4"));

    // A refusal: step again after resuming says why instead of doing nothing.
    c.press(" ");
    c.wait_for("live again", |s| header(s).to_lowercase().contains("live"));
    c.press("n");
    c.wait_for("the step refusal", |s| s.contains("pause first"));

    c.press("q");
    let status = c.wait_exit();
    assert!(status.success(), "exit status {status:?}; screen:\n{}", c.screen());

    let screen = c.parser.screen();
    assert!(!screen.alternate_screen(), "left the alternate screen");
    assert!(!screen.hide_cursor(), "the cursor is shown again");
    assert_eq!(screen.mouse_protocol_mode(), vt100::MouseProtocolMode::None, "mouse reporting off");
    let raw = String::from_utf8_lossy(&c.raw);
    let last_enter = raw.rfind("\x1b[?1049h").unwrap_or_else(|| panic!("never entered"));
    let last_leave = raw.rfind("\x1b[?1049l").unwrap_or_else(|| panic!("never left"));
    assert!(last_leave > last_enter, "the alternate screen is left after it was entered");
    #[cfg(target_os = "linux")]
    {
        let flags = c.local_flags().unwrap_or_else(|| panic!("no termios"));
        assert_eq!(flags & (ICANON | ECHO), ICANON | ECHO, "raw mode off after quitting");
    }
    let _ = std::fs::remove_file(log);
}

#[test]
fn a_mouse_click_selects_an_ordinal_and_a_resize_redraws() {
    let log = std::env::temp_dir().join(format!("ststui-e2e-mouse-{}.log", std::process::id()));
    let log_arg = log.to_string_lossy().to_string();
    let mut c = Console::start(&["sim", "--log-file", &log_arg]);
    // The whole grid (a frame arrives in pieces: wait for its last row too).
    c.wait_for("the grid", |s| {
        s.lines().any(|l| l.contains("▶") && l.contains("web-0"))
            && s.lines().any(|l| l.contains("web-3 ■"))
    });

    // Click on web-3's row in the grid (SGR mouse report: 1-based column;row, press + release).
    let screen = c.screen();
    let (row, col) = screen
        .lines()
        .enumerate()
        .find_map(|(r, l)| {
            let byte = l.find("web-3")?;
            Some((r, l[..byte].chars().count()))
        })
        .unwrap_or_else(|| panic!("web-3 not on screen:\n{screen}"));
    c.press(&format!("\x1b[<0;{};{}M\x1b[<0;{};{}m", col + 1, row + 1, col + 1, row + 1));
    c.wait_for("web-3 selected", |s| s.lines().any(|l| l.contains("▶") && l.contains("web-3")));

    // Resize to 80×24: the console redraws to the new width (a pane border in the last column).
    c.pump(Duration::from_millis(100));
    c.parser.screen_mut().set_size(nz(24), nz(80));
    c.master
        .resize(PtySize { rows: 24, cols: 80, pixel_width: 0, pixel_height: 0 })
        .unwrap_or_else(|e| panic!("resize: {e}"));
    let start = Instant::now();
    loop {
        c.pump(Duration::from_millis(50));
        let s = c.parser.screen();
        let border = (0..24)
            .any(|r| s.cell(r, 79).is_some_and(|cell| matches!(cell.contents(), "╮" | "╯" | "│")));
        if border && c.screen().contains("web-3") {
            break;
        }
        assert!(start.elapsed() < DEADLINE, "no redraw at 80×24:\n{}", c.screen());
    }
    c.press("q");
    assert!(c.wait_exit().success());
    let _ = std::fs::remove_file(log);
}

/// SIGTERM, SIGQUIT and SIGHUP (sent by `kill`, a supervisor or a closing terminal) each end the
/// console with the terminal restored: alternate screen left, cursor shown, raw mode off.
#[test]
fn termination_signals_restore_the_terminal() {
    for signal in ["TERM", "QUIT", "HUP"] {
        let log =
            std::env::temp_dir().join(format!("ststui-e2e-sig{signal}-{}.log", std::process::id()));
        let log_arg = log.to_string_lossy().to_string();
        let mut c = Console::start(&["sim", "--log-file", &log_arg]);
        c.wait_for("the console", |s| s.contains("default/web"));
        let pid = c.child.process_id().unwrap_or_else(|| panic!("no pid"));
        let killed = std::process::Command::new("kill")
            .args([format!("-{signal}"), pid.to_string()])
            .status()
            .is_ok_and(|s| s.success());
        assert!(killed, "could not send SIG{signal}");
        let status = c.wait_exit();
        assert!(!status.success(), "SIG{signal} ends the console with a failure status");
        let screen = c.parser.screen();
        assert!(
            !screen.alternate_screen() && !screen.hide_cursor(),
            "terminal restored after SIG{signal}"
        );
        #[cfg(target_os = "linux")]
        {
            let flags = c.local_flags().unwrap_or_else(|| panic!("no termios"));
            assert_eq!(flags & (ICANON | ECHO), ICANON | ECHO, "raw mode off after SIG{signal}");
        }
        let _ = std::fs::remove_file(log);
    }
}

#[cfg(target_os = "linux")]
use crate::support::runner::process_state;

/// ctrl-z (and SIGTSTP from outside) gives the terminal back before the process stops — main
/// screen, cursor shown, mouse capture and raw mode off — and `fg` (SIGCONT) brings the console
/// back whole.
#[cfg(target_os = "linux")]
#[test]
fn job_control_stop_gives_the_terminal_back_and_continue_redraws() {
    let log = std::env::temp_dir().join(format!("ststui-e2e-tstp-{}.log", std::process::id()));
    let log_arg = log.to_string_lossy().to_string();
    let mut c = Console::start(&["sim", "--log-file", &log_arg]);
    c.wait_for("the console", |s| s.contains("default/web"));
    let pid = c.child.process_id().unwrap_or_else(|| panic!("no pid"));
    for how in ["ctrl-z", "kill -TSTP"] {
        match how {
            "ctrl-z" => c.press("\x1a"),
            _ => {
                let sent =
                    std::process::Command::new("kill").args(["-TSTP", &pid.to_string()]).status();
                assert!(sent.is_ok_and(|s| s.success()), "could not send SIGTSTP");
            }
        }
        let start = Instant::now();
        while process_state(pid) != Some('T') {
            c.pump(Duration::from_millis(50));
            assert!(start.elapsed() < DEADLINE, "{how}: the process did not stop");
        }
        // What it wrote before it stopped may still be on its way through the pty.
        let start = Instant::now();
        loop {
            c.pump(Duration::from_millis(50));
            let s = c.parser.screen();
            if (!s.alternate_screen() && !s.hide_cursor()) || start.elapsed() > DEADLINE {
                break;
            }
        }
        let screen = c.parser.screen();
        assert!(!screen.alternate_screen() && !screen.hide_cursor(), "{how}: terminal given back");
        assert_eq!(
            screen.mouse_protocol_mode(),
            vt100::MouseProtocolMode::None,
            "{how}: mouse off"
        );
        let flags = c.local_flags().unwrap_or_else(|| panic!("no termios"));
        assert_eq!(flags & (ICANON | ECHO), ICANON | ECHO, "{how}: raw mode off while stopped");
        let cont = std::process::Command::new("kill").args(["-CONT", &pid.to_string()]).status();
        assert!(cont.is_ok_and(|s| s.success()));
        c.wait_for("the console back", |s| s.contains("default/web") && s.contains("Ordinals"));
        assert!(c.parser.screen().alternate_screen(), "{how}: the console takes the screen again");
    }
    c.press("q");
    assert!(c.wait_exit().success());
    let _ = std::fs::remove_file(log);
}

/// The panic hook leaves the alternate screen, shows the cursor and turns raw mode off before
/// the panic message is printed. `STSTUI_TEST_PANIC` is a debug-build-only hook that panics
/// once the first frame is drawn.
#[test]
fn a_panic_restores_the_terminal() {
    let log = std::env::temp_dir().join(format!("ststui-e2e-panic-{}.log", std::process::id()));
    let log_arg = log.to_string_lossy().to_string();
    let mut c =
        Console::start_with_env(&["sim", "--log-file", &log_arg], &[("STSTUI_TEST_PANIC", "1")]);
    let status = c.wait_exit();
    assert!(!status.success(), "a panic ends the console with a failure status");
    let raw = String::from_utf8_lossy(&c.raw).to_string();
    assert!(raw.contains("\x1b[?1049h"), "the console had entered the alternate screen");
    let screen = c.parser.screen();
    assert!(!screen.alternate_screen() && !screen.hide_cursor(), "terminal restored");
    assert!(
        c.screen().contains("STSTUI_TEST_PANIC"),
        "the panic message is readable:\n{}",
        c.screen()
    );
    #[cfg(target_os = "linux")]
    {
        let flags = c.local_flags().unwrap_or_else(|| panic!("no termios"));
        assert_eq!(flags & (ICANON | ECHO), ICANON | ECHO, "raw mode off after a panic");
    }
    let _ = std::fs::remove_file(log);
}

#[test]
fn a_cluster_console_without_a_kubeconfig_says_what_to_fix_and_leaves_the_terminal_alone() {
    let mut c = Console::start(&["--kubeconfig", "/nonexistent/kubeconfig", "web"]);
    let status = c.wait_exit();
    assert_eq!(status.exit_code(), 2);
    assert!(
        c.screen().contains("cannot read the kubeconfig /nonexistent/kubeconfig"),
        "{}",
        c.screen()
    );
    assert!(!String::from_utf8_lossy(&c.raw).contains("\x1b[?1049h"), "never entered the UI");
}

/// TERM=dumb cannot show a full-screen console: refused with a message, exit 2, the terminal
/// left alone.
#[test]
fn term_dumb_is_refused_with_a_message() {
    let mut c = Console::start_with_env(&["sim"], &[("TERM", "dumb")]);
    let status = c.wait_exit();
    assert_eq!(status.exit_code(), 2);
    let screen = c.screen();
    assert!(screen.contains("TERM=dumb"), "{screen}");
    assert!(!c.parser.screen().alternate_screen(), "the alternate screen was entered");
    #[cfg(target_os = "linux")]
    {
        let flags = c.local_flags().unwrap_or_else(|| panic!("no termios"));
        assert_eq!(flags & ICANON, ICANON, "the terminal was left raw");
    }
}

/// A rollout plan run by the console itself, as an operator does it in the demo: `P`, the
/// steps with a manual gate, the header's progress, `A` to pass the gate, done.
#[test]
fn a_plan_run_from_the_console_stops_at_its_gate_until_approved() {
    let log = std::env::temp_dir().join(format!("ststui-e2e-plan-{}.log", std::process::id()));
    let log_arg = log.to_string_lossy().to_string();
    let mut c = Console::start(&["sim", "--speed", "20", "--log-file", &log_arg]);
    c.wait_for("the demo set", |s| top(s).contains("partition=5") && s.contains("web-4"));
    c.press("P");
    c.wait_for("the plan prompt", |s| s.contains("plan for default/web"));
    c.press("\x15"); // ctrl-u clears the prefilled plan
    c.press("1,pause,100% bake=2s\r");
    // The steps it will take, asked first: nothing is written before the yes.
    // (Waited for whole: a frame may be read half drawn.)
    c.wait_for("the confirmation with its steps", |s| {
        s.contains("Run the plan 1,pause,100% (bake 2s)")
            && s.contains("step 1: 1 → 1 of 5 updated (partition 5 → 4)")
    });
    let s = c.screen();
    assert!(top(&s).contains("partition=5"), "nothing written before the yes:\n{s}");
    c.press("y");
    c.wait_for("at the gate", |s| top(s).contains("waiting for approval"));
    let s = c.screen();
    assert!(top(&s).contains("partition=4"), "nothing opens past the gate:\n{s}");
    c.press("A");
    c.wait_for("the last step", |s| top(s).contains("partition=0"));
    c.wait_for("done", |s| s.contains("plan web done"));
    assert!(!top(&c.screen()).contains("▶ plan"), "a finished plan leaves the header");
    c.press("q");
    assert!(c.wait_exit().success());
    let _ = std::fs::remove_file(log);
}

/// The header's rows: every row above the first pane (a long plan line wraps it).
fn top(screen: &str) -> String {
    screen.lines().take_while(|l| !l.starts_with('╭')).collect::<Vec<_>>().join(" ")
}
