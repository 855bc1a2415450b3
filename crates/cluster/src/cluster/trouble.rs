//! What a failed request means, as the console and the verbs must say it: the server could not
//! be reached (and whether the request may still have reached it), the server answered with an
//! error it may not repeat (5xx, 429, an answer that cannot be read), a permission is missing,
//! the credentials were refused, or the request itself was refused (404, 409, 422 …).
//!
//! Decided on the error's structure (its type, its status code, the kinds of the errors it wraps),
//! never on its text. kube-rs reports a refused connection, a reset, a timeout and a malformed
//! body as different variants wrapped in different ways (`HyperError`, `Service` holding
//! hyper-util's error, `ReadEvents`, `SerdeError`); no library sorts them into what an operator
//! needs to know, so this module does.

use std::error::Error as StdError;
use std::io;

/// The kind of a failed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trouble {
    /// No answer. `maybe_sent`: the request may have reached the server (the connection broke
    /// after it was written, a reply timed out); `false` when no connection was made at all.
    Unreachable { maybe_sent: bool },
    /// The server answered with an error that may pass: 5xx, 429, or an answer that cannot be
    /// read (a malformed body, a value out of range).
    Failing,
    /// 403: a permission is missing.
    Forbidden,
    /// 401: the credentials were refused.
    Unauthorized,
    /// A watch went silent for longer than the server's bookmarks allow (`probe::Stalled`).
    Stalled,
    /// Any other answer (404, 409, 410, 422 …): the request itself was refused.
    Refused(u16),
}

impl Trouble {
    /// Whether trying again later may succeed without anyone changing anything.
    pub fn transient(self) -> bool {
        matches!(self, Trouble::Unreachable { .. } | Trouble::Failing | Trouble::Stalled)
    }
}

/// Sorts a client error.
pub fn of(e: &kube::Error) -> Trouble {
    match e {
        kube::Error::Api(s) => match s.code {
            401 => Trouble::Unauthorized,
            403 => Trouble::Forbidden,
            429 => Trouble::Failing,
            c if c >= 500 => Trouble::Failing,
            c => Trouble::Refused(c),
        },
        kube::Error::SerdeError(_)
        | kube::Error::FromUtf8(_)
        | kube::Error::LinesCodecMaxLineLengthExceeded => Trouble::Failing,
        kube::Error::Auth(_) => Trouble::Unauthorized,
        // No credential to send: as refused credentials, what waiting does not mend.
        other if no_credential(other) => Trouble::Unauthorized,
        other => transport(other),
    }
}

/// Whether `e` is a credential plugin's failure (no request reached the server).
pub fn no_credential(e: &kube::Error) -> bool {
    let mut cur: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(err) = cur {
        if err.is::<super::credential::CredentialError>() {
            return true;
        }
        cur = err.source();
    }
    false
}

