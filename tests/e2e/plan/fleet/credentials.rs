//! A fleet through refused credentials: every cluster's kubeconfig user an exec plugin (a
//! shell script counting its runs), the second cluster answering 401 to everything for a few
//! seconds as its turn comes. The runner authenticates again — the plugin runs again — and goes
//! on; it never calls the cluster failed, and it never skips it.

use super::*;

/// Every context's user an exec plugin of its own (`plugin-<cluster>` in the fleet's
/// directory), each run adding a line to `runs-<cluster>` and answering a token of its own.
fn exec_users(f: &Fleet) {
    use std::os::unix::fs::PermissionsExt as _;
    let kc = f.dir().join("kubeconfig");
    let mut text = std::fs::read_to_string(&kc).unwrap();
    for c in CLUSTERS {
        let plugin = f.dir().join(format!("plugin-{c}"));
        let runs = f.dir().join(format!("runs-{c}"));
        let body = format!(
            "#!/bin/sh\necho run >> {}\nprintf '{{\"kind\":\"ExecCredential\",\"apiVersion\":\
             \"client.authentication.k8s.io/v1\",\"status\":{{\"token\":\"t%s\"}}}}' $$\n",
            runs.display()
        );
        std::fs::write(&plugin, body).unwrap();
        std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let exec = format!(
            "- name: {c}\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      \
             command: {}\n      interactiveMode: Never\n",
            plugin.display()
        );
        let plain = format!("- name: {c}\n  user: {{}}\n");
        assert!(text.contains(&plain), "{text}");
        text = text.replace(&plain, &exec);
    }
    std::fs::write(&kc, text).unwrap();
}

fn runs(f: &Fleet, cluster: &str) -> usize {
    std::fs::read_to_string(f.dir().join(format!("runs-{cluster}")))
        .map_or(0, |s| s.lines().count())
}

#[test]
fn a_fleet_goes_on_through_refused_credentials_once_it_has_authenticated_again() {
    let f = fleet("reauth", ["nginx:1.26"; 3]);
    exec_users(&f);
    let args =
        ["rollout", "web", "--contexts", "eu,us,ap", "--steps", "1,100%", "--cluster-bake", "3s"];
    let child = once_eu_is_done(&f, &args);
    let before = runs(&f, "us");
    assert!(before >= 1, "us's plugin ran for its watches");
    // us refuses every request for 8 s, across its cluster bake and its first writes.
    f.clusters[1].call(|sim| sim.api_fault(ApiFault::Unauthorized { ms: 8_000 }));
    let (code, out, err) = runner::said(&child.wait_with_output().unwrap());
    assert_eq!(code, 0, "the fleet went on: {out}{err}");
    assert!(out.contains("fleet web: done: every set of 3 rolled"), "{out}");
    assert!(runs(&f, "us") > before, "us's plugin ran again after the refusals: {out}");
    assert!(!out.contains("permission denied"), "{out}");
    assert!(
        out.contains("the server refused the credentials (Unauthorized) (trying again)"),
        "{out}"
    );
    let seen = f.seen.lock().unwrap().clone();
    let done = |c: &str| seen.iter().position(|s| matches!(s, Seen::Done(x) if *x == c));
    let moved = |c: &str| seen.iter().position(|s| matches!(s, Seen::Moved(x, _) if *x == c));
    assert!(done("us").is_some() && moved("ap") > done("us"), "us, then ap: {seen:?}");
    for (i, c) in CLUSTERS.iter().enumerate() {
        assert_eq!(f.set(i).status.unwrap().updated_replicas, Some(3), "{c} rolled");
    }
}
