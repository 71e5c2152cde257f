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
use zkcheck::scenario::{Aims, Target};
use zkrecipes::Recipe;
use zksim::FaultBudget;

/// The granted session timeout of every run here: 3.8's maximum (20
/// ticks), longer than `GUESSED_TIMEOUT`.
const TIMEOUT: u64 = 20;

/// One scenario for every variant (`scenarios/timed-lock.toml` is the
/// same for `my-zkcheck`): 3 clients, 2 rounds, holds long enough to be
/// cut by a fault; one connection drop, one silence (the client cut off
/// until the leader expires its session, S21a), one follower partition
/// (its clients dropped after `sync_limit` = 5 ticks, before the leader
/// expires them, S22a) and one pause of 6 ticks, the longest a pause may
/// be for any lock to keep `owner` when it adds to a silence
/// (`T − ⌈2T/3⌉`, S22b). The drop and the pause strike client 0: a
/// client that stays away longer than a guessed timeout after a drop is
/// found in tens of schedules instead of thousands. (The silence and the
/// partition strike anyone; the correct lock is also checked with every
/// fault unaimed.)
fn scenario<C: Recipe + Send + Sync + 'static>() -> Check<C> {
    Check::<C>::new(3)
        .rounds(2)
        .faults(FaultBudget {
            connection_drops: 1,
            expiries: 1,
            pauses: 1,
            partitions: 1,
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
            s.aims.connection_drops = Some(Target::Index(0));
            s.aims.pauses = Some(Target::Index(0));
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
    check.clone().pct(3, 500).assert_holds();
    check
        .configure(|s| s.aims = Aims::default())
        .random(1000)
        .assert_holds();
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
    // Unaimed: the silence or the drop may strike whoever holds.
    let c = scenario::<SuspendedHolderLock>()
        .hard([Property::MutualExclusion])
        .configure(|s| s.aims = Aims::default())
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
        .configure(|s| {
            // Granted 4 ticks, a pause and a partition must fit in them
            // for any lock (P + S ≤ T, S22a/S22b): 1 + 3.
            s.ensemble.session_timeout = GUESSED_TIMEOUT;
            s.ensemble.pause_ticks = 1;
            s.ensemble.sync_limit = 3;
        })
        .random(1500)
        .assert_holds();
}
