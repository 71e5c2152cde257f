"""kazoo's `Queue` or `LockingQueue` (--recipe): one producer puts --items
items (`item-000`, ... as the entries' data) into --queue, then
--consumers consumers, each with its own session, take them until the
queue is empty. A consumer names each item it consumed by creating
`<--resource>/<item>` (the convention of the queue judge, docs/JUDGES.md:
an entry deleted from the queue whose item never appears there was lost;
one reported twice was consumed twice). Judge `queue` with `--queue
<queue>`, `locking` with `--queue <queue>/entries`.

* `queue`: kazoo's `Queue.get` reads the first entry and deletes it; if
  the delete's reply is lost to a dropped connection, its retry finds the
  entry gone and takes the next one: the first item is lost. kazoo says
  so: "this queue is not reliable".
* `locking`: `LockingQueue` locks an entry (an ephemeral node under
  `taken`), the consumer reports it, then `consume` deletes entry and lock
  in one transaction: an item is never lost.

The producer fills the queue before any consumer starts, and after a put
whose reply was lost it looks for the item before putting it again, so
items are never duplicated by the producer. Events: session, state,
ready, put, consumed (item, consumer), duplicate (an item reported twice),
final (items, consumed, lost: the items never reported). Exit 0 once the
queue is empty.
"""

import threading
import time

from kazoo.exceptions import KazooException, NodeExistsError, NoNodeError

from zkapp import client, emit, fail, parser, session_hex, state_name, watchdog


def retrying(what, action, *args):
    """`action(*args)`, again after a connection trouble, until the deadline."""
    while True:
        try:
            return action(*args)
        except (NoNodeError, NodeExistsError):
            raise
        except KazooException as e:
            emit("retry", what=what, reason=type(e).__name__)
            time.sleep(0.05)


class Consumer:
    def __init__(self, index, args):
        self.index = index
        self.args = args
        self.zk = client(args)
        emit("session", consumer=index, id=session_hex(self.zk))
        self.zk.add_listener(self.on_state)
        self.queue = (self.zk.LockingQueue if args.recipe == "locking" else self.zk.Queue)(args.queue)
        self.consumed = 0
        self.duplicates = 0

    def on_state(self, state):
        emit("state", consumer=self.index, state=state_name(state))

    def report(self, item):
        """Create `<resource>/<item>`: this consumer consumed `item`."""
        path = "%s/%s" % (self.args.resource, item)
        while True:
            try:
                self.zk.create(path, str(self.index).encode())
                break
            except NodeExistsError:
                self.duplicates += 1
                emit("duplicate", consumer=self.index, item=item)
                break
            except KazooException as e:
                emit("retry", consumer=self.index, reason=type(e).__name__)
                time.sleep(0.05)
                # A lost reply: look before creating again (a second create
                # answered NodeExists is a second report to the judge).
                if retrying("exists", self.zk.exists, path) is not None:
                    break
        self.consumed += 1
        emit("consumed", consumer=self.index, item=item)

    def run(self):
        while True:
            try:
                item = self.take()
            except KazooException as e:
                emit("retry", consumer=self.index, reason=type(e).__name__)
                self.release_orphans()
                time.sleep(0.05)
                continue
            if item is None:
                if retrying("len", len, self.queue) == 0:
                    return
                self.release_orphans()
                continue
            self.report(item.decode())
            if self.args.recipe == "locking":
                self.consume()

    def take(self):
        if self.args.recipe == "locking":
            return self.queue.get(timeout=0.5)
        return self.queue.get()

    def consume(self):
        """`LockingQueue.consume`, until the entry is gone."""
        entry = "%s/entries/%s" % (self.args.queue, self.queue.processing_element[0])
        while True:
            try:
                if self.queue.consume():
                    return
            except KazooException as e:
                emit("retry", consumer=self.index, reason=type(e).__name__)
                time.sleep(0.05)
            # A lost reply: the transaction may have been applied.
            if retrying("exists", self.zk.exists, entry) is None:
                self.queue.processing_element = None
                return

    def release_orphans(self):
        """A `LockingQueue` lock this consumer created but whose reply was
        lost (kazoo does not retry that create): delete it, or the entry
        stays taken for as long as this session lives."""
        if self.args.recipe != "locking" or self.queue.processing_element is not None:
            return
        taken = "%s/taken" % self.args.queue
        try:
            for name in self.zk.get_children(taken):
                data, _ = self.zk.get("%s/%s" % (taken, name))
                if data == self.queue.id:
                    self.zk.delete("%s/%s" % (taken, name))
                    emit("released_orphan", consumer=self.index)
        except KazooException:
            pass

    def stop(self):
        self.zk.remove_listener(self.on_state)
        self.zk.stop()
        self.zk.close()


def was_put(zk, entries, item):
    """Whether a put whose reply was lost was applied after all."""
    try:
        for name in retrying("children", zk.get_children, entries):
            try:
                if retrying("get", zk.get, "%s/%s" % (entries, name))[0] == item:
                    return True
            except NoNodeError:
                pass
    except NoNodeError:
        # Not even the queue's path was made.
        pass
    return False


def produce(zk, args):
    queue = (zk.LockingQueue if args.recipe == "locking" else zk.Queue)(args.queue)
    entries = args.queue + ("/entries" if args.recipe == "locking" else "")
    for i in range(args.items):
        item = ("item-%03d" % i).encode()
        while True:
            try:
                queue.put(item)
                break
            except KazooException as e:
                emit("retry", producer=0, reason=type(e).__name__)
                time.sleep(0.05)
                if was_put(zk, entries, item):
                    break
        emit("put", item=item.decode())


def main():
    p = parser(__doc__)
    p.add_argument("--recipe", choices=["queue", "locking"], default="queue")
    p.add_argument("--items", type=int, default=20)
    p.add_argument("--consumers", type=int, default=3)
    p.add_argument("--queue", default="/Q")
    p.add_argument("--resource", default="/R")
    args = p.parse_args()
    watchdog(args.deadline_s)
    producer = client(args)
    emit("session", producer=0, id=session_hex(producer))
    retrying("ensure", producer.ensure_path, args.resource)
    produce(producer, args)
    consumers = [Consumer(i, args) for i in range(args.consumers)]
    emit("ready")
    threads = [threading.Thread(target=c.run, daemon=True) for c in consumers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        reported = set(producer.get_children(args.resource))
    except KazooException as e:
        fail("listing %s at the end: %r" % (args.resource, e))
    items = ["item-%03d" % i for i in range(args.items)]
    lost = [item for item in items if item not in reported]
    emit("final", items=args.items, consumed=sum(c.consumed for c in consumers),
         duplicates=sum(c.duplicates for c in consumers), lost=lost)
    for c in consumers:
        c.stop()
    producer.stop()
    producer.close()
    emit("done")


if __name__ == "__main__":
    main()
