//! One test per ZooKeeper rule of `docs/ZK-SEMANTICS.md` that lives in the
//! data tree, path validation or one server's watch tables (S1–S17, S25,
//! S30, S31). Each asserts what a real 3.8 server answers: codes, names and
//! every Stat field where it matters.

use zksim::path::validate_path;
use zksim::tree::{DataTree, Trigger, Txn};
use zksim::watch::WatchManager;
use zksim::{
    CreateMode, EventType, Op, Reply, Response, SessionId, Stat, WatchedEvent, ZkError, Zxid,
};

const S1: SessionId = 0x100;
const S2: SessionId = 0x200;

/// A single server: prepares and applies each write at the next zxid, with
/// `time = zxid * 1000` so that times are recognisable in Stats.
struct Server {
    tree: DataTree,
    watches: WatchManager,
    zxid: Zxid,
}

impl Server {
    fn new() -> Self {
        Server {
            tree: DataTree::new(),
            watches: WatchManager::new(),
            zxid: 0,
        }
    }

    fn write(&mut self, session: SessionId, op: Op) -> Reply {
        self.write_events(session, op).0
    }

    /// Write, and fire the watches it triggers.
    fn write_events(
        &mut self,
        session: SessionId,
        op: Op,
    ) -> (Reply, Vec<(SessionId, WatchedEvent)>) {
        let txn = self.tree.prepare(session, &op);
        self.commit(&txn)
    }

    fn commit(&mut self, txn: &Txn) -> (Reply, Vec<(SessionId, WatchedEvent)>) {
        self.zxid += 1;
        let (reply, triggers) = self.tree.apply(self.zxid, self.zxid * 1000, txn);
        let events = self.watches.trigger_all(&triggers);
        (reply, events)
    }

    fn read(&mut self, session: SessionId, op: Op) -> Reply {
        let reply = self.tree.read(&op);
        self.watches.register_read(session, &op, &reply);
        reply
    }

    fn stat(&self, path: &str) -> Stat {
        match self.tree.read(&exists(path)) {
            Ok(Response::Exists(Some(stat))) => stat,
            other => panic!("{path}: expected a node, got {other:?}"),
        }
    }

    fn children(&self, path: &str) -> Vec<String> {
        match self.tree.read(&get_children(path, false)) {
            Ok(Response::Children { mut names, .. }) => {
                names.sort();
                names
            }
            other => panic!("{path}: expected children, got {other:?}"),
        }
    }
}

fn create(path: &str, mode: CreateMode) -> Op {
    Op::Create {
        path: path.into(),
        data: Vec::new(),
        mode,
    }
}

fn create_data(path: &str, data: &[u8]) -> Op {
    Op::Create {
        path: path.into(),
        data: data.to_vec(),
        mode: CreateMode::Persistent,
    }
}

fn delete(path: &str, version: i32) -> Op {
    Op::Delete {
        path: path.into(),
        version,
    }
}

fn set_data(path: &str, data: &[u8], version: i32) -> Op {
    Op::SetData {
        path: path.into(),
        data: data.to_vec(),
        version,
    }
}

fn exists(path: &str) -> Op {
    Op::Exists {
        path: path.into(),
        watch: false,
    }
}

fn exists_w(path: &str) -> Op {
    Op::Exists {
        path: path.into(),
        watch: true,
    }
}

fn get_data(path: &str, watch: bool) -> Op {
    Op::GetData {
        path: path.into(),
        watch,
    }
}

fn get_children(path: &str, watch: bool) -> Op {
    Op::GetChildren {
        path: path.into(),
        watch,
    }
}

fn created_path(reply: Reply) -> String {
    match reply {
        Ok(Response::Created { path, .. }) => path,
        other => panic!("expected Created, got {other:?}"),
    }
}

fn ev(kind: EventType, path: &str) -> WatchedEvent {
    WatchedEvent {
        kind,
        path: path.into(),
    }
}

use CreateMode::{Ephemeral, EphemeralSequential, Persistent, PersistentSequential};

