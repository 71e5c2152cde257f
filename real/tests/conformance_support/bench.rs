//! The bench both conformance binaries run scripts on: two *sides* (the
//! simulator, or a server reached by address: the real ZooKeeper or
//! `zkserve`), every script played on each and their observations
//! compared; a third side may be kept as a *witness*, played only when the
//! two differ and shown beside them, so that a difference says at once
//! which side is wrong.
//!
//! Scripts a side cannot play for a reason the suite states are not
//! silently dropped: a [`Limitation`] names the script (it must still
//! differ, or the run fails and asks for the entry to go), and a
//! [`Bench::skip`] rule names the scripts it skips and why; both are
//! counted and listed in the summary.

use std::net::SocketAddr;

use zkreal::conformance::real::ConductorError;
use zkreal::conformance::{self, Observations, Script};

/// How a difference between the two sides starts (other failures, such as
/// a script the simulator cannot play, are not run again).
const DIFFERS: &str = "the two sides differ: ";

/// Where a script is played.
#[derive(Clone, Debug)]
pub enum Side {
    /// The simulator (`conformance::sim`): one server, deterministic.
    Simulator,
    /// A server speaking ZooKeeper 3.8's protocol at `addr`, played by
    /// the `zookeeper-client` conductor (`conformance::real`).
    Server {
        name: &'static str,
        addr: SocketAddr,
    },
}

impl Side {
    pub fn name(&self) -> &'static str {
        match self {
            Side::Simulator => "simulator",
            Side::Server { name, .. } => name,
        }
    }
}

/// A script whose difference between the two sides is known and
/// documented (docs/CONFORMANCE.md): it is still played and must still
/// differ.
#[derive(Clone, Copy, Debug)]
pub struct Limitation {
    pub script: &'static str,
    pub why: &'static str,
}

/// Runs scripts on two sides and keeps the count.
pub struct Bench {
    pub left: Side,
    pub right: Side,
    /// Played only when `left` and `right` differ, and shown with them.
    pub witness: Option<Side>,
    /// Known differences, by script name.
    pub limitations: Vec<Limitation>,
    /// Scripts not played, and why (`None`: play it).
    pub skip: fn(&Script) -> Option<&'static str>,
    runtime: tokio::runtime::Runtime,
    pub passed: usize,
    pub failed: usize,
    /// Known limitations seen to differ, by name.
    pub known: Vec<&'static str>,
    /// Scripts skipped, with the reason.
    pub skipped: Vec<(String, &'static str)>,
}

impl Bench {
    pub fn new(left: Side, right: Side) -> Bench {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .enable_io()
            .build()
            .expect("tokio runtime");
        Bench {
            left,
            right,
            witness: None,
            limitations: Vec::new(),
            skip: |_| None,
            runtime,
            passed: 0,
            failed: 0,
            known: Vec::new(),
            skipped: Vec::new(),
        }
    }

    /// The sides that are servers (what the conductor plays): name, address.
    pub fn servers(&self) -> Vec<(&'static str, SocketAddr)> {
        [&self.left, &self.right]
            .into_iter()
            .filter_map(|s| match s {
                Side::Simulator => None,
                Side::Server { name, addr } => Some((*name, *addr)),
            })
            .collect()
    }

    /// Play `script` on both sides and record the result: agreement
    /// passes, a difference fails, unless the script is a named
    /// [`Limitation`] (which must differ) or skipped by [`Bench::skip`].
    pub fn play(&mut self, script: &Script) {
        if let Some(why) = (self.skip)(script) {
            self.skipped.push((script.name.clone(), why));
            return;
        }
        let limitation = self
            .limitations
            .iter()
            .find(|l| l.script == script.name)
            .copied();
        let result = self.check(script);
        match (limitation, result) {
            (None, result) => self.record(&script.name, result),
            (Some(l), Err(diff)) if diff.starts_with(DIFFERS) => {
                eprintln!(
                    "conformance KNOWN LIMITATION: {} ({})\n{diff}",
                    l.script, l.why
                );
                self.known.push(l.script);
            }
            (Some(l), Err(other)) => self.record(l.script, Err(other)),
            (Some(l), Ok(())) => self.record(
                l.script,
                Err(format!(
                    "named a known limitation ({}) but the sides agree: remove it from the list",
                    l.why
                )),
            ),
        }
    }

