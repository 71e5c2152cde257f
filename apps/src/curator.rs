//! The Curator apps (`apps/curator/*.java`): compiled with `javac` against
//! Debian's jars once into a cache directory keyed by their sources, then
//! run with `java`.

use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::process::AppCommand;
use crate::tools::{self, Unavailable, CURATOR_JARS};

/// How long `javac` may take for the apps (about 3 s here).
const COMPILE_LIMIT: Duration = Duration::from_secs(120);

/// Java with Curator, and the apps compiled.
#[derive(Clone, Debug)]
pub struct Curator {
    java: PathBuf,
    /// The jars, then the compiled apps.
    classpath: String,
    /// Where the compiled classes are.
    pub classes: PathBuf,
}

/// One compile at a time in this process: tests that start together wait
/// for the first one's classes instead of compiling them again.
static COMPILING: Mutex<()> = Mutex::new(());

impl Curator {
    /// Find java, javac and the jars, and compile the apps under
    /// `cache_root` (a test passes `env!("CARGO_TARGET_TMPDIR")`) unless
    /// classes from the same sources are there already.
    pub fn find(cache_root: &Path) -> Result<Curator, Unavailable> {
        let java = tools::find_java("java")?;
        let javac = tools::find_java("javac")?;
        let jars = tools::classpath("Curator", &CURATOR_JARS)?;
        let sources = sources()?;
        let classes = cache_root.join(format!(
            "zkapps-curator-{:016x}",
            fingerprint(&sources, &jars)
        ));
        let _one_at_a_time = COMPILING.lock().unwrap_or_else(PoisonError::into_inner);
        if !classes.join("Emit.class").is_file() {
            compile(&javac, &jars, &sources, &classes)?;
        }
        Ok(Curator {
            java,
            classpath: format!("{jars}:{}", classes.display()),
            classes,
        })
    }

    /// The app whose main class is `class` with `connect` as its first argument.
    pub fn app(&self, class: &str, connect: &str) -> AppCommand {
        AppCommand {
            name: format!("curator/{class}"),
            program: self.java.clone(),
            args: vec![
                // Small, quick JVMs: the apps are tiny and CI has 2 cores.
                "-Xmx64m".into(),
                "-XX:+UseSerialGC".into(),
                "-XX:TieredStopAtLevel=1".into(),
                "-Djava.net.preferIPv4Stack=true".into(),
                "-cp".into(),
                self.classpath.clone(),
                class.into(),
                connect.into(),
            ],
        }
    }
}

fn sources() -> Result<Vec<(PathBuf, String)>, Unavailable> {
    let dir = crate::apps_dir().join("curator");
    let broken = |reason: String| Unavailable::Broken {
        what: "the Curator apps".into(),
        reason,
    };
    let mut sources = Vec::new();
    let entries =
        fs::read_dir(&dir).map_err(|e| broken(format!("reading {}: {e}", dir.display())))?;
    for entry in entries {
        let path = entry
            .map_err(|e| broken(format!("reading {}: {e}", dir.display())))?
            .path();
        if path.extension().is_some_and(|e| e == "java") {
            let text = fs::read_to_string(&path)
                .map_err(|e| broken(format!("reading {}: {e}", path.display())))?;
            sources.push((path, text));
        }
    }
    sources.sort();
    Ok(sources)
}

/// Names the classes built from these sources against these jars. Not a
/// stable hash across Rust versions, which a cache does not need.
fn fingerprint(sources: &[(PathBuf, String)], jars: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for (path, text) in sources {
        path.file_name().hash(&mut hasher);
        text.hash(&mut hasher);
    }
    jars.hash(&mut hasher);
    hasher.finish()
}

/// Compile into a private directory, then rename it into place, so that a
/// half-written cache is never used (another test process may race us).
fn compile(
    javac: &Path,
    jars: &str,
    sources: &[(PathBuf, String)],
    classes: &Path,
) -> Result<(), Unavailable> {
    let broken = |reason: String| Unavailable::Broken {
        what: "javac on the Curator apps".into(),
        reason,
    };
    let building = classes.with_extension(format!("building-{}", std::process::id()));
    let _ = fs::remove_dir_all(&building);
    fs::create_dir_all(&building)
        .map_err(|e| broken(format!("creating {}: {e}", building.display())))?;
    let mut command = AppCommand {
        name: "javac".into(),
        program: javac.to_path_buf(),
        args: vec![
            "-Xlint:all,-path".into(),
            "-Werror".into(),
            "-d".into(),
            building.display().to_string(),
            "-cp".into(),
            jars.to_string(),
        ],
    };
    command = command.args(sources.iter().map(|(path, _)| path.display().to_string()));
    let done = command
        .run(COMPILE_LIMIT)
        .map_err(|e| broken(e.to_string()))?;
    if !done.status.success() {
        let _ = fs::remove_dir_all(&building);
        return Err(broken(format!("{}\n{}", done.status, done.stderr)));
    }
    if fs::rename(&building, classes).is_err() {
        // Someone else put the same classes there first.
        let _ = fs::remove_dir_all(&building);
        if !classes.join("Emit.class").is_file() {
            return Err(broken(format!(
                "could not put the classes at {}",
                classes.display()
            )));
        }
    }
    Ok(())
}
