//! Every recipe by name: what `zkcheck list` prints and what a scenario's
//! `recipe = "…"` selects.
//!
//! Recipes are gathered in one enum, [`AnyRecipe`], so that a world of mixed
//! or chosen-at-runtime recipes is still a plain `Clone + Hash + Eq` value
//! (no trait objects in the model). Adding a recipe is one line in the
//! `registry!` invocation at the bottom. A user's own set of recipes is
//! the same kind of enum, written by the public [`recipe_set!`] macro.

use zksim::{Client, Tick};

use crate::{AppEvent, Workload};

/// What a recipe is for; tells the checker which monitors apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Exclusive lock.
    Lock,
    /// Read/write lock: `Acquired { shared }` tells which side.
    RwLock,
    /// Distributed queue: `Offered` / `Taken`.
    Queue,
    /// Leader election: `Elected` / `Abdicated`.
    Election,
}

/// Everything a recipe client is built from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RecipeParams {
    /// This client's index in the run (0-based).
    pub client: usize,
    /// How many clients the run has (all groups together).
    pub clients: usize,
    /// The recipe's root node (e.g. `/lock`); created by the recipe if missing.
    pub root: String,
    /// This client's work (its `[[clients]]` group's, else the scenario's).
    pub workload: Workload,
    /// The index of this client's `[[clients]]` group, in file order (0
    /// when the scenario has no groups).
    pub group: usize,
    /// This client's role: its group's `role` (default: the group's
    /// recipe name), or the recipe's name when the scenario has no groups.
    /// A recipe with several roles (producer and consumer, candidate and
    /// observer) reads it instead of guessing from its index.
    pub role: String,
    /// The session timeout the ensemble grants this client, in ticks: the
    /// scenario's `ensemble.session_timeout` negotiated as a 3.8 server
    /// does (clamped to [2, 20] ticks, S20). Real client libraries time
    /// their own LOST from it (Curator's `ConnectionState.LOST`, kazoo's
    /// `KazooState.LOST`): a recipe that models that reset reads it here.
    pub session_timeout: Tick,
}

impl RecipeParams {
    /// Client `client` of `clients`, one group, its role `role`, the
    /// default ensemble's session timeout (20 ticks): what a driver
    /// outside a scenario (the real-server driver, the lock handle) builds
    /// a client from. Set `session_timeout` to the one a real server
    /// negotiated when it is known.
    pub fn new(
        client: usize,
        clients: usize,
        root: impl Into<String>,
        workload: Workload,
        role: impl Into<String>,
    ) -> Self {
        RecipeParams {
            client,
            clients,
            root: root.into(),
            workload,
            group: 0,
            role: role.into(),
            session_timeout: zksim::world::MAX_SESSION_TIMEOUT,
        }
    }
}

/// A recipe: a sans-IO client that reports [`AppEvent`]s.
///
/// This is all the checker needs of a recipe written outside this crate:
/// how to build client `params.client` of a run, and what the recipe is for
/// (its [`Family`] decides which properties can be judged). What it must
/// emit for each check to judge it is the event contract, in
/// [`crate::event`] (docs/EVENTS.md): `ResourceWrite { fence }` for
/// `fenced-mutex`, a fence that is the granting node's czxid for `owner`,
/// `Elected` and its epoch for elections.
pub trait Recipe: Client<Event = AppEvent> {
    /// What this recipe is for; tells the checker which monitors apply.
    const FAMILY: Family;

    /// The name scenarios and replay tokens give this recipe. A token made
    /// from one recipe type is refused by another, so override it with a
    /// stable name if tokens must outlive a rename of the type (the default,
    /// [`std::any::type_name`], may also change between compiler versions).
    fn name() -> &'static str {
        std::any::type_name::<Self>()
    }

    fn new(params: &RecipeParams) -> Self;

    /// Whether a waiting client is seen in a line before it acquires: it
    /// emits `Enqueued` while it still waits (a sequential node, say). A
    /// recipe whose clients are enqueued only in the step that grants them
    /// the lock (the naive lock's one node) says `false`, and the checker
    /// then refuses what could never fire on it: a hard `fifo` (nobody can
    /// be overtaken in a line nobody stands in) and a fault aimed at the
    /// `queued` role. The default, `true`, refuses nothing.
    const WAITS_IN_LINE: bool = true;
}

