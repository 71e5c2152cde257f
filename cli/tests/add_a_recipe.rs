//! docs/DESIGN.md's "How to add a recipe", followed step by step with a
//! toy lock, so that the section cannot drift from what the code needs:
//!
//! 1. the recipe's state machine: a [`zksim::Client`] whose events are
//!    [`AppEvent`]s, plus [`Recipe`] (its family, its name, how a client
//!    is built from [`RecipeParams`]);
//! 2. its entry in a recipe set: in-tree one line of the `registry!` list
//!    (`recipes/src/registry.rs`), here the public `recipe_set!` that
//!    writes the same code, nesting every registered recipe beside it;
//! 3. a scenario naming it, checked with `Check` both ways: the correct
//!    lock holds, its twin with the bug is caught, and the caught run's
//!    token replays to the same violation.
//!
//! The toy: whoever creates the ephemeral node `<root>/lock` holds the
//! lock; the others `exists`-watch it and try again when it goes. Its twin
//! forgets the watch (`exists` without one): the last waiter waits for a
//! notification that never comes (`liveness`, like `naive-no-rewatch`).

use zkcheck::check::Check;
use zkcheck::monitor::Property;
use zkcheck::scenario::Scenario;
use zkrecipes::lock::rounds::{Due, Rounds};
use zkrecipes::{AnyRecipe, AppEvent, Family, Recipe, RecipeParams, RecipeSet};
use zksim::{
    Client, CreateMode, Cx, EventType, Op, OpId, Reply, Response, SessionEvent, WatchedEvent,
    ZkError,
};

/// The correct toy lock.
type ToyLock = Toy<true>;
/// Its twin, which waits on `exists` without a watch.
type ToyLockNoWatch = Toy<false>;

// Step 2: the recipe's entry in a set (in-tree: a line of `registry!`).
zkrecipes::recipe_set! {
    /// The toy locks and every registered recipe, as `AnyRecipe` would
    /// hold the toy after its registry line.
    enum ToyRecipes {
        Toy(ToyLock),
        NoWatch(ToyLockNoWatch),
        Registered(AnyRecipe),
    }
}

/// Where a client is in its attempt (the round loop is [`Rounds`]'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Stage {
    Idle,
    Creating(OpId),
    Checking(OpId),
    Watching,
    Releasing(OpId),
}

/// Step 1: the state machine. `WATCH` is whether its `exists` sets a watch.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Toy<const WATCH: bool> {
    root: String,
    rounds: Rounds,
    stage: Stage,
}

impl<const WATCH: bool> Recipe for Toy<WATCH> {
    const FAMILY: Family = Family::Lock;
    /// One node, so nobody waits in a line before acquiring (a hard `fifo`
    /// is refused for it, as for `naive`).
    const WAITS_IN_LINE: bool = false;

    fn name() -> &'static str {
        if WATCH {
            "toy-lock"
        } else {
            "toy-lock-no-watch"
        }
    }

    fn new(p: &RecipeParams) -> Self {
        Toy {
            root: p.root.clone(),
            rounds: Rounds::new(p.workload, false),
            stage: Stage::Idle,
        }
    }
}

impl<const WATCH: bool> Toy<WATCH> {
    fn node(&self) -> String {
        format!("{}/lock", self.root)
    }

    fn request(&mut self, cx: &mut Cx<AppEvent>) {
        self.rounds.begin(cx);
        self.try_create(cx);
    }

    fn try_create(&mut self, cx: &mut Cx<AppEvent>) {
        let op = cx.send(Op::Create {
            path: self.node(),
            data: Vec::new(),
            mode: CreateMode::Ephemeral,
        });
        self.stage = Stage::Creating(op);
    }
}

