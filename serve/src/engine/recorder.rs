//! The engine's history (issue 32, docs/HISTORY.md), sans-IO: when asked
//! for ([`Engine::record_history`]) the engine appends a
//! `zkjudge::history::Record` for each input and for everything it did
//! with it; the driver takes them ([`Engine::take_records`]) and writes
//! them. Recording changes nothing the engine does: the same inputs give
//! the same outputs with or without it.
//!
//! The trace hash ([`Engine::trace_hash`]) folds every output (bytes sent,
//! connections closed and why) and, at the end, the world's fingerprint:
//! a replay of the recorded inputs must reach it.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use zkjudge::history::{Record, SessionEvent as SessionRecord, TxnRecord, FORMAT, VERSION};
use zksim::fingerprint::StableHasher;
use zksim::{ClientId, CommittedTxn, Happening, OpId, ServerId, SessionId, Zxid};

use super::faults::{Aim, FaultSpec};
use super::session::Pending;
use super::{history, ConnId, Engine, Limits, Output, Whitelist};

#[derive(Default)]
pub(super) struct Recorder {
    pub records: Vec<Record>,
    pub inputs: u64,
    hasher: StableHasher,
    /// Transactions taken from the world, not yet written.
    pub commits: Vec<CommittedTxn>,
    /// Per server, the zxid applied by the last step that applied
    /// anything there, if that step applied exactly one: the transaction
    /// that fired the watch events delivered right after it.
    pub fired_by: BTreeMap<ServerId, Option<Zxid>>,
    /// The request the last `Taken` happening named: a commit in the same
    /// step is its transaction.
    pub last_taken: Option<(ClientId, OpId)>,
}

impl Recorder {
    pub fn hash_outputs(&mut self, outputs: &[Output]) {
        for output in outputs {
            match output {
                Output::Send { conn, bytes } => {
                    0u8.hash(&mut self.hasher);
                    conn.hash(&mut self.hasher);
                    bytes.hash(&mut self.hasher);
                }
                Output::Close { conn, reason } => {
                    1u8.hash(&mut self.hasher);
                    conn.hash(&mut self.hasher);
                    reason.kind().hash(&mut self.hasher);
                }
            }
        }
    }
}

impl Engine {
    /// Record a history from now on (call before the first input).
    pub fn record_history(&mut self) {
        if self.rec.is_none() {
            self.rec = Some(Box::default());
            self.world.keep_commits();
        }
    }

    /// The records made since the last call, in order.
    pub fn take_records(&mut self, out: &mut Vec<Record>) {
        if let Some(rec) = &mut self.rec {
            out.append(&mut rec.records);
        }
    }

    /// The history's first line: everything a replay needs to build the
    /// same engine ([`limits_of_meta`] reads it back).
    pub fn meta(&self) -> Record {
        let l = &self.limits;
        Record::Meta {
            format: FORMAT.into(),
            version: VERSION,
            servers: self.world.num_servers(),
            tick_ms: l.tick_ms,
            seed: l.seed,
            faults: l.faults.to_string(),
            settings: vec![
                ("max_frame".into(), l.max_frame.to_string()),
                ("max_connections".into(), l.max_connections.to_string()),
                ("max_watches".into(), l.max_watches.to_string()),
                ("four_letter_words".into(), l.four_letter_words.text()),
                ("epoch_ms".into(), l.epoch_ms.to_string()),
                ("aim".into(), l.aim.to_string()),
            ],
        }
    }

    /// Inputs handled, and the trace hash so far: every output, then the
    /// world's fingerprint (0 unless recording).
    pub fn trace_hash(&self) -> u64 {
        let Some(rec) = &self.rec else {
            return 0;
        };
        let mut hasher = rec.hasher;
        self.world.fingerprint().hash(&mut hasher);
        hasher.finish()
    }

    /// The history's last line.
    pub fn end_record(&self) -> Record {
        Record::End {
            inputs: self.rec.as_ref().map_or(0, |r| r.inputs),
            trace_hash: format!("{:016x}", self.trace_hash()),
        }
    }

    /// Append a record made from the engine's state, if recording (the
    /// record is not even built otherwise).
    pub(super) fn note(&mut self, make: impl FnOnce(&Engine) -> Record) {
        if self.rec.is_some() {
            let record = make(self);
            if let Some(rec) = &mut self.rec {
                rec.records.push(record);
            }
        }
    }

    pub(super) fn recording(&self) -> bool {
        self.rec.is_some()
    }

    pub(super) fn note_session(
        &mut self,
        session: SessionId,
        event: SessionRecord,
        server: ServerId,
        conn: ConnId,
        timeout_ms: Option<i64>,
    ) {
        let t = self.world.now();
        self.note(|_| Record::Session {
            t,
            session,
            event,
            server: Some(server),
            conn: Some(conn),
            timeout_ms,
        });
    }

