//! The conventions of a Kubernetes command-line tool, with the installed kubectl: the binary
//! linked as `kubectl-ststui` is `kubectl ststui` (listed by `kubectl plugin list`, its usage
//! naming it so, the same answers as `ststui`); linked as `kubectl_complete-ststui` it answers
//! kubectl's plugin completion; `ststui completion SHELL` prints a script bash accepts; and
//! `explain -o yaml` is the JSON report as YAML. Needs kubectl: fails (never skips) without it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::serve_common;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::runner;
use serve_common::{serve, set};
use ststui::sim::KubeletConfig;

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A directory with the binary linked under both plugin names.
fn plugin_dir(test: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("ststui-plugin-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    for name in ["kubectl-ststui", "kubectl_complete-ststui"] {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ststui"), d.join(name)).unwrap();
    }
    Dir(d)
}

/// Runs the installed kubectl with `dir` first on PATH and its own home (cache): (code, out,
/// err).
fn kubectl(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let path = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("kubectl")
        .args(args)
        .env("PATH", path)
        .env("HOME", dir)
        .output()
        .unwrap_or_else(|e| panic!("kubectl is needed for this test and could not run: {e}"));
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

fn ststui(args: &[&str]) -> (i32, String, String) {
    runner::outcome(runner::ststui().args(args))
}

#[test]
fn kubectl_runs_it_as_a_plugin_and_completes_it() {
    let d = plugin_dir("kubectl");
    let (code, out, err) = kubectl(&d.0, &["plugin", "list"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("kubectl-ststui"), "{out}");
    let (code, out, err) = kubectl(&d.0, &["ststui", "--help"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Usage: kubectl ststui [OPTIONS] [NAME] [COMMAND]"), "{out}");
    // kubectl (1.26 and later) asks kubectl_complete-ststui for a plugin's completions.
    let (code, out, err) = kubectl(&d.0, &["__complete", "ststui", "ex"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l.starts_with("explain\t")), "{out}\n{err}");
    let (_, out, err) =
        kubectl(&d.0, &["__complete", "ststui", "rollout", "web", "--on-failure", ""]);
    let values: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap_or("")).collect();
    assert!(values.contains(&"hold") && values.contains(&"undo"), "{out}\n{err}");
}

#[test]
fn set_names_complete_from_the_cluster_and_a_near_verb_naming_no_set_is_a_typo() {
    let (_handle, server) =
        serve(vec![set("web", 1), set("ste", 1)], &[], KubeletConfig::default());
    let d = plugin_dir("names");
    let kc = d.0.join("kubeconfig");
    ststui::serve::write_kubeconfig(&kc, server.addr).unwrap();
    let kc = kc.to_string_lossy().into_owned();
    let log = d.0.join("log").to_string_lossy().into_owned();
    // `kubectl ststui --kubeconfig KC w<TAB>`: the verb and the set.
    let (code, out, err) = kubectl(&d.0, &["__complete", "ststui", "--kubeconfig", &kc, "w"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().any(|l| l == "web\tStatefulSet"), "{out}\n{err}");
    assert!(out.lines().any(|l| l.starts_with("wait\t")), "{out}\n{err}");
    let (_, out, _) = ststui(&["__complete", "--kubeconfig", &kc, "step", ""]);
    let names: Vec<&str> = out.lines().filter(|l| l.ends_with("\tStatefulSet")).collect();
    assert_eq!(names, ["ste\tStatefulSet", "web\tStatefulSet"], "{out}");
    // An unreachable cluster offers no names, and still answers.
    let (code, out, _) = ststui(&["__complete", "--kubeconfig", "/nonexistent/kc", "step", ""]);
    assert_eq!((code, out.as_str()), (0, ":4\n"));
    // `kubectl ststui rol`: close to rollout, and no set is called so.
    let (code, _, err) = kubectl(&d.0, &["ststui", "rol", "--kubeconfig", &kc, "--log-file", &log]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("\"rol\" is not a verb and no StatefulSet of that name exists"), "{err}");
    assert!(err.contains("did you mean `kubectl ststui rollout`?"), "{err}");
    // A set that is called so is opened (here: no terminal to open it in).
    let (code, _, err) = ststui(&["ste", "--kubeconfig", &kc, "--log-file", &log]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("the console needs a terminal"), "{err}");
    assert!(!err.contains("did you mean"), "{err}");
}

#[test]
fn a_plugin_call_answers_as_ststui_does() {
    let (_handle, server) = serve(vec![set("web", 3)], &[], KubeletConfig::default());
    let d = plugin_dir("explain");
    let kc = d.0.join("kubeconfig");
    ststui::serve::write_kubeconfig(&kc, server.addr).unwrap();
    let kc = kc.to_string_lossy().into_owned();
    let log = d.0.join("log").to_string_lossy().into_owned();
    let args = ["explain", "web", "-o", "json", "--kubeconfig", &kc, "--log-file", &log];
    let (code, direct, err) = ststui(&args);
    assert_eq!(code, 0, "{err}");
    let mut plugin_args = vec!["ststui"];
    plugin_args.extend(args);
    let (code, via, err) = kubectl(&d.0, &plugin_args);
    assert_eq!(code, 0, "{err}");
    let json = |t: &str| serde_json::from_str::<serde_json::Value>(t).unwrap();
    let (a, b) = (json(&direct), json(&via));
    assert_eq!(a["name"], "web");
    assert_eq!(a["health"], "Healthy");
    assert_eq!(a, b, "the plugin's report is ststui's");
    // -o yaml is the same report.
    let (code, yaml, err) = ststui(&["explain", "web", "-o", "yaml", "--kubeconfig", &kc]);
    assert_eq!(code, 0, "{err}");
    let from_yaml: serde_json::Value = serde_yaml_ng::from_str(&yaml).unwrap();
    assert_eq!(from_yaml, a, "the yaml report is the json one");
}

#[test]
fn completion_scripts_are_printed_for_every_shell_and_bash_accepts_its_own() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, out, err) = ststui(&["completion", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains("rollout") && out.contains("explain"), "{shell}: {out}");
    }
    let (code, _, err) = ststui(&["completion", "tcsh"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid value 'tcsh'") && err.contains("bash"), "{err}");
    let script = ststui(&["completion", "bash"]).1;
    let d = plugin_dir("bash");
    let file = d.0.join("ststui.bash");
    std::fs::write(&file, script).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("source {} && complete -p ststui", file.display()))
        .output()
        .unwrap_or_else(|e| panic!("bash: {e}"));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains("_ststui"), "{said}");
}
