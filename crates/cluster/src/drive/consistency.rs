//! Read your own writes (KEP-5647, upstream's `StaleControllerConsistencyStatefulSet`, beta and
//! on from 1.36): for each set, the resourceVersion of the controller's latest pod, claim and
//! status write, and how far each of those three watches has read; a set with a write a watch
//! has not shown yet is not synced (`control::Read::unseen`: the controller holds the sync and
//! tries again with back-off, as upstream's `EnsureReady` makes the worker requeue). Upstream
//! records creations and updates, not deletions, and neither do we.
//!
//! How far a watch has read: the highest resourceVersion its events brought. The events of one
//! watch come in resourceVersion order, and a listing that holds an object at version V is a
//! view at V or later, so holds every write up to V. kube-runtime's watcher keeps its list's
//! own resourceVersion and its bookmarks to itself, which upstream's reflector counts too; so a
//! re-list is also counted by time: the watchers list consistently (`ListSemantic::MostRecent`),
//! each `Init` is stamped when the watcher emitted it, before it sends the list request, and a
//! write answered before that stamp is in the listing (or was deleted before it), caught up.
//!
//! Why by hand: the bookkeeping is a few maps; no crate keeps it for kube-rs watchers.
//!
//! Owns: the written and read versions. Must not: read or write objects.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::control::Unseen;

/// The three resources a sync's writes are awaited on, as upstream's stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resource {
    Pods,
    Claims,
    Sets,
}

impl Resource {
    pub const ALL: [Resource; 3] = [Resource::Pods, Resource::Claims, Resource::Sets];

