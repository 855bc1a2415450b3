//! The real-time driver for the interactive console: a thread that owns the [`Sim`], maps wall
//! time onto virtual time (virtual = wall × speed), and forwards what happens to a sink as
//! [`BackendEvent`]s. It sleeps until the next due item, an incoming op or the next second of
//! the shown clock (one short wake-up per virtual second while nothing else happens). A
//! [`Script`] (the scenario player) can be attached to play in real time; any op other than
//! pause, resume, step and speed detaches it: the operator takes over.
//!
//! Owns: the wall clock and the thread. Must not: change simulation semantics (it only calls
//! the [`Sim`] facade).

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{Sim, SimEvent, ops};
use crate::backend::{
    Backend, BackendEvent, Capabilities, Failure, FailureKind, Op, SPEED_RANGE, SimOp,
};

/// Where the driver sends events (the console's event loop).
pub type Sink = Box<dyn Fn(BackendEvent) + Send>;

/// Clock events go out at most this often (wall time).
const CLOCK_EVERY: Duration = Duration::from_millis(250);

/// The console shows virtual time in whole seconds: while nothing else happens, a clock event
/// goes out when that second changes (at most every [`CLOCK_EVERY`]), so the header and the
/// ages stay true at one wake-up per virtual second instead of freezing between events.
const SHOWN_MS: u64 = 1000;

/// Something that plays on the simulation as virtual time passes: the scenario player.
pub trait Script: Send {
    /// Runs every step due at `sim.now_ms()`. Returns the absolute virtual time it wants to be
    /// polled at next, or `None` when it has finished.
    fn poll(&mut self, sim: &mut Sim) -> Option<u64>;

    /// What to tell the operator when it has finished (e.g. how its checks went).
    fn summary(&self) -> String {
        "script finished".into()
    }
}

enum Msg {
    Op(Op),
    Attach(Box<dyn Script>),
    Detach,
    Stop,
}

/// The console's handle on a running simulation; dropping it stops the thread.
pub struct SimHandle {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<()>>,
}

impl SimHandle {
    /// Plays `script` from the current virtual time (replacing any attached one).
    pub fn attach_script(&self, script: Box<dyn Script>) {
        let _ = self.tx.send(Msg::Attach(script));
    }

