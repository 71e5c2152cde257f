//! Lock handles on the simulator: the same [`LockHandle`]s, with one
//! background event thread stepping a [`zksim::World`] instead of talking to
//! a real server — for trying a recipe from threaded code without Java.
//!
//! The event thread takes the first enabled event that is not a fault or a
//! clock tick (requests, replies, applies, timers, connects, in the world's
//! deterministic order); when only the clock can move, it lets simulated
//! time advance one tick per [`WALL_PER_TICK`] of wall time, so that
//! callers (real OS threads) act between ticks. No faults are injected.
//! Unlike a checker run this is not deterministic: the callers are real
//! threads. It ends when every handle is closed and the world is quiescent.

use std::time::Duration;

use zksim::{Config, Event, World};

use crate::handle::{steered_client, HandleError, LockHandle};

/// Wall time per simulated tick when nothing else is enabled.
pub const WALL_PER_TICK: Duration = Duration::from_millis(1);

/// `handles` lock handles, each its own simulated client and session, all
/// running the registered lock recipe `recipe` under `root` in one
/// simulated ensemble built from `config` (its fault budget is not used).
pub fn simulated_handles(
    recipe: &str,
    root: &str,
    handles: usize,
    config: Config,
) -> Result<Vec<LockHandle>, HandleError> {
    let mut clients = Vec::with_capacity(handles);
    let mut handoffs = Vec::with_capacity(handles);
    for client in 0..handles {
        let (steered, handoff) = steered_client(recipe, root, client, handles)?;
        clients.push(steered);
        handoffs.push(handoff);
    }
    let config = Config {
        // The handles decide when to stop, not the clock.
        max_time: u64::MAX / 4,
        ..config
    };
    let watched = handoffs.clone();
    std::thread::Builder::new()
        .name(format!("zkhandle-sim-{recipe}"))
        .spawn(move || {
            let mut world = World::new(config, clients);
            let mut enabled = Vec::new();
            let mut log = Vec::new();
            loop {
                enabled.clear();
                world.enabled(&mut enabled);
                let busy = enabled
                    .iter()
                    .find(|e| !matches!(e, Event::Tick | Event::Fault(_)));
                match busy {
                    Some(event) => {
                        let event = event.clone();
                        world.step(&event, &mut log);
                    }
                    None if watched.iter().all(|h| h.is_closed()) && world.is_quiescent() => break,
                    None if enabled.contains(&Event::Tick) => {
                        std::thread::sleep(WALL_PER_TICK);
                        world.step(&Event::Tick, &mut log);
                    }
                    None => break,
                }
                log.clear(); // a handle may live long: keep no history
            }
            for h in &watched {
                h.close();
            }
        })
        .map_err(HandleError::Spawn)?;
    Ok(handoffs.into_iter().map(LockHandle::detached).collect())
}
