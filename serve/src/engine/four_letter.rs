//! ZooKeeper's four-letter words on the client port, as a 3.8 server
//! answers them: a connection whose first four bytes (where a frame's
//! length would be) spell a word the server knows gets that word's text,
//! then the connection is closed (`NIOServerCnxn.checkFourLetterWord`).
//! Only words in the whitelist (`4lw.commands.whitelist`; 3.8's default is
//! `srvr` alone) are run; any other known word is answered
//! "`<word>` is not executed because it is not in the whitelist.".
//!
//! The texts follow 3.8.0's for the parts tools read (measured against the
//! Debian 3.8.0 server, see docs/SERVE.md "Four-letter words"): `dump`
//! lists the live sessions with their expiry times and every session's
//! ephemerals, which is how the apps tests see the leader expire a
//! session. Words this server does not answer are treated as never
//! whitelisted.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use zksim::{ServerId, SessionId};

use super::connection::ConnState;
use super::Engine;

/// Every word a 3.8 server knows (`FourLetterCommands`).
pub const KNOWN: [&str; 18] = [
    "conf", "cons", "crst", "dirs", "dump", "envi", "gtmk", "ruok", "stmk", "srst", "srvr", "stat",
    "wchc", "wchp", "wchs", "mntr", "isro", "hash",
];

/// The words this server answers; the rest of [`KNOWN`] are answered as
/// not whitelisted, whatever the whitelist says.
pub const ANSWERED: [&str; 9] = [
    "ruok", "srvr", "stat", "dump", "mntr", "conf", "isro", "wchs", "cons",
];

/// What `srvr`, `stat` and `mntr` say the version is: the protocol served,
/// and that it is the simulator.
const VERSION: &str = "3.8.0-zkserve, built on zkcheck";

/// The words a server runs: `4lw.commands.whitelist`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Whitelist {
    words: BTreeSet<&'static str>,
}

impl Default for Whitelist {
    /// 3.8's default: `srvr` only.
    fn default() -> Self {
        Whitelist {
            words: BTreeSet::from(["srvr"]),
        }
    }
}

impl Whitelist {
    /// Every known word (`4lw.commands.whitelist=*`).
    pub fn all() -> Self {
        Whitelist {
            words: KNOWN.into_iter().collect(),
        }
    }

    /// Parse ZooKeeper's syntax: words separated by commas, `*` for all.
    /// An unknown word is an error naming it (ZooKeeper only logs it).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut words = BTreeSet::new();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            if word == "*" {
                return Ok(Whitelist::all());
            }
            match KNOWN.iter().find(|&&k| k == word) {
                Some(&known) => {
                    words.insert(known);
                }
                None => {
                    return Err(format!(
                        "unknown four-letter word {word:?} (known: {}, or *)",
                        KNOWN.join(",")
                    ))
                }
            }
        }
        Ok(Whitelist { words })
    }

    /// The words, comma-separated: what [`Whitelist::parse`] reads back.
    pub fn text(&self) -> String {
        self.words.iter().copied().collect::<Vec<_>>().join(",")
    }

    pub fn allows(&self, word: &str) -> bool {
        self.words.contains(word)
    }
}

/// The known word these four bytes spell, if any.
pub fn recognise(first: &[u8]) -> Option<&'static str> {
    let first = first.get(..4)?;
    KNOWN.into_iter().find(|w| w.as_bytes() == first)
}

impl Engine {
    /// The text a 3.8 server sends for `word` on `server`'s port.
    pub(super) fn four_letter_answer(&self, server: ServerId, word: &str) -> String {
        if !self.limits.four_letter_words.allows(word) || !ANSWERED.contains(&word) {
            return format!("{word} is not executed because it is not in the whitelist.\n");
        }
        match word {
            "ruok" => "imok".to_string(),
            "isro" => "rw".to_string(),
            "srvr" => self.srvr(server, false),
            "stat" => self.srvr(server, true),
            "dump" => self.dump(server),
            "mntr" => self.mntr(server),
            "conf" => self.conf(server),
            "wchs" => self.wchs(server),
            "cons" => format!("{}\n", self.clients(server)),
            _ => unreachable!("ANSWERED holds only the words above"),
        }
    }

