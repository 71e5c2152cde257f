//! Running the user's command once: `{connect}` replaced by the run's
//! connect string, its stdout and stderr into files beside the history,
//! a bounded wait, and a kill when the bound passes — of the app's whole
//! process group, as an app is often started through a wrapper (`sh -c`,
//! a launcher script, `mvn exec:java`) that would otherwise leave the app
//! itself running. Nothing here waits without a deadline.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::tally::AppEnd;

/// The placeholder in the command that becomes the connect string.
pub const CONNECT: &str = "{connect}";

/// How often the wait looks at the child.
const POLL: Duration = Duration::from_millis(20);

/// `command` with every `{connect}` replaced; `None` if no argument has one
/// (the app would not know where the server is).
pub fn with_connect(command: &[String], connect: &str) -> Option<Vec<String>> {
    if !command.iter().any(|a| a.contains(CONNECT)) {
        return None;
    }
    Some(
        command
            .iter()
            .map(|a| a.replace(CONNECT, connect))
            .collect(),
    )
}

/// Run `argv` to its end, until `limit`, or until `stop` says so (Ctrl-C:
/// the app, in a process group of its own, does not get the terminal's
/// signal, so it is killed here), stdout to `out`, stderr to `err`.
pub fn run(
    argv: &[String],
    out: &Path,
    err: &Path,
    limit: Duration,
    stop: &dyn Fn() -> bool,
) -> AppEnd {
    let Some((program, args)) = argv.split_first() else {
        return AppEnd::NotStarted("an empty command".into());
    };
    let files = File::create(out).and_then(|o| Ok((o, File::create(err)?)));
    let (stdout, stderr) = match files {
        Ok(f) => f,
        Err(e) => return AppEnd::NotStarted(format!("cannot write {}: {e}", out.display())),
    };
    let mut child = match Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        // Its own process group, led by it: the kill reaches all of it.
        .process_group(0)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return AppEnd::NotStarted(format!("`{program}`: {e}")),
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return status.code().map_or(AppEnd::Signalled, AppEnd::Exited);
            }
            Ok(None) if started.elapsed() >= limit => {
                kill_group(&mut child);
                return AppEnd::TimedOut(limit);
            }
            Ok(None) if stop() => {
                kill_group(&mut child);
                return AppEnd::Interrupted;
            }
            Ok(None) => std::thread::sleep(POLL),
            Err(e) => {
                kill_group(&mut child);
                return AppEnd::NotStarted(format!("waiting for `{program}`: {e}"));
            }
        }
    }
}

/// SIGKILL to the process group `child` leads (it was spawned with
/// `process_group(0)`), then reap `child`. Only for a child not reaped
/// yet: until then its pid is its group's id, and cannot name another.
fn kill_group(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) touches no memory of ours; a negative pid names
        // the process group.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_connect_string_goes_where_the_placeholder_is() {
        let c = with_connect(&argv(&["app", "--zk={connect}", "x"]), "127.0.0.1:1");
        assert_eq!(c, Some(argv(&["app", "--zk=127.0.0.1:1", "x"])));
        assert_eq!(with_connect(&argv(&["app", "x"]), "127.0.0.1:1"), None);
    }

    #[cfg(unix)]
    #[test]
    fn exit_codes_crashes_and_hangs_are_told_apart() {
        let dir = std::env::temp_dir().join(format!("zkcheck-runs-app-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (out, err) = (dir.join("out"), dir.join("err"));
        let limit = Duration::from_secs(10);
        assert_eq!(
            run(&argv(&["sh", "-c", "echo hi"]), &out, &err, limit, &|| {
                false
            }),
            AppEnd::Exited(0)
        );
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "hi\n");
        assert_eq!(
            run(&argv(&["sh", "-c", "exit 4"]), &out, &err, limit, &|| false),
            AppEnd::Exited(4)
        );
        assert_eq!(
            run(
                &argv(&["sh", "-c", "kill -9 $$"]),
                &out,
                &err,
                limit,
                &|| false
            ),
            AppEnd::Signalled
        );
        let short = Duration::from_millis(200);
        let started = Instant::now();
        assert_eq!(
            run(&argv(&["sleep", "30"]), &out, &err, short, &|| false),
            AppEnd::TimedOut(short)
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        // Stopped (Ctrl-C) before its limit: killed, and said so.
        let started = Instant::now();
        let stop = || started.elapsed() > Duration::from_millis(200);
        assert_eq!(
            run(&argv(&["sleep", "30"]), &out, &err, limit, &stop),
            AppEnd::Interrupted
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        let missing = run(
            &argv(&["/nonexistent/zkcheck-app"]),
            &out,
            &err,
            limit,
            &|| false,
        );
        assert!(matches!(missing, AppEnd::NotStarted(_)), "{missing:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
