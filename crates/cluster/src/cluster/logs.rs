//! Following a pod's log through the `pods/log` subresource (kube-rs `Api::log_stream`, with
//! `follow` and the last [`TAIL_LINES`] lines): lines go to the console in batches
//! ([`BATCH`] at most, or what arrived within [`BATCH_WAIT`]), each cut at [`MAX_LINE`]
//! characters; an error says what the server said (a container not started, no previous
//! instance) or which permission is missing; the end of the stream says so.
//!
//! Owns: the stream task. Must not: keep lines (the console bounds what it shows).

use std::sync::Arc;
use std::time::Duration;

use futures::{AsyncBufReadExt, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, LogParams};

use super::conn::Conn;
use crate::backend::{BackendEvent, LogChunk, LogRequest};

/// Lines asked for when the log opens.
pub const TAIL_LINES: i64 = 500;
/// Lines sent at once at most.
const BATCH: usize = 200;
/// A batch goes out this long after its first line at the latest.
const BATCH_WAIT: Duration = Duration::from_millis(100);
/// Characters of one line kept (a log line of megabytes is cut, not held).
pub const MAX_LINE: usize = 2_000;

/// Follows the log `req` asks for until the stream ends or the task is aborted.
pub async fn follow(client: kube::Client, conn: Arc<Conn>, req: LogRequest) {
    let send = |chunk| conn.sink(BackendEvent::Log { request: req.clone(), chunk });
    let api: Api<Pod> = Api::namespaced(client, &req.pod.namespace);
    let params = LogParams {
        follow: !req.previous,
        previous: req.previous,
        tail_lines: Some(TAIL_LINES),
        ..LogParams::default()
    };
    let stream = match api.log_stream(&req.pod.name, &params).await {
        Ok(s) => s,
        Err(e) => {
            send(LogChunk::Failed(words(&req, &e)));
            return;
        }
    };
    let mut lines = stream.lines().fuse();
    let mut first = true;
    loop {
        let mut batch = Vec::new();
        let next = lines.next().await;
        let ended = match next {
            Some(Ok(l)) => {
                batch.push(cut(l));
                false
            }
            Some(Err(e)) => {
                send(LogChunk::Failed(format!("the log stream broke: {e}")));
                return;
            }
            None => true,
        };
        if !ended {
            // What else arrives within the batch's wait goes with it.
            let deadline = tokio::time::Instant::now() + BATCH_WAIT;
            while batch.len() < BATCH {
                match tokio::time::timeout_at(deadline, lines.next()).await {
                    Ok(Some(Ok(l))) => batch.push(cut(l)),
                    _ => break,
                }
            }
        }
        if first {
            send(LogChunk::Replace(std::mem::take(&mut batch)));
            first = false;
        } else if !batch.is_empty() {
            send(LogChunk::Append(batch));
        }
        if ended {
            send(LogChunk::Ended);
            return;
        }
    }
}

fn cut(mut line: String) -> String {
    if let Some((at, _)) = line.char_indices().nth(MAX_LINE) {
        line.truncate(at);
        line.push('…');
    }
    line
}

/// Why the log cannot be read, in words an operator acts on.
fn words(req: &LogRequest, e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) if s.code == 403 => format!(
            "you may not read the log of pod {} (get pods/log is forbidden in {})",
            req.pod.name, req.pod.namespace
        ),
        kube::Error::Api(s) => s.message.clone(),
        other => format!("the log of pod {} cannot be read: {other}", req.pod.name),
    }
}
