//! `zkCli.sh`: ZooKeeper's own command-line client (`ZooKeeperMain`) run on
//! a script read from stdin, and a normaliser that takes out what differs
//! between two servers that behave the same — times, zxids, session ids,
//! and where the event thread's `WATCHER::` lines fall among the commands'
//! output — so that the two outputs can be compared line for line.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::tools::{self, Unavailable, ZKCLI_JARS};

/// How often a wait for exit looks at the child.
const EXIT_POLL: Duration = Duration::from_millis(10);

/// Java with ZooKeeper's jars.
#[derive(Clone, Debug)]
pub struct ZkCli {
    java: PathBuf,
    classpath: String,
}

/// What a script run printed (stdout and stderr in one stream, as a
/// terminal shows them: zkCli prints `Created ...` on stderr).
#[derive(Debug)]
pub struct CliRun {
    pub success: bool,
    pub output: String,
}

impl ZkCli {
    pub fn find() -> Result<ZkCli, Unavailable> {
        Ok(ZkCli {
            java: tools::find_java("java")?,
            classpath: tools::classpath("zkCli (ZooKeeper)", &ZKCLI_JARS)?,
        })
    }

    /// Run `script` (one command a line, ending in `quit`) against `connect`,
    /// killing the client after `limit`.
    pub fn run_script(
        &self,
        script: &Path,
        connect: &str,
        limit: Duration,
    ) -> Result<CliRun, String> {
        let input = File::open(script).map_err(|e| format!("opening {}: {e}", script.display()))?;
        let out_path = scratch_file();
        let out =
            File::create(&out_path).map_err(|e| format!("creating {}: {e}", out_path.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("{}: {e}", out_path.display()))?;
        let mut child = Command::new(&self.java)
            .args([
                "-Xmx64m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
            ])
            .arg(&self.classpath)
            .args(["org.apache.zookeeper.ZooKeeperMain", "-server", connect])
            .stdin(Stdio::from(input))
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err))
            .spawn()
            .map_err(|e| format!("starting {}: {e}", self.java.display()))?;
        let started = Instant::now();
        let status = loop {
            if let Ok(Some(status)) = child.try_wait() {
                break Some(status);
            }
            if started.elapsed() > limit {
                // Our own child, by its pid.
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            thread::sleep(EXIT_POLL);
        };
        let output = fs::read_to_string(&out_path).unwrap_or_default();
        let _ = fs::remove_file(&out_path);
        match status {
            Some(status) => Ok(CliRun {
                success: status.success(),
                output,
            }),
            None => Err(format!(
                "zkCli still running after {limit:?}: killed; it printed:\n{output}"
            )),
        }
    }
}

fn scratch_file() -> PathBuf {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("zkapps-zkcli-{}-{n}.out", std::process::id()))
}

/// zkCli's output with what legitimately differs between servers taken out:
///
/// * the banner (`Connecting to <host>`, `Welcome…`, `JLine…`) and blank lines;
/// * `WATCHER::` / `WatchedEvent …` pairs, printed by the event thread
///   wherever they fall among the commands' output, are moved, in their
///   own order, to a `# watch events` section at the end (and a `zxid:`
///   that newer clients add to them is dropped); the `state:Closed` event
///   of `quit` is dropped: the event thread is a daemon, and the JVM may
///   exit before it prints it;
/// * `ctime`/`mtime` become `<time>`;
/// * `cZxid`/`mZxid`/`pZxid` become `zxid#1`, `zxid#2`… by first
///   appearance, so equal zxids stay equal and the numbering is the order
///   they were first seen, whatever the server's zxid counter;
/// * a non-zero `ephemeralOwner` becomes `session#1`, `session#2`….
pub fn normalise(output: &str) -> String {
    let mut zxids = Renamer::new("zxid");
    let mut sessions = Renamer::new("session");
    let mut lines = Vec::new();
    let mut events = Vec::new();
    let mut after_watcher = false;
    for raw in output.lines() {
        let line = raw.trim_end();
        if line.is_empty()
            || line.starts_with("Connecting to ")
            || line == "Welcome to ZooKeeper!"
            || line.starts_with("JLine support is")
        {
            continue;
        }
        if line == "WATCHER::" {
            after_watcher = true;
            continue;
        }
        if line.starts_with("WatchedEvent ") {
            let event = match line.find(" zxid:") {
                Some(at) => &line[..at],
                None => line,
            };
            if !event.starts_with("WatchedEvent state:Closed ") {
                events.push(event.to_string());
            }
            after_watcher = false;
            continue;
        }
        if after_watcher {
            // A WATCHER:: with no WatchedEvent after it: keep what came.
            after_watcher = false;
        }
        lines.push(normalise_line(line, &mut zxids, &mut sessions));
    }
    let mut out = lines.join("\n");
    out.push_str("\n# watch events\n");
    for e in events {
        out.push_str(&e);
        out.push('\n');
    }
    out
}

