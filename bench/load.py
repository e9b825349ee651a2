#!/usr/bin/env python3
"""bench/load.py: the standing load test (issue 24).

    load.py OUT.json MOAT SEQUENTIAL CONCURRENT [--time-limit S] [--also-uid UID]

1. SEQUENTIAL runs, one after the other, of
       moat run --profile strict --report WORK/reports/N.json -- /bin/true
   each timed from spawn to exit.
2. CONCURRENT runs started at once, in four kinds taken in turn (strict;
   strict leaving a 30 s grandchild; strict with --pids/--memory, which makes
   a cgroup; the fallback without namespaces, which makes a /tmp/moat-tmp.*
   dir and leaves a grandchild).  Each command checks in on a pipe and
   waits on a second one until every run has checked in (or has ended, or
   60 s have passed), then sleeps 1 s: all of them run at the same time.
3. After each phase, what was left behind (bench/leftovers.py): processes,
   host mounts, /tmp/moat-* entries and cgroups of these runs, and processes
   that outlived their moat (this process is their subreaper, so they come
   to it).

A run fails if its exit status is not 0, if it took longer than 60 s, or if
its report is missing, not JSON, or says something else than the same
command run alone says (status, the status of each property, exit code 0).
Every phase is bounded by a count and by --time-limit (whole test,
default 1200 s); a phase cut short by the limit is a failure.

As root with --also-uid, every phase is repeated as that uid (a forked copy
of this process drops its groups, gid and uid first).  Exit status 0 only if
no run failed and nothing was left behind.  Standard library only.
"""
import argparse
import ctypes
import json
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import leftovers

RUN_TIMEOUT_S = 60       # one run, sequential or concurrent, before SIGKILL
BARRIER_TIMEOUT_S = 60   # the concurrent phase releases its barrier by then at the latest
FALLBACK_ENV = {"MOAT_HOST_LIMIT": "userns=0,root=0"}
PR_SET_CHILD_SUBREAPER = 36
now = time.monotonic


