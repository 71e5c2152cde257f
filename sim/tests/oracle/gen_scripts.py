#!/usr/bin/env python3
"""Random op scripts for DiffOracle.java / oracle_replay.rs (deterministic per seed).

Usage: python3 gen_scripts.py  (writes random-<seed>.script for the seeds below)
"""
import random

PARENTS = ["/a", "/b", "/a/k"]
NAMES = ["x", "y", "e"]
SEQ_PREFIXES = ["s-", "q-"]


def path(r):
    roll = r.random()
    if roll < 0.15:
        return r.choice(PARENTS)
    if roll < 0.30:
        return r.choice(PARENTS) + "/" + r.choice(SEQ_PREFIXES) + "%010d" % r.randrange(6)
    if roll < 0.35:
        return r.choice(["/a/x/z", "/a/e/z", "/b/e/z"])
    if roll < 0.37:
        return "/a/"  # invalid
    return r.choice(PARENTS) + "/" + r.choice(NAMES)


def write_op(r):
    kind = r.choices(["create", "delete", "set"], [7, 3, 2])[0]
    version = r.choice([-1, -1, -1, 0, 1, 2])
    data = r.randrange(4)
    if kind == "create":
        mode = r.choice(["P", "E", "PS", "ES"])
        p = path(r)
        if mode in ("PS", "ES") and r.random() < 0.7:
            p = r.choice(PARENTS) + "/" + r.choice(SEQ_PREFIXES)
        return "create %s %s %d" % (p, mode, data)
    if kind == "delete":
        return "delete %s %d" % (path(r), version)
    return "set %s %d %d" % (path(r), version, data)


def script(seed, n):
    r = random.Random(seed)
    lines = ["s1 create /a P 0", "s1 create /b P 0", "s2 create /a/k P 1"]
    alive = [1, 2, 3]
    close3 = r.randrange(n // 2, n * 3 // 4)
    close2 = r.randrange(n * 3 // 4, n)
    for i in range(n):
        if i == close3 and 3 in alive:
            lines.append("s3 close")
            alive.remove(3)
            continue
        if i == close2 and 2 in alive:
            lines.append("s2 close")
            alive.remove(2)
            continue
        s = r.choice(alive)
        kind = r.choices(["write", "exists", "get", "children", "multi"], [6, 2, 1.5, 2.5, 1])[0]
        if kind == "write":
            lines.append("s%d %s" % (s, write_op(r)))
        elif kind == "multi":
            k = r.randrange(1, 4)
            lines.append("s%d multi %d" % (s, k))
            lines.extend("  " + write_op(r) for _ in range(k))
        else:
            w = 1 if r.random() < 0.8 else 0
            lines.append("s%d %s %s %d" % (s, kind, path(r), w))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    for seed in range(1, 13):
        with open("random-%d.script" % seed, "w") as f:
            f.write(script(seed, 150 if seed <= 4 else 300))
