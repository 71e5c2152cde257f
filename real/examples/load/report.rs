//! The benchmark's figures as tables: throughput and overall latency per
//! cell, latency per op kind, memory per server.

use std::time::Duration;

use crate::latency::{OpKind, Summary};
use crate::memory::MemoryResult;
use crate::table::Table;
use crate::workload::CellResult;

pub struct CellReport {
    pub target: String,
    pub round: usize,
    pub sessions: usize,
    /// The cell's wall time: setup, warm-up, window, clean-up.
    pub wall: Duration,
    /// CPU time the server used during the cell (all its threads).
    pub server_cpu: Option<Duration>,
    /// Time the server's threads, runnable, waited for a CPU during the
    /// cell (summed over threads): what the machine's other load cost it.
    pub server_wait: Option<Duration>,
    /// CPU time this process (the clients) used during the cell.
    pub client_cpu: Duration,
    pub result: CellResult,
}

pub struct MemoryReport {
    pub target: String,
    pub peak_rss: u64,
    pub memory: Option<MemoryResult>,
}

pub struct Report {
    pub machine: String,
    pub settings: String,
    pub cells: Vec<CellReport>,
    pub memory: Vec<MemoryReport>,
    pub load_after: String,
}

impl CellReport {
    fn ops(&self) -> usize {
        self.result.latencies.count()
    }

    fn ops_per_sec(&self) -> f64 {
        self.ops() as f64 / self.result.window.as_secs_f64()
    }

    /// Microseconds of CPU per counted op (the window's ops; warm-up and
    /// setup CPU are included in the numerator, so this is an upper bound).
    fn cpu_per_op(&self, cpu: Duration) -> String {
        match self.ops() {
            0 => "-".to_string(),
            ops => format!("{:.0}", cpu.as_micros() as f64 / ops as f64),
        }
    }

    pub fn one_line(&self) -> String {
        let o = self.result.latencies.overall();
        format!(
            "{} N={} round {}: {:.0} ops/s, p50 {} p99 {} max {}",
            self.target,
            self.sessions,
            self.round + 1,
            self.ops_per_sec(),
            ms(o.p50_us),
            ms(o.p99_us),
            ms(o.max_us)
        )
    }
}

impl Report {
    pub fn new(machine: String, settings: String) -> Report {
        Report {
            machine,
            settings,
            cells: Vec::new(),
            memory: Vec::new(),
            load_after: String::new(),
        }
    }

    fn throughput_table(&self) -> Table {
        let mut t = Table::new(&[
            "server",
            "N",
            "round",
            "ops",
            "ops/s",
            "p50 ms",
            "p99 ms",
            "max ms",
            "watch events/s",
            "server CPU µs/op",
            "client CPU µs/op",
            "cell wall s",
            "server CPU s",
            "server waited for a CPU s",
        ]);
        for c in &self.cells {
            let o = c.result.latencies.overall();
            t.row(vec![
                c.target.clone(),
                c.sessions.to_string(),
                (c.round + 1).to_string(),
                c.ops().to_string(),
                format!("{:.0}", c.ops_per_sec()),
                ms(o.p50_us),
                ms(o.p99_us),
                ms(o.max_us),
                format!(
                    "{:.0}",
                    c.result.events as f64 / c.result.window.as_secs_f64()
                ),
                c.server_cpu
                    .map_or("-".to_string(), |cpu| c.cpu_per_op(cpu)),
                c.cpu_per_op(c.client_cpu),
                secs(Some(c.wall)),
                secs(c.server_cpu),
                secs(c.server_wait),
            ]);
        }
        t
    }

    fn per_op_table(&self) -> Table {
        let mut t = Table::new(&[
            "server", "N", "round", "op", "ops", "p50 ms", "p99 ms", "max ms",
        ]);
        for c in &self.cells {
            for kind in OpKind::ALL {
                let s: Summary = c.result.latencies.summary(kind);
                t.row(vec![
                    c.target.clone(),
                    c.sessions.to_string(),
                    (c.round + 1).to_string(),
                    kind.name().to_string(),
                    s.count.to_string(),
                    ms(s.p50_us),
                    ms(s.p99_us),
                    ms(s.max_us),
                ]);
            }
        }
        t
    }

    fn memory_table(&self) -> Table {
        let mut t = Table::new(&[
            "server",
            "peak RSS MB",
            "znodes held",
            "RSS after setup MB",
            "RSS after batch 1 MB",
            "RSS after batch 2 MB",
            "bytes/znode (RSS, batch 2)",
            "bytes/znode (RSS, both)",
            "bytes/znode (live heap)",
            "creates/s",
        ]);
        for m in &self.memory {
            let mut row = vec![m.target.clone(), mb(m.peak_rss)];
            match &m.memory {
                Some(r) => row.extend([
                    (2 * r.znodes).to_string(),
                    mb(r.rss[0]),
                    mb(r.rss[1]),
                    mb(r.rss[2]),
                    format!("{:.0}", r.rss_per_znode()),
                    format!("{:.0}", r.rss_per_znode_both()),
                    r.heap_per_znode()
                        .map_or("-".to_string(), |b| format!("{b:.0}")),
                    format!("{:.0}", r.create_rate),
                ]),
                None => row.extend(std::iter::repeat_n("-".to_string(), 8)),
            }
            t.row(row);
        }
        t
    }

    pub fn text(&self) -> String {
        format!(
            "machine: {}; after: {}\nsettings: {}\n\nthroughput and latency (all ops):\n{}\n\
             latency per op:\n{}\nmemory:\n{}",
            self.machine,
            self.load_after,
            self.settings,
            self.throughput_table().text(),
            self.per_op_table().text(),
            self.memory_table().text()
        )
    }

    pub fn markdown(&self) -> String {
        format!(
            "Machine: {}; load average after: {}.\n\nSettings: {}.\n\n\
             Throughput and latency (all ops):\n\n{}\nLatency per op:\n\n{}\nMemory:\n\n{}",
            self.machine,
            self.load_after,
            self.settings,
            self.throughput_table().markdown(),
            self.per_op_table().markdown(),
            self.memory_table().markdown()
        )
    }
}

fn secs(d: Option<Duration>) -> String {
    d.map_or("-".to_string(), |d| format!("{:.2}", d.as_secs_f64()))
}

fn ms(us: u32) -> String {
    format!("{:.2}", f64::from(us) / 1000.0)
}

fn mb(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}
