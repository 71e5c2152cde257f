//! A loopback TCP relay in front of a server, to inject the faults the
//! simulator models — a broken connection, a silent network (which lets the
//! server expire the session) — into runs on a real ZooKeeper.
//!
//! Clients connect to the proxy's port; each accepted connection is relayed
//! to the server by two threads (one per direction). This is harness code
//! around a real run, not part of a simulated one, so OS threads are fine.
//!
//! The relay moves whole packets (see [`crate::wire`]) and holds a paused
//! direction at packet boundaries. It counts the requests and replies it
//! has read, so that a conductor can tell that a request is held on the
//! wire or that the server has answered it (it applied it) while the
//! answer is held; and it keeps the multi replies it passed on, decoded, so
//! that a failed multi's per-op codes can be read as the server sent them.

use std::io::{self, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::wire::{self, MultiReply};

mod relay;
use relay::accept_loop;

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
    /// Both ends of every open relayed connection, with its number.
    open: Mutex<Vec<(u64, TcpStream, TcpStream)>>,
    /// Client → server bytes are held.
    paused_up: AtomicBool,
    /// Server → client bytes are held.
    paused_down: AtomicBool,
    stopping: AtomicBool,
    /// New connections are closed as soon as they are accepted (a server
    /// that refuses clients, or a host the client cannot reach).
    refusing: AtomicBool,
    /// The bytes are not ZooKeeper client packets (a quorum link): relay
    /// them as they come, unframed and uninspected.
    raw: AtomicBool,
    /// A quorum link: the server→client direction (leader→follower) is cut
    /// into quorum packets, so that transactions can be held alone.
    quorum: AtomicBool,
    /// Transactions from the leader are held (pings and the rest pass).
    holding_txns: AtomicBool,
    /// A quorum link's leader sent a snapshot on the latest connection:
    /// the rest of it is relayed unframed, and cannot hold transactions.
    unframed: AtomicBool,
    /// How many connections were accepted (refused ones included).
    accepted: AtomicU64,
    /// How many connections the server closed before answering the
    /// session handshake: it refused the client.
    unanswered: AtomicU64,
    /// What the relays read and passed on.
    tap: Mutex<Tap>,
    /// Numbers the accepted connections (xids are per connection).
    next_conn: AtomicU64,
}

#[derive(Debug, Default)]
struct Tap {
    /// Client requests (xid > 0: not pings, auth, `SetWatches`) read so far.
    requests: usize,
    /// Server replies to such requests read so far (held or not).
    replies: usize,
    /// `(connection, xid)` of every multi request read.
    multis: Vec<(u64, i32)>,
    /// Multi replies passed on to the client (or on their way to it),
    /// oldest first.
    multi_replies: Vec<RecordedReply>,
    next_serial: u64,
}

/// A multi reply read from the server, recorded before it is written to
/// the client so that it is there by the time the client can act on it.
#[derive(Debug)]
struct RecordedReply {
    /// To take it back if it never reaches the client.
    serial: u64,
    conn: u64,
    /// Its writer got past the pause and is writing (or wrote) it: a
    /// broken connection leaves it to that write to take it back if it
    /// fails, rather than take back a reply the client may already read.
    written: bool,
    reply: MultiReply,
}

impl Tap {
    /// A recorded multi reply that will never reach its client.
    fn forget(&mut self, serial: u64) {
        self.multi_replies.retain(|r| r.serial != serial);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Up,
    Down,
}

impl Shared {
    fn tap(&self) -> std::sync::MutexGuard<'_, Tap> {
        self.tap.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Note what `frame` is; returns the serial of a multi reply recorded
    /// as passed on (before it is written, so that it is there by the time
    /// the client can act on it).
    fn inspect(&self, direction: Direction, conn: u64, frame: &[u8]) -> Option<u64> {
        let mut tap = self.tap();
        match direction {
            Direction::Up => {
                let (xid, op) = wire::request_header(frame)?;
                if xid > 0 {
                    tap.requests += 1;
                    if op == wire::OP_MULTI {
                        tap.multis.push((conn, xid));
                    }
                }
                None
            }
            Direction::Down => {
                let reply = wire::reply(frame)?;
                if reply.xid <= 0 {
                    return None;
                }
                tap.replies += 1;
                let at = tap.multis.iter().position(|&m| m == (conn, reply.xid))?;
                tap.multis.remove(at);
                let decoded = wire::multi_response(reply.err, reply.body).unwrap_or(MultiReply {
                    header_err: reply.err,
                    entries: Vec::new(),
                });
                let serial = tap.next_serial;
                tap.next_serial += 1;
                tap.multi_replies.push(RecordedReply {
                    serial,
                    conn,
                    written: false,
                    reply: decoded,
                });
                Some(serial)
            }
        }
    }

