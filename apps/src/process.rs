//! Running one app: a child process with a connect string, its stdout read
//! as JSON-lines events as they come, a bounded wait, and a kill when the
//! bound passes — of the app's whole process group, so that an app started
//! through a wrapper (`sh -c`, a launcher script) does not outlive it.
//! Nothing here can hang: every wait has a deadline, and dropping a
//! [`Running`] kills the app.

use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How much of an app's stderr is kept (its tail), for error messages.
const STDERR_KEPT: usize = 16 * 1024;
/// How often a wait for exit looks at the child.
const EXIT_POLL: Duration = Duration::from_millis(10);

/// A command line for one app, ready to run.
#[derive(Clone, Debug)]
pub struct AppCommand {
    /// What the app is called in messages (`kazoo/lock.py`).
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl AppCommand {
    /// Add an argument (`--threads`, `3`, ...).
    pub fn arg(mut self, arg: impl Into<String>) -> AppCommand {
        self.args.push(arg.into());
        self
    }

    /// Add several arguments.
    pub fn args<I, S>(mut self, args: I) -> AppCommand
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Start the app; its events can be waited for while it runs.
    pub fn spawn(&self) -> Result<Running, AppError> {
        Running::start(self)
    }

    /// Run the app to its end, killing it after `limit`.
    pub fn run(&self, limit: Duration) -> Result<Finished, AppError> {
        self.spawn()?.finish(limit)
    }
}

/// An app that ran to its end.
#[derive(Debug)]
pub struct Finished {
    pub name: String,
    pub status: ExitStatus,
    /// Every JSON line it printed, in order.
    pub events: Vec<Value>,
    /// Lines of stdout that were not JSON objects.
    pub noise: Vec<String>,
    /// The tail of its stderr.
    pub stderr: String,
    pub elapsed: Duration,
}

impl Finished {
    /// Exit code 0 and no stdout line that is not an event.
    pub fn succeeded(&self) -> bool {
        self.status.success() && self.noise.is_empty()
    }

    /// A readable account of the run, for assertion messages.
    pub fn story(&self) -> String {
        story(&self.name, &self.events, &self.noise, &self.stderr)
            + &format!("exit: {}\n", self.status)
    }

    /// Panic with the run's story unless it [`succeeded`](Self::succeeded).
    pub fn expect_success(&self) -> &Finished {
        assert!(self.succeeded(), "{} failed:\n{}", self.name, self.story());
        self
    }
}

/// Events named `ev`, in order.
pub fn named<'e>(events: &'e [Value], ev: &str) -> Vec<&'e Value> {
    events.iter().filter(|e| e["ev"] == ev).collect()
}

/// The `state` field of every `state` event whose other fields match
/// `field` = `value` (or of all of them when `field` is `None`), in order.
pub fn states(events: &[Value], filter: Option<(&str, &Value)>) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["ev"] == "state")
        .filter(|e| filter.is_none_or(|(field, value)| &e[field] == value))
        .filter_map(|e| e["state"].as_str().map(str::to_string))
        .collect()
}

/// Why an app did not run to a clean end.
#[derive(Debug)]
pub enum AppError {
    /// It could not be started at all.
    Spawn { name: String, source: io::Error },
    /// It was still running (or had not printed the awaited event) when its
    /// time was up: it was killed.
    TimedOut {
        name: String,
        waited_for: String,
        limit: Duration,
        events: Vec<Value>,
        stderr: String,
    },
    /// It ended before printing the awaited event.
    EndedEarly {
        name: String,
        waited_for: String,
        status: Option<ExitStatus>,
        events: Vec<Value>,
        stderr: String,
    },
}

impl fmt::Display for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AppError::Spawn { name, source } => write!(f, "{name}: could not start: {source}"),
            AppError::TimedOut {
                name,
                waited_for,
                limit,
                events,
                stderr,
            } => write!(
                f,
                "{name}: no {waited_for} within {limit:?}: killed\n{}",
                story(name, events, &[], stderr)
            ),
            AppError::EndedEarly {
                name,
                waited_for,
                status,
                events,
                stderr,
            } => write!(
                f,
                "{name}: ended ({}) before {waited_for}\n{}",
                status.map_or("status unknown".to_string(), |s| s.to_string()),
                story(name, events, &[], stderr)
            ),
        }
    }
}

impl std::error::Error for AppError {}

