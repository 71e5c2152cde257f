//! The server's logic, sans-IO: the simulated ensemble (one
//! `zksim::World` of [`Remote`] clients) behind ZooKeeper 3.8's protocol.
//!
//! The engine takes [`Input`]s — a connection accepted on a simulated
//! server, bytes received, a connection closed, a tick of simulated time —
//! and returns [`Output`]s: bytes to send, connections to close (with a
//! reason). It owns no socket and reads no clock, so the same inputs give
//! the same outputs on every run: a recorded input list replays to the
//! same trace (issue 32 builds histories and replay on that).
//!
//! After each input the engine runs the world to rest: the servers take
//! every request waiting, followers apply every committed transaction, and
//! every message for a client is handled and encoded — in the world's own
//! event order (`World::enabled`), never a hash order. Followers lag only
//! within one input, unless the fault plan ([`faults`]) makes one lag or
//! cuts it from the leader for some ticks.
//!
//! With [`Engine::record_history`] the engine also writes down what it
//! did, input by input ([`recorder`], docs/HISTORY.md).

mod close;
mod connection;
pub mod faults;
mod four_letter;
pub mod history;
mod inject;
mod recorder;
mod session;
pub mod translate;

use std::collections::{BTreeMap, BTreeSet};

use zkjudge::history::{Record, SessionEvent as SessionRecord};
use zksim::{
    ClientId, Config, Delivery, Event, FaultBudget, Happening, Op, Refusal, Remote, ServerId,
    SessionEvent, SessionId, SetWatches, Tick, World, ZkError, Zxid,
};
use zkwire::{
    encode_connect_response, encode_notification, encode_reply, write_frame, ConnectResponse,
    DecodeErrorKind, ReplyHeader, Request,
};

pub use close::CloseReason;
use connection::{Conn, ConnState};
use faults::{Aim, FaultSpec, Faults};
pub use four_letter::Whitelist;
pub use recorder::limits_of_meta;
use recorder::Recorder;
use session::{password, NullData, Pending, WireSession};
use translate::{Plan, Shape};

/// A connection, named by the driver (unique for the engine's life).
pub type ConnId = u64;

/// What happened outside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A client connected to the port of simulated server `server`.
    Accepted { conn: ConnId, server: ServerId },
    /// Bytes arrived on a connection.
    Bytes { conn: ConnId, data: Vec<u8> },
    /// The client closed the connection (or it broke).
    Closed { conn: ConnId },
    /// One tick of simulated time passed (`Limits::tick_ms` of wall time).
    Tick,
}

/// What the driver must do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Write these bytes (whole frames) to the connection.
    Send { conn: ConnId, bytes: Vec<u8> },
    /// Flush what was sent, then close the connection.
    Close { conn: ConnId, reason: CloseReason },
}

/// The server's shape and limits. Every limit is enforced by the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Simulated servers (one port each); server 0 leads.
    pub servers: usize,
    /// Wall milliseconds per tick: ZooKeeper's `tickTime`. A session's
    /// timeout is negotiated into [2, 20] ticks, as the real server's
    /// default `minSessionTimeout`/`maxSessionTimeout`.
    pub tick_ms: u64,
    /// The largest frame body accepted (`jute.maxbuffer`, 0xfffff).
    pub max_frame: usize,
    /// Open connections at once; one more is closed on arrival.
    pub max_connections: usize,
    /// Watches one session may hold at its server (one-shot watches set by
    /// reads plus those re-armed by `SetWatches`).
    pub max_watches: usize,
    /// Seeds the session passwords (the only secret-looking thing here;
    /// deterministic so that a run replays).
    pub seed: u64,
    /// The four-letter words answered (`4lw.commands.whitelist`).
    pub four_letter_words: Whitelist,
    /// The wall time (Unix ms) of tick 0, given by the driver: `dump`
    /// prints expiry times as dates. The engine reads no clock.
    pub epoch_ms: u64,
    /// Faults to inject (`--faults`), placed by `seed` ([`faults`]).
    pub faults: FaultSpec,
    /// Which requests the fault plan counts (`--aim`).
    pub aim: Aim,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            servers: 3,
            tick_ms: 2000,
            max_frame: zkwire::DEFAULT_MAX_FRAME,
            max_connections: 1024,
            max_watches: 65_536,
            seed: 0,
            four_letter_words: Whitelist::default(),
            epoch_ms: 0,
            faults: FaultSpec::default(),
            aim: Aim::default(),
        }
    }
}

