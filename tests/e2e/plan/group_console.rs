//! A rollout group's plan run from the console (`P` in the group's view), through the cluster
//! backend against the served simulator, every set's partition watched from beside it: the
//! dialog prefilled and its question naming the order; three zones roll one at a time (the
//! trace shows no two in motion) on fresh reads of every member; leaving the matrix keeps the
//! members watched while the plan runs, and only then; quitting mid-group gives both leases
//! back; rollout-operator's group is refused at `P` with nothing written.

use super::group::{ZONES, part_of, zones};
use super::*;
use crate::plan_conformance::Console;
use crossterm::event::{KeyCode, KeyModifiers};
use ststui::app::state::Modal;
use ststui::plan::group::part::{LEASE, State};

fn key(c: &mut Console, ch: char) {
    c.key(KeyCode::Char(ch), KeyModifiers::NONE);
}

/// The console opened on zone-a, its group shown (found by label once the sets are listed).
fn grouped(s: &Served) -> Console {
    let mut c = Console::on_served(s, ZONES[0]);
    // A group by label reads the namespace's sets, listed once the group op asks for them.
    key(&mut c, 'Z');
    let deadline = Instant::now() + Duration::from_secs(20);
    while c.state.group.as_ref().is_none_or(|g| g.sets.len() < 3) {
        assert!(Instant::now() < deadline, "the group: {:?}", c.state.group);
        c.pump();
    }
    c
}

/// `P`, the steps typed over the prefill, Enter: the question asked.
fn plan(c: &mut Console, text: &str) {
    key(c, 'P');
    let Modal::Prompt(p) = &c.state.modal else { panic!("no prompt: {:?}", c.state.status) };
    assert!(
        p.kind.label().contains("plan for group ingester (3 sets, ingester-zone-a first)"),
        "{}",
        p.kind.label()
    );
    assert_eq!(p.input, "1,100% zone-bake=1m", "a first suggestion when no part is recorded");
    c.key(KeyCode::Char('u'), KeyModifiers::CONTROL);
    c.typed(text);
    c.key(KeyCode::Enter, KeyModifiers::NONE);
}

fn pump_until(c: &mut Console, what: &str, done: impl Fn(&Console) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done(c) {
        assert!(Instant::now() < deadline, "{what}: not within 60 s: {:?}", c.state.status);
        c.pump();
    }
}

/// The group planned with `steps` and confirmed, then pumped until zone-a's canary bakes, its
/// plan's lease shown (as the operator sees it).
fn baking(c: &mut Console, s: &Served, steps: &str) {
    plan(c, steps);
    key(c, 'y');
    pump_until(c, "zone-a's canary baking", |c| {
        c.state.mirror.set(&zone(0)).and_then(record::lease).is_some()
            && part_of(s, ZONES[0]).is_some_and(|p| p.state == State::Rolling)
    });
}

fn zone(i: usize) -> ObjRef {
    ObjRef::new("default", ZONES[i])
}

#[test]
fn p_in_the_group_view_rolls_the_zones_one_at_a_time_and_its_sets_stay_watched() {
    let (s, trace) = zones("console", false);
    let mut c = grouped(&s);
    plan(&mut c, "1,100%");
    let Modal::Confirm(q) = &c.state.modal else { panic!("no question: {:?}", c.state.modal) };
    assert!(q.title.contains("Run the group plan of ingester (3 sets)"), "{}", q.title);
    assert!(q.title.contains("each set 1,100%"), "{}", q.title);
    let order: Vec<&String> = q.details.iter().filter(|d| d.contains(". ingester-zone-")).collect();
    assert_eq!(order.len(), 3, "{:?}", q.details);
    assert!(order[0].contains("1. ingester-zone-a: partition 4 of 4"), "{order:?}");
    assert!(order[2].contains("3. ingester-zone-c"), "{order:?}");
    assert_eq!(q.log, "rollout group=ingester steps=1,100% bake=0s zone-bake=0s stuck-after=10m");
    key(&mut c, 'y');
    assert!(
        c.state.plan_run.as_ref().and_then(|r| r.run.group_name()) == Some("ingester"),
        "{:?}",
        c.state.status
    );
    // Zone-a rolling: back to one set; the group's other sets stay watched for the plan.
    pump_until(&mut c, "zone-a rolling", |_| {
        part_of(&s, ZONES[0]).is_some_and(|p| p.state == State::Rolling)
    });
    c.key(KeyCode::Esc, KeyModifiers::NONE);
    assert!(c.state.group.is_none(), "the matrix left");
    for _ in 0..20 {
        c.pump();
    }
    assert_eq!(c.state.mirror.pods_of(&zone(2)).count(), 4, "zone-c's pods still watched");
    pump_until(&mut c, "the group plan's end", |c| c.state.plan_run.is_none());
    let said = c.state.status.as_ref().map(|s| s.text.clone()).unwrap_or_default();
    assert!(said.contains("group plan ingester done: every set rolled"), "{said}");
    let want: Vec<(String, i32)> =
        ZONES.iter().flat_map(|z| [(z.to_string(), 3), (z.to_string(), 0)]).collect();
    assert_eq!(*trace.lock().unwrap(), want, "every set's partition, in order");
    for (i, z) in ZONES.iter().enumerate() {
        let p = part_of(&s, z).unwrap_or_else(|| panic!("{z} carries no part"));
        assert_eq!((p.group.as_str(), p.place, p.state), ("ingester", i, State::Done));
    }
    // The group's lease given back (its release is sent at the end, not awaited).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let lease = s.call(|sim| {
            sim.set(&ObjRef::new("default", ZONES[0]))
                .and_then(|s| s.metadata.annotations.as_ref()?.get(LEASE).cloned())
        });
        if lease.is_none() {
            break;
        }
        assert!(Instant::now() < deadline, "the group's lease kept: {lease:?}");
        c.pump();
    }
    // The plan over, only the set shown is watched again.
    pump_until(&mut c, "zone-a alone", |c| {
        c.state.mirror.pods_of(&zone(2)).count() == 0
            && c.state.mirror.pods_of(&zone(0)).count() == 4
    });
}

