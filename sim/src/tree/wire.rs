//! How big a request is on the wire, for the `jute.maxbuffer` limit (S12).
//!
//! A 3.8 server reads each request's 4-byte length first and, if it exceeds
//! `jute.maxbuffer` (default `0xfffff` = 1 048 575 bytes), closes the
//! connection (`NIOServerCnxn`: "Len error"): the client sees
//! `ConnectionLoss`, the request is never prepared and takes no zxid. The
//! length counts the request header (xid, type) and the jute record: an int
//! per string or buffer length plus its bytes, 4 per int, 1 per boolean,
//! the `OPEN_ACL_UNSAFE` list (27 bytes) for a create, and a 9-byte
//! `MultiHeader` before each op of a multi and after the last.
//!
//! Measured on the Debian 3.8.0 server: `setData("/big")` passes with
//! 1 048 551 data bytes and is cut off with 1 048 552; `create("/cc")` with
//! 1 048 525 / 1 048 526; a multi of one `setData("/big")` with
//! 1 048 533 / 1 048 534 — exactly where [`request_len`] crosses the limit.

use crate::proto::Op;

/// `jute.maxbuffer`'s default: the largest request packet a server accepts.
pub const JUTE_MAX_BUFFER: usize = 0xfffff;

/// Request header: xid and op type.
const HEADER: usize = 4 + 4;
/// `MultiHeader`: type, done flag, error code.
const MULTI_HEADER: usize = 4 + 1 + 4;
/// The `OPEN_ACL_UNSAFE` list: count, then perms and the id `world:anyone`.
const OPEN_ACL: usize = 4 + 4 + (4 + "world".len()) + (4 + "anyone".len());

/// The length a 3.8 Java client gives the packet carrying `op` (without the
/// 4-byte length prefix itself).
pub fn request_len(op: &Op) -> usize {
    HEADER + record_len(op)
}

/// Whether a server would drop the connection instead of taking `op`.
pub fn exceeds_max_buffer(op: &Op) -> bool {
    request_len(op) > JUTE_MAX_BUFFER
}

fn record_len(op: &Op) -> usize {
    let string = |s: &str| 4 + s.len();
    let buffer = |b: &[u8]| 4 + b.len();
    match op {
        // `createTTL`'s record carries the TTL (a long) after the flags.
        Op::Create { path, data, mode } => {
            string(path) + buffer(data) + OPEN_ACL + 4 + mode.ttl_ms().map_or(0, |_| 8)
        }
        Op::Delete { path, .. } => string(path) + 4,
        Op::SetData { path, data, .. } => string(path) + buffer(data) + 4,
        Op::Exists { path, .. } | Op::GetData { path, .. } | Op::GetChildren { path, .. } => {
            string(path) + 1
        }
        Op::Sync { path } | Op::GetAllChildrenNumber { path } => string(path),
        Op::GetEphemerals { prefix } => string(prefix),
        // Path and an int: the version, the watch mode, the watcher type.
        Op::Check { path, .. }
        | Op::AddWatch { path, .. }
        | Op::RemoveWatches { path, .. }
        | Op::CheckWatches { path, .. } => string(path) + 4,
        Op::Multi(ops) | Op::MultiRead(ops) => {
            ops.iter()
                .map(|sub| MULTI_HEADER + record_len(sub))
                .sum::<usize>()
                + MULTI_HEADER
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::CreateMode;

    fn set_data(path: &str, len: usize) -> Op {
        Op::SetData {
            path: path.into(),
            data: vec![0; len],
            version: -1,
        }
    }

    #[test]
    fn measured_boundaries() {
        assert!(!exceeds_max_buffer(&set_data("/big", 1_048_551)));
        assert!(exceeds_max_buffer(&set_data("/big", 1_048_552)));
        let create = |len| Op::Create {
            path: "/cc".into(),
            data: vec![0; len],
            mode: CreateMode::Persistent,
        };
        assert!(!exceeds_max_buffer(&create(1_048_525)));
        assert!(exceeds_max_buffer(&create(1_048_526)));
        let multi = |len| Op::Multi(vec![set_data("/big", len)]);
        assert!(!exceeds_max_buffer(&multi(1_048_533)));
        assert!(exceeds_max_buffer(&multi(1_048_534)));
    }
}
