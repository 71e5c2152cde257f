//! The servers under test, each its own process on loopback so that its
//! memory and CPU time can be read from `/proc/<pid>` the same way: the real
//! 3.8 server (`zkreal::TestServer`, a JVM), and serve — this example run
//! again as a child with `--serve-child`, which serves the simulated
//! ensemble in-process there and prints its connect string first. Serve in
//! the benchmark's own process would mix the clients' memory and CPU time
//! into the server's, and let the two share one allocator.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use zkreal::TestServer;

/// How long serve may take to print its connect string.
const SERVE_START_LIMIT: Duration = Duration::from_secs(20);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum TargetKind {
    /// The real ZooKeeper 3.8 server (Debian's, standalone).
    Real,
    /// zkcheck serve: the simulated ensemble on the wire.
    Serve,
}

impl TargetKind {
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Real => "real 3.8",
            TargetKind::Serve => "serve",
        }
    }
}

/// A running server under test; dropping it stops it.
pub struct Target {
    pub name: String,
    pub connect: String,
    /// The process to measure; `None` when it is not known (`--connect`).
    pub pid: Option<u32>,
    /// Whether `jcmd` can read the process's live heap.
    pub is_jvm: bool,
    /// What stops the server when dropped (nothing for `--connect`).
    _server: Option<TestServer>,
    _child: Option<ChildGuard>,
}

impl Target {
    pub fn start(kind: TargetKind, serve_servers: u16) -> Result<Target, String> {
        match kind {
            TargetKind::Real => start_real(),
            TargetKind::Serve => start_serve(serve_servers),
        }
    }

    /// A server someone else runs, at `connect` (and `pid`, if given).
    pub fn external(connect: String, pid: Option<u32>) -> Target {
        Target {
            name: "external".to_string(),
            connect,
            pid,
            is_jvm: false,
            _server: None,
            _child: None,
        }
    }
}

fn start_real() -> Result<Target, String> {
    let server = TestServer::start().map_err(|e| e.to_string())?;
    Ok(Target {
        name: TargetKind::Real.name().to_string(),
        connect: server.connect_string(),
        pid: Some(server.pid()),
        is_jvm: true,
        _server: Some(server),
        _child: None,
    })
}

/// Starts serve as a child process (this executable with `--serve-child`)
/// and reads its connect string from the child's first stdout line.
fn start_serve(servers: u16) -> Result<Target, String> {
    let exe = std::env::current_exe().map_err(|e| format!("finding this executable: {e}"))?;
    let child = Command::new(&exe)
        .args(["--serve-child", "--serve-servers", &servers.to_string()])
        // The child's stdin stays open while we live: if we die without
        // killing it, it reads end-of-file and exits (see `serve_child`).
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("starting {} --serve-child: {e}", exe.display()))?;
    let mut guard = ChildGuard(child);
    let stdout = guard
        .0
        .stdout
        .take()
        .ok_or("serve's stdout was not captured")?;
    // Read the first line on a thread, so that a child that prints nothing
    // cannot hang us.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(read.map(|_| line));
    });
    let line = match rx.recv_timeout(SERVE_START_LIMIT) {
        Ok(Ok(line)) => line,
        Ok(Err(e)) => return Err(format!("reading serve's connect string: {e}")),
        Err(_) => {
            return Err(format!(
                "serve printed no connect string in {SERVE_START_LIMIT:?}"
            ))
        }
    };
    let connect = line.trim().to_string();
    if connect.is_empty() {
        let status = guard.0.wait().map(|s| s.to_string()).unwrap_or_default();
        return Err(format!("serve exited without a connect string ({status})"));
    }
    Ok(Target {
        name: TargetKind::Serve.name().to_string(),
        connect,
        pid: Some(guard.0.id()),
        is_jvm: false,
        _server: None,
        _child: Some(guard),
    })
}

/// Our own child, killed by its pid when dropped.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The body of `--serve-child`: `zkcheck serve` in this process (its own
/// flags' defaults but the number of servers), connect string first on
/// stdout, until the parent kills it.
pub fn serve_child(servers: u16) -> std::process::ExitCode {
    use clap::Parser;
    use std::io::Read;
    // The parent holds our stdin open and never writes to it: end-of-file
    // means it died without stopping us, so stop rather than serve forever.
    std::thread::spawn(|| {
        let mut byte = [0u8; 1];
        let _ = std::io::stdin().read(&mut byte);
        std::process::exit(0);
    });
    #[derive(Parser)]
    struct ServeOnly {
        #[command(flatten)]
        serve: zkserve::cli::ServeArgs,
    }
    let servers = servers.to_string();
    match ServeOnly::try_parse_from(["serve", "--servers", servers.as_str()]) {
        Ok(parsed) => zkserve::cli::run(parsed.serve),
        Err(e) => {
            eprintln!("load: serve's flags: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