/// What a run's clients are built from: one [`Recipe`] type (a set of one),
/// or [`AnyRecipe`], every registered recipe chosen by the scenario's
/// `recipe` name. The checker is generic over this, so a user's own recipe
/// runs through the same explorers, monitors, shrinker and tokens as the
/// registered ones, and the model stays a plain `Clone + Hash + Eq` value.
pub trait RecipeSet: Client<Event = AppEvent> + Send + Sync + 'static {
    /// The family of the recipe called `name`; `None` if the set has no such recipe.
    fn family_of(name: &str) -> Option<Family>;
    /// Client `params.client` of the recipe called `name`.
    fn build(name: &str, params: &RecipeParams) -> Option<Self>;
    /// The recipe names this set answers to, for error messages.
    fn names() -> Vec<&'static str>;
    /// [`Recipe::WAITS_IN_LINE`] of the recipe called `name` (`true`, which
    /// refuses nothing, for a set that does not say).
    fn waits_in_line(name: &str) -> bool {
        let _ = name;
        true
    }
}

impl<R: Recipe + Send + Sync + 'static> RecipeSet for R {
    fn family_of(name: &str) -> Option<Family> {
        (name == R::name()).then_some(R::FAMILY)
    }
    fn build(name: &str, params: &RecipeParams) -> Option<Self> {
        (name == R::name()).then(|| R::new(params))
    }
    fn names() -> Vec<&'static str> {
        vec![R::name()]
    }
    fn waits_in_line(_: &str) -> bool {
        R::WAITS_IN_LINE
    }
}

impl RecipeSet for AnyRecipe {
    fn family_of(name: &str) -> Option<Family> {
        find(name).map(|r| r.family)
    }
    fn build(name: &str, params: &RecipeParams) -> Option<Self> {
        find(name).map(|r| (r.build)(params))
    }
    fn names() -> Vec<&'static str> {
        RECIPES.iter().map(|r| r.name).collect()
    }
    fn waits_in_line(name: &str) -> bool {
        find(name).is_none_or(|r| r.waits_in_line)
    }
}

/// One line of `zkcheck list`.
#[derive(Clone, Copy, Debug)]
pub struct RecipeInfo {
    /// The name scenarios use.
    pub name: &'static str,
    pub family: Family,
    /// [`Recipe::WAITS_IN_LINE`].
    pub waits_in_line: bool,
    /// Where it comes from: `zkcheck` for our own recipes, or the seed article (e.g. `seed 004`).
    pub origin: &'static str,
    /// One sentence: what it does and, for a port, what bug it is known for.
    pub summary: &'static str,
    pub build: fn(&RecipeParams) -> AnyRecipe,
}

/// Look a recipe up by name.
pub fn find(name: &str) -> Option<&'static RecipeInfo> {
    RECIPES.iter().find(|r| r.name == name)
}

macro_rules! registry {
    ($( $variant:ident($ty:ty) = $name:literal, $origin:literal, $summary:literal; )*) => {
        /// Any registered recipe (enum dispatch keeps the world a plain value).
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum AnyRecipe { $( $variant($ty), )* }

        $crate::__client_dispatch!(AnyRecipe { $( $variant ),* });

        /// All recipes, in `zkcheck list` order.
        pub static RECIPES: &[RecipeInfo] = &[ $(
            RecipeInfo {
                name: $name,
                family: <$ty as Recipe>::FAMILY,
                waits_in_line: <$ty as Recipe>::WAITS_IN_LINE,
                origin: $origin,
                summary: $summary,
                build: |p| AnyRecipe::$variant(<$ty as Recipe>::new(p)),
            },
        )* ];
    };
}

