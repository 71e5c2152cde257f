import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * The basic session, step for step the same as kazoo/session.py and
 * printing the same events: create, get, set, sequential and ephemeral
 * creates, a data watch and a child watch firing, delete, ls.
 */
public final class CuratorSession {
    private static final int WATCH_WAIT_S = 10;

    public static void main(String[] argv) throws Exception {
        Emit.Args args = new Emit.Args(argv);
        Emit.watchdog(args.deadlineS());
        CuratorFramework zk = Emit.client(args);
        long session = zk.getZookeeperClient().getZooKeeper().getSessionId();
        Emit.emit("session", "id", Emit.sessionHex(zk));
        Emit.emit("connected");
        String root = args.get("root", "/curator-session");
        BlockingQueue<WatchedEvent> fired = new LinkedBlockingQueue<>();

        Emit.emit("created", "path", zk.create().forPath(root));
        String a = root + "/a";
        Emit.emit("created", "path", zk.create().forPath(a, bytes("hello")));
        Stat stat = new Stat();
        byte[] data = zk.getData().storingStatIn(stat).forPath(a);
        Emit.emit("get", "path", a, "data", new String(data), "version", stat.getVersion());
        stat = zk.setData().forPath(a, bytes("world"));
        Emit.emit("set", "path", a, "version", stat.getVersion());
        for (int i = 0; i < 2; i++) {
            Emit.emit("created", "path",
                    zk.create().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath(root + "/seq-"));
        }
        String eph = zk.create().withMode(CreateMode.EPHEMERAL).forPath(root + "/eph");
        Emit.emit("created", "path", eph);
        stat = zk.checkExists().forPath(eph);
        Emit.emit("ephemeral", "path", eph, "mine", stat.getEphemeralOwner() == session);

        stat = new Stat();
        data = zk.getData().storingStatIn(stat).usingWatcher((Watcher) fired::add).forPath(a);
        Emit.emit("get", "path", a, "data", new String(data), "version", stat.getVersion());
        List<String> children = sorted(zk.getChildren().usingWatcher((Watcher) fired::add).forPath(root));
        Emit.emit("children", "path", root, "children", children);
        zk.setData().forPath(a, bytes("again"));
        waitWatch(fired);
        zk.delete().forPath(eph);
        waitWatch(fired);

        for (String child : sorted(zk.getChildren().forPath(root))) {
            zk.delete().forPath(root + "/" + child);
            Emit.emit("deleted", "path", root + "/" + child);
        }
        Emit.emit("children", "path", root, "children", sorted(zk.getChildren().forPath(root)));
        zk.delete().forPath(root);
        try {
            zk.getData().forPath(root);
            Emit.fail(root + " still exists after its delete");
        } catch (KeeperException.NoNodeException e) {
            Emit.emit("nonode", "path", root);
        }
        zk.close();
        Emit.emit("done");
        System.exit(0);
    }

    private static void waitWatch(BlockingQueue<WatchedEvent> fired) throws InterruptedException {
        WatchedEvent event = fired.poll(WATCH_WAIT_S, TimeUnit.SECONDS);
        if (event == null) {
            Emit.fail("no watch fired within " + WATCH_WAIT_S + "s");
            return;
        }
        Emit.emit("watch", "type", event.getType().name(), "path", event.getPath());
    }

    private static List<String> sorted(List<String> names) {
        List<String> out = new ArrayList<>(names);
        Collections.sort(out);
        return out;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
}
