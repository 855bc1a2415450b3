//! `ststui play SCRIPT`: plays a scenario (`spec/scenario.md`) against a real cluster, in real
//! time, and prints the same timeline as `ststui sim --headless` (text or JSONL), `expect`
//! lines included. Rehearse a rollout script on a test cluster; the differential check plays
//! every scenario both here and on the simulator.
//!
//! What a cluster cannot do is refused before anything runs, naming the line: `pause`,
//! `resume`, `step` and the `api-*` faults need the simulator; `kubelet`, `fail`, `unready` and
//! `ready` need a cluster whose kubelet obeys them (`ststui fake-kubelet`, which registers a
//! node labelled `ststui.dev/fake-kubelet=true`). Names without a namespace (or in `default`)
//! are played in `-n`'s namespace (the context's by default).
//!
//! `wait` waits in real time. `settle [max=]` waits until nothing is starting or terminating,
//! every set's spec has been observed by the controller, no set's status counts a Ready pod
//! that is not yet available (minReadySeconds), and nothing has changed for a quiet period (1.5
//! s plus the longest kubelet delay), or until `max`.
//!
//! Exit codes: 0 every `expect` held, 1 one did not, 2 a bad script or a line the cluster
//! cannot play, 4 the cluster cannot be used (kubeconfig, unreachable, forbidden listing).

mod drive;
mod exec;
pub mod trace;
pub mod world;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::backend::{Event, EventKind};
use crate::cluster::Target;
use crate::cluster::write::Writer;
use crate::drive::WatchFailed;
use crate::sim::scenario::{self, Command, Line, Script, build};
use crate::sim::timeline::{Format, render};
use drive::start_driver;
use world::{Change, World};

/// Every `expect` held.
pub const EXIT_OK: i32 = 0;
/// An `expect` did not hold.
pub const EXIT_FAILED: i32 = 1;
/// A bad script, or a line this cluster cannot play.
pub const EXIT_BAD_INPUT: i32 = 2;
/// The cluster cannot be used.
pub const EXIT_CLUSTER: i32 = 4;

/// The server's version once it answers, retrying an unreachable or failing server until
/// `deadline` (as the verbs do); what failed last when it never did, or at once what waiting
/// cannot mend (credentials, a permission).
async fn reachable(session: &crate::cluster::Session, deadline: Instant) -> Result<String, String> {
    use crate::cluster::trouble;
    let mut backoff = crate::cluster::QuickBackoff::default();
    loop {
        match session.client.apiserver_version().await {
            Ok(v) => return Ok(v.git_version),
            Err(e) if trouble::of(&e).transient() => {
                let wait = backoff.next().unwrap_or(Duration::from_secs(4));
                if Instant::now() + wait >= deadline {
                    return Err(format!(
                        "the server at {} could not be reached before the timeout: {} ({})",
                        session.server,
                        trouble::words(trouble::of(&e)),
                        trouble::brief(&e)
                    ));
                }
                tokio::time::sleep(wait).await;
            }
            Err(e) => {
                return Err(format!(
                    "the server at {} refused: {}",
                    session.server,
                    trouble::brief(&e)
                ));
            }
        }
    }
}

