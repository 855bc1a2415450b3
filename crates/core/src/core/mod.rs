//! The embedded StatefulSet controller: a pure port of upstream `pkg/controller/statefulset`
//! and `pkg/controller/history` (spec: `spec/controller.md`, baseline v1.37).
//!
//! Owns: the sync algorithm, revision history, pod claiming, status computation, and the
//! explanation helpers the console reads; and the arithmetic of disruption budgets (`budget`:
//! the status upstream's disruption controller computes, the eviction subresource's verdict).
//! Must not touch: IO, tokio, clocks (`now` is an input), randomness, logging to stdout, or any
//! other ststui layer. Input is an [`Observed`] snapshot,
//! output a [`Plan`] of effects as data.

mod batch;
pub mod budget;
mod bytes;
pub mod claim;
pub mod condition;
mod ctx;
pub mod defaults;
pub mod explain;
pub mod facts;
pub mod fnv;
pub mod gojson;
pub mod history;
pub mod invariants;
pub mod labels;
pub mod newpod;
pub mod options;
pub mod pod;
pub mod pvc;
pub mod reconcile;
pub mod recreate;
pub mod revisions;
mod rolling;
pub mod scan;
pub mod selector;
pub mod spec;
pub mod status;
pub mod stuck;
pub mod types;
pub mod update;
pub mod why;

pub use options::{Options, Semantics, Version};
pub use reconcile::reconcile;
pub use types::*;
