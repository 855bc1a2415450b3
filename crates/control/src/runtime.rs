//! The one place that builds tokio runtimes (the clippy configuration refuses
//! `tokio::runtime::Builder` anywhere else): every runtime enables the IO and time drivers and
//! names its threads `ststui-…`, so a thread list or a profile says whose they are.

/// How many workers: the calling thread only, or a pool of this many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workers {
    /// `block_on` on the calling thread (a one-off request).
    Current,
    /// A multi-thread runtime with this many workers.
    Threads(usize),
}

/// A runtime that could not start (the operating system refused a thread or a driver).
#[derive(Debug, thiserror::Error)]
#[error("cannot start the {what} runtime: {source}")]
pub struct NoRuntime {
    pub what: &'static str,
    #[source]
    pub source: std::io::Error,
}

/// A runtime for `what` (its threads are named `ststui-{what}`).
#[expect(clippy::disallowed_methods, reason = "the one place that builds a tokio runtime")]
pub fn build(what: &'static str, workers: Workers) -> Result<tokio::runtime::Runtime, NoRuntime> {
    let mut b = match workers {
        Workers::Current => tokio::runtime::Builder::new_current_thread(),
        Workers::Threads(n) => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n.max(1));
            b
        }
    };
    b.thread_name(format!("ststui-{what}"))
        .enable_all()
        .build()
        .map_err(|source| NoRuntime { what, source })
}

impl From<NoRuntime> for std::io::Error {
    fn from(e: NoRuntime) -> std::io::Error {
        std::io::Error::new(e.source.kind(), e.to_string())
    }
}
