//! zksim's vocabulary ↔ `zookeeper-client`'s: one request becomes one call,
//! one answer becomes one [`Reply`].
//!
//! Each call is wrapped in an owned `'static` future; its first poll (done by
//! the wake set at push time) sends the request, so requests leave in the
//! order the client sent them.

use zksim::{
    AddWatchMode, CreateMode, EventType, Op, Reply, Response, Stat, WatchedEvent, ZkError,
};
use zookeeper_client as zk;

/// Which of the client's watch tables a one-shot watch sits in
/// (`ZKWatchManager`'s data/exist vs child tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WatchClass {
    /// Set by `exists` or `getData`: fires on create, data change, delete.
    Data,
    /// Set by `getChildren`: fires on child change and delete.
    Child,
}

impl WatchClass {
    /// Whether one server notification of `kind` reaches a watch of this class
    /// (the Java client's `ZKWatchManager.materialize`).
    pub(crate) fn hears(self, kind: EventType) -> bool {
        match kind {
            EventType::NodeCreated | EventType::NodeDataChanged => self == WatchClass::Data,
            EventType::NodeChildrenChanged => self == WatchClass::Child,
            EventType::NodeDeleted => true,
        }
    }
}

/// A watch a successful read left armed.
pub(crate) struct Armed {
    pub(crate) path: String,
    pub(crate) class: WatchClass,
    pub(crate) watcher: zk::OneshotWatcher,
}

/// A persistent or recursive watch an `addWatch` left armed (S37): its
/// watcher yields every event until the session ends.
pub(crate) struct ArmedPersistent {
    pub(crate) watcher: zk::PersistentWatcher,
}

/// What an op's future resolves to.
pub(crate) struct Answer {
    pub(crate) reply: Reply,
    pub(crate) watch: Option<Armed>,
    pub(crate) persistent: Option<ArmedPersistent>,
}

impl Answer {
    pub(crate) fn plain(reply: Reply) -> Self {
        Answer {
            reply,
            watch: None,
            persistent: None,
        }
    }
}

