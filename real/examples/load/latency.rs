//! Latencies per op kind: every sample kept (a run holds at most a few
//! hundred thousand), percentiles by sorting — exact, not bucketed.

use std::time::Duration;

/// The five ops of the workload, in the order one iteration runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpKind {
    Create,
    GetData,
    SetData,
    GetChildren,
    Delete,
}

impl OpKind {
    pub const ALL: [OpKind; 5] = [
        OpKind::Create,
        OpKind::GetData,
        OpKind::SetData,
        OpKind::GetChildren,
        OpKind::Delete,
    ];

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Create => "create",
            OpKind::GetData => "getData+watch",
            OpKind::SetData => "setData",
            OpKind::GetChildren => "getChildren+watch",
            OpKind::Delete => "delete",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Samples in microseconds, one vector per op kind.
#[derive(Clone, Debug, Default)]
pub struct Latencies {
    samples: [Vec<u32>; 5],
}

/// The figures of one set of samples.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    pub count: usize,
    pub p50_us: u32,
    pub p99_us: u32,
    pub max_us: u32,
}

impl Latencies {
    pub fn record(&mut self, kind: OpKind, took: Duration) {
        let us = u32::try_from(took.as_micros()).unwrap_or(u32::MAX);
        self.samples[kind.index()].push(us);
    }

    pub fn merge(&mut self, other: Latencies) {
        for (mine, theirs) in self.samples.iter_mut().zip(other.samples) {
            mine.extend(theirs);
        }
    }

    pub fn count(&self) -> usize {
        self.samples.iter().map(Vec::len).sum()
    }

    pub fn summary(&self, kind: OpKind) -> Summary {
        summarize(self.samples[kind.index()].clone())
    }

    pub fn overall(&self) -> Summary {
        summarize(self.samples.concat())
    }
}

/// Nearest-rank percentiles of `samples`.
fn summarize(mut samples: Vec<u32>) -> Summary {
    if samples.is_empty() {
        return Summary::default();
    }
    samples.sort_unstable();
    let rank = |p: f64| {
        let r = (p * samples.len() as f64).ceil() as usize;
        samples[r.clamp(1, samples.len()) - 1]
    };
    Summary {
        count: samples.len(),
        p50_us: rank(0.50),
        p99_us: rank(0.99),
        max_us: samples[samples.len() - 1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut l = Latencies::default();
        for us in 1..=100 {
            l.record(OpKind::GetData, Duration::from_micros(us));
        }
        let s = l.summary(OpKind::GetData);
        assert_eq!((s.count, s.p50_us, s.p99_us, s.max_us), (100, 50, 99, 100));
        assert_eq!(l.summary(OpKind::Create), Summary::default());
    }

    #[test]
    fn overall_pools_every_kind() {
        let mut a = Latencies::default();
        a.record(OpKind::Create, Duration::from_micros(10));
        let mut b = Latencies::default();
        b.record(OpKind::Delete, Duration::from_micros(30));
        a.merge(b);
        let s = a.overall();
        assert_eq!((s.count, s.p50_us, s.max_us), (2, 10, 30));
    }
}
