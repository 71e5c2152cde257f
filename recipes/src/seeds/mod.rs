//! Faithful ports of the seed articles' recipes (summarised, with their
//! decisive lines, in `docs/SEEDS.md`), bugs included, so that the checker
//! can show what goes wrong with them.
//!
//! A port behaves like the article's code, not like a correct recipe: where
//! the article sorts whole names as strings, so does the port; where it
//! ignores `Disconnected`, so does the port. Java's blocking idioms become
//! sans-IO steps: a synchronous call sequence is a chain of sent ops and
//! reply handlers; `wait()`/`notify()` or a semaphore is "wait for the watch
//! event"; a retry loop with `Thread.sleep` is "resend after a timer".
//! [`app`] holds the program around the recipe that the articles leave out,
//! and its stated exception policy ([`app::Caller`]); where the verdict
//! depends on it a port is registered once per caller (`-keep`, `-retry`).
//!
//! Each module's doc has a table "article line → port behaviour" and the
//! bugs the port is expected to show.
//!
//! ## Expected verdicts (for the checker's table)
//!
//! Session ids are `0x0100_0000_0000_0000 + n` in the simulator, so client 0
//! has the string-smallest session id. "measured" = `tests/seeds_world.rs`
//! (3 clients, 2 rounds, seeded random schedules); `docs/VERDICTS.md` has
//! the checker's current verdicts and figures.
//!
//! | port | breaks | shortest exposing scenario |
//! |---|---|---|
//! | `seed001-ouyang-lock`, `-rwlock` | mutex (belief) under expiry; liveness: an expired *waiter* waits forever; `GaveUp` after a plain `ConnectionLoss` on create (bare name to `getData`) | 2 clients, expire the holder (mutex) or the waiter (stuck); 2 clients, drop the connection while the create is in flight (`GaveUp`); without faults all hold (measured) |
//! | `seed003-apache-writelock` | mutex and fifo with **no faults**; liveness (bare id after a reused node; vanished predecessor) | 2 clients: client 1 creates and acquires, then client 0 creates and acquires beside it (measured 71/100 runs broken) |
//! | `seed002-writelock` | liveness with **no faults**; mutex only under expiry | 2 clients: A holds, B lists, A deletes, B's `exists` finds nothing → B waits forever (measured 17/100 runs stuck) |
//! | `seed002-writelock-keep` | liveness: `unlock()`'s one delete lost with the connection leaves the node in the live session | 2 clients, a drop aimed at the releasing client (`[faults.aim] connection_drops = "releaser"`) |
//! | `seed002-queue` | queue (lost item / unoffered item), liveness (consumer dies), herd | 1 producer + 1 consumer: drop the consumer's connection while its `delete` is in flight after applying (item never `Taken`); consumer idle on an empty queue + a drop kills it; 2 consumers waiting on an empty queue: one offer wakes both |
//! | `seed002-queue-poll` | queue under drops | as above, without the herd and the idle-consumer death |
//! | `seed002-curator-mutex` | mutex (belief) only when the holder's session expires; everything else holds | 2 clients, expire the holder (measured 30/300 runs with one expiry) |
//! | `seed002-curator-leader` | election holds unless a leader outlives its session without seeing `Disconnected`; liveness: an orphan protected node when the background find-and-delete reads a lagging follower | 2 clients + pause the leader ≥ session timeout (election; measured 45/400 runs with one pause, 0/200 with two drops); drop during the protected create and reconnect to a follower that has not applied it (stuck, seen with 2 drops) |
//! | `seed004-zklock` | mutex after a *waiter* leaves (W3) without its holder expiring; liveness (vanished predecessor, no faults); the root-creation race makes concurrent starters give up (no faults) | 3 clients: A holds, B waits on A, C on B, expire B → C acquires beside A (measured 2/400 runs); 2 clients starting together: one gets `NodeExists` on the root and gives up |

pub mod apache_queue;
pub mod apache_writelock;
pub mod app;
pub mod curator;
pub mod ouyang;
pub mod zklock004;
pub mod znode_name;
