//! StatefulSet validation gives the messages the API server gives (upstream
//! `pkg/apis/apps/validation/validation.go`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetOrdinals, StatefulSetSpec,
    StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use ststui::sim::validate::{validate_create, validate_update};

fn labels(v: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("app".to_string(), v.to_string())])
}

/// A valid StatefulSet as it looks after API defaulting.
fn valid() -> StatefulSet {
    StatefulSet {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: StatefulSetSpec {
            replicas: Some(3),
            selector: LabelSelector { match_labels: Some(labels("web")), match_expressions: None },
            service_name: Some("web".into()),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels("web")), ..Default::default() }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: Some("nginx:1.25".into()),
                        ..Default::default()
                    }],
                    restart_policy: Some("Always".into()),
                    ..Default::default()
                }),
            },
            pod_management_policy: Some("OrderedReady".into()),
            update_strategy: Some(StatefulSetUpdateStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(RollingUpdateStatefulSetStrategy {
                    partition: Some(0),
                    max_unavailable: Some(IntOrString::Int(1)),
                }),
            }),
            revision_history_limit: Some(10),
            ..Default::default()
        },
        status: None,
    }
}

fn create_error(f: impl FnOnce(&mut StatefulSet)) -> String {
    let mut s = valid();
    f(&mut s);
    match validate_create(&s) {
        Ok(()) => panic!("accepted: {s:?}"),
        Err(e) => e.to_string(),
    }
}

fn rolling(s: &mut StatefulSet) -> &mut RollingUpdateStatefulSetStrategy {
    let strategy = s.spec.update_strategy.get_or_insert_with(Default::default);
    strategy.rolling_update.get_or_insert_with(Default::default)
}

#[test]
fn a_valid_set_passes() {
    assert_eq!(validate_create(&valid()), Ok(()));
    assert_eq!(validate_update(&valid(), &valid()), Ok(()));
}

#[test]
fn negative_replicas() {
    assert_eq!(
        create_error(|s| s.spec.replicas = Some(-1)),
        "StatefulSet.apps \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater \
         than or equal to 0"
    );
}

#[test]
fn selector_required_and_must_match_the_template() {
    assert_eq!(
        create_error(|s| s.spec.selector = LabelSelector::default()),
        "StatefulSet.apps \"web\" is invalid: [spec.selector: Required value, \
         spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not \
         match template `labels`]"
    );
    assert_eq!(
        create_error(|s| s.spec.selector.match_labels = Some(labels("db"))),
        "StatefulSet.apps \"web\" is invalid: spec.template.metadata.labels: Invalid value: \
         {\"app\":\"web\"}: `selector` does not match template `labels`"
    );
    assert_eq!(
        create_error(|s| s.spec.selector.match_labels = Some(BTreeMap::new())),
        "StatefulSet.apps \"web\" is invalid: spec.selector: Invalid value: {\"matchLabels\":{}}: \
         empty selector is invalid for statefulset"
    );
    // Expressions count: `app in (web, api)` matches the template.
    let mut s = valid();
    s.spec.selector = LabelSelector {
        match_labels: None,
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: "app".into(),
            operator: "In".into(),
            values: Some(vec!["api".into(), "web".into()]),
        }]),
    };
    assert_eq!(validate_create(&s), Ok(()));
    let e = create_error(|s| {
        s.spec.selector.match_expressions = Some(vec![LabelSelectorRequirement {
            key: "app".into(),
            operator: "Like".into(),
            values: None,
        }]);
    });
    assert!(
        e.contains(
            "spec.selector.matchExpressions[0].operator: Unsupported value: \"Like\": \
                    supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\""
        ),
        "{e}"
    );
}

