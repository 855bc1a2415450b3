//! The election's decisions on reads of a Lease, the write gate's deadline, and the elector's
//! rounds against a Lease store behind a mock API server (a third party clearing, deleting or
//! forging the Lease). The elector against a real API server: `tests/control_plane/`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test asserts by panicking"
)]

use super::*;

/// Most a candidate waits (our own lease).
const MOST: Duration = Duration::from_secs(15);

fn lease(holder: &str, renewed_secs: i64, transitions: i32) -> Lease {
    let at = Timestamp::from_second(1_800_000_000 + renewed_secs).unwrap();
    Lease {
        metadata: ObjectMeta { name: Some(LEASE_NAME.into()), ..Default::default() },
        spec: Some(LeaseSpec {
            holder_identity: (!holder.is_empty()).then(|| holder.to_string()),
            lease_duration_seconds: Some(15),
            renew_time: Some(MicroTime(at)),
            lease_transitions: Some(transitions),
            ..Default::default()
        }),
    }
}

#[test]
fn none_is_created_mine_is_renewed_an_empty_one_is_taken() {
    let now = Instant::now();
    let mut seen = Observed::default();
    assert_eq!(decide("me", None, &mut seen, now, MOST), Step::Create);
    assert_eq!(decide("me", Some(&lease("me", 0, 0)), &mut seen, now, MOST), Step::Renew);
    assert_eq!(decide("me", Some(&lease("", 0, 0)), &mut seen, now, MOST), Step::Take);
}

#[test]
fn a_standby_times_the_holder_on_its_own_clock_and_never_takes_a_live_lease() {
    let t0 = Instant::now();
    let mut seen = Observed::default();
    let held = lease("other", 0, 3);
    let wait = |seen_ago: u64| Step::Wait {
        holder: "other".into(),
        seen_ago: Duration::from_secs(seen_ago),
        takes_over_in: Duration::from_secs(15 - seen_ago),
        claims: None,
    };
    assert_eq!(decide("me", Some(&held), &mut seen, t0, MOST), wait(0));
    assert_eq!(decide("me", Some(&held), &mut seen, t0 + Duration::from_secs(10), MOST), wait(10));
    // Renewed (whatever its renewTime says: its clock may be anyone's): timed again from now.
    let renewed = lease("other", -3_600, 3);
    let t1 = t0 + Duration::from_secs(14);
    assert_eq!(decide("me", Some(&renewed), &mut seen, t1, MOST), wait(0));
    assert_eq!(
        decide("me", Some(&renewed), &mut seen, t1 + Duration::from_secs(14), MOST),
        wait(14)
    );
    // Not renewed for a whole lease, as this candidate saw it: taken.
    assert_eq!(
        decide("me", Some(&renewed), &mut seen, t1 + Duration::from_secs(15), MOST),
        Step::Take
    );
}

#[test]
fn a_first_sight_of_an_old_renewal_still_waits_a_whole_lease() {
    // The holder's renewTime is an hour old by this machine's clock: its clock may be behind;
    // nothing is taken before this candidate has watched it stay still for a lease.
    let t0 = Instant::now();
    let mut seen = Observed::default();
    let old = lease("other", -3_600, 0);
    assert!(matches!(decide("me", Some(&old), &mut seen, t0, MOST), Step::Wait { .. }));
}

#[test]
fn the_gate_closes_at_the_renew_deadline_not_at_expiry() {
    let timings = Timings {
        lease: Duration::from_millis(600),
        renew_deadline: Duration::from_millis(300),
        retry: Duration::from_millis(100),
    };
    let gate = Gate::new(timings);
    assert!(!gate.may_write(), "nothing held yet");
    assert_eq!(gate.role(), Role::Starting);
    {
        let mut s = gate.lock();
        s.renewed = Some(Instant::now());
        s.role = Role::Leader;
    }
    assert!(gate.may_write());
    assert_eq!(gate.role(), Role::Leader);
    std::thread::sleep(Duration::from_millis(350));
    // As a leader stopped (SIGSTOP) past its deadline finds on waking: no write.
    assert!(!gate.may_write());
    assert!(matches!(gate.role(), Role::Fenced { why } if why.contains("renew deadline")));
}