/// Why a line cannot be played on a cluster, if it cannot (`drive`: ststui's controller drives
/// it, so it can be paused and stepped).
pub fn cluster_refusal(command: &Command, drive: bool) -> Option<&'static str> {
    match command {
        Command::Pause | Command::Resume | Command::Step(_) if drive => None,
        Command::Pause | Command::Resume | Command::Step(_) => Some(
            "needs the simulator: a real cluster's controller cannot be paused or stepped \
             (play it with `ststui sim --script`, or drive the cluster with `ststui play --drive` \
             where kube-controller-manager runs without its StatefulSet controller)",
        ),
        Command::Gc { .. } => Some(
            "needs the simulator: a cluster's garbage collector runs at its own pace (play it \
             with `ststui sim --script`)",
        ),
        Command::BrokenImage { .. } => Some(
            "needs the simulator: a broken image breaks the pods already running it, which \
             the fake kubelet does not model (use `kubelet broken=IMG` for new pods, or play \
             it with `ststui sim --script`)",
        ),
        Command::Quota { .. } => Some(
            "needs the simulator: on a cluster a quota is a ResourceQuota object (kubectl create \
             quota NAME --hard=pods=N)",
        ),
        Command::Storage { .. } => Some(
            "needs the simulator: a cluster's storage is provisioned by its own provisioner \
             (play it with `ststui sim --script`)",
        ),
        Command::Gate(_) => Some(
            "needs the simulator: a gate line says how a rehearsed gate answers; on a cluster \
             your gates run (`ststui rollout NAME --pre-delete GATE --post-ready GATE`)",
        ),
        Command::Rollout(_) | Command::Approve { .. } => Some(
            "needs the simulator: on a cluster a plan is run by `ststui rollout NAME --steps …` \
             (and passed with `ststui approve NAME`), which hold a lease and run your checks",
        ),
        Command::Abort { .. } => Some(
            "needs the simulator: on a cluster the forced rollback is `ststui abort NAME` (it \
             shows what it will do and asks)",
        ),
        Command::Api(_) => Some(
            "needs the simulator: API faults are injected into the simulated API server \
             (play it with `ststui sim --script`)",
        ),
        // Every other line plays on a cluster: named one by one, so a new simulator-only line
        // is a compile error here until it says what it needs.
        Command::Create(_)
        | Command::Apply(_)
        | Command::Image { .. }
        | Command::Scale { .. }
        | Command::Partition { .. }
        | Command::Strategy { .. }
        | Command::MaxUnavailable { .. }
        | Command::Undo { .. }
        | Command::Restart { .. }
        | Command::Delete { .. }
        | Command::DeletePod { .. }
        | Command::Evict { .. }
        | Command::Budget(_)
        | Command::DeleteBudget { .. }
        | Command::Fail { .. }
        | Command::SetReady { .. }
        | Command::Kubelet(_)
        | Command::Freeze { .. }
        | Command::Wait(_)
        | Command::Settle { .. }
        | Command::Expect { .. } => None,
    }
}

/// Whether the line needs a kubelet that obeys the scenario (`ststui fake-kubelet`).
pub fn needs_fake_kubelet(command: &Command) -> bool {
    matches!(command, Command::Kubelet(_) | Command::Fail { .. } | Command::SetReady { .. })
}

/// Moves names in the default namespace to `ns`; returns every namespace the lines name.
fn remap(script: &mut Script, ns: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for line in &mut script.lines {
        if let Some(n) = line.command.name_mut() {
            if n.namespace == scenario::DEFAULT_NAMESPACE {
                n.namespace = ns.to_string();
            }
            used.insert(n.namespace.clone());
        }
    }
    used
}

fn bad(file: &str, line: &Line, why: &str) -> String {
    format!("{file}:{}: `{}` {why}", line.number, line.text)
}

