//! Waiting on a condition rather than for a while: a test that needs something to have
//! happened polls for it, up to a generous deadline that only a failure reaches. (A sleep stays
//! only where a test checks that nothing happens within a window.)

use std::time::{Duration, Instant};

/// Polls `done` every 20 ms until it holds; after `within`, fails naming `what`.
pub fn until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
