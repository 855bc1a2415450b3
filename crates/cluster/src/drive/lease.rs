//! One driver at a time: leader election on a `coordination.k8s.io/v1` Lease
//! ([`LEASE_NAME`] in the namespace driven), with client-go's timings ([`Timings`]: lease 15 s,
//! renew deadline 10 s, retry 2 s). A candidate reads the Lease every retry period and
//!
//! - creates it when there is none, or takes it (a replace guarded by the resourceVersion it
//!   read, so of two candidates exactly one wins) when its holder is empty or has not renewed
//!   for a whole lease as this candidate saw it;
//! - renews it while it holds it, and may write only while its last renewal was sent less than
//!   the renew deadline ago ([`Gate::may_write`], asked before every write: a leader stopped by
//!   SIGSTOP, or cut off from the server, stops writing at the deadline — before any standby may
//!   take over — and a woken one finds it may not, instead of writing on an expired lease);
//! - otherwise is a standby, and says who holds the lease, how long ago it last saw a renewal,
//!   and when it takes over ([`Role::Standby`]); it never takes a lease renewed within its
//!   duration.
//!
//! As in client-go, a standby times a holder's lease from when *it* saw the record change (its
//! own monotonic clock), never from the holder's `renewTime`: two machines' clocks may disagree.
//!
//! Written here rather than with kube-lease-manager (0.13, on kube 5): that crate judges a lease
//! by its holder's `renewTime` against the local wall clock (a skewed clock takes a live lease, or
//! waits too long), renews on a grace period instead of fencing at a renew deadline, and keeps
//! the holder and the freshness of its renewal to itself, which a standby's header shows.
//! kube-rs has no leader election of its own (kube-rs/kube#485).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, PostParams};

/// The Lease's name in the namespace driven.
pub const LEASE_NAME: &str = "ststui-statefulset-controller";

/// client-go's leader-election timings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timings {
    /// How long a lease holds after its last renewal (`leaseDurationSeconds`).
    pub lease: Duration,
    /// A leader that has not renewed for this long stops writing (< `lease`).
    pub renew_deadline: Duration,
    /// How often a candidate reads (and a leader renews) the Lease.
    pub retry: Duration,
}

impl Default for Timings {
    fn default() -> Timings {
        Timings {
            lease: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry: Duration::from_secs(2),
        }
    }
}

/// Who this candidate is, as the Lease records it: host, process and context.
pub fn identity(context: &str) -> String {
    format!("{}/ststui-{}/{context}", crate::cluster::hostname(), std::process::id())
}

/// A candidate's role, as the console shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// Not decided yet (the Lease not read).
    Starting,
    /// Holds the lease; writes while its renewals are in time.
    Leader,
    /// Held the lease and missed its renew deadline: writes nothing, says so, and goes on
    /// trying (as a candidate like any other).
    Fenced { why: String },
    /// Another holds it: `holder`, its renewal last seen `seen_ago`, and when this candidate
    /// takes over if nothing changes.
    /// `holder` empty: nobody (the Lease cleared or deleted while another drove), waited out
    /// all the same. `claims`: the lease's length its holder claims, when longer than this
    /// candidate waits (our own lease).
    Standby { holder: String, seen_ago: Duration, takes_over_in: Duration, claims: Option<u64> },
    /// The server serves no Leases (`coordination.k8s.io/v1`; the served simulator does not
    /// yet): this candidate writes without an election, and says so.
    Unelected,
}

/// What the writes ask before each write.
#[derive(Clone)]
pub struct Gate {
    inner: Arc<Mutex<Shared>>,
    timings: Timings,
}

struct Shared {
    /// When the last successful renewal (or the acquire) was sent.
    renewed: Option<Instant>,
    role: Role,
    /// When the last round began (the election's loop is alive).
    round_at: Option<Instant>,
    /// Why the last round could not read or write the Lease (cleared by one that could).
    trouble: Option<String>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Gate({:?})", self.role())
    }
}

