//! Writing through a shared pointer without a locked instruction when it
//! is not shared.
//!
//! The simulator keeps its parts behind `Arc`s so that a copied world
//! shares them (see `world::cow`), and writes through `Arc::make_mut`,
//! which copies a part that another world still holds. In a random run
//! nothing is shared after the first write, yet `make_mut` asks with an
//! atomic compare-and-swap every time — a locked instruction, some twenty
//! cycles, several times a step. [`cow_mut`] asks with a plain load first
//! and takes the locked path only when the part may be shared.
//!
//! A plain load of the strong count cannot see a `Weak` being upgraded
//! into a second strong pointer meanwhile (nor one made and left behind by
//! another pointer that then goes), which is why `make_mut` locks the weak
//! count first. So `cow_mut` is for values that never have a `Weak`: the
//! private `Arc`s of the tree, the server and the copy-on-write vector,
//! none of which this crate lends out or downgrades. (The checker's
//! `SystemState::monitors` is public, so a user could hold a `Weak` of it: it
//! stays on `make_mut`.)

use std::sync::atomic::{fence, Ordering};
use std::sync::Arc;

/// `Arc::make_mut`, minus the atomic read-modify-write when `arc` is the
/// only pointer to its value.
///
/// # Safety
///
/// No `Weak` of the value may exist, now or while the returned borrow
/// lives: the caller never downgrades it and lends the `Arc` to no code
/// that could.
#[inline]
pub(crate) unsafe fn cow_mut<T: Clone>(arc: &mut Arc<T>) -> &mut T {
    if Arc::strong_count(arc) == 1 {
        // Pairs with the release decrement of any other `Arc` of this
        // value that was dropped, as `Arc::drop` and `Arc::get_mut` do:
        // their last uses happen before our writes.
        fence(Ordering::Acquire);
        // SAFETY: we hold the only strong pointer (through `&mut`, so no
        // one can clone it while the borrow lives), and by the contract
        // there is no `Weak` that could be upgraded into another. So no
        // other reference to the value exists while the returned borrow
        // of `arc` lives: what `get_mut` checks, without its lock.
        unsafe { &mut *Arc::as_ptr(arc).cast_mut() }
    } else {
        copy_out(arc)
    }
}

/// The shared case, out of line: it copies the value, once per part and
/// per copied world, and its code would crowd the callers' hot loops.
#[cold]
#[inline(never)]
fn copy_out<T: Clone>(arc: &mut Arc<T>) -> &mut T {
    Arc::make_mut(arc)
}

#[cfg(test)]
mod tests {
    use super::*;

    // SAFETY (every call below): no test makes a `Weak`.

    #[test]
    fn writes_in_place_when_alone_and_copies_when_shared() {
        let mut alone = Arc::new(vec![1]);
        let before = Arc::as_ptr(&alone);
        let written = unsafe { cow_mut(&mut alone) };
        written.push(2);
        assert_eq!(Arc::as_ptr(&alone), before, "not shared: written in place");
        assert_eq!(*alone, vec![1, 2]);

        let mut shared = Arc::new(vec![1]);
        let other = Arc::clone(&shared);
        let written = unsafe { cow_mut(&mut shared) };
        written.push(2);
        assert_eq!(*other, vec![1], "the other holder keeps its value");
        assert_eq!(*shared, vec![1, 2]);
        assert!(!Arc::ptr_eq(&shared, &other));
    }

    /// Another thread reads the value and drops its pointer; once the
    /// count says we are alone, we write in place. Without the acquire
    /// fence the write would race with that read: run it under Miri
    /// (`cargo +nightly miri test -p zksim --lib cow_mut`), whose race
    /// detector sees it (explorers do hand states between threads).
    #[test]
    fn writes_after_another_thread_let_go() {
        let mut mine = Arc::new(vec![0u64; 4]);
        let theirs = Arc::clone(&mine);
        let reader = std::thread::spawn(move || theirs.iter().sum::<u64>());
        while Arc::strong_count(&mine) > 1 {
            std::thread::yield_now();
        }
        let before = Arc::as_ptr(&mine);
        let written = unsafe { cow_mut(&mut mine) };
        written[0] = 7;
        assert_eq!(Arc::as_ptr(&mine), before, "alone again: written in place");
        assert_eq!(reader.join().unwrap(), 0);
        assert_eq!(mine[0], 7);
    }
}
