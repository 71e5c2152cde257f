// Replays an op script (see gen_scripts.py) against an embedded ZooKeeper 3.8.0 server and prints
// normalized replies and watch events; sim/tests/oracle_replay.rs checks the simulator gives the same.
// Run: java -cp "/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/metrics-core.jar:/usr/share/java/commons-io.jar:/usr/share/java/commons-cli.jar" DiffOracle.java X.script > X.expected
import java.io.*;
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.*;
import org.apache.zookeeper.*;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.*;

/** Replays an op script against an embedded 3.8 server; prints normalized replies and watch events. */
public class DiffOracle {
    static Map<Long, String> names = new HashMap<>();
    static String owner(long id) { return id == 0 ? "0" : names.getOrDefault(id, "?" + id); }
    static String st(Stat s) {
        return s.getCzxid() + "," + s.getMzxid() + "," + s.getPzxid() + "," + s.getVersion() + "," + s.getCversion() + ","
            + s.getAversion() + "," + owner(s.getEphemeralOwner()) + "," + s.getDataLength() + "," + s.getNumChildren();
    }
    static CreateMode mode(String m) {
        switch (m) { case "P": return CreateMode.PERSISTENT; case "E": return CreateMode.EPHEMERAL;
            case "PS": return CreateMode.PERSISTENT_SEQUENTIAL; default: return CreateMode.EPHEMERAL_SEQUENTIAL; }
    }
    static byte[] data(String n) { byte[] b = new byte[Integer.parseInt(n)]; Arrays.fill(b, (byte) 'x'); return b; }
    static Op subOp(String[] t) {
        switch (t[0]) {
            case "create": return Op.create(t[1], data(t[3]), ZooDefs.Ids.OPEN_ACL_UNSAFE, mode(t[2]));
            case "delete": return Op.delete(t[1], Integer.parseInt(t[2]));
            default: return Op.setData(t[1], data(t[3]), Integer.parseInt(t[2]));
        }
    }
    static String multiItem(OpResult r) {
        if (r instanceof OpResult.ErrorResult) return "err " + ((OpResult.ErrorResult) r).getErr();
        if (r instanceof OpResult.CreateResult) return "created " + ((OpResult.CreateResult) r).getPath();
        if (r instanceof OpResult.SetDataResult) return "setdata " + st(((OpResult.SetDataResult) r).getStat());
        if (r instanceof OpResult.DeleteResult) return "deleted";
        return r.getClass().getSimpleName();
    }
    static String multi(List<OpResult> rs) {
        StringBuilder b = new StringBuilder("multi [");
        for (int i = 0; i < rs.size(); i++) b.append(i == 0 ? "" : "; ").append(multiItem(rs.get(i)));
        return b.append("]").toString();
    }

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Paths.get(args[0]));
        File dir = Files.createTempDirectory("zkdiff").toFile();
        ZooKeeperServer zks = new ZooKeeperServer(dir, dir, 2000);
        ServerCnxnFactory f = ServerCnxnFactory.createFactory(0, 100);
        f.startup(zks);
        String hp = "127.0.0.1:" + f.getLocalPort();
        int nsess = 3;
        ZooKeeper[] zk = new ZooKeeper[nsess + 1];
        List<List<WatchedEvent>> ev = new ArrayList<>();
        ev.add(null);
        for (int k = 1; k <= nsess; k++) {
            List<WatchedEvent> l = Collections.synchronizedList(new ArrayList<>());
            ev.add(l);
            CountDownLatch c = new CountDownLatch(1);
            zk[k] = new ZooKeeper(hp, 30000, e -> { if (e.getType() == Watcher.Event.EventType.None) { if (e.getState() == Watcher.Event.KeeperState.SyncConnected) c.countDown(); } else l.add(e); });
            c.await();
            names.put(zk[k].getSessionId(), "s" + k);
        }
        boolean[] closed = new boolean[nsess + 1];
        PrintStream out = System.out;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.isBlank() || line.startsWith("#") || line.startsWith(" ")) continue;
            String[] t = line.trim().split(" ");
            int k = Integer.parseInt(t[0].substring(1));
            ZooKeeper z = zk[k];
            String reply;
            try {
                switch (t[1]) {
                    case "create": {
                        Stat s = new Stat();
                        String p = z.create(t[2], data(t[4]), ZooDefs.Ids.OPEN_ACL_UNSAFE, mode(t[3]), s);
                        reply = "created " + p + " " + st(s); break; }
                    case "delete": z.delete(t[2], Integer.parseInt(t[3])); reply = "deleted"; break;
                    case "set": reply = "setdata " + st(z.setData(t[2], data(t[4]), Integer.parseInt(t[3]))); break;
                    case "exists": { Stat s = z.exists(t[2], t[3].equals("1")); reply = s == null ? "exists none" : "exists " + st(s); break; }
                    case "get": { Stat s = new Stat(); byte[] d = z.getData(t[2], t[3].equals("1"), s); reply = "data " + d.length + " " + st(s); break; }
                    case "children": { Stat s = new Stat(); List<String> c = z.getChildren(t[2], t[3].equals("1"), s); reply = "children " + c + " " + st(s); break; }
                    case "multi": {
                        int n = Integer.parseInt(t[2]);
                        List<Op> ops = new ArrayList<>();
                        for (int j = 1; j <= n; j++) ops.add(subOp(lines.get(i + j).trim().split(" ")));
                        reply = multi(z.multi(ops)); break; }
                    case "close": z.close(); closed[k] = true; reply = "closed"; break;
                    default: reply = "?";
                }
            } catch (KeeperException e) {
                reply = e.getResults() != null ? multi(e.getResults()) : "ERR " + e.code().intValue();
            } catch (IllegalArgumentException e) {
                reply = "ERR -8";
            }
            out.println((i + 1) + " " + reply);
            // Flush events: an async sync on each open session is answered after every earlier event.
            for (int j = 1; j <= nsess; j++) {
                if (closed[j]) continue;
                CountDownLatch c = new CountDownLatch(1);
                zk[j].sync("/", (rc, p, ctx) -> c.countDown(), null);
                c.await();
                synchronized (ev.get(j)) {
                    for (WatchedEvent e : ev.get(j)) out.println("  event s" + j + " " + e.getType() + " " + e.getPath());
                    ev.get(j).clear();
                }
            }
        }
        for (int j = 1; j <= nsess; j++) if (!closed[j]) zk[j].close();
        f.shutdown();
    }
}
