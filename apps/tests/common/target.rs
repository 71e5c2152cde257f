//! The two servers every app test runs against: the real ZooKeeper 3.8
//! server (`zkreal::TestServer`) and `zkcheck serve` (zkserve's driver, in
//! this process on a tokio runtime thread of its own). Each is shared by
//! the tests of one binary and stopped when the last test holding it ends.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use zkreal::{FaultProxy, TestServer};
use zkserve::driver::{self, Options};
use zkserve::{Limits, Whitelist};

/// serve's tick: with ZooKeeper's [2, 20]-tick clamp it grants 400 ms to
/// 4 s, so the timeouts the apps ask for (1 s to expire, 4 s by default)
/// are granted as the real test server grants them (its tickTime is
/// 100 ms with maxSessionTimeout 30 s), and an expiry comes within a
/// tick (200 ms) of the timeout, as the real server's within its 100 ms.
pub const SERVE_TICK_MS: u64 = 200;

/// One of the two servers.
#[derive(Clone)]
pub enum Target {
    Real(Arc<TestServer>),
    Serve(Arc<Serve>),
}

impl Target {
    /// The real server, or `None` after saying so loudly (`CI=true`: a
    /// failure) when ZooKeeper is not installed.
    pub fn real() -> Option<Target> {
        static SHARED: Mutex<Weak<TestServer>> = Mutex::new(Weak::new());
        let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(server) = shared.upgrade() {
            return Some(Target::Real(server));
        }
        let server = Arc::new(zkreal::require_server()?);
        *shared = Arc::downgrade(&server);
        Some(Target::Real(server))
    }

    /// `zkcheck serve` with three simulated servers.
    pub fn serve() -> Target {
        static SHARED: Mutex<Weak<Serve>> = Mutex::new(Weak::new());
        let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(server) = shared.upgrade() {
            return Target::Serve(server);
        }
        let server = Arc::new(Serve::start());
        *shared = Arc::downgrade(&server);
        Target::Serve(server)
    }

    pub fn is_serve(&self) -> bool {
        matches!(self, Target::Serve(_))
    }

    /// The apps' connect string: the real server's one port, or all of
    /// serve's (the client picks one, and moves on after a broken
    /// connection).
    pub fn connect_string(&self) -> String {
        match self {
            Target::Real(server) => server.connect_string(),
            Target::Serve(serve) => serve.connect_string(),
        }
    }

    /// Where a fault proxy for one app forwards to: the real server, or
    /// one of serve's followers (so that the leader expires a session whose
    /// connection a follower holds, and the follower closes it).
    fn proxied(&self) -> SocketAddr {
        match self {
            Target::Real(server) => server
                .connect_string()
                .parse()
                .expect("the test server's address"),
            Target::Serve(serve) => serve.addrs[1],
        }
    }

    /// A fault proxy in front of this server, for one app's connections.
    pub fn proxy(&self) -> FaultProxy {
        FaultProxy::start(self.proxied()).expect("a fault proxy on loopback")
    }

    /// Whether the server creates container nodes (`createContainer`, which
    /// Curator's lock and election recipes use for their parents). The real
    /// server does; serve is asked, once: it answered Unimplemented (and
    /// closed the connection) until the simulator's containers reached it.
    pub fn creates_containers(&self) -> bool {
        match self {
            Target::Real(_) => true,
            Target::Serve(serve) => *serve.containers.get_or_init(|| {
                probe_container_create(serve.addrs[0])
                    .unwrap_or_else(|e| panic!("probing serve for containers: {e}"))
            }),
        }
    }

    /// A four-letter word's answer: the real server's, or serve's leader's
    /// (which holds the sessions and expires them).
    pub fn four_letter(&self, word: &str) -> io::Result<String> {
        match self {
            Target::Real(server) => server.four_letter(word),
            Target::Serve(serve) => four_letter(serve.addrs[0], word),
        }
    }
}

/// `zkcheck serve` running in this process: the driver on a current-thread
/// tokio runtime on its own thread, stopped (every connection closed, the
/// thread joined) when dropped.
pub struct Serve {
    pub addrs: Vec<SocketAddr>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    containers: OnceLock<bool>,
}

