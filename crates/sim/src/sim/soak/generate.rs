//! Random scenario scripts for the soak, from a seed: a small set with random settings, a burst
//! of random operations and faults (scaling, template changes, undo, partition, strategy and
//! maxUnavailable changes, pause / step / resume, failed pods, readiness flaps, slow
//! terminations, graceful and forced deletes, waits), then the faults stop and the script asserts
//! convergence with an `expect` line. Where the simulated release has the Recreate strategy's
//! gate on, Recreate sets are drawn too (scripts of other runs are unchanged by it).
//!
//! Owns: the generator. The output is ordinary script text, replayable as a scenario file.

use std::fmt::Write as _;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const SET: &str = "web";
const IMAGES: &[&str] = &["app:v1", "app:v2", "app:v3", "app:v4"];

/// Who plays the script: the simulator (everything), or a real cluster (`ststui play`, the
/// differential check): no pause / step / resume, terminations of at most 5 s and settles of at
/// most 2 minutes, since a cluster plays in real time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    Simulator,
    Cluster,
}

struct Gen {
    profile: Profile,
    rng: ChaCha8Rng,
    out: String,
    replicas: i32,
    start: i32,
    on_delete: bool,
    /// Recreate sets may be drawn (the gate is on); `recreate`: this one is one now.
    allow_recreate: bool,
    recreate: bool,
    paused: bool,
    /// Readiness flaps still open: (operation index at which to close it, ordinal).
    flaps: Vec<(usize, i32)>,
    min_ready: i32,
    /// Ordinals the script made fail.
    failed: std::collections::BTreeSet<i32>,
}

