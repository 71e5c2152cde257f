//! The history file: one [`Record`] per line, as JSON (JSON lines).
//!
//! The first line is [`Record::Meta`]; the last of a finished run is
//! [`Record::End`]. Between them, records appear in the order the server
//! produced them: an [`Record::Input`] first, then everything the engine
//! did while handling it. Ids are the simulator's (`session` is the
//! session id a client sees on the wire; `t` the simulated tick).
//!
//! Why both inputs and what came of them: the inputs alone fix the run
//! (the engine is deterministic), so `serve --replay-input` re-runs them
//! and must reach the same [`Record::End::trace_hash`]; the derived
//! records are what a judge and a reader need without re-running anything.

use std::io::{self, BufRead, Write};

use serde::{Deserialize, Serialize};

/// The format's name in [`Record::Meta`].
pub const FORMAT: &str = "zkcheck-history";
/// Bumped on any incompatible change to [`Record`].
pub const VERSION: u32 = 1;
/// The longest line a reader accepts (a frame is at most 1 MiB, twice that
/// as hex, plus the record around it).
pub const MAX_LINE: usize = 4 << 20;

/// One line of a history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum Record {
    /// The first line: what the server was, so a replay builds the same one.
    Meta {
        format: String,
        version: u32,
        servers: usize,
        tick_ms: u64,
        seed: u64,
        /// The fault plan as given (`drops=2,expiries=1`), empty for none.
        faults: String,
        /// Everything else the engine's behaviour depends on (limits,
        /// four-letter whitelist, …), as `name=value` pairs.
        #[serde(default)]
        settings: Vec<(String, String)>,
    },
    /// An input the engine took, numbered from 0.
    Input { n: u64, input: InputRecord },
    /// A session's life, as the server sees it.
    Session {
        t: u64,
        session: i64,
        event: SessionEvent,
        /// The server the connection is on (for created/reattached/refused).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server: Option<usize>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        conn: Option<u64>,
        /// The negotiated timeout (created/reattached).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<i64>,
    },
    /// A request the server read from a session's connection.
    Request {
        t: u64,
        session: i64,
        server: usize,
        xid: i32,
        op: OpRecord,
    },
    /// The leader ordered a transaction: the truth judges stand on.
    Commit {
        t: u64,
        zxid: i64,
        /// The session whose request (or close/expiry) this is.
        session: i64,
        /// The request's xid, when a request of a connected session made it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        xid: Option<i32>,
        txn: TxnRecord,
    },
    /// A server applied a transaction (followers may lag the leader).
    Apply { t: u64, server: usize, zxid: i64 },
    /// A reply the server sent (or would have sent: `lost` when the
    /// connection it belonged to was gone).
    Reply {
        t: u64,
        session: i64,
        server: usize,
        xid: i32,
        /// The reply header's zxid.
        zxid: i64,
        /// ZooKeeper's error code, 0 for success.
        err: i32,
        /// For reads: the newest zxid the answering server had applied.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        applied: Option<i64>,
        #[serde(default, skip_serializing_if = "ResultRecord::is_empty")]
        result: ResultRecord,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        lost: bool,
    },
    /// A watch notification sent to a session.
    Notify {
        t: u64,
        session: i64,
        server: usize,
        /// `NodeCreated`, `NodeDeleted`, `NodeDataChanged`,
        /// `NodeChildrenChanged`, as ZooKeeper names them.
        event: String,
        path: String,
        /// The transaction that fired it, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        zxid: Option<i64>,
    },
    /// A fault the server injected, with the plan's reason.
    Fault { t: u64, fault: FaultRecord },
    /// The last line of a run that ended cleanly.
    End {
        inputs: u64,
        /// The engine's trace hash: a replay of the inputs must reach it.
        trace_hash: String,
    },
}

/// An engine input. Bytes are hex, so a history is plain text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputRecord {
    Accepted { conn: u64, server: usize },
    Bytes { conn: u64, hex: String },
    Closed { conn: u64 },
    Tick,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionEvent {
    /// A new session (the connect handshake with session id 0).
    Created,
    /// An existing session re-attached on `server`.
    Reattached,
    /// A re-attach refused: the session had expired (timeOut 0 answered).
    Refused,
    /// Its connection closed (by the client, the server or a fault).
    Disconnected,
    /// The leader expired it.
    Expired,
    /// The client closed it.
    Closed,
}