/// Counters: what the engine did, and every close by reason.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub accepted: u64,
    pub frames_in: u64,
    pub frames_out: u64,
    pub sessions_created: u64,
    pub sessions_reattached: u64,
    pub notifications: u64,
    /// Connections closed by the server, by [`CloseReason::kind`].
    pub closed: BTreeMap<&'static str, u64>,
    /// Connections the client closed with part of a frame unsent.
    pub truncated: u64,
    /// Faults the plan injected (each also a `Fault` history record).
    pub faults: u64,
    /// Faults due that could not be carried out: a second drop at the
    /// same request, a lag or partition of a follower already cut, an
    /// expiry of a session already silenced.
    pub faults_skipped: u64,
}

impl Stats {
    /// Connections closed for hostile or broken input.
    pub fn hostile(&self) -> u64 {
        const HOSTILE: [&str; 6] = [
            "frame-too-large",
            "frame-negative-length",
            "garbage",
            "unsupported-op",
            "bad-path",
            "too-many-watches",
        ];
        HOSTILE
            .iter()
            .map(|k| self.closed.get(k).copied().unwrap_or(0))
            .sum()
    }
}

/// See the module docs.
pub struct Engine {
    limits: Limits,
    world: World<Remote>,
    conns: BTreeMap<ConnId, Conn>,
    /// Per world client (indexed by `ClientId`).
    sessions: Vec<WireSession>,
    /// Live sessions by id, for re-attaching.
    by_session: BTreeMap<SessionId, ClientId>,
    /// What the world did during the current input (reused).
    log: Vec<Happening<()>>,
    /// Which nodes hold null data (the world stores bytes).
    null_data: NullData,
    /// Clients whose `closeSession` is not answered yet.
    closing: BTreeSet<ClientId>,
    stats: Stats,
    /// The fault plan as it unfolds.
    faults: Faults,
    /// Connections holding a silenced session's handshake.
    held: BTreeSet<ConnId>,
    /// The history being recorded, if asked for (boxed: most engines
    /// record nothing).
    rec: Option<Box<Recorder>>,
}

impl Engine {
    pub fn new(limits: Limits) -> Self {
        let config = Config {
            servers: limits.servers.max(1),
            // Simulated time runs as long as the server does.
            max_time: Tick::MAX,
            // The plan's expiries and partitions are the world's faults.
            faults: FaultBudget {
                expiries: limits.faults.expiries,
                partitions: limits.faults.partitions,
                ..FaultBudget::default()
            },
            ..Config::default()
        };
        let faults = Faults::new(&limits.faults, limits.aim.clone(), limits.seed);
        Engine {
            world: World::new(config, Vec::new()),
            limits,
            conns: BTreeMap::new(),
            sessions: Vec::new(),
            by_session: BTreeMap::new(),
            log: Vec::new(),
            null_data: NullData::default(),
            closing: BTreeSet::new(),
            stats: Stats::default(),
            faults,
            held: BTreeSet::new(),
            rec: None,
        }
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    pub fn world(&self) -> &World<Remote> {
        &self.world
    }
    pub fn limits(&self) -> &Limits {
        &self.limits
    }
    /// Open connections.
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// Handle one input, appending what to do to `out`.
    pub fn handle(&mut self, input: Input, out: &mut Vec<Output>) {
        let start = out.len();
        if let Some(rec) = &mut self.rec {
            let n = rec.inputs;
            rec.inputs += 1;
            rec.records.push(Record::Input {
                n,
                input: history::input_record(&input),
            });
        }
        match input {
            Input::Accepted { conn, server } => self.accept(conn, server, out),
            Input::Bytes { conn, data } => self.bytes(conn, &data, out),
            Input::Closed { conn } => self.closed(conn, out),
            Input::Tick => {
                if !self.world.disconnect_undelivered() {
                    self.world.step(&Event::Tick, &mut self.log);
                }
                self.drain_log(out);
                self.end_cuts();
                self.settle(out);
            }
        }
        self.release_held(out);
        if let Some(rec) = &mut self.rec {
            rec.hash_outputs(&out[start..]);
        }
    }

    /// The fault plan's state: what was counted, what is in force.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    fn accept(&mut self, conn: ConnId, server: ServerId, out: &mut Vec<Output>) {
        self.stats.accepted += 1;
        if self.conns.len() >= self.limits.max_connections || server >= self.world.num_servers() {
            let reason = if server >= self.world.num_servers() {
                CloseReason::ServerUnavailable
            } else {
                CloseReason::TooManyConnections
            };
            self.count_close(&reason);
            out.push(Output::Close { conn, reason });
            return;
        }
        self.conns
            .insert(conn, Conn::new(server, self.limits.max_frame));
    }

