//! A throw-away three-server ZooKeeper ensemble on loopback, with a fault
//! proxy on every quorum link.
//!
//! Each server `i` gets its own data directory, `myid`, client port,
//! quorum port and election port, and its own `zoo.cfg`. The configs
//! differ in one thing: in server `i`'s config, every *other* server `j`'s
//! quorum address is a proxy (`link i→j`) that relays to `j`'s real quorum
//! port. A follower connects to its leader's quorum port, so whichever
//! server wins the election, follower `f`'s whole conversation with the
//! leader (proposals, commits, pings, its acks and forwarded requests)
//! crosses `link f→leader`, and only that proxy. Holding the transactions
//! the leader sends on it (proposals, commits, syncs — the proxy cuts that
//! direction into quorum packets) lags the follower: it applies nothing
//! while pings and session revalidations still pass. Holding every byte
//! both ways and refusing new connections partitions it. Election traffic
//! is not proxied: a partitioned follower that gave up on its leader finds
//! the same leader again by election, and cannot reach it.
//!
//! With reconfiguration off (3.8's default), a server keeps its own view of
//! the quorum addresses: `QuorumPeer.processReconfig` ignores the leader's
//! `NEWLEADER` config, and election notifications carry the same version.
//!
//! Which server leads is read from the servers (`srvr`'s `Mode:`), never
//! assumed. Every server and proxy is ours and is stopped on drop, each
//! server by its own process id.

use std::fmt;
use std::fs::{self, File};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::server::{
    check_classpath, debian_classpath, find_java, four_letter, free_port, log_tail, private_dir,
};
use crate::{FaultProxy, Unavailable, CLASSPATH_ENV, MIN_SESSION_TIMEOUT};

/// How many servers the ensemble has.
pub const MEMBERS: usize = 3;
/// `tickTime` of the ensemble, as the one-server harness's.
pub const ENSEMBLE_TICK_MS: u64 = crate::SERVER_TICK_MS;
/// The default `syncLimit`, in ticks: a follower that hears nothing from
/// its leader for this long gives up on it and drops its clients (S22a),
/// and the leader drops a follower that acks nothing as long — so a real
/// follower cannot lag longer. Long enough for a lagged follower to stay
/// lagged over a few script steps on a busy machine; scripts about
/// partitions choose a shorter one.
pub const ENSEMBLE_SYNC_LIMIT: u64 = 50;
/// The longest session timeout the ensemble grants, in ticks: ZooKeeper's
/// default (20·tickTime), which the simulator clamps to as well (S20).
pub const ENSEMBLE_MAX_TIMEOUT_TICKS: u64 = 20;
/// `initLimit`, in ticks: how long a follower may take to sync at (re)join.
const INIT_LIMIT: u64 = 40;
/// Three JVMs on a shared machine, then an election.
const START_TIMEOUT: Duration = Duration::from_secs(45);
/// How long a follower may take to catch up after a lag or partition ends.
const CATCH_UP_TIMEOUT: Duration = Duration::from_secs(20);
/// A few tries in case another process takes one of the free ports found.
const START_ATTEMPTS: u32 = 3;

/// What a server says it is (`srvr`'s `Mode:`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Leader,
    Follower,
    /// Not serving: electing, syncing, or not answering.
    Down,
}

/// A server's `srvr` answer, the parts the harness needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerState {
    pub mode: Mode,
    /// The last zxid the server applied (`Zxid:`), when serving.
    pub zxid: Option<i64>,
}

struct Member {
    child: Child,
    client_port: u16,
    dir: PathBuf,
}

/// A running three-server ensemble. Dropping it kills the servers and
/// deletes their data.
pub struct Ensemble {
    members: Vec<Member>,
    /// `links[i][j]`: server `i`'s connection to server `j`'s quorum port
    /// (`None` on the diagonal).
    links: Vec<Vec<Option<FaultProxy>>>,
    startup: Duration,
    sync_limit: u64,
}

impl fmt::Debug for Ensemble {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ensemble")
            .field("client_ports", &self.client_ports())
            .field("startup", &self.startup)
            .finish()
    }
}

