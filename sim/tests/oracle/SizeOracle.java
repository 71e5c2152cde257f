// Conformance oracle for sim/tests/rules_tree.rs: runs scenarios against an embedded
// ZooKeeper 3.8.0 standalone server (Debian libzookeeper-java) and prints what it answers.
// Run: java -cp "/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/metrics-core.jar:/usr/share/java/commons-io.jar:/usr/share/java/commons-cli.jar" sim/tests/oracle/SizeOracle.java
import java.io.File;
import java.nio.file.Files;
import java.util.*;
import java.util.concurrent.*;
import org.apache.zookeeper.*;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.*;

public class SizeOracle {
    static ZooKeeper zk; static String hp;
    static ZooKeeper connect() throws Exception {
        CountDownLatch c = new CountDownLatch(1);
        ZooKeeper z = new ZooKeeper(hp, 30000, e -> { if (e.getState() == Watcher.Event.KeeperState.SyncConnected) c.countDown(); });
        c.await(); return z;
    }
    static boolean ok(Callable<Object> c) throws Exception {
        try { c.call(); return true; } catch (KeeperException.ConnectionLossException e) { zk.close(); zk = connect(); return false; }
    }
    public static void main(String[] args) throws Exception {
        File dir = Files.createTempDirectory("zko").toFile();
        ZooKeeperServer zks = new ZooKeeperServer(dir, dir, 2000);
        ServerCnxnFactory f = ServerCnxnFactory.createFactory(0, 100);
        f.startup(zks);
        hp = "127.0.0.1:" + f.getLocalPort();
        zk = connect();
        zk.create("/big", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        for (int n : new int[]{1048551, 1048552}) { final int nn = n;
            System.out.println("setData /big " + n + " " + ok(() -> zk.setData("/big", new byte[nn], -1))); }
        for (int n : new int[]{1048525, 1048526}) { final int nn = n;
            System.out.println("create /cc " + n + " " + ok(() -> zk.create("/cc", new byte[nn], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT))); 
            try { zk.delete("/cc", -1);} catch (Exception e) {} }
        // multi: one setData op: 8 + 9 + (4+4 + 4+d + 4) + 9 = 42 + d
        for (int n : new int[]{1048533, 1048534}) { final int nn = n;
            System.out.println("multi setData /big " + n + " " + ok(() -> zk.multi(Arrays.asList(Op.setData("/big", new byte[nn], -1))))); }
        zk.close(); f.shutdown(); zks.shutdown();
    }
}
