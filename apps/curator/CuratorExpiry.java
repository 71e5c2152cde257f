import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;

/**
 * An expiry observer, like kazoo/expiry.py: creates an ephemeral node,
 * prints its session id and {@code ready}, then every connection state
 * Curator reports. On an expiry Curator reports SUSPENDED then LOST, then
 * RECONNECTED on a new session; the app checks that the ephemeral node
 * went with the old session ({@code ephemeral_gone}) and exits 0. No LOST
 * before the deadline: exit 1.
 */
public final class CuratorExpiry {
    public static void main(String[] argv) throws Exception {
        Emit.Args args = new Emit.Args(argv);
        Emit.watchdog(args.deadlineS());
        String path = args.get("path", "/curator-expiry");
        CountDownLatch lost = new CountDownLatch(1);
        CountDownLatch reconnected = new CountDownLatch(1);
        CuratorFramework zk = Emit.client(args);
        long old = zk.getZookeeperClient().getZooKeeper().getSessionId();
        ConnectionStateListener listener = (c, state) -> {
            Emit.emit("state", "state", state.name());
            if (state == ConnectionState.LOST) {
                lost.countDown();
            } else if (state == ConnectionState.RECONNECTED && lost.getCount() == 0) {
                reconnected.countDown();
            }
        };
        zk.getConnectionStateListenable().addListener(listener);
        zk.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(path);
        Emit.emit("session", "id", Emit.sessionHex(zk));
        Emit.emit("ready");
        if (!lost.await(args.deadlineS(), TimeUnit.SECONDS)) {
            Emit.fail("no LOST");
        }
        if (!reconnected.await(args.deadlineS(), TimeUnit.SECONDS)) {
            Emit.fail("no new session after LOST");
        }
        if (zk.getZookeeperClient().getZooKeeper().getSessionId() == old) {
            Emit.fail("Curator kept the expired session id");
        }
        Emit.emit("new_session");
        if (zk.checkExists().forPath(path) == null) {
            Emit.emit("ephemeral_gone", "path", path);
        } else {
            Emit.fail(path + " outlived its session");
        }
        // Closing is not news.
        zk.getConnectionStateListenable().removeListener(listener);
        zk.close();
        Emit.emit("done");
        System.exit(0);
    }
}