/// A transport error: stalled (our own probe), never connected, or broken after sending.
fn transport(e: &(dyn StdError + 'static)) -> Trouble {
    let mut cur: Option<&(dyn StdError + 'static)> = Some(e);
    let mut connected = true;
    while let Some(err) = cur {
        if err.downcast_ref::<super::probe::Stalled>().is_some() {
            return Trouble::Stalled;
        }
        if let Some(h) = err.downcast_ref::<hyper_util::client::legacy::Error>()
            && h.is_connect()
        {
            connected = false;
        }
        if let Some(io) = err.downcast_ref::<io::Error>() {
            // A stalled watch's error travels as an io::Error's inner error.
            if io.get_ref().is_some_and(|inner| inner.is::<super::probe::Stalled>()) {
                return Trouble::Stalled;
            }
            if matches!(
                io.kind(),
                io::ErrorKind::ConnectionRefused
                    | io::ErrorKind::HostUnreachable
                    | io::ErrorKind::NetworkUnreachable
                    | io::ErrorKind::AddrNotAvailable
                    | io::ErrorKind::NotFound
            ) {
                connected = false;
            }
        }
        cur = err.source();
    }
    Trouble::Unreachable { maybe_sent: connected }
}

/// The words for a trouble, for messages: what happened and what ststui does about it.
pub fn words(t: Trouble) -> &'static str {
    match t {
        Trouble::Unreachable { maybe_sent: false } => "the server cannot be reached",
        Trouble::Unreachable { maybe_sent: true } => "the connection to the server broke",
        Trouble::Failing => "the server answered with an error",
        Trouble::Forbidden => "permission denied",
        Trouble::Unauthorized => "the credentials were refused",
        Trouble::Stalled => "the watch went silent",
        Trouble::Refused(_) => "the server refused the request",
    }
}

/// [`brief`] for a watcher's error.
pub fn watcher_brief(e: &kube::runtime::watcher::Error) -> String {
    use kube::runtime::watcher::Error as W;
    match e {
        W::InitialListFailed(e) | W::WatchStartFailed(e) | W::WatchFailed(e) => brief(e),
        W::WatchError(s) => format!("{} {}: {}", s.code, s.reason, s.message),
        W::NoResourceVersion => e.to_string(),
    }
}

/// A short form of a client error for messages: the server's message for an API error, the
/// innermost cause otherwise (not the whole chain of wrappers kube-rs prints).
pub fn brief(e: &kube::Error) -> String {
    if let kube::Error::Api(s) = e {
        let reason = if s.reason.is_empty() { String::new() } else { format!(" {}", s.reason) };
        return format!("{}{reason}: {}", s.code, s.message);
    }
    let mut cur: &(dyn StdError + 'static) = e;
    let mut last = cur.to_string();
    while let Some(next) = cur.source() {
        let text = next.to_string();
        if !text.is_empty() {
            last = text;
        }
        cur = next;
    }
    last
}

/// A client error as a failure of the write `op`. A connection that was never made is known to
/// have written nothing; anything else sent is not known (the caller reads back).
pub fn failure(op: &str, e: &kube::Error) -> crate::backend::Failure {
    failed(op, e, true)
}

/// A client error as a failure of the read `op`: said as a read that did not happen (a read
/// writes nothing, so nothing is said of writing).
pub fn read_failure(op: &str, e: &kube::Error) -> crate::backend::Failure {
    failed(op, e, false)
}

fn failed(op: &str, e: &kube::Error, write: bool) -> crate::backend::Failure {
    match e {
        kube::Error::Api(s) if s.code == 401 => crate::backend::Failure::new(
            op.into(),
            crate::backend::FailureKind::Unauthorized,
            format!("the server refused the credentials ({})", s.message),
        ),
        kube::Error::Api(s) => crate::backend::Failure::new(
            op.into(),
            crate::backend::FailureKind::from_status(s.code),
            s.message.clone(),
        ),
        other => {
            let t = of(other);
            let brief = brief(other);
            let head = match t {
                _ if !write => "not read",
                Trouble::Unreachable { maybe_sent: false } => "nothing was written",
                _ => "whether it was written is not known",
            };
            let kind = if t == Trouble::Unauthorized {
                crate::backend::FailureKind::Unauthorized
            } else {
                crate::backend::FailureKind::Unavailable
            };
            crate::backend::Failure::new(op.into(), kind, format!("{head}: {} ({brief})", words(t)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16) -> kube::Error {
        kube::Error::Api(Box::new(kube::core::Status {
            code,
            message: "m".into(),
            reason: "R".into(),
            ..Default::default()
        }))
    }

    #[test]
    fn statuses_sort_by_code() {
        assert_eq!(of(&api(500)), Trouble::Failing);
        assert_eq!(of(&api(503)), Trouble::Failing);
        assert_eq!(of(&api(429)), Trouble::Failing);
        assert_eq!(of(&api(403)), Trouble::Forbidden);
        assert_eq!(of(&api(401)), Trouble::Unauthorized);
        assert_eq!(of(&api(409)), Trouble::Refused(409));
        assert_eq!(brief(&api(503)), "503 R: m");
    }

    #[test]
    fn a_malformed_body_is_an_answer_not_an_outage() {
        let bad = serde_json::from_str::<i32>("99999999999999999999").unwrap_err();
        assert_eq!(of(&kube::Error::SerdeError(bad)), Trouble::Failing);
    }

    #[test]
    fn a_refused_connection_was_never_sent_and_a_reset_may_have_been() {
        let refused = io::Error::new(io::ErrorKind::ConnectionRefused, "refused");
        let e = kube::Error::Service(Box::new(refused));
        assert_eq!(of(&e), Trouble::Unreachable { maybe_sent: false });
        assert_eq!(brief(&e), "refused");
        let reset = io::Error::new(io::ErrorKind::ConnectionReset, "reset by peer");
        let e = kube::Error::Service(Box::new(reset));
        assert_eq!(of(&e), Trouble::Unreachable { maybe_sent: true });
        let stalled = io::Error::other(crate::cluster::probe::Stalled { secs: 120 });
        assert_eq!(of(&kube::Error::ReadEvents(stalled)), Trouble::Stalled);
    }

    #[test]
    fn a_failed_read_is_said_as_a_read_and_a_failed_write_as_a_write() {
        let refused = || {
            let e = io::Error::new(io::ErrorKind::ConnectionRefused, "refused");
            kube::Error::Service(Box::new(e))
        };
        let read = read_failure("read default/web: the set", &refused());
        assert!(read.message.starts_with("not read: "), "{}", read.message);
        assert!(!read.message.contains("written"), "{}", read.message);
        let write = failure("patch", &refused());
        assert!(write.message.starts_with("nothing was written: "), "{}", write.message);
    }
}