/// A request, in ZooKeeper's words. Data is UTF-8 (lossy) for reading;
/// `data_len` is exact.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpRecord {
    /// ZooKeeper's op name: `create`, `create2`, `delete`, `exists`,
    /// `getData`, `setData`, `getChildren`, `getChildren2`, `sync`,
    /// `check`, `multi`, `multiRead`, `ping`, `closeSession`, `setWatches`,
    /// `addWatch`, …
    pub op: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_len: Option<usize>,
    /// `persistent`, `ephemeral`, `persistent_sequential`,
    /// `ephemeral_sequential`, `container`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The expected version (delete, setData, check); -1 for any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i32>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub watch: bool,
    /// The ops of a multi / multiRead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ops: Vec<OpRecord>,
}

/// A committed transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TxnRecord {
    Create {
        path: String,
        data: String,
        /// The owning session of an ephemeral; 0 otherwise.
        ephemeral_owner: i64,
    },
    Delete {
        path: String,
    },
    /// `version` is the node's new data version.
    SetData {
        path: String,
        data: String,
        version: i32,
    },
    Check {
        path: String,
    },
    Multi {
        txns: Vec<TxnRecord>,
    },
    /// A request that failed preparation still takes a zxid.
    Error {
        err: i32,
    },
    CreateSession {
        timeout_ms: i64,
    },
    /// A close or an expiry, with the ephemerals it deleted.
    CloseSession {
        ephemerals: Vec<String>,
        expired: bool,
    },
}

/// What a successful reply carried (only the fields its op has).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultRecord {
    /// create: the path created (with its sequence suffix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// exists: whether the node exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stat: Option<StatRecord>,
    /// getChildren: names, in the order sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<String>>,
    /// multi / multiRead: one per op, `err` 0 for success.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<OpResultRecord>,
}

impl ResultRecord {
    pub fn is_empty(&self) -> bool {
        *self == ResultRecord::default()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpResultRecord {
    pub err: i32,
    #[serde(default, skip_serializing_if = "ResultRecord::is_empty")]
    pub result: ResultRecord,
}

/// The parts of a Stat judges read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatRecord {
    pub czxid: i64,
    pub mzxid: i64,
    pub version: i32,
    pub cversion: i32,
    pub ephemeral_owner: i64,
    pub num_children: i32,
}

/// A fault, and why the plan chose it here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FaultRecord {
    /// A connection closed by the server.
    Drop {
        conn: u64,
        session: i64,
        reason: String,
    },
    /// A session silenced: no replies, pings unanswered, until the leader
    /// expires it (its reconnect is then answered with timeOut 0).
    Silence { session: i64, reason: String },
    /// A follower stops applying (reads on it go stale) for `ticks`.
    Lag {
        server: usize,
        ticks: u64,
        reason: String,
    },
    /// A follower cut from the leader for `ticks`.
    Partition {
        server: usize,
        ticks: u64,
        reason: String,
    },
    /// A lag or partition ended.
    Heal { server: usize },
}

/// A history that could not be read: the line and what was wrong with it.
#[derive(Debug)]
pub struct ReadError {
    /// 1-based line number (0: the file as a whole).
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for ReadError {}

/// Writes records, one JSON object per line.
pub struct Writer<W: Write> {
    out: W,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W) -> Self {
        Writer { out }
    }

    pub fn write(&mut self, record: &Record) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, record)?;
        self.out.write_all(b"\n")
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Reads a whole history: the first record must be a [`Record::Meta`] of
/// this [`FORMAT`] and [`VERSION`]; no line may exceed [`MAX_LINE`].
pub fn read(input: impl BufRead) -> Result<Vec<Record>, ReadError> {
    Ok(read_numbered(input)?.into_iter().map(|(_, r)| r).collect())
}

