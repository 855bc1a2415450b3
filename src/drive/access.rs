//! Whether we may drive: the writes the StatefulSet controller makes, asked of the server
//! before the first one (a SelfSubjectRulesReview, and access reviews where its rules are
//! incomplete: `cluster::denied_of`). Denied any, drive mode refuses to start and names them,
//! as a denied permission is not mended by retrying; the Events it records are best effort and
//! not asked about.
//!
//! Owns: the list of what the controller writes.

use crate::cluster::{Permission, Session};

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