#[test]
fn the_identity_names_host_process_and_context() {
    let id = identity("prod");
    assert!(id.ends_with(&format!("/ststui-{}/prod", std::process::id())), "{id}");
}

#[test]
fn a_standby_says_who_drives_and_when_it_takes_over_once_renewals_are_late() {
    let t = Timings::default();
    let secs = Duration::from_secs;
    assert_eq!(
        standby_words("vm/ststui-7/prod", secs(1), secs(14), None, t),
        "vm/ststui-7/prod drives"
    );
    assert_eq!(
        standby_words("vm/ststui-7/prod", secs(6), secs(9), None, t),
        "vm/ststui-7/prod drives, no renewal seen for 6 s: takes over in 9 s"
    );
    assert!(!standby_words("evil\u{1b}[2J", secs(0), secs(15), None, t).contains('\u{1b}'));
}

#[test]
fn a_vacant_lease_is_taken_at_once_only_by_its_last_holder_a_release_or_a_first_read() {
    let t0 = Instant::now();
    let later = |s: u64| t0 + Duration::from_secs(s);
    // Seen held by another, then cleared by a third party: waited out from the clearing.
    let mut seen = Observed::default();
    assert!(matches!(
        decide("me", Some(&lease("a", 0, 1)), &mut seen, t0, MOST),
        Step::Wait { .. }
    ));
    let cleared = lease("", 0, 1);
    let step = decide("me", Some(&cleared), &mut seen, later(5), MOST);
    assert!(
        matches!(&step, Step::Wait { holder, takes_over_in, .. }
        if holder.is_empty() && *takes_over_in == MOST),
        "{step:?}"
    );
    assert_eq!(decide("me", Some(&cleared), &mut seen, later(20), MOST), Step::Take);
    // Deleted while another held it: the same.
    let mut seen = Observed::default();
    assert!(matches!(
        decide("me", Some(&lease("a", 0, 1)), &mut seen, t0, MOST),
        Step::Wait { .. }
    ));
    assert!(matches!(decide("me", None, &mut seen, later(1), MOST), Step::Wait { .. }));
    assert_eq!(decide("me", None, &mut seen, later(16), MOST), Step::Create);
    // Its last holder takes it again at once, cleared or deleted.
    let mut seen = Observed::default();
    assert_eq!(decide("me", Some(&lease("me", 0, 1)), &mut seen, t0, MOST), Step::Renew);
    assert_eq!(decide("me", Some(&cleared), &mut seen, later(1), MOST), Step::Take);
    assert_eq!(decide("me", None, &mut seen, later(2), MOST), Step::Create);
    // A holder's release (an empty holder, a 1 s lease) is taken at once.
    let mut seen = Observed::default();
    assert!(matches!(
        decide("me", Some(&lease("a", 0, 1)), &mut seen, t0, MOST),
        Step::Wait { .. }
    ));
    let mut released = lease("", 0, 1);
    released.spec.as_mut().unwrap().lease_duration_seconds = Some(1);
    assert_eq!(decide("me", Some(&released), &mut seen, later(1), MOST), Step::Take);
}

#[test]
fn a_forged_lease_length_is_waited_only_as_long_as_our_own_and_said() {
    let t0 = Instant::now();
    let mut seen = Observed::default();
    let mut forged = lease("a", 0, 1);
    forged.spec.as_mut().unwrap().lease_duration_seconds = Some(i32::MAX);
    let step = decide("me", Some(&forged), &mut seen, t0, MOST);
    assert!(
        matches!(&step, Step::Wait { takes_over_in, claims: Some(c), .. }
        if *takes_over_in == MOST && *c == 2_147_483_647),
        "{step:?}"
    );
    assert_eq!(decide("me", Some(&forged), &mut seen, t0 + MOST, MOST), Step::Take);
    let words = standby_words("a", Duration::ZERO, MOST, Some(2_147_483_647), Timings::default());
    assert!(words.contains("claims a 2147483647 s lease; waited at most 15 s"), "{words}");
}

