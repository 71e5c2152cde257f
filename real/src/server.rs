//! A throw-away standalone ZooKeeper on loopback, like Curator's `TestingServer`.
//!
//! The server is the real Java one (Debian's `zookeeper` package or any jars
//! named by `ZOOKEEPER_CLASSPATH`), started with a private data directory
//! and a free port on 127.0.0.1, with `tickTime=100` so that short session
//! timeouts are legal. It is killed — by its own process id — and its data
//! directory removed when the [`TestServer`] is dropped.

use std::fmt;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The environment variable that names the server's class path.
pub const CLASSPATH_ENV: &str = "ZOOKEEPER_CLASSPATH";

/// Where Debian puts the server: `zookeeper.jar`'s manifest names its
/// dependencies, so the jar alone is a class path.
const DEBIAN_JAR: &str = "/usr/share/java/zookeeper.jar";
/// A logging backend so that the server's log file says something.
const DEBIAN_SLF4J_SIMPLE: &str = "/usr/share/java/slf4j-simple.jar";
/// Upstream tarball layout, which some distributions copy.
const ZOOKEEPER_LIB_DIR: &str = "/usr/share/zookeeper/lib";

/// How long the server may take to answer `ruok` and serve (it takes ~0.3 s).
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// A few tries in case another process takes the free port we found.
const PORT_ATTEMPTS: u32 = 5;

/// ZooKeeper's `tickTime` for test servers, in milliseconds. The negotiated
/// session timeout is clamped to [2, 20] ticks unless the config widens it.
pub const SERVER_TICK_MS: u64 = 100;
/// The shortest session timeout the test server grants.
pub const MIN_SESSION_TIMEOUT: Duration = Duration::from_millis(2 * SERVER_TICK_MS);
/// The longest session timeout the test server grants.
pub const MAX_SESSION_TIMEOUT: Duration = Duration::from_secs(30);

