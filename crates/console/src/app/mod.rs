//! The console's application layer (the Elm architecture): [`AppState`], the [`Msg`]s that
//! enter it, the ONE reducer [`update`] that writes it and returns [`Command`]s, the keymap
//! table, and the selectors (`view`) that turn state into view models for `ui`.
//!
//! Owns application state and its transitions. Must not touch the terminal, the clock, threads,
//! the simulator's internals or a kube client: inputs arrive as [`Msg`], effects leave as
//! [`Command`] (backend Ops), and time is whatever the backend reports.

pub mod action;
pub mod advisor;
mod backend_events;
pub mod derived;
mod differs;
pub mod events;
pub mod facts;
pub mod group;
pub mod health;
pub mod keymap;
pub mod logs;
pub mod mirror;
pub mod msg;
mod navigate;
mod notify;
pub mod ops;
pub mod plan_run;
pub mod readings;
pub mod refusal;
pub mod revdiff;
mod selection;
pub mod sets;
pub mod state;
pub use state::timeline;
pub mod update;
pub mod view;

pub use action::Action;
pub use msg::{Command, Msg, Start};
pub use refusal::Refusal;
pub use state::AppState;
pub use update::update;
