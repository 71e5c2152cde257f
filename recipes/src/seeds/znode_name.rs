//! `org.apache.zookeeper.recipes.lock.ZNodeName`, in both orderings the
//! seeds show.
//!
//! - **Original** (Apache, seed 003; confirmed against the Apache source):
//!   `prefix.compareTo(that.prefix)` first, the sequence only on a tie, a
//!   name without sequence sorts *last*. With `x-<sessionId>-` prefixes the
//!   smaller session id (as a string!) always wins.
//! - **Article** (seed 002, line 436-449 and the note at line 476): sequence
//!   only; a name without sequence sorts *first*.
//!
//! Java's `s1 - s2` can overflow; the port compares the numbers, which
//! differs only for sequences 2^31 apart (never in a simulated run) and keeps
//! the order total so sorting cannot misbehave.

use std::cmp::Ordering;

/// Which `compareTo` a lock uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NameOrder {
    /// Prefix first, then sequence (Apache's original).
    PrefixFirst,
    /// Sequence only (the article's fix).
    SequenceOnly,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ZNodeName {
    pub name: String,
    pub prefix: String,
    /// `-1` when there is no parseable number after the last `-`.
    pub sequence: i32,
}

impl ZNodeName {
    pub fn new(name: &str) -> Self {
        let (prefix, sequence) = match name.rfind('-') {
            Some(idx) => (
                name[..idx].to_string(),
                name[idx + 1..].parse::<i32>().unwrap_or(-1),
            ),
            None => (name.to_string(), -1),
        };
        ZNodeName {
            name: name.to_string(),
            prefix,
            sequence,
        }
    }

    /// `compareTo` under `order`.
    pub fn compare(&self, that: &ZNodeName, order: NameOrder) -> Ordering {
        let (s1, s2) = (self.sequence, that.sequence);
        let by_sequence = |missing_first: bool| {
            if s1 == -1 && s2 == -1 {
                self.name.cmp(&that.name)
            } else if s1 == -1 {
                if missing_first {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            } else if s2 == -1 {
                if missing_first {
                    Ordering::Greater
                } else {
                    Ordering::Less
                }
            } else {
                s1.cmp(&s2)
            }
        };
        match order {
            NameOrder::PrefixFirst => self
                .prefix
                .cmp(&that.prefix)
                .then_with(|| by_sequence(false)),
            NameOrder::SequenceOnly => by_sequence(true),
        }
    }
}

/// `new TreeSet<ZNodeName>()` filled with `names` in the given order: an
/// element comparing equal to one already in the set is dropped.
pub fn tree_set(names: impl IntoIterator<Item = ZNodeName>, order: NameOrder) -> Vec<ZNodeName> {
    let mut set: Vec<ZNodeName> = Vec::new();
    for n in names {
        if let Err(pos) = set.binary_search_by(|e| e.compare(&n, order)) {
            set.insert(pos, n);
        }
    }
    set
}

/// `sortedNames.headSet(of)`: the elements strictly less than `of`.
pub fn head_set<'a>(set: &'a [ZNodeName], of: &ZNodeName, order: NameOrder) -> &'a [ZNodeName] {
    let end = set
        .iter()
        .position(|e| e.compare(of, order) != Ordering::Less)
        .unwrap_or(set.len());
    &set[..end]
}
