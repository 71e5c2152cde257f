//! Histories recorded by `zkcheck serve` (`--history FILE`), and the judges
//! that read them.
//!
//! A history is the server's whole truth about a run of an unmodified app:
//! every input the server took (so that `serve --replay-input` re-runs it
//! without clients), and what the server did with it — sessions, requests,
//! the leader's order of every transaction, replies, notifications and the
//! faults it injected. The format is [`history::Record`], one JSON object
//! per line.
//!
//! The judges (docs/JUDGES.md) stand on the leader's order:
//! - [`run::Run`]: a history indexed once; [`tree`]: the leader's tree
//!   rebuilt from its commits ("the children of /L at zxid z");
//!   [`contender`]: which children are lock contenders, in what order, who
//!   holds; [`watches`]: the watches each session has pending;
//! - [`judges`]: one module per judge, each a [`verdict::Judge`] giving a
//!   [`verdict::Verdict`] with its story ([`story`] words it);
//! - [`report`]: every applicable judge over a history, as text or JSON;
//! - [`build`]: histories written by hand for tests.

pub mod build;
pub mod contender;
pub mod history;
pub mod judges;
pub mod report;
pub mod run;
pub mod story;
pub mod tree;
pub mod verdict;
pub mod view;
pub mod watches;
