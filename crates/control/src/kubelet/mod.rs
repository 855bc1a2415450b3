//! What a kubelet does to a pod and says about it, shared by the simulator's kubelet
//! (`sim::kubelet`), the fake kubelet of the test control plane (`fakelet`) and drive mode: the
//! timings ([`KubeletConfig`]), how a broken image fails ([`failure`]), a container's log
//! ([`log`]) and the Event object a recorder writes ([`event`]).
//!
//! Owns those models. Must not: hold pods or a clock (the simulator's kubelet and the fake
//! kubelet do), or talk to a cluster.

pub mod event;
pub mod exec;
pub mod failure;
pub mod log;

pub use failure::Failure;

/// Pod timing for pods created from now on (the script's `kubelet` command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeletConfig {
    /// Creation → Running.
    pub start_ms: u64,
    /// Running → Ready.
    pub ready_ms: u64,
    /// Graceful deletion → gone.
    pub stop_ms: u64,
    /// Pods whose first container runs this image never become Ready.
    pub broken: Option<String>,
    /// How they fail.
    pub failure: Failure,
}

impl Default for KubeletConfig {
    /// The scenario defaults: 1 s, 1 s, 1 s, nothing broken.
    fn default() -> Self {
        KubeletConfig {
            start_ms: 1000,
            ready_ms: 1000,
            stop_ms: 1000,
            broken: None,
            failure: Failure::Probe,
        }
    }
}

impl KubeletConfig {
    /// Zero delays: pods start, become Ready and go in the same virtual instant.
    pub fn instant() -> Self {
        KubeletConfig { start_ms: 0, ready_ms: 0, stop_ms: 0, ..KubeletConfig::default() }
    }
}