impl<const WATCH: bool> Client for Toy<WATCH> {
    type Event = AppEvent;

    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        cx.send(Op::Create {
            path: self.root.clone(),
            data: Vec::new(),
            mode: CreateMode::Persistent,
        });
        self.rounds.on_start(cx);
        if self.rounds.should_start() {
            self.request(cx);
        }
    }

    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        match (self.stage, reply) {
            (Stage::Creating(o), Ok(Response::Created { stat, .. })) if o == op => {
                // The fence is the granting node's czxid (the event contract).
                cx.emit(AppEvent::Enqueued { seq: None });
                self.stage = Stage::Idle;
                self.rounds.acquired(stat.czxid, cx);
            }
            (Stage::Creating(o), Err(ZkError::NodeExists)) if o == op => {
                let op = cx.send(Op::Exists {
                    path: self.node(),
                    watch: WATCH,
                });
                self.stage = Stage::Checking(op);
            }
            (Stage::Checking(o), Ok(Response::Exists(found))) if o == op => match found {
                Some(_) => self.stage = Stage::Watching,
                None => self.try_create(cx),
            },
            (Stage::Releasing(o), _) if o == op => self.stage = Stage::Idle,
            _ => {}
        }
    }

    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) {
        if self.stage == Stage::Watching && event.kind == EventType::NodeDeleted {
            self.try_create(cx);
        }
    }

    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<AppEvent>) {
        self.rounds.on_session(event, cx);
        if self.rounds.should_start() {
            self.request(cx);
        }
    }

    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        match self.rounds.on_timer(cx) {
            Due::Release { .. } => {
                let op = cx.send(Op::Delete {
                    path: self.node(),
                    version: -1,
                });
                self.stage = Stage::Releasing(op);
                self.rounds.released(cx);
            }
            Due::NextRound if self.rounds.should_start() => self.request(cx),
            Due::NextRound | Due::Stale => {}
        }
    }

    fn is_done(&self) -> bool {
        self.rounds.is_done()
    }
}

/// Step 3: a scenario file naming the recipe, as `scenarios/*.toml` do.
fn scenario(recipe: &str) -> Scenario<ToyRecipes> {
    scenario_judging(recipe, r#"["mutex", "fenced-mutex", "liveness", "leaks"]"#)
        .unwrap_or_else(|e| panic!("{recipe}: {e}"))
}

fn scenario_judging(
    recipe: &str,
    hard: &str,
) -> Result<Scenario<ToyRecipes>, zkcheck::scenario::ScenarioError> {
    let text = format!(
        r#"
name = "{recipe}"
recipe = "{recipe}"
clients = 3
root = "/lock"

[workload]
rounds = 2
hold_ticks = 2
think_ticks = 1

[checks]
hard = {hard}
report = []
"#
    );
    Scenario::parse_as::<ToyRecipes>(&text, recipe)
}

#[test]
fn the_set_answers_to_the_toy_and_to_every_registered_recipe() {
    for (name, family) in [
        ("toy-lock", Family::Lock),
        ("toy-lock-no-watch", Family::Lock),
        ("sequential", Family::Lock),
        ("election", Family::Election),
    ] {
        assert_eq!(ToyRecipes::family_of(name), Some(family), "{name}");
    }
    assert_eq!(ToyRecipes::family_of("no-such-recipe"), None);
    let params = RecipeParams::new(0, 1, "/lock", Default::default(), "toy-lock");
    assert!(matches!(
        ToyRecipes::build("toy-lock", &params),
        Some(ToyRecipes::Toy(_))
    ));
    assert!(matches!(
        ToyRecipes::build("toy-lock-no-watch", &params),
        Some(ToyRecipes::NoWatch(_))
    ));
    // The set asks the member that builds the name: the toy's
    // `WAITS_IN_LINE = false` holds through it, so a hard `fifo` (nobody
    // stands in a line to be overtaken in) is refused, as for `naive`.
    assert!(!ToyRecipes::waits_in_line("toy-lock"));
    assert!(ToyRecipes::waits_in_line("sequential"));
    let refused = scenario_judging("toy-lock", r#"["fifo"]"#)
        .expect_err("a hard fifo on a lock without a line is refused")
        .to_string();
    assert!(refused.contains("fifo"), "{refused}");
    assert!(scenario_judging("toy-lock", r#"["mutex"]"#).is_ok());
}

#[test]
fn the_toy_lock_holds_from_a_scenario_file_and_by_type() {
    let r = Check::from_scenario(scenario("toy-lock"))
        .random(300)
        .assert_holds();
    assert_eq!(r.schedules, 300);
    // The same recipe checked by its type alone, exhaustively, in a world
    // small enough for BFS: one server and a clock that stops at 3 ticks.
    let r = Check::<ToyLock>::new(2)
        .hard([Property::MutualExclusion, Property::FencedExclusion])
        .configure(|s| {
            s.ensemble.servers = 1;
            s.ensemble.max_time = 3;
        })
        .bfs(100)
        .assert_holds();
    assert!(
        r.distinct_states.is_some_and(|n| n > 100),
        "{:?}",
        r.distinct_states
    );
}

#[test]
fn the_toy_lock_without_its_watch_is_caught_and_its_token_replays() {
    let c = Check::from_scenario(scenario("toy-lock-no-watch"))
        .random(300)
        .assert_fails();
    assert_eq!(c.property(), Property::Liveness, "{c}");
    let token = c.token.clone().expect("a replay token");
    let again = Check::<ToyRecipes>::replay(&token).assert_fails();
    assert_eq!(again.violation, c.violation);
}