/// A recipe set of your own: an enum over your recipe types (and other
/// sets), with [`Client`] and [`RecipeSet`] written for you, so that one
/// run mixes several recipe types (a producer and a consumer, a candidate
/// and an observer: `[[clients]]` groups name them) and your own `zkcheck`
/// binary (`zkcheck_cli::command::main_for::<YourSet>()`) checks and
/// replays them.
///
/// ```
/// use zkrecipes::{lock::SequentialLock, queue::{QueueConsumer, QueueProducer}, AnyRecipe, RecipeSet};
///
/// zkrecipes::recipe_set! {
///     /// The recipes of my project.
///     pub enum MyRecipes {
///         Producer(QueueProducer),
///         Consumer(QueueConsumer),
///         // A set nests: every registered recipe too, under its own name.
///         Registered(AnyRecipe),
///     }
/// }
///
/// assert!(MyRecipes::names().contains(&"queue-producer"));
/// assert!(MyRecipes::family_of("sequential").is_some());
/// ```
///
/// Each member is a [`Recipe`] (a set of one, named by
/// [`Recipe::name`]) or a [`RecipeSet`]; a name is looked up in member
/// order, so the first member that knows it builds it. Every member must
/// be `Send + Sync + 'static`, as the checker runs sets on many threads.
#[macro_export]
macro_rules! recipe_set {
    ($(#[$meta:meta])* $vis:vis enum $set:ident { $( $variant:ident($ty:ty) ),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        $vis enum $set { $( $variant($ty), )+ }

        $crate::__client_dispatch!($set { $( $variant ),+ });

        impl $crate::RecipeSet for $set {
            fn family_of(name: &str) -> ::std::option::Option<$crate::Family> {
                $(
                    if let ::std::option::Option::Some(f) = <$ty as $crate::RecipeSet>::family_of(name) {
                        return ::std::option::Option::Some(f);
                    }
                )+
                ::std::option::Option::None
            }
            fn build(name: &str, params: &$crate::RecipeParams) -> ::std::option::Option<Self> {
                $(
                    if let ::std::option::Option::Some(r) = <$ty as $crate::RecipeSet>::build(name, params) {
                        return ::std::option::Option::Some($set::$variant(r));
                    }
                )+
                ::std::option::Option::None
            }
            fn names() -> ::std::vec::Vec<&'static str> {
                let mut names = ::std::vec::Vec::new();
                $( names.extend(<$ty as $crate::RecipeSet>::names()); )+
                names
            }
            // Asked of the member that builds `name`, so that a member's
            // `WAITS_IN_LINE = false` still refuses a hard `fifo`.
            fn waits_in_line(name: &str) -> bool {
                $(
                    if <$ty as $crate::RecipeSet>::family_of(name).is_some() {
                        return <$ty as $crate::RecipeSet>::waits_in_line(name);
                    }
                )+
                true
            }
        }
    };
}

/// [`Client`] for an enum whose every variant holds one client: each call
/// goes to the variant's client. Used by [`recipe_set!`] and the registry.
#[doc(hidden)]
#[macro_export]
macro_rules! __client_dispatch {
    ($set:ident { $( $variant:ident ),+ }) => {
        impl $crate::__zksim::Client for $set {
            type Event = $crate::AppEvent;
            fn start(&mut self, cx: &mut $crate::__zksim::Cx<$crate::AppEvent>) {
                match self { $( $set::$variant(r) => $crate::__zksim::Client::start(r, cx), )+ }
            }
            fn on_reply(
                &mut self,
                op: $crate::__zksim::OpId,
                reply: $crate::__zksim::Reply,
                cx: &mut $crate::__zksim::Cx<$crate::AppEvent>,
            ) {
                match self { $( $set::$variant(r) => $crate::__zksim::Client::on_reply(r, op, reply, cx), )+ }
            }
            fn on_watch(
                &mut self,
                event: $crate::__zksim::WatchedEvent,
                cx: &mut $crate::__zksim::Cx<$crate::AppEvent>,
            ) {
                match self { $( $set::$variant(r) => $crate::__zksim::Client::on_watch(r, event, cx), )+ }
            }
            fn on_session(
                &mut self,
                event: $crate::__zksim::SessionEvent,
                cx: &mut $crate::__zksim::Cx<$crate::AppEvent>,
            ) {
                match self { $( $set::$variant(r) => $crate::__zksim::Client::on_session(r, event, cx), )+ }
            }
            fn on_timer(&mut self, cx: &mut $crate::__zksim::Cx<$crate::AppEvent>) {
                match self { $( $set::$variant(r) => $crate::__zksim::Client::on_timer(r, cx), )+ }
            }
            fn is_done(&self) -> bool {
                match self { $( $set::$variant(r) => $crate::__zksim::Client::is_done(r), )+ }
            }
            fn renamed(&self, rn: &$crate::__zksim::rename::Renaming) -> ::std::option::Option<Self> {
                match self { $( $set::$variant(r) => $crate::__zksim::Client::renamed(r, rn).map($set::$variant), )+ }
            }
            fn ops_shifted(&self, base: $crate::__zksim::OpId) -> ::std::option::Option<Self> {
                match self { $( $set::$variant(r) => $crate::__zksim::Client::ops_shifted(r, base).map($set::$variant), )+ }
            }
        }
    };
}

