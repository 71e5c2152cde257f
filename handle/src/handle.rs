//! [`LockHandle`]: a thread-safe, blocking lock over any registered lock
//! recipe, for Rust programs that are not async.
//!
//! A background event thread runs the recipe (wrapped in a
//! [`HandleClient`]) through the real-server driver
//! (`zkreal::drive_blocking`, its own session, its own current-thread
//! tokio runtime); callers block on the [`Handoff`]'s condition variable.
//! Any number of threads may share one handle (`&LockHandle` is `Sync`):
//! they take the lock one at a time, each acquisition going back to
//! ZooKeeper. Several handles (several sessions) compete through ZooKeeper.
//!
//! ```no_run
//! use std::time::Duration;
//! use zkhandle::LockHandle;
//!
//! let handle = LockHandle::connect("127.0.0.1:2181", "sequential", "/locks/orders")?;
//! {
//!     let guard = handle.acquire()?;
//!     // … critical section; check `guard.is_lost()` before trusting it after a long pause …
//! } // released here
//! match handle.acquire_timeout(Duration::from_millis(500)) {
//!     Ok(_guard) => { /* … */ }
//!     Err(e) => eprintln!("not now: {e}"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use zkreal::{drive_blocking, DriveConfig};
use zkrecipes::{registry, Family, RecipeParams, Workload};

use crate::client::{HandleClient, GATE};
use crate::handoff::{AcquireError, Guard, Handoff, Pending};
use crate::sync::Arc;

/// The lock, held; dropping it releases it. [`Guard::grant`] is the fence
/// token (the czxid of the node that granted it).
pub type LockGuard = Guard<i64>;

/// Why a handle could not be made.
#[derive(Debug)]
pub enum HandleError {
    /// No registered recipe has that name.
    UnknownRecipe(String),
    /// The recipe exists but is not an exclusive lock.
    NotALock { recipe: String, family: Family },
    /// The event thread could not be started.
    Spawn(std::io::Error),
}

impl std::fmt::Display for HandleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HandleError::UnknownRecipe(name) => write!(f, "no recipe named `{name}`"),
            HandleError::NotALock { recipe, family } => {
                write!(
                    f,
                    "`{recipe}` is a {family:?} recipe, not an exclusive lock"
                )
            }
            HandleError::Spawn(e) => write!(f, "could not start the event thread: {e}"),
        }
    }
}

impl std::error::Error for HandleError {}

/// See the module doc.
#[derive(Debug)]
pub struct LockHandle {
    handoff: Arc<Handoff<i64>>,
    events: Option<JoinHandle<Option<String>>>,
}

impl LockHandle {
    /// A handle on a real ZooKeeper at `connect_string`, running the
    /// registered lock recipe `recipe` under `root` (created if missing).
    /// Returns at once; the session is opened by the event thread (an
    /// acquire waits for it; if it cannot be opened, every acquire fails
    /// with `Closed` and [`LockHandle::close`] says why).
    pub fn connect(connect_string: &str, recipe: &str, root: &str) -> Result<Self, HandleError> {
        Self::connect_with(DriveConfig::new(connect_string), recipe, root)
    }

    /// [`LockHandle::connect`] with the driver's settings (session timeout…).
    pub fn connect_with(
        mut config: DriveConfig,
        recipe: &str,
        root: &str,
    ) -> Result<Self, HandleError> {
        let (client, handoff) = steered_client(recipe, root, 0, 1)?;
        // The run lasts as long as the handle (10 years is "forever").
        config.run_timeout = Duration::from_secs(10 * 365 * 24 * 3600);
        let events = std::thread::Builder::new()
            .name(format!("zkhandle-{recipe}"))
            .spawn({
                let handoff = Arc::clone(&handoff);
                move || {
                    let outcome = drive_blocking(vec![client], &config);
                    handoff.close();
                    outcome.err().map(|e| e.to_string())
                }
            })
            .map_err(HandleError::Spawn)?;
        Ok(LockHandle {
            handoff,
            events: Some(events),
        })
    }

    /// A handle whose event thread is not its own (see [`crate::sim`]).
    pub(crate) fn detached(handoff: Arc<Handoff<i64>>) -> Self {
        LockHandle {
            handoff,
            events: None,
        }
    }

    /// Ask for the lock without blocking yet; drop the [`Pending`] to cancel.
    pub fn request(&self) -> Result<Pending<i64>, AcquireError> {
        Handoff::request(&self.handoff)
    }

    /// Block until the lock is held.
    pub fn acquire(&self) -> Result<LockGuard, AcquireError> {
        self.request()?.wait()
    }

    /// Block until the lock is held or `timeout` passes (`TimedOut`; the
    /// attempt is cancelled and leaves nothing behind).
    pub fn acquire_timeout(&self, timeout: Duration) -> Result<LockGuard, AcquireError> {
        self.request()?.wait_until(Some(Instant::now() + timeout))
    }

    /// Close the session (waiting callers get `Closed`, a held guard is
    /// lost) and wait for the event thread. Returns why the driver could not
    /// run, if it could not.
    pub fn close(mut self) -> Option<String> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Option<String> {
        self.handoff.close();
        self.events.take().and_then(|t| t.join().ok().flatten())
    }
}

/// Client `client` of `clients` running the registered lock recipe
/// `recipe` under `root`, steered through a fresh handoff.
pub(crate) fn steered_client(
    recipe: &str,
    root: &str,
    client: usize,
    clients: usize,
) -> Result<(HandleClient, Arc<Handoff<i64>>), HandleError> {
    let info =
        registry::find(recipe).ok_or_else(|| HandleError::UnknownRecipe(recipe.to_string()))?;
    if info.family != Family::Lock {
        return Err(HandleError::NotALock {
            recipe: recipe.to_string(),
            family: info.family,
        });
    }
    let params = RecipeParams {
        group: 0,
        role: info.name.into(),
        session_timeout: zksim::world::MAX_SESSION_TIMEOUT,
        client,
        clients,
        root: root.to_string(),
        workload: Workload {
            rounds: u32::MAX,
            hold_ticks: GATE,
            think_ticks: GATE,
        },
    };
    let handoff = Arc::new(Handoff::new());
    let steered = HandleClient::new((info.build)(&params), Arc::clone(&handoff));
    Ok((steered, handoff))
}

impl Drop for LockHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}
