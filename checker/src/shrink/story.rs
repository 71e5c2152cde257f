//! What a shrunk counterexample must keep of the one it came from: its
//! *story*, decided for every candidate by [`Story::accepts`].
//!
//! Keeping only the property is not enough: a liveness failure can be
//! shortened into *another* liveness failure (a waiter that never expired,
//! a delete that was never lost), which explains nothing about the bug
//! found. A story is:
//!
//! * the **property** broken;
//! * the **shape** of the explanation ([`shape`]): its clauses with client
//!   numbers, sessions, zxids and paths taken out and lists of clients
//!   collapsed, so "client 0 waits on a node owned by client 1" and
//!   "client 2 waits on a node owned by client 0" tell the same story, but
//!   "… which does not exist" or "(its session ended …)" tell another;
//! * its **ingredients** ([`Marks`]): the kinds of faults injected, and
//!   the errors and session expiries the clients were told of. The
//!   ingredients are fixed once the cheap passes, which only *remove*
//!   events, have done what they can: every fault they left was needed.
//!   From then on a candidate must inject faults of exactly those kinds and
//!   show the clients at least those errors and expiries.

use std::collections::BTreeSet;

use zkrecipes::AppEvent;
use zksim::{Delivery, Event, Fault, Happening, SessionEvent, ZkError};

use crate::monitor::{Property, Violation};

/// A set of ingredients of a run, one bit each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Marks(u64);

/// The bit of each fault kind (a `Heal` is no ingredient: it undoes one).
fn fault_bit(fault: &Fault) -> Option<u32> {
    Some(match fault {
        Fault::DropConnection { .. } => 0,
        Fault::Silence { .. } => 1,
        Fault::KillSession { .. } => 2,
        Fault::Pause { .. } => 3,
        Fault::Crash { .. } => 4,
        Fault::Partition { .. } => 5,
        Fault::Heal { .. } => return None,
    })
}
/// Bits 0..6 are fault kinds (see [`fault_bit`]).
const FAULT_BITS: u64 = 0b11_1111;
/// A client was told its session expired.
const EXPIRED_BIT: u32 = 6;
/// Errors a client was answered with start here, in `ZkError::ALL` order.
const ERROR_BITS_FROM: u32 = 8;

impl Marks {
    /// Add what one step shows: the fault it injected, the errors and
    /// expiries it delivered.
    pub fn add(&mut self, event: &Event, log: &[Happening<AppEvent>]) {
        if let Event::Fault(f) = event {
            if let Some(bit) = fault_bit(f) {
                self.0 |= 1 << bit;
            }
        }
        for happening in log {
            let Happening::Delivered { delivery, .. } = happening else {
                continue;
            };
            match delivery {
                Delivery::Session(SessionEvent::Expired) => self.0 |= 1 << EXPIRED_BIT,
                Delivery::Reply { reply: Err(e), .. } => {
                    if let Some(i) = ZkError::ALL.iter().position(|x| x == e) {
                        self.0 |= 1 << (ERROR_BITS_FROM + i as u32);
                    }
                }
                _ => {}
            }
        }
    }

    /// Whether `fault`'s kind is one of these marks' fault kinds.
    pub fn has_fault_kind(self, fault: &Fault) -> bool {
        fault_bit(fault).is_some_and(|bit| self.0 & (1 << bit) != 0)
    }

    fn faults(self) -> u64 {
        self.0 & FAULT_BITS
    }

    /// Every mark of `other` is one of these.
    pub fn covers(self, other: Marks) -> bool {
        self.0 & other.0 == other.0
    }

    /// The marks, readably (for the reader of a shrinking report).
    pub fn names(self) -> Vec<String> {
        let faults = [
            "connection drop",
            "expiry",
            "kill",
            "pause",
            "crash",
            "partition",
        ];
        let mut out: Vec<String> = faults
            .iter()
            .enumerate()
            .filter(|(bit, _)| self.0 & (1 << bit) != 0)
            .map(|(_, name)| name.to_string())
            .collect();
        if self.0 & (1 << EXPIRED_BIT) != 0 {
            out.push("Expired".into());
        }
        for (i, e) in ZkError::ALL.iter().enumerate() {
            if self.0 & (1 << (ERROR_BITS_FROM + i as u32)) != 0 {
                out.push(format!("error {e:?}"));
            }
        }
        out
    }
}

/// The story a candidate must tell to replace the current counterexample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Story {
    /// The property the counterexample breaks.
    pub property: Property,
    /// The explanation's clauses with client numbers, paths and counts
    /// taken out ([`shape`]).
    pub shape: BTreeSet<String>,
    /// `None` until fixed ([`Story::fix_ingredients`]): the first passes
    /// only remove events, so any ingredients they keep were in the run.
    pub ingredients: Option<Marks>,
}

impl Story {
    /// The story of `violation` (ingredients not fixed yet).
    pub fn of(violation: &Violation) -> Self {
        Story {
            property: violation.property,
            shape: shape(&violation.explanation),
            ingredients: None,
        }
    }

    /// From now on, a candidate needs the fault kinds of `marks` exactly,
    /// and at least its errors and expiries.
    pub fn fix_ingredients(&mut self, marks: Marks) {
        self.ingredients = Some(marks);
    }

