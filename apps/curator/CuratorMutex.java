import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * Curator's {@code InterProcessMutex} guarding version-checked increments
 * of a resource, like kazoo/lock.py and printing the same events.
 *
 * <p>Each of {@code --threads} workers has its own client (its own
 * session) and does {@code --increments} increments of the integer in
 * {@code --resource}, each under the mutex on {@code --lock}. By default a
 * worker's connection-state listener makes it stop work on SUSPENDED or
 * LOST: an increment whose lock hold saw either is abandoned, and a write
 * whose reply was lost is not sent again. Its writes (the resource's
 * create too) go through the ZooKeeper handle of the session that owns
 * the lock node, checked once per hold: Curator's own calls are retried
 * on a new session after an expiry, and a check of the listener's count
 * cannot stop one already under way (docs/RUNS.md). With {@code --ignore-lost} the
 * worker never acts on connection states (it still prints them) and lets
 * Curator retry its writes — the twin without the listener's protection.
 * {@code --hold-ms} makes each worker's first increment sleep between its
 * read and its write: a window for a harness to inject a fault.
 */
public final class CuratorMutex {
    public static void main(String[] argv) throws Exception {
        Emit.Args args = new Emit.Args(argv);
        Emit.watchdog(args.deadlineS());
        int threads = args.getInt("threads", 5);
        String resource = args.get("resource", "/R");
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            workers.add(new Worker(i, args));
        }
        CuratorFramework setup = workers.get(0).zk;
        Emit.emit("ready");
        List<Thread> running = new ArrayList<>();
        for (Worker w : workers) {
            Thread t = new Thread(w::run, "worker-" + w.index);
            t.start();
            running.add(t);
        }
        for (Thread t : running) {
            t.join();
        }
        int value = Integer.parseInt(new String(setup.getData().forPath(resource), StandardCharsets.UTF_8));
        int done = workers.stream().mapToInt(w -> w.done).sum();
        Emit.emit("final", "value", value, "increments", done);
        for (Worker w : workers) {
            w.stop();
        }
        Emit.emit("done");
        System.exit(0);
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * A version-checked write through Curator, whose retry policy sends it
     * again after a connection loss, and after an expiry from the new
     * session: the twins' write (careful workers write on their pinned
     * handle instead, sent once).
     */
    static void retriedWrite(CuratorFramework zk, String path, byte[] data, int version) throws Exception {
        zk.setData().withVersion(version).forPath(path, data);
    }

    /**
     * Create the resource if it is not there yet: called under the lock
     * (or by a leader), as every write to it — a judge of owner-writes
     * counts creates too. One left by an earlier run: counting goes on.
     * On one session's handle: nothing is retried elsewhere.
     */
    static void ensure(ZooKeeper pinned, String resource) throws Exception {
        if (pinned.exists(resource, false) == null) {
            try {
                pinned.create(resource, bytes("0"), org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        org.apache.zookeeper.CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                // Created by an earlier hold whose reply was lost.
            }
        }
    }

    /** {@link #ensure(ZooKeeper, String)} through Curator, retried (the twins'). */
    static void retriedEnsure(CuratorFramework zk, String resource) throws Exception {
        if (zk.checkExists().forPath(resource) == null) {
            try {
                zk.create().creatingParentsIfNeeded().forPath(resource, bytes("0"));
            } catch (KeeperException.NodeExistsException e) {
                // Created by an earlier hold whose reply was lost.
            }
        }
    }

    static final class Worker {
        final int index;
        final CuratorFramework zk;
        private final Emit.Args args;
        /** Bumped on every SUSPENDED or LOST. */
        private final AtomicInteger interruptions = new AtomicInteger();
        private final boolean careful;
        private final ConnectionStateListener listener;
        int done;
        private boolean heldOnce;

        Worker(int index, Emit.Args args) throws Exception {
            this.index = index;
            this.args = args;
            this.careful = !args.flag("ignore-lost");
            this.zk = Emit.client(args);
            Emit.emit("session", "worker", index, "id", Emit.sessionHex(zk));
            listener = (client, state) -> {
                if (state == ConnectionState.SUSPENDED
                        || state == ConnectionState.LOST) {
                    interruptions.incrementAndGet();
                }
                Emit.emit("state", "worker", index, "state", state.name());
            };
            zk.getConnectionStateListenable().addListener(listener);
        }

        void run() {
            int increments = args.getInt("increments", 20);
            InterProcessMutex mutex = new InterProcessMutex(zk, args.get("lock", "/L"));
            while (done < increments) {
                try {
                    if (!mutex.acquire(args.deadlineS(), TimeUnit.SECONDS)) {
                        Emit.fail("worker " + index + ": lock not acquired in time");
                    }
                } catch (Exception e) {
                    Emit.emit("retry", "worker", index, "reason", e.getClass().getSimpleName());
                    pause(50);
                    continue;
                }
                int seen = interruptions.get();
                Emit.emit("acquired", "worker", index);
                try {
                    increment(seen, mutex);
                } catch (Exception e) {
                    Emit.emit("retry", "worker", index, "reason", e.getClass().getSimpleName());
                } finally {
                    try {
                        mutex.release();
                    } catch (Exception e) {
                        // The session that held it is gone: so is the lock node.
                    }
                    Emit.emit("released", "worker", index);
                }
            }
        }

        private void increment(int seen, InterProcessMutex mutex) throws Exception {
            String resource = args.get("resource", "/R");
            // Careful: every write of this hold goes through one ZooKeeper
            // handle, the session that owns the lock node — checked once.
            // Curator replaces its handle after an expiry (and retries its
            // own calls on the new one); a pinned handle's ops fail instead
            // once its session is gone, and with it the lock node.
            ZooKeeper pinned = careful ? ownerHandle(mutex) : null;
            if (careful && (pinned == null || interruptions.get() != seen)) {
                Emit.emit("abandon", "worker", index);
                return;
            }
            if (careful) {
                ensure(pinned, resource);
            } else {
                retriedEnsure(zk, resource);
            }
            Stat stat = new Stat();
            byte[] data = zk.getData().storingStatIn(stat).forPath(resource);
            int read = Integer.parseInt(new String(data, StandardCharsets.UTF_8));
            Emit.emit("read", "worker", index, "value", read);
            if (!heldOnce) {
                // A window for a harness to inject a fault while the lock is held.
                pause(args.getInt("hold-ms", 0));
                heldOnce = true;
            }
            if (careful && interruptions.get() != seen) {
                Emit.emit("abandon", "worker", index);
                return;
            }
            int value = read + 1;
            try {
                if (careful) {
                    pinned.setData(resource, bytes(Integer.toString(value)), stat.getVersion());
                } else {
                    retriedWrite(zk, resource, bytes(Integer.toString(value)), stat.getVersion());
                }
            } catch (KeeperException.BadVersionException e) {
                Emit.emit("conflict", "worker", index);
                return;
            }
            Emit.emit("write", "worker", index, "value", value);
            done++;
        }

        /**
         * The ZooKeeper handle whose session owns the lock node (the lowest
         * participant, ours while we hold the mutex), or null when Curator's
         * current handle is another session's: the one that acquired has
         * expired meanwhile.
         */
        private ZooKeeper ownerHandle(InterProcessMutex mutex) throws Exception {
            ZooKeeper handle = zk.getZookeeperClient().getZooKeeper();
            java.util.Iterator<String> participants = mutex.getParticipantNodes().iterator();
            if (!participants.hasNext()) {
                return null;
            }
            Stat lock = handle.exists(participants.next(), false);
            return lock != null && lock.getEphemeralOwner() == handle.getSessionId() ? handle : null;
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
