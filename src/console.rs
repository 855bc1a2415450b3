//! The console's run loop: the terminal, the input and signal threads, and the loop that feeds
//! [`Msg`]s into the one reducer and draws when the state is dirty. Any backend: it only sees
//! [`Backend`].
//!
//! Two inboxes: the operator's (keys, mouse, resize, signals) and the backend's (bounded: a
//! backend that produces faster than the console applies waits, instead of growing memory).
//! The operator's is always read first, also between the backend's messages of one batch, so
//! quit, pause and step answer at once however busy the backend is.
//!
//! Owns process concerns only (threads, the wall clock for status ticks, terminal modes through
//! `tui`). Must not decide anything the reducer decides, and must not print on stdout while the
//! console is up (stdout is the screen).

use std::time::{Duration, Instant};

use anyhow::Context as _;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, select_biased};
use ststui::app::state::HitMap;
use ststui::app::{self, AppState, Command, Msg};
use ststui::backend::Backend;
use ststui::ui::{self, Theme};

use crate::tui;

/// Status-line ticks while a message is showing.
const TICK: Duration = Duration::from_secs(1);

/// At most this many backend messages go into the reducer between two draws, so the screen
/// stays responsive while the backend runs fast.
const MAX_BATCH: usize = 4096;

/// Backend messages waiting at most (the backend blocks beyond: backpressure, bounded memory).
const BACKEND_QUEUE: usize = 4_096;

/// The console's two inboxes and the senders that fill them.
pub struct Inbox {
    pub operator_tx: Sender<Msg>,
    operator: Receiver<Msg>,
    backend_tx: Sender<Msg>,
    backend: Receiver<Msg>,
}

impl Default for Inbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Inbox {
    pub fn new() -> Inbox {
        let (operator_tx, operator) = crossbeam_channel::unbounded();
        let (backend_tx, backend) = crossbeam_channel::bounded(BACKEND_QUEUE);
        Inbox { operator_tx, operator, backend_tx, backend }
    }

    /// Where a backend reports, from any thread (blocks while the console is
    /// [`BACKEND_QUEUE`] behind; gives up once the console has gone).
    pub fn sink(&self) -> ststui::backend::Sink {
        let tx = self.backend_tx.clone();
        std::sync::Arc::new(move |ev| {
            let _ = tx.send(Msg::Backend(ev));
        })
    }
}

/// Runs the console until the operator quits or a signal arrives; the terminal is restored on
/// every way out. Returns the signal, if one ended it.
pub fn run(
    state: &mut AppState,
    mut backend: Box<dyn Backend>,
    theme: &Theme,
    inbox: Inbox,
) -> anyhow::Result<Option<i32>> {
    let (mut term, _guard) = tui::init().context("cannot set up the terminal")?;
    tui::spawn_signals(inbox.operator_tx.clone()).context("cannot listen for signals")?;
    tui::spawn_input(inbox.operator_tx.clone()).context("cannot read the terminal")?;
    if let Ok(size) = term.size() {
        app::update(state, Msg::Resize(size.width, size.height));
    }
    let result = event_loop(&mut term, state, backend.as_mut(), theme, &inbox);
    tui::restore();
    // Stops the backend (it waits a bounded time), then the inboxes go.
    drop(backend);
    result
}

/// Test hook, compiled into debug builds only: `STSTUI_TEST_PANIC` makes the console panic once
/// a frame is on screen, so the end-to-end test can prove the panic hook restores the terminal.
#[cfg(debug_assertions)]
#[expect(clippy::panic, reason = "the test hook panics on purpose")]
fn panic_if_asked() {
    if std::env::var_os("STSTUI_TEST_PANIC").is_some() {
        panic!("STSTUI_TEST_PANIC is set: panicking after the first frame (a test hook)");
    }
}

