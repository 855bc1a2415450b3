//! Upstream `runForAll` and `slowStartBatch` (spec 3.2): how a sync walks its pods, one by one
//! in monotonic mode, in doubling batches in burst mode, and what an item says back.
//!
//! Owns: the walk and the batch sizes. Must not touch: what an item does (`update`,
//! `recreate`).

use super::pvc::ClaimTerminating;
use super::types::{Blocker, SyncError};

/// Upstream `MaxBatchSize`: the cap on a burst batch.
pub const MAX_BATCH_SIZE: usize = 500;

/// The result of one `processReplica` / `processCondemned` item.
#[derive(Debug, Default)]
pub(crate) struct Flow {
    pub(crate) exit: bool,
    pub(crate) blocker: Option<Blocker>,
    pub(crate) error: Option<SyncError>,
}

impl Flow {
    pub(crate) fn go_on() -> Self {
        Flow::default()
    }
    pub(crate) fn exit(blocker: Blocker) -> Self {
        Flow { exit: true, blocker: Some(blocker), error: None }
    }
    pub(crate) fn claim_error(pod: &str, c: ClaimTerminating) -> Self {
        let message = format!(
            "pvc {} is being deleted: pod {pod} cannot be created until the claim is gone",
            c.claim
        );
        Flow {
            exit: true,
            blocker: Some(Blocker::ClaimTerminating { pod: pod.into(), claim: c.claim }),
            error: Some(SyncError { message, retry: true }),
        }
    }
}

/// Why `runForAll` stopped: the blocker of the item that exited and any (aggregated) error.
#[derive(Debug, Default)]
pub(crate) struct Stop {
    pub blocker: Option<Blocker>,
    pub error: Option<SyncError>,
}

/// Upstream `runForAll`: monotonic runs items in order and stops at the first exit or error;
/// burst runs `slowStartBatch(1, len)` (batches 1, 2, 4, … capped at [`MAX_BATCH_SIZE`]),
/// ignores exits, and stops after the first batch with an error.
#[doc(alias = "runForAll")]
#[doc(alias = "slowStartBatch")]
pub(crate) fn run_for_all(
    len: usize,
    monotonic: bool,
    mut f: impl FnMut(usize, Option<u32>) -> Flow,
) -> Option<Stop> {
    if monotonic {
        for i in 0..len {
            let flow = f(i, None);
            if flow.exit || flow.error.is_some() {
                return Some(Stop { blocker: flow.blocker, error: flow.error });
            }
        }
        return None;
    }
    let mut remaining = len;
    let mut next = 0;
    let mut batch = remaining.min(1);
    let mut number = 0;
    while batch > 0 {
        let mut stop: Option<Stop> = None;
        for k in next..next + batch {
            let flow = f(k, Some(number));
            if let Some(err) = flow.error {
                match stop.as_mut().and_then(|s| s.error.as_mut()) {
                    Some(agg) => agg.message = format!("{}, {}", agg.message, err.message),
                    None => stop = Some(Stop { blocker: flow.blocker, error: Some(err) }),
                }
            }
        }
        next += batch;
        if stop.is_some() {
            return stop;
        }
        remaining -= batch;
        batch = (2 * batch).min(remaining).min(MAX_BATCH_SIZE);
        number += 1;
    }
    None
}

/// The burst batch sizes `slowStartBatch(1, n)` would use (for tests and explanations).
pub fn batch_sizes(n: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let (mut remaining, mut batch) = (n, n.min(1));
    while batch > 0 {
        out.push(batch);
        remaining -= batch;
        batch = (2 * batch).min(remaining).min(MAX_BATCH_SIZE);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_batches_double_and_cap() {
        assert_eq!(batch_sizes(0), Vec::<usize>::new());
        assert_eq!(batch_sizes(3), vec![1, 2]);
        assert_eq!(batch_sizes(10), vec![1, 2, 4, 3]);
        let big = batch_sizes(2000);
        assert_eq!(&big[..9], &[1, 2, 4, 8, 16, 32, 64, 128, 256]);
        assert!(big[9..].iter().all(|&b| b <= MAX_BATCH_SIZE));
        assert_eq!(big.iter().sum::<usize>(), 2000);
    }

    #[test]
    fn burst_stops_after_the_failing_batch() {
        let mut seen = Vec::new();
        let stop = run_for_all(10, false, |i, _| {
            seen.push(i);
            if i == 1 {
                Flow {
                    exit: true,
                    blocker: None,
                    error: Some(SyncError { message: "x".into(), retry: true }),
                }
            } else {
                Flow { exit: true, ..Flow::default() }
            }
        });
        assert_eq!(seen, vec![0, 1, 2], "batch [1,2] completes, no batch after it");
        assert!(stop.is_some_and(|s| s.error.is_some()));
        let mut seen = Vec::new();
        let stop = run_for_all(10, true, |i, _| {
            seen.push(i);
            Flow { exit: i == 3, ..Flow::default() }
        });
        assert_eq!(seen, vec![0, 1, 2, 3]);
        assert!(stop.is_some());
    }
}