impl Gen {
    fn line(&mut self, text: &str) {
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.rng.random_range(0..items.len())]
    }

    fn duration_ms(&mut self, choices: &[u64]) -> String {
        let ms = choices[self.rng.random_range(0..choices.len())];
        if ms.is_multiple_of(1000) { format!("{}s", ms / 1000) } else { format!("{ms}ms") }
    }

    /// A pod name in (or just past) the set's current range.
    fn pod(&mut self) -> (i32, String) {
        let o = self.start + self.rng.random_range(0..=self.replicas.max(1));
        (o, format!("{SET}-{o}"))
    }

    fn create(&mut self) {
        let start = self.duration_ms(&[0, 250, 500, 1000, 2000]);
        let ready = self.duration_ms(&[0, 250, 1000, 3000]);
        let stop = self.duration_ms(&[0, 500, 1000, 3000]);
        self.line(&format!("kubelet start={start} ready={ready} stop={stop}"));
        self.replicas = self.rng.random_range(0..=4);
        let mut c = format!("create {SET} replicas={} image=app:v1", self.replicas);
        let policy = self.pick(&["OrderedReady", "Parallel"]);
        let _ = write!(c, " policy={policy}");
        self.on_delete = self.rng.random_bool(0.25);
        if self.on_delete {
            c.push_str(" strategy=OnDelete");
        } else if self.allow_recreate && self.rng.random_bool(0.4) {
            self.recreate = true;
            c.push_str(" strategy=Recreate");
        } else {
            if self.rng.random_bool(0.3) {
                let p = self.rng.random_range(0..=self.replicas);
                let _ = write!(c, " partition={p}");
            }
            if self.rng.random_bool(0.3) {
                let m = self.pick(&["1", "2", "3", "50%", "100%"]);
                let _ = write!(c, " maxUnavailable={m}");
            }
        }
        // On a cluster, availability counts from a Ready time stored in whole wall-clock
        // seconds: with sub-second delays, when a pod becomes available is a race with the
        // clock. (The example min-ready-seconds scenario covers it with whole seconds.)
        if self.rng.random_bool(0.3) && self.profile == Profile::Simulator {
            self.min_ready = self.rng.random_range(1..=3);
            let _ = write!(c, " minReadySeconds={}", self.min_ready);
        }
        if self.rng.random_bool(0.2) {
            self.start = self.rng.random_range(1..=3);
            let _ = write!(c, " startOrdinal={}", self.start);
        }
        if self.rng.random_bool(0.5) {
            let deleted = self.pick(&["Retain", "Delete"]);
            let scaled = self.pick(&["Retain", "Delete"]);
            let _ = write!(c, " claims=data whenDeleted={deleted} whenScaled={scaled}");
        }
        if self.rng.random_bool(0.3) {
            let _ = write!(c, " historyLimit={}", self.rng.random_range(0..=4));
        }
        self.line(&c);
    }

    /// One random operation or fault.
    fn operation(&mut self, index: usize) {
        let roll = self.rng.random_range(0..100);
        let text = match roll {
            0..=9 => {
                self.replicas = self.rng.random_range(0..=5);
                format!("scale {SET} {}", self.replicas)
            }
            10..=17 => format!("image {SET} {}", self.pick(IMAGES)),
            // restartedAt has whole seconds: on a cluster, restarts a second apart at least
            // (else whether two make one revision or two is a race with the wall clock).
            18..=20 if self.profile == Profile::Cluster => format!("wait 1s\nrestart {SET}"),
            18..=20 => format!("restart {SET}"),
            21..=23 => format!("undo {SET}"),
            24..=29 if !self.on_delete && !self.recreate => {
                format!("partition {SET} {}", self.rng.random_range(0..=self.replicas + 1))
            }
            // RollingUpdate → OnDelete → Recreate (where allowed) → RollingUpdate.
            30..=32 => {
                let s = match (self.on_delete, self.recreate) {
                    (true, _) if self.allow_recreate => "Recreate",
                    (false, false) => "OnDelete",
                    _ => "RollingUpdate",
                };
                self.on_delete = s == "OnDelete";
                self.recreate = s == "Recreate";
                format!("strategy {SET} {s}")
            }
            33..=35 if !self.on_delete && !self.recreate => {
                format!("maxunavailable {SET} {}", self.pick(&["1", "2", "3", "50%", "100%"]))
            }
            36..=41 if self.profile == Profile::Cluster => {
                format!("wait {}", self.duration_ms(&[370, 1130]))
            }
            36..=41 => self.pause_step_resume(),
            42..=46 => {
                let (o, name) = self.pod();
                self.failed.insert(o);
                format!("fail {name}")
            }
            47..=52 => {
                let (o, name) = self.pod();
                let close = index + self.rng.random_range(1..=4);
                self.flaps.push((close, o));
                format!("unready {name}")
            }
            53..=57 => format!("delete-pod {}", self.pod().1),
            58..=61 => format!("force-delete-pod {}", self.pod().1),
            62..=65 => {
                let stop = match self.profile {
                    Profile::Simulator => self.duration_ms(&[0, 1000, 5000, 20_000]),
                    Profile::Cluster => self.duration_ms(&[0, 1000, 3000, 5000]),
                };
                format!("kubelet stop={stop}")
            }
            66..=67 => {
                let start = self.duration_ms(&[0, 500, 2000]);
                let ready = self.duration_ms(&[0, 500, 2000]);
                format!("kubelet start={start} ready={ready}")
            }
            68..=79 => {
                let max = self.duration_ms(&[1000, 5000, 30_000]);
                format!("settle max={max}")
            }
            _ if self.profile == Profile::Cluster => {
                format!("wait {}", self.duration_ms(&[370, 620, 1130, 2130, 5130]))
            }
            _ => format!("wait {}", self.duration_ms(&[0, 250, 500, 1000, 2000, 5000])),
        };
        self.line(&text);
        // On a cluster the controller reacts between two lines that the simulator runs at the
        // same virtual instant: give every change time to be acted on, at an odd offset from
        // the kubelet's delays (multiples of 250 ms) so the two never race.
        let last = text.lines().last().unwrap_or_default();
        let timed = last.starts_with("wait") || last.starts_with("settle");
        if self.profile == Profile::Cluster && !timed {
            self.line("wait 130ms");
        }
    }

    fn pause_step_resume(&mut self) -> String {
        if !self.paused {
            self.paused = true;
            "pause".to_string()
        } else if self.rng.random_bool(0.6) {
            format!("step {}", self.rng.random_range(1..=3))
        } else {
            self.paused = false;
            "resume".to_string()
        }
    }

    fn close_flaps(&mut self, index: usize) {
        let (due, open): (Vec<_>, Vec<_>) = self.flaps.drain(..).partition(|(at, _)| *at <= index);
        self.flaps = open;
        for (_, o) in due {
            self.line(&format!("ready {SET}-{o}"));
        }
    }

    fn heal_and_expect(&mut self) {
        self.line("# faults stop: the set must converge");
        // Always: the simulator's livelock guard may have paused the controller too.
        if self.profile == Profile::Simulator {
            self.line("resume");
        }
        self.close_flaps(usize::MAX);
        // A Failed pod outside the range never becomes healthy, and OrderedReady scale-down
        // waits for condemned pods in order (upstream processCondemned): the operator removes
        // them. In-range Failed pods are the controller's to replace.
        let end = self.start + self.replicas;
        let condemned: Vec<i32> = self.failed.iter().copied().filter(|o| *o >= end).collect();
        for o in condemned {
            self.line(&format!("delete-pod {SET}-{o}"));
        }
        self.line("kubelet start=1s ready=1s stop=1s");
        self.line(&format!("strategy {SET} RollingUpdate"));
        self.line(&format!("partition {SET} 0"));
        let long = if self.profile == Profile::Simulator { "1h" } else { "2m" };
        self.line(&format!("settle max={long}"));
        // Upstream can stall here without a new event: the minReadySeconds requeue is skipped
        // when available condemned pods make availableReplicas equal spec.replicas, and the pod
        // handler's later AddAfter loses to an earlier pending one (delaying queue). A spec
        // change after the pods are available enqueues the set, as an operator's next edit would.
        self.line(&format!("wait {}s", self.min_ready + 1));
        self.line(&format!("maxunavailable {SET} 2"));
        self.line(&format!("settle max={long}"));
        let n = self.replicas;
        let pods: Vec<String> =
            (self.start..self.start + n).map(|o| format!("{SET}-{o}")).collect();
        self.line(&format!(
            "expect {SET} replicas={n} ready={n} available={n} current={n} updated={n} \
             rolledOut=true blocked=false pods={}",
            pods.join(",")
        ));
    }
}

