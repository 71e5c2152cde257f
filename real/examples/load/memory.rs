//! Memory per znode: K nodes created and held, twice, with the server's
//! resident memory read after each batch. The figure is the growth over
//! the second batch divided by K, so one-off costs of the first (JIT code,
//! heap and allocator pools warming up) stay out of it; the growth over
//! both batches is given too. For a JVM the live
//! heap after a full GC (`jcmd GC.run`, `GC.heap_info`) is read too: its
//! RSS says what the heap has touched, not what the tree holds.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::task::JoinSet;

use crate::conn::{ClientKind, Conn};
use crate::procfs::Proc;

/// Sessions that create the nodes.
const CREATORS: usize = 16;
/// How long one `jcmd` may take.
const JCMD_LIMIT: Duration = Duration::from_secs(30);

#[derive(Clone, Debug)]
pub struct MemoryRun {
    pub client: ClientKind,
    pub connect: String,
    pub pid: u32,
    pub is_jvm: bool,
    /// Nodes per batch.
    pub znodes: usize,
    pub data_bytes: usize,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct MemoryResult {
    pub znodes: usize,
    /// RSS after setup, after batch 1, after batch 2.
    pub rss: [u64; 3],
    /// Live heap after a full GC after batch 1 and batch 2 (JVM only).
    pub live_heap: Option<[u64; 2]>,
    pub create_rate: f64,
}

impl MemoryResult {
    /// RSS growth over the second batch, per node.
    pub fn rss_per_znode(&self) -> f64 {
        (self.rss[2] as f64 - self.rss[1] as f64) / self.znodes as f64
    }

    /// RSS growth over both batches, per node: a structure that doubles
    /// its capacity inside one batch can make either batch's figure alone
    /// too high or too low.
    pub fn rss_per_znode_both(&self) -> f64 {
        (self.rss[2] as f64 - self.rss[0] as f64) / (2 * self.znodes) as f64
    }

    pub fn heap_per_znode(&self) -> Option<f64> {
        self.live_heap
            .map(|[a, b]| (b as f64 - a as f64) / self.znodes as f64)
    }
}

pub async fn measure(run: &MemoryRun) -> Result<MemoryResult, String> {
    let server = Proc::Pid(run.pid);
    let mut admin = Conn::open(run.client, &run.connect, 0).await?;
    admin.ensure("/mem").await?;
    for i in 0..CREATORS {
        admin.ensure(&format!("/mem/w{i}")).await?;
    }
    let mut result = MemoryResult {
        znodes: run.znodes,
        ..MemoryResult::default()
    };
    result.rss[0] = server.rss()?;
    let mut heap = [0; 2];
    let mut created = Duration::ZERO;
    for batch in 1..=2 {
        let started = Instant::now();
        create_batch(run, batch).await?;
        created += started.elapsed();
        result.rss[batch] = server.rss()?;
        if run.is_jvm {
            heap[batch - 1] = live_heap(run.pid)?;
        }
    }
    if run.is_jvm {
        result.live_heap = Some(heap);
    }
    result.create_rate = (2 * run.znodes) as f64 / created.as_secs_f64();
    admin.close().await?;
    Ok(result)
}

/// Deletes what [`measure`] created, so that the load runs on the tree it
/// would have had without it.
pub async fn remove(run: &MemoryRun) -> Result<(), String> {
    for batch in 1..=2 {
        on_batch(run, batch, Action::Delete).await?;
    }
    let mut admin = Conn::open(run.client, &run.connect, 0).await?;
    for i in 0..CREATORS {
        admin.delete(&format!("/mem/w{i}")).await?;
    }
    admin.delete("/mem").await?;
    admin.close().await
}

async fn create_batch(run: &MemoryRun, batch: usize) -> Result<(), String> {
    on_batch(run, batch, Action::Create).await
}

#[derive(Clone, Copy)]
enum Action {
    Create,
    Delete,
}

/// Creates or deletes the `znodes` nodes `/mem/w<i>/b<batch>-<j>`, split
/// over the creators.
async fn on_batch(run: &MemoryRun, batch: usize, action: Action) -> Result<(), String> {
    let run = Arc::new(run.clone());
    let mut creators = JoinSet::new();
    for i in 0..CREATORS {
        let run = run.clone();
        creators.spawn(async move {
            let mut conn = Conn::open(run.client, &run.connect, i).await?;
            let data = vec![b'm'; run.data_bytes];
            for j in (i..run.znodes).step_by(CREATORS) {
                let path = format!("/mem/w{i}/b{batch}-{j:07}");
                match action {
                    Action::Create => conn.create(&path, &data).await?,
                    Action::Delete => conn.delete(&path).await?,
                }
            }
            conn.close().await
        });
    }
    while let Some(joined) = creators.join_next().await {
        joined.map_err(|e| format!("a creator's task failed: {e}"))??;
    }
    Ok(())
}

/// Live heap of JVM `pid` after a full GC, in bytes: the `used` of each
/// generation `jcmd <pid> GC.heap_info` lists.
fn live_heap(pid: u32) -> Result<u64, String> {
    jcmd(pid, "GC.run")?;
    parse_heap_used(&jcmd(pid, "GC.heap_info")?)
        .ok_or_else(|| format!("jcmd {pid} GC.heap_info: no generation's `used` found"))
}

fn jcmd(pid: u32, command: &str) -> Result<String, String> {
    let mut child = Command::new("jcmd")
        .args([pid.to_string().as_str(), command])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("running jcmd (a JDK tool): {e}"))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > JCMD_LIMIT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("jcmd {pid} {command}: no answer in {JCMD_LIMIT:?}"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("jcmd {pid} {command}: {e}")),
        }
    }
    let output = child
        .wait_with_output()
        .map_err(|e| format!("jcmd {pid} {command}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "jcmd {pid} {command} exited with {}",
            output.status
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Sums `used NK` over the heap's generation lines (Serial:
/// `def new generation total 4928K, used 1334K [...]`, `tenured generation
/// ...`; G1: `garbage-first heap total ..., used ...`). Metaspace is not heap.
fn parse_heap_used(text: &str) -> Option<u64> {
    let mut total = None;
    for line in text.lines() {
        let line = line.trim();
        if !(line.contains("generation") || line.starts_with("garbage-first heap")) {
            continue;
        }
        let used = line.split("used ").nth(1)?;
        let kib: u64 = used.split('K').next()?.trim().parse().ok()?;
        *total.get_or_insert(0) += kib * 1024;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_gc_heap_used_is_summed_over_generations() {
        let text = "12345:\n def new generation   total 4928K, used 1334K [0x1, 0x2, 0x3)\n  \
                    eden space 4416K,  30% used [0x1, 0x2, 0x3)\n \
                    tenured generation   total 10944K, used 3421K [0x1, 0x2, 0x3)\n \
                    Metaspace       used 19224K, committed 19456K, reserved 1114112K\n";
        assert_eq!(parse_heap_used(text), Some((1334 + 3421) * 1024));
        assert_eq!(parse_heap_used("12345:\nno heap here\n"), None);
    }
}
