//! `check --shard k/n --json` and `merge`: n shards merged give exactly the
//! unsharded run — the same verdict, the same smallest failing seed and
//! replay token, the same summed figures — for a correct recipe (ok) and a
//! broken one (violation), with random and PCT; and a merge refuses what
//! cannot be one run, and never says "ok" of a run it does not fully have.
//!
//! Shards run in-process through the library here; the command (flags,
//! JSON on stdout, `merge` over files and stdin, the built binary) is
//! tested in `shards_cli.rs`.

use crate::shard_kit::*;
use zkcheck::progress::Progress;
use zkcheck::scenario::Search;
use zkcheck::stop::Stop;
use zkcheck_cli::merge::{merge, Input};
use zkcheck_cli::shard::Shard;
use zkcheck_cli::summary::{SeedRange, Summary, VerdictKind};

#[test]
fn merged_shards_of_a_correct_recipe_equal_one_run() {
    for strategy in [Search::Random, Search::Pct] {
        let (scenario, options) = whole(CORRECT, strategy, 7, 90);
        let one = run_shard(&scenario, &options, Shard::WHOLE, &Progress::hidden());
        assert_eq!(one.verdict, VerdictKind::Ok, "{:?}", one.incomplete);
        assert_eq!(one.schedules, 90);
        assert!(one.figures.acquisitions > 0);
        for n in [1, 2, 7] {
            let merged = merge(&shards(&scenario, &options, n)).unwrap();
            assert_same_run(&merged, &one);
            assert_eq!(merged.parts.len() as u64, n);
        }
    }
}

#[test]
fn merged_shards_of_a_broken_recipe_report_the_smallest_failing_seed_of_one_run() {
    for strategy in [Search::Random, Search::Pct] {
        let (scenario, options) = whole(BROKEN, strategy, 10, 100);
        let one = run_shard(&scenario, &options, Shard::WHOLE, &Progress::hidden());
        assert_eq!(one.verdict, VerdictKind::Violation);
        let first = one.counterexample.as_ref().and_then(|c| c.seed).unwrap();
        assert!(one.counterexample.as_ref().unwrap().token.is_some());
        for n in [5, 10] {
            let inputs = shards(&scenario, &options, n);
            let failing: Vec<u64> = inputs
                .iter()
                .filter_map(|i| i.summary.counterexample.as_ref()?.seed)
                .collect();
            // Meaningful only if some later shard fails too and the
            // smallest failure is not simply the first shard's.
            assert!(
                failing.len() >= 2,
                "{strategy:?} n={n}: failing seeds {failing:?}"
            );
            assert_eq!(failing.iter().min(), Some(&first));
            if strategy == Search::Random {
                // Seeds 10.. first fail at 32: not in the first shard.
                assert_eq!(first, 32);
                assert_eq!(inputs[0].summary.verdict, VerdictKind::Ok);
            }
            let merged = merge(&inputs).unwrap();
            assert_same_run(&merged, &one);
            // The shards after the failing one ran, but are not counted.
            let ran: u64 = inputs.iter().map(|i| i.summary.schedules).sum();
            assert!(ran > merged.schedules);
            // Given in any order, the merge is the same.
            let mut reversed = inputs.clone();
            reversed.reverse();
            assert_eq!(merge(&reversed).unwrap().counterexample, one.counterexample);
        }
    }
}

#[test]
fn merges_compose() {
    let (scenario, options) = whole(BROKEN, Search::Random, 10, 100);
    let inputs = shards(&scenario, &options, 4);
    let all = merge(&inputs).unwrap();
    let low = merge(&[inputs[0].clone(), inputs[2].clone()]).unwrap();
    let high = merge(&[inputs[3].clone(), inputs[1].clone()]).unwrap();
    // Each half alone misses the other's seeds.
    assert_ne!(low.verdict, VerdictKind::Ok);
    let again = merge(&[
        Input {
            origin: "low.json".into(),
            summary: low,
        },
        Input {
            origin: "high.json".into(),
            summary: high,
        },
    ])
    .unwrap();
    assert_eq!(again.counterexample, all.counterexample);
    assert_eq!(again.figures, all.figures);
    assert_eq!((again.schedules, again.events), (all.schedules, all.events));
    assert_eq!(again.verdict, all.verdict);
    // The result survives its own JSON.
    let text = again.to_json();
    let back: Summary = serde_json::from_str(&text).unwrap();
    assert_eq!(back, again);
}