    fn closed(&mut self, conn: ConnId, out: &mut Vec<Output>) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        if c.reader.buffered() > 0 {
            self.stats.truncated += 1;
        }
        if c.drop_at.is_some() {
            // Closed before the reply the drop waited for.
            self.stats.faults_skipped += 1;
        }
        if let ConnState::Live { client } = c.state {
            self.note_session(c.session, SessionRecord::Disconnected, c.server, conn, None);
            self.sessions[client].conn = None;
            self.sessions[client].awaiting_connect = None;
            self.world.disconnect(client);
            self.settle_client(client, out);
        }
        self.held.remove(&conn);
    }

    fn bytes(&mut self, conn: ConnId, data: &[u8], out: &mut Vec<Output>) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if let Some(first) = c.first_bytes.as_mut() {
            first.extend_from_slice(data);
            if first.len() < 4 {
                return;
            }
            let first = c.first_bytes.take().unwrap_or_default();
            if let Some(word) = four_letter::recognise(&first) {
                let server = c.server;
                let text = self.four_letter_answer(server, word);
                out.push(Output::Send {
                    conn,
                    bytes: text.into_bytes(),
                });
                return self.close(conn, CloseReason::FourLetterWord(word), out);
            }
            c.reader.push(&first);
        } else {
            c.reader.push(data);
        }
        loop {
            let Some(c) = self.conns.get_mut(&conn) else {
                return;
            };
            if matches!(c.state, ConnState::Closing) {
                return;
            }
            match c.reader.pop() {
                Ok(None) => return,
                Ok(Some(frame)) => {
                    self.stats.frames_in += 1;
                    c.frames_in += 1;
                    self.frame(conn, &frame, out);
                }
                Err(e) => {
                    self.close(conn, CloseReason::BadFrame(e), out);
                    return;
                }
            }
        }
    }

    fn frame(&mut self, conn: ConnId, frame: &[u8], out: &mut Vec<Output>) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        match c.state {
            // A silenced session's handshake waits; nothing more is read.
            ConnState::Handshake if c.held.is_some() => {}
            ConnState::Handshake => self.handshake(conn, c.server, frame, out),
            ConnState::Live { client } => self.request(conn, client, frame, out),
            ConnState::Closing => {}
        }
    }

    /// The first frame: a new session, or a re-attach.
    fn handshake(&mut self, conn: ConnId, server: ServerId, frame: &[u8], out: &mut Vec<Output>) {
        let request = match zkwire::decode_connect_request(frame) {
            Ok(r) => r,
            Err(e) => return self.close(conn, CloseReason::Garbage(e), out),
        };
        let (timeout_ms, ticks) = self.negotiate(request.timeout_ms);
        if request.session_id == 0 {
            match self.world.attach(Remote, server, ticks, &mut self.log) {
                Ok((client, session)) => {
                    self.stats.sessions_created += 1;
                    let passwd = password(self.limits.seed, session);
                    debug_assert_eq!(client, self.sessions.len());
                    self.sessions.push(WireSession::new(passwd));
                    self.by_session.insert(session, client);
                    let ms = Some(i64::from(timeout_ms));
                    self.note_session(session, SessionRecord::Created, server, conn, ms);
                    // The connect response is the connection's first frame;
                    // on a follower behind the session's creation it waits
                    // (S39), sent when the world delivers `SyncConnected`.
                    self.bind(conn, client);
                    if self.world.is_connecting(client) {
                        self.sessions[client].awaiting_connect = Some(timeout_ms);
                    } else {
                        self.connect_response(conn, timeout_ms, session, out);
                    }
                    self.settle_client(client, out);
                }
                Err(_) => self.close(conn, CloseReason::ServerUnavailable, out),
            }
            return;
        }
        let known = self
            .by_session
            .get(&request.session_id)
            .copied()
            .filter(|&client| request.passwd == self.sessions[client].passwd);
        let Some(client) = known else {
            self.note_session(
                request.session_id,
                SessionRecord::Refused,
                server,
                conn,
                None,
            );
            return self.refuse_session(conn, out);
        };
        if self.world.is_cut_off(client) {
            // Silenced by the fault plan: no server hears it until the
            // leader has expired the session.
            if let Some(c) = self.conns.get_mut(&conn) {
                c.held = Some((client, frame.to_vec()));
                self.held.insert(conn);
            }
            return;
        }
        if let Some(old) = self.sessions[client].conn.take() {
            self.close(old, CloseReason::Replaced, out);
            self.world.disconnect(client);
            self.settle_client(client, out);
        }
        match self
            .world
            .reattach(client, server, request.last_zxid_seen, ticks, &mut self.log)
        {
            Ok(()) => {
                self.stats.sessions_reattached += 1;
                let ms = Some(i64::from(timeout_ms));
                let session = request.session_id;
                self.note_session(session, SessionRecord::Reattached, server, conn, ms);
                self.bind(conn, client);
                self.connect_response(conn, timeout_ms, request.session_id, out);
                self.settle_client(client, out);
            }
            Err(Refusal::Expired) => {
                self.by_session.remove(&request.session_id);
                self.note_session(
                    request.session_id,
                    SessionRecord::Refused,
                    server,
                    conn,
                    None,
                );
                self.refuse_session(conn, out);
            }
            Err(Refusal::Behind {
                server_zxid,
                seen_zxid,
            }) => self.close(
                conn,
                CloseReason::ClientAhead {
                    seen: seen_zxid,
                    applied: server_zxid,
                },
                out,
            ),
            Err(_) => self.close(conn, CloseReason::ServerUnavailable, out),
        }
    }

    /// A requested timeout (ms) clamped to [2, 20] ticks, and in ticks
    /// (rounded up: the leader never expires a session early).
    fn negotiate(&self, requested_ms: i32) -> (i32, Tick) {
        let tick = self.limits.tick_ms.max(1);
        let ms = u64::try_from(requested_ms)
            .unwrap_or(0)
            .clamp(2 * tick, 20 * tick);
        (i32::try_from(ms).unwrap_or(i32::MAX), ms.div_ceil(tick))
    }

    fn connect_response(
        &mut self,
        conn: ConnId,
        timeout_ms: i32,
        session: SessionId,
        out: &mut Vec<Output>,
    ) {
        let passwd = password(self.limits.seed, session);
        let body = encode_connect_response(&ConnectResponse {
            protocol_version: 0,
            timeout_ms,
            session_id: session,
            passwd: passwd.to_vec(),
            read_only: Some(false),
        });
        self.send(conn, &body, out);
    }

    /// `finishSessionInit(cnxn, false)`: timeOut 0, session 0, a zero
    /// password, then the connection closes. The client reports Expired.
    fn refuse_session(&mut self, conn: ConnId, out: &mut Vec<Output>) {
        let body = encode_connect_response(&ConnectResponse {
            protocol_version: 0,
            timeout_ms: 0,
            session_id: 0,
            passwd: vec![0; 16],
            read_only: Some(false),
        });
        self.send(conn, &body, out);
        self.close(conn, CloseReason::SessionInvalid, out);
    }

    fn bind(&mut self, conn: ConnId, client: ClientId) {
        let session = self.world.session_of(client);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.state = ConnState::Live { client };
            c.session = session;
        }
        self.sessions[client].conn = Some(conn);
    }

    /// A request on a live connection.
    fn request(&mut self, conn: ConnId, client: ClientId, frame: &[u8], out: &mut Vec<Output>) {
        let (header, request) = match zkwire::decode_request(frame) {
            Ok(decoded) => decoded,
            Err(e) => {
                if let (DecodeErrorKind::UnknownOp(opcode), Some(xid)) = (&e.kind, xid_of(frame)) {
                    if e.field == "RequestHeader.type" {
                        return self.unsupported(conn, xid, *opcode, out);
                    }
                }
                return self.close(conn, CloseReason::Garbage(e), out);
            }
        };
        let server = self.conns[&conn].server;
        let xid = header.xid;
        if self.world.is_cut_off(client) {
            // A silenced session's packets reach no server.
            return;
        }
        if self.recording() {
            let op = history::op_record(header.op, &request);
            let session = self.world.session_of(client);
            let t = self.world.now();
            self.note(|_| Record::Request {
                t,
                session,
                server,
                xid,
                op,
            });
        }
        match request {
            Request::Ping => {
                self.world.heard_from(client);
                let zxid = self.world.applied_zxid(server);
                self.reply(conn, xid, zxid, 0, None, out);
            }
            Request::CloseSession => {
                self.sessions[client].closing = Some(xid);
                self.closing.insert(client);
                if let Some(c) = self.conns.get_mut(&conn) {
                    // Nothing after closeSession is read.
                    c.state = ConnState::Closing;
                }
                self.world.close(client, &mut self.log);
                self.settle_client(client, out);
            }
            Request::SetAuth { scheme, .. } => {
                // The providers a default 3.8 server has: digest, and ip
                // (which authenticates the peer's address).
                if scheme == "digest" || scheme == "ip" {
                    self.reply(conn, xid, 0, 0, None, out);
                } else {
                    self.reply(conn, xid, 0, ZkError::AuthFailed.code(), None, out);
                    self.close(conn, CloseReason::AuthFailed(scheme), out);
                }
            }
            Request::SetWatches {
                relative_zxid,
                data,
                exist,
                child,
            } => self.set_watches(
                conn,
                client,
                xid,
                SetWatches {
                    relative_zxid,
                    data: &data,
                    exist: &exist,
                    child: &child,
                    ..SetWatches::default()
                },
                out,
            ),
            Request::SetWatches2 {
                relative_zxid,
                data,
                exist,
                child,
                persistent,
                persistent_recursive,
            } => self.set_watches(
                conn,
                client,
                xid,
                SetWatches {
                    relative_zxid,
                    data: &data,
                    exist: &exist,
                    child: &child,
                    persistent: &persistent,
                    recursive: &persistent_recursive,
                },
                out,
            ),
            request => match translate::plan(header.op, request) {
                Plan::World {
                    op,
                    shape,
                    multi_ops,
                    path,
                    null_writes,
                } => {
                    if !self.planned_faults(conn, client, xid, &op) {
                        // The request was lost with a silenced session.
                        return;
                    }
                    if sets_watch(&op) {
                        let held = self.watches_held(client) + 1;
                        if held > self.limits.max_watches {
                            let max = self.limits.max_watches;
                            let reason = CloseReason::TooManyWatches { held, max };
                            return self.close(conn, reason, out);
                        }
                    }
                    let id = self.world.submit(client, op, &mut self.log);
                    self.sessions[client].pending.insert(
                        id,
                        Pending {
                            conn,
                            server,
                            xid,
                            shape,
                            multi_ops,
                            path,
                            null_writes,
                        },
                    );
                    self.settle_client(client, out);
                }
                Plan::Error(err) => {
                    self.world.heard_from(client);
                    let zxid = self.world.applied_zxid(server);
                    self.reply(conn, xid, zxid, err, None, out);
                }
                Plan::Reply(response) => {
                    self.world.heard_from(client);
                    let zxid = self.world.applied_zxid(server);
                    self.reply(conn, xid, zxid, 0, Some(&response), out);
                }
                Plan::Unsupported(opcode) => self.unsupported(conn, xid, opcode, out),
                Plan::BadPath(path) => self.close(conn, CloseReason::BadPath(path), out),
            },
        }
    }

    /// `setWatches` / `setWatches2`: the missed events, then the reply.
    fn set_watches(
        &mut self,
        conn: ConnId,
        client: ClientId,
        xid: i32,
        watches: SetWatches<'_>,
        out: &mut Vec<Output>,
    ) {
        let wanted = watches.data.len()
            + watches.exist.len()
            + watches.child.len()
            + watches.persistent.len()
            + watches.recursive.len();
        let held = self.watches_held(client) + wanted;
        if held > self.limits.max_watches {
            let max = self.limits.max_watches;
            return self.close(conn, CloseReason::TooManyWatches { held, max }, out);
        }
        self.world.heard_from(client);
        if let Some(server) = self.world.server_of(client) {
            self.forget_firing(server);
        }
        self.world.set_watches(client, &watches);
        self.settle_client(client, out);
        if let Some(c) = self.conns.get(&conn) {
            let zxid = self.world.applied_zxid(c.server);
            self.reply(conn, xid, zxid, 0, None, out);
        }
    }

    /// `UnimplementedRequestProcessor`: an Unimplemented reply with the
    /// unprocessed request's zxid, -1 (as the real 3.8.0 server answers
    /// opcode 999 in the codec's golden frames), then close.
    fn unsupported(&mut self, conn: ConnId, xid: i32, opcode: i32, out: &mut Vec<Output>) {
        self.reply(conn, xid, -1, ZkError::Unimplemented.code(), None, out);
        self.close(conn, CloseReason::Unsupported(opcode), out);
    }

    fn watches_held(&self, client: ClientId) -> usize {
        match self.world.server_of(client) {
            Some(server) => self
                .world
                .watches_held(server, self.world.session_of(client)),
            None => 0,
        }
    }

    /// Run the world to rest and send what its clients received.
    fn settle(&mut self, out: &mut Vec<Output>) {
        self.settle_from(None, out);
    }

    /// [`Engine::settle`] after an input that touched one client only.
    fn settle_client(&mut self, client: ClientId, out: &mut Vec<Output>) {
        self.settle_from(Some(client), out);
    }

    /// Step every delivery, request and follower apply there is: a
    /// client's waiting messages first (so each reply and notification is
    /// encoded right after the step that produced it, while its server's
    /// applied zxid is still the one it was answered at: the history's
    /// `applied` and `Notify.zxid`), then requests, then applies (the world's
    /// order among those, each by id), looking only at the clients that
    /// may have one: `first` (or all), and those each step wrote
    /// (`World::step_noting`). A remote client's delivery changes nothing
    /// in the world but its own slot, so delivering first moves no reply's
    /// content, only the order of outputs across connections. A lagging
    /// follower (fault plan) applies nothing.
    fn settle_from(&mut self, first: Option<ClientId>, out: &mut Vec<Output>) {
        let mut dirty: BTreeSet<ClientId> = match first {
            Some(client) => BTreeSet::from([client]),
            None => (0..self.world.num_clients()).collect(),
        };
        let mut written = Vec::new();
        loop {
            self.drain_log(out);
            let Some(event) = self.next_event(&mut dirty) else {
                break;
            };
            written.clear();
            self.world.step_noting(&event, &mut self.log, &mut written);
            dirty.extend(written.iter().copied());
        }
        self.finish_closes(out);
    }

    fn next_event(&self, dirty: &mut BTreeSet<ClientId>) -> Option<Event> {
        let world = &self.world;
        dirty.retain(|&client| {
            let ready = world.client_readiness(client);
            ready.request || ready.receive
        });
        if let Some(&client) = dirty
            .iter()
            .find(|&&client| world.client_readiness(client).receive)
        {
            return Some(Event::Receive { client });
        }
        if let Some(&client) = dirty
            .iter()
            .find(|&&client| world.client_readiness(client).request)
        {
            return Some(Event::Request { client });
        }
        (1..world.num_servers())
            .find(|&server| world.apply_enabled(server) && !self.faults.is_lagging(server))
            .map(|server| Event::Apply { server })
    }

    /// Encode what the world delivered, in its order.
    fn drain_log(&mut self, out: &mut Vec<Output>) {
        let log = std::mem::take(&mut self.log);
        let mut last_commit: Option<(Zxid, SessionId)> = None;
        if self.recording() {
            self.note_step(&log);
        }
        for happening in &log {
            match happening {
                Happening::Committed { zxid, session } => last_commit = Some((*zxid, *session)),
                Happening::SessionEnded { session, expired } => {
                    if let Some(&client) = self.by_session.get(session) {
                        if !expired {
                            if let Some((zxid, s)) = last_commit {
                                if s == *session {
                                    self.sessions[client].close_zxid = Some(zxid);
                                }
                            }
                        }
                        self.by_session.remove(session);
                    }
                }
                Happening::Delivered { client, delivery } => {
                    self.deliver(*client, delivery, out);
                }
                _ => {}
            }
        }
        self.log = log;
        self.log.clear();
    }

    fn deliver(&mut self, client: ClientId, delivery: &Delivery, out: &mut Vec<Output>) {
        let conn = self.sessions[client].conn;
        match delivery {
            Delivery::Reply { op, reply } => {
                let Some(pending) = self.sessions[client].pending.remove(op) else {
                    return;
                };
                let zxid = self.world.client_last_zxid(client);
                // An answer for a connection that is gone was lost with it.
                if conn != Some(pending.conn) {
                    if self.recording() {
                        let (err, body) = translate::response(
                            pending.shape,
                            reply.clone(),
                            &pending.multi_ops,
                            &pending.path,
                        );
                        let session = self.world.session_of(client);
                        self.note_lost_reply(session, &pending, zxid, err, body.as_ref());
                    }
                    return;
                }
                self.null_data.note(&pending, reply);
                let (err, mut body) = translate::response(
                    pending.shape,
                    reply.clone(),
                    &pending.multi_ops,
                    &pending.path,
                );
                self.null_data.restore(&pending, &mut body);
                let applied = self
                    .conns
                    .get(&pending.conn)
                    .filter(|_| is_read(pending.shape))
                    .map(|c| self.world.applied_zxid(c.server));
                let reply = Reply {
                    xid: pending.xid,
                    zxid,
                    err,
                    body: body.as_ref(),
                    applied,
                };
                self.reply_with(pending.conn, reply, out);
            }
            Delivery::Watch(event) => {
                if let Some(conn) = conn {
                    self.note_notify(client, conn, event);
                    self.stats.notifications += 1;
                    // ZooKeeper 3.8 sends notifications with zxid -1
                    // (`NIOServerCnxn.process`).
                    let body = encode_notification(-1, &translate::watcher_event(event));
                    self.send(conn, &body, out);
                }
            }
            Delivery::Session(SessionEvent::Disconnected) => {
                // The server closed the connection of a session it ended.
                if let Some(conn) = self.sessions[client].conn.take() {
                    if self.sessions[client].closing.is_none() {
                        self.close(conn, CloseReason::SessionEnded, out);
                    } else {
                        self.sessions[client].conn = Some(conn);
                    }
                }
            }
            Delivery::Session(SessionEvent::SyncConnected) => {
                // A new session's server applied its creation (S39).
                if let (Some(timeout_ms), Some(conn)) =
                    (self.sessions[client].awaiting_connect.take(), conn)
                {
                    let session = self.world.session_of(client);
                    self.connect_response(conn, timeout_ms, session, out);
                }
            }
            Delivery::Session(_) => {}
        }
    }

    /// Answer every `closeSession` that is done, then close its connection.
    fn finish_closes(&mut self, out: &mut Vec<Output>) {
        if self.closing.is_empty() {
            return;
        }
        for client in self.closing.clone() {
            let Some(xid) = self.sessions[client].closing else {
                self.closing.remove(&client);
                continue;
            };
            if !self.world.is_handle_dead(client) {
                continue;
            }
            self.sessions[client].closing = None;
            self.closing.remove(&client);
            let Some(conn) = self.sessions[client].conn.take() else {
                continue;
            };
            let zxid = self.sessions[client]
                .close_zxid
                .unwrap_or_else(|| self.world.last_zxid());
            self.reply(conn, xid, zxid, 0, None, out);
            self.close(conn, CloseReason::SessionClosed, out);
        }
    }

    fn reply(
        &mut self,
        conn: ConnId,
        xid: i32,
        zxid: Zxid,
        err: i32,
        body: Option<&zkwire::Response>,
        out: &mut Vec<Output>,
    ) {
        let reply = Reply {
            xid,
            zxid,
            err,
            body,
            applied: None,
        };
        self.reply_with(conn, reply, out);
    }

    /// Send a reply (recorded), unless a planned drop takes the
    /// connection first; a drop planned after it closes the connection
    /// once it is sent.
    fn reply_with(&mut self, conn: ConnId, reply: Reply<'_>, out: &mut Vec<Output>) {
        let drop = self
            .conns
            .get(&conn)
            .and_then(|c| c.drop_at.as_ref())
            .filter(|&&(xid, _, _)| xid == reply.xid)
            .map(|&(_, before_reply, _)| before_reply);
        self.note_reply(conn, &reply, drop == Some(true));
        if drop != Some(true) {
            let header = ReplyHeader {
                xid: reply.xid,
                zxid: reply.zxid,
                err: reply.err,
            };
            let bytes = encode_reply(&header, reply.body);
            self.send(conn, &bytes, out);
        }
        if let Some(before_reply) = drop {
            self.drop_connection(conn, before_reply, out);
        }
    }

    fn send(&mut self, conn: ConnId, body: &[u8], out: &mut Vec<Output>) {
        self.stats.frames_out += 1;
        if let Some(c) = self.conns.get_mut(&conn) {
            c.frames_out += 1;
        }
        out.push(Output::Send {
            conn,
            bytes: write_frame(body),
        });
    }

    /// Close `conn` (once): its session, if any, is disconnected.
    fn close(&mut self, conn: ConnId, reason: CloseReason, out: &mut Vec<Output>) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        self.count_close(&reason);
        if c.drop_at.is_some() && !matches!(reason, CloseReason::FaultDrop { .. }) {
            // Closed before the reply the drop waited for.
            self.stats.faults_skipped += 1;
        }
        out.push(Output::Close { conn, reason });
        self.held.remove(&conn);
        if let ConnState::Live { client } = c.state {
            if self.sessions[client].conn == Some(conn) {
                self.note_session(c.session, SessionRecord::Disconnected, c.server, conn, None);
                self.sessions[client].conn = None;
                self.world.disconnect(client);
                self.settle_client(client, out);
            }
        }
    }

    fn count_close(&mut self, reason: &CloseReason) {
        *self.stats.closed.entry(reason.kind()).or_insert(0) += 1;
    }
}

