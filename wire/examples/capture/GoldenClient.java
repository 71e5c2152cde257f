// Drives ZooKeeper's own Java client (3.8) through every request the wire
// codec speaks, for `examples/capture.rs`, which relays and records the
// frames. Before each step it prints "STEP <name>" and waits for a line on
// stdin, so the recorder labels the step's frames (and can drop the
// connections on a "drop" step) before the step's first byte is sent.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

public class GoldenClient {
    static final BufferedReader IN =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    static final List<org.apache.zookeeper.data.ACL> OPEN = ZooDefs.Ids.OPEN_ACL_UNSAFE;

    static void step(String name) throws Exception {
        System.out.println("STEP " + name);
        System.out.flush();
        if (IN.readLine() == null) {
            throw new IllegalStateException("the recorder went away");
        }
    }

    static void say(String what) {
        System.out.println("INFO " + what);
        System.out.flush();
    }

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** A watcher that queues every event it sees. */
    static final class Events implements Watcher {
        final BlockingQueue<WatchedEvent> queue = new LinkedBlockingQueue<>();

        public void process(WatchedEvent e) {
            queue.add(e);
        }

        /** Waits for an event of this type (ignoring others), bounded. */
        WatchedEvent await(Event.EventType type, Event.KeeperState state) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < deadline) {
                WatchedEvent e = queue.poll(100, TimeUnit.MILLISECONDS);
                if (e != null) {
                    say("event " + e);
                    if (e.getType() == type && e.getState() == state) {
                        return e;
                    }
                }
            }
            throw new IllegalStateException("no " + type + "/" + state + " event");
        }

        WatchedEvent awaitNode(Event.EventType type) throws Exception {
            return await(type, Event.KeeperState.SyncConnected);
        }
    }

    static ZooKeeper connect(String cs, Events events) throws Exception {
        ZooKeeper zk = new ZooKeeper(cs, 2000, events);
        events.await(Watcher.Event.EventType.None, Watcher.Event.KeeperState.SyncConnected);
        return zk;
    }

    interface Action {
        void run() throws Exception;
    }

    /** Runs a step that the server is expected to refuse; says with what. */
    static void expectError(String name, Action a) throws Exception {
        step(name);
        try {
            a.run();
            throw new IllegalStateException(name + ": expected an error");
        } catch (KeeperException e) {
            say(name + " -> " + e.code() + " results " + e.getResults());
        }
    }

    public static void main(String[] args) throws Exception {
        String cs = args[0];
        Events ev = new Events();

        step("connect a new session (session A)");
        ZooKeeper zk = connect(cs, ev);

        step("create persistent /golden with data (create)");
        zk.create("/golden", b("root"), OPEN, CreateMode.PERSISTENT);
        step("create with null data (create)");
        zk.create("/golden/null", null, OPEN, CreateMode.PERSISTENT);
        step("create ephemeral with stat (create2)");
        zk.create("/golden/eph", b("e"), OPEN, CreateMode.EPHEMERAL, new Stat());
        step("create persistent sequential (create)");
        zk.create("/golden/seq-", b(""), OPEN, CreateMode.PERSISTENT_SEQUENTIAL);
        step("create ephemeral sequential with stat (create2)");
        zk.create("/golden/eseq-", b("x"), OPEN, CreateMode.EPHEMERAL_SEQUENTIAL, new Stat());
        step("create container (createContainer)");
        zk.create("/golden/container", b("c"), OPEN, CreateMode.CONTAINER);
        step("create container with stat (createContainer)");
        zk.create("/golden/container2", b("c"), OPEN, CreateMode.CONTAINER, new Stat());
        expectError("createTTL with extended types off (error)", () ->
            zk.create("/golden/ttl", b("t"), OPEN, CreateMode.PERSISTENT_WITH_TTL, new Stat(), 60000));
        expectError("create an existing node (NodeExists)", () ->
            zk.create("/golden", b(""), OPEN, CreateMode.PERSISTENT));
        expectError("create under a missing parent (NoNode)", () ->
            zk.create("/missing/child", b(""), OPEN, CreateMode.PERSISTENT));
        expectError("create a child of an ephemeral (NoChildrenForEphemerals)", () ->
            zk.create("/golden/eph/child", b(""), OPEN, CreateMode.PERSISTENT));

        step("exists on a present node with watch (exists)");
        zk.exists("/golden", true);
        step("exists on an absent node with watch (exists, NoNode)");
        zk.exists("/golden/later", true);
        step("create the watched node (create + NodeCreated notification)");
        zk.create("/golden/later", b("l"), OPEN, CreateMode.PERSISTENT);
        ev.awaitNode(Watcher.Event.EventType.NodeCreated);

        step("getData with watch (getData)");
        zk.getData("/golden", true, new Stat());
        step("getData of a null-data node (getData)");
        zk.getData("/golden/null", false, null);
        expectError("getData of a missing node (NoNode)", () -> zk.getData("/golden/nope", false, null));
        step("setData on the watched node (setData + NodeDataChanged notification)");
        zk.setData("/golden", b("root2"), -1);
        ev.awaitNode(Watcher.Event.EventType.NodeDataChanged);
        expectError("setData with a stale version (BadVersion)", () -> zk.setData("/golden", b("x"), 0));
        step("setData to null data (setData)");
        zk.setData("/golden/later", null, 0);

        step("getChildren with watch (getChildren)");
        zk.getChildren("/golden", true);
        step("getChildren2 (getChildren2)");
        zk.getChildren("/golden", false, new Stat());
        step("create a child under the watched parent (create + NodeChildrenChanged notification)");
        zk.create("/golden/kid", b("k"), OPEN, CreateMode.PERSISTENT);
        ev.awaitNode(Watcher.Event.EventType.NodeChildrenChanged);

        step("getACL (getACL)");
        zk.getACL("/golden/kid", new Stat());
        step("setACL (setACL)");
        zk.setACL("/golden/kid", OPEN, 0);

        step("sync (sync)");
        CountDownLatch synced = new CountDownLatch(1);
        zk.sync("/golden", (rc, path, ctx) -> synced.countDown(), null);
        synced.await(10, TimeUnit.SECONDS);

        step("getAllChildrenNumber (getAllChildrenNumber)");
        say("all children " + zk.getAllChildrenNumber("/golden"));
        step("getEphemerals of the session (getEphemerals /)");
        say("ephemerals " + zk.getEphemerals());
        step("getEphemerals under a prefix (getEphemerals)");
        say("ephemerals " + zk.getEphemerals("/golden/e"));

        step("multi that succeeds (multi)");
        say("multi " + zk.multi(Arrays.asList(
            Op.create("/golden/m1", b("1"), OPEN, CreateMode.PERSISTENT),
            Op.create("/golden/mc", b("c"), OPEN, CreateMode.CONTAINER),
            Op.create("/golden/m-", b("s"), OPEN, CreateMode.EPHEMERAL_SEQUENTIAL),
            Op.setData("/golden/m1", b("2"), 0),
            Op.check("/golden/m1", 1),
            Op.delete("/golden/m1", 1))));
        expectError("multi that fails on its second op (multi, BadVersion)", () ->
            zk.multi(Arrays.asList(
                Op.create("/golden/m3", b("3"), OPEN, CreateMode.PERSISTENT),
                Op.check("/golden", 999),
                Op.delete("/golden/kid", -1))));
        expectError("multi with a TTL create (multi, error)", () ->
            zk.multi(Arrays.asList(
                Op.create("/golden/mt", b("t"), OPEN, CreateMode.PERSISTENT_WITH_TTL, 60000))));
        step("multiRead with a missing node (multiRead)");
        say("multiRead " + zk.multi(Arrays.asList(
            Op.getChildren("/golden"),
            Op.getData("/golden"),
            Op.getData("/golden/nope"))));

        // Watches pending now: data and child watches on /golden (getData and
        // getChildren above fired; set them again) and an exists watch.
        step("arm one-shot watches before a reconnect (getData, getChildren, exists)");
        zk.getData("/golden", true, null);
        zk.getChildren("/golden", true);
        zk.exists("/golden/absent", true);
        step("drop the connection (the client re-attaches: connect + setWatches)");
        ev.await(Watcher.Event.EventType.None, Watcher.Event.KeeperState.Disconnected);
        ev.await(Watcher.Event.EventType.None, Watcher.Event.KeeperState.SyncConnected);
        step("sync after re-attaching (sync)");
        CountDownLatch synced2 = new CountDownLatch(1);
        zk.sync("/golden", (rc, path, ctx) -> synced2.countDown(), null);
        synced2.await(10, TimeUnit.SECONDS);

        Events persistent = new Events();
        step("addWatch persistent (addWatch mode 0)");
        zk.addWatch("/golden/pw", persistent, AddWatchMode.PERSISTENT);
        step("create and change the persistently watched node (notifications)");
        zk.create("/golden/pw", b("p"), OPEN, CreateMode.PERSISTENT);
        persistent.awaitNode(Watcher.Event.EventType.NodeCreated);
        zk.setData("/golden/pw", b("p2"), -1);
        persistent.awaitNode(Watcher.Event.EventType.NodeDataChanged);
        Events recursive = new Events();
        step("addWatch persistent recursive (addWatch mode 1)");
        zk.addWatch("/golden/rw", recursive, AddWatchMode.PERSISTENT_RECURSIVE);
        step("create below the recursively watched node (notifications)");
        zk.create("/golden/rw", b("r"), OPEN, CreateMode.PERSISTENT);
        recursive.awaitNode(Watcher.Event.EventType.NodeCreated);
        zk.create("/golden/rw/a", b("a"), OPEN, CreateMode.PERSISTENT);
        recursive.awaitNode(Watcher.Event.EventType.NodeCreated);
        step("drop the connection with persistent watches (connect + setWatches2)");
        ev.await(Watcher.Event.EventType.None, Watcher.Event.KeeperState.Disconnected);
        ev.await(Watcher.Event.EventType.None, Watcher.Event.KeeperState.SyncConnected);

        Events one = new Events();
        step("a data watch to remove (getData)");
        zk.getData("/golden/kid", one, null);
        step("remove one watcher (checkWatches)");
        zk.removeWatches("/golden/kid", one, Watcher.WatcherType.Data, false);
        step("remove all watches of a path (removeWatches)");
        zk.removeAllWatches("/golden/pw", Watcher.WatcherType.Any, false);
        expectError("remove watches of a path without any (NoWatcher)", () ->
            zk.removeAllWatches("/golden/unwatched", Watcher.WatcherType.Any, false));

        step("idle past a third of the session timeout (ping)");
        Thread.sleep(1500);

        step("add digest auth (auth)");
        zk.addAuthInfo("digest", b("golden:secret"));
        CountDownLatch synced3 = new CountDownLatch(1);
        zk.sync("/golden", (rc, path, ctx) -> synced3.countDown(), null);
        synced3.await(10, TimeUnit.SECONDS);
        step("create a node only its creator may read (create, CREATOR_ALL_ACL)");
        zk.create("/golden/secret", b("s"), ZooDefs.Ids.CREATOR_ALL_ACL, CreateMode.PERSISTENT);

        Events evB = new Events();
        step("connect a second session (session B)");
        ZooKeeper other = connect(cs, evB);
        expectError("session B reads the creator-only node (NoAuth)", () ->
            other.getData("/golden/secret", false, null));
        step("session B sets an exists watch on the kid (exists)");
        other.exists("/golden/kid", true);

        step("delete the watched kid (delete + NodeDeleted notification)");
        zk.delete("/golden/kid", -1);
        evB.awaitNode(Watcher.Event.EventType.NodeDeleted);
        expectError("delete a node with children (NotEmpty)", () -> zk.delete("/golden", -1));
        expectError("delete a missing node (NoNode)", () -> zk.delete("/golden/nope", -1));
        expectError("delete with a stale version (BadVersion)", () -> zk.delete("/golden/later", 7));

        step("close session B (closeSession)");
        other.close();
        step("close session A (closeSession)");
        zk.close();

        Events evC = new Events();
        step("connect session C");
        ZooKeeper bad = connect(cs, evC);
        step("auth with an unknown scheme (auth, AuthFailed)");
        bad.addAuthInfo("nosuchscheme", b("x"));
        evC.await(Watcher.Event.EventType.None, Watcher.Event.KeeperState.AuthFailed);
        bad.close();
        step("done");
    }
}
