//! Encode then decode gives back the same value, for every request and
//! reply shape, and the frame reader reassembles frames cut anywhere.

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use zkwire::opcode as op;
use zkwire::*;

use crate::strategies;

use strategies::{path, request, response};

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        rng_seed: RngSeed::Fixed(0x7a6b_7769_7265),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
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
    // The error sticks: the stream has no next frame boundary, and what
    // arrives after it is not kept.
    reader.push(&[0; 17]);
    assert!(reader.pop().is_err());
    assert_eq!(reader.buffered(), 0);

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