    /// Write a frame on; a multi reply recorded for it is marked as being
    /// written first, and taken back if the write fails. The mark comes
    /// before the write and no lock is held across it, so a client that is
    /// slow to read never blocks the conductor on the tap: a connection
    /// broken between mark and write fails the write, which takes it back.
    fn pass_on(&self, to: &mut TcpStream, frame: &[u8], recorded: Option<u64>) -> bool {
        if let Some(serial) = recorded {
            let mut tap = self.tap();
            if let Some(r) = tap.multi_replies.iter_mut().find(|r| r.serial == serial) {
                r.written = true;
            }
        }
        let ok = to.write_all(frame).is_ok();
        if let (false, Some(serial)) = (ok, recorded) {
            self.tap().forget(serial);
        }
        ok
    }

    /// Break every open connection. Multi replies still held for them will
    /// never reach their client: they are taken back now, not when their
    /// writer next tries (it may be asleep in a pause), so that a later
    /// multi on a new connection is not matched with a stale reply.
    fn drop_all(&self) {
        let open = std::mem::take(&mut *self.open.lock().unwrap_or_else(PoisonError::into_inner));
        for (_, client, server) in &open {
            let _ = client.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
        }
        self.tap()
            .multi_replies
            .retain(|r| r.written || !open.iter().any(|(conn, _, _)| *conn == r.conn));
    }
}

impl FaultProxy {
    /// Listen on a free loopback port and relay to `upstream`.
    pub fn start(upstream: SocketAddr) -> io::Result<FaultProxy> {
        FaultProxy::start_with(upstream, false)
    }

    /// Listen on a free loopback port and relay a ZooKeeper quorum link
    /// (a follower connecting to `upstream`, a server's quorum port): bytes
    /// are passed on as read, held by [`FaultProxy::pause`] and friends;
    /// the leader→follower direction is also cut into quorum packets for
    /// [`FaultProxy::hold_transactions`]. Nothing is counted.
    pub fn start_quorum(upstream: SocketAddr) -> io::Result<FaultProxy> {
        FaultProxy::start_with(upstream, true)
    }

    fn start_with(upstream: SocketAddr, quorum: bool) -> io::Result<FaultProxy> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let port = listener.local_addr()?.port();
        let shared = Arc::new(Shared::default());
        shared.raw.store(quorum, Ordering::SeqCst);
        shared.quorum.store(quorum, Ordering::SeqCst);
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

    /// The proxy's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Close every connection accepted from now on at once (open ones are
    /// left alone): to a client, a server it cannot use.
    pub fn refuse(&self) {
        self.shared.refusing.store(true, Ordering::SeqCst);
    }

    /// On a quorum link: hold the transactions the leader sends (proposals,
    /// commits, syncs) while its pings and session revalidations pass — a
    /// follower that is behind, not cut off. The leader drops a follower
    /// that acks no proposal for `syncLimit` ticks, so this must end sooner.
    pub fn hold_transactions(&self) {
        self.shared.holding_txns.store(true, Ordering::SeqCst);
    }

    /// Whether the latest connection on a quorum link went unframed (its
    /// leader synced the follower with a snapshot): transactions on it
    /// cannot be held until the follower reconnects.
    pub fn unframed(&self) -> bool {
        self.shared.unframed.load(Ordering::SeqCst)
    }

    /// Let held transactions flow, in order, ahead of anything newer.
    pub fn release_transactions(&self) {
        self.shared.holding_txns.store(false, Ordering::SeqCst);
    }

    /// Relay new connections again.
    pub fn admit(&self) {
        self.shared.refusing.store(false, Ordering::SeqCst);
    }

    /// How many connections the proxy accepted so far, refused ones included.
    pub fn accepted(&self) -> u64 {
        self.shared.accepted.load(Ordering::SeqCst)
    }

    /// How many connections the server closed without answering the
    /// client's session handshake: the server refused the client (it is
    /// behind the client's zxid, S26, or not serving).
    pub fn refused_by_server(&self) -> u64 {
        self.shared.unanswered.load(Ordering::SeqCst)
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

    /// Hold only what the server sends: requests still reach it and it
    /// applies them, but their answers (and notifications) stay in flight.
    pub fn pause_replies(&self) {
        self.shared.paused_down.store(true, Ordering::SeqCst);
    }

    /// How many client requests (not pings, auth or `SetWatches`) the proxy
    /// has read from clients, including held ones.
    pub fn requests_seen(&self) -> usize {
        self.shared.tap().requests
    }

    /// How many server replies to client requests the proxy has read,
    /// including held ones: a reply read means the server answered.
    pub fn replies_seen(&self) -> usize {
        self.shared.tap().replies
    }

    /// The oldest multi reply passed on to a client and not yet taken, if
    /// `wanted` accepts it (it stays otherwise).
    pub fn next_multi_reply_if(
        &self,
        wanted: impl FnOnce(&MultiReply) -> bool,
    ) -> Option<MultiReply> {
        let mut tap = self.shared.tap();
        let first = tap.multi_replies.first()?;
        wanted(&first.reply).then(|| tap.multi_replies.remove(0).reply)
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
