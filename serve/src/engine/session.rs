//! What the engine keeps about one wire session (a world client).

use std::collections::BTreeMap;

use zksim::{OpId, SessionId, Zxid};

use super::translate::Shape;
use super::ConnId;

pub struct WireSession {
    pub passwd: [u8; 16],
    /// The connection carrying the session now, if any.
    pub conn: Option<ConnId>,
    /// Requests in the world, by the op id it gave them.
    pub pending: BTreeMap<OpId, Pending>,
    /// A `closeSession` in progress: its xid.
    pub closing: Option<i32>,
    /// The zxid of the session's own close, once ordered.
    pub close_zxid: Option<Zxid>,
    /// A new session's connect response held back (its timeout, ms) until
    /// its server has applied the session's creation (S39).
    pub awaiting_connect: Option<i32>,
}

impl WireSession {
    pub fn new(passwd: [u8; 16]) -> Self {
        WireSession {
            passwd,
            conn: None,
            pending: BTreeMap::new(),
            closing: None,
            close_zxid: None,
            awaiting_connect: None,
        }
    }
}

/// A request the world has not answered yet: where and how to answer it.
pub struct Pending {
    pub conn: ConnId,
    /// The server of `conn` (a lost reply is recorded with it).
    pub server: zksim::ServerId,
    pub xid: i32,
    pub shape: Shape,
    pub multi_ops: Vec<i32>,
    pub path: String,
    pub null_writes: Vec<bool>,
}

/// Nodes whose data a client set to null (jute's `-1` length): the world
/// stores bytes, so the engine keeps, for each such node, the zxid of the
/// null write (`mzxid`). A getData whose stat has that very `mzxid` read
/// the null write (any later write or a re-creation moves it) and answers
/// null, as ZooKeeper does.
#[derive(Default)]
pub struct NullData {
    written_at: BTreeMap<String, Zxid>,
}

impl NullData {
    /// Remember the null writes a successful reply confirms.
    pub fn note(&mut self, pending: &Pending, reply: &zksim::Reply) {
        use zksim::Response as R;
        let Ok(response) = reply else {
            return;
        };
        let wrote_null = |i: usize| pending.null_writes.get(i).copied().unwrap_or(false);
        match response {
            R::Created { path, stat } if wrote_null(0) => {
                self.written_at.insert(path.clone(), stat.mzxid);
            }
            R::SetData(stat) if wrote_null(0) => {
                self.written_at.insert(pending.path.clone(), stat.mzxid);
            }
            R::Multi(results) => {
                for (i, result) in results.iter().enumerate() {
                    if let (Ok(R::Created { path, stat }), true) = (result, wrote_null(i)) {
                        self.written_at.insert(path.clone(), stat.mzxid);
                    }
                }
            }
            _ => {}
        }
    }

    /// A getData reply's data back to null where a null write left it.
    pub fn restore(&self, pending: &Pending, body: &mut Option<zkwire::Response>) {
        if let Some(zkwire::Response::Data { data, stat }) = body {
            let empty = data.as_ref().is_some_and(|d| d.is_empty());
            if empty && self.written_at.get(&pending.path) == Some(&stat.mzxid) {
                *data = None;
            }
        }
    }
}

/// A session's password: 16 bytes derived from its id and the server's
/// seed (splitmix64), so that a run replays byte for byte. Not a secret:
/// the simulator protects nothing; it only makes a client that presents
/// another session's id without its password fail as on a real server.
pub fn password(seed: u64, session: SessionId) -> [u8; 16] {
    let mut state = seed ^ (session as u64).rotate_left(17);
    let mut out = [0; 16];
    for chunk in out.chunks_mut(8) {
        chunk.copy_from_slice(&splitmix64(&mut state).to_be_bytes());
    }
    out
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::password;

    #[test]
    fn passwords_are_deterministic_and_differ_by_session_and_seed() {
        let base = zksim::world::SESSION_ID_BASE;
        assert_eq!(password(1, base), password(1, base));
        assert_ne!(password(1, base), password(1, base + 1));
        assert_ne!(password(1, base), password(2, base));
    }
}
