//! A set of futures that yields their outputs in the order they were *woken*.
//!
//! Why not `FuturesUnordered`: the driver must hand each client its replies
//! and watch events in the order its connection delivered them.
//! `zookeeper-client` delivers every reply and every notification through its
//! own one-shot channel, from one session task that reads the socket in
//! order; each `send` wakes the receiver at once. So the order of *wakes* is
//! the connection order, provided that every receiver has registered its
//! waker before its value can arrive. This set guarantees both halves:
//!
//! * [`WakeSet::push`] polls a new future once, right away, with its own
//!   waker. For a `zookeeper-client` call that first poll is also what puts
//!   the request on the wire queue, so requests go out in push order.
//! * each future's waker appends the future's key to one FIFO; [`WakeSet::next`]
//!   polls in that order, with no fairness heuristics that could reorder or
//!   postpone a first poll.
//!
//! A future that is already complete at its first poll is queued at that
//! moment, which is after every wake that happened before it: still in order.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// The FIFO of woken keys and the waker of whoever awaits [`WakeSet::next`].
#[derive(Default)]
struct Shared {
    inner: Mutex<Queue>,
}

#[derive(Default)]
struct Queue {
    woken: VecDeque<u64>,
    parent: Option<Waker>,
}

impl Shared {
    fn enqueue(&self, key: u64) {
        let mut queue = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        queue.woken.push_back(key);
        if let Some(parent) = queue.parent.take() {
            parent.wake();
        }
    }
    fn dequeue(&self, parent: &Waker) -> Option<u64> {
        let mut queue = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let key = queue.woken.pop_front();
        if key.is_none() {
            queue.parent = Some(parent.clone());
        }
        key
    }
}

/// One future's waker: queues its key once per wake-up.
struct EntryWaker {
    key: u64,
    queued: AtomicBool,
    shared: Arc<Shared>,
}

impl Wake for EntryWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        if !self.queued.swap(true, Ordering::AcqRel) {
            self.shared.enqueue(self.key);
        }
    }
}

enum Slot<T> {
    Pending {
        future: BoxFuture<T>,
        waker: Arc<EntryWaker>,
    },
    /// Completed at its first poll; handed out when its key comes up.
    Done(T),
}

/// Futures whose outputs come out in wake order. See the module docs.
pub(crate) struct WakeSet<T> {
    slots: BTreeMap<u64, Slot<T>>,
    next_key: u64,
    shared: Arc<Shared>,
}

impl<T> Default for WakeSet<T> {
    fn default() -> Self {
        WakeSet {
            slots: BTreeMap::new(),
            next_key: 0,
            shared: Arc::default(),
        }
    }
}

impl<T> WakeSet<T> {
    /// How many futures have not yielded their output yet.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Add a future and poll it once, now.
    pub(crate) fn push(&mut self, future: impl Future<Output = T> + Send + 'static) {
        let key = self.next_key;
        self.next_key += 1;
        let waker = Arc::new(EntryWaker {
            key,
            queued: AtomicBool::new(false),
            shared: self.shared.clone(),
        });
        let mut future: BoxFuture<T> = Box::pin(future);
        match poll_entry(&mut future, &waker) {
            Poll::Ready(output) => {
                self.slots.insert(key, Slot::Done(output));
                self.shared.enqueue(key);
            }
            Poll::Pending => {
                self.slots.insert(key, Slot::Pending { future, waker });
            }
        }
    }

    /// The output of the earliest-woken future that is ready.
    /// Pends forever when the set is empty (callers race it with other work).
    pub(crate) fn next(&mut self) -> impl Future<Output = T> + '_ {
        std::future::poll_fn(move |cx| self.poll_next(cx))
    }

    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<T> {
        while let Some(key) = self.shared.dequeue(cx.waker()) {
            let Some(slot) = self.slots.remove(&key) else {
                continue; // a late wake of a future that already finished
            };
            match slot {
                Slot::Done(output) => return Poll::Ready(output),
                Slot::Pending { mut future, waker } => match poll_entry(&mut future, &waker) {
                    Poll::Ready(output) => return Poll::Ready(output),
                    Poll::Pending => {
                        self.slots.insert(key, Slot::Pending { future, waker });
                    }
                },
            }
        }
        Poll::Pending
    }
}

