//! The server's pulse when nothing else says it. A connection is known to be up by what arrives
//! (a listing, a watch opened, a frame of a watch: `conn`); a server that stops answering —
//! hung (SIGSTOP, a dead node behind a live load balancer) or draining after SIGTERM — sends
//! nothing, and a quiet set's watches are silent anyway, so nothing would say so before the
//! watches' idle limit (two minutes) or the process's exit. Here: once the server has said
//! nothing for [`QUIET`], one `GET /readyz` (public to every user, as `/version` is) must be
//! answered within [`ANSWER_WITHIN`]:
//!
//! - no answer in time → unreachable ("no answer to GET /readyz within 5 s …"), within
//!   `QUIET + CHECK_EVERY + ANSWER_WITHIN` (17 s) of the server's last word;
//! - a 5xx → failing ("the server says it is not ready …": shutting down, or its storage failing);
//! - any other answer (2xx, or 401/403/404 from a server that answers all the same) → up.
//!
//! Anything heard from the server meanwhile (a watch's frame) clears what the pulse said. A
//! busy set's watches speak often enough that the pulse never asks; a quiet one costs a request
//! every ~12 s. Owns: the check. Must not: restart watches (the probe layer's idle limit does).

use std::sync::Arc;
use std::time::Duration;

use super::conn::Conn;

/// How long the server may say nothing before it is asked.
pub const QUIET: Duration = Duration::from_secs(10);
/// How long its answer is waited for.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(5);
/// How often the quiet is looked at.
const CHECK_EVERY: Duration = Duration::from_secs(2);

/// What one check found.
#[derive(Debug)]
pub enum Pulse {
    Answered,
    NoAnswer,
    NotReady(String),
    /// The request failed before an answer (refused, reset, TLS).
    Failed(kube::Error),
}

/// Asks the server once.
pub async fn ask(client: &kube::Client) -> Pulse {
    let Ok(req) = hyper::Request::get("/readyz").body(Vec::new()) else {
        return Pulse::Answered;
    };
    match tokio::time::timeout(ANSWER_WITHIN, client.request_text(req)).await {
        Err(_) => Pulse::NoAnswer,
        Ok(Ok(_)) => Pulse::Answered,
        Ok(Err(kube::Error::Api(s))) if s.code >= 500 => {
            let first = s.message.lines().next().unwrap_or_default();
            let first: String = first.chars().take(200).collect();
            let said = crate::text::escape_controls(&first);
            Pulse::NotReady(format!("HTTP {}: {said}", s.code))
        }
        Ok(Err(kube::Error::Api(_))) => Pulse::Answered,
        Ok(Err(e)) => Pulse::Failed(e),
    }
}

/// Checks the server whenever it has been quiet for [`QUIET`], until dropped.
pub async fn run(client: kube::Client, conn: Arc<Conn>) {
    let slot = conn.slot();
    let mut said = false;
    loop {
        tokio::time::sleep(CHECK_EVERY).await;
        if conn.heard_within(QUIET) {
            // The server spoke: whatever the pulse said is over.
            if said {
                slot.ok();
                said = false;
            }
            continue;
        }
        let pulse = ask(&client).await;
        said = !matches!(pulse, Pulse::Answered);
        match pulse {
            Pulse::Answered => slot.ok(),
            Pulse::NoAnswer => slot.down(format!(
                "no answer to GET /readyz within {} s after {} s without a word from the server: \
                 it stopped answering",
                ANSWER_WITHIN.as_secs(),
                QUIET.as_secs()
            )),
            Pulse::NotReady(why) => slot.failing(format!(
                "GET /readyz: the server says it is not ready ({why}): shutting down, or failing"
            )),
            Pulse::Failed(e) => {
                let _ = slot.failed("GET /readyz", &e);
            }
        }
    }
}