#[test]
fn fresh_tree_matches_a_new_3_8_server() {
    let s = Server::new();
    assert_eq!(s.children("/"), vec!["zookeeper"]);
    assert_eq!(s.children("/zookeeper"), vec!["config", "quota"]);
    // `copyStat` derives cversion = 2 * creates - numChildren; the system
    // nodes were added without counting creates.
    let root = s.stat("/");
    assert_eq!(
        (root.num_children, root.cversion, root.czxid, root.pzxid),
        (1, -1, 0, 0)
    );
    let zk = s.stat("/zookeeper");
    assert_eq!((zk.num_children, zk.cversion), (2, -2));
    assert_eq!(s.stat("/zookeeper/quota"), Stat::default());
    assert_eq!(
        s.stat("/zookeeper/config"),
        Stat {
            aversion: -1,
            ..Stat::default()
        }
    );
    assert_eq!(s.tree.last_zxid(), 0);
}

#[test]
fn s01_invalid_paths_are_bad_arguments() {
    let mut s = Server::new();
    for bad in [
        "",
        "a",
        "/a/",
        "/a//b",
        "/a/.",
        "/a/../b",
        "/a\0b",
        "/a\u{1}",
        "/\u{e000}",
    ] {
        assert_eq!(validate_path(bad), Err(ZkError::BadArguments), "{bad:?}");
        assert_eq!(
            s.write(S1, create(bad, Persistent)),
            Err(ZkError::BadArguments),
            "create {bad:?}"
        );
        assert_eq!(
            s.read(S1, get_data(bad, false)),
            Err(ZkError::BadArguments),
            "get {bad:?}"
        );
    }
    assert_eq!(s.write(S1, delete("/a/", -1)), Err(ZkError::BadArguments));
    assert_eq!(
        s.write(S1, set_data("//", b"", -1)),
        Err(ZkError::BadArguments)
    );
    // The system nodes cannot be deleted (`getParentPathAndValidate`).
    for system in ["/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"] {
        assert_eq!(
            s.write(S1, delete(system, -1)),
            Err(ZkError::BadArguments),
            "{system}"
        );
    }
    // Under the read-only config node the parent's ACL answers first.
    assert_eq!(
        s.write(S1, delete("/zookeeper/config/x", -1)),
        Err(ZkError::NoAuth)
    );
    assert_eq!(
        s.write(S1, create("/zookeeper/config/x", Persistent)),
        Err(ZkError::NoAuth)
    );
    assert!(s.write(S1, create("/zookeeper/x", Persistent)).is_ok());
    assert!(validate_path("/a.b/...").is_ok());
}

#[test]
fn s02_sequential_suffix_appended_before_validation() {
    let mut s = Server::new();
    s.write(S1, create("/q", Persistent)).unwrap();
    assert_eq!(
        created_path(s.write(S1, create("/q/", PersistentSequential))),
        "/q/0000000000"
    );
    assert_eq!(
        s.write(S1, create("/q/", Persistent)),
        Err(ZkError::BadArguments)
    );
    assert_eq!(s.children("/q"), vec!["0000000000"]);
}

#[test]
fn s03_create_needs_parent_and_fresh_name() {
    let mut s = Server::new();
    assert_eq!(
        s.write(S1, create("/a/b", Persistent)),
        Err(ZkError::NoNode)
    );
    s.write(S1, create("/a", Persistent)).unwrap();
    let before = s.stat("/a");
    assert_eq!(
        s.write(S1, create("/a", Persistent)),
        Err(ZkError::NodeExists)
    );
    assert_eq!(
        s.write(S1, create("/", Persistent)),
        Err(ZkError::NodeExists)
    );
    // A failed write changes nothing but still took a zxid.
    assert_eq!(s.stat("/a"), before);
    assert_eq!(s.tree.last_zxid(), 4);
}

#[test]
fn s04_no_children_for_ephemerals() {
    let mut s = Server::new();
    s.write(S1, create("/e", Ephemeral)).unwrap();
    assert_eq!(
        s.write(S1, create("/e/c", Persistent)),
        Err(ZkError::NoChildrenForEphemerals)
    );
    assert_eq!(
        s.write(S2, create("/e/c", EphemeralSequential)),
        Err(ZkError::NoChildrenForEphemerals)
    );
    assert_eq!(s.stat("/e").num_children, 0);
}

