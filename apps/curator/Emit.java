import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryForever;

/**
 * What every Curator app here shares: JSON-lines events on stdout (no
 * times, no zxids, so that runs against two servers print the same lines),
 * the command line (a connect string, then {@code --name value} options),
 * a started client, and a watchdog so that no app ever hangs.
 */
final class Emit {
    private Emit() {}

    /** Print one event, {@code fields} being name, value, name, value... */
    static synchronized void emit(String ev, Object... fields) {
        StringBuilder line = new StringBuilder("{\"ev\":").append(quote(ev));
        for (int i = 0; i + 1 < fields.length; i += 2) {
            line.append(',').append(quote(String.valueOf(fields[i]))).append(':');
            line.append(value(fields[i + 1]));
        }
        System.out.println(line.append('}'));
        System.out.flush();
    }

    /** Report why the app gives up, and exit with 1. */
    static void fail(String reason) {
        emit("error", "reason", reason);
        Runtime.getRuntime().halt(1);
    }

    private static String value(Object v) {
        if (v instanceof Number || v instanceof Boolean) {
            return v.toString();
        }
        if (v instanceof List<?> list) {
            StringBuilder out = new StringBuilder("[");
            for (int i = 0; i < list.size(); i++) {
                out.append(i == 0 ? "" : ",").append(value(list.get(i)));
            }
            return out.append(']').toString();
        }
        return quote(String.valueOf(v));
    }

    private static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    /** The command line: the connect string first, then --name value pairs. */
    static final class Args {
        final String connect;
        private final Map<String, String> options = new HashMap<>();

        Args(String[] argv) {
            if (argv.length == 0) {
                System.err.println("usage: <connect string> [--name value]...");
                System.exit(2);
            }
            connect = argv[0];
            for (int i = 1; i < argv.length; i++) {
                if (!argv[i].startsWith("--")) {
                    fail("unexpected argument " + argv[i]);
                }
                String name = argv[i].substring(2);
                boolean flag = i + 1 >= argv.length || argv[i + 1].startsWith("--");
                options.put(name, flag ? "true" : argv[++i]);
            }
        }

        String get(String name, String otherwise) {
            return options.getOrDefault(name, otherwise);
        }

        int getInt(String name, int otherwise) {
            try {
                return Integer.parseInt(get(name, Integer.toString(otherwise)));
            } catch (NumberFormatException e) {
                fail("--" + name + " wants a number");
                return otherwise;
            }
        }

        boolean flag(String name) {
            return options.containsKey(name);
        }

        int sessionTimeoutMs() {
            return getInt("session-timeout-ms", 4000);
        }

        int deadlineS() {
            return getInt("deadline-s", 30);
        }
    }

    /** Exit 1 after the deadline, whatever the threads are doing. */
    static void watchdog(int seconds) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(seconds * 1000L);
            } catch (InterruptedException e) {
                return;
            }
            fail("deadline of " + seconds + "s passed");
        }, "watchdog");
        t.setDaemon(true);
        t.start();
    }

    /** A started, connected client, or exit 1. */
    static CuratorFramework client(Args args) throws InterruptedException {
        int timeout = args.sessionTimeoutMs();
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(args.connect)
                .sessionTimeoutMs(timeout)
                .connectionTimeoutMs(Math.min(timeout, 15000))
                .retryPolicy(new RetryForever(50))
                .build();
        client.start();
        if (!client.blockUntilConnected(Math.min(args.deadlineS(), 15), TimeUnit.SECONDS)) {
            fail("connect: not connected in time");
        }
        return client;
    }

    /** The session id as ZooKeeper's {@code dump} prints it. */
    static String sessionHex(CuratorFramework client) throws Exception {
        return "0x" + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
    }
}
