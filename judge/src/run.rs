//! A history, indexed once for every judge: the rebuilt [`Tree`], each
//! reply's request, the newest zxid before each record.

use std::collections::BTreeMap;

use crate::history::{OpRecord, Record};
use crate::tree::Tree;

/// A read history and what every judge derives from it.
#[derive(Clone, Debug)]
pub struct Run {
    /// The records with their 1-based line numbers.
    pub records: Vec<(usize, Record)>,
    pub servers: usize,
    /// Whether the history ends with [`Record::End`] (the run finished).
    pub ended: bool,
    pub tree: Tree,
    /// A reply's record index → its request's record index (the latest
    /// request of that session with that xid before the reply).
    pub request_of: BTreeMap<usize, usize>,
    /// The newest committed zxid before each record (0 before any).
    zxid_before: Vec<i64>,
}

impl Run {
    pub fn new(records: Vec<(usize, Record)>) -> Run {
        let servers = records
            .iter()
            .find_map(|(_, r)| match r {
                Record::Meta { servers, .. } => Some(*servers),
                _ => None,
            })
            .unwrap_or(1);
        let ended = matches!(records.last(), Some((_, Record::End { .. })));
        let tree = Tree::build(&records);
        let mut request_of = BTreeMap::new();
        let mut pending: BTreeMap<(i64, i32), usize> = BTreeMap::new();
        let mut zxid_before = Vec::with_capacity(records.len());
        let mut zxid = 0;
        for (i, (_, r)) in records.iter().enumerate() {
            zxid_before.push(zxid);
            match r {
                Record::Request { session, xid, .. } => {
                    pending.insert((*session, *xid), i);
                }
                Record::Reply { session, xid, .. } => {
                    if let Some(&q) = pending.get(&(*session, *xid)) {
                        request_of.insert(i, q);
                    }
                }
                Record::Commit { zxid: z, .. } => zxid = zxid.max(*z),
                _ => {}
            }
        }
        Run {
            records,
            servers,
            ended,
            tree,
            request_of,
            zxid_before,
        }
    }

    /// A history made in memory (tests): lines numbered from 1.
    pub fn from_records(records: Vec<Record>) -> Run {
        Run::new(
            records
                .into_iter()
                .enumerate()
                .map(|(i, r)| (i + 1, r))
                .collect(),
        )
    }

    pub fn record(&self, index: usize) -> &Record {
        &self.records[index].1
    }

    /// The file line of a record.
    pub fn line(&self, index: usize) -> usize {
        self.records[index].0
    }

    /// The newest zxid the leader had committed before record `index`.
    pub fn zxid_before(&self, index: usize) -> i64 {
        self.zxid_before.get(index).copied().unwrap_or(0)
    }

    /// The request a reply answers.
    pub fn request(&self, reply: usize) -> Option<(usize, &OpRecord)> {
        let q = *self.request_of.get(&reply)?;
        match self.record(q) {
            Record::Request { op, .. } => Some((q, op)),
            _ => None,
        }
    }

    /// The request of `session` with `xid` at or before record `index`.
    pub fn request_before(
        &self,
        index: usize,
        session: i64,
        xid: i32,
    ) -> Option<(usize, &OpRecord)> {
        self.records[..index.min(self.records.len())]
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, (_, r))| match r {
                Record::Request {
                    session: s,
                    xid: x,
                    op,
                    ..
                } if *s == session && *x == xid => Some((i, op)),
                _ => None,
            })
    }

    /// The last fault before record `index`.
    pub fn fault_before(&self, index: usize) -> Option<usize> {
        (0..index.min(self.records.len()))
            .rev()
            .find(|&i| matches!(self.record(i), Record::Fault { .. }))
    }

    /// The last fault of the whole history.
    pub fn last_fault(&self) -> Option<usize> {
        self.fault_before(self.records.len())
    }

    /// Sessions in the order the history first names them.
    pub fn sessions(&self) -> Vec<i64> {
        let mut seen = Vec::new();
        let mut known = std::collections::BTreeSet::new();
        for (_, r) in &self.records {
            let s = match r {
                Record::Session { session, .. }
                | Record::Request { session, .. }
                | Record::Reply { session, .. }
                | Record::Notify { session, .. } => *session,
                Record::Commit { session, .. } if *session != 0 => *session,
                _ => continue,
            };
            if known.insert(s) {
                seen.push(s);
            }
        }
        seen
    }
}
