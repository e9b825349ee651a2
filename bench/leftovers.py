"""bench/leftovers.py: what moat runs may leave behind on the host, and
whether they did.  Used by measure.py (concurrency) and load.py.

Four kinds of leftover, each compared with a snapshot taken before the runs:

* processes whose command line names a marker path (a directory only these
  runs use: the marker binary lives there, and every moat argv names it);
* lines of the host's /proc/self/mountinfo naming moat (moat mounts only in
  namespaces of its own, so a new one on the host is a leak);
* /tmp/moat-* entries: moat's fallback makes /tmp/moat-tmp.PID.XXXXXX per run
  (src/backends/native.c) and removes it when the run ends;
* cgroups named moat-PID-N anywhere under /sys/fs/cgroup: the tree's cgroup
  that --memory/--pids/--cpu and the fallback's cgroup.kill make below moat's
  own cgroup (src/resolve/limits.c, limits_name_cgroup) and remove at the end.

The last two carry the pid of the moat that made them, so they are counted
as leaked only when that pid is one of the runs measured and no longer runs:
other sessions on a shared machine run moat's own tests meanwhile, and their
entries are not these runs' (they are listed apart, as "other").
Standard library only.
"""
import os
import re
import time

CGROUP_ROOT = "/sys/fs/cgroup"
TMP_RE = re.compile(r"^moat-tmp\.(\d+)\.")
CGROUP_RE = re.compile(r"^moat-(\d+)-\d+$")


def _ancestors():
    """This process and its ancestors: their command lines may name the
    marker (measure.py gets it as an argument) without being leftovers."""
    pids, pid = set(), os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def _cgroups():
    found = []
    for d, subdirs, _ in os.walk(CGROUP_ROOT):
        for s in subdirs:
            if CGROUP_RE.match(s):
                found.append(os.path.join(d, s))
    return sorted(found)


def snapshot(marker):
    """The moat-related state of the host now."""
    skip = _ancestors()
    procs = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) in skip:
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd:
            procs.append(f"{pid}: {cmd.strip()[:200]}")
    with open("/proc/self/mountinfo") as f:
        mounts = [line.strip() for line in f if "moat" in line]
    tmp = sorted(e for e in os.listdir("/tmp") if e.startswith("moat-"))
    return {"processes": procs, "mounts": mounts, "tmp_entries": tmp, "cgroups": _cgroups()}


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # EPERM: it exists, as another user's process
    return True


def _ours(name, regex, pids):
    """A tmp entry or cgroup is this run's leftover if its name carries the
    pid of one of the moats measured and that pid no longer runs (a live one
    is that pid reused by someone else, or a moat still running)."""
    m = regex.match(os.path.basename(name))
    return bool(m) and int(m.group(1)) in pids and not _alive(int(m.group(1)))


def left_behind(before, marker, pids, settle_s=2.0):
    """What the runs left behind, compared with the snapshot `before`.

    0.5 s after the last run (the kernel finishes tearing namespaces down):
    processes naming the marker and new host mounts naming moat count at
    once.  New tmp entries and cgroups must still be there settle_s later,
    and carry one of `pids` (the moats that ran) whose process is gone."""
    time.sleep(0.5)
    after = snapshot(marker)
    new_tmp = [t for t in after["tmp_entries"] if t not in before["tmp_entries"]]
    new_cg = [c for c in after["cgroups"] if c not in before["cgroups"]]
    if new_tmp or new_cg:
        time.sleep(settle_s)
    later = snapshot(marker)
    still_tmp = [t for t in new_tmp if t in later["tmp_entries"]]
    still_cg = [c for c in new_cg if c in later["cgroups"]]
    res = {
        "processes": [p for p in after["processes"] if p not in before["processes"]],
        "mounts": [m for m in after["mounts"] if m not in before["mounts"]],
        "tmp": [t for t in still_tmp if _ours(t, TMP_RE, pids)],
        "cgroups": [c for c in still_cg if _ours(c, CGROUP_RE, pids)],
        "other_tmp": [t for t in still_tmp if not _ours(t, TMP_RE, pids)],
        "other_cgroups": [c for c in still_cg if not _ours(c, CGROUP_RE, pids)],
        "tmp_before": len(before["tmp_entries"]), "tmp_after": len(after["tmp_entries"]),
        "cgroups_before": len(before["cgroups"]), "cgroups_after": len(after["cgroups"]),
    }
    res["count"] = sum(len(res[k]) for k in ("processes", "mounts", "tmp", "cgroups"))
    return res


def kill_leaked(leaks):
    """SIGKILL the leaked processes, so that the next measurement starts
    clean (the leak is recorded already).  Mounts, tmp entries and cgroups
    stay, as evidence: they are in the next snapshot and not counted twice."""
    for p in leaks["processes"]:
        try:
            os.kill(int(p.split(":")[0]), 9)
        except (OSError, ValueError):
            pass
