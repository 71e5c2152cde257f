"""kazoo's `Election`: --candidates candidates, each with its own session,
contend on --path; each leads once — prints `leader`, does a
version-checked increment of --resource as its leader's work, holds for
--hold-ms, prints `resign` — and then leaves the election.

Leadership is exclusive if every `leader` is followed by the same
candidate's `resign` before the next `leader`. Exit 0 when each candidate
has led once.
"""

import threading
import time

from kazoo.exceptions import NodeExistsError

from zkapp import client, emit, parser, session_hex, state_name, watchdog


def main():
    p = parser(__doc__)
    p.add_argument("--candidates", type=int, default=3)
    p.add_argument("--path", default="/E")
    p.add_argument("--resource", default="/E-work")
    p.add_argument("--hold-ms", type=int, default=50)
    args = p.parse_args()
    watchdog(args.deadline_s)
    clients = []
    listeners = []
    for i in range(args.candidates):
        zk = client(args)
        emit("session", candidate=i, id=session_hex(zk))
        listeners.append(lambda s, i=i: emit("state", candidate=i, state=state_name(s)))
        zk.add_listener(listeners[i])
        clients.append(zk)
    try:
        clients[0].create(args.resource, b"0", makepath=True)
    except NodeExistsError:
        pass
    led = [False] * args.candidates

    def lead(i):
        zk = clients[i]
        emit("leader", candidate=i)
        data, stat = zk.get(args.resource)
        zk.set(args.resource, str(int(data) + 1).encode(), version=stat.version)
        time.sleep(args.hold_ms / 1000.0)
        led[i] = True
        emit("resign", candidate=i)

    def candidate(i):
        clients[i].Election(args.path, "candidate-%d" % i).run(lead, i)

    threads = [threading.Thread(target=candidate, args=(i,), daemon=True)
               for i in range(args.candidates)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    data, _ = clients[0].get(args.resource)
    emit("final", value=int(data), led=sum(led))
    for zk, listener in zip(clients, listeners):
        # Closing reports LOST too: that one is not news.
        zk.remove_listener(listener)
        zk.stop()
        zk.close()
    emit("done")


if __name__ == "__main__":
    main()
