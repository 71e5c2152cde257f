//! Between the wire and the world: a decoded request becomes a `zksim::Op`
//! (or an answer the engine gives itself), and the world's reply becomes
//! the reply body ZooKeeper 3.8 sends for that request's opcode.

use zksim::{AddWatchMode, CreateMode, EventType, Op, Reply, Response, WatcherType, ZkError};
use zkwire::opcode as op;
use zkwire::{Acl, MultiResult, ReadResult, Request, Stat, WatcherEvent};

/// How to encode the world's answer to a request: the opcode decides the
/// body's shape (a `create` answers a path, a `create2` a path and a stat).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Create,
    Create2,
    Delete,
    Exists,
    GetData,
    SetData,
    /// `getACL`, asked of the world as an `exists`: every node has the open
    /// ACL here.
    GetAcl,
    GetChildren,
    GetChildren2,
    /// `sync` echoes the path it was asked for.
    Sync,
    Check,
    /// Per-op shapes of a multi (create or create2 results differ).
    Multi,
    MultiRead,
    Ephemerals,
    AllChildrenNumber,
    /// addWatch: `ErrorResponse{0}` (the 3.8.0 server writes one).
    AddWatch,
    /// removeWatches, checkWatches: no body.
    NoBody,
}

/// What the engine does with one request.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    /// Ask the world; encode its reply with `shape`. `multi_ops` keeps
    /// the opcodes of a multi's ops for their results' shapes, `path` the
    /// request's path (a sync echoes it), and `null_writes` which ops
    /// (the request itself, or each op of a multi) write null data: the
    /// world stores bytes, so the engine remembers which writes were null
    /// to answer a later getData with null data, as ZooKeeper does.
    World {
        op: Op,
        shape: Shape,
        multi_ops: Vec<i32>,
        path: String,
        null_writes: Vec<bool>,
    },
    /// Answer at once with this error code (the real server's answer to a
    /// request it refuses before ordering it, e.g. TTL nodes with extended
    /// types off: `Unimplemented`; an empty ACL: `InvalidACL`).
    Error(i32),
    /// Answer at once with err 0 and this body.
    Reply(zkwire::Response),
    /// The real server does not answer this with a reply we can give: the
    /// opcode is one this server does not implement (yet). Answered
    /// `Unimplemented`, then the connection is closed, as ZooKeeper's
    /// `UnimplementedRequestProcessor` does.
    Unsupported(i32),
    /// The request's path fails ZooKeeper's path rules: hostile input (a
    /// real client's library refuses such a path before sending it).
    BadPath(String),
}

