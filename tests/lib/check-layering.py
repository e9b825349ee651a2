#!/usr/bin/env python3
"""The layering rule of docs/architecture.md, checked on the objects.

Usage: check-layering.py BUILD_DIR [ORDER_FILE]

Reads every BUILD_DIR/src/STAGE/FILE.o with nm(1), links each undefined
symbol to the object that defines it, and prints one line per breach:

  upward  A.o -> B.o SYMBOL   A's stage is below B's in the order
  unknown A.o                 a stage the order does not list
  loop    A.o -> B.o -> ... -> A.o   files that call each other in a loop

The order (top first) is the "Stages, top first" list of
docs/architecture.md unless ORDER_FILE gives one stage per line.  Data
references (a table naming a backend) count as calls: they are a
dependency too.  Exit status 0 when clean, 1 with breaches, 2 on a usage
error.
"""
import os
import re
import subprocess
import sys


def read_order(path):
    with open(path) as f:
        text = f.read()
    if path.endswith(".md"):
        m = re.search(r"Stages, top first:\s*(.*?)\n\n", text, re.S)
        if not m:
            sys.exit("check-layering: no 'Stages, top first:' list in " + path)
        return re.findall(r"`([a-z]+)/`", m.group(1))
    return [l.strip() for l in text.splitlines() if l.strip()]


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRVW":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
    return defined, undefined


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    build = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    order = read_order(sys.argv[2] if len(sys.argv) == 3 else os.path.join(here, "../../docs/architecture.md"))
    rank = {stage: i for i, stage in enumerate(order)}  # 0 is the top
    src = os.path.join(build, "src")
    objs = sorted(os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs if f.endswith(".o"))
    if not objs:
        print("check-layering: no objects under " + src, file=sys.stderr)
        return 2
    name = {o: os.path.relpath(o, src) for o in objs}
    defs, undefs = {}, {}
    for o in objs:
        defs[o], undefs[o] = symbols(o)
    owner = {}
    for o in objs:
        for s in defs[o]:
            owner.setdefault(s, o)
    edges = {o: {} for o in objs}
    for o in objs:
        for s in sorted(undefs[o]):
            t = owner.get(s)
            if t and t != o:
                edges[o].setdefault(t, s)
    breaches = []
    for o in objs:
        stage = name[o].split("/")[0]
        if stage not in rank:
            breaches.append("unknown " + name[o])
            continue
        for t, s in sorted(edges[o].items()):
            ts = name[t].split("/")[0]
            if ts in rank and rank[ts] < rank[stage]:
                breaches.append("upward  %s -> %s %s" % (name[o], name[t], s))
    # Loops between files: a depth-first search, each loop once.
    state, stack, seen = {}, [], set()

    def visit(o):
        state[o] = 1
        stack.append(o)
        for t in sorted(edges[o]):
            if state.get(t) == 1:
                loop = stack[stack.index(t):]
                key = frozenset(loop)
                if key not in seen:
                    seen.add(key)
                    breaches.append("loop    " + " -> ".join(name[x] for x in loop + [t]))
            elif t not in state:
                visit(t)
        stack.pop()
        state[o] = 2

    sys.setrecursionlimit(10000)
    for o in objs:
        if o not in state:
            visit(o)
    for b in breaches:
        print(b)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
