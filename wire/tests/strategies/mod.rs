//! Proptest strategies for every request and reply shape zkwire speaks.

use proptest::prelude::*;
use zkwire::opcode as op;
use zkwire::*;

pub fn path() -> impl Strategy<Value = String> {
    "(/[a-zé0-9]{0,6}){1,3}"
}

pub fn data() -> impl Strategy<Value = Option<Vec<u8>>> {
    proptest::option::of(proptest::collection::vec(any::<u8>(), 0..16))
}

pub fn paths() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(path(), 0..4)
}

pub fn acl() -> impl Strategy<Value = Vec<Acl>> {
    proptest::collection::vec(
        (any::<i32>(), "[a-z]{0,6}", ".{0,8}").prop_map(|(perms, scheme, id)| Acl {
            perms,
            scheme,
            id,
        }),
        0..3,
    )
}

pub fn stat() -> impl Strategy<Value = Stat> {
    (
        (any::<i64>(), any::<i64>(), any::<i64>(), any::<i64>()),
        (any::<i32>(), any::<i32>(), any::<i32>(), any::<i64>()),
        (any::<i32>(), any::<i32>(), any::<i64>()),
    )
        .prop_map(|((a, b, c, d), (e, f, g, h), (i, j, k))| Stat {
            czxid: a,
            mzxid: b,
            ctime: c,
            mtime: d,
            version: e,
            cversion: f,
            aversion: g,
            ephemeral_owner: h,
            data_length: i,
            num_children: j,
            pzxid: k,
        })
}

/// A request and the opcode its header carries.
pub fn request() -> impl Strategy<Value = (i32, Request)> {
    let multi_op = prop_oneof![
        (
            prop_oneof![
                Just(op::CREATE),
                Just(op::CREATE2),
                Just(op::CREATE_CONTAINER)
            ],
            path(),
            data(),
            acl(),
            any::<i32>()
        )
            .prop_map(|(o, path, data, acl, flags)| MultiOp {
                op: o,
                request: Request::Create {
                    path,
                    data,
                    acl,
                    flags
                }
            }),
        (path(), data(), acl(), any::<i32>(), any::<i64>()).prop_map(
            |(path, data, acl, flags, ttl)| MultiOp {
                op: op::CREATE_TTL,
                request: Request::CreateTtl {
                    path,
                    data,
                    acl,
                    flags,
                    ttl
                }
            }
        ),
        (path(), any::<i32>()).prop_map(|(path, version)| MultiOp {
            op: op::DELETE,
            request: Request::Delete { path, version }
        }),
        (path(), data(), any::<i32>()).prop_map(|(path, data, version)| MultiOp {
            op: op::SET_DATA,
            request: Request::SetData {
                path,
                data,
                version
            }
        }),
        (path(), any::<i32>()).prop_map(|(path, version)| MultiOp {
            op: op::CHECK,
            request: Request::Check { path, version }
        }),
    ];
    let read_op = prop_oneof![
        (path(), any::<bool>()).prop_map(|(path, watch)| Request::GetData { path, watch }),
        (path(), any::<bool>()).prop_map(|(path, watch)| Request::GetChildren { path, watch }),
    ];
    prop_oneof![
        proptest::collection::vec(multi_op, 0..4).prop_map(|ops| (op::MULTI, Request::Multi(ops))),
        proptest::collection::vec(read_op, 0..4)
            .prop_map(|ops| (op::MULTI_READ, Request::MultiRead(ops))),
        (
            prop_oneof![
                Just(op::CREATE),
                Just(op::CREATE2),
                Just(op::CREATE_CONTAINER)
            ],
            path(),
            data(),
            acl(),
            any::<i32>()
        )
            .prop_map(|(o, path, data, acl, flags)| (
                o,
                Request::Create {
                    path,
                    data,
                    acl,
                    flags
                }
            )),
        (path(), data(), acl(), any::<i32>(), any::<i64>()).prop_map(
            |(path, data, acl, flags, ttl)| (
                op::CREATE_TTL,
                Request::CreateTtl {
                    path,
                    data,
                    acl,
                    flags,
                    ttl
                }
            )
        ),
        (path(), any::<i32>(), 0..4u8).prop_map(|(path, n, which)| match which {
            0 => (op::DELETE, Request::Delete { path, version: n }),
            1 => (op::CHECK, Request::Check { path, version: n }),
            2 => (op::ADD_WATCH, Request::AddWatch { path, mode: n }),
            _ => (op::REMOVE_WATCHES, Request::RemoveWatches { path, kind: n }),
        }),
        (path(), any::<i32>())
            .prop_map(|(path, kind)| (op::CHECK_WATCHES, Request::CheckWatches { path, kind })),
        (path(), any::<bool>(), 0..4u8).prop_map(|(path, watch, which)| match which {
            0 => (op::EXISTS, Request::Exists { path, watch }),
            1 => (op::GET_DATA, Request::GetData { path, watch }),
            2 => (op::GET_CHILDREN, Request::GetChildren { path, watch }),
            _ => (op::GET_CHILDREN2, Request::GetChildren2 { path, watch }),
        }),
        (path(), data(), any::<i32>()).prop_map(|(path, data, version)| (
            op::SET_DATA,
            Request::SetData {
                path,
                data,
                version
            }
        )),
        (path(), acl(), any::<i32>())
            .prop_map(|(path, acl, version)| (op::SET_ACL, Request::SetAcl { path, acl, version })),
        (path(), 0..4u8).prop_map(|(path, which)| match which {
            0 => (op::GET_ACL, Request::GetAcl { path }),
            1 => (op::SYNC, Request::Sync { path }),
            2 => (
                op::GET_ALL_CHILDREN_NUMBER,
                Request::GetAllChildrenNumber { path }
            ),
            _ => (op::GET_EPHEMERALS, Request::GetEphemerals { prefix: path }),
        }),
        (any::<i64>(), paths(), paths(), paths()).prop_map(|(z, d, e, c)| (
            op::SET_WATCHES,
            Request::SetWatches {
                relative_zxid: z,
                data: d,
                exist: e,
                child: c
            }
        )),
        (any::<i64>(), paths(), paths(), paths(), paths(), paths()).prop_map(
            |(z, d, e, c, p, pr)| (
                op::SET_WATCHES2,
                Request::SetWatches2 {
                    relative_zxid: z,
                    data: d,
                    exist: e,
                    child: c,
                    persistent: p,
                    persistent_recursive: pr
                }
            )
        ),
        (
            any::<i32>(),
            "[a-z]{0,8}",
            proptest::collection::vec(any::<u8>(), 0..12)
        )
            .prop_map(|(kind, scheme, auth)| (op::AUTH, Request::SetAuth { kind, scheme, auth })),
        Just((op::PING, Request::Ping)),
        Just((op::CLOSE_SESSION, Request::CloseSession)),
        Just((op::WHO_AM_I, Request::WhoAmI)),
        (
            proptest::option::of(".{0,10}"),
            proptest::option::of(".{0,10}"),
            proptest::option::of(".{0,10}"),
            any::<i64>()
        )
            .prop_map(|(j, l, n, c)| (
                op::RECONFIG,
                Request::Reconfig {
                    joining: j,
                    leaving: l,
                    new_members: n,
                    cur_config_id: c
                }
            )),
    ]
}