    /// Stops playing the attached script, if any.
    pub fn detach_script(&self) {
        let _ = self.tx.send(Msg::Detach);
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        let _ = self.tx.send(Msg::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Backend for SimHandle {
    fn capabilities(&self) -> Capabilities {
        Capabilities::simulator()
    }

    fn execute(&mut self, op: Op) {
        let _ = self.tx.send(Msg::Op(op));
    }
}

/// Starts the driver thread. The sink first receives the current state (`Applied` for every
/// object, then `Synced`, the mode and the clock), then everything as it happens.
pub fn spawn(sim: Sim, speed: f64, sink: Sink) -> SimHandle {
    let (tx, rx) = mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("ststui-sim".into())
        .spawn(move || Runner::new(sim, speed, sink).run(rx))
        .ok();
    SimHandle { tx, thread }
}

struct Runner {
    sim: Sim,
    speed: f64,
    sink: Sink,
    script: Option<Box<dyn Script>>,
    script_due: Option<u64>,
    base_wall: Instant,
    base_virtual: u64,
    last_clock: Option<Instant>,
    clock_dirty: bool,
    /// The virtual second the last clock event showed.
    shown_second: u64,
}

impl Runner {
    fn new(sim: Sim, speed: f64, sink: Sink) -> Self {
        let base_virtual = sim.now_ms();
        Runner {
            sim,
            speed: sanitize(speed),
            sink,
            script: None,
            script_due: None,
            base_wall: Instant::now(),
            base_virtual,
            last_clock: None,
            clock_dirty: true,
            shown_second: base_virtual / SHOWN_MS,
        }
    }

    fn run(mut self, rx: Receiver<Msg>) {
        let earlier = self.sim.drain_events();
        for ev in self.sim.snapshot() {
            (self.sink)(ev);
        }
        (self.sink)(BackendEvent::Server { version: format!("v{}", self.sim.options().version) });
        (self.sink)(BackendEvent::Synced);
        let mode = if self.sim.is_paused() {
            crate::backend::Mode::Paused
        } else {
            crate::backend::Mode::Live
        };
        (self.sink)(BackendEvent::Mode(mode));
        for ev in earlier.into_iter().filter(|e| !matches!(e, SimEvent::Watch { .. })) {
            (self.sink)(ev.into_backend());
        }
        loop {
            self.tick();
            let msg = rx.recv_timeout(self.wake_at().saturating_duration_since(Instant::now()));
            match msg {
                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Ok(Msg::Op(op)) => self.execute(op),
                Ok(Msg::Attach(script)) => {
                    self.script = Some(script);
                    self.script_due = Some(self.sim.now_ms());
                }
                Ok(Msg::Detach) => self.detach(),
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// Virtual time now, per the wall clock.
    fn virtual_now(&self) -> u64 {
        let elapsed = self.base_wall.elapsed().as_secs_f64() * 1000.0 * self.speed;
        self.base_virtual.saturating_add(elapsed as u64)
    }

    /// Brings the simulation (and the script) up to the wall clock and forwards events.
    fn tick(&mut self) {
        let target = self.virtual_now();
        loop {
            let script_at = self.script_due.filter(|t| *t <= target);
            self.sim.advance_to(script_at.unwrap_or(target));
            match (script_at, self.script.as_mut()) {
                (Some(_), Some(script)) => {
                    self.script_due = script.poll(&mut self.sim);
                    if self.script_due.is_none() {
                        let summary = script.summary();
                        self.script = None;
                        // After the script's own events, so the notice ends its story.
                        self.flush();
                        (self.sink)(BackendEvent::Notice(summary));
                    }
                }
                _ => break,
            }
        }
        self.flush();
    }

    fn flush(&mut self) {
        let events = self.sim.drain_events();
        if !events.is_empty() || self.sim.now_ms() / SHOWN_MS != self.shown_second {
            self.clock_dirty = true;
        }
        for ev in events {
            (self.sink)(ev.into_backend());
        }
        let due = self.last_clock.is_none_or(|t| t.elapsed() >= CLOCK_EVERY);
        if self.clock_dirty && due {
            self.emit_clock();
        }
    }

    fn emit_clock(&mut self) {
        (self.sink)(BackendEvent::Clock { now: self.sim.now(), speed: self.speed });
        self.last_clock = Some(Instant::now());
        self.clock_dirty = false;
        self.shown_second = self.sim.now_ms() / SHOWN_MS;
    }

    /// The wall instant of the next thing to do: a due item or the shown clock's next second.
    fn wake_at(&self) -> Instant {
        let next_virtual = match (self.sim.next_due(), self.script_due) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let due = next_virtual.map(|v| self.wall_at(v));
        let earliest = self.last_clock.map_or(Instant::now(), |t| t + CLOCK_EVERY);
        let clock = if self.clock_dirty {
            earliest
        } else {
            // The next whole second of virtual time, for the shown clock.
            earliest.max(self.wall_at((self.shown_second + 1) * SHOWN_MS))
        };
        due.map_or(clock, |d| d.min(clock))
    }

    /// The wall instant virtual time reaches `v`, rounded up a millisecond so a wake-up never
    /// lands just short of it.
    fn wall_at(&self, v: u64) -> Instant {
        let ms = v.saturating_sub(self.base_virtual) as f64 / self.speed;
        self.base_wall + Duration::from_secs_f64(ms / 1000.0) + Duration::from_millis(1)
    }

    fn detach(&mut self) {
        self.script = None;
        self.script_due = None;
    }

    fn execute(&mut self, op: Op) {
        // Bring virtual time up to date so the op lands at the right instant.
        self.sim.advance_to(self.virtual_now());
        match op {
            Op::Sim(SimOp::SetSpeed { speed }) if !(speed.is_finite() && in_speed_range(speed)) => {
                let message = format!("speed {speed} is out of range: expected 0.01 to 1000");
                let failure = Failure::new(ops::describe(&op), FailureKind::Invalid, message);
                (self.sink)(BackendEvent::OpFailed(failure));
                return;
            }
            Op::Sim(SimOp::SetSpeed { speed }) => {
                self.base_virtual = self.sim.now_ms();
                self.base_wall = Instant::now();
                self.speed = sanitize(speed);
                self.emit_clock();
                return;
            }
            Op::Sim(SimOp::Pause | SimOp::Resume | SimOp::Step { .. }) => {}
            _ => self.detach(),
        }
        let name = ops::describe(&op);
        let write = match &op {
            Op::Cluster(w) => Some(w.clone()),
            Op::Sim(_) => None,
        };
        if let Err(e) = self.sim.apply_op(op) {
            let kind = e.kind();
            // A conflict comes back with the write re-based on the set as it is now, so the
            // console can ask again and send it decided on what it shows.
            let write = write.filter(|_| kind == FailureKind::Conflict).map(|mut w| {
                w.basis = self.sim.set(w.op.target()).cloned().map(Box::new);
                w
            });
            let failure = Failure { op: name, kind, message: e.to_string(), write };
            (self.sink)(BackendEvent::OpFailed(failure));
        }
        self.clock_dirty = true;
    }
}

/// Speeds outside 0.01–1000 (or not finite) are clamped into that range.
fn sanitize(speed: f64) -> f64 {
    let (lo, hi) = SPEED_RANGE;
    if speed.is_finite() { speed.clamp(lo, hi) } else { 1.0 }
}

fn in_speed_range(speed: f64) -> bool {
    (SPEED_RANGE.0..=SPEED_RANGE.1).contains(&speed)
}
