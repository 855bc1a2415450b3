//! Who else manages a set: a GitOps controller (Argo CD or Flux) that applies it from Git and
//! may undo a change made by hand (Argo CD's self-heal, Flux's drift correction). Read from the
//! labels and annotations they put on what they apply:
//!
//! - Argo CD: the `argocd.argoproj.io/tracking-id` annotation (`APP:GROUP/KIND:NS/NAME`, its
//!   default tracking since 2.x with annotation tracking, and in 3.x), or the
//!   `argocd.argoproj.io/instance` label; `app.kubernetes.io/instance` counts only beside an
//!   `argocd.argoproj.io/` annotation (Helm sets that label too).
//! - Flux: `kustomize.toolkit.fluxcd.io/name` and `/namespace` (a Kustomization), or
//!   `helm.toolkit.fluxcd.io/name` and `/namespace` (a HelmRelease).
//!
//! - Or, where no mark is left, the field manager that owns the partition: `argocd-…`
//!   (`argocd-controller` applying server-side, `argocd-application-controller` client-side),
//!   `kustomize-controller`, `helm-controller`. The mirror keeps the managed-fields entries that
//!   hold the partition (`cluster::lean`), so whether the manifest the tool applies sets the
//!   partition is known: then its self-heal or drift correction puts the partition back after
//!   every step, and [`Manager::prevents`] gives the entry of its own configuration that stops
//!   it (Argo CD's `ignoreDifferences`, Flux's drift ignore rules).
//!
//! These are claims written by others: they only make a warning, never decide what is done.
//! Pure: the console's header says the manager, its writes ask first, the verbs warn.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The field path ststui steers, as a JSON pointer (what an ignore rule names).
pub const PARTITION_POINTER: &str = "/spec/updateStrategy/rollingUpdate/partition";

/// A GitOps controller that manages an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manager {
    /// `Argo CD` or `Flux`.
    pub tool: &'static str,
    /// What applies it: `app web-prod`, `Kustomization flux-system/apps`.
    pub what: String,
    /// The tool's field manager that owns the partition (its manifest sets one), if any.
    pub partition_by: Option<String>,
    applier: Applier,
}

/// Which of the tools' objects applies it: where an ignore rule goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Applier {
    ArgoApp,
    Kustomization,
    HelmRelease,
}

impl std::fmt::Display for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.tool, self.what)
    }
}

impl Manager {
    /// The warning before a write by hand.
    pub fn warning(&self) -> String {
        let suspend = match self.applier {
            Applier::ArgoApp => "the app's auto-sync",
            Applier::Kustomization | Applier::HelmRelease => "the reconciliation",
        };
        match &self.partition_by {
            Some(m) => format!(
                "{self} manages this set and its manifest sets the partition (field manager \
                 {m}): {} puts it back, undoing each step; add the ignore rule for {PARTITION_POINTER} \
                 to its {}, or suspend {suspend} first",
                self.heals(),
                self.home()
            ),
            None => format!(
                "{self} manages this set: it may revert the change (self-heal, drift correction); \
                 change it in Git, or suspend {suspend} first"
            ),
        }
    }

    fn heals(&self) -> &'static str {
        match self.applier {
            Applier::ArgoApp => "self-heal",
            Applier::Kustomization | Applier::HelmRelease => "drift correction",
        }
    }

    /// The object whose spec the ignore rule goes in.
    fn home(&self) -> &'static str {
        match self.applier {
            Applier::ArgoApp => "Application",
            Applier::Kustomization => "Kustomization",
            Applier::HelmRelease => "HelmRelease",
        }
    }

    /// The lines of the tool's own configuration that leave the partition of `namespace/name`
    /// to ststui (a YAML fragment of the applying object's spec, after a line naming it).
    pub fn prevents(&self, namespace: &str, name: &str) -> Vec<String> {
        let target = |indent: &str| {
            [
                format!("{indent}kind: StatefulSet"),
                format!("{indent}name: {name}"),
                format!("{indent}namespace: {namespace}"),
            ]
        };
        let mut lines =
            vec![format!("to leave the partition to ststui, add to the {}'s spec:", self.home())];
        match self.applier {
            Applier::ArgoApp => {
                lines.push("  ignoreDifferences:".into());
                lines.push("    - group: apps".into());
                lines.extend(target("      "));
                lines.push("      jsonPointers:".into());
                lines.push(format!("        - {PARTITION_POINTER}"));
                // Without it a sync (a new commit) still applies the manifest's partition.
                lines.push("  syncPolicy:".into());
                lines.push("    syncOptions:".into());
                lines.push("      - RespectIgnoreDifferences=true".into());
            }
            Applier::Kustomization | Applier::HelmRelease => {
                let indent = if self.applier == Applier::Kustomization {
                    lines.push("  driftIgnoreRules:".into());
                    ""
                } else {
                    lines.push("  driftDetection:".into());
                    lines.push("    ignore:".into());
                    "  "
                };
                lines.push(format!("{indent}    - paths:"));
                lines.push(format!("{indent}        - {PARTITION_POINTER}"));
                lines.push(format!("{indent}      target:"));
                lines.extend(target(&format!("{indent}        ")));
            }
        }
        lines
    }
}

