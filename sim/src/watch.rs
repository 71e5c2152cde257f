//! One server's watch tables (`server/watch/WatchManager`): one-shot,
//! per (session, path, kind), deduplicated.
//!
//! CONTRACT STUB — being written.
