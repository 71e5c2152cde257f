//! Replay tokens: every token decodes to what was encoded, and any
//! single-byte change is refused with an error (never a panic, never a
//! different run).

use proptest::prelude::*;
use zkcheck::monitor::Property;
use zkcheck::scenario::{applies_to, Scenario, Search, ALL_PROPERTIES};
use zkcheck::testkit::judged;
use zkcheck::token::Token;

fn scenario() -> impl Strategy<Value = Scenario> {
    let recipes = zkrecipes::RECIPES.len();
    (
        (
            0..recipes,
            1usize..100,
            "[a-z][a-z0-9-]{0,12}",
            "/[a-z]{1,8}",
        ),
        (1u32..10, 0u64..20, 0u64..20),
        (1usize..6, 1u64..50, 0u64..50, 1u64..1000),
        (0u32..4, 0u32..4, 0u32..4, 0u32..4, 0u32..4),
        // Per property: 0 not judged, 1 hard, 2 report (valid scenarios
        // name each check once, and only checks of the recipe's family).
        proptest::collection::vec(0u8..3, ALL_PROPERTIES.len()),
        (
            0usize..4,
            1u64..10_000,
            0..u64::MAX - 10_000,
            1usize..100_000,
            1usize..10,
            1usize..500,
        ),
    )
        .prop_map(|(basic, work, ens, faults, checks, explore)| {
            let (recipe, clients, name, root) = basic;
            let mut s = Scenario::lock(zkrecipes::RECIPES[recipe].name, clients);
            s.name = name;
            s.root = root;
            (
                s.workload.rounds,
                s.workload.hold_ticks,
                s.workload.think_ticks,
            ) = work;
            s.ensemble.servers = ens.0;
            s.ensemble.session_timeout = ens.1;
            s.ensemble.pause_ticks = ens.2;
            s.ensemble.max_time = ens.3;
            s.faults.connection_drops = faults.0;
            s.faults.expiries = faults.1;
            s.faults.pauses = faults.2;
            s.faults.crashes = faults.3;
            // A partition needs a follower (validation refuses it otherwise).
            s.faults.partitions = if s.ensemble.servers > 1 { faults.4 } else { 0 };
            s.faults.kills = faults.0 % 3;
            s.ensemble.sync_limit = 1 + ens.1 % 30;
            let family = s.family();
            let fits: Vec<_> = ALL_PROPERTIES
                .iter()
                .zip(&checks)
                .filter(|(&p, _)| applies_to(p, family))
                .collect();
            s.hard = fits
                .iter()
                .filter(|(_, &c)| c == 1)
                .map(|(&p, _)| p)
                .collect();
            s.report = fits
                .iter()
                .filter(|(_, &c)| c == 2)
                .map(|(&p, _)| p)
                .collect();
            // A check that cannot fail for this recipe and client count is
            // refused (`fifo` on `naive`, `mutex` with one client): measure
            // it instead; `leaks` can fail on every recipe.
            let cast = judged::Cast::of(&s);
            let (can, cannot): (Vec<_>, Vec<_>) = s
                .hard
                .iter()
                .partition(|&&p| judged::cannot_fail(p, &cast).is_none());
            s.hard = can;
            s.report.extend(cannot);
            if s.hard.is_empty() {
                s.hard.push(Property::NoLeaks);
                s.report.retain(|&p| p != Property::NoLeaks);
            }
            s.explore.strategy = [Search::Random, Search::Pct, Search::Bfs, Search::Dfs][explore.0];
            s.explore.schedules = explore.1;
            s.explore.seed = explore.2;
            s.explore.max_steps = explore.3;
            s.explore.pct_depth = explore.4;
            s.explore.depth = explore.5;
            // Both ways for the switches (a token carries `por` only when off).
            s.explore.symmetry = explore.1 % 2 == 0;
            s.explore.por = explore.2 % 2 == 0;
            s
        })
}

proptest! {
    #[test]
    fn token_round_trips(s in scenario(), indices in proptest::collection::vec(any::<u32>(), 0..300)) {
        let token = Token::new(s, indices);
        let text = token.encode();
        prop_assert!(text.starts_with("zk1:"));
        prop_assert!(text.bytes().all(|b| b.is_ascii_graphic()), "{}", text);
        prop_assert_eq!(Token::decode(&text), Ok(token));
    }

    #[test]
    fn any_single_byte_change_is_refused(
        s in scenario(),
        indices in proptest::collection::vec(0u32..40, 0..50),
        pos in any::<prop::sample::Index>(),
        byte in 0x20u8..0x7f,
    ) {
        let text = Token::new(s, indices).encode();
        let mut bytes = text.clone().into_bytes();
        let i = pos.index(bytes.len());
        prop_assume!(bytes[i] != byte);
        bytes[i] = byte;
        let changed = String::from_utf8(bytes).unwrap();
        let result = Token::decode(&changed);
        prop_assert!(result.is_err(), "{} decoded", changed);
    }

    #[test]
    fn cut_tokens_are_refused(s in scenario(), indices in proptest::collection::vec(0u32..40, 0..50), cut in any::<prop::sample::Index>()) {
        let text = Token::new(s, indices).encode();
        let end = cut.index(text.len());
        prop_assert!(Token::decode(&text[..end]).is_err());
    }
}

/// The case the random test once found: the checksum's hex digits read the
/// same in either case, so a token with one digit uppercased was accepted
/// as the same token. Both ways: the token as written decodes, the same
/// text with a checksum letter uppercased is refused at the checksum.
#[test]
fn an_uppercased_checksum_digit_is_refused() {
    let (text, at) = (0u32..64)
        .find_map(|n| {
            let text = Token::new(Scenario::lock("sequential", 2), vec![n]).encode();
            let sum_at = text.rfind(':')? + 1;
            let letter = text[sum_at..].find(|c: char| c.is_ascii_lowercase())?;
            Some((text, sum_at + letter))
        })
        .expect("some checksum among 64 tokens has a letter");
    assert!(Token::decode(&text).is_ok(), "{text}");
    let mut upper = text.clone().into_bytes();
    upper[at] = upper[at].to_ascii_uppercase();
    let upper = String::from_utf8(upper).unwrap();
    let err = Token::decode(&upper).expect_err("uppercased checksum digit");
    assert!(err.to_string().contains("lowercase hex"), "{err}");
}
