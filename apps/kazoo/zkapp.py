"""What every kazoo app here shares: JSON-lines events on stdout, the
command line (a connect string first), and a client with short retries.

Events carry no wall-clock content (no times, no zxids), so that the same
run against two servers prints the same lines; a session id is printed
once, in its own event, for the harness that forces an expiry.
"""

import argparse
import json
import sys
import threading

from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState
from kazoo.retry import KazooRetry

_out = threading.Lock()

# kazoo's event types under the names ZooKeeper's Java client prints, so
# that the kazoo and Curator apps print the same events.
EVENT_NAMES = {
    "CREATED": "NodeCreated",
    "DELETED": "NodeDeleted",
    "CHANGED": "NodeDataChanged",
    "CHILD": "NodeChildrenChanged",
}


def emit(ev, **fields):
    """Print one event as a JSON line, whole, whatever thread calls it."""
    line = json.dumps(dict(ev=ev, **fields), sort_keys=True)
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def fail(reason):
    """Report why the app gives up, and exit with 1."""
    emit("error", reason=reason)
    sys.exit(1)


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("connect", help="a ZooKeeper connect string, host:port[,host:port...]")
    p.add_argument("--session-timeout-ms", type=int, default=4000)
    p.add_argument("--deadline-s", type=float, default=30.0,
                   help="give up (exit 1) after this long")
    return p


def client(args):
    """A started client, or exit 1 if it cannot connect in time."""
    retry = KazooRetry(max_tries=-1, delay=0.05, backoff=1.5, max_delay=0.5)
    zk = KazooClient(hosts=args.connect, timeout=args.session_timeout_ms / 1000.0,
                     connection_retry=retry)
    try:
        zk.start(timeout=min(args.deadline_s, 15.0))
    except Exception as e:  # kazoo raises its own timeout type
        fail("connect: %r" % (e,))
    return zk


def session_hex(zk):
    """The session id as ZooKeeper's `dump` prints it."""
    return "0x%x" % zk.client_id[0]


def state_name(state):
    return {
        KazooState.CONNECTED: "CONNECTED",
        KazooState.SUSPENDED: "SUSPENDED",
        KazooState.LOST: "LOST",
    }.get(state, str(state))


def watchdog(seconds):
    """Exit 1 after `seconds` whatever the threads are doing: never hang."""
    def fire():
        emit("error", reason="deadline of %ss passed" % seconds)
        sys.stdout.flush()
        import os
        os._exit(1)

    t = threading.Timer(seconds, fire)
    t.daemon = True
    t.start()
    return t