/// [`read`], each record with its 1-based line number (blank lines are
/// skipped but counted), so that a judge's story can name the lines that
/// prove it.
pub fn read_numbered(input: impl BufRead) -> Result<Vec<(usize, Record)>, ReadError> {
    let mut records: Vec<(usize, Record)> = Vec::new();
    let mut input = input.take(u64::MAX);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        number += 1;
        let limit = (MAX_LINE + 1) as u64;
        input.set_limit(limit);
        let n = input.read_until(b'\n', &mut line).map_err(|e| ReadError {
            line: number,
            message: e.to_string(),
        })?;
        if n == 0 {
            break;
        }
        if line.len() > MAX_LINE {
            return Err(ReadError {
                line: number,
                message: format!("longer than {MAX_LINE} bytes"),
            });
        }
        let text = std::str::from_utf8(&line).map_err(|e| ReadError {
            line: number,
            message: format!("not UTF-8 at byte {}", e.valid_up_to()),
        })?;
        if text.trim().is_empty() {
            continue;
        }
        let record: Record = serde_json::from_str(text).map_err(|e| ReadError {
            line: number,
            message: format!("column {}: {e}", e.column()),
        })?;
        if records.is_empty() {
            match &record {
                Record::Meta {
                    format, version, ..
                } if format == FORMAT && *version == VERSION => {}
                Record::Meta {
                    format, version, ..
                } => {
                    return Err(ReadError {
                        line: number,
                        message: format!(
                            "a {format} history of version {version}; this zkcheck reads {FORMAT} version {VERSION}"
                        ),
                    })
                }
                _ => {
                    return Err(ReadError {
                        line: number,
                        message: "the first record must be `meta`: is this a zkcheck history?"
                            .into(),
                    })
                }
            }
        }
        records.push((number, record));
    }
    if records.is_empty() {
        return Err(ReadError {
            line: 0,
            message: "empty: a history starts with a `meta` line".into(),
        });
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Record {
        Record::Meta {
            format: FORMAT.into(),
            version: VERSION,
            servers: 3,
            tick_ms: 200,
            seed: 7,
            faults: "drops=1".into(),
            settings: vec![("max_frame".into(), "1048575".into())],
        }
    }

    #[test]
    fn records_round_trip_through_json_lines() {
        let records = vec![
            meta(),
            Record::Input {
                n: 0,
                input: InputRecord::Bytes {
                    conn: 1,
                    hex: "00ff".into(),
                },
            },
            Record::Commit {
                t: 3,
                zxid: 5,
                session: 0x100,
                xid: Some(2),
                txn: TxnRecord::Multi {
                    txns: vec![
                        TxnRecord::Check {
                            path: "/L/a".into(),
                        },
                        TxnRecord::SetData {
                            path: "/R".into(),
                            data: "4".into(),
                            version: 4,
                        },
                    ],
                },
            },
            Record::Reply {
                t: 3,
                session: 0x100,
                server: 1,
                xid: 2,
                zxid: 5,
                err: 0,
                applied: None,
                result: ResultRecord::default(),
                lost: false,
            },
            Record::End {
                inputs: 1,
                trace_hash: "abc".into(),
            },
        ];
        let mut w = Writer::new(Vec::new());
        for r in &records {
            w.write(r).unwrap();
        }
        let bytes = w.into_inner();
        assert_eq!(read(&bytes[..]).unwrap(), records);
    }

    #[test]
    fn a_file_that_is_not_a_history_is_refused_with_its_line() {
        let e = read(&b"{\"k\":\"tick\"}\n"[..]).unwrap_err();
        assert_eq!(e.line, 1);
        let e = read(&b""[..]).unwrap_err();
        assert!(e.message.contains("empty"));
        let mut text = serde_json::to_string(&meta()).unwrap();
        text.push_str("\n{\"k\":\"apply\",\"t\":1}\n");
        let e = read(text.as_bytes()).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
    }

    #[test]
    fn an_overlong_line_is_refused_without_reading_it_all() {
        let mut text = serde_json::to_string(&meta()).unwrap();
        text.push('\n');
        let mut bytes = text.into_bytes();
        bytes.extend(std::iter::repeat_n(b'x', MAX_LINE + 10));
        let e = read(&bytes[..]).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("longer"));
    }
}
