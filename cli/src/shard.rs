//! Shards: one seeded sweep (random or PCT) split into `n` disjoint,
//! contiguous ranges of seeds, so that `n` machines can share it and
//! `zkcheck merge` can put their results back together as if one machine
//! had run it.
//!
//! Shard `k/n` is numbered from 0 (`0/n` … `n-1/n`), like a Kubernetes
//! Indexed Job's `JOB_COMPLETION_INDEX` and a Slurm array started at 0
//! (`--array=0-(n-1)`, `SLURM_ARRAY_TASK_ID`). Of the sweep's seeds
//! `seed .. seed + schedules`, shard `k` runs
//! `seed + ⌊k·schedules/n⌋ .. seed + ⌊(k+1)·schedules/n⌋`: the ranges are
//! disjoint, in order, their union is the whole sweep, and their sizes
//! differ by at most one.
//!
//! Contiguous ranges (not every n-th seed) are what make a merge equal to
//! one run: the unsharded sweep stops at its smallest failing seed `F` and
//! counts every seed up to `F`; with contiguous shards those seeds are the
//! shards wholly below `F` plus the failing shard's prefix, each counted
//! exactly once, and the shards above `F` are simply left out. Every seed
//! is run with the same chooser as in the unsharded sweep, so a seed's run
//! (and its failure, shrunk counterexample and token) does not depend on
//! which shard ran it.

use std::fmt;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use zkcheck::explore::Options;
use zkcheck::limits;

/// Shard `index` of `count` (0 ≤ index < count).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The whole sweep as one shard.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Read `k/n` (the `--shard` flag); every error names the flag.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let not_k_n = || {
            format!(
                "`--shard` = {text:?} is not k/n: write the shard's index k (from 0) and the \
                 number of shards n, e.g. `--shard 0/4` … `--shard 3/4`"
            )
        };
        let (k, n) = text.trim().split_once('/').ok_or_else(not_k_n)?;
        let number = |s: &str| -> Option<u64> {
            let s = s.trim();
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse().ok())
                .flatten()
        };
        let (Some(index), Some(count)) = (number(k), number(n)) else {
            // Digits that do not fit a u64 are out of range, anything else is not a number.
            let digits =
                |s: &str| !s.trim().is_empty() && s.trim().bytes().all(|b| b.is_ascii_digit());
            if digits(k) && digits(n) {
                return Err(limits::SHARDS.refusal(text.trim()));
            }
            return Err(not_k_n());
        };
        limits::SHARDS.check(count)?;
        if index >= count {
            return Err(format!(
                "`--shard` = {index}/{count}: the shard index must be below the number of \
                 shards (shards are numbered from 0: 0/{count} … {}/{count})",
                count - 1
            ));
        }
        Ok(Shard { index, count })
    }

    /// This shard's seeds of the sweep `seed .. seed + schedules`.
    pub fn seeds(&self, seed: u64, schedules: u64) -> Range<u64> {
        let at = |k: u64| -> u64 {
            // ⌊k·schedules/n⌋ without overflow (schedules ≤ 10^12, n ≤ 10^6).
            (u128::from(k) * u128::from(schedules) / u128::from(self.count)) as u64
        };
        seed + at(self.index)..seed + at(self.index + 1)
    }

    /// `Err` unless every shard of `count` gets at least one of `schedules` seeds.
    pub fn fits(&self, schedules: u64) -> Result<(), String> {
        if self.count > schedules {
            return Err(format!(
                "`--shard` = {self}: {} shards of {schedules} schedules would leave some shard \
                 without a seed; use at most {schedules} shards or raise --schedules",
                self.count
            ));
        }
        Ok(())
    }

    pub fn is_whole(&self) -> bool {
        self.count == 1
    }

    /// `whole` (a random or PCT sweep's options) narrowed to this shard's seeds.
    pub fn narrow(&self, whole: &Options) -> Options {
        let seeds = self.seeds(whole.seed, whole.schedules);
        Options {
            seed: seeds.start,
            schedules: seeds.end - seeds.start,
            ..*whole
        }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_tile_the_sweep_in_order() {
        for (seed, schedules, n) in [(0, 10, 3), (7, 1000, 7), (5, 5, 5), (u64::MAX - 10, 10, 4)] {
            let mut next = seed;
            for index in 0..n {
                let r = Shard { index, count: n }.seeds(seed, schedules);
                assert_eq!(
                    r.start, next,
                    "shard {index}/{n} starts where the last ended"
                );
                assert!(!r.is_empty());
                assert!(r.end - r.start <= schedules / n + 1);
                next = r.end;
            }
            assert_eq!(next, seed + schedules);
        }
        assert_eq!(Shard::WHOLE.seeds(3, 9), 3..12);
    }

    #[test]
    fn bad_shards_are_refused_naming_the_flag() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(Shard::parse(" 0/1 "), Ok(Shard::WHOLE));
        for bad in [
            "3/", "/3", "a/b", "1-4", "", "-1/4", "1/-4", "1/4/5", "+1/4", "1.0/4",
        ] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(e.contains("`--shard`"), "{bad}: {e}");
        }
        assert!(Shard::parse("4/4")
            .unwrap_err()
            .contains("below the number of shards"));
        assert!(Shard::parse("0/0").unwrap_err().contains("between 1 and"));
        assert!(Shard::parse("0/99999999999999999999")
            .unwrap_err()
            .contains("`--shard`"));
        assert!(Shard { index: 0, count: 5 }.fits(4).is_err());
        assert!(Shard { index: 0, count: 4 }.fits(4).is_ok());
    }
}