    /// Whether a run that broke `violation` with ingredients `marks` tells
    /// this story: the one acceptance test of every candidate.
    pub fn accepts(&self, violation: &Violation, marks: Marks) -> bool {
        violation.property == self.property
            && self
                .ingredients
                .is_none_or(|needed| marks.faults() == needed.faults() && marks.covers(needed))
            && shape(&violation.explanation) == self.shape
    }
}

/// The explanation's clauses, with what names a particular client, node
/// or number taken out, so that only the *kind* of each claim is left:
///
/// * digits (hexadecimal included) become `#`, a path becomes `P`;
/// * a list of clients (`client 0, client 2`) and a chain of a cycle
///   (`P ↔ P ↔ client # ↔ client #`) count once, whatever their length;
/// * singular and plural read alike: `a`/`an` are dropped, a word's
///   final `s` too, `it` reads `they`;
/// * the clauses (split at line ends, commas, colons, brackets, dashes)
///   are compared as a set, so a repeated line counts once.
pub fn shape(explanation: &str) -> BTreeSet<String> {
    let mut text = String::with_capacity(explanation.len());
    for (n, word) in explanation.split(' ').enumerate() {
        if n > 0 {
            text.push(' ');
        }
        if word.starts_with('/') {
            let kept = word.trim_end_matches([':', ',', ')', ';', '.']);
            text.push('P');
            text.push_str(&word[kept.len()..]);
            continue;
        }
        let mut digits = false;
        for ch in word.chars() {
            // A number, hexadecimal included (`0x1f…`), is one `#`.
            let numeric = ch.is_ascii_digit() || (digits && (ch.is_ascii_hexdigit() || ch == 'x'));
            if numeric {
                if !digits {
                    text.push('#');
                }
                digits = true;
            } else {
                digits = false;
                text.push(ch);
            }
        }
    }
    while let Some(at) = text.find(", client #") {
        text.replace_range(at..at + ", client #".len(), "");
    }
    text.split(['\n', ',', ':', '(', ')', '—', ';'])
        .map(|clause| {
            let mut links: Vec<String> = clause.split('↔').map(words).collect();
            links.dedup();
            links.join(" ↔ ")
        })
        .filter(|c| !c.is_empty())
        .collect()
}

/// One clause's words, number-neutral (see [`shape`]).
fn words(clause: &str) -> String {
    clause
        .split_whitespace()
        .filter(|w| !matches!(*w, "a" | "an"))
        .map(|w| match w {
            "it" => "they",
            w if w.len() > 3 => w.strip_suffix('s').unwrap_or(w),
            w => w,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_do_not_change_the_shape() {
        let one = "stuck: nobody holds, yet client 1 still waits for what it asked for\n\
                   wait-for graph:\n  client 1 watches /lock/x-0000000001: /lock/x-0000000001 \
                   is owned by client 0";
        let two =
            "stuck: nobody holds, yet client 0, client 2 still wait for what they asked for\n\
                   wait-for graph:\n  client 0 watches /lock/x-0000000004: /lock/x-0000000004 \
                   is owned by client 2\n  client 2 watches /lock/x-0000000000: \
                   /lock/x-0000000000 is owned by client 1";
        assert_eq!(shape(one), shape(two));
    }

    #[test]
    fn another_reason_is_another_story() {
        let owned = "stuck: yet client 1 still waits\n  client 1 watches /lock/a: /lock/a is owned by client 0";
        let gone =
            "stuck: yet client 1 still waits\n  client 1 watches /lock/a, which does not exist";
        let ended =
            "stuck: yet client 1 (its session ended and it never opened a new one) still waits\n  \
                     client 1 watches /lock/a: /lock/a is owned by client 0";
        assert_ne!(shape(owned), shape(gone));
        assert_ne!(shape(owned), shape(ended));
        let session = "of client 0's live session 0x100000000000001";
        assert_eq!(shape(session), shape("of client 3's live session 0x2"));
        let one_node = "the run ended with a node that no client counts: /lock/a (of client 0's live session 0x1)";
        let two_nodes = "the run ended with nodes that no client counts: /lock/a (of client 0's live session 0x1), \
                         /lock/b (of client 0's live session 0x1)";
        assert_eq!(shape(one_node), shape(two_nodes));
        let short_cycle = "cycle: /lock/a ↔ client 0";
        let long_cycle = "cycle: /lock/a ↔ /lock/b ↔ client 0 ↔ client 1";
        assert_eq!(shape(short_cycle), shape(long_cycle));
    }

    #[test]
    fn ingredients_once_fixed_are_needed() {
        let v = Violation {
            property: Property::Liveness,
            explanation: "stuck: client 1 still waits".into(),
        };
        let mut drop = Marks::default();
        drop.add(&Event::Fault(Fault::DropConnection { client: 1 }), &[]);
        let mut story = Story::of(&v);
        assert!(story.accepts(&v, Marks::default()), "not fixed yet");
        story.fix_ingredients(drop);
        assert!(story.accepts(&v, drop));
        assert!(!story.accepts(&v, Marks::default()), "the drop is needed");
        let mut more = drop;
        more.add(&Event::Fault(Fault::Pause { client: 0 }), &[]);
        assert!(
            !story.accepts(&v, more),
            "another fault kind is another story"
        );
        let other = Violation {
            property: Property::NoLeaks,
            ..v.clone()
        };
        assert!(!story.accepts(&other, drop), "another property");
    }
}
