//! Exec plugins as shell scripts in a scratch directory: what they answer, how they fail, and
//! that a plugin stopped for its time leaves nothing running.

use super::*;
use std::path::{Path, PathBuf};

/// A scratch directory of its own per test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ststui-credential-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A plugin running `script` (a `sh` body) with `env`.
fn plugin(dir: &Path, script: &str, env: &[(&str, &str)]) -> Plugin {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join("plugin");
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let env = env
        .iter()
        .map(|(k, v)| {
            [("name".to_string(), k.to_string()), ("value".to_string(), v.to_string())]
                .into_iter()
                .collect()
        })
        .collect();
    let exec = ExecConfig {
        api_version: Some("client.authentication.k8s.io/v1".into()),
        command: Some(path.to_string_lossy().into_owned()),
        env: Some(env),
        interactive_mode: Some(ExecInteractiveMode::Never),
        ..Default::default()
    };
    Plugin { exec, name: "plugin".into(), user: "tester".into(), wait: WAIT }
}

const TOKEN_JSON: &str = r#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"2030-01-02T03:04:05Z"}}"#;

fn rt() -> tokio::runtime::Runtime {
    crate::runtime::build("test", crate::runtime::Workers::Current).unwrap()
}

/// Whether process `pid` is gone (or a zombie nobody has reaped yet), waiting up to 3 s.
fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().and_then(|r| r.split_whitespace().next());
        if stat.is_empty() || state == Some("Z") {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_token_is_read_with_its_expiry_and_the_plugin_gets_its_env_and_exec_info() {
    let dir = scratch("token");
    let script = format!(
        "case \"$KUBERNETES_EXEC_INFO\" in *'\"interactive\":false'*) ;; *) exit 9;; esac\n\
         printf '{TOKEN_JSON}' \"$SECRET\""
    );
    let p = plugin(&dir, &script, &[("SECRET", "s3cret")]);
    let cred = rt().block_on(p.run()).unwrap();
    let expires = "2030-01-02T03:04:05Z".parse().unwrap();
    assert_eq!(cred, Credential::Token { token: "s3cret".into(), expires: Some(expires) });
    // The token never reaches a message or a log line through Debug.
    assert!(!format!("{cred:?}").contains("s3cret"));
}

#[test]
fn a_plugin_that_never_answers_is_stopped_with_all_it_started_and_named() {
    let dir = scratch("hang");
    let child = dir.join("child");
    let script = format!(
        "sleep 600 & echo $! > {}\necho 'open https://login.example to sign in' >&2\nwait",
        child.display()
    );
    let p = plugin(&dir, &script, &[]).with_wait(Duration::from_millis(1_500));
    let started = Instant::now();
    let err = rt().block_on(p.run()).unwrap_err().to_string();
    assert!(started.elapsed() < Duration::from_secs(10), "bounded: {:?}", started.elapsed());
    assert!(err.contains("plugin \"plugin\""), "{err}");
    assert!(err.contains("gave no answer within 1 s; ststui stopped it"), "{err}");
    assert!(err.contains("(it said: open https://login.example to sign in)"), "{err}");
    let pid: i32 = std::fs::read_to_string(&child).unwrap().trim().parse().unwrap();
    assert!(gone(pid), "the plugin's own child {pid} is still running");
}

#[test]
fn a_run_dropped_midway_stops_the_plugin() {
    let dir = scratch("drop");
    let child = dir.join("child");
    let script = format!("sleep 600 & echo $! > {}\nwait", child.display());
    let mut p = plugin(&dir, &script, &[]);
    p.name = "plugin-drop".into();
    rt().block_on(async {
        let run = p.run();
        tokio::pin!(run);
        // Long enough for the script to have started its child.
        let waited = tokio::time::timeout(Duration::from_millis(800), &mut run).await;
        assert!(waited.is_err(), "the plugin answered");
        assert!(pending().is_some());
        let running = RUNNING.lock().unwrap().iter().any(|r| r.name == "plugin-drop");
        assert!(running, "not registered while it runs");
    });
    let pid: i32 = std::fs::read_to_string(&child).unwrap().trim().parse().unwrap();
    assert!(gone(pid), "the plugin's child {pid} outlived the dropped run");
}

#[test]
fn a_failing_plugin_says_its_status_and_last_words() {
    let dir = scratch("fail");
    let p = plugin(&dir, "echo 'line one' >&2\necho 'error: token expired' >&2\nexit 3", &[]);
    let err = rt().block_on(p.run()).unwrap_err().to_string();
    assert!(err.contains("(kubeconfig user \"tester\") failed (exit status: 3)"), "{err}");
    assert!(err.contains("it said: line one / error: token expired"), "{err}");
}

#[test]
fn a_missing_plugin_says_its_install_hint_without_escape_codes() {
    let mut p = plugin(&scratch("missing"), "", &[]);
    p.exec.command = Some("/nonexistent/kubelogin".into());
    p.exec.install_hint = Some("install kubelogin \u{1b}[31mnow".into());
    let err = rt().block_on(p.run()).unwrap_err().to_string();
    assert!(err.contains("could not be started"), "{err}");
    assert!(err.contains("install kubelogin"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err:?}");
}

#[test]
fn interactive_always_without_a_terminal_is_refused_before_running() {
    let dir = scratch("always");
    let ran = dir.join("ran");
    let mut p = plugin(&dir, &format!("touch {}", ran.display()), &[]);
    p.exec.interactive_mode = Some(ExecInteractiveMode::Always);
    console_holds_terminal();
    let err = rt().block_on(p.run()).unwrap_err().to_string();
    assert!(err.contains("needs a terminal"), "{err}");
    assert!(!ran.exists());
}

#[test]
fn answers_are_read_as_client_go_reads_them() {
    let cert = parse(
        br#"{"kind":"ExecCredential","status":{"clientCertificateData":"C","clientKeyData":"K"}}"#,
    )
    .unwrap();
    assert_eq!(cert, Credential::Certificate { cert: "C".into(), key: "K".into(), expires: None });
    let cases: [(&[u8], &str); 5] = [
        (b"not json", "not an ExecCredential"),
        (br#"{"kind":"ExecCredential"}"#, "without a status"),
        (br#"{"kind":"Secret","status":{"token":"t"}}"#, "not an ExecCredential"),
        (br#"{"status":{"clientCertificateData":"C"}}"#, "without its key"),
        (br#"{"status":{"token":"t","expirationTimestamp":"soon"}}"#, "not a time"),
    ];
    for (out, want) in cases {
        let err = parse(out).unwrap_err();
        assert!(err.contains(want), "{err} (wanted {want})");
    }
}

#[test]
fn a_failure_is_held_before_the_plugin_runs_again() {
    let dir = scratch("hold");
    let runs = dir.join("runs");
    let p = plugin(&dir, &format!("echo run >> {}\nexit 1", runs.display()), &[]);
    let config = kube::Config::new("https://127.0.0.1:1".parse().unwrap());
    let lazy = Lazy::new(config, p);
    rt().block_on(async {
        for _ in 0..3 {
            let err = lazy.shared.client().await.err().expect("fails").to_string();
            assert!(err.contains("failed (exit status: 1)"), "{err}");
        }
    });
    assert_eq!(std::fs::read_to_string(&runs).unwrap().lines().count(), 1);
}

#[test]
fn a_credential_error_is_sorted_as_refused_credentials() {
    let e = kube::Error::Service(Box::new(CredentialError("the plugin failed".into())));
    assert_eq!(super::super::trouble::of(&e), super::super::trouble::Trouble::Unauthorized);
    assert_eq!(super::super::trouble::brief(&e), "the plugin failed");
}

#[test]
fn only_a_plugin_kube_would_use_is_taken() {
    let exec = ExecConfig { command: Some("aws".into()), ..Default::default() };
    let mut config = kube::Config::new("https://127.0.0.1:1".parse().unwrap());
    config.auth_info.exec = Some(exec.clone());
    config.auth_info.token = Some("static".to_string().into());
    assert!(Plugin::take(&mut config, "u").is_none());
    assert!(config.auth_info.exec.is_some());
    config.auth_info.token = None;
    let p = Plugin::take(&mut config, "u\u{1b}]0;x").expect("taken");
    assert!(config.auth_info.exec.is_none());
    assert_eq!(p.name, "aws");
    assert!(!p.called().contains('\u{1b}'));
}

#[test]
fn a_credential_is_kept_until_shortly_before_it_expires() {
    let dir = scratch("renew");
    let runs = dir.join("runs");
    let soon =
        k8s_openapi::jiff::Timestamp::now() + k8s_openapi::jiff::SignedDuration::from_secs(10);
    let script = |expires: String| {
        format!(
            "echo run >> {}\nprintf '{{\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"t\",\
             \"expirationTimestamp\":\"{expires}\"}}}}'",
            runs.display()
        )
    };
    let config = || kube::Config::new("https://127.0.0.1:1".parse().unwrap());
    let count = || std::fs::read_to_string(&runs).map_or(0, |s| s.lines().count());
    // Expiring within RENEW_BEFORE: every request runs the plugin again.
    let mut p = plugin(&dir, &script(soon.to_string()), &[]);
    p.name = "plugin-renew".into();
    p.exec.args = Some(vec!["soon".into()]);
    let lazy = Lazy::new(config(), p);
    rt().block_on(async {
        lazy.shared.client().await.unwrap();
        lazy.shared.client().await.unwrap();
    });
    assert_eq!(count(), 2);
    // Good for an hour: run once, then kept (also by a second client of the same plugin).
    let later =
        k8s_openapi::jiff::Timestamp::now() + k8s_openapi::jiff::SignedDuration::from_secs(3600);
    let mut p = plugin(&dir, &script(later.to_string()), &[]);
    p.exec.args = Some(vec!["later".into()]);
    let (a, b) = (Lazy::new(config(), p.clone()), Lazy::new(config(), p));
    rt().block_on(async {
        a.shared.client().await.unwrap();
        a.shared.client().await.unwrap();
        b.shared.client().await.unwrap();
    });
    assert_eq!(count(), 3);
}

#[test]
fn a_refused_credential_runs_the_plugin_again_once_it_is_old_enough() {
    let dir = scratch("refused");
    let runs = dir.join("runs");
    let script = format!(
        "echo run >> {}\nprintf '{{\"kind\":\"ExecCredential\",\"status\":{{\"token\":\"t%s\"}}}}' $$",
        runs.display()
    );
    let count = || std::fs::read_to_string(&runs).map_or(0, |s| s.lines().count());
    // A token of its own each run (the run's pid).
    let mut p = plugin(&dir, &script, &[]);
    p.exec.args = Some(vec!["refused".into()]);
    let config = || kube::Config::new("https://127.0.0.1:1".parse().unwrap());
    let (a, b) = (Lazy::new(config(), p.clone()), Lazy::new(config(), p));
    rt().block_on(async {
        let (_, cred) = a.shared.client().await.unwrap();
        b.shared.client().await.unwrap();
        assert_eq!(count(), 1, "one run for both clients");
        // Refused at once: too young to be given up (refusals in a row run it once).
        a.shared.refused(&cred).await;
        a.shared.client().await.unwrap();
        assert_eq!(count(), 1);
        // Refused once it is REAUTH_AFTER old: the next request runs the plugin again, and
        // the other client, refused the same credential, takes the new one without a run.
        for shared in [&a.shared, &b.shared] {
            let mut state = shared.state.lock().await;
            let held = state.client.as_mut().unwrap();
            held.2 = Instant::now().checked_sub(REAUTH_AFTER).unwrap();
        }
        a.shared.refused(&cred).await;
        a.shared.client().await.unwrap();
        assert_eq!(count(), 2, "run again after the refusal");
        b.shared.refused(&cred).await;
        b.shared.client().await.unwrap();
        assert_eq!(count(), 2, "the other client takes what the plugin gave again");
    });
}
