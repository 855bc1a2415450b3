//! The `ststui` binary: command-line dispatch, tracing to a file, and the composition root of
//! the interactive console — a backend (the embedded simulator), the terminal, and the event
//! loop that feeds ONE channel of [`Msg`] into the reducer and draws when the state is dirty.
//!
//! Owns process concerns only (arguments, exit codes, threads, the wall clock for status
//! ticks). Must not decide anything the reducer decides, and must not print on stdout while
//! the console is up (stdout is the screen).

mod console;
mod launch;
mod tui;

use std::path::Path;
use std::process::ExitCode;

use std::io::Write as _;

use clap::{CommandFactory as _, FromArgMatches as _};
use ststui::app::{AppState, Msg, Start};
use ststui::backend::{Backend, BackendEvent};
use ststui::cli::{Cli, Command as CliCommand, SimArgs};
use ststui::complete::Invoked;
use ststui::core::Options;
use ststui::ui::{ColorMode, Theme};

/// Exit status for usage errors: a bad manifest or script, a mode that is not available.
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let invoked = Invoked::from_argv0(args.first().map_or("", String::as_str));
    if invoked == Invoked::KubectlComplete {
        return print_lines(&complete(args.get(1..).unwrap_or_default()));
    }
    // `ststui __complete WORD…` (kubectl's protocol), before clap: the words may hold flags
    // (`--kubeconfig`) that are not this call's.
    if args.get(1).is_some_and(|a| a == "__complete") {
        return print_lines(&complete(args.get(2..).unwrap_or_default()));
    }
    if let Some(why) = ststui::cli::mistyped_verb(&args) {
        ststui::text::err_line(&format!("ststui: {why}"));
        return ExitCode::from(EXIT_USAGE);
    }
    let matches = Cli::command().bin_name(invoked.bin_name()).get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let Err(e) = cli.check() {
        e.exit();
    }
    if let Some(CliCommand::Sim(sim)) = &mut cli.command {
        sim.feature_gates = cli.feature_gates.clone().unwrap_or_default();
    }
    let code = dispatch(invoked, &cli);
    // A credential plugin still running (a verb that timed out waiting for it, a console quit
    // while it was pending) ends with us.
    ststui::cluster::credential::kill_all();
    code
}

/// Runs the command line's command.
fn dispatch(invoked: Invoked, cli: &Cli) -> ExitCode {
    let log = cli.log_file.as_deref();
    match cli.command {
        None => cluster_console(cli),
        Some(CliCommand::Completion(ref a)) => {
            let script = ststui::complete::script(a.shell, invoked.bin_name());
            let mut out = std::io::stdout().lock();
            match out.write_all(&script).and_then(|()| out.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            }
        }
        Some(CliCommand::Man(ref a)) => man(a),
        Some(CliCommand::Sim(ref args)) if args.soak.is_some() => logged(log, || soak(args)),
        Some(CliCommand::Sim(ref args)) if args.headless && args.serve.is_some() => {
            serve_headless(log, args)
        }
        Some(CliCommand::Sim(ref args)) if args.headless => logged(log, || headless(args)),
        Some(CliCommand::Sim(ref args)) => interactive(log, args),
        Some(ref verb) => logged(log, || {
            // The headless controller handles its signals itself: it gives its leases up.
            if !matches!(verb, CliCommand::FakeKubelet(_) | CliCommand::Drive(_)) {
                ststui::cluster::credential::reap_on_signals();
            }
            let target = ststui::cluster::Target {
                kubeconfig: cli.kubeconfig.clone(),
                context: cli.context.clone(),
                namespace: cli.namespace.clone(),
                feature_gates: cli.feature_gates.clone().unwrap_or_default(),
                ..Default::default()
            };
            match verb {
                CliCommand::Play(p) => {
                    let timeout = std::time::Duration::from_millis(p.timeout);
                    exit_code(ststui::play::run(
                        &p.script,
                        p.format.into(),
                        &target,
                        timeout,
                        p.drive,
                    ))
                }
                CliCommand::FakeKubelet(k) => match ststui::fakelet::run(
                    &target,
                    &k.node,
                    k.exec_port.map(|port| ststui::fakelet::ExecServe {
                        port,
                        cert: k.tls_cert.clone().unwrap_or_default(),
                        key: k.tls_key.clone().unwrap_or_default(),
                    }),
                ) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        ststui::text::err_line(&format!("ststui fake-kubelet: {e}"));
                        exit_code(4)
                    }
                },
                CliCommand::Drive(d) => drive(cli, d, &target),
                _ => exit_code(ststui::verbs::run(verb, target)),
            }
        }),
    }
}

