//! What Linux says about a process: resident memory and CPU time, read from
//! `/proc/<pid>/status` and `/proc/<pid>/stat`. The benchmark measures the
//! server under test this way whether it is the Java server or serve (each
//! runs as its own process), and itself the same way.

use std::fs;
use std::time::Duration;

/// `/proc/<pid>/stat` counts CPU time in clock ticks of `USER_HZ`, which the
/// Linux ABI fixes at 100 on every architecture Rust targets.
const USER_HZ: u64 = 100;

/// A process to read: a pid, or this process.
#[derive(Clone, Copy, Debug)]
pub enum Proc {
    Pid(u32),
    Myself,
}

impl Proc {
    fn dir(self) -> String {
        match self {
            Proc::Pid(pid) => format!("/proc/{pid}"),
            Proc::Myself => "/proc/self".to_string(),
        }
    }

    /// Resident set size now (`VmRSS`), in bytes.
    pub fn rss(self) -> Result<u64, String> {
        self.status_kib("VmRSS:").map(|k| k * 1024)
    }

    /// Peak resident set size so far (`VmHWM`), in bytes.
    pub fn peak_rss(self) -> Result<u64, String> {
        self.status_kib("VmHWM:").map(|k| k * 1024)
    }

    /// User plus system CPU time the process (all its threads) has used.
    pub fn cpu_time(self) -> Result<Duration, String> {
        let path = format!("{}/stat", self.dir());
        let text = fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
        parse_cpu_ticks(&text)
            .map(|ticks| Duration::from_millis(ticks * 1000 / USER_HZ))
            .ok_or_else(|| format!("{path}: no utime/stime fields"))
    }

    /// Time the process's threads have spent waiting for a CPU while
    /// runnable (the second field of each `/proc/<pid>/task/*/schedstat`),
    /// summed: on a shared machine, how much the others held it back.
    /// Threads that have exited are not counted.
    pub fn run_queue_wait(self) -> Result<Duration, String> {
        let dir = format!("{}/task", self.dir());
        let tasks = fs::read_dir(&dir).map_err(|e| format!("listing {dir}: {e}"))?;
        let mut waited_ns = 0u64;
        for task in tasks.flatten() {
            let path = task.path().join("schedstat");
            // A thread may exit between the listing and the read.
            if let Ok(text) = fs::read_to_string(&path) {
                waited_ns += parse_schedstat_wait(&text).unwrap_or(0);
            }
        }
        Ok(Duration::from_nanos(waited_ns))
    }

    fn status_kib(self, key: &str) -> Result<u64, String> {
        let path = format!("{}/status", self.dir());
        let text = fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
        parse_status_kib(&text, key).ok_or_else(|| format!("{path}: no `{key}` line"))
    }
}

/// The `kB` value of a `/proc/<pid>/status` line such as `VmRSS:  1234 kB`.
fn parse_status_kib(status: &str, key: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// utime + stime (fields 14 and 15) of `/proc/<pid>/stat`. The command name
/// (field 2) is in parentheses and may hold spaces, so count from the last `)`.
fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state): utime is field 14, i.e. index 11.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// `schedstat` is `<on-cpu ns> <waiting ns> <timeslices>`.
fn parse_schedstat_wait(text: &str) -> Option<u64> {
    text.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_wait_is_the_second_field() {
        assert_eq!(parse_schedstat_wait("123456 7890 12\n"), Some(7890));
        assert_eq!(parse_schedstat_wait("123456"), None);
    }

    #[test]
    fn status_lines_are_read_in_kib() {
        let status = "Name:\tjava\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n";
        assert_eq!(parse_status_kib(status, "VmRSS:"), Some(102_400));
        assert_eq!(parse_status_kib(status, "VmHWM:"), Some(204_800));
        assert_eq!(parse_status_kib(status, "VmSwap:"), None);
    }

    #[test]
    fn cpu_ticks_skip_a_command_name_with_spaces() {
        let stat = "42 (a b) c) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0";
        assert_eq!(parse_cpu_ticks(stat), Some(300));
        assert_eq!(parse_cpu_ticks("42 (x) S 1"), None);
    }
}
