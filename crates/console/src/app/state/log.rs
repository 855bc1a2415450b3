//! The open log's state: the selected pod's log lines, bounded (the oldest dropped, and
//! counted). Its transitions are `app::logs`.

use std::collections::VecDeque;

use crate::backend::LogRequest;

/// Lines held at most.
pub const MAX_LOG_LINES: usize = 5_000;

/// An open log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogView {
    pub request: LogRequest,
    pub lines: VecDeque<String>,
    /// Lines dropped from the top to stay within [`MAX_LOG_LINES`].
    pub dropped: u64,
    /// Lines scrolled up from the bottom (0: following the newest).
    pub back: usize,
    /// Why there is no log, or that it ended.
    pub note: Option<String>,
    /// No more lines will come (the stream ended or failed).
    pub ended: bool,
}

impl LogView {
    pub(crate) fn new(request: LogRequest) -> LogView {
        LogView { request, lines: VecDeque::new(), dropped: 0, back: 0, note: None, ended: false }
    }

    pub(crate) fn push(&mut self, lines: Vec<String>) {
        for l in lines {
            if self.lines.len() == MAX_LOG_LINES {
                self.lines.pop_front();
                self.dropped += 1;
            }
            self.lines.push_back(l);
        }
    }

    /// Whether it follows the newest line.
    pub fn following(&self) -> bool {
        self.back == 0
    }
}