    /// Run `script` on both sides; `Err` with the observations side by
    /// side on any difference that a second run (on a fresh root) shows
    /// again.
    ///
    /// Why a second run: a server is shared by every script, and a
    /// transaction none of this script's sessions made (a `closeSession`
    /// of an earlier script's session landing late) shifts every zxid the
    /// script sees after it by one — seen once in CI, every zxid after the
    /// setup one higher on the real side. A divergence of the model shows
    /// on every run, so a difference that the second run does not repeat
    /// was the server's neighbours, not the model.
    pub fn check(&self, script: &Script) -> Result<(), String> {
        match self.check_once(script) {
            Err(diff) if diff.starts_with(DIFFERS) => self.check_once(script),
            result => result,
        }
    }

    fn check_once(&self, script: &Script) -> Result<(), String> {
        let root = self.fresh_root();
        let rooted = script.rooted(&root);
        let left = self.observe(&self.left, &rooted, &root)?;
        let right = self.observe(&self.right, &rooted, &root)?;
        let mut sides = vec![(self.left.name(), &left), (self.right.name(), &right)];
        if std::env::var_os("CONFORMANCE_SHOW").is_some() {
            println!("{}", conformance::columns(&rooted, &sides));
        }
        if left == right {
            return Ok(());
        }
        let witness = self
            .witness
            .as_ref()
            .map(|w| (w.name(), self.observe(w, &rooted, &root)));
        let mut note = String::new();
        match &witness {
            Some((name, Ok(seen))) => sides.push((name, seen)),
            Some((name, Err(e))) => note = format!("({name} could not play it: {e})\n"),
            None => {}
        }
        Err(format!(
            "{DIFFERS}{} | {}\n{}{note}",
            self.left.name(),
            self.right.name(),
            conformance::columns(&rooted, &sides)
        ))
    }

    /// Play a rooted script on one side.
    fn observe(&self, side: &Side, rooted: &Script, root: &str) -> Result<Observations, String> {
        let seen = match side {
            Side::Simulator => conformance::sim::run(rooted, root).map_err(|e| e.to_string()),
            Side::Server { addr, .. } => self
                .run_server(*addr, rooted, root)
                .map_err(|e| e.to_string()),
        };
        seen.map_err(|e| format!("{}{}: {e}", rooted.listing(), side.name()))
    }

    /// A root node no other script run uses.
    pub fn fresh_root(&self) -> String {
        format!("/conf-{}", next_root())
    }

    /// Run a rooted script with the conductor on the server at `addr`.
    pub fn run_server(
        &self,
        addr: SocketAddr,
        rooted: &Script,
        root: &str,
    ) -> Result<Observations, ConductorError> {
        self.runtime
            .block_on(conformance::real::run(rooted, root, addr))
    }

    pub fn record(&mut self, name: &str, result: Result<(), String>) {
        match result {
            Ok(()) => self.passed += 1,
            Err(diff) => {
                self.failed += 1;
                eprintln!("conformance FAILED: {name}\n{diff}");
            }
        }
    }

    /// The lines after the counts: the known limitations and the skipped
    /// scripts, each by name.
    pub fn named_exceptions(&self) -> String {
        let mut out = String::new();
        for name in &self.known {
            let why = self
                .limitations
                .iter()
                .find(|l| l.script == *name)
                .map_or("", |l| l.why);
            out.push_str(&format!("  known limitation: {name}: {why}\n"));
        }
        for (name, why) in &self.skipped {
            out.push_str(&format!("  skipped: {name}: {why}\n"));
        }
        out
    }
}

/// Root numbers are unique within the process (every bench shares them).
fn next_root() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT_ROOT: AtomicUsize = AtomicUsize::new(0);
    NEXT_ROOT.fetch_add(1, Ordering::SeqCst)
}