#[test]
fn s05_sequential_suffix_ignores_deletes() {
    // The measured scenario on a 3.8.0 server.
    let mut s = Server::new();
    s.write(S1, create("/p", Persistent)).unwrap();
    assert_eq!(
        created_path(s.write(S1, create("/p/s-", PersistentSequential))),
        "/p/s-0000000000"
    );
    s.write(S1, create("/p/plain", Persistent)).unwrap();
    s.write(S1, delete("/p/plain", -1)).unwrap();
    assert_eq!(s.stat("/p").cversion, 3, "deletes count in cversion");
    assert_eq!(
        created_path(s.write(S1, create("/p/s-", PersistentSequential))),
        "/p/s-0000000002"
    );
    assert_eq!(
        created_path(s.write(S1, create("/p/other-", EphemeralSequential))),
        "/p/other-0000000003"
    );

    // 3 creates + 3 deletes: cversion 6, next suffix 3.
    let mut s = Server::new();
    s.write(S1, create("/r", Persistent)).unwrap();
    for name in ["/r/a", "/r/b", "/r/c"] {
        s.write(S1, create(name, Persistent)).unwrap();
        s.write(S1, delete(name, -1)).unwrap();
    }
    let stat = s.stat("/r");
    assert_eq!((stat.cversion, stat.num_children), (6, 0));
    assert_eq!(
        created_path(s.write(S1, create("/r/x-", PersistentSequential))),
        "/r/x-0000000003"
    );
    assert_eq!(s.stat("/r").cversion, 7);
    // A failed create does not advance the counter either.
    assert_eq!(
        s.write(S1, create("/r/x-0000000003", Persistent)),
        Err(ZkError::NodeExists)
    );
    assert_eq!(
        created_path(s.write(S1, create("/r/x-", PersistentSequential))),
        "/r/x-0000000004"
    );
}

#[test]
fn s06_counter_is_a_java_int() {
    let mut s = Server::new();
    s.write(S1, create("/w", Persistent)).unwrap();
    assert!(s.tree.set_seq_counter("/w", i32::MAX - 1));
    assert_eq!(
        created_path(s.write(S1, create("/w/n-", PersistentSequential))),
        "/w/n-2147483646"
    );
    assert_eq!(
        created_path(s.write(S1, create("/w/n-", PersistentSequential))),
        "/w/n-2147483647"
    );
    // The next counter, 2^31, wraps to i32::MIN; `createNode` stores only a
    // larger counter, so the parent keeps 2^31-1 and its pzxid, and the next
    // sequential create computes the same name again.
    let parent = s.stat("/w");
    assert_eq!(parent.pzxid, 2, "not moved by the create at the wrap");
    assert_eq!(parent.num_children, 2);
    assert_eq!(
        s.write(S1, create("/w/n-", PersistentSequential)),
        Err(ZkError::NodeExists)
    );
    s.write(S1, delete("/w/n-2147483647", -1)).unwrap();
    assert_eq!(
        created_path(s.write(S1, create("/w/n-", PersistentSequential))),
        "/w/n-2147483647"
    );
    // Java's `%010d` of a negative counter (as a leader preparing against
    // uncommitted changes would see it) pads after the sign.
    assert!(s.tree.set_seq_counter("/w", i32::MIN));
    assert_eq!(
        created_path(s.write(S1, create("/w/m-", PersistentSequential))),
        "/w/m--2147483648"
    );
    // Inside one multi, the second create sees the first one's change record
    // (counter wrapped to i32::MIN), so two names straddle the wrap.
    s.write(S1, delete("/w/n-2147483647", -1)).unwrap();
    assert!(s.tree.set_seq_counter("/w", i32::MAX));
    let reply = s.write(
        S1,
        Op::Multi(vec![
            create("/w/k-", PersistentSequential),
            create("/w/k-", PersistentSequential),
        ]),
    );
    let Ok(Response::Multi(results)) = reply else {
        panic!("{reply:?}")
    };
    let names: Vec<String> = results.into_iter().map(created_path).collect();
    assert_eq!(names, vec!["/w/k-2147483647", "/w/k--2147483648"]);
    assert_eq!(
        s.tree.get("/w").unwrap().seq_counter,
        i32::MAX,
        "the tree keeps the larger counter"
    );
    assert!(s.tree.set_seq_counter("/w", -1));
    assert_eq!(
        created_path(s.write(S1, create("/w/m-", PersistentSequential))),
        "/w/m--000000001"
    );
}

