//! Records golden frames from a real ZooKeeper server: starts one
//! (`zkreal::TestServer`), puts a recording relay in front of it, drives
//! ZooKeeper's own Java client through every request the codec speaks
//! (`GoldenClient.java`, next to this file), then probes what no Java 3.8
//! client sends (malformed bodies, oversized frames, odd handshakes:
//! `raw.rs`) with zkwire itself, and writes every frame, in order, as a
//! readable fixture (`relay.rs` records them).
//!
//! ```text
//! cargo run --release -p zkwire --example capture -- wire/tests/golden/zookeeper-3.8.frames
//! ```
//!
//! Needs Debian's `zookeeper` (or `ZOOKEEPER_CLASSPATH`) and a JDK (`javac`).
//! A developer tool, not a test: it waits on sockets with OS threads and
//! wall-clock timeouts.

mod raw;
mod relay;

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use relay::{Dir, Event, Recorder};

/// Where Debian puts the client library; its manifest names the rest.
const ZOOKEEPER_JAR: &str = "/usr/share/java/zookeeper.jar";
/// Frames longer than this are described in the fixture but not stored.
const STORED_MAX: usize = 4096;
/// Keeps the client quiet.
const SLF4J_NOP: &str = "/usr/share/java/slf4j-nop.jar";

fn main() {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "wire/tests/golden/zookeeper-3.8.frames".into());
    let server = zkreal::TestServer::start().expect("a real ZooKeeper server");
    let upstream: SocketAddr = format!("127.0.0.1:{}", server.port()).parse().unwrap();
    let rec = Arc::new(Recorder::default());
    let relay = relay::start_relay(upstream, rec.clone());
    let connect = format!("127.0.0.1:{}", relay.port());

    run_java_client(&connect, &rec);
    raw::raw_requests(relay, &rec);
    rec.set_step("teardown: the recorder closes what is left");
    std::thread::sleep(Duration::from_millis(500));
    rec.drop_connections();
    std::thread::sleep(Duration::from_millis(200));

    let text = render(&rec.events.lock().unwrap());
    std::fs::write(&out, text).expect("write the fixture");
    eprintln!("wrote {out}");
}
fn run_java_client(connect: &str, rec: &Recorder) {
    let classes = std::env::temp_dir().join(format!("zkwire-capture-{}", std::process::id()));
    std::fs::create_dir_all(&classes).unwrap();
    let source = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/capture/GoldenClient.java"
    );
    let status = Command::new("javac")
        .args(["-cp", ZOOKEEPER_JAR, "-d"])
        .arg(&classes)
        .arg(source)
        .status()
        .expect("javac (a JDK) on PATH");
    assert!(status.success(), "javac failed");
    let classpath = format!("{}:{ZOOKEEPER_JAR}:{SLF4J_NOP}", classes.display());
    let mut child = Command::new("java")
        .args(["-cp", &classpath, "GoldenClient", connect])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("java on PATH");
    let mut to_java = child.stdin.take().unwrap();
    let from_java = BufReader::new(child.stdout.take().unwrap());
    for line in from_java.lines() {
        let line = line.unwrap();
        eprintln!("java: {line}");
        if let Some(step) = line.strip_prefix("STEP ") {
            rec.set_step(step);
            if step.starts_with("drop the connection") {
                rec.drop_connections();
            }
            writeln!(to_java, "ok").unwrap();
            to_java.flush().unwrap();
        }
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "the Java client failed: {status}");
    let _ = std::fs::remove_dir_all(&classes);
}
fn render(events: &[Event]) -> String {
    let mut s = String::new();
    s.push_str(HEADER);
    let mut last_step = String::new();
    for e in events {
        let step = match e {
            Event::Frame { step, .. } | Event::Closed { step, .. } => step,
        };
        if *step != last_step {
            s.push_str(&format!("\n# step: {step}\n"));
            last_step = step.clone();
        }
        match e {
            Event::Frame {
                conn,
                dir,
                op,
                body,
                summary,
                ..
            } => {
                let d = if *dir == Dir::ToServer { "c2s" } else { "s2c" };
                if body.len() > STORED_MAX {
                    s.push_str(&format!(
                        "## {summary}\n# {d} {conn} {op}: a {}-byte body, not stored\n",
                        body.len()
                    ));
                } else {
                    s.push_str(&format!("## {summary}\n{d} {conn} {op} {}\n", hex(body)));
                }
            }
            Event::Closed {
                conn,
                dir,
                after_ms,
                ..
            } => {
                let who = if *dir == Dir::ToServer {
                    "client"
                } else {
                    "server"
                };
                s.push_str(&format!(
                    "close {conn} {who} # {after_ms} ms into the step\n"
                ));
            }
        }
    }
    s
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

const HEADER: &str = "\
# Golden frames from a real ZooKeeper 3.8.0 standalone server (Debian's
# package, tickTime=100, extended types off), driven by ZooKeeper's own Java
# client (wire/examples/capture/GoldenClient.java) and, for the steps marked
# \"raw\", by zkwire itself. Recaptured with:
#
#   cargo run --release -p zkwire --example capture -- wire/tests/golden/zookeeper-3.8.frames
#
# One line per frame, in the order the relay saw them:
#   <dir> <conn> <op> <hex>
# dir: c2s (client to server) or s2c; conn: the relay's connection number;
# op: the opcode name the body decodes with (the request's own for c2s, the
# answered request's for a reply, `connect` for a handshake, `notification`
# for a watch event); hex: the frame body, its 4-byte length prefix removed.
# The `##` line above a frame is zkwire's reading of it at capture time;
# `close <conn> <server|client>` says that side closed the connection (a
# raw session that sends nothing more is closed by the server when its
# 2000 ms session expires; the time is from the start of the step). A body
# over 4096 bytes is described by a `# <dir> <conn> <op>: ...` line instead.
# Session ids, zxids and times differ from run to run.
";
