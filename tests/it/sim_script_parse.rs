//! The scenario parser: every command parses to what it means, defaults are the spec's, and
//! every kind of mistake is an error naming the file, the line, what was wrong and what is
//! expected.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::path::{Path, PathBuf};

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use ststui::backend::ImageFailure;
use ststui::core::spec::UpdateType;
use ststui::sim::ApiFault;
use ststui::sim::scenario::parse::{DEFAULT_SETTLE_MAX_MS, duration};
use ststui::sim::scenario::{
    Cascade, Check, Command, CreateArgs, KubeletArgs, Name, Policy, Retention, ScriptError, parse,
};

fn name(n: &str) -> Name {
    Name { namespace: "default".into(), name: n.into() }
}

fn one(text: &str) -> Command {
    let script = parse(Path::new("dir/t.scenario"), text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(script.lines.len(), 1, "{text}");
    script.lines[0].command.clone()
}

fn err(text: &str) -> ScriptError {
    match parse(Path::new("dir/t.scenario"), text) {
        Ok(s) => panic!("expected an error for {text:?}, got {s:?}"),
        Err(e) => e,
    }
}

#[test]
fn create_defaults_are_the_specs() {
    let Command::Create(a) = one("create web") else { panic!("not a create") };
    assert_eq!(
        *a,
        CreateArgs {
            set: name("web"),
            replicas: 1,
            image: "nginx:1.25".into(),
            policy: Policy::OrderedReady,
            strategy: UpdateType::RollingUpdate,
            partition: None,
            max_unavailable: None,
            min_ready_seconds: 0,
            start_ordinal: None,
            claims: vec![],
            history_limit: 10,
            when_deleted: Retention::Retain,
            when_scaled: Retention::Retain,
            labels: Default::default(),
        }
    );
}

#[test]
fn create_takes_every_key() {
    let Command::Create(a) =
        one("create db replicas=5 image=pg:16 policy=Parallel strategy=OnDelete partition=2 \
         maxUnavailable=25% minReadySeconds=3 startOrdinal=1 claims=data,logs historyLimit=4 \
         whenDeleted=Delete whenScaled=Delete labels=rollout-group=ingester,zone=a")
    else {
        panic!("not a create")
    };
    assert_eq!(a.replicas, 5);
    assert_eq!(a.image, "pg:16");
    assert_eq!(a.policy, Policy::Parallel);
    assert_eq!(a.strategy, UpdateType::OnDelete);
    assert_eq!(a.partition, Some(2));
    assert_eq!(a.max_unavailable, Some(IntOrString::String("25%".into())));
    assert_eq!(a.min_ready_seconds, 3);
    assert_eq!(a.start_ordinal, Some(1));
    assert_eq!(a.claims, vec!["data".to_string(), "logs".to_string()]);
    assert_eq!(a.history_limit, 4);
    assert_eq!((a.when_deleted, a.when_scaled), (Retention::Delete, Retention::Delete));
    let labels: Vec<(&str, &str)> =
        a.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(labels, [("rollout-group", "ingester"), ("zone", "a")]);
    // The set's labels, not its pods': a group's label selects sets.
    let set = ststui::sim::scenario::build::build_set(&a);
    assert_eq!(set.metadata.labels.as_ref().map(|l| l.len()), Some(2));
    let pods = set.spec.template.metadata.and_then(|m| m.labels).unwrap_or_default();
    assert!(!pods.contains_key("rollout-group"), "{pods:?}");
}

#[test]
fn create_labels_must_be_key_value_pairs() {
    for (line, problem) in [
        ("create web labels=tier", "has an item without '='"),
        ("create web labels==x", "has an empty key"),
        ("create web labels=a=1,a=2", "names a key twice"),
        ("create web labels=rollout-group=in/valid", "has a key or value the API refuses"),
        ("create web labels=-x=1", "has a key or value the API refuses"),
    ] {
        let e = err(line).to_string();
        assert!(e.contains(problem), "{line}: {e}");
    }
}

#[test]
fn every_other_command_parses() {
    let cases: Vec<(&str, Command)> = vec![
        ("apply web.yaml", Command::Apply(PathBuf::from("dir/web.yaml"))),
        ("apply /abs/web.yaml", Command::Apply(PathBuf::from("/abs/web.yaml"))),
        ("image web nginx:1.27", Command::Image { set: name("web"), image: "nginx:1.27".into() }),
        ("scale web 0", Command::Scale { set: name("web"), replicas: 0 }),
        ("scale web -1", Command::Scale { set: name("web"), replicas: -1 }),
        ("partition web 2", Command::Partition { set: name("web"), partition: 2 }),
        (
            "strategy web OnDelete",
            Command::Strategy { set: name("web"), kind: UpdateType::OnDelete },
        ),
        (
            "strategy web RollingUpdate",
            Command::Strategy { set: name("web"), kind: UpdateType::RollingUpdate },
        ),
        (
            "strategy web Recreate",
            Command::Strategy { set: name("web"), kind: UpdateType::Recreate },
        ),
        (
            "maxunavailable web 2",
            Command::MaxUnavailable { set: name("web"), value: IntOrString::Int(2) },
        ),
        (
            "maxunavailable web 50%",
            Command::MaxUnavailable { set: name("web"), value: IntOrString::String("50%".into()) },
        ),
        ("undo web", Command::Undo { set: name("web"), revision: None }),
        ("undo web 3", Command::Undo { set: name("web"), revision: Some(3) }),
        ("restart web", Command::Restart { set: name("web") }),
        ("delete web", Command::Delete { set: name("web"), cascade: Cascade::Background }),
        (
            "delete web cascade=orphan",
            Command::Delete { set: name("web"), cascade: Cascade::Orphan },
        ),
        ("delete-pod web-1", Command::DeletePod { pod: name("web-1"), force: false }),
        ("force-delete-pod web-1", Command::DeletePod { pod: name("web-1"), force: true }),
        ("fail web-0", Command::Fail { pod: name("web-0") }),
        ("unready web-0", Command::SetReady { pod: name("web-0"), ready: false }),
        ("ready web-0", Command::SetReady { pod: name("web-0"), ready: true }),
        (
            "kubelet start=250ms ready=2s stop=1m broken=bad:1",
            Command::Kubelet(KubeletArgs {
                start_ms: Some(250),
                ready_ms: Some(2000),
                stop_ms: Some(60_000),
                broken: Some("bad:1".into()),
                failure: None,
            }),
        ),
        (
            "kubelet broken=bad:1 failure=crash",
            Command::Kubelet(KubeletArgs {
                broken: Some("bad:1".into()),
                failure: Some(ImageFailure::Crash),
                ..Default::default()
            }),
        ),
        (
            "break-image bad:1",
            Command::BrokenImage { image: "bad:1".into(), broken: Some(ImageFailure::Probe) },
        ),
        (
            "break-image bad:1 failure=pull",
            Command::BrokenImage { image: "bad:1".into(), broken: Some(ImageFailure::Pull) },
        ),
        ("fix-image bad:1", Command::BrokenImage { image: "bad:1".into(), broken: None }),
        (
            "kubelet broken=",
            Command::Kubelet(KubeletArgs { broken: Some(String::new()), ..Default::default() }),
        ),
        ("pause", Command::Pause),
        ("resume", Command::Resume),
        ("step", Command::Step(1)),
        ("step 4", Command::Step(4)),
        ("wait 1m30s", Command::Wait(90_000)),
        ("settle", Command::Settle { max_ms: DEFAULT_SETTLE_MAX_MS }),
        ("settle max=2m", Command::Settle { max_ms: 120_000 }),
        (
            "expect web replicas=3 ready=2 available=1 current=0 updated=3 rolledOut=false \
             pods=web-0,web-1 blocked=true",
            Command::Expect {
                set: name("web"),
                checks: vec![
                    Check::Replicas(3),
                    Check::Ready(2),
                    Check::Available(1),
                    Check::Current(0),
                    Check::Updated(3),
                    Check::RolledOut(false),
                    Check::Pods(vec!["web-0".into(), "web-1".into()]),
                    Check::Blocked(true),
                ],
            },
        ),
        (
            "expect web pods=",
            Command::Expect { set: name("web"), checks: vec![Check::Pods(vec![])] },
        ),
        (
            "expect web claims=data-web-0",
            Command::Expect {
                set: name("web"),
                checks: vec![Check::Claims(vec!["data-web-0".into()])],
            },
        ),
        (
            "api-stall-watches 30s",
            Command::Api(ApiFault::StallWatches { ms: 30_000, resource: None }),
        ),
        (
            "api-stall-watches 2s pods",
            Command::Api(ApiFault::StallWatches { ms: 2_000, resource: Some("pods") }),
        ),
        ("api-errors 2", Command::Api(ApiFault::Errors { n: 2 })),
        ("api-lose-replies 1", Command::Api(ApiFault::LoseReplies { n: 1 })),
        (
            "scale prod/web 2",
            Command::Scale {
                set: Name { namespace: "prod".into(), name: "web".into() },
                replicas: 2,
            },
        ),
    ];
    for (text, want) in cases {
        assert_eq!(one(text), want, "{text}");
    }
}

#[test]
fn comments_blank_lines_and_line_numbers() {
    let text = "# a scenario\n\n   \ncreate web replicas=3  # trailing comment\n\twait 2s\n# end\n";
    let script = parse(Path::new("x.scenario"), text).unwrap_or_else(|e| panic!("{e}"));
    let got: Vec<(usize, &str)> =
        script.lines.iter().map(|l| (l.number, l.text.as_str())).collect();
    assert_eq!(got, vec![(4, "create web replicas=3"), (5, "wait 2s")]);
    assert!(parse(Path::new("x"), "").is_ok_and(|s| s.lines.is_empty()));
}

#[test]
fn durations() {
    assert_eq!(duration("250ms"), Ok(250));
    assert_eq!(duration("2s"), Ok(2000));
    assert_eq!(duration("1m"), Ok(60_000));
    assert_eq!(duration("1h"), Ok(3_600_000));
    assert_eq!(duration("0s"), Ok(0));
    for bad in ["", "2", "s", "2x", "1.5s", "-1s", "2 s"] {
        assert!(duration(bad).is_err(), "{bad:?} parsed");
    }
    // One cap for every duration, whatever overflows first: never a panic further on.
    assert_eq!(duration("24h"), Ok(86_400_000));
    assert_eq!(duration("23h59m60s"), Ok(86_400_000));
    for long in ["24h1s", "25h", "100000000h", "99999999999h", "18446744073709551615ms"] {
        let e = duration(long).unwrap_err().to_string();
        assert!(e.contains("is longer than 24h") && e.contains("at most 24h"), "{long}: {e}");
    }
    // A scenario line saying it is refused when read, naming the line.
    let e = err("kubelet start=99999999999h");
    assert!(e.message.contains("is longer than 24h"), "{}", e.message);
}

#[test]
fn a_bad_failure_is_named_with_what_is_expected() {
    for line in ["break-image bad:1 failure=oom", "kubelet broken=bad:1 failure=oom"] {
        let e = err(line);
        assert!(e.message.contains("failure=oom"), "{}", e.message);
        assert!(e.message.contains("probe, pull or crash"), "{}", e.message);
    }
}

#[test]
fn unknown_command_names_the_line_and_suggests() {
    let e = err("create web\n\nscal web 3\n");
    assert_eq!((e.file.as_str(), e.line), ("dir/t.scenario", 3));
    assert!(e.message.contains("unknown command \"scal\""), "{}", e.message);
    assert!(e.message.contains("did you mean \"scale\"?"), "{}", e.message);
    assert!(e.message.contains("expected one of create, apply"), "{}", e.message);
    assert!(e.to_string().starts_with("dir/t.scenario:3: "), "{e}");
}

#[test]
fn missing_arguments() {
    let cases = [
        ("scale web", "missing argument N", "usage: scale NAME N"),
        ("scale", "missing argument NAME", "usage: scale NAME N"),
        ("image web", "missing argument IMG", "usage: image NAME IMG"),
        ("apply", "missing argument FILE", "usage: apply FILE"),
        ("wait", "missing argument DUR", "usage: wait DUR"),
        ("delete-pod", "missing argument POD", "usage: delete-pod POD"),
        ("strategy web", "missing argument RollingUpdate|OnDelete", "usage: strategy"),
        ("expect web", "nothing to check", "usage: expect NAME key=value"),
        ("kubelet", "give at least one of start=", "usage: kubelet"),
    ];
    for (i, (text, what, usage)) in cases.iter().enumerate() {
        let padded = format!("{}{text}\n", "\n".repeat(i));
        let e = err(&padded);
        assert_eq!(e.line, i + 1, "{text}");
        assert!(e.message.contains(what), "{text}: {}", e.message);
        assert!(e.message.contains(usage), "{text}: {}", e.message);
    }
}

#[test]
fn bad_values() {
    let cases = [
        ("scale web three", "\"three\" is not a whole number"),
        ("partition web 1.5", "\"1.5\" is not a whole number"),
        ("strategy web Canary", "expected RollingUpdate, OnDelete or Recreate"),
        ("maxunavailable web lots", "expected e.g. 2 or 25%"),
        ("undo web 0", "expected a whole number ≥ 1"),
        ("step 0", "expected a whole number ≥ 1"),
        ("wait 5", "expected e.g. 250ms, 2s, 1m"),
        ("settle max=soon", "max=soon"),
        ("create web policy=Ordered", "expected OrderedReady or Parallel"),
        ("create web replicas=x", "replicas=x"),
        ("create web whenScaled=Keep", "expected Retain or Delete"),
        ("create web claims=a,,b", "empty item"),
        ("create web image=", "expected an image"),
        ("delete web cascade=foreground", "expected background or orphan"),
        ("expect web ready=-1", "expected a whole number ≥ 0"),
        ("expect web rolledOut=yes", "expected true or false"),
        ("kubelet start=fast", "expected e.g. 250ms"),
        ("scale /web 2", "expected NAME or NAMESPACE/NAME"),
        ("api-errors 0", "expected the number of requests, from 1"),
        ("api-lose-replies x", "expected the number of writes, from 1"),
        ("api-stall-watches long", "expected e.g. 250ms"),
        (
            "api-stall-watches 2s pod",
            "RESOURCE \"pod\" is not watched: expected one of statefulsets, pods,",
        ),
    ];
    for (text, what) in cases {
        let e = err(&format!("# header\n{text}"));
        assert_eq!(e.line, 2, "{text}");
        assert!(e.message.contains(what), "{text}: {}", e.message);
    }
}

#[test]
fn unknown_duplicate_and_extra_arguments() {
    let cases = [
        ("create web replica=3", "unknown key \"replica\" (expected one of replicas, image"),
        ("expect web readyReplicas=3", "unknown key \"readyReplicas\""),
        ("scale web 3 fast", "unexpected argument \"fast\""),
        ("pause now", "unexpected argument \"now\""),
        ("scale web 3 force=true", "this command takes no key=value arguments"),
        ("expect web ready=1 ready=2", "key \"ready\" given twice"),
        ("create web =3", "has no key before `=`"),
    ];
    for (text, what) in cases {
        let e = err(text);
        assert_eq!(e.line, 1);
        assert!(e.message.contains(what), "{text}: {}", e.message);
    }
}

#[test]
fn the_first_error_stops_the_parse() {
    let e = err("create web\nwait 1s\nbogus\nalso bogus\n");
    assert_eq!(e.line, 3);
}

#[test]
fn every_typo_of_a_script_is_named_at_once() {
    let e =
        err("create web\nscael web 3\nwait 1s\nimgae web nginx:1.26\nparition web 2\nwiat 2s\n");
    assert_eq!((e.line, e.more.len()), (2, 3), "{e}");
    let text = e.to_string();
    for (n, word) in [(2, "scael"), (4, "imgae"), (5, "parition"), (6, "wiat")] {
        assert!(
            text.contains(&format!("dir/t.scenario:{n}: unknown command \"{word}\"")),
            "{text}"
        );
    }
    assert!(text.contains("did you mean \"scale\""), "{text}");
}

#[test]
fn rollout_and_approve_parse_with_the_verbs_defaults() {
    use ststui::plan::{OnFailure, Steps};
    use ststui::sim::scenario::RolloutArgs;
    let Command::Rollout(a) = one("rollout web steps=1,50%,100% bake=30s") else {
        panic!("not a rollout")
    };
    let want = RolloutArgs {
        set: name("web"),
        steps: Steps::parse("1,50%,100%").unwrap(),
        bake_seconds: 30,
        stuck_after_ms: 600_000,
        on_failure: OnFailure::Hold,
        gates: Default::default(),
        replace_stuck: false,
        group: false,
        zone_bake_seconds: 0,
        tiers: None,
        batches: None,
        image: None,
        clusters: None,
        cluster_bake_seconds: 0,
    };
    assert_eq!(*a, want);
    let Command::Rollout(a) = one("rollout web steps=100% image=nginx:1.27") else {
        panic!("not a rollout")
    };
    assert_eq!(a.image.as_deref(), Some("nginx:1.27"));
    let e = err("rollout group=shop steps=100% image=nginx:1.27").to_string();
    assert!(e.contains("image= is a Recreate set's plan's"), "{e}");
    let Command::Rollout(a) = one("rollout db/pg steps=pause,100% stuck-after=2m on-failure=undo")
    else {
        panic!("not a rollout")
    };
    assert_eq!(a.set, Name { namespace: "db".into(), name: "pg".into() });
    assert_eq!((a.bake_seconds, a.stuck_after_ms, a.on_failure), (0, 120_000, OnFailure::Undo));
    assert_eq!(one("approve web"), Command::Approve { set: name("web") });
    assert_eq!(
        one("expect web partition=2 plan=gate"),
        Command::Expect {
            set: name("web"),
            checks: vec![Check::Partition(2), Check::Plan("gate".into())]
        }
    );
}

#[test]
fn rollout_mistakes_say_what_is_expected() {
    let cases = [
        ("rollout web", "give steps=LIST, e.g. steps=1,50%,100%"),
        ("rollout web steps=", "steps="),
        ("rollout web steps=0", "steps=0"),
        ("rollout web steps=1 bake=1500ms", "expected whole seconds"),
        ("rollout web steps=1 stuck-after=0s", "expected a duration above zero"),
        (
            "rollout web steps=1 on-failure=revert",
            "on-failure=revert: \"revert\" is not an answer to a failure; expected hold or undo",
        ),
        ("rollout web steps=1 checks=./x", "unknown key \"checks\""),
        ("approve", "missing argument NAME"),
        ("expect web plan=paused", "is not a plan phase; expected one of none, waiting"),
        ("expect web partition=-1", "partition=-1"),
        ("rollout web steps=1 zone-bake=1m", "zone-bake= orders a group: give group=NAME"),
        ("rollout group=in/g/x steps=1", "is not a name"),
        ("rollout group=ingester steps=1 zone-bake=1500ms", "expected whole seconds"),
        ("rollout group=ingester steps=1 order=fe,,be", "is not a tier order"),
        ("expect web group=rolled", "is not a group state; expected one of none, waiting"),
        ("quota", "give pods=N"),
        ("rollout group=g steps=1 batches=1,2", "give steps= or batches=, not both"),
        ("rollout group=g batches=1,0", "is not a batch of pods"),
        ("rollout web batches=1,2", "batches= orders a group"),
        ("quota off pods=3", "not both"),
        ("quota pods=-1", "is not a pod count"),
        ("quota sometimes", "unexpected argument \"sometimes\""),
    ];
    for (text, want) in cases {
        let e = err(text).to_string();
        assert!(e.starts_with("dir/t.scenario:1: "), "{text}: {e}");
        assert!(e.contains(want), "{text}: {e}");
    }
}

#[test]
fn a_group_rollout_and_a_quota_parse() {
    let Command::Rollout(a) =
        one("rollout group=prod/ingester steps=1,100% zone-bake=1m order=fe,be bake=10s")
    else {
        panic!("not a rollout")
    };
    assert!(a.group);
    assert_eq!(a.set, Name { namespace: "prod".into(), name: "ingester".into() });
    assert_eq!((a.zone_bake_seconds, a.bake_seconds), (60, 10));
    assert_eq!(a.tiers, Some(vec!["fe".to_string(), "be".to_string()]));
    let Command::Rollout(a) = one("rollout group=ingester steps=1") else {
        panic!("not a rollout")
    };
    assert_eq!((a.set.namespace.as_str(), a.zone_bake_seconds, a.tiers), ("default", 0, None));
    assert_eq!(
        one("quota pods=11"),
        Command::Quota { namespace: "default".into(), pods: Some(11) }
    );
    assert_eq!(
        one("quota off namespace=prod"),
        Command::Quota { namespace: "prod".into(), pods: None }
    );
    assert_eq!(
        one("expect web group=halted"),
        Command::Expect { set: name("web"), checks: vec![Check::Group("halted".into())] }
    );
}

#[test]
fn gate_lines_and_a_rollouts_gates_parse() {
    use ststui::plan::gate::{GateKind, SIM};
    use ststui::sim::scenario::GateArgs;
    let Command::Rollout(a) =
        one("rollout web steps=1,100% gates=pre-delete,post-ready last=web-0 recheck=20s \
         gate-interval=5s gate-tries=3")
    else {
        panic!("not a rollout")
    };
    let g = &a.gates;
    assert_eq!((g.pre_delete.as_deref(), g.post_ready.as_deref()), (Some(SIM), Some(SIM)));
    assert_eq!((g.before_step.as_deref(), g.last.as_deref()), (None, Some("web-0")));
    assert_eq!((g.recheck_seconds, g.interval_seconds, g.tries), (20, 5, 3));
    assert!(!a.replace_stuck, "not asked: only offered");
    let Command::Rollout(a) = one("rollout web steps=100% replace-stuck=true") else {
        panic!("not a rollout")
    };
    assert!(a.replace_stuck);
    assert_eq!(
        one("gate web-3 pre-delete not-yet=3 slow=30s"),
        Command::Gate(Box::new(GateArgs {
            name: name("web-3"),
            kind: GateKind::PreDelete,
            fail: false,
            slow_ms: Some(30_000),
            not_yet: Some(3),
            leader: None,
        }))
    );
    let Command::Gate(g) = one("gate web last-by leader=web-1") else { panic!("not a gate") };
    assert_eq!((g.kind, g.leader.as_deref()), (GateKind::LastBy, Some("web-1")));
    let cases = [
        ("rollout web steps=1 gates=drain", "\"drain\" is not a gate"),
        ("rollout web steps=1 gates=last-by last=web-0", "give one"),
        ("rollout web steps=1 gate-tries=0", "is not a count of tries"),
        (
            "rollout web steps=1 replace-stuck=yes",
            "\"yes\" is not a boolean; expected true or false",
        ),
        ("gate web-3", "missing argument KIND"),
        (
            "gate web-3 drain",
            "is not a gate: expected before-step, pre-delete, post-ready or last-by",
        ),
        ("gate web-3 pre-delete explode", "unexpected argument \"explode\""),
        ("gate web-3 pre-delete leader=web-1", "give it with last-by"),
        ("gate web-3 pre-delete pass fail", "give it alone"),
        ("gate web-3 pre-delete not-yet=x", "not-yet=x"),
    ];
    for (text, want) in cases {
        let e = err(text).to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
}
