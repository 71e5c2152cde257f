//! Every registered lock recipe can be found by name, is built from its
//! params, and starts by ensuring the lock root.

use crate::common::*;
use zkrecipes::registry::find;
use zkrecipes::testkit::Harness;
use zkrecipes::{Family, RECIPES};
use zksim::Client;

const LOCKS: &[&str] = &[
    "naive",
    "sequential",
    "rwlock",
    "sequential-no-recheck",
    "sequential-ignore-session",
    "sequential-watch-lowest",
    "sequential-blind-retry",
    "sequential-string-sort",
    "naive-no-rewatch",
    "sequential-unwrap",
    "sequential-adopt-any",
    "sequential-forget-release",
    "sequential-poll",
    "sequential-poll-defer",
];

#[test]
fn names_are_unique() {
    let mut names: Vec<&str> = RECIPES.iter().map(|r| r.name).collect();
    names.sort();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len());
}

#[test]
fn every_lock_recipe_is_registered_and_starts_with_the_root() {
    for name in LOCKS {
        let info = find(name).unwrap_or_else(|| panic!("{name} not registered"));
        let want = if *name == "rwlock" {
            Family::RwLock
        } else {
            Family::Lock
        };
        assert_eq!(info.family, want, "{name}");
        let mut h = Harness::new((info.build)(&params(0, 1)), ME);
        let out = h.start();
        assert_eq!(out.sent, [(0, create_persistent("/lock"))], "{name}");
        assert!(!h.client.is_done(), "{name}");
    }
}