#[test]
fn s07_ephemeral_owner() {
    let mut s = Server::new();
    s.write(S1, create("/e", Ephemeral)).unwrap();
    let seq = created_path(s.write(S2, create("/es-", EphemeralSequential)));
    s.write(S1, create("/p", Persistent)).unwrap();
    assert_eq!(s.stat("/e").ephemeral_owner, S1);
    assert_eq!(s.stat(&seq).ephemeral_owner, S2);
    assert_eq!(s.stat("/p").ephemeral_owner, 0);
    assert_eq!(s.tree.ephemerals_of(S1), vec!["/e".to_string()]);
    assert_eq!(s.tree.ephemerals_of(S2), vec![seq]);
}

#[test]
fn s08_create_updates_parent_child_fields_only() {
    let mut s = Server::new();
    s.write(S1, create_data("/p", b"xy")).unwrap();
    let before = s.stat("/p");
    s.write(S1, create("/p/c", Persistent)).unwrap(); // zxid 2
    let after = s.stat("/p");
    assert_eq!(
        after,
        Stat {
            cversion: before.cversion + 1,
            pzxid: 2,
            num_children: 1,
            ..before
        }
    );
    assert_eq!((after.version, after.mzxid, after.mtime), (0, 1, 1000));
}

#[test]
fn s09_create_replies_actual_path_and_full_stat() {
    let mut s = Server::new();
    s.write(S1, create("/q", Persistent)).unwrap();
    let reply = s.write(
        S2,
        Op::Create {
            path: "/q/n-".into(),
            data: b"hello".to_vec(),
            mode: EphemeralSequential,
        },
    );
    let expected = Stat {
        czxid: 2,
        mzxid: 2,
        ctime: 2000,
        mtime: 2000,
        version: 0,
        cversion: 0,
        aversion: 0,
        ephemeral_owner: S2,
        data_length: 5,
        num_children: 0,
        pzxid: 2,
    };
    assert_eq!(
        reply,
        Ok(Response::Created {
            path: "/q/n-0000000000".into(),
            stat: expected
        })
    );
    assert_eq!(s.stat("/q/n-0000000000"), expected);
}

#[test]
fn s10_delete_checks_and_parent_stat() {
    let mut s = Server::new();
    assert_eq!(s.write(S1, delete("/nope", -1)), Err(ZkError::NoNode));
    s.write(S1, create("/p", Persistent)).unwrap(); // 2
    s.write(S1, create("/p/c", Persistent)).unwrap(); // 3
    s.write(S1, set_data("/p/c", b"v1", 0)).unwrap(); // 4: version 1
    assert_eq!(s.write(S1, delete("/p", -1)), Err(ZkError::NotEmpty)); // 5
    assert_eq!(s.write(S1, delete("/p/c", 0)), Err(ZkError::BadVersion)); // 6
    assert_eq!(s.write(S1, delete("/p/c", 7)), Err(ZkError::BadVersion)); // 7
    let before = s.stat("/p");
    assert_eq!(s.write(S1, delete("/p/c", 1)), Ok(Response::Deleted)); // 8
    let after = s.stat("/p");
    assert_eq!(
        after,
        Stat {
            pzxid: 8,
            num_children: 0,
            cversion: before.cversion + 1,
            ..before
        }
    );
    // Version -1 deletes whatever the version.
    s.write(S1, create("/q", Persistent)).unwrap();
    s.write(S1, set_data("/q", b"", -1)).unwrap();
    assert_eq!(s.write(S1, delete("/q", -1)), Ok(Response::Deleted));
    assert_eq!(s.read(S1, exists("/q")), Ok(Response::Exists(None)));
}

