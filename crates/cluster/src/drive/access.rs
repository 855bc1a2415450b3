//! Whether we may drive: the writes the StatefulSet controller makes, asked of the server
//! before the first one (a SelfSubjectRulesReview, and access reviews where its rules are
//! incomplete: `cluster::denied_of`). Denied any, drive mode refuses to start and names them,
//! as a denied permission is not mended by retrying; the Events it records are best effort and
//! not asked about.
//!
//! Also the server's version, read first: the release whose controller the core reproduces.
//!
//! Owns: the list of what the controller writes.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::version::Info;

use crate::cluster::{Permission, Session};

/// How long the server's version (and a lease's first round) is waited for before refusing to
/// drive.
pub const VERSION_WAIT: Duration = Duration::from_secs(20);

/// The server's version, or why it cannot be driven (no answer within [`VERSION_WAIT`], an
/// error).
pub async fn server_version(session: &Session) -> Result<Info, String> {
    match tokio::time::timeout(VERSION_WAIT, session.client.apiserver_version()).await {
        Err(_) => {
            Err(format!("{} did not answer within {} s", session.server, VERSION_WAIT.as_secs()))
        }
        Ok(Err(e)) => {
            Err(format!("cannot drive {}: {}", session.server, crate::cluster::trouble::brief(&e)))
        }
        Ok(Ok(v)) => Ok(v),
    }
}

/// One write of the controller, in RBAC's words: (verb, group, resource, subresource).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Need(&'static str, &'static str, &'static str, &'static str);

impl Permission for Need {
    fn rbac(self) -> (&'static str, &'static str, &'static str, &'static str) {
        (self.0, self.1, self.2, self.3)
    }
}

/// What `effects` writes: upstream's `system:controller:statefulset-controller` role less what
/// it only reads, the set's finalizers and the Events.
pub const NEEDS: [Need; 9] = [
    Need("create", "", "pods", ""),
    Need("update", "", "pods", ""),
    Need("delete", "", "pods", ""),
    Need("create", "", "persistentvolumeclaims", ""),
    Need("update", "", "persistentvolumeclaims", ""),
    Need("create", "apps", "controllerrevisions", ""),
    Need("update", "apps", "controllerrevisions", ""),
    Need("delete", "apps", "controllerrevisions", ""),
    Need("update", "apps", "statefulsets", "status"),
];

/// `Ok` when every write of [`NEEDS`] is allowed in namespace `ns`; else the refusal, naming
/// who we are and each write denied.
pub async fn may_drive(session: &Session, ns: &str) -> Result<(), String> {
    let denied = crate::cluster::denied_of(session, ns, &NEEDS).await;
    if denied.is_empty() {
        return Ok(());
    }
    let who = crate::cluster::connect_identity(session).await;
    let what: Vec<String> =
        NEEDS.iter().filter(|n| denied.contains_key(n)).map(|n| n.describe()).collect();
    Err(format!(
        "will not drive {ns}: {who} may not {} there (the StatefulSet controller creates, updates \
         and deletes pods and ControllerRevisions, creates and updates claims, and writes the \
         sets' status)",
        what.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_needs_are_said_in_rbacs_words() {
        let said: Vec<String> = NEEDS.iter().map(|n| n.describe()).collect();
        assert!(said.contains(&"create pods (core)".to_string()), "{said:?}");
        assert!(said.contains(&"update statefulsets/status (apps)".to_string()), "{said:?}");
        assert_eq!(said.iter().collect::<std::collections::BTreeSet<_>>().len(), NEEDS.len());
    }
}