/// Why no server could be started.
#[derive(Debug)]
pub enum Unavailable {
    /// No ZooKeeper (or no Java) is installed here: tests may skip.
    NotInstalled { reason: String },
    /// ZooKeeper is installed but did not come up: that is a failure, not a skip.
    Failed { reason: String, log_tail: String },
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::NotInstalled { reason } => write!(f, "no ZooKeeper found: {reason}"),
            Unavailable::Failed { reason, log_tail } => {
                write!(f, "ZooKeeper did not start: {reason}")?;
                if !log_tail.is_empty() {
                    write!(f, "\n--- server log (tail) ---\n{log_tail}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Unavailable {}

/// A running standalone server. Dropping it kills the server and deletes its data.
#[derive(Debug)]
pub struct TestServer {
    child: Child,
    port: u16,
    dir: PathBuf,
    startup: Duration,
}

impl TestServer {
    /// Start a server from `ZOOKEEPER_CLASSPATH` if set, else from the Debian package.
    pub fn start() -> Result<TestServer, Unavailable> {
        let classpath = std::env::var(CLASSPATH_ENV).ok();
        TestServer::start_with(classpath.as_deref())
    }

    /// Start a server from `classpath` (`:`-separated jars, directories or
    /// `dir/*`), or from the Debian locations when `None`.
    pub fn start_with(classpath: Option<&str>) -> Result<TestServer, Unavailable> {
        let classpath = match classpath {
            Some(cp) => check_classpath(cp)?,
            None => debian_classpath()?,
        };
        let java = find_java()?;
        let mut last_failure = None;
        for _ in 0..PORT_ATTEMPTS {
            match launch(&java, &classpath) {
                Ok(server) => return Ok(server),
                Err(Launch::PortTaken) => continue,
                Err(Launch::Failed(unavailable)) => {
                    last_failure = Some(unavailable);
                    break;
                }
            }
        }
        Err(last_failure.unwrap_or_else(|| Unavailable::Failed {
            reason: format!("no free loopback port after {PORT_ATTEMPTS} tries"),
            log_tail: String::new(),
        }))
    }

    /// `127.0.0.1:<port>`, for a ZooKeeper client.
    pub fn connect_string(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's (the JVM's) process id, to read its memory and CPU time
    /// from `/proc` (the load benchmark does).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// How long the server took from spawn to serving.
    pub fn startup_time(&self) -> Duration {
        self.startup
    }

    /// The server's stdout and stderr.
    pub fn log_path(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// Send a four-letter word (`ruok`, `srvr`, `cons`, `dump`, `wchc`, …) and return the answer.
    pub fn four_letter(&self, word: &str) -> io::Result<String> {
        four_letter(self.port, word)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        // Our own child only, by its pid (std's `kill` is SIGKILL on that pid).
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

enum Launch {
    PortTaken,
    Failed(Unavailable),
}

fn launch(java: &Path, classpath: &str) -> Result<TestServer, Launch> {
    let failed = |reason: String| {
        Launch::Failed(Unavailable::Failed {
            reason,
            log_tail: String::new(),
        })
    };
    let port = free_port().map_err(|e| failed(format!("finding a free port: {e}")))?;
    let dir = private_dir().map_err(|e| failed(format!("creating a data directory: {e}")))?;
    let result = spawn_and_wait(java, classpath, port, &dir);
    if result.is_err() {
        let _ = fs::remove_dir_all(&dir);
    }
    result
}

fn spawn_and_wait(
    java: &Path,
    classpath: &str,
    port: u16,
    dir: &Path,
) -> Result<TestServer, Launch> {
    let failed = |reason: String| {
        Launch::Failed(Unavailable::Failed {
            reason,
            log_tail: log_tail(dir),
        })
    };
    let cfg = dir.join("zoo.cfg");
    fs::write(&cfg, config_text(port, &dir.join("data")))
        .map_err(|e| failed(format!("writing {}: {e}", cfg.display())))?;
    let log = File::create(dir.join("server.log")).map_err(|e| failed(format!("log file: {e}")))?;
    let log_err = log
        .try_clone()
        .map_err(|e| failed(format!("log file: {e}")))?;
    let started = Instant::now();
    let mut child = Command::new(java)
        .args([
            "-Xmx128m",
            "-XX:+UseSerialGC",
            "-Djava.net.preferIPv4Stack=true",
            // The container reaper (S35) every 100 ms, not every minute,
            // so that the conformance suite can watch it work.
            "-Dznode.container.checkIntervalMs=100",
        ])
        .arg("-cp")
        .arg(classpath)
        .arg("org.apache.zookeeper.server.ZooKeeperServerMain")
        .arg(&cfg)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .map_err(|e| failed(format!("spawning {}: {e}", java.display())))?;
    match wait_until_serving(&mut child, port, dir) {
        Ok(()) => Ok(TestServer {
            child,
            port,
            dir: dir.to_path_buf(),
            startup: started.elapsed(),
        }),
        Err(e) => {
            // Our own child only, by its pid.
            let _ = child.kill();
            let _ = child.wait();
            Err(e)
        }
    }
}

fn wait_until_serving(child: &mut Child, port: u16, dir: &Path) -> Result<(), Launch> {
    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let tail = log_tail(dir);
            if tail.contains("Address already in use") {
                return Err(Launch::PortTaken);
            }
            return Err(Launch::Failed(Unavailable::Failed {
                reason: format!("the server exited with {status}"),
                log_tail: tail,
            }));
        }
        if is_serving(port) {
            return Ok(());
        }
        if started.elapsed() > START_TIMEOUT {
            return Err(Launch::Failed(Unavailable::Failed {
                reason: format!("not serving after {START_TIMEOUT:?}"),
                log_tail: log_tail(dir),
            }));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `ruok` answers `imok` as soon as the listener is up, ~0.1 s before the
/// server serves requests; `srvr` says `Mode: standalone` only once it does.
fn is_serving(port: u16) -> bool {
    matches!(four_letter(port, "ruok"), Ok(answer) if answer == "imok")
        && matches!(four_letter(port, "srvr"), Ok(answer) if answer.contains("Mode: standalone"))
}

pub(crate) fn four_letter(port: u16, word: &str) -> io::Result<String> {
    four_letter_at(SocketAddr::from((Ipv4Addr::LOCALHOST, port)), word)
}

/// Send a four-letter word (`ruok`, `srvr`, `dump`, ...) to the server at
/// `addr`, on its client port, and read the whole answer. Any server that
/// speaks ZooKeeper's protocol and its four-letter words will do (the
/// conformance suite asks `zkserve` the same way as the real server).
pub fn four_letter_at(addr: SocketAddr, word: &str) -> io::Result<String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.write_all(word.as_bytes())?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}

fn config_text(port: u16, data_dir: &Path) -> String {
    format!(
        "tickTime={SERVER_TICK_MS}\n\
         dataDir={}\n\
         clientPort={port}\n\
         clientPortAddress=127.0.0.1\n\
         admin.enableServer=false\n\
         4lw.commands.whitelist=*\n\
         minSessionTimeout={}\n\
         maxSessionTimeout={}\n\
         maxClientCnxns=0\n\
         preAllocSize=1024\n\
         forceSync=no\n",
        data_dir.display(),
        MIN_SESSION_TIMEOUT.as_millis(),
        MAX_SESSION_TIMEOUT.as_millis(),
    )
}

/// A port nobody listens on right now (the OS picks it). Another process may
/// take it before the server binds; [`TestServer::start_with`] retries then.
pub(crate) fn free_port() -> io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}

pub(crate) fn private_dir() -> io::Result<PathBuf> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let base = std::env::temp_dir();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("zkcheck-zk-{}-{n}", std::process::id()));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

pub(crate) fn log_tail(dir: &Path) -> String {
    let text = fs::read_to_string(dir.join("server.log")).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// Debian's jars, plus `/usr/share/zookeeper/lib/*` when that directory exists.
pub(crate) fn debian_classpath() -> Result<String, Unavailable> {
    let mut entries = Vec::new();
    if Path::new(DEBIAN_JAR).is_file() {
        entries.push(DEBIAN_JAR.to_string());
        if Path::new(DEBIAN_SLF4J_SIMPLE).is_file() {
            entries.push(DEBIAN_SLF4J_SIMPLE.to_string());
        }
    }
    if Path::new(ZOOKEEPER_LIB_DIR).is_dir() {
        entries.push(format!("{ZOOKEEPER_LIB_DIR}/*"));
    }
    if entries.is_empty() {
        return Err(Unavailable::NotInstalled {
            reason: format!("neither {DEBIAN_JAR} nor {ZOOKEEPER_LIB_DIR} exists"),
        });
    }
    check_classpath(&entries.join(":"))
}

/// Accept a class path only if it names a ZooKeeper jar that exists.
pub(crate) fn check_classpath(classpath: &str) -> Result<String, Unavailable> {
    let has_zookeeper_jar = classpath.split(':').any(|entry| {
        if let Some(dir) = entry.strip_suffix("/*") {
            fs::read_dir(dir).is_ok_and(|mut entries| {
                entries.any(|e| e.is_ok_and(|e| is_zookeeper_jar(&e.path())))
            })
        } else {
            let path = Path::new(entry);
            path.is_file() && is_zookeeper_jar(path)
        }
    });
    if has_zookeeper_jar {
        Ok(classpath.to_string())
    } else {
        Err(Unavailable::NotInstalled {
            reason: format!("no zookeeper*.jar on the class path `{classpath}`"),
        })
    }
}

fn is_zookeeper_jar(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("zookeeper") && n.ends_with(".jar") && !n.contains("jute"))
}

/// `$JAVA_HOME/bin/java`, else the first `java` on `PATH`.
pub(crate) fn find_java() -> Result<PathBuf, Unavailable> {
    let from_home = std::env::var_os("JAVA_HOME").map(|home| PathBuf::from(home).join("bin/java"));
    let from_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("java"));
    from_home
        .into_iter()
        .chain(from_path)
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| Unavailable::NotInstalled {
            reason: "no `java` on PATH (nor in $JAVA_HOME/bin)".to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_classpath_without_a_zookeeper_jar_is_not_installed() {
        let err = check_classpath("/nonexistent/zookeeper.jar:/also/not/here/*").unwrap_err();
        assert!(matches!(err, Unavailable::NotInstalled { .. }), "{err}");
    }

    #[test]
    fn the_jute_jar_alone_is_not_a_server() {
        assert!(!is_zookeeper_jar(Path::new("/x/zookeeper-jute.jar")));
        assert!(is_zookeeper_jar(Path::new("/x/zookeeper-3.8.0.jar")));
    }

    #[test]
    fn config_allows_short_sessions_on_loopback_only() {
        let text = config_text(12345, Path::new("/tmp/d"));
        assert!(text.contains("clientPortAddress=127.0.0.1\n"));
        assert!(text.contains("clientPort=12345\n"));
        assert!(text.contains("tickTime=100\n"));
        assert!(text.contains("minSessionTimeout=200\n"));
        assert!(text.contains("admin.enableServer=false\n"));
    }
}
