//! The engine's inputs, requests, transactions and replies as history
//! records (`zkjudge::history`, docs/HISTORY.md): plain data in
//! ZooKeeper's words, and back for the inputs (`--replay-input`).

use zkjudge::history::{
    InputRecord, OpRecord, OpResultRecord, ResultRecord, StatRecord, TxnRecord,
};
use zksim::tree::Txn;
use zkwire::{opcode as op, MultiResult, ReadResult, Request, Response, Stat};

use super::Input;

pub fn input_record(input: &Input) -> InputRecord {
    match input {
        Input::Accepted { conn, server } => InputRecord::Accepted {
            conn: *conn,
            server: *server,
        },
        Input::Bytes { conn, data } => InputRecord::Bytes {
            conn: *conn,
            hex: hex(data),
        },
        Input::Closed { conn } => InputRecord::Closed { conn: *conn },
        Input::Tick => InputRecord::Tick,
    }
}

/// The input a record names; `Err` says what is wrong with its bytes.
pub fn input_of(record: &InputRecord) -> Result<Input, String> {
    Ok(match record {
        InputRecord::Accepted { conn, server } => Input::Accepted {
            conn: *conn,
            server: *server,
        },
        InputRecord::Bytes { conn, hex } => Input::Bytes {
            conn: *conn,
            data: unhex(hex)?,
        },
        InputRecord::Closed { conn } => Input::Closed { conn: *conn },
        InputRecord::Tick => Input::Tick,
    })
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

pub fn unhex(text: &str) -> Result<Vec<u8>, String> {
    if text.len() % 2 != 0 {
        return Err(format!("hex of odd length {}", text.len()));
    }
    let digit = |c: u8, at: usize| -> Result<u8, String> {
        match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            b'A'..=b'F' => Ok(c - b'A' + 10),
            _ => Err(format!("not a hex digit at {at}")),
        }
    };
    text.as_bytes()
        .chunks_exact(2)
        .enumerate()
        .map(|(i, pair)| Ok(digit(pair[0], 2 * i)? << 4 | digit(pair[1], 2 * i + 1)?))
        .collect()
}

fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

fn mode_name(flags: i32) -> &'static str {
    match flags {
        0 => "persistent",
        1 => "ephemeral",
        2 => "persistent_sequential",
        3 => "ephemeral_sequential",
        4 => "container",
        5 => "persistent_with_ttl",
        6 => "persistent_sequential_with_ttl",
        _ => "unknown",
    }
}

fn named(opcode: i32) -> OpRecord {
    OpRecord {
        op: op::name(opcode).unwrap_or("unknown").to_string(),
        ..OpRecord::default()
    }
}

fn with_data(mut record: OpRecord, data: &Option<Vec<u8>>) -> OpRecord {
    if let Some(d) = data {
        record.data = Some(text(d));
        record.data_len = Some(d.len());
    }
    record
}

