//! Fixture builder for the ui tests: an `AppState` from hand-made k8s-openapi objects (a set,
//! its ControllerRevisions and pods), a hand-made advisor `Plan`, and helpers to render a
//! state into a `TestBackend` and read the screen back.
#![allow(dead_code, reason = "each test binary uses part of the shared support")]

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    ControllerRevision, RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetSpec,
    StatefulSetStatus, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{
    Container, ContainerStatus, Pod, PodCondition, PodSpec, PodStatus, PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ObjectMeta, OwnerReference, Time,
};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ststui::app::state::{Advisor, AppState, HitMap, Origin, TimelineEntry};
use ststui::backend::{Capabilities, EventKind, Mode, ObjRef, Object};
use ststui::core::{Options, Plan};
use ststui::ui::{self, Theme};

pub const NS: &str = "default";
pub const SET: &str = "web";
/// Revision names: `web-<hash>`.
pub const REV1: &str = "web-7d9c5b8f4";
pub const REV2: &str = "web-5c4f8d6b9";
pub const REV3: &str = "web-6b8fd7c45";

/// The fixed backend start time; `now` is `Fixture::now_secs` (95 by default) later.
pub fn t0() -> Timestamp {
    Timestamp::from_second(1_780_000_000).unwrap_or(Timestamp::UNIX_EPOCH)
}

fn secs(n: i64) -> Timestamp {
    t0().checked_add(SignedDuration::from_secs(n)).unwrap_or(t0())
}

/// What a pod is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum P {
    Pending,
    Running,
    Ready,
    Terminating,
    Failed,
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// A StatefulSet builder with the API defaults a real set would show.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub replicas: i32,
    pub partition: i32,
    pub on_delete: bool,
    pub policy: &'static str,
    pub current: &'static str,
    pub update: &'static str,
    /// (revision number, name, image)
    pub revisions: Vec<(i64, &'static str, &'static str)>,
    /// (ordinal, revision name, state)
    pub pods: Vec<(i32, &'static str, P)>,
    pub plan: Plan,
    pub mode: Mode,
    pub speed: f64,
    pub selected: i32,
    pub timeline: Vec<(u64, EventKind, Origin)>,
    /// Backend seconds since t0 at which the state is observed.
    pub now_secs: i64,
}

impl Fixture {
    /// `web`, `replicas` replicas, RollingUpdate partition 0, OrderedReady, two revisions
    /// (#1 nginx:1.25 current, #2 nginx:1.26 update), no pods yet.
    pub fn web(replicas: i32) -> Fixture {
        Fixture {
            replicas,
            partition: 0,
            on_delete: false,
            policy: "OrderedReady",
            current: REV1,
            update: REV2,
            revisions: vec![(1, REV1, "nginx:1.25"), (2, REV2, "nginx:1.26")],
            pods: Vec::new(),
            plan: Plan::default(),
            mode: Mode::Live,
            speed: 1.0,
            selected: 0,
            timeline: Vec::new(),
            now_secs: 95,
        }
    }

    pub fn pod(mut self, ordinal: i32, rev: &'static str, p: P) -> Self {
        self.pods.push((ordinal, rev, p));
        self
    }

    pub fn pods(mut self, range: std::ops::Range<i32>, rev: &'static str, p: P) -> Self {
        self.pods.extend(range.map(|o| (o, rev, p)));
        self
    }

    pub fn event(mut self, t_ms: u64, kind: EventKind) -> Self {
        self.timeline.push((t_ms, kind, Origin::Backend));
        self
    }

    pub fn command(mut self, t_ms: u64, text: &str) -> Self {
        let kind = EventKind::Command { line: 0, text: text.into() };
        self.timeline.push((t_ms, kind, Origin::Operator));
        self
    }

