//! Per-pod gates as an operator runs them: `ststui rollout --pre-delete cmd:… --post-ready cmd:…`
//! against the served simulator, each gate appending to a trace file. OnDelete: pre-delete →
//! eviction → the pod back → post-ready, pod by pod; a "not yet" (exit 75) is asked again; a
//! failure halts with the gate's output, recorded and named by `explain`; RollingUpdate with
//! gates lowers the partition one ordinal per gate pair; `--last-by` rolls the named pod last.

use super::*;

/// `rig` with web switched to OnDelete (its pods wait for the plan to evict them).
fn on_delete_rig(test: &str) -> Rig {
    let r = rig(test, "nginx:1.26");
    r.op(ClusterOp::SetStrategy {
        set: web(),
        kind: ststui::core::spec::UpdateType::OnDelete,
        rolling: None,
    });
    r
}

/// A gate appending `WHAT $STSTUI_POD` to `trace`, then ending with `code`.
fn tracing_gate(trace: &std::path::Path, what: &str) -> String {
    format!("cmd:echo {what} $STSTUI_POD >> {}", trace.display())
}

/// Marks `pod` not Ready (its readiness probe not passing).
fn unready(r: &Rig, pod: &str) {
    let pod = ObjRef::new("default", pod);
    r.call(move |sim| {
        sim.apply_op(ststui::backend::Op::from(ststui::backend::Fault::SetPodReady {
            pod,
            ready: false,
        }))
    })
    .unwrap();
}

/// A shell script `name` in the rig's folder running `body`, as a `cmd:` gate for a pod.
fn script_gate(r: &Rig, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let path = r.dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("cmd:{} {{pod}}", path.display())
}

fn trace_lines(trace: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(trace).unwrap_or_default().lines().map(str::to_string).collect()
}

/// `rollout web --steps 1,100%` with tracing pre-delete and post-ready gates, done: its
/// output and gates, the trace checked pod by pod (pre, then post, highest ordinal first).
fn traced_rollout(r: &Rig) -> (String, String, String) {
    let trace = r.dir.join("trace");
    let pre = tracing_gate(&trace, "pre");
    let post = tracing_gate(&trace, "post");
    let (code, out, err) = ststui(
        r,
        &["rollout", "web", "--steps", "1,100%", "--pre-delete", &pre, "--post-ready", &post],
    );
    assert_eq!(code, 0, "{out}{err}");
    let want: Vec<String> = ["web-3", "web-2", "web-1", "web-0"]
        .iter()
        .flat_map(|p| [format!("pre {p}"), format!("post {p}")])
        .collect();
    assert_eq!(trace_lines(&trace), want, "{out}");
    (out, pre, post)
}

#[test]
fn an_on_delete_plan_runs_pre_delete_eviction_and_post_ready_pod_by_pod() {
    let r = on_delete_rig("gates-order");
    let (out, pre, post) = traced_rollout(&r);
    // Between each pod's two gates, its eviction; the post-ready gate saw the new pod.
    for p in ["web-3", "web-2", "web-1", "web-0"] {
        let pre_at = out.find(&format!("pre-delete gate `{pre}` on {p}: passed")).unwrap();
        let evicted = out.find(&format!("evicted {p} ")).unwrap();
        let post_at = out.find(&format!("post-ready gate `{post}` on {p}: passed")).unwrap();
        assert!(pre_at < evicted && evicted < post_at, "{p}: {out}");
    }
    let set = r.the_set();
    assert_eq!(set.status.unwrap().updated_replicas, Some(4));
    let plan = the_plan(&r).unwrap();
    assert_eq!(plan.phase, Phase::Done);
    assert_eq!(plan.gates.pre_delete.as_deref(), Some(pre.as_str()), "the gates are recorded");
}

