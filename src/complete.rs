//! Shell completion and the kubectl plugin conventions.
//!
//! - `ststui completion SHELL` prints clap_complete's script for bash, zsh, fish, elvish or
//!   powershell, generated from the same command tree that parses the arguments.
//! - kubectl (1.26 and later) completes a plugin's arguments by running
//!   `kubectl_complete-<plugin>` with the words typed so far, in cobra's `__complete` protocol:
//!   one candidate per line (a tab before its description), then `:DIRECTIVE`. [`cobra`]
//!   answers it from the clap command tree (verbs, flags, a flag's values), and the binary
//!   answers it when it is invoked as `kubectl_complete-ststui` (a link) or as
//!   `ststui __complete WORD…`. Written by hand: clap_complete's dynamic engine is unstable
//!   and speaks its own protocol, not cobra's.
//! - Invoked as `kubectl-ststui` (a link: kubectl runs it for `kubectl ststui …`), usage and
//!   help name it `kubectl ststui`.
//!
//! Owns: these conventions. Must not: reach a cluster (set names come from the caller, asked
//! with the [`NameQuery`] the words make).

use clap::{Arg, Command, CommandFactory, ValueHint};

use crate::cli::Cli;

/// cobra's directive: no file completion after the candidates.
const NO_FILES: u32 = 4;
/// cobra's directive: the shell's default (file names).
const DEFAULT: u32 = 0;

/// How the binary was invoked, by the file name it was run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invoked {
    /// `ststui`.
    Plain,
    /// `kubectl-ststui`: `kubectl ststui …`.
    KubectlPlugin,
    /// `kubectl_complete-ststui`: kubectl asking for completions.
    KubectlComplete,
}

impl Invoked {
    /// From `argv[0]`.
    pub fn from_argv0(argv0: &str) -> Invoked {
        let file = std::path::Path::new(argv0).file_name().and_then(|f| f.to_str()).unwrap_or("");
        let file = file.strip_suffix(".exe").unwrap_or(file);
        match file {
            "kubectl-ststui" => Invoked::KubectlPlugin,
            "kubectl_complete-ststui" => Invoked::KubectlComplete,
            _ => Invoked::Plain,
        }
    }

    /// The name usage and help give the program.
    pub fn bin_name(self) -> &'static str {
        match self {
            Invoked::KubectlPlugin | Invoked::KubectlComplete => "kubectl ststui",
            Invoked::Plain => "ststui",
        }
    }
}

/// The completion script of `shell` for the program named `bin`.
pub fn script(shell: clap_complete::Shell, bin: &str) -> Vec<u8> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), bin, &mut out);
    out
}

/// A set name being completed: the cluster the words name, and what is typed of the name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameQuery {
    pub kubeconfig: Option<String>,
    pub context: Option<String>,
    pub namespace: Option<String>,
    pub prefix: String,
}

/// What completion asks of the world (the caller reaches the kubeconfig and the cluster; this
/// module does not).
pub trait Lookup {
    /// The sets of the cluster `q` names whose names start with its prefix.
    fn names(&self, q: &NameQuery) -> Vec<String>;
    /// The contexts of the kubeconfig (`None`: the one kubectl reads).
    fn contexts(&self, kubeconfig: Option<&str>) -> Vec<String>;
}

/// The answer to cobra's `__complete` for `words` (the last is the word being completed; empty
/// for a new word): candidates, then the directive line. Where a set's NAME goes, the
/// cluster's sets are asked of `lookup`; after `--context` and `--contexts` (a comma-separated
/// list: the word so far kept, the contexts it names not offered again), the kubeconfig's
/// contexts.
pub fn cobra(words: &[String], lookup: &impl Lookup) -> Vec<String> {
    let mut root = Cli::command();
    root.build();
    let (last, done) = match words.split_last() {
        Some((last, done)) => (last.as_str(), done),
        None => ("", &[][..]),
    };
    let mut cur: &Command = &root;
    let mut value_of: Option<&Arg> = None;
    let mut query = NameQuery { prefix: last.to_string(), ..NameQuery::default() };
    // Positionals given to the current command (its NAME is the first).
    let mut given = 0;
    for w in done {
        if let Some(flag) = value_of.take() {
            query.note(flag, w);
            continue;
        }
        if let Some(flag) = flag_of(cur, w) {
            if flag.get_action().takes_values() {
                match w.split_once('=') {
                    Some((_, v)) => query.note(flag, v),
                    None => value_of = Some(flag),
                }
            }
            continue;
        }
        if let Some(sub) = cur.find_subcommand(w) {
            cur = sub;
            given = 0;
        } else {
            given += 1;
        }
    }
    let mut out = Vec::new();
    let directive = if let Some(flag) = value_of.filter(|f| is_context(f)) {
        contexts(flag, last, lookup.contexts(query.kubeconfig.as_deref()), &mut out)
    } else if let Some(flag) = value_of {
        values(flag, last, &mut out)
    } else if last.starts_with('-') {
        for a in cur.get_arguments().filter(|a| !a.is_hide_set()) {
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            let names = a.get_long().map(|l| format!("--{l}")).into_iter();
            let shorts = a.get_short().map(|s| format!("-{s}")).into_iter();
            for n in names.chain(shorts).filter(|n| n.starts_with(last)) {
                out.push(candidate(&n, &help));
            }
        }
        NO_FILES
    } else {
        for sub in cur.get_subcommands().filter(|s| !s.is_hide_set()) {
            if sub.get_name().starts_with(last) {
                let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
                out.push(candidate(sub.get_name(), &about));
            }
        }
        // A positional that takes one of a few values (`completion SHELL`).
        let positional = cur.get_positionals().find(|a| !a.get_possible_values().is_empty());
        if out.is_empty()
            && let Some(p) = positional
        {
            values(p, last, &mut out);
        }
        let name = cur.get_positionals().next().filter(|a| a.get_id() == "name");
        if given == 0 && name.is_some() {
            for n in lookup.names(&query) {
                out.push(candidate(&n, "StatefulSet"));
            }
        }
        let file = cur.get_positionals().any(path_like);
        if out.is_empty() && file { DEFAULT } else { NO_FILES }
    };
    out.push(format!(":{directive}"));
    out
}