/// Plan a data request (everything but the session-level ones: ping,
/// closeSession, setAuth, setWatches, which the engine handles itself).
pub fn plan(opcode: i32, request: Request) -> Plan {
    let planned = match (opcode, request) {
        (
            op::CREATE | op::CREATE2 | op::CREATE_CONTAINER,
            Request::Create {
                path,
                data,
                acl,
                flags,
            },
        ) => {
            // createContainer answers as create2 does.
            let shape = if opcode == op::CREATE {
                Shape::Create
            } else {
                Shape::Create2
            };
            let null = data.is_none();
            match create_op(path, data, &acl, flags) {
                Ok(op) => writing(world(op, shape), vec![null]),
                Err(err) => Plan::Error(err),
            }
        }
        // Extended types (TTL) are off by default: `validateCreateRequest`
        // fails a TTL create Unimplemented, the server's first check, and
        // like every failed write it takes a zxid (S36): the world orders
        // it. The TTL itself cannot matter then; it is kept in the range
        // the client library checks (1..=0xFFFFFFFFFF ms).
        (
            op::CREATE_TTL,
            Request::CreateTtl {
                path,
                data,
                acl,
                flags: flags @ (5 | 6),
                ttl,
            },
        ) if !acl.is_empty() => {
            let ttl_ms = ttl.clamp(1, 0xFF_FFFF_FFFF);
            let mode = if flags == 5 {
                CreateMode::PersistentWithTtl { ttl_ms }
            } else {
                CreateMode::PersistentSequentialWithTtl { ttl_ms }
            };
            let null = data.is_none();
            let op = Op::Create {
                path,
                data: data.unwrap_or_default(),
                mode,
            };
            writing(world(op, Shape::Create2), vec![null])
        }
        (op::CREATE_TTL, Request::CreateTtl { .. }) => Plan::Error(ZkError::Unimplemented.code()),
        (op::DELETE, Request::Delete { path, version }) => {
            world(Op::Delete { path, version }, Shape::Delete)
        }
        (op::EXISTS, Request::Exists { path, watch }) => {
            world(Op::Exists { path, watch }, Shape::Exists)
        }
        (op::GET_DATA, Request::GetData { path, watch }) => {
            world(Op::GetData { path, watch }, Shape::GetData)
        }
        (
            op::SET_DATA,
            Request::SetData {
                path,
                data,
                version,
            },
        ) => {
            let null = data.is_none();
            let op = Op::SetData {
                path,
                data: data.unwrap_or_default(),
                version,
            };
            writing(world(op, Shape::SetData), vec![null])
        }
        (op::GET_ACL, Request::GetAcl { path }) => {
            world(Op::Exists { path, watch: false }, Shape::GetAcl)
        }
        (op::GET_CHILDREN, Request::GetChildren { path, watch }) => {
            world(Op::GetChildren { path, watch }, Shape::GetChildren)
        }
        (op::GET_CHILDREN2, Request::GetChildren2 { path, watch }) => {
            world(Op::GetChildren { path, watch }, Shape::GetChildren2)
        }
        (op::SYNC, Request::Sync { path }) => world(Op::Sync { path }, Shape::Sync),
        (op::CHECK, Request::Check { path, version }) => {
            world(Op::Check { path, version }, Shape::Check)
        }
        (op::MULTI, Request::Multi(ops)) => multi(ops),
        (op::MULTI_READ, Request::MultiRead(reads)) => {
            let mut ops = Vec::with_capacity(reads.len());
            for read in reads {
                ops.push(match read {
                    Request::GetData { path, watch } => Op::GetData { path, watch },
                    Request::GetChildren { path, watch } => Op::GetChildren { path, watch },
                    // The codec reads only these two inside a multiRead.
                    _ => return Plan::Unsupported(op::MULTI_READ),
                });
            }
            world(Op::MultiRead(ops), Shape::MultiRead)
        }
        (op::GET_EPHEMERALS, Request::GetEphemerals { prefix }) => {
            world(Op::GetEphemerals { prefix }, Shape::Ephemerals)
        }
        (op::GET_ALL_CHILDREN_NUMBER, Request::GetAllChildrenNumber { path }) => {
            world(Op::GetAllChildrenNumber { path }, Shape::AllChildrenNumber)
        }
        (op::ADD_WATCH, Request::AddWatch { path, mode }) => {
            let mode = match mode {
                0 => AddWatchMode::Persistent,
                1 => AddWatchMode::PersistentRecursive,
                // `AddWatchMode.fromValue` throws: the request fails to
                // deserialize into a mode, answered as a bad argument.
                _ => return Plan::Error(ZkError::BadArguments.code()),
            };
            world(Op::AddWatch { path, mode }, Shape::AddWatch)
        }
        (op::REMOVE_WATCHES, Request::RemoveWatches { path, kind }) => match watcher_type(kind) {
            Some(kind) => world(Op::RemoveWatches { path, kind }, Shape::NoBody),
            None => Plan::Error(ZkError::BadArguments.code()),
        },
        (op::CHECK_WATCHES, Request::CheckWatches { path, kind }) => match watcher_type(kind) {
            Some(kind) => world(Op::CheckWatches { path, kind }, Shape::NoBody),
            None => Plan::Error(ZkError::BadArguments.code()),
        },
        (opcode, _) => Plan::Unsupported(opcode),
    };
    if let Plan::World { op, .. } = &planned {
        if let Some(path) = bad_path(op) {
            return Plan::BadPath(path);
        }
    }
    planned
}

