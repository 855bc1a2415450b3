//! Fleets rehearsed on the simulator (`rollout NAME clusters=eu,us,ap …`, each cluster a
//! namespace of the simulation): one cluster at a time, the cluster bake before each next one
//! and the zone bake between a group's sets within one; a broken image in the second cluster
//! halts the fleet there with the third untouched; the line's mistakes refused.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::played::{Run, play};
use ststui::backend::EventKind;

fn group_lines(r: &Run) -> Vec<(u64, String)> {
    r.timeline()
        .filter_map(|(t, k)| match k {
            EventKind::Group { text, .. } => Some((t, text.clone())),
            _ => None,
        })
        .collect()
}

/// When the first group line containing `needle` came.
fn at(r: &Run, needle: &str) -> u64 {
    let lines = group_lines(r);
    lines
        .iter()
        .find(|(_, l)| l.contains(needle))
        .map(|(t, _)| *t)
        .unwrap_or_else(|| panic!("no group line with {needle:?}: {lines:#?}"))
}

/// `sets` (NAME or NAME labels=…) of 2 pods in each of eu, us and ap, each held behind its
/// partition with a new image waiting (`broken` in the clusters it names).
fn clusters(sets: &[&str], image: impl Fn(&str) -> &'static str) -> String {
    let mut s = String::from("kubelet start=1s ready=1s stop=1s broken=nginx:broken\n");
    for c in ["eu", "us", "ap"] {
        for set in sets {
            s.push_str(&format!("create {c}/{set} replicas=2\n"));
        }
    }
    s.push_str("settle\n");
    for c in ["eu", "us", "ap"] {
        for set in sets {
            let name = set.split(' ').next().unwrap();
            s.push_str(&format!("partition {c}/{name} 2\nimage {c}/{name} {}\n", image(c)));
        }
    }
    s
}

#[test]
fn a_fleet_rolls_cluster_by_cluster_after_each_cluster_bake() {
    let mut s = clusters(&["web"], |_| "nginx:1.26");
    s.push_str(
        "rollout web clusters=eu,us,ap steps=100% cluster-bake=1m\n\
         settle\n\
         expect eu/web updated=2 group=done\n\
         expect us/web updated=2 group=done\n\
         expect ap/web updated=2 group=done\n",
    );
    let r = play(&s);
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    assert_eq!(at(&r, "us/web starts (2/3)") - at(&r, "eu/web done (1/3)"), 60_000);
    assert_eq!(at(&r, "ap/web starts (3/3)") - at(&r, "us/web done (2/3)"), 60_000);
    assert!(group_lines(&r).iter().any(|(_, l)| l.contains("after the cluster bake")));
    let part = r.sim.set(&ststui::backend::ObjRef::new("us", "web")).unwrap();
    let p = ststui::plan::group::part::read(part).any().cloned().unwrap();
    let names: Vec<&str> = p.clusters.iter().flatten().map(|c| c.name.as_str()).collect();
    assert_eq!((p.place, names), (1, vec!["eu", "us", "ap"]));
}

#[test]
fn a_fleet_of_groups_bakes_between_zones_and_between_clusters() {
    let mut s = clusters(
        &["zone-a labels=rollout-group=ing", "zone-b labels=rollout-group=ing"],
        |_| "nginx:1.26",
    );
    s.push_str(
        "rollout group=ing clusters=eu,us steps=100% zone-bake=10s cluster-bake=1m\n\
         settle\n\
         expect eu/zone-b updated=2 group=done\n\
         expect us/zone-b updated=2 group=done\n\
         expect ap/zone-a updated=0 group=none\n",
    );
    let r = play(&s);
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    assert_eq!(at(&r, "eu/zone-b starts (2/4)") - at(&r, "eu/zone-a done (1/4)"), 10_000);
    assert_eq!(at(&r, "us/zone-a starts (3/4)") - at(&r, "eu/zone-b done (2/4)"), 60_000);
    assert_eq!(at(&r, "us/zone-b starts (4/4)") - at(&r, "us/zone-a done (3/4)"), 10_000);
}

#[test]
fn a_broken_image_in_the_second_cluster_halts_the_fleet_with_the_third_untouched() {
    let mut s = clusters(&["web"], |c| if c == "us" { "nginx:broken" } else { "nginx:1.26" });
    s.push_str(
        "rollout web clusters=eu,us,ap steps=1,100% stuck-after=1m\n\
         settle max=10m\n\
         expect eu/web updated=2 group=done\n\
         expect us/web group=halted\n\
         expect ap/web updated=0 partition=2 group=waiting\n",
    );
    let r = play(&s);
    assert!(r.outcome.passed(), "{:?}", r.outcome.failures);
    let lines = group_lines(&r);
    assert!(lines.iter().any(|(_, l)| l.contains("halted at us/web")), "{lines:#?}");
}

#[test]
fn a_fleets_line_names_its_clusters_once_each_as_namespaces() {
    let parse_err = |line: &str| match ststui::sim::scenario::parse(
        std::path::Path::new("dir/t.scenario"),
        line,
    ) {
        Ok(s) => panic!("expected an error for {line:?}, got {s:?}"),
        Err(e) => e.to_string(),
    };
    for (line, want) in [
        ("rollout web clusters=eu,eu steps=100%", "names a cluster twice"),
        ("rollout web clusters=EU steps=100%", "is not a list of clusters"),
        ("rollout web steps=100% cluster-bake=1m", "cluster-bake= is a fleet's"),
        ("rollout web clusters=eu,us steps=100% image=nginx:1", "not a fleet's"),
    ] {
        let e = parse_err(line);
        assert!(e.contains(want), "{line}: {e}");
    }
    // A cluster without the set: refused when the line plays.
    let r = play("create eu/web replicas=1\nsettle\nrollout web clusters=eu,us steps=100%\n");
    let errors: Vec<String> = r
        .timeline()
        .filter_map(|(_, k)| match k {
            EventKind::Error { message, .. } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert!(errors.iter().any(|e| e.contains("fleet web: no set us/web")), "{errors:?}");
}
