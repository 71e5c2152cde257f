//! What recording a history costs the engine, in process (no sockets):
//! the same inputs handled with and without `--history`'s recorder, the
//! records serialised as JSON lines into memory.
//!
//! `cargo run --release -p zkserve --example history_cost -- [rounds]`
//!
//! Each round, each of 8 sessions (on 3 simulated servers) sends a
//! create, a getData with a watch and a setData that fires it, in one
//! `Bytes` input each; a tick every round.

use std::time::Instant;

use zkjudge::history::{Record, Writer};
use zkserve::{Engine, Input, Limits, Output};
use zkwire::opcode as op;
use zkwire::RequestHeader;
use zkwire::{encode_connect_request, encode_request, write_frame, Acl, ConnectRequest, Request};

const SESSIONS: u64 = 8;

fn frame(xid: i32, opcode: i32, request: &Request) -> Vec<u8> {
    write_frame(&encode_request(&RequestHeader { xid, op: opcode }, request))
}

fn inputs(rounds: usize) -> Vec<Input> {
    let mut inputs = Vec::new();
    for conn in 0..SESSIONS {
        inputs.push(Input::Accepted {
            conn,
            server: (conn % 3) as usize,
        });
        let body = encode_connect_request(&ConnectRequest {
            protocol_version: 0,
            last_zxid_seen: 0,
            timeout_ms: 10_000,
            session_id: 0,
            passwd: vec![0; 16],
            read_only: Some(false),
        });
        inputs.push(Input::Bytes {
            conn,
            data: write_frame(&body),
        });
    }
    for round in 0..rounds {
        for conn in 0..SESSIONS {
            let path = format!("/n{conn}-{round}");
            let xid = 3 * round as i32;
            let create = Request::Create {
                path: path.clone(),
                data: Some(b"some data".to_vec()),
                acl: vec![Acl::open_unsafe()],
                flags: 0,
            };
            let get = Request::GetData {
                path: path.clone(),
                watch: true,
            };
            let set = Request::SetData {
                path,
                data: Some(b"other data".to_vec()),
                version: -1,
            };
            for (i, (opcode, r)) in [
                (op::CREATE2, create),
                (op::GET_DATA, get),
                (op::SET_DATA, set),
            ]
            .iter()
            .enumerate()
            {
                inputs.push(Input::Bytes {
                    conn,
                    data: frame(xid + i as i32, *opcode, r),
                });
            }
        }
        inputs.push(Input::Tick);
    }
    inputs
}

/// Handle every input; with `record`, serialise the records. Returns the
/// elapsed seconds, the bytes and the records written.
fn run(inputs: &[Input], record: bool) -> (f64, usize, usize) {
    let mut engine = Engine::new(Limits {
        tick_ms: 100,
        ..Limits::default()
    });
    let mut writer = Writer::new(Vec::with_capacity(1 << 20));
    let mut records: Vec<Record> = Vec::new();
    let mut written = 0;
    let mut out: Vec<Output> = Vec::new();
    let start = Instant::now();
    if record {
        engine.record_history();
        writer.write(&engine.meta()).expect("in memory");
    }
    for input in inputs {
        engine.handle(input.clone(), &mut out);
        out.clear();
        if record {
            engine.take_records(&mut records);
            written += records.len();
            for r in records.drain(..) {
                writer.write(&r).expect("in memory");
            }
        }
    }
    if record {
        writer.write(&engine.end_record()).expect("in memory");
    }
    (
        start.elapsed().as_secs_f64(),
        writer.into_inner().len(),
        written,
    )
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let inputs = inputs(rounds);
    let requests = rounds as u64 * SESSIONS * 3;
    // Warm up, then the better of three runs each way.
    run(&inputs, true);
    let best = |record: bool| {
        (0..3)
            .map(|_| run(&inputs, record))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .expect("three runs")
    };
    let (plain, _, _) = best(false);
    let (recorded, bytes, records) = best(true);
    let per = |s: f64| s * 1e9 / requests as f64;
    println!(
        "{} inputs, {requests} requests ({SESSIONS} sessions, 3 servers)",
        inputs.len()
    );
    println!("without history: {:.0} ns per request", per(plain));
    println!(
        "with history:    {:.0} ns per request (+{:.0}%)",
        per(recorded),
        (recorded / plain - 1.0) * 100.0
    );
    println!(
        "history: {bytes} bytes, {:.0} bytes and {:.1} records per request",
        bytes as f64 / requests as f64,
        records as f64 / requests as f64
    );
}