/// The xid of a request frame whose header is whole (8 bytes).
fn xid_of(frame: &[u8]) -> Option<i32> {
    let bytes: [u8; 4] = frame.get(..4)?.try_into().ok()?;
    frame.get(..8)?;
    Some(i32::from_be_bytes(bytes))
}

/// A reply to send: its header, body, and for reads the answering
/// server's applied zxid (recorded, not sent).
struct Reply<'a> {
    xid: i32,
    zxid: Zxid,
    err: i32,
    body: Option<&'a zkwire::Response>,
    applied: Option<Zxid>,
}

/// Whether a request of this shape is answered from its server's tree
/// (a read, or a sync), so its reply records the server's applied zxid.
fn is_read(shape: Shape) -> bool {
    matches!(
        shape,
        Shape::Exists
            | Shape::GetData
            | Shape::GetAcl
            | Shape::GetChildren
            | Shape::GetChildren2
            | Shape::Sync
            | Shape::MultiRead
            | Shape::Ephemerals
            | Shape::AllChildrenNumber
    )
}

/// Whether a request may leave a watch at the server.
fn sets_watch(op: &Op) -> bool {
    matches!(
        op,
        Op::Exists { watch: true, .. }
            | Op::GetData { watch: true, .. }
            | Op::GetChildren { watch: true, .. }
            | Op::AddWatch { .. }
    )
}

#[cfg(test)]
mod tests;
