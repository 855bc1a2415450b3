//! A verb's view of one set: the console's cluster backend (the same watchers) feeding an
//! [`AppState`] through the console's reducer, so what a verb reports is what the console
//! would show — mirror, advisor, health — with no code of its own to drift.
//!
//! Owns: waiting for the first complete view, turning what the backend reports into a verb's
//! errors (unreachable, credentials refused, a watch forbidden, the set missing).

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::StatefulSet;

use super::{Exit, VerbError};
use crate::app::{self, AppState, Msg};
use crate::backend::{Backend, BackendEvent, Connection, ObjRef};
use crate::cluster::{ClusterBackend, Target};
use crate::core::Options;

/// The backend, what it reported, and the state the console's reducer made of it.
/// How long a verb waits for the set's Events after its first view.
const SET_EVENTS: Duration = Duration::from_secs(2);

pub struct Session {
    backend: ClusterBackend,
    /// `None`: fed by [`Sessions`] (several sets through one channel).
    rx: Option<Receiver<BackendEvent>>,
    pub state: AppState,
    pub key: ObjRef,
    pub target: Target,
}

impl Session {
    /// Reads the kubeconfig and starts watching the target's set (by name).
    pub fn open(target: Target) -> Result<Session, VerbError> {
        let name = target.name.clone().unwrap_or_default();
        let (tx, rx) = channel();
        let sink = Arc::new(move |ev| {
            let _ = tx.send(ev);
        });
        let backend = ClusterBackend::start(target.clone(), sink)
            .map_err(|e| VerbError::new(Exit::Usage, e))?;
        Ok(Session::of(backend, Some(rx), name, target))
    }

    fn of(
        backend: ClusterBackend,
        rx: Option<Receiver<BackendEvent>>,
        name: String,
        target: Target,
    ) -> Session {
        let key = ObjRef::new(backend.namespace(), name);
        let mut state = AppState::new(backend.capabilities(), Options::default());
        state.selected_set = Some(key.clone());
        Session { backend, rx, state, key, target }
    }

    /// Whether the first complete view is in (listings, the clock, the server's version).
    fn complete(&self) -> bool {
        self.state.synced && self.state.now.is_some() && self.state.server_version.is_some()
    }

    /// Waits for the first complete view (listings, the clock, the server's version) until
    /// `deadline`. An unreachable or failing server is retried meanwhile; what fails at once is
    /// what waiting cannot mend: refused credentials, a kind the verb needs that may not be
    /// read, the set missing. At the deadline: exit 4 while the server is unreachable or
    /// failing, exit 1 (timeout) while a listing is merely slow.
    pub fn sync(&mut self, deadline: Instant) -> Result<&StatefulSet, VerbError> {
        while !self.complete() {
            if Instant::now() >= deadline {
                return Err(self.gave_up());
            }
            self.next(Some(deadline))?;
        }
        self.needed()?;
        self.set_events(deadline.min(Instant::now() + SET_EVENTS));
        self.state.set().ok_or_else(|| {
            let ns = &self.key.namespace;
            VerbError::new(
                Exit::Api,
                format!(
                    "statefulset {} not found in namespace {ns} (kubectl get statefulsets -n {ns} \
                     lists what there is)",
                    self.key.name
                ),
            )
        })
    }

    /// The set's Events and the namespace's disruption budgets start once its pods have listed
    /// (off the console's first frame); a verb waits for them a little (until `deadline`): the
    /// controller's FailedCreate and a budget holding a plan are part of what `explain` says. Optional: unreadable or late, the verb goes on without them.
    fn set_events(&mut self, deadline: Instant) {
        use crate::backend::ObjKind;
        let about = format!("StatefulSet/{}", self.key.name);
        let events = |s: &Session| {
            s.state.unreadable.contains_key(&ObjKind::Event)
                || s.state.listed.iter().any(|(k, scope)| {
                    *k == ObjKind::Event && scope.about.as_deref() == Some(about.as_str())
                })
        };
        // The namespace's disruption budgets too: whether one holds a plan is part of it.
        let budgets = |s: &Session| {
            s.state.unreadable.contains_key(&ObjKind::Budget)
                || s.state.listed.iter().any(|(k, _)| *k == ObjKind::Budget)
        };
        let listed = |s: &Session| events(s) && budgets(s);
        while !listed(self) && Instant::now() < deadline {
            if self.next(Some(deadline)).is_err() {
                return;
            }
        }
    }