    /// What one world step did (its `log`): commits with their
    /// transactions, applies, sessions ended. Deliveries are recorded as
    /// they are encoded (replies, notifications).
    pub(super) fn note_step(&mut self, log: &[Happening<()>]) {
        let Some(rec) = self.rec.as_mut() else {
            return;
        };
        self.world.take_commits(&mut rec.commits);
        rec.last_taken = None;
        let t = self.world.now();
        let mut applied: BTreeMap<ServerId, (Zxid, u32)> = BTreeMap::new();
        let mut records = Vec::new();
        for happening in log {
            match *happening {
                Happening::Taken { client, op, .. } => rec.last_taken = Some((client, op)),
                Happening::Committed { zxid, session } => {
                    let Some(at) = rec.commits.iter().position(|c| c.zxid == zxid) else {
                        continue;
                    };
                    let committed = rec.commits.remove(at);
                    let xid = committed.client.and_then(|client| {
                        let s = &self.sessions[client];
                        match rec.last_taken {
                            Some((c, op)) if c == client => s.pending.get(&op).map(|p| p.xid),
                            _ => s.closing,
                        }
                    });
                    // A close no client asked for is the leader's expiry.
                    let mut txn = history::txn_record(&committed.txn, committed.client.is_none());
                    if let TxnRecord::CreateSession { timeout_ms } = &mut txn {
                        let ticks = self.world.session_timeout_of(session);
                        *timeout_ms = i64::try_from(ticks.saturating_mul(self.limits.tick_ms))
                            .unwrap_or(i64::MAX);
                    }
                    records.push(Record::Commit {
                        t,
                        zxid,
                        session,
                        xid,
                        txn,
                    });
                }
                Happening::Applied { server, zxid } => {
                    let entry = applied.entry(server).or_insert((zxid, 0));
                    *entry = (zxid, entry.1 + 1);
                    records.push(Record::Apply { t, server, zxid });
                }
                Happening::SessionEnded { session, expired } => {
                    let event = if expired {
                        SessionRecord::Expired
                    } else {
                        SessionRecord::Closed
                    };
                    records.push(Record::Session {
                        t,
                        session,
                        event,
                        server: None,
                        conn: None,
                        timeout_ms: None,
                    });
                }
                _ => {}
            }
        }
        for (server, (zxid, count)) in applied {
            rec.fired_by.insert(server, (count == 1).then_some(zxid));
        }
        rec.records.append(&mut records);
    }

    /// The engine answers from its own tables (`setWatches`): events it
    /// derives fired at no one transaction.
    pub(super) fn forget_firing(&mut self, server: ServerId) {
        if let Some(rec) = &mut self.rec {
            rec.fired_by.insert(server, None);
        }
    }

    pub(super) fn note_notify(
        &mut self,
        client: ClientId,
        conn: ConnId,
        event: &zksim::WatchedEvent,
    ) {
        let Some(server) = self.conns.get(&conn).map(|c| c.server) else {
            return;
        };
        let session = self.world.session_of(client);
        let t = self.world.now();
        self.note(|engine| Record::Notify {
            t,
            session,
            server,
            event: history::event_name(event.kind).to_string(),
            path: event.path.clone(),
            zxid: engine
                .rec
                .as_ref()
                .and_then(|r| r.fired_by.get(&server).copied().flatten()),
        });
    }

    pub(super) fn note_reply(&mut self, conn: ConnId, reply: &super::Reply<'_>, lost: bool) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let (session, server) = (c.session, c.server);
        let t = self.world.now();
        self.note(|_| Record::Reply {
            t,
            session,
            server,
            xid: reply.xid,
            zxid: reply.zxid,
            err: reply.err,
            applied: reply.applied,
            result: reply.body.map(history::result_record).unwrap_or_default(),
            lost,
        });
    }

    /// A reply whose connection was gone when the world answered.
    pub(super) fn note_lost_reply(
        &mut self,
        session: SessionId,
        pending: &Pending,
        zxid: Zxid,
        err: i32,
        body: Option<&zkwire::Response>,
    ) {
        let t = self.world.now();
        self.note(|_| Record::Reply {
            t,
            session,
            server: pending.server,
            xid: pending.xid,
            zxid,
            err,
            applied: None,
            result: body.map(history::result_record).unwrap_or_default(),
            lost: true,
        });
    }
}

/// The engine's limits from a history's [`Record::Meta`], for a replay;
/// `Err` names what cannot be read.
pub fn limits_of_meta(meta: &Record) -> Result<Limits, String> {
    let Record::Meta {
        servers,
        tick_ms,
        seed,
        faults,
        settings,
        ..
    } = meta
    else {
        return Err("the first record is not `meta`".into());
    };
    let mut limits = Limits {
        servers: *servers,
        tick_ms: *tick_ms,
        seed: *seed,
        faults: FaultSpec::parse(faults).map_err(|e| format!("meta.faults: {e}"))?,
        ..Limits::default()
    };
    if !(1..=16).contains(servers) {
        return Err(format!("meta.servers = {servers}: 1 to 16"));
    }
    for (name, value) in settings {
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("meta.settings.{name} = {value:?}: not a number"))
        };
        let size = || number().map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        match name.as_str() {
            "max_frame" => limits.max_frame = size()?,
            "max_connections" => limits.max_connections = size()?,
            "max_watches" => limits.max_watches = size()?,
            "four_letter_words" => {
                limits.four_letter_words = Whitelist::parse(value)
                    .map_err(|e| format!("meta.settings.four_letter_words: {e}"))?
            }
            "epoch_ms" => limits.epoch_ms = number()?,
            "aim" => {
                limits.aim = Aim::parse(value).map_err(|e| format!("meta.settings.aim: {e}"))?
            }
            other => return Err(format!("meta.settings: unknown setting {other:?}")),
        }
    }
    Ok(limits)
}
