//! `zkcheck serve`: the binary serves the simulated ensemble on ZooKeeper's
//! wire protocol, prints its connect string first, answers a client, and a
//! SIGTERM stops it cleanly. (What it serves is tested in `serve/tests`;
//! this checks the front end's door to it.)

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// `zkcheck serve --runs RUNS` of an app that is a wrapper (`sh -c`)
/// around a child that would run for 30 s, with `extra` flags; returns
/// zkcheck, the child's pid once it runs, and the scratch directory.
fn runs_of_a_wrapped_app(
    runs: &str,
    extra: &[&str],
) -> (std::process::Child, String, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "zkcheck-runs-tree-{}-{}",
        std::process::id(),
        extra.join("")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let pidfile = dir.join("pid");
    // `$0` is the connect string; the wrapper's child is what must die.
    let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
    let child = Command::new(env!("CARGO_BIN_EXE_zkcheck"))
        .args(["serve", "--runs", runs, "--lock", "/l", "--quiet", "--out"])
        .arg(dir.join("runs"))
        .args(extra)
        .args(["--", "sh", "-c", &script, "{connect}"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zkcheck runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    let pid = loop {
        let text = std::fs::read_to_string(&pidfile).unwrap_or_default();
        if text.ends_with('\n') {
            break text.trim().to_string();
        }
        assert!(Instant::now() < deadline, "the app never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    (child, pid, dir)
}

/// Whether process `pid` is gone (or a zombie waiting for whoever
/// inherited it to reap it) within a few seconds.
fn gone(pid: &str) -> bool {
    let stat = format!("/proc/{pid}/stat");
    let dead = || {
        std::fs::read_to_string(&stat).map_or(true, |s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))
        })
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while !dead() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    dead()
}

/// zkcheck's exit code and stdout, within `limit`.
fn ended(mut child: std::process::Child, limit: Duration) -> (Option<i32>, String) {
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "zkcheck did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    (status.code(), stdout)
}

/// An app past `--run-timeout` is killed with what it started (its
/// process group): a wrapper killed alone would leave the app itself
/// running, connected and busy.
#[test]
fn serve_runs_kills_a_hung_app_with_what_it_started() {
    let (child, pid, dir) = runs_of_a_wrapped_app("1", &["--run-timeout", "1"]);
    let (code, stdout) = ended(child, Duration::from_secs(30));
    assert_eq!(code, Some(3), "{stdout}");
    assert!(stdout.contains("was killed"), "{stdout}");
    assert!(gone(&pid), "the app's child {pid} still runs");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `serve --runs` under SIGTERM (or Ctrl-C): the app running then — in a
/// process group of its own, so the terminal's signal does not reach it —
/// is killed with what it started, the runs done are summed up, and the
/// command says it stopped early and exits 3, never 0.
#[test]
fn serve_runs_stops_on_sigterm_kills_its_app_and_is_incomplete() {
    let (child, pid, dir) = runs_of_a_wrapped_app("5", &[]);
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let (code, stdout) = ended(child, Duration::from_secs(20));
    assert_eq!(code, Some(3), "{stdout}");
    assert!(stdout.contains("stopped early: interrupted"), "{stdout}");
    assert!(
        stdout.contains("runs: 1 "),
        "the interrupted run counts: {stdout}"
    );
    assert!(gone(&pid), "the app's child {pid} still runs");
    let _ = std::fs::remove_dir_all(&dir);
}
