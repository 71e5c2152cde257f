//! Histories recorded by `zkcheck serve` (`--history FILE`), and the judges
//! that read them.
//!
//! A history is the server's whole truth about a run of an unmodified app:
//! every input the server took (so that `serve --replay-input` re-runs it
//! without clients), and what the server did with it — sessions, requests,
//! the leader's order of every transaction, replies, notifications and the
//! faults it injected. The format is [`history::Record`], one JSON object
//! per line (docs/HISTORY.md).

pub mod history;
