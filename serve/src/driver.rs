//! The thin tokio driver around the [`Engine`]: listening sockets, one task
//! per connection reading into the engine's queue, one writer task per
//! connection, and the wall-clock tick. All logic is the engine's; this
//! file only moves bytes and time.
//!
//! One task owns the engine and handles its inputs one at a time, so the
//! engine sees one sequence of inputs (what issue 32 records and replays).
//! A reader waits when the engine's queue is full (back-pressure on that
//! socket only); a writer's queue is the only per-connection buffer.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use zkjudge::history::{Record, Writer};

use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio::task::JoinHandle;

use crate::engine::{CloseReason, ConnId, Engine, Input, Limits, Output, Stats};
use zksim::ServerId;

/// How to run: the engine's limits, where to listen, what to log.
#[derive(Clone, Debug)]
pub struct Options {
    pub limits: Limits,
    pub bind: IpAddr,
    /// Server `i` listens on `port + i`; 0: ports chosen by the OS.
    pub port: u16,
    /// Log every close, not only those for hostile input.
    pub verbose: bool,
}

/// A running server: its addresses, and how to stop it.
pub struct Running {
    pub addrs: Vec<SocketAddr>,
    control: mpsc::UnboundedSender<Control>,
    task: JoinHandle<Stats>,
}

/// Orders to the engine's task from outside the protocol (tests, the CLI).
enum Control {
    Stop,
    /// Take a server down (drop its connections, refuse new ones) or up.
    Down(ServerId, bool),
    Stats(oneshot::Sender<Stats>),
}

impl Running {
    /// `127.0.0.1:P1,127.0.0.1:P2,...`, the clients' connect string.
    pub fn connect_string(&self) -> String {
        let addrs: Vec<String> = self.addrs.iter().map(|a| a.to_string()).collect();
        addrs.join(",")
    }

    /// Network trouble at one simulated server, not a server fault: while
    /// down its connections are dropped and new ones closed at once (its
    /// clients see a broken connection and move to another server). The
    /// ensemble itself goes on.
    pub fn set_down(&self, server: ServerId, down: bool) {
        let _ = self.control.send(Control::Down(server, down));
    }

    /// The engine's counters so far.
    pub async fn stats(&self) -> Stats {
        let (tx, rx) = oneshot::channel();
        let _ = self.control.send(Control::Stats(tx));
        rx.await.unwrap_or_default()
    }

    /// Stop serving: every connection is closed; returns the counters.
    pub async fn stop(self) -> Stats {
        let _ = self.control.send(Control::Stop);
        self.task.await.unwrap_or_default()
    }
}

/// A connection's writer: bytes to send, then maybe a close.
enum Write {
    Bytes(Vec<u8>),
    Close,
}

struct Peer {
    server: ServerId,
    addr: SocketAddr,
    writer: mpsc::Sender<Write>,
    reader: JoinHandle<()>,
    /// One permit: the reader sends its next chunk only once the engine
    /// has handled the last one, so what it read is counted in `writer`'s
    /// queue before it reads more.
    unhandled: Arc<Semaphore>,
}

/// Frames queued for one client that has not read them yet. A client's
/// socket is read only while fewer than half of these wait (throttling, as
/// ZooKeeper stops reading a connection with too much outstanding), so a
/// client that sends without reading is held back by TCP, not by the
/// server's memory. The bound can still be passed by what was read before
/// the throttle took hold; a client that does is closed (`slow reader`).
const MAX_QUEUED_FRAMES: usize = 65_536;
/// Free room in a client's queue before its socket is read again.
const READ_ROOM: usize = MAX_QUEUED_FRAMES / 2;

/// Bind one port per server and start serving (on the current runtime).
/// The engine's tick 0 is now: `Limits::epoch_ms` is set to the wall clock.
pub async fn start(options: Options) -> io::Result<Running> {
    start_recording(options, None).await
}

/// [`start`], recording the history to `history` (JSON lines,
/// docs/HISTORY.md) when given: created (or truncated) before the ports
/// are served; the last line is written when the server stops.
pub async fn start_recording(
    mut options: Options,
    history: Option<PathBuf>,
) -> io::Result<Running> {
    options.limits.epoch_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let servers = options.limits.servers.max(1);
    let mut listeners = Vec::with_capacity(servers);
    for i in 0..servers {
        let port = if options.port == 0 {
            0
        } else {
            let port = u32::from(options.port) + i as u32;
            u16::try_from(port).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "--port + --servers past 65535")
            })?
        };
        let listener = TcpListener::bind((options.bind, port)).await?;
        listeners.push(listener);
    }
    let addrs = listeners
        .iter()
        .map(|l| l.local_addr())
        .collect::<io::Result<Vec<_>>>()?;
    let history = match &history {
        Some(path) => Some(History::create(path)?),
        None => None,
    };
    let (inputs_tx, inputs) = mpsc::channel::<Event>(1024);
    for (server, listener) in listeners.into_iter().enumerate() {
        tokio::spawn(accept_loop(server, listener, inputs_tx.clone()));
    }
    let (control, control_rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(engine_loop(options, inputs, inputs_tx, control_rx, history));
    Ok(Running {
        addrs,
        control,
        task,
    })
}