impl Ensemble {
    /// Start an ensemble with `syncLimit = sync_limit` ticks from
    /// `ZOOKEEPER_CLASSPATH` if set, else from the Debian package.
    pub fn start(sync_limit: u64) -> Result<Ensemble, Unavailable> {
        let classpath = std::env::var(CLASSPATH_ENV).ok();
        Ensemble::start_with(classpath.as_deref(), sync_limit)
    }

    /// Start an ensemble from `classpath`, or from the Debian locations.
    pub fn start_with(classpath: Option<&str>, sync_limit: u64) -> Result<Ensemble, Unavailable> {
        let classpath = match classpath {
            Some(cp) => check_classpath(cp)?,
            None => debian_classpath()?,
        };
        let java = find_java()?;
        let mut last = None;
        for _ in 0..START_ATTEMPTS {
            match launch(&java, &classpath, sync_limit) {
                Ok(ensemble) => return Ok(ensemble),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| Unavailable::Failed {
            reason: "no attempt made".into(),
            log_tail: String::new(),
        }))
    }

    /// `syncLimit`, in ticks.
    pub fn sync_limit(&self) -> u64 {
        self.sync_limit
    }

    /// How long the ensemble took from the first spawn to a leader and two
    /// followers serving.
    pub fn startup_time(&self) -> Duration {
        self.startup
    }

    /// Each server's client port on 127.0.0.1, by server index.
    pub fn client_ports(&self) -> Vec<u16> {
        self.members.iter().map(|m| m.client_port).collect()
    }