fn normalise_line(line: &str, zxids: &mut Renamer, sessions: &mut Renamer) -> String {
    let Some((field, value)) = line.split_once(" = ") else {
        return line.to_string();
    };
    match field {
        "ctime" | "mtime" => format!("{field} = <time>"),
        "cZxid" | "mZxid" | "pZxid" => format!("{field} = {}", zxids.name(value)),
        "ephemeralOwner" if value != "0x0" => format!("{field} = {}", sessions.name(value)),
        _ => line.to_string(),
    }
}

/// Gives each distinct value a name by order of first appearance.
struct Renamer {
    prefix: &'static str,
    names: BTreeMap<String, usize>,
}

impl Renamer {
    fn new(prefix: &'static str) -> Renamer {
        Renamer {
            prefix,
            names: BTreeMap::new(),
        }
    }

    fn name(&mut self, value: &str) -> String {
        let next = self.names.len() + 1;
        let n = *self.names.entry(value.to_string()).or_insert(next);
        format!("{}#{n}", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "Connecting to 127.0.0.1:1234\n\
        Welcome to ZooKeeper!\n\
        JLine support is disabled\n\
        \n\
        WATCHER::\n\
        \n\
        WatchedEvent state:SyncConnected type:None path:null\n\
        Created /a\n\
        cZxid = 0x2\n\
        ctime = Fri Nov 27 05:03:33 UTC 2026\n\
        mZxid = 0x3\n\
        pZxid = 0x2\n\
        ephemeralOwner = 0x10000071a150015\n\
        \n\
        WATCHER::\n\
        \n\
        WatchedEvent state:SyncConnected type:NodeDataChanged path:/a\n\
        again\n";

    #[test]
    fn times_zxids_sessions_and_watchers_are_normalised() {
        let n = normalise(A);
        assert_eq!(
            n,
            "Created /a\ncZxid = zxid#1\nctime = <time>\nmZxid = zxid#2\npZxid = zxid#1\n\
             ephemeralOwner = session#1\nagain\n# watch events\n\
             WatchedEvent state:SyncConnected type:None path:null\n\
             WatchedEvent state:SyncConnected type:NodeDataChanged path:/a\n"
        );
        let closed = format!("{A}\nWATCHER::\n\nWatchedEvent state:Closed type:None path:null\n");
        assert_eq!(normalise(&closed), normalise(A));
    }

    #[test]
    fn another_server_with_other_numbers_and_a_late_watcher_compares_equal() {
        let b = A
            .replace("1234", "999")
            .replace("0x2", "0x1f")
            .replace("0x3", "0x20")
            .replace("0x10000071a150015", "0x3000000000a")
            .replace("05:03:33", "06:00:00")
            .replace(
                "\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeDataChanged path:/a\nagain\n",
                "\nagain\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeDataChanged path:/a zxid: 32\n",
            );
        assert_ne!(A, b);
        assert_eq!(normalise(A), normalise(&b));
    }

    #[test]
    fn a_different_answer_still_differs() {
        let b = A.replace("again", "other");
        assert_ne!(normalise(A), normalise(&b));
        // Equal zxids made unequal are a difference too.
        let c = A.replace("pZxid = 0x2", "pZxid = 0x4");
        assert_ne!(normalise(A), normalise(&c));
    }
}