#[test]
fn s11_set_data_stat() {
    let mut s = Server::new();
    assert_eq!(s.write(S1, set_data("/x", b"", -1)), Err(ZkError::NoNode));
    s.write(S1, create_data("/x", b"abc")).unwrap(); // 2
    s.write(S1, create("/x/c", Persistent)).unwrap(); // 3
    let before = s.stat("/x");
    let reply = s.write(S1, set_data("/x", b"hello!", 0)); // 4
    let expected = Stat {
        mzxid: 4,
        mtime: 4000,
        version: 1,
        data_length: 6,
        ..before
    };
    assert_eq!(reply, Ok(Response::SetData(expected)));
    assert_eq!(s.stat("/x"), expected);
    assert_eq!(
        s.write(S1, set_data("/x", b"", 0)),
        Err(ZkError::BadVersion)
    );
    assert_eq!(
        s.write(S1, set_data("/x", b"", -1))
            .map(|r| matches!(r, Response::SetData(st) if st.version == 2)),
        Ok(true)
    );
    assert_eq!(
        s.read(S1, get_data("/x", false)),
        Ok(Response::Data {
            data: Vec::new(),
            stat: s.stat("/x")
        })
    );
    // /zookeeper/config is read-only for everyone.
    assert_eq!(
        s.write(S1, set_data("/zookeeper/config", b"", -1)),
        Err(ZkError::NoAuth)
    );
}

#[test]
fn s12_request_size_limit() {
    // Measured on 3.8.0: the packet limit is `jute.maxbuffer` = 0xfffff
    // bytes including headers, so `setData("/big")` carries at most 1048551
    // data bytes (a real server then drops the connection; the simulator
    // refuses with BadArguments and changes nothing).
    let mut s = Server::new();
    s.write(S1, create("/big", Persistent)).unwrap();
    assert!(s
        .write(S1, set_data("/big", &vec![7; 1_048_551], -1))
        .is_ok());
    assert_eq!(s.stat("/big").data_length, 1_048_551);
    assert_eq!(
        s.write(S1, set_data("/big", &vec![7; 1_048_552], -1)),
        Err(ZkError::BadArguments)
    );
    assert_eq!(s.stat("/big").version, 1);
    assert!(s.write(S1, create_data("/cc", &vec![7; 1_048_525])).is_ok());
    assert_eq!(
        s.write(S1, create_data("/cd", &vec![7; 1_048_526])),
        Err(ZkError::BadArguments)
    );
    assert_eq!(s.read(S1, exists("/cd")), Ok(Response::Exists(None)));
    let big_multi = Op::Multi(vec![set_data("/big", &vec![7; 1_048_534], -1)]);
    assert!(zksim::tree::exceeds_max_buffer(&big_multi));
    assert_eq!(s.write(S1, big_multi), Err(ZkError::BadArguments));
}

#[test]
fn s13_every_stat_field_through_a_life() {
    let mut s = Server::new();
    s.write(S1, create_data("/n", b"12")).unwrap(); // 1
    s.write(S1, create("/n/a", Persistent)).unwrap(); // 2
    s.write(S1, create("/n/b", Persistent)).unwrap(); // 3
    s.write(S1, set_data("/n", b"1234", -1)).unwrap(); // 4
    s.write(S1, delete("/n/a", -1)).unwrap(); // 5
    assert_eq!(
        s.stat("/n"),
        Stat {
            czxid: 1,
            mzxid: 4,
            ctime: 1000,
            mtime: 4000,
            version: 1,
            cversion: 3,
            aversion: 0,
            ephemeral_owner: 0,
            data_length: 4,
            num_children: 1,
            pzxid: 5,
        }
    );
    assert_eq!(s.tree.last_zxid(), 5);
}

#[test]
fn s14_exists_watch_on_missing_node_fires_created() {
    let mut s = Server::new();
    assert_eq!(s.read(S1, exists_w("/x")), Ok(Response::Exists(None)));
    assert!(s.watches.has_data_watch(S1, "/x"));
    let (_, events) = s.write_events(S2, create("/x", Persistent));
    assert_eq!(events, vec![(S1, ev(EventType::NodeCreated, "/x"))]);
    // An exists watch on a present node is a data watch too.
    s.read(S1, exists_w("/x")).unwrap();
    let (_, events) = s.write_events(S2, set_data("/x", b"1", -1));
    assert_eq!(events, vec![(S1, ev(EventType::NodeDataChanged, "/x"))]);
}

