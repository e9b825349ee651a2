#!/usr/bin/python3
"""Collapse the host-dependent part of an exported view for golden files.

An exported bwrap argv or OCI bundle mounts a grant that holds a denied path
entry by entry (docs/filesystem.md): the default profiles' /etc, around
/etc/shadow and the other system secrets, becomes one mount per entry of
this host's /etc.  Which entries exist differs from host to host, so the
goldens keep one marker instead ("@ENTRIES-OF /etc@"), after checking that
no denied path slipped in among them.

A firejail argv (--firejail) instead blacklists each of the system's
denied paths that exists on this host: the goldens keep one marker
("@SYSTEM-SECRETS@") after checking that every one of them that exists is
blacklisted, and nothing else of the system.  Those under the account's
own home (MOAT_ACCOUNT_HOME, from its passwd entry, when the test's HOME
is another) exist or not on each machine: they are left out.

The denied paths are the system's of every profile, as `moat profiles`
lists them: the test passes them in MOAT_SYSTEM_DENY (one per line).  A
denied path is that path or anything below it: /etc/ssh/ssh_host_rsa_key is
denied, its .pub beside it is not.

Usage: collapse-expanded.py [--firejail] FILE [DIR...]   (default DIR: /etc)
The file is a bwrap argv (a JSON list of strings) or an OCI config.json (an
object with "mounts").  Prints the result; exits 1 if a denied name is
among the collapsed entries (or, --firejail, a system secret is missing).
"""

import os

import json
import sys

ACCOUNT_HOME = os.environ.get("MOAT_ACCOUNT_HOME", "").rstrip("/")
DENIED = tuple(l for l in os.environ.get("MOAT_SYSTEM_DENY", "").split("\n") if l.startswith("/"))

# bwrap options and how many arguments each takes (the last is the dest).
ARITY = {
    "--perms": 1, "--tmpfs": 1, "--dir": 1, "--remount-ro": 1, "--proc": 1, "--dev": 1,
    "--ro-bind": 2, "--bind": 2, "--dev-bind": 2, "--symlink": 2, "--ro-bind-fd": 2, "--bind-fd": 2,
    "--chdir": 1, "--seccomp": 1, "--cap-drop": 1,
}
ENTRY_OPS = ("--ro-bind", "--bind", "--symlink", "--dir", "--ro-bind-fd", "--bind-fd", "--dev-bind")


def denied(dest):
    return any(dest == d or dest.startswith(d + "/") for d in DENIED)


def collapse_firejail(argv):
    out, listed, bad = [], set(), []
    for tok in argv:
        path = tok[len("--blacklist="):] if tok.startswith("--blacklist=") else None
        if path is not None and ACCOUNT_HOME.startswith("/") and path.startswith(ACCOUNT_HOME + "/"):
            continue
        if path is None or not path.startswith("/etc/"):
            out.append(tok)
            continue
        if path not in DENIED:
            bad.append(tok)
        listed.add(path)
        if "@SYSTEM-SECRETS@" not in out:
            out.append("@SYSTEM-SECRETS@")
    bad += ["not blacklisted: " + d for d in DENIED if os.path.lexists(d) and d not in listed]
    return out, bad


def collapse_argv(argv, dirs):
    out, i, bad = [], 0, []
    marked = set()
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            out.extend(argv[i:])
            break
        n = ARITY.get(tok, 0)
        args = argv[i + 1:i + 1 + n]
        dest = args[-1] if args else None
        d = next((d for d in dirs if dest and dest.startswith(d + "/")), None)
        if tok in ENTRY_OPS and d:
            if denied(dest):
                bad.append(dest)
            if d not in marked:
                out.append("@ENTRIES-OF %s@" % d)
                marked.add(d)
        else:
            out.append(tok)
            out.extend(args)
        i += 1 + n
    return out, bad


def collapse_mounts(config, dirs):
    mounts, bad, marked = [], [], set()
    for m in config.get("mounts", []):
        dest = m.get("destination", "")
        d = next((d for d in dirs if dest.startswith(d + "/")), None)
        if d and m.get("type") == "bind":
            if denied(dest):
                bad.append(dest)
            if d not in marked:
                mounts.append({"destination": "@ENTRIES-OF %s@" % d})
                marked.add(d)
            continue
        mounts.append(m)
    config["mounts"] = mounts
    return config, bad


def main():
    args = sys.argv[1:]
    firejail = args[:1] == ["--firejail"]
    if firejail:
        args = args[1:]
    if not DENIED:
        print("MOAT_SYSTEM_DENY is empty: give the system's denied paths (moat profiles)", file=sys.stderr)
        return 2
    path = args[0]
    dirs = args[1:] or ["/etc"]
    data = json.load(open(path))
    if firejail:
        data, bad = collapse_firejail(data)
    elif isinstance(data, list):
        data, bad = collapse_argv(data, dirs)
    else:
        data, bad = collapse_mounts(data, dirs)
    print(json.dumps(data, indent=2))
    if bad:
        print("denied paths among the entries: %s" % ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