/// The script of soak run `seed`.
pub fn script(seed: u64) -> String {
    script_for(seed, Profile::Simulator)
}

/// The script of run `seed` for `profile`.
pub fn script_for(seed: u64, profile: Profile) -> String {
    generated(seed, profile, false)
}

/// The script of soak run `seed` on a simulator whose release and gates are `options`: Recreate
/// sets too where its gate is on.
pub fn script_with(seed: u64, options: crate::core::Options) -> String {
    let s = options.semantics;
    generated(seed, Profile::Simulator, s.recreate_known && s.recreate_gate)
}

fn generated(seed: u64, profile: Profile, allow_recreate: bool) -> String {
    let mut g = Gen {
        allow_recreate,
        recreate: false,
        profile,
        rng: ChaCha8Rng::seed_from_u64(seed),
        out: String::new(),
        replicas: 0,
        start: 0,
        on_delete: false,
        paused: false,
        flaps: Vec::new(),
        failed: Default::default(),
        min_ready: 0,
    };
    g.line(&format!("# ststui soak run, seed {seed}"));
    g.create();
    if g.rng.random_bool(0.7) {
        g.line("settle max=30s");
    }
    let operations = g.rng.random_range(8..=20);
    for i in 0..operations {
        g.operation(i);
        g.close_flaps(i);
    }
    g.heal_and_expect();
    g.out
}