    pub fn plural(self) -> &'static str {
        match self {
            Resource::Pods => "pods",
            Resource::Claims => "persistentvolumeclaims",
            Resource::Sets => "statefulsets",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The latest write of one resource for one set.
#[derive(Debug, Clone)]
struct Wrote {
    rv: u64,
    name: String,
    at: Instant,
}

/// One watch's progress.
#[derive(Debug, Default, Clone)]
struct Read {
    /// The highest resourceVersion shown.
    rv: Option<u64>,
    /// A re-list under way: when its `Init` was emitted, and the highest version it brought.
    relist: Option<(Instant, Option<u64>)>,
}

/// Per set, per resource, the latest write not shown yet; per resource, how far its watch read.
#[derive(Debug, Default)]
pub struct Consistency {
    writes: BTreeMap<String, BTreeMap<Resource, Wrote>>,
    read: [Read; 3],
}

/// A resourceVersion as a number (etcd's are); another store's cannot be compared, and a write
/// at one is not waited for (upstream skips what it cannot compare).
fn number(rv: Option<&str>) -> Option<u64> {
    rv.and_then(|v| v.parse().ok())
}

impl Consistency {
    /// The controller wrote `name` of `resource` for `set`, answered at `rv`.
    pub fn wrote(&mut self, set: &str, resource: Resource, name: &str, rv: Option<&str>) {
        let Some(rv) = number(rv) else { return };
        if self.read[resource.index()].rv.is_some_and(|r| r >= rv) {
            return;
        }
        let w = Wrote { rv, name: name.to_string(), at: Instant::now() };
        let held = self.writes.entry(set.to_string()).or_default();
        if held.get(&resource).is_none_or(|old| old.rv < rv) {
            held.insert(resource, w);
        }
    }

    /// A watch event of `resource` brought an object at `rv` (an Apply or a Delete).
    pub fn shown(&mut self, resource: Resource, rv: Option<&str>) {
        if let Some(rv) = number(rv) {
            self.read_to(resource, rv);
        }
    }

    /// The watch of `resource` has read everything up to `rv`.
    fn read_to(&mut self, resource: Resource, rv: u64) {
        let read = &mut self.read[resource.index()];
        if read.rv.is_some_and(|r| r >= rv) {
            return;
        }
        read.rv = Some(rv);
        self.caught_up(resource, |w| w.rv <= rv);
    }

    /// A re-list of `resource` began (its `Init`, emitted at `at`).
    pub fn relisting(&mut self, resource: Resource, at: Instant) {
        self.read[resource.index()].relist = Some((at, None));
    }

    /// An object of the re-list under way, at `rv`.
    pub fn listed(&mut self, resource: Resource, rv: Option<&str>) {
        if let Some((_, max)) = &mut self.read[resource.index()].relist
            && let Some(rv) = number(rv)
        {
            *max = Some(max.map_or(rv, |m| m.max(rv)));
        }
    }

    /// The re-list is whole (`InitDone`): what it holds is read, and every write answered
    /// before it began is in it.
    pub fn relisted(&mut self, resource: Resource) {
        let Some((began, max)) = self.read[resource.index()].relist.take() else { return };
        self.caught_up(resource, |w| w.at < began);
        if let Some(max) = max {
            self.read_to(resource, max);
        }
    }

    fn caught_up(&mut self, resource: Resource, seen: impl Fn(&Wrote) -> bool) {
        self.writes.retain(|_, held| {
            if held.get(&resource).is_some_and(&seen) {
                held.remove(&resource);
            }
            !held.is_empty()
        });
    }

    /// The set is gone: nothing of it is awaited.
    pub fn forget(&mut self, set: &str) {
        self.writes.remove(set);
    }

    /// The first of the set's writes a watch has not shown yet.
    pub fn unseen(&self, set: &str) -> Option<Unseen> {
        let (resource, w) = self.writes.get(set)?.iter().next()?;
        Some(Unseen {
            resource: resource.plural(),
            name: w.name.clone(),
            wrote: w.rv,
            read: self.read[resource.index()].rv,
        })
    }

    /// Sets with writes not shown yet.
    #[cfg(test)]
    fn awaited(&self) -> usize {
        self.writes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_awaited_until_its_watch_reaches_its_version() {
        let mut c = Consistency::default();
        c.shown(Resource::Pods, Some("90"));
        c.wrote("web", Resource::Pods, "web-3", Some("100"));
        c.wrote("web", Resource::Sets, "web", Some("101"));
        let u = c.unseen("web").unwrap_or_else(|| panic!("awaited"));
        assert_eq!(
            (u.resource, u.name.as_str(), u.wrote, u.read),
            ("pods", "web-3", 100, Some(90))
        );
        assert!(c.unseen("db").is_none(), "another set is not held");
        // An older event of the same watch, then ours.
        c.shown(Resource::Pods, Some("99"));
        assert_eq!(c.unseen("web").map(|u| u.resource), Some("pods"));
        c.shown(Resource::Pods, Some("100"));
        // The pods watch caught up; the set's status write is still awaited.
        let u = c.unseen("web").unwrap_or_else(|| panic!("the status write"));
        assert_eq!((u.resource, u.wrote, u.read), ("statefulsets", 101, None));
        // The claims watch going further says nothing of the sets watch.
        c.shown(Resource::Claims, Some("500"));
        assert!(c.unseen("web").is_some());
        c.shown(Resource::Sets, Some("140"));
        assert!(c.unseen("web").is_none());
        assert_eq!(c.awaited(), 0, "nothing kept once seen");
    }

    #[test]
    fn the_latest_write_counts_and_one_already_read_is_not_awaited() {
        let mut c = Consistency::default();
        c.wrote("web", Resource::Pods, "web-0", Some("10"));
        c.wrote("web", Resource::Pods, "web-1", Some("12"));
        c.wrote("web", Resource::Pods, "web-2", Some("11"));
        assert_eq!(c.unseen("web").map(|u| (u.name, u.wrote)), Some(("web-1".into(), 12)));
        c.shown(Resource::Pods, Some("11"));
        assert!(c.unseen("web").is_some(), "11 < 12");
        c.shown(Resource::Pods, Some("13"));
        c.wrote("web", Resource::Pods, "web-0", Some("13"));
        assert!(c.unseen("web").is_none(), "a write at a version already read");
        c.wrote("web", Resource::Pods, "web-0", Some("not-a-number"));
        assert!(c.unseen("web").is_none(), "a version that cannot be compared is not waited on");
    }

    #[test]
    fn a_relist_that_began_after_a_write_holds_it_even_without_a_newer_object() {
        let mut c = Consistency::default();
        c.wrote("web", Resource::Pods, "web-3", Some("100"));
        std::thread::sleep(std::time::Duration::from_millis(2));
        // The watch breaks; the object we wrote was deleted meanwhile and nothing newer exists:
        // the listing's objects are all older than our write.
        c.relisting(Resource::Pods, Instant::now());
        c.listed(Resource::Pods, Some("40"));
        assert!(c.unseen("web").is_some(), "not before the listing is whole");
        c.relisted(Resource::Pods);
        assert!(c.unseen("web").is_none(), "the listing began after the answer");
        // A write answered after the re-list began is still awaited after it.
        let began = Instant::now();
        c.relisting(Resource::Pods, began);
        std::thread::sleep(std::time::Duration::from_millis(2));
        c.wrote("web", Resource::Pods, "web-4", Some("200"));
        c.listed(Resource::Pods, Some("150"));
        c.relisted(Resource::Pods);
        let u = c.unseen("web").unwrap_or_else(|| panic!("awaited"));
        assert_eq!((u.wrote, u.read), (200, Some(150)));
        c.forget("web");
        assert_eq!(c.awaited(), 0);
    }
}
