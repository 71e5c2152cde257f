//! The leader's committed log: every ordered transaction that some server
//! has not applied yet.
//!
//! Entries every server has applied are dropped ([`CommitLog::trim`]), so
//! that two worlds that differ only in how much history lies behind them
//! hash and compare equal.

use std::collections::VecDeque;

use crate::proto::Zxid;
use crate::tree::Txn;

use super::ClientId;

/// Who asked for a transaction, so that the client's server can answer it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    pub client: ClientId,
}

/// One committed transaction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    pub zxid: Zxid,
    pub txn: Txn,
    /// The leader's clock when it ordered the txn (ctime/mtime come from here).
    pub time_ms: i64,
    pub origin: Option<Origin>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CommitLog {
    pub(super) entries: VecDeque<Entry>,
    /// The newest zxid the leader handed out.
    pub(super) last_zxid: Zxid,
}

impl CommitLog {
    pub fn last_zxid(&self) -> Zxid {
        self.last_zxid
    }

    /// The zxid the next [`CommitLog::append`] will use.
    pub fn next_zxid(&self) -> Zxid {
        self.last_zxid + 1
    }

    pub fn append(&mut self, txn: Txn, time_ms: i64, origin: Option<Origin>) -> Zxid {
        self.last_zxid += 1;
        let zxid = self.last_zxid;
        self.entries.push_back(Entry {
            zxid,
            txn,
            time_ms,
            origin,
        });
        zxid
    }

    /// The entry with this zxid, if not trimmed yet.
    pub fn get(&self, zxid: Zxid) -> Option<&Entry> {
        let first = self.entries.front()?.zxid;
        let index = usize::try_from(zxid.checked_sub(first)?).ok()?;
        self.entries.get(index)
    }

    /// Forget every entry up to `applied_by_all` (the smallest applied zxid of all servers).
    pub fn trim(&mut self, applied_by_all: Zxid) {
        while self
            .entries
            .front()
            .is_some_and(|e| e.zxid <= applied_by_all)
        {
            self.entries.pop_front();
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_get_trim() {
        let mut log = CommitLog::default();
        let a = log.append(Txn::CreateSession { session: 1 }, 0, None);
        let b = log.append(Txn::CreateSession { session: 2 }, 0, None);
        assert_eq!((a, b), (1, 2));
        assert_eq!(log.get(2).map(|e| e.zxid), Some(2));
        log.trim(1);
        assert!(log.get(1).is_none());
        assert_eq!(log.get(2).map(|e| e.zxid), Some(2));
        assert_eq!(log.next_zxid(), 3);
        log.trim(2);
        assert_eq!(log.len(), 0);
        assert_eq!(log.last_zxid(), 2);
    }
}