/// The GitOps controller managing the object of `meta`, if its labels, annotations or the
/// manager of its partition say so.
pub fn manager(meta: &ObjectMeta) -> Option<Manager> {
    let owner = partition_owner(meta);
    let mut m = marked(meta).or_else(|| {
        let (m, applier) = owner.clone()?;
        let tool = if applier == Applier::ArgoApp { "Argo CD" } else { "Flux" };
        Some(Manager { tool, what: format!("(field manager {m})"), partition_by: None, applier })
    })?;
    m.partition_by = owner.filter(|(_, a)| *a == m.applier).map(|(name, _)| name);
    Some(m)
}

/// The tool of a field manager's name, if a GitOps controller's.
fn tool_of(manager: &str) -> Option<Applier> {
    match manager {
        m if m.starts_with("argocd") => Some(Applier::ArgoApp),
        "kustomize-controller" => Some(Applier::Kustomization),
        "helm-controller" => Some(Applier::HelmRelease),
        _ => None,
    }
}

/// The GitOps field manager whose entry holds the partition.
fn partition_owner(meta: &ObjectMeta) -> Option<(String, Applier)> {
    let pointer = "/f:spec/f:updateStrategy/f:rollingUpdate/f:partition";
    meta.managed_fields.iter().flatten().find_map(|e| {
        let name = e.manager.as_deref()?;
        let applier = tool_of(name)?;
        e.fields_v1.as_ref()?.0.pointer(pointer)?;
        Some((crate::text::shown(name, 80), applier))
    })
}

