//! From `check`'s flags and the scenario's `[explore]` section to the
//! exploration's options and stop conditions, every number checked against
//! the same limits as the scenario file ([`zkcheck::limits`]).

use std::time::Duration;

use crate::shard::Shard;
use zkcheck::explore::Options;
use zkcheck::limits as l;
use zkcheck::scenario::{Scenario, Search};
use zkcheck::stop::{default_memory_budget, Stop};

use super::CheckArgs;

/// The options `check` explores with, or what is wrong with the flags.
pub fn options<C: zksim::Client>(
    args: &CheckArgs,
    scenario: &Scenario<C>,
) -> Result<Options, String> {
    let mut options = Options::from_scenario(scenario);
    options.jobs = match args.jobs {
        Some(j) => l::JOBS.check_usize(j)?,
        None => l::default_jobs(),
    };
    if let Some(s) = args.strategy {
        options.strategy = s.into();
    }
    if let Some(n) = args.schedules {
        options.schedules = l::SCHEDULES.named("--schedules").check(n)?;
    }
    if let Some(seed) = args.seed {
        options.seed = seed;
    }
    if args.no_cycles {
        options.cycles = false;
    }
    if args.no_symmetry {
        options.symmetry = false;
    }
    if args.no_por {
        options.por = false;
    }
    options.keep_scenario = args.keep_scenario;
    if let Some(n) = args.max_states {
        let n = l::MAX_STATES.named("--max-states").check(n)?;
        options.max_states = usize::try_from(n).unwrap_or(usize::MAX);
    }
    let seeded = matches!(options.strategy, Search::Random | Search::Pct);
    if seeded {
        let name = if args.seed.is_some() {
            "--seed"
        } else {
            "explore.seed"
        };
        l::check_seed_range(options.seed, options.schedules, name)?;
    }
    if let Some(d) = args.depth {
        match options.strategy {
            Search::Pct => options.pct_depth = l::PCT_DEPTH.named("--depth").check_usize(d)?,
            Search::Bfs | Search::Dfs => {
                options.depth = l::DEPTH.named("--depth").check_usize(d)?
            }
            Search::Random => {
                return Err(
                    "`--depth` does not apply to the random strategy (it sets PCT's bug depth \
                     or BFS/DFS's longest schedule); use --strategy pct, bfs or dfs, or \
                     explore.max_steps in the scenario to bound random runs"
                        .into(),
                )
            }
        }
    }
    Ok(options)
}

/// The shard of the sweep `check` runs (the whole sweep without
/// `--shard`), checked against the `options` it narrows.
pub fn shard(args: &CheckArgs, options: &Options) -> Result<Shard, String> {
    let Some(text) = &args.shard else {
        return Ok(Shard::WHOLE);
    };
    if !matches!(options.strategy, Search::Random | Search::Pct) {
        return Err(format!(
            "`--shard` splits the seeds of a random or PCT sweep; the {} strategy has no \
             seeds to split (use --strategy random or pct)",
            options.strategy.name()
        ));
    }
    let shard = Shard::parse(text)?;
    shard.fits(options.schedules)?;
    Ok(shard)
}

/// The stop conditions `check` runs under.
pub fn stop<C: zksim::Client>(args: &CheckArgs, scenario: &Scenario<C>) -> Result<Stop, String> {
    let time_limit = match &args.time_limit {
        Some(text) => Some(Duration::from_secs(
            l::TIME_LIMIT.check(parse_duration(text)?)?,
        )),
        None => None,
    };
    let memory = match args.memory_mb.or(scenario.explore.memory_mb) {
        Some(mb) => {
            let name = if args.memory_mb.is_some() {
                "--memory-mb"
            } else {
                "explore.memory_mb"
            };
            l::MEMORY_MB.named(name).check(mb)? << 20
        }
        None => default_memory_budget(),
    };
    Ok(Stop::new(time_limit, memory))
}

/// `90`, `90s`, `15m`, `2h`, `1d` → seconds.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let scale = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => 0,
    };
    let n: Option<u64> = digits.parse().ok();
    match (n, scale) {
        (Some(n), s) if s > 0 => n.checked_mul(s).ok_or_else(|| l::TIME_LIMIT.refusal(text)),
        _ => Err(format!(
            "`--time-limit` = {text:?} is not a duration: write seconds (`90`) or a number \
             with s, m, h or d (`15m`)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_every_unit() {
        assert_eq!(parse_duration("90"), Ok(90));
        assert_eq!(parse_duration("90s"), Ok(90));
        assert_eq!(parse_duration("15m"), Ok(900));
        assert_eq!(parse_duration("2h"), Ok(7200));
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("5 minutes").is_err());
        assert!(parse_duration("99999999999999999999d").is_err());
    }
}