#[test]
fn a_not_yet_is_asked_again_and_a_failure_halts_with_the_gates_output() {
    let r = on_delete_rig("gates-fail");
    let count = r.dir.join("count");
    // Not yet twice (exit 75), then go; web-2's pre-delete refuses outright.
    let pre = format!(
        "cmd:n=$(cat {c} 2>/dev/null || echo 0); echo $((n+1)) > {c}; \
         if [ $STSTUI_POD = web-2 ]; then echo 'drain refused: web-2 leads 12 partitions'; exit 1; fi; \
         if [ $n -lt 2 ]; then echo 'isr 2/3'; exit 75; fi",
        c = count.display()
    );
    let (code, out, err) = ststui(
        &r,
        &["rollout", "web", "--steps", "1,100%", "--pre-delete", &pre, "--gate-interval", "1s"],
    );
    assert_eq!(code, 3, "halted: {out}{err}");
    assert!(out.contains("on web-3: not yet (exit 75"), "{out}");
    assert!(out.contains("(try 2 of 180)"), "{out}");
    assert!(out.contains("on web-3: passed"), "{out}");
    let plan = the_plan(&r).unwrap();
    assert_eq!(plan.phase, Phase::Halted);
    let why = plan.reason.clone().unwrap();
    assert!(
        why.contains("on web-2 failed (exit 1): drain refused: web-2 leads 12 partitions"),
        "{why}"
    );
    let gate = plan.gate.clone().unwrap();
    assert_eq!((gate.gate.as_str(), gate.pod.as_deref()), ("pre-delete", Some("web-2")));
    assert_eq!(gate.output, vec!["drain refused: web-2 leads 12 partitions".to_string()]);
    // web-2 was not evicted: still on the old revision.
    let old = r.the_set().status.unwrap().current_revision.unwrap();
    let web2 = ObjRef::new("default", "web-2");
    let rev = r.call(move |sim| {
        sim.pod(&web2)
            .and_then(|p| p.metadata.labels.as_ref()?.get("controller-revision-hash").cloned())
    });
    assert_eq!(rev.as_deref(), Some(old.as_str()));
    let (_, json, _) = ststui(&r, &["explain", "web", "-o", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["plan"]["record"]["gate"]["gate"], "pre-delete", "{json}");
    assert_eq!(v["plan"]["record"]["gate"]["status"], "failed", "{json}");
}

#[test]
fn a_rolling_update_plan_with_gates_lowers_the_partition_one_ordinal_per_gate_pair() {
    let r = rig("gates-rolling", "nginx:1.26");
    let (out, _, _) = traced_rollout(&r);
    assert_eq!(*r.partitions.lock().unwrap(), vec![4, 3, 2, 1, 0], "{out}");
}

#[test]
fn last_by_rolls_the_pod_it_names_last_and_a_resume_must_state_the_gates() {
    let r = on_delete_rig("gates-last");
    let trace = r.dir.join("trace");
    let pre = tracing_gate(&trace, "pre");
    let (code, out, err) = ststui(
        &r,
        &["rollout", "web", "--steps", "100%", "--pre-delete", &pre, "--last-by", "cmd:echo web-2"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(trace_lines(&trace), ["pre web-3", "pre web-1", "pre web-0", "pre web-2"], "{out}");
    assert!(out.contains("web-2 rolls last"), "{out}");
    // --last on a RollingUpdate set is refused: the partition decides the order there.
    let r = rig("gates-last-rolling", "nginx:1.26");
    let (code, _, err) = ststui(&r, &["rollout", "web", "--steps", "100%", "--last", "web-0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--last and --last-by order an OnDelete plan"), "{err}");
}

#[test]
fn a_bad_gate_is_refused_with_the_forms_expected() {
    let r = rig("gates-bad", "nginx:1.26");
    for (gate, words) in [
        ("./drain.sh", "expected cmd:COMMAND, exec:CONTAINER -- COMMAND… or http::PORT/PATH"),
        ("sim:", "sim: gates are the simulator's rehearsal"),
        ("http::99999/ready", "a port from 1 to 65535"),
        ("cmd:./x {host}", "unknown placeholder {host}"),
    ] {
        let (code, _, err) =
            ststui(&r, &["rollout", "web", "--steps", "100%", "--pre-delete", gate]);
        assert_eq!(code, 2, "{gate}: {err}");
        assert!(err.contains(words), "{gate}: {err}");
    }
    assert!(the_plan(&r).is_none(), "nothing started");
}

/// `http::` gates through the API server's pod proxy: the served simulator's pods answer as a
/// readiness endpoint (200 while Ready, 503 otherwise), so a post-ready gate passes once the
/// pod is back, and a pre-delete gate on an unready pod says "not yet" until its tries run out.
#[test]
fn http_gates_go_through_the_pod_proxy_and_a_503_is_not_yet() {
    let r = on_delete_rig("gates-http");
    let (code, out, err) =
        ststui(&r, &["rollout", "web", "--steps", "1", "--post-ready", "http::8080/ready"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("post-ready gate `http::8080/ready` on web-3: passed (HTTP 200"), "{out}");
    // web-2 unready: its pre-delete answers 503 twice, and the plan halts, web-2 kept.
    unready(&r, "web-2");
    let args = [
        "rollout",
        "web",
        "--steps",
        "2",
        "--pre-delete",
        "http::8080/ready",
        "--gate-interval",
        "1s",
        "--gate-tries",
        "2",
    ];
    let (code, out, err) = ststui(&r, &args);
    assert_eq!(code, 3, "halted: {out}{err}");
    assert!(out.contains("on web-2: not yet (HTTP 503"), "{out}");
    let why = the_plan(&r).unwrap().reason.unwrap();
    assert!(
        why.contains("on web-2 still not ready after 2 tries (HTTP 503): web-2 is not Ready"),
        "{why}"
    );
}

/// `exec:` gates through the API's exec (a WebSocket, as kubectl exec): the served simulator's
/// pods answer as a readiness check would (exit 0 while Ready, 75 otherwise); a container the
/// pod does not have is refused and the plan halts naming it.
#[test]
fn exec_gates_run_in_the_pod_through_the_api() {
    let r = on_delete_rig("gates-exec");
    let (code, out, err) = ststui(
        &r,
        &["rollout", "web", "--steps", "1", "--pre-delete", "exec:app -- nodetool drain"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("on web-3: passed (exit 0"), "{out}");
    assert!(out.contains("simulated exec in web-3/app: nodetool drain"), "{out}");
    unready(&r, "web-2");
    let (code, out, err) = ststui(
        &r,
        &[
            "rollout",
            "web",
            "--steps",
            "2",
            "--pre-delete",
            "exec:app -- nodetool status",
            "--gate-interval",
            "1s",
            "--gate-tries",
            "2",
        ],
    );
    assert_eq!(code, 3, "{out}{err}");
    let why = the_plan(&r).unwrap().reason.unwrap();
    assert!(why.contains("on web-2 still not ready after 2 tries (exit 75)"), "{why}");
    let (code, out, err) = ststui(
        &r,
        &["rollout", "web", "--steps", "2", "--pre-delete", "exec:db -- true", "--force"],
    );
    assert_eq!(code, 3, "{out}{err}");
    let why = the_plan(&r).unwrap().reason.unwrap();
    assert!(why.contains("failed (exec refused): "), "{why}");
    assert!(why.contains("container db is not valid for pod web-2"), "{why}");
}

/// A gate still running when the rollout gives up (`--timeout`) is killed with everything it
/// started (its own process group), and so is one that outlives its `--gate-timeout`: nothing
/// is left running unwatched.
#[test]
fn a_gate_running_when_the_rollout_stops_is_killed_with_what_it_started() {
    let r = on_delete_rig("gates-killed");
    let pids = r.dir.join("pids");
    let alive = |pid: i32| unsafe { libc::kill(pid, 0) == 0 };
    let gone = |pid: i32| {
        (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            !alive(pid)
        })
    };
    let sleeper = || -> i32 {
        let text = std::fs::read_to_string(&pids).unwrap_or_default();
        let last = text.lines().last().unwrap_or_else(|| panic!("no pid written"));
        last.trim().parse().unwrap()
    };
    let gate = format!("cmd:sleep 60 & echo $! >> {}; wait", pids.display());
    let (code, out, err) =
        ststui(&r, &["rollout", "web", "--steps", "1", "--pre-delete", &gate, "--timeout", "3s"]);
    assert_eq!(code, 1, "timed out: {out}{err}");
    let pid = sleeper();
    assert!(gone(pid), "the gate's sleep {pid} outlived the rollout: {out}");
    // The same gate with another timeout: the recorded plan differs, by its settings.
    let again = ["rollout", "web", "--steps", "1", "--pre-delete", &gate, "--gate-timeout", "2s"];
    let (code, _, err) = ststui(&r, &again);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("recorded interval 10s, timeout 120s, tries 180, recheck 0s, asked interval 10s, timeout 2s"), "{err}");
    let (code, out, err) = ststui(&r, &[&again[..], &["--force"]].concat());
    assert_eq!(code, 3, "halted on the gate: {out}{err}");
    assert!(out.contains("did not end within 2s: killed"), "{out}");
    let pid = sleeper();
    assert!(gone(pid), "the timed-out gate's sleep {pid} outlived it: {out}");
}

/// `--before-step` with `--recheck` (CockroachDB's "0 under-replicated ranges, then again 22 s
/// later"): asked before each step opens and again once the recheck is due, both before the
/// step's pods go; the wait between is said when it starts, and the recheck's pass is named.
#[test]
fn before_step_is_asked_before_each_step_and_again_after_the_recheck() {
    let r = rig("gates-before-step", "nginx:1.26");
    let trace = r.dir.join("trace");
    let gate = format!("cmd:echo before $STSTUI_STEP >> {}", trace.display());
    let (code, out, err) = ststui(
        &r,
        &["rollout", "web", "--steps", "1,100%", "--before-step", &gate, "--recheck", "1s"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(trace_lines(&trace), ["before 1", "before 1", "before 2", "before 2"], "{out}");
    assert_eq!(out.matches("passed (exit 0").count(), 4, "{out}");
    // Said with the pass, when the wait starts (the timeline's line, not only a wait's words).
    let with_pass =
        |l: &&str| l.contains("passed (exit 0") && l.ends_with("; asked again in 1s (--recheck)");
    assert_eq!(out.lines().filter(with_pass).count(), 2, "{out}");
    assert_eq!(out.matches("passed (exit 0, 1s) (the recheck)").count(), 2, "{out}");
    // Each step opens only after its recheck passed (the line announcing the step's gates
    // comes before both).
    let lines: Vec<&str> = out.lines().collect();
    for step in ["step 1/2", "step 2/2"] {
        let at =
            |what: &dyn Fn(&str) -> bool| lines.iter().position(|l| l.starts_with(step) && what(l));
        let recheck = at(&|l| l.ends_with("(the recheck)")).unwrap_or_else(|| panic!("{out}"));
        let opened = at(&|l| l.contains(": partition") && !l.contains("through its gates"));
        let opened = opened.unwrap_or_else(|| panic!("{step} not opened: {out}"));
        assert!(recheck < opened, "{step} opened before its recheck: {out}");
    }
    assert_eq!(r.partitions.lock().unwrap().last(), Some(&0), "{out}");
}

/// A 5-pod gated plan's log (stdout not a terminal): a line when the state changes, never a
/// line repeated or differing from the one before only in a counter, however long a gate says
/// "not yet".
#[test]
fn a_gated_plans_log_has_a_line_per_change_never_per_second() {
    let served = crate::support::rig::Served::new(
        "plan",
        "gate-log",
        vec![set("web", 5)],
        &[],
        kubelet_breaking(100, "nginx:broken"),
    );
    let r = Rig { served, partitions: Arc::new(Mutex::new(Vec::new())) };
    r.op(ClusterOp::SetPartition { set: web(), partition: 5 });
    r.op(ClusterOp::SetImage { set: web(), image: "nginx:1.26".into() });
    // "Not yet" twice for each pod, then yes.
    let pre = script_gate(
        &r,
        "isr-ok.sh",
        "f=\"$(dirname \"$0\")/tries-$1\"\nn=$(cat \"$f\" 2>/dev/null || echo 0)\n\
         echo $((n+1)) > \"$f\"\n[ \"$n\" -ge 2 ] || { echo \"isr $n/3\"; exit 75; }\necho ok",
    );
    let (code, out, err) = ststui(
        &r,
        &[
            "rollout",
            "web",
            "--steps",
            "1,100%",
            "--pre-delete",
            &pre,
            "--gate-interval",
            "1s",
            "--timeout",
            "120s",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<&str> = out.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(lines.len() > 10, "{out}");
    for pair in lines.windows(2) {
        assert_ne!(
            ststui::plan::said::counters_masked(pair[0]),
            ststui::plan::said::counters_masked(pair[1]),
            "a line differing only in a counter:\n{}\n{}\n\n{out}",
            pair[0],
            pair[1]
        );
    }
    // Ours (a gate's own output, quoted under `  |`, is each run's: it may say the same).
    let mut seen = std::collections::HashSet::new();
    for l in lines.iter().filter(|l| !l.starts_with("  |")) {
        assert!(seen.insert(*l), "a line repeated: {l}\n\n{out}");
    }
}

/// While an `--image` plan waits before its first pod on a pre-delete gate saying "not yet"
/// (its own freeze still on the set), the set is the plan's: `wait` waits (exit 1 at its
/// timeout, naming the gate) — never "stuck: frozen … `ststui resume`", which would halt the
/// plan — and `explain` says Progressing, waiting on the gate, done false.
#[test]
fn a_plans_own_freeze_is_the_plans_while_its_gate_says_not_yet() {
    let r = rig("image-gate", "nginx:1.25");
    r.op(ClusterOp::SetPartition { set: web(), partition: 0 });
    let pre = script_gate(&r, "never.sh", "echo isr 2/3\nexit 75");
    let mut runner = spawn(
        &r,
        &[
            "rollout",
            "web",
            "--image",
            "app=nginx:1.27",
            "--steps",
            "1,100%",
            "--pre-delete",
            &pre,
            "--gate-interval",
            "1s",
        ],
    );
    until_plan(&r, "the gate said not yet", |p| {
        p.gate.as_ref().is_some_and(|g| g.status == ststui::plan::gate::GateStatus::NotYet)
    });
    assert!(ststui::steer::frozen(&r.the_set()).is_some(), "the plan's freeze is on the set");
    let (code, out, err) = ststui(&r, &["wait", "web", "--timeout", "3s"]);
    assert_eq!(code, 1, "waits, not stuck: {out}{err}");
    assert!(out.contains("waiting on the pre-delete gate on web-3: not yet"), "{out}");
    assert!(!out.contains("ststui resume"), "{out}");
    let (_, json, _) = ststui(&r, &["explain", "web", "-o", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["health"], "Progressing", "{json}");
    assert_eq!(v["verdict"]["done"], false, "{json}");
    assert_eq!(v["verdict"]["waitingOn"], "gate", "{json}");
    let (code, _, err) = ststui(&r, &["resume", "web"]);
    assert_eq!(code, 1, "resume refuses under the plan: {err}");
    assert!(err.contains("held by its rollout plan"), "{err}");
    let _ = runner.kill();
    let _ = runner.wait();
}

/// An OnDelete plan whose next eviction a budget refuses: `explain` names the budget (the
/// controller pane's words, not "waiting for a manual delete"), and wait waits.
#[test]
fn an_on_delete_plan_held_by_a_budget_names_the_budget() {
    let r = on_delete_rig("ondelete-pdb");
    r.call(|sim| {
        let mut b = k8s_openapi::api::policy::v1::PodDisruptionBudget::default();
        b.metadata.name = Some("web".into());
        b.metadata.namespace = Some("default".into());
        b.spec = Some(k8s_openapi::api::policy::v1::PodDisruptionBudgetSpec {
            min_available: Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(4)),
            selector: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector {
                match_labels: Some([("app".to_string(), "web".to_string())].into()),
                ..Default::default()
            }),
            ..Default::default()
        });
        sim.apply_budget(b).unwrap();
    });
    let mut runner = spawn(&r, &["rollout", "web", "--steps", "1,100%"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, out, _) = ststui(&r, &["explain", "web"]);
        if out.contains("waits to evict web-3: pdb/web") {
            assert!(!out.contains("manual delete"), "{out}");
            assert!(out.contains("the rollout plan evicts them one at a time"), "{out}");
            break;
        }
        assert!(Instant::now() < deadline, "{out}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let (code, out, err) = ststui(&r, &["wait", "web", "--timeout", "2s"]);
    assert_eq!(code, 1, "{out}{err}");
    let _ = runner.kill();
    let _ = runner.wait();
}
