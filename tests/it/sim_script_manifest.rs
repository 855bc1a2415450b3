//! Manifests: multi-document YAML, StatefulSets kept, other kinds skipped with a warning, errors
//! with the file and the line.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use ststui::sim::manifest::{ManifestError, parse};

const MULTI: &str = "\
# a Service, then two StatefulSets
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  clusterIP: None
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  serviceName: web
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.25
---
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: data
spec:
  replicas: 1
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: pg
        image: postgres:16
...
";

#[test]
fn keeps_statefulsets_and_warns_about_the_rest() {
    let m = parse("web.yaml", MULTI).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<_> = m
        .sets
        .iter()
        .map(|s| (s.metadata.namespace.clone(), s.metadata.name.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        names,
        vec![(None, "web".to_string()), (Some("data".to_string()), "db".to_string())]
    );
    assert_eq!(m.sets[0].spec.replicas, Some(3));
    assert_eq!(
        m.warnings,
        vec!["web.yaml: document 1 (line 1) is a Service \"web\", not a StatefulSet: skipped"]
    );
}

#[test]
fn a_yaml_syntax_error_names_the_line() {
    let text = "apiVersion: v1\nkind: Service\n---\napiVersion: apps/v1\nkind: [oops\n";
    let e = parse("bad.yaml", text).err();
    let Some(ManifestError::Parse { file, line, message }) = e else { panic!("{e:?}") };
    assert_eq!(file, "bad.yaml");
    assert_eq!(line, 6, "{message}");
    assert!(message.starts_with("invalid YAML: "), "{message}");
}

#[test]
fn a_type_error_names_the_line_and_the_field() {
    let text = MULTI.replace("replicas: 3", "replicas: three");
    let e = parse("web.yaml", &text).err();
    let Some(ManifestError::Parse { line, message, .. }) = e else { panic!("{e:?}") };
    assert_eq!(line, 14, "{message}");
    assert!(message.contains("document 2: not a valid StatefulSet"), "{message}");
    assert!(message.contains("replicas"), "{message}");
    assert!(!message.contains(" at line "), "{message}");
}

#[test]
fn statefulsets_need_apps_v1() {
    let text = "apiVersion: apps/v1beta2\nkind: StatefulSet\nmetadata:\n  name: web\n";
    let e = parse("old.yaml", text).map_err(|e| e.to_string());
    assert_eq!(
        e,
        Err("old.yaml:1: document 1: a StatefulSet needs `apiVersion: apps/v1`, found \
             apps/v1beta2 (apps/v1beta1 and apps/v1beta2 were removed in Kubernetes 1.16)"
            .into())
    );
}

#[test]
fn documents_without_kind_or_name_are_errors() {
    let e = parse("x.yaml", "---\nfoo: bar\n").map_err(|e| e.to_string());
    assert_eq!(
        e,
        Err("x.yaml:2: document 1: no `kind`; expected a Kubernetes object such as `kind: \
             StatefulSet`"
            .into())
    );
    let e = parse("x.yaml", "apiVersion: apps/v1\nkind: StatefulSet\n").map_err(|e| e.to_string());
    assert!(e.is_err_and(|m| m.contains("has no `metadata.name`")));
}

#[test]
fn empty_manifests_have_nothing() {
    let m = parse("e.yaml", "# nothing\n---\n").unwrap_or_else(|e| panic!("{e}"));
    assert!(m.sets.is_empty() && m.warnings.is_empty());
}

#[test]
fn missing_files_are_read_errors() {
    let e = ststui::sim::manifest::load(std::path::Path::new("/nonexistent/web.yaml"));
    assert!(matches!(e, Err(ManifestError::Read { .. })), "{e:?}");
}

#[test]
fn unknown_fields_are_refused_by_path_and_line_as_kubectl_strict_validation_does() {
    let text = MULTI.replace("  replicas: 3", "  replica: 3");
    let e = parse("web.yaml", &text).err();
    let Some(ManifestError::Parse { line, message, .. }) = e else { panic!("{e:?}") };
    assert!(message.contains("document 2: unknown field \"spec.replica\""), "{message}");
    assert_eq!(line, 14, "{message}");
    let text =
        MULTI.replace("image: postgres:16", "image: postgres:16\n        imagePullPolicee: Always");
    let e = parse("web.yaml", &text).err();
    let Some(ManifestError::Parse { message, .. }) = e else { panic!("{e:?}") };
    assert!(message.contains("\"spec.template.spec.containers[0].imagePullPolicee\""), "{message}");
}

#[test]
fn deep_nesting_is_refused_in_linear_time() {
    // 100,000 brackets deep: refused by a scan before the YAML parser sees them (which took
    // tens of seconds); the line is the one the nesting is on.
    let text = format!(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: web\nspec:\n  replicas: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let e = parse("deep.yaml", &text).err();
    let Some(ManifestError::Parse { line, message, .. }) = e else { panic!("{e:?}") };
    assert_eq!(line, 6);
    assert!(message.contains("nested deeper than 64 levels"), "{message}");
    // Brackets in quotes and comments do not count; ordinary flow collections pass.
    let fine = MULTI
        .replace(
            "matchLabels: {app: web}",
            &format!("matchLabels: {{app: web}} # {}", "[".repeat(100)),
        )
        .replace("image: nginx:1.25", &format!("image: \"nginx{}\"", "[".repeat(100)));
    assert!(parse("fine.yaml", &fine).is_ok());
}
