//! The real-time driver for the interactive console: a thread that owns the [`Sim`], maps wall
//! time onto virtual time (virtual = wall × speed), and forwards what happens to a sink as
//! [`BackendEvent`]s. It sleeps until the next due item, an incoming op or the next second of
//! the shown clock (one short wake-up per virtual second while nothing else happens). A
//! [`Script`] (the scenario player) can be attached to play in real time; any op other than
//! pause, resume, step and speed detaches it: the operator takes over.
//!
//! The simulation runs in bounded slices ([`SLICE`] of wall time), and between two slices the
//! driver reads its messages, so pause, step and quit answer at once however much work is due.
//! When it cannot keep up with the asked speed it does not fall behind: it moves its wall ↔
//! virtual mapping to what it achieved and says so ([`BackendEvent::Pace`]); virtual time
//! never runs backwards. Dropping the handle stops the thread without waiting for more than
//! [`STOP_WAIT`].
//!
//! Owns: the wall clock and the thread. Must not: change simulation semantics (it only calls
//! the [`Sim`] facade).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::{Duration, Instant};

use super::{Sim, SimEvent, ops};
use crate::backend::{
    Backend, BackendEvent, Capabilities, Failure, FailureKind, LogChunk, LogRequest, ObjKind,
    ObjRef, Object, Op, SPEED_RANGE, Scope, SimOp, ViewOp,
};

/// Where the driver sends events (the console's event loop).
pub use crate::backend::Sink;

/// Sees every [`SimEvent`] as it happens, on the simulation's thread, with the speed and the
/// virtual time then (the served API's watch history, its faults and its clock).
pub type Tap = Box<dyn FnMut(&SimEvent, f64, k8s_openapi::jiff::Timestamp) + Send>;

/// Work run on the simulation's thread, between slices (a served API request).
pub type Call = Box<dyn FnOnce(&mut Sim) + Send>;

/// Clock events go out at most this often (wall time).
const CLOCK_EVERY: Duration = Duration::from_millis(250);

/// The longest the simulation runs before the driver reads its messages again.
pub const SLICE: Duration = Duration::from_millis(20);

/// Behind by more than this (in wall time), the driver stops trying to catch up and moves its
/// wall ↔ virtual mapping to what it achieved.
const MAX_LAG: Duration = Duration::from_millis(250);

/// How often the achieved speed is measured.
const PACE_WINDOW: Duration = Duration::from_secs(1);

/// How long dropping the handle waits for the thread to end (quit answers within this).
pub const STOP_WAIT: Duration = Duration::from_millis(100);

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
    Call(Call),
    Attach(Box<dyn Script>),
    Detach,
    Stop,
}

/// The console's handle on a running simulation; dropping it stops the thread.
pub struct SimHandle {
    tx: Sender<Msg>,
    stop: Arc<AtomicBool>,
    /// Disconnected when the thread has ended.
    done: Receiver<()>,
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

    /// A handle that runs work on the simulation's thread (for the served API).
    pub fn caller(&self) -> Caller {
        Caller { tx: self.tx.clone() }
    }
}

/// Runs [`Call`]s on the simulation's thread; cheap to clone.
#[derive(Clone)]
pub struct Caller {
    tx: Sender<Msg>,
}

impl Caller {
    /// Queues `f`; `false` when the simulation has stopped.
    pub fn call(&self, f: Call) -> bool {
        self.tx.send(Msg::Call(f)).is_ok()
    }
}

impl Drop for SimHandle {
    /// Stops the thread: the flag ends the slice it is in. Waits at most [`STOP_WAIT`]; a thread
    /// still busy then is left to the process's end (it holds nothing that needs saving).
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.tx.send(Msg::Stop);
        let _ = self.done.recv_timeout(STOP_WAIT);
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
    spawn_with_tap(sim, speed, sink, None)
}