impl Gate {
    pub fn new(timings: Timings) -> Gate {
        let shared = Shared { renewed: None, role: Role::Starting, round_at: None, trouble: None };
        Gate { inner: Arc::new(Mutex::new(shared)), timings }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether this candidate may write now: it holds the lease and sent its last renewal less
    /// than the renew deadline ago.
    pub fn may_write(&self) -> bool {
        self.lock().renewed.is_some_and(|r| r.elapsed() < self.timings.renew_deadline)
    }

    /// When the candidate's last round began (`None` before the first): a loop that stops
    /// going round is a dead election (the headless controller's liveness).
    pub fn last_round(&self) -> Option<Instant> {
        self.lock().round_at
    }

    /// Why the last round could not read or write the Lease (a namespace that does not exist,
    /// a permission denied, no connection); `None` once one could.
    pub fn trouble(&self) -> Option<String> {
        self.lock().trouble.clone()
    }

    /// The timings the candidate runs on.
    pub fn timings(&self) -> Timings {
        self.timings
    }

    /// The role now (a leader past its deadline reads as fenced at once).
    pub fn role(&self) -> Role {
        let s = self.lock();
        match (&s.role, s.renewed) {
            (Role::Leader, Some(r)) if r.elapsed() >= self.timings.renew_deadline => {
                Role::Fenced { why: deadline_words(r.elapsed(), self.timings) }
            }
            (role, _) => role.clone(),
        }
    }
}

fn deadline_words(since: Duration, t: Timings) -> String {
    format!(
        "the lease was last renewed {} s ago, past the {} s renew deadline: writing nothing \
         until it is held again",
        since.as_secs(),
        t.renew_deadline.as_secs()
    )
}

/// A standby's words for its header: who drives and, once its renewals are late, when this
/// one takes over.
pub fn standby_words(
    holder: &str,
    seen_ago: Duration,
    takes_over_in: Duration,
    claims: Option<u64>,
    t: Timings,
) -> String {
    // A forged lease length is said, with what is waited instead.
    let claimed = claims.map_or_else(String::new, |c| {
        format!(" (its Lease claims a {c} s lease; waited at most {} s)", t.lease.as_secs())
    });
    if holder.is_empty() {
        return format!(
            "nobody drives (the Lease was cleared or deleted while another drove): takes over in \
             {} s unless the last driver takes it again{claimed}",
            takes_over_in.as_secs()
        );
    }
    let holder = crate::text::escape_controls(holder);
    if seen_ago <= 2 * t.retry {
        return format!("{holder} drives{claimed}");
    }
    format!(
        "{holder} drives, no renewal seen for {} s: takes over in {} s{claimed}",
        seen_ago.as_secs(),
        takes_over_in.as_secs()
    )
}

/// What a candidate knows of the Lease between two reads: the record last seen (`None`: no
/// Lease), when (on its own clock) it last changed, and whether the last holder it saw was
/// itself.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    record: Option<(String, Option<Timestamp>, i32)>,
    at: Option<Instant>,
    mine: bool,
}

/// What to do after a read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// There is no Lease: create it.
    Create,
    /// Its holder is empty or lapsed: take it (guarded by the resourceVersion read).
    Take,
    /// It is this candidate's: renew it.
    Renew,
    /// Another holds it (`holder`; empty: nobody, its holder cleared or the Lease deleted by
    /// someone while another drove): wait (a standby). `claims`: the lease's length its
    /// holder claims when it is longer than this candidate waits ([`decide`]'s `most`).
    Wait { holder: String, seen_ago: Duration, takes_over_in: Duration, claims: Option<u64> },
}

/// Decides from a read of the Lease (`None`: there is none) at `now`; notes in `observed` when
/// the record changed. A holder's lease is timed from when this candidate saw the record
/// change, for the lease's length as the Lease says but never longer than `most` (our own
/// lease: a forged `leaseDurationSeconds` must not stall every candidate).
///
/// A vacant Lease (no holder, or none at all) is taken at once only when nobody else can be
/// driving: on this candidate's first read, when the last holder it saw was itself, or when the
/// holder gave it up (a release writes a 1 s lease). Cleared or deleted by a third party while
/// another held it, it is waited out like a held one: the one who drove may not have read it yet
/// and still writes, so taking it now would make two drivers.
pub fn decide(
    me: &str,
    lease: Option<&Lease>,
    observed: &mut Observed,
    now: Instant,
    most: Duration,
) -> Step {
    let spec = lease.map(|l| l.spec.clone().unwrap_or_default());
    let first_sight = observed.at.is_none() && observed.record.is_none();
    let holder = spec.as_ref().and_then(|s| s.holder_identity.clone()).unwrap_or_default();
    let record = spec.as_ref().map(|s| {
        (holder.clone(), s.renew_time.clone().map(|t| t.0), s.lease_transitions.unwrap_or(0))
    });
    if observed.record != record {
        observed.record = record;
        observed.at = Some(now);
    }
    if holder == me {
        observed.mine = true;
        return Step::Renew;
    }
    let claimed = spec.as_ref().and_then(|s| s.lease_duration_seconds).unwrap_or(15);
    let claimed = Duration::from_secs(u64::try_from(claimed).unwrap_or(15));
    let lease_for = claimed.min(most);
    let claims = (claimed > most).then_some(claimed.as_secs());
    let seen_ago = now.saturating_duration_since(observed.at.unwrap_or(now));
    let vacant_step = if spec.is_some() { Step::Take } else { Step::Create };
    if holder.is_empty() {
        let released = spec.is_some() && claimed <= Duration::from_secs(1);
        if first_sight || observed.mine || released || seen_ago >= lease_for {
            return vacant_step;
        }
    } else {
        observed.mine = false;
        if seen_ago >= lease_for {
            return Step::Take;
        }
    }
    Step::Wait { holder, seen_ago, takes_over_in: lease_for - seen_ago, claims }
}