#[test]
fn quitting_mid_group_stops_it_and_gives_both_leases_back() {
    let (s, _) = zones("console-quit", false);
    let mut c = grouped(&s);
    // A bake long enough to quit in.
    baking(&mut c, &s, "1,100% bake=10m");
    key(&mut c, 'q');
    let Modal::Confirm(q) = &c.state.modal else { panic!("no question: {:?}", c.state.modal) };
    assert!(
        q.title.contains("Quit while this console runs the group plan of ingester (3 sets)?"),
        "{}",
        q.title
    );
    key(&mut c, 'y');
    assert!(c.state.quit);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let key = zone(0);
        let (plan_lease, group_lease) = s.call(move |sim| {
            let set = sim.set(&key).cloned().unwrap();
            let group = set.metadata.annotations.as_ref().and_then(|a| a.get(LEASE).cloned());
            (record::lease(&set), group)
        });
        if plan_lease.is_none() && group_lease.is_none() {
            break;
        }
        assert!(Instant::now() < deadline, "leases kept: {plan_lease:?} {group_lease:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Where the plan left it: zone-a's canary open, b and c untouched.
    assert_eq!(part_of(&s, ZONES[0]).map(|p| p.state), Some(State::Rolling));
    for z in &ZONES[1..] {
        assert_eq!(part_of(&s, z).map(|p| p.state), Some(State::Waiting), "{z}");
    }
}

#[test]
fn p_on_a_group_rollout_operator_drives_is_refused_with_nothing_written() {
    let (s, _) = zones("console-operator", true);
    let mut c = grouped(&s);
    key(&mut c, 'P');
    assert!(matches!(c.state.modal, Modal::None), "{:?}", c.state.modal);
    let said = c.state.status.as_ref().map(|s| s.text.clone()).unwrap_or_default();
    assert!(said.contains("grafana/rollout-operator drives this group"), "{said}");
    for _ in 0..10 {
        c.pump();
    }
    for z in ZONES {
        assert_eq!(part_of(&s, z), None, "{z}: nothing written");
    }
}

#[test]
fn the_group_plan_outlives_an_api_server_away_longer_than_a_renewal() {
    let (s, trace) = zones("console-down", false);
    let mut c = grouped(&s);
    // A bake that spans the outage: the group's lease is renewed every 10 s and held 30 s.
    baking(&mut c, &s, "1,100% bake=20s");
    // Away across the next renewal, then back.
    s.call(|sim| sim.api_fault(ststui::sim::ApiFault::Down { ms: 12_000 }));
    let deadline = Instant::now() + Duration::from_secs(150);
    while part_of(&s, ZONES[2]).is_none_or(|p| p.state != State::Done) {
        assert!(
            Instant::now() < deadline && c.state.plan_run.is_some(),
            "the group did not end done: {:?}",
            c.state.status
        );
        c.pump();
    }
    let want: Vec<(String, i32)> =
        ZONES.iter().flat_map(|z| [(z.to_string(), 3), (z.to_string(), 0)]).collect();
    assert_eq!(*trace.lock().unwrap(), want, "every set's partition, in order");
}
