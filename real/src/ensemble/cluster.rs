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
use std::fs;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

use crate::server::{check_classpath, debian_classpath, find_java, four_letter, log_tail};
use crate::{FaultProxy, Unavailable, CLASSPATH_ENV};

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

mod launch;
use launch::launch;

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
}