/// A candidate for the Lease in `namespace`.
pub struct Elector {
    api: Api<Lease>,
    client: kube::Client,
    me: String,
    gate: Gate,
    observed: Observed,
    /// The server serves no Leases: writing without an election.
    unelected: bool,
}

impl Elector {
    pub fn new(client: kube::Client, namespace: &str, me: String, gate: Gate) -> Elector {
        Elector {
            api: Api::namespaced(client.clone(), namespace),
            client,
            me,
            gate,
            observed: Observed::default(),
            unelected: false,
        }
    }

    /// Whether the server serves Leases at all (a 404 from its discovery says it does not).
    async fn serves_leases(&self) -> bool {
        match self.client.list_api_group_resources("coordination.k8s.io/v1").await {
            Err(kube::Error::Api(s)) if s.code == 404 => false,
            Ok(list) => list.resources.iter().any(|r| r.name == "leases"),
            Err(_) => true,
        }
    }

    /// Reads the Lease once and acts on it; the role after.
    pub async fn round(&mut self) -> Role {
        let sent = Instant::now();
        self.gate.lock().round_at = Some(sent);
        if self.unelected {
            let mut s = self.gate.lock();
            s.renewed = Some(sent);
            s.role = Role::Unelected;
            return Role::Unelected;
        }
        let read = match self.api.get_opt(LEASE_NAME).await {
            Ok(l) => l,
            Err(e) => return self.missed(&crate::cluster::trouble::brief(&e)),
        };
        let t = self.gate.timings;
        let step = decide(&self.me, read.as_ref(), &mut self.observed, sent, t.lease);
        if let Some(role) = self.fence_on(&step) {
            return role;
        }
        let result = match step {
            Step::Wait { holder, seen_ago, takes_over_in, claims } => {
                let role = Role::Standby { holder, seen_ago, takes_over_in, claims };
                let mut s = self.gate.lock();
                s.trouble = None;
                s.renewed = None;
                s.role = role.clone();
                return role;
            }
            Step::Create => {
                let lease = self.record(None, 0);
                self.api.create(&PostParams::default(), &lease).await.map(|_| ())
            }
            Step::Take | Step::Renew => {
                let old = read.unwrap_or_default();
                let spec = old.spec.clone().unwrap_or_default();
                let transitions = spec.lease_transitions.unwrap_or(0);
                let mut lease = if step == Step::Renew {
                    self.record(spec.acquire_time, transitions)
                } else {
                    self.record(None, transitions + 1)
                };
                lease.metadata.resource_version = old.metadata.resource_version;
                self.api.replace(LEASE_NAME, &PostParams::default(), &lease).await.map(|_| ())
            }
        };
        match result {
            Ok(()) => {
                // Ours now, whether or not a read has shown it yet.
                self.observed.mine = true;
                let mut s = self.gate.lock();
                s.trouble = None;
                s.renewed = Some(sent);
                s.role = Role::Leader;
                Role::Leader
            }
            // No such resource: a server without Leases.
            Err(kube::Error::Api(s)) if s.code == 404 && !self.serves_leases().await => {
                tracing::warn!("the server serves no Leases: driving without an election");
                self.unelected = true;
                let mut g = self.gate.lock();
                g.renewed = Some(sent);
                g.role = Role::Unelected;
                Role::Unelected
            }
            // Another candidate wrote first: read again next round. A renewal refused so was
            // overtaken by someone else's write: this driver stops writing at once.
            Err(kube::Error::Api(s)) if s.code == 409 => {
                let mut g = self.gate.lock();
                if step == Step::Renew {
                    g.renewed = None;
                    g.role = Role::Fenced {
                        why: "the Lease was written by someone else between this driver's read \
                              and its renewal: writing nothing until it holds it again"
                            .into(),
                    };
                } else if g.renewed.is_some_and(|r| r.elapsed() >= t.renew_deadline) {
                    g.renewed = None;
                }
                g.role.clone()
            }
            Err(e) => self.missed(&crate::cluster::trouble::brief(&e)),
        }
    }

