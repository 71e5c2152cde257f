//! The timeline model: what a replayed run looks like as a sequence
//! diagram, independent of how it is drawn.
//!
//! A [`Timeline`] has one lane per client and per server, and one row per
//! step of the schedule, except that runs of clock ticks in which nothing
//! visible happens are collapsed into one row. A row holds items (arrows
//! between lanes, marks on one lane), one per line, so that nothing in the
//! drawing has to be placed around anything else. Each client's belief
//! (waiting, holding, lost) is a band along its lane. The SVG writer draws
//! this model; the HTML writer adds the per-step world snapshots.

use zksim::Tick;

use zkcheck::monitor::Property;

/// One column of the diagram.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lane {
    /// `c0`, `s1`: the names traces use.
    pub name: String,
    pub kind: LaneKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneKind {
    Client,
    Server { leader: bool },
}

/// What an arrow carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArrowKind {
    /// A server takes a client's request.
    Request,
    /// The client handles a server's reply.
    Reply,
    /// The client handles a watch notification.
    Watch,
    /// The client (re)connects to a server.
    Connect,
}

/// What a mark on one lane says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkKind {
    /// The leader ordered a transaction.
    Commit,
    /// A follower applied a transaction.
    Apply,
    /// An injected fault (drawn distinctly).
    Fault,
    /// A session ended (expired or closed): its ephemerals are gone.
    SessionEnded,
    /// A session event or an answer the client library made up itself.
    Session,
    /// The client's timer fired.
    Timer,
    /// The recipe reported something (`Requested`, `Released`, …).
    App,
    /// The recipe took the lock or leadership.
    Acquired,
    /// The recipe lost the lock or gave up.
    Lost,
}

/// One line of a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Arrow {
        from: usize,
        to: usize,
        kind: ArrowKind,
        label: String,
    },
    Mark {
        lane: usize,
        kind: MarkKind,
        label: String,
    },
    /// A line across the whole diagram (the violation).
    Banner { label: String },
}

/// One row: a step, or a run of steps that only advanced the clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// Snapshot index of the first step shown (0 is the start, step `k` is `k + 1`).
    pub first: usize,
    /// Snapshot index of the last step shown (the world the row ends in).
    pub last: usize,
    /// Simulated time after the row.
    pub time: Tick,
    /// How many ticks the row collapses (0 for an ordinary row).
    pub ticks: u32,
    pub items: Vec<Item>,
}

/// What a client believes about the lock (or leadership).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Belief {
    Idle,
    /// Asked, not yet granted.
    Waiting,
    /// Believes it holds, and its session is live.
    Holding,
    /// Believes it holds, but its session is gone: the dangerous belief.
    HoldingExpired,
    /// Noticed it lost the lock, or gave up waiting.
    Lost,
}

impl Belief {
    pub fn name(self) -> &'static str {
        match self {
            Belief::Idle => "idle",
            Belief::Waiting => "waiting",
            Belief::Holding => "holding",
            Belief::HoldingExpired => "holding, session expired",
            Belief::Lost => "lost",
        }
    }
    /// Whether the client acts as the holder (the mutex monitor's belief).
    pub fn holds(self) -> bool {
        matches!(self, Belief::Holding | Belief::HoldingExpired)
    }
}

/// A belief held over consecutive rows `from..=to` on a client's lane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Band {
    pub lane: usize,
    pub from: usize,
    pub to: usize,
    pub belief: Belief,
}

/// The broken property and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViolationMark {
    pub property: Property,
    pub explanation: String,
    /// The row that broke it (the last row for an end-of-run check).
    pub row: usize,
    /// Snapshot index of the violating step.
    pub snapshot: usize,
    /// Client lanes that believe they hold at that row (the overlap).
    pub holders: Vec<usize>,
}

/// A replayed run as a sequence diagram.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    pub title: String,
    pub lanes: Vec<Lane>,
    pub rows: Vec<Row>,
    pub bands: Vec<Band>,
    pub violation: Option<ViolationMark>,
}

impl Timeline {
    pub fn clients(&self) -> usize {
        self.lanes
            .iter()
            .filter(|l| l.kind == LaneKind::Client)
            .count()
    }
}
