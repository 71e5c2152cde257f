//! Every server's half of a write: `DataTree.processTxn`.
//!
//! Stats change here and only here, field by field as `createNode`,
//! `deleteNode` and `setData` change them (S7, S8, S10, S11, S13), and the
//! watch triggers come out in the order the server fires them (S16).

use std::collections::BTreeSet;

use super::{DataTree, Node, Trigger, Txn};
use crate::path::split;
use crate::proto::{EventType, Reply, Response, SessionId, Stat, ZkError, Zxid};

pub(super) fn apply(
    tree: &mut DataTree,
    zxid: Zxid,
    time_ms: i64,
    txn: &Txn,
    triggers: &mut Vec<Trigger>,
) -> Reply {
    apply_at(tree, (zxid, 0), time_ms, txn, triggers)
}

/// `apply` of the `index`-th txn of a multi (0 outside one): the index
/// orders creates that share a zxid (see `Node::multi_index`).
fn apply_at(
    tree: &mut DataTree,
    (zxid, index): (Zxid, u32),
    time_ms: i64,
    txn: &Txn,
    triggers: &mut Vec<Trigger>,
) -> Reply {
    match txn {
        Txn::Create {
            path,
            data,
            ephemeral_owner,
        } => create_node(
            tree,
            (zxid, index),
            time_ms,
            path,
            data,
            *ephemeral_owner,
            triggers,
        ),
        Txn::Delete { path } => delete_node(tree, zxid, path, triggers).map(|()| Response::Deleted),
        Txn::SetData {
            path,
            data,
            version,
        } => set_data(tree, zxid, time_ms, path, data, *version, triggers),
        // All sub-txns share the multi's zxid and time. A sub-txn that no
        // longer fits (never the case for one prepared against this state)
        // reports its own error and the rest still apply, as in `processTxn`.
        Txn::Multi(txns) => Ok(Response::Multi(
            txns.iter()
                .zip(0u32..)
                .map(|(sub, i)| apply_at(tree, (zxid, i), time_ms, sub, triggers))
                .collect(),
        )),
        Txn::Check { .. } => Ok(Response::Checked),
        Txn::Error(reply) => reply.clone(),
        Txn::CreateSession { .. } => Ok(Response::Synced),
        Txn::CloseSession {
            session,
            ephemerals,
        } => {
            kill_session(tree, zxid, *session, ephemerals, triggers);
            Ok(Response::Synced)
        }
    }
}

/// `DataTree.createNode` (the caller passes `parentCVersion = -1`: the new
/// counter is the parent's plus one).
fn create_node(
    tree: &mut DataTree,
    (zxid, multi_index): (Zxid, u32),
    time_ms: i64,
    path: &str,
    data: &[u8],
    ephemeral_owner: SessionId,
    triggers: &mut Vec<Trigger>,
) -> Reply {
    let (parent_path, name) = split(path);
    if !tree.contains(parent_path) {
        return Err(ZkError::NoNode);
    }
    if tree.contains(path) {
        return Err(ZkError::NodeExists);
    }
    let parent = tree.node_mut(parent_path).ok_or(ZkError::NoNode)?;
    let new_counter = parent.seq_counter.wrapping_add(1);
    // Only a larger counter is stored (a guard for replaying txns over a
    // fuzzy snapshot). At the 2^31 wrap the new counter is negative, so
    // neither the counter nor pzxid moves: the next sequential child gets
    // the same suffix again (S6).
    if new_counter > parent.seq_counter {
        parent.seq_counter = new_counter;
        parent.stat.pzxid = zxid;
    }
    parent.add_child(name, (zxid, multi_index));

    let stat = Stat {
        czxid: zxid,
        mzxid: zxid,
        ctime: time_ms,
        mtime: time_ms,
        version: 0,
        cversion: 0,
        aversion: 0,
        ephemeral_owner,
        data_length: data.len() as i32,
        num_children: 0,
        pzxid: zxid,
    };
    let mut node = Node::new(data.to_vec(), stat);
    node.multi_index = multi_index;
    tree.insert_node(path, node);
    if super::prepare::is_session_owner(ephemeral_owner) {
        tree.ephemerals_mut()
            .entry(ephemeral_owner)
            .or_default()
            .insert(path);
    }
    triggers.push(Trigger {
        path: path.to_string(),
        kind: EventType::NodeCreated,
    });
    triggers.push(Trigger {
        path: parent_path.to_string(),
        kind: EventType::NodeChildrenChanged,
    });
    Ok(Response::Created {
        path: path.to_string(),
        stat: super::client_stat(stat),
    })
}

/// `DataTree.deleteNode`. As in the server, the parent's `pzxid` moves
/// even when the child is already gone (then the result is `NoNode`).
fn delete_node(
    tree: &mut DataTree,
    zxid: Zxid,
    path: &str,
    triggers: &mut Vec<Trigger>,
) -> Result<(), ZkError> {
    let (parent_path, name) = split(path);
    let parent = tree.node_mut(parent_path).ok_or(ZkError::NoNode)?;
    parent.children.remove(name);
    if zxid > parent.stat.pzxid {
        parent.stat.pzxid = zxid;
    }
    parent.refresh_stat();
    let node = tree.remove_node(path).ok_or(ZkError::NoNode)?;
    let owner = node.stat.ephemeral_owner;
    if owner != 0 && tree.ephemerals.contains_key(&owner) {
        // The server keeps the emptied set (and its table): see
        // `SessionEphemerals`; an emptied default one stays too, ignored
        // by equality (`EphemeralIndex`).
        if let Some(set) = tree.ephemerals_mut().get_mut(&owner) {
            set.paths.remove(path);
        }
    }
    triggers.push(Trigger {
        path: path.to_string(),
        kind: EventType::NodeDeleted,
    });
    triggers.push(Trigger {
        path: parent_path.to_string(),
        kind: EventType::NodeChildrenChanged,
    });
    Ok(())
}

/// `DataTree.setData`: data, `mtime`, `mzxid` and the version the leader
/// computed; `dataLength` follows the data.
fn set_data(
    tree: &mut DataTree,
    zxid: Zxid,
    time_ms: i64,
    path: &str,
    data: &[u8],
    version: i32,
    triggers: &mut Vec<Trigger>,
) -> Reply {
    let node = tree.node_mut(path).ok_or(ZkError::NoNode)?;
    node.data = data.to_vec();
    node.stat.mtime = time_ms;
    node.stat.mzxid = zxid;
    node.stat.version = version;
    node.refresh_stat();
    let stat = node.client_stat();
    triggers.push(Trigger {
        path: path.to_string(),
        kind: EventType::NodeDataChanged,
    });
    Ok(Response::SetData(stat))
}

/// `DataTree.killSession`: delete the ephemerals the txn lists, then any
/// others this server still has for the session; a path already gone is
/// skipped (`deleteNodes` ignores `NoNode`). One zxid for all.
fn kill_session(
    tree: &mut DataTree,
    zxid: Zxid,
    session: SessionId,
    listed: &[String],
    triggers: &mut Vec<Trigger>,
) {
    let mut local: BTreeSet<String> = if tree.ephemerals.contains_key(&session) {
        tree.ephemerals_mut()
            .remove(&session)
            .map(|set| set.paths)
            .unwrap_or_default()
    } else {
        BTreeSet::new()
    };
    for path in listed {
        let _ = delete_node(tree, zxid, path, triggers);
        local.remove(path);
    }
    for path in &local {
        let _ = delete_node(tree, zxid, path, triggers);
    }
}
