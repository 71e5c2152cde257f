"""An expiry observer: connects, creates an ephemeral node, prints its
session id and `ready`, then prints every connection state kazoo reports.
When the server expires the session kazoo reports SUSPENDED (its read
timeout) then LOST (the reconnect is refused); kazoo then opens a new
session (CONNECTED). The app checks that the ephemeral node went with the
old session, prints `ephemeral_gone`, and exits 0. No LOST before the
deadline: exit 1.
"""

import threading

from zkapp import client, emit, fail, parser, session_hex, state_name, watchdog


def main():
    p = parser(__doc__)
    p.add_argument("--path", default="/kazoo-expiry")
    args = p.parse_args()
    watchdog(args.deadline_s)
    lost = threading.Event()
    reconnected = threading.Event()

    zk = client(args)
    old = zk.client_id[0]

    def on_state(state):
        name = state_name(state)
        emit("state", state=name)
        if name == "LOST":
            lost.set()
        elif name == "CONNECTED" and lost.is_set():
            reconnected.set()

    zk.add_listener(on_state)
    zk.create(args.path, b"", ephemeral=True, makepath=True)
    emit("session", id=session_hex(zk))
    emit("ready")
    if not lost.wait(args.deadline_s):
        fail("no LOST")
    if not reconnected.wait(args.deadline_s):
        fail("no new session after LOST")
    if zk.client_id[0] == old:
        fail("kazoo kept the expired session id")
    emit("new_session")
    if zk.exists(args.path) is None:
        emit("ephemeral_gone", path=args.path)
    else:
        fail("%s outlived its session" % args.path)
    zk.remove_listener(on_state)
    zk.stop()
    zk.close()
    emit("done")


if __name__ == "__main__":
    main()