/// A decoded request in ZooKeeper's words.
pub fn op_record(opcode: i32, request: &Request) -> OpRecord {
    let mut r = named(opcode);
    match request {
        Request::Create {
            path, data, flags, ..
        }
        | Request::CreateTtl {
            path, data, flags, ..
        } => {
            r.path = Some(path.clone());
            r.mode = Some(mode_name(*flags).to_string());
            r = with_data(r, data);
        }
        Request::Delete { path, version } | Request::Check { path, version } => {
            r.path = Some(path.clone());
            r.version = Some(*version);
        }
        Request::Exists { path, watch }
        | Request::GetData { path, watch }
        | Request::GetChildren { path, watch }
        | Request::GetChildren2 { path, watch } => {
            r.path = Some(path.clone());
            r.watch = *watch;
        }
        Request::SetData {
            path,
            data,
            version,
        } => {
            r.path = Some(path.clone());
            r.version = Some(*version);
            r = with_data(r, data);
        }
        Request::GetAcl { path }
        | Request::SetAcl { path, .. }
        | Request::Sync { path }
        | Request::GetAllChildrenNumber { path }
        | Request::RemoveWatches { path, .. }
        | Request::CheckWatches { path, .. } => r.path = Some(path.clone()),
        Request::GetEphemerals { prefix } => r.path = Some(prefix.clone()),
        Request::AddWatch { path, mode } => {
            r.path = Some(path.clone());
            r.mode = Some(
                if *mode == 1 {
                    "persistent_recursive"
                } else {
                    "persistent"
                }
                .into(),
            );
        }
        Request::Multi(ops) => {
            r.ops = ops.iter().map(|m| op_record(m.op, &m.request)).collect();
        }
        Request::MultiRead(reads) => {
            r.ops = reads
                .iter()
                .map(|read| {
                    let opcode = match read {
                        Request::GetChildren { .. } => op::GET_CHILDREN,
                        _ => op::GET_DATA,
                    };
                    op_record(opcode, read)
                })
                .collect();
        }
        Request::SetWatches { .. }
        | Request::SetWatches2 { .. }
        | Request::SetAuth { .. }
        | Request::WhoAmI
        | Request::Ping
        | Request::CloseSession
        | Request::Reconfig { .. }
        | Request::Unknown { .. } => {}
    }
    r
}

/// A committed transaction (a close's or expiry's with its ephemerals).
pub fn txn_record(txn: &Txn, expired: bool) -> TxnRecord {
    match txn {
        Txn::Create {
            path,
            data,
            ephemeral_owner,
        } => TxnRecord::Create {
            path: path.clone(),
            data: text(data),
            ephemeral_owner: *ephemeral_owner,
        },
        Txn::Delete { path } => TxnRecord::Delete { path: path.clone() },
        Txn::SetData {
            path,
            data,
            version,
        } => TxnRecord::SetData {
            path: path.clone(),
            data: text(data),
            version: *version,
        },
        Txn::Check { path } => TxnRecord::Check { path: path.clone() },
        Txn::Multi(txns) => TxnRecord::Multi {
            txns: txns.iter().map(|t| txn_record(t, expired)).collect(),
        },
        Txn::Error(reply) => TxnRecord::Error {
            err: match reply {
                Err(e) => e.code(),
                // A failed multi: the error of the op that failed (the
                // others are rolled back or not run).
                Ok(zksim::Response::Multi(results)) => results
                    .iter()
                    .find_map(|r| match r {
                        Err(e)
                            if !matches!(
                                e,
                                zksim::ZkError::RolledBack | zksim::ZkError::RuntimeInconsistency
                            ) =>
                        {
                            Some(e.code())
                        }
                        _ => None,
                    })
                    .unwrap_or(0),
                Ok(_) => 0,
            },
        },
        Txn::CreateSession { .. } => TxnRecord::CreateSession { timeout_ms: 0 },
        Txn::CloseSession { ephemerals, .. } => TxnRecord::CloseSession {
            ephemerals: ephemerals.clone(),
            expired,
        },
    }
}

pub fn stat_record(s: &Stat) -> StatRecord {
    StatRecord {
        czxid: s.czxid,
        mzxid: s.mzxid,
        version: s.version,
        cversion: s.cversion,
        ephemeral_owner: s.ephemeral_owner,
        num_children: s.num_children,
    }
}

/// What a reply body carried.
pub fn result_record(response: &Response) -> ResultRecord {
    let mut r = ResultRecord::default();
    match response {
        Response::Create { path } => r.path = Some(path.clone()),
        Response::Create2 { path, stat } => {
            r.path = Some(path.clone());
            r.stat = Some(stat_record(stat));
        }
        Response::Stat(stat) | Response::Acl { stat, .. } => r.stat = Some(stat_record(stat)),
        Response::Data { data, stat } => {
            r.data = data.as_deref().map(text);
            r.stat = Some(stat_record(stat));
        }
        Response::Children { names } => r.children = Some(names.clone()),
        Response::Children2 { names, stat } => {
            r.children = Some(names.clone());
            r.stat = Some(stat_record(stat));
        }
        Response::Sync { path } => r.path = Some(path.clone()),
        Response::Ephemerals(paths) => r.children = Some(paths.clone()),
        Response::Multi(results) => {
            r.results = results.iter().map(multi_result).collect();
        }
        Response::MultiRead(results) => {
            r.results = results.iter().map(read_result).collect();
        }
        Response::Empty | Response::Code(_) | Response::Count(_) | Response::WhoAmI(_) => {}
    }
    r
}

