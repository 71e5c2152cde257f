//! Histories written by hand, compactly, for tests (here and in the front
//! end's): each call appends what `zkcheck serve` records for one client
//! call — the request, the leader's commit, the reply — with zxids, xids,
//! sequence numbers and versions kept as ZooKeeper would.
//!
//! ```
//! use zkjudge::build::Build;
//! let mut h = Build::new();
//! h.connect(1);
//! let mine = h.lock(1, "/L", "lock-");
//! h.set(1, "/R", -1);
//! h.delete(1, &mine);
//! h.close(1);
//! let run = h.end().run();
//! assert!(run.ended);
//! ```

use std::collections::BTreeMap;

use crate::history::{
    FaultRecord, OpRecord, Record, ResultRecord, SessionEvent, StatRecord, TxnRecord, FORMAT,
    VERSION,
};
use crate::run::Run;

#[derive(Clone, Copy, Debug)]
struct Node {
    version: i32,
    owner: i64,
    czxid: i64,
    mzxid: i64,
}

/// A history under construction (see the module's example).
#[derive(Clone, Debug)]
pub struct Build {
    records: Vec<Record>,
    t: u64,
    zxid: i64,
    xids: BTreeMap<i64, i32>,
    nodes: BTreeMap<String, Node>,
    seqs: BTreeMap<String, i64>,
    server_of: BTreeMap<i64, usize>,
}

impl Default for Build {
    fn default() -> Self {
        Build::new()
    }
}

impl Build {
    /// A history of a three-server ensemble, `/L`, `/R`, `/E` and `/Q`
    /// already there (made before the history starts, zxid 0).
    pub fn new() -> Build {
        let mut nodes = BTreeMap::new();
        for p in ["/L", "/R", "/E", "/Q"] {
            nodes.insert(
                p.to_string(),
                Node {
                    version: 0,
                    owner: 0,
                    czxid: 0,
                    mzxid: 0,
                },
            );
        }
        Build {
            records: vec![Record::Meta {
                format: FORMAT.into(),
                version: VERSION,
                servers: 3,
                tick_ms: 100,
                seed: 0,
                faults: String::new(),
                settings: Vec::new(),
            }],
            t: 0,
            zxid: 0,
            xids: BTreeMap::new(),
            nodes,
            seqs: BTreeMap::new(),
            server_of: BTreeMap::new(),
        }
    }

    /// The newest zxid committed so far.
    pub fn zxid(&self) -> i64 {
        self.zxid
    }

    /// Let simulated time pass.
    pub fn tick(&mut self) -> &mut Self {
        self.t += 1;
        self
    }

    pub fn push(&mut self, record: Record) -> &mut Self {
        self.records.push(record);
        self
    }

    pub fn records(&self) -> Vec<Record> {
        self.records.clone()
    }

    pub fn run(&self) -> Run {
        Run::from_records(self.records())
    }

    /// The history as the file `serve --history` writes.
    pub fn text(&self) -> String {
        let mut w = crate::history::Writer::new(Vec::new());
        for r in &self.records {
            let _ = w.write(r);
        }
        String::from_utf8(w.into_inner()).unwrap_or_default()
    }

    /// The `end` record: the run finished.
    pub fn end(&mut self) -> &mut Self {
        let inputs = self.records.len() as u64;
        self.push(Record::End {
            inputs,
            trace_hash: "built-by-hand".into(),
        })
    }

    fn server(&self, s: i64) -> usize {
        self.server_of.get(&s).copied().unwrap_or(0)
    }

    fn next_xid(&mut self, s: i64) -> i32 {
        let x = self.xids.entry(s).or_insert(0);
        *x += 1;
        *x
    }

    fn commit(&mut self, s: i64, xid: Option<i32>, txn: TxnRecord) -> i64 {
        self.zxid += 1;
        self.t += 1;
        let zxid = self.zxid;
        self.push(Record::Commit {
            t: self.t,
            zxid,
            session: s,
            xid,
            txn,
        });
        zxid
    }

    /// A request record; returns its xid.
    pub fn request(&mut self, s: i64, op: OpRecord) -> i32 {
        let xid = self.next_xid(s);
        let server = self.server(s);
        self.push(Record::Request {
            t: self.t,
            session: s,
            server,
            xid,
            op,
        });
        xid
    }

    /// A reply record.
    pub fn reply(
        &mut self,
        s: i64,
        xid: i32,
        zxid: i64,
        err: i32,
        applied: Option<i64>,
        result: ResultRecord,
    ) -> &mut Self {
        let server = self.server(s);
        self.push(Record::Reply {
            t: self.t,
            session: s,
            server,
            xid,
            zxid,
            err,
            applied,
            result,
            lost: false,
        })
    }

    fn session_event(&mut self, s: i64, event: SessionEvent) -> &mut Self {
        let server = matches!(event, SessionEvent::Created | SessionEvent::Reattached)
            .then(|| self.server(s));
        self.push(Record::Session {
            t: self.t,
            session: s,
            event,
            server,
            conn: None,
            timeout_ms: None,
        })
    }

    /// A new session `s` on server 0.
    pub fn connect(&mut self, s: i64) -> &mut Self {
        self.connect_on(s, 0)
    }