    /// A leader that reads a Lease not naming it — none, its holder cleared, another's — stops
    /// writing at once (client-go's rule: fence on every read that does not name us, not only
    /// on a failed renewal), says so, and writes again only once its own acquire succeeds
    /// (the next round: [`decide`] lets the last holder retake a vacant Lease at once).
    fn fence_on(&self, step: &Step) -> Option<Role> {
        let mut s = self.gate.lock();
        if *step == Step::Renew || s.renewed.is_none() {
            return None;
        }
        let what = match step {
            Step::Create => "the Lease is gone (deleted)".to_string(),
            Step::Wait { holder, .. } if !holder.is_empty() => {
                format!("the Lease names {}", crate::text::escape_controls(holder))
            }
            _ => "the Lease names no holder (cleared)".to_string(),
        };
        tracing::warn!("{what}: this driver stops writing");
        let role = Role::Fenced {
            why: format!("{what}: writing nothing until this driver holds it again"),
        };
        s.renewed = None;
        s.role = role.clone();
        Some(role)
    }

    /// A read or write failed: a leader stays one until its renew deadline.
    fn missed(&self, why: &str) -> Role {
        let t = self.gate.timings;
        let mut s = self.gate.lock();
        s.trouble = Some(why.to_string());
        match s.renewed {
            Some(r) if r.elapsed() < t.renew_deadline => Role::Leader,
            Some(r) => {
                let role =
                    Role::Fenced { why: format!("{} ({why})", deadline_words(r.elapsed(), t)) };
                s.renewed = None;
                s.role = role.clone();
                role
            }
            None => s.role.clone(),
        }
    }

    /// The Lease as this candidate holds it, renewed now (its wall clock: for people reading
    /// it; candidates time it on their own clocks).
    fn record(&self, acquired: Option<MicroTime>, transitions: i32) -> Lease {
        let now = MicroTime(Timestamp::now());
        let secs = i32::try_from(self.gate.timings.lease.as_secs()).unwrap_or(15);
        Lease {
            metadata: ObjectMeta { name: Some(LEASE_NAME.into()), ..Default::default() },
            spec: Some(LeaseSpec {
                holder_identity: Some(self.me.clone()),
                lease_duration_seconds: Some(secs),
                acquire_time: acquired.or_else(|| Some(now.clone())),
                renew_time: Some(now),
                lease_transitions: Some(transitions),
                ..Default::default()
            }),
        }
    }

    /// Gives the lease up (quitting): an empty holder, which a standby takes at once.
    pub async fn release(&mut self) {
        if self.unelected || !self.gate.may_write() {
            return;
        }
        self.gate.lock().renewed = None;
        let Ok(Some(mut lease)) = self.api.get_opt(LEASE_NAME).await else { return };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(self.me.as_str()) {
            return;
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        let _ = self.api.replace(LEASE_NAME, &PostParams::default(), &lease).await;
    }

    /// Runs rounds every retry period, reporting each change of role or of trouble (and every
    /// round of a standby: how fresh the holder's renewal is moves), until `stop` fires (or is
    /// dropped): then gives the lease up if it holds it.
    pub async fn run(
        mut self,
        mut report: impl FnMut(&Role) + Send,
        mut stop: tokio::sync::oneshot::Receiver<()>,
    ) {
        let mut last: Option<Role> = None;
        let mut last_trouble: Option<String> = None;
        loop {
            let role = self.round().await;
            let trouble = self.gate.trouble();
            let troubled = trouble != last_trouble;
            last_trouble = trouble;
            let changed = match (&last, &role) {
                (Some(Role::Standby { holder: a, .. }), Role::Standby { holder: b, .. }) => a != b,
                (Some(a), b) => std::mem::discriminant(a) != std::mem::discriminant(b),
                (None, _) => true,
            };
            if changed || troubled || matches!(role, Role::Standby { .. }) {
                report(&role);
            }
            last = Some(role);
            tokio::select! {
                () = tokio::time::sleep(self.gate.timings.retry) => {}
                _ = &mut stop => break,
            }
        }
        self.release().await;
    }
}

#[cfg(test)]
#[path = "lease_tests.rs"]
mod tests;
