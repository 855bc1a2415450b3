//! `ststui play --drive`: the scenario plays while ststui's own controller (`crate::drive`)
//! reconciles the namespace. Its timeline lines are the controller's own report (what the
//! watches would infer of them is left out); `pause`, `resume` and `step` go to it, a `step`
//! waiting until its syncs have run; another controller seen at work ends the play (exit 4).
//! One driver at a time: the play takes the namespace's drive Lease before its first write
//! (another ststui holding it refuses the play, exit 4), and gives it up when it ends; a lease
//! lost during the play (this process stalled past its renew deadline, another took over) ends
//! it as another controller does.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::{Change, ClusterPlayer, EXIT_CLUSTER};
use crate::backend::{EventKind, Mode};
use crate::drive::lease::{Elector, Gate, LEASE_NAME, Role, Timings};
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
    /// Stops the lease's candidate, which then gives the lease up.
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    elector: Option<tokio::task::JoinHandle<()>>,
}

/// How long the first read of the drive Lease, and its release at the end, are waited for.
const LEASE_WAIT: Duration = Duration::from_secs(10);

/// Takes the drive Lease of the session's namespace (or finds the server serves none); the
/// refusal names who holds it or why it cannot be had.
async fn elect(session: &crate::cluster::Session) -> Result<(Elector, Gate), String> {
    let ns = &session.namespace;
    let gate = Gate::new(Timings::default());
    let me = crate::drive::lease::identity(&session.context);
    let mut candidate = Elector::new(session.client.clone(), ns, me, gate.clone());
    match tokio::time::timeout(LEASE_WAIT, candidate.round()).await {
        Ok(Role::Leader | Role::Unelected) => Ok((candidate, gate)),
        Ok(Role::Standby { holder, .. }) => Err(format!(
            "will not drive {ns}: {} holds the drive lease {ns}/{LEASE_NAME} (another ststui \
             drives the namespace); play --drive plays only where nobody else drives",
            crate::text::escape_controls(&holder)
        )),
        Ok(_) => Err(format!(
            "will not drive {ns}: cannot take the drive lease {ns}/{LEASE_NAME}: {}",
            gate.trouble().unwrap_or_else(|| "no answer".into())
        )),
        Err(_) => Err(format!(
            "will not drive {ns}: no answer about the drive lease {ns}/{LEASE_NAME} within {} s",
            LEASE_WAIT.as_secs()
        )),
    }
}

/// Takes the namespace's drive Lease and starts the controller on the namespace of the
/// session; its watch events also go to `tee` (the player reads the namespace through them).
pub(super) async fn start_driver(
    session: &crate::cluster::Session,
    player: &ClusterPlayer,
    tee: mpsc::Sender<Result<Change, WatchFailed>>,
) -> Result<Driving, String> {
    let (candidate, gate) = elect(session).await?;
    let (tx, rx) = mpsc::unbounded_channel();
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let lost = tx.clone();
    let ns = session.namespace.clone();
    let mut said = false;
    let report = move |role: &Role| {
        let words = match role {
            Role::Standby { holder, .. } => format!(
                "stopped driving {ns}: {} took the drive lease {ns}/{LEASE_NAME}",
                crate::text::escape_controls(holder)
            ),
            Role::Fenced { why } => format!("stopped driving {ns}: {why}"),
            _ => return,
        };
        if !std::mem::replace(&mut said, true) {
            let _ = lost.send(Output::OtherController(words));
        }
    };
    let elector = tokio::spawn(candidate.run(report, stopped));
    let calls = Calls::new(session.client.clone(), tokio::runtime::Handle::current(), None);
    let config = Config {
        namespace: session.namespace.clone(),
        only: None,
        options: player.options,
        epoch: player.start.into_std(),
        paused: false,
        tee: Some(tee),
        gate: Some(gate),
    };
    let driver = Driver::start(calls, config, Box::new(move |o| drop(tx.send(o))))?;
    Ok(Driving {
        driver,
        rx,
        started: false,
        other: None,
        stepped: None,
        paused: false,
        stop: Some(stop),
        elector: Some(elector),
    })
}

impl Driving {
    /// Stops reconciling, then gives the lease up (waited for at most [`LEASE_WAIT`]).
    pub(super) async fn finish(mut self) {
        let (stop, elector) = (self.stop.take(), self.elector.take());
        // Dropping the driver waits (briefly) for a call under way: not on a runtime thread.
        let driver = self.driver;
        let _ = tokio::task::spawn_blocking(move || drop(driver)).await;
        if let Some(stop) = stop {
            let _ = stop.send(());
        }
        if let Some(e) = elector {
            let _ = tokio::time::timeout(LEASE_WAIT, e).await;
        }
    }
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
