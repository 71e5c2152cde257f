// Conformance oracle for S25 (DataTree.setWatches): a session loses its connection, another
// session changes watched nodes, the first reconnects; prints what each watcher receives.
// Run: java -cp "/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/metrics-core.jar:/usr/share/java/commons-io.jar:/usr/share/java/commons-cli.jar" sim/tests/oracle/WatchOracle.java
// Measured on Debian 3.8.0:
//   after reconnect: [SyncConnected to every watcher, data:NodeDataChanged:/changed, child:NodeDeleted:/gone,
//                     data:NodeDeleted:/gone, exist:NodeCreated:/born, child:NodeChildrenChanged:/kids]
//   re-armed: [exist:NodeCreated:/unborn, data:NodeDataChanged:/same, child:NodeChildrenChanged:/same]
import java.io.File;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.util.*;
import java.util.concurrent.*;
import org.apache.zookeeper.*;
import org.apache.zookeeper.server.*;

public class WatchOracle {
    static List<String> log = Collections.synchronizedList(new ArrayList<>());
    static Watcher named(String name) {
        return e -> log.add(name + ":" + e.getType() + ":" + e.getPath() + (e.getType() == Watcher.Event.EventType.None ? ":" + e.getState() : ""));
    }
    static ZooKeeper connect(String hp, Watcher w) throws Exception {
        CountDownLatch c = new CountDownLatch(1);
        ZooKeeper z = new ZooKeeper(hp, 30000, e -> { w.process(e); if (e.getState() == Watcher.Event.KeeperState.SyncConnected) c.countDown(); });
        c.await(); return z;
    }
    static void mk(ZooKeeper z, String p) throws Exception { z.create(p, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT); }
    public static void main(String[] args) throws Exception {
        File dir = Files.createTempDirectory("zko").toFile();
        ZooKeeperServer zks = new ZooKeeperServer(dir, dir, 2000);
        ServerCnxnFactory f1 = ServerCnxnFactory.createFactory(0, 100);
        f1.startup(zks);
        int p2; try (ServerSocket s = new ServerSocket(0)) { p2 = s.getLocalPort(); }
        ServerCnxnFactory f2 = ServerCnxnFactory.createFactory(p2, 100);
        f2.startup(zks, false);
        ZooKeeper b = connect("127.0.0.1:" + f1.getLocalPort(), e -> {});
        ZooKeeper a = connect("127.0.0.1:" + p2, named("default"));
        for (String p : new String[]{"/same", "/changed", "/gone", "/kids"}) mk(a, p);
        Watcher wd = named("data"), we = named("exist"), wc = named("child");
        a.getData("/same", wd, null); a.getData("/changed", wd, null); a.getData("/gone", wd, null);
        a.exists("/born", we); a.exists("/unborn", we);
        a.getChildren("/kids", wc); a.getChildren("/same", wc); a.getChildren("/gone", wc);
        // Cut A off: stop listening on p2 and close its connection.
        ((NIOServerCnxnFactory) f2).stop();
        f2.join();
        f2.closeAll(ServerCnxn.DisconnectReason.SERVER_SHUTDOWN);
        Thread.sleep(500);
        b.setData("/changed", new byte[]{1}, -1);
        b.delete("/gone", -1);
        mk(b, "/kids/k");
        mk(b, "/born");
        mk(b, "/tmp"); b.delete("/tmp", -1);
        System.out.println("before reconnect: " + log);
        log.clear();
        ServerCnxnFactory f3 = ServerCnxnFactory.createFactory(p2, 100);
        f3.startup(zks, false);
        long deadline = System.currentTimeMillis() + 10000;
        while (!a.getState().isConnected() && System.currentTimeMillis() < deadline) Thread.sleep(50);
        Thread.sleep(3000);
        System.out.println("state " + a.getState() + " after reconnect: " + log);
        log.clear();
        mk(b, "/unborn");
        b.setData("/same", new byte[]{1}, -1);
        mk(b, "/same/x");
        b.setData("/changed", new byte[]{2}, -1);
        Thread.sleep(500);
        System.out.println("re-armed: " + log);
        a.close(); b.close(); f3.shutdown(); f1.shutdown();
    }
}