/// [`spawn`], with a [`Tap`] that sees every simulation event first.
pub fn spawn_with_tap(sim: Sim, speed: f64, sink: Sink, tap: Option<Tap>) -> SimHandle {
    let (tx, rx) = mpsc::channel();
    let (done_tx, done) = mpsc::channel::<()>();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let spawned = std::thread::Builder::new().name("ststui-sim".into()).spawn(move || {
        let _done = done_tx;
        let mut runner = Runner::new(sim, speed, sink, flag);
        runner.tap = tap;
        runner.run(rx);
    });
    if let Err(e) = spawned {
        tracing::error!("cannot start the simulator thread: {e}");
    }
    SimHandle { tx, stop, done }
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
    stop: Arc<AtomicBool>,
    /// Where the achieved speed's window started: wall instant and virtual time.
    pace_mark: (Instant, u64),
    /// The mapping was moved because the simulation could not keep up, in this window.
    lagged: bool,
    /// The achieved speed last reported (`None`: keeping up).
    reported_pace: Option<f64>,
    tap: Option<Tap>,
    /// The pod whose Events the console watches (`ViewOp::PodEvents`); a set's Events always
    /// go out.
    events_of: Option<ObjRef>,
    /// The sets' Events recorded before the console first asked went out then.
    told_set_events: bool,
    /// The log the console follows, and what was last sent of it (`None`: nothing yet).
    log: Option<(LogRequest, Option<Rendered>)>,
}

/// A log as the kubelet model renders it, or why there is none.
type Rendered = Result<Vec<String>, crate::kubelet::log::NoLog>;

/// Whether the console watches Event `e`: about a StatefulSet, or about the pod `watched`.
fn watched_event(e: &k8s_openapi::api::core::v1::Event, watched: Option<&ObjRef>) -> bool {
    let io = &e.involved_object;
    match io.kind.as_deref() {
        Some("StatefulSet") => true,
        Some("Pod") => watched.is_some_and(|w| {
            io.name.as_deref() == Some(w.name.as_str())
                && io.namespace.as_deref() == Some(w.namespace.as_str())
        }),
        _ => false,
    }
}