#[test]
fn partition_and_max_unavailable() {
    assert_eq!(
        create_error(|s| rolling(s).partition = Some(-1)),
        "StatefulSet.apps \"web\" is invalid: spec.updateStrategy.rollingUpdate.partition: \
         Invalid value: -1: must be greater than or equal to 0"
    );
    assert_eq!(
        create_error(|s| rolling(s).max_unavailable = Some(IntOrString::Int(0))),
        "StatefulSet.apps \"web\" is invalid: spec.updateStrategy.rollingUpdate.maxUnavailable: \
         Invalid value: 0: cannot be 0"
    );
    assert_eq!(
        create_error(|s| rolling(s).max_unavailable = Some(IntOrString::String("0%".into()))),
        "StatefulSet.apps \"web\" is invalid: spec.updateStrategy.rollingUpdate.maxUnavailable: \
         Invalid value: \"0%\": cannot be 0"
    );
    assert_eq!(
        create_error(|s| rolling(s).max_unavailable = Some(IntOrString::String("150%".into()))),
        "StatefulSet.apps \"web\" is invalid: spec.updateStrategy.rollingUpdate.maxUnavailable: \
         Invalid value: \"150%\": must not be greater than 100%"
    );
    let e = create_error(|s| rolling(s).max_unavailable = Some(IntOrString::String("x".into())));
    assert!(
        e.contains("a valid percent string must be a numeric string followed by an ending '%'"),
        "{e}"
    );
    let e = create_error(|s| rolling(s).max_unavailable = Some(IntOrString::Int(-2)));
    assert!(
        e.contains("maxUnavailable: Invalid value: -2: must be greater than or equal to 0"),
        "{e}"
    );
    let mut s = valid();
    rolling(&mut s).max_unavailable = Some(IntOrString::String("100%".into()));
    assert_eq!(validate_create(&s), Ok(()));
}

#[test]
fn enums_and_on_delete() {
    assert_eq!(
        create_error(|s| s.spec.pod_management_policy = Some("Serial".into())),
        "StatefulSet.apps \"web\" is invalid: spec.podManagementPolicy: Invalid value: \
         \"Serial\": must be 'OrderedReady' or 'Parallel'"
    );
    assert_eq!(
        create_error(|s| {
            s.spec.update_strategy = Some(StatefulSetUpdateStrategy {
                type_: Some("Recreate".into()),
                rolling_update: None,
            })
        }),
        "StatefulSet.apps \"web\" is invalid: spec.updateStrategy: Invalid value: \
         {\"type\":\"Recreate\"}: must be 'RollingUpdate' or 'OnDelete'"
    );
    assert_eq!(
        create_error(|s| {
            s.spec.update_strategy.get_or_insert_with(Default::default).type_ =
                Some("OnDelete".into())
        }),
        "StatefulSet.apps \"web\" is invalid: spec.updateStrategy.rollingUpdate: Invalid value: \
         {\"maxUnavailable\":1,\"partition\":0}: only allowed for updateStrategy 'RollingUpdate'"
    );
    let mut s = valid();
    s.spec.update_strategy =
        Some(StatefulSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None });
    assert_eq!(validate_create(&s), Ok(()));
}

