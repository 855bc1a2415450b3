//! Revisions (spec 2.1–2.7): the Go-encoded template patch, the FNV-1 hash and the upstream
//! fixture, equality, ApplyRevision, `getStatefulSetRevisions` (reuse, rollback, semantic
//! comparison, creation with collisions), history truncation, and API defaulting.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::apps::v1::{
    ControllerRevision, StatefulSet, StatefulSetSpec, StatefulSetStatus, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvVar, EnvVarSource, GRPCAction, PodSpec, PodTemplateSpec, Probe,
    ResourceFieldSelector, ResourceRequirements, SecurityContext,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use ststui::core::defaults::set_defaults_stateful_set;
use ststui::core::gojson::{self, GoEncoding};
use ststui::core::history::{
    apply_revision, equal_revision, hash_revision, live_revisions, new_revision, revision_bytes,
    truncate_history,
};
use ststui::core::revisions::{resolve, resolve_with};
use ststui::core::{Effect, Options, Version, fnv};

/// `compatibility_revision_1.33.0.json` / `TestStatefulSetCompatibility` (kubernetes/kubernetes
/// pkg/controller/statefulset): the data of revision `test-c77f6d978`.
const RAW_1_33: &str = r#"{"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"test":"value"},"creationTimestamp":null,"labels":{"app":"foo"}},"spec":{"containers":[{"image":"test","imagePullPolicy":"Always","name":"test","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}}}"#;
/// `compatibility_revision_1.34.0.json`: the same set encoded by v1.34 (`test-776999688b`).
const RAW_1_34: &str = r#"{"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"test":"value"},"labels":{"app":"foo"}},"spec":{"containers":[{"image":"test","imagePullPolicy":"Always","name":"test","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}}}"#;

fn v(s: &str) -> Options {
    Options::for_version(s.parse::<Version>().unwrap())
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The set of the upstream compatibility test, before API defaulting.
fn compat_set() -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta {
            name: Some("test".into()),
            namespace: Some("test".into()),
            uid: Some("ssuid".into()),
            generation: Some(1),
            labels: Some(labels(&[("sslabel", "value")])),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            selector: LabelSelector {
                match_labels: Some(labels(&[("app", "foo")])),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    annotations: Some(labels(&[("test", "value")])),
                    labels: Some(labels(&[("app", "foo")])),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "test".into(),
                        image: Some("test".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        status: None,
    }
}

fn defaulted(mut set: StatefulSet) -> StatefulSet {
    set_defaults_stateful_set(&mut set, &Options::default().semantics);
    set
}

fn with_image(set: &StatefulSet, image: &str) -> StatefulSet {
    let mut set = set.clone();
    if let Some(spec) = set.spec.template.spec.as_mut() {
        spec.containers[0].image = Some(image.into());
    }
    set
}

fn with_status(mut set: StatefulSet, current: &str, collisions: i32) -> StatefulSet {
    set.status = Some(StatefulSetStatus {
        current_revision: Some(current.into()),
        collision_count: Some(collisions),
        ..Default::default()
    });
    set
}

/// A revision as the store holds it: what the controller created, numbered `number`.
fn stored(set: &StatefulSet, number: i64) -> ControllerRevision {
    new_revision(set, number, 0, GoEncoding::default()).unwrap().revision
}

fn fixture_revision(raw: &str, name: &str, number: i64) -> ControllerRevision {
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("test".into()),
            labels: Some(labels(&[("app", "foo")])),
            ..Default::default()
        },
        data: RawExtension(serde_json::from_str(raw).unwrap()),
        revision: Some(number),
    }
}

fn name(r: &ControllerRevision) -> &str {
    r.metadata.name.as_deref().unwrap_or_default()
}

fn raw_string(r: &ControllerRevision) -> String {
    String::from_utf8(revision_bytes(r)).unwrap()
}

