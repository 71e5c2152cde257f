//! `zkcheck serve`: the binary serves the simulated ensemble on ZooKeeper's
//! wire protocol, prints its connect string first, answers a client, and a
//! SIGTERM stops it cleanly. (What it serves is tested in `serve/tests`;
//! this checks the front end's door to it.)

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn serve_prints_its_connect_string_answers_and_stops_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zkcheck"))
        .args(["serve", "--servers", "2", "--4lw-whitelist", "ruok"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zkcheck runs");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).expect("a first line");
    let addrs: Vec<&str> = first.trim().split(',').collect();
    assert_eq!(addrs.len(), 2, "one address per server: {first:?}");
    for addr in &addrs {
        assert!(addr.starts_with("127.0.0.1:"), "loopback only: {first:?}");
        // A four-letter word on each port: the server answers as 3.8 does.
        let mut s = TcpStream::connect(addr).expect("the port listens");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"ruok").unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer)
            .expect("an answer, then a close");
        assert_eq!(answer, "imok", "on {addr}");
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let status = child.wait().expect("zkcheck ends");
    assert_eq!(status.code(), Some(0), "a clean stop on SIGTERM");
}

#[test]
fn serve_refuses_a_bad_flag_with_exit_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_zkcheck"))
        .args(["serve", "--servers", "0"])
        .output()
        .expect("zkcheck runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--servers"));
}
