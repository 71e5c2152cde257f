//! What the monitors measure, as a [`Tally`]: numbers that merge exactly
//! across runs. (Named apart from [`super::herd::LockFigures`], the cost
//! figures of one lock run counted from its history alone, which the
//! real-server example prints.)
//!
//! Every count is a plain sum and every distribution is a histogram
//! (value → how many times), so merging the figures of many seeds, in any
//! order and on any number of threads, gives the same result as one long run.
//!
//! The lock figures use one set of definitions (see [`super::herd`] for the
//! wakeup rules); [`super::herd::LockFigures`], which the real-server example
//! computes from a live ZooKeeper's history, follows the same definitions
//! for the subset it reports (wakeups, wakeups per release and per lock
//! write, requests), so simulator and real-server numbers can be set side by
//! side.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Property;

/// A histogram of non-negative integer samples. Merges exactly. In JSON,
/// an object from each sampled value (as a string) to its count.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Histogram {
    counts: BTreeMap<u64, u64>,
}

impl Histogram {
    /// Count one sample.
    pub fn record(&mut self, value: u64) {
        *self.counts.entry(value).or_insert(0) += 1;
    }
    /// Add `other`'s samples (counts saturate, never wrap).
    pub fn merge(&mut self, other: &Histogram) {
        for (&value, &n) in &other.counts {
            let count = self.counts.entry(value).or_insert(0);
            *count = count.saturating_add(n);
        }
    }
    /// How many samples.
    pub fn len(&self) -> u64 {
        self.counts.values().fold(0, |a, &n| a.saturating_add(n))
    }
    /// No sample was recorded.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
    /// The sum of the samples (saturating).
    pub fn sum(&self) -> u64 {
        self.counts
            .iter()
            .fold(0, |a: u64, (v, n)| a.saturating_add(v.saturating_mul(*n)))
    }
    /// The largest sample, `None` when empty.
    pub fn max(&self) -> Option<u64> {
        self.counts.keys().next_back().copied()
    }
    /// 0 when there are no samples.
    pub fn mean(&self) -> f64 {
        ratio(self.sum(), self.len())
    }
    /// The smallest sample with at least `q` of the samples at or below it
    /// (nearest-rank). `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).max(1);
        let mut seen: u64 = 0;
        for (&value, &count) in &self.counts {
            seen = count.saturating_add(seen);
            if seen >= rank {
                return Some(value);
            }
        }
        self.max()
    }
    /// Samples by value, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().map(|(&v, &n)| (v, n))
    }
}

/// `numerator / denominator`, 0 when nothing was counted.
pub fn ratio(numerator: u64, denominator: u64) -> f64 {
    if denominator == 0 {
        0.0
    } else {
        numerator as f64 / denominator as f64
    }
}

/// Measured figures of one or many runs, merged by [`Tally::merge`]. In
/// JSON results (`check --json`) every field is written as it is here,
/// properties by their result names ([`super::result_name`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tally {
    /// Runs merged into these figures.
    pub runs: u64,
    /// `Acquired` events.
    pub acquisitions: u64,
    /// `Released` events.
    pub releases: u64,
    /// Requests clients sent (`Happening::Sent`): each costs the ensemble a round trip.
    pub requests: u64,
    /// Node-watch events delivered to a waiting client.
    pub wakeups: u64,
    /// Wakeups that did not lead the woken client to acquire (see `super::herd`).
    pub wasted_wakeups: u64,
    /// Per release: how many wakeups it caused.
    pub wakeups_per_release: Histogram,
    /// Per release: how many of its wakeups were wasted.
    pub wasted_per_release: Histogram,
    /// Per lock write (each release's delete and each create): how many
    /// wakeups it fired. A create counts: back to back, the naive lock's
    /// waiters mostly watch for the node's creation, and the next holder's
    /// create wakes them all (see [`super::herd::ledger`]). Absent from
    /// results written before it existed, hence the default.
    #[serde(default)]
    pub wakeups_per_write: Histogram,
    /// Wait from `Requested` to `Acquired`, in ticks.
    pub latency: Histogram,
    /// Pairs (earlier waiter, overtaking client) breaking FIFO.
    pub fifo_violations: u64,
    /// Writes the fenced resource rejected because their fence was stale.
    pub stale_writes: u64,
    /// Writes the fenced resource accepted.
    pub accepted_writes: u64,
    /// Moments two clients believed they held an exclusive lock at once.
    pub overlaps: u64,
    /// Queue items offered and taken.
    pub offered: u64,
    /// Queue items taken.
    pub taken: u64,
    /// Times a client came to believe it leads.
    pub elections: u64,
    /// Runs whose end liveness judged stuck.
    pub stuck_runs: u64,
    /// Runs cut off (step or time bound) while work was left.
    pub cut_off_runs: u64,
    /// Recipe znodes left behind after every client finished.
    pub leaked_nodes: u64,
    /// Violations of report-only (and hard) properties, by property, one per run at most.
    pub violations: BTreeMap<Property, u64>,
}

