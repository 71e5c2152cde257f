//! The leader's half of a write: `PrepRequestProcessor.pRequest2Txn`.
//!
//! Checks run in the server's order, so that a request breaking several
//! rules fails with the same code as on a real server:
//! - create: path (client check) → parent exists → parent ACL → suffix →
//!   node exists → parent ephemeral;
//! - delete: path → not a system node → parent exists → parent ACL →
//!   node exists → version → no children;
//! - setData: path → node exists → ACL → version.
//!
//! The server checks against `ChangeRecord`s — the few Stat fields that
//! matter, as changed by requests prepared but not yet applied — not against
//! the tree itself. [`Record`] is that record, and a multi is prepared
//! against an [`Overlay`] of records its earlier ops changed, exactly as
//! `pRequest2Txn` sees the change records its earlier ops added.

use std::collections::BTreeMap;

use super::{exceeds_max_buffer, DataTree, Txn, CONFIG_NODE};
use crate::path::{split, validate_create_path, validate_path, validate_request};
use crate::proto::{CreateMode, Op, Response, SessionId, ZkError, CONTAINER_OWNER};

/// What preparation needs to know about a node (`ZooKeeperServer.ChangeRecord`).
#[derive(Clone, Copy, Debug)]
struct Record {
    version: i32,
    ephemeral_owner: SessionId,
    child_count: usize,
    /// The persisted create counter (`StatPersisted.cversion`).
    seq_counter: i32,
}

/// Where preparation looks nodes up.
trait Records {
    fn record(&self, path: &str) -> Option<Record>;
}

impl Records for DataTree {
    fn record(&self, path: &str) -> Option<Record> {
        self.get(path).map(|n| Record {
            version: n.stat.version,
            ephemeral_owner: n.stat.ephemeral_owner,
            child_count: n.children.len(),
            seq_counter: n.seq_counter,
        })
    }
}

/// The tree as changed by the earlier ops of one multi. `None` marks a
/// node deleted by the multi.
struct Overlay<'a> {
    base: &'a DataTree,
    changed: BTreeMap<String, Option<Record>>,
}

impl Records for Overlay<'_> {
    fn record(&self, path: &str) -> Option<Record> {
        match self.changed.get(path) {
            Some(changed) => *changed,
            None => self.base.record(path),
        }
    }
}

impl Overlay<'_> {
    /// Record what `txn` (just prepared against this overlay) changes, as
    /// `pRequest2Txn` adds change records. Note that a create sets the
    /// parent's counter to `counter + 1` even past the i32 wrap, where the
    /// tree itself would keep the old counter (S6).
    fn add(&mut self, txn: &Txn) {
        match txn {
            Txn::Create {
                path,
                ephemeral_owner,
                ..
            } => {
                let parent_path = split(path).0;
                if let Some(mut parent) = self.record(parent_path) {
                    parent.child_count += 1;
                    parent.seq_counter = parent.seq_counter.wrapping_add(1);
                    self.changed.insert(parent_path.to_string(), Some(parent));
                }
                let node = Record {
                    version: 0,
                    ephemeral_owner: *ephemeral_owner,
                    child_count: 0,
                    seq_counter: 0,
                };
                self.changed.insert(path.clone(), Some(node));
            }
            Txn::Delete { path } => {
                let parent_path = split(path).0;
                if let Some(mut parent) = self.record(parent_path) {
                    parent.child_count = parent.child_count.saturating_sub(1);
                    self.changed.insert(parent_path.to_string(), Some(parent));
                }
                self.changed.insert(path.clone(), None);
            }
            Txn::SetData { path, version, .. } => {
                if let Some(mut node) = self.record(path) {
                    node.version = *version;
                    self.changed.insert(path.clone(), Some(node));
                }
            }
            _ => {}
        }
    }
}

pub(super) fn prepare(tree: &DataTree, session: SessionId, op: &Op) -> Txn {
    // S12: a real server drops the connection on a packet over
    // `jute.maxbuffer` before preparing anything (the client sees
    // `ConnectionLoss` and no zxid is used; a world can model that with
    // `exceeds_max_buffer` before sending). Prepared anyway, it is refused
    // here with `BadArguments`, a clear error that changes nothing.
    if exceeds_max_buffer(op) {
        return Txn::Error(Err(ZkError::BadArguments));
    }
    match op {
        Op::Multi(ops) => prepare_multi(tree, session, ops),
        _ => prepare_single(tree, session, op).unwrap_or_else(|e| Txn::Error(Err(e))),
    }
}

fn prepare_single(view: &impl Records, session: SessionId, op: &Op) -> Result<Txn, ZkError> {
    match op {
        Op::Create { path, data, mode } => prepare_create(view, session, path, data, *mode),
        Op::Delete { path, version } => prepare_delete(view, path, *version),
        Op::SetData {
            path,
            data,
            version,
        } => prepare_set_data(view, path, data, *version),
        Op::Check { path, version } => prepare_check(view, path, *version),
        _ => Err(ZkError::Unimplemented),
    }
}

/// `pRequest2Txn` for `OpCode.check`: the node must exist with the
/// expected data version; a pass is a `CheckVersionTxn` that changes nothing.
fn prepare_check(view: &impl Records, path: &str, version: i32) -> Result<Txn, ZkError> {
    validate_path(path)?;
    let node = view.record(path).ok_or(ZkError::NoNode)?;
    check_version(node.version, version)?;
    Ok(Txn::Check {
        path: path.to_string(),
    })
}