impl Serve {
    fn start() -> Serve {
        let options = Options {
            limits: Limits {
                servers: 3,
                tick_ms: SERVE_TICK_MS,
                four_letter_words: Whitelist::all(),
                ..Limits::default()
            },
            bind: [127, 0, 0, 1].into(),
            port: 0,
            verbose: false,
        };
        let (addrs_tx, addrs_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime for zkserve");
            runtime.block_on(async move {
                let running = match driver::start(options).await {
                    Ok(running) => running,
                    Err(e) => {
                        let _ = addrs_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let _ = addrs_tx.send(Ok(running.addrs.clone()));
                let _ = stopped.await;
                running.stop().await;
            });
        });
        let addrs = addrs_rx
            .recv_timeout(Duration::from_secs(10))
            .expect("zkserve started within 10 s")
            .unwrap_or_else(|e| panic!("zkserve did not start: {e}"));
        Serve {
            addrs,
            stop: Some(stop),
            thread: Some(thread),
            containers: OnceLock::new(),
        }
    }

    pub fn connect_string(&self) -> String {
        let addrs: Vec<String> = self.addrs.iter().map(|a| a.to_string()).collect();
        addrs.join(",")
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Ask a four-letter word on a fresh connection; the answer is what the
/// server sends before it closes.
pub fn four_letter(addr: SocketAddr, word: &str) -> io::Result<String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.write_all(word.as_bytes())?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}

/// A session on `addr` creates a container node: whether the server did
/// (err 0, or NodeExists from an earlier probe) or answered Unimplemented.
fn probe_container_create(addr: SocketAddr) -> io::Result<bool> {
    use zkwire::{opcode, ConnectRequest, FrameReader, Request, RequestHeader};
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let hello = zkwire::encode_connect_request(&ConnectRequest {
        protocol_version: 0,
        last_zxid_seen: 0,
        timeout_ms: 4000,
        session_id: 0,
        passwd: vec![0; 16],
        read_only: Some(false),
    });
    let create = zkwire::encode_request(
        &RequestHeader {
            xid: 1,
            op: opcode::CREATE_CONTAINER,
        },
        &Request::Create {
            path: "/zkapps-container-probe".into(),
            data: Some(Vec::new()),
            acl: vec![zkwire::Acl::open_unsafe()],
            flags: 4,
        },
    );
    let mut out = zkwire::write_frame(&hello);
    out.extend(zkwire::write_frame(&create));
    stream.write_all(&out)?;
    let mut reader = FrameReader::default();
    let mut frames = Vec::new();
    let mut buf = [0u8; 4096];
    while frames.len() < 2 {
        match reader.pop() {
            Ok(Some(frame)) => frames.push(frame),
            Ok(None) => {
                let n = stream.read(&mut buf)?;
                if n == 0 {
                    return Err(io::Error::other("serve closed the probe early"));
                }
                reader.push(&buf[..n]);
            }
            Err(e) => return Err(io::Error::other(e.to_string())),
        }
    }
    let (header, _) = zkwire::decode_reply(opcode::CREATE_CONTAINER, &frames[1])
        .map_err(|e| io::Error::other(e.to_string()))?;
    const NODE_EXISTS: i32 = -110;
    const UNIMPLEMENTED: i32 = -6;
    match header.err {
        0 | NODE_EXISTS => Ok(true),
        UNIMPLEMENTED => Ok(false),
        err => Err(io::Error::other(format!(
            "createContainer answered err {err}"
        ))),
    }
}

/// Define each named test twice: `real::NAME` against the real 3.8
/// server (skipped loudly when ZooKeeper is not installed, a failure under
/// `CI=true`) and `serve::NAME` against `zkcheck serve`. Each `NAME` is a
/// function of the file taking `&Target`.
macro_rules! on_both_servers {
    ($($name:ident),* $(,)?) => {
        /// The tests against the real ZooKeeper 3.8 server.
        mod real {
            $(
                #[test]
                fn $name() {
                    if let Some(target) = $crate::common::Target::real() {
                        super::$name(&target);
                    }
                }
            )*
        }
        /// The same tests against `zkcheck serve`.
        mod serve {
            $(
                #[test]
                fn $name() {
                    super::$name(&$crate::common::Target::serve());
                }
            )*
        }
    };
}
pub(crate) use on_both_servers;
