//! The end-to-end harness: the real `ststui` binary in a pseudo-terminal, its screen parsed by
//! a terminal emulator (vt100). Waits poll the screen up to a generous deadline; nothing asserts
//! on wall-clock time.
#![allow(dead_code, reason = "each test binary uses part of the shared support")]

use std::io::{Read, Write};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};

pub mod cluster;

pub const ROWS: u16 = 30;
pub const COLS: u16 = 100;
/// Generous: debug builds on a loaded CI machine.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// Linux termios local flags (`ICANON`, `ECHO`): set in cooked mode, cleared in raw mode.
#[cfg(target_os = "linux")]
pub const ICANON: u32 = 0o000002;
#[cfg(target_os = "linux")]
pub const ECHO: u32 = 0o000010;

pub fn nz(v: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(v).unwrap_or(std::num::NonZeroU16::MIN)
}

pub struct Console {
    pub master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    bytes: Receiver<Vec<u8>>,
    pub parser: vt100::Parser,
    /// Everything the program wrote, for the escape-sequence checks.
    pub raw: Vec<u8>,
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Console {
    pub fn start(args: &[&str]) -> Console {
        Console::start_with_env(args, &[])
    }

    pub fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Console {
        let pty = native_pty_system();
        let pair = pty
            .openpty(PtySize { rows: ROWS, cols: COLS, pixel_width: 0, pixel_height: 0 })
            .unwrap_or_else(|e| panic!("openpty: {e}"));
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_ststui"));
        cmd.args(args);
        cmd.env("TERM", "xterm-256color");
        cmd.env_remove("NO_COLOR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).unwrap_or_else(|e| panic!("spawn: {e}"));
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap_or_else(|e| panic!("reader: {e}"));
        let writer = pair.master.take_writer().unwrap_or_else(|e| panic!("writer: {e}"));
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Console {
            master: pair.master,
            writer,
            bytes: rx,
            parser: vt100::Parser::new(nz(ROWS), nz(COLS), 0),
            raw: Vec::new(),
            child,
        }
    }

    pub fn pump(&mut self, wait: Duration) {
        if let Ok(b) = self.bytes.recv_timeout(wait) {
            self.parser.process(&b);
            self.raw.extend_from_slice(&b);
        }
        while let Ok(b) = self.bytes.try_recv() {
            self.parser.process(&b);
            self.raw.extend_from_slice(&b);
        }
    }

    pub fn screen(&self) -> String {
        self.parser.screen().contents()
    }

    /// Resizes the terminal (the console gets SIGWINCH and redraws).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        let size = PtySize { rows, cols, pixel_width: 0, pixel_height: 0 };
        self.master.resize(size).unwrap_or_else(|e| panic!("resize: {e}"));
        self.parser.screen_mut().set_size(nz(rows), nz(cols));
    }

    /// Polls the screen until `cond` holds; panics with the screen after the deadline.
    pub fn wait_for(&mut self, what: &str, cond: impl Fn(&str) -> bool) {
        let start = Instant::now();
        loop {
            if cond(&self.screen()) {
                return;
            }
            if start.elapsed() > DEADLINE {
                panic!("timed out waiting for {what}; screen:\n{}", self.screen());
            }
            self.pump(Duration::from_millis(50));
        }
    }

    pub fn press(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).unwrap_or_else(|e| panic!("write: {e}"));
        self.writer.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    }

    #[cfg(target_os = "linux")]
    pub fn local_flags(&self) -> Option<u32> {
        self.master.get_termios().map(|t| t.local_flags.bits())
    }

    /// Waits for the program to exit (reading its output meanwhile); its exit status.
    pub fn wait_exit(&mut self) -> portable_pty::ExitStatus {
        let start = Instant::now();
        loop {
            self.pump(Duration::from_millis(50));
            if let Ok(Some(status)) = self.child.try_wait() {
                self.pump(Duration::from_millis(200));
                return status;
            }
            if start.elapsed() > DEADLINE {
                let _ = self.child.kill();
                panic!("the program did not exit; screen:\n{}", self.screen());
            }
        }
    }
}

/// The header line's text (first screen row).
pub fn header(screen: &str) -> &str {
    screen.lines().next().unwrap_or_default()
}
