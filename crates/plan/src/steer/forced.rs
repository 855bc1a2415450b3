//! The record of pods deleted past their disruption budgets (`ststui abort --force-delete
//! REASON`, the console's force-delete with its reason): JSON in the set's
//! [`FORCE_DELETED`](super::FORCE_DELETED) annotation — who, when, the pods, the reason, and the
//! budget's refusal when one was seen — written before the deletion it allows, so the bypass is
//! on the server beside what it did. Read back for `explain` and the controller pane.
//!
//! The annotation is written by whoever may patch the set: read as untrusted text (bounded,
//! escaped by the caller before it reaches a terminal), never acted on.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::jiff::Timestamp;

use super::FORCE_DELETED;

/// How long after it was written the record is shown beside the set's state.
pub const SHOWN_FOR_SECS: i64 = 3600;

/// The most pods a record's words name (the rest counted).
const MAX_PODS_SAID: usize = 5;
/// The most characters of a pod's name a record's words carry.
const MAX_POD_NAME_SAID: usize = 64;

/// A force-delete record as read from the set.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Forced {
    #[serde(default)]
    pub by: String,
    #[serde(default)]
    pub at: String,
    #[serde(default)]
    pub pods: Vec<String>,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub refused: Option<String>,
    /// Who last wrote the record, when the server's managed fields say it was not ststui (its
    /// `by` is the record's claim).
    #[serde(skip)]
    pub written_by: Option<String>,
}

/// The record's JSON for `pods` deleted by `by` at `now` for `reason`, past `refused` (the
/// budget's words when its refusal was seen; none when the operator bypassed it unasked).
pub fn record(
    by: &str,
    now: Timestamp,
    pods: &[String],
    reason: &str,
    refused: Option<&str>,
) -> String {
    serde_json::json!({
        "by": by,
        "at": now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        "pods": pods,
        "reason": reason,
        "refused": refused,
    })
    .to_string()
}

/// The set's record, when it has one that reads as one (anything else is not a record: an
/// annotation anyone may write is never trusted to parse).
pub fn of(set: &StatefulSet) -> Option<Forced> {
    let text = set.metadata.annotations.as_ref()?.get(FORCE_DELETED)?;
    if text.len() > 64 * 1024 {
        return None;
    }
    let written_by = crate::plan::freeze::annotation_writer(set, FORCE_DELETED);
    serde_json::from_str(text).ok().map(|f| Forced { written_by, ..f })
}

impl Forced {
    /// Seconds since it was written, by `now`; none when its time does not read.
    pub fn age_secs(&self, now: Timestamp) -> Option<i64> {
        let at: Timestamp = self.at.parse().ok()?;
        Some(now.as_second() - at.as_second())
    }

    /// Whether it is recent enough to be shown beside the set's state at `now`.
    pub fn recent(&self, now: Timestamp) -> bool {
        self.age_secs(now).is_some_and(|s| (0..=SHOWN_FOR_SECS).contains(&s))
    }

    /// `web-3 force-deleted past the disruption budgets by alice at 2026-11-28T10:00:00Z:
    /// INC-42 (refused by pdb/web: …)`, unescaped: the caller escapes it for where it goes.
    pub fn words(&self, now: Timestamp) -> String {
        // A pod's name is at most 253 characters on a server; a record may say anything.
        let named = |pods: &[String]| {
            pods.iter().map(|p| clip(p, MAX_POD_NAME_SAID)).collect::<Vec<_>>().join(", ")
        };
        let pods = match self.pods.len() {
            0 => "pods".to_string(),
            n if n > MAX_PODS_SAID => {
                format!("{} and {} more", named(&self.pods[..MAX_PODS_SAID]), n - MAX_PODS_SAID)
            }
            _ => named(&self.pods),
        };
        let reason = clip(&self.reason, crate::value::MAX_REASON);
        // The time as written (not "ago": a pane redrawn only on changes would show it stale).
        let at = match self.age_secs(now) {
            Some(_) => format!(" at {}", clip(&self.at, 40)),
            None => String::new(),
        };
        let past = match &self.refused {
            Some(r) => format!(" ({})", clip(r, 300)),
            None => String::new(),
        };
        let by = if self.by.is_empty() { "someone".to_string() } else { clip(&self.by, 100) };
        let by = match &self.written_by {
            Some(w) => format!("{by} (written by {w}, says the server)"),
            None => by,
        };
        format!("{pods} force-deleted past the disruption budgets by {by}{at}: {reason}{past}")
    }
}

