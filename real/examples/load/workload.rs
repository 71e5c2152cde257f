//! The load: N sessions, each in a closed loop (one request in flight) over
//! its own node `<base>/c<i>/n`: create it, getData with a watch, setData
//! (fires the data watch), getChildren of its parent with a watch, delete it
//! (fires the child watch). Each session waits for both watch events before
//! its next iteration, so a server that loses notifications fails the run.
//!
//! Bounded: every session connects and sets up first, then all start at
//! once; ops that start in the warm-up are not counted, and a session stops
//! at the first iteration boundary after the end of the window.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::conn::{ClientKind, Conn};
use crate::latency::{Latencies, OpKind};

/// How long a session waits for a watch event, or for its setup.
const WAIT_LIMIT: Duration = Duration::from_secs(10);

/// One cell: a client, a server, N sessions, a window.
#[derive(Clone, Debug)]
pub struct Cell {
    pub client: ClientKind,
    pub connect: String,
    pub sessions: usize,
    /// The cell's own subtree; it must not exist yet.
    pub base: String,
    pub warmup: Duration,
    pub window: Duration,
    pub data_bytes: usize,
}

/// What one cell measured.
#[derive(Debug, Default)]
pub struct CellResult {
    pub latencies: Latencies,
    /// Watch events received in the window (two per iteration).
    pub events: u64,
    pub window: Duration,
}

#[derive(Clone, Copy)]
struct Window {
    counted_from: Instant,
    end: Instant,
}

/// Runs `cell`; an error names the session and the op that failed.
pub async fn run_cell(cell: &Cell) -> Result<CellResult, String> {
    let mut admin = Conn::open(cell.client, &cell.connect, 0).await?;
    admin.create(&cell.base, b"").await?;
    let (ready_tx, mut ready_rx) = mpsc::channel::<Result<(), String>>(cell.sessions);
    let (start_tx, start_rx) = watch::channel::<Option<Window>>(None);
    let cell_arc = Arc::new(cell.clone());
    let mut workers = JoinSet::new();
    for i in 0..cell.sessions {
        workers.spawn(session(
            cell_arc.clone(),
            i,
            ready_tx.clone(),
            start_rx.clone(),
        ));
    }
    drop(ready_tx);
    let mut setup_error = None;
    for _ in 0..cell.sessions {
        match tokio::time::timeout(WAIT_LIMIT * 3, ready_rx.recv()).await {
            Ok(Some(Ok(()))) => {}
            Ok(Some(Err(e))) => {
                setup_error.get_or_insert(e);
            }
            Ok(None) => break,
            Err(_) => {
                setup_error.get_or_insert(format!("sessions not ready after {:?}", WAIT_LIMIT * 3));
                break;
            }
        }
    }
    let now = Instant::now();
    let window = Window {
        counted_from: now + cell.warmup,
        // On a setup failure the window is empty: every session stops at once.
        end: if setup_error.is_some() {
            now
        } else {
            now + cell.warmup + cell.window
        },
    };
    let _ = start_tx.send(Some(window));
    let mut result = CellResult {
        window: cell.window,
        ..CellResult::default()
    };
    let mut first_error = setup_error;
    while let Some(joined) = workers.join_next().await {
        match joined {
            Ok(Ok((latencies, events))) => {
                result.latencies.merge(latencies);
                result.events += events;
            }
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(e) => {
                first_error.get_or_insert(format!("a session's task failed: {e}"));
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    admin.delete(&cell.base).await?;
    admin.close().await?;
    Ok(result)
}

/// One session: set up, wait for the start, loop, clean up.
async fn session(
    cell: Arc<Cell>,
    i: usize,
    ready: mpsc::Sender<Result<(), String>>,
    mut start: watch::Receiver<Option<Window>>,
) -> Result<(Latencies, u64), String> {
    let parent = format!("{}/c{i}", cell.base);
    let node = format!("{parent}/n");
    let setup = async {
        let mut conn = Conn::open(cell.client, &cell.connect, i).await?;
        conn.create(&parent, b"").await?;
        Ok::<Conn, String>(conn)
    };
    let mut conn = match setup.await {
        Ok(conn) => {
            let _ = ready.send(Ok(())).await;
            conn
        }
        Err(e) => {
            let e = format!("session {i}: {e}");
            let _ = ready.send(Err(e.clone())).await;
            return Err(e);
        }
    };
    let window = match start.wait_for(Option::is_some).await {
        Ok(w) => w.expect("wait_for returned a Some"),
        Err(_) => return Err(format!("session {i}: the cell ended before it started")),
    };
    let data = vec![b'a'; cell.data_bytes];
    let other = vec![b'b'; cell.data_bytes];
    let mut latencies = Latencies::default();
    let mut events = 0;
    let fail = |e: String| format!("session {i}: {e}");
    let in_window = |t: Instant| t >= window.counted_from && t < window.end;
    while Instant::now() < window.end {
        // An op counts if it starts inside the window: ops/s is then the
        // count over the window's length, with no edge bias.
        macro_rules! timed {
            ($kind:expr, $op:expr) => {{
                let t = Instant::now();
                $op.await.map_err(fail)?;
                if in_window(t) {
                    latencies.record($kind, t.elapsed());
                }
            }};
        }
        macro_rules! event {
            ($wait:expr, $what:expr) => {{
                bounded($wait, $what).await.map_err(fail)?;
                if in_window(Instant::now()) {
                    events += 1;
                }
            }};
        }
        timed!(OpKind::Create, conn.create(&node, &data));
        timed!(OpKind::GetData, conn.get_data_watch(&node));
        timed!(OpKind::SetData, conn.set_data(&node, &other));
        event!(conn.data_event(), "the data watch event");
        timed!(OpKind::GetChildren, conn.get_children_watch(&parent));
        timed!(OpKind::Delete, conn.delete(&node));
        event!(conn.child_event(), "the child watch event");
    }
    conn.delete(&parent).await.map_err(fail)?;
    conn.close().await.map_err(fail)?;
    Ok((latencies, events))
}

async fn bounded(
    wait: impl std::future::Future<Output = Result<(), String>>,
    what: &str,
) -> Result<(), String> {
    tokio::time::timeout(WAIT_LIMIT, wait)
        .await
        .map_err(|_| format!("no {what} within {WAIT_LIMIT:?}"))?
}