/// The first path of `op` that breaks ZooKeeper's path rules (S1). Other
/// refusals of the client library (a TTL out of range, a read in a multi)
/// are left to the world, which answers them with their error.
fn bad_path(op: &Op) -> Option<String> {
    use zksim::path::{validate_create_path, validate_path};
    let bad = |path: &str, checked: Result<(), ZkError>| checked.err().map(|_| path.to_string());
    match op {
        Op::Create { path, mode, .. } => bad(path, validate_create_path(path, *mode)),
        Op::Multi(ops) | Op::MultiRead(ops) => ops.iter().find_map(bad_path),
        other => bad(other.path(), validate_path(other.path())),
    }
}

/// `Watcher.WatcherType` from its wire value.
fn watcher_type(kind: i32) -> Option<WatcherType> {
    match kind {
        1 => Some(WatcherType::Children),
        2 => Some(WatcherType::Data),
        3 => Some(WatcherType::Any),
        _ => None,
    }
}

fn world(op: Op, shape: Shape) -> Plan {
    Plan::World {
        path: op.path().to_string(),
        op,
        shape,
        multi_ops: Vec::new(),
        null_writes: Vec::new(),
    }
}

fn writing(plan: Plan, nulls: Vec<bool>) -> Plan {
    match plan {
        Plan::World {
            op,
            shape,
            multi_ops,
            path,
            ..
        } => Plan::World {
            op,
            shape,
            multi_ops,
            path,
            null_writes: nulls,
        },
        other => other,
    }
}

/// A create's mode from its flags (`CreateMode.fromFlag`), checked as
/// `PrepRequestProcessor` checks it; `Err` is the error code it answers.
fn create_op(path: String, data: Option<Vec<u8>>, acl: &[Acl], flags: i32) -> Result<Op, i32> {
    let mode = match flags {
        0 => CreateMode::Persistent,
        1 => CreateMode::Ephemeral,
        2 => CreateMode::PersistentSequential,
        3 => CreateMode::EphemeralSequential,
        4 => CreateMode::Container,
        5 | 6 => return Err(ZkError::Unimplemented.code()),
        _ => return Err(ZkError::BadArguments.code()),
    };
    // `fixupACL`: a missing or empty ACL is refused; any other is
    // accepted and every node is open (ACLs are not enforced here).
    if acl.is_empty() {
        return Err(ZkError::InvalidAcl.code());
    }
    Ok(Op::Create {
        path,
        data: data.unwrap_or_default(),
        mode,
    })
}

fn multi(ops: Vec<zkwire::MultiOp>) -> Plan {
    let count = ops.len();
    let mut sim_ops = Vec::with_capacity(count);
    let mut opcodes = Vec::with_capacity(count);
    let mut nulls = Vec::with_capacity(count);
    for (
        index,
        zkwire::MultiOp {
            op: opcode,
            request,
        },
    ) in ops.into_iter().enumerate()
    {
        let mut null = false;
        let sim = match (opcode, request) {
            (
                op::CREATE | op::CREATE2 | op::CREATE_CONTAINER,
                Request::Create {
                    path,
                    data,
                    acl,
                    flags,
                },
            ) => {
                null = data.is_none();
                match create_op(path, data, &acl, flags) {
                    Ok(op) => op,
                    Err(err) => return failed_multi(count, index, err),
                }
            }
            (op::CREATE_TTL, Request::CreateTtl { .. }) => {
                return failed_multi(count, index, ZkError::Unimplemented.code())
            }
            (op::DELETE, Request::Delete { path, version }) => Op::Delete { path, version },
            (
                op::SET_DATA,
                Request::SetData {
                    path,
                    data,
                    version,
                },
            ) => {
                null = data.is_none();
                Op::SetData {
                    path,
                    data: data.unwrap_or_default(),
                    version,
                }
            }
            (op::CHECK, Request::Check { path, version }) => Op::Check { path, version },
            (opcode, _) => return Plan::Unsupported(opcode),
        };
        sim_ops.push(sim);
        opcodes.push(opcode);
        nulls.push(null);
    }
    writing(
        Plan::World {
            op: Op::Multi(sim_ops),
            shape: Shape::Multi,
            multi_ops: opcodes,
            path: String::new(),
            null_writes: Vec::new(),
        },
        nulls,
    )
}

