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
//! Pure: the console's header says the manager, and its writes ask first.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// A GitOps controller that manages an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manager {
    /// `Argo CD` or `Flux`.
    pub tool: &'static str,
    /// What applies it: `app web-prod`, `Kustomization flux-system/apps`.
    pub what: String,
}

impl std::fmt::Display for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.tool, self.what)
    }
}

impl Manager {
    /// The warning before a write by hand.
    pub fn warning(&self) -> String {
        format!(
            "{self} manages this set: it may revert the change (self-heal, drift correction); \
             change it in Git, or suspend {} first",
            if self.tool == "Flux" { "the reconciliation" } else { "the app's auto-sync" }
        )
    }
}

/// The GitOps controller managing the object of `meta`, if its labels or annotations say so.
pub fn manager(meta: &ObjectMeta) -> Option<Manager> {
    let label = |k: &str| meta.labels.as_ref()?.get(k).filter(|v| !v.is_empty());
    let note = |k: &str| meta.annotations.as_ref()?.get(k).filter(|v| !v.is_empty());
    if let Some(id) = note("argocd.argoproj.io/tracking-id") {
        let app = id.split(':').next().unwrap_or(id);
        return Some(Manager { tool: "Argo CD", what: format!("app {app}") });
    }
    if let Some(app) = label("argocd.argoproj.io/instance") {
        return Some(Manager { tool: "Argo CD", what: format!("app {app}") });
    }
    let argo_noted = meta
        .annotations
        .as_ref()
        .is_some_and(|a| a.keys().any(|k| k.starts_with("argocd.argoproj.io/")));
    if argo_noted && let Some(app) = label("app.kubernetes.io/instance") {
        return Some(Manager { tool: "Argo CD", what: format!("app {app}") });
    }
    for (prefix, kind) in [
        ("kustomize.toolkit.fluxcd.io", "Kustomization"),
        ("helm.toolkit.fluxcd.io", "HelmRelease"),
    ] {
        if let Some(name) = label(&format!("{prefix}/name")) {
            let ns = label(&format!("{prefix}/namespace"));
            let what = match ns {
                Some(ns) => format!("{kind} {ns}/{name}"),
                None => format!("{kind} {name}"),
            };
            return Some(Manager { tool: "Flux", what });
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
