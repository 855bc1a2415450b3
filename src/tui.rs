//! The terminal: entering and leaving the console's screen mode (raw mode, alternate screen,
//! mouse capture, hidden cursor), restoring it on every way out (quit, error, panic,
//! SIGINT/SIGTERM/SIGHUP/SIGQUIT), and the two threads that turn the outside world into [`Msg`]s — the
//! crossterm input reader and the signal listener.
//!
//! Owns the terminal's modes and those threads. Must not touch application state: everything it
//! learns goes into the one channel the event loop drains.

use crossbeam_channel::Sender;
use std::io::{self, Stdout, Write, stdout};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event, KeyEventKind};
use crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use signal_hook::consts::signal::{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGTSTP};
use signal_hook::iterator::Signals;
use ststui::app::Msg;

/// The console's terminal type.
pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Whether the terminal is in the console's mode (so restoring twice is harmless).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Restores the terminal when dropped: the normal way out, and the way out through `?`.
pub struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Enters the console's terminal mode and installs the panic hook that leaves it. Hold the
/// returned [`Guard`] for as long as the console runs.
pub fn init() -> io::Result<(Term, Guard)> {
    install_panic_hook();
    ACTIVE.store(true, Ordering::SeqCst);
    let guard = Guard;
    enable_raw_mode()?;
    // Clear with a plain escape: ratatui's `Terminal::clear` asks the terminal for the cursor
    // position, a round trip some terminals (and test harnesses) never answer.
    execute!(
        stdout(),
        EnterAlternateScreen,
        EnableMouseCapture,
        cursor::Hide,
        Clear(ClearType::All)
    )?;
    let terminal = Terminal::new(CrosstermBackend::new(stdout()))?;
    Ok((terminal, guard))
}

/// Leaves the console's terminal mode: mouse capture off, main screen back, cursor shown, raw
/// mode off. Idempotent; every step is attempted even if one fails.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = stdout();
    let _ = execute!(out, DisableMouseCapture, LeaveAlternateScreen, cursor::Show);
    let _ = disable_raw_mode();
    let _ = out.flush();
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// Starts the input thread: every terminal event becomes a [`Msg`] (key releases dropped). It
/// blocks in `event::read` (no polling); it ends when the channel closes or input fails.
pub fn spawn_input(tx: Sender<Msg>) -> io::Result<()> {
    std::thread::Builder::new().name("ststui-input".into()).spawn(move || {
        loop {
            let msg = match event::read() {
                Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => Msg::Key(k),
                Ok(Event::Mouse(m)) => Msg::Mouse(m),
                Ok(Event::Resize(w, h)) => Msg::Resize(w, h),
                Ok(_) => continue,
                Err(e) => {
                    tracing::error!("terminal input failed: {e}");
                    // SIGHUP-like: the terminal is gone; ask the loop to stop.
                    let _ = tx.send(Msg::Signal(SIGHUP));
                    return;
                }
            };
            if tx.send(msg).is_err() {
                return;
            }
        }
    })?;
    Ok(())
}

/// Job control (ctrl-z, or SIGTSTP from outside): gives the terminal back (main screen, mouse
/// capture off, cursor shown, raw mode off), stops the process, and when it is continued takes
/// the terminal again and clears it, so the next frame is drawn whole. Called on the loop's
/// thread, between frames.
pub fn suspend() {
    let was = ACTIVE.load(Ordering::SeqCst);
    restore();
    tracing::info!("suspended (job control)");
    if let Err(e) = signal_hook::low_level::emulate_default_handler(SIGTSTP) {
        tracing::warn!("cannot stop the process: {e}");
    }
    tracing::info!("continued");
    if was {
        ACTIVE.store(true, Ordering::SeqCst);
        let _ = enable_raw_mode();
        let _ = execute!(
            stdout(),
            EnterAlternateScreen,
            EnableMouseCapture,
            cursor::Hide,
            Clear(ClearType::All)
        );
        FORGET_SCREEN.store(true, Ordering::SeqCst);
    }
}

/// Set after a suspend: the loop must forget what ratatui believes is on screen.
pub static FORGET_SCREEN: AtomicBool = AtomicBool::new(false);

/// Starts the signal thread: SIGINT, SIGTERM, SIGHUP and SIGQUIT become [`Msg::Signal`], so the loop
/// quits and the terminal is restored; SIGTSTP becomes [`Msg::Suspend`] (the loop restores the
/// terminal before stopping). In raw mode ctrl-c and ctrl-z arrive as keys, not signals.
pub fn spawn_signals(tx: Sender<Msg>) -> io::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP])?;
    std::thread::Builder::new().name("ststui-signals".into()).spawn(move || {
        for sig in signals.forever() {
            let msg = if sig == SIGTSTP {
                tracing::info!("signal {sig}: suspending");
                Msg::Suspend
            } else {
                tracing::info!("signal {sig}: quitting");
                Msg::Signal(sig)
            };
            if tx.send(msg).is_err() {
                return;
            }
        }
    })?;
    Ok(())
}