fn prepare_create(
    view: &impl Records,
    session: SessionId,
    path: &str,
    data: &[u8],
    mode: CreateMode,
) -> Result<Txn, ZkError> {
    validate_create_path(path, mode)?;
    // `validateCreateRequest`, the first server check: TTL nodes need
    // `zookeeper.extendedTypesEnabled`, off by default (S36).
    if mode.ttl_ms().is_some() {
        return Err(ZkError::Unimplemented);
    }
    let (parent_path, _) = split(path);
    let parent = view.record(parent_path).ok_or(ZkError::NoNode)?;
    if parent_path == CONFIG_NODE {
        return Err(ZkError::NoAuth);
    }
    let path = if mode.is_sequential() {
        // `String.format("%010d", cversion)`, negatives included.
        let mut named = String::with_capacity(path.len() + 11);
        named.push_str(path);
        crate::decimal::push_sequence(&mut named, parent.seq_counter);
        named
    } else {
        path.to_string()
    };
    validate_path(&path)?;
    if view.record(&path).is_some() {
        return Err(ZkError::NodeExists);
    }
    // `EphemeralType.get(owner) == NORMAL`: a container parent is fine (S35).
    if is_session_owner(parent.ephemeral_owner) {
        return Err(ZkError::NoChildrenForEphemerals);
    }
    let ephemeral_owner = if mode.is_container() {
        CONTAINER_OWNER
    } else if mode.is_ephemeral() {
        session
    } else {
        0
    };
    Ok(Txn::Create {
        path,
        data: data.to_vec(),
        ephemeral_owner,
    })
}

fn prepare_delete(view: &impl Records, path: &str, version: i32) -> Result<Txn, ZkError> {
    validate_path(path)?;
    // `getParentPathAndValidate`: `/`, `/zookeeper` and its two system
    // children can never be deleted.
    if DataTree::is_system_path(path) {
        return Err(ZkError::BadArguments);
    }
    let (parent_path, _) = split(path);
    view.record(parent_path).ok_or(ZkError::NoNode)?;
    // The DELETE permission is checked on the parent before the node is
    // looked up: under the read-only config node even a missing child
    // answers `NoAuth` (measured).
    if parent_path == CONFIG_NODE {
        return Err(ZkError::NoAuth);
    }
    let node = view.record(path).ok_or(ZkError::NoNode)?;
    check_version(node.version, version)?;
    if node.child_count > 0 {
        return Err(ZkError::NotEmpty);
    }
    Ok(Txn::Delete {
        path: path.to_string(),
    })
}

fn prepare_set_data(
    view: &impl Records,
    path: &str,
    data: &[u8],
    version: i32,
) -> Result<Txn, ZkError> {
    validate_path(path)?;
    let node = view.record(path).ok_or(ZkError::NoNode)?;
    if path == CONFIG_NODE {
        return Err(ZkError::NoAuth);
    }
    check_version(node.version, version)?;
    Ok(Txn::SetData {
        path: path.to_string(),
        data: data.to_vec(),
        // 3.8.0 lets the data version wrap like any Java int (the skip over
        // -1 of ZOOKEEPER-4743 came later).
        version: node.version.wrapping_add(1),
    })
}

/// Whether `owner` is a session (an ephemeral node), not 0 (persistent)
/// nor the container marker (`EphemeralType.get(owner) == NORMAL`).
pub(super) fn is_session_owner(owner: SessionId) -> bool {
    owner != 0 && owner != CONTAINER_OWNER
}

/// The leader's `deleteContainer` (opcode 20), which only the container
/// reaper sends (S35): the node must still be there and empty, and not an
/// ephemeral; a failure is an error txn that takes its zxid like any other.
pub(super) fn prepare_delete_container(tree: &DataTree, path: &str) -> Txn {
    let prepared = (|| {
        if DataTree::is_system_path(path) {
            return Err(ZkError::BadArguments);
        }
        let node = tree.record(path).ok_or(ZkError::NoNode)?;
        if node.child_count > 0 {
            return Err(ZkError::NotEmpty);
        }
        if is_session_owner(node.ephemeral_owner) {
            return Err(ZkError::BadVersion);
        }
        Ok(Txn::Delete {
            path: path.to_string(),
        })
    })();
    prepared.unwrap_or_else(|e| Txn::Error(Err(e)))
}

/// `checkAndIncVersion`: -1 matches any version.
fn check_version(current: i32, expected: i32) -> Result<(), ZkError> {
    if expected != -1 && expected != current {
        Err(ZkError::BadVersion)
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
    let client_check = ops.iter().try_for_each(|op| match op {
        Op::Create { .. } | Op::Delete { .. } | Op::SetData { .. } | Op::Check { .. } => {
            validate_request(op)
        }
        _ => Err(ZkError::BadArguments),
    });
    if let Err(e) = client_check {
        return Txn::Error(Err(e));
    }
    let mut overlay = Overlay {
        base: tree,
        changed: BTreeMap::new(),
    };
    let mut txns = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        match prepare_single(&overlay, session, op) {
            Ok(txn) => {
                overlay.add(&txn);
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