/// A Lease store behind a mock API server: GET, POST and PUT of the drive Lease as kube-apiserver
/// judges them (a PUT whose resourceVersion is not the stored one is a 409), which a test may
/// change between rounds as a third party would.
#[derive(Clone, Default)]
struct Store {
    lease: Arc<Mutex<Option<serde_json::Value>>>,
    version: Arc<Mutex<u64>>,
}

impl Store {
    fn set(&self, lease: Option<serde_json::Value>) {
        let mut v = self.version.lock().unwrap();
        *v += 1;
        *self.lease.lock().unwrap() = lease.map(|mut l| {
            l["metadata"]["resourceVersion"] = serde_json::json!(v.to_string());
            l
        });
    }

    fn holder(&self) -> Option<String> {
        let l = self.lease.lock().unwrap();
        l.as_ref().and_then(|l| l["spec"]["holderIdentity"].as_str().map(String::from))
    }

    /// A third party writes the Lease: `f` changes its spec.
    fn tamper(&self, f: impl FnOnce(&mut serde_json::Value)) {
        let mut l = self.lease.lock().unwrap().clone().unwrap();
        f(&mut l["spec"]);
        self.set(Some(l));
    }

    fn client(&self, rt: &tokio::runtime::Runtime) -> kube::Client {
        use http_body_util::BodyExt as _;
        use hyper::{Method, Request, Response};
        use kube::client::Body;
        let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let store = self.clone();
        rt.spawn(async move {
            let reply = |code: u16, body: serde_json::Value| {
                Response::builder()
                    .status(code)
                    .body(Body::from(serde_json::to_vec(&body).unwrap()))
                    .unwrap()
            };
            let status = |code: u16, reason: &str| {
                serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "reason": reason, "code": code, "message": reason})
            };
            while let Some((req, send)) = handle.next_request().await {
                let (parts, body) = req.into_parts();
                let bytes = body.collect().await.map(|c| c.to_bytes()).unwrap_or_default();
                let sent: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
                let held = store.lease.lock().unwrap().clone();
                let answer = match (parts.method, held) {
                    (Method::GET, Some(l)) => reply(200, l),
                    (Method::GET, None) => reply(404, status(404, "NotFound")),
                    (Method::POST, Some(_)) => reply(409, status(409, "AlreadyExists")),
                    (Method::POST, None) => {
                        store.set(Some(sent));
                        reply(201, store.lease.lock().unwrap().clone().unwrap())
                    }
                    (Method::PUT, None) => reply(404, status(404, "NotFound")),
                    (Method::PUT, Some(l)) => {
                        if sent["metadata"]["resourceVersion"] != l["metadata"]["resourceVersion"] {
                            reply(409, status(409, "Conflict"))
                        } else {
                            store.set(Some(sent));
                            reply(200, store.lease.lock().unwrap().clone().unwrap())
                        }
                    }
                    _ => reply(405, status(405, "MethodNotAllowed")),
                };
                send.send_response(answer);
            }
        });
        let _in = rt.enter();
        kube::Client::new(svc, "default")
    }
}

fn elector(store: &Store, rt: &tokio::runtime::Runtime, me: &str) -> (Elector, Gate) {
    let gate = Gate::new(Timings::default());
    (Elector::new(store.client(rt), "default", me.into(), gate.clone()), gate)
}

fn runtime() -> tokio::runtime::Runtime {
    crate::runtime::build("lease-test", crate::runtime::Workers::Current).unwrap()
}

