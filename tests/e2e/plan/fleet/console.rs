//! The console on a fleet, as an operator opens it: `ststui --contexts eu,us,ap web` in a
//! pseudo-terminal against three served simulators — one matrix, a column per cluster (its
//! pods down), its title naming the clusters; a fleet rolled beside it by `ststui rollout …
//! --contexts` is seen cluster by cluster, and the view writes nothing (a key that would write
//! says why and what steers a fleet).

use super::*;
use crate::support::pty_support::Console as Pty;

#[test]
fn the_fleet_view_shows_each_cluster_as_a_column_and_follows_a_fleet_rollout() {
    let f = fleet("view", ["nginx:1.26"; 3]);
    let kc = f.dir().join("kubeconfig");
    let log = f.dir().join("console-log");
    let (kc, log) = (kc.to_string_lossy(), log.to_string_lossy());
    let args = ["--kubeconfig", &kc, "--log-file", &log, "--contexts", "eu,us,ap", "web"];
    let mut c = Pty::start(&args);
    c.wait_for("the fleet's matrix", |s| {
        s.contains("Fleet web: 3 sets in 3 clusters")
            && s.contains("eu/web")
            && s.contains("us/web")
            && s.contains("ap/web")
    });
    assert!(c.screen().contains("no fleet plan recorded"), "{}", c.screen());
    // A key that writes says the view is read-only; nothing is written.
    c.press("[");
    c.wait_for("the refusal", |s| s.contains("read-only"));
    assert_eq!(ststui::core::spec::strategy(&f.set(0)).partition, 3, "nothing written");
    // Esc keeps the fleet's matrix (nothing to go back to), saying so.
    c.press("\x1b");
    c.wait_for("the hint", |s| s.contains("a fleet's view: each member is a column"));
    assert!(c.screen().contains("Fleet web: 3 sets in 3 clusters"), "{}", c.screen());
    let (code, out, err) = runner::outcome(&mut runner::against(
        f.dir(),
        &["rollout", "web", "--contexts", "eu,us,ap", "--steps", "100%", "--cluster-bake", "1s"],
    ));
    assert_eq!(code, 0, "{out}{err}");
    c.wait_for("the fleet done, each cluster's column", |s| {
        s.contains(
            "ststui's fleet plan (shown read-only): fleet web (this set 1/3, cluster eu): \
                    eu/web done, us/web done, ap/web done",
        ) || s.contains("every set done")
    });
    c.wait_for("every column done", |s| s.matches("done 3/3").count() == 3);
    c.press("q");
    let status = c.wait_exit();
    assert!(status.success(), "{status:?}");
}
