//! Memory of exhaustive search per visited state, on the reference
//! scenario of docs/PERFORMANCE.md (`lock-sequential-small.toml` with 3
//! clients and no drop), with and without the reductions. Issue 9's target:
//! ≤ 100 bytes per visited state on BFS without reductions.
//!
//! Prints, per search (each in a fresh process): distinct states, the peak of bytes allocated
//! (counted by a wrapper around mimalloc, the CLI's allocator) and the
//! peak resident set (`VmHWM`, reset before each search), each also per
//! visited state. The resident figure includes the process at rest and
//! the allocator's slack; the allocated one is what the search holds.
//!
//! `cargo bench -p zkcheck-cli --bench bfs_memory`

mod reference;

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use zkcheck::explore::exhaustive::Exhaustive;
use zkcheck::explore::Explorer;
use zkcheck::progress::Progress;

/// mimalloc, counting the bytes allocated now and at their peak.
struct Counting;

static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = ALLOCATED.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call is forwarded unchanged to mimalloc; only counters are
// updated beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { zkcheck_cli::allocator::Mimalloc.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        unsafe { zkcheck_cli::allocator::Mimalloc.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        ALLOCATED.fetch_sub(layout.size(), Relaxed);
        unsafe { zkcheck_cli::allocator::Mimalloc.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            grew(new_size - layout.size());
        } else {
            ALLOCATED.fetch_sub(layout.size() - new_size, Relaxed);
        }
        unsafe { zkcheck_cli::allocator::Mimalloc.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The process's peak resident set in bytes (`None` off Linux).
fn peak_resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Start counting the resident peak from now (Linux: `clear_refs` 5).
fn reset_peak_resident() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The searches measured: name, symmetry, partial-order reduction.
const SEARCHES: [(&str, bool, bool); 3] = [
    ("bfs, no reductions", false, false),
    ("bfs, por", false, true),
    ("bfs, symmetry and por", true, true),
];

/// Each search runs in a fresh process (this one, re-run with the search's
/// index in `ZKCHECK_BFS_MEMORY_ONE`), so that no search inherits another's
/// resident memory.
fn main() {
    match std::env::var("ZKCHECK_BFS_MEMORY_ONE") {
        Ok(one) => measure(one.parse().expect("a search index")),
        Err(_) => {
            println!(
                "{:<24} {:>8} {:>15} {:>10} {:>14} {:>10}",
                "search", "states", "peak allocated", "per state", "peak resident", "per state"
            );
            let me = std::env::current_exe().expect("the bench's own path");
            for i in 0..SEARCHES.len() {
                let status = std::process::Command::new(&me)
                    .env("ZKCHECK_BFS_MEMORY_ONE", i.to_string())
                    .status()
                    .expect("the bench runs itself");
                assert!(status.success(), "search {i} failed");
            }
        }
    }
}

fn measure(i: usize) {
    let (name, symmetry, por) = SEARCHES[i];
    let scenario = reference::reference();
    let search = Exhaustive::bfs(200).with_symmetry(symmetry).with_por(por);
    reset_peak_resident();
    let at_rest = ALLOCATED.load(Relaxed);
    PEAK.store(at_rest, Relaxed);
    let result = search.explore(&scenario, &Progress::hidden());
    let states = result.distinct_states.unwrap_or(0).max(1);
    let allocated = (PEAK.load(Relaxed) - at_rest) as u64;
    let resident = peak_resident();
    println!(
        "{name:<24} {states:>8} {:>12} KB {:>8} B {:>11} KB {:>8} B",
        allocated / 1024,
        allocated / states,
        resident.map_or("?".into(), |r| (r / 1024).to_string()),
        resident.map_or("?".into(), |r| (r / states).to_string()),
    );
}
