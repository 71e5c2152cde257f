//! `zkcheck compare`: the naive lock against the predecessor-watch lock,
//! side by side; the flags checked against the limits, the table printed,
//! and with `--report DIR` the Markdown and charts written.

use crate::compare::{any_cut, compare_with, table, truncation_note, CompareConfig};
use zkcheck::limits as l;
use zkcheck::progress::{Display, Progress};
use zkcheck::scenario::Timing;
use zkcheck::verdict::VerdictKind;

use super::{bad_input, say, CompareArgs, Exit, FaultsPreset, Io};

/// `zkcheck compare`: print the table; with `--report DIR`, write the report too.
pub fn compare(args: &CompareArgs, io: &mut Io) -> Exit {
    let mut clients = args.clients.clone();
    clients.sort_unstable();
    clients.dedup();
    let checked = (|| -> Result<usize, String> {
        for &c in &clients {
            l::CLIENTS.named("--clients").check_usize(c)?;
        }
        l::COMPARE_CLIENT_COUNTS.check_usize(clients.len())?;
        l::COMPARE_SEEDS.check(args.seeds)?;
        l::check_seed_range(args.seed, args.seeds, "--seed")?;
        match args.jobs {
            Some(j) => l::JOBS.check_usize(j),
            None => Ok(l::default_jobs()),
        }
    })();
    let jobs = match checked {
        Ok(j) => j,
        Err(e) => return bad_input(io, e),
    };
    if let Some(dir) = &args.report {
        if let Err(e) = crate::files::check_dir(dir) {
            return bad_input(io, e);
        }
    }
    if let Err(e) = l::HOLD_TICKS.named("--hold-ticks").check(args.hold_ticks) {
        return bad_input(io, e);
    }
    let timing = match &args.timing {
        None => Timing::default(),
        Some(path) => match zkcheck::scenario::timing_from_file(path) {
            Ok(t) => t,
            Err(e) => return bad_input(io, e),
        },
    };
    let config = CompareConfig {
        clients,
        faults: args.faults == FaultsPreset::Default,
        seeds: args.seeds,
        first_seed: args.seed,
        timing,
        hold_ticks: args.hold_ticks,
        ..CompareConfig::default()
    };
    zkcheck::stop::install_signal_handler();
    let total = (config.recipes.len() * config.clients.len()) as u64 * config.seeds;
    let progress = Progress::counting(Some(total), "runs", Display::for_stderr(args.quiet));
    let run = || compare_with(&config, &progress);
    let result = match rayon::ThreadPoolBuilder::new().num_threads(jobs).build() {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    };
    progress.finish();
    let (rows, complete) = match result {
        Ok(r) => r,
        Err(e) => return bad_input(io, e),
    };
    // The same rule as every other verdict: the reasons for being
    // incomplete decide (a comparison has no hard checks to violate).
    let mut incomplete = Vec::new();
    if !complete {
        let why = progress
            .stop()
            .reason()
            .map_or_else(|| "stopped".to_string(), |r| r.to_string());
        incomplete.push(format!(
            "{why}; the table above counts only the runs made (see its runs column)"
        ));
    } else if any_cut(&rows) {
        // Every run was made, but some did not reach their end: the table
        // and the report say which, and the command does not say "ok".
        incomplete.push(truncation_note(&rows));
    }
    if !complete {
        say!(io, "{}", table(&rows));
        say!(io, "INCOMPLETE: {}", incomplete.join("; "));
        return VerdictKind::judge(false, &incomplete).into();
    }
    let _ = std::io::Write::write_all(&mut io.out, table(&rows).as_bytes());
    if let Some(dir) = &args.report {
        match crate::report::write_compare(dir, &config, &rows) {
            Ok(paths) => {
                for p in paths {
                    say!(io, "wrote {}", p.display());
                }
            }
            Err(e) => return bad_input(io, e),
        }
    }
    for reason in &incomplete {
        say!(io, "{reason}");
    }
    VerdictKind::judge(false, &incomplete).into()
}
