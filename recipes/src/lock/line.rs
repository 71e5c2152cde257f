//! Who is in line before a client, and whom it must wait for: the pure
//! part of the predecessor-watch recipes (steps 2–4), kept apart from the
//! ops so that it can be read and tested on its own.

use super::names::sequence_of;
use super::switches::Flaws;

/// Which side of the lock a client takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Plain exclusive lock: `lock-` nodes.
    Exclusive,
    /// Read side of a read/write lock: `read-` nodes; blocked by lower writers only.
    Reader,
    /// Write side: `write-` nodes; blocked by every lower node.
    Writer,
}

impl Role {
    /// The name prefix's first part.
    pub fn kind(self) -> &'static str {
        match self {
            Role::Exclusive => "lock",
            Role::Reader => "read",
            Role::Writer => "write",
        }
    }
    pub fn shared(self) -> bool {
        self == Role::Reader
    }
    /// Whether a sibling named `name` takes part in this lock at all.
    pub fn is_lock_node(self, name: &str) -> bool {
        match self {
            Role::Exclusive => name.starts_with("lock-"),
            Role::Reader | Role::Writer => name.starts_with("read-") || name.starts_with("write-"),
        }
    }
    /// Whether a lower sibling named `name` keeps this client waiting.
    pub fn is_blocked_by(self, name: &str) -> bool {
        match self {
            Role::Reader => name.starts_with("write-"),
            Role::Exclusive | Role::Writer => true,
        }
    }
}

/// What a listing means for a client.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Nothing before it blocks it: it holds the lock.
    Holds,
    /// Wait for this child (a name) to go.
    Watch(String),
    /// Its own node is not in the listing.
    Gone,
}

/// A listing, judged.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Judgement {
    /// Children carrying the client's own session tag that are not its
    /// current node: leftovers of earlier attempts, to delete. They are
    /// left out of the line (they would block it until its session ends).
    pub leftovers: Vec<String>,
    pub verdict: Verdict,
}