    /// Why the first view did not come in time.
    fn gave_up(&self) -> VerbError {
        let at = self.backend.server();
        if let Some((plugin, waited)) = crate::cluster::credential::pending() {
            return VerbError::new(
                Exit::Api,
                format!(
                    "no credentials for {at} before the timeout: the exec credential plugin \
                     {plugin:?} had not answered in {:.0} s (ststui stopped it)",
                    waited.as_secs_f64()
                ),
            );
        }
        if let Some(why) = self.disconnected() {
            return VerbError::new(
                Exit::Api,
                format!("the server at {at} could not be reached until the timeout: {why}"),
            );
        }
        let listing: Vec<String> =
            self.state.listing.iter().map(|(k, n)| format!("{} {n} so far", k.plural())).collect();
        let progress = if listing.is_empty() {
            String::new()
        } else {
            format!(" (listing {})", listing.join(", "))
        };
        VerbError::new(
            Exit::Expectation,
            format!(
                "no complete view of {} before the timeout{progress}: the server answers slowly; \
                 pass a longer --timeout",
                self.key
            ),
        )
    }

    /// The kinds a verb cannot do without: the set, its pods and its revisions (claims and
    /// Events are optional: the verbs say what they could not read).
    pub(super) fn needed(&self) -> Result<(), VerbError> {
        use crate::backend::ObjKind;
        for kind in [ObjKind::Set, ObjKind::Pod, ObjKind::Revision] {
            if let Some(why) = self.state.unreadable.get(&kind) {
                return Err(VerbError::new(Exit::Api, format!("permission denied: {why}")));
            }
        }
        Ok(())
    }

    /// Applies what arrives until `deadline` (the first batch: whatever arrived together), then
    /// ends the batch (the advisor runs). Refused credentials, a refusal the server will repeat
    /// (a 404 on a watch) or a needed kind found unreadable end the verb.
    pub fn next(&mut self, deadline: Option<Instant>) -> Result<(), VerbError> {
        self.pump(deadline, false)
    }

    /// [`Session::next`], a watch error and refused credentials tolerated (the watch retries
    /// with backoff; the state's connection says it): for a plan runner, whose verdicts rest on fresh reads and whose
    /// lease says how long an outage may last.
    pub fn next_lenient(&mut self, deadline: Option<Instant>) -> Result<(), VerbError> {
        self.pump(deadline, true)
    }

