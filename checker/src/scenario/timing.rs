//! The timing model's parameters: what a scenario file's `[timing]` table
//! holds. The timed runs that read them (the timed scheduler, `compare`'s
//! model) are the front end's (`zkcheck-cli`'s `timing` module); the
//! engine only parses, validates and carries them with the scenario.

use serde::{Deserialize, Serialize};

/// The timing model's parameters, in model microseconds (`[timing]`).
///
/// The defaults were measured by `cargo run --release -p zkreal --example
/// calibrate` (five
/// measurements, each parameter's median) on 2026-11-23 against Debian's
/// ZooKeeper 3.8 (standalone, loopback, the test server's configuration
/// with `forceSync=no`, clients on one tokio thread as in the real-server
/// example) on the project's shared two-core machine: see
/// `docs/SCENARIOS.md`. Run to run, on that busy machine, each parameter
/// varied by up to a factor of two. A
/// request's cost at saturation includes the client side's share (one
/// thread for every client), which is where the real example's bottleneck
/// partly is; the model charges it to the server's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Timing {
    /// One-way message latency between a client and its server.
    pub latency_us: u64,
    /// One-way latency between the leader and a follower (a follower
    /// applies a committed transaction this long after the commit).
    pub peer_latency_us: u64,
    /// A server's service time for one read (`exists`, `getData`,
    /// `getChildren`, `sync`, a session's close).
    pub read_us: u64,
    /// The service time of one write (`create`, `delete`, `setData`,
    /// `multi`), ordered and applied.
    pub write_us: u64,
    /// How much later than a read a write is answered, beyond its service
    /// time: the pipeline a write goes through (proposal, log, commit)
    /// delays its reply and the notifications it triggers without keeping
    /// the server from serving the requests behind it.
    pub commit_delay_us: u64,
    /// A server's cost per watch notification it sends (a release that
    /// wakes a herd keeps the server busy this long per waiter).
    pub notify_us: u64,
    /// A follower's cost to apply one committed transaction.
    pub apply_us: u64,
    /// A client's cost to handle one message (reply or event) or timer.
    pub client_us: u64,
    /// Whether every client runs on one thread (one CPU queue for all of
    /// them, as `zkreal`'s `lock` and `compare` examples run them on one
    /// tokio thread) rather than each on its own. Matters only with a
    /// `client_us` above 0; calibration folds the client side into the
    /// saturated service times, so the default is `false`.
    pub shared_client_cpu: bool,
    /// Each latency and service time is drawn uniformly within ± this
    /// percentage of its value (seeded), so that seeds differ.
    pub jitter_percent: u64,
    /// Mean model time between two injected faults (faults arrive as a
    /// Poisson process; only when the scenario's budget has faults).
    pub fault_interval_us: u64,
}

impl Default for Timing {
    /// Measured by `zkreal`'s `calibrate` example (2026-11-23, see the
    /// type's docs).
    fn default() -> Self {
        Timing {
            latency_us: 57,
            peer_latency_us: 57,
            read_us: 22,
            write_us: 28,
            commit_delay_us: 22,
            notify_us: 18,
            apply_us: 22,
            client_us: 0,
            shared_client_cpu: false,
            jitter_percent: 20,
            fault_interval_us: 200_000,
        }
    }
}

impl Timing {
    /// Every parameter within its documented limit ([`crate::limits`]).
    pub fn validate(&self) -> Result<(), String> {
        use crate::limits as l;
        for (name, v) in [
            ("timing.latency_us", self.latency_us),
            ("timing.peer_latency_us", self.peer_latency_us),
            ("timing.read_us", self.read_us),
            ("timing.write_us", self.write_us),
            ("timing.commit_delay_us", self.commit_delay_us),
            ("timing.notify_us", self.notify_us),
            ("timing.apply_us", self.apply_us),
            ("timing.client_us", self.client_us),
        ] {
            l::TIMING_US.named(name).check(v)?;
        }
        l::JITTER_PERCENT.check(self.jitter_percent)?;
        l::FAULT_INTERVAL_US.check(self.fault_interval_us)?;
        Ok(())
    }

    /// The parameters from one measurement of a real server (µs):
    /// - `read_us`, `write_us`: the cost per request with many in flight
    ///   (a queue drains at one request per service time);
    /// - `notify_us`: the cost per notification of a burst;
    /// - `latency_us`: half of what an idle read's round trip adds to its
    ///   service time;
    /// - `commit_delay_us`: how much longer an idle write's round trip is
    ///   than a read's, beyond the difference of their service times;
    /// - `peer_latency_us` = `latency_us` and `apply_us` = `read_us` (a
    ///   standalone server has no follower to measure; loopback is
    ///   loopback); the rest keep their defaults (`client_us` = 0: the
    ///   client side's cost is inside the saturated figures).
    pub fn calibrated(
        round_trip_read_us: f64,
        round_trip_write_us: f64,
        read_us: f64,
        write_us: f64,
        notify_us: f64,
    ) -> Timing {
        let us = |v: f64| v.round().max(0.0) as u64;
        let latency = ((round_trip_read_us - read_us) / 2.0).max(0.0);
        let delay = round_trip_write_us - round_trip_read_us - (write_us - read_us);
        Timing {
            latency_us: us(latency),
            peer_latency_us: us(latency),
            read_us: us(read_us),
            write_us: us(write_us),
            commit_delay_us: us(delay),
            notify_us: us(notify_us),
            apply_us: us(read_us),
            client_us: 0,
            ..Timing::default()
        }
    }

    /// Each parameter's median over several calibrations (the upper middle
    /// one for an even count; the defaults for none).
    pub fn median(all: &[Timing]) -> Timing {
        if all.is_empty() {
            return Timing::default();
        }
        let median = |f: fn(&Timing) -> u64| {
            let mut v: Vec<u64> = all.iter().map(f).collect();
            v.sort_unstable();
            v[v.len() / 2]
        };
        Timing {
            latency_us: median(|t| t.latency_us),
            peer_latency_us: median(|t| t.peer_latency_us),
            read_us: median(|t| t.read_us),
            write_us: median(|t| t.write_us),
            commit_delay_us: median(|t| t.commit_delay_us),
            notify_us: median(|t| t.notify_us),
            apply_us: median(|t| t.apply_us),
            client_us: median(|t| t.client_us),
            jitter_percent: median(|t| t.jitter_percent),
            fault_interval_us: median(|t| t.fault_interval_us),
            shared_client_cpu: all[all.len() / 2].shared_client_cpu,
        }
    }

    /// The `[timing]` section that sets every parameter to these values.
    pub fn to_toml_section(&self) -> String {
        let body = toml::to_string(self).unwrap_or_default();
        format!("[timing]\n{body}")
    }
}
