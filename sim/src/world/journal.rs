//! Which client slots a step wrote: a journal a timed scheduler opens
//! around one step, so that it revisits only those clients (a run of a
//! thousand clients would otherwise rescan every slot at every step to
//! learn what one step changed).
//!
//! Thread-local rather than a field of the world: a world is a search
//! state that explorers keep by the hundred thousand, and a field would
//! cost each of them bytes for what only a timed run reads. A world
//! stepped with no journal open pays one thread-local flag read per
//! write to a slot.

use std::cell::{Cell, RefCell};

use crate::ids::ClientId;

thread_local! {
    static OPEN: Cell<bool> = const { Cell::new(false) };
    static WRITTEN: RefCell<Vec<ClientId>> = const { RefCell::new(Vec::new()) };
}

/// A write to client slot `client` (called by the slots' `index_mut`).
pub(super) fn note(client: ClientId) {
    if OPEN.get() {
        WRITTEN.with_borrow_mut(|written| written.push(client));
    }
}

/// The journal while it is open; closing it (or unwinding past it) stops
/// the noting.
pub(super) struct Journal(());

impl Journal {
    pub(super) fn open() -> Journal {
        debug_assert!(!OPEN.get(), "a slot journal is already open");
        WRITTEN.with_borrow_mut(Vec::clear);
        OPEN.set(true);
        Journal(())
    }

    /// The clients written since the journal opened, ascending, each once.
    pub(super) fn close_into(self, written: &mut Vec<ClientId>) {
        OPEN.set(false);
        written.clear();
        WRITTEN.with_borrow_mut(|noted| written.append(noted));
        written.sort_unstable();
        written.dedup();
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        OPEN.set(false);
    }
}