/// The event loop: block on the inboxes (zero CPU while idle), drain what is pending into the
/// reducer (the operator's first), run the batch-end recompute, draw only if dirty.
fn event_loop(
    term: &mut tui::Term,
    state: &mut AppState,
    backend: &mut dyn Backend,
    theme: &Theme,
    inbox: &Inbox,
) -> anyhow::Result<Option<i32>> {
    let mut signal = None;
    let mut next_tick: Option<Instant> = None;
    let mut trim = Trim::default();
    let mut batch: Option<Batch> = None;
    loop {
        if tui::FORGET_SCREEN.swap(false, std::sync::atomic::Ordering::SeqCst) {
            // Back from a suspend: the screen was cleared. A blank frame makes ratatui's next
            // diff write every cell (its own `clear` asks the terminal where the cursor is, a
            // round trip some terminals never answer).
            term.draw(|f| f.render_widget(ratatui::widgets::Clear, f.area()))
                .context("cannot draw")?;
        }
        if state.dirty {
            let drawing = Instant::now();
            let mut hits = HitMap::default();
            term.draw(|f| hits = ui::draw(f, state, theme)).context("cannot draw")?;
            app::update(state, Msg::Drawn(hits));
            if let Some(b) = batch.take() {
                b.drawn(drawing);
            }
            #[cfg(debug_assertions)]
            panic_if_asked();
        }
        if state.quit {
            return Ok(signal);
        }
        let timeout = if state.wants_tick() {
            let due = *next_tick.get_or_insert_with(|| Instant::now() + TICK);
            due.saturating_duration_since(Instant::now())
        } else {
            next_tick = None;
            Duration::MAX
        };
        trim.idle();
        let first = match wait(inbox, timeout) {
            Ok(msg) => msg,
            Err(RecvTimeoutError::Timeout) => {
                next_tick = Some(Instant::now() + TICK);
                Msg::Tick
            }
            Err(RecvTimeoutError::Disconnected) => return Ok(signal),
        };
        let woke = Instant::now();
        app::update(state, Msg::Wall(woke));
        let mut msg = Some(first);
        let mut taken = 0;
        while let Some(m) = msg {
            if let Msg::Signal(s) = m {
                signal = Some(s);
            }
            dispatch(state, backend, m);
            taken += 1;
            msg = if state.quit {
                None
            } else if let Ok(m) = inbox.operator.try_recv() {
                Some(m)
            } else if taken < MAX_BATCH {
                inbox.backend.try_recv().ok()
            } else {
                None
            };
        }
        // A plan this console runs writes at the end of a batch.
        let ending = Instant::now();
        dispatch(state, backend, Msg::BatchEnd);
        batch = Some(Batch { woke, taken, ending, ended: Instant::now() });
    }
}

/// One batch's times, logged at debug level once its frame is drawn (`STSTUI_LOG=debug`): where
/// the time from a message's arrival to the screen goes — the reducer on the batch's messages,
/// the batch-end recompute (the advisor, the grid and the controller's words), the frame.
struct Batch {
    woke: Instant,
    taken: usize,
    ending: Instant,
    ended: Instant,
}

impl Batch {
    fn drawn(&self, drawing: Instant) {
        let us = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        tracing::debug!(
            messages = self.taken,
            reduce_us = us(self.ending - self.woke),
            batch_end_us = us(self.ended - self.ending),
            frame_us = us(drawing.elapsed()),
            total_us = us(self.woke.elapsed()),
            "batch drawn"
        );
    }
}

/// The next message, the operator's first; `Timeout` after `timeout`.
fn wait(inbox: &Inbox, timeout: Duration) -> Result<Msg, RecvTimeoutError> {
    if let Ok(m) = inbox.operator.try_recv() {
        return Ok(m);
    }
    let deadline = Instant::now().checked_add(timeout);
    let timer = match deadline {
        Some(at) => crossbeam_channel::at(at),
        None => crossbeam_channel::never(),
    };
    select_biased! {
        recv(inbox.operator) -> m => m.map_err(|_| RecvTimeoutError::Disconnected),
        recv(inbox.backend) -> m => m.map_err(|_| RecvTimeoutError::Disconnected),
        recv(timer) -> _ => Err(RecvTimeoutError::Timeout),
    }
}

