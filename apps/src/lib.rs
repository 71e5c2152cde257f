//! Real ZooKeeper client apps and the harness that runs them against any
//! connect string: the real 3.8 server in this crate's tests, `zkcheck
//! serve` at integration (issues 31 and 32).
//!
//! * The apps live beside this crate: `apps/kazoo/*.py` (kazoo 2.11),
//!   `apps/curator/*.java` (Curator 5.4), `apps/zkcli/*.txt` (`zkCli.sh`
//!   scripts). Each app takes a connect string first and prints JSON
//!   lines on stdout, one event each, with no wall-clock content (see
//!   `apps/README.md` for the events).
//! * [`Kazoo`], [`Curator`] and [`ZkCli`] find python3/kazoo, java, javac
//!   and the jars (Curator's apps are compiled once into a cache), and
//!   build an [`AppCommand`] for an app.
//! * [`AppCommand::run`] runs an app to its end within a bound (killed
//!   otherwise: nothing hangs); [`AppCommand::spawn`] gives a [`Running`]
//!   app whose events can be awaited while a harness injects a fault.
//! * [`require`] skips loudly, or fails under `CI=true`, when a tool is
//!   not installed — like `zkreal::require_server`.
//! * [`zkcli::normalise`] takes times, zxids and session ids out of
//!   zkCli's output so that two servers' outputs compare.

mod curator;
mod kazoo;
mod process;
mod tools;
pub mod zkcli;

use std::path::PathBuf;

pub use curator::Curator;
pub use kazoo::Kazoo;
pub use process::{named, states, AppCommand, AppError, Finished, Running};
pub use tools::{require, require_with, Unavailable, CLASSPATH_ENV, PYTHON_ENV};
pub use zkcli::ZkCli;

/// Where the apps are: this crate's directory.
pub fn apps_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
