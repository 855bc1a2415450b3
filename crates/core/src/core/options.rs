//! Version semantics: which upstream behaviour a sync reproduces (spec section 0 and 5).
//!
//! A [`Version`] (the kube-controller-manager release being matched) resolves to [`Semantics`],
//! the handful of switches the algorithm reads. Real-cluster mode picks the server's version;
//! the simulator defaults to 1.37. Individual switches can be overridden (feature gates).

use std::fmt;
use std::str::FromStr;

/// A Kubernetes minor release with its patch level, e.g. `1.35.4`. Only 1.31 to 1.37 are
/// modelled; versions outside that range are rejected by [`Version::from_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub minor: u16,
    pub patch: u16,
}

impl Version {
    pub const OLDEST: Version = Version { minor: 31, patch: 0 };
    pub const V1_34: Version = Version { minor: 34, patch: 0 };
    pub const V1_37: Version = Version { minor: 37, patch: 0 };
    /// The default: the v1.37 line (upstream master, mid-2026).
    pub const LATEST: Version = Version::V1_37;

    /// The behaviour switches this release has by default.
    pub fn semantics(self) -> Semantics {
        let m = self.minor;
        let max_unavailable_gate = match m {
            35 => self.patch < 4,
            37.. => true,
            _ => false,
        };
        Semantics {
            max_unavailable_gate,
            // #137666: the Parallel-only two-phase deletion exists from 1.37.
            parallel_two_phase: m >= 37,
            // #130909 (about v1.34): availability (minReadySeconds) instead of readiness in the
            // rolling-update wait and the unavailable count.
            availability_in_updates: m >= 34,
            // #136833 (1.37): completeUpdate has no RollingUpdate type check.
            on_delete_completes: m >= 37,
            // From 1.34 `podutil.IsPodAvailable` counts the deadline itself (`<=`; before, `<`).
            available_at_deadline: m >= 34,
            // From 1.36 the availability requeue is exact (read off v1.35.0 and v1.36.0).
            precise_availability_requeue: m >= 36,
            // #139307 was still open at last sight; off by default everywhere.
            completion_requires_available: false,
            // KEP-5647 (kubernetes PR #137254): beta and on by default from 1.36.
            read_your_writes: m >= 36,
            // KEP-3541 (kubernetes PR #137187): the Recreate type exists from 1.37, alpha, so
            // its gate is off by default.
            recreate_known: m >= 37,
            recreate_gate: false,
            // From 1.37 `updateStatefulSet` carries the set's conditions into the status it
            // computes and `inconsistentStatus` compares them (read off v1.37.2 and v1.36.0).
            keeps_conditions: m >= 37,
        }
    }
}

impl Version {
    /// The release whose semantics to use for an API server reporting `git_version` (e.g.
    /// `v1.34.2+k3s1`), and a note for the operator when that is not the server's own: a newer
    /// server gets the newest semantics known, an older one the oldest, an unreadable one the
    /// default.
    pub fn for_server(git_version: &str) -> (Version, Option<String>) {
        if let Ok(v) = git_version.parse::<Version>() {
            return (v, None);
        }
        let t = git_version.trim().trim_start_matches('v');
        let t = t.split(['+', '-']).next().unwrap_or_default();
        let mut parts = t.split('.').map(|p| p.parse::<u16>().ok());
        let (major, minor) = (parts.next().flatten(), parts.next().flatten());
        match (major, minor) {
            (Some(1), Some(m)) if m > Version::LATEST.minor => (
                Version::LATEST,
                Some(format!(
                    "the server is {git_version}, newer than the releases ststui knows (1.{} to                      1.{}): the advisor uses {} semantics",
                    Version::OLDEST.minor,
                    Version::LATEST.minor,
                    Version::LATEST
                )),
            ),
            (Some(1), Some(_)) => (
                Version::OLDEST,
                Some(format!(
                    "the server is {git_version}, older than the releases ststui knows: the                      advisor uses {} semantics",
                    Version::OLDEST
                )),
            ),
            _ => (
                Version::LATEST,
                Some(format!(
                    "cannot read the server's version {git_version:?}: the advisor uses {}                      semantics",
                    Version::LATEST
                )),
            ),
        }
    }
}