/// Why a play does not start: the caller's exit code follows from which.
#[derive(Debug, thiserror::Error)]
enum Refused {
    /// The script cannot be read, or names what this cluster cannot play (exit 2).
    #[error("bad script: {0}")]
    Script(#[from] scenario::ScriptError),
    #[error("{0}")]
    Input(String),
    /// The cluster cannot be used (exit 4).
    #[error("{0}")]
    Cluster(String),
}

impl Refused {
    fn exit_code(&self) -> i32 {
        match self {
            Refused::Script(_) | Refused::Input(_) => EXIT_BAD_INPUT,
            Refused::Cluster(_) => EXIT_CLUSTER,
        }
    }
}

/// Runs `ststui play`; returns the exit code.
pub fn run(
    script_path: &std::path::Path,
    format: Format,
    target: &Target,
    timeout: Duration,
    drive: bool,
) -> i32 {
    let file = script_path.display().to_string();
    let played = load(script_path, &file, drive).and_then(|(script, manifests)| {
        let runtime = crate::runtime::build("client", crate::runtime::Workers::Threads(2))
            .map_err(|e| Refused::Cluster(e.to_string()))?;
        runtime.block_on(play_on(script, manifests, file, (format, target, timeout, drive)))
    });
    played.unwrap_or_else(|e| {
        crate::text::err_line(&format!("ststui: {e}"));
        e.exit_code()
    })
}

/// Sets of each `apply` line's manifest, by line number.
type Manifests = BTreeMap<usize, Vec<k8s_openapi::api::apps::v1::StatefulSet>>;

/// The script and its manifests, read before anything runs; a line the cluster cannot play is
/// refused here, naming it.
fn load(
    script_path: &std::path::Path,
    file: &str,
    drive: bool,
) -> Result<(Script, Manifests), Refused> {
    let script = scenario::parse_file(script_path)?;
    if let Some((line, why)) =
        script.lines.iter().find_map(|l| cluster_refusal(&l.command, drive).map(|w| (l, w)))
    {
        return Err(Refused::Input(bad(file, line, why)));
    }
    let mut manifests = BTreeMap::new();
    for line in &script.lines {
        if let Command::Apply(path) = &line.command {
            let m = crate::sim::manifest::load(path).map_err(|e| {
                Refused::Input(format!("bad script: {file}:{}: apply: {e}", line.number))
            })?;
            for w in &m.warnings {
                crate::text::err_line(&format!("ststui: warning: {w}"));
            }
            manifests.insert(line.number, m.sets);
        }
    }
    Ok((script, manifests))
}

/// Connects, checks what the script needs of the cluster, starts the watches (or the
/// controller, `--drive`) and plays.
async fn play_on(
    mut script: Script,
    mut manifests: Manifests,
    file: String,
    (format, target, timeout, drive): (Format, &Target, Duration, bool),
) -> Result<i32, Refused> {
    let session =
        crate::cluster::session(target).await.map_err(|e| Refused::Cluster(e.to_string()))?;
    let deadline = Instant::now() + timeout;
    let version = reachable(&session, deadline).await.map_err(Refused::Cluster)?;
    let mut namespaces = remap(&mut script, &session.namespace);
    namespaces.insert(session.namespace.clone());
    for sets in manifests.values_mut() {
        for s in sets {
            let ns = s.metadata.namespace.get_or_insert_with(|| session.namespace.clone());
            if ns == scenario::DEFAULT_NAMESPACE {
                *ns = session.namespace.clone();
            }
        }
    }
    if let Some(line) = script.lines.iter().find(|l| needs_fake_kubelet(&l.command)) {
        fake_kubelet_present(&session, &file, line).await?;
    }
    for sets in manifests.values() {
        namespaces.extend(sets.iter().filter_map(|s| s.metadata.namespace.clone()));
    }
    let identity = crate::cluster::connect_identity(&session).await;
    let writer = Writer {
        client: session.client.clone(),
        identity: std::sync::Arc::new(std::sync::Mutex::new(identity)),
        read_back: crate::cluster::READ_BACK,
    };
    let release = crate::core::Version::for_server(&version).0;
    if let Some(why) = target.feature_gates.refused_by(release).filter(|_| drive) {
        return Err(Refused::Input(why));
    }
    // Driving, ststui's controller has the gates given; watching, the cluster's are unknown
    // (the Recreate gate is taken as on where the release has it).
    let options = if drive {
        crate::core::Options::for_server(&version, &target.feature_gates)
    } else {
        crate::core::Options::watching(release)
    };
    let ns: Vec<String> = namespaces.into_iter().collect();
    let mut player = ClusterPlayer {
        world: World::new(ns.len() * 4),
        exec: exec::Exec::new(writer, ns.clone(), manifests),
        start: Instant::now(),
        format,
        options,
        file,
        last_error: None,
        drive: None,
    };
    let (tx, rx) = mpsc::channel(1024);
    if drive {
        if ns.len() > 1 {
            let others: Vec<_> = ns.iter().filter(|n| **n != session.namespace).cloned().collect();
            return Err(Refused::Input(format!(
                "--drive drives one namespace ({}); the script also names {}",
                session.namespace,
                others.join(", ")
            )));
        }
        let refused = |e: String| Refused::Cluster(e);
        crate::drive::access::may_drive(&session, &session.namespace)
            .await
            .map_err(|e| refused(e.to_string()))?;
        let driving = start_driver(&session, &player, tx.clone()).await;
        player.drive = Some(driving.map_err(refused)?);
    } else {
        // With --drive the namespace is read through the controller's own watches.
        let handle = tokio::runtime::Handle::current();
        for n in &ns {
            crate::drive::watch_namespace(&handle, &session.client, n, None, Some(&tx));
        }
    }
    drop(tx);
    let code = player.play(&script, rx, deadline).await;
    if let Some(d) = player.drive.take() {
        d.finish().await;
    }
    Ok(code)
}

/// Refuses a script with a `kubelet`, `fail`, `unready` or `ready` line unless a fake kubelet
/// serves the cluster (a node labelled as `ststui fake-kubelet` labels its node).
async fn fake_kubelet_present(
    session: &crate::cluster::Session,
    file: &str,
    line: &Line,
) -> Result<(), Refused> {
    let nodes: Api<Node> = Api::all(session.client.clone());
    let lp = ListParams::default().labels(&format!("{}=true", crate::fakelet::plan::NODE_LABEL));
    let why = match nodes.list(&lp).await {
        Ok(l) if !l.items.is_empty() => return Ok(()),
        Err(e) => format!("(cannot list nodes: {})", crate::cluster::trouble::brief(&e)),
        Ok(_) => format!("(no node labelled {}=true)", crate::fakelet::plan::NODE_LABEL),
    };
    let needs = format!(
        "needs a cluster whose kubelet obeys the scenario: run `ststui fake-kubelet` against it \
         {why}"
    );
    Err(Refused::Input(bad(file, line, &needs)))
}

struct ClusterPlayer {
    world: World,
    exec: exec::Exec,
    start: Instant,
    format: Format,
    options: crate::core::Options,
    file: String,
    /// The last watch error said (a repeat is not said again).
    last_error: Option<WatchFailed>,
    /// `--drive`: ststui's controller and what it reports.
    drive: Option<drive::Driving>,
}

impl ClusterPlayer {
    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn emit(&self, kind: EventKind) {
        let line = render(&Event { t_ms: self.now(), kind }, self.format);
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    fn take(&mut self, msg: Result<Change, WatchFailed>) {
        match msg {
            Ok(change) => {
                let now = self.now();
                let driven = self.drive.is_some();
                for kind in self.world.apply(change, now) {
                    // Driving, the controller's actions are its own report, not inferred.
                    if !(driven && crate::drive::controller_line(&kind)) {
                        self.emit(kind);
                    }
                }
            }
            Err(e) => {
                // Said once while it repeats (the watchers retry every few seconds).
                if self.last_error.as_ref() != Some(&e) {
                    crate::text::err_line(&format!("ststui: {e} (retrying)"));
                    self.last_error = Some(e);
                }
            }
        }
    }

    /// Takes in watch events until `deadline`, or until `done` says so (checked after each
    /// event and at least every 100 ms). `false` when the watches ended.
    async fn pump(
        &mut self,
        rx: &mut mpsc::Receiver<Result<Change, WatchFailed>>,
        deadline: Instant,
        done: impl Fn(&Self) -> bool,
    ) -> bool {
        loop {
            if done(self) || Instant::now() >= deadline {
                return true;
            }
            let tick = (Instant::now() + Duration::from_millis(100)).min(deadline);
            tokio::select! {
                msg = rx.recv() => match msg {
                    Some(m) => self.take(m),
                    None => return false,
                },
                Some(out) = drive::next(&mut self.drive) => self.take_drive(out),
                () = tokio::time::sleep_until(tick) => {}
            }
        }
    }

    /// How long nothing must change before `settle` ends: past the longest kubelet delay, with
    /// a margin for the controller's own latency. (Availability is waited for by
    /// [`World::busy`], whose status counts say when it is still to come.)
    fn quiet_ms(&self) -> u64 {
        let k = &self.exec.kubelet;
        1500 + k.start_ms.max(k.ready_ms).max(k.stop_ms)
    }

    async fn play(
        &mut self,
        script: &Script,
        mut rx: mpsc::Receiver<Result<Change, WatchFailed>>,
        deadline: Instant,
    ) -> i32 {
        let listed = self.pump(&mut rx, deadline, |p| p.world.unlisted == 0).await;
        if !listed || self.world.unlisted > 0 {
            let why = self.last_error.as_ref().map(|e| format!(": {e}")).unwrap_or_default();
            crate::text::err_line(&format!(
                "ststui: the cluster's objects could not be listed before the timeout{why}"
            ));
            return EXIT_CLUSTER;
        }
        if self.drive.is_some() {
            self.pump(&mut rx, deadline, |p| {
                p.drive.as_ref().is_none_or(|d| d.started || d.other.is_some())
            })
            .await;
            if let Some(code) = self.drive_refused() {
                return code;
            }
        }
        let mut failures = Vec::new();
        let mut expects = 0;
        // The script's clock: the sum of its waits since the last line that waited for
        // something (a settle, a step). A `wait` ends on it, not DUR after the wait began, so
        // the time the lines' own API calls take does not push later lines later and later
        // against what the cluster does meanwhile (what the simulator runs at one instant
        // takes a few milliseconds here).
        let mut clock = Instant::now();
        for line in &script.lines {
            while let Ok(m) = rx.try_recv() {
                self.take(m);
            }
            self.emit(EventKind::Command { line: line.number, text: line.text.clone() });
            if let Some(code) = self.drive_refused() {
                return code;
            }
            match &line.command {
                Command::Pause | Command::Resume | Command::Step(_) => {
                    self.control(&line.command, &mut rx).await;
                    clock = Instant::now();
                }
                Command::Wait(ms) => {
                    clock += Duration::from_millis(*ms);
                    self.pump(&mut rx, clock, |_| false).await;
                }
                Command::Settle { max_ms } => {
                    let until = Instant::now() + Duration::from_millis(*max_ms);
                    self.pump(&mut rx, until, |p| {
                        // A paused controller observes nothing: only the pods' own motion
                        // counts (a pod the kubelet is still starting or stopping).
                        p.world.busy(p.paused()).is_none()
                            && p.now().saturating_sub(p.world.last_change) >= p.quiet_ms()
                    })
                    .await;
                    clock = Instant::now();
                }
                Command::Expect { set, checks } => {
                    let observed = self.world.observe(&set.as_ref(), &self.options);
                    let (ok, detail) = build::judge(observed, set, checks);
                    expects += 1;
                    if !ok {
                        failures.push((line.number, line.text.clone(), detail.clone()));
                    }
                    self.emit(EventKind::Expect { line: line.number, ok, detail });
                }
                other => self.perform(line, other).await,
            }
        }
        if let Some(code) = self.drive_refused() {
            return code;
        }
        self.verdict(&failures, expects)
    }

    /// Carries out a line that changes the cluster; a failure is the line's `error` event.
    async fn perform(&mut self, line: &Line, command: &Command) {
        let deleting = match command {
            Command::DeletePod { pod, .. } | Command::Evict { pod } => Some(pod.as_ref()),
            _ => None,
        };
        if let Some(pod) = &deleting {
            self.world.deleted_by_script(pod.clone());
        }
        let result = self.exec.perform(line.number, command).await;
        let now = self.now();
        self.world.touched(now);
        if let (Err(_), Some(pod)) = (&result, &deleting) {
            self.world.deletion_refused(pod);
        }
        if let Err(failed) = result {
            let message = failed.to_string();
            self.emit(EventKind::Error { line: Some(line.number), message });
        }
    }

    /// The failed expectations said on stderr; the exit code.
    fn verdict(&self, failures: &[(usize, String, String)], expects: usize) -> i32 {
        for (number, text, detail) in failures {
            crate::text::err_line(&format!("{}:{number}: expect failed: {text}", self.file));
            crate::text::err_line(&format!("    {detail}"));
        }
        if failures.is_empty() {
            EXIT_OK
        } else {
            crate::text::err_line(&format!(
                "ststui: {} of {expects} expectations failed",
                failures.len()
            ));
            EXIT_FAILED
        }
    }
}