    fn set_object(&self) -> StatefulSet {
        let image = self.revisions.iter().find(|r| r.1 == self.update).map_or("nginx", |r| r.2);
        let count = |f: &dyn Fn(&(i32, &str, P)) -> bool| {
            i32::try_from(self.pods.iter().filter(|p| f(p)).count()).unwrap_or(0)
        };
        let live = |p: &(i32, &str, P)| p.2 != P::Terminating;
        let ready = count(&|p| p.2 == P::Ready);
        StatefulSet {
            metadata: ObjectMeta {
                name: Some(SET.into()),
                namespace: Some(NS.into()),
                uid: Some("uid-web".into()),
                generation: Some(3),
                ..Default::default()
            },
            spec: StatefulSetSpec {
                replicas: Some(self.replicas),
                pod_management_policy: Some(self.policy.into()),
                selector: LabelSelector {
                    match_labels: Some(labels(&[("app", SET)])),
                    ..Default::default()
                },
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some(labels(&[("app", SET)])),
                        ..Default::default()
                    }),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "nginx".into(),
                            image: Some(image.into()),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                },
                update_strategy: Some(if self.on_delete {
                    StatefulSetUpdateStrategy {
                        type_: Some("OnDelete".into()),
                        rolling_update: None,
                    }
                } else {
                    StatefulSetUpdateStrategy {
                        type_: Some("RollingUpdate".into()),
                        rolling_update: Some(RollingUpdateStatefulSetStrategy {
                            partition: Some(self.partition),
                            max_unavailable: None,
                        }),
                    }
                }),
                ..Default::default()
            },
            status: Some(StatefulSetStatus {
                replicas: count(&live),
                ready_replicas: Some(ready),
                available_replicas: Some(ready),
                current_replicas: Some(count(&|p| live(p) && p.1 == self.current)),
                updated_replicas: Some(count(&|p| live(p) && p.1 == self.update)),
                current_revision: Some(self.current.into()),
                update_revision: Some(self.update.into()),
                observed_generation: Some(3),
                ..Default::default()
            }),
        }
    }

    /// The AppState: objects applied to the mirror, the set selected, the plan as the
    /// advisor's, the clock at t0 + 95 s, simulator capabilities.
    pub fn state(&self) -> AppState {
        let caps = Capabilities::simulator();
        let mut st = AppState::new(caps, Options::default());
        st.mirror.apply(Object::Set(std::sync::Arc::new(self.set_object())));
        for (n, name, image) in &self.revisions {
            st.mirror.apply(Object::Revision(std::sync::Arc::new(revision(*n, name, image))));
        }
        for (ordinal, rev, p) in &self.pods {
            st.mirror.apply(Object::Pod(std::sync::Arc::new(pod(
                *ordinal,
                rev,
                *p,
                &self.revisions,
            ))));
        }
        let set_ref = ObjRef::new(NS, SET);
        st.selected_set = Some(set_ref.clone());
        st.selected_ordinal = self.selected;
        st.synced = true;
        st.mode = self.mode;
        st.speed = self.speed;
        st.clock_origin = Some(t0());
        st.now = Some(secs(self.now_secs));
        let mut plan = self.plan.clone();
        plan.current_revision = self.current.into();
        plan.update_revision = self.update.into();
        st.advisor = Some(Advisor {
            set: set_ref,
            plan,
            at: st.now,
            mirror_generation: st.mirror.generation(),
        });
        for (t_ms, kind, origin) in &self.timeline {
            st.timeline.push(TimelineEntry::new(*t_ms, kind.clone(), *origin, &[SET]));
        }
        st
    }
}

/// The controller reference of `web`'s pods and revisions.
fn owner() -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "StatefulSet".into(),
        name: SET.into(),
        uid: "uid-web".into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// A ControllerRevision `name` owned by `web`, with the template patch's image.
pub fn revision(number: i64, name: &str, image: &str) -> ControllerRevision {
    let hash = name.strip_prefix("web-").unwrap_or(name);
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            labels: Some(labels(&[("app", SET), ("controller.kubernetes.io/hash", hash)])),
            owner_references: Some(vec![owner()]),
            ..Default::default()
        },
        data: RawExtension(serde_json::json!({"spec": {"template": {"$patch": "replace",
            "spec": {"containers": [{"name": "nginx", "image": image}]}}}})),
        revision: Some(number),
    }
}

/// Pod `web-<ordinal>` built from revision `rev`, in state `p`.
pub fn pod(ordinal: i32, rev: &str, p: P, revisions: &[(i64, &str, &str)]) -> Pod {
    let name = format!("{SET}-{ordinal}");
    let image = revisions.iter().find(|r| r.1 == rev).map_or("nginx", |r| r.2);
    let phase = match p {
        P::Pending => "Pending",
        P::Failed => "Failed",
        _ => "Running",
    };
    let ready = matches!(p, P::Ready | P::Terminating);
    Pod {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(NS.into()),
            labels: Some(labels(&[
                ("app", SET),
                ("controller-revision-hash", rev),
                ("statefulset.kubernetes.io/pod-name", &name),
            ])),
            creation_timestamp: Some(Time(secs(10 + i64::from(ordinal) % 60))),
            deletion_timestamp: (p == P::Terminating).then(|| Time(secs(93))),
            owner_references: Some(vec![owner()]),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "nginx".into(),
                image: Some(image.into()),
                ..Default::default()
            }],
            node_name: Some("sim-node".into()),
            ..Default::default()
        }),
        status: Some(PodStatus {
            phase: Some(phase.into()),
            conditions: (p != P::Pending).then(|| {
                vec![PodCondition {
                    type_: "Ready".into(),
                    status: if ready { "True" } else { "False" }.into(),
                    last_transition_time: Some(Time(secs(40))),
                    ..Default::default()
                }]
            }),
            container_statuses: Some(vec![ContainerStatus {
                name: "nginx".into(),
                image: image.into(),
                ready,
                restart_count: if p == P::Running { 3 } else { 0 },
                ..Default::default()
            }]),
            ..Default::default()
        }),
    }
}