#[test]
fn fixture_raw_bytes_hash_to_test_c77f6d978() {
    let rev = fixture_revision(RAW_1_33, "test-c77f6d978", 1);
    // The parsed data re-encodes to exactly the stored bytes.
    assert_eq!(raw_string(&rev), RAW_1_33);
    // FNV-1 of raw alone, and of raw + "0" (the controller always passes the collision count).
    assert_eq!(fnv::fnv1_32(RAW_1_33.as_bytes()), 2_604_829_122);
    assert_eq!(fnv::fnv1_32(format!("{RAW_1_33}0").as_bytes()), 733_928_534);
    assert_eq!(hash_revision(&rev, Some(0)), "c77f6d978");
    assert_eq!(ststui::core::history::revision_name("test", "c77f6d978"), "test-c77f6d978");
}

#[test]
fn fixture_is_rebuilt_from_a_defaulted_set_with_v1_33_encoding() {
    let set = defaulted(compat_set());
    let built = new_revision(&set, 1, 0, GoEncoding::for_version(v("1.33").version)).unwrap();
    assert_eq!(String::from_utf8(built.raw.clone()).unwrap(), RAW_1_33);
    assert_eq!(name(&built.revision), "test-c77f6d978");
    let l = built.revision.metadata.labels.clone().unwrap_or_default();
    assert_eq!(l.get("controller.kubernetes.io/hash").map(String::as_str), Some("c77f6d978"));
    assert_eq!(l.get("app").map(String::as_str), Some("foo"));
}

#[test]
fn v1_34_encoding_drops_creation_timestamp_and_matches_its_fixture() {
    let set = defaulted(compat_set());
    for version in ["1.34", "1.37"] {
        let built = new_revision(&set, 2, 0, GoEncoding::for_version(v(version).version)).unwrap();
        assert_eq!(String::from_utf8(built.raw).unwrap(), RAW_1_34, "{version}");
        assert_eq!(name(&built.revision), "test-776999688b", "{version}");
    }
}

