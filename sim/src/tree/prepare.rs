//! The leader's half of a write: `PrepRequestProcessor.pRequest2Txn`.
//!
//! Checks run in the server's order, so that a request breaking several
//! rules fails with the same code as on a real server:
//! - create: path (client check) → parent exists → parent ACL → suffix →
//!   node exists → parent ephemeral;
//! - delete: path → not a system node → parent exists → node exists →
//!   version → no children;
//! - setData: path → node exists → ACL → version.

use super::{DataTree, Txn, CONFIG_NODE, MAX_DATA_LEN};
use crate::path::{split, validate_create_path, validate_path, validate_request};
use crate::proto::{CreateMode, Op, Response, SessionId, ZkError};

pub(super) fn prepare(tree: &DataTree, session: SessionId, op: &Op) -> Txn {
    match op {
        Op::Multi(ops) => prepare_multi(tree, session, ops),
        _ => prepare_single(tree, session, op).unwrap_or_else(|e| Txn::Error(Err(e))),
    }
}

fn prepare_single(tree: &DataTree, session: SessionId, op: &Op) -> Result<Txn, ZkError> {
    match op {
        Op::Create { path, data, mode } => prepare_create(tree, session, path, data, *mode),
        Op::Delete { path, version } => prepare_delete(tree, path, *version),
        Op::SetData {
            path,
            data,
            version,
        } => prepare_set_data(tree, path, data, *version),
        _ => Err(ZkError::Unimplemented),
    }
}

fn prepare_create(
    tree: &DataTree,
    session: SessionId,
    path: &str,
    data: &[u8],
    mode: CreateMode,
) -> Result<Txn, ZkError> {
    validate_create_path(path, mode)?;
    check_data_len(data)?;
    let (parent_path, _) = split(path);
    let parent = tree.nodes.get(parent_path).ok_or(ZkError::NoNode)?;
    if parent_path == CONFIG_NODE {
        return Err(ZkError::NoAuth);
    }
    let path = if mode.is_sequential() {
        // `String.format("%010d", cversion)`: Rust pads a negative the same
        // way (`-000000001`, `-2147483648`).
        format!("{path}{:010}", parent.seq_counter)
    } else {
        path.to_string()
    };
    validate_path(&path)?;
    if tree.nodes.contains_key(&path) {
        return Err(ZkError::NodeExists);
    }
    if parent.stat.ephemeral_owner != 0 {
        return Err(ZkError::NoChildrenForEphemerals);
    }
    Ok(Txn::Create {
        path,
        data: data.to_vec(),
        ephemeral_owner: if mode.is_ephemeral() { session } else { 0 },
    })
}

fn prepare_delete(tree: &DataTree, path: &str, version: i32) -> Result<Txn, ZkError> {
    validate_path(path)?;
    // `getParentPathAndValidate`: `/`, `/zookeeper` and its two system
    // children can never be deleted.
    if DataTree::is_system_path(path) {
        return Err(ZkError::BadArguments);
    }
    let (parent_path, _) = split(path);
    tree.nodes.get(parent_path).ok_or(ZkError::NoNode)?;
    let node = tree.nodes.get(path).ok_or(ZkError::NoNode)?;
    check_version(node.stat.version, version)?;
    if !node.children.is_empty() {
        return Err(ZkError::NotEmpty);
    }
    Ok(Txn::Delete {
        path: path.to_string(),
    })
}

fn prepare_set_data(
    tree: &DataTree,
    path: &str,
    data: &[u8],
    version: i32,
) -> Result<Txn, ZkError> {
    validate_path(path)?;
    check_data_len(data)?;
    let node = tree.nodes.get(path).ok_or(ZkError::NoNode)?;
    if path == CONFIG_NODE {
        return Err(ZkError::NoAuth);
    }
    check_version(node.stat.version, version)?;
    Ok(Txn::SetData {
        path: path.to_string(),
        data: data.to_vec(),
        // 3.8.0 lets the data version wrap like any Java int (the skip over
        // -1 of ZOOKEEPER-4743 came later).
        version: node.stat.version.wrapping_add(1),
    })
}

/// `checkAndIncVersion`: -1 matches any version.
fn check_version(current: i32, expected: i32) -> Result<(), ZkError> {
    if expected != -1 && expected != current {
        Err(ZkError::BadVersion)
    } else {
        Ok(())
    }
}

fn check_data_len(data: &[u8]) -> Result<(), ZkError> {
    if data.len() > MAX_DATA_LEN {
        Err(ZkError::BadArguments)
    } else {
        Ok(())
    }
}

/// A multi (S31): each op is prepared against the tree as changed by the
/// ops before it; the first failure fails them all. The failing op gets its
/// own code, the ones before it `RolledBack` (code 0 in an error result),
/// the ones after it `RuntimeInconsistency`.
fn prepare_multi(tree: &DataTree, session: SessionId, ops: &[Op]) -> Txn {
    // What the Java client refuses before sending: a read or a nested multi
    // inside, or an invalid path. The whole call fails at once.
    if let Err(e) = validate_request(&Op::Multi(ops.to_vec())) {
        return Txn::Error(Err(e));
    }
    // The state as changed by earlier ops of this multi. Zxid and time do
    // not matter to preparation, only existence, versions and counters.
    let mut scratch: Option<DataTree> = None;
    let mut txns = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let view = scratch.as_ref().unwrap_or(tree);
        match prepare_single(view, session, op) {
            Ok(txn) => {
                if i + 1 < ops.len() {
                    let s = scratch.get_or_insert_with(|| tree.clone());
                    let mut ignored = Vec::new();
                    // A txn just prepared against `s` always applies.
                    let _ = super::apply::apply(s, 0, 0, &txn, &mut ignored);
                }
                txns.push(txn);
            }
            Err(e) => {
                let results = (0..ops.len())
                    .map(|j| {
                        Err(match j.cmp(&i) {
                            std::cmp::Ordering::Less => ZkError::RolledBack,
                            std::cmp::Ordering::Equal => e,
                            std::cmp::Ordering::Greater => ZkError::RuntimeInconsistency,
                        })
                    })
                    .collect();
                return Txn::Error(Ok(Response::Multi(results)));
            }
        }
    }
    Txn::Multi(txns)
}
