//! Which children of a lock (or election) path are contenders, in what
//! order, and who holds.
//!
//! A contender is a sequential child whose name, before its 10-digit
//! sequence suffix, ends with a known marker: Curator's
//! `_c_<uuid>-lock-` (mutex), `-latch-` (LeaderLatch), `__READ__` /
//! `__WRIT__` (read/write lock); kazoo's `<uuid>__lock__` and
//! `<uuid>__rlock__` (its read lock); plain `lock-`, `read-`, `write-`.
//! Markers are configurable ([`Rules::with`]). Contenders are ordered by the
//! sequence number, as every recipe orders them, not by name (Curator's
//! and kazoo's names start with a random uuid).
//!
//! One plain name is a contender too: `lock`, with no sequence, the naive
//! lock's single node (`/L/lock`) that whoever creates it holds and every
//! waiter watches. It sorts first, as sequence 0 would.
//!
//! Read contenders share: one holds when no write contender comes before
//! it. A write contender holds only when it is the lowest of all.

use crate::tree::{Life, Tree};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Holds alone (a mutex, a write lock, a leader candidate).
    Exclusive,
    /// Holds with the other read contenders before the first writer.
    Shared,
}

/// The naive lock's node name: a contender with no sequence.
pub const PLAIN_LOCK: &str = "lock";

/// How contender names are recognised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rules {
    markers: Vec<(String, Kind)>,
}

impl Default for Rules {
    fn default() -> Self {
        let exclusive = ["lock-", "__lock__", "latch-", "__WRIT__", "write-"];
        let shared = ["__rlock__", "__READ__", "read-"];
        Rules {
            markers: exclusive
                .iter()
                .map(|m| (m.to_string(), Kind::Exclusive))
                .chain(shared.iter().map(|m| (m.to_string(), Kind::Shared)))
                .collect(),
        }
    }
}

impl Rules {
    /// The default markers and `marker` too (checked first, so a custom
    /// marker that ends like a default one decides the kind).
    pub fn with(mut self, marker: &str, kind: Kind) -> Self {
        self.markers.insert(0, (marker.to_string(), kind));
        self
    }

    /// A child name's kind and sequence number, if it is a contender (the
    /// plain `lock`: exclusive, sequence 0).
    pub fn parse(&self, name: &str) -> Option<(Kind, i64)> {
        if name == PLAIN_LOCK {
            return Some((Kind::Exclusive, 0));
        }
        let split = name.len().checked_sub(10)?;
        if !name.is_char_boundary(split) {
            return None;
        }
        let (prefix, digits) = name.split_at(split);
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let seq: i64 = digits.parse().ok()?;
        self.markers
            .iter()
            .find(|(m, _)| prefix.ends_with(m.as_str()))
            .map(|(_, kind)| (*kind, seq))
    }
}

/// A contender at some zxid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contender<'t> {
    pub life: &'t Life,
    pub kind: Kind,
    pub seq: i64,
}

impl Contender<'_> {
    pub fn session(&self) -> i64 {
        self.life.session()
    }

    /// A place in a queue (a sequential node), not the naive lock's plain
    /// node.
    pub fn is_sequential(&self) -> bool {
        self.life.name() != PLAIN_LOCK
    }
}

/// The contenders under `parent` at `zxid`, lowest sequence first.
pub fn at<'t>(tree: &'t Tree, rules: &Rules, parent: &str, zxid: i64) -> Vec<Contender<'t>> {
    sorted(
        tree.children_at(parent, zxid)
            .into_iter()
            .filter_map(|life| contender(rules, life))
            .collect(),
    )
}

/// Every contender `parent` ever had, in creation order.
pub fn ever<'t>(tree: &'t Tree, rules: &Rules, parent: &str) -> Vec<Contender<'t>> {
    tree.children_ever(parent)
        .into_iter()
        .filter_map(|life| contender(rules, life))
        .collect()
}

pub fn contender<'t>(rules: &Rules, life: &'t Life) -> Option<Contender<'t>> {
    rules
        .parse(life.name())
        .map(|(kind, seq)| Contender { life, kind, seq })
}

fn sorted(mut v: Vec<Contender<'_>>) -> Vec<Contender<'_>> {
    v.sort_by(|a, b| (a.seq, &a.life.path).cmp(&(b.seq, &b.life.path)));
    v
}

/// The session allowed to write at `zxid`: the lowest contender's, if it is
/// an exclusive one.
pub fn writer<'a, 't>(contenders: &'a [Contender<'t>]) -> Option<&'a Contender<'t>> {
    contenders.first().filter(|c| c.kind == Kind::Exclusive)
}

/// The contenders that hold at this moment (the lowest writer, or the read
/// contenders before the first writer).
pub fn holders<'a, 't>(contenders: &'a [Contender<'t>]) -> Vec<&'a Contender<'t>> {
    match contenders.first() {
        None => Vec::new(),
        Some(first) if first.kind == Kind::Exclusive => vec![first],
        Some(_) => contenders
            .iter()
            .take_while(|c| c.kind == Kind::Shared)
            .collect(),
    }
}

/// What `c` waits for in `contenders` (sorted): its predecessor for a
/// writer; the nearest writer before it for a reader. `None` when it holds.
pub fn waits_for<'a, 't>(
    contenders: &'a [Contender<'t>],
    c: &Contender<'t>,
) -> Option<&'a Contender<'t>> {
    let before: Vec<&Contender<'t>> = contenders.iter().take_while(|o| o.seq < c.seq).collect();
    match c.kind {
        Kind::Exclusive => before.last().copied(),
        Kind::Shared => before
            .iter()
            .rev()
            .find(|o| o.kind == Kind::Exclusive)
            .copied(),
    }
}

/// `/L`'s contenders as a story line: `[a-lock-0000000001 (0x100) …]`.
pub fn list(contenders: &[Contender<'_>]) -> String {
    if contenders.is_empty() {
        return "none".into();
    }
    contenders
        .iter()
        .map(|c| format!("{} ({})", c.life.name(), crate::story::session(c.session())))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_libraries_names_are_contenders_with_their_kind() {
        let r = Rules::default();
        let cases = [
            ("_c_9f3e-lock-0000000004", Some((Kind::Exclusive, 4))),
            ("0a1b2c__lock__0000000012", Some((Kind::Exclusive, 12))),
            ("0a1b2c__rlock__0000000013", Some((Kind::Shared, 13))),
            ("_c_x-latch-0000000000", Some((Kind::Exclusive, 0))),
            ("_c_x-__READ__0000000001", Some((Kind::Shared, 1))),
            ("lock-0000000007", Some((Kind::Exclusive, 7))),
            ("lock-7", None),
            ("leases", None),
            ("entry-0000000001", None),
            ("é", None),
        ];
        for (name, want) in cases {
            assert_eq!(r.parse(name), want, "{name}");
        }
        let custom = Rules::default().with("entry-", Kind::Exclusive);
        assert_eq!(custom.parse("entry-0000000001"), Some((Kind::Exclusive, 1)));
    }
}
