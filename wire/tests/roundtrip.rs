//! Encode then decode gives back the same value, for every request and
//! reply shape, and the frame reader reassembles frames cut anywhere.

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use zkwire::opcode as op;
use zkwire::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        rng_seed: RngSeed::Fixed(0x7a6b_7769_7265),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn path() -> impl Strategy<Value = String> {
    "(/[a-zé0-9]{0,6}){1,3}"
}

fn data() -> impl Strategy<Value = Option<Vec<u8>>> {
    proptest::option::of(proptest::collection::vec(any::<u8>(), 0..16))
}

fn paths() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(path(), 0..4)
}

fn acl() -> impl Strategy<Value = Vec<Acl>> {
    proptest::collection::vec(
        (any::<i32>(), "[a-z]{0,6}", ".{0,8}").prop_map(|(perms, scheme, id)| Acl {
            perms,
            scheme,
            id,
        }),
        0..3,
    )
}

fn stat() -> impl Strategy<Value = Stat> {
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
fn request() -> impl Strategy<Value = (i32, Request)> {
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
fn response() -> impl Strategy<Value = (i32, Response)> {
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
            Just(op::ADD_WATCH),
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

proptest! {
    #![proptest_config(config())]

    #[test]
    fn requests_round_trip(xid in any::<i32>(), (o, request) in request()) {
        let header = RequestHeader { xid, op: o };
        let body = encode_request(&header, &request);
        let decoded = decode_request(&body);
        prop_assert_eq!(decoded, Ok((header, request)));
    }

    #[test]
    fn replies_round_trip(xid in any::<i32>(), zxid in any::<i64>(), (o, response) in response()) {
        let header = ReplyHeader { xid, zxid, err: 0 };
        let body = encode_reply(&header, Some(&response));
        prop_assert_eq!(decode_reply(o, &body), Ok((header, Some(response))));
    }

    #[test]
    fn failed_replies_have_no_body_except_multi(
        zxid in any::<i64>(),
        err in any::<i32>().prop_filter("an error", |e| *e != 0),
        (o, response) in response(),
    ) {
        let header = ReplyHeader { xid: 7, zxid, err };
        if o == op::MULTI {
            let body = encode_reply(&header, Some(&response));
            prop_assert_eq!(decode_reply(o, &body), Ok((header, Some(response))));
        }
        let body = encode_reply(&header, None);
        prop_assert_eq!(decode_reply(o, &body), Ok((header, None)));
    }

    #[test]
    fn handshakes_round_trip(
        protocol_version in any::<i32>(),
        zxid in any::<i64>(),
        timeout_ms in any::<i32>(),
        session_id in any::<i64>(),
        passwd in proptest::collection::vec(any::<u8>(), 0..20),
        read_only in proptest::option::of(any::<bool>()),
    ) {
        let req = ConnectRequest {
            protocol_version,
            last_zxid_seen: zxid,
            timeout_ms,
            session_id,
            passwd: passwd.clone(),
            read_only,
        };
        prop_assert_eq!(decode_connect_request(&encode_connect_request(&req)), Ok(req));
        let rsp = ConnectResponse {
            protocol_version,
            timeout_ms,
            session_id,
            passwd,
            read_only,
        };
        prop_assert_eq!(decode_connect_response(&encode_connect_response(&rsp)), Ok(rsp));
    }

    #[test]
    fn notifications_round_trip(zxid in any::<i64>(), kind in any::<i32>(), state in any::<i32>(), path in path()) {
        let event = WatcherEvent { kind, state, path };
        let body = encode_notification(zxid, &event);
        let header = ReplyHeader { xid: xid::NOTIFICATION, zxid, err: 0 };
        prop_assert_eq!(decode_notification(&body), Ok((header, event)));
    }

    /// Frames cut into arbitrary chunks come out whole and in order.
    #[test]
    fn frames_reassemble(
        bodies in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..6),
        cuts in proptest::collection::vec(1..17usize, 1..40),
    ) {
        let stream: Vec<u8> = bodies.iter().flat_map(|b| write_frame(b)).collect();
        let mut reader = FrameReader::default();
        let mut out = Vec::new();
        let mut at = 0;
        let mut cut = cuts.iter().cycle();
        while at < stream.len() {
            let end = (at + cut.next().unwrap()).min(stream.len());
            reader.push(&stream[at..end]);
            at = end;
            while let Some(frame) = reader.pop().unwrap() {
                out.push(frame);
            }
        }
        prop_assert_eq!(out, bodies);
        prop_assert_eq!(reader.buffered(), 0);
    }
}

#[test]
fn frame_reader_refuses_lengths_out_of_range() {
    let mut reader = FrameReader::new(16);
    reader.push(&17i32.to_be_bytes());
    assert_eq!(
        reader.pop(),
        Err(FrameError::TooLarge {
            len: 17,
            max: 16,
            offset: 0
        })
    );
    // The error sticks: the stream has no next frame boundary.
    reader.push(&[0; 17]);
    assert!(reader.pop().is_err());

    let mut reader = FrameReader::default();
    reader.push(&write_frame(b"ok"));
    reader.push(&(-5i32).to_be_bytes());
    assert_eq!(reader.pop(), Ok(Some(b"ok".to_vec())));
    assert_eq!(
        reader.pop(),
        Err(FrameError::Negative { len: -5, offset: 6 })
    );
    assert_eq!(DEFAULT_MAX_FRAME, 0xfffff);
    assert_eq!(FrameReader::default().max(), DEFAULT_MAX_FRAME);
}

#[test]
fn a_frame_of_exactly_the_maximum_is_accepted() {
    let mut reader = FrameReader::new(8);
    reader.push(&write_frame(&[7; 8]));
    assert_eq!(reader.pop(), Ok(Some(vec![7; 8])));
}

#[test]
fn decode_errors_name_field_and_offset() {
    // A create whose ACL vector claims a billion entries in a short frame.
    let mut body = encode_request(
        &RequestHeader {
            xid: 1,
            op: op::CREATE,
        },
        &Request::Create {
            path: "/a".into(),
            data: None,
            acl: vec![],
            flags: 0,
        },
    );
    // header 8, path 4+2, data 4: the ACL count is at offset 18.
    body[18..22].copy_from_slice(&1_000_000_000i32.to_be_bytes());
    let e = decode_request(&body).unwrap_err();
    assert_eq!((e.offset, e.field), (18, "CreateRequest.acl"));
    assert!(
        matches!(e.kind, DecodeErrorKind::LengthPastEnd { .. }),
        "{e}"
    );
    assert!(
        e.to_string().starts_with("at byte 18 (CreateRequest.acl)"),
        "{e}"
    );

    let e = decode_request(&encode_request(
        &RequestHeader { xid: 1, op: 999 },
        &Request::Ping,
    ))
    .unwrap_err();
    assert_eq!(
        (e.offset, e.field, e.kind),
        (4, "RequestHeader.type", DecodeErrorKind::UnknownOp(999))
    );

    let mut body = encode_request(
        &RequestHeader {
            xid: 1,
            op: op::PING,
        },
        &Request::Ping,
    );
    body.push(0);
    let e = decode_request(&body).unwrap_err();
    assert_eq!((e.offset, e.kind), (8, DecodeErrorKind::TrailingBytes(1)));

    let mut body = encode_request(
        &RequestHeader {
            xid: 1,
            op: op::SYNC,
        },
        &Request::Sync { path: "/ab".into() },
    );
    body[12] = 0xff;
    let e = decode_request(&body).unwrap_err();
    assert_eq!((e.offset, e.kind), (8, DecodeErrorKind::NotUtf8));

    // A getData inside a (write) multi is refused at its MultiHeader.
    let body = encode_request(
        &RequestHeader {
            xid: 1,
            op: op::MULTI,
        },
        &Request::Multi(vec![MultiOp {
            op: op::GET_DATA,
            request: Request::GetData {
                path: "/".into(),
                watch: false,
            },
        }]),
    );
    let e = decode_request(&body).unwrap_err();
    assert_eq!(
        (e.offset, e.field, e.kind),
        (
            8,
            "MultiHeader.type",
            DecodeErrorKind::UnknownOp(op::GET_DATA)
        )
    );
}
