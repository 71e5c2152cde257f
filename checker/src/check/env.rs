//! Environment overrides for [`Check`](super::Check), read when a check
//! runs, so a failing or slow test can be re-run wider, narrower or on one
//! token without editing code (like loom's `LOOM_*` and proptest's
//! `PROPTEST_*`):
//!
//! | variable            | effect                                            |
//! |---------------------|---------------------------------------------------|
//! | `ZKCHECK_SEED`      | first seed of a random or PCT sweep               |
//! | `ZKCHECK_SCHEDULES` | how many seeded schedules a random or PCT sweep runs |
//! | `ZKCHECK_DEPTH`     | BFS/DFS depth bound                               |
//! | `ZKCHECK_JOBS`      | worker threads (never changes results)            |
//! | `ZKCHECK_REPLAY`    | a `replay:` token: replay it instead of exploring |
//!
//! A replayed check ([`Check::replay`](super::Check::replay)) ignores all
//! but `ZKCHECK_REPLAY`.

use crate::explore::Options;

/// The overrides found in the environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Overrides {
    pub seed: Option<u64>,
    pub schedules: Option<u64>,
    pub depth: Option<usize>,
    pub jobs: Option<usize>,
    pub replay: Option<String>,
}

impl Overrides {
    /// Read the `ZKCHECK_*` variables; a malformed value is an error naming it.
    pub fn from_env() -> Result<Self, String> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Read the overrides through `lookup` (tests pass a map).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        fn number<T: std::str::FromStr>(
            lookup: &impl Fn(&str) -> Option<String>,
            name: &str,
        ) -> Result<Option<T>, String> {
            match lookup(name) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| format!("{name}={v:?} is not a non-negative integer")),
            }
        }
        let jobs: Option<usize> = number(&lookup, "ZKCHECK_JOBS")?;
        if jobs == Some(0) {
            return Err("ZKCHECK_JOBS must be at least 1".into());
        }
        Ok(Overrides {
            seed: number(&lookup, "ZKCHECK_SEED")?,
            schedules: number(&lookup, "ZKCHECK_SCHEDULES")?,
            depth: number(&lookup, "ZKCHECK_DEPTH")?,
            jobs,
            replay: lookup("ZKCHECK_REPLAY").filter(|t| !t.trim().is_empty()),
        })
    }

    /// Apply the exploration overrides to `options`.
    pub fn apply(&self, options: &mut Options) {
        if let Some(seed) = self.seed {
            options.seed = seed;
        }
        if let Some(n) = self.schedules {
            options.schedules = n;
        }
        if let Some(d) = self.depth {
            options.depth = d;
        }
        if let Some(j) = self.jobs {
            options.jobs = j;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<Overrides, String> {
        Overrides::from_lookup(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn overrides_are_read_and_malformed_ones_named() {
        let o = read(&[("ZKCHECK_SEED", "7"), ("ZKCHECK_SCHEDULES", " 20 ")]).unwrap();
        assert_eq!((o.seed, o.schedules, o.depth), (Some(7), Some(20), None));
        let e = read(&[("ZKCHECK_SCHEDULES", "many")]).unwrap_err();
        assert!(e.contains("ZKCHECK_SCHEDULES"), "{e}");
        assert!(read(&[("ZKCHECK_JOBS", "0")]).is_err());
        assert_eq!(read(&[]).unwrap(), Overrides::default());
    }
}