impl Default for Version {
    fn default() -> Self {
        Version::LATEST
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "1.{}.{}", self.minor, self.patch)
    }
}

/// Why a version string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unsupported version {input:?}: expected 1.MINOR or 1.MINOR.PATCH with MINOR from 31 to 37 (e.g. 1.37, 1.35.4)"
)]
pub struct VersionError {
    pub input: String,
}

impl FromStr for Version {
    type Err = VersionError;

    /// Accepts `1.37`, `v1.35.4`, and server strings like `v1.34.2+k3s1` or `v1.33.1-eks-abc`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || VersionError { input: s.to_string() };
        let t = s.trim().trim_start_matches('v');
        let t = t.split(['+', '-']).next().unwrap_or_default();
        let mut parts = t.split('.');
        let major = parts.next().ok_or_else(err)?;
        let minor = parts.next().ok_or_else(err)?;
        let patch = parts.next().unwrap_or("0");
        if major != "1" || parts.next().is_some() {
            return Err(err());
        }
        let minor: u16 = minor.parse().map_err(|_| err())?;
        let patch: u16 = patch.parse().map_err(|_| err())?;
        let v = Version { minor, patch };
        if !(Version::OLDEST.minor..=Version::LATEST.minor).contains(&minor) {
            return Err(err());
        }
        Ok(v)
    }
}

/// The behaviour switches a sync reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Semantics {
    /// `MaxUnavailableStatefulSet`: use the maxUnavailable path (3.6.2) instead of the legacy
    /// one-at-a-time path (3.6.1).
    pub max_unavailable_gate: bool,
    /// With the gate on, Parallel sets use the 1.37 two-phase deletion (#137666) instead of the
    /// 1.35 budget rule that could get stuck on broken old pods (#137409).
    pub parallel_two_phase: bool,
    /// "Unavailable" includes minReadySeconds (#130909); otherwise it means not Running+Ready.
    pub availability_in_updates: bool,
    /// OnDelete rollouts complete (currentRevision := updateRevision) once every pod is updated.
    pub on_delete_completes: bool,
    /// Completion also requires `availableReplicas == replicas` (#139307, unmerged).
    pub completion_requires_available: bool,
    /// A pod is available once `lastTransitionTime + minReadySeconds <= now`; otherwise only
    /// when strictly before `now`.
    pub available_at_deadline: bool,
    /// The minReadySeconds requeues are exact: a pod becoming Ready requeues its set after
    /// `minReadySeconds` (not `+ 1 s`), and a sync with Ready pods not yet available requeues
    /// when the first of them becomes available (not after `minReadySeconds` whenever
    /// `availableReplicas != replicas`).
    pub precise_availability_requeue: bool,
    /// `StaleControllerConsistencyStatefulSet` (KEP-5647): a set's sync is held until the
    /// controller's caches have seen its own latest pod, claim and status writes for that set.
    /// Only drive mode reads through caches (watches); the simulator reads its store itself and
    /// is always caught up.
    pub read_your_writes: bool,
    /// The controller knows `updateStrategy.type: Recreate` (1.37). Before, the type rolls as
    /// RollingUpdate.
    pub recreate_known: bool,
    /// `StatefulSetRecreateStrategy`: a Recreate set is recreated (3.8); off, it is not
    /// reconciled (an `UnknownStrategy` Warning and an error each sync).
    pub recreate_gate: bool,
    /// The computed status keeps the set's conditions, and a change in them is written.
    pub keeps_conditions: bool,
}

/// The upstream feature gates `--feature-gates` may set (kube-controller-manager's flag and
/// syntax), and the switch each one is.
pub const GATES: [&str; 3] =
    ["MaxUnavailableStatefulSet", "StaleControllerConsistencyStatefulSet", RECREATE_GATE];

