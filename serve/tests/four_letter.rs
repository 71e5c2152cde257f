//! Four-letter words on the client ports, through the sans-IO engine: a
//! new connection whose first four bytes spell a known word gets the text
//! a 3.8 server sends, then is closed; `dump` lists the sessions the leader
//! holds with their ephemerals, and drops one the leader expired.

use zkserve::{CloseReason, Engine, Input, Limits, Output, Whitelist};
use zkwire::{
    encode_connect_request, encode_request, write_frame, ConnectRequest, Request, RequestHeader,
};

fn engine(words: Whitelist) -> Engine {
    Engine::new(Limits {
        tick_ms: 100,
        four_letter_words: words,
        ..Limits::default()
    })
}

/// Send `bytes` on a new connection to `server` in the given pieces; the
/// text sent back and whether the connection was then closed as a word.
fn ask(engine: &mut Engine, conn: u64, server: usize, pieces: &[&[u8]]) -> (String, bool) {
    let mut out = Vec::new();
    engine.handle(Input::Accepted { conn, server }, &mut out);
    for piece in pieces {
        engine.handle(
            Input::Bytes {
                conn,
                data: piece.to_vec(),
            },
            &mut out,
        );
    }
    let mut text = Vec::new();
    let mut closed = false;
    for o in out {
        match o {
            Output::Send { conn: c, bytes } if c == conn => text.extend(bytes),
            Output::Close {
                conn: c,
                reason: CloseReason::FourLetterWord(_),
            } if c == conn => closed = true,
            _ => {}
        }
    }
    (String::from_utf8(text).expect("a text answer"), closed)
}

/// A session on `server` with an ephemeral node `path`; returns its id as
/// `dump` prints it.
fn session_with_ephemeral(engine: &mut Engine, conn: u64, server: usize, path: &str) -> String {
    let mut out = Vec::new();
    engine.handle(Input::Accepted { conn, server }, &mut out);
    let hello = encode_connect_request(&ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout_ms: 400,
        session_id: 0,
        passwd: vec![0; 16],
        read_only: Some(false),
    });
    let create = encode_request(
        &RequestHeader {
            xid: 1,
            op: zkwire::opcode::CREATE,
        },
        &Request::Create {
            path: path.into(),
            data: Some(b"x".to_vec()),
            acl: vec![zkwire::Acl::open_unsafe()],
            flags: 1,
        },
    );
    let mut data = write_frame(&hello);
    data.extend(write_frame(&create));
    engine.handle(Input::Bytes { conn, data }, &mut out);
    let session = engine.world().live_sessions().last().expect("a session");
    format!("0x{session:x}")
}

fn lists(dump: &str, id: &str) -> bool {
    dump.lines()
        .any(|line| line.trim().trim_end_matches(':') == id)
}

#[test]
fn ruok_split_across_reads_is_answered_imok_then_closed() {
    let mut e = engine(Whitelist::all());
    assert_eq!(ask(&mut e, 1, 0, &[b"ru", b"ok"]), ("imok".into(), true));
}

#[test]
fn a_word_outside_the_whitelist_is_refused_as_3_8_refuses_it() {
    let mut e = engine(Whitelist::default());
    assert_eq!(
        ask(&mut e, 1, 0, &[b"dump"]),
        (
            "dump is not executed because it is not in the whitelist.\n".into(),
            true
        )
    );
    let (srvr, closed) = ask(&mut e, 2, 0, &[b"srvr"]);
    assert!(closed && srvr.contains("\nMode: leader\n"), "{srvr}");
}

#[test]
fn an_unknown_word_is_read_as_a_frame_length_and_closed() {
    let mut e = engine(Whitelist::all());
    let mut out = Vec::new();
    e.handle(Input::Accepted { conn: 1, server: 0 }, &mut out);
    e.handle(
        Input::Bytes {
            conn: 1,
            data: b"xxxx".to_vec(),
        },
        &mut out,
    );
    assert!(
        matches!(
            &out[..],
            [Output::Close {
                reason: CloseReason::BadFrame(_),
                ..
            }]
        ),
        "{out:?}"
    );
}

#[test]
fn srvr_says_each_servers_mode_and_applied_zxid() {
    let mut e = engine(Whitelist::all());
    session_with_ephemeral(&mut e, 1, 1, "/e");
    let (leader, _) = ask(&mut e, 2, 0, &[b"srvr"]);
    let (follower, _) = ask(&mut e, 3, 2, &[b"srvr"]);
    assert!(leader.starts_with("Zookeeper version: 3.8.0"), "{leader}");
    assert!(leader.contains("\nZxid: 0x2\nMode: leader\n"), "{leader}");
    assert!(
        follower.contains("\nZxid: 0x2\nMode: follower\n"),
        "{follower}"
    );
    let mut single = Engine::new(Limits {
        servers: 1,
        four_letter_words: Whitelist::all(),
        ..Limits::default()
    });
    let (standalone, _) = ask(&mut single, 1, 0, &[b"srvr"]);
    assert!(standalone.contains("\nMode: standalone\n"), "{standalone}");
}

#[test]
fn dump_lists_live_sessions_with_ephemerals_and_not_an_expired_one() {
    let mut e = engine(Whitelist::all());
    let id = session_with_ephemeral(&mut e, 1, 1, "/eph");
    let (dump, closed) = ask(&mut e, 2, 0, &[b"dump"]);
    assert!(closed);
    assert!(dump.starts_with("SessionTracker dump:\nSession Sets (1)/(1):\n1 expire at "));
    assert!(lists(&dump, &id), "{dump}");
    assert!(
        dump.contains(&format!(
            "ephemeral nodes dump:\nSessions with Ephemerals (1):\n{id}:\n\t/eph\n"
        )),
        "{dump}"
    );
    assert!(dump.ends_with("Connections dump:\n"), "{dump}");
    // A follower prints its global sessions with their timeouts.
    let (on_follower, _) = ask(&mut e, 3, 2, &[b"dump"]);
    assert!(
        on_follower.contains(&format!("Global Sessions(1):\n{id}\t400ms\n")),
        "{on_follower}"
    );
    // Silent past its timeout (4 ticks), the session is expired by the leader.
    let mut out = Vec::new();
    for _ in 0..6 {
        e.handle(Input::Tick, &mut out);
    }
    assert!(
        out.iter().any(|o| matches!(
            o,
            Output::Close {
                conn: 1,
                reason: CloseReason::SessionEnded
            }
        )),
        "{out:?}"
    );
    let (dump, _) = ask(&mut e, 4, 0, &[b"dump"]);
    assert!(!lists(&dump, &id), "{dump}");
    assert!(dump.contains("Sessions with Ephemerals (0):\n"), "{dump}");
}

#[test]
fn a_connect_request_is_not_taken_for_a_word() {
    let mut e = engine(Whitelist::all());
    session_with_ephemeral(&mut e, 1, 0, "/x");
    assert_eq!(e.world().live_sessions().count(), 1);
    assert_eq!(e.stats().closed.get("four-letter-word"), None);
}
