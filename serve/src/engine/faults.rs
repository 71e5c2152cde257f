//! Faults the server injects from a seeded plan (issue 32).
//!
//! The plan is drawn once from the seed ([`FaultPlan::new`]): for each
//! fault, the counted request it fires at (the k-th data request overall,
//! or the k-th under the aim: a path prefix or one session), and what it
//! does there (a drop before or after the reply, how many ticks a lag or a
//! partition lasts, which follower). Decisions are made at server events
//! only, never on the wall clock, so a seed fixes the plan whatever the
//! client's thread timing; what the app does around the faults is the
//! app's (and a rate over many runs says how often it goes wrong).
//!
//! Counted requests are the data requests a session sends (everything the
//! world answers: create, getData, multi, ...), not pings, `setWatches`,
//! `setAuth` or `closeSession`, whose number depends on the client's
//! timers. This module decides; the engine carries out.

use std::collections::BTreeMap;
use std::fmt;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use zksim::{ServerId, SessionId, Tick};

/// How many faults of each kind, and within how many counted requests
/// they are placed: `drops=2,expiries=1,lag=1,partitions=1,within=40`.
/// The names are the scenario files' (`connection_drops` is accepted for
/// `drops`), plus `lag`, which only a server with live clients has.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultSpec {
    pub drops: u32,
    pub expiries: u32,
    pub lag: u32,
    pub partitions: u32,
    /// Faults fire at counted requests 1..=within (default
    /// [`DEFAULT_WITHIN`]).
    pub within: u64,
}

/// Where faults are placed unless `within=` says otherwise.
pub const DEFAULT_WITHIN: u64 = 50;
/// A lag lasts 1..=this many ticks.
pub const MAX_LAG_TICKS: Tick = 6;
/// A partition lasts 1..=this many ticks: past `syncLimit` (5 ticks) the
/// follower gives up on the leader and drops its clients (S22a).
pub const MAX_PARTITION_TICKS: Tick = 8;
/// At most this many faults of one kind (a plan is a list, not a storm).
const MAX_PER_KIND: u32 = 1000;

impl FaultSpec {
    /// Parse `name=count,...`; empty means no faults.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut spec = FaultSpec {
            within: DEFAULT_WITHIN,
            ..FaultSpec::default()
        };
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((name, value)) = part.split_once('=') else {
                return Err(format!("`{part}`: expected name=count"));
            };
            let value: u64 = value
                .trim()
                .parse()
                .map_err(|_| format!("`{part}`: the count is not a whole number"))?;
            let count = || {
                u32::try_from(value)
                    .ok()
                    .filter(|&v| v <= MAX_PER_KIND)
                    .ok_or_else(|| format!("`{part}`: at most {MAX_PER_KIND} of a kind"))
            };
            match name.trim() {
                "drops" | "connection_drops" => spec.drops = count()?,
                "expiries" => spec.expiries = count()?,
                "lag" => spec.lag = count()?,
                "partitions" => spec.partitions = count()?,
                "within" if value >= 1 => spec.within = value,
                "within" => return Err("`within` must be at least 1".into()),
                other => {
                    return Err(format!(
                        "unknown fault `{other}` (drops, expiries, lag, partitions, within)"
                    ))
                }
            }
        }
        Ok(spec)
    }

    pub fn is_empty(&self) -> bool {
        self.drops + self.expiries + self.lag + self.partitions == 0
    }

    /// Lag and partitions cut a follower: an ensemble of one has none.
    pub fn check_servers(&self, servers: usize) -> Result<(), String> {
        if servers < 2 && self.lag + self.partitions > 0 {
            return Err("lag and partitions need a follower: --servers 2 or more".into());
        }
        Ok(())
    }
}

impl fmt::Display for FaultSpec {
    /// The canonical form, which [`FaultSpec::parse`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return Ok(());
        }
        write!(
            f,
            "drops={},expiries={},lag={},partitions={},within={}",
            self.drops, self.expiries, self.lag, self.partitions, self.within
        )
    }
}

/// Which requests the plan counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Aim {
    /// Every data request.
    #[default]
    All,
    /// Requests with a path under this prefix (the prefix itself, or below
    /// it: `/L` counts `/L` and `/L/x`, not `/Lx`); a multi counts when one
    /// of its ops does.
    Prefix(String),
    /// Requests of this session.
    Session(SessionId),
}

impl Aim {
    /// `/prefix`, `session:ID` (decimal or `0x` hex), or empty for all.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Aim::All);
        }
        if text.starts_with('/') {
            let prefix = if text.len() > 1 {
                text.trim_end_matches('/')
            } else {
                text
            };
            return Ok(Aim::Prefix(prefix.to_string()));
        }
        if let Some(id) = text.strip_prefix("session:") {
            let parsed = match id.strip_prefix("0x") {
                Some(hex) => i64::from_str_radix(hex, 16),
                None => id.parse(),
            };
            return parsed
                .map(Aim::Session)
                .map_err(|_| format!("`{text}`: the session is not a number"));
        }
        Err(format!(
            "`{text}`: aim at a path prefix (`/L`) or a session (`session:0x...`)"
        ))
    }

    fn counts(&self, session: SessionId, paths: &[&str]) -> bool {
        match self {
            Aim::All => true,
            Aim::Session(s) => *s == session,
            Aim::Prefix(prefix) => paths.iter().any(|p| under(p, prefix)),
        }
    }
}

