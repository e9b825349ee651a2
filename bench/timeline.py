#!/usr/bin/env python3
"""bench/timeline.py: where one `moat run` spends its wall-clock time, step by
step, across moat, its child and the sandbox's init.

    timeline.py OUT.json ROUNDS NAME [VAR=VALUE ...] -- MOAT ARGS... [';' NAME ...]

MOAT must be built with -DMOAT_TIMELINE (src/util/timeline.h): each step
then writes "moat-timeline PID LABEL NS" to stderr, on CLOCK_MONOTONIC,
which this script shares.  Each round runs every command once (alternating,
as bench/alternate does), timed from before posix_spawn to after waitpid;
the steps of one run are put in time order, and each step's figure is the
median over the rounds of the time from the mark before it.  `cloned` (the
parent's return from clone, while the child works) is kept out of the chain
and reported apart.  Runs whose marks do not come in the usual order (the
first run's) are counted and left out."""
import json
import os
import statistics
import sys
import time

PARALLEL = {"cloned"}


def run_once(argv, env):
    r, w = os.pipe()
    devnull = os.open(os.devnull, os.O_RDWR)
    fa = [(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, w, 2),
          (os.POSIX_SPAWN_CLOSE, r), (os.POSIX_SPAWN_CLOSE, w), (os.POSIX_SPAWN_CLOSE, devnull)]
    t0 = time.monotonic_ns()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=fa)
    os.close(w)
    os.close(devnull)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    _, status = os.waitpid(pid, 0)
    t1 = time.monotonic_ns()
    os.close(r)
    marks, parallel = [("spawn", t0)], {}
    for line in b"".join(chunks).decode(errors="replace").splitlines():
        f = line.split()
        if len(f) == 4 and f[0] == "moat-timeline":
            if f[2] in PARALLEL:
                parallel[f[2]] = int(f[3])
            else:
                marks.append((f[2], int(f[3])))
    marks.sort(key=lambda m: m[1])
    marks.append(("exit", t1))
    return os.waitstatus_to_exitcode(status), marks, parallel


def main():
    out, rounds, rest = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    cmds, cur = [], []
    for a in rest + [";"]:
        if a == ";":
            if cur:
                name, i = cur[0], cur.index("--")
                env = dict(os.environ)
                env.update(kv.split("=", 1) for kv in cur[1:i])
                cmds.append({"name": name, "argv": cur[i + 1:], "env": env, "runs": [], "odd": 0, "failed": 0})
            cur = []
        else:
            cur.append(a)
    for k in range(rounds + 2):  # two warm-up rounds, not kept
        order = cmds[k % len(cmds):] + cmds[:k % len(cmds)]
        for c in order:
            rc, marks, parallel = run_once(c["argv"], c["env"])
            if k < 2:
                continue
            if rc != 0:
                c["failed"] += 1
            elif c["runs"] and [m[0] for m in marks] != [m[0] for m in c["runs"][0][0]]:
                c["odd"] += 1
            else:
                c["runs"].append((marks, parallel))
    result = {}
    for c in cmds:
        if not c["runs"]:
            result[c["name"]] = {"argv": c["argv"], "failed": c["failed"], "odd": c["odd"], "steps": []}
            continue
        labels = [m[0] for m in c["runs"][0][0]]
        steps = []
        for i in range(1, len(labels)):
            d = [(r[0][i][1] - r[0][i - 1][1]) / 1e6 for r in c["runs"]]
            steps.append({"from": labels[i - 1], "to": labels[i], "median_ms": statistics.median(d),
                          "min_ms": min(d)})
        total = [(r[0][-1][1] - r[0][0][1]) / 1e6 for r in c["runs"]]
        extra = {}
        for name in PARALLEL:
            d = [(r[1][name] - dict(r[0])["clone"]) / 1e6 for r in c["runs"] if name in r[1] and "clone" in dict(r[0])]
            if d:
                extra[name + "_after_clone_ms"] = statistics.median(d)
        result[c["name"]] = {"argv": c["argv"], "rounds": len(c["runs"]), "failed": c["failed"], "odd": c["odd"],
                             "total_median_ms": statistics.median(total), "steps": steps, **extra}
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    for name, r in result.items():
        print(f"{name}: {r.get('total_median_ms', 0):.3f} ms ({r.get('rounds', 0)} runs)", file=sys.stderr)
        for s in r["steps"]:
            print(f"  {s['from']:>18} -> {s['to']:<18} {s['median_ms']:7.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
