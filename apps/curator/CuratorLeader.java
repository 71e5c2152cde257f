import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * Curator's {@code LeaderLatch}, like kazoo/election.py and printing the
 * same events: {@code --candidates} candidates, each with its own session,
 * start a latch on {@code --path}. A leader's term is {@code --writes}
 * version-checked increments of {@code --resource}, {@code --hold-ms}
 * apart; then it prints {@code resign} and closes its latch.
 *
 * <p>A leader stops acting when its connection-state listener hears
 * SUSPENDED or LOST, or its latch says it no longer leads: the term is
 * abandoned ({@code abandon}) and the candidate runs again with a new
 * latch; a write whose reply was lost is not sent again. Each write is
 * also fenced by the latch node the candidate was elected by (one multi:
 * check that node, then the version-checked set; the resource's create
 * likewise), because those checks
 * alone are not enough: Curator tells the latch and the listeners of a
 * state change on its own threads, and a latch that re-creates its node
 * after a reconnect deletes the old one in the background, so a leader
 * can pass both checks and write just after its node is gone and the
 * next candidate leads (seen once by zkcheck under drops, in CI;
 * docs/RUNS.md). With {@code --ignore-lost} it writes its whole
 * term whatever happens, unfenced, Curator retrying each write — the bug:
 * two leaders act after an expiry.
 */
public final class CuratorLeader {
    public static void main(String[] argv) throws Exception {
        Emit.Args args = new Emit.Args(argv);
        Emit.watchdog(args.deadlineS());
        int candidates = args.getInt("candidates", 3);
        String resource = args.get("resource", "/E-work");
        List<Candidate> all = new ArrayList<>();
        for (int i = 0; i < candidates; i++) {
            all.add(new Candidate(i, args));
        }
        CuratorFramework setup = all.get(0).zk;
        Emit.emit("ready");
        AtomicInteger led = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (Candidate c : all) {
            Thread t = new Thread(() -> {
                c.run();
                led.incrementAndGet();
            }, "candidate-" + c.index);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        byte[] data = setup.getData().forPath(resource);
        Emit.emit("final", "value", Integer.parseInt(new String(data, StandardCharsets.UTF_8)), "led", led.get());
        for (Candidate c : all) {
            c.stop();
        }
        Emit.emit("done");
        System.exit(0);
    }

    static final class Candidate {
        final int index;
        final CuratorFramework zk;
        private final Emit.Args args;
        /** Bumped on every SUSPENDED or LOST. */
        private final AtomicInteger interruptions = new AtomicInteger();
        private final boolean careful;
        private final ConnectionStateListener listener;

        Candidate(int index, Emit.Args args) throws Exception {
            this.index = index;
            this.args = args;
            this.careful = !args.flag("ignore-lost");
            this.zk = Emit.client(args);
            Emit.emit("session", "candidate", index, "id", Emit.sessionHex(zk));
            listener = (client, state) -> {
                if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
                    interruptions.incrementAndGet();
                }
                Emit.emit("state", "candidate", index, "state", state.name());
            };
            zk.getConnectionStateListenable().addListener(listener);
        }

        /** Run for leader until one whole term is done. */
        void run() {
            while (true) {
                try (LeaderLatch latch = new LeaderLatch(zk, args.get("path", "/E"), "candidate-" + index)) {
                    latch.start();
                    if (!latch.await(args.deadlineS(), TimeUnit.SECONDS)) {
                        Emit.fail("candidate " + index + " never led");
                    }
                    if (term(latch)) {
                        return;
                    }
                } catch (Exception e) {
                    Emit.emit("retry", "candidate", index, "reason", e.getClass().getSimpleName());
                    pause(50);
                }
            }
        }

        /** One term; true if it was completed. */
        private boolean term(LeaderLatch latch) throws Exception {
            String resource = args.get("resource", "/E-work");
            int seen = interruptions.get();
            // The node that made this candidate leader: while it exists it
            // is the lowest, so a write fenced by it is a leader's write.
            String elected = latch.getLastPathIsLeader();
            Emit.emit("leader", "candidate", index);
            if (careful) {
                // The resource's create is a leader's write too: fenced.
                if (interruptions.get() != seen || !latch.hasLeadership() || elected == null) {
                    Emit.emit("abandon", "candidate", index);
                    return false;
                }
                ZooKeeper handle = zk.getZookeeperClient().getZooKeeper();
                if (handle.exists(resource, false) == null) {
                    try {
                        handle.multi(List.of(Op.check(elected, -1),
                                Op.create(resource, "0".getBytes(StandardCharsets.UTF_8),
                                        ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT)));
                    } catch (KeeperException.NodeExistsException e) {
                        // Created by an earlier term whose reply was lost.
                    } catch (KeeperException.NoNodeException e) {
                        Emit.emit("abandon", "candidate", index);
                        return false;
                    }
                }
            } else {
                CuratorMutex.retriedEnsure(zk, resource);
            }
            for (int i = 0; i < args.getInt("writes", 1); i++) {
                if (careful && (interruptions.get() != seen || !latch.hasLeadership() || elected == null)) {
                    Emit.emit("abandon", "candidate", index);
                    return false;
                }
                Stat stat = new Stat();
                byte[] data = zk.getData().storingStatIn(stat).forPath(resource);
                if (careful && (interruptions.get() != seen || !latch.hasLeadership())) {
                    Emit.emit("abandon", "candidate", index);
                    return false;
                }
                int value = Integer.parseInt(new String(data, StandardCharsets.UTF_8)) + 1;
                byte[] bytes = Integer.toString(value).getBytes(StandardCharsets.UTF_8);
                try {
                    if (careful) {
                        // Sent once, as CuratorMutex's careful writes.
                        zk.getZookeeperClient().getZooKeeper().multi(List.of(
                                Op.check(elected, -1),
                                Op.setData(resource, bytes, stat.getVersion())));
                    } else {
                        CuratorMutex.retriedWrite(zk, resource, bytes, stat.getVersion());
                    }
                    Emit.emit("write", "candidate", index, "value", value);
                } catch (KeeperException.BadVersionException e) {
                    Emit.emit("conflict", "candidate", index);
                } catch (KeeperException.NoNodeException e) {
                    // The latch node is gone: no longer the leader.
                    Emit.emit("abandon", "candidate", index);
                    return false;
                }
                pause(args.getInt("hold-ms", 50));
            }
            Emit.emit("resign", "candidate", index);
            return true;
        }

        void stop() {
            // Closing is not news.
            zk.getConnectionStateListenable().removeListener(listener);
            zk.close();
        }

        private static void pause(int ms) {
            if (ms <= 0) {
                return;
            }
            try {
                Thread.sleep(ms);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
