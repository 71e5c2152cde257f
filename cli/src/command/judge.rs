//! `zkcheck judge FILE`: the judges of zkjudge over a history recorded by
//! `zkcheck serve --history FILE` (docs/JUDGES.md).

use std::io::Write as _;

use zkjudge::contender::{Kind, Rules};
use zkjudge::judges::NAMES;
use zkjudge::report;
use zkjudge::run::Run;
use zkjudge::verdict::Config;

use super::{bad_input, say, Exit, Io, JudgeArgs};

pub fn judge(args: &JudgeArgs, io: &mut Io) -> Exit {
    let config = match config(args) {
        Ok(c) => c,
        Err(e) => return bad_input(io, e),
    };
    for name in &args.only {
        if !NAMES.contains(&name.as_str()) {
            return bad_input(
                io,
                format!(
                    "--only: no judge `{name}` (the judges: {})",
                    NAMES.join(", ")
                ),
            );
        }
    }
    let file = match std::fs::File::open(&args.history) {
        Ok(f) => f,
        Err(e) => return bad_input(io, format!("cannot read {}: {e}", args.history.display())),
    };
    let records = match zkjudge::history::read_numbered(std::io::BufReader::new(file)) {
        Ok(r) => r,
        Err(e) => return bad_input(io, format!("{}: {e}", args.history.display())),
    };
    let run = Run::new(records);
    let report = report::judge(&run, &config, &args.only);
    if let Some(path) = &args.html {
        let page = zkjudge::view::page(&run, &report);
        if let Err(e) = std::fs::write(path, page) {
            return bad_input(io, format!("cannot write {}: {e}", path.display()));
        }
        let _ = writeln!(io.err, "wrote {}", path.display());
    }
    if args.json {
        say!(io, "{}", report.json());
    } else {
        let _ = io.out.write_all(report.text().as_bytes());
    }
    match report.exit {
        0 => Exit::Ok,
        1 => Exit::Violation,
        _ => Exit::Incomplete,
    }
}

/// A znode path given on the command line: absolute, no trailing slash,
/// no empty component.
fn znode(flag: &str, path: &Option<String>) -> Result<Option<String>, String> {
    let Some(p) = path else { return Ok(None) };
    let fine = p == "/"
        || (p.starts_with('/') && !p.ends_with('/') && !p[1..].split('/').any(str::is_empty));
    if fine {
        Ok(Some(p.clone()))
    } else {
        Err(format!(
            "{flag} {p:?}: a znode path is absolute, like /app/lock, with no trailing or double slash"
        ))
    }
}

fn config(args: &JudgeArgs) -> Result<Config, String> {
    config_of(
        [&args.lock, &args.resource, &args.leader, &args.queue],
        &args.marker,
        &args.shared_marker,
    )
}

/// The judges' configuration from the flags `--lock`, `--resource`,
/// `--leader`, `--queue` (in that order), `--marker` and `--shared-marker`,
/// checked once for `zkcheck judge` and `zkcheck serve --runs` alike.
pub(crate) fn config_of(
    [lock, resource, leader, queue]: [&Option<String>; 4],
    marker: &[String],
    shared_marker: &[String],
) -> Result<Config, String> {
    let mut rules = Rules::default();
    for (markers, kind) in [(marker, Kind::Exclusive), (shared_marker, Kind::Shared)] {
        for m in markers {
            if m.is_empty() || m.contains('/') {
                return Err(format!(
                    "marker {m:?}: a contender name's part before its sequence number, like lock-"
                ));
            }
            rules = rules.with(m, kind);
        }
    }
    Ok(Config {
        lock: znode("--lock", lock)?,
        resource: znode("--resource", resource)?,
        leader: znode("--leader", leader)?,
        queue: znode("--queue", queue)?,
        rules,
    })
}