/// The future that performs `op` on `client`.
pub(crate) async fn perform(client: zk::Client, op: Op) -> Answer {
    match op {
        Op::Create { path, data, mode } => {
            let options = match create_options(mode) {
                Ok(options) => options,
                Err(e) => return Answer::plain(Err(e)),
            };
            let result = client.create(&path, &data, &options).await;
            Answer::plain(
                result
                    .map_err(map_error)
                    .map(|(stat, sequence)| Response::Created {
                        path: created_path(&path, mode, sequence),
                        stat: map_stat(&stat),
                    }),
            )
        }
        Op::Delete { path, version } => {
            let result = client.delete(&path, Some(version)).await;
            Answer::plain(result.map(|()| Response::Deleted).map_err(map_error))
        }
        Op::Exists { path, watch: false } => {
            let result = client.check_stat(&path).await;
            Answer::plain(
                result
                    .map(|stat| Response::Exists(stat.as_ref().map(map_stat)))
                    .map_err(map_error),
            )
        }
        Op::Exists { path, watch: true } => match client.check_and_watch_stat(&path).await {
            Ok((stat, watcher)) => Answer {
                reply: Ok(Response::Exists(stat.as_ref().map(map_stat))),
                watch: Some(Armed {
                    path,
                    class: WatchClass::Data,
                    watcher,
                }),
                persistent: None,
            },
            Err(e) => Answer::plain(Err(map_error(e))),
        },
        Op::GetData { path, watch: false } => {
            let result = client.get_data(&path).await;
            Answer::plain(
                result
                    .map(|(data, stat)| Response::Data {
                        data,
                        stat: map_stat(&stat),
                    })
                    .map_err(map_error),
            )
        }
        Op::GetData { path, watch: true } => match client.get_and_watch_data(&path).await {
            Ok((data, stat, watcher)) => Answer {
                reply: Ok(Response::Data {
                    data,
                    stat: map_stat(&stat),
                }),
                watch: Some(Armed {
                    path,
                    class: WatchClass::Data,
                    watcher,
                }),
                persistent: None,
            },
            Err(e) => Answer::plain(Err(map_error(e))),
        },
        Op::SetData {
            path,
            data,
            version,
        } => {
            let result = client.set_data(&path, &data, Some(version)).await;
            Answer::plain(
                result
                    .map(|stat| Response::SetData(map_stat(&stat)))
                    .map_err(map_error),
            )
        }
        Op::GetChildren { path, watch: false } => {
            let result = client.get_children(&path).await;
            Answer::plain(
                result
                    .map(|(names, stat)| Response::Children {
                        names,
                        stat: map_stat(&stat),
                    })
                    .map_err(map_error),
            )
        }
        Op::GetChildren { path, watch: true } => match client.get_and_watch_children(&path).await {
            Ok((names, stat, watcher)) => Answer {
                reply: Ok(Response::Children {
                    names,
                    stat: map_stat(&stat),
                }),
                watch: Some(Armed {
                    path,
                    class: WatchClass::Child,
                    watcher,
                }),
                persistent: None,
            },
            Err(e) => Answer::plain(Err(map_error(e))),
        },
        Op::Sync { path } => {
            let result = client.sync(&path).await;
            Answer::plain(result.map(|()| Response::Synced).map_err(map_error))
        }
        Op::Multi(ops) => Answer::plain(multi(&client, &ops).await),
        // No client API sends a check outside a multi; answer as zksim does.
        Op::Check { .. } => Answer::plain(Err(ZkError::Unimplemented)),
        Op::GetEphemerals { prefix } => {
            let result = client.list_ephemerals(&prefix).await;
            Answer::plain(result.map(Response::Ephemerals).map_err(map_error))
        }
        Op::GetAllChildrenNumber { path } => {
            let result = client.count_descendants_number(&path).await;
            Answer::plain(
                result
                    .map(|n| Response::AllChildrenNumber(i32::try_from(n).unwrap_or(i32::MAX)))
                    .map_err(map_error),
            )
        }
        Op::MultiRead(ops) => Answer::plain(multi_read(&client, &ops).await),
        Op::AddWatch { path, mode } => {
            let mode = match mode {
                AddWatchMode::Persistent => zk::AddWatchMode::Persistent,
                AddWatchMode::PersistentRecursive => zk::AddWatchMode::PersistentRecursive,
            };
            match client.watch(&path, mode).await {
                Ok(watcher) => Answer {
                    reply: Ok(Response::Done),
                    watch: None,
                    persistent: Some(ArmedPersistent { watcher }),
                },
                Err(e) => Answer::plain(Err(map_error(e))),
            }
        }
        // `zookeeper-client` sends `removeWatches` only when a watcher
        // handle is removed or dropped (choosing the type itself, and
        // answering OK locally when it holds no such watcher), and never
        // `checkWatches`: no call asks for either. Refused unsent; S38 is
        // compared with the real server over raw frames instead
        // (docs/CONFORMANCE.md).
        Op::RemoveWatches { .. } | Op::CheckWatches { .. } => {
            Answer::plain(Err(ZkError::Unimplemented))
        }
    }
}

/// A `multiRead` (S34) as one `MultiReader` request: each read answered on
/// its own. A `getChildren` inside answers names only (`GetChildrenResult`
/// has no Stat): its Stat here is zero, which the conformance suite does
/// not compare. Only reads without a watch may be inside; anything else is
/// refused before sending, as the Java client does.
async fn multi_read(client: &zk::Client, ops: &[Op]) -> Reply {
    let mut reader = client.new_multi_reader();
    for op in ops {
        let added = match op {
            Op::GetData { path, watch: false } => reader.add_get_data(path),
            Op::GetChildren { path, watch: false } => reader.add_get_children(path),
            _ => return Err(ZkError::BadArguments),
        };
        added.map_err(map_error)?;
    }
    let results = reader.commit().await.map_err(map_error)?;
    Ok(Response::Multi(
        results
            .into_iter()
            .map(|r| match r {
                zk::MultiReadResult::Data { data, stat } => Ok(Response::Data {
                    data,
                    stat: map_stat(&stat),
                }),
                zk::MultiReadResult::Children { children } => Ok(Response::Children {
                    names: children,
                    stat: Stat::default(),
                }),
                zk::MultiReadResult::Error { err } => Err(map_error(err)),
                // The enum is non-exhaustive; nothing zksim sends yields another.
                _ => Err(ZkError::RuntimeInconsistency),
            })
            .collect(),
    ))
}

