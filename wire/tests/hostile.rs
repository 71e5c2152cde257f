//! Hostile input: the golden frames from a real server, mutated (bit flips,
//! truncation, length fields set huge or negative, bytes inserted and
//! removed) and plain random bytes, through every decoder. A decoder must
//! never panic, never allocate more than a small multiple of the bytes it
//! was given (a length field must not size an allocation), and every error
//! must name a field and an offset inside the input.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use zkwire::opcode as op;
use zkwire::*;

/// Counts this thread's allocations (the test harness runs other tests on
/// other threads at the same time).
struct Counting;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
    static TOTAL: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
    let _ = TOTAL.try_with(|t| t.set(t.get() + size));
}

// SAFETY: every call is passed to the system allocator unchanged; the
// counters are const-initialised thread-locals that never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// (largest single allocation, total bytes allocated) while `f` runs.
fn measure<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    LARGEST.with(|l| l.set(0));
    TOTAL.with(|t| t.set(0));
    let out = f();
    (out, LARGEST.with(Cell::get), TOTAL.with(Cell::get))
}

const FIXTURE: &str = include_str!("golden/zookeeper-3.8.frames");

fn golden() -> Vec<Vec<u8>> {
    FIXTURE
        .lines()
        .filter(|l| l.starts_with("c2s ") || l.starts_with("s2c "))
        .map(|l| {
            let hex = l.rsplit(' ').next().unwrap();
            (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect()
        })
        .collect()
}

/// Every reply shape the decoder knows, plus two it does not.
const REPLY_OPS: [i32; 34] = [
    op::CREATE,
    op::DELETE,
    op::EXISTS,
    op::GET_DATA,
    op::SET_DATA,
    op::GET_ACL,
    op::SET_ACL,
    op::GET_CHILDREN,
    op::SYNC,
    op::PING,
    op::GET_CHILDREN2,
    op::CHECK,
    op::MULTI,
    op::CREATE2,
    op::RECONFIG,
    op::CHECK_WATCHES,
    op::REMOVE_WATCHES,
    op::CREATE_CONTAINER,
    op::DELETE_CONTAINER,
    op::CREATE_TTL,
    op::MULTI_READ,
    op::AUTH,
    op::SET_WATCHES,
    op::SASL,
    op::GET_EPHEMERALS,
    op::GET_ALL_CHILDREN_NUMBER,
    op::SET_WATCHES2,
    op::ADD_WATCH,
    op::WHO_AM_I,
    op::CREATE_SESSION,
    op::CLOSE_SESSION,
    op::ERROR,
    0,
    999,
];

/// Runs every decoder on `bytes` and checks each outcome.
fn all_decoders(bytes: &[u8]) -> Result<(), TestCaseError> {
    let check = |what: &str, e: Option<DecodeError>| -> Result<(), TestCaseError> {
        if let Some(e) = e {
            prop_assert!(
                e.offset <= bytes.len(),
                "{what}: offset {} past {}",
                e.offset,
                bytes.len()
            );
            prop_assert!(!e.field.is_empty(), "{what}: no field");
            let text = e.to_string();
            prop_assert!(
                text.starts_with(&format!("at byte {} (", e.offset)),
                "{what}: {text}"
            );
        }
        Ok(())
    };
    check("request", decode_request(bytes).err())?;
    check("connect request", decode_connect_request(bytes).err())?;
    check("connect response", decode_connect_response(bytes).err())?;
    check("notification", decode_notification(bytes).err())?;
    for code in REPLY_OPS {
        check("reply", decode_reply(code, bytes).err())?;
    }
    Ok(())
}

/// Decodes `bytes` every way, checking the errors and the allocations.
fn survive(bytes: &[u8]) -> Result<(), TestCaseError> {
    let (outcome, largest, total) = measure(|| all_decoders(bytes));
    outcome?;
    // 35 decoders ran. A decoded item can take more memory than its bytes on
    // the wire (an empty string: 4 bytes in, a 24-byte `String` out, and a
    // vector doubles), so the bounds are linear, not 1:1; what they rule out
    // is a length field sizing an allocation.
    let n = bytes.len();
    prop_assert!(
        largest <= 16 * n + 1024,
        "a {largest}-byte allocation for {n} bytes"
    );
    prop_assert!(
        total <= 35 * (64 * n + 4096),
        "{total} bytes allocated for {n} bytes"
    );
    Ok(())
}

#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(usize),
    Truncate(usize),
    /// Overwrite 4 bytes at an offset with a hostile length.
    Length(usize, i32),
    Insert(usize, u8),
    Remove(usize),
    Overwrite(usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<prop::sample::Index>();
    prop_oneof![
        at.clone()
            .prop_map(|i| Mutation::FlipBit(i.index(usize::MAX))),
        at.clone()
            .prop_map(|i| Mutation::Truncate(i.index(usize::MAX))),
        (
            at.clone(),
            prop_oneof![
                Just(i32::MAX),
                Just(i32::MIN),
                Just(-1),
                Just(-2),
                Just(0x00ff_ffff),
                Just(0x7fff_0000),
                0..512i32
            ]
        )
            .prop_map(|(i, v)| Mutation::Length(i.index(usize::MAX), v)),
        (at.clone(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i.index(usize::MAX), b)),
        at.clone()
            .prop_map(|i| Mutation::Remove(i.index(usize::MAX))),
        (at, any::<u8>()).prop_map(|(i, b)| Mutation::Overwrite(i.index(usize::MAX), b)),
    ]
}

fn apply(frame: &mut Vec<u8>, m: &Mutation) {
    let len = frame.len();
    let pos = |i: usize, extra: usize| {
        if len + extra == 0 {
            0
        } else {
            i % (len + extra)
        }
    };
    match *m {
        Mutation::FlipBit(i) if len > 0 => frame[pos(i, 0)] ^= 1 << (i % 8),
        Mutation::Truncate(i) => frame.truncate(pos(i, 1)),
        Mutation::Length(i, v) if len >= 4 => {
            let at = i % (len - 3);
            frame[at..at + 4].copy_from_slice(&v.to_be_bytes());
        }
        Mutation::Insert(i, b) => frame.insert(pos(i, 1), b),
        Mutation::Remove(i) if len > 0 => {
            frame.remove(pos(i, 0));
        }
        Mutation::Overwrite(i, b) if len > 0 => frame[pos(i, 0)] = b,
        _ => {}
    }
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 2048,
        rng_seed: RngSeed::Fixed(0x0068_6f73_7469_6c65),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn mutated_golden_frames_never_panic_or_overallocate(
        which in any::<prop::sample::Index>(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let frames = golden();
        let mut frame = frames[which.index(frames.len())].clone();
        for m in &mutations {
            apply(&mut frame, m);
        }
        survive(&frame)?;
    }

    #[test]
    fn random_bytes_never_panic_or_overallocate(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
        survive(&bytes)?;
    }

    /// A stream of mutated frames through the frame reader: it never holds
    /// more than it was given, and stops at the first bad length.
    #[test]
    fn the_frame_reader_survives_mutated_streams(
        picks in proptest::collection::vec(any::<prop::sample::Index>(), 1..8),
        mutations in proptest::collection::vec(mutation(), 0..6),
        chunk in 1..64usize,
        max in prop_oneof![Just(DEFAULT_MAX_FRAME), 0..200usize],
    ) {
        let frames = golden();
        let mut stream: Vec<u8> = picks
            .iter()
            .flat_map(|i| write_frame(&frames[i.index(frames.len())]))
            .collect();
        for m in &mutations {
            apply(&mut stream, m);
        }
        let mut reader = FrameReader::new(max);
        let mut given = 0;
        for piece in stream.chunks(chunk) {
            reader.push(piece);
            given += piece.len();
            loop {
                let (popped, largest, _) = measure(|| reader.pop());
                prop_assert!(largest <= max.min(given), "a {largest}-byte allocation");
                match popped {
                    Ok(Some(body)) => {
                        prop_assert!(body.len() <= max);
                        survive(&body)?;
                    }
                    Ok(None) => break,
                    Err(FrameError::Negative { len, .. }) => {
                        prop_assert!(len < 0);
                        break;
                    }
                    Err(FrameError::TooLarge { len, .. }) => {
                        prop_assert!(len as usize > max);
                        break;
                    }
                }
            }
            prop_assert!(reader.buffered() <= given);
        }
    }
}

/// The hostile cases spelled out once, so that a regression names itself.
#[test]
fn a_huge_vector_count_in_a_tiny_frame_allocates_nothing_big() {
    // getChildren reply: header, then a children count of i32::MAX.
    let mut body = encode_reply(
        &ReplyHeader {
            xid: 1,
            zxid: 2,
            err: 0,
        },
        None,
    );
    body.extend_from_slice(&i32::MAX.to_be_bytes());
    let (result, largest, _) = measure(|| decode_reply(op::GET_CHILDREN, &body));
    let e = result.unwrap_err();
    assert_eq!((e.offset, e.field), (16, "GetChildrenResponse.children"));
    assert!(largest < 1024, "{largest}");

    // A multi whose ops never end: each must still be there in the bytes.
    let mut body = encode_request(
        &RequestHeader {
            xid: 1,
            op: op::MULTI,
        },
        &Request::Multi(vec![]),
    );
    body.truncate(8);
    for _ in 0..100 {
        body.extend_from_slice(&[0, 0, 0, op::DELETE as u8, 0]);
        body.extend_from_slice(&(-1i32).to_be_bytes());
        body.extend_from_slice(&0i32.to_be_bytes());
        body.extend_from_slice(&0i32.to_be_bytes());
    }
    let e = decode_request(&body).unwrap_err();
    assert_eq!(e.offset, body.len());
    assert!(matches!(e.kind, DecodeErrorKind::Truncated { .. }), "{e}");
}
