#!/usr/bin/env python3
"""A signal while moat plans: planning can block (a stat on a hung NFS or
FUSE mount), and a SIGTERM meanwhile must end moat as it ends any program,
before anything runs.  moat used to hold the forwarded signals from its
first line, to pass them to the command once it ran: a moat blocked in
planning then ignored SIGTERM, SIGINT and SIGHUP, and only SIGKILL ended it.

  plansignal.py MOAT DIR REPORT

strace stands for the hung mount: it holds one of moat's newfstatat calls
for 2 s, one made while it plans (half way to the first block of the
forwarded signals, found by a traced run first).  SIGTERM is sent to moat
then.  moat must die of it (strace, which ends as its tracee did, reports
the signal, not an exit status of 143, which is a command's death
forwarded), the command must not have run, and no report is written.  The
control, the same hold without the signal, runs the command and writes the
report.  Prints "ok"/"not ok" lines; every wait is bounded."""
import os, re, signal, subprocess, sys, time

moat, wdir, report_base = sys.argv[1:4]
ran = report = argv = None


def paths(tag):
    """Each try its own marker and report: a moat of an earlier try that
    ran on (or its command) writes its own, not the ones the held try is
    judged by (a CI failure: both lanes found the held try's files, made
    after its clean())."""
    global ran, report, argv
    ran = os.path.join(wdir, "plan-ran-%s" % tag)
    report = "%s-%s.json" % (report_base[:-5] if report_base.endswith(".json") else report_base, tag)
    argv = [moat, "run", "--mode", "prefer", "--write", wdir, "--report", report, "--",
            "/bin/sh", "-c", "echo ran >" + ran]


paths("traced")


def say(cond, what):
    print(("ok - " if cond else "not ok - ") + what, flush=True)


def clean():
    for f in (ran, report):
        try:
            os.unlink(f)
        except FileNotFoundError:
            pass


def hold_at():
    """The newfstatat half way to the first SIG_BLOCK that blocks a set
    (the hold), counted from a traced run; the hold's own set is behind a
    pointer a non-root strace cannot read in a non-dumpable moat, so it is
    found by its shape: a set given, the old one not asked for."""
    trace = os.path.join(wdir, "plan.trace")
    subprocess.run(["strace", "-qq", "-o", trace, "-e", "trace=newfstatat,rt_sigprocmask"] + argv,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    n = 0
    with open(trace) as f:
        for line in f:
            if line.startswith("newfstatat("):
                n += 1
            elif re.match(r"rt_sigprocmask\(SIG_BLOCK, (\[|0x)", line) and ", NULL, 8)" in line:
                break
    os.unlink(trace)
    clean()
    return n, max(1, n // 2)


def held(k):
    return subprocess.Popen(["strace", "-qq", "-o", "/dev/null", "-e", "trace=newfstatat", "-e",
                             "inject=newfstatat:delay_enter=2000000:when=%d" % k] + argv,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def moat_pid(tracer):
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            with open("/proc/%d/task/%d/children" % (tracer.pid, tracer.pid)) as f:
                kids = f.read().split()
        except OSError:
            kids = []
        if kids:
            return int(kids[0])
        time.sleep(0.02)
    return None


def held_now(pid):
    """moat sits in the held call: in a tracing stop for half a second (a
    syscall's own stop lasts microseconds; the hold, 2 s).  False when it
    ran on or ended instead (the count before the hold differs from run
    to run: what /tmp holds, a cache made by the traced run)."""
    deadline, since = time.time() + 10, None
    while time.time() < deadline:
        try:
            with open("/proc/%d/status" % pid) as f:
                state = re.search(r"^State:\s+(\S)", f.read(), re.M).group(1)
        except (OSError, AttributeError):
            return False
        if state == "t":
            since = since or time.time()
            if time.time() - since >= 0.5:
                return True
        else:
            since = None
        time.sleep(0.05)
    return False


n, k = hold_at()
rc, tries = "not held", 0
while k >= 1 and tries < 4:
    tries += 1
    paths("try%d" % tries)
    clean()
    p = held(k)
    pid = moat_pid(p)
    if pid and held_now(pid):
        os.kill(pid, signal.SIGTERM)
        try:
            rc = p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = "hung"
        break
    # Not held at call k this time: a lower one, still in planning.  moat
    # itself is killed first: killing strace alone detached it, and it
    # ran on -- it ran the command and wrote the report after the next
    # try's clean(), which then found both (a CI failure).
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    p.kill()
    p.wait()
    if pid:
        deadline = time.time() + 10
        while os.path.exists("/proc/%d" % pid) and time.time() < deadline:
            time.sleep(0.02)
    k //= 2
k = max(k, 1)
say(rc == -signal.SIGTERM and not os.path.exists(ran) and not os.path.exists(report),
    "SIGTERM while moat plans (newfstatat %d of %d before the hold, held 2 s): moat dies of it (%s), "
    "the command did not run (%s), no report (%s)" %
    (k, n, "signal %d" % -rc if isinstance(rc, int) and rc < 0 else "status %s" % rc,
     not os.path.exists(ran), not os.path.exists(report)))
clean()
paths("control")
clean()
p = held(k)
try:
    rc = p.wait(timeout=30)
except subprocess.TimeoutExpired:
    p.kill()
    rc = "hung"
say(rc == 0 and os.path.exists(ran) and os.path.exists(report),
    "control: the same hold without the signal runs the command (%s) and writes the report (%s), status %s" %
    (os.path.exists(ran), os.path.exists(report), rc))
clean()
# What a try that ran on left, once every wait above is over.
for t in ["traced", "control"] + ["try%d" % i for i in range(1, tries + 1)]:
    paths(t)
    clean()
