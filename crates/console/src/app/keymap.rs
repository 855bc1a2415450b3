//! The ONE keymap table: context → key → [`Action`], each entry with its help text and an
//! optional short footer label. The help overlay ([`help_sections`]) and the footer
//! ([`footer`]) are derived from [`BINDINGS`], so they cannot drift from what the keys do.
//!
//! Owns key lookup and key labels. Must not touch state or the terminal: the reducer asks
//! [`lookup`] which action a key means in the current [`Context`].
//!
//! Choices (k9s habits where they overlap: `?` help, `q`/ctrl-c quit, ctrl-d delete, ctrl-k
//! kill, `s` scale, `Esc` back, vim keys):
//!
//! | keys | action |
//! | --- | --- |
//! | `[` / `]` | partition down / up one: `[` moves the partition line left (one more ordinal updates) |
//! | `p` | set the partition to a number |
//! | `o` | cycle RollingUpdate → OnDelete → Recreate |
//! | `+` (`=`) / `-` | scale up / down one; `s` scale to a number |
//! | `i` / `r` / `u` | new image (new revision) / restart / undo to a chosen revision |
//! | space, `n` (`.`) | pause / resume reconciliation, step one sync while paused |
//! | `<` / `>` | simulator slower / faster |
//! | ctrl-d / ctrl-k | delete / force-delete the selected pod |
//! | `f` / `t` / `b` | faults: the selected pod fails / toggles Ready / its image breaks |
//! | arrows, `hjkl`, PgUp/PgDn, Home/End (`g`/`G`), Tab | select ordinals, next set |
//! | `Z` | the set's rollout group as one matrix (arrows move between its sets) / back |

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::Action;
use crate::backend::Capabilities;

/// Where keys are read. Exactly one context is active: the open overlay, if any, else
/// [`Context::Normal`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// The console itself.
    Normal,
    /// The help overlay is open.
    Help,
    /// A number / text prompt is open. Printable keys not in the table edit the input.
    Prompt,
    /// A confirmation (old → new) is open.
    Confirm,
    /// The revision picker (undo) is open.
    Picker,
    /// The StatefulSet list (a cluster opened without a NAME, or Esc from a set).
    Sets,
    /// The selected pod's log.
    Log,
}

/// Help overlay sections, in display order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Group {
    Rollout,
    Controller,
    Pod,
    Navigate,
    General,
}

impl Group {
    pub fn title(self) -> &'static str {
        match self {
            Group::Rollout => "Rollout",
            Group::Controller => "Controller (simulator)",
            Group::Pod => "Selected pod",
            Group::Navigate => "Navigate",
            Group::General => "General",
        }
    }
}

/// One key: a code and the modifiers that must be held. For character keys SHIFT is ignored
/// (terminals disagree on reporting it for `?`, `+`, `G`); CONTROL and ALT must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl Key {
    pub const fn plain(code: KeyCode) -> Key {
        Key { code, mods: KeyModifiers::NONE }
    }
    pub const fn ch(c: char) -> Key {
        Key::plain(KeyCode::Char(c))
    }
    pub const fn ctrl(c: char) -> Key {
        Key { code: KeyCode::Char(c), mods: KeyModifiers::CONTROL }
    }

    /// Whether a terminal key event is this key.
    pub fn matches(&self, ev: &KeyEvent) -> bool {
        let relevant = KeyModifiers::CONTROL | KeyModifiers::ALT;
        self.code == ev.code && (ev.modifiers & relevant) == (self.mods & relevant)
    }

    /// How the key is written in the help and the footer: `q`, `ctrl-d`, `space`, `←`, `PgUp`.
    pub fn label(&self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::Backspace => "Backspace".into(),
            other => format!("{other:?}"),
        };
        if self.mods.contains(KeyModifiers::CONTROL) {
            format!("ctrl-{base}")
        } else if self.mods.contains(KeyModifiers::ALT) {
            format!("alt-{base}")
        } else {
            base
        }
    }
}

/// Which backends a binding is for: some keys mean one thing where reconciliation can be paused
/// (the simulator) and another where it cannot (a real cluster: space freezes the rollout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Always,
    /// Reconciliation can be paused ([`Capabilities::pause_reconcile`]).
    Pausable,
    /// It cannot (a real cluster).
    NotPausable,
    /// There is a list of sets to go back to ([`Capabilities::set_list`]).
    SetList,
    /// There is none.
    NoSetList,
    /// The connection can be made anew ([`Capabilities::reconnect`]).
    Reconnect,
    /// Faults can be injected ([`Capabilities::inject_faults`]).
    Faults,
    /// Time has a speed ([`Capabilities::speed`]).
    Speed,
}

