"""kazoo's `Lock` guarding version-checked increments of a resource.

Each of --threads workers has its own session (its own KazooClient) and
does --increments increments of the integer in --resource, each one under
the lock: read the value, then write value+1 with the version read.

By default a worker stops work on SUSPENDED or LOST: if its connection
was interrupted while it held the lock, it abandons that increment
(releases, re-acquires, reads again), and it never sends a write again
whose reply was lost. With --ignore-lost it carries on as if nothing
happened, retrying its reads and writes through connection trouble — the
classic bug: after an expiry kazoo reconnects with a new session, the
lock node is gone, and the worker still writes.

--recipe picks the lock: kazoo's `Lock`, or one of locks.py's
(`skip-predecessor`, a bug; `naive`, the herd).

Events: session, state (with the worker), acquired, read (the value
read under the lock), write (the value
written), abandon, conflict (a version check failed: someone else wrote
while this worker held the lock), released, final (the resource's value
at the end). Exit 0 once every worker has done its increments.
"""

import threading
import time

from kazoo.retry import KazooRetry
from kazoo.exceptions import BadVersionError, KazooException, NoNodeError, NodeExistsError

from locks import NaiveLock, SkipPredecessorLock
from zkapp import client, emit, fail, parser, session_hex, state_name, watchdog

# --recipe: kazoo's Lock, or one of the two in locks.py.
RECIPES = {
    "kazoo": lambda zk, path, identifier: zk.Lock(path, identifier=identifier),
    "skip-predecessor": lambda zk, path, identifier: SkipPredecessorLock(zk, path, identifier),
    "naive": lambda zk, path, identifier: NaiveLock(zk, path, identifier),
}


class Worker:
    def __init__(self, index, args):
        self.index = index
        self.args = args
        # Bumped by the state listener on every SUSPENDED or LOST: a worker
        # that sees it change while holding the lock no longer trusts it.
        self.interruptions = 0
        self.done = 0
        self.held_once = False
        self.zk = client(args)
        emit("session", worker=index, id=session_hex(self.zk))
        self.zk.add_listener(self.on_state)
        self.retry = KazooRetry(max_tries=-1, delay=0.05, backoff=1.5, max_delay=0.5,
                                deadline=args.deadline_s)

    def on_state(self, state):
        name = state_name(state)
        if name in ("SUSPENDED", "LOST"):
            self.interruptions += 1
        emit("state", worker=self.index, state=name)

    def run(self):
        args = self.args
        while self.done < args.increments:
            lock = RECIPES[args.recipe](self.zk, args.lock, "worker-%d" % self.index)
            try:
                if not lock.acquire(timeout=args.deadline_s):
                    fail("worker %d: lock not acquired in time" % self.index)
            except KazooException as e:
                emit("retry", worker=self.index, reason=type(e).__name__)
                time.sleep(0.05)
                continue
            seen = self.interruptions
            emit("acquired", worker=self.index)
            try:
                self.increment(seen)
            except KazooException as e:
                emit("retry", worker=self.index, reason=type(e).__name__)
            finally:
                try:
                    lock.release()
                except KazooException:
                    pass
                emit("released", worker=self.index)

    def ensure_resource(self, seen):
        """Create the resource if it is not there yet — under the lock, as
        every write to it (a judge of owner-writes counts creates too).
        False when the careful worker abandons the hold instead: the
        retried `exists` may have come back through an expiry, on a new
        session that holds nothing (kazoo tells its listeners LOST before
        it opens that session, so the check sees it)."""
        if self.retry(self.zk.exists, self.args.resource) is None:
            if not self.args.ignore_lost and self.interruptions != seen:
                return False
            try:
                self.zk.create(self.args.resource, b"0", makepath=True)
                emit("created", worker=self.index, path=self.args.resource)
            except NodeExistsError:
                pass
        return True

    def increment(self, seen):
        if not self.ensure_resource(seen):
            emit("abandon", worker=self.index)
            return
        # Reads are retried through connection trouble (the check below
        # decides whether the hold still counts).
        data, stat = self.retry(self.zk.get, self.args.resource)
        emit("read", worker=self.index, value=int(data))
        if self.args.hold_ms and not self.held_once:
            time.sleep(self.args.hold_ms / 1000.0)
        self.held_once = True
        if not self.args.ignore_lost and self.interruptions != seen:
            emit("abandon", worker=self.index)
            return
        value = int(data) + 1
        # The careful worker sends its write once: a write whose reply is
        # lost is abandoned, never sent again from a session that may no
        # longer hold the lock. The twin retries it through everything —
        # after an expiry, from its new session.
        write = self.retry if self.args.ignore_lost else (lambda f, *a, **k: f(*a, **k))
        try:
            write(self.zk.set, self.args.resource, str(value).encode(), version=stat.version)
        except BadVersionError:
            emit("conflict", worker=self.index)
            return
        emit("write", worker=self.index, value=value)
        self.done += 1

    def stop(self):
        # Closing reports LOST too: that one is not news.
        self.zk.remove_listener(self.on_state)
        self.zk.stop()
        self.zk.close()


def main():
    p = parser(__doc__)
    p.add_argument("--threads", type=int, default=5)
    p.add_argument("--increments", type=int, default=20)
    p.add_argument("--lock", default="/L")
    p.add_argument("--resource", default="/R")
    p.add_argument("--hold-ms", type=int, default=0,
                   help="on a worker's first increment, sleep this long between reading "
                        "and writing the resource (a window for a harness to inject a fault "
                        "while the lock is held)")
    p.add_argument("--recipe", choices=sorted(RECIPES), default="kazoo",
                   help="kazoo's Lock (default); skip-predecessor: a subclass that takes "
                        "the lock on any wake-up (a bug); naive: one ephemeral node, every "
                        "waiter watching it (the herd)")
    p.add_argument("--ignore-lost", action="store_true",
                   help="keep working through SUSPENDED and LOST (the buggy twin)")
    args = p.parse_args()
    watchdog(args.deadline_s)
    workers = [Worker(i, args) for i in range(args.threads)]
    setup = workers[0].zk
    emit("ready")
    threads = [threading.Thread(target=w.run, daemon=True) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        data, _ = setup.get(args.resource)
    except (KazooException, NoNodeError) as e:
        fail("reading %s at the end: %r" % (args.resource, e))
    emit("final", value=int(data), increments=sum(w.done for w in workers))
    for w in workers:
        w.stop()
    emit("done")


if __name__ == "__main__":
    main()
