//! `zkcheck calibrate`: measure a real ZooKeeper and print the `[timing]`
//! section that makes the timing model ([`crate::timing`]) match it.
//!
//! The measurements are `zkrecipes::real::calibrate`'s (idle round trips,
//! per-request cost with every request in flight, per-notification cost of
//! a burst); this turns them into parameters:
//! - `read_us`, `write_us`: the saturated cost per read and per write;
//! - `notify_us`: the burst's cost per notification;
//! - `latency_us`: half of what an idle read's round trip adds to its service;
//! - `commit_delay_us`: how much longer an idle write's round trip is than
//!   a read's, beyond the difference of their service times;
//! - `peer_latency_us` = `latency_us`, `apply_us` = `read_us` (a standalone
//!   server has no followers to measure; loopback is loopback);
//! - `client_us` = 0 (the client side's cost is inside the saturated
//!   figures); `jitter_percent` and `fault_interval_us` keep their defaults.
//!
//! The defaults of [`Timing`] come from one such run (its date is in their docs).

use zkrecipes::real::calibrate::{calibrate, Calibration};
use zkrecipes::real::{TestServer, Unavailable};

use crate::cli::{bad_input, say, CalibrateArgs, Exit, Io};
use crate::timing::Timing;

/// How many sessions watch the node of the notification burst.
pub const WATCHERS: usize = 32;

/// The timing model's parameters from a calibration.
pub fn timing_from(c: &Calibration) -> Timing {
    let round = |v: f64| v.round().max(0.0) as u64;
    let defaults = Timing::default();
    Timing {
        latency_us: round(c.latency_us()),
        peer_latency_us: round(c.latency_us()),
        read_us: round(c.read_us),
        write_us: round(c.write_us),
        commit_delay_us: round(c.commit_delay_us()),
        notify_us: round(c.notify_us),
        apply_us: round(c.read_us),
        client_us: 0,
        shared_client_cpu: defaults.shared_client_cpu,
        jitter_percent: defaults.jitter_percent,
        fault_interval_us: defaults.fault_interval_us,
    }
}

/// Each parameter's median over several calibrations (the upper middle
/// one for an even count).
pub fn median_timing(all: &[Timing]) -> Timing {
    let median = |f: fn(&Timing) -> u64| {
        let mut v: Vec<u64> = all.iter().map(f).collect();
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
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
        ..Timing::default()
    }
}

/// The command.
pub fn cli(args: &CalibrateArgs, io: &mut Io) -> Exit {
    let samples = match crate::limits::CALIBRATE_SAMPLES.check(args.samples) {
        Ok(n) => n as usize,
        Err(e) => return bad_input(io, e),
    };
    let (server, connect_string) = match &args.server {
        Some(address) => (None, address.clone()),
        None => match TestServer::start() {
            Ok(server) => {
                let cs = server.connect_string();
                (Some(server), cs)
            }
            Err(e @ Unavailable::NotInstalled { .. }) => {
                say!(
                    io,
                    "INCOMPLETE: nothing measured: {e} (install Debian's `zookeeper` or set {})",
                    zkrecipes::real::CLASSPATH_ENV
                );
                return Exit::Incomplete;
            }
            Err(e) => {
                say!(io, "INCOMPLETE: nothing measured: {e}");
                return Exit::Incomplete;
            }
        },
    };
    let repeat = match crate::limits::CALIBRATE_REPEAT.check(args.repeat) {
        Ok(n) => n as usize,
        Err(e) => return bad_input(io, e),
    };
    let mut measured = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        match calibrate(&connect_string, samples, WATCHERS) {
            Ok(c) => measured.push(c),
            Err(e) => {
                say!(io, "INCOMPLETE: {e}");
                return Exit::Incomplete;
            }
        }
    }
    drop(server);
    let _ = writeln!(
        io.out,
        "# zkcheck calibrate on {connect_string}: {samples} requests per figure, a burst to \
         {WATCHERS} watchers, {repeat} measurement(s), the median of each parameter"
    );
    for c in &measured {
        let _ = writeln!(
            io.out,
            "# idle round trip: read {:.0} µs, write {:.0} µs; saturated: read {:.1} µs, \
             write {:.1} µs; notification {:.1} µs",
            c.round_trip_read_us, c.round_trip_write_us, c.read_us, c.write_us, c.notify_us,
        );
    }
    let timing = median_timing(&measured.iter().map(timing_from).collect::<Vec<_>>());
    let _ = write!(io.out, "{}", timing.to_toml_section());
    if let Some(path) = &args.out {
        if let Err(e) = std::fs::write(path, timing.to_toml_section()) {
            return bad_input(io, format!("cannot write {}: {e}", path.display()));
        }
        say!(io, "wrote {}", path.display());
    }
    Exit::Ok
}

use std::io::Write as _;