impl NameQuery {
    /// Keeps the value of a flag that names the cluster.
    fn note(&mut self, flag: &Arg, value: &str) {
        let slot = match flag.get_id().as_str() {
            "kubeconfig" => &mut self.kubeconfig,
            "context" => &mut self.context,
            "namespace" => &mut self.namespace,
            _ => return,
        };
        *slot = Some(value.to_string());
    }
}

/// Whether the flag takes kubeconfig contexts.
fn is_context(flag: &Arg) -> bool {
    matches!(flag.get_id().as_str(), "context" | "contexts")
}

/// The contexts that complete `word` after `flag`: one context, or, for `--contexts`, the
/// list so far with one more (those it names already left out).
fn contexts(flag: &Arg, word: &str, known: Vec<String>, out: &mut Vec<String>) -> u32 {
    let (done, prefix) = match flag.get_id().as_str() {
        "contexts" => word.rsplit_once(',').map_or(("", word), |(d, p)| (d, p)),
        _ => ("", word),
    };
    let named: Vec<&str> = done.split(',').filter(|c| !c.is_empty()).collect();
    for c in known.iter().filter(|c| c.starts_with(prefix) && !named.contains(&c.as_str())) {
        // A context name is the kubeconfig's: shown only when it is a plain word.
        if c.chars().all(|ch| ch.is_ascii_alphanumeric() || "-_.@:/".contains(ch)) {
            out.push(if done.is_empty() { c.clone() } else { format!("{done},{c}") });
        }
    }
    NO_FILES
}

/// The flag `word` names among `cmd`'s (`--output`, `--output=json`, `-o`).
fn flag_of<'c>(cmd: &'c Command, word: &str) -> Option<&'c Arg> {
    if let Some(long) = word.strip_prefix("--") {
        let long = long.split('=').next().unwrap_or(long);
        return cmd.get_arguments().find(|a| a.get_long() == Some(long));
    }
    let short = word.strip_prefix('-')?;
    let mut chars = short.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else { return None };
    cmd.get_arguments().find(|a| a.get_short() == Some(c))
}

/// The values a flag takes that start with `prefix`; the directive.
fn values(flag: &Arg, prefix: &str, out: &mut Vec<String>) -> u32 {
    let possible = flag.get_possible_values();
    if possible.is_empty() {
        return if path_like(flag) { DEFAULT } else { NO_FILES };
    }
    for v in possible.iter().filter(|v| !v.is_hide_set()) {
        if v.get_name().starts_with(prefix) {
            let help = v.get_help().map(|h| h.to_string()).unwrap_or_default();
            out.push(candidate(v.get_name(), &help));
        }
    }
    NO_FILES
}

fn path_like(a: &Arg) -> bool {
    matches!(a.get_value_hint(), ValueHint::AnyPath | ValueHint::FilePath | ValueHint::DirPath)
}

