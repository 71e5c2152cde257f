//! The recipe's session timeout, both ways: `TimedLock` times its LOST and
//! its restart from `RecipeParams::session_timeout` and holds under
//! connection drops, silences that expire the session and short pauses;
//! `SuspendedHolderLock`, which goes on holding until the timeout counted
//! from the moment it *noticed* the disconnect, is caught holding a lock
//! whose session the leader has expired; `GuessedTimeoutLock`, the correct
//! recipe with the timeout hard-coded instead of read, is caught when the
//! ensemble grants a longer one.

use own_recipe::{GuessedTimeoutLock, SuspendedHolderLock, TimedLock, GUESSED_TIMEOUT};
use zkcheck::check::Check;
use zkcheck::monitor::Property;
use zkrecipes::Recipe;
use zksim::FaultBudget;

/// The granted session timeout of every run here: 3.8's maximum (20
/// ticks), longer than `GUESSED_TIMEOUT`.
const TIMEOUT: u64 = 20;

/// One scenario for every variant: 3 clients, 2 rounds, holds long enough
/// to be cut by a fault; one connection drop, one silence (the client cut
/// off until the leader expires its session, S21a) and one pause of 6
/// ticks, the longest a pause may be for any lock to keep `owner` when it
/// adds to a silence (`T − ⌈2T/3⌉`, S22b).
fn scenario<C: Recipe + Send + Sync + 'static>() -> Check<C> {
    Check::<C>::new(3)
        .rounds(2)
        .faults(FaultBudget {
            connection_drops: 1,
            expiries: 1,
            pauses: 1,
            ..FaultBudget::default()
        })
        .hard([
            Property::Owner,
            Property::MutualExclusion,
            Property::FencedExclusion,
            Property::Liveness,
            Property::NoLeaks,
        ])
        .configure(|s| {
            s.ensemble.session_timeout = TIMEOUT;
            s.ensemble.pause_ticks = 6;
            s.workload.hold_ticks = 8;
        })
}

#[test]
fn the_recipe_reads_the_negotiated_timeout_from_its_params() {
    let check = scenario::<TimedLock>();
    let params = check.scenario().params(0);
    assert_eq!(params.session_timeout, TIMEOUT);
    assert_eq!(TimedLock::new(&params).timeout(), TIMEOUT);
    assert_eq!(GuessedTimeoutLock::new(&params).timeout(), GUESSED_TIMEOUT);
    // Asked for more than a 3.8 server grants, the recipe gets the grant.
    let capped = scenario::<TimedLock>().configure(|s| s.ensemble.session_timeout = 60);
    assert_eq!(TimedLock::new(&capped.scenario().params(1)).timeout(), 20);
}

#[test]
fn the_timed_lock_holds_under_drops_silences_and_short_pauses() {
    let check = scenario::<TimedLock>();
    let r = check.clone().random(1500).assert_holds();
    assert!(r.figures.accepted_writes > 0, "{:?}", r.figures);
    check.pct(3, 500).assert_holds();
}

#[test]
fn holding_until_the_timeout_after_the_notice_is_caught() {
    let c = scenario::<SuspendedHolderLock>()
        .random(1500)
        .assert_fails();
    assert_eq!(c.property(), Property::Owner, "{c}");
    println!("{c}");
    // The trace shows the mistake: it learned Disconnected, wrote on, and
    // still held when the leader expired its session.
    assert!(c.trace.contains("Disconnected"), "{}", c.trace);
    let token = c.token.clone().expect("a token");
    assert_eq!(
        Check::<SuspendedHolderLock>::replay(&token)
            .assert_fails()
            .violation,
        c.violation
    );
}

#[test]
fn the_same_race_breaks_mutual_exclusion_when_another_client_is_there() {
    let c = scenario::<SuspendedHolderLock>()
        .hard([Property::MutualExclusion])
        .random(1500)
        .assert_fails();
    assert_eq!(c.property(), Property::MutualExclusion, "{c}");
}

#[test]
fn a_hard_coded_timeout_shorter_than_the_granted_one_is_caught() {
    let c = scenario::<GuessedTimeoutLock>().random(1500).assert_fails();
    assert_eq!(c.property(), Property::Owner, "{c}");
    println!("{c}");
    // The same recipe reading its timeout holds there (the test above);
    // granted the timeout it guessed, the guess is right and it holds too.
    scenario::<GuessedTimeoutLock>()
        .configure(|s| s.ensemble.session_timeout = GUESSED_TIMEOUT)
        .configure(|s| s.ensemble.pause_ticks = 1)
        .random(1500)
        .assert_holds();
}