/// A multi as one `MultiWriter` transaction. Only writes may be inside
/// (zksim's contract); anything else is refused before sending, like the
/// Java client refuses to build such an `Op`.
async fn multi(client: &zk::Client, ops: &[Op]) -> Reply {
    let mut writer = client.new_multi_writer();
    for op in ops {
        let added = match op {
            Op::Create { path, data, mode } => {
                writer.add_create(path, data, &create_options(*mode)?)
            }
            Op::Delete { path, version } => writer.add_delete(path, Some(*version)),
            Op::SetData {
                path,
                data,
                version,
            } => writer.add_set_data(path, data, Some(*version)),
            Op::Check { path, version } => writer.add_check_version(path, *version),
            _ => return Err(ZkError::BadArguments),
        };
        added.map_err(map_error)?;
    }
    match writer.commit().await {
        Ok(results) => Ok(Response::Multi(
            results
                .into_iter()
                .map(|r| Ok(map_multi_result(r)))
                .collect(),
        )),
        // The server answers a failed multi with one error per op: code 0
        // (rolled back) before the failing op, its own code, then
        // RuntimeInconsistency after it. The client library keeps only the
        // failing op and its index; rebuild the rest as the server sent it.
        Err(zk::MultiWriteError::OperationFailed { index, source }) => Ok(Response::Multi(
            (0..ops.len())
                .map(|i| match i.cmp(&index) {
                    std::cmp::Ordering::Less => Err(ZkError::RolledBack),
                    std::cmp::Ordering::Equal => Err(map_error(source.clone())),
                    std::cmp::Ordering::Greater => Err(ZkError::RuntimeInconsistency),
                })
                .collect(),
        )),
        Err(zk::MultiWriteError::RequestFailed { source }) => Err(map_error(source)),
    }
}

fn map_multi_result(result: zk::MultiWriteResult) -> Response {
    match result {
        zk::MultiWriteResult::Create { path, stat } => Response::Created {
            path,
            stat: map_stat(&stat),
        },
        zk::MultiWriteResult::Delete => Response::Deleted,
        zk::MultiWriteResult::SetData { stat } => Response::SetData(map_stat(&stat)),
        zk::MultiWriteResult::Check => Response::Checked,
        // The enum is non-exhaustive; nothing zksim sends yields another.
        _ => Response::Synced,
    }
}

/// `CreateMode` is non-exhaustive; a mode added to zksim but not here is
/// refused rather than silently created as something else.
fn zk_mode(mode: CreateMode) -> Result<zk::CreateMode, ZkError> {
    Ok(match mode {
        CreateMode::Persistent => zk::CreateMode::Persistent,
        CreateMode::Ephemeral => zk::CreateMode::Ephemeral,
        CreateMode::PersistentSequential => zk::CreateMode::PersistentSequential,
        CreateMode::EphemeralSequential => zk::CreateMode::EphemeralSequential,
        CreateMode::Container => zk::CreateMode::Container,
        // The TTL itself goes with the options (`create_options`).
        CreateMode::PersistentWithTtl { .. } => zk::CreateMode::Persistent,
        CreateMode::PersistentSequentialWithTtl { .. } => zk::CreateMode::PersistentSequential,
        _ => return Err(ZkError::Unimplemented),
    })
}

/// The library's create options for `mode`: open ACL, and a TTL mode's TTL
/// (which makes the library send `createTTL`, S36). A TTL the library
/// would refuse is refused by the conductor's own check first (zksim's
/// `validate_request`), so the conversion below never clamps a real one.
fn create_options(mode: CreateMode) -> Result<zk::CreateOptions<'static>, ZkError> {
    let options = zk_mode(mode)?.with_acls(zk::Acls::anyone_all());
    Ok(match mode.ttl_ms() {
        Some(ttl) => options.with_ttl(std::time::Duration::from_millis(
            u64::try_from(ttl).map_err(|_| ZkError::BadArguments)?,
        )),
        None => options,
    })
}

/// The library returns the sequence number, not the created path; rebuild
/// the path as the server formats it (`%010d` of a signed 32-bit counter;
/// `CreateSequence`'s `Display` does exactly that).
fn created_path(requested: &str, mode: CreateMode, sequence: zk::CreateSequence) -> String {
    if mode.is_sequential() {
        format!("{requested}{sequence}")
    } else {
        requested.to_string()
    }
}