/// Judge the children `names` of the lock root for the client whose node is
/// `mine`. `own_tag` is the start of every name the client made in this
/// session (`None`: do not look for leftovers). Children that are not
/// nodes of this lock are ignored. The line is ordered by sequence suffix
/// (or, flaw W1, by whole name); the client waits for the nearest lower
/// node that blocks its role (or, flaw W6, the lowest node).
pub fn judge(
    names: &[String],
    mine: &str,
    own_tag: Option<&str>,
    role: Role,
    flaws: Flaws,
) -> Judgement {
    let mut leftovers = Vec::new();
    // Borrowed names, each with its place in the line: a listing is judged
    // at every wakeup and poll, and only the node to watch is copied out.
    // Flaw W1 orders by whole name (every key equal); otherwise by sequence
    // number, then name, and names without a suffix leave the line (as
    // `sort_by_sequence`).
    let mut line: Vec<(i64, &String)> = Vec::with_capacity(names.len());
    for name in names.iter().filter(|n| role.is_lock_node(n)) {
        match own_tag {
            Some(tag) if name != mine && name.starts_with(tag) => leftovers.push(name.clone()),
            _ if flaws.string_sort => line.push((0, name)),
            _ => line.extend(sequence_of(name).map(|seq| (seq, name))),
        }
    }
    // Oldest first, whatever order the listing came in: the deletes (and
    // so their zxids) must not depend on the server's hash order of names.
    leftovers.sort_by_key(|name| (sequence_of(name), name.clone()));
    line.sort();
    let verdict = match line.iter().position(|(_, n)| *n == mine) {
        None => Verdict::Gone,
        Some(at) => {
            let before = &line[..at];
            let nearest = before.iter().rev().find(|(_, n)| role.is_blocked_by(n));
            match nearest {
                None => Verdict::Holds,
                Some(_) if flaws.watch_lowest => Verdict::Watch(before[0].1.clone()),
                Some((_, pred)) => Verdict::Watch((*pred).clone()),
            }
        }
    };
    Judgement { leftovers, verdict }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::names::sort_by_sequence;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The line ordered over borrowed names is the line
        /// `sort_by_sequence` orders (by sequence, then name, names
        /// without a suffix left out), for every role and flaw.
        #[test]
        fn the_line_is_ordered_as_sort_by_sequence(
            picks in prop::collection::vec((0..3usize, 0..4usize, 0..3i32), 0..7),
            mine in 0..7usize,
            string_sort in any::<bool>(),
            watch_lowest in any::<bool>(),
            role in prop::sample::select(vec![Role::Exclusive, Role::Reader, Role::Writer]),
        ) {
            let kinds = ["lock-", "read-", "write-"];
            let tags = ["a-", "b-", "", "x"];
            let names: Vec<String> = picks
                .iter()
                .map(|&(k, t, seq)| {
                    let suffix = if t == 3 { String::new() } else { format!("{seq:010}") };
                    format!("{}{}{suffix}", kinds[k], tags[t])
                })
                .collect();
            let mine = names.get(mine).cloned().unwrap_or_else(|| "lock-a-0000000009".into());
            let flaws = Flaws { string_sort, watch_lowest, ..Flaws::default() };
            // The former implementation, on owned copies.
            let reference = {
                let mut line: Vec<String> =
                    names.iter().filter(|n| role.is_lock_node(n)).cloned().collect();
                let line: Vec<String> = if string_sort {
                    line.sort();
                    line
                } else {
                    sort_by_sequence(&line).into_iter().map(|s| s.name).collect()
                };
                match line.iter().position(|n| *n == mine) {
                    None => Verdict::Gone,
                    Some(at) => {
                        let before = &line[..at];
                        match before.iter().rev().find(|n| role.is_blocked_by(n)) {
                            None => Verdict::Holds,
                            Some(_) if watch_lowest => Verdict::Watch(before[0].clone()),
                            Some(pred) => Verdict::Watch(pred.clone()),
                        }
                    }
                }
            };
            prop_assert_eq!(judge(&names, &mine, None, role, flaws).verdict, reference);
        }
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_lowest_holds_and_the_others_watch_their_predecessor() {
        let line = names(&[
            "lock-b-0000000003",
            "lock-a-0000000001",
            "lock-c-0000000002",
            "x",
        ]);
        let ok = Flaws::default();
        let j = |mine| judge(&line, mine, None, Role::Exclusive, ok).verdict;
        assert_eq!(j("lock-a-0000000001"), Verdict::Holds);
        assert_eq!(
            j("lock-c-0000000002"),
            Verdict::Watch("lock-a-0000000001".into())
        );
        assert_eq!(
            j("lock-b-0000000003"),
            Verdict::Watch("lock-c-0000000002".into())
        );
        assert_eq!(j("lock-d-0000000004"), Verdict::Gone);
    }

    #[test]
    fn own_leftovers_are_set_apart() {
        let line = names(&[
            "lock-me1-0000000001",
            "lock-me2-0000000003",
            "lock-x-0000000002",
        ]);
        let j = judge(
            &line,
            "lock-me2-0000000003",
            Some("lock-me"),
            Role::Exclusive,
            Flaws::default(),
        );
        assert_eq!(j.leftovers, ["lock-me1-0000000001"]);
        assert_eq!(j.verdict, Verdict::Watch("lock-x-0000000002".into()));
        let j = judge(
            &line,
            "lock-me2-0000000003",
            None,
            Role::Exclusive,
            Flaws::default(),
        );
        assert!(j.leftovers.is_empty());
    }

    #[test]
    fn readers_wait_for_writers_only() {
        let line = names(&[
            "write-0000000001",
            "read-0000000002",
            "read-0000000003",
            "write-0000000004",
        ]);
        let ok = Flaws::default();
        let j = |mine, role| judge(&line, mine, None, role, ok).verdict;
        assert_eq!(
            j("read-0000000003", Role::Reader),
            Verdict::Watch("write-0000000001".into())
        );
        assert_eq!(
            j("write-0000000004", Role::Writer),
            Verdict::Watch("read-0000000003".into())
        );
        assert_eq!(j("write-0000000001", Role::Writer), Verdict::Holds);
        let line = names(&["read-0000000001", "read-0000000002"]);
        assert_eq!(
            judge(&line, "read-0000000002", None, Role::Reader, ok).verdict,
            Verdict::Holds
        );
    }

    #[test]
    fn flaws_change_the_order_and_the_target() {
        let line = names(&[
            "lock-z-0000000001",
            "lock-a-0000000002",
            "lock-m-0000000003",
        ]);
        let sorted = Flaws {
            string_sort: true,
            ..Flaws::default()
        };
        assert_eq!(
            judge(&line, "lock-a-0000000002", None, Role::Exclusive, sorted).verdict,
            Verdict::Holds
        );
        let lowest = Flaws {
            watch_lowest: true,
            ..Flaws::default()
        };
        assert_eq!(
            judge(&line, "lock-m-0000000003", None, Role::Exclusive, lowest).verdict,
            Verdict::Watch("lock-z-0000000001".into())
        );
    }
}
