//! ststui-core: the pure layer — the port of the upstream StatefulSet controller (`core`), the one
//! way others' text reaches a terminal (`text`) and durations and bad values as every input takes
//! them (`value`). No tokio, no kube client, no terminal, no wall clock: the compiler holds it
//! (this crate does not depend on them). ARCHITECTURE.md's layer table.
#![cfg_attr(
    test,
    allow(
        clippy::too_many_lines,
        clippy::disallowed_methods,
        reason = "a test tells one story start to end, and #[tokio::test] builds its own runtime; \
                  the lib target holds the rules"
    )
)]

pub mod core;
pub mod text;
pub mod value;
