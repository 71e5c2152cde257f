import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Curator's {@code LeaderLatch}, like kazoo/election.py and printing the
 * same events: {@code --candidates} candidates, each with its own session,
 * start a latch on {@code --path}; each, once leader, prints
 * {@code leader}, does a version-checked increment of {@code --resource},
 * holds for {@code --hold-ms}, prints {@code resign} and closes its latch.
 */
public final class CuratorLeader {
    public static void main(String[] argv) throws Exception {
        Emit.Args args = new Emit.Args(argv);
        Emit.watchdog(args.deadlineS());
        int candidates = args.getInt("candidates", 3);
        String path = args.get("path", "/E");
        String resource = args.get("resource", "/E-work");
        int holdMs = args.getInt("hold-ms", 50);
        List<CuratorFramework> clients = new ArrayList<>();
        List<ConnectionStateListener> listeners = new ArrayList<>();
        for (int i = 0; i < candidates; i++) {
            CuratorFramework zk = Emit.client(args);
            int index = i;
            Emit.emit("session", "candidate", i, "id", Emit.sessionHex(zk));
            ConnectionStateListener listener = (c, state) ->
                    Emit.emit("state", "candidate", index, "state", state.name());
            zk.getConnectionStateListenable().addListener(listener);
            listeners.add(listener);
            clients.add(zk);
        }
        try {
            clients.get(0).create().creatingParentsIfNeeded().forPath(resource, "0".getBytes(StandardCharsets.UTF_8));
        } catch (KeeperException.NodeExistsException e) {
            // Left by an earlier run: counting goes on from it.
        }
        AtomicInteger led = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < candidates; i++) {
            int index = i;
            CuratorFramework zk = clients.get(i);
            Thread t = new Thread(() -> {
                try (LeaderLatch latch = new LeaderLatch(zk, path, "candidate-" + index)) {
                    latch.start();
                    if (!latch.await(args.deadlineS(), TimeUnit.SECONDS)) {
                        Emit.fail("candidate " + index + " never led");
                    }
                    Emit.emit("leader", "candidate", index);
                    Stat stat = new Stat();
                    byte[] data = zk.getData().storingStatIn(stat).forPath(resource);
                    int value = Integer.parseInt(new String(data, StandardCharsets.UTF_8)) + 1;
                    zk.setData().withVersion(stat.getVersion())
                            .forPath(resource, Integer.toString(value).getBytes(StandardCharsets.UTF_8));
                    Thread.sleep(holdMs);
                    led.incrementAndGet();
                    Emit.emit("resign", "candidate", index);
                } catch (Exception e) {
                    Emit.fail("candidate " + index + ": " + e);
                }
            }, "candidate-" + i);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        byte[] data = clients.get(0).getData().forPath(resource);
        Emit.emit("final", "value", Integer.parseInt(new String(data, StandardCharsets.UTF_8)), "led", led.get());
        for (int i = 0; i < candidates; i++) {
            // Closing is not news.
            clients.get(i).getConnectionStateListenable().removeListener(listeners.get(i));
            clients.get(i).close();
        }
        Emit.emit("done");
        System.exit(0);
    }
}