    fn pump(&mut self, deadline: Option<Instant>, lenient: bool) -> Result<(), VerbError> {
        let wait = deadline
            .map_or(Duration::from_secs(1), |d| d.saturating_duration_since(Instant::now()));
        let Some(rx) = &self.rx else {
            return Err(VerbError::new(Exit::Api, "a group's session is fed by the group"));
        };
        let mut next = match rx.recv_timeout(wait) {
            Ok(ev) => Some(ev),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(VerbError::new(Exit::Api, "the cluster backend stopped"));
            }
        };
        let mut error = None;
        while let Some(ev) = next {
            if let (BackendEvent::Error(message), None) = (&ev, &error) {
                error = Some(message.clone());
            }
            app::update(&mut self.state, Msg::Backend(ev));
            next = rx.try_recv().ok();
        }
        self.batch_end(error, lenient)
    }

    /// A batch applied: the advisor runs; a needed kind unreadable ends the verb, refused
    /// credentials and a watch error too unless `lenient` (a plan runner authenticates again
    /// and goes on: its writes and fresh reads are retried within its lease's slack, which
    /// ends it when they are refused for longer).
    fn batch_end(&mut self, error: Option<String>, lenient: bool) -> Result<(), VerbError> {
        app::update(&mut self.state, Msg::BatchEnd);
        if let Connection::Unauthorized { error } = &self.state.connection {
            let error = error.strip_suffix(crate::cluster::RECONNECT).unwrap_or(error);
            if !lenient {
                return Err(VerbError::new(Exit::Api, error.to_string()));
            }
            tracing::info!("the watches' credentials were refused (retrying): {error}");
        }
        self.needed()?;
        match error {
            Some(e) if !lenient => Err(VerbError::new(Exit::Api, e)),
            Some(e) => {
                tracing::info!("a watch failed (retrying): {e}");
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Why the server is unreachable or failing, while it is.
    pub fn disconnected(&self) -> Option<String> {
        match &self.state.connection {
            Connection::Unreachable { error, .. } | Connection::Failing { error, .. } => {
                Some(error.clone())
            }
            _ => None,
        }
    }

    /// The set as last seen.
    pub fn set(&self) -> Option<&StatefulSet> {
        self.state.mirror.set(&self.key)
    }

    /// A set in a rollout group's plan is judged with its group (whether the group halted,
    /// whether its runner lives, what holds it): every member is watched as the console's
    /// group view watches them, and waited for until `deadline` (at most 10 s; unseen, the
    /// verdict says it could not see them).
    pub fn see_group(&mut self, deadline: Instant) {
        use crate::backend::{ObjKind, Op, ViewOp};
        let Some(part) = self.set().and_then(|s| crate::plan::group::part::read(s).part().cloned())
        else {
            return;
        };
        let ns = self.key.namespace.clone();
        let members: Vec<ObjRef> = part.sets.iter().map(|n| ObjRef::new(ns.clone(), n)).collect();
        self.backend.execute(Op::View(ViewOp::Group(members.clone())));
        let until = deadline.min(Instant::now() + Duration::from_secs(10));
        let seen = |s: &Session| {
            !s.state.listing.contains_key(&ObjKind::Pod)
                && members.iter().all(|m| s.state.mirror.set(m).is_some())
        };
        while !seen(self) && Instant::now() < until {
            if self.next(Some(until)).is_err() {
                return;
            }
        }
    }
}

/// One set as a verb sees it: its key and the state of the watch that holds it (its own
/// session's, or the one its cluster's members share in [`Sessions`]).
#[derive(Clone, Copy)]
pub struct SetView<'a> {
    pub key: &'a ObjRef,
    pub state: &'a AppState,
}

impl<'a> SetView<'a> {
    /// The set as last seen.
    pub fn set(&self) -> Option<&'a StatefulSet> {
        self.state.mirror.set(self.key)
    }
}

impl Session {
    /// The session's set, as a [`SetView`].
    pub fn view(&self) -> SetView<'_> {
        SetView { key: &self.key, state: &self.state }
    }
}

/// Sessions on several sets (a rollout group's; a fleet's, in several clusters): one session
/// per cluster and namespace, which watches all of its members with one watch per kind
/// (`ClusterBackend::start_groups`), fed through one channel — the connections grow with the
/// clusters, not with the sets.
pub struct Sessions {
    /// One per cluster and namespace; its `key` is its first member's.
    pub views: Vec<Session>,
    /// Each member's set and the session that holds it, in the order given.
    members: Vec<(ObjRef, usize)>,
    rx: Receiver<(usize, BackendEvent)>,
}

impl Sessions {
    /// Starts watching each of `names` in the target's namespace.
    pub fn open(target: &Target, names: &[String]) -> Result<Sessions, VerbError> {
        let targets = names.iter().map(|n| Target { name: Some(n.clone()), ..target.clone() });
        Sessions::open_each(targets.collect())
    }

