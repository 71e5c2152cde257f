//! The kazoo apps (`apps/kazoo/*.py`), run with python3.

use std::path::PathBuf;

use crate::process::AppCommand;
use crate::tools::{self, Unavailable, PYTHON_ENV};

/// A python3 that imports kazoo.
#[derive(Clone, Debug)]
pub struct Kazoo {
    python: PathBuf,
    /// kazoo's version, as it reports it.
    pub version: String,
}

impl Kazoo {
    /// python3 (or `$ZKAPPS_PYTHON`) with kazoo importable, or why not.
    pub fn find() -> Result<Kazoo, Unavailable> {
        let python = match std::env::var_os(PYTHON_ENV) {
            Some(p) if !PathBuf::from(&p).is_file() => {
                return Err(Unavailable::NotInstalled {
                    what: "python3".into(),
                    reason: format!("{PYTHON_ENV}={} is not a file", PathBuf::from(p).display()),
                })
            }
            Some(p) => PathBuf::from(p),
            None => {
                tools::find_program("python3", false).ok_or_else(|| Unavailable::NotInstalled {
                    what: "python3".into(),
                    reason: format!("no python3 on PATH (or set {PYTHON_ENV})"),
                })?
            }
        };
        let version = tools::probe(
            "kazoo",
            &python,
            &[
                "-c",
                "import kazoo.version; print(kazoo.version.__version__)",
            ],
        )
        .map_err(|e| match e {
            Unavailable::NotInstalled { reason, .. } => Unavailable::NotInstalled {
                what: "kazoo".into(),
                reason: format!("{reason} (pip install kazoo==2.11.0)"),
            },
            broken => broken,
        })?;
        Ok(Kazoo {
            python,
            version: version.trim().to_string(),
        })
    }

    /// `apps/kazoo/<script>` with `connect` as its first argument.
    pub fn app(&self, script: &str, connect: &str) -> AppCommand {
        let path = crate::apps_dir().join("kazoo").join(script);
        AppCommand {
            name: format!("kazoo/{script}"),
            program: self.python.clone(),
            // -B: no __pycache__ written into the source tree.
            args: vec!["-B".into(), path.display().to_string(), connect.to_string()],
        }
    }
}