/// `name`, and a tab before its description's first line when it has one.
fn candidate(name: &str, help: &str) -> String {
    match help.lines().next().map(str::trim).filter(|h| !h.is_empty()) {
        Some(h) => format!("{name}\t{h}"),
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sets `wal` and `web`; contexts `eu`, `us`, `ap`; what was asked.
    #[derive(Default)]
    struct World {
        asked: std::cell::RefCell<Option<NameQuery>>,
        kubeconfig: std::cell::RefCell<Option<Option<String>>>,
    }

    impl Lookup for World {
        fn names(&self, q: &NameQuery) -> Vec<String> {
            *self.asked.borrow_mut() = Some(q.clone());
            ["wal", "web"]
                .iter()
                .filter(|n| n.starts_with(&q.prefix))
                .map(|n| n.to_string())
                .collect()
        }

        fn contexts(&self, kubeconfig: Option<&str>) -> Vec<String> {
            *self.kubeconfig.borrow_mut() = Some(kubeconfig.map(str::to_string));
            ["eu", "us", "ap", "bad name"].iter().map(|c| c.to_string()).collect()
        }
    }

    fn ask(words: &[&str]) -> Vec<String> {
        ask_names(words).0
    }

    /// The candidates, and the query the names were asked with (if they were).
    fn ask_names(words: &[&str]) -> (Vec<String>, Option<NameQuery>) {
        let world = World::default();
        let words: Vec<String> = words.iter().map(|w| (*w).to_string()).collect();
        let out = cobra(&words, &world);
        (out, world.asked.take())
    }

    #[test]
    fn contexts_complete_from_the_kubeconfig_and_a_list_goes_on_without_repeats() {
        assert_eq!(ask(&["--context", ""]), ["eu", "us", "ap", ":4"]);
        assert_eq!(ask(&["explain", "--context", "u"]), ["us", ":4"]);
        assert_eq!(ask(&["rollout", "web", "--contexts", "eu,"]), ["eu,us", "eu,ap", ":4"]);
        assert_eq!(ask(&["rollout", "web", "--contexts", "eu,us,a"]), ["eu,us,ap", ":4"]);
        // The kubeconfig the words name is the one read.
        let world = World::default();
        let words: Vec<String> =
            ["--kubeconfig", "/tmp/k", "rollout", "--contexts", ""].map(String::from).to_vec();
        let out = cobra(&words, &world);
        assert_eq!(world.kubeconfig.take(), Some(Some("/tmp/k".to_string())));
        assert!(!out.iter().any(|c| c.contains("bad name")), "{out:?}");
    }

    #[test]
    fn set_names_are_asked_where_a_name_goes_with_the_cluster_the_words_name() {
        let (out, asked) = ask_names(&["-n", "prod", "--context=stage", "explain", "we"]);
        assert_eq!(out, ["web\tStatefulSet", ":4"]);
        let want = NameQuery {
            kubeconfig: None,
            context: Some("stage".into()),
            namespace: Some("prod".into()),
            prefix: "we".into(),
        };
        assert_eq!(asked, Some(want));
        // The console's NAME: verbs and sets together.
        let (out, asked) = ask_names(&["--kubeconfig", "/k", "w"]);
        assert!(out.iter().any(|c| c.starts_with("wait\t")), "{out:?}");
        assert!(out.contains(&"web\tStatefulSet".to_string()), "{out:?}");
        assert_eq!(asked.and_then(|q| q.kubeconfig), Some("/k".into()));
        // A name already given, a flag's value, a verb without a set: not asked.
        for words in [&["explain", "web", ""][..], &["-n", ""], &["completion", ""]] {
            assert_eq!(ask_names(words).1, None, "{words:?}");
        }
    }

    #[test]
    fn cobra_completes_verbs_flags_and_values() {
        let verbs = ask(&["ex"]);
        assert!(verbs[0].starts_with("explain\t"), "{verbs:?}");
        assert_eq!(verbs.last().map(String::as_str), Some(":4"));
        assert!(!ask(&[""]).iter().any(|c| c.starts_with("__complete")), "hidden stays hidden");
        let flags = ask(&["explain", "--o"]);
        assert!(flags.iter().any(|c| c.starts_with("--output\t")), "{flags:?}");
        assert_eq!(
            ask(&["explain", "-o", ""])
                .iter()
                .map(|c| c.split('\t').next().unwrap_or(""))
                .collect::<Vec<_>>(),
            ["text", "json", "yaml", ":4"]
        );
        assert_eq!(ask(&["--context", "prod", "rollout", "web", "--on-failure", "u"])[0], "undo");
        let shells = ask(&["completion", ""]);
        assert!(shells.iter().any(|c| c == "bash" || c.starts_with("bash\t")), "{shells:?}");
        // A file: the shell completes file names.
        assert_eq!(ask(&["--kubeconfig", ""]), [":0"]);
        assert_eq!(ask(&["play", ""]), [":0"]);
    }

    #[test]
    fn the_name_it_runs_as_decides_the_convention() {
        assert_eq!(Invoked::from_argv0("/usr/local/bin/kubectl-ststui"), Invoked::KubectlPlugin);
        assert_eq!(Invoked::from_argv0("kubectl_complete-ststui"), Invoked::KubectlComplete);
        assert_eq!(Invoked::from_argv0("target/release/ststui"), Invoked::Plain);
        assert_eq!(Invoked::KubectlPlugin.bin_name(), "kubectl ststui");
    }
}
