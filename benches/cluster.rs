//! Real-cluster mode against a served set of 1,000 and of 10,000 pods (in process, loopback):
//! how long from starting the cluster backend to the first complete grid (target at 10,000:
//! ≤ 1 s), from a change on the server to the frame that shows it, and from a key to the frame
//! that shows it (targets: ≤ 16 ms). The console's reducer and
//! renderer run as in the binary (TestBackend 200×50), without the terminal.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use k8s_openapi::api::apps::v1::StatefulSet;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ststui::app::{self, AppState, Msg};
use ststui::backend::{BackendEvent, Capabilities, Fault, ObjRef, Object};
use ststui::cluster::{ClusterBackend, Target};
use ststui::serve::{self, ServeConfig, Server};
use ststui::sim::driver::SimHandle;
use ststui::sim::{KubeletConfig, Sim, SimConfig};
use ststui::ui::{self, Theme};

fn served(replicas: i32) -> (SimHandle, Server, std::path::PathBuf) {
    let kubelet =
        KubeletConfig { start_ms: 0, ready_ms: 0, stop_ms: 0, ..KubeletConfig::default() };
    let now = k8s_openapi::jiff::Timestamp::now().as_millisecond();
    let mut sim = Sim::new(SimConfig { kubelet, epoch_unix_ms: Some(now), ..SimConfig::default() });
    let manifest = format!(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: web\nspec:\n  replicas: {replicas}\n  podManagementPolicy: Parallel\n  serviceName: web\n  selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.25\n"
    );
    let set: StatefulSet = serde_yaml_ng::from_str(&manifest).unwrap_or_default();
    let _ = sim.create_set(set);
    sim.settle(600_000);
    let config = ServeConfig {
        addr: "127.0.0.1:0"
            .parse()
            .unwrap_or_else(|_| std::net::SocketAddr::from(([127, 0, 0, 1], 0))),
        deny: Vec::new(),
        git_version: "v1.37.0+ststui-sim".into(),
    };
    let Ok((handle, server)) = serve::serve_sim(sim, 1.0, std::sync::Arc::new(|_| {}), config)
    else {
        panic!("cannot serve")
    };
    let kc = std::env::temp_dir().join(format!("ststui-bench-kc-{}", std::process::id()));
    let _ = serve::write_kubeconfig(&kc, server.addr);
    (handle, server, kc)
}

struct Console {
    backend: ClusterBackend,
    rx: Receiver<BackendEvent>,
    state: AppState,
    term: Terminal<TestBackend>,
    theme: Theme,
}

fn console(kc: &std::path::Path) -> Console {
    let (tx, rx) = channel();
    let target = Target {
        kubeconfig: Some(kc.to_path_buf()),
        name: Some("web".into()),
        ..Target::default()
    };
    let Ok(backend) = ClusterBackend::start(
        target,
        std::sync::Arc::new(move |ev| {
            let _ = tx.send(ev);
        }),
    ) else {
        panic!("cannot start the backend")
    };
    let mut state = AppState::new(Capabilities::cluster(), Default::default());
    state.can_pick = true;
    state.selected_set = Some(ObjRef::new("default", "web"));
    app::update(&mut state, Msg::Resize(200, 50));
    let Ok(term) = Terminal::new(TestBackend::new(200, 50));
    Console { backend, rx, state, term, theme: Theme::colored() }
}

impl Console {
    /// Applies what arrived (waiting for the first), ends the batch and draws; `true` when
    /// `done` held after it.
    fn step(&mut self, done: &dyn Fn(&BackendEvent) -> bool) -> bool {
        let mut hit = false;
        let Ok(first) = self.rx.recv_timeout(Duration::from_secs(10)) else { return false };
        let mut next = Some(first);
        while let Some(ev) = next {
            hit |= done(&ev);
            app::update(&mut self.state, Msg::Backend(ev));
            next = self.rx.try_recv().ok();
        }
        app::update(&mut self.state, Msg::BatchEnd);
        let (state, theme) = (&self.state, &self.theme);
        let _ = self.term.draw(|f| {
            ui::draw(f, state, theme);
        });
        hit
    }

    /// A key as the console's loop takes it: the reducer, the batch's end, one frame.
    fn key(&mut self, code: KeyCode) {
        let _ = app::update(&mut self.state, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
        app::update(&mut self.state, Msg::BatchEnd);
        let (state, theme) = (&self.state, &self.theme);
        let _ = self.term.draw(|f| {
            ui::draw(f, state, theme);
        });
    }
}

fn bench(c: &mut Criterion) {
    for n in [1_000, 10_000] {
        bench_size(c, n);
    }
}

/// The three figures at `n` pods: start to the first complete grid, a change on the server to
/// the frame that shows it, and a key (the selection moving) to the frame that shows it.
fn bench_size(c: &mut Criterion, n: usize) {
    let (handle, _server, kc) = served(n as i32);
    let mut g = c.benchmark_group(format!("cluster, {n} pods"));
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    let set = ObjRef::new("default", "web");
    g.bench_function("start to first full frame", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                let mut c = console(&kc);
                while !(c.state.synced && c.state.mirror.pods_of(&set).count() == n) {
                    c.step(&|_| false);
                }
                total += start.elapsed();
                drop(c.backend);
            }
            total
        })
    });
    let mut c = console(&kc);
    while !(c.state.synced && c.state.mirror.pods_of(&set).count() == n) {
        c.step(&|_| false);
    }
    let mut ready = true;
    let name = format!("web-{}", n / 2);
    g.sample_size(20);
    g.bench_function("server change to frame", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                ready = !ready;
                let pod = ObjRef::new("default", name.as_str());
                let start = Instant::now();
                handle.caller().call(Box::new(move |sim| {
                    let _ = sim.apply_op(Fault::SetPodReady { pod, ready }.into());
                }));
                let is_it = |ev: &BackendEvent| {
                    matches!(ev, BackendEvent::Applied(Object::Pod(p)) if p.metadata.name.as_deref() == Some(name.as_str()))
                };
                while !c.step(&is_it) {}
                total += start.elapsed();
            }
            total
        })
    });
    let mut down = true;
    g.bench_function("key to frame", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                down = !down;
                let code = if down { KeyCode::Down } else { KeyCode::Up };
                let start = Instant::now();
                c.key(code);
                total += start.elapsed();
            }
            total
        })
    });
    g.finish();
    drop(c.backend);
    let _ = std::fs::remove_file(&kc);
}

criterion_group!(benches, bench);
criterion_main!(benches);
