//! Running the `zkcheck` command in-process (what `main` does, with its
//! output captured), and writing its input files under the test target dir.

use std::path::PathBuf;

use zkcheck_cli::command::{run, Exit};

/// What one command run printed and how it exited.
pub struct Ran {
    pub exit: Exit,
    pub out: String,
    pub err: String,
}

/// `zkcheck ARGS…`, as `main` runs it.
pub fn zk(args: &[&str]) -> Ran {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let argv = std::iter::once("zkcheck").chain(args.iter().copied());
    let exit = run(argv, &mut out, &mut err);
    Ran {
        exit,
        out: String::from_utf8_lossy(&out).into_owned(),
        err: String::from_utf8_lossy(&err).into_owned(),
    }
}

/// Write `text` to `name` in the calling test file's own folder `dir` under
/// the target's temp dir; its path.
pub fn write_input(dir: &str, name: &str, text: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}