impl When {
    pub fn holds(self, caps: &Capabilities) -> bool {
        match self {
            When::Always => true,
            When::Pausable => caps.pause_reconcile,
            When::NotPausable => !caps.pause_reconcile,
            When::SetList => caps.set_list,
            When::NoSetList => !caps.set_list,
            When::Reconnect => caps.reconnect,
            When::Faults => caps.inject_faults,
            When::Speed => caps.speed,
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub context: Context,
    /// Every key that triggers the action; the first is the one shown in the footer.
    pub keys: &'static [Key],
    pub action: Action,
    pub group: Group,
    /// One line for the help overlay.
    pub help: &'static str,
    /// Short label for the footer (only the most useful bindings have one).
    pub footer: Option<&'static str>,
    /// The backends it is for.
    pub when: When,
}

const fn b(
    context: Context,
    keys: &'static [Key],
    action: Action,
    group: Group,
    help: &'static str,
    footer: Option<&'static str>,
) -> Binding {
    Binding { context, keys, action, group, help, footer, when: When::Always }
}

/// A binding for some backends only.
const fn on(when: When, b: Binding) -> Binding {
    Binding { when, ..b }
}

use Context as C;
use Group as G;

/// The keymap. Order matters twice: the first matching row wins, and rows are listed in the
/// help overlay and the footer in this order.
#[rustfmt::skip]
pub const BINDINGS: &[Binding] = &[
    // Normal: rollout.
    b(C::Normal, &[Key::ch('[')], Action::PartitionDown, G::Rollout,
      "partition −1: the next ordinal updates", Some("partition−")),
    b(C::Normal, &[Key::ch(']')], Action::PartitionUp, G::Rollout,
      "partition +1 (never reverts pods)", Some("partition+")),
    b(C::Normal, &[Key::ch('p')], Action::PartitionPrompt, G::Rollout,
      "set the partition to a number", None),
    b(C::Normal, &[Key::ch('o')], Action::ToggleStrategy, G::Rollout,
      "RollingUpdate → OnDelete → Recreate (keeps the partition)", None),
    b(C::Normal, &[Key::ch('m')], Action::MaxUnavailablePrompt, G::Rollout,
      "set maxUnavailable (a number or N%)", None),
    b(C::Normal, &[Key::ch('+'), Key::ch('=')], Action::ScaleUp, G::Rollout,
      "scale up one replica", None),
    b(C::Normal, &[Key::ch('-')], Action::ScaleDown, G::Rollout,
      "scale down one replica", None),
    b(C::Normal, &[Key::ch('s')], Action::ScalePrompt, G::Rollout,
      "scale to a number of replicas", Some("scale")),
    b(C::Normal, &[Key::ch('i')], Action::NewImage, G::Rollout,
      "new image: a new revision", Some("image")),
    b(C::Normal, &[Key::ch('r')], Action::Restart, G::Rollout,
      "restart: a new revision", None),
    b(C::Normal, &[Key::ch('u')], Action::Undo, G::Rollout,
      "undo: back to a chosen revision", None),
    on(When::NotPausable, b(C::Normal, &[Key::ch(' ')], Action::ToggleFreeze, G::Rollout,
      "freeze / resume the rollout (on a cluster)", Some("freeze"))),
    b(C::Normal, &[Key::ch('F')], Action::ToggleFreeze, G::Rollout,
      "freeze / resume the rollout (recorded on the set)", None),
    b(C::Normal, &[Key::ch('P')], Action::PlanPrompt, G::Rollout,
      "run a rollout plan from this console (Z view: the group's)", None),
    b(C::Normal, &[Key::ch('A')], Action::ApprovePlan, G::Rollout,
      "approve: pass the plan's manual gate", None),
    b(C::Normal, &[Key::ch('U')], Action::AbortSet, G::Rollout,
      "abort: the forced rollback of the set (asked first)", None),
    // Normal: controller.
    on(When::Pausable, b(C::Normal, &[Key::ch(' ')], Action::TogglePause, G::Controller,
      "pause / resume reconciliation", Some("pause"))),
    on(When::Pausable, b(C::Normal, &[Key::ch('n'), Key::ch('.')], Action::Step, G::Controller,
      "step: one sync while paused", Some("step"))),
    on(When::Speed, b(C::Normal, &[Key::ch('>')], Action::SpeedUp, G::Controller,
      "simulator twice as fast", None)),
    on(When::Speed, b(C::Normal, &[Key::ch('<')], Action::SpeedDown, G::Controller,
      "simulator half as fast", None)),
    // Normal: the selected pod.
    b(C::Normal, &[Key::ctrl('d')], Action::DeletePod, G::Pod,
      "evict the pod (its budget may refuse)", Some("evict")),
    b(C::Normal, &[Key::ctrl('k')], Action::ForceDeletePod, G::Pod,
      "force-delete past budgets (asks why)", None),
    on(When::Faults, b(C::Normal, &[Key::ch('f')], Action::FailPod, G::Pod,
      "fault: the pod fails (Failed)", None)),
    on(When::Faults, b(C::Normal, &[Key::ch('t')], Action::ToggleReady, G::Pod,
      "fault: toggle the pod's Ready", None)),
    on(When::Faults, b(C::Normal, &[Key::ch('b')], Action::BreakImage, G::Pod,
      "fault: break / fix an image (every pod of it never Ready)", None)),
    // Normal: navigation.
    b(C::Normal, &[Key::plain(KeyCode::Left), Key::ch('h')], Action::Left, G::Navigate,
      "previous ordinal", None),
    b(C::Normal, &[Key::plain(KeyCode::Right), Key::ch('l')], Action::Right, G::Navigate,
      "next ordinal", None),
    b(C::Normal, &[Key::plain(KeyCode::Up), Key::ch('k')], Action::Up, G::Navigate,
      "one row up", None),
    b(C::Normal, &[Key::plain(KeyCode::Down), Key::ch('j')], Action::Down, G::Navigate,
      "one row down", None),
    b(C::Normal, &[Key::plain(KeyCode::PageUp), Key::ctrl('b')], Action::PageUp, G::Navigate,
      "one page up", None),
    b(C::Normal, &[Key::plain(KeyCode::PageDown), Key::ctrl('f')], Action::PageDown,
      G::Navigate, "one page down", None),
    b(C::Normal, &[Key::plain(KeyCode::Home), Key::ch('g')], Action::First, G::Navigate,
      "first ordinal", None),
    b(C::Normal, &[Key::plain(KeyCode::End), Key::ch('G')], Action::Last, G::Navigate,
      "last ordinal", None),
    b(C::Normal, &[Key::ch('/')], Action::JumpPrompt, G::Navigate,
      "go to an ordinal by number", None),
    b(C::Normal, &[Key::ch('w')], Action::JumpToWaited, G::Navigate,
      "go to the pod the controller waits on", None),
    b(C::Normal, &[Key::plain(KeyCode::Tab)], Action::NextSet, G::Navigate,
      "next StatefulSet (in a group: its next set)", None),
    b(C::Normal, &[Key::ch('Z')], Action::Group, G::Navigate,
      "the set's rollout group as one matrix (← → its sets) / back", None),
    b(C::Normal, &[Key::ch('K')], Action::TimelineOlder, G::Navigate,
      "timeline: older entries (also the mouse wheel over it)", None),
    b(C::Normal, &[Key::ch('J')], Action::TimelineNewer, G::Navigate,
      "timeline: newer entries; at the bottom it follows again", None),
    b(C::Normal, &[Key::ch('T')], Action::TimelineFilter, G::Navigate,
      "timeline: the selected set's lines, then the pod's, then all", None),
    b(C::Normal, &[Key::ch('X')], Action::ExportTimeline, G::Navigate,
      "timeline: export every line held to a JSONL file here", None),
    b(C::Normal, &[Key::ch('L')], Action::Logs, G::Pod,
      "the pod's log, following (p in it: the previous container's)", Some("log")),
    // Normal: general.
    b(C::Normal, &[Key::ch('?')], Action::Help, G::General, "help", Some("help")),
    b(C::Normal, &[Key::ch('q'), Key::ctrl('c')], Action::Quit, G::General, "quit",
      Some("quit")),
    b(C::Normal, &[Key::ctrl('z')], Action::Suspend, G::General,
      "suspend to the shell (fg comes back)", None),
    on(When::NoSetList, b(C::Normal, &[Key::plain(KeyCode::Esc)], Action::Back, G::General,
      "clear the status line", None)),
    on(When::SetList, b(C::Normal, &[Key::plain(KeyCode::Esc)], Action::Back, G::General,
      "back to the StatefulSet list", Some("back"))),
    on(When::Reconnect, b(C::Normal, &[Key::ch('R')], Action::Reconnect, G::General,
      "read the credentials again and reconnect", None)),
    // Help overlay.
    b(C::Help, &[Key::plain(KeyCode::Esc), Key::ch('?'), Key::ch('q')], Action::Cancel,
      G::General, "close help", Some("close")),
    b(C::Help, &[Key::plain(KeyCode::PageDown), Key::plain(KeyCode::Down), Key::ch('j')],
      Action::PageDown, G::Navigate, "next page (small terminals)", None),
    b(C::Help, &[Key::plain(KeyCode::PageUp), Key::plain(KeyCode::Up), Key::ch('k')],
      Action::PageUp, G::Navigate, "previous page", None),
    b(C::Help, &[Key::ctrl('c')], Action::Quit, G::General, "quit", None),
    // Prompt.
    b(C::Prompt, &[Key::plain(KeyCode::Enter)], Action::Accept, G::General, "apply",
      Some("apply")),
    b(C::Prompt, &[Key::plain(KeyCode::Esc)], Action::Cancel, G::General, "cancel",
      Some("cancel")),
    b(C::Prompt, &[Key::ctrl('c')], Action::Quit, G::General, "quit", None),
    // Confirmation.
    b(C::Confirm, &[Key::ch('y'), Key::plain(KeyCode::Enter)], Action::Accept, G::General,
      "yes, do it", Some("yes")),
    b(C::Confirm, &[Key::ch('n'), Key::plain(KeyCode::Esc)], Action::Cancel, G::General,
      "no, cancel", Some("no")),
    b(C::Confirm, &[Key::ctrl('c')], Action::Quit, G::General, "quit", None),
    // Revision picker.
    b(C::Picker, &[Key::plain(KeyCode::Up), Key::ch('k')], Action::Up, G::Navigate,
      "previous revision", None),
    b(C::Picker, &[Key::plain(KeyCode::Down), Key::ch('j')], Action::Down, G::Navigate,
      "next revision", None),
    b(C::Picker, &[Key::plain(KeyCode::Enter)], Action::Accept, G::General,
      "roll back to this revision", Some("roll back")),
    b(C::Picker, &[Key::plain(KeyCode::Esc), Key::ch('q')], Action::Cancel, G::General,
      "cancel", Some("cancel")),
    b(C::Picker, &[Key::ctrl('c')], Action::Quit, G::General, "quit", None),
    // The log.
    b(C::Log, &[Key::plain(KeyCode::Esc), Key::ch('q'), Key::ch('L')], Action::Cancel,
      G::General, "close the log", Some("close")),
    b(C::Log, &[Key::plain(KeyCode::Up), Key::ch('k')], Action::Up, G::Navigate,
      "one line up", None),
    b(C::Log, &[Key::plain(KeyCode::Down), Key::ch('j')], Action::Down, G::Navigate,
      "one line down", None),
    b(C::Log, &[Key::plain(KeyCode::PageUp), Key::ctrl('b')], Action::PageUp, G::Navigate,
      "one page up", Some("page up")),
    b(C::Log, &[Key::plain(KeyCode::PageDown), Key::ctrl('f')], Action::PageDown, G::Navigate,
      "one page down", None),
    b(C::Log, &[Key::plain(KeyCode::Home), Key::ch('g')], Action::First, G::Navigate,
      "the oldest line", None),
    b(C::Log, &[Key::plain(KeyCode::End), Key::ch('G')], Action::Last, G::Navigate,
      "the newest line, following", Some("follow")),
    b(C::Log, &[Key::ch('p')], Action::PreviousLog, G::Pod,
      "the previous container's log / the current one's", Some("previous")),
    b(C::Log, &[Key::ctrl('c')], Action::Quit, G::General, "quit", None),
    // The StatefulSet list.
    on(When::SetList, b(C::Sets, &[Key::plain(KeyCode::Up), Key::ch('k')], Action::Up,
      G::Navigate, "previous set", None)),
    on(When::SetList, b(C::Sets, &[Key::plain(KeyCode::Down), Key::ch('j')], Action::Down,
      G::Navigate, "next set", None)),
    on(When::SetList, b(C::Sets, &[Key::plain(KeyCode::Enter)], Action::Accept, G::General,
      "open the set", Some("open"))),
    on(When::SetList, b(C::Sets, &[Key::ch('Z')], Action::Group, G::General,
      "open the set's rollout group as a whole", Some("group"))),
    on(When::SetList, b(C::Sets, &[Key::ch('/')], Action::FilterSets, G::Navigate,
      "filter the sets by name", Some("filter"))),
    on(When::SetList, b(C::Sets, &[Key::plain(KeyCode::Esc)], Action::Cancel, G::Navigate,
      "clear the filter", None)),
    on(When::Reconnect, b(C::Sets, &[Key::ch('R')], Action::Reconnect, G::General,
      "read the credentials again and reconnect", None)),
    on(When::SetList, b(C::Sets, &[Key::ch('?')], Action::Help, G::General, "help",
      Some("help"))),
    on(When::SetList, b(C::Sets, &[Key::ch('q'), Key::ctrl('c')], Action::Quit, G::General,
      "quit", Some("quit"))),
];

/// The bindings of `context` for a backend with `caps`, in table order.
pub fn bindings<'c>(
    context: Context,
    caps: &'c Capabilities,
) -> impl Iterator<Item = &'static Binding> + 'c {
    BINDINGS.iter().filter(move |b| b.context == context && b.when.holds(caps))
}

/// The action `ev` means in `context` on a backend with `caps`, if any. Key releases are
/// ignored by the caller.
pub fn lookup(context: Context, caps: &Capabilities, ev: &KeyEvent) -> Option<Action> {
    bindings(context, caps).find(|b| b.keys.iter().any(|k| k.matches(ev))).map(|b| b.action)
}

/// The action `ev` means in `context` on some other backend (a simulator key pressed on a
/// cluster): the reducer runs it so that it says where it exists, instead of "not bound".
pub fn lookup_elsewhere(context: Context, ev: &KeyEvent) -> Option<Action> {
    BINDINGS
        .iter()
        .filter(|b| b.context == context)
        .find(|b| b.keys.iter().any(|k| k.matches(ev)))
        .map(|b| b.action)
}

/// The footer for `context` on a backend with `caps`: (first key's label, short label) for
/// every binding that has one, in table order.
pub fn footer(context: Context, caps: &Capabilities) -> Vec<(String, &'static str)> {
    bindings(context, caps).filter_map(|b| Some((b.keys.first()?.label(), b.footer?))).collect()
}

/// One help line: all key labels joined (`← h`), and the help text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpLine {
    pub keys: String,
    pub help: &'static str,
}

