//! A fleet through an unreachable cluster: the second cluster's API goes away for longer than
//! the lease's slack as its turn comes. The runner never skips it and never calls the fleet
//! failed by its status: it stops there, naming the cluster (exit 4), with the third untouched,
//! and the same command resumes it once the cluster is back.

use super::*;
use ststui::sim::ApiFault;

#[test]
fn an_unreachable_cluster_stops_the_fleet_at_it_and_a_rerun_resumes_there() {
    let f = fleet("outage", ["nginx:1.26"; 3]);
    let args =
        ["rollout", "web", "--contexts", "eu,us,ap", "--steps", "100%", "--cluster-bake", "3s"];
    let child = once_eu_is_done(&f, &args);
    // us refuses every connection for 30 s: longer than the lease's 20 s of slack.
    let down = Instant::now();
    f.clusters[1].call(|sim| sim.api_fault(ApiFault::Down { ms: 30_000 }));
    let (code, out, err) = runner::said(&child.wait_with_output().unwrap());
    assert_eq!(code, 4, "stopped, the cluster unreachable: {out}{err}");
    let said = format!("{out}{err}");
    assert!(
        said.contains("us/web could not be read for 20s") && said.contains("no cluster is skipped"),
        "the cluster named: {said}"
    );
    assert!(!said.contains("ap/web starts"), "ap never started: {said}");
    let seen = f.seen.lock().unwrap().clone();
    assert!(!seen.iter().any(|s| matches!(s, Seen::Moved("ap", _))), "ap moved: {seen:?}");
    assert_eq!(part_of(&f, 2).map(|p| p.state), Some(State::Waiting), "ap untouched");
    // us back: the same command resumes the fleet at us and ends done.
    std::thread::sleep(Duration::from_secs(31).saturating_sub(down.elapsed()));
    let (code, out, err) = runner::outcome(&mut runner::against(f.dir(), &args));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("resuming the fleet's plan"), "{out}");
    for (i, c) in CLUSTERS.iter().enumerate() {
        assert_eq!(f.set(i).status.unwrap().updated_replicas, Some(3), "{c} rolled");
    }
}