/// A multi one of whose ops is refused before ordering (a TTL create with
/// extended types off, an empty ACL): header err 0 and a failed multi's
/// results — 0 before the refused op, its code, -2 after (what 3.8.0 sends
/// for a multi holding a TTL create, docs/WIRE.md).
fn failed_multi(count: usize, index: usize, err: i32) -> Plan {
    let results = (0..count)
        .map(|i| MultiResult::Error {
            err: match i.cmp(&index) {
                std::cmp::Ordering::Less => 0,
                std::cmp::Ordering::Equal => err,
                std::cmp::Ordering::Greater => ZkError::RuntimeInconsistency.code(),
            },
        })
        .collect();
    Plan::Reply(zkwire::Response::Multi(results))
}

/// The reply's error code and body for the world's `reply`.
pub fn response(
    shape: Shape,
    reply: Reply,
    multi_ops: &[i32],
    path: &str,
) -> (i32, Option<zkwire::Response>) {
    use zkwire::Response as W;
    let response = match (shape, reply) {
        (_, Err(err)) => return (err.code(), None),
        (Shape::Create, Ok(Response::Created { path, .. })) => W::Create { path },
        (Shape::Create2, Ok(Response::Created { path, stat })) => W::Create2 {
            path,
            stat: stat_of(&stat),
        },
        (Shape::Delete, Ok(Response::Deleted)) | (Shape::Check, Ok(Response::Checked)) => W::Empty,
        (Shape::Exists, Ok(Response::Exists(Some(stat)))) => W::Stat(stat_of(&stat)),
        // A missing node is an error on the wire (`NoNode`, no body).
        (Shape::Exists | Shape::GetAcl, Ok(Response::Exists(None))) => {
            return (ZkError::NoNode.code(), None)
        }
        (Shape::GetAcl, Ok(Response::Exists(Some(stat)))) => W::Acl {
            acl: vec![Acl::open_unsafe()],
            stat: stat_of(&stat),
        },
        (Shape::GetData, Ok(Response::Data { data, stat })) => W::Data {
            data: Some(data),
            stat: stat_of(&stat),
        },
        (Shape::SetData, Ok(Response::SetData(stat))) => W::Stat(stat_of(&stat)),
        (Shape::GetChildren, Ok(Response::Children { names, .. })) => W::Children { names },
        (Shape::GetChildren2, Ok(Response::Children { names, stat })) => W::Children2 {
            names,
            stat: stat_of(&stat),
        },
        (Shape::Sync, Ok(Response::Synced)) => W::Sync {
            path: path.to_string(),
        },
        (Shape::Multi, Ok(Response::Multi(results))) => W::Multi(
            results
                .into_iter()
                .zip(multi_ops.iter().copied())
                .map(|(result, opcode)| multi_result(result, opcode))
                .collect(),
        ),
        (Shape::MultiRead, Ok(Response::Multi(results))) => {
            W::MultiRead(results.into_iter().map(read_result).collect())
        }
        (Shape::Ephemerals, Ok(Response::Ephemerals(paths))) => W::Ephemerals(paths),
        (Shape::AllChildrenNumber, Ok(Response::AllChildrenNumber(n))) => W::Count(n),
        (Shape::AddWatch, Ok(Response::Done)) => W::Code(0),
        (Shape::NoBody, Ok(Response::Done)) => return (0, None),
        // The world answered a shape it never gives to this op: a bug of
        // ours, reported to the client as the server's own inconsistency.
        (_, Ok(_)) => return (ZkError::RuntimeInconsistency.code(), None),
    };
    (0, Some(response))
}