/// The help overlay: the Normal-context bindings grouped by [`Group`], in display order; for a
/// backend with `caps`, or every binding (the README) when `None`.
pub fn help_sections(caps: Option<&Capabilities>) -> Vec<(Group, Vec<HelpLine>)> {
    let mut out: Vec<(Group, Vec<HelpLine>)> = Vec::new();
    let rows = BINDINGS.iter().filter(|b| b.context == Context::Normal);
    for bind in rows.filter(|b| caps.is_none_or(|c| b.when.holds(c))) {
        let keys = bind.keys.iter().map(Key::label).collect::<Vec<_>>().join(" ");
        let line = HelpLine { keys, help: bind.help };
        match out.iter_mut().find(|(g, _)| *g == bind.group) {
            Some((_, lines)) => lines.push(line),
            None => out.push((bind.group, vec![line])),
        }
    }
    out.sort_by_key(|(g, _)| *g);
    out
}

/// The first key bound to `action` in `context` (on any backend), for messages like "press
/// space to pause".
pub fn key_for(context: Context, action: Action) -> Option<String> {
    BINDINGS
        .iter()
        .find(|b| b.context == context && b.action == action)
        .and_then(|b| b.keys.first())
        .map(Key::label)
}

/// [`key_for`] on a backend with `caps` (space freezes on a cluster, pauses in the simulator).
pub fn key_on(context: Context, caps: &Capabilities, action: Action) -> Option<String> {
    bindings(context, caps)
        .find(|b| b.action == action)
        .and_then(|b| b.keys.first())
        .map(Key::label)
}

/// Whether the backend offers `action` at all (the simulator's pause, step, speed and faults
/// exist there only; pressed elsewhere they say so).
pub fn offered(action: Action, caps: &crate::backend::Capabilities) -> bool {
    match action {
        Action::TogglePause | Action::Step => caps.pause_reconcile,
        Action::SpeedUp | Action::SpeedDown => caps.speed,
        Action::FailPod | Action::ToggleReady | Action::BreakImage => caps.inject_faults,
        _ => true,
    }
}
