//! Events in words, without the state they were taken in: for violation
//! explanations and trace lines. Kept apart from [`crate::trace`] so that
//! the model can name the step that panicked without depending on the
//! trace printer, which reads models.

use zksim::{Event, Fault};

/// An event in words, without the state it was taken in (violation
/// explanations): `c2 receives`, `s1 applies`, `tick`, `FAULT c0 crashes`.
pub fn event_words(event: &Event) -> String {
    match event {
        Event::Request { client } => format!("the server of c{client} takes its next request"),
        Event::Receive { client } => format!("c{client} receives"),
        Event::Timer { client } => format!("c{client} timer fires"),
        Event::Connect { client, server } => format!("c{client} connects to s{server}"),
        Event::Apply { server } => format!("s{server} applies"),
        Event::Tick => "tick".to_string(),
        Event::Fault(f) => format!("FAULT {}", fault_words(f)),
    }
}

pub fn fault_words(f: &Fault) -> String {
    match f {
        Fault::DropConnection { client } => format!("connection of c{client} drops"),
        Fault::Silence { client } => {
            format!("c{client} is cut off from every server until its session expires")
        }
        Fault::KillSession { client } => format!("the ensemble kills the session of c{client}"),
        Fault::Pause { client } => format!("c{client} pauses"),
        Fault::Crash { client } => format!("c{client} crashes"),
        Fault::Partition { server } => format!("s{server} is cut off from the leader"),
        Fault::Heal { server } => format!("s{server} heals"),
    }
}