#[test]
fn s15_get_watches_only_on_existing_nodes() {
    let mut s = Server::new();
    assert_eq!(s.read(S1, get_data("/x", true)), Err(ZkError::NoNode));
    assert_eq!(s.read(S1, get_children("/x", true)), Err(ZkError::NoNode));
    assert!(s.watches.is_empty());
    let (_, events) = s.write_events(S2, create("/x", Persistent));
    assert!(events.is_empty());
    s.read(S1, get_data("/x", true)).unwrap();
    s.read(S1, get_children("/x", true)).unwrap();
    assert!(s.watches.has_data_watch(S1, "/x") && s.watches.has_child_watch(S1, "/x"));
}

#[test]
fn s16_triggers_of_each_write() {
    let mut s = Server::new();
    s.write(S1, create("/p", Persistent)).unwrap();
    // create p/c → NodeCreated on c's data watchers, NodeChildrenChanged on p's child watchers.
    s.read(S1, exists_w("/p/c")).unwrap();
    s.read(S2, get_children("/p", true)).unwrap();
    s.read(S2, get_data("/p", true)).unwrap();
    let (_, events) = s.write_events(S1, create("/p/c", Persistent));
    assert_eq!(
        events,
        vec![
            (S1, ev(EventType::NodeCreated, "/p/c")),
            (S2, ev(EventType::NodeChildrenChanged, "/p")),
        ]
    );
    assert!(
        s.watches.has_data_watch(S2, "/p"),
        "p's data did not change"
    );
    // setData → NodeDataChanged to data watchers only.
    s.read(S1, get_data("/p/c", true)).unwrap();
    s.read(S2, get_children("/p/c", true)).unwrap();
    let (_, events) = s.write_events(S1, set_data("/p/c", b"x", -1));
    assert_eq!(events, vec![(S1, ev(EventType::NodeDataChanged, "/p/c"))]);
    // delete → NodeDeleted to c's data and child watchers, NodeChildrenChanged to p's.
    s.read(S1, get_data("/p/c", true)).unwrap();
    s.read(S1, get_children("/p", true)).unwrap();
    let (_, events) = s.write_events(S1, delete("/p/c", -1));
    assert_eq!(
        events,
        vec![
            (S1, ev(EventType::NodeDeleted, "/p/c")),
            (S2, ev(EventType::NodeDeleted, "/p/c")),
            (S1, ev(EventType::NodeChildrenChanged, "/p")),
        ]
    );
    // Children of the root: the parent path is "/".
    s.read(S1, get_children("/", true)).unwrap();
    let (_, events) = s.write_events(S1, create("/top", Persistent));
    assert_eq!(events, vec![(S1, ev(EventType::NodeChildrenChanged, "/"))]);
}

#[test]
fn s17_watches_are_one_shot_and_deduplicated() {
    let mut s = Server::new();
    s.write(S1, create("/x", Persistent)).unwrap();
    // exists and getData both set the one data watch; twice is still once.
    s.read(S1, exists_w("/x")).unwrap();
    s.read(S1, get_data("/x", true)).unwrap();
    s.read(S1, get_data("/x", true)).unwrap();
    let (_, events) = s.write_events(S2, set_data("/x", b"1", -1));
    assert_eq!(events, vec![(S1, ev(EventType::NodeDataChanged, "/x"))]);
    let (_, events) = s.write_events(S2, set_data("/x", b"2", -1));
    assert!(events.is_empty(), "fired watch was removed");
    // A session with a data and a child watch on a deleted node gets one NodeDeleted.
    s.read(S1, get_data("/x", true)).unwrap();
    s.read(S1, get_children("/x", true)).unwrap();
    let (_, events) = s.write_events(S2, delete("/x", -1));
    assert_eq!(events, vec![(S1, ev(EventType::NodeDeleted, "/x"))]);
    assert!(s.watches.is_empty());
}