impl fmt::Display for Aim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Aim::All => Ok(()),
            Aim::Prefix(p) => write!(f, "{p}"),
            Aim::Session(s) => write!(f, "session:{s:#x}"),
        }
    }
}

fn under(path: &str, prefix: &str) -> bool {
    prefix == "/"
        || path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// One fault of the plan, and what it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Close the request's connection, before its reply is sent (the reply
    /// is lost; a write is still committed) or just after.
    Drop { before_reply: bool },
    /// Silence the request's session (the request itself is lost) until
    /// the leader expires it.
    Expiry,
    /// A follower stops applying for `ticks`: the request's server if it
    /// is a follower, else follower `1 + pick % followers`.
    Lag { ticks: Tick, pick: u64 },
    /// A follower is cut from the leader for `ticks` (same choice).
    Partition { ticks: Tick, pick: u64 },
}

/// A fault at the `at`-th counted request (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planned {
    pub at: u64,
    pub action: Action,
}

/// The whole plan, drawn from the seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultPlan {
    pub planned: Vec<Planned>,
}

impl FaultPlan {
    pub fn new(spec: &FaultSpec, seed: u64) -> Self {
        // Another stream than any other use of the same seed.
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7a6b_6661_756c_7473);
        let within = spec.within.max(1);
        let mut planned = Vec::new();
        let draw = |count: u32, planned: &mut Vec<Planned>, rng: &mut ChaCha8Rng, kind: u8| {
            for _ in 0..count {
                let at = rng.random_range(1..=within);
                let action = match kind {
                    0 => Action::Drop {
                        before_reply: rng.random_range(0..2) == 0,
                    },
                    1 => Action::Expiry,
                    2 => Action::Lag {
                        ticks: rng.random_range(1..=MAX_LAG_TICKS),
                        pick: rng.random_range(0..u64::MAX),
                    },
                    _ => Action::Partition {
                        ticks: rng.random_range(1..=MAX_PARTITION_TICKS),
                        pick: rng.random_range(0..u64::MAX),
                    },
                };
                planned.push(Planned { at, action });
            }
        };
        draw(spec.drops, &mut planned, &mut rng, 0);
        draw(spec.expiries, &mut planned, &mut rng, 1);
        draw(spec.lag, &mut planned, &mut rng, 2);
        draw(spec.partitions, &mut planned, &mut rng, 3);
        // Stable: faults at the same request keep the kinds' order.
        planned.sort_by_key(|p| p.at);
        FaultPlan { planned }
    }
}

/// A lag or partition in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    pub partition: bool,
    pub ticks_left: Tick,
}

/// The plan as it unfolds: what was counted, what is in force.
#[derive(Clone, Debug)]
pub struct Faults {
    plan: FaultPlan,
    aim: Aim,
    next: usize,
    counted: u64,
    /// Followers lagging or partitioned, with the ticks left.
    cuts: BTreeMap<ServerId, Cut>,
}

impl Faults {
    pub fn new(spec: &FaultSpec, aim: Aim, seed: u64) -> Self {
        Faults {
            plan: FaultPlan::new(spec, seed),
            aim,
            next: 0,
            counted: 0,
            cuts: BTreeMap::new(),
        }
    }

    pub fn plan(&self) -> &FaultPlan {
        &self.plan
    }

    /// Requests counted so far.
    pub fn counted(&self) -> u64 {
        self.counted
    }

    /// Faults of the plan not due yet (the app has not made that many
    /// counted requests).
    pub fn not_reached(&self) -> usize {
        self.plan.planned.len() - self.next
    }

    /// A data request of `session` touching `paths`: if the aim counts
    /// it, the faults due at it (in plan order) and its number.
    pub fn count(&mut self, session: SessionId, paths: &[&str]) -> Option<(u64, Vec<Action>)> {
        if self.next >= self.plan.planned.len() || !self.aim.counts(session, paths) {
            return None;
        }
        self.counted += 1;
        let mut due = Vec::new();
        while let Some(p) = self.plan.planned.get(self.next) {
            if p.at != self.counted {
                break;
            }
            due.push(p.action);
            self.next += 1;
        }
        Some((self.counted, due))
    }

    /// Where a lag or partition falls: `server` if a follower, else one
    /// drawn from the plan's pick.
    pub fn follower(server: ServerId, servers: usize, pick: u64) -> Option<ServerId> {
        if servers < 2 {
            return None;
        }
        if server != 0 && server < servers {
            return Some(server);
        }
        Some(1 + (pick % (servers as u64 - 1)) as usize)
    }

    pub fn is_cut(&self, server: ServerId) -> bool {
        self.cuts.contains_key(&server)
    }

