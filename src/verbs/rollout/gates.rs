//! A plan's gates for `ststui rollout`: a `cmd:` gate is a local process (`sh -c`, its
//! placeholders shell-quoted, the pod and step in its environment), an `http:` or `exec:` gate
//! a request through the API server (`cluster::gates`, a client opened on first use). Each runs
//! beside the runner's loop (the lease is renewed meanwhile) and reports its outcome by the
//! contract. The gates are this invocation's: the engine hands over only what was asked here.

use std::sync::mpsc;
use std::time::Duration;

use super::checks::spawn_check;
use crate::cluster::Target;
use crate::cluster::gates::GateClient;
use crate::plan::engine::GateRun;
use crate::plan::gate::{Gate, Outcome, Verdict, expand};

/// The gates' side of the runner.
pub struct Gates {
    /// Each cluster's target (one but for a fleet), in the runner's cluster order.
    targets: Vec<Target>,
    /// Each cluster's client, opened on the first gate there that needs the API server (or a
    /// `{zone}`).
    clients: Vec<Option<Result<GateClient, String>>>,
    /// The gate under way.
    pub running: Option<mpsc::Receiver<Outcome>>,
}

impl Gates {
    pub fn new(target: Target) -> Gates {
        Gates::each(vec![target])
    }

    /// A fleet's: a gate runs against the cluster of the member it is about.
    pub fn each(targets: Vec<Target>) -> Gates {
        let clients = targets.iter().map(|_| None).collect();
        Gates { targets, clients, running: None }
    }

    /// The kubeconfig context of `cluster`, where named (a fleet's): a `cmd:` gate or a check
    /// is told it (`STSTUI_CONTEXT`), so its `kubectl --context` reaches the member's cluster.
    pub fn context(&self, cluster: usize) -> Option<&str> {
        self.targets.get(cluster)?.context.as_deref()
    }

    fn client(&mut self, cluster: usize) -> Result<&GateClient, String> {
        let cluster = cluster.min(self.targets.len().saturating_sub(1));
        let (Some(target), Some(slot)) = (self.targets.get(cluster), self.clients.get_mut(cluster))
        else {
            return Err("no cluster to run the gate against".into());
        };
        slot.get_or_insert_with(|| GateClient::open(target).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Starts `run` against `cluster` (its place in the runner's clusters); its outcome arrives
    /// through [`Gates::outcome`].
    pub fn start(&mut self, run: GateRun, namespace: &str, cluster: usize) {
        let mut env: Vec<(&str, String)> = run.env.clone();
        let timeout = Duration::from_millis(run.timeout_ms);
        if let Some(pod) = &run.pod {
            let zone = match self.client(cluster) {
                Ok(c) => c.zone(namespace, &pod.name).unwrap_or_default(),
                Err(_) => String::new(),
            };
            env.push(("STSTUI_ZONE", zone));
        }
        if let Some(context) = self.context(cluster).filter(|_| self.targets.len() > 1) {
            env.push(("STSTUI_CONTEXT", context.to_string()));
        }
        let refused = |why: String| {
            let (tx, rx) = mpsc::channel();
            let _ =
                tx.send(Outcome { verdict: Verdict::Fail, how: why, tail: Vec::new(), took_ms: 0 });
            rx
        };
        let rx = match &run.gate {
            Gate::Cmd(cmd) => match expand(cmd, &env, true) {
                Err(why) => refused(why.to_string()),
                Ok(cmd) => cmd_gate(cmd, env, timeout),
            },
            Gate::Http { tls, port, path } => {
                let pod = run.pod.as_ref().map(|p| p.name.clone());
                match (expand(path, &env, false), pod) {
                    (Err(why), _) => refused(why.to_string()),
                    (_, None) => refused(format!(
                        "{} names no pod: http: gates are per pod",
                        run.kind.word()
                    )),
                    (Ok(path), Some(pod)) => match self.client(cluster) {
                        Ok(c) => c.http(namespace, &pod, *tls, *port, &path, timeout),
                        Err(why) => refused(why),
                    },
                }
            }
            Gate::Sim => refused("sim: gates run only in the simulator".into()),
            Gate::Exec { container, argv } => {
                let pod = run.pod.as_ref().map(|p| p.name.clone());
                let argv: Result<Vec<String>, _> =
                    argv.iter().map(|a| expand(a, &env, false)).collect();
                match (argv, pod) {
                    (Err(why), _) => refused(why.to_string()),
                    (_, None) => refused(format!(
                        "{} names no pod: exec: gates are per pod",
                        run.kind.word()
                    )),
                    (Ok(argv), Some(pod)) => match self.client(cluster) {
                        Ok(c) => c.exec(namespace, &pod, container, argv, timeout),
                        Err(why) => refused(why),
                    },
                }
            }
        };
        self.running = Some(rx);
    }

    /// The outcome of the gate under way, once it is in.
    pub fn outcome(&mut self) -> Option<Outcome> {
        let rx = self.running.as_ref()?;
        match rx.try_recv() {
            Ok(o) => {
                self.running = None;
                Some(o)
            }
            Err(mpsc::TryRecvError::Empty) => None,
            Err(mpsc::TryRecvError::Disconnected) => {
                self.running = None;
                Some(Outcome {
                    verdict: Verdict::Fail,
                    how: "the gate's runner stopped".into(),
                    tail: Vec::new(),
                    took_ms: 0,
                })
            }
        }
    }
}

/// `sh -c cmd`: exit 0 goes, 75 is "not yet", anything else fails.
fn cmd_gate(cmd: String, env: Vec<(&str, String)>, timeout: Duration) -> mpsc::Receiver<Outcome> {
    let (tx, rx) = mpsc::channel();
    let started = std::time::Instant::now();
    let done = spawn_check(&cmd, &env, timeout);
    std::thread::spawn(move || {
        let took_ms = || u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let outcome = match done.recv() {
            Ok(c) => Outcome {
                verdict: Verdict::of_exit(c.code),
                how: match (c.code, &c.passed) {
                    (Some(code), _) => format!("exit {code}"),
                    (None, Err(how)) => how.to_string(),
                    (None, Ok(())) => "exit 0".into(),
                },
                tail: c.tail,
                took_ms: took_ms(),
            },
            Err(_) => Outcome {
                verdict: Verdict::Fail,
                how: "the gate's runner stopped".into(),
                tail: Vec::new(),
                took_ms: took_ms(),
            },
        };
        let _ = tx.send(outcome);
    });
    rx
}
