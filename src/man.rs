//! `ststui man`: the manual pages, rendered by clap_mangen from the command tree that parses the
//! arguments, so a flag added is in its page at once: ststui(1), with the sections a manual page
//! has and `--help` has not (exit status, environment, files, see also), and ststui-VERB(1) for
//! each verb. The release archives carry them as `assets/dist/man/` (a test keeps those current).
//!
//! Owns: the pages' names and their extra sections. Must not: reach a cluster.

use clap::CommandFactory as _;
use roff::{Roff, bold, italic, roman};

use crate::cli::Cli;

/// One manual page: its file name (`ststui-rollout.1`) and its text (roff).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub file: String,
    pub roff: Vec<u8>,
}

/// The verb `man` was asked for is not one of ststui's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no manual page for {verb:?}: the pages are ststui(1) and ststui-VERB(1) for {verbs}")]
pub struct NoPage {
    pub verb: String,
    pub verbs: String,
}

/// What every page says it is part of.
const MANUAL: &str = "ststui manual";

/// The exit codes every verb shares (docs/verbs.md's table).
const EXITS: [(&str, &str); 5] = [
    ("0", "done: printed, written or nothing to change; a wait or a plan finished"),
    ("1", "the timeout passed, or an expectation was not met (a step refused, a conflict)"),
    ("2", "bad usage: a flag, a value, a kubeconfig or context that cannot be used"),
    ("3", "stuck or halted: the pod and the rule (or the step and the check) are printed"),
    (
        "4",
        "an API or permission failure: unreachable or failing until the timeout, credentials \
         refused, forbidden, the set not found, or a write whose outcome is unknown",
    ),
];

/// The environment ststui reads.
const ENVIRONMENT: [(&str, &str); 5] = [
    ("KUBECONFIG", "the kubeconfig files, as kubectl reads them (--kubeconfig overrides)"),
    ("STSTUI_LOG", "the log's level or filter (tracing's syntax, e.g. debug or ststui=trace)"),
    ("XDG_STATE_HOME", "where the log goes by default: $XDG_STATE_HOME/ststui/ststui.log"),
    ("NO_COLOR", "set (to anything): the console draws without colour"),
    ("TERM", "the terminal the console draws on"),
];

/// The command tree as the pages show it (no `help` verb: `--help` is on every page).
fn tree() -> clap::Command {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// The verbs that have a page, in `--help`'s order.
fn verbs(cmd: &clap::Command) -> Vec<&clap::Command> {
    cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect()
}

/// Every page: ststui(1) first, then each verb's.
pub fn pages() -> Vec<Page> {
    let cmd = tree();
    let mut out = vec![top(&cmd)];
    out.extend(verbs(&cmd).into_iter().map(verb));
    out
}

/// The page of `verb` (`None`: ststui(1)).
pub fn page(verb: Option<&str>) -> Result<Page, NoPage> {
    let all = pages();
    let want = verb.map_or_else(|| "ststui.1".to_string(), |v| format!("ststui-{v}.1"));
    all.iter().find(|p| p.file == want).cloned().ok_or_else(|| {
        let cmd = tree();
        let names: Vec<&str> = verbs(&cmd).iter().map(|c| c.get_name()).collect();
        NoPage { verb: verb.unwrap_or_default().to_string(), verbs: names.join(", ") }
    })
}

fn man(cmd: clap::Command) -> clap_mangen::Man {
    let source = format!("ststui {}", env!("CARGO_PKG_VERSION"));
    clap_mangen::Man::new(cmd).source(source).manual(MANUAL)
}

/// ststui(1): clap's sections, then exit status, environment, files and the verbs' pages.
fn top(cmd: &clap::Command) -> Page {
    let m = man(cmd.clone());
    let mut roff = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = m.render(&mut roff);
    let mut extra = Roff::new();
    extra.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in EXITS {
        extra.control("TP", []).text([bold(code)]).text([roman(meaning)]);
    }
    extra.control("SH", ["ENVIRONMENT"]);
    for (name, meaning) in ENVIRONMENT {
        extra.control("TP", []).text([bold(name)]).text([roman(meaning)]);
    }
    extra.control("SH", ["FILES"]);
    extra.control("TP", []).text([italic("~/.local/state/ststui/ststui.log")]).text([roman(
        "the log (never the terminal while the console is up); --log-file puts it elsewhere",
    )]);
    extra.control("SH", ["SEE ALSO"]);
    let mut also: Vec<String> =
        verbs(cmd).iter().map(|c| format!("ststui-{}(1)", c.get_name())).collect();
    also.push("kubectl(1)".into());
    extra.text([roman(also.join(", "))]);
    extra.control("PP", []).text([roman(
        "The documentation in the source: README.md and docs/ (the console, the verbs, plans, \
         the simulator, real clusters, drive mode).",
    )]);
    roff.extend_from_slice(extra.render().as_bytes());
    Page { file: m.get_filename(), roff }
}

/// ststui-VERB(1): clap's sections, then see also.
fn verb(cmd: &clap::Command) -> Page {
    let m = man(cmd.clone());
    let mut roff = Vec::new();
    let _ = m.render(&mut roff);
    let mut extra = Roff::new();
    extra.control("SH", ["SEE ALSO"]);
    extra.text([roman("ststui(1) (exit status, environment and files are there)")]);
    roff.extend_from_slice(extra.render().as_bytes());
    Page { file: m.get_filename(), roff }
}

/// A page that could not be written into the folder `--out-dir` names.
#[derive(Debug, thiserror::Error)]
#[error("{path}: could not be written: {source}")]
pub struct NotWritten {
    pub path: String,
    pub source: std::io::Error,
}

/// Writes every page into `dir` (made when missing); the files written, in order.
pub fn write_all(dir: &std::path::Path) -> Result<Vec<std::path::PathBuf>, NotWritten> {
    let failed =
        |path: &std::path::Path, source| NotWritten { path: path.display().to_string(), source };
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, e))?;
    pages()
        .into_iter()
        .map(|p| {
            let path = dir.join(&p.file);
            std::fs::write(&path, &p.roff).map_err(|e| failed(&path, e))?;
            Ok(path)
        })
        .collect()
}