fn poll_entry<T>(future: &mut BoxFuture<T>, waker: &Arc<EntryWaker>) -> Poll<T> {
    // Clear before polling so that a wake during or after this poll queues again.
    waker.queued.store(false, Ordering::Release);
    let task_waker = Waker::from(waker.clone());
    future.as_mut().poll(&mut Context::from_waker(&task_waker))
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_channel_shim::oneshot;

    /// A minimal one-shot channel (std only) to test wake ordering without
    /// depending on futures-channel's internals.
    mod futures_channel_shim {
        pub mod oneshot {
            use std::future::Future;
            use std::pin::Pin;
            use std::sync::{Arc, Mutex};
            use std::task::{Context, Poll, Waker};

            type Cell<T> = Arc<Mutex<(Option<T>, Option<Waker>)>>;
            pub struct Sender<T>(Cell<T>);
            pub struct Receiver<T>(Cell<T>);
            pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
                let cell = Arc::new(Mutex::new((None, None)));
                (Sender(cell.clone()), Receiver(cell))
            }
            impl<T> Sender<T> {
                pub fn send(self, value: T) {
                    let mut cell = self.0.lock().unwrap();
                    cell.0 = Some(value);
                    if let Some(waker) = cell.1.take() {
                        waker.wake();
                    }
                }
            }
            impl<T> Future for Receiver<T> {
                type Output = T;
                fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
                    let mut cell = self.0.lock().unwrap();
                    match cell.0.take() {
                        Some(value) => Poll::Ready(value),
                        None => {
                            cell.1 = Some(cx.waker().clone());
                            Poll::Pending
                        }
                    }
                }
            }
        }
    }

    fn block_on_next<T>(set: &mut WakeSet<T>) -> Option<T> {
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        match set.poll_next(&mut cx) {
            Poll::Ready(v) => Some(v),
            Poll::Pending => None,
        }
    }

    #[test]
    fn outputs_follow_wake_order_not_push_order() {
        let mut set = WakeSet::default();
        let (tx_a, rx_a) = oneshot::channel();
        let (tx_b, rx_b) = oneshot::channel();
        let (tx_c, rx_c) = oneshot::channel();
        set.push(rx_a);
        set.push(rx_b);
        set.push(rx_c);
        assert_eq!(block_on_next(&mut set), None, "nothing woken yet");
        tx_c.send("c");
        tx_a.send("a");
        tx_b.send("b");
        assert_eq!(block_on_next(&mut set), Some("c"));
        assert_eq!(block_on_next(&mut set), Some("a"));
        assert_eq!(block_on_next(&mut set), Some("b"));
        assert_eq!(block_on_next(&mut set), None);
        assert_eq!(set.len(), 0);
    }

    #[test]
    fn a_future_ready_at_push_comes_after_earlier_wakes() {
        let mut set = WakeSet::default();
        let (tx_a, rx_a) = oneshot::channel();
        set.push(rx_a);
        tx_a.send(1);
        set.push(std::future::ready(2));
        assert_eq!(block_on_next(&mut set), Some(1));
        assert_eq!(block_on_next(&mut set), Some(2));
    }

    #[test]
    fn push_polls_at_once() {
        let polled = Arc::new(AtomicBool::new(false));
        let flag = polled.clone();
        let mut set = WakeSet::default();
        set.push(async move {
            flag.store(true, Ordering::SeqCst);
            std::future::pending::<()>().await
        });
        assert!(
            polled.load(Ordering::SeqCst),
            "first poll happens inside push"
        );
        assert_eq!(set.len(), 1);
    }
}