#[test]
fn a_leader_that_reads_a_lease_cleared_by_someone_else_stops_writing_and_retakes_it_alone() {
    let rt = runtime();
    let store = Store::default();
    let (mut a, gate_a) = elector(&store, &rt, "a");
    let (mut b, gate_b) = elector(&store, &rt, "b");
    assert_eq!(rt.block_on(a.round()), Role::Leader);
    assert!(matches!(rt.block_on(b.round()), Role::Standby { holder, .. } if holder == "a"));
    for round in 0..3 {
        // Someone sets the holder to null: the leader stops writing at its next read, the
        // standby does not take what the leader may still be writing under.
        store.tamper(|spec| spec["holderIdentity"] = serde_json::Value::Null);
        let role = rt.block_on(a.round());
        assert!(matches!(&role, Role::Fenced { why } if why.contains("cleared")), "{role:?}");
        assert!(!gate_a.may_write(), "round {round}: fenced at once");
        let role = rt.block_on(b.round());
        assert!(matches!(&role, Role::Standby { holder, .. } if holder.is_empty()), "{role:?}");
        assert!(!gate_b.may_write());
        // The last holder takes it back; the standby sees it held again.
        assert_eq!(rt.block_on(a.round()), Role::Leader, "round {round}");
        assert!(gate_a.may_write());
        assert_eq!(store.holder().as_deref(), Some("a"));
        assert!(matches!(rt.block_on(b.round()), Role::Standby { holder, .. } if holder == "a"));
        assert!(!gate_b.may_write(), "round {round}: never two writers");
    }
}

#[test]
fn a_leader_that_finds_the_lease_deleted_or_taken_stops_writing() {
    let rt = runtime();
    let store = Store::default();
    let (mut a, gate_a) = elector(&store, &rt, "a");
    let (mut b, gate_b) = elector(&store, &rt, "b");
    assert_eq!(rt.block_on(a.round()), Role::Leader);
    assert!(matches!(rt.block_on(b.round()), Role::Standby { .. }));
    store.set(None);
    let role = rt.block_on(a.round());
    assert!(matches!(&role, Role::Fenced { why } if why.contains("deleted")), "{role:?}");
    assert!(matches!(rt.block_on(b.round()), Role::Standby { holder, .. } if holder.is_empty()));
    assert_eq!(rt.block_on(a.round()), Role::Leader, "recreated by its last holder");
    assert!(gate_a.may_write() && !gate_b.may_write());
    // Someone writes another holder in: the leader stops at its next read, and stands by.
    store.tamper(|spec| spec["holderIdentity"] = serde_json::json!("mallory"));
    let role = rt.block_on(a.round());
    assert!(matches!(&role, Role::Fenced { why } if why.contains("names mallory")), "{role:?}");
    assert!(!gate_a.may_write());
    assert!(matches!(rt.block_on(a.round()), Role::Standby { holder, .. } if holder == "mallory"));
}

#[test]
fn a_given_back_lease_is_taken_at_once_and_a_forged_length_is_capped() {
    let rt = runtime();
    let store = Store::default();
    let (mut a, _) = elector(&store, &rt, "a");
    let (mut b, gate_b) = elector(&store, &rt, "b");
    assert_eq!(rt.block_on(a.round()), Role::Leader);
    assert!(matches!(rt.block_on(b.round()), Role::Standby { .. }));
    rt.block_on(a.release());
    assert_eq!(rt.block_on(b.round()), Role::Leader, "a release is taken at once");
    assert!(gate_b.may_write());
    // A holder claiming a 68-year lease is waited for at most our own lease, and said.
    store.tamper(|spec| {
        spec["holderIdentity"] = serde_json::json!("x");
        spec["leaseDurationSeconds"] = serde_json::json!(i32::MAX);
    });
    let role = rt.block_on(a.round());
    assert!(
        matches!(&role, Role::Standby { claims: Some(c), takes_over_in, .. }
            if *c == 2_147_483_647 && *takes_over_in <= Timings::default().lease),
        "{role:?}"
    );
}
