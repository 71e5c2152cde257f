//! proptest strategies for fault plans and seeds, so a user's own proptest
//! can drive a [`Check`](super::Check) (feature `proptest`, on by default).
//!
//! ```
//! use proptest::prelude::*;
//! use zkcheck::check::{arbitrary, Check};
//! use zkrecipes::lock::SequentialLock;
//! use zksim::FaultBudget;
//!
//! let most = FaultBudget { connection_drops: 2, ..FaultBudget::default() };
//! proptest!(ProptestConfig::with_cases(5), |(faults in arbitrary::fault_budgets(most), seed in arbitrary::seeds())| {
//!     Check::<SequentialLock>::new(2).faults(faults).seed(seed).random(1).assert_holds();
//! });
//! ```

use proptest::prelude::*;
use zksim::FaultBudget;

/// Fault budgets with each kind between none and `most`'s count.
pub fn fault_budgets(most: FaultBudget) -> impl Strategy<Value = FaultBudget> {
    (
        0..=most.connection_drops,
        0..=most.expiries,
        0..=most.pauses,
        0..=most.crashes,
        0..=most.partitions,
        0..=most.kills,
    )
        .prop_map(
            |(connection_drops, expiries, pauses, crashes, partitions, kills)| FaultBudget {
                connection_drops,
                expiries,
                pauses,
                crashes,
                partitions,
                kills,
            },
        )
}

/// Schedule seeds (any `u64`; a seed decides a whole run, faults included).
pub fn seeds() -> impl Strategy<Value = u64> {
    any::<u64>()
}
