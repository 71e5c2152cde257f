"""kazoo's `Election`: --candidates candidates, each with its own session,
contend on --path. A leader's term is --writes version-checked increments
of --resource, --hold-ms apart (the leader writes the resource while
leading); then it prints `resign` and leaves the election.

A leader stops acting on SUSPENDED or LOST: a term in which its
connection was interrupted is abandoned (`abandon`, no more writes), and
the candidate runs for leader again. With --ignore-lost it writes its
whole term whatever happens to its session, retrying its reads and
writes through connection trouble — the bug: after an expiry
kazoo's lock node is gone, another candidate leads, and two leaders act.

Leadership is exclusive if every `leader` is followed by the same
candidate's `resign` or `abandon` before the next `leader`. Exit 0 once
each candidate has completed one term.
"""

import threading
import time

from kazoo.retry import KazooRetry
from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError

from zkapp import client, emit, fail, parser, session_hex, state_name, watchdog


class Candidate:
    def __init__(self, index, args):
        self.index = index
        self.args = args
        # Bumped by the state listener on every SUSPENDED or LOST.
        self.interruptions = 0
        self.led = False
        self.zk = client(args)
        emit("session", candidate=index, id=session_hex(self.zk))
        self.zk.add_listener(self.on_state)
        self.retry = KazooRetry(max_tries=-1, delay=0.05, backoff=1.5, max_delay=0.5,
                                deadline=args.deadline_s)

    def on_state(self, state):
        name = state_name(state)
        if name in ("SUSPENDED", "LOST"):
            self.interruptions += 1
        emit("state", candidate=self.index, state=name)

    def lead(self):
        """One term; returns with `self.led` set if it was completed."""
        args = self.args
        seen = self.interruptions
        emit("leader", candidate=self.index)
        # The resource is created by a leader, as every write to it; not
        # after the retried `exists` came back through an expiry, on a new
        # session that leads nothing (LOST is heard before that session).
        if self.retry(self.zk.exists, args.resource) is None:
            if not args.ignore_lost and self.interruptions != seen:
                emit("abandon", candidate=self.index)
                return
            try:
                self.zk.create(args.resource, b"0", makepath=True)
            except NodeExistsError:
                pass
        for _ in range(args.writes):
            if not args.ignore_lost and self.interruptions != seen:
                emit("abandon", candidate=self.index)
                return
            data, stat = self.retry(self.zk.get, args.resource)
            if not args.ignore_lost and self.interruptions != seen:
                emit("abandon", candidate=self.index)
                return
            value = int(data) + 1
            try:
                # Sent once by a careful leader; retried through everything
                # (after an expiry: from a new session) by the twin.
                write = self.retry if args.ignore_lost else (lambda f, *a, **k: f(*a, **k))
                write(self.zk.set, args.resource, str(value).encode(), version=stat.version)
                emit("write", candidate=self.index, value=value)
            except BadVersionError:
                emit("conflict", candidate=self.index)
            time.sleep(args.hold_ms / 1000.0)
        self.led = True
        emit("resign", candidate=self.index)

    def run(self):
        while not self.led:
            try:
                self.zk.Election(self.args.path, "candidate-%d" % self.index).run(self.lead)
            except KazooException as e:
                emit("retry", candidate=self.index, reason=type(e).__name__)
                time.sleep(0.05)

    def stop(self):
        # Closing reports LOST too: that one is not news.
        self.zk.remove_listener(self.on_state)
        self.zk.stop()
        self.zk.close()


def main():
    p = parser(__doc__)
    p.add_argument("--candidates", type=int, default=3)
    p.add_argument("--path", default="/E")
    p.add_argument("--resource", default="/E-work")
    p.add_argument("--writes", type=int, default=1, help="increments of the resource per term")
    p.add_argument("--hold-ms", type=int, default=50, help="pause after each write")
    p.add_argument("--ignore-lost", action="store_true",
                   help="keep writing through SUSPENDED and LOST (the buggy twin)")
    args = p.parse_args()
    watchdog(args.deadline_s)
    candidates = [Candidate(i, args) for i in range(args.candidates)]
    setup = candidates[0].zk
    emit("ready")
    threads = [threading.Thread(target=c.run, daemon=True) for c in candidates]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        data, _ = setup.get(args.resource)
    except KazooException as e:
        fail("reading %s at the end: %r" % (args.resource, e))
    emit("final", value=int(data), led=sum(c.led for c in candidates))
    for c in candidates:
        c.stop()
    emit("done")


if __name__ == "__main__":
    main()
