//! A set a GitOps controller manages (Argo CD, Flux): the header says who, and a write to its
//! spec asks first, warning that it may be reverted; a pod's deletion does not.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    reason = "a test asserts by panicking and prints what it saw"
)]

use crate::support::app_fixtures;

use std::sync::Arc;

use app_fixtures::*;
use ststui::app::state::Modal;
use ststui::backend::{Capabilities, ClusterOp, ObjRef, Object, Op};

/// The demo (partition 5) with `web` tracked by Argo CD's app `shop`.
fn managed() -> ststui::app::AppState {
    let mut st = demo(Capabilities::simulator());
    let mut s = set("web", 5, 5, "nginx:1.26", "web-a", "web-b");
    s.metadata.annotations = Some(
        [(
            "argocd.argoproj.io/tracking-id".to_string(),
            "shop:apps/StatefulSet:default/web".into(),
        )]
        .into(),
    );
    run(&mut st, [applied(Object::Set(Arc::new(s)))]);
    st
}

#[test]
fn the_header_says_who_manages_the_set() {
    let st = managed();
    let screen = ststui::app::view::Screen::of(&st);
    let h = screen.header.as_ref().unwrap();
    assert_eq!(h.manager.as_ref().map(ToString::to_string).as_deref(), Some("Argo CD app shop"));
}

#[test]
fn a_write_to_the_spec_asks_first_and_a_pod_deletion_does_not() {
    let mut st = managed();
    let cmds = run(&mut st, [key('[')]);
    assert!(ops(&cmds).is_empty(), "nothing sent before the answer");
    let Modal::Confirm(c) = &st.modal else { panic!("no confirmation: {:?}", st.modal) };
    let w = c.warning.as_deref().unwrap_or_default();
    assert!(w.starts_with("Argo CD app shop manages this set: it may revert the change"), "{w}");
    let cmds = run(&mut st, [key('y')]);
    assert_eq!(
        ops(&cmds),
        [Op::from(ClusterOp::SetPartition { set: ObjRef::new("default", "web"), partition: 4 })]
    );
    let mut st = managed();
    let cmds = run(&mut st, [ctrl('d')]);
    if let Modal::Confirm(c) = &st.modal {
        assert!(c.warning.as_deref().is_none_or(|w| !w.contains("Argo CD")), "{c:?}");
    } else {
        assert!(!ops(&cmds).is_empty());
    }
}
