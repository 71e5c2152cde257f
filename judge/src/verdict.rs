//! What a judge says: [`Verdict`]s, the [`Judge`] trait, the [`Config`]
//! that picks which judges apply, and the one exit code of them all.

use serde::Serialize;

use crate::contender::Rules;
use crate::run::Run;

/// A judge's finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Held, over something to judge.
    Ok,
    /// Broken: the story proves it.
    Violation,
    /// Not judged: nothing to judge, or the run was cut before its end.
    Incomplete,
}

/// One judge's verdict: a summary line, the story that proves it (a few
/// records, each naming its line), figures, and the lines it cites (the
/// viewer marks them).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    pub judge: &'static str,
    pub status: Status,
    pub summary: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub story: Vec<String>,
    /// Name and value, in a fixed order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<(String, String)>,
    /// What was seen and is fine but worth saying (fenced writes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// 1-based lines of the history the story cites.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<usize>,
}

impl Verdict {
    pub fn new(judge: &'static str, status: Status, summary: impl Into<String>) -> Verdict {
        Verdict {
            judge,
            status,
            summary: summary.into(),
            story: Vec::new(),
            figures: Vec::new(),
            notes: Vec::new(),
            lines: Vec::new(),
        }
    }

    pub fn ok(judge: &'static str, summary: impl Into<String>) -> Verdict {
        Verdict::new(judge, Status::Ok, summary)
    }

    pub fn incomplete(judge: &'static str, summary: impl Into<String>) -> Verdict {
        Verdict::new(judge, Status::Incomplete, summary)
    }

    pub fn violation(judge: &'static str, summary: impl Into<String>) -> Verdict {
        Verdict::new(judge, Status::Violation, summary)
    }

    pub fn story(mut self, lines: impl IntoIterator<Item = String>) -> Verdict {
        self.story.extend(lines);
        self
    }

    pub fn figure(mut self, name: &str, value: impl ToString) -> Verdict {
        self.figures.push((name.to_string(), value.to_string()));
        self
    }

    /// Cite record indices (stored as file lines, sorted, once each).
    pub fn cite(mut self, run: &Run, indices: impl IntoIterator<Item = usize>) -> Verdict {
        self.lines.extend(
            indices
                .into_iter()
                .filter(|&i| i < run.records.len())
                .map(|i| run.line(i)),
        );
        self.lines.sort_unstable();
        self.lines.dedup();
        self
    }

    /// An end-of-run judge on a history without `End` says so.
    pub fn cut(judge: &'static str) -> Verdict {
        Verdict::incomplete(
            judge,
            "not judged: the history has no `end` record (the run was cut), and this judge reads the end of the run",
        )
    }
}

/// What the judges are asked to look at (`zkcheck judge`'s flags).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// `--lock /L`: the lock's contenders are /L's children.
    pub lock: Option<String>,
    /// `--resource /R`: what owners write (and consumers report under).
    pub resource: Option<String>,
    /// `--leader /E`: the election's candidates are /E's children.
    pub leader: Option<String>,
    /// `--queue /Q`: the queue's items are /Q's children.
    pub queue: Option<String>,
    pub rules: Rules,
}

/// A judge: a name, a definition (docs/JUDGES.md has the long one), and a
/// verdict over a whole run.
pub trait Judge {
    fn name(&self) -> &'static str;
    fn judge(&self, run: &Run, config: &Config) -> Verdict;
}

/// The exit code of a set of verdicts: 1 if any is a violation, else 3 if
/// any is incomplete (or there is none), else 0.
pub fn exit_code(verdicts: &[Verdict]) -> u8 {
    if verdicts.iter().any(|v| v.status == Status::Violation) {
        1
    } else if verdicts.is_empty() || verdicts.iter().any(|v| v.status == Status::Incomplete) {
        3
    } else {
        0
    }
}