#[test]
fn s22_close_session_deletes_ephemerals_in_one_txn() {
    let mut s = Server::new();
    s.write(S1, create("/p", Persistent)).unwrap(); // 1
    s.write(S1, create("/p/e1", Ephemeral)).unwrap(); // 2
    s.write(S1, create("/p/e2-", EphemeralSequential)).unwrap(); // 3
    s.write(S2, create("/p/other", Ephemeral)).unwrap(); // 4
    s.read(S2, get_children("/p", true)).unwrap();
    s.read(S2, exists_w("/p/e1")).unwrap();
    let txn = s.tree.prepare_close_session(S1);
    assert_eq!(
        txn,
        Txn::CloseSession {
            session: S1,
            // Java 17 prints this order for the clone of a HashSet holding
            // /p/e1 then /p/e2-0000000001 (the server's deletion order).
            ephemerals: vec!["/p/e2-0000000001".into(), "/p/e1".into()]
        }
    );
    let (reply, events) = s.commit(&txn); // 5
    assert!(reply.is_ok());
    assert_eq!(s.children("/p"), vec!["other"]);
    assert!(s.tree.ephemerals_of(S1).is_empty());
    assert_eq!(s.stat("/p").pzxid, 5);
    assert_eq!(
        events,
        vec![
            (S2, ev(EventType::NodeChildrenChanged, "/p")),
            (S2, ev(EventType::NodeDeleted, "/p/e1")),
        ]
    );
}

#[test]
fn s25_set_watches_replays_missed_events() {
    // The same scenario as `sim/tests/oracle/WatchOracle.java` on a real
    // 3.8.0 server, which replays exactly these events in this order (the
    // client shows the duplicate NodeDeleted for /gone once per watcher).
    let mut s = Server::new();
    s.write(S1, create("/same", Persistent)).unwrap(); // 1
    s.write(S1, create("/changed", Persistent)).unwrap(); // 2
    s.write(S1, create("/gone", Persistent)).unwrap(); // 3
    s.write(S1, create("/kids", Persistent)).unwrap(); // 4
    let last_seen = s.zxid;
    s.write(S2, set_data("/changed", b"1", -1)).unwrap(); // 5
    s.write(S2, delete("/gone", -1)).unwrap(); // 6
    s.write(S2, create("/kids/k", Persistent)).unwrap(); // 7
    s.write(S2, create("/born", Persistent)).unwrap(); // 8
    let strs = |v: &[&str]| v.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    let events = s.watches.set_watches(
        S1,
        last_seen,
        &strs(&["/same", "/changed", "/gone"]),
        &strs(&["/born", "/unborn"]),
        &strs(&["/kids", "/same", "/gone"]),
        &s.tree,
    );
    assert_eq!(
        events,
        vec![
            ev(EventType::NodeDataChanged, "/changed"),
            ev(EventType::NodeDeleted, "/gone"),
            ev(EventType::NodeCreated, "/born"),
            ev(EventType::NodeChildrenChanged, "/kids"),
            ev(EventType::NodeDeleted, "/gone"),
        ]
    );
    // Re-armed exactly the ones that had nothing to report.
    assert!(s.watches.has_data_watch(S1, "/same"));
    assert!(s.watches.has_data_watch(S1, "/unborn"));
    assert!(s.watches.has_child_watch(S1, "/same"));
    assert_eq!(s.watches.len(), 3);
    let (_, events) = s.write_events(S2, create("/unborn", Persistent));
    assert_eq!(events, vec![(S1, ev(EventType::NodeCreated, "/unborn"))]);
}

#[test]
fn s30_get_children_returns_names_in_java_hash_order() {
    let mut s = Server::new();
    s.write(S1, create("/l", Persistent)).unwrap();
    for p in ["/l/write-", "/l/read-", "/l/write-"] {
        s.write(S1, create(p, EphemeralSequential)).unwrap();
    }
    let Ok(Response::Children { mut names, stat }) = s.read(S1, get_children("/l", false)) else {
        panic!("children")
    };
    assert_eq!(stat, s.stat("/l"));
    names.sort();
    assert_eq!(
        names,
        vec!["read-0000000001", "write-0000000000", "write-0000000002"]
    );

    // Names come in the server's HashSet order, not sorted. The expected
    // lists are what Java 17 prints for `new ArrayList<>(set)` of a
    // `new HashSet<>(8)` filled the same way (DataNode's children set).
    let mut s = Server::new();
    s.write(S1, create("/q", Persistent)).unwrap();
    for _ in 0..5 {
        s.write(S1, create("/q/lock-", PersistentSequential))
            .unwrap();
    }
    let lock = |i: u32| format!("lock-{i:010}");
    let order = |s: &mut Server| match s.read(S1, get_children("/q", false)) {
        Ok(Response::Children { names, .. }) => names,
        other => panic!("{other:?}"),
    };
    assert_eq!(order(&mut s), [1, 0, 4, 3, 2].map(lock));
    for _ in 5..10 {
        s.write(S1, create("/q/lock-", PersistentSequential))
            .unwrap();
    }
    // The 7th child grew the table from 8 to 16 buckets.
    assert_eq!(order(&mut s), [9, 8, 7, 6, 1, 0, 5, 4, 3, 2].map(lock));
    // Removing and re-adding moves a name to the end of its bucket.
    s.write(S1, delete("/q/lock-0000000003", -1)).unwrap();
    s.write(S1, create("/q/x-0000000010", Persistent)).unwrap();
    s.write(S1, create("/q/lock-0000000003", Persistent))
        .unwrap();
    let mut expected: Vec<String> = [9, 8, 7, 6, 1, 0, 5, 4].map(lock).to_vec();
    expected.extend(["x-0000000010".to_string(), lock(3), lock(2)]);
    assert_eq!(order(&mut s), expected);
    assert_eq!(s.children("/zookeeper"), vec!["config", "quota"]);
}