/// `ststui drive`: the namespaces from -n (comma-separated) or -A.
fn drive(cli: &Cli, d: &ststui::cli::DriveArgs, target: &ststui::cluster::Target) -> ExitCode {
    if d.all_namespaces && cli.namespace.is_some() {
        ststui::text::err_line(
            "ststui drive: -A drives every namespace and -n names some: give one of them",
        );
        return ExitCode::from(EXIT_USAGE);
    }
    // None given: the context's namespace, as every verb takes it.
    let namespaces: Vec<String> = match &cli.namespace {
        Some(list) => {
            list.split(',').map(str::trim).filter(|n| !n.is_empty()).map(Into::into).collect()
        }
        None => Vec::new(),
    };
    let args =
        ststui::drive::headless::Args { namespaces, all: d.all_namespaces, health: d.health_addr };
    ExitCode::from(ststui::drive::headless::run(target, &args))
}

/// Completions for `words` (cobra's protocol), set names from the cluster the words name.
fn complete(words: &[String]) -> Vec<String> {
    // Nothing a credential plugin says may reach the shell's line.
    ststui::cluster::credential::console_holds_terminal();
    ststui::complete::cobra(words, &Reach)
}

/// What completion reads: the kubeconfig's contexts, the cluster's sets.
struct Reach;

impl ststui::complete::Lookup for Reach {
    fn names(&self, q: &ststui::complete::NameQuery) -> Vec<String> {
        let target = ststui::cluster::Target {
            kubeconfig: q.kubeconfig.as_ref().map(Into::into),
            context: q.context.clone(),
            namespace: q.namespace.clone(),
            ..Default::default()
        };
        ststui::cluster::lookup::set_names(
            &target,
            &q.prefix,
            ststui::cluster::lookup::NAMES_WITHIN,
        )
    }

    fn contexts(&self, kubeconfig: Option<&str>) -> Vec<String> {
        ststui::cluster::context_names(kubeconfig.map(std::path::Path::new))
    }
}

