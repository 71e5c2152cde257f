//! How fast the codec is: decodes and re-encodes every golden request and
//! reply frame (`tests/golden/zookeeper-3.8.frames`) for about two seconds
//! and prints frames and bytes per second. A baseline for `zkcheck serve`'s
//! load figures: the codec's share of a request's cost.
//!
//! ```text
//! cargo run --release -p zkwire --example throughput
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use zkwire::opcode as op;
use zkwire::*;

const FIXTURE: &str = include_str!("../tests/golden/zookeeper-3.8.frames");

/// A request body, or a reply body and the opcode it answers.
enum Frame {
    Request(Vec<u8>),
    Reply(i32, Vec<u8>),
}

fn frames() -> Vec<Frame> {
    FIXTURE
        .lines()
        .filter_map(|line| {
            let mut w = line.split(' ');
            let (dir, _conn, name, hex) = (w.next()?, w.next()?, w.next()?, w.next()?);
            if !(dir == "c2s" || dir == "s2c") || hex.len() % 2 != 0 {
                return None;
            }
            let body: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok())
                .collect::<Option<_>>()?;
            let code = (-20..200).find(|&c| op::name(c) == Some(name))?;
            match dir {
                "c2s" if decode_request(&body).is_ok() => Some(Frame::Request(body)),
                "s2c" if decode_reply(code, &body).is_ok() => Some(Frame::Reply(code, body)),
                _ => None,
            }
        })
        .collect()
}

fn main() {
    let frames = frames();
    let bytes: usize = frames
        .iter()
        .map(|f| match f {
            Frame::Request(b) | Frame::Reply(_, b) => b.len(),
        })
        .sum();
    let start = Instant::now();
    let mut rounds = 0u64;
    while start.elapsed() < Duration::from_secs(2) {
        for f in &frames {
            match f {
                Frame::Request(b) => {
                    let (h, r) = decode_request(black_box(b)).unwrap();
                    black_box(encode_request(&h, &r));
                }
                Frame::Reply(code, b) => {
                    let (h, r) = decode_reply(*code, black_box(b)).unwrap();
                    black_box(encode_reply(&h, r.as_ref()));
                }
            }
        }
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    let n = frames.len() as f64 * rounds as f64;
    println!(
        "{} frames ({bytes} bytes) x {rounds} rounds in {secs:.2} s: {:.2} M frames/s decoded and re-encoded, {:.0} MB/s, {:.0} ns/frame",
        frames.len(),
        n / secs / 1e6,
        (bytes as f64 * rounds as f64) / secs / 1e6,
        secs * 1e9 / n
    );
}