// One line per recipe:
//   Variant(Type) = "name", "origin", "summary";   (the family is the type's `Recipe::FAMILY`)
registry! {
    Idle(crate::idle::Idle) = "idle", "zkcheck", "Does nothing and finishes at once (a placeholder for tests of the checker itself).";
    Naive(crate::lock::NaiveLock) = "naive", "zkcheck", "One ephemeral lock node; every waiter watches it and races to recreate it (correct, but a herd).";
    Sequential(crate::lock::SequentialLock) = "sequential", "zkcheck", "ZooKeeper's predecessor-watch lock with guid-tagged nodes, re-listing and session handling (the reference).";
    RwLock(crate::lock::RwLock) = "rwlock", "zkcheck", "ZooKeeper's read/write lock: readers wait for the next lower writer only (client i is a writer when i % 3 == 0).";
    SequentialNoRecheck(crate::lock::flaws::SequentialNoRecheck) = "sequential-no-recheck", "zkcheck", "Flawed (W3): takes the lock when its predecessor goes, without re-listing; breaks mutual exclusion.";
    SequentialIgnoreSession(crate::lock::flaws::SequentialIgnoreSession) = "sequential-ignore-session", "zkcheck", "Flawed (W5): ignores Disconnected/Expired and keeps holding; breaks belief-level mutual exclusion.";
    SequentialWatchLowest(crate::lock::flaws::SequentialWatchLowest) = "sequential-watch-lowest", "zkcheck", "Flawed (W6): every waiter watches the lowest node; each release wakes them all (herd).";
    SequentialBlindRetry(crate::lock::flaws::SequentialBlindRetry) = "sequential-blind-retry", "zkcheck", "Flawed (W4): recreates after ConnectionLoss without looking for its first node; the orphan blocks everyone, itself included (liveness).";
    SequentialStringSort(crate::lock::flaws::SequentialStringSort) = "sequential-string-sort", "zkcheck", "Flawed (W1): sorts guid-tagged names as strings; a later client can jump the holder (mutual exclusion, FIFO).";
    SequentialAdoptAny(crate::lock::flaws::SequentialAdoptAny) = "sequential-adopt-any", "zkcheck", "Latent flaw: on a retry adopts any node with its client tag, of any session. Harmless where the old session has ended: ZooKeeper never shows a fresh session its old session's nodes (S39); it would bite a client that opens a new session while the old one lives.";
    SequentialForgetRelease(crate::lock::flaws::SequentialForgetRelease) = "sequential-forget-release", "zkcheck", "Flawed: forgets its node when the release's delete fails with ConnectionLoss; the node lives on with the session and its own next node waits behind it (liveness, leaks).";
    Election(crate::election::Election) = "election", "zkcheck", "Predecessor-watch leader election (the lowest node leads; a leader abdicates on Disconnected/Expired); its epoch is its node's czxid.";
    ElectionIgnoreSession(crate::election::ElectionIgnoreSession) = "election-ignore-session", "zkcheck", "Flawed: a leader that never watches its own session keeps leading after it expired (election, owner; fenced holds).";
    QueueProducer(crate::queue::QueueProducer) = "queue-producer", "zkcheck", "Queue producer (mix with consumers in [[clients]] groups): offers its items as sequential nodes; after a lost create reply finds its item by tag.";
    QueueConsumer(crate::queue::QueueConsumer) = "queue-consumer", "zkcheck", "Queue consumer: takes the lowest item with one multi (delete + receipt), and after a lost reply reads its receipt to know whether it took it.";
    QueueConsumerForgetTake(crate::queue::QueueConsumerForgetTake) = "queue-consumer-forget-take", "zkcheck", "Flawed queue consumer: a take whose reply was lost counts as not taken; an applied take loses the item (queue, liveness).";
    NaiveNoRewatch(crate::lock::flaws::NaiveNoRewatch) = "naive-no-rewatch", "zkcheck", "Flawed (W2): waits for a watch when exists says the lock node is gone; the last waiter waits forever.";
    SequentialPoll(crate::lock::sequential::SequentialPollLock) = "sequential-poll", "zkcheck", "The sequential lock without watches: a waiter lists the children again every tick and takes the lock when its node is the lowest (correct; a reachable cycle of polls always ends).";
    SequentialPollDefer(crate::lock::flaws::SequentialPollDefer) = "sequential-poll-defer", "zkcheck", "Flawed: polls like sequential-poll but takes the lock only when its node is the only one; two contenders defer to each other for ever (liveness, found as a lasso: a cycle of polls without progress).";
    SequentialUnwrap(crate::lock::flaws::SequentialUnwrap) = "sequential-unwrap", "zkcheck", "Flawed: unwraps every reply, so the first ConnectionLoss panics in the client (the checker reports it as a no-panic violation).";
    SeedOuYangLock(crate::seeds::ouyang::OuYangMutex) = "seed001-ouyang-lock", "seed 001", "Predecessor-watch lock that re-lists after each wakeup; after a ConnectionLoss on create it passes a bare child name to getData and gives up (liveness), and ignores session loss (mutex).";
    SeedOuYangLockKeep(crate::seeds::ouyang::OuYangMutexKeepSession) = "seed001-ouyang-lock-keep", "seed 001", "seed001-ouyang-lock in a program that keeps its ZooKeeper session when lock() throws (the lock's zk belongs to its owner): an applied create whose reply was lost leaves a live orphan that jams the line (liveness).";
    SeedOuYangRwLock(crate::seeds::ouyang::OuYangRwLock) = "seed001-ouyang-rwlock", "seed 001", "The same code with read-/write- nodes (odd clients read); same ConnectionLoss and session-loss bugs as seed001-ouyang-lock.";
    SeedApacheWriteLock(crate::seeds::apache_writelock::ApacheWriteLock) = "seed003-apache-writelock", "seed 003", "Apache WriteLock as printed: ZNodeName sorts by the x-<sessionId> prefix first, so a later client with a string-smaller session id acquires beside the holder (mutex); a reused node after ConnectionLoss gets a bare id and never acquires (liveness).";
    SeedArticleWriteLock(crate::seeds::apache_writelock::ArticleWriteLock) = "seed002-writelock", "seed 002", "The article's fixed WriteLock (sequence-only ZNodeName, full-path id): a predecessor gone before exists() leaves it waiting on a watch that never fires (liveness); unlock does not retry a lost delete; ignores Expired (mutex).";
    SeedArticleWriteLockKeep(crate::seeds::apache_writelock::ArticleWriteLockKeep) = "seed002-writelock-keep", "seed 002", "seed002-writelock in a program that keeps its ZooKeeper session when lock() or unlock() throws: unlock() sends its delete once, so a delete lost with the connection leaves a live node that jams the line for the session's life (liveness).";
    SeedQueueTake(crate::seeds::apache_queue::TakeQueue) = "seed002-queue", "seed 002", "Apache DistributedQueue (even clients offer, odd take()): getData then delete with no ConnectionLoss handling, so a lost delete reply loses an item and kills the consumer; a Disconnected opens take()'s latch and the consumer dies (queue: an item lost, or a consumer died with items left).";
    SeedQueuePoll(crate::seeds::apache_queue::PollQueue) = "seed002-queue-poll", "seed 002", "Apache DistributedQueue with peek()/poll() consumers that sleep when empty: the same lost-item bug on a ConnectionLoss after delete (queue).";
    SeedQueueRetry(crate::seeds::apache_queue::RetryingTakeQueue) = "seed002-queue-retry", "seed 002", "Apache DistributedQueue with take() consumers whose programs retry a call that threw: an offer applied but unanswered is offered again and handed out twice; a delete applied but unanswered loses the item (queue).";
    SeedCuratorMutex(crate::seeds::curator::mutex::CuratorMutex) = "seed002-curator-mutex", "seed 002", "Curator InterProcessMutex as the article uses it: protected names survive ConnectionLoss, but the holder never looks at connection state, so an expired holder keeps believing (mutex under pauses; fenced exclusion holds).";
    SeedCuratorLeader(crate::seeds::curator::leader::CuratorLeader) = "seed002-curator-leader", "seed 002", "Curator LeaderSelector with autoRequeue: abdicates on SUSPENDED/LOST, so two leaders need a leader paused past its session timeout without seeing Disconnected (election).";
    SeedZkLock004(crate::seeds::zklock004::ZkLock004) = "seed004-zklock", "seed 004", "Sorts names as strings, watches the previous node with the default watcher, and after one wakeup assumes the lock without listing again (mutex after a waiter leaves; waits forever when exists finds nothing).";
}