/// Renders `state` on a `w`×`h` TestBackend with `theme`; returns the terminal and hit map.
pub fn render_with(
    state: &AppState,
    w: u16,
    h: u16,
    theme: &Theme,
) -> (Terminal<TestBackend>, HitMap) {
    let mut term = match Terminal::new(TestBackend::new(w, h)) {
        Ok(t) => t,
        Err(e) => panic!("test backend: {e}"),
    };
    let mut hits = HitMap::default();
    if let Err(e) = term.draw(|f| hits = ui::draw(f, state, theme)) {
        panic!("draw: {e}");
    }
    (term, hits)
}

/// Renders with the colour theme.
pub fn render(state: &AppState, w: u16, h: u16) -> Terminal<TestBackend> {
    render_with(state, w, h, &Theme::colored()).0
}

/// The screen as text, one line per row, trailing spaces kept.
pub fn screen_text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in 0..area.height {
        for x in 0..area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// Row `y` of the buffer as text.
pub fn row(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
}

/// The first (x, y) whose row contains `needle` starting there.
pub fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
    for y in 0..buf.area.height {
        let line = row(buf, y);
        if let Some(byte) = line.find(needle) {
            let x = line[..byte].chars().count();
            return Some((u16::try_from(x).ok()?, y));
        }
    }
    None
}

// ---- scenarios ------------------------------------------------------------------------------

use ststui::core::{Blocker, DeleteReason, Effect, Hold, PodWait};

fn ctl(action: &str, pod: &str, reason: Option<&str>) -> EventKind {
    EventKind::Controller {
        set: SET.into(),
        action: ststui::core::ControllerAction::parse(action).expect("a controller action"),
        pod: Some(pod.into()),
        pvc: None,
        revision: None,
        reason: reason.map(|r| DeleteReason::parse(r).expect("a delete reason")),
    }
}

fn kubelet(pod: &str, event: &str) -> EventKind {
    EventKind::Kubelet { pod: pod.into(), event: event.into() }
}

/// Rolling: web-4 and web-3 updated, the controller deletes web-2 next.
pub fn rolling() -> Fixture {
    let mut f = Fixture::web(5)
        .pods(0..3, REV1, P::Ready)
        .pods(3..5, REV2, P::Ready)
        .command(60_000, "image web nginx:1.26")
        .event(60_000, ctl("create-revision", "web-5c4f8d6b9", None))
        .event(61_000, ctl("delete-pod", "web-4", Some("update")))
        .event(62_000, kubelet("web-4", "gone"))
        .event(62_000, ctl("create-pod", "web-4", None))
        .event(63_500, kubelet("web-4", "running"))
        .event(64_500, kubelet("web-4", "ready"))
        .event(65_000, ctl("delete-pod", "web-3", Some("update")))
        .event(66_000, kubelet("web-3", "gone"))
        .event(66_000, ctl("create-pod", "web-3", None))
        .event(67_000, kubelet("web-3", "running"))
        .event(68_000, kubelet("web-3", "ready"));
    f.selected = 2;
    f.plan.effects = vec![Effect::DeletePod { name: "web-2".into(), reason: DeleteReason::Update }];
    f
}

/// Paused with partition 2: web-2..web-4 updated, web-0 and web-1 held.
pub fn paused() -> Fixture {
    let mut f = Fixture::web(5).pods(0..2, REV1, P::Ready).pods(2..5, REV2, P::Ready);
    f.partition = 2;
    f.mode = Mode::Paused;
    f.selected = 1;
    f.plan.held_by =
        Some(Hold::Partition { partition: 2, first_held: 0, last_held: 1, outdated: 2 });
    f = f.command(70_000, "pause").command(71_000, "partition web 2");
    f
}

/// A broken canary: partition 4, web-4 on revision #3 (nginx:broken) never becomes Ready.
pub fn blocked() -> Fixture {
    let mut f = Fixture::web(5).pods(0..4, REV1, P::Ready).pod(4, REV3, P::Running);
    f.revisions = vec![(1, REV1, "nginx:1.25"), (3, REV3, "nginx:broken")];
    f.update = REV3;
    f.partition = 4;
    f.selected = 4;
    f.plan.waiting_on =
        Some(Blocker::Ordered { pod: "web-4".into(), ordinal: 4, wait: PodWait::NotReady });
    f = f
        .command(50_000, "partition web 4")
        .command(51_000, "image web nginx:broken")
        .event(52_000, ctl("delete-pod", "web-4", Some("update")))
        .event(53_000, ctl("create-pod", "web-4", None))
        .event(54_000, kubelet("web-4", "running"))
        .event(
            54_000,
            EventKind::Blocked {
                set: SET.into(),
                reason: "web-4 is not Ready".into(),
                pod: Some("web-4".into()),
            },
        );
    f
}

