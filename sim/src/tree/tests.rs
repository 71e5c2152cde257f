//! Property tests of the tree's own bookkeeping: whatever sequence of
//! requests arrives, the derived structures (children sets, the ephemeral
//! index, derived Stat fields) agree with the nodes, a txn prepared against
//! a tree applies to it cleanly, and copy-on-write clones never leak a
//! change into each other.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::{DataTree, Txn};
use crate::path::split;
use crate::proto::{CreateMode, Op, SessionId};

const PATHS: [&str; 7] = ["/a", "/b", "/a/x", "/a/y", "/a/x/z", "/b/e", "/a/s-"];

#[derive(Clone, Debug)]
enum Step {
    Op(SessionId, Op),
    Close(SessionId),
}

fn arb_write() -> impl Strategy<Value = Op> {
    let path = prop::sample::select(&PATHS[..]).prop_map(str::to_string);
    let mode = prop::sample::select(vec![
        CreateMode::Persistent,
        CreateMode::Ephemeral,
        CreateMode::PersistentSequential,
        CreateMode::EphemeralSequential,
    ]);
    prop_oneof![
        4 => (path.clone(), mode, 0..3usize).prop_map(|(path, mode, n)| Op::Create { path, data: vec![1; n], mode }),
        2 => (path.clone(), -1..2i32).prop_map(|(path, version)| Op::Delete { path, version }),
        2 => (path, -1..2i32, 0..3usize).prop_map(|(path, version, n)| Op::SetData { path, data: vec![2; n], version }),
    ]
}

fn arb_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (1..4i64, arb_write()).prop_map(|(s, op)| Step::Op(s, op)),
        2 => (1..4i64, prop::collection::vec(arb_write(), 0..4)).prop_map(|(s, ops)| Step::Op(s, Op::Multi(ops))),
        1 => (1..4i64).prop_map(Step::Close),
    ]
}

/// Everything derived must agree with the nodes themselves.
fn check_consistent(tree: &DataTree) -> Result<(), TestCaseError> {
    let mut children: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut owners: BTreeMap<SessionId, BTreeSet<String>> = BTreeMap::new();
    for (path, node) in tree.nodes() {
        if path != "/" {
            let (parent, name) = split(path);
            prop_assert!(tree.get(parent).is_some(), "{path} has no parent");
            children.entry(parent).or_default().insert(name);
        }
        let n = node.children.len() as i32;
        prop_assert_eq!(node.stat.num_children, n);
        prop_assert_eq!(
            node.stat.cversion,
            node.seq_counter.wrapping_mul(2).wrapping_sub(n)
        );
        prop_assert_eq!(node.stat.data_length, node.data.len() as i32);
        if node.stat.ephemeral_owner != 0 {
            prop_assert!(node.children.is_empty(), "ephemeral {path} has children");
            owners
                .entry(node.stat.ephemeral_owner)
                .or_default()
                .insert(path.to_string());
        }
    }
    let none = BTreeSet::new();
    for (path, node) in tree.nodes() {
        let listed: BTreeSet<&str> = node.children.keys().map(String::as_str).collect();
        // Each child's place in the Java order, kept beside its name, is
        // its name's hashCode and its own czxid and multi index.
        for (name, order) in &node.children {
            let child = tree
                .get(&crate::path::join(path, name))
                .expect("listed child");
            prop_assert_eq!(order.hash, super::java_order::string_hash(name));
            prop_assert_eq!(order.born, (child.stat.czxid, child.multi_index));
        }
        prop_assert_eq!(
            &listed,
            children.get(path).unwrap_or(&none),
            "children of {}",
            path
        );
    }
    for session in 1..4 {
        let expected: Vec<String> = owners
            .get(&session)
            .into_iter()
            .flatten()
            .cloned()
            .collect();
        prop_assert_eq!(tree.ephemerals_of(session), expected);
    }
    let listed: BTreeMap<SessionId, BTreeSet<String>> = tree
        .ephemerals
        .iter()
        .filter(|(_, set)| !set.paths.is_empty())
        .map(|(session, set)| (*session, set.paths.clone()))
        .collect();
    prop_assert_eq!(&listed, &owners);
    for set in tree.ephemerals.values() {
        prop_assert!(
            set.table_len >= super::java_order::grown_session_table_len(0, set.paths.len())
        );
    }
    // Entries a fresh set would equal may stay in the index, but two trees
    // holding the same nodes and histories must compare and hash equal —
    // the checker dedups on that: the tree without them is the same state,
    // with the same fingerprint.
    let mut canonical = tree.clone();
    std::sync::Arc::make_mut(&mut canonical.ephemerals).retain(|_, set| !set.is_default());
    prop_assert_eq!(&canonical, tree);
    prop_assert_eq!(
        crate::fingerprint::stable_hash(&canonical),
        crate::fingerprint::stable_hash(tree)
    );
    Ok(())
}

proptest! {
    #[test]
    fn bookkeeping_survives_any_request_sequence(steps in prop::collection::vec(arb_step(), 1..40)) {
        let mut tree = DataTree::new();
        let mut history: Vec<(DataTree, String)> = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            let zxid = i as i64 + 1;
            // Keep a shared clone and a printout of it, to catch a write
            // leaking through copy-on-write into an older version.
            history.push((tree.clone(), format!("{tree:?}")));
            let txn = match step {
                Step::Op(session, op) => tree.prepare(*session, op),
                Step::Close(session) => tree.prepare_close_session(*session),
            };
            let (reply, _) = tree.apply(zxid, zxid * 10, &txn);
            match &txn {
                Txn::Error(expected) => prop_assert_eq!(&reply, expected),
                _ => prop_assert!(reply.is_ok(), "prepared {:?} failed to apply: {:?}", txn, reply),
            }
            prop_assert_eq!(tree.last_zxid(), zxid);
            check_consistent(&tree)?;
        }
        for (old, printed) in &history {
            prop_assert_eq!(&format!("{old:?}"), printed);
        }
    }
}
