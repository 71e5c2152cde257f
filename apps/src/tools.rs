//! Finding what the apps need — python3 with kazoo, java and javac with
//! Curator's and ZooKeeper's jars — and saying plainly what is missing.
//!
//! Like `zkreal::require_server`: a test asks with [`require`], which skips
//! loudly when a tool is not installed, fails under `CI=true` (CI must not
//! pass by skipping), and always fails when a tool is there but broken.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::process::AppCommand;

/// Names the python interpreter to use (default: `python3` on `PATH`).
pub const PYTHON_ENV: &str = "ZKAPPS_PYTHON";
/// Names the jars for the Curator apps and zkCli (`:`-separated); default:
/// Debian's jars in [`DEBIAN_JAVA_DIR`].
pub const CLASSPATH_ENV: &str = "ZKAPPS_CLASSPATH";
/// Where Debian's `libcurator-*-java`, `libzookeeper-java`, `libguava-java`
/// and `libslf4j-java` put their jars.
pub const DEBIAN_JAVA_DIR: &str = "/usr/share/java";

/// How long a probe (`python3 -c 'import kazoo'`, `java -version`) may take.
const PROBE_LIMIT: Duration = Duration::from_secs(20);

/// The jars the Curator apps run with, and the Debian package of each.
/// Their manifests name further dependencies (jackson, commons-*), which
/// the JVM follows.
pub const CURATOR_JARS: [(&str, &str); 8] = [
    ("curator-recipes.jar", "libcurator-recipes-java"),
    ("curator-framework.jar", "libcurator-framework-java"),
    ("curator-client.jar", "libcurator-client-java"),
    ("zookeeper.jar", "libzookeeper-java"),
    ("zookeeper-jute.jar", "libzookeeper-java"),
    ("guava.jar", "libguava-java"),
    ("slf4j-api.jar", "libslf4j-java"),
    // No logging: the apps' stdout is events only, and a quiet stderr.
    ("slf4j-nop.jar", "libslf4j-java"),
];

/// The jars `zkCli.sh`'s `ZooKeeperMain` runs with.
pub const ZKCLI_JARS: [(&str, &str); 2] = [
    ("zookeeper.jar", "zookeeper"),
    ("slf4j-nop.jar", "libslf4j-java"),
];

/// Why a tool cannot be used.
#[derive(Debug)]
pub enum Unavailable {
    /// It is not installed here: tests may skip (not on CI).
    NotInstalled { what: String, reason: String },
    /// It is installed but does not work: always a failure.
    Broken { what: String, reason: String },
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unavailable::NotInstalled { what, reason } => {
                write!(f, "{what} is not installed: {reason}")
            }
            Unavailable::Broken { what, reason } => write!(f, "{what} does not work: {reason}"),
        }
    }
}

impl std::error::Error for Unavailable {}

/// The tool, or `None` after printing `SKIPPED` when it is not installed;
/// panics under `CI=true` or when the tool is broken.
pub fn require<T>(found: Result<T, Unavailable>) -> Option<T> {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    require_with(found, ci)
}

/// [`require`] with the CI flag spelled out, for testing.
pub fn require_with<T>(found: Result<T, Unavailable>, ci: bool) -> Option<T> {
    match found {
        Ok(tool) => Some(tool),
        Err(e @ Unavailable::NotInstalled { .. }) if !ci => {
            let test = std::thread::current()
                .name()
                .unwrap_or("<unnamed test>")
                .to_string();
            eprintln!("SKIPPED: {test} — {e} (`.ci/run` installs it)");
            None
        }
        Err(e @ Unavailable::NotInstalled { .. }) => panic!("CI=true and {e}"),
        Err(e) => panic!("{e}"),
    }
}

/// The first `name` on `PATH`, or in `$JAVA_HOME/bin` first when `java_home`.
pub(crate) fn find_program(name: &str, java_home: bool) -> Option<PathBuf> {
    let from_home = java_home
        .then(|| {
            std::env::var_os("JAVA_HOME").map(|home| PathBuf::from(home).join("bin").join(name))
        })
        .flatten();
    let from_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join(name));
    from_home
        .into_iter()
        .chain(from_path)
        .find(|candidate| candidate.is_file())
}

/// `java`, or why not.
pub(crate) fn find_java(program: &str) -> Result<PathBuf, Unavailable> {
    find_program(program, true).ok_or_else(|| Unavailable::NotInstalled {
        what: program.to_string(),
        reason: format!(
            "no `{program}` on PATH nor in $JAVA_HOME/bin (Debian: default-jdk-headless)"
        ),
    })
}

/// The class path for `jars`: from [`CLASSPATH_ENV`] when set, else the
/// Debian jars, each checked to exist.
pub(crate) fn classpath(what: &str, jars: &[(&str, &str)]) -> Result<String, Unavailable> {
    if let Ok(cp) = std::env::var(CLASSPATH_ENV) {
        return Ok(cp);
    }
    classpath_in(Path::new(DEBIAN_JAVA_DIR), what, jars)
}

pub(crate) fn classpath_in(
    dir: &Path,
    what: &str,
    jars: &[(&str, &str)],
) -> Result<String, Unavailable> {
    let mut entries = Vec::new();
    for (jar, package) in jars {
        let path = dir.join(jar);
        if !path.is_file() {
            return Err(Unavailable::NotInstalled {
                what: what.to_string(),
                reason: format!(
                    "no {} (Debian package {package}; or set {CLASSPATH_ENV})",
                    path.display()
                ),
            });
        }
        entries.push(path.display().to_string());
    }
    Ok(entries.join(":"))
}

/// Run a probe command to its end (bounded), for its stdout.
pub(crate) fn probe(what: &str, program: &Path, args: &[&str]) -> Result<String, Unavailable> {
    let command = AppCommand {
        name: what.to_string(),
        program: program.to_path_buf(),
        args: args.iter().map(|a| a.to_string()).collect(),
    };
    // A probe prints plain text, not events: read it as noise.
    let done = command.run(PROBE_LIMIT).map_err(|e| Unavailable::Broken {
        what: what.to_string(),
        reason: e.to_string(),
    })?;
    if !done.status.success() {
        return Err(Unavailable::NotInstalled {
            what: what.to_string(),
            reason: format!(
                "`{} {}` failed ({}): {}",
                program.display(),
                args.join(" "),
                done.status,
                // A traceback's last line says what is missing.
                done.stderr.trim().lines().last().unwrap_or("")
            ),
        });
    }
    Ok(done.noise.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_jar_names_its_package() {
        let err = classpath_in(Path::new("/nonexistent"), "Curator", &CURATOR_JARS).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Unavailable::NotInstalled { .. }));
        assert!(text.contains("libcurator-recipes-java"), "{text}");
    }

    #[test]
    fn not_installed_skips_off_ci_and_fails_on_ci() {
        let missing = || -> Result<(), Unavailable> {
            Err(Unavailable::NotInstalled {
                what: "kazoo".into(),
                reason: "test".into(),
            })
        };
        assert!(require_with(missing(), false).is_none());
        let on_ci = std::panic::catch_unwind(|| require_with(missing(), true));
        assert!(on_ci.is_err());
    }

    #[test]
    fn broken_always_fails() {
        let broken: Result<(), Unavailable> = Err(Unavailable::Broken {
            what: "java".into(),
            reason: "test".into(),
        });
        assert!(std::panic::catch_unwind(|| require_with(broken, false)).is_err());
    }
}