#[test]
fn go_encoding_edge_cases() {
    let mut set = defaulted(compat_set());
    let meta = set.spec.template.metadata.get_or_insert_with(Default::default);
    meta.annotations = Some(labels(&[("html", "<a&b>"), ("sep", "x\u{2028}y"), ("q", "\"\n")]));
    let spec = set.spec.template.spec.get_or_insert_with(Default::default);
    spec.host_network = Some(false); // omitempty bool: dropped
    let c = &mut spec.containers[0];
    c.ports = Some(vec![]); // omitempty slice: dropped
    c.security_context = Some(SecurityContext {
        privileged: Some(false),                  // pointer: kept
        run_as_user: Some(9_007_199_254_740_993), // float64 round trip
        ..Default::default()
    });
    c.env = Some(vec![EnvVar {
        name: "CPU".into(),
        value_from: Some(EnvVarSource {
            resource_field_ref: Some(ResourceFieldSelector {
                resource: "limits.cpu".into(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }]);
    c.resources = Some(ResourceRequirements {
        limits: Some(BTreeMap::from([("cpu".to_string(), Quantity("1000m".into()))])),
        ..Default::default()
    });
    c.readiness_probe = Some(Probe {
        grpc: Some(GRPCAction { port: 9000, ..Default::default() }),
        ..Default::default()
    });
    let raw =
        String::from_utf8(new_revision(&set, 1, 0, GoEncoding::default()).unwrap().raw).unwrap();
    assert!(raw.contains(r#""html":"\u003ca\u0026b\u003e""#), "{raw}");
    assert!(raw.contains(r#""sep":"x\u2028y""#), "{raw}");
    assert!(raw.contains(r#""q":"\"\n""#), "{raw}");
    assert!(!raw.contains("hostNetwork"), "{raw}");
    assert!(!raw.contains("\"ports\""), "{raw}");
    assert!(raw.contains(r#""privileged":false"#), "{raw}");
    assert!(raw.contains(r#""runAsUser":9007199254740992"#), "{raw}");
    assert!(raw.contains(r#""divisor":"0""#), "{raw}");
    assert!(raw.contains(r#""limits":{"cpu":"1"}"#), "{raw}");
    assert!(raw.contains(r#""grpc":{"port":9000,"service":null}"#), "{raw}");
    assert!(raw.starts_with(r#"{"spec":{"template":{"$patch":"replace","metadata":{"#), "{raw}");
}

#[test]
fn every_container_gets_resources_even_without_defaults() {
    let mut set = compat_set();
    if let Some(spec) = set.spec.template.spec.as_mut() {
        spec.init_containers = Some(vec![Container { name: "init".into(), ..Default::default() }]);
    }
    let patch = gojson::template_patch(&set.spec.template, GoEncoding::default()).unwrap();
    let raw = String::from_utf8(gojson::marshal(&patch)).unwrap();
    assert!(raw.contains(r#"{"name":"init","resources":{}}"#), "{raw}");
    assert!(raw.contains(r#"{"image":"test","name":"test","resources":{}}"#), "{raw}");
}

#[test]
fn equal_revisions_compare_stored_bytes() {
    let set = defaulted(compat_set());
    let a = stored(&set, 1);
    let mut same_data = stored(&set, 7);
    same_data.metadata.name = Some("other".into());
    assert!(equal_revision(Some(&a), Some(&same_data)));
    assert!(equal_revision(None, None));
    assert!(!equal_revision(Some(&a), None));
    let b = stored(&with_image(&set, "test:2"), 2);
    assert!(!equal_revision(Some(&a), Some(&b)));
    // Numeric hash labels that differ make revisions unequal even with equal data.
    let mut n1 = a.clone();
    let mut n2 = a.clone();
    n1.metadata.labels = Some(labels(&[("controller.kubernetes.io/hash", "123")]));
    n2.metadata.labels = Some(labels(&[("controller.kubernetes.io/hash", "124")]));
    assert!(!equal_revision(Some(&n1), Some(&n2)));
}

#[test]
fn new_revision_metadata_follows_spec_2_2() {
    let mut set = defaulted(compat_set());
    set.metadata.annotations = Some(labels(&[("team", "db")]));
    let rev = new_revision(&set, 4, 0, GoEncoding::default()).unwrap().revision;
    assert_eq!(rev.revision, Some(4));
    assert_eq!(rev.metadata.namespace.as_deref(), Some("test"));
    assert_eq!(rev.metadata.annotations, Some(labels(&[("team", "db")])));
    let owner = &rev.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!((owner.kind.as_str(), owner.api_version.as_str()), ("StatefulSet", "apps/v1"));
    assert_eq!((owner.name.as_str(), owner.uid.as_str()), ("test", "ssuid"));
    assert_eq!((owner.controller, owner.block_owner_deletion), (Some(true), Some(true)));
    let hash = hash_revision(&rev, Some(0));
    assert_eq!(name(&rev), format!("test-{hash}"));
    // A long set name is cut to 223 bytes before "-<hash>".
    set.metadata.name = Some("s".repeat(240));
    let long = new_revision(&set, 1, 0, GoEncoding::default()).unwrap().revision;
    assert_eq!(name(&long), format!("{}-{hash}", "s".repeat(223)));
}

#[test]
fn apply_revision_replaces_only_the_template() {
    let set = defaulted(compat_set());
    let old = stored(&set, 1);
    let mut live = with_image(&set, "test:2");
    live.spec.replicas = Some(5);
    live.status = Some(StatefulSetStatus { current_replicas: Some(3), ..Default::default() });
    let applied = apply_revision(&live, &old).unwrap();
    // Equal as Go sees it (the decoded template carries Go's `resources: {}`).
    let go = |t: &PodTemplateSpec| {
        gojson::marshal(&gojson::template_patch(t, GoEncoding::default()).unwrap())
    };
    assert_eq!(go(&applied.spec.template), go(&set.spec.template));
    let image =
        |s: &StatefulSet| s.spec.template.spec.as_ref().and_then(|p| p.containers[0].image.clone());
    assert_eq!(image(&applied).as_deref(), Some("test"));
    assert_eq!(image(&live).as_deref(), Some("test:2"));
    assert_eq!(applied.spec.replicas, Some(5));
    assert_eq!(applied.status, live.status);
    assert_eq!(applied.metadata, live.metadata);
    // The 1.33 fixture (with "creationTimestamp":null) decodes to the same template.
    let fixture = fixture_revision(RAW_1_33, "test-c77f6d978", 1);
    let from_fixture = apply_revision(&live, &fixture).unwrap();
    assert_eq!(go(&from_fixture.spec.template), go(&set.spec.template));
    assert_eq!(from_fixture.spec.template.metadata.and_then(|m| m.creation_timestamp), None);
}

#[test]
fn resolve_creates_the_first_revision() {
    let set = defaulted(compat_set());
    let r = resolve(&set, &[], &[]).unwrap();
    assert_eq!(r.collision_count, 0);
    assert_eq!(name(&r.update), "test-776999688b");
    assert_eq!(r.current, r.update);
    assert_eq!(r.update.revision, Some(1));
    assert!(matches!(r.effects.as_slice(), [Effect::CreateRevision(c)] if **c == r.update));
}

#[test]
fn resolve_reuses_the_latest_revision_when_the_template_is_unchanged() {
    let set = defaulted(compat_set());
    let r1 = stored(&with_image(&set, "old"), 1);
    let r2 = stored(&set, 2);
    let set = with_status(set, name(&r1), 0);
    let r = resolve(&set, &[&r1, &r2], &[&r1, &r2]).unwrap();
    assert!(r.effects.is_empty());
    assert_eq!(r.update, r2);
    assert_eq!(r.current, r1);
}

#[test]
fn rollback_renumbers_the_old_revision_and_keeps_its_name() {
    let set = defaulted(compat_set());
    let r1 = stored(&set, 1);
    let r2 = stored(&with_image(&set, "test:2"), 2);
    // The template is reverted to r1's; status still names r2 as current.
    let set = with_status(set, name(&r2), 0);
    let r = resolve(&set, &[&r2, &r1], &[&r1, &r2]).unwrap();
    assert_eq!(name(&r.update), name(&r1));
    assert_eq!(r.update.revision, Some(3));
    assert_eq!(r.current, r2);
    match r.effects.as_slice() {
        [Effect::UpdateRevision(updated)] => {
            assert_eq!(name(updated), name(&r1));
            assert_eq!(updated.revision, Some(3));
            assert_eq!(updated.data, r1.data);
        }
        other => panic!("expected one UpdateRevision, got {other:?}"),
    }
}

#[test]
fn name_collision_increments_the_count_and_renames() {
    let set = defaulted(compat_set());
    // Something else already holds the name the candidate hashes to, with other data.
    let mut squatter = stored(&with_image(&set, "unrelated"), 1);
    squatter.metadata.name = Some("test-776999688b".into());
    squatter.metadata.owner_references = None;
    let r = resolve(&set, &[], &[&squatter]).unwrap();
    assert_eq!(r.collision_count, 1);
    let expected = format!("test-{}", fnv::hash_revision(RAW_1_34.as_bytes(), Some(1)));
    assert_eq!(name(&r.update), expected);
    assert_ne!(name(&r.update), "test-776999688b");
    // Upstream renames on collision but keeps the hash label of the first attempt.
    let l = r.update.metadata.labels.clone().unwrap_or_default();
    assert_eq!(l.get("controller.kubernetes.io/hash").map(String::as_str), Some("776999688b"));
    assert!(matches!(r.effects.as_slice(), [Effect::CreateRevision(c)] if name(c) == expected));
    // The count carries on from status.collisionCount.
    let again = resolve(&with_status(set, "", 1), &[], &[&squatter]).unwrap();
    assert_eq!((again.collision_count, name(&again.update)), (1, expected.as_str()));
}

#[test]
fn name_held_with_the_same_bytes_is_reused_without_a_create() {
    let set = defaulted(compat_set());
    let mut existing = stored(&set, 9);
    existing.metadata.labels = Some(labels(&[("other", "x")])); // not listed for this set
    let r = resolve(&set, &[], &[&existing]).unwrap();
    assert!(r.effects.is_empty());
    assert_eq!(r.update, existing);
    assert_eq!(r.collision_count, 0);
}

#[test]
fn semantic_comparison_reuses_a_v1_33_revision_after_upgrade() {
    let set = with_status(defaulted(compat_set()), "test-c77f6d978", 0);
    let old = fixture_revision(RAW_1_33, "test-c77f6d978", 1);
    let r = resolve_with(&set, &[&old], &[&old], &v("1.37")).unwrap();
    assert!(r.effects.is_empty(), "{:?}", r.effects);
    assert_eq!(name(&r.update), "test-c77f6d978");
    assert_eq!(name(&r.current), "test-c77f6d978");
    // v1.34.0 predates the fix: the spurious rollout of #134773 (a new revision).
    let r = resolve_with(&set, &[&old], &[&old], &v("1.34.0")).unwrap();
    assert!(
        matches!(r.effects.as_slice(), [Effect::CreateRevision(c)] if name(c) == "test-776999688b")
    );
}

#[test]
fn semantic_comparison_fills_defaults_missing_from_the_stored_revision() {
    let set = defaulted(compat_set());
    // A revision written before some defaults existed: no schedulerName, no pull policy.
    let mut raw: serde_json::Value = serde_json::from_str(RAW_1_34).unwrap();
    let spec = &mut raw["spec"]["template"]["spec"];
    spec.as_object_mut().unwrap().remove("schedulerName");
    spec["containers"][0].as_object_mut().unwrap().remove("imagePullPolicy");
    let old = fixture_revision(&raw.to_string(), "test-old", 1);
    let r = resolve_with(&set, &[&old], &[&old], &v("1.37")).unwrap();
    assert!(r.effects.is_empty(), "{:?}", r.effects);
    assert_eq!(name(&r.update), "test-old");
    // Without the gate (v1.33) the byte comparison fails and a new revision is created.
    let r = resolve_with(&set, &[&old], &[&old], &v("1.33")).unwrap();
    assert!(matches!(r.effects.as_slice(), [Effect::CreateRevision(_)]));
}

#[test]
fn semantic_comparison_does_not_hide_a_real_change() {
    let set = defaulted(compat_set());
    let old = stored(&with_image(&set, "test:1"), 1);
    let r = resolve_with(&set, &[&old], &[&old], &v("1.37")).unwrap();
    assert!(matches!(r.effects.as_slice(), [Effect::CreateRevision(c)] if c.revision == Some(2)));
    assert_ne!(name(&r.update), name(&old));
}

fn numbered(set: &StatefulSet, n: i64) -> ControllerRevision {
    stored(&with_image(set, &format!("img:{n}")), n)
}

fn deleted(effects: &[Effect]) -> Vec<String> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::DeleteRevision { name } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn truncation_never_deletes_live_revisions_and_respects_the_limit() {
    let mut set = defaulted(compat_set());
    let revs: Vec<ControllerRevision> = (1..=8).map(|n| numbered(&set, n)).collect();
    let refs: Vec<&ControllerRevision> = revs.iter().collect();
    let names: Vec<&str> = revs.iter().map(name).collect();
    for limit in [0, 1, 2, 5, 10] {
        set.spec.revision_history_limit = Some(limit);
        // current = r7, update = r8, a pod still runs r2.
        let live: HashSet<&str> = HashSet::from([names[6], names[7], names[1]]);
        let gone = deleted(&truncate_history(&set, &refs, &live));
        assert!(gone.iter().all(|g| !live.contains(g.as_str())), "limit {limit}: {gone:?}");
        let remaining = revs.len() - gone.len();
        assert!(remaining <= limit as usize + 3, "limit {limit}: {remaining} left");
        let history = revs.len() - live.len();
        assert_eq!(gone.len(), history.saturating_sub(limit as usize), "limit {limit}");
        // Oldest first.
        let expected: Vec<String> =
            [0, 2, 3, 4, 5].iter().take(gone.len()).map(|&i| names[i].to_string()).collect();
        assert_eq!(gone, expected, "limit {limit}");
    }
}

#[test]
fn truncation_with_only_current_and_update_live_keeps_limit_plus_two() {
    let mut set = defaulted(compat_set());
    set.spec.revision_history_limit = Some(3);
    let revs: Vec<ControllerRevision> = (1..=9).map(|n| numbered(&set, n)).collect();
    let refs: Vec<&ControllerRevision> = revs.iter().collect();
    let live = live_revisions(name(&revs[8]), name(&revs[7]), std::iter::empty());
    let gone = deleted(&truncate_history(&set, &refs, &live));
    assert_eq!(revs.len() - gone.len(), 3 + 2);
}

#[test]
fn negative_history_limit_is_unlimited() {
    let mut set = defaulted(compat_set());
    set.spec.revision_history_limit = Some(-1);
    let revs: Vec<ControllerRevision> = (1..=4).map(|n| numbered(&set, n)).collect();
    let refs: Vec<&ControllerRevision> = revs.iter().collect();
    assert!(truncate_history(&set, &refs, &HashSet::new()).is_empty());
    set.spec.revision_history_limit = Some(0);
    assert_eq!(deleted(&truncate_history(&set, &refs, &HashSet::new())).len(), 4);
}

#[test]
fn stateful_set_defaults_follow_set_defaults_stateful_set() {
    let on = Options::default().semantics;
    let set = defaulted(compat_set());
    let spec = &set.spec;
    assert_eq!(spec.pod_management_policy.as_deref(), Some("OrderedReady"));
    assert_eq!(spec.replicas, Some(1));
    assert_eq!(spec.revision_history_limit, Some(10));
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    assert_eq!(strategy.type_.as_deref(), Some("RollingUpdate"));
    let rolling = strategy.rolling_update.unwrap_or_default();
    assert_eq!(rolling.partition, Some(0));
    assert_eq!(rolling.max_unavailable, Some(IntOrString::Int(1)));
    let retention = spec.persistent_volume_claim_retention_policy.clone().unwrap_or_default();
    assert_eq!(retention.when_deleted.as_deref(), Some("Retain"));
    assert_eq!(retention.when_scaled.as_deref(), Some("Retain"));
    // Gate off (1.36): no maxUnavailable.
    let mut off = compat_set();
    set_defaults_stateful_set(&mut off, &v("1.36").semantics);
    let rolling = off.spec.update_strategy.and_then(|s| s.rolling_update).unwrap_or_default();
    assert_eq!((rolling.partition, rolling.max_unavailable), (Some(0), None));
    // An explicit RollingUpdate without a block keeps a nil rollingUpdate; OnDelete gets none.
    for ty in ["RollingUpdate", "OnDelete"] {
        let mut s = compat_set();
        s.spec.update_strategy =
            Some(StatefulSetUpdateStrategy { type_: Some(ty.into()), rolling_update: None });
        set_defaults_stateful_set(&mut s, &on);
        assert_eq!(s.spec.update_strategy.and_then(|u| u.rolling_update), None, "{ty}");
    }
}

#[test]
fn pod_template_defaults_match_the_api_server() {
    let mut set = compat_set();
    if let Some(spec) = set.spec.template.spec.as_mut() {
        spec.containers.push(Container {
            name: "pinned".into(),
            image: Some("nginx:1.25".into()),
            ports: Some(vec![ContainerPort { container_port: 80, ..Default::default() }]),
            liveness_probe: Some(Probe {
                http_get: Some(k8s_openapi::api::core::v1::HTTPGetAction {
                    port: IntOrString::Int(80),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
    }
    let set = defaulted(set);
    let spec = set.spec.template.spec.clone().unwrap_or_default();
    assert_eq!(spec.restart_policy.as_deref(), Some("Always"));
    assert_eq!(spec.dns_policy.as_deref(), Some("ClusterFirst"));
    assert_eq!(spec.scheduler_name.as_deref(), Some("default-scheduler"));
    assert_eq!(spec.termination_grace_period_seconds, Some(30));
    assert!(spec.security_context.is_some());
    let [latest, pinned] = spec.containers.as_slice() else { panic!("two containers") };
    assert_eq!(latest.image_pull_policy.as_deref(), Some("Always"));
    assert_eq!(pinned.image_pull_policy.as_deref(), Some("IfNotPresent"));
    assert_eq!(pinned.termination_message_path.as_deref(), Some("/dev/termination-log"));
    assert_eq!(pinned.termination_message_policy.as_deref(), Some("File"));
    assert_eq!(pinned.ports.as_ref().unwrap()[0].protocol.as_deref(), Some("TCP"));
    let probe = pinned.liveness_probe.clone().unwrap();
    assert_eq!(
        (probe.timeout_seconds, probe.period_seconds, probe.success_threshold),
        (Some(1), Some(10), Some(1))
    );
    assert_eq!(probe.failure_threshold, Some(3));
    let http = probe.http_get.unwrap();
    assert_eq!((http.path.as_deref(), http.scheme.as_deref()), (Some("/"), Some("HTTP")));
    // Defaulting is idempotent.
    let mut again = set.clone();
    set_defaults_stateful_set(&mut again, &Options::default().semantics);
    assert_eq!(again, set);
}