    fn mode(&self, server: ServerId) -> &'static str {
        match (self.world.num_servers(), server) {
            (1, _) => "standalone",
            (_, 0) => "leader",
            _ => "follower",
        }
    }

    /// ZooKeeper counts the root twice (`""` and `"/"` in `DataTree.nodes`).
    fn node_count(&self, server: ServerId) -> usize {
        self.world.server_tree(server).nodes().count() + 1
    }

    fn connections_on(&self, server: ServerId) -> usize {
        self.conns.values().filter(|c| c.server == server).count()
    }

    /// `cons` lines (and `stat`'s `Clients:`): one per connection on this
    /// port. The engine does not know peer addresses: `/conn#N` stands
    /// where 3.8 prints `/ip:port`.
    fn clients(&self, server: ServerId) -> String {
        let mut out = String::new();
        for (id, c) in self.conns.iter().filter(|(_, c)| c.server == server) {
            let live = matches!(c.state, ConnState::Live { .. });
            let _ = write!(
                out,
                " /conn#{id}[{}](queued=0,recved={},sent={}",
                u8::from(live),
                c.frames_in,
                c.frames_out
            );
            if let ConnState::Live { client } = c.state {
                let session = self.world.session_of(client);
                let _ = write!(out, ",sid={},to={}", hex(session), self.timeout_ms(session));
            }
            out.push_str(")\n");
        }
        out
    }

    fn srvr(&self, server: ServerId, with_clients: bool) -> String {
        let mut out = format!("Zookeeper version: {VERSION}\n");
        if with_clients {
            let _ = writeln!(out, "Clients:\n{}", self.clients(server));
        }
        let _ = write!(
            out,
            "Latency min/avg/max: 0/0.0/0\nReceived: {}\nSent: {}\nConnections: {}\n\
             Outstanding: 0\nZxid: {}\nMode: {}\nNode count: {}\n",
            self.stats.frames_in,
            self.stats.frames_out,
            self.connections_on(server),
            hex(self.world.applied_zxid(server)),
            self.mode(server),
            self.node_count(server),
        );
        if self.mode(server) == "leader" {
            out.push_str("Proposal sizes last/min/max: -1/-1/-1\n");
        }
        out
    }

    fn timeout_ms(&self, session: SessionId) -> u64 {
        self.world.session_timeout_of(session) * self.limits.tick_ms
    }

    /// `dump`: the session tracker (the leader's expiry buckets; a
    /// follower's global sessions with their timeouts), every session's
    /// ephemerals in this server's tree, and no connection sets (as a
    /// server with the Netty connection factory prints).
    fn dump(&self, server: ServerId) -> String {
        let mut out = String::from("SessionTracker dump:\n");
        let live: Vec<SessionId> = self.world.live_sessions().collect();
        if self.mode(server) == "follower" {
            let _ = writeln!(out, "Global Sessions({}):", live.len());
            for &session in &live {
                let _ = writeln!(out, "{}\t{}ms", hex(session), self.timeout_ms(session));
            }
        } else {
            // Buckets by expiry tick, sessions by id within a bucket.
            let mut buckets: std::collections::BTreeMap<u64, Vec<SessionId>> =
                std::collections::BTreeMap::new();
            for &session in &live {
                if let Some(deadline) = self.world.expiry_deadline(session) {
                    buckets.entry(deadline).or_default().push(session);
                }
            }
            let _ = writeln!(out, "Session Sets ({})/({}):", buckets.len(), live.len());
            for (deadline, sessions) in &buckets {
                let at = self
                    .limits
                    .epoch_ms
                    .saturating_add(deadline.saturating_mul(self.limits.tick_ms));
                let _ = writeln!(out, "{} expire at {}:", sessions.len(), java_date(at));
                for &session in sessions {
                    let _ = writeln!(out, "\t{}", hex(session));
                }
            }
        }
        out.push_str("ephemeral nodes dump:\n");
        let tree = self.world.server_tree(server);
        let with: Vec<(SessionId, Vec<String>)> = live
            .iter()
            .map(|&s| (s, tree.ephemerals_of(s)))
            .filter(|(_, paths)| !paths.is_empty())
            .collect();
        let _ = writeln!(out, "Sessions with Ephemerals ({}):", with.len());
        for (session, paths) in with {
            let _ = writeln!(out, "{}:", hex(session));
            for path in paths {
                let _ = writeln!(out, "\t{path}");
            }
        }
        out.push_str("Connections dump:\n");
        out
    }

    /// (sessions watching, paths watched, watches) at this server.
    fn watch_counts(&self, server: ServerId) -> (usize, usize, usize) {
        let watches = self.world.server_watches(server);
        let all: Vec<(&str, SessionId)> = watches
            .data_watches()
            .chain(watches.child_watches())
            .collect();
        let sessions: BTreeSet<SessionId> = all.iter().map(|&(_, s)| s).collect();
        let paths: BTreeSet<&str> = all.iter().map(|&(p, _)| p).collect();
        (sessions.len(), paths.len(), all.len())
    }

    fn wchs(&self, server: ServerId) -> String {
        let (sessions, paths, total) = self.watch_counts(server);
        format!("{sessions} connections watching {paths} paths\nTotal watches:{total}\n")
    }

    /// `mntr`: the keys monitoring tools read, in 3.8's order; the
    /// latency, JVM, file and processor metrics 3.8 adds are left out.
    fn mntr(&self, server: ServerId) -> String {
        let tree = self.world.server_tree(server);
        let live: Vec<SessionId> = self.world.live_sessions().collect();
        let ephemerals: usize = live.iter().map(|&s| tree.ephemerals_of(s).len()).sum();
        let (_, _, watches) = self.watch_counts(server);
        let mut out = String::new();
        let mut line = |key: &str, value: &dyn std::fmt::Display| {
            let _ = writeln!(out, "zk_{key}\t{value}");
        };
        line("version", &VERSION);
        line("server_state", &self.mode(server));
        line("ephemerals_count", &ephemerals);
        line("num_alive_connections", &self.connections_on(server));
        line("avg_latency", &"0.0");
        line("outstanding_requests", &0);
        line("znode_count", &self.node_count(server));
        line("global_sessions", &live.len());
        line("watch_count", &watches);
        line("packets_sent", &self.stats.frames_out);
        line("packets_received", &self.stats.frames_in);
        line("uptime", &(self.world.now() * self.limits.tick_ms));
        line("min_latency", &0);
        line("max_latency", &0);
        if self.mode(server) == "leader" {
            let followers = self.world.num_servers() - 1;
            line("followers", &followers);
            line("synced_followers", &followers);
            line("pending_syncs", &0);
        }
        out
    }

    /// `conf`: the settings this server has (no client port: the engine
    /// does not know its ports; no data directories: it has none).
    fn conf(&self, server: ServerId) -> String {
        let tick = self.limits.tick_ms;
        format!(
            "tickTime={tick}\nmaxClientCnxns={}\nminSessionTimeout={}\nmaxSessionTimeout={}\n\
             serverId={server}\n",
            self.limits.max_connections,
            2 * tick,
            20 * tick,
        )
    }
}

