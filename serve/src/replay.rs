//! `--replay-input FILE`: the engine re-run from a recorded history's
//! inputs, without sockets or clocks. The engine is deterministic, so it
//! must make the very records that were written after each input, and
//! reach the recorded trace hash ([`zkjudge::history::Record::End`]).
//! What differs first is reported: a tampered input, a history from
//! another build whose behaviour changed, or a non-determinism bug.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::process::ExitCode;

use zkjudge::history::{self, Record};

use crate::engine::history::input_of;
use crate::engine::{limits_of_meta, Engine};

/// How a replay ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every record the same, and the trace hash (when the history has an
    /// `End`: `ended`).
    Same { records: usize, ended: bool },
    /// The first record that differs: its index among the history's
    /// records (0: `meta`), what was recorded and what the replay made
    /// (`None`: one side ran out first).
    Different {
        index: usize,
        recorded: Option<Box<Record>>,
        replayed: Option<Box<Record>>,
    },
}

/// Replay `records` (a whole history, `meta` first). `Err` names a record
/// that cannot be replayed (bad meta, bad input bytes) by its index.
pub fn replay(records: &[Record]) -> Result<Outcome, (usize, String)> {
    let Some(meta) = records.first() else {
        return Err((0, "empty history".into()));
    };
    let limits = limits_of_meta(meta).map_err(|e| (0, e))?;
    let mut engine = Engine::new(limits);
    engine.record_history();
    let mut made = vec![engine.meta()];
    let mut out = Vec::new();
    for (index, record) in records.iter().enumerate().skip(1) {
        if let Record::Input { input, .. } = record {
            let input = input_of(input).map_err(|e| (index, format!("input: {e}")))?;
            engine.handle(input, &mut out);
            out.clear();
            engine.take_records(&mut made);
        }
    }
    let ended = matches!(records.last(), Some(Record::End { .. }));
    if ended {
        made.push(engine.end_record());
    }
    let n = records.len().max(made.len());
    for index in 0..n {
        let (recorded, replayed) = (records.get(index), made.get(index));
        if recorded != replayed {
            return Ok(Outcome::Different {
                index,
                recorded: recorded.cloned().map(Box::new),
                replayed: replayed.cloned().map(Box::new),
            });
        }
    }
    Ok(Outcome::Same {
        records: records.len(),
        ended,
    })
}

/// The CLI's `--replay-input`: exit 0 the same, 1 different, 2 unreadable.
pub fn run(path: &Path) -> ExitCode {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("zkserve: --replay-input {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    let records = match history::read(BufReader::new(file)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("zkserve: --replay-input {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    let show = |r: &Option<Box<Record>>| match r {
        Some(r) => serde_json::to_string(r).unwrap_or_else(|e| format!("<{e}>")),
        None => "(nothing: the history ends here)".into(),
    };
    match replay(&records) {
        Ok(Outcome::Same { records, ended }) => {
            if ended {
                println!("same: {records} records, the same trace hash");
            } else {
                println!(
                    "same: {records} records; the history has no `end` line (the server did not \
                     stop cleanly), so the trace hash was not compared"
                );
            }
            ExitCode::SUCCESS
        }
        Ok(Outcome::Different {
            index,
            recorded,
            replayed,
        }) => {
            println!(
                "different at line {} (record {index}, 0 is meta):",
                index + 1
            );
            println!("  recorded: {}", show(&recorded));
            println!("  replayed: {}", show(&replayed));
            ExitCode::from(1)
        }
        Err((index, e)) => {
            // `history::read` skipped no line of a file `--history` wrote.
            eprintln!(
                "zkserve: --replay-input {}: line {}: {e}",
                path.display(),
                index + 1
            );
            ExitCode::from(2)
        }
    }
}