fn multi_result(result: &MultiResult) -> OpResultRecord {
    let mut r = ResultRecord::default();
    let err = match result {
        MultiResult::Create { path } => {
            r.path = Some(path.clone());
            0
        }
        MultiResult::Create2 { path, stat } => {
            r.path = Some(path.clone());
            r.stat = Some(stat_record(stat));
            0
        }
        MultiResult::SetData { stat } => {
            r.stat = Some(stat_record(stat));
            0
        }
        MultiResult::Delete | MultiResult::Check => 0,
        MultiResult::Error { err } => *err,
    };
    OpResultRecord { err, result: r }
}

fn read_result(result: &ReadResult) -> OpResultRecord {
    let mut r = ResultRecord::default();
    let err = match result {
        ReadResult::Children { names } => {
            r.children = Some(names.clone());
            0
        }
        ReadResult::Data { data, stat } => {
            r.data = data.as_deref().map(text);
            r.stat = Some(stat_record(stat));
            0
        }
        ReadResult::Error { err } => *err,
    };
    OpResultRecord { err, result: r }
}

/// ZooKeeper's name of a watched event type.
pub fn event_name(kind: zksim::EventType) -> &'static str {
    match kind {
        zksim::EventType::NodeCreated => "NodeCreated",
        zksim::EventType::NodeDeleted => "NodeDeleted",
        zksim::EventType::NodeDataChanged => "NodeDataChanged",
        zksim::EventType::NodeChildrenChanged => "NodeChildrenChanged",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_names_a_bad_digit() {
        let bytes = vec![0u8, 1, 0xab, 0xff];
        assert_eq!(hex(&bytes), "0001abff");
        assert_eq!(unhex("0001ABff").unwrap(), bytes);
        assert!(unhex("abc").unwrap_err().contains("odd"));
        assert!(unhex("zz").unwrap_err().contains("at 0"));
    }

    #[test]
    fn inputs_round_trip_through_their_records() {
        for input in [
            Input::Accepted { conn: 3, server: 2 },
            Input::Bytes {
                conn: 3,
                data: vec![0, 0, 0, 1, 9],
            },
            Input::Closed { conn: 3 },
            Input::Tick,
        ] {
            assert_eq!(input_of(&input_record(&input)).unwrap(), input);
        }
    }

    #[test]
    fn a_failed_multi_commits_as_one_error_with_the_failing_ops_code() {
        use zksim::ZkError;
        let failed = Txn::Error(Ok(zksim::Response::Multi(vec![
            Err(ZkError::RolledBack),
            Err(ZkError::NoNode),
            Err(ZkError::RuntimeInconsistency),
        ])));
        assert_eq!(txn_record(&failed, false), TxnRecord::Error { err: -101 });
        let expired = Txn::Error(Err(ZkError::SessionExpired));
        assert_eq!(txn_record(&expired, false), TxnRecord::Error { err: -112 });
    }

    #[test]
    fn a_create_is_named_as_zookeeper_names_it() {
        let r = op_record(
            op::CREATE2,
            &Request::Create {
                path: "/L/lock-".into(),
                data: Some(b"me".to_vec()),
                acl: vec![],
                flags: 3,
            },
        );
        assert_eq!(r.op, "create2");
        assert_eq!(r.mode.as_deref(), Some("ephemeral_sequential"));
        assert_eq!((r.data.as_deref(), r.data_len), (Some("me"), Some(2)));
    }
}