def percentiles(xs):
    """Nearest-rank percentiles (the value at rank ceil(p/100 * n)), in s."""
    if not xs:
        return None
    s = sorted(xs)

    def rank(p):
        return s[max(0, -(-len(s) * p // 100) - 1)]
    return {"n": len(s), "min": s[0], "p50": rank(50), "p90": rank(90), "p99": rank(99), "max": s[-1],
            "mean": sum(s) / len(s)}


def spawn(argv, env, stderr_path, keep=()):
    """posix_spawn (glibc: vfork-like, no copy of this process's memory, so
    500 of them start quickly); stdin and stdout /dev/null, stderr a file,
    keep = ((fd here, fd in moat), ...) passed on.  This process's other
    descriptors are close-on-exec (PEP 446): none leaks into moat."""
    actions = [(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
               (os.POSIX_SPAWN_OPEN, 2, stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)]
    actions += [(os.POSIX_SPAWN_DUP2, mine, theirs) for mine, theirs in keep]
    # Python ignores SIGPIPE (and SIGXFSZ); an ignored signal stays ignored
    # across exec, so moat gets them back at their defaults, as from a shell.
    return os.posix_spawn(argv[0], argv, env, file_actions=actions,
                          setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))


def read_head(path, n=300):
    """The first n characters of a run's stderr, and its last lines when
    there is more: moat's own error comes last, after its notes and the
    degraded properties (a failure in 2026-12-05's run was cut off before
    it)."""
    try:
        with open(path, errors="replace") as f:
            text = f.read().strip()
    except OSError:
        return ""
    if len(text) > 2 * n:
        text = text[:n] + " ... " + text[-2 * n:]
    return text.replace("\n", " | ")


def verdicts(report):
    """What a report says about the run's protections: its status and the
    status of each property.  The same command must get the same verdicts
    under load as alone."""
    props = report.get("properties") or {}
    return {"status": report.get("status"),
            "properties": {k: (v or {}).get("status") for k, v in sorted(props.items())}}


def check_report(path, expected):
    """None if the report at path is valid and says what `expected` (the
    verdicts of the same command run alone) says; else why not."""
    try:
        with open(path) as f:
            d = json.load(f)
    except OSError as e:
        return f"report: {e.strerror}"
    except ValueError as e:
        return f"report: not JSON: {e}"
    if not isinstance(d, dict) or not str(d.get("schema", "")).startswith("moat.report/"):
        return "report: no moat.report schema"
    run = d.get("run") or {}
    if run.get("executed") is not True or run.get("exit_code") != 0:
        return f"report: executed={run.get('executed')} exit_code={run.get('exit_code')}"
    got = verdicts(d)
    if got != expected:
        diff = {k: v for k, v in got["properties"].items() if expected["properties"].get(k) != v}
        return f"report: status {got['status']} (alone: {expected['status']}); properties that differ: {diff}"
    return None


def reap_orphans(ours):
    """Processes that outlived their moat were reparented to this process
    (the subreaper): reap the ended ones, list the ones still running."""
    reaped = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        if pid not in ours:
            reaped.append(pid)
    running = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                running += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return reaped, running


class Work:
    """The per-identity scratch directory: the marker binary (a copy of
    sleep: any process still running it is a leftover), the reports and the
    stderr files.  Its path is the marker the leftover check looks for in
    command lines: every moat argv names it."""

    def __init__(self):
        self.dir = os.path.realpath(tempfile.mkdtemp(prefix="moatbench-load.", dir="/tmp"))
        self.mark = os.path.join(self.dir, "moatbench-load-sleep")
        shutil.copy2("/bin/sleep", self.mark)
        for d in ("reports", "err"):
            os.makedirs(os.path.join(self.dir, d))

    def path(self, kind, i, ext):
        return os.path.join(self.dir, kind, f"{i}.{ext}")

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_one(pid, timeout_s):
    """Wait for pid through a pidfd (bounded); returns (seconds when it
    ended or None if it did not, exit code).  A run still going at the
    timeout is SIGKILLed and reaped."""
    fd = os.pidfd_open(pid)
    try:
        p = select.poll()
        p.register(fd, select.POLLIN)
        ended = bool(p.poll(timeout_s * 1000))
        t = now()
        if not ended:
            os.kill(pid, signal.SIGKILL)
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return (t if ended else None), os.waitstatus_to_exitcode(status)


def probe(work, name, argv, env, pids, keep=()):
    """The same command alone, once: it must succeed, and its verdicts are
    what every run of it under load must report.  Its pid joins pids: what
    it leaves behind counts like any run's."""
    rep, err = work.path("reports", f"probe-{name}", "json"), work.path("err", f"probe-{name}", "txt")
    pid = spawn(argv(rep), env, err, keep)
    pids.add(pid)
    t, code = wait_one(pid, RUN_TIMEOUT_S)
    try:
        with open(rep) as f:
            d = json.load(f)
    except (OSError, ValueError):
        d = None
    if t is None or code != 0 or not isinstance(d, dict):
        return None, f"{name} alone: exit {code}{' (timed out)' if t is None else ''}: {read_head(err)}"
    os.unlink(rep)
    return d, None


def sequential(moat, env, work, n, deadline):
    def argv(rep):
        return [moat, "run", "--profile", "strict", "--report", rep, "--", "/bin/true"]
    res = {"requested": n, "argv": [x.replace(work.dir, "WORK") for x in argv("WORK/reports/N.json")]}
    before = leftovers.snapshot(work.dir)
    pids = set()
    alone, err = probe(work, "sequential", argv, env, pids)
    if err:
        res.update(done=0, failures=1, failure_samples=[err], stopped="the command fails alone",
                   left_behind=leftovers.left_behind(before, work.dir, pids))
        return res, pids
    expected = verdicts(alone)
    times, fails, stopped = [], [], None
    t_phase = now()
    errfile = work.path("err", "sequential", "txt")
    for i in range(n):
        if now() >= deadline:
            stopped = f"time limit after {i} runs"
            break
        rep = work.path("reports", i, "json")
        t0 = now()
        pid = spawn(argv(rep), env, errfile)
        t1, code = wait_one(pid, RUN_TIMEOUT_S)
        pids.add(pid)
        why = None
        if t1 is None:
            why = f"no exit after {RUN_TIMEOUT_S} s (killed)"
        elif code != 0:
            why = f"exit {code}: {read_head(errfile)}"
        else:
            why = check_report(rep, expected)
        if why:
            fails.append(f"run {i}: {why}")
        else:
            times.append(t1 - t0)
        try:
            os.unlink(rep)
        except OSError:
            pass
    res.update(done=len(times) + len(fails), phase_s=now() - t_phase, run_s=percentiles(times),
               samples_ms=[round(t * 1000, 3) for t in times], failures=len(fails) + (1 if stopped else 0),
               failure_samples=fails[:10], stopped=stopped, expected_verdicts=expected,
               left_behind=leftovers.left_behind(before, work.dir, pids))
    return res, pids


# The barrier's two pipes, as the command sees them (moat --keep-fd).
ARRIVE_FD, GO_FD = 3, 4


def concurrent_kinds(moat, work, cgroup_ok):
    """The kinds of concurrent run: (name, argv builder, env extra)."""
    mk = work.mark
    # $1 is the run's index: the command checks in on fd 3 (a write of a
    # few bytes to a pipe is atomic), then reads one byte of fd 4 (dash's
    # read builtin reads a byte at a time, so each run takes exactly its
    # own line), then sleeps 1 s.  Pipes passed with --keep-fd, not FIFOs
    # in a --write grant: moat makes read-only placeholders (.git/hooks,
    # .mcp.json, ...) in a write grant for the length of a run, and as a
    # user other than root a second run with the same --write DIR meanwhile
    # fails on them (exit 125, "making the placeholder DIR/.git/hooks:
    # Permission denied").
    barrier = f'printf "%s\\n" "$1" >&{ARRIVE_FD} && read _ <&{GO_FD} && {mk} 1'
    leave = f"{mk} 30 & {barrier}"
    grants = ["--read", work.dir, "--keep-fd", str(ARRIVE_FD), "--keep-fd", str(GO_FD)]

    def strict(script, *extra):
        return lambda rep, i: [moat, "run", "--profile", "strict", *extra, *grants, "--report", rep, "--",
                               "/bin/sh", "-c", script, "sh", str(i)]
    kinds = [("strict", strict(barrier), None),
             ("strict_grandchild", strict(leave), None)]
    if cgroup_ok:
        kinds.append(("strict_cgroup_limits", strict(barrier, "--pids", "256", "--memory", "256M"), None))
    # --backend native: without namespaces auto would pick firejail where it
    # is installed; this kind is for moat's own fallback (a per-run
    # /tmp/moat-tmp.* dir, and as root a cgroup to kill the tree with).
    kinds.append(("fallback_grandchild", strict(leave, "--backend", "native", "--mode", "prefer"), FALLBACK_ENV))
    return kinds


def concurrent(moat, env, work, n, deadline):
    before = leftovers.snapshot(work.dir)
    pids = set()
    # A cgroup for --pids/--memory only where moat makes one (as root);
    # elsewhere --pids is RLIMIT_NPROC, which counts every process of the
    # user, and 500 runs at once rightly exceed it.
    probe_cg = [moat, "run", "--profile", "strict", "--pids", "256", "--memory", "256M", "--report"]
    alone, err = probe(work, "cgroup_check", lambda rep: probe_cg + [rep, "--", "/bin/true"], env, pids)
    limits = (alone or {}).get("limits") or {}
    cgroup_ok = "cgroup" in ((limits.get("pids") or {}).get("mechanism") or "")
    kinds = concurrent_kinds(moat, work, cgroup_ok)
    res = {"requested": n, "command_after_barrier": f"{work.mark} 1".replace(work.dir, "WORK"), "kinds": {},
           "notes": []}
    if not cgroup_ok:
        why = (limits.get("pids") or {}).get("mechanism") or (err or "").split(" | ")[0]
        res["notes"].append(f"no strict_cgroup_limits runs: moat makes no cgroup for --pids here ({why})")
    # Both pipes stay open at both ends here for the whole phase: no run
    # sees an end of file or a SIGPIPE, whatever the others do.
    arrive_r, arrive_w = os.pipe()
    go_r, go_w = os.pipe()
    os.set_blocking(arrive_r, False)
    keep = ((arrive_w, ARRIVE_FD), (go_r, GO_FD))
    expected, fails = {}, []
    try:
        for name, argv, extra in kinds:
            os.write(go_w, b"\n")  # the probe passes the barrier on its own
            alone, err = probe(work, name, lambda rep, a=argv: a(rep, -1), dict(env, **(extra or {})), pids, keep)
            try:
                os.read(arrive_r, 65536)  # and its check-in is not counted
            except BlockingIOError:
                pass
            if err:
                fails.append(err)
            else:
                expected[name] = verdicts(alone)
            res["kinds"][name] = {"argv": [x.replace(work.dir, "WORK") for x in argv("WORK/reports/N.json", "N")],
                                  "env": extra or {}, "runs": 0, "failures": 0, "verdicts_alone": expected.get(name)}
        if fails or now() >= deadline:
            fails += [] if fails else ["time limit reached before the phase began"]
            res.update(started=0, failures=len(fails), failure_samples=fails,
                       left_behind=leftovers.left_behind(before, work.dir, pids))
            return res, pids
        return run_concurrent(res, kinds, expected, fails, before, pids, work, env, n, deadline, arrive_r, go_w, keep)
    finally:
        for fd in (arrive_r, arrive_w, go_r, go_w):
            os.close(fd)


def run_concurrent(res, kinds, expected, fails, before, pids, work, env, n, deadline, arrive_r, go_w, keep):
    """The concurrent phase proper: start n runs, release the barrier when
    all have checked in, collect them, check them and what they left."""
    runs = {}  # pid -> what is known of that run
    poller = select.poll()
    poller.register(arrive_r, select.POLLIN)
    t_phase = now()
    try:
        for i in range(n):
            name, argv, extra = kinds[i % len(kinds)]
            rep = work.path("reports", i, "json")
            t0 = now()
            pid = spawn(argv(rep, i), dict(env, **(extra or {})), work.path("err", i, "txt"), keep)
            fd = os.pidfd_open(pid)
            poller.register(fd, select.POLLIN)
            runs[pid] = {"i": i, "kind": name, "t0": t0, "fd": fd, "rep": rep, "end": None, "code": None}
            res["kinds"][name]["runs"] += 1
        t_spawned = now()
        by_fd = {r["fd"]: pid for pid, r in runs.items()}
        arrived, pending, killed, released, buf = {}, set(runs), set(), None, b""
        ended_early = 0  # runs that ended before they checked in: the barrier does not wait for them

        def read_arrivals(t):
            nonlocal buf
            try:
                buf += os.read(arrive_r, 65536)
            except BlockingIOError:
                return
            *lines, buf = buf.split(b"\n")
            for line in lines:
                if line.strip().isdigit() and int(line) < n:
                    arrived.setdefault(int(line), t)

        while pending:
            t = now()
            if released is None and (len(arrived) + ended_early >= n or t - t_spawned > BARRIER_TIMEOUT_S):
                os.write(go_w, b"\n" * n)  # a line per run; < 64 KiB, the pipe holds it all
                released = t
            if t >= deadline or t - t_spawned > BARRIER_TIMEOUT_S + RUN_TIMEOUT_S:
                for pid in pending - killed:
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
            events = poller.poll(100)
            t = now()
            if any(fd == arrive_r for fd, _ in events):
                read_arrivals(t)  # first: a run checks in before it ends
            for fd, _ in events:
                if fd == arrive_r:
                    continue
                pid = by_fd[fd]
                poller.unregister(fd)
                os.close(fd)
                _, status = os.waitpid(pid, 0)
                runs[pid].update(end=t, code=os.waitstatus_to_exitcode(status))
                pending.discard(pid)
                if runs[pid]["i"] not in arrived:
                    ended_early += 1
    finally:
        for pid, r in runs.items():  # on an exception here: no run outlives the test
            if r["end"] is None:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
    phase_s = now() - t_phase

    wall, start, after = [], [], []
    for pid, r in sorted(runs.items(), key=lambda kv: kv[1]["i"]):
        why = None
        if pid in killed:
            why = "killed at the time limit"
        elif r["code"] != 0:
            why = f"exit {r['code']}: {read_head(work.path('err', r['i'], 'txt'))}"
        elif r["i"] not in arrived:
            why = "exited 0 without reaching the barrier"
        else:
            why = check_report(r["rep"], expected[r["kind"]])
        if why:
            fails.append(f"run {r['i']} ({r['kind']}): {why}")
            res["kinds"][r["kind"]]["failures"] += 1
        else:
            wall.append(r["end"] - r["t0"])
            start.append(arrived[r["i"]] - r["t0"])
            after.append(r["end"] - max(released, arrived[r["i"]]))
    res.update(
        started=len(runs), spawn_s=t_spawned - t_phase, phase_s=phase_s,
        barrier={"checked_in": len(arrived), "released_after_s": (released - t_phase) if released else None,
                 "complete": len(arrived) == n},
        wall_s=percentiles(wall), start_s=percentiles(start), after_release_s=percentiles(after),
        failures=len(fails), failure_samples=fails[:10],
        left_behind=leftovers.left_behind(before, work.dir, pids | set(runs)))
    return res, pids | set(runs)


# Processes per concurrent run at most: moat, its guard, the namespace's
# init, sh, the sleep and the grandchild.
PROCS_PER_RUN = 6


def host_limits():
    """The limits 500 sandboxes at once run into first."""
    def sysctl(name):
        try:
            with open(f"/proc/sys/{name}") as f:
                return int(f.read().split()[0])
        except (OSError, ValueError):
            return None
    return {"nofile": list(resource.getrlimit(resource.RLIMIT_NOFILE)),
            "nproc": list(resource.getrlimit(resource.RLIMIT_NPROC)),
            "pid_max": sysctl("kernel/pid_max"), "threads_max": sysctl("kernel/threads-max"),
            "max_user_namespaces": sysctl("user/max_user_namespaces"),
            "processes_now": sum(1 for p in os.listdir("/proc") if p.isdigit())}


def fit(n_conc):
    """How many concurrent runs the limits allow, after raising the soft
    descriptor limit as far as the hard one when needed: a descriptor per run
    (its pidfd) plus slack; PROCS_PER_RUN processes per run within
    RLIMIT_NPROC (not binding on root) and within pid_max."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < n_conc + 64:
        want = n_conc + 64 if hard == resource.RLIM_INFINITY else min(hard, n_conc + 64)
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    lim = host_limits()
    caps = [n_conc]
    if lim["nofile"][0] != resource.RLIM_INFINITY:
        caps.append(lim["nofile"][0] - 64)
    if os.geteuid() != 0 and lim["nproc"][0] != resource.RLIM_INFINITY:
        caps.append((lim["nproc"][0] - lim["processes_now"]) // PROCS_PER_RUN)
    if lim["pid_max"]:
        caps.append((lim["pid_max"] - lim["processes_now"] - 1000) // PROCS_PER_RUN)
    return max(1, min(caps)), lim


def control(work):
    """The leftover check must see a leftover: one of each kind it can make
    here (a marker process started without moat, a /tmp/moat-tmp.* dir and,
    where this user may, a cgroup, both named after a pid that has ended),
    then removed again.  A check that finds nothing proves nothing unless it
    finds these."""
    before = leftovers.snapshot(work.dir)
    dead = spawn(["/bin/true"], {}, "/dev/null")
    os.waitpid(dead, 0)
    tmp = tempfile.mkdtemp(prefix=f"moat-tmp.{dead}.", dir="/tmp")
    v1_pids = os.path.join(leftovers.CGROUP_ROOT, "pids")
    cg = os.path.join(v1_pids if os.path.isdir(v1_pids) else leftovers.CGROUP_ROOT, f"moat-{dead}-0")
    try:
        os.mkdir(cg)
    except OSError:
        cg = None
    proc = spawn([work.mark, "30"], {}, "/dev/null")
    try:
        got = leftovers.left_behind(before, work.dir, {dead}, settle_s=0.1)
    finally:
        os.kill(proc, signal.SIGKILL)
        os.waitpid(proc, 0)
        os.rmdir(tmp)
        if cg:
            os.rmdir(cg)
    want = {"processes": 1, "tmp": 1, "cgroups": 1 if cg else 0}
    found = {k: len(got[k]) for k in want}
    return {"made": want, "found": found, "ok": found == want}


def one_identity(moat, n_seq, n_conc, deadline):
    """Both phases as the current user."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    width, lim = fit(n_conc)
    env = dict(os.environ)
    work = Work()
    res = {"uid": os.geteuid(), "limits": lim, "concurrent_width": width}
    if width < n_conc:
        res["width_cut"] = f"{n_conc} concurrent runs do not fit this user's limits here: {width} run"
    try:
        res["control"] = control(work)
        seq, seq_pids = sequential(moat, env, work, n_seq, deadline)
        res["sequential"] = seq
        conc, conc_pids = concurrent(moat, env, work, width, deadline)
        res["concurrent"] = conc
        reaped, running = reap_orphans(seq_pids | conc_pids)
        res["outlived_moat"] = {"reaped": len(reaped), "still_running": running}
        for pid in running:
            os.kill(pid, signal.SIGKILL)
        for phase in (seq, conc):
            if phase.get("left_behind"):
                leftovers.kill_leaked(phase["left_behind"])
    finally:
        work.remove()
    return res


def as_user(uid, fn):
    """fn() in a fork of this process that runs as uid (no groups): the
    moats it starts are that user's.  Its result comes back as JSON on a
    pipe."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            out = fn()
        except BaseException as e:  # the parent reports it: nothing may escape the fork
            out, code = {"uid": uid, "error": f"{type(e).__name__}: {e}"}, 1
        with os.fdopen(w, "w") as f:
            json.dump(out, f)
        os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        data = f.read()
    os.waitpid(pid, 0)
    try:
        return json.loads(data)
    except ValueError:
        return {"uid": uid, "error": "the worker sent no result"}


def problems_of(ident):
    """Why this identity's runs fail the test (empty: they pass)."""
    out = []
    if ident.get("error"):
        return [f"uid {ident['uid']}: {ident['error']}"]
    if not (ident.get("control") or {}).get("ok"):
        out.append(f"uid {ident['uid']}: the leftover check missed its control leftovers: {ident.get('control')}")
    for phase in ("sequential", "concurrent"):
        p = ident.get(phase) or {}
        if p.get("failures"):
            out.append(f"uid {ident['uid']} {phase}: {p['failures']} failed runs")
        lb = p.get("left_behind") or {}
        if lb.get("count"):
            out.append(f"uid {ident['uid']} {phase}: {lb['count']} leftovers")
    if (ident.get("outlived_moat") or {}).get("still_running"):
        out.append(f"uid {ident['uid']}: processes still running after their moat ended")
    if ident.get("width_cut"):
        out.append(f"uid {ident['uid']}: {ident['width_cut']}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("moat")
    ap.add_argument("sequential", type=int)
    ap.add_argument("concurrent", type=int)
    ap.add_argument("--time-limit", type=float, default=1200.0, help="seconds, the whole test")
    ap.add_argument("--also-uid", type=int, help="as root: repeat every phase as this uid")
    a = ap.parse_args()
    moat = os.path.realpath(a.moat)
    t0 = now()
    # The deadline is shared: the second identity gets what the first left.
    deadline = t0 + a.time_limit
    ver = subprocess.run([moat, "--version"], capture_output=True, text=True).stdout.strip()
    res = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "moat": ver, "nproc": os.cpu_count(),
           "loadavg_start": open("/proc/loadavg").read().split()[:3], "time_limit_s": a.time_limit,
           "run_timeout_s": RUN_TIMEOUT_S, "barrier_timeout_s": BARRIER_TIMEOUT_S, "identities": []}
    os.chdir("/tmp")  # a neutral current directory, as in bench/run
    res["identities"].append(one_identity(moat, a.sequential, a.concurrent, deadline))
    if a.also_uid is not None and os.geteuid() == 0:
        res["identities"].append(as_user(a.also_uid, lambda: one_identity(moat, a.sequential, a.concurrent,
                                                                          deadline)))
    res["elapsed_s"] = now() - t0
    res["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    res["problems"] = [p for ident in res["identities"] for p in problems_of(ident)]
    res["ok"] = not res["problems"]
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    for ident in res["identities"]:
        print(summary_line(ident), file=sys.stderr)
    print(f"load: {'ok' if res['ok'] else 'FAILED: ' + '; '.join(res['problems'])} ({res['elapsed_s']:.0f} s)",
          file=sys.stderr)
    sys.exit(0 if res["ok"] else 1)


def summary_line(ident):
    if ident.get("error"):
        return f"load: uid {ident['uid']}: {ident['error']}"

    def ms(p, k):
        return f"{p[k] * 1000:.1f}" if p else "—"
    s, c = ident.get("sequential") or {}, ident.get("concurrent") or {}
    sr, cw = s.get("run_s"), c.get("wall_s")
    return (f"load: uid {ident['uid']}: {s.get('done', 0)} sequential: p50 {ms(sr, 'p50')} p99 {ms(sr, 'p99')} "
            f"max {ms(sr, 'max')} ms, {s.get('failures')} failed, "
            f"{(s.get('left_behind') or {}).get('count')} left behind; {c.get('started', 0)} concurrent: "
            f"wall p50 {ms(cw, 'p50')} p99 {ms(cw, 'p99')} ms, {c.get('failures')} failed, "
            f"{(c.get('left_behind') or {}).get('count')} left behind")


if __name__ == "__main__":
    main()