/// What the socket tasks tell the engine's task.
enum Event {
    Accepted {
        server: ServerId,
        stream: TcpStream,
        addr: SocketAddr,
    },
    Bytes {
        conn: ConnId,
        data: Vec<u8>,
    },
    Closed {
        conn: ConnId,
    },
}

async fn accept_loop(server: ServerId, listener: TcpListener, events: mpsc::Sender<Event>) {
    loop {
        match listener.accept().await {
            Ok((stream, addr)) => {
                let _ = stream.set_nodelay(true);
                let event = Event::Accepted {
                    server,
                    stream,
                    addr,
                };
                if events.send(event).await.is_err() {
                    return;
                }
            }
            // Out of file descriptors and the like: wait, do not spin.
            Err(e) => {
                eprintln!("zkserve: accept on server {server}: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// The history file: the engine's records, written as they come.
struct History {
    path: PathBuf,
    writer: Option<Writer<BufWriter<File>>>,
    records: Vec<Record>,
}

impl History {
    fn create(path: &PathBuf) -> io::Result<Self> {
        let file = File::create(path)
            .map_err(|e| io::Error::new(e.kind(), format!("--history {}: {e}", path.display())))?;
        Ok(History {
            path: path.clone(),
            writer: Some(Writer::new(BufWriter::new(file))),
            records: Vec::new(),
        })
    }

    /// Write what the engine recorded since last time. A write error is
    /// logged once and ends the recording (the server goes on).
    fn write(&mut self, engine: &mut Engine, flush: bool) {
        engine.take_records(&mut self.records);
        let Some(writer) = &mut self.writer else {
            self.records.clear();
            return;
        };
        let mut result = self.records.drain(..).try_for_each(|r| writer.write(&r));
        if flush {
            result = result.and_then(|()| writer.flush());
        }
        if let Err(e) = result {
            eprintln!(
                "zkserve: --history {}: {e}; recording stopped",
                self.path.display()
            );
            self.writer = None;
        }
    }

    fn write_record(&mut self, record: &Record) {
        if let Some(writer) = &mut self.writer {
            if let Err(e) = writer.write(record) {
                eprintln!("zkserve: --history {}: {e}", self.path.display());
                self.writer = None;
            }
        }
    }
}

/// Hand one input to the engine, and its records to the history.
fn handle(engine: &mut Engine, input: Input, out: &mut Vec<Output>, history: &mut Option<History>) {
    let flush = input == Input::Tick;
    engine.handle(input, out);
    if let Some(h) = history {
        h.write(engine, flush);
    }
}

async fn engine_loop(
    options: Options,
    mut events: mpsc::Receiver<Event>,
    events_tx: mpsc::Sender<Event>,
    mut control: mpsc::UnboundedReceiver<Control>,
    mut history: Option<History>,
) -> Stats {
    let mut engine = Engine::new(options.limits.clone());
    if let Some(h) = &mut history {
        engine.record_history();
        h.write_record(&engine.meta());
    }
    let mut peers: BTreeMap<ConnId, Peer> = BTreeMap::new();
    let mut down = vec![false; engine.world().num_servers()];
    let mut next_conn: ConnId = 0;
    let mut out = Vec::new();
    let mut ticks = tokio::time::interval(Duration::from_millis(options.limits.tick_ms.max(1)));
    ticks.tick().await;
    loop {
        let input = tokio::select! {
            event = events.recv() => match event {
                None => break,
                Some(Event::Accepted { server, stream, addr }) => {
                    let conn = next_conn;
                    next_conn += 1;
                    let (read, write) = stream.into_split();
                    let (writer, writes) = mpsc::channel(MAX_QUEUED_FRAMES);
                    tokio::spawn(write_loop(write, writes));
                    let unhandled = Arc::new(Semaphore::new(1));
                    let reader = tokio::spawn(read_loop(
                        conn,
                        read,
                        events_tx.clone(),
                        writer.clone(),
                        Arc::clone(&unhandled),
                    ));
                    peers.insert(conn, Peer { server, addr, writer, reader, unhandled });
                    if down[server] {
                        drop_peer(&mut peers, conn);
                        continue;
                    }
                    Input::Accepted { conn, server }
                }
                Some(Event::Bytes { conn, data }) => Input::Bytes { conn, data },
                Some(Event::Closed { conn }) => {
                    peers.remove(&conn);
                    Input::Closed { conn }
                }
            },
            _ = ticks.tick() => Input::Tick,
            order = control.recv() => match order {
                None | Some(Control::Stop) => break,
                Some(Control::Stats(reply)) => {
                    let _ = reply.send(engine.stats().clone());
                    continue;
                }
                Some(Control::Down(server, is_down)) => {
                    if let Some(flag) = down.get_mut(server) {
                        *flag = is_down;
                    }
                    if is_down {
                        let conns: Vec<ConnId> = peers
                            .iter()
                            .filter(|(_, p)| p.server == server)
                            .map(|(&c, _)| c)
                            .collect();
                        for conn in conns {
                            drop_peer(&mut peers, conn);
                            handle(&mut engine, Input::Closed { conn }, &mut out, &mut history);
                            dispatch(&mut out, &mut peers, options.verbose);
                        }
                    }
                    continue;
                }
            },
        };
        let read_from = match input {
            Input::Bytes { conn, .. } => Some(conn),
            _ => None,
        };
        handle(&mut engine, input, &mut out, &mut history);
        if let Some(peer) = read_from.and_then(|conn| peers.get(&conn)) {
            peer.unhandled.add_permits(1);
        }
        let slow = dispatch(&mut out, &mut peers, options.verbose);
        for conn in slow {
            eprintln!(
                "zkserve: closed connection {conn}: slow reader, {MAX_QUEUED_FRAMES} frames unread"
            );
            drop_peer(&mut peers, conn);
            handle(&mut engine, Input::Closed { conn }, &mut out, &mut history);
            dispatch(&mut out, &mut peers, options.verbose);
        }
    }
    if let Some(h) = &mut history {
        h.write(&mut engine, false);
        h.write_record(&engine.end_record());
        h.write(&mut engine, true);
    }
    for conn in peers.keys().copied().collect::<Vec<_>>() {
        drop_peer(&mut peers, conn);
    }
    engine.stats().clone()
}

/// Carry out the engine's outputs; returns the connections whose writer
/// queue is full (slow readers), for the caller to drop.
fn dispatch(
    out: &mut Vec<Output>,
    peers: &mut BTreeMap<ConnId, Peer>,
    verbose: bool,
) -> Vec<ConnId> {
    let mut slow = Vec::new();
    for output in out.drain(..) {
        match output {
            Output::Send { conn, bytes } => {
                if let Some(peer) = peers.get(&conn) {
                    if let Err(mpsc::error::TrySendError::Full(_)) =
                        peer.writer.try_send(Write::Bytes(bytes))
                    {
                        if !slow.contains(&conn) {
                            slow.push(conn);
                        }
                    }
                }
            }
            Output::Close { conn, reason } => {
                if let Some(peer) = peers.remove(&conn) {
                    log_close(conn, peer.addr, &reason, verbose);
                    close_writer(peer);
                }
            }
        }
    }
    slow
}

fn drop_peer(peers: &mut BTreeMap<ConnId, Peer>, conn: ConnId) {
    if let Some(peer) = peers.remove(&conn) {
        close_writer(peer);
    }
}

/// Stop reading; let the writer flush what is queued and close. A writer
/// whose queue is full is dropped instead (its frames are lost with the
/// connection, which closes when both halves are gone).
fn close_writer(peer: Peer) {
    peer.reader.abort();
    let _ = peer.writer.try_send(Write::Close);
}

fn log_close(conn: ConnId, addr: SocketAddr, reason: &CloseReason, verbose: bool) {
    if verbose || reason.is_hostile() {
        eprintln!(
            "zkserve: closed connection {conn} from {addr} [{}]: {reason}",
            reason.kind()
        );
    }
}

async fn read_loop(
    conn: ConnId,
    mut read: tokio::net::tcp::OwnedReadHalf,
    events: mpsc::Sender<Event>,
    replies: mpsc::Sender<Write>,
    unhandled: Arc<Semaphore>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        // Throttle: read only once the last chunk was handled and while
        // the client's replies are being taken.
        match unhandled.acquire().await {
            Ok(permit) => permit.forget(),
            Err(_) => break,
        }
        match replies.reserve_many(READ_ROOM).await {
            Ok(room) => drop(room),
            Err(_) => break,
        }
        match read.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let data = buf[..n].to_vec();
                if events.send(Event::Bytes { conn, data }).await.is_err() {
                    return;
                }
            }
        }
    }
    let _ = events.send(Event::Closed { conn }).await;
}

async fn write_loop(mut write: tokio::net::tcp::OwnedWriteHalf, mut writes: mpsc::Receiver<Write>) {
    while let Some(w) = writes.recv().await {
        match w {
            Write::Bytes(bytes) => {
                if write.write_all(&bytes).await.is_err() {
                    return;
                }
            }
            Write::Close => {
                let _ = write.flush().await;
                let _ = write.shutdown().await;
                return;
            }
        }
    }
}
