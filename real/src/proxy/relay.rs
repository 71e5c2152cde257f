//! The relay threads behind a [`FaultProxy`](super::FaultProxy): one
//! acceptor, and per connection a reader and a writer each way, joined by
//! a queue so that what follows a held packet is still read (and counted).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, PoisonError};
use std::thread;

use super::{Direction, Shared, PAUSE_POLL};
use crate::{quorum_wire, wire};

pub(super) fn accept_loop(listener: TcpListener, upstream: SocketAddr, shared: Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        shared.accepted.fetch_add(1, Ordering::SeqCst);
        if shared.refusing.load(Ordering::SeqCst) {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        }
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
        let conn = shared.next_conn.fetch_add(1, Ordering::SeqCst);
        shared.unframed.store(false, Ordering::SeqCst);
        shared
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((conn, client_kept, server_kept));
        let up = shared.clone();
        let down = shared.clone();
        let client_gone = Arc::new(AtomicBool::new(false));
        let gone = client_gone.clone();
        let _ = thread::Builder::new()
            .name("zk-proxy-up".into())
            .spawn(move || relay(client_reader, server, Direction::Up, conn, up, &gone));
        let _ = thread::Builder::new()
            .name("zk-proxy-down".into())
            .spawn(move || {
                relay(
                    server_reader,
                    client,
                    Direction::Down,
                    conn,
                    down,
                    &client_gone,
                )
            });
    }
}

/// Copy `from` to `to` packet by packet until either end closes, holding
/// each packet while its direction is paused. A held packet is lost if the
/// connection is dropped meanwhile.
///
/// Reading and writing are two threads joined by a queue, so that packets
/// behind a held one are still read (and counted) while it waits.
/// `client_gone` is set once the client closed its end: the server closing
/// the connection after that did not refuse the client.
fn relay(
    from: TcpStream,
    to: TcpStream,
    direction: Direction,
    conn: u64,
    shared: Arc<Shared>,
    client_gone: &AtomicBool,
) {
    let (queue, held) = mpsc::channel::<Queued>();
    let writer_shared = shared.clone();
    let (Ok(from_kept), Ok(to_kept)) = (from.try_clone(), to.try_clone()) else {
        return;
    };
    let writer = thread::Builder::new()
        .name("zk-proxy-writer".into())
        .spawn(move || write_held(held, to_kept, from_kept, direction, &writer_shared));
    if writer.is_err() {
        return;
    }
    read_frames(from, direction, conn, &shared, &queue, client_gone);
    // Dropping the queue lets the writer pass on what is left, then stop.
    drop(queue);
}

/// What a reader hands its writer: the bytes, the serial of a recorded
/// multi reply, and whether it is a quorum transaction.
type Queued = (Vec<u8>, Option<u64>, bool);

fn read_frames(
    mut from: TcpStream,
    direction: Direction,
    conn: u64,
    shared: &Shared,
    queue: &mpsc::Sender<Queued>,
    client_gone: &AtomicBool,
) {
    let mut buf = [0u8; 16 * 1024];
    let raw = shared.raw.load(Ordering::SeqCst);
    // Leader→follower packets, until a snapshot (raw bytes) comes.
    let mut packets = shared.quorum.load(Ordering::SeqCst) && direction == Direction::Down;
    let mut pending = Vec::new();
    // The first packet each way is the session handshake, not a request/reply.
    let mut handshake = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => {
                if direction == Direction::Up {
                    client_gone.store(true, Ordering::SeqCst);
                } else if handshake && !raw && !client_gone.load(Ordering::SeqCst) {
                    shared.unanswered.fetch_add(1, Ordering::SeqCst);
                }
                return;
            }
            Ok(n) => n,
        };
        if packets {
            pending.extend_from_slice(&buf[..n]);
            while let Some((packet, kind)) = quorum_wire::take_packet(&mut pending) {
                let txn = quorum_wire::is_transaction(kind);
                if queue.send((packet, None, txn)).is_err() {
                    return;
                }
                if kind == quorum_wire::SNAP {
                    // The snapshot follows unframed: relay the rest raw.
                    packets = false;
                    shared.unframed.store(true, Ordering::SeqCst);
                    if queue
                        .send((std::mem::take(&mut pending), None, false))
                        .is_err()
                    {
                        return;
                    }
                    break;
                }
            }
            continue;
        }
        if raw {
            if queue.send((buf[..n].to_vec(), None, false)).is_err() {
                return;
            }
            continue;
        }
        pending.extend_from_slice(&buf[..n]);
        while let Some(frame) = wire::take_frame(&mut pending) {
            let recorded = if handshake {
                None
            } else {
                shared.inspect(direction, conn, &frame)
            };
            handshake = false;
            if queue.send((frame, recorded, false)).is_err() {
                return;
            }
        }
    }
}

fn write_held(
    held: mpsc::Receiver<Queued>,
    mut to: TcpStream,
    from: TcpStream,
    direction: Direction,
    shared: &Shared,
) {
    let paused = match direction {
        Direction::Up => &shared.paused_up,
        Direction::Down => &shared.paused_down,
    };
    let mut broken = false;
    // Transactions held back while `holding_txns`, in order.
    let mut deferred: std::collections::VecDeque<Vec<u8>> = Default::default();
    loop {
        let holding = shared.holding_txns.load(Ordering::SeqCst);
        if !holding && !deferred.is_empty() && !broken {
            wait_while_paused(paused, shared);
            while let Some(frame) = deferred.pop_front() {
                if to.write_all(&frame).is_err() {
                    broken = true;
                    let _ = from.shutdown(Shutdown::Both);
                    break;
                }
            }
        }
        let next = if deferred.is_empty() {
            held.recv()
                .map_err(|_| mpsc::RecvTimeoutError::Disconnected)
        } else {
            held.recv_timeout(PAUSE_POLL)
        };
        let (frame, recorded, txn) = match next {
            Ok(item) => item,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        if txn && (holding || !deferred.is_empty()) {
            deferred.push_back(frame);
            continue;
        }
        if !broken {
            wait_while_paused(paused, shared);
            broken = !shared.pass_on(&mut to, &frame, recorded);
            if broken {
                // Ends the reader, which closes the queue.
                let _ = from.shutdown(Shutdown::Both);
            }
        }
        // Behind a failed write nothing more reaches the client: what the
        // reader still queues is taken back, not left recorded.
        if broken {
            if let Some(serial) = recorded {
                shared.tap().forget(serial);
            }
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