impl Runner {
    fn new(sim: Sim, speed: f64, sink: Sink, stop: Arc<AtomicBool>) -> Self {
        let base_virtual = sim.now_ms();
        Runner {
            stop,
            pace_mark: (Instant::now(), base_virtual),
            lagged: false,
            reported_pace: None,
            tap: None,
            events_of: None,
            told_set_events: false,
            log: None,
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
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            let caught_up = self.tick();
            self.measure_pace();
            if !caught_up {
                // Behind: read what arrived, without sleeping, then run the next slice.
                loop {
                    match rx.try_recv() {
                        Ok(msg) => {
                            if !self.handle(msg) {
                                return;
                            }
                        }
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => return,
                    }
                }
                continue;
            }
            let msg = rx.recv_timeout(self.wake_at().saturating_duration_since(Instant::now()));
            match msg {
                Ok(msg) => {
                    if !self.handle(msg) {
                        return;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return,
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// Handles one message; `false` to stop.
    fn handle(&mut self, msg: Msg) -> bool {
        match msg {
            Msg::Stop => return false,
            Msg::Op(op) => self.execute(op),
            Msg::Call(f) => {
                let mut budget = self.budget();
                self.sim.advance_until(self.virtual_now(), &mut budget);
                f(&mut self.sim);
                self.flush();
            }
            Msg::Attach(script) => {
                self.script = Some(script);
                self.script_due = Some(self.sim.now_ms());
            }
            Msg::Detach => self.detach(),
        }
        true
    }

    /// The budget of one slice: go on until the stop flag or the slice's end (read before every
    /// step: a step is a sync or a kubelet transition, far dearer than reading the clock).
    fn budget(&self) -> impl FnMut() -> bool + use<> {
        let stop = Arc::clone(&self.stop);
        let deadline = Instant::now() + SLICE;
        move || !stop.load(Ordering::Relaxed) && Instant::now() < deadline
    }

    /// The simulation could not reach `target` in its slice: if it is further behind than
    /// [`MAX_LAG`], the mapping moves to where it is (it never tries to catch up a backlog).
    fn fell_behind(&mut self, target: u64) {
        let lag_ms = target.saturating_sub(self.sim.now_ms()) as f64 / self.speed;
        if lag_ms > MAX_LAG.as_secs_f64() * 1000.0 {
            self.base_virtual = self.sim.now_ms();
            self.base_wall = Instant::now();
            self.lagged = true;
        }
    }

    /// Once per [`PACE_WINDOW`]: the virtual seconds achieved per wall second, reported while
    /// it is short of the asked speed (and once more when it keeps up again).
    fn measure_pace(&mut self) {
        let (at, from) = self.pace_mark;
        let elapsed = at.elapsed();
        if elapsed < PACE_WINDOW {
            return;
        }
        let achieved =
            self.sim.now_ms().saturating_sub(from) as f64 / elapsed.as_secs_f64() / 1000.0;
        let pace = self.lagged.then_some(achieved);
        self.pace_mark = (Instant::now(), self.sim.now_ms());
        self.lagged = false;
        let changed = match (pace, self.reported_pace) {
            (None, None) => false,
            (Some(a), Some(b)) => (a - b).abs() > b * 0.1,
            _ => true,
        };
        if changed {
            self.reported_pace = pace;
            (self.sink)(BackendEvent::Pace { asked: self.speed, achieved: pace });
        }
    }

    /// Virtual time now, per the wall clock.
    fn virtual_now(&self) -> u64 {
        let elapsed = self.base_wall.elapsed().as_secs_f64() * 1000.0 * self.speed;
        self.base_virtual.saturating_add(elapsed as u64)
    }

    /// Brings the simulation (and the script) up to the wall clock, in one bounded slice, and
    /// forwards events. `false` when the slice ended before it caught up.
    fn tick(&mut self) -> bool {
        let target = self.virtual_now();
        let mut budget = self.budget();
        loop {
            let script_at = self.script_due.filter(|t| *t <= target);
            if !self.sim.advance_until(script_at.unwrap_or(target), &mut budget) {
                self.flush();
                self.fell_behind(target);
                return false;
            }
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
        true
    }

    fn flush(&mut self) {
        let events = self.sim.drain_events();
        let happened = !events.is_empty();
        if happened || self.sim.now_ms() / SHOWN_MS != self.shown_second {
            self.clock_dirty = true;
        }
        let mut log_pod_changed = false;
        for ev in events {
            if let (SimEvent::Watch { object: Object::Pod(p), .. }, Some((req, _))) =
                (&ev, self.log.as_ref())
            {
                log_pod_changed |= p.metadata.name.as_deref() == Some(req.pod.name.as_str());
            }
            if let Some(tap) = self.tap.as_mut() {
                tap(&ev, self.speed, self.sim.now());
            }
            if let SimEvent::Watch { object: Object::Event(e), .. } = &ev
                && !watched_event(e, self.events_of.as_ref())
            {
                continue; // only the Events the console shows
            }
            (self.sink)(ev.into_backend());
        }
        if log_pod_changed {
            self.send_log();
        }
        // After events the clock goes out at once: what the console decides on them (a plan's
        // bake, its stamps) reads the time they happened, not up to a quarter second (×speed)
        // before. Those events redraw anyway; only a quiet clock is rate-limited.
        let due = happened || self.last_clock.is_none_or(|t| t.elapsed() >= CLOCK_EVERY);
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

    /// The console watches `pod`'s Events: it gets a listing of them, and the pod before's
    /// leave its mirror (an empty listing).
    fn watch_pod_events(&mut self, pod: Option<ObjRef>) {
        let scope = |p: &ObjRef| Scope {
            namespace: Some(p.namespace.clone()),
            about: Some(format!("Pod/{}", p.name)),
            ..Scope::default()
        };
        if let Some(old) = self.events_of.take() {
            let scope = scope(&old);
            (self.sink)(BackendEvent::Listed { kind: ObjKind::Event, scope, objects: Vec::new() });
        }
        if !std::mem::replace(&mut self.told_set_events, true) {
            let sets: Vec<Object> = self
                .sim
                .store()
                .events()
                .iter_shared()
                .filter(|e| e.involved_object.kind.as_deref() == Some("StatefulSet"))
                .map(|e| Object::Event(Arc::clone(e)))
                .collect();
            for o in sets {
                (self.sink)(BackendEvent::Applied(o));
            }
        }
        if let Some(p) = &pod {
            let objects = self
                .sim
                .store()
                .events()
                .iter_shared()
                .filter(|e| watched_event(e, Some(p)))
                .map(|e| Object::Event(Arc::clone(e)))
                .collect();
            (self.sink)(BackendEvent::Listed { kind: ObjKind::Event, scope: scope(p), objects });
        }
        self.events_of = pod;
    }

    /// The followed log as the pod's status renders it now, sent when it changed (the whole
    /// of it: a few lines, derived, never stored).
    fn send_log(&mut self) {
        let Some((req, last)) = self.log.as_mut() else { return };
        let now = match self.sim.pod(&req.pod) {
            Some(p) => crate::kubelet::log::render(p, req.previous),
            None => Err(crate::kubelet::log::NoLog::NoPod(req.pod.name.clone())),
        };
        if last.as_ref() == Some(&now) {
            return;
        }
        let chunk = match &now {
            Ok(lines) => LogChunk::Replace(lines.clone()),
            Err(why) => LogChunk::Failed(why.to_string()),
        };
        *last = Some(now);
        (self.sink)(BackendEvent::Log { request: req.clone(), chunk });
    }

    fn detach(&mut self) {
        self.script = None;
        self.script_due = None;
    }

    fn execute(&mut self, op: Op) {
        // Bring virtual time up to date (within one slice) so the op lands at the right instant;
        // when behind, it lands now, where the simulation stands.
        let mut budget = self.budget();
        self.sim.advance_until(self.virtual_now(), &mut budget);
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
            Op::View(ViewOp::PodEvents(pod)) => {
                self.watch_pod_events(pod);
                return;
            }
            Op::View(ViewOp::Logs(req)) => {
                self.log = req.map(|r| (r, None));
                self.send_log();
                return;
            }
            Op::View(ViewOp::Read(key)) => {
                // The store is the truth: a read of it is fresh.
                let read = match self.sim.set(&key) {
                    Some(set) => {
                        let pods = self.sim.pods_of(&key).into_iter().cloned().map(Arc::new);
                        let budgets = self.sim.store().budgets().in_namespace(&key.namespace);
                        Ok(crate::backend::Fresh {
                            set: Arc::new(set.clone()),
                            pods: pods.collect(),
                            budgets: Some(budgets.cloned().map(Arc::new).collect()),
                        })
                    }
                    None => Err(Failure::new(
                        format!("read {key}"),
                        FailureKind::NotFound,
                        format!("{key} does not exist"),
                    )),
                };
                (self.sink)(BackendEvent::Read { set: key, read });
                return;
            }
            Op::Sim(SimOp::Pause | SimOp::Resume | SimOp::Step { .. }) | Op::View(_) => {}
            _ => self.detach(),
        }
        let name = ops::describe(&op);
        let write = match &op {
            Op::Cluster(w) => Some(w.clone()),
            Op::Sim(_) | Op::View(_) => None,
        };
        let id = write.as_ref().map(|w| w.id);
        if let Err(e) = self.sim.apply_op(op) {
            let kind = e.kind();
            // A conflict comes back with the write re-based on the set as it is now, so the
            // console can ask again and send it decided on what it shows.
            let write = write.filter(|_| kind == FailureKind::Conflict).map(|w| {
                let basis = self.sim.set(w.op.target()).cloned().map(Box::new);
                crate::backend::Write::on(w.op, basis)
            });
            let failure = Failure { op: name, kind, message: e.to_string(), write, id };
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
