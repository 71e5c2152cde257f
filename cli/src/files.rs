//! Writing a report's files: the one error type every report and viewer
//! page returns (which path, and why), and the checked directory and file
//! writes that produce it. A module of its own, beside both [`report`]
//! and [`viewer`], so that the viewer (whose herd picture the compare
//! report embeds) and the report share it without importing each other.
//!
//! [`report`]: crate::report
//! [`viewer`]: crate::viewer

use std::io;
use std::path::{Path, PathBuf};

use zkcheck::explore::replay::BadChoice;
use zkcheck::scenario::Invalid;

/// Why a report (or a viewer page) could not be written.
#[derive(Debug)]
pub enum ReportError {
    /// The report path exists and is not a directory.
    NotADirectory(PathBuf),
    /// The report directory could not be created.
    CreateDir { path: PathBuf, source: io::Error },
    /// A file could not be written.
    Write { path: PathBuf, source: io::Error },
    /// A file the report embeds (a chart in the herd page) could not be read.
    Read { path: PathBuf, source: io::Error },
    /// plotters could not draw a chart. Its error type is generic over the
    /// drawing backend, so what it says is kept as text.
    Draw { path: PathBuf, message: String },
    /// The scenario a picture needs is refused by the limits.
    Scenario(Invalid),
    /// A token's schedule does not fit its scenario.
    Replay(BadChoice),
    /// A random run's schedule did not replay as indices: a checker bug.
    ScheduleDoesNotReplay { recipe: String, seed: u64 },
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportError::NotADirectory(dir) => write!(
                f,
                "`--report` = {} is not a directory (the report is compare.md and SVG charts)",
                dir.display()
            ),
            ReportError::CreateDir { path, source } => {
                write!(
                    f,
                    "cannot create the directory {}: {source}",
                    path.display()
                )
            }
            ReportError::Write { path, source } => {
                write!(f, "cannot write {}: {source}", path.display())
            }
            ReportError::Read { path, source } => {
                write!(f, "cannot read {}: {source}", path.display())
            }
            ReportError::Draw { path, message } => {
                write!(f, "cannot draw {}: {message}", path.display())
            }
            ReportError::Scenario(invalid) => write!(f, "{invalid}"),
            ReportError::Replay(bad) => {
                write!(f, "the token's schedule does not fit its scenario: {bad}")
            }
            ReportError::ScheduleDoesNotReplay { recipe, seed } => write!(
                f,
                "internal error: the random schedule of {recipe} (seed {seed}) does not replay"
            ),
        }
    }
}

impl std::error::Error for ReportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReportError::CreateDir { source, .. }
            | ReportError::Write { source, .. }
            | ReportError::Read { source, .. } => Some(source),
            ReportError::Scenario(invalid) => Some(invalid),
            ReportError::Replay(bad) => Some(bad),
            _ => None,
        }
    }
}

/// `create_dir_all`, its failure as a [`ReportError`].
pub(crate) fn create_dir(dir: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir).map_err(|source| ReportError::CreateDir {
        path: dir.to_path_buf(),
        source,
    })
}

/// `fs::write`, its failure as a [`ReportError`].
pub(crate) fn write_file(path: &Path, text: &str) -> Result<(), ReportError> {
    std::fs::write(path, text).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Whether `dir` can hold the report: a directory, or a path that can be
/// created as one. Checked before the comparison runs, so that a bad path
/// is bad input (exit 2) and costs no time.
pub fn check_dir(dir: &Path) -> Result<(), ReportError> {
    if dir.exists() && !dir.is_dir() {
        return Err(ReportError::NotADirectory(dir.to_path_buf()));
    }
    create_dir(dir)
}
