//! The election's decisions on reads of a Lease, and the write gate's deadline. The elector
//! against a real API server: `tests/control_plane/e2e_drive.rs`.

use super::*;

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
    assert_eq!(decide("me", None, &mut seen, now), Step::Create);
    assert_eq!(decide("me", Some(&lease("me", 0, 0)), &mut seen, now), Step::Renew);
    assert_eq!(decide("me", Some(&lease("", 0, 0)), &mut seen, now), Step::Take);
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
    };
    assert_eq!(decide("me", Some(&held), &mut seen, t0), wait(0));
    assert_eq!(decide("me", Some(&held), &mut seen, t0 + Duration::from_secs(10)), wait(10));
    // Renewed (whatever its renewTime says: its clock may be anyone's): timed again from now.
    let renewed = lease("other", -3_600, 3);
    let t1 = t0 + Duration::from_secs(14);
    assert_eq!(decide("me", Some(&renewed), &mut seen, t1), wait(0));
    assert_eq!(decide("me", Some(&renewed), &mut seen, t1 + Duration::from_secs(14)), wait(14));
    // Not renewed for a whole lease, as this candidate saw it: taken.
    assert_eq!(decide("me", Some(&renewed), &mut seen, t1 + Duration::from_secs(15)), Step::Take);
}

#[test]
fn a_first_sight_of_an_old_renewal_still_waits_a_whole_lease() {
    // The holder's renewTime is an hour old by this machine's clock: its clock may be behind;
    // nothing is taken before this candidate has watched it stay still for a lease.
    let t0 = Instant::now();
    let mut seen = Observed::default();
    let old = lease("other", -3_600, 0);
    assert!(matches!(decide("me", Some(&old), &mut seen, t0), Step::Wait { .. }));
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
    assert_eq!(standby_words("vm/ststui-7/prod", secs(1), secs(14), t), "vm/ststui-7/prod drives");
    assert_eq!(
        standby_words("vm/ststui-7/prod", secs(6), secs(9), t),
        "vm/ststui-7/prod drives, no renewal seen for 6 s: takes over in 9 s"
    );
    assert!(!standby_words("evil\u{1b}[2J", secs(0), secs(15), t).contains('\u{1b}'));
}