    /// Whether the follower skips applying now (a lag; a partitioned
    /// follower is held back by the world itself).
    pub fn is_lagging(&self, server: ServerId) -> bool {
        self.cuts.get(&server).is_some_and(|c| !c.partition)
    }

    pub fn start(&mut self, server: ServerId, partition: bool, ticks: Tick) {
        self.cuts.insert(
            server,
            Cut {
                partition,
                ticks_left: ticks,
            },
        );
    }

    /// A tick passed: the cuts that end now (server, was a partition).
    pub fn tick(&mut self) -> Vec<(ServerId, bool)> {
        let mut ended = Vec::new();
        for (&server, cut) in self.cuts.iter_mut() {
            cut.ticks_left = cut.ticks_left.saturating_sub(1);
            if cut.ticks_left == 0 {
                ended.push((server, cut.partition));
            }
        }
        for (server, _) in &ended {
            self.cuts.remove(server);
        }
        ended
    }

    /// Nothing planned is left and nothing is in force.
    pub fn is_over(&self) -> bool {
        self.next >= self.plan.planned.len() && self.cuts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_reads_the_scenario_names_and_says_what_is_wrong() {
        let spec = FaultSpec::parse("drops=2,expiries=1,lag=1,partitions=1").unwrap();
        assert_eq!(
            (spec.drops, spec.expiries, spec.lag, spec.partitions),
            (2, 1, 1, 1)
        );
        assert_eq!(spec.within, DEFAULT_WITHIN);
        assert_eq!(FaultSpec::parse(&spec.to_string()).unwrap(), spec);
        assert_eq!(
            FaultSpec::parse("connection_drops=3,within=9")
                .unwrap()
                .drops,
            3
        );
        assert!(FaultSpec::parse("").unwrap().is_empty());
        assert!(FaultSpec::parse("pauses=1")
            .unwrap_err()
            .contains("unknown"));
        assert!(FaultSpec::parse("drops")
            .unwrap_err()
            .contains("name=count"));
        assert!(FaultSpec::parse("drops=-1").is_err());
        assert!(FaultSpec::parse("drops=99999").is_err());
        assert!(FaultSpec::parse("within=0").is_err());
        assert!(spec.check_servers(1).is_err());
        assert!(spec.check_servers(3).is_ok());
    }

    #[test]
    fn aims_parse_and_count_under_a_prefix_or_one_session() {
        assert_eq!(Aim::parse("/L/").unwrap(), Aim::Prefix("/L".into()));
        assert_eq!(Aim::parse("session:0x10").unwrap(), Aim::Session(16));
        assert!(Aim::parse("L").is_err());
        let l = Aim::parse("/L").unwrap();
        assert!(l.counts(1, &["/L"]));
        assert!(l.counts(1, &["/R", "/L/lock-1"]));
        assert!(!l.counts(1, &["/Lx"]));
        assert!(Aim::Session(5).counts(5, &[]));
        assert!(!Aim::Session(5).counts(6, &["/L"]));
    }

    #[test]
    fn a_seed_fixes_the_plan_and_another_seed_changes_it() {
        let spec = FaultSpec::parse("drops=3,expiries=1,lag=2,partitions=1,within=1000").unwrap();
        let a = FaultPlan::new(&spec, 7);
        assert_eq!(a, FaultPlan::new(&spec, 7));
        assert_ne!(a, FaultPlan::new(&spec, 8));
        assert_eq!(a.planned.len(), 7);
        assert!(a.planned.windows(2).all(|w| w[0].at <= w[1].at));
        assert!(a.planned.iter().all(|p| (1..=1000).contains(&p.at)));
    }

    #[test]
    fn faults_fire_at_their_counted_request_only() {
        let spec = FaultSpec::parse("drops=1,within=3").unwrap();
        let mut faults = Faults::new(&spec, Aim::Prefix("/L".into()), 1);
        let at = faults.plan().planned[0].at;
        let mut fired = Vec::new();
        for i in 1..=6 {
            // Requests outside the aim are not counted.
            assert_eq!(faults.count(1, &["/R"]), None);
            if let Some((n, due)) = faults.count(1, &["/L/x"]) {
                assert_eq!(n, i);
                if !due.is_empty() {
                    fired.push(n);
                }
            }
        }
        assert_eq!(fired, vec![at]);
        assert!(faults.is_over());
    }

    #[test]
    fn cuts_end_after_their_ticks() {
        let mut faults = Faults::new(&FaultSpec::default(), Aim::All, 0);
        faults.start(2, false, 2);
        faults.start(1, true, 1);
        assert!(faults.is_lagging(2) && !faults.is_lagging(1) && faults.is_cut(1));
        assert_eq!(faults.tick(), vec![(1, true)]);
        assert_eq!(faults.tick(), vec![(2, false)]);
        assert!(!faults.is_cut(2));
        assert_eq!(Faults::follower(0, 3, 5), Some(2));
        assert_eq!(Faults::follower(1, 3, 5), Some(1));
        assert_eq!(Faults::follower(0, 1, 5), None);
    }
}