pub(crate) fn map_stat(stat: &zk::Stat) -> Stat {
    Stat {
        czxid: stat.czxid,
        mzxid: stat.mzxid,
        ctime: stat.ctime,
        mtime: stat.mtime,
        version: stat.version,
        cversion: stat.cversion,
        aversion: stat.aversion,
        ephemeral_owner: stat.ephemeral_owner,
        data_length: stat.data_length,
        num_children: stat.num_children,
        pzxid: stat.pzxid,
    }
}

/// The server's error code for a library error. Errors zksim has no name
/// for (client-side oddities such as `NoHosts` or an unmarshalling failure)
/// become `RuntimeInconsistency`, which no recipe treats as a normal outcome.
pub(crate) fn map_error(error: zk::Error) -> ZkError {
    use zk::Error as E;
    match error {
        E::NoNode => ZkError::NoNode,
        E::NodeExists => ZkError::NodeExists,
        E::BadVersion => ZkError::BadVersion,
        E::NotEmpty => ZkError::NotEmpty,
        E::NoChildrenForEphemerals => ZkError::NoChildrenForEphemerals,
        E::ConnectionLoss => ZkError::ConnectionLoss,
        // The session task fails what is outstanding with the connection's
        // own error (an I/O error, "no response from connection in …ms");
        // the Java client answers every such op `ConnectionLoss`
        // (`ClientCnxn.conLossPacket`), as the simulator does (S21).
        E::Custom(_) => ZkError::ConnectionLoss,
        E::SessionExpired => ZkError::SessionExpired,
        // Java's client answers calls on a closed handle with SessionExpired.
        E::ClientClosed => ZkError::SessionExpired,
        E::NoAuth => ZkError::NoAuth,
        E::InvalidAcl => ZkError::InvalidAcl,
        E::AuthFailed => ZkError::AuthFailed,
        E::SessionMoved => ZkError::SessionMoved,
        E::NotReadOnly => ZkError::NotReadOnly,
        E::BadArguments(_) => ZkError::BadArguments,
        E::MarshallingError => ZkError::MarshallingError,
        E::Unimplemented => ZkError::Unimplemented,
        E::RuntimeInconsistent => ZkError::RuntimeInconsistency,
        E::UnexpectedErrorCode(code) => match code {
            -3 => ZkError::DataInconsistency,
            -7 => ZkError::OperationTimeout,
            -113 => ZkError::InvalidCallback,
            _ => ZkError::RuntimeInconsistency,
        },
        _ => ZkError::RuntimeInconsistency,
    }
}

/// A node event as zksim names it; `None` for session-state events, which
/// the driver takes from the state watcher instead.
pub(crate) fn map_event(event: &zk::WatchedEvent) -> Option<WatchedEvent> {
    let kind = match event.event_type {
        zk::EventType::NodeCreated => EventType::NodeCreated,
        zk::EventType::NodeDeleted => EventType::NodeDeleted,
        zk::EventType::NodeDataChanged => EventType::NodeDataChanged,
        zk::EventType::NodeChildrenChanged => EventType::NodeChildrenChanged,
        zk::EventType::Session => return None,
    };
    Some(WatchedEvent {
        kind,
        path: event.path.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_classes_hear_what_the_java_client_delivers() {
        use EventType::*;
        assert!(WatchClass::Data.hears(NodeCreated));
        assert!(WatchClass::Data.hears(NodeDataChanged));
        assert!(WatchClass::Data.hears(NodeDeleted));
        assert!(!WatchClass::Data.hears(NodeChildrenChanged));
        assert!(WatchClass::Child.hears(NodeChildrenChanged));
        assert!(WatchClass::Child.hears(NodeDeleted));
        assert!(!WatchClass::Child.hears(NodeCreated));
        assert!(!WatchClass::Child.hears(NodeDataChanged));
    }

    #[test]
    fn errors_keep_their_server_codes() {
        assert_eq!(map_error(zk::Error::NoNode), ZkError::NoNode);
        assert_eq!(map_error(zk::Error::NodeExists), ZkError::NodeExists);
        assert_eq!(
            map_error(zk::Error::ConnectionLoss),
            ZkError::ConnectionLoss
        );
        assert_eq!(map_error(zk::Error::ClientClosed), ZkError::SessionExpired);
        assert_eq!(
            map_error(zk::Error::UnexpectedErrorCode(-3)),
            ZkError::DataInconsistency
        );
    }
}