    pub fn connect_on(&mut self, s: i64, server: usize) -> &mut Self {
        self.server_of.insert(s, server);
        self.session_event(s, SessionEvent::Created);
        self.commit(s, None, TxnRecord::CreateSession { timeout_ms: 4000 });
        self
    }

    pub fn disconnect(&mut self, s: i64) -> &mut Self {
        self.session_event(s, SessionEvent::Disconnected)
    }

    pub fn reattach(&mut self, s: i64, server: usize) -> &mut Self {
        self.server_of.insert(s, server);
        self.session_event(s, SessionEvent::Reattached)
    }

    fn stat(&self, path: &str) -> Option<StatRecord> {
        let n = self.nodes.get(path)?;
        let prefix = format!("{path}/");
        let kids = self
            .nodes
            .keys()
            .filter(|k| k.starts_with(&prefix) && !k[prefix.len()..].contains('/'))
            .count();
        Some(StatRecord {
            czxid: n.czxid,
            mzxid: n.mzxid,
            version: n.version,
            cversion: 0,
            ephemeral_owner: n.owner,
            num_children: kids as i32,
        })
    }

    /// `create` with `mode` (`persistent`, `ephemeral`, `*_sequential`):
    /// the path created (with its sequence suffix).
    pub fn create(&mut self, s: i64, path: &str, mode: &str) -> String {
        self.create_with(s, path, mode, "")
    }

    /// [`Build::create`] with data.
    pub fn create_with(&mut self, s: i64, path: &str, mode: &str, data: &str) -> String {
        let xid = self.request(
            s,
            OpRecord {
                op: "create".into(),
                path: Some(path.into()),
                data: Some(data.into()),
                data_len: Some(data.len()),
                mode: Some(mode.into()),
                ..OpRecord::default()
            },
        );
        let mut made = path.to_string();
        if mode.ends_with("sequential") {
            let parent = crate::tree::parent_of(path).to_string();
            let n = self.seqs.entry(parent).or_insert(0);
            made = format!("{path}{:010}", *n);
            *n += 1;
        }
        let owner = if mode.starts_with("ephemeral") { s } else { 0 };
        let zxid = self.commit(
            s,
            Some(xid),
            TxnRecord::Create {
                path: made.clone(),
                data: data.into(),
                ephemeral_owner: owner,
            },
        );
        self.nodes.insert(
            made.clone(),
            Node {
                version: 0,
                owner,
                czxid: zxid,
                mzxid: zxid,
            },
        );
        self.reply(
            s,
            xid,
            zxid,
            0,
            None,
            ResultRecord {
                path: Some(made.clone()),
                ..ResultRecord::default()
            },
        );
        made
    }

    /// A lock contender: an ephemeral sequential `parent/marker…`.
    pub fn lock(&mut self, s: i64, parent: &str, marker: &str) -> String {
        self.create(s, &format!("{parent}/{marker}"), "ephemeral_sequential")
    }

    /// A create answered `NodeExists` (its zxid is an error transaction).
    pub fn create_exists(&mut self, s: i64, path: &str) -> &mut Self {
        let xid = self.request(
            s,
            OpRecord {
                op: "create".into(),
                path: Some(path.into()),
                mode: Some("persistent".into()),
                ..OpRecord::default()
            },
        );
        let zxid = self.commit(s, Some(xid), TxnRecord::Error { err: -110 });
        self.reply(s, xid, zxid, -110, None, ResultRecord::default())
    }

    pub fn delete(&mut self, s: i64, path: &str) -> i64 {
        let xid = self.request(
            s,
            OpRecord {
                op: "delete".into(),
                path: Some(path.into()),
                version: Some(-1),
                ..OpRecord::default()
            },
        );
        let zxid = self.commit(s, Some(xid), TxnRecord::Delete { path: path.into() });
        self.nodes.remove(path);
        self.reply(s, xid, zxid, 0, None, ResultRecord::default());
        zxid
    }

    /// `setData(path, version)` that succeeds: its zxid.
    pub fn set(&mut self, s: i64, path: &str, version: i32) -> i64 {
        let xid = self.request(
            s,
            OpRecord {
                op: "setData".into(),
                path: Some(path.into()),
                data: Some("x".into()),
                data_len: Some(1),
                version: Some(version),
                ..OpRecord::default()
            },
        );
        let new_version = self.nodes.get(path).map_or(0, |n| n.version + 1);
        let zxid = self.commit(
            s,
            Some(xid),
            TxnRecord::SetData {
                path: path.into(),
                data: "x".into(),
                version: new_version,
            },
        );
        if let Some(n) = self.nodes.get_mut(path) {
            n.version = new_version;
            n.mzxid = zxid;
        }
        let stat = self.stat(path);
        self.reply(
            s,
            xid,
            zxid,
            0,
            None,
            ResultRecord {
                stat,
                ..ResultRecord::default()
            },
        );
        zxid
    }

