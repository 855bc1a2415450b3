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
pub struct Session {
    backend: ClusterBackend,
    rx: Receiver<BackendEvent>,
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
        let key = ObjRef::new(backend.namespace(), name);
        let mut state = AppState::new(backend.capabilities(), Options::default());
        state.selected_set = Some(key.clone());
        Ok(Session { backend, rx, state, key, target })
    }

    /// Waits for the first complete view (listings, the clock, the server's version); fails
    /// when the server cannot be reached or refuses, or the set does not exist.
    pub fn sync(&mut self, timeout: Duration) -> Result<&StatefulSet, VerbError> {
        let deadline = Instant::now() + timeout;
        while !(self.state.synced
            && self.state.now.is_some()
            && self.state.server_version.is_some())
        {
            if let Some(why) = self.disconnected() {
                let at = self.backend.server();
                return Err(VerbError::new(
                    Exit::Api,
                    format!("cannot reach the server at {at}: {why} (is the context right?)"),
                ));
            }
            if Instant::now() >= deadline {
                return Err(VerbError::new(
                    Exit::Api,
                    format!(
                        "no complete view of {} within {} s: the server answers too slowly",
                        self.key,
                        timeout.as_secs()
                    ),
                ));
            }
            self.next(Some(deadline))?;
        }
        self.state.set().ok_or_else(|| {
            VerbError::new(
                Exit::Api,
                format!(
                    "statefulset {} not found in namespace {} (kubectl get statefulsets -n {} \
                     lists what there is)",
                    self.key.name, self.key.namespace, self.key.namespace
                ),
            )
        })
    }

    /// Applies what arrives until `deadline` (the first batch: whatever arrived together), then
    /// ends the batch (the advisor runs). A refused watch or refused credentials fail.
    pub fn next(&mut self, deadline: Option<Instant>) -> Result<(), VerbError> {
        let wait = deadline
            .map_or(Duration::from_secs(1), |d| d.saturating_duration_since(Instant::now()));
        let mut next = match self.rx.recv_timeout(wait) {
            Ok(ev) => Some(ev),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(VerbError::new(Exit::Api, "the cluster backend stopped"));
            }
        };
        // The first error the backend reported (a refused watch) ends the verb.
        let mut error = None;
        while let Some(ev) = next {
            if let (BackendEvent::Error(message), None) = (&ev, &error) {
                let forbidden = message.contains("forbidden") || message.contains("Forbidden");
                error = Some(if forbidden {
                    format!("permission denied: {message}")
                } else {
                    message.clone()
                });
            }
            app::update(&mut self.state, Msg::Backend(ev));
            next = self.rx.try_recv().ok();
        }
        app::update(&mut self.state, Msg::BatchEnd);
        if let Connection::Unauthorized { error } = &self.state.connection {
            return Err(VerbError::new(Exit::Api, error.clone()));
        }
        match error {
            Some(e) => Err(VerbError::new(Exit::Api, e)),
            None => Ok(()),
        }
    }

    /// Why the server is unreachable, while it is.
    pub fn disconnected(&self) -> Option<String> {
        match &self.state.connection {
            Connection::Down { error, .. } => Some(error.clone()),
            _ => None,
        }
    }

    /// The set as last seen.
    pub fn set(&self) -> Option<&StatefulSet> {
        self.state.mirror.set(&self.key)
    }
}