    /// `127.0.0.1:<port>` of server `i`'s client port.
    pub fn client_addr(&self, i: usize) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.members[i].client_port))
    }

    /// Send a four-letter word to server `i`.
    pub fn four_letter(&self, i: usize, word: &str) -> io::Result<String> {
        four_letter(self.members[i].client_port, word)
    }

    /// What server `i` says it is now.
    pub fn state(&self, i: usize) -> ServerState {
        match self.four_letter(i, "srvr") {
            Ok(answer) => parse_srvr(&answer),
            Err(_) => ServerState {
                mode: Mode::Down,
                zxid: None,
            },
        }
    }

    /// The server that says it leads, if exactly one does.
    pub fn leader(&self) -> Option<usize> {
        let leaders: Vec<usize> = (0..MEMBERS)
            .filter(|&i| self.state(i).mode == Mode::Leader)
            .collect();
        (leaders.len() == 1).then(|| leaders[0])
    }

    /// The server indices in role order: the leader first, then the two
    /// followers in index order. `None` unless one leads and two follow.
    pub fn roles(&self) -> Option<[usize; MEMBERS]> {
        let modes: Vec<Mode> = (0..MEMBERS).map(|i| self.state(i).mode).collect();
        let leader = modes.iter().position(|m| *m == Mode::Leader)?;
        let followers: Vec<usize> = (0..MEMBERS)
            .filter(|&i| modes[i] == Mode::Follower)
            .collect();
        match followers[..] {
            [a, b] => Some([leader, a, b]),
            _ => None,
        }
    }

    /// Wait until one server leads and the two others follow, all applied
    /// up to the same zxid, each follower's link cut into packets; returns
    /// the roles.
    ///
    /// A follower the leader synced with a snapshot (`SNAP`: a fresh
    /// follower at `0x0` behind a leader at `<epoch>00000000` sometimes
    /// gets one) has a link the proxy relays unframed from then on, so a
    /// lag could not hold its transactions; its connection is broken once,
    /// and it rejoins with a `DIFF` (its zxid is the leader's now).
    pub fn wait_settled(&self, limit: Duration) -> Result<[usize; MEMBERS], String> {
        let started = Instant::now();
        loop {
            if let Some(roles) = self.roles() {
                let resync: Vec<usize> = roles[1..]
                    .iter()
                    .copied()
                    .filter(|&f| self.link(f, roles[0]).unframed())
                    .collect();
                for &f in &resync {
                    self.link(f, roles[0]).drop_connections();
                }
                if !resync.is_empty() {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                let leader = self.state(roles[0]);
                if roles[1..].iter().all(|&f| caught_up(self.state(f), leader)) {
                    return Ok(roles);
                }
            }
            if started.elapsed() > limit {
                let states: Vec<ServerState> = (0..MEMBERS).map(|i| self.state(i)).collect();
                return Err(format!(
                    "the ensemble did not settle within {limit:?}: {states:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn link(&self, from: usize, to: usize) -> &FaultProxy {
        self.links[from][to]
            .as_ref()
            .expect("no link from a server to itself")
    }

    /// Hold the transactions the leader sends follower `follower`
    /// (proposals, commits, syncs): it applies nothing, while pings and
    /// session revalidations still reach it and what it sends (forwarded
    /// requests) still reaches the leader — a follower behind, not cut
    /// off. Must end within `syncLimit`: the leader drops a follower that
    /// acks no proposal for that long.
    pub fn lag(&self, follower: usize, leader: usize) -> Result<(), String> {
        let link = self.link(follower, leader);
        if link.unframed() {
            return Err(format!(
                "server {follower}'s link to leader {leader} carried a snapshot: \
                 its transactions cannot be held (see Ensemble::wait_settled)"
            ));
        }
        link.hold_transactions();
        Ok(())
    }

    /// End a lag: the held transactions flow, in order (see
    /// [`Ensemble::wait_caught_up`]).
    pub fn end_lag(&self, follower: usize, leader: usize) {
        self.link(follower, leader).release_transactions();
    }

    /// Cut follower `follower` off from every other server's quorum port,
    /// both ways: open connections hold every byte, new ones are refused.
    pub fn partition(&self, follower: usize) {
        for other in (0..MEMBERS).filter(|&j| j != follower) {
            let link = self.link(follower, other);
            link.refuse();
            link.pause();
        }
    }

    /// End a partition: held bytes flow, new connections are relayed. A
    /// follower that gave up on its leader (past `syncLimit`) rejoins by
    /// itself (see [`Ensemble::wait_caught_up`]).
    pub fn end_partition(&self, follower: usize) {
        for other in (0..MEMBERS).filter(|&j| j != follower) {
            let link = self.link(follower, other);
            link.admit();
            link.resume();
        }
    }

    /// `follower` follows `leader` and has applied what it has, now.
    pub fn is_caught_up(&self, follower: usize, leader: usize) -> bool {
        caught_up(self.state(follower), self.state(leader))
    }

    /// Wait until `follower` follows and has applied the leader's last zxid.
    pub fn wait_caught_up(&self, follower: usize, leader: usize) -> Result<(), String> {
        let started = Instant::now();
        loop {
            let f = self.state(follower);
            let l = self.state(leader);
            if caught_up(f, l) {
                return Ok(());
            }
            if started.elapsed() > CATCH_UP_TIMEOUT {
                return Err(format!(
                    "server {follower} did not catch up with leader {leader} within \
                     {CATCH_UP_TIMEOUT:?}: follower {f:?}, leader {l:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Server `i`'s log (stdout and stderr), the last lines.
    pub fn log_tail(&self, i: usize) -> String {
        log_tail(&self.members[i].dir)
    }
}

impl Drop for Ensemble {
    fn drop(&mut self) {
        for member in &mut self.members {
            // Our own child only, by its pid.
            let _ = member.child.kill();
            let _ = member.child.wait();
            let _ = fs::remove_dir_all(&member.dir);
        }
    }
}

/// A follower has applied everything its leader has. A follower that
/// applied nothing in the leader's epoch says `Zxid: 0x0`, while the
/// leader says `<epoch>00000000`: nothing to apply is caught up too.
fn caught_up(follower: ServerState, leader: ServerState) -> bool {
    let nothing_committed = leader.zxid.is_some_and(|z| z & 0xffff_ffff == 0);
    follower.mode == Mode::Follower
        && leader.mode == Mode::Leader
        && (follower.zxid == leader.zxid || nothing_committed)
}

/// Parse `srvr`: `Mode: leader|follower|standalone`, `Zxid: 0x…`.
pub fn parse_srvr(answer: &str) -> ServerState {
    let field = |name: &str| {
        answer
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
    };
    let mode = match field("Mode:") {
        Some("leader") => Mode::Leader,
        Some("follower") => Mode::Follower,
        _ => Mode::Down,
    };
    let zxid = field("Zxid:")
        .and_then(|z| z.strip_prefix("0x"))
        .and_then(|hex| i64::from_str_radix(hex, 16).ok());
    ServerState { mode, zxid }
}

fn launch(java: &Path, classpath: &str, sync_limit: u64) -> Result<Ensemble, Unavailable> {
    let failed = |reason: String| Unavailable::Failed {
        reason,
        log_tail: String::new(),
    };
    let mut ports = Vec::new();
    for _ in 0..3 * MEMBERS {
        ports.push(free_port().map_err(|e| failed(format!("finding a free port: {e}")))?);
    }
    let mut links: Vec<Vec<Option<FaultProxy>>> = Vec::new();
    for i in 0..MEMBERS {
        let mut row = Vec::new();
        for j in 0..MEMBERS {
            if i == j {
                row.push(None);
                continue;
            }
            let quorum = SocketAddr::from((Ipv4Addr::LOCALHOST, ports[3 * j + 1]));
            let proxy = FaultProxy::start_quorum(quorum)
                .map_err(|e| failed(format!("starting the link proxy {i}→{j}: {e}")))?;
            row.push(Some(proxy));
        }
        links.push(row);
    }
    let started = Instant::now();
    let mut ensemble = Ensemble {
        members: Vec::new(),
        links,
        startup: Duration::ZERO,
        sync_limit,
    };
    for i in 0..MEMBERS {
        let dir = private_dir().map_err(|e| failed(format!("creating a data directory: {e}")))?;
        let member = spawn_member(java, classpath, i, &ports, &ensemble, dir)?;
        ensemble.members.push(member);
    }
    let deadline = started + START_TIMEOUT;
    loop {
        for (i, member) in ensemble.members.iter_mut().enumerate() {
            if let Ok(Some(status)) = member.child.try_wait() {
                return Err(Unavailable::Failed {
                    reason: format!("server {i} exited with {status}"),
                    log_tail: log_tail(&member.dir),
                });
            }
        }
        if ensemble.roles().is_some() {
            ensemble.startup = started.elapsed();
            return Ok(ensemble);
        }
        if Instant::now() > deadline {
            let tails: Vec<String> = (0..MEMBERS)
                .map(|i| format!("--- server {i} ---\n{}", ensemble.log_tail(i)))
                .collect();
            return Err(Unavailable::Failed {
                reason: format!("no leader and two followers after {START_TIMEOUT:?}"),
                log_tail: tails.join("\n"),
            });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn spawn_member(
    java: &Path,
    classpath: &str,
    i: usize,
    ports: &[u16],
    ensemble: &Ensemble,
    dir: PathBuf,
) -> Result<Member, Unavailable> {
    let failed = |reason: String| Unavailable::Failed {
        reason,
        log_tail: String::new(),
    };
    let data = dir.join("data");
    fs::create_dir_all(&data).map_err(|e| failed(format!("creating {}: {e}", data.display())))?;
    fs::write(data.join("myid"), format!("{}\n", i + 1))
        .map_err(|e| failed(format!("writing myid: {e}")))?;
    let quorum_port = |j: usize| {
        ensemble.links[i][j]
            .as_ref()
            .map_or(ports[3 * j + 1], FaultProxy::port)
    };
    let servers: Vec<(usize, u16, u16)> = (0..MEMBERS)
        .map(|j| (j + 1, quorum_port(j), ports[3 * j + 2]))
        .collect();
    let cfg = dir.join("zoo.cfg");
    fs::write(
        &cfg,
        config_text(ports[3 * i], &data, &servers, ensemble.sync_limit),
    )
    .map_err(|e| failed(format!("writing {}: {e}", cfg.display())))?;
    let log = File::create(dir.join("server.log")).map_err(|e| failed(format!("log file: {e}")))?;
    let log_err = log
        .try_clone()
        .map_err(|e| failed(format!("log file: {e}")))?;
    let child = Command::new(java)
        .args([
            "-Xmx128m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Djava.net.preferIPv4Stack=true",
        ])
        .arg("-cp")
        .arg(classpath)
        .arg("org.apache.zookeeper.server.quorum.QuorumPeerMain")
        .arg(&cfg)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .map_err(|e| failed(format!("spawning {}: {e}", java.display())))?;
    Ok(Member {
        child,
        client_port: ports[3 * i],
        dir,
    })
}

/// One server's `zoo.cfg`: `servers` lists `(myid, quorum port, election
/// port)` as this server sees them (the others' quorum ports are its links).
fn config_text(
    client_port: u16,
    data_dir: &Path,
    servers: &[(usize, u16, u16)],
    sync_limit: u64,
) -> String {
    let mut text = format!(
        "tickTime={ENSEMBLE_TICK_MS}\n\
         initLimit={INIT_LIMIT}\n\
         syncLimit={sync_limit}\n\
         dataDir={}\n\
         clientPort={client_port}\n\
         clientPortAddress=127.0.0.1\n\
         admin.enableServer=false\n\
         4lw.commands.whitelist=*\n\
         minSessionTimeout={}\n\
         maxSessionTimeout={}\n\
         maxClientCnxns=0\n\
         preAllocSize=1024\n\
         forceSync=no\n\
         reconfigEnabled=false\n",
        data_dir.display(),
        MIN_SESSION_TIMEOUT.as_millis(),
        ENSEMBLE_MAX_TIMEOUT_TICKS * ENSEMBLE_TICK_MS,
    );
    for (id, quorum, election) in servers {
        text.push_str(&format!("server.{id}=127.0.0.1:{quorum}:{election}\n"));
    }
    text
}

/// An ensemble for a test, or `None` (after saying so loudly) when
/// ZooKeeper is not installed; on CI (`CI=true`) a missing ZooKeeper fails
/// the test instead, as [`crate::require_server`]. An ensemble that is
/// installed but does not start always fails.
pub fn require_ensemble(sync_limit: u64) -> Option<Ensemble> {
    let classpath = std::env::var(CLASSPATH_ENV).ok();
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    match Ensemble::start_with(classpath.as_deref(), sync_limit) {
        Ok(ensemble) => Some(ensemble),
        Err(Unavailable::NotInstalled { reason }) if !ci => {
            let test = std::thread::current()
                .name()
                .unwrap_or("<unnamed test>")
                .to_string();
            eprintln!(
                "SKIPPED: {test} — no ZooKeeper found for a three-server ensemble (install \
                 Debian package `zookeeper` or set {CLASSPATH_ENV}): {reason}"
            );
            None
        }
        Err(e @ Unavailable::NotInstalled { .. }) => {
            panic!("CI=true and {e} (install Debian package `zookeeper` or set {CLASSPATH_ENV})")
        }
        Err(e) => panic!("{e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srvr_is_parsed_for_mode_and_zxid() {
        let answer = "Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.0/0\n\
                      Zxid: 0x10000000a\nMode: follower\nNode count: 5\n";
        assert_eq!(
            parse_srvr(answer),
            ServerState {
                mode: Mode::Follower,
                zxid: Some(0x1_0000_000a)
            }
        );
        let electing = "This ZooKeeper instance is not currently serving requests\n";
        assert_eq!(parse_srvr(electing).mode, Mode::Down);
    }

    #[test]
    fn each_config_names_its_own_quorum_port_and_the_others_links() {
        let text = config_text(
            2181,
            Path::new("/tmp/d"),
            &[(1, 1001, 2001), (2, 1002, 2002), (3, 1003, 2003)],
            7,
        );
        assert!(text.contains("server.2=127.0.0.1:1002:2002\n"), "{text}");
        assert!(text.contains("syncLimit=7\n"));
        assert!(text.contains("maxSessionTimeout=2000\n"));
        assert!(text.contains("clientPortAddress=127.0.0.1\n"));
        assert!(text.contains("reconfigEnabled=false\n"));
    }
}
