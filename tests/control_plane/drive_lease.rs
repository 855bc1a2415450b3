//! Leader election for drive mode (`ststui::drive::lease`) against the real API server: two
//! candidates on one namespace, exactly one leader and the Lease naming it; the leader killed
//! (no release), its gate closes at the renew deadline, before the standby takes over within a
//! lease and a retry of the kill; a leader that quits gives the lease up and a newcomer takes it
//! at once. Needs the control plane and fails (never skips) without it:
//!
//!   tests/control-plane/run -- cargo test --release --test control_plane -- --ignored drive_lease::
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use ststui::drive::lease::{Elector, Gate, LEASE_NAME, Role, Timings};

use crate::support::cp_support::Ns;

struct Candidate {
    gate: Gate,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

fn candidate(client: &kube::Client, ns: &str, me: &str) -> Candidate {
    let gate = Gate::new(Timings::default());
    let elector = Elector::new(client.clone(), ns, me.to_string(), gate.clone());
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(elector.run(|_| {}, stopped));
    Candidate { gate, stop: Some(stop), task }
}

async fn until(what: &str, limit: Duration, f: impl Fn() -> bool) -> Duration {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    start.elapsed()
}

async fn holder(client: &kube::Client, ns: &str) -> Option<String> {
    let api: Api<Lease> = Api::namespaced(client.clone(), ns);
    api.get(LEASE_NAME).await.ok()?.spec?.holder_identity
}

#[test]
#[ignore = "needs the upstream control plane: tests/control-plane/run -- cargo test --release --test control_plane -- --ignored drive_lease::"]
fn one_leader_a_fenced_kill_a_takeover_and_a_release() {
    let how = "`tests/control-plane/run -- cargo test --release --test control_plane -- \
               --ignored drive_lease::`";
    let ns = Ns::create("lease", "election", how);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let client = kube::Client::try_default().await.expect("a client from KUBECONFIG");
        let a = candidate(&client, &ns.name, "a");
        let b = candidate(&client, &ns.name, "b");
        let one = || usize::from(a.gate.may_write()) + usize::from(b.gate.may_write()) == 1;
        until("exactly one leader", Duration::from_secs(10), one).await;
        // Both keep their roles over several renewals: exactly one writes throughout.
        for _ in 0..30 {
            assert!(one(), "a: {:?}, b: {:?}", a.gate.role(), b.gate.role());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let (leader, standby, name) = if a.gate.may_write() { (a, b, "a") } else { (b, a, "b") };
        assert_eq!(holder(&client, &ns.name).await.as_deref(), Some(name));
        match standby.gate.role() {
            Role::Standby { holder, takes_over_in, .. } => {
                assert_eq!(holder, name);
                assert!(takes_over_in <= Duration::from_secs(15), "{takes_over_in:?}");
            }
            other => panic!("the other is not a standby: {other:?}"),
        }
        // The leader killed: no release, no more renewals.
        leader.task.abort();
        let killed = Instant::now();
        let old = leader.gate.clone();
        let fenced =
            until("the old leader's gate closed", Duration::from_secs(12), || !old.may_write())
                .await;
        assert!(!standby.gate.may_write(), "closed at {fenced:?}, before any takeover");
        until("the standby took over", Duration::from_secs(20), || standby.gate.may_write()).await;
        let took = killed.elapsed();
        assert!(took <= Duration::from_secs(15 + 2 + 1), "takeover took {took:?}");
        assert!(!old.may_write(), "the killed leader never writes again");
        println!("takeover after a kill: {took:?} (old leader fenced after {fenced:?})");
        // The new leader quits: it gives the lease up, and a newcomer takes it at once.
        let mut standby = standby;
        let _ = standby.stop.take().unwrap().send(());
        let _ = standby.task.await;
        assert_eq!(holder(&client, &ns.name).await, None, "released");
        let c = candidate(&client, &ns.name, "c");
        until("a newcomer took the released lease", Duration::from_secs(3), || c.gate.may_write())
            .await;
        assert_eq!(holder(&client, &ns.name).await.as_deref(), Some("c"));
        c.task.abort();
    });
}