#[test]
fn a_missing_shard_makes_the_merge_incomplete_not_ok() {
    let (scenario, options) = whole(CORRECT, Search::Random, 0, 40);
    let mut inputs = shards(&scenario, &options, 4);
    let gone = inputs.remove(2);
    let merged = merge(&inputs).unwrap();
    assert_eq!(merged.verdict, VerdictKind::Incomplete);
    let seeds = merged.seeds.unwrap();
    assert_eq!(seeds.missing, vec![SeedRange { start: 20, end: 30 }]);
    assert!(
        merged
            .incomplete
            .iter()
            .any(|r| r.contains("seeds 20..30") && r.contains("shard 2/4")),
        "{:?}",
        merged.incomplete
    );
    assert_eq!(gone.summary.verdict, VerdictKind::Ok);
}

#[test]
fn a_shard_stopped_early_makes_the_merge_incomplete_and_a_violation_after_it_is_still_reported() {
    let (scenario, options) = whole(CORRECT, Search::Random, 0, 40);
    let mut inputs = shards(&scenario, &options, 4);
    let stop = Stop::default();
    stop.request(); // as Ctrl-C before the first seed
    let stopped = run_shard(
        &scenario,
        &options,
        Shard { index: 1, count: 4 },
        &Progress::hidden().with_stop(stop),
    );
    assert_eq!(stopped.verdict, VerdictKind::Incomplete);
    inputs[1].summary = stopped;
    let merged = merge(&inputs).unwrap();
    assert_eq!(merged.verdict, VerdictKind::Incomplete);
    assert!(merged
        .incomplete
        .iter()
        .any(|r| r.contains("shard 1/4") && r.contains("stopped early")));
    assert_eq!(
        merged.seeds.unwrap().missing,
        vec![SeedRange { start: 10, end: 20 }]
    );

    // A violation found past seeds nobody ran is still a violation, with a warning.
    let (scenario, options) = whole(BROKEN, Search::Random, 10, 100);
    let mut inputs = shards(&scenario, &options, 5);
    inputs.remove(0);
    let merged = merge(&inputs).unwrap();
    assert_eq!(merged.verdict, VerdictKind::Violation);
    assert!(merged
        .incomplete
        .iter()
        .any(|r| r.contains("smaller failing seed may exist")));
}