fn read_result(result: Result<Response, ZkError>) -> ReadResult {
    match result {
        Ok(Response::Data { data, stat }) => ReadResult::Data {
            data: Some(data),
            stat: stat_of(&stat),
        },
        Ok(Response::Children { names, .. }) => ReadResult::Children { names },
        Ok(_) => ReadResult::Error {
            err: ZkError::RuntimeInconsistency.code(),
        },
        Err(err) => ReadResult::Error { err: err.code() },
    }
}

fn multi_result(result: Result<Response, ZkError>, opcode: i32) -> MultiResult {
    match result {
        Err(err) => MultiResult::Error { err: err.code() },
        Ok(Response::Created { path, stat }) => {
            if opcode == op::CREATE {
                MultiResult::Create { path }
            } else {
                MultiResult::Create2 {
                    path,
                    stat: stat_of(&stat),
                }
            }
        }
        Ok(Response::Deleted) => MultiResult::Delete,
        Ok(Response::SetData(stat)) => MultiResult::SetData {
            stat: stat_of(&stat),
        },
        Ok(Response::Checked) => MultiResult::Check,
        Ok(_) => MultiResult::Error {
            err: ZkError::RuntimeInconsistency.code(),
        },
    }
}

pub fn stat_of(s: &zksim::Stat) -> Stat {
    Stat {
        czxid: s.czxid,
        mzxid: s.mzxid,
        ctime: s.ctime,
        mtime: s.mtime,
        version: s.version,
        cversion: s.cversion,
        aversion: s.aversion,
        ephemeral_owner: s.ephemeral_owner,
        data_length: s.data_length,
        num_children: s.num_children,
        pzxid: s.pzxid,
    }
}

/// A watch notification's body (`WatcherEvent`, state SyncConnected).
pub fn watcher_event(event: &zksim::WatchedEvent) -> WatcherEvent {
    let kind = match event.kind {
        EventType::NodeCreated => 1,
        EventType::NodeDeleted => 2,
        EventType::NodeDataChanged => 3,
        EventType::NodeChildrenChanged => 4,
    };
    WatcherEvent {
        kind,
        state: 3,
        path: event.path.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(flags: i32, acl: Vec<Acl>) -> Request {
        Request::Create {
            path: "/a".into(),
            data: None,
            acl,
            flags,
        }
    }

    #[test]
    fn create_flags_map_as_the_real_server_checks_them() {
        let open = vec![Acl::open_unsafe()];
        assert!(matches!(
            plan(op::CREATE2, create(3, open.clone())),
            Plan::World {
                op: Op::Create {
                    mode: CreateMode::EphemeralSequential,
                    ..
                },
                shape: Shape::Create2,
                ..
            }
        ));
        assert_eq!(plan(op::CREATE, create(5, open.clone())), Plan::Error(-6));
        assert_eq!(plan(op::CREATE, create(9, open)), Plan::Error(-8));
        assert_eq!(plan(op::CREATE, create(0, Vec::new())), Plan::Error(-114));
    }

    #[test]
    fn a_bad_path_is_hostile_and_an_unknown_op_unsupported() {
        let bad = Request::GetData {
            path: "no-slash".into(),
            watch: false,
        };
        assert_eq!(
            plan(op::GET_DATA, bad),
            Plan::BadPath("no-slash".to_string())
        );
        assert_eq!(
            plan(op::SET_ACL, Request::GetAcl { path: "/".into() }),
            Plan::Unsupported(op::SET_ACL)
        );
    }

    #[test]
    fn a_missing_node_is_no_node_on_the_wire_and_a_failed_multi_has_a_body() {
        assert_eq!(
            response(Shape::Exists, Ok(Response::Exists(None)), &[], ""),
            (-101, None)
        );
        let (err, body) = response(
            Shape::Multi,
            Ok(Response::Multi(vec![
                Err(ZkError::RolledBack),
                Err(ZkError::NoNode),
            ])),
            &[op::CREATE, op::DELETE],
            "",
        );
        assert_eq!(err, 0);
        assert_eq!(
            body,
            Some(zkwire::Response::Multi(vec![
                MultiResult::Error { err: 0 },
                MultiResult::Error { err: -101 }
            ]))
        );
    }
}