/// Prints `lines` on stdout (a closed pipe is a failure exit, nothing more).
/// `ststui man [VERB]`: a page on stdout (2: no such verb), or every page into `--out-dir`
/// (their paths said; 1: one could not be written).
fn man(a: &ststui::cli::ManArgs) -> ExitCode {
    if let Some(dir) = &a.out_dir {
        return match ststui::man::write_all(dir) {
            Ok(files) => {
                print_lines(&files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>())
            }
            Err(e) => {
                ststui::text::err_line(&format!("ststui man: {e}"));
                ExitCode::FAILURE
            }
        };
    }
    match ststui::man::page(a.verb.as_deref()) {
        Ok(p) => {
            let mut out = std::io::stdout().lock();
            match out.write_all(&p.roff).and_then(|()| out.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            }
        }
        Err(e) => {
            ststui::text::err_line(&format!("ststui man: {e}"));
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn print_lines(lines: &[String]) -> ExitCode {
    let mut out = std::io::stdout().lock();
    let written = lines.iter().try_for_each(|l| writeln!(out, "{l}")).and_then(|()| out.flush());
    if written.is_ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// `ststui sim --headless`: the scenario runner (timeline on stdout, exit 0/1/2).
fn headless(args: &SimArgs) -> ExitCode {
    exit_code(ststui::sim::headless::run(&args.headless()))
}

/// `ststui sim --soak N`: randomized runs with invariant checks.
fn soak(args: &SimArgs) -> ExitCode {
    exit_code(ststui::sim::soak::run(args.soak.unwrap_or(0), args.seed, args.options()))
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// The console on a real cluster (`ststui [--context C] [-n NS | -A] [NAME]`), or on a fleet
/// (`ststui --contexts a,b,c NAME | -l SELECTOR`).
fn cluster_console(cli: &Cli) -> ExitCode {
    let _log = match init_tracing(cli.log_file.as_deref()) {
        Ok(guard) => guard,
        Err(e) => {
            ststui::text::err_line(&format!("ststui: {e:#}"));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if let Some(list) = &cli.contexts {
        return fleet_console(cli, list);
    }
    let target = ststui::cluster::Target {
        kubeconfig: cli.kubeconfig.clone(),
        context: cli.context.clone(),
        namespace: cli.namespace.clone(),
        all_namespaces: cli.all_namespaces,
        name: cli.name.clone(),
        read_only: cli.read_only,
        feature_gates: cli.feature_gates.clone().unwrap_or_default(),
    };
    if let Some(why) = mistyped_name(&target) {
        ststui::text::err_line(&format!("ststui: {why}"));
        return ExitCode::from(EXIT_USAGE);
    }
    if let Some(code) = need_terminal() {
        return code;
    }
    let inbox = console::Inbox::new();
    ststui::cluster::credential::console_holds_terminal();
    let started: Result<(Box<dyn Backend>, String), String> = if cli.drive {
        ststui::drive::backend::DriveBackend::start(target, inbox.sink())
            .map(|b| (b.namespace().to_string(), b))
            .map(|(ns, b)| (Box::new(b) as Box<dyn Backend>, ns))
    } else {
        ststui::cluster::ClusterBackend::start(target, inbox.sink())
            .map(|b| (b.namespace().to_string(), b))
            .map(|(ns, b)| (Box::new(b) as Box<dyn Backend>, ns))
            .map_err(String::from)
    };
    let (backend, namespace) = match started {
        Ok(b) => b,
        Err(e) => {
            ststui::text::err_line(&format!("ststui: {e}"));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut state = AppState::new(backend.capabilities(), Options::default());
    let open = cli.name.clone().map(|name| ststui::backend::ObjRef::new(namespace, name));
    let start = Start { can_pick: true, open, speed: None, group: None };
    ststui::app::update(&mut state, Msg::Start(start));
    finish(console::run(&mut state, backend, &Theme::new(ColorMode::from_env()), inbox))
}

/// The console on a fleet: NAME, or the sets `-l` selects, in each context given, as one
/// read-only matrix (`cluster::fleet`).
fn fleet_console(cli: &Cli, list: &str) -> ExitCode {
    use ststui::app::state::{GroupBy, GroupShown};
    let target = ststui::cluster::Target {
        kubeconfig: cli.kubeconfig.clone(),
        namespace: cli.namespace.clone(),
        read_only: true,
        ..Default::default()
    };
    let members =
        ststui::verbs::fleet_members(&target, list, cli.name.as_deref(), cli.selector.as_deref());
    let members = match members {
        Ok(m) => m,
        Err(e) => {
            ststui::text::err_line(&format!("ststui: {}", e.message));
            return ExitCode::from(u8::try_from(e.exit as i32).unwrap_or(EXIT_USAGE));
        }
    };
    if let Some(code) = need_terminal() {
        return code;
    }
    let inbox = console::Inbox::new();
    ststui::cluster::credential::console_holds_terminal();
    let sets: Vec<ststui::backend::ObjRef> = (members.iter())
        .flat_map(|(t, ns, names)| {
            let at = ststui::cluster::fleet::prefix(t.context.as_deref().unwrap_or_default(), ns);
            names.iter().map(move |n| ststui::backend::ObjRef::new(at.clone(), n.clone()))
        })
        .collect();
    let name = cli.name.clone().or_else(|| {
        cli.selector
            .as_ref()
            .map(|s| s.split_once('=').map_or(s.as_str(), |(_, v)| v).trim().to_string())
    });
    let each = members.into_iter().map(|(t, _, names)| (t, names)).collect();
    let backend = match ststui::cluster::fleet::FleetBackend::start(each, inbox.sink()) {
        Ok(b) => b,
        Err(e) => {
            ststui::text::err_line(&format!("ststui: {e}"));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let shown = GroupShown {
        namespace: sets.first().map(|k| k.namespace.clone()).unwrap_or_default(),
        name: name.unwrap_or_default(),
        by: GroupBy::Fleet,
        sets,
        from_list: false,
    };
    let mut state = AppState::new(backend.capabilities(), Options::default());
    let start = Start { can_pick: false, open: None, speed: None, group: Some(shown) };
    ststui::app::update(&mut state, Msg::Start(start));
    finish(console::run(&mut state, Box::new(backend), &Theme::new(ColorMode::from_env()), inbox))
}

/// `ststui rol`: a NAME close to a verb that names no set (the server says 404) is a mistyped
/// verb, said with the verb meant. A set of that name, or a server that cannot say in time,
/// opens the console as asked.
fn mistyped_name(target: &ststui::cluster::Target) -> Option<String> {
    let name = target.name.as_deref()?;
    let verb = ststui::cli::near_verb(name)?;
    let within = ststui::cluster::lookup::EXISTS_WITHIN;
    if ststui::cluster::lookup::set_exists(target, name, within)? {
        return None;
    }
    let argv0 = std::env::args().next().unwrap_or_default();
    let bin = Invoked::from_argv0(&argv0).bin_name();
    Some(format!(
        "{name:?} is not a verb and no StatefulSet of that name exists: did you mean `{bin} \
         {verb}`? ({})",
        ststui::cli::verbs_said()
    ))
}

/// The exit status of a console run.
fn finish(result: anyhow::Result<Option<i32>>) -> ExitCode {
    match result {
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(signal)) => ExitCode::from(u8::try_from(128 + signal).unwrap_or(1)),
        Err(e) => {
            tracing::error!("console failed: {e:#}");
            ststui::text::err_line(&format!("ststui: {e:#}"));
            ExitCode::FAILURE
        }
    }
}

/// `Some(exit status)` when there is no terminal for the console, having said so.
fn need_terminal() -> Option<ExitCode> {
    use std::io::IsTerminal;
    if std::env::var("TERM").is_ok_and(|t| t == "dumb") {
        ststui::text::err_line(
            "ststui: TERM=dumb: this terminal cannot show a full-screen console (no cursor \
             movement); run it in a terminal emulator (TERM=xterm-256color or similar), or use \
             `ststui sim --headless --script FILE` / `ststui explain NAME` without one",
        );
        return Some(ExitCode::from(EXIT_USAGE));
    }
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        return None;
    }
    ststui::text::err_line(
        "ststui: the console needs a terminal (stdin and stdout are not both one): for a \
         timeline without a terminal, run `ststui sim --headless --script FILE` or \
         `ststui sim --headless -f MANIFEST`",
    );
    Some(ExitCode::from(EXIT_USAGE))
}

/// The interactive console on the embedded simulator.
fn interactive(log_file: Option<&Path>, args: &SimArgs) -> ExitCode {
    if let Some(code) = need_terminal() {
        return code;
    }
    let _log = match init_tracing(log_file) {
        Ok(guard) => guard,
        Err(e) => {
            ststui::text::err_line(&format!("ststui: {e:#}"));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let options = args.options();
    let inbox = console::Inbox::new();
    let built = match launch::build(args, options) {
        Ok(built) => built,
        Err(e) => {
            ststui::text::err_line(&format!("ststui: {e}"));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    for ev in &built.history {
        let _ = inbox.operator_tx.send(Msg::Backend(BackendEvent::Timeline(ev.clone())));
    }
    let (backend, _server, said) = match launch::run(built, args, inbox.sink()) {
        Ok(started) => started,
        Err(e) => {
            ststui::text::err_line(&format!("ststui: {e}"));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if let Some(said) = said {
        tracing::info!("{said}");
        let _ = inbox.operator_tx.send(Msg::Backend(BackendEvent::Notice(said)));
    }
    let mut state = AppState::new(backend.capabilities(), options);
    let start = Start { can_pick: false, open: None, speed: Some(args.speed), group: None };
    ststui::app::update(&mut state, Msg::Start(start));
    let theme = Theme::new(ColorMode::from_env());
    let code = finish(console::run(&mut state, Box::new(backend), &theme, inbox));
    // The process ends here: freeing 10,000 pods one by one only delays the exit (about
    // 100 ms); the operating system takes the memory back at once.
    std::mem::forget(state);
    code
}

/// `ststui sim --headless --serve ADDR`: the served simulator without a console, its timeline
/// on stdout as it happens, until SIGINT or SIGTERM.
fn serve_headless(log_file: Option<&Path>, args: &SimArgs) -> ExitCode {
    let _log = match init_tracing(log_file) {
        Ok(guard) => guard,
        Err(e) => {
            ststui::text::err_line(&format!("ststui: {e:#}"));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let signals = match signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ]) {
        Ok(s) => s,
        Err(e) => {
            ststui::text::err_line(&format!("ststui: cannot listen for signals: {e}"));
            return ExitCode::FAILURE;
        }
    };
    let options = args.options();
    if args.clusters.is_some() {
        return serve_clusters(args, options, signals);
    }
    let built = match launch::build(args, options) {
        Ok(built) => built,
        Err(e) => {
            ststui::text::err_line(&format!("ststui: {e}"));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let format = args.headless().format;
    let print = move |ev: &ststui::backend::Event| {
        use std::io::Write as _;
        let line = ststui::sim::timeline::render(ev, format);
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    };
    for ev in &built.history {
        print(ev);
    }
    let sink: ststui::backend::Sink = std::sync::Arc::new(move |ev| match ev {
        BackendEvent::Timeline(t) => print(&t),
        BackendEvent::Notice(n) | BackendEvent::Error(n) => {
            ststui::text::err_line(&format!("ststui: {n}"))
        }
        _ => {}
    });
    let (handle, server, said) = match launch::run(built, args, sink) {
        Ok(started) => started,
        Err(e) => {
            ststui::text::err_line(&format!("ststui: {e}"));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if let Some(said) = said {
        ststui::text::err_line(&format!("ststui: {said}; ctrl-c stops"));
    }
    let mut signals = signals;
    let signal = signals.forever().next();
    tracing::info!(?signal, "stopping the served simulator");
    drop(server);
    drop(handle);
    ExitCode::SUCCESS
}

/// `ststui sim --headless --serve ADDR --clusters a,b,c`: several served simulators, each
/// timeline line on stdout led by its cluster's name, until SIGINT or SIGTERM.
fn serve_clusters(
    args: &SimArgs,
    options: ststui::core::Options,
    mut signals: signal_hook::iterator::Signals,
) -> ExitCode {
    let format = args.headless().format;
    let sink = |name: &str| -> ststui::backend::Sink {
        let name = name.to_string();
        std::sync::Arc::new(move |ev| match ev {
            BackendEvent::Timeline(t) => {
                use std::io::Write as _;
                let line = ststui::sim::timeline::render(&t, format);
                let _ = writeln!(std::io::stdout().lock(), "{name} {line}");
            }
            BackendEvent::Notice(n) | BackendEvent::Error(n) => {
                ststui::text::err_line(&format!("ststui: {name}: {n}"))
            }
            _ => {}
        })
    };
    let (served, said) = match launch::run_clusters(args, options, sink) {
        Ok(started) => started,
        Err(e) => {
            ststui::text::err_line(&format!("ststui: {e}"));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    ststui::text::err_line(&format!("ststui: {said}; ctrl-c stops"));
    let signal = signals.forever().next();
    tracing::info!(?signal, "stopping the served simulators");
    drop(served);
    ExitCode::SUCCESS
}

/// Logs go to a file (never stdout: it is the screen). `STSTUI_LOG` sets the level
/// (error, warn, info, debug, trace; default info).
/// Runs `run` (a run without the console) with its log: the file `--log-file` names (exit 2
/// when it cannot be opened), else the default one when it can be.
fn logged(file: Option<&Path>, run: impl FnOnce() -> ExitCode) -> ExitCode {
    let _guard = match init_tracing(file) {
        Ok(g) => Some(g),
        Err(e) if file.is_some() => {
            ststui::text::err_line(&format!("ststui: {e:#}"));
            return ExitCode::from(EXIT_USAGE);
        }
        // Without a log the verb still runs; a log place someone may have tampered with is
        // said (once, on stderr), an unwritable one is not.
        Err(e) => {
            if e.downcast_ref::<ststui::logfile::LogFileError>().is_some_and(|e| e.tampered()) {
                ststui::text::err_line(&format!("ststui: no log: {e:#}"));
            }
            None
        }
    };
    run()
}

fn init_tracing(
    file: Option<&Path>,
) -> anyhow::Result<tracing_appender::non_blocking::WorkerGuard> {
    let default = ststui::logfile::default_path(|k| std::env::var_os(k), ststui::logfile::uid());
    let f = ststui::logfile::open(file, &default)?;
    let level = std::env::var("STSTUI_LOG")
        .ok()
        .and_then(|v| v.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::INFO);
    // At most 1,024 lines waiting for the file (the default, 128,000, costs 4 MB up front);
    // beyond that lines are dropped, never the console slowed.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(1_024)
        .finish(f);
    tracing_subscriber::fmt().with_writer(writer).with_ansi(false).with_max_level(level).init();
    tracing::info!("ststui {} started", env!("CARGO_PKG_VERSION"));
    Ok(guard)
}
