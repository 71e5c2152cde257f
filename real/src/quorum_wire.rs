//! Just enough of ZooKeeper's quorum protocol to lag a follower the way a
//! slow follower lags: a `QuorumPacket` (jute: `int type`, `long zxid`,
//! `buffer data`, `vector<Id> authinfo`, no length prefix) is cut out of
//! the leader→follower byte stream so that the fault proxy can hold the
//! transactions (proposals, commits, syncs, informs) while pings and
//! session revalidations still pass.

/// `Leader.PROPOSAL`, `COMMIT`, `SYNC`, `INFORM`, `COMMITANDACTIVATE`,
/// `INFORMANDACTIVATE`: what a lagging follower has not seen yet. `SYNC`
/// stays behind the commits it follows, so a `sync` on a lagging follower
/// is answered once it caught up (S29).
const TRANSACTIONS: [i32; 6] = [2, 4, 7, 8, 9, 19];
/// `Leader.SNAP`: a snapshot follows, raw, not as packets.
pub(crate) const SNAP: i32 = 15;

/// A whole packet from the front of `pending`, with its type.
pub(crate) fn take_packet(pending: &mut Vec<u8>) -> Option<(Vec<u8>, i32)> {
    let len = packet_len(pending)?;
    let kind = i32::from_be_bytes(pending[..4].try_into().ok()?);
    let rest = pending.split_off(len);
    Some((std::mem::replace(pending, rest), kind))
}

/// Whether a packet of this type carries or completes a transaction.
pub(crate) fn is_transaction(kind: i32) -> bool {
    TRANSACTIONS.contains(&kind)
}

/// The length of the packet at the front of `buf`, once it is all there.
fn packet_len(buf: &[u8]) -> Option<usize> {
    let int = |at: usize| -> Option<i32> {
        Some(i32::from_be_bytes(buf.get(at..at + 4)?.try_into().ok()?))
    };
    // type + zxid
    let mut at = 12;
    // data: -1 is null
    let data = int(at)?;
    at += 4 + usize::try_from(data).unwrap_or(0);
    // authinfo: -1 is null; each Id is two strings
    let ids = int(at)?;
    at += 4;
    for _ in 0..ids.max(0) {
        for _ in 0..2 {
            let len = int(at)?;
            at += 4 + usize::try_from(len).unwrap_or(0);
        }
    }
    (buf.len() >= at).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(kind: i32, data: Option<&[u8]>, auth: Option<&[(&str, &str)]>) -> Vec<u8> {
        let mut out = kind.to_be_bytes().to_vec();
        out.extend_from_slice(&7i64.to_be_bytes());
        match data {
            Some(d) => {
                out.extend_from_slice(&(d.len() as i32).to_be_bytes());
                out.extend_from_slice(d);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
        match auth {
            Some(ids) => {
                out.extend_from_slice(&(ids.len() as i32).to_be_bytes());
                for (scheme, id) in ids {
                    for s in [scheme, id] {
                        out.extend_from_slice(&(s.len() as i32).to_be_bytes());
                        out.extend_from_slice(s.as_bytes());
                    }
                }
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
        out
    }

    #[test]
    fn packets_are_cut_whole_and_only_when_complete() {
        let a = packet(2, Some(b"txn"), None);
        let b = packet(5, None, Some(&[("ip", "127.0.0.1")]));
        let mut stream = [a.clone(), b.clone()].concat();
        stream.pop();
        assert_eq!(take_packet(&mut stream), Some((a, 2)));
        assert_eq!(take_packet(&mut stream), None, "the ping is not all there");
        stream.push(*b.last().unwrap());
        assert_eq!(take_packet(&mut stream), Some((b, 5)));
        assert!(stream.is_empty());
        assert!(is_transaction(4) && !is_transaction(5) && !is_transaction(6));
    }
}