/// The gate of the Recreate update strategy (1.37, alpha).
pub const RECREATE_GATE: &str = "StatefulSetRecreateStrategy";

/// Gates set on the command line, `NAME=true|false` comma-separated, applied over a release's
/// defaults in the order given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureGates(Vec<(&'static str, bool)>);

/// Why `--feature-gates` was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{why} in --feature-gates {input:?}: expected NAME=true or NAME=false, comma-separated, NAME one of {}", GATES.join(", "))]
pub struct GateError {
    pub input: String,
    pub why: String,
}

impl FromStr for FeatureGates {
    type Err = GateError;

    fn from_str(s: &str) -> Result<Self, GateError> {
        let err = |why: String| GateError { input: s.to_string(), why };
        let mut set: Vec<(&'static str, bool)> = Vec::new();
        let items: Vec<&str> = s.split(',').map(str::trim).collect();
        if items.iter().all(|i| i.is_empty()) {
            return Err(err("names no gate".into()));
        }
        for item in items {
            if item.is_empty() {
                return Err(err("has an empty item (two commas, or one at an end)".into()));
            }
            let Some((name, value)) = item.split_once('=') else {
                return Err(err(format!("{item:?} has no value")));
            };
            let name = name.trim();
            let Some(gate) = GATES.iter().find(|g| **g == name) else {
                return Err(err(format!("unknown gate {name:?}")));
            };
            let on = match value.trim().to_ascii_lowercase().as_str() {
                "true" => true,
                "false" => false,
                other => return Err(err(format!("{name}={other:?} is no true or false"))),
            };
            if let Some((_, was)) = set.iter().find(|(g, _)| g == gate) {
                return Err(err(format!("sets {name} twice ({name}={was}, then {name}={on})")));
            }
            set.push((*gate, on));
        }
        Ok(FeatureGates(set))
    }
}

impl FeatureGates {
    /// The gates as set, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, bool)> + '_ {
        self.0.iter().copied()
    }

    /// The value `gate` is set to, if it is set.
    pub fn get(&self, gate: &str) -> Option<bool> {
        self.0.iter().find(|(g, _)| *g == gate).map(|(_, on)| *on)
    }

    /// Why a component of `version` would refuse these gates, as kube-controller-manager and
    /// kube-apiserver refuse a gate their release does not have: the Recreate gate before 1.37.
    pub fn refused_by(&self, version: Version) -> Option<String> {
        (self.get(RECREATE_GATE).is_some() && version < Version::V1_37).then(|| {
            format!(
                "--feature-gates sets {RECREATE_GATE}, which release {version} does not have \
                 (it came with 1.37): expected a 1.37 release, or no such gate"
            )
        })
    }
}

impl Semantics {
    /// These semantics with `gates` set over them.
    pub fn with_gates(mut self, gates: &FeatureGates) -> Semantics {
        for (gate, on) in gates.iter() {
            match gate {
                "MaxUnavailableStatefulSet" => self.max_unavailable_gate = on,
                RECREATE_GATE => self.recreate_gate = on,
                _ => self.read_your_writes = on,
            }
        }
        self
    }
}

/// Options for a sync: the semantics to reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Options {
    pub version: Version,
    pub semantics: Semantics,
}

impl Options {
    pub fn for_version(version: Version) -> Self {
        Options { version, semantics: version.semantics() }
    }

    /// What a controller matching the API server that reports `git_version` reads, with the
    /// operator's `gates` set over the release's defaults.
    pub fn for_server(git_version: &str, gates: &FeatureGates) -> Self {
        let version = Version::for_server(git_version).0;
        Options { version, semantics: version.semantics().with_gates(gates) }
    }
}

