//! Argument parsing: defaults, refusals and their messages.
use super::*;
use crate::core::Version;

#[test]
fn parses_sim_flags() {
    let cli = Cli::try_parse_from([
        "ststui",
        "sim",
        "--headless",
        "--format",
        "jsonl",
        "--seed",
        "7",
        "-f",
        "a.yaml",
        "-f",
        "b.yaml",
    ]);
    let Ok(Cli { command: Some(Command::Sim(args)), .. }) = cli else {
        panic!("did not parse: {cli:?}");
    };
    assert!(args.headless);
    assert_eq!(args.format, FormatArg::Jsonl);
    assert_eq!(args.seed, 7);
    assert_eq!(args.manifests.len(), 2);
    assert_eq!(args.kube_version, Version::LATEST);
}

/// Flags that cannot apply together are refused, never silently ignored.
#[test]
fn refuses_flags_that_do_not_apply() {
    use clap::error::ErrorKind;
    let kind = |args: &[&str]| match Cli::try_parse_from(args) {
        Err(e) => Some(e.kind()),
        Ok(cli) => cli.check().err().map(|e| e.kind()),
    };
    assert_eq!(kind(&["ststui", "sim", "--headless"]), Some(ErrorKind::MissingRequiredArgument));
    assert_eq!(
        kind(&["ststui", "sim", "--format", "jsonl"]),
        Some(ErrorKind::MissingRequiredArgument)
    );
    assert_eq!(
        kind(&["ststui", "sim", "--soak", "5", "--script", "a"]),
        Some(ErrorKind::ArgumentConflict)
    );
    assert_eq!(
        kind(&["ststui", "sim", "--headless", "-f", "a.yaml", "--speed", "2"]),
        Some(ErrorKind::ArgumentConflict)
    );
    // Before or after the subcommand they parse, and `check` refuses them by name.
    for (args, flag) in [
        (&["ststui", "sim", "--context", "c"][..], "--context"),
        (&["ststui", "--context", "c", "sim"][..], "--context"),
        (&["ststui", "-n", "prod", "sim"][..], "--namespace"),
        (&["ststui", "web", "sim"][..], "NAME"),
    ] {
        let cli = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let err = cli.check().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains(&format!("{flag} is for real-cluster mode")), "{args:?}: {err}");
    }
    // What is fine: the log file anywhere, a headless run of manifests, real-cluster flags
    // without `sim`.
    for args in [
        &["ststui", "--log-file", "x.log", "sim", "--headless", "--script", "s"][..],
        &["ststui", "sim", "--headless", "-f", "a.yaml", "--format", "jsonl"][..],
        &["ststui", "--context", "c", "-n", "prod", "web"][..],
        &["ststui", "sim", "--soak", "5", "--seed", "9"][..],
    ] {
        let cli = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert!(cli.check().is_ok(), "{args:?}");
    }
}

#[test]
fn verbs_take_the_cluster_flags_anywhere_and_refuse_the_console_ones() {
    let cli = Cli::try_parse_from(["ststui", "-n", "db", "wait", "web", "--context", "c"])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(cli.check().is_ok());
    assert_eq!((cli.namespace.as_deref(), cli.context.as_deref()), (Some("db"), Some("c")));
    let Some(Command::Wait(w)) = &cli.command else { panic!("{cli:?}") };
    assert_eq!((w.name.as_str(), w.timeout, w.stuck_after), ("web", None, 600_000));
    for args in [&["ststui", "-A", "wait", "web"][..], &["ststui", "--read-only", "explain", "web"]]
    {
        let cli = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{e}"));
        let err = cli.check().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("is for the console"), "{args:?}: {err}");
    }
    for bad in [
        &["ststui", "wait", "web", "--timeout", "0s"][..],
        &["ststui", "step", "web", "--to", "-1"],
        &["ststui", "explain", "web", "-o", "xml"],
        &["ststui", "rollout", "web", "--steps", "1", "-o", "yaml"],
        &["ststui", "freeze"],
    ] {
        assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn serving_beyond_loopback_is_refused_before_anything_runs() {
    let cli = Cli::try_parse_from([
        "ststui",
        "sim",
        "--headless",
        "--serve",
        "0.0.0.0:7443",
        "--script",
        "x.scenario",
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let err = cli.check().err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("binds loopback only"), "{err}");
}

#[test]
fn a_mistyped_verb_is_named() {
    let args = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
    let said = mistyped_verb(&args("ststui expalin web")).unwrap_or_default();
    assert!(said.contains("did you mean `ststui explain`"), "{said}");
    let said = mistyped_verb(&args("ststui -n prod stpe web --to 2")).unwrap_or_default();
    assert!(said.contains("`ststui step`"), "{said}");
    // A set's name alone is the console's; a real verb is no typo.
    assert_eq!(mistyped_verb(&args("ststui expalin")), None);
    assert_eq!(mistyped_verb(&args("ststui explain web")), None);
    assert_eq!(mistyped_verb(&args("ststui --context stage web")), None);
}

#[test]
fn rejects_bad_speed_and_version() {
    let err = |args: &[&str]| Cli::try_parse_from(args).err().map(|e| e.to_string());
    let negative = err(&["ststui", "sim", "--speed", "-1"]).unwrap_or_default();
    assert!(negative.contains("out of range; expected 0.01 to 1000"), "{negative}");
    let zero = err(&["ststui", "sim", "--soak", "0"]).unwrap_or_default();
    assert!(zero.contains("--soak") && zero.contains("expected 1 or more"), "{zero}");
    assert!(Cli::try_parse_from(["ststui", "sim", "--speed", "0"]).is_err());
    assert!(Cli::try_parse_from(["ststui", "sim", "--speed", "fast"]).is_err());
    let err = Cli::try_parse_from(["ststui", "sim", "--kube-version", "1.20"])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("31 to 37"), "{err}");
}

#[test]
fn drive_takes_a_health_address_and_says_what_it_expects() {
    let parsed = Cli::try_parse_from(["ststui", "drive", "-A", "--health-addr", "0.0.0.0:8080"]);
    match parsed.map(|c| c.command) {
        Ok(Some(Command::Drive(d))) => {
            assert!(d.all_namespaces);
            assert_eq!(d.health_addr.to_string(), "0.0.0.0:8080");
        }
        other => panic!("{other:?}"),
    }
    let err = Cli::try_parse_from(["ststui", "drive", "--health-addr", "localhost"])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("expected an IP address and a port, e.g. 127.0.0.1:8080"), "{err}");
}

