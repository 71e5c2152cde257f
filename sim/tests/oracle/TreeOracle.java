// Conformance oracle for sim/tests/rules_tree.rs: runs scenarios against an embedded
// ZooKeeper 3.8.0 standalone server (Debian libzookeeper-java) and prints what it answers.
// Run: java -cp "/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/metrics-core.jar:/usr/share/java/commons-io.jar:/usr/share/java/commons-cli.jar" sim/tests/oracle/TreeOracle.java
import java.io.File;
import java.nio.file.Files;
import java.util.*;
import java.util.concurrent.*;
import org.apache.zookeeper.*;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.*;

public class TreeOracle {
    static ZooKeeper zk;
    static String st(Stat s) {
        return String.format("czxid=%d mzxid=%d pzxid=%d version=%d cversion=%d aversion=%d owner=%d dataLength=%d numChildren=%d",
            s.getCzxid(), s.getMzxid(), s.getPzxid(), s.getVersion(), s.getCversion(), s.getAversion(), s.getEphemeralOwner(), s.getDataLength(), s.getNumChildren());
    }
    static void p(String k, Object v) { System.out.println(k + " => " + v); }
    static String tryDo(Callable<Object> c) {
        try { Object o = c.call(); return "OK " + o; }
        catch (KeeperException e) { return "ERR " + e.code() + " results=" + (e.getResults()==null?null:res(e.getResults())); }
        catch (Exception e) { return "EXC " + e.getClass().getSimpleName() + ": " + e.getMessage(); }
    }
    static String res(List<OpResult> rs) {
        StringBuilder b = new StringBuilder("[");
        for (OpResult r : rs) {
            if (r instanceof OpResult.ErrorResult) b.append("Err(" + ((OpResult.ErrorResult) r).getErr() + ") ");
            else if (r instanceof OpResult.CreateResult) b.append("Created(" + ((OpResult.CreateResult) r).getPath() + ") ");
            else if (r instanceof OpResult.SetDataResult) b.append("SetData(v=" + ((OpResult.SetDataResult) r).getStat().getVersion() + ") ");
            else b.append(r.getClass().getSimpleName() + " ");
        }
        return b.append("]").toString();
    }
    public static void main(String[] args) throws Exception {
        File dir = Files.createTempDirectory("zko").toFile();
        ZooKeeperServer zks = new ZooKeeperServer(dir, dir, 2000);
        ServerCnxnFactory f = ServerCnxnFactory.createFactory(0, 100);
        f.startup(zks);
        int port = f.getLocalPort();
        List<WatchedEvent> events = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch c = new CountDownLatch(1);
        zk = new ZooKeeper("127.0.0.1:" + port, 30000, e -> { if (e.getType() == Watcher.Event.EventType.None) c.countDown(); else events.add(e); });
        c.await();
        ZooKeeper zk2 = new ZooKeeper("127.0.0.1:" + port, 30000, e -> {});
        Thread.sleep(300);
        for (String path : new String[]{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"}) {
            Stat s = new Stat();
            byte[] d = zk.getData(path, false, s);
            p("fresh " + path, st(s) + " data=" + (d == null ? "null" : d.length) + " children=" + zk.getChildren(path, false));
        }
        // S5
        zk.create("/p", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        p("S5 s1", zk.create("/p/s-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL));
        zk.create("/p/plain", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.delete("/p/plain", -1);
        p("S5 stat after delete", st(zk.exists("/p", false)));
        p("S5 s2", zk.create("/p/s-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL));
        // error takes a zxid?
        Stat a = new Stat();
        zk.create("/z1", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, a);
        p("dup create", tryDo(() -> zk.create("/z1", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT)));
        p("setData badversion", tryDo(() -> zk.setData("/z1", new byte[0], 5)));
        Stat b = new Stat();
        zk.create("/z2", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, b);
        p("zxid gap over 2 failed writes", b.getCzxid() - a.getCzxid());
        // multi failure
        zk.create("/m", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        Stat m0 = zk.exists("/m", false);
        p("multi fail", tryDo(() -> zk.multi(Arrays.asList(
            Op.create("/m/a", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT),
            Op.setData("/m/a", new byte[]{1}, 0),
            Op.delete("/m/missing", -1),
            Op.create("/m/b", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT)))));
        Stat z3 = new Stat();
        zk.create("/z3", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, z3);
        p("zxid gap over failed multi", z3.getCzxid() - m0.getCzxid());
        p("multi ok", tryDo(() -> res(zk.multi(Arrays.asList(
            Op.create("/m/s-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL),
            Op.create("/m/s-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL),
            Op.setData("/m", new byte[]{1}, 0),
            Op.delete("/m/s-0000000000", 0))))));
        p("multi ok /m", st(zk.exists("/m", false)));
        p("multi version conflict", tryDo(() -> zk.multi(Arrays.asList(Op.setData("/m", new byte[]{1}, 1), Op.setData("/m", new byte[]{2}, 1)))));
        p("empty multi", tryDo(() -> res(zk.multi(new ArrayList<>()))));
        p("multi mixing read", tryDo(() -> zk.multi(Arrays.asList(Op.getData("/m"), Op.delete("/m", -1)))));
        p("multi bad path", tryDo(() -> zk.multi(Arrays.asList(Op.delete("/m/", -1)))));
        // children order
        zk.create("/q", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        for (int i = 0; i < 5; i++) zk.create("/q/lock-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL);
        p("order5", zk.getChildren("/q", false));
        for (int i = 5; i < 10; i++) zk.create("/q/lock-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL);
        p("order10", zk.getChildren("/q", false));
        zk.delete("/q/lock-0000000003", -1);
        zk.create("/q/x-0000000010", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.create("/q/lock-0000000003", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        p("order11", zk.getChildren("/q", false));
        // special paths and codes
        p("delete /", tryDo(() -> { zk.delete("/", -1); return null; }));
        p("delete /zookeeper", tryDo(() -> { zk.delete("/zookeeper", -1); return null; }));
        p("delete /zookeeper/config", tryDo(() -> { zk.delete("/zookeeper/config", -1); return null; }));
        p("setData config", tryDo(() -> zk.setData("/zookeeper/config", new byte[0], -1)));
        p("create under config", tryDo(() -> zk.create("/zookeeper/config/x", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT)));
        p("create under /zookeeper", tryDo(() -> zk.create("/zookeeper/x", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT)));
        p("create /", tryDo(() -> zk.create("/", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT)));
        p("create / seq", tryDo(() -> zk.create("/", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL)));
        p("create /a/ seq (no parent)", tryDo(() -> zk.create("/nop/", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT_SEQUENTIAL)));
        p("getData invalid", tryDo(() -> zk.getData("/a/", false, null)));
        p("exists invalid", tryDo(() -> zk.exists("a", false)));
        zk.create("/e", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        p("child of ephemeral", tryDo(() -> zk.create("/e/c", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT)));
        p("child of ephemeral exists already? dup", tryDo(() -> zk.create("/e", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT)));
        zk.create("/d", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        zk.create("/d/c", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        p("delete nonempty wrong version", tryDo(() -> { zk.delete("/d", 3); return null; }));
        p("delete nonempty", tryDo(() -> { zk.delete("/d", -1); return null; }));
        p("delete child of missing", tryDo(() -> { zk.delete("/nope/x", -1); return null; }));
        // data size
        zk.create("/big", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        int lo = 0, hi = 2 * 1024 * 1024;
        for (int n : new int[]{1024 * 1024 - 100, 1024 * 1024 - 1, 1024 * 1024, 1024 * 1024 + 1}) {
            final int nn = n;
            String r = tryDo(() -> zk.setData("/big", new byte[nn], -1) != null);
            p("setData size " + n, r);
            if (!zk.getState().isConnected()) { Thread.sleep(3000); }
        }
        // watches: exists on missing, NodeCreated
        events.clear();
        zk.exists("/w", true);
        zk2.create("/w", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        Thread.sleep(300);
        p("exists watch", events);
        events.clear();
        zk.getData("/w", true, null);
        zk.getChildren("/w", true);
        zk2.delete("/w", -1);
        Thread.sleep(300);
        p("delete with data+child watch (default watcher)", events);
        events.clear();
        p("getData missing with watch", tryDo(() -> zk.getData("/w", true, null)));
        zk2.create("/w", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        Thread.sleep(300);
        p("no watch after NoNode getData", events);
        zk.close(); zk2.close(); f.shutdown(); zks.shutdown();
    }
}