impl Tally {
    /// Add `other`'s figures to these. Sums saturate: figures read back
    /// from hand-edited shard files (`zkcheck merge`) must not wrap or panic.
    pub fn merge(&mut self, other: &Tally) {
        self.runs = self.runs.saturating_add(other.runs);
        self.acquisitions = self.acquisitions.saturating_add(other.acquisitions);
        self.releases = self.releases.saturating_add(other.releases);
        self.requests = self.requests.saturating_add(other.requests);
        self.wakeups = self.wakeups.saturating_add(other.wakeups);
        self.wasted_wakeups = self.wasted_wakeups.saturating_add(other.wasted_wakeups);
        self.wakeups_per_release.merge(&other.wakeups_per_release);
        self.wasted_per_release.merge(&other.wasted_per_release);
        self.wakeups_per_write.merge(&other.wakeups_per_write);
        self.latency.merge(&other.latency);
        self.fifo_violations = self.fifo_violations.saturating_add(other.fifo_violations);
        self.stale_writes = self.stale_writes.saturating_add(other.stale_writes);
        self.accepted_writes = self.accepted_writes.saturating_add(other.accepted_writes);
        self.overlaps = self.overlaps.saturating_add(other.overlaps);
        self.offered = self.offered.saturating_add(other.offered);
        self.taken = self.taken.saturating_add(other.taken);
        self.elections = self.elections.saturating_add(other.elections);
        self.stuck_runs = self.stuck_runs.saturating_add(other.stuck_runs);
        self.cut_off_runs = self.cut_off_runs.saturating_add(other.cut_off_runs);
        self.leaked_nodes = self.leaked_nodes.saturating_add(other.leaked_nodes);
        for (&p, &n) in &other.violations {
            let count = self.violations.entry(p).or_insert(0);
            *count = count.saturating_add(n);
        }
    }

    /// Wakeups per acquisition (0 when nothing was acquired).
    pub fn wakeups_per_acquisition(&self) -> f64 {
        ratio(self.wakeups, self.acquisitions)
    }
    /// Requests per acquisition (0 when nothing was acquired).
    pub fn requests_per_acquisition(&self) -> f64 {
        ratio(self.requests, self.acquisitions)
    }
    /// The most waiters one release woke (1 for a herd-free lock; 0 when
    /// nothing was released).
    pub fn max_wakeups_per_release(&self) -> u64 {
        self.wakeups_per_release.max().unwrap_or(0)
    }
    /// Waiters woken per release, on average.
    pub fn mean_wakeups_per_release(&self) -> f64 {
        self.wakeups_per_release.mean()
    }
    /// The most wakeups one lock write (a release or a create) fired: the
    /// herd's size.
    pub fn max_wakeups_per_write(&self) -> u64 {
        self.wakeups_per_write.max().unwrap_or(0)
    }
    /// The mean number of wakeups per lock write.
    pub fn mean_wakeups_per_write(&self) -> f64 {
        self.wakeups_per_write.mean()
    }
    /// The most wakeups one release wasted (woken clients that did not get the
    /// lock).
    pub fn max_wasted_per_release(&self) -> u64 {
        self.wasted_per_release.max().unwrap_or(0)
    }
    /// Wasted wakeups per release, on average.
    pub fn mean_wasted_per_release(&self) -> f64 {
        self.wasted_per_release.mean()
    }
    /// The mean wait from `Requested` to `Acquired`, in ticks.
    pub fn mean_latency(&self) -> f64 {
        self.latency.mean()
    }
    /// The 99th percentile of that wait, in ticks (0 when nothing was
    /// acquired).
    pub fn p99_latency(&self) -> u64 {
        self.latency.quantile(0.99).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_use_nearest_rank() {
        let mut h = Histogram::default();
        for v in 1..=100 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.99), Some(99));
        assert_eq!(h.quantile(0.5), Some(50));
        assert_eq!(h.quantile(1.0), Some(100));
        assert_eq!(h.max(), Some(100));
        assert_eq!(h.mean(), 50.5);
        assert_eq!(Histogram::default().quantile(0.99), None);
    }

    #[test]
    fn merging_is_exact_and_order_free() {
        let mut a = Tally {
            runs: 1,
            acquisitions: 2,
            ..Tally::default()
        };
        a.latency.record(3);
        a.violations.insert(Property::NoHerd, 1);
        let mut b = Tally {
            runs: 1,
            acquisitions: 5,
            ..Tally::default()
        };
        b.latency.record(7);
        b.latency.record(3);
        b.wakeups_per_write.record(4);
        let mut ab = a.clone();
        ab.merge(&b);
        let mut ba = b.clone();
        ba.merge(&a);
        assert_eq!(ab, ba);
        assert_eq!(ab.acquisitions, 7);
        assert_eq!(ab.latency.len(), 3);
        assert_eq!(ab.latency.sum(), 13);
        assert_eq!(ab.violations.get(&Property::NoHerd), Some(&1));
        assert_eq!(ab.max_wakeups_per_write(), 4);
    }

    /// Results written before `wakeups_per_write` existed still read.
    #[test]
    fn a_result_without_wakeups_per_write_reads_as_none_counted() {
        let mut json = serde_json::to_value(Tally::default()).unwrap();
        json.as_object_mut().unwrap().remove("wakeups_per_write");
        let t: Tally = serde_json::from_value(json).unwrap();
        assert!(t.wakeups_per_write.is_empty());
    }
}
