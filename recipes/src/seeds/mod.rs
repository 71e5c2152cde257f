//! Faithful ports of the seed articles' recipes (`/work/shared/seeds/`),
//! bugs included, so that the checker can show what goes wrong with them.
//!
//! A port behaves like the article's code, not like a correct recipe: where
//! the article sorts whole names as strings, so does the port; where it
//! ignores `Disconnected`, so does the port. Java's blocking idioms become
//! sans-IO steps: a synchronous call sequence is a chain of sent ops and
//! reply handlers; `wait()`/`notify()` or a semaphore is "wait for the watch
//! event"; a retry loop with `Thread.sleep` is "resend after a timer".
//! [`app`] holds the program around the recipe that the articles leave out.
//!
//! Each module's doc has a table "article line → port behaviour" and the
//! bugs the port is expected to show.

pub mod apache_queue;
pub mod apache_writelock;
pub mod app;
pub mod curator;
pub mod ouyang;
pub mod zklock004;
pub mod znode_name;