#[test]
fn feature_gates_go_with_driving_and_say_what_they_expect() {
    let gates = "StaleControllerConsistencyStatefulSet=false";
    for args in [
        vec!["ststui", "--drive", "--feature-gates", gates],
        vec!["ststui", "drive", "--feature-gates", gates],
        vec!["ststui", "play", "x.scenario", "--drive", "--feature-gates", gates],
    ] {
        let cli = Cli::try_parse_from(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert!(cli.check().is_ok(), "{args:?}");
        let set: Vec<_> = cli.feature_gates.iter().flat_map(|g| g.iter()).collect();
        assert_eq!(set, [("StaleControllerConsistencyStatefulSet", false)], "{args:?}");
    }
    for args in [
        vec!["ststui", "--feature-gates", gates],
        vec!["ststui", "play", "x.scenario", "--feature-gates", gates],
        vec!["ststui", "explain", "web", "--feature-gates", gates],
    ] {
        let err = Cli::try_parse_from(&args)
            .map_err(|e| e.to_string())
            .and_then(|c| c.check().map_err(|e| e.to_string()))
            .err()
            .unwrap_or_default();
        assert!(
            err.contains(
                "--feature-gates sets the gates of the controller ststui plays when it drives"
            ),
            "{args:?}: {err}"
        );
    }
    let err = Cli::try_parse_from(["ststui", "--drive", "--feature-gates", "Nope=true"])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("unknown gate \"Nope\""), "{err}");
    assert!(err.contains("StaleControllerConsistencyStatefulSet"), "names the gates: {err}");
}

#[test]
fn the_simulator_takes_feature_gates_its_release_has() {
    let recreate = "StatefulSetRecreateStrategy=true";
    let cli = Cli::try_parse_from(["ststui", "sim", "--feature-gates", recreate]);
    let cli = cli.unwrap_or_else(|e| panic!("{e}"));
    assert!(cli.check().is_ok());
    let err = Cli::try_parse_from([
        "ststui",
        "sim",
        "--kube-version",
        "1.36",
        "--feature-gates",
        recreate,
    ])
    .map_err(|e| e.to_string())
    .and_then(|c| c.check().map_err(|e| e.to_string()))
    .err()
    .unwrap_or_default();
    assert!(
        err.contains("StatefulSetRecreateStrategy, which release 1.36.0 does not have"),
        "{err}"
    );
    let mut sim = match Cli::try_parse_from(["ststui", "sim"]).map(|c| c.command) {
        Ok(Some(Command::Sim(s))) => s,
        other => panic!("{other:?}"),
    };
    assert!(!sim.options().semantics.recreate_gate, "off by default: the gate is alpha");
    sim.feature_gates = recreate.parse().unwrap_or_default();
    assert!(sim.options().semantics.recreate_gate);
}

/// `sim --help` lists the global cluster flags apart, under a heading saying they are not `sim`'s.
#[test]
fn sim_help_sets_cluster_flags_apart() {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    cmd.build(); // global flags reach the subcommands when the command is built
    let sim = cmd.find_subcommand_mut("sim").expect("sim subcommand");
    let help = sim.render_help().to_string();
    let (own, rest) = help.split_once(CLUSTER).expect("the cluster heading");
    assert!(own.contains("--script") && !own.contains("--kubeconfig"), "{help}");
    assert!(rest.contains("--kubeconfig") && rest.contains("--namespace"), "{help}");
    assert!(rest.contains(DRIVING) && rest.contains("--feature-gates"), "{help}");
}
