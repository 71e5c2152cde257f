//! A recipe that panics is a bug found, not a crash of the checker.
//!
//! [`SystemState::step`](crate::state::SystemState::step) runs each step under
//! [`catch`]: a panic inside the recipe (or anything the step calls) ends the
//! run with a `no-panic` violation carrying the panic's message and place,
//! which then goes through shrinking, the trace and the replay token like any
//! other violation. The default panic hook would print a message and a
//! backtrace for every caught panic (thousands during shrinking); a hook
//! installed once stays silent for panics caught here and hands every other
//! panic to the hook that was there before.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::OnceLock;

thread_local! {
    /// Whether this thread is inside [`catch`] (its panics are ours to report).
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// Where the last caught panic happened (`file:line`), set by the hook.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

fn install_quiet_hook() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()));
                LOCATION.with(|l| *l.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

/// A panic caught by [`catch`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caught {
    pub message: String,
    /// `file:line`, when the panic said where it happened.
    pub location: Option<String>,
}

impl std::fmt::Display for Caught {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "\"{}\"", self.message)?;
        if let Some(at) = &self.location {
            write!(f, " at {at}")?;
        }
        Ok(())
    }
}

/// Run `f`, turning a panic into [`Caught`] without printing anything.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, Caught> {
    install_quiet_hook();
    let was = CATCHING.with(|c| c.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(was));
    result.map_err(|payload| Caught {
        message: message_of(payload.as_ref()),
        location: LOCATION.with(|l| l.borrow_mut().take()),
    })
}

fn message_of(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_caught_with_its_message_and_place() {
        let caught = catch(|| -> u32 { panic!("boom {}", 7) }).unwrap_err();
        assert_eq!(caught.message, "boom 7");
        assert!(
            caught
                .location
                .as_deref()
                .unwrap_or("")
                .contains("panics.rs"),
            "{caught}"
        );
        assert_eq!(catch(|| 5), Ok(5));
    }
}
