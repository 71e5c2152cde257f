//! The unmodified Java CLI (`org.apache.zookeeper.ZooKeeperMain`, what
//! `zkCli.sh` runs; Debian's zookeeper 3.8 jars) against zkserve.
//!
//! Skipped, loudly, when Java or the jars are missing; a failure under
//! `CI=true` (where `.ci/run` installs them).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use zkserve::driver::{start, Options};
use zkserve::Limits;

const JARS: [&str; 2] = [
    "/usr/share/java/zookeeper.jar",
    "/usr/share/java/slf4j-simple.jar",
];

fn java_available() -> bool {
    let ok = JARS.iter().all(|j| Path::new(j).exists())
        && Command::new("java")
            .arg("-version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but java or {JARS:?} is missing"
        );
        eprintln!(
            "SKIPPED: java or {JARS:?} not installed (Debian: zookeeper, default-jre-headless)"
        );
    }
    ok
}

/// Serve on a thread of its own until `stop` is dropped; returns the
/// connect string.
fn serve_in_background(stop: mpsc::Receiver<()>) -> String {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let server = start(Options {
                limits: Limits {
                    tick_ms: 200,
                    ..Limits::default()
                },
                bind: [127, 0, 0, 1].into(),
                port: 0,
                verbose: false,
            })
            .await
            .unwrap();
            tx.send(server.connect_string()).unwrap();
            // Wait for the test to finish without blocking the runtime.
            while let Err(mpsc::TryRecvError::Empty) = stop.try_recv() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            server.stop().await;
        });
    });
    rx.recv_timeout(Duration::from_secs(10)).expect("server up")
}

#[test]
fn zkcli_creates_reads_lists_sets_watches_and_deletes() {
    if !java_available() {
        return;
    }
    let (stop_tx, stop_rx) = mpsc::channel();
    let cs = serve_in_background(stop_rx);
    let script = "\
create /x data
get -s /x
create -s /x/seq- a
create -e /x/eph b
ls /x
get -w /x
set /x newdata
stat /x
delete /x/eph
ls /x
delete /x
quit
";
    let mut child = Command::new("java")
        .args(["-cp", &JARS.join(":"), "org.apache.zookeeper.ZooKeeperMain"])
        .args(["-server", &cs])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn java");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    // `quit` ends it; a hang is bounded by the kill below.
    let waited = wait_bounded(&mut child, Duration::from_secs(60));
    let output = child.wait_with_output().unwrap();
    drop(stop_tx);
    // zkCli prints some answers ("Created /x", errors) on stderr.
    let stdout = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(waited, "zkCli did not finish:\n{stdout}");
    for expected in [
        "Created /x\n",
        "\ndata\n",
        "dataLength = 4\n",
        "ephemeralOwner = 0x0\n",
        "Created /x/seq-0000000000\n",
        "Created /x/eph\n",
        "[eph, seq-0000000000]\n",
        "WatchedEvent state:SyncConnected type:NodeDataChanged path:/x\n",
        "dataVersion = 1\n",
        "numChildren = 2\n",
        "[seq-0000000000]\n",
    ] {
        assert!(stdout.contains(expected), "no {expected:?} in:\n{stdout}");
    }
    // `delete /x` with a child left fails as on a real server.
    assert!(
        stdout.contains("Node not empty: /x"),
        "no NotEmpty in:\n{stdout}"
    );
}

fn wait_bounded(child: &mut std::process::Child, limit: Duration) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    false
}