/// The manager its labels and annotations name.
fn marked(meta: &ObjectMeta) -> Option<Manager> {
    let label = |k: &str| meta.labels.as_ref()?.get(k).filter(|v| !v.is_empty());
    let note = |k: &str| meta.annotations.as_ref()?.get(k).filter(|v| !v.is_empty());
    let argo = |app: &str| Manager {
        tool: "Argo CD",
        what: format!("app {}", crate::text::shown(app, 80)),
        partition_by: None,
        applier: Applier::ArgoApp,
    };
    if let Some(id) = note("argocd.argoproj.io/tracking-id") {
        return Some(argo(id.split(':').next().unwrap_or(id)));
    }
    if let Some(app) = label("argocd.argoproj.io/instance") {
        return Some(argo(app));
    }
    let argo_noted = meta
        .annotations
        .as_ref()
        .is_some_and(|a| a.keys().any(|k| k.starts_with("argocd.argoproj.io/")));
    if argo_noted && let Some(app) = label("app.kubernetes.io/instance") {
        return Some(argo(app));
    }
    for (prefix, kind, applier) in [
        ("kustomize.toolkit.fluxcd.io", "Kustomization", Applier::Kustomization),
        ("helm.toolkit.fluxcd.io", "HelmRelease", Applier::HelmRelease),
    ] {
        if let Some(name) = label(&format!("{prefix}/name")) {
            let ns = label(&format!("{prefix}/namespace"));
            let what = match ns {
                Some(ns) => format!("{kind} {ns}/{name}"),
                None => format!("{kind} {name}"),
            };
            let what = crate::text::shown(&what, 160);
            return Some(Manager { tool: "Flux", what, partition_by: None, applier });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn meta(labels: &[(&str, &str)], notes: &[(&str, &str)]) -> ObjectMeta {
        let map = |kv: &[(&str, &str)]| {
            Some(kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>())
        };
        ObjectMeta { labels: map(labels), annotations: map(notes), ..Default::default() }
    }

    /// `m` with a managed-fields entry of `manager`, owning the partition or only the replicas.
    fn written_by(mut m: ObjectMeta, manager: &str, partition: bool) -> ObjectMeta {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
        let spec = if partition {
            serde_json::json!({"f:spec": {"f:updateStrategy": {"f:rollingUpdate": {"f:partition": {}}}}})
        } else {
            serde_json::json!({"f:spec": {"f:replicas": {}}})
        };
        m.managed_fields.get_or_insert_default().push(ManagedFieldsEntry {
            manager: Some(manager.into()),
            operation: Some("Apply".into()),
            fields_type: Some("FieldsV1".into()),
            fields_v1: Some(FieldsV1(spec)),
            ..Default::default()
        });
        m
    }

    /// The YAML `prevents` prints under its first line, parsed as a user's paste would be.
    fn pasted(m: &Manager) -> serde_json::Value {
        let lines = m.prevents("prod", "db");
        assert!(lines[0].starts_with("to leave the partition to ststui, add to the"), "{lines:?}");
        serde_yaml_ng::from_str(&lines[1..].join("\n")).unwrap()
    }

    #[test]
    fn an_argo_app_whose_manifest_sets_the_partition_is_given_its_ignore_rule() {
        let marked = meta(&[("argocd.argoproj.io/instance", "shop")], &[]);
        let m = manager(&written_by(marked.clone(), "argocd-controller", true)).unwrap();
        assert_eq!(m.partition_by.as_deref(), Some("argocd-controller"));
        let w = m.warning();
        assert!(
            w.contains("its manifest sets the partition (field manager argocd-controller)"),
            "{w}"
        );
        assert!(w.contains("self-heal puts it back"), "{w}");
        assert!(w.contains(&format!("{PARTITION_POINTER} to its Application")), "{w}");
        let y = pasted(&m);
        let rule = &y["ignoreDifferences"][0];
        assert_eq!(rule["group"], "apps");
        assert_eq!(rule["kind"], "StatefulSet");
        assert_eq!((&rule["name"], &rule["namespace"]), (&"db".into(), &"prod".into()));
        assert_eq!(rule["jsonPointers"][0], PARTITION_POINTER);
        assert_eq!(y["syncPolicy"]["syncOptions"][0], "RespectIgnoreDifferences=true");
        // Another entry of Argo CD's that leaves the partition alone: only the general warning.
        let m = manager(&written_by(marked, "argocd-controller", false)).unwrap();
        assert_eq!(m.partition_by, None);
        assert!(m.warning().contains("may revert the change"), "{}", m.warning());
    }

    #[test]
    fn flux_is_known_by_its_field_manager_alone_and_given_its_drift_rule() {
        let m = manager(&written_by(meta(&[], &[]), "kustomize-controller", true)).unwrap();
        assert_eq!(m.tool, "Flux");
        assert_eq!(m.to_string(), "Flux (field manager kustomize-controller)");
        assert!(m.warning().contains("drift correction puts it back"), "{}", m.warning());
        let y = pasted(&m);
        let rule = &y["driftIgnoreRules"][0];
        assert_eq!(rule["paths"][0], PARTITION_POINTER);
        assert_eq!(
            (&rule["target"]["kind"], &rule["target"]["name"]),
            (&"StatefulSet".into(), &"db".into())
        );
        let helm = meta(
            &[("helm.toolkit.fluxcd.io/name", "pg"), ("helm.toolkit.fluxcd.io/namespace", "db")],
            &[],
        );
        let m = manager(&written_by(helm, "helm-controller", true)).unwrap();
        assert_eq!(m.to_string(), "Flux HelmRelease db/pg");
        let y = pasted(&m);
        let rule = &y["driftDetection"]["ignore"][0];
        assert_eq!(rule["paths"][0], PARTITION_POINTER);
        assert_eq!(rule["target"]["namespace"], "prod");
    }

    #[test]
    fn another_tools_field_manager_and_a_stranger_say_nothing_of_the_partition() {
        // Argo CD's mark with Flux's controller owning the partition: the mark decides the
        // tool, and its rule would not be the one that helps, so none is claimed.
        let argo = meta(&[("argocd.argoproj.io/instance", "shop")], &[]);
        let m = manager(&written_by(argo, "kustomize-controller", true)).unwrap();
        assert_eq!((m.tool, m.partition_by), ("Argo CD", None));
        assert_eq!(manager(&written_by(meta(&[], &[]), "kubectl-patch", true)), None);
        // A manager's name is written by whoever writes: control characters never reach a terminal.
        let m = manager(&written_by(meta(&[], &[]), "argocd-\u{1b}[2Jx", true)).unwrap();
        assert!(!m.warning().contains('\u{1b}'), "{}", m.warning());
    }

    #[test]
    fn argo_cd_and_flux_are_told_by_their_marks_and_helm_alone_is_not() {
        let argo =
            meta(&[], &[("argocd.argoproj.io/tracking-id", "shop:apps/StatefulSet:prod/db")]);
        assert_eq!(manager(&argo).map(|m| m.to_string()).as_deref(), Some("Argo CD app shop"));
        let label = meta(&[("argocd.argoproj.io/instance", "shop")], &[]);
        assert_eq!(manager(&label).map(|m| m.tool), Some("Argo CD"));
        let flux = meta(
            &[
                ("kustomize.toolkit.fluxcd.io/name", "apps"),
                ("kustomize.toolkit.fluxcd.io/namespace", "flux-system"),
            ],
            &[],
        );
        assert_eq!(
            manager(&flux).map(|m| m.to_string()).as_deref(),
            Some("Flux Kustomization flux-system/apps")
        );
        let helm = meta(&[("app.kubernetes.io/instance", "db"), ("helm.sh/chart", "pg-1")], &[]);
        assert_eq!(manager(&helm), None, "Helm's own label is not a GitOps controller");
        let helm_by_argo =
            meta(&[("app.kubernetes.io/instance", "db")], &[("argocd.argoproj.io/sync-wave", "1")]);
        assert_eq!(manager(&helm_by_argo).map(|m| m.what).as_deref(), Some("app db"));
        assert!(manager(&argo).unwrap().warning().contains("may revert the change"));
    }
}