fn dispatch(state: &mut AppState, backend: &mut dyn Backend, msg: Msg) {
    for cmd in app::update(state, msg) {
        match cmd {
            Command::Backend(op) => {
                tracing::info!("op: {}", op.describe());
                backend.execute(op);
            }
            Command::Quit => tracing::info!("quit"),
            Command::Suspend => tui::suspend(),
            Command::Export { name, text, lines } => {
                let (path, error) = match write_new(&name, &text) {
                    Ok(p) => (p, None),
                    Err(e) => (name, Some(e.to_string())),
                };
                dispatch(state, backend, Msg::Exported { path, lines, error });
            }
        }
    }
}

/// Why an export was not written.
#[derive(Debug, thiserror::Error)]
enum NotWritten {
    #[error("the working directory: {0}")]
    NoDir(std::io::Error),
    #[error("{path}: {source}")]
    File { path: String, source: std::io::Error },
    #[error("{name} and 98 numbered files beside it exist in {dir}")]
    Taken { name: String, dir: String },
}

/// Writes `text` to a new file `name` in the working directory, never over an existing one
/// (`NAME-2.jsonl`, `NAME-3.jsonl` … when taken). Returns the absolute path written.
fn write_new(name: &str, text: &str) -> Result<String, NotWritten> {
    use std::io::Write;
    let dir = std::env::current_dir().map_err(NotWritten::NoDir)?;
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    for n in 1..100 {
        let file = if n == 1 { name.to_string() } else { format!("{stem}-{n}.{ext}") };
        let path = dir.join(&file);
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                f.write_all(text.as_bytes()).map_err(|source| NotWritten::File {
                    path: path.display().to_string(),
                    source,
                })?;
                return Ok(path.display().to_string());
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(source) => {
                return Err(NotWritten::File { path: path.display().to_string(), source });
            }
        }
    }
    Err(NotWritten::Taken { name: name.into(), dir: dir.display().to_string() })
}

/// Gives freed heap back to the operating system once the console goes idle after a burst.
/// glibc's malloc keeps the pages of freed objects: a rollout of 1,000 pods passes every pod
/// through several versions between the simulator's thread and this one, and a cluster's first
/// listing parses whole pods before they are trimmed, so the peak stayed resident for good.
/// `malloc_trim` returns them, at most every five seconds, once the loop is about to wait. It
/// runs on a thread of its own: after a 10,000-pod listing it took 50–80 ms, which on the loop
/// would have delayed a key pressed meanwhile. Other platforms' allocators need nothing.
struct Trim {
    wake: Option<std::sync::mpsc::SyncSender<()>>,
}

impl Default for Trim {
    fn default() -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel::<()>(1);
        let spawned = std::thread::Builder::new().name("trim".into()).spawn(move || {
            while rx.recv().is_ok() {
                let at = Instant::now();
                #[cfg(all(target_os = "linux", target_env = "gnu"))]
                // SAFETY: malloc_trim only releases free memory of the allocator's own arenas;
                // it has no preconditions and touches no memory the program holds.
                unsafe {
                    libc::malloc_trim(0);
                }
                tracing::debug!(took = ?at.elapsed(), "malloc_trim");
                std::thread::sleep(Trim::EVERY);
            }
        });
        Trim { wake: spawned.ok().map(|_| tx) }
    }
}

impl Trim {
    const EVERY: Duration = Duration::from_secs(5);

    /// The loop is about to wait: trim unless a trim ran in the last five seconds (the
    /// thread is asleep then and the wake-up is dropped; the next idle moment asks again).
    fn idle(&mut self) {
        if let Some(tx) = &self.wake {
            let _ = tx.try_send(());
        }
    }
}
