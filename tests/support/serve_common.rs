//! A served simulator for the client tests: `web` (3 replicas, instant-ish pods) rolled out,
//! served on a free loopback port, and kube-rs clients built from the kubeconfig it writes.
#![allow(dead_code, reason = "each test binary uses part of the shared support")]

use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use kube::config::{KubeConfigOptions, Kubeconfig};
use ststui::serve::{self, Deny, ServeConfig, Server};
use ststui::sim::driver::SimHandle;
use ststui::sim::{KubeletConfig, Sim, SimConfig};

pub use super::objects::{kubelet, set};

pub struct Served {
    pub handle: SimHandle,
    pub server: Server,
    pub client: kube::Client,
}

/// Serves a simulation holding `sets`, settled, with 100 ms pod steps, denying `deny`.
pub async fn served(sets: Vec<StatefulSet>, deny: &[&str]) -> Served {
    let (handle, server) = serve(sets, deny, kubelet(100));
    let client = client(server.addr).await;
    Served { handle, server, client }
}

/// A simulation at wall time, recording Events, holding `sets`: settled, or (`paused`) with its
/// controller paused before they were created (an API server without a StatefulSet controller).
pub fn sim(sets: Vec<StatefulSet>, kubelet: KubeletConfig, paused: bool) -> Sim {
    sim_with(sets, SimConfig { kubelet, ..SimConfig::default() }, paused)
}

/// [`sim`] made from `config` (its release, its gates) at wall time, recording Events.
pub fn sim_with(sets: Vec<StatefulSet>, config: SimConfig, paused: bool) -> Sim {
    let now = k8s_openapi::jiff::Timestamp::now().as_millisecond();
    let config = SimConfig { epoch_unix_ms: Some(now), record_events: true, ..config };
    let mut sim = Sim::new(config);
    if paused {
        sim.pause();
    }
    for s in sets {
        sim.create_set(s).unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(paused || sim.settle(60_000), "the sets did not settle");
    sim
}

/// Serves a simulation holding `sets` (settled first), with this kubelet, denying `deny`.
pub fn serve(sets: Vec<StatefulSet>, deny: &[&str], kubelet: KubeletConfig) -> (SimHandle, Server) {
    serve_sim(sim(sets, kubelet, false), deny)
}

/// Serves `sim` on a free loopback port, denying `deny`.
pub fn serve_sim(sim: Sim, deny: &[&str]) -> (SimHandle, Server) {
    serve_sim_at(sim, deny, "v1.37.0+ststui-sim")
}

/// [`serve_sim`] reporting `git_version` (and answering as that release: streamed lists).
pub fn serve_sim_at(sim: Sim, deny: &[&str], git_version: &str) -> (SimHandle, Server) {
    let deny = deny.iter().map(|d| d.parse::<Deny>().unwrap_or_else(|e| panic!("{e}"))).collect();
    let config = ServeConfig {
        addr: "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}")),
        deny,
        git_version: git_version.into(),
    };
    serve::serve_sim(sim, 1.0, std::sync::Arc::new(|_| {}), config)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A kube-rs client from the served kubeconfig.
pub async fn client(addr: std::net::SocketAddr) -> kube::Client {
    let kc = Kubeconfig::from_yaml(&serve::kubeconfig(addr)).unwrap_or_else(|e| panic!("{e}"));
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    kube::Client::try_from(config).unwrap_or_else(|e| panic!("{e}"))
}

/// Polls `f` (bounded) until it returns `Some`.
pub async fn eventually<T, F: std::future::Future<Output = Option<T>>>(
    what: &str,
    mut f: impl FnMut() -> F,
) -> T {
    for _ in 0..200 {
        if let Some(v) = f().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: did not happen within 10 s");
}