/// A reply body and the opcode of the request it answers.
pub fn response() -> impl Strategy<Value = (i32, Response)> {
    let multi_result = prop_oneof![
        path().prop_map(|path| MultiResult::Create { path }),
        (path(), stat()).prop_map(|(path, stat)| MultiResult::Create2 { path, stat }),
        Just(MultiResult::Delete),
        Just(MultiResult::Check),
        stat().prop_map(|stat| MultiResult::SetData { stat }),
        any::<i32>().prop_map(|err| MultiResult::Error { err }),
    ];
    let read_result = prop_oneof![
        paths().prop_map(|names| ReadResult::Children { names }),
        (data(), stat()).prop_map(|(data, stat)| ReadResult::Data { data, stat }),
        any::<i32>().prop_map(|err| ReadResult::Error { err }),
    ];
    prop_oneof![
        prop_oneof![
            Just(op::DELETE),
            Just(op::CHECK),
            Just(op::PING),
            Just(op::AUTH),
            Just(op::SET_WATCHES),
            Just(op::SET_WATCHES2),
            Just(op::REMOVE_WATCHES),
            Just(op::CHECK_WATCHES),
            Just(op::CLOSE_SESSION)
        ]
        .prop_map(|o| (o, Response::Empty)),
        path().prop_map(|path| (op::CREATE, Response::Create { path })),
        (
            prop_oneof![
                Just(op::CREATE2),
                Just(op::CREATE_CONTAINER),
                Just(op::CREATE_TTL)
            ],
            path(),
            stat()
        )
            .prop_map(|(o, path, stat)| (o, Response::Create2 { path, stat })),
        (
            prop_oneof![Just(op::EXISTS), Just(op::SET_DATA), Just(op::SET_ACL)],
            stat()
        )
            .prop_map(|(o, s)| (o, Response::Stat(s))),
        (data(), stat()).prop_map(|(data, stat)| (op::GET_DATA, Response::Data { data, stat })),
        (acl(), stat()).prop_map(|(acl, stat)| (op::GET_ACL, Response::Acl { acl, stat })),
        paths().prop_map(|names| (op::GET_CHILDREN, Response::Children { names })),
        (paths(), stat())
            .prop_map(|(names, stat)| (op::GET_CHILDREN2, Response::Children2 { names, stat })),
        path().prop_map(|path| (op::SYNC, Response::Sync { path })),
        any::<i32>().prop_map(|n| (op::GET_ALL_CHILDREN_NUMBER, Response::Count(n))),
        any::<i32>().prop_map(|n| (op::ADD_WATCH, Response::Code(n))),
        paths().prop_map(|p| (op::GET_EPHEMERALS, Response::Ephemerals(p))),
        proptest::collection::vec(multi_result, 0..4).prop_map(|r| (op::MULTI, Response::Multi(r))),
        proptest::collection::vec(read_result, 0..4)
            .prop_map(|r| (op::MULTI_READ, Response::MultiRead(r))),
        proptest::collection::vec(
            ("[a-z]{0,5}", ".{0,8}")
                .prop_map(|(auth_scheme, user)| ClientInfo { auth_scheme, user }),
            0..3
        )
        .prop_map(|c| (op::WHO_AM_I, Response::WhoAmI(c))),
    ]
}