impl Options {
    /// The options for watching a server of `version` whose gates ststui cannot read: the
    /// Recreate gate is taken as on where the release knows the type, since an API server
    /// that stored a Recreate set had its gate on (explain says so when the controller's is
    /// off: it Warns, and the set does not move).
    pub fn watching(version: Version) -> Self {
        let mut semantics = version.semantics();
        semantics.recreate_gate = semantics.recreate_known;
        Options { version, semantics }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options::for_version(Version::LATEST)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_server_version_strings() {
        assert_eq!("1.37".parse::<Version>(), Ok(Version { minor: 37, patch: 0 }));
        assert_eq!("v1.35.4".parse::<Version>(), Ok(Version { minor: 35, patch: 4 }));
        assert_eq!("v1.34.2+k3s1".parse::<Version>(), Ok(Version { minor: 34, patch: 2 }));
        assert_eq!("v1.33.1-eks-abc".parse::<Version>(), Ok(Version { minor: 33, patch: 1 }));
        assert!("1.30".parse::<Version>().is_err());
        assert!("2.1".parse::<Version>().is_err());
        assert!("1.x".parse::<Version>().is_err());
        assert!("".parse::<Version>().is_err());
    }

    #[test]
    fn version_table_matches_spec_section_0() {
        let s = |v: &str| v.parse::<Version>().map(Version::semantics).ok();
        assert!(!s("1.34").map(|x| x.max_unavailable_gate).unwrap_or(true));
        assert!(s("1.35.0").map(|x| x.max_unavailable_gate).unwrap_or(false));
        assert!(s("1.35.3").map(|x| x.max_unavailable_gate).unwrap_or(false));
        assert!(!s("1.35.4").map(|x| x.max_unavailable_gate).unwrap_or(true));
        assert!(!s("1.36").map(|x| x.max_unavailable_gate).unwrap_or(true));
        assert!(s("1.37").map(|x| x.max_unavailable_gate && x.parallel_two_phase).unwrap_or(false));
        assert!(!s("1.35.9").map(|x| x.read_your_writes).unwrap_or(true));
        assert!(s("1.36").map(|x| x.read_your_writes).unwrap_or(false));
        assert!(!s("1.36").map(|x| x.on_delete_completes).unwrap_or(true));
        assert!(s("1.37").map(|x| x.on_delete_completes).unwrap_or(false));
        assert!(!s("1.33").map(|x| x.availability_in_updates).unwrap_or(true));
        assert!(!s("1.33").map(|x| x.available_at_deadline).unwrap_or(true));
        assert!(s("1.34.0").map(|x| x.available_at_deadline).unwrap_or(false));
        assert!(!s("1.35.4").map(|x| x.precise_availability_requeue).unwrap_or(true));
        assert!(s("1.36").map(|x| x.precise_availability_requeue).unwrap_or(false));
    }

    #[test]
    fn feature_gates_set_over_a_release_and_refuse_what_they_cannot_read() {
        let g: FeatureGates =
            "StaleControllerConsistencyStatefulSet=false, MaxUnavailableStatefulSet=TRUE"
                .parse()
                .unwrap_or_default();
        let o = Options::for_server("v1.37.2", &g);
        assert!(!o.semantics.read_your_writes);
        assert!(
            Options::for_server("v1.37.2", &FeatureGates::default()).semantics.read_your_writes
        );
        let o = Options::for_server("v1.34.1", &g);
        assert!(o.semantics.max_unavailable_gate && o.version.minor == 34);
        for (bad, says) in [
            ("StaleControllerConsistencyStatefulSet", "has no value"),
            ("Nope=true", "unknown gate \"Nope\""),
            ("MaxUnavailableStatefulSet=yes", "is no true or false"),
            ("", "names no gate"),
            (" , ", "names no gate"),
            ("MaxUnavailableStatefulSet=true,,", "has an empty item"),
            (
                "MaxUnavailableStatefulSet=true,MaxUnavailableStatefulSet=false",
                "sets MaxUnavailableStatefulSet twice (MaxUnavailableStatefulSet=true, then \
                 MaxUnavailableStatefulSet=false)",
            ),
        ] {
            let e = bad.parse::<FeatureGates>().err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(says) && e.contains("NAME=true or NAME=false"), "{bad}: {e}");
        }
    }
}