#[test]
fn merges_refuse_what_is_not_one_run() {
    let (scenario, options) = whole(CORRECT, Search::Random, 0, 40);
    let inputs = shards(&scenario, &options, 4);

    // The same shard twice.
    let mut twice = inputs.clone();
    twice.push(Input {
        origin: "again.json".into(),
        ..inputs[3].clone()
    });
    let e = merge(&twice).unwrap_err();
    assert!(e.contains("overlap") && e.contains("again.json"), "{e}");

    // Shards of two different splits overlap too.
    let other = run_shard(
        &scenario,
        &options,
        Shard { index: 0, count: 2 },
        &Progress::hidden(),
    );
    let e = merge(&[
        inputs[0].clone(),
        Input {
            origin: "half.json".into(),
            summary: other,
        },
    ])
    .unwrap_err();
    assert!(e.contains("overlap") && e.contains("half.json"), "{e}");

    // Another scenario.
    let (broken, broken_options) = whole(BROKEN, Search::Random, 0, 40);
    let foreign = run_shard(
        &broken,
        &broken_options,
        Shard { index: 1, count: 4 },
        &Progress::hidden(),
    );
    let e = merge(&[
        inputs[0].clone(),
        Input {
            origin: "foreign.json".into(),
            summary: foreign,
        },
    ])
    .unwrap_err();
    assert!(
        e.contains("foreign.json") && e.contains("different scenarios"),
        "{e}"
    );

    // Other options (another sweep; another strategy).
    let (_, mut wider) = whole(CORRECT, Search::Random, 0, 80);
    wider.jobs = 1;
    let e = merge(&[
        inputs[0].clone(),
        Input {
            origin: "wider.json".into(),
            summary: run_shard(
                &scenario,
                &wider,
                Shard { index: 3, count: 4 },
                &Progress::hidden(),
            ),
        },
    ])
    .unwrap_err();
    assert!(
        e.contains("wider.json") && e.contains("schedules 80"),
        "{e}"
    );
    let (_, pct) = whole(CORRECT, Search::Pct, 0, 40);
    let e = merge(&[
        inputs[0].clone(),
        Input {
            origin: "pct.json".into(),
            summary: run_shard(
                &scenario,
                &pct,
                Shard { index: 1, count: 4 },
                &Progress::hidden(),
            ),
        },
    ])
    .unwrap_err();
    assert!(e.contains("pct.json") && e.contains("strategy pct"), "{e}");

    // A result whose seeds were edited.
    let mut edited = inputs[1].clone();
    edited.summary.seeds.as_mut().unwrap().assigned[0].end += 1;
    let e = merge(&[inputs[0].clone(), edited]).unwrap_err();
    assert!(e.contains("shard-1.json") && e.contains("edited"), "{e}");

    // Nothing.
    assert!(merge(&[]).is_err());

    // A run of --jobs 1 merges with shards of --jobs 2: results never depend on it.
    let (_, mut one_job) = whole(CORRECT, Search::Random, 0, 40);
    one_job.jobs = 1;
    let mut mixed = inputs.clone();
    mixed[2].summary = run_shard(
        &scenario,
        &one_job,
        Shard { index: 2, count: 4 },
        &Progress::hidden(),
    );
    assert_eq!(merge(&mixed).unwrap().verdict, VerdictKind::Ok);
}

mod edited {
    use super::*;
    use proptest::prelude::*;
    use std::sync::OnceLock;

    /// Two shards' results as JSON values, run once.
    fn results() -> &'static (serde_json::Value, serde_json::Value) {
        static R: OnceLock<(serde_json::Value, serde_json::Value)> = OnceLock::new();
        R.get_or_init(|| {
            let (scenario, options) = whole(BROKEN, Search::Random, 30, 10);
            let mut v = shards(&scenario, &options, 2)
                .into_iter()
                .map(|i| serde_json::to_value(&i.summary).unwrap());
            (v.next().unwrap(), v.next().unwrap())
        })
    }

    /// The JSON pointer of every number in `v`.
    fn numbers(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Number(_) => out.push(at),
            serde_json::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    numbers(x, format!("{at}/{i}"), out);
                }
            }
            serde_json::Value::Object(o) => {
                for (k, x) in o {
                    numbers(
                        x,
                        format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                        out,
                    );
                }
            }
            _ => {}
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Whatever number an edit puts anywhere in a result, figures
        /// included, `merge` answers (a merge or a refusal) and never panics.
        #[test]
        fn merge_never_panics_on_edited_numbers(which in any::<prop::sample::Index>(), value in prop_oneof![Just(0u64), Just(u64::MAX), Just(1u64), any::<u64>()], second in any::<bool>()) {
            let (mut a, mut b) = results().clone();
            let target = if second { &mut b } else { &mut a };
            let mut slots = Vec::new();
            numbers(target, String::new(), &mut slots);
            // Figures included: their sums saturate (`Tally::merge`).
            assert!(slots.iter().any(|p| p.contains("/figures")));
            let slot = &slots[which.index(slots.len())];
            *target.pointer_mut(slot).unwrap() = serde_json::Value::from(value);
            let read = |v: serde_json::Value| serde_json::from_value::<Summary>(v);
            if let (Ok(a), Ok(b)) = (read(a), read(b)) {
                if let Ok(m) = merge(&[
                    Input { origin: "a.json".into(), summary: a },
                    Input { origin: "b.json".into(), summary: b },
                ]) {
                    // The figures `check` and `merge` print from the sums.
                    let f = &m.figures;
                    let _ = (f.mean_latency(), f.p99_latency(), f.mean_wakeups_per_release());
                    let _ = (f.max_wasted_per_release(), f.wakeups_per_acquisition());
                }
            }
        }
    }
}