fn story(name: &str, events: &[Value], noise: &[String], stderr: &str) -> String {
    let mut out = format!("--- {name}: {} events ---\n", events.len());
    for e in events {
        out += &format!("{e}\n");
    }
    for line in noise {
        out += &format!("(not an event) {line}\n");
    }
    if !stderr.is_empty() {
        out += &format!("--- {name}: stderr (tail) ---\n{stderr}\n");
    }
    out
}

/// A line of the app's stdout.
enum Line {
    Event(Value),
    Noise(String),
}

/// An app that is running. Dropping it kills the app.
pub struct Running {
    name: String,
    child: Child,
    lines: Receiver<Line>,
    events: Vec<Value>,
    noise: Vec<String>,
    stderr: Arc<Mutex<String>>,
    /// Closed by the stderr reader when the app's stderr ends.
    stderr_done: Receiver<()>,
    started: Instant,
    /// The exit status, once seen.
    status: Option<ExitStatus>,
}

impl Running {
    fn start(command: &AppCommand) -> Result<Running, AppError> {
        let mut child = Command::new(&command.program)
            .args(&command.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, led by it: the kill reaches all of it.
            .process_group(0)
            .spawn()
            .map_err(|source| AppError::Spawn {
                name: command.name.clone(),
                source,
            })?;
        let (send, lines) = mpsc::channel();
        let stdout = child.stdout.take();
        let stderr_pipe = child.stderr.take();
        let stderr = Arc::new(Mutex::new(String::new()));
        let (stderr_ended, stderr_done) = mpsc::channel::<()>();
        if let Some(stdout) = stdout {
            thread::spawn(move || read_events(stdout, &send));
        }
        if let Some(pipe) = stderr_pipe {
            let kept = stderr.clone();
            thread::spawn(move || {
                keep_tail(pipe, &kept);
                drop(stderr_ended);
            });
        }
        Ok(Running {
            name: command.name.clone(),
            child,
            lines,
            events: Vec::new(),
            noise: Vec::new(),
            stderr,
            stderr_done,
            started: Instant::now(),
            status: None,
        })
    }

    /// The events printed so far (as far as they were waited for).
    pub fn events(&self) -> &[Value] {
        &self.events
    }

    /// Wait up to `limit` for an event that `wanted` accepts (counting only
    /// events not seen before this call), and return it. On timeout the app
    /// is killed and the error tells its story.
    pub fn wait_for(
        &mut self,
        what: &str,
        limit: Duration,
        wanted: impl Fn(&Value) -> bool,
    ) -> Result<Value, AppError> {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(Line::Event(event)) => {
                    self.events.push(event.clone());
                    if wanted(&event) {
                        return Ok(event);
                    }
                }
                Ok(Line::Noise(line)) => self.noise.push(line),
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    return Err(self.timed_out(what, limit));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // Stdout closed: the app is ending.
                    let status = self.wait_exit(Duration::from_secs(2));
                    return Err(AppError::EndedEarly {
                        name: self.name.clone(),
                        waited_for: what.to_string(),
                        status,
                        events: self.events.clone(),
                        stderr: self.stderr_tail(),
                    });
                }
            }
        }
    }

    /// Wait up to `limit` (from now) for the app to end, collecting the rest
    /// of its events. On timeout it is killed.
    pub fn finish(mut self, limit: Duration) -> Result<Finished, AppError> {
        let deadline = Instant::now() + limit;
        // Read until stdout closes (the app ended or closed it)...
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(Line::Event(event)) => self.events.push(event),
                Ok(Line::Noise(line)) => self.noise.push(line),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    return Err(self.timed_out("end", limit));
                }
            }
        }
        // ...then for the exit itself.
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(status) = self.wait_exit(left) else {
            self.kill();
            return Err(self.timed_out("exit", limit));
        };
        // The stderr reader ends with the process (bounded: a grandchild
        // could keep the pipe open).
        let _ = self.stderr_done.recv_timeout(Duration::from_secs(1));
        Ok(Finished {
            name: self.name.clone(),
            status,
            events: std::mem::take(&mut self.events),
            noise: std::mem::take(&mut self.noise),
            stderr: self.stderr_tail(),
            elapsed: self.started.elapsed(),
        })
    }

    fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        if self.status.is_some() {
            return self.status;
        }
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.status = Some(status);
                return self.status;
            }
            if Instant::now() >= deadline {
                return None;
            }
            thread::sleep(EXIT_POLL);
        }
    }

    /// SIGKILL to the app's process group, and reap the app. Only while
    /// it is not reaped: until then its pid is its group's id, and cannot
    /// name another.
    fn kill(&mut self) {
        if self.status.is_none() {
            if let Ok(pid) = i32::try_from(self.child.id()) {
                // SAFETY: kill(2) touches no memory of ours; a negative
                // pid names the process group.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
            let _ = self.child.kill();
            self.status = self.child.wait().ok();
        }
    }

    fn timed_out(&self, what: &str, limit: Duration) -> AppError {
        AppError::TimedOut {
            name: self.name.clone(),
            waited_for: what.to_string(),
            limit,
            events: self.events.clone(),
            stderr: self.stderr_tail(),
        }
    }

    fn stderr_tail(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

fn read_events(stdout: impl Read, send: &mpsc::Sender<Line>) {
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { return };
        if line.trim().is_empty() {
            continue;
        }
        let parsed = match serde_json::from_str::<Value>(&line) {
            Ok(value @ Value::Object(_)) => Line::Event(value),
            _ => Line::Noise(line),
        };
        if send.send(parsed).is_err() {
            return;
        }
    }
}

fn keep_tail(mut pipe: impl Read, kept: &Mutex<String>) {
    let mut buf = [0u8; 4096];
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut text = kept.lock().unwrap_or_else(PoisonError::into_inner);
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
        if text.len() > STDERR_KEPT {
            let mut cut = text.len() - STDERR_KEPT;
            while !text.is_char_boundary(cut) {
                cut += 1;
            }
            text.drain(..cut);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> AppCommand {
        AppCommand {
            name: "sh".into(),
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
        }
    }

    #[test]
    fn events_and_noise_are_told_apart() {
        let done = sh(r#"echo '{"ev":"a"}'; echo hello; echo '{"ev":"b","n":1}'"#)
            .run(Duration::from_secs(10))
            .unwrap();
        assert!(done.status.success());
        assert_eq!(done.events.len(), 2);
        assert_eq!(done.events[1]["n"], 1);
        assert_eq!(done.noise, vec!["hello".to_string()]);
        assert!(!done.succeeded());
    }

    #[test]
    fn an_app_that_hangs_is_killed_at_its_limit() {
        let started = Instant::now();
        let err = sh(r#"echo '{"ev":"a"}'; exec sleep 30"#)
            .run(Duration::from_millis(300))
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        match err {
            AppError::TimedOut { events, .. } => assert_eq!(events.len(), 1),
            other => panic!("{other}"),
        }
    }

    /// A wrapper killed alone would leave the app it started running,
    /// connected and busy, after the test that ran it ended.
    #[test]
    fn a_hung_wrapper_is_killed_with_what_it_started() {
        let mut running = sh(r#"sleep 30 & echo "{\"pid\":$!}"; wait"#)
            .spawn()
            .unwrap();
        let started = running
            .wait_for("pid", Duration::from_secs(10), |e| e["pid"].is_u64())
            .unwrap();
        let pid = started["pid"].as_u64().unwrap();
        let err = running.finish(Duration::from_millis(300)).unwrap_err();
        assert!(matches!(err, AppError::TimedOut { .. }), "{err}");
        let stat = format!("/proc/{pid}/stat");
        // Gone, or a zombie waiting for whoever inherited it to reap it.
        let dead = || {
            std::fs::read_to_string(&stat).map_or(true, |s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            })
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while !dead() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(20));
        }
        assert!(dead(), "the wrapper's child {pid} still runs");
    }

    #[test]
    fn waiting_for_an_event_that_never_comes_ends() {
        let mut running = sh(r#"echo '{"ev":"a"}'; exit 3"#).spawn().unwrap();
        let err = running
            .wait_for("b", Duration::from_secs(10), |e| e["ev"] == "b")
            .unwrap_err();
        assert!(matches!(err, AppError::EndedEarly { status: Some(s), .. } if s.code() == Some(3)));
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let cmd = AppCommand {
            name: "nothing".into(),
            program: "/nonexistent/zkapps-app".into(),
            args: vec![],
        };
        assert!(matches!(cmd.spawn(), Err(AppError::Spawn { .. })));
    }

    #[test]
    fn states_filter_by_field() {
        let events: Vec<Value> = [
            r#"{"ev":"state","state":"SUSPENDED","worker":0}"#,
            r#"{"ev":"state","state":"LOST","worker":1}"#,
            r#"{"ev":"write","worker":0}"#,
        ]
        .iter()
        .map(|s| serde_json::from_str(s).unwrap())
        .collect();
        assert_eq!(states(&events, None), vec!["SUSPENDED", "LOST"]);
        assert_eq!(
            states(&events, Some(("worker", &Value::from(1)))),
            vec!["LOST"]
        );
        assert_eq!(named(&events, "write").len(), 1);
    }
}
