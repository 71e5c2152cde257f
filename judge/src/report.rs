//! Every applicable judge over one history, and the verdicts as text (for
//! people) and JSON (for tools). Both are functions of the history and the
//! flags only: the same history gives byte-for-byte the same output.

use serde::Serialize;

use crate::judges;
use crate::run::Run;
use crate::verdict::{exit_code, Config, Status, Verdict};

/// The JSON output's format name.
pub const FORMAT: &str = "zkjudge-verdicts/1";

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub format: &'static str,
    pub records: usize,
    pub sessions: usize,
    pub servers: usize,
    /// Whether the history has its `end` record.
    pub ended: bool,
    pub verdicts: Vec<Verdict>,
    /// 0 ok, 1 violation, 3 incomplete.
    pub exit: u8,
}

/// Judge `run` with every judge `config` makes applicable, or only those
/// named in `only` (unknown names are the caller's to refuse first, with
/// [`judges::NAMES`]).
pub fn judge(run: &Run, config: &Config, only: &[String]) -> Report {
    let chosen = judges::applicable(config)
        .into_iter()
        .filter(|j| only.is_empty() || only.iter().any(|n| n == j.name()));
    let mut verdicts: Vec<Verdict> = chosen.map(|j| j.judge(run, config)).collect();
    for name in only {
        if !verdicts.iter().any(|v| v.judge == name.as_str()) {
            if let Some(j) = judges::by_name(name) {
                verdicts.push(Verdict::incomplete(
                    j.name(),
                    format!("not judged: {}", judges::needs(j.name())),
                ));
            }
        }
    }
    // A cut run is never ok: what it did not record may have broken
    // anything. A violation it did record stands.
    let exit = match exit_code(&verdicts) {
        0 if !run.ended => 3,
        code => code,
    };
    Report {
        format: FORMAT,
        records: run.records.len(),
        sessions: run.sessions().len(),
        servers: run.servers,
        ended: run.ended,
        verdicts,
        exit,
    }
}

impl Report {
    pub fn text(&self) -> String {
        let mut out = format!(
            "history: {} records, {} sessions, {} servers; {}\n",
            self.records,
            self.sessions,
            self.servers,
            if self.ended {
                "the run ended cleanly"
            } else {
                "no `end` record: the run was cut, end-of-run judges say incomplete"
            }
        );
        for v in &self.verdicts {
            let status = match v.status {
                Status::Ok => "ok",
                Status::Violation => "VIOLATION",
                Status::Incomplete => "incomplete",
            };
            out.push_str(&format!("{}: {status}: {}\n", v.judge, v.summary));
            for line in &v.story {
                out.push_str(&format!("  - {line}\n"));
            }
            for note in &v.notes {
                out.push_str(&format!("  note: {note}\n"));
            }
            if !v.figures.is_empty() {
                let figures: Vec<String> =
                    v.figures.iter().map(|(k, v)| format!("{k} {v}")).collect();
                out.push_str(&format!("  figures: {}\n", figures.join(", ")));
            }
        }
        out.push_str(&format!(
            "verdict: {} (exit {})\n",
            match self.exit {
                0 => "ok",
                1 => "violation",
                _ => "incomplete",
            },
            self.exit
        ));
        out
    }

    pub fn json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}
