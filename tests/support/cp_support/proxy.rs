//! A TCP proxy in front of the control plane's API server, for the tests of what a real network
//! does to ststui's connections. Bytes pass through untouched (TLS stays end to end: the server's
//! certificate names 127.0.0.1, whatever the port), and on demand the proxy
//! - resets every connection through it (RST, not a polite close), or
//! - loses the reply to the next write: the next request with a body to pass (a client chunk of
//!   [`WRITE_BYTES`] or more after the connection's TLS handshake: reads and watches are a few
//!   hundred bytes) reaches the server, and the connection is reset as the server's answer
//!   starts to come back. What the client sees is a write with no answer, carried out.
//!
//! Written by hand: a few lines over tokio, and no proxy crate resets connections on demand.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A client chunk this large, after the handshake, is a request with a body: a write.
pub const WRITE_BYTES: usize = 600;

#[derive(Default)]
struct Shared {
    lose_next_reply: AtomicBool,
    lost: AtomicUsize,
    reset: AtomicUsize,
}

pub struct Proxy {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    resets: tokio::sync::watch::Sender<u64>,
    _runtime: tokio::runtime::Runtime,
}

impl Proxy {
    /// Listens on a free loopback port and forwards each connection to `upstream`.
    pub fn start(upstream: SocketAddr) -> Proxy {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("the proxy's runtime: {e}"));
        let listener = runtime
            .block_on(TcpListener::bind("127.0.0.1:0"))
            .unwrap_or_else(|e| panic!("the proxy's port: {e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let shared = Arc::new(Shared::default());
        let (resets, _) = tokio::sync::watch::channel(0u64);
        let (s, r) = (Arc::clone(&shared), resets.clone());
        runtime.spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(pipe(client, upstream, Arc::clone(&s), r.subscribe()));
            }
        });
        Proxy { addr, shared, resets, _runtime: runtime }
    }

    /// Resets every connection open now.
    pub fn reset_all(&self) {
        self.resets.send_modify(|n| *n += 1);
    }

    /// The next write to pass gets no answer.
    pub fn lose_next_reply(&self) {
        self.shared.lose_next_reply.store(true, Ordering::SeqCst);
    }

    /// How many replies were lost so far.
    pub fn lost(&self) -> usize {
        self.shared.lost.load(Ordering::SeqCst)
    }

    /// How many connections were reset so far (lost replies included).
    pub fn reset(&self) -> usize {
        self.shared.reset.load(Ordering::SeqCst)
    }
}

/// One connection: bytes both ways until either side closes or a fault resets it.
async fn pipe(
    mut client: TcpStream,
    upstream: SocketAddr,
    shared: Arc<Shared>,
    mut resets: tokio::sync::watch::Receiver<u64>,
) {
    let Ok(mut server) = TcpStream::connect(upstream).await else { return };
    resets.borrow_and_update();
    let (mut up, mut down) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    // Round trips seen: the first is the TLS handshake's; a client chunk after one is a request.
    let mut trips = 0usize;
    let mut asked = false;
    let mut doomed = false;
    let reset = loop {
        tokio::select! {
            n = client.read(&mut up) => {
                let n = match n { Ok(0) | Err(_) => break false, Ok(n) => n };
                let write = !asked && trips > 0 && n >= WRITE_BYTES;
                if write && shared.lose_next_reply.swap(false, Ordering::SeqCst) {
                    doomed = true;
                }
                asked = true;
                if server.write_all(&up[..n]).await.is_err() { break false }
            }
            n = server.read(&mut down) => {
                let n = match n { Ok(0) | Err(_) => break false, Ok(n) => n };
                if doomed {
                    shared.lost.fetch_add(1, Ordering::SeqCst);
                    break true;
                }
                if asked {
                    trips += 1;
                    asked = false;
                }
                if client.write_all(&down[..n]).await.is_err() { break false }
            }
            changed = resets.changed() => {
                if changed.is_err() { break false }
                break true;
            }
        }
    };
    if reset {
        shared.reset.fetch_add(1, Ordering::SeqCst);
        // Closed with a zero linger: an RST, as a dropped connection looks to its peers.
        let _ = client.set_zero_linger();
        let _ = server.set_zero_linger();
    }
}
