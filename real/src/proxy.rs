//! A loopback TCP relay in front of a server, to inject the faults the
//! simulator models — a broken connection, a silent network (which lets the
//! server expire the session) — into runs on a real ZooKeeper.
//!
//! Clients connect to the proxy's port; each accepted connection is relayed
//! to the server by two threads (one per direction). This is harness code
//! around a real run, not part of a simulated one, so OS threads are fine.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// How often a paused relay looks at whether it may go on.
const PAUSE_POLL: Duration = Duration::from_millis(5);

/// A relay that can break or silence every connection through it.
#[derive(Debug)]
pub struct FaultProxy {
    port: u16,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

#[derive(Debug, Default)]
struct Shared {
    /// Both ends of every open relayed connection.
    open: Mutex<Vec<(TcpStream, TcpStream)>>,
    /// Client → server bytes are held.
    paused_up: AtomicBool,
    /// Server → client bytes are held.
    paused_down: AtomicBool,
    stopping: AtomicBool,
}

impl Shared {
    fn drop_all(&self) {
        let open = std::mem::take(&mut *self.open.lock().unwrap_or_else(PoisonError::into_inner));
        for (client, server) in open {
            let _ = client.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
        }
    }
}

impl FaultProxy {
    /// Listen on a free loopback port and relay to `upstream`.
    pub fn start(upstream: SocketAddr) -> io::Result<FaultProxy> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let port = listener.local_addr()?.port();
        let shared = Arc::new(Shared::default());
        let accept_shared = shared.clone();
        let acceptor = thread::Builder::new()
            .name(format!("zk-proxy-{port}"))
            .spawn(move || accept_loop(listener, upstream, accept_shared))?;
        Ok(FaultProxy {
            port,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// `127.0.0.1:<port>` of the proxy, for a client.
    pub fn connect_string(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Break every open connection, like a network failure: the client
    /// library fails what is outstanding with `ConnectionLoss`, reports
    /// `Disconnected` and reconnects (through the proxy) on its own.
    pub fn drop_connections(&self) {
        self.shared.drop_all();
    }

    /// Hold every byte in both directions (connections stay open): a
    /// partition. Longer than the session timeout, it lets the server
    /// expire the session.
    pub fn pause(&self) {
        self.shared.paused_up.store(true, Ordering::SeqCst);
        self.shared.paused_down.store(true, Ordering::SeqCst);
    }

    /// Hold only what clients send: requests sent from now on stay in
    /// flight, while answers to earlier ones still arrive.
    pub fn pause_requests(&self) {
        self.shared.paused_up.store(true, Ordering::SeqCst);
    }

    /// Let held bytes flow again.
    pub fn resume(&self) {
        self.shared.paused_up.store(false, Ordering::SeqCst);
        self.shared.paused_down.store(false, Ordering::SeqCst);
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.resume();
        // Wake the acceptor out of `accept`.
        let _ = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port));
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
        self.shared.drop_all();
    }
}

fn accept_loop(listener: TcpListener, upstream: SocketAddr, shared: Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        let Ok(server) = TcpStream::connect(upstream) else {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        };
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        let (Ok(client_reader), Ok(server_reader), Ok(client_kept), Ok(server_kept)) = (
            client.try_clone(),
            server.try_clone(),
            client.try_clone(),
            server.try_clone(),
        ) else {
            continue;
        };
        shared
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((client_kept, server_kept));
        let up = shared.clone();
        let down = shared.clone();
        let _ = thread::Builder::new()
            .name("zk-proxy-up".into())
            .spawn(move || relay(client_reader, server, &up.paused_up, &up));
        let _ = thread::Builder::new()
            .name("zk-proxy-down".into())
            .spawn(move || relay(server_reader, client, &down.paused_down, &down));
    }
}

/// Copy `from` to `to` until either end closes, holding data while paused.
fn relay(mut from: TcpStream, mut to: TcpStream, paused: &AtomicBool, shared: &Shared) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        wait_while_paused(paused, shared);
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        // A read that was already blocked when the pause began must not slip through.
        wait_while_paused(paused, shared);
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

fn wait_while_paused(paused: &AtomicBool, shared: &Shared) {
    while paused.load(Ordering::SeqCst) && !shared.stopping.load(Ordering::SeqCst) {
        thread::sleep(PAUSE_POLL);
    }
}