    /// A multi of `check(check)` and `setData(path)`: its zxid.
    pub fn checked_set(&mut self, s: i64, check: &str, path: &str) -> i64 {
        let xid = self.request(
            s,
            OpRecord {
                op: "multi".into(),
                ops: vec![
                    OpRecord {
                        op: "check".into(),
                        path: Some(check.into()),
                        version: Some(-1),
                        ..OpRecord::default()
                    },
                    OpRecord {
                        op: "setData".into(),
                        path: Some(path.into()),
                        version: Some(-1),
                        ..OpRecord::default()
                    },
                ],
                ..OpRecord::default()
            },
        );
        let new_version = self.nodes.get(path).map_or(0, |n| n.version + 1);
        let zxid = self.commit(
            s,
            Some(xid),
            TxnRecord::Multi {
                txns: vec![
                    TxnRecord::Check { path: check.into() },
                    TxnRecord::SetData {
                        path: path.into(),
                        data: "x".into(),
                        version: new_version,
                    },
                ],
            },
        );
        if let Some(n) = self.nodes.get_mut(path) {
            n.version = new_version;
            n.mzxid = zxid;
        }
        self.reply(s, xid, zxid, 0, None, ResultRecord::default());
        zxid
    }

    /// A read (`getData`, `exists`, `getChildren`) answered by the
    /// session's server with everything applied: the node's data version.
    pub fn read(&mut self, s: i64, op: &str, path: &str, watch: bool) -> Option<i32> {
        let applied = self.zxid;
        self.read_at(s, op, path, watch, applied)
    }

    /// [`Build::read`] answered by a server that had applied only `applied`.
    pub fn read_at(
        &mut self,
        s: i64,
        op: &str,
        path: &str,
        watch: bool,
        applied: i64,
    ) -> Option<i32> {
        let xid = self.request(
            s,
            OpRecord {
                op: op.into(),
                path: Some(path.into()),
                watch,
                ..OpRecord::default()
            },
        );
        let stat = self.stat(path);
        let err = if stat.is_some() { 0 } else { -101 };
        let children = (op.starts_with("getChildren") && stat.is_some()).then(|| {
            let prefix = format!("{path}/");
            self.nodes
                .keys()
                .filter(|k| k.starts_with(&prefix) && !k[prefix.len()..].contains('/'))
                .map(|k| k[prefix.len()..].to_string())
                .collect()
        });
        let result = ResultRecord {
            stat,
            children,
            exists: (op == "exists").then_some(stat.is_some()),
            ..ResultRecord::default()
        };
        self.reply(s, xid, applied, err, Some(applied), result);
        stat.map(|st| st.version)
    }

    /// A `sync` of `path`, answered once the session's server caught up.
    pub fn sync(&mut self, s: i64, path: &str) -> &mut Self {
        let xid = self.request(
            s,
            OpRecord {
                op: "sync".into(),
                path: Some(path.into()),
                ..OpRecord::default()
            },
        );
        let zxid = self.zxid;
        self.reply(s, xid, zxid, 0, Some(zxid), ResultRecord::default())
    }

    /// A notification to `s`, fired by the newest transaction.
    pub fn notify(&mut self, s: i64, event: &str, path: &str) -> &mut Self {
        let server = self.server(s);
        self.push(Record::Notify {
            t: self.t,
            session: s,
            server,
            event: event.into(),
            path: path.into(),
            zxid: Some(self.zxid),
        })
    }

    fn ephemerals_of(&self, s: i64) -> Vec<String> {
        self.nodes
            .iter()
            .filter(|(_, n)| n.owner == s)
            .map(|(p, _)| p.clone())
            .collect()
    }

    fn end_session(&mut self, s: i64, expired: bool, xid: Option<i32>) -> i64 {
        let ephemerals = self.ephemerals_of(s);
        for p in &ephemerals {
            self.nodes.remove(p);
        }
        self.commit(
            s,
            xid,
            TxnRecord::CloseSession {
                ephemerals,
                expired,
            },
        )
    }

    /// The leader expires `s`: its ephemerals go with it.
    pub fn expire(&mut self, s: i64) -> i64 {
        let zxid = self.end_session(s, true, None);
        self.session_event(s, SessionEvent::Expired);
        zxid
    }

    /// The client closes `s`.
    pub fn close(&mut self, s: i64) -> i64 {
        let xid = self.request(
            s,
            OpRecord {
                op: "closeSession".into(),
                ..OpRecord::default()
            },
        );
        let zxid = self.end_session(s, false, Some(xid));
        self.reply(s, xid, zxid, 0, None, ResultRecord::default());
        self.session_event(s, SessionEvent::Closed);
        zxid
    }

    pub fn fault(&mut self, fault: FaultRecord) -> &mut Self {
        self.push(Record::Fault { t: self.t, fault })
    }

    /// The plan silences `s` (it will expire).
    pub fn silence(&mut self, s: i64) -> &mut Self {
        self.fault(FaultRecord::Silence {
            session: s,
            reason: "expiries=1".into(),
        })
    }

    /// The plan drops `s`'s connection.
    pub fn drop_connection(&mut self, s: i64) -> &mut Self {
        self.fault(FaultRecord::Drop {
            conn: 1,
            session: s,
            reason: "drops=1".into(),
        });
        self.disconnect(s)
    }
}
