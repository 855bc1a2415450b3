//! A served simulator the binary talks to as a user's would: its sets served on a free loopback
//! port, a scratch directory holding the kubeconfig (and the binary's logs), and the simulator
//! reachable beside the API (to read the set or inject a fault without going through it).

use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::api::apps::v1::StatefulSet;
use ststui::backend::ClusterOp;
use ststui::serve::Server;
use ststui::sim::driver::SimHandle;
use ststui::sim::{KubeletConfig, Sim};

use super::objects::web;
use super::serve_common::serve;

pub struct Served {
    pub handle: SimHandle,
    pub server: Server,
    /// The scratch directory (`kubeconfig`, logs), removed when the rig goes.
    pub dir: PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Served {
    /// `sets` served (settled) with `kubelet`, denying `deny`; the scratch directory is named
    /// after the suite, the test and this process.
    pub fn new(
        suite: &str,
        test: &str,
        sets: Vec<StatefulSet>,
        deny: &[&str],
        kubelet: KubeletConfig,
    ) -> Served {
        Served::of(suite, test, serve(sets, deny, kubelet))
    }

    /// `sim` served as it is (a release or gates of its own), its scratch directory named as
    /// [`Served::new`]'s.
    pub fn with_sim(suite: &str, test: &str, sim: Sim) -> Served {
        Served::of(suite, test, super::serve_common::serve_sim(sim, &[]))
    }

    fn of(suite: &str, test: &str, (handle, server): (SimHandle, Server)) -> Served {
        let dir =
            std::env::temp_dir().join(format!("ststui-{suite}-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        ststui::serve::write_kubeconfig(&dir.join("kubeconfig"), server.addr)
            .unwrap_or_else(|e| panic!("{e}"));
        Served { handle, server, dir }
    }

    /// Runs something on the simulator and returns its answer.
    pub fn call<T: Send + 'static>(&self, f: impl FnOnce(&mut Sim) -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        self.handle.caller().call(Box::new(move |sim| {
            let _ = tx.send(f(sim));
        }));
        rx.recv_timeout(Duration::from_secs(5)).unwrap_or_else(|e| panic!("the simulator: {e}"))
    }

    /// A write on the simulator, as the console would send it.
    pub fn op(&self, op: ClusterOp) {
        self.call(move |sim| sim.apply_op(op.into()).map_err(|e| e.to_string()))
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// `default/web` as the simulator holds it.
    pub fn the_set(&self) -> StatefulSet {
        self.call(|sim| sim.set(&web()).cloned()).unwrap_or_else(|| panic!("no web"))
    }

    /// `web`'s partition.
    pub fn partition(&self) -> i32 {
        ststui::core::spec::strategy(&self.the_set()).partition
    }
}
