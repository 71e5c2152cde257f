//! The event contract, both ways: `fenced-mutex` judges the resource's
//! writes (`ResourceWrite { fence }`), so a lock that never writes cannot
//! fail it and a check that asks for it is refused, not called ok; the
//! crate's lock (through `Rounds`) writes, holds it, and its broken twin,
//! writing under the holder's fence, breaks it.

use own_recipe::{BrokenLock, MyLock};
use zkcheck::check::Check;
use zkcheck::monitor::Property;
use zkrecipes::{AppEvent, Family, Recipe, RecipeParams};
use zksim::{Client, Cx, OpId, Reply, SessionEvent, SessionRequest, TimerRequest, WatchedEvent};

/// The crate's lock with its `ResourceWrite`s taken out: a lock that
/// forgot the protected resource (everything else as `MyLock` does).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Unfenced(MyLock);

impl Unfenced {
    /// Run `handle` on the inner lock against a scratch context, then pass
    /// everything it did on to `cx`, but its resource writes.
    fn relay(
        &mut self,
        cx: &mut Cx<AppEvent>,
        handle: impl FnOnce(&mut MyLock, &mut Cx<AppEvent>),
    ) {
        let now = cx.now();
        let mut inner = Cx::new(now, cx.session_id(), cx.next_op());
        handle(&mut self.0, &mut inner);
        let out = inner.into_parts();
        for (_, op) in out.sent {
            cx.send(op);
        }
        for e in out.events {
            if !matches!(e, AppEvent::ResourceWrite { .. }) {
                cx.emit(e);
            }
        }
        match out.timer {
            TimerRequest::At(at) => cx.after(at.saturating_sub(now)),
            TimerRequest::Cancel => cx.cancel_timer(),
            TimerRequest::Keep => {}
        }
        match out.session_request {
            Some(SessionRequest::Close) => cx.close_session(),
            Some(SessionRequest::Reopen) => cx.reopen_session(),
            None => {}
        }
    }
}

impl Recipe for Unfenced {
    const FAMILY: Family = Family::Lock;
    fn name() -> &'static str {
        "own-unfenced-lock"
    }
    fn new(p: &RecipeParams) -> Self {
        Unfenced(MyLock::new(p))
    }
}

impl Client for Unfenced {
    type Event = AppEvent;
    fn start(&mut self, cx: &mut Cx<AppEvent>) {
        self.relay(cx, |l, cx| l.start(cx));
    }
    fn on_reply(&mut self, op: OpId, reply: Reply, cx: &mut Cx<AppEvent>) {
        self.relay(cx, |l, cx| l.on_reply(op, reply, cx));
    }
    fn on_watch(&mut self, event: WatchedEvent, cx: &mut Cx<AppEvent>) {
        self.relay(cx, |l, cx| l.on_watch(event, cx));
    }
    fn on_session(&mut self, event: SessionEvent, cx: &mut Cx<AppEvent>) {
        self.relay(cx, |l, cx| l.on_session(event, cx));
    }
    fn on_timer(&mut self, cx: &mut Cx<AppEvent>) {
        self.relay(cx, |l, cx| l.on_timer(cx));
    }
    fn is_done(&self) -> bool {
        self.0.is_done()
    }
}

#[test]
#[should_panic(
    expected = "the hard check `fenced-mutex` judged nothing: no run of 200 emitted `ResourceWrite"
)]
fn a_lock_that_never_writes_the_resource_is_refused_not_called_ok() {
    Check::<Unfenced>::new(3)
        .rounds(2)
        .hard([Property::FencedExclusion])
        .random(200)
        .assert_holds();
}

#[test]
fn the_refusal_names_the_check_and_the_missing_event_and_the_lock_otherwise_holds() {
    let check = Check::<Unfenced>::new(3)
        .rounds(2)
        .hard([Property::FencedExclusion, Property::MutualExclusion])
        .random(200);
    let verdict = check.run();
    assert!(verdict.counterexample.is_none());
    let unjudged = check.unjudged(&verdict);
    assert_eq!(unjudged.len(), 1, "{unjudged:?}");
    assert!(unjudged[0].contains("`fenced-mutex`"), "{}", unjudged[0]);
    // Without the check it cannot judge, the rest holds (mutex judged
    // the acquisitions it does report).
    Check::<Unfenced>::new(3)
        .rounds(2)
        .hard([Property::MutualExclusion])
        .random(200)
        .assert_holds();
}

#[test]
fn the_lock_writes_under_its_fence_and_holds_fenced_mutex() {
    let check = Check::<MyLock>::new(3)
        .rounds(2)
        .hard([Property::FencedExclusion, Property::Owner])
        .random(300);
    let r = check.assert_holds();
    assert!(r.figures.accepted_writes > 0, "{:?}", r.figures);
}

#[test]
fn the_broken_twin_writes_under_the_holders_fence_and_fenced_mutex_catches_it() {
    let c = Check::<BrokenLock>::new(3)
        .rounds(2)
        .hard([Property::FencedExclusion])
        .random(500)
        .assert_fails();
    assert_eq!(c.property(), Property::FencedExclusion);
    assert!(c.violation.explanation.contains("the same fence"), "{c}");
    // `owner` catches it at the acquisition itself: the node that grants
    // the belief belongs to another session.
    let c = Check::<BrokenLock>::new(3)
        .rounds(2)
        .hard([Property::Owner])
        .random(500)
        .assert_fails();
    assert_eq!(c.property(), Property::Owner);
}
