//! [`Msg`]: everything that enters the reducer; [`Command`]: everything the reducer asks the
//! event loop to do.
//!
//! Owns only the two vocabularies. Must not perform effects.

use std::time::Instant;

use crossterm::event::{KeyEvent, MouseEvent};

use super::state::HitMap;
use crate::backend::{BackendEvent, Op};

/// One input to `update`.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    /// A key press (releases and repeats are filtered by the input thread).
    Key(KeyEvent),
    /// A mouse event (clicks and wheel are used).
    Mouse(MouseEvent),
    /// The terminal was resized to (columns, rows).
    Resize(u16, u16),
    /// Something the backend reported.
    Backend(BackendEvent),
    /// One wall second passed (only delivered while [`AppState::wants_tick`]).
    ///
    /// [`AppState::wants_tick`]: super::state::AppState::wants_tick
    Tick,
    /// A frame was drawn; its clickable geometry. Clears `dirty` (never sets it).
    Drawn(HitMap),
    /// End of a drained batch: run the advisor if the mirror, selection or clock moved.
    BatchEnd,
    /// A termination signal (SIGINT/SIGTERM/SIGHUP) arrived.
    Signal(i32),
    /// A stop signal (SIGTSTP: `kill -TSTP`, or a job-control stop from outside) arrived.
    Suspend,
    /// The wall instant, sent by the event loop before each batch (time is an input: the
    /// reducer never reads a clock). Never marks the state dirty.
    Wall(Instant),
    /// The timeline was written to `path` (`Command::Export`), or why not.
    Exported { path: String, lines: usize, error: Option<String> },
    /// How the console starts (the command line's choices), sent once by the composition root
    /// before the first frame: nothing writes the state but the reducer, not even at start-up.
    Start(Start),
}

/// The command line's choices for a console.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Start {
    /// A list of sets to pick from (a cluster's namespace).
    pub can_pick: bool,
    /// The set to open; `None` with `can_pick`: the list first.
    pub open: Option<crate::backend::ObjRef>,
    /// The simulator's speed.
    pub speed: Option<f64>,
    /// A group to show from the start (a fleet's view), its first set selected.
    pub group: Option<crate::app::state::GroupShown>,
}

/// An effect the reducer requests.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Send this Op to the backend.
    Backend(Op),
    /// Leave the event loop and restore the terminal.
    Quit,
    /// Restore the terminal, stop the process (job control), and take the terminal again when
    /// continued (`fg`), redrawing everything.
    Suspend,
    /// Write `text` to a new file named `name` in the working directory (a number is added
    /// before the extension when it exists), then report with [`Msg::Exported`].
    Export { name: String, text: String, lines: usize },
}
