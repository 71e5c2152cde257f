//! Several OS threads over several [`LockHandle`]s taking one lock in turn,
//! and what they saw — shared by the `threads` example and the real-server
//! test, so that both check the same things.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::handle::LockHandle;
use crate::handoff::AcquireError;

/// What a [`contend`] run saw.
#[derive(Clone, Debug, Default)]
pub struct Contention {
    /// Acquisitions that succeeded.
    pub acquisitions: usize,
    /// The most threads ever inside the critical section at once (1 is right).
    pub max_inside: usize,
    /// Each acquisition's fence, in the order the critical sections ran.
    pub fences: Vec<i64>,
    /// Acquisitions that failed, and why.
    pub failures: Vec<AcquireError>,
    /// Guards that reported their lock lost.
    pub lost: usize,
    /// The longest and mean wait for the lock.
    pub max_wait: Duration,
    pub mean_wait: Duration,
    pub elapsed: Duration,
}

impl Contention {
    /// Whether the fences grew strictly, critical section after critical section.
    pub fn fences_increase(&self) -> bool {
        self.fences.windows(2).all(|w| w[0] < w[1])
    }
}

/// `threads` threads per handle, each taking the lock `rounds` times (each
/// wait bounded by `timeout`) and holding it for `hold`.
pub fn contend(
    handles: &[LockHandle],
    threads: usize,
    rounds: usize,
    hold: Duration,
    timeout: Duration,
) -> Contention {
    let inside = AtomicUsize::new(0);
    let seen = Mutex::new(Contention::default());
    let waited = Mutex::new(Duration::ZERO);
    let start = Instant::now();
    std::thread::scope(|scope| {
        for handle in handles {
            for _ in 0..threads {
                scope.spawn(|| {
                    for _ in 0..rounds {
                        let asked = Instant::now();
                        match handle.acquire_timeout(timeout) {
                            Ok(guard) => {
                                let wait = asked.elapsed();
                                let now_inside = inside.fetch_add(1, Ordering::SeqCst) + 1;
                                {
                                    let mut s = seen.lock().unwrap();
                                    s.acquisitions += 1;
                                    s.max_inside = s.max_inside.max(now_inside);
                                    s.fences.push(*guard.grant());
                                    s.max_wait = s.max_wait.max(wait);
                                }
                                *waited.lock().unwrap() += wait;
                                std::thread::sleep(hold);
                                if guard.is_lost() {
                                    seen.lock().unwrap().lost += 1;
                                }
                                inside.fetch_sub(1, Ordering::SeqCst);
                                drop(guard);
                            }
                            Err(e) => seen.lock().unwrap().failures.push(e),
                        }
                    }
                });
            }
        }
    });
    let mut report = seen.into_inner().unwrap();
    report.elapsed = start.elapsed();
    if report.acquisitions > 0 {
        report.mean_wait = waited.into_inner().unwrap() / report.acquisitions as u32;
    }
    report
}