    /// Starts watching each target's set (a fleet's: one in each cluster), one session for the
    /// targets of each cluster and namespace.
    pub fn open_each(targets: Vec<Target>) -> Result<Sessions, VerbError> {
        let scope = |t: &Target| (t.kubeconfig.clone(), t.context.clone(), t.namespace.clone());
        // Each cluster's targets, in the order they first come.
        let mut clusters: Vec<(Target, Vec<String>)> = Vec::new();
        let mut at = Vec::with_capacity(targets.len());
        for t in &targets {
            let name = t.name.clone().unwrap_or_default();
            match clusters.iter().position(|(c, _)| scope(c) == scope(t)) {
                Some(i) => {
                    clusters[i].1.push(name);
                    at.push(i);
                }
                None => {
                    at.push(clusters.len());
                    clusters.push((t.clone(), vec![name]));
                }
            }
        }
        let (tx, rx) = channel();
        let each: Vec<(Target, Vec<String>, crate::backend::Sink)> = (clusters.iter().enumerate())
            .map(|(i, (t, names))| {
                let tx = tx.clone();
                let sink: crate::backend::Sink = Arc::new(move |ev| {
                    let _ = tx.send((i, ev));
                });
                (t.clone(), names.clone(), sink)
            })
            .collect();
        let backends =
            ClusterBackend::start_groups(each).map_err(|e| VerbError::new(Exit::Usage, e))?;
        let views: Vec<Session> = (backends.into_iter().zip(clusters))
            .map(|(backend, (t, names))| {
                let first = names.first().cloned().unwrap_or_default();
                Session::of(backend, None, first, t)
            })
            .collect();
        let members = (targets.iter().zip(at))
            .map(|(t, i)| {
                (ObjRef::new(views[i].key.namespace.clone(), t.name.clone().unwrap_or_default()), i)
            })
            .collect();
        Ok(Sessions { views, members, rx })
    }

    /// How many members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether there is no member.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Member `i` (in the order given).
    pub fn member(&self, i: usize) -> SetView<'_> {
        let (key, view) = &self.members[i];
        SetView { key, state: &self.views[*view].state }
    }

    /// Every member, in the order given.
    pub fn members(&self) -> impl Iterator<Item = SetView<'_>> {
        (0..self.members.len()).map(|i| self.member(i))
    }

    /// Waits for every cluster's first complete view until `deadline`; a set missing is named.
    pub fn sync(&mut self, deadline: Instant) -> Result<(), VerbError> {
        while !self.views.iter().all(Session::complete) {
            if Instant::now() >= deadline {
                let slow = self.views.iter().position(|s| !s.complete()).unwrap_or(0);
                return Err(self.views[slow].gave_up());
            }
            self.next(Some(deadline), false)?;
        }
        for s in &self.views {
            s.needed()?;
        }
        if let Some(m) = self.members().find(|m| m.set().is_none()) {
            return Err(VerbError::new(
                Exit::Api,
                format!("statefulset {} not found in namespace {}", m.key.name, m.key.namespace),
            ));
        }
        Ok(())
    }

    /// Applies what arrives until `deadline` (at most a second), each cluster's batch ended; a
    /// watch error tolerated when `lenient` (a plan runner's fresh reads and lease decide).
    pub fn next(&mut self, deadline: Option<Instant>, lenient: bool) -> Result<(), VerbError> {
        let wait = deadline
            .map_or(Duration::from_secs(1), |d| d.saturating_duration_since(Instant::now()));
        let mut next = match self.rx.recv_timeout(wait) {
            Ok(ev) => Some(ev),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(VerbError::new(Exit::Api, "the cluster backend stopped"));
            }
        };
        let mut errors: Vec<Option<String>> = vec![None; self.views.len()];
        let mut touched = vec![false; self.views.len()];
        while let Some((i, ev)) = next {
            if let Some(s) = self.views.get_mut(i) {
                if let (BackendEvent::Error(message), None) = (&ev, &errors[i]) {
                    errors[i] = Some(message.clone());
                }
                app::update(&mut s.state, Msg::Backend(ev));
                touched[i] = true;
            }
            next = self.rx.try_recv().ok();
        }
        for (i, s) in self.views.iter_mut().enumerate() {
            if touched[i] {
                s.batch_end(errors[i].take(), lenient)?;
            }
        }
        Ok(())
    }
}
