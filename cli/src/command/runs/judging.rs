//! The runner's one door to zkjudge: the judges' configuration from the
//! flags, and one history judged as `zkcheck judge FILE` judges it (the
//! same report, so a run re-judges offline to the same verdict).

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use zkjudge::report::{self, Report};
use zkjudge::run::Run;
pub use zkjudge::verdict::Config;
use zkjudge::verdict::Status;

use super::RunsArgs;

/// One history's verdicts.
#[derive(Clone, Debug)]
pub struct Judged {
    /// 0 ok, 1 violation, 3 incomplete.
    pub exit: u8,
    /// The judges that found a violation.
    pub violated: Vec<String>,
    /// The report as `zkcheck judge` prints it.
    pub text: String,
    /// The report as `zkcheck judge --json` prints it.
    pub json: serde_json::Value,
}

fn read(history: &Path) -> Result<Run, String> {
    let file =
        File::open(history).map_err(|e| format!("cannot read {}: {e}", history.display()))?;
    let records = zkjudge::history::read_numbered(BufReader::new(file))
        .map_err(|e| format!("{}: {e}", history.display()))?;
    Ok(Run::new(records))
}

pub fn judge_file(history: &Path, config: &Config) -> Result<Judged, String> {
    let run = read(history)?;
    let report: Report = report::judge(&run, config, &[]);
    Ok(Judged {
        exit: report.exit,
        violated: report
            .verdicts
            .iter()
            .filter(|v| v.status == Status::Violation)
            .map(|v| v.judge.to_string())
            .collect(),
        text: report.text(),
        json: serde_json::to_value(&report).unwrap_or_default(),
    })
}

/// The viewer page of a judged history.
pub fn page(history: &Path, config: &Config) -> Result<String, String> {
    let run = read(history)?;
    let report = report::judge(&run, config, &[]);
    Ok(zkjudge::view::page(&run, &report))
}

/// The judges' configuration from the flags, checked as `zkcheck judge`
/// checks its own (one function for both).
pub fn config(args: &RunsArgs) -> Result<Config, String> {
    crate::command::judge::config_of(
        [&args.lock, &args.resource, &args.leader, &args.queue],
        &args.marker,
        &args.shared_marker,
    )
}