/// At most `n` characters of `s` (a record anyone may write is never shown whole).
fn clip(s: &str, n: usize) -> String {
    crate::text::clip(s, n).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set_with(annotation: &str) -> StatefulSet {
        let mut set = StatefulSet::default();
        set.metadata.annotations =
            Some([(FORCE_DELETED.to_string(), annotation.to_string())].into_iter().collect());
        set
    }

    #[test]
    fn a_record_reads_back_and_says_who_when_and_why() {
        let now: Timestamp = "2026-11-28T10:00:00Z".parse().unwrap();
        let json = record("alice", now, &["web-3".into()], "INC-42", Some("refused by pdb/web"));
        let f = of(&set_with(&json)).expect("a record");
        assert_eq!(f.pods, vec!["web-3".to_string()]);
        let later: Timestamp = "2026-11-28T10:05:00Z".parse().unwrap();
        assert!(f.recent(later));
        assert_eq!(
            f.words(later),
            "web-3 force-deleted past the disruption budgets by alice at 2026-11-28T10:00:00Z: \
             INC-42 (refused by pdb/web)"
        );
        let much_later: Timestamp = "2026-11-28T12:00:01Z".parse().unwrap();
        assert!(!f.recent(much_later), "an old record is not shown beside the state");
    }

    #[test]
    fn the_server_says_who_wrote_a_record_whose_by_it_disagrees_with() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry, Time};
        let now: Timestamp = "2026-11-28T10:00:00Z".parse().unwrap();
        let json = record("alice", now, &["web-3".into()], "INC-42", None);
        let entry = |manager: &str, secs: i64| ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some("Update".into()),
            time: Some(Time(Timestamp::from_second(now.as_second() + secs).unwrap())),
            fields_v1: Some(FieldsV1(serde_json::json!({
                "f:metadata": {"f:annotations": {format!("f:{FORCE_DELETED}"): {}}}
            }))),
            ..Default::default()
        };
        let mut set = set_with(&json);
        set.metadata.managed_fields = Some(vec![entry("ststui", 0)]);
        assert_eq!(of(&set).unwrap().written_by, None, "ststui wrote it: its by stands");
        set.metadata.managed_fields = Some(vec![entry("ststui", 0), entry("kubectl-patch", 5)]);
        let words = of(&set).unwrap().words(now);
        assert!(
            words.contains("by alice (written by kubectl-patch at 10:00:05, says the server)"),
            "{words}"
        );
    }

    #[test]
    fn anything_else_in_the_annotation_is_no_record() {
        assert_eq!(of(&set_with("rm -rf /")), None);
        assert_eq!(of(&set_with("[1,2]")), None);
        assert_eq!(of(&StatefulSet::default()), None);
        let f = of(&set_with(r#"{"at":"yesterday"}"#)).expect("fields default");
        assert!(!f.recent(Timestamp::UNIX_EPOCH), "a time that does not read is never recent");
    }

    #[test]
    fn every_value_of_a_record_is_clipped_where_it_is_said() {
        let now: Timestamp = "2026-11-28T10:00:00Z".parse().unwrap();
        let long = "p".repeat(3000);
        let pods = vec![long.clone(), "web-1".into()];
        let json = record(&"b".repeat(5000), now, &pods, &"r".repeat(50_000), Some(&long));
        let words = of(&set_with(&json)).expect("a record").words(now);
        assert!(words.len() < 2000, "{} characters", words.len());
        assert!(words.contains(&format!("{}…, web-1", "p".repeat(64))), "{words}");
    }
}