#[test]
fn name_ordinals_and_template_rules() {
    assert_eq!(
        create_error(|s| s.metadata.name = Some("Web".into())),
        "StatefulSet.apps \"Web\" is invalid: metadata.name: Invalid value: \"Web\": a lowercase \
         RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start \
         and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for \
         validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    );
    // A DNS subdomain with dots is not a label.
    assert!(create_error(|s| s.metadata.name = Some("web.v1".into())).contains("metadata.name"));
    assert!(
        create_error(|s| s.metadata.name = Some("a".repeat(64)))
            .contains("must be no more than 63 characters")
    );
    assert_eq!(
        create_error(|s| s.spec.ordinals = Some(StatefulSetOrdinals { start: Some(-1) })),
        "StatefulSet.apps \"web\" is invalid: spec.ordinals.start: Invalid value: -1: must be \
         greater than or equal to 0"
    );
    assert_eq!(
        create_error(|s| s.spec.min_ready_seconds = Some(-5)),
        "StatefulSet.apps \"web\" is invalid: spec.minReadySeconds: Invalid value: -5: must be \
         greater than or equal to 0"
    );
    assert_eq!(
        create_error(|s| {
            if let Some(p) = s.spec.template.spec.as_mut() {
                p.restart_policy = Some("Never".into());
            }
        }),
        "StatefulSet.apps \"web\" is invalid: spec.template.spec.restartPolicy: Unsupported \
         value: \"Never\": supported values: \"Always\""
    );
    let e = create_error(|s| {
        s.spec.persistent_volume_claim_retention_policy =
            Some(k8s_openapi::api::apps::v1::StatefulSetPersistentVolumeClaimRetentionPolicy {
                when_deleted: Some("Keep".into()),
                when_scaled: Some("Retain".into()),
            })
    });
    assert!(e.contains("spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: \"Keep\": supported values: \"Retain\", \"Delete\""), "{e}");
}

#[test]
fn several_problems_are_listed_in_brackets() {
    let e = create_error(|s| {
        s.spec.replicas = Some(-1);
        rolling(s).partition = Some(-1);
    });
    assert_eq!(
        e,
        "StatefulSet.apps \"web\" is invalid: [spec.updateStrategy.rollingUpdate.partition: \
         Invalid value: -1: must be greater than or equal to 0, spec.replicas: Invalid value: -1: \
         must be greater than or equal to 0]"
    );
}

#[test]
fn updates_may_change_only_the_mutable_fields() {
    let old = valid();
    let mut new = valid();
    new.spec.replicas = Some(7);
    new.spec.min_ready_seconds = Some(5);
    new.spec.revision_history_limit = Some(2);
    new.spec.ordinals = Some(StatefulSetOrdinals { start: Some(3) });
    rolling(&mut new).partition = Some(2);
    if let Some(p) = new.spec.template.spec.as_mut() {
        p.containers[0].image = Some("nginx:1.27".into());
    }
    assert_eq!(validate_update(&old, &new), Ok(()));

    let forbidden = "StatefulSet.apps \"web\" is invalid: spec: Forbidden: updates to statefulset \
                     spec for fields other than 'replicas', 'ordinals', 'template', \
                     'updateStrategy', 'revisionHistoryLimit', \
                     'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";
    let mut new = valid();
    new.spec.service_name = Some("other".into());
    assert_eq!(validate_update(&old, &new).map_err(|e| e.to_string()), Err(forbidden.into()));
    let mut new = valid();
    new.spec.pod_management_policy = Some("Parallel".into());
    assert_eq!(validate_update(&old, &new).map_err(|e| e.to_string()), Err(forbidden.into()));

    // The new spec is validated too.
    let mut new = valid();
    new.spec.replicas = Some(-3);
    let e = validate_update(&old, &new).map_err(|e| e.to_string());
    assert_eq!(
        e,
        Err("StatefulSet.apps \"web\" is invalid: spec.replicas: Invalid value: -3: must be \
             greater than or equal to 0"
            .into())
    );
}

#[test]
fn recreate_is_valid_only_with_its_gate_and_stays_valid_once_stored() {
    use ststui::sim::validate::{SetOpts, validate_create_with, validate_update_with};
    let recreate = |s: &mut StatefulSet| {
        s.spec.update_strategy = Some(k8s_openapi::api::apps::v1::StatefulSetUpdateStrategy {
            type_: Some("Recreate".into()),
            rolling_update: None,
        });
    };
    let off = create_error(recreate);
    assert!(
        off.contains("spec.updateStrategy: Invalid value")
            && off.contains("must be 'RollingUpdate' or 'OnDelete'"),
        "{off}"
    );
    let on = SetOpts { allow_recreate: true };
    let mut s = valid();
    recreate(&mut s);
    assert_eq!(validate_create_with(&s, on), Ok(()));
    // A stored Recreate set stays valid with the gate off (kube-apiserver's update strategy).
    assert_eq!(validate_update_with(&s, &s, SetOpts::default()), Ok(()));
    // With the gate on the list names it; rollingUpdate is refused under it.
    let mut bad = valid();
    if let Some(u) = bad.spec.update_strategy.as_mut() {
        u.type_ = Some("Canary".into());
    }
    let e = validate_create_with(&bad, on).map_err(|e| e.to_string()).err().unwrap_or_default();
    assert!(e.contains("must be 'RollingUpdate', 'OnDelete', or 'Recreate'"), "{e}");
    let mut with_block = valid();
    if let Some(u) = with_block.spec.update_strategy.as_mut() {
        u.type_ = Some("Recreate".into());
    }
    let e = validate_create_with(&with_block, on).map_err(|e| e.to_string()).err();
    let e = e.unwrap_or_default();
    assert!(e.contains("only allowed for updateStrategy 'RollingUpdate'"), "{e}");
}