#[test]
fn s31_multi_all_or_nothing() {
    let mut s = Server::new();
    s.write(S1, create("/m", Persistent)).unwrap(); // 1
    let before = s.tree.clone();
    // Ops see earlier ops' effects: create then set its data then a failing delete.
    let (reply, events) = s.write_events(
        S1,
        Op::Multi(vec![
            create("/m/a", Persistent),
            set_data("/m/a", b"x", 0),
            delete("/m/missing", -1),
            create("/m/b", Persistent),
        ]),
    ); // 2
    assert_eq!(
        reply,
        Ok(Response::Multi(vec![
            Err(ZkError::RolledBack),
            Err(ZkError::RolledBack),
            Err(ZkError::NoNode),
            Err(ZkError::RuntimeInconsistency),
        ]))
    );
    assert!(events.is_empty());
    assert_eq!(ZkError::RolledBack.code(), 0);
    // Nothing applied, but the failed multi took zxid 2.
    assert_eq!(s.children("/m"), Vec::<String>::new());
    assert_eq!(s.stat("/m"), before.get("/m").unwrap().stat);
    assert_eq!(s.tree.last_zxid(), 2);

    // A successful multi: one zxid for all, results in order, sequential
    // suffixes advance within the multi.
    let reply = s.write(
        S1,
        Op::Multi(vec![
            create("/m/s-", PersistentSequential),
            create("/m/s-", PersistentSequential),
            set_data("/m", b"d", 0),
            delete("/m/s-0000000000", 0),
        ]),
    ); // 3
    let Ok(Response::Multi(results)) = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(results.len(), 4);
    assert!(
        matches!(&results[0], Ok(Response::Created { path, stat }) if path == "/m/s-0000000000" && stat.czxid == 3)
    );
    assert!(matches!(&results[1], Ok(Response::Created { path, .. }) if path == "/m/s-0000000001"));
    assert!(matches!(&results[2], Ok(Response::SetData(st)) if st.version == 1 && st.mzxid == 3));
    assert_eq!(results[3], Ok(Response::Deleted));
    assert_eq!(s.children("/m"), vec!["s-0000000001"]);
    let m = s.stat("/m");
    assert_eq!(
        (m.cversion, m.pzxid, m.num_children, m.version),
        (3, 3, 1, 1)
    );

    // A version conflict created by an earlier op of the same multi.
    let reply = s.write(
        S1,
        Op::Multi(vec![set_data("/m", b"e", 1), set_data("/m", b"f", 1)]),
    );
    assert_eq!(
        reply,
        Ok(Response::Multi(vec![
            Err(ZkError::RolledBack),
            Err(ZkError::BadVersion)
        ]))
    );
    assert_eq!(s.stat("/m").version, 1);
}

#[test]
fn apply_reports_triggers_in_server_order() {
    let mut tree = DataTree::new();
    let txn = tree.prepare(S1, &create("/a", Persistent));
    let (_, triggers) = tree.apply(1, 0, &txn);
    assert_eq!(
        triggers,
        vec![
            Trigger {
                path: "/a".into(),
                kind: EventType::NodeCreated
            },
            Trigger {
                path: "/".into(),
                kind: EventType::NodeChildrenChanged
            },
        ]
    );
}