/// `0x` and the lowercase hex digits, as Java's `Long.toHexString`.
fn hex(value: i64) -> String {
    format!("0x{value:x}")
}

/// A Unix time in ms as Java's `Date.toString()` prints it in UTC:
/// `Fri Nov 27 05:37:30 UTC 2026`.
fn java_date(unix_ms: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = unix_ms / 1000;
    let days = secs / 86_400;
    let (h, m, s) = (secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
    // Howard Hinnant's civil_from_days, for days since 1970-01-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{} {} {day:02} {h:02}:{m:02}:{s:02} UTC {year}",
        DAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_print_as_java_prints_them_in_utc() {
        assert_eq!(java_date(0), "Thu Jan 01 00:00:00 UTC 1970");
        // The real server's `dump` said "Fri Nov 27 05:37:30 UTC 2026".
        assert_eq!(java_date(1_795_757_850_000), "Fri Nov 27 05:37:30 UTC 2026");
        assert_eq!(java_date(951_782_400_000), "Tue Feb 29 00:00:00 UTC 2000");
    }

    #[test]
    fn whitelist_parses_zookeepers_syntax() {
        assert!(Whitelist::default().allows("srvr"));
        assert!(!Whitelist::default().allows("ruok"));
        let list = Whitelist::parse(" ruok, dump ,").unwrap();
        assert!(list.allows("ruok") && list.allows("dump") && !list.allows("srvr"));
        assert_eq!(Whitelist::parse("srvr,*").unwrap(), Whitelist::all());
        let err = Whitelist::parse("ruok,nope").unwrap_err();
        assert!(err.contains("\"nope\""), "{err}");
    }

    #[test]
    fn only_known_words_are_recognised() {
        assert_eq!(recognise(b"ruok"), Some("ruok"));
        assert_eq!(recognise(b"dumpxx"), Some("dump"));
        assert_eq!(recognise(b"xxxx"), None);
        assert_eq!(recognise(b"ruo"), None);
        // A ConnectRequest's length prefix is never a word.
        assert_eq!(recognise(&[0, 0, 0, 44]), None);
    }
}
