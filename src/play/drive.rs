//! `ststui play --drive`: the scenario plays while ststui's own controller (`crate::drive`)
//! reconciles the namespace. Its timeline lines are the controller's own report (what the
//! watches would infer of them is left out); `pause`, `resume` and `step` go to it, a `step`
//! waiting until its syncs have run; another controller seen at work ends the play (exit 4).

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{Change, ClusterPlayer, EXIT_CLUSTER};
use crate::backend::{EventKind, Mode};
use crate::drive::{Calls, Config, Driver, Input, Output, WatchFailed};
use crate::sim::scenario::Command;
use crate::sim::timeline::render;

/// The controller driving, and what it said.
pub(super) struct Driving {
    driver: Driver,
    rx: mpsc::UnboundedReceiver<Output>,
    /// Listed and checked: reconciling.
    pub(super) started: bool,
    /// Another controller's evidence, once seen.
    pub(super) other: Option<String>,
    stepped: Option<u32>,
    paused: bool,
}

/// Starts the controller on the namespace of the session; its watch events also go to `tee`
/// (the player reads the namespace through them).
pub(super) fn start_driver(
    session: &crate::cluster::Session,
    player: &ClusterPlayer,
    tee: mpsc::Sender<Result<Change, WatchFailed>>,
) -> Result<Driving, String> {
    let (tx, rx) = mpsc::unbounded_channel();
    let calls = Calls::new(session.client.clone(), tokio::runtime::Handle::current(), None);
    let config = Config {
        namespace: session.namespace.clone(),
        only: None,
        options: player.options,
        epoch: player.start.into_std(),
        paused: false,
        tee: Some(tee),
        // A play drives a namespace of its own for its length: no election (yet).
        gate: None,
    };
    let driver = Driver::start(calls, config, Box::new(move |o| drop(tx.send(o))))?;
    Ok(Driving { driver, rx, started: false, other: None, stepped: None, paused: false })
}

/// The controller's next report, or never when not driving.
pub(super) async fn next(d: &mut Option<Driving>) -> Option<Output> {
    match d {
        Some(d) => d.rx.recv().await,
        None => std::future::pending().await,
    }
}

impl ClusterPlayer {
    pub(super) fn take_drive(&mut self, out: Output) {
        let Some(d) = self.drive.as_mut() else { return };
        match out {
            Output::Line(ev) => {
                use std::io::Write as _;
                let line = render(&ev, self.format);
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
            Output::Mode(m) => d.paused = m == Mode::Paused,
            Output::Driving => d.started = true,
            // A play does not elect: never a standby.
            Output::Standby => {}
            Output::Stepped(n) => d.stepped = Some(n),
            Output::OtherController(words) => {
                crate::text::err_line(&format!("ststui: {words}"));
                d.other = Some(words.clone());
                self.emit(EventKind::Error { line: None, message: words });
            }
            Output::WatchError(e) => crate::text::err_line(&format!("ststui: {e} (retrying)")),
        }
    }

    /// The exit code when another controller was seen.
    pub(super) fn drive_refused(&self) -> Option<i32> {
        self.drive.as_ref()?.other.as_ref().map(|_| EXIT_CLUSTER)
    }

    /// Whether the driven controller is paused.
    pub(super) fn paused(&self) -> bool {
        self.drive.as_ref().is_some_and(|d| d.paused)
    }

    /// `pause`, `resume`, `step [N]`: to the controller; a step waits for its syncs (at most a
    /// minute).
    pub(super) async fn control(
        &mut self,
        command: &Command,
        rx: &mut mpsc::Receiver<Result<Change, WatchFailed>>,
    ) {
        let Some(d) = self.drive.as_mut() else { return };
        match command {
            // The mode asked for holds from here: the controller stops between two writes, or
            // takes up its queue. Its own report of the mode comes later, and a `settle` right
            // after a `resume` must not read the old mode meanwhile (it would skip what is
            // still to happen and end at once); the quiet period starts again, as after a
            // write of the script's own, because the controller's work follows.
            Command::Pause | Command::Resume => {
                let pause = matches!(command, Command::Pause);
                d.paused = pause;
                d.driver.send(if pause { Input::Pause } else { Input::Resume });
                let now = self.now();
                self.world.touched(now);
            }
            Command::Step(n) => {
                d.stepped = None;
                d.driver.send(Input::Step(*n));
                let until = Instant::now() + Duration::from_secs(60);
                self.pump(rx, until, |p| p.drive.as_ref().is_none_or(|d| d.stepped.is_some()))
                    .await;
            }
            _ => {}
        }
    }
}