/// After `undo` from the broken canary: #1's template is renumbered #4 and is the update
/// revision again; web-4 is stuck on the superseded broken revision (kubernetes#67250).
pub fn forced_rollback() -> Fixture {
    let mut f = blocked();
    f.revisions = vec![(3, REV3, "nginx:broken"), (4, REV1, "nginx:1.25")];
    f.update = REV1;
    f.partition = 0;
    f
}

/// OnDelete: web-3 and web-4 were deleted by hand and came back updated; web-0..2 wait.
pub fn on_delete() -> Fixture {
    let mut f =
        Fixture::web(5).pods(0..3, REV1, P::Ready).pod(3, REV2, P::Ready).pod(4, REV2, P::Pending);
    f.on_delete = true;
    f.selected = 3;
    f.plan.held_by = Some(Hold::OnDelete { outdated: 3 });
    f.plan.waiting_on =
        Some(Blocker::Ordered { pod: "web-4".into(), ordinal: 4, wait: PodWait::Pending });
    f = f.command(80_000, "strategy web OnDelete").command(85_000, "delete-pod web-4");
    f
}

/// `n` ordinals, partition at 60 %, scaled down by 1 % (condemned tail), a few pods in every
/// state, the selection inside the updated part.
pub fn big(n: i32) -> Fixture {
    let replicas = n - n / 100;
    let mut f = Fixture::web(replicas);
    f.partition = n * 6 / 10;
    let p = f.partition;
    f = f.pods(0..p, REV1, P::Ready).pods(p..n, REV2, P::Ready);
    for (i, pod) in f.pods.iter_mut().enumerate() {
        let i = i32::try_from(i).unwrap_or(0);
        if i % 97 == 13 {
            pod.2 = P::Running;
        } else if i % 211 == 17 {
            pod.2 = P::Pending;
        } else if i == p + 3 {
            pod.2 = P::Failed;
        }
    }
    f.pods.retain(|(o, _, _)| *o != p + 7 && *o != p + 8);
    if let Some(last) = f.pods.last_mut() {
        last.2 = P::Terminating;
    }
    f.selected = p + 40;
    f.plan.held_by =
        Some(Hold::Partition { partition: p, first_held: 0, last_held: p - 1, outdated: p });
    f.plan.waiting_on = Some(Blocker::Ordered {
        pod: format!("web-{}", p + 3),
        ordinal: p + 3,
        wait: PodWait::Terminal,
    });
    f
}

/// The README screenshot: 8 replicas mid-rollout behind partition 2; web-5..7 updated, web-4
/// updated but not Ready yet (the OrderedReady wait), web-2 and web-3 next, web-0 and web-1 held.
pub fn demo() -> Fixture {
    let mut f = Fixture::web(8)
        .pods(0..4, REV1, P::Ready)
        .pod(4, REV2, P::Running)
        .pods(5..8, REV2, P::Ready)
        .command(40_000, "partition web 2")
        .command(41_000, "image web nginx:1.26")
        .event(41_000, ctl("create-revision", REV2, None))
        .event(42_000, ctl("delete-pod", "web-7", Some("update")))
        .event(43_000, kubelet("web-7", "gone"))
        .event(43_000, ctl("create-pod", "web-7", None))
        .event(44_000, kubelet("web-7", "running"))
        .event(45_000, kubelet("web-7", "ready"))
        .event(45_000, ctl("delete-pod", "web-6", Some("update")))
        .event(49_000, kubelet("web-6", "ready"))
        .event(49_000, ctl("delete-pod", "web-5", Some("update")))
        .event(53_000, kubelet("web-5", "ready"))
        .event(53_000, ctl("delete-pod", "web-4", Some("update")))
        .event(54_000, kubelet("web-4", "gone"))
        .event(54_000, ctl("create-pod", "web-4", None))
        .event(55_500, kubelet("web-4", "running"))
        .event(
            55_500,
            EventKind::Blocked {
                set: SET.into(),
                reason: "web-4 is not Ready".into(),
                pod: Some("web-4".into()),
            },
        );
    f.partition = 2;
    f.selected = 4;
    f.now_secs = 56;
    f.plan.waiting_on =
        Some(Blocker::Ordered { pod: "web-4".into(), ordinal: 4, wait: PodWait::NotReady });
    f
}
