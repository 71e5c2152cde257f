//! One benchmark session through either client: `zookeeper-client` (what a
//! Rust application uses) or the raw `zkwire` client (what costs least).
//! Both run the same requests with the same opcodes: create2, getData and
//! getChildren with a watch, setData, delete — and both wait for the two
//! watch events each iteration triggers.

use std::time::Duration;

use clap::ValueEnum;
use zkwire::{opcode, Request};
use zookeeper_client as zk;

use crate::raw_client::{open_acl, RawConn, NODE_EXISTS};

/// The session timeout the benchmark's clients ask for.
const SESSION_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ClientKind {
    /// The `zookeeper-client` crate (0.11).
    Zk,
    /// A raw socket and the `zkwire` codec, one request in flight.
    Raw,
}

impl ClientKind {
    pub fn name(self) -> &'static str {
        match self {
            ClientKind::Zk => "zookeeper-client",
            ClientKind::Raw => "raw zkwire",
        }
    }
}

pub enum Conn {
    Zk {
        client: zk::Client,
        data_watch: Option<zk::OneshotWatcher>,
        child_watch: Option<zk::OneshotWatcher>,
    },
    Raw(RawConn),
}

impl Conn {
    /// A session at `connect`. `nth` spreads the raw client's sessions over
    /// the servers of the connect string (session `nth` goes to server
    /// `nth % servers`), as `zookeeper-client`'s shuffle does on average.
    pub async fn open(kind: ClientKind, connect: &str, nth: usize) -> Result<Conn, String> {
        match kind {
            ClientKind::Zk => {
                let client = zk::Client::connector()
                    .with_session_timeout(SESSION_TIMEOUT)
                    .connect(connect)
                    .await
                    .map_err(|e| format!("connecting to {connect}: {e}"))?;
                Ok(Conn::Zk {
                    client,
                    data_watch: None,
                    child_watch: None,
                })
            }
            ClientKind::Raw => Ok(Conn::Raw(
                RawConn::connect(connect, nth, SESSION_TIMEOUT).await?,
            )),
        }
    }

    /// A persistent node with `data`.
    pub async fn create(&mut self, path: &str, data: &[u8]) -> Result<(), String> {
        self.create_inner(path, data, false).await
    }

    /// As [`Conn::create`], but a node that exists already is fine.
    pub async fn ensure(&mut self, path: &str) -> Result<(), String> {
        self.create_inner(path, b"", true).await
    }

    async fn create_inner(
        &mut self,
        path: &str,
        data: &[u8],
        exists_ok: bool,
    ) -> Result<(), String> {
        match self {
            Conn::Zk { client, .. } => {
                let options = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
                match client.create(path, data, &options).await {
                    Ok(_) => Ok(()),
                    Err(zk::Error::NodeExists) if exists_ok => Ok(()),
                    Err(e) => Err(format!("create {path}: {e}")),
                }
            }
            Conn::Raw(raw) => {
                let request = Request::Create {
                    path: path.to_string(),
                    data: Some(data.to_vec()),
                    acl: open_acl(),
                    flags: 0,
                };
                match raw.call(opcode::CREATE2, &request).await? {
                    0 => Ok(()),
                    NODE_EXISTS if exists_ok => Ok(()),
                    err => Err(format!("create {path}: error {err}")),
                }
            }
        }
    }

    /// getData, leaving a data watch on `path`.
    pub async fn get_data_watch(&mut self, path: &str) -> Result<(), String> {
        match self {
            Conn::Zk {
                client, data_watch, ..
            } => {
                let (_, _, watcher) = client
                    .get_and_watch_data(path)
                    .await
                    .map_err(|e| format!("getData {path}: {e}"))?;
                *data_watch = Some(watcher);
                Ok(())
            }
            Conn::Raw(raw) => {
                let request = Request::GetData {
                    path: path.to_string(),
                    watch: true,
                };
                ok(raw.call(opcode::GET_DATA, &request).await?, "getData", path)
            }
        }
    }

    pub async fn set_data(&mut self, path: &str, data: &[u8]) -> Result<(), String> {
        match self {
            Conn::Zk { client, .. } => client
                .set_data(path, data, None)
                .await
                .map(|_| ())
                .map_err(|e| format!("setData {path}: {e}")),
            Conn::Raw(raw) => {
                let request = Request::SetData {
                    path: path.to_string(),
                    data: Some(data.to_vec()),
                    version: -1,
                };
                ok(raw.call(opcode::SET_DATA, &request).await?, "setData", path)
            }
        }
    }

    /// getChildren, leaving a child watch on `path`.
    pub async fn get_children_watch(&mut self, path: &str) -> Result<(), String> {
        match self {
            Conn::Zk {
                client,
                child_watch,
                ..
            } => {
                let (_, watcher) = client
                    .list_and_watch_children(path)
                    .await
                    .map_err(|e| format!("getChildren {path}: {e}"))?;
                *child_watch = Some(watcher);
                Ok(())
            }
            Conn::Raw(raw) => {
                let request = Request::GetChildren {
                    path: path.to_string(),
                    watch: true,
                };
                ok(
                    raw.call(opcode::GET_CHILDREN, &request).await?,
                    "getChildren",
                    path,
                )
            }
        }
    }

    pub async fn delete(&mut self, path: &str) -> Result<(), String> {
        match self {
            Conn::Zk { client, .. } => client
                .delete(path, None)
                .await
                .map_err(|e| format!("delete {path}: {e}")),
            Conn::Raw(raw) => {
                let request = Request::Delete {
                    path: path.to_string(),
                    version: -1,
                };
                ok(raw.call(opcode::DELETE, &request).await?, "delete", path)
            }
        }
    }

    /// Waits for the event of the data watch set last.
    pub async fn data_event(&mut self) -> Result<(), String> {
        match self {
            Conn::Zk { data_watch, .. } => await_watch(data_watch.take(), "data").await,
            Conn::Raw(raw) => raw.wait_event().await,
        }
    }

    /// Waits for the event of the child watch set last.
    pub async fn child_event(&mut self) -> Result<(), String> {
        match self {
            Conn::Zk { child_watch, .. } => await_watch(child_watch.take(), "child").await,
            Conn::Raw(raw) => raw.wait_event().await,
        }
    }

    /// Ends the session (closeSession), so the server forgets it now.
    /// `zookeeper-client` sends closeSession when its last handle is dropped.
    pub async fn close(self) -> Result<(), String> {
        match self {
            Conn::Zk { client, .. } => {
                drop(client);
                Ok(())
            }
            Conn::Raw(raw) => raw.close().await,
        }
    }
}

fn ok(err: i32, op: &str, path: &str) -> Result<(), String> {
    match err {
        0 => Ok(()),
        err => Err(format!("{op} {path}: error {err}")),
    }
}

async fn await_watch(watcher: Option<zk::OneshotWatcher>, what: &str) -> Result<(), String> {
    let watcher = watcher.ok_or_else(|| format!("no {what} watch was set"))?;
    let event = watcher.changed().await;
    match event.event_type {
        zk::EventType::Session => Err(format!("{what} watch ended by the session: {event:?}")),
        _ => Ok(()),
    }
}
