"""The basic session: create, get, set, sequential and ephemeral creates,
a data watch and a child watch firing, delete, ls. Every step prints one
event, in a fixed order (each watch is waited for before going on)."""

import queue

from kazoo.exceptions import NoNodeError

from zkapp import EVENT_NAMES, client, emit, fail, parser, session_hex, watchdog

WATCH_WAIT_S = 10.0


def main():
    p = parser(__doc__)
    p.add_argument("--root", default="/kazoo-session")
    args = p.parse_args()
    watchdog(args.deadline_s)
    zk = client(args)
    emit("session", id=session_hex(zk))
    emit("connected")
    root = args.root
    fired = queue.Queue()

    def watcher(event):
        fired.put(event)

    def wait_watch():
        try:
            event = fired.get(timeout=WATCH_WAIT_S)
        except queue.Empty:
            fail("no watch fired within %ss" % WATCH_WAIT_S)
        emit("watch", type=EVENT_NAMES.get(event.type, event.type), path=event.path)

    zk.create(root)
    emit("created", path=root)
    a = root + "/a"
    emit("created", path=zk.create(a, b"hello"))
    data, stat = zk.get(a)
    emit("get", path=a, data=data.decode(), version=stat.version)
    stat = zk.set(a, b"world")
    emit("set", path=a, version=stat.version)
    for _ in range(2):
        emit("created", path=zk.create(root + "/seq-", b"", sequence=True))
    eph = zk.create(root + "/eph", b"", ephemeral=True)
    emit("created", path=eph)
    stat = zk.exists(eph)
    emit("ephemeral", path=eph, mine=stat.ephemeralOwner == zk.client_id[0])

    data, stat = zk.get(a, watch=watcher)
    emit("get", path=a, data=data.decode(), version=stat.version)
    children = zk.get_children(root, watch=watcher)
    emit("children", path=root, children=sorted(children))
    zk.set(a, b"again")
    wait_watch()
    zk.delete(eph)
    wait_watch()

    for child in sorted(zk.get_children(root)):
        zk.delete(root + "/" + child)
        emit("deleted", path=root + "/" + child)
    emit("children", path=root, children=sorted(zk.get_children(root)))
    zk.delete(root)
    try:
        zk.get(root)
        fail("%s still exists after its delete" % root)
    except NoNodeError:
        emit("nonode", path=root)
    zk.stop()
    zk.close()
    emit("done")


if __name__ == "__main__":
    main()
