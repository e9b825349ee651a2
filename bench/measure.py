#!/usr/bin/env python3
"""bench/measure.py: the measurements of bench/run that hyperfine does not do.

    measure.py seccomp     OUT.json LOOP MOAT ROUNDS N
    measure.py stdio       OUT.json MOAT ROUNDS BYTES
    measure.py memory      OUT.json MOAT ROUNDS
    measure.py concurrency OUT.json MOAT BATCHES WIDTH LEAKDIR
    measure.py netfence    OUT.json MOAT NETBENCH ROUNDS N BULK_ROUNDS BYTES STARTUP_RUNS [UID...]

Each writes one JSON file.  Conditions are interleaved round by round (A B C,
A B C, ...) so that drift on a shared 2-core VM hits them alike.  Only the
standard library: it runs wherever bench/run does.
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

import leftovers  # bench/leftovers.py: the leak check, shared with load.py

FALLBACK_ENV = {"MOAT_HOST_LIMIT": "userns=0,root=0"}
BWRAP = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
         "--unshare-all", "--new-session", "--die-with-parent"]


def env_with(extra):
    e = dict(os.environ)
    e.update(extra or {})
    return e


def summary(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs),
            "stdev": statistics.stdev(xs) if len(xs) > 1 else 0.0, "n": len(xs), "samples": xs}


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")


# --- seccomp: ns per syscall, bare / trivial filter / moat / moat without its filter
def cmd_seccomp(out, loop, moat, rounds, n):
    conds = [
        ("bare", [loop, n], None),
        ("trivial_filter", [loop, n, "trivial"], None),
        ("moat_strict", [moat, "run", "--profile", "strict", "--", loop, n], None),
        ("moat_strict_no_seccomp", [moat, "run", "--profile", "strict", "--mode", "prefer", "--", loop, n],
         {"MOAT_HOST_LIMIT": "seccomp=0"}),
    ]
    samples = {c[0]: {"getppid_ns": [], "ioctl_ns": []} for c in conds}
    errors = []
    for _ in range(int(rounds)):
        for name, argv, extra in conds:
            p = subprocess.run(argv, capture_output=True, text=True, env=env_with(extra))
            try:
                d = json.loads(p.stdout)
                for k in ("getppid_ns", "ioctl_ns"):
                    samples[name][k].append(d[k])
            except (ValueError, KeyError):
                errors.append(f"{name}: exit {p.returncode}: {p.stderr.strip()[:300]}")
    res = {"n_per_pass": int(n), "rounds": int(rounds), "errors": errors,
           "conditions": {k: {m: summary(v) for m, v in d.items()} for k, d in samples.items()}}
    write(out, res)


# --- stdio: bytes per second through cat
def pin_cpu0():
    os.sched_setaffinity(0, {0})


def cmd_stdio(out, moat, rounds, nbytes, withenv=None):
    """Each condition twice: unpinned (the scheduler places head and cat as
    it likes, which on 2 vCPUs swings the figure by 2x from run to run) and
    with both ends pinned to CPU 0 (sched_setaffinity before exec; moat and
    its children inherit it), which leaves mostly the copying itself."""
    nbytes = int(nbytes)
    base = [
        ("bare", ["/bin/cat"]),
        ("moat_strict", [moat, "run", "--profile", "strict", "--", "/bin/cat"]),
    ]
    if shutil.which("bwrap"):
        base.append(("bwrap", BWRAP + ["/bin/cat"]))
    conds = [(n, a, False) for n, a in base] + [(n + "_pinned", a, True) for n, a in base]
    # Pinned only: which part of a sandbox the difference comes from.
    if withenv:
        conds.append(("moat_no_seccomp_pinned", [withenv, "MOAT_HOST_LIMIT=seccomp=0", moat, "run", "--backend",
                                                 "native", "--profile", "strict", "--mode", "prefer", "--",
                                                 "/bin/cat"], True))
    if shutil.which("unshare"):
        conds.append(("userns_only_pinned", ["unshare", "--user", "/bin/cat"], True))
    secs = {c[0]: [] for c in conds}
    errors = []
    for _ in range(int(rounds)):
        for name, argv, pinned in conds:
            pre = pin_cpu0 if pinned else None
            with open(os.devnull, "wb") as null:
                t0 = time.perf_counter()
                head = subprocess.Popen(["head", "-c", str(nbytes), "/dev/zero"], stdout=subprocess.PIPE,
                                        preexec_fn=pre)
                cat = subprocess.Popen(argv, stdin=head.stdout, stdout=null, stderr=subprocess.PIPE,
                                       preexec_fn=pre)
                head.stdout.close()
                _, err = cat.communicate()
                head.wait()
                dt = time.perf_counter() - t0
            if cat.returncode != 0 or head.returncode != 0:
                errors.append(f"{name}: exit {cat.returncode}: {err.decode(errors='replace')[:300]}")
                continue
            secs[name].append(dt)
    res = {"bytes": nbytes, "rounds": int(rounds), "errors": errors, "conditions": {}}
    for name, xs in secs.items():
        s = summary(xs)
        if s:
            s["bytes_per_s_median"] = nbytes / s["median"]
            s["bytes_per_s_min"] = nbytes / s["max"]
            s["bytes_per_s_max"] = nbytes / s["min"]
        res["conditions"][name] = s
    write(out, res)


# --- memory: moat's own resident memory while the command runs
STATUS_KEYS = ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem", "VmPeak", "VmSize")


def proc_status(pid):
    d = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in STATUS_KEYS or k == "Name":
                    d[k] = int(v.split()[0]) if k != "Name" else v.strip()
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                m = re.match(r"^(Pss|Pss_Anon|Pss_File):\s+(\d+)", line)
                if m:
                    d[m.group(1)] = int(m.group(2))
    except OSError:
        return None
    return d


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def cmd_memory(out, moat, rounds):
    conds = [
        ("strict", [moat, "run", "--profile", "strict", "--", "/bin/sleep", "1"], None),
        ("mcp", [moat, "run", "--profile", "mcp", "--", "/bin/sleep", "1"], None),
        ("fallback", [moat, "run", "--backend", "native", "--profile", "strict", "--mode", "prefer", "--", "/bin/sleep", "1"], FALLBACK_ENV),
    ]
    res = {"unit": "kB", "rounds": int(rounds), "conditions": {}}
    for name, argv, extra in conds:
        samples = []
        for _ in range(int(rounds)):
            p = subprocess.Popen(argv, env=env_with(extra), stderr=subprocess.DEVNULL)
            time.sleep(0.5)  # planning done, the command (sleep 1) running
            sup = proc_status(p.pid)
            kids = children(p.pid)
            init = proc_status(kids[0]) if kids else None
            # With a pid namespace the first child is moat's init (a fork of
            # moat, comm "moat") and the command is its child; without one
            # the first child is the command itself.
            if init is not None and init.get("Name") != "moat":
                init = None
            p.wait()
            samples.append({"supervisor": sup, "init": init})
        def agg(role, key):
            xs = [s[role][key] for s in samples if s.get(role) and key in s[role]]
            return summary(xs)
        res["conditions"][name] = {
            "argv": argv, "env": extra or {},
            "supervisor": {k: agg("supervisor", k) for k in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "Pss")},
            "init": {k: agg("init", k) for k in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "Pss")}
            if any(s.get("init") for s in samples) else None,
        }
    write(out, res)


# --- concurrency: 100 sandboxes in parallel batches, then look for leaks
def cmd_concurrency(out, moat, batches, width, leakdir):
    batches, width = int(batches), int(width)
    sleeper = os.path.join(leakdir, "moatbench-leak-sleep")
    os.makedirs(leakdir, exist_ok=True)
    shutil.copy2("/bin/sleep", sleeper)
    # The command leaves a 30 s grandchild behind when it exits: moat must
    # not leave it running (pid namespace, or subreaper + kill).
    script = f"{sleeper} 30 & {sleeper} 0.05"
    conds = [
        ("strict", [moat, "run", "--profile", "strict", "--read", leakdir, "--", "/bin/sh", "-c", script], None),
        ("fallback", [moat, "run", "--backend", "native", "--profile", "strict", "--mode", "prefer", "--read", leakdir, "--",
                      "/bin/sh", "-c", script], FALLBACK_ENV),
    ]
    res = {"batches": batches, "width": width, "command": script, "conditions": {}}
    for name, argv, extra in conds:
        before = leftovers.snapshot(leakdir)
        failures, batch_s, pids = [], [], set()
        t0 = time.perf_counter()
        for _ in range(batches):
            b0 = time.perf_counter()
            ps = [subprocess.Popen(argv, env=env_with(extra), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                  for _ in range(width)]
            pids.update(p.pid for p in ps)
            for p in ps:
                _, err = p.communicate()
                if p.returncode != 0:
                    failures.append(f"exit {p.returncode}: {err.decode(errors='replace').strip()[:300]}")
            batch_s.append(time.perf_counter() - b0)
        wall = time.perf_counter() - t0
        left = leftovers.left_behind(before, leakdir, pids)
        res["conditions"][name] = {
            "argv": argv, "env": extra or {}, "sandboxes": batches * width, "wall_s": wall,
            "batch_s": summary(batch_s), "failures": failures,
            "leaked_processes": left["processes"], "leaked_mounts": left["mounts"],
            "leaked_tmp": left["tmp"], "leaked_cgroups": left["cgroups"],
            "other_new_moat_entries_in_tmp": left["other_tmp"], "other_new_moat_cgroups": left["other_cgroups"],
            "tmp_before": left["tmp_before"], "tmp_after": left["tmp_after"],
        }
        leftovers.kill_leaked(left)  # so the next condition starts clean
    write(out, res)


# --- netfence: connects and bulk transfers through the network fence
NET_NAME = "bench.test"  # pinned with --resolve: nothing is looked up outside
NET_PROXIES = ("http", "socks5")  # netbench's clients through the proxy mode


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else None


def fence_counts(path):
    try:
        with open(path) as f:
            return ((json.load(f).get("network") or {}).get("fence")) or None
    except (OSError, ValueError):
        return None


def net_identity(moat, netbench, rounds, n, bulk_rounds, nbytes, startup_runs):
    """Every figure of the section for the uid this process runs as, with a
    server of its own (bench/netbench serve on 127.0.0.1).  Conditions are
    interleaved round by round, the order rotated each round."""
    import tempfile
    work = tempfile.mkdtemp(prefix="moatbench-net.")
    srv = subprocess.Popen([netbench, "serve", str(nbytes)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True)
    try:
        lat, sink, src = (int(x) for x in srv.stdout.readline().split())
        return net_measure(moat, netbench, work, srv.pid, lat, sink, src, rounds, n, bulk_rounds, nbytes,
                           startup_runs)
    finally:
        srv.stdin.close()
        try:
            srv.wait(timeout=10)
        except subprocess.TimeoutExpired:
            srv.kill()
        shutil.rmtree(work, ignore_errors=True)


def net_measure(moat, netbench, work, server_pid, lat, sink, src, rounds, n, bulk_rounds, nbytes, startup_runs):
    strict = [moat, "run", "--profile", "strict", "--read", os.path.dirname(netbench)]

    def fenced(allow, rep, *cmd):
        a = list(strict) + ["--report", rep]
        for x in allow:
            a += ["--allow-net", x]
        if any(x.startswith(NET_NAME) for x in allow):
            a += ["--resolve", f"{NET_NAME}=127.0.0.1"]
        return a + ["--", netbench] + list(cmd)

    def run(argv, pinned):
        return subprocess.run(argv, capture_output=True, text=True, preexec_fn=pin_cpu0 if pinned else None)

    res = {"uid": os.geteuid(), "loadavg_start": open("/proc/loadavg").read().split()[:3]}
    errors = []
    # 1. connect latency: one run = N timed connects (after 20 untimed).
    # "pinned": moat, the command and (for direct) the client on CPU 0,
    # which leaves out where the scheduler puts the two ends on 2 vCPUs.
    addr = f"127.0.0.1:{lat}"
    conn = ["connect", "127.0.0.1", str(lat), str(n)]
    conds = [
        ("direct", lambda rep: [netbench] + conn, False),
        ("fenced_addr", lambda rep: fenced([addr], rep, *conn), False),
        ("fenced_name", lambda rep: fenced([f"{NET_NAME}:{lat}"], rep, "connect", NET_NAME, str(lat), str(n)), False),
        ("direct_pinned", lambda rep: [netbench] + conn, True),
        ("fenced_addr_pinned", lambda rep: fenced([addr], rep, *conn), True),
        ("direct_nonblock", lambda rep: [netbench] + conn + ["nonblock"], False),
        ("fenced_addr_nonblock", lambda rep: fenced([addr], rep, *conn, "nonblock"), False),
        # Proxy mode: the client asks moat's in-sandbox listener for the
        # pinned name (https_proxy's HTTP CONNECT, all_proxy's SOCKS5), as a
        # proxy-aware client does; timed from the connect to the proxy's
        # success reply.
    ] + [(f"proxy_{via}", lambda rep, via=via: fenced([f"{NET_NAME}:{lat}"], rep, "connect", NET_NAME, str(lat),
                                                      str(n), via), False) for via in NET_PROXIES]
    per = {c[0]: {"samples": [], "round_medians": [], "p90s": [], "resolve_us": [], "fence": []} for c in conds}
    for r in range(int(rounds)):
        k = r % len(conds)
        for name, argv, pinned in conds[k:] + conds[:k]:
            rep = os.path.join(work, f"{name}-{r}.json")
            p = run(argv(rep), pinned)
            try:
                d = json.loads(p.stdout)
            except ValueError:
                errors.append(f"{name}: exit {p.returncode}: {p.stderr.strip()[:300]}")
                continue
            if d.get("failed"):
                errors.append(f"{name}: {d['failed']} connects failed ({d.get('first_error')})")
            c = per[name]
            c["samples"] += d["samples_us"]
            if d.get("median_us") is not None:
                c["round_medians"].append(d["median_us"])
                c["p90s"].append(d["p90_us"])
            if d.get("resolve_us") is not None:
                c["resolve_us"].append(d["resolve_us"])
            if name.startswith(("fenced", "proxy")):
                c["fence"].append(fence_counts(rep))
    res["connect"] = {}
    for name, c in per.items():
        xs = c["samples"]
        res["connect"][name] = {
            "n": len(xs), "median_us": statistics.median(xs) if xs else None, "p90_us": pct(xs, 0.9),
            "p99_us": pct(xs, 0.99), "min_us": min(xs) if xs else None,
            "round_medians_us": c["round_medians"], "round_p90s_us": c["p90s"],
            "resolve_us": c["resolve_us"] or None, "fence": c["fence"] or None}

    # 2. bulk: BYTES written to the sink, then read from the source, per
    # run; unpinned, then with the client (moat and the command) and the
    # server all on CPU 0.  Unpinned rounds also run the client through
    # the proxy mode (the pinned name, each proxy in turn), in the same
    # rounds as direct and fenced, so its ratio is paired the same way;
    # the order is rotated round by round.
    allow = [f"127.0.0.1:{sink}", f"127.0.0.1:{src}"]
    bulk_cmd = ["bulk", "127.0.0.1", str(sink), str(src), str(nbytes)]
    named = [f"{NET_NAME}:{sink}", f"{NET_NAME}:{src}"]
    bconds = [("direct", lambda rep: [netbench] + bulk_cmd), ("fenced", lambda rep: fenced(allow, rep, *bulk_cmd))]
    pconds = [(f"proxy_{via}", lambda rep, via=via: fenced(named, rep, "bulk", NET_NAME, str(sink), str(src),
                                                           str(nbytes), via)) for via in NET_PROXIES]
    bulk = {}
    all_cpus = os.sched_getaffinity(0)
    for pinned in (False, True):
        if pinned:
            os.sched_setaffinity(server_pid, {0})
        these = bconds if pinned else bconds + pconds
        for r in range(int(bulk_rounds)):
            k = r % len(these)
            for name, argv in these[k:] + these[:k]:
                key = name + ("_pinned" if pinned else "")
                rep = os.path.join(work, f"bulk-{key}-{r}.json")
                p = run(argv(rep), pinned)
                b = bulk.setdefault(key, {"send_s": [], "recv_s": [], "fence": []})
                try:
                    d = json.loads(p.stdout)
                    b["send_s"].append(d["send_s"])
                    b["recv_s"].append(d["recv_s"])
                except (ValueError, KeyError):
                    errors.append(f"bulk {key}: exit {p.returncode}: {p.stderr.strip()[:300]}")
                if name != "direct":
                    b["fence"].append(fence_counts(rep))
        if pinned:
            os.sched_setaffinity(server_pid, all_cpus)
    res["bulk"] = {"bytes": int(nbytes), "rounds": int(bulk_rounds), "conditions": {
        k: {"send": summary(v["send_s"]), "recv": summary(v["recv_s"]), "fence": v["fence"] or None,
            "send_Bps_median": int(nbytes) / statistics.median(v["send_s"]) if v["send_s"] else None,
            "recv_Bps_median": int(nbytes) / statistics.median(v["recv_s"]) if v["recv_s"] else None}
        for k, v in bulk.items()}}

    # 3. start-up: /bin/true under each network mode, interleaved run by
    # run, two rounds of warm-up; posix_spawn to exit (the spawn's own
    # cost is the same in all).
    sconds = [
        ("net_none", strict + ["--net", "none", "--", "/bin/true"]),
        ("net_loopback", strict + ["--net", "loopback", "--", "/bin/true"]),
        ("allow_addr", strict + ["--allow-net", addr, "--", "/bin/true"]),
        ("allow_pinned", strict + ["--allow-net", f"{NET_NAME}:{lat}", "--resolve", f"{NET_NAME}=127.0.0.1", "--",
                                   "/bin/true"]),
        ("allow_lookup", strict + ["--allow-net", f"localhost:{lat}", "--", "/bin/true"]),
    ]
    st = {c[0]: [] for c in sconds}
    for r in range(int(startup_runs) + 2):
        k = r % len(sconds)
        for name, argv in sconds[k:] + sconds[:k]:
            t0 = time.perf_counter()
            pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
            _, status = os.waitpid(pid, 0)
            dt = time.perf_counter() - t0
            if os.waitstatus_to_exitcode(status) != 0:
                errors.append(f"start-up {name}: exit {os.waitstatus_to_exitcode(status)}")
            elif r >= 2:
                st[name].append(dt)
    res["startup"] = {k: summary(v) for k, v in st.items()}
    res["startup_argv"] = {k: a for k, a in sconds}

    # 4. the supervisor's system calls during one fenced connect loop:
    # strace -c on moat alone (not its children, so not the command's).
    if shutil.which("strace"):
        sc_out = os.path.join(work, "strace.txt")
        p = subprocess.run(["strace", "-c", "-o", sc_out] + conds[1][1](os.path.join(work, "strace-rep.json")),
                           capture_output=True, text=True)
        try:
            with open(sc_out) as f:
                res["strace_supervisor"] = {"connects": int(n) + 20, "text": f.read()}
        except OSError:
            errors.append(f"strace: exit {p.returncode}: {p.stderr.strip()[:300]}")
    res["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    res["errors"] = errors
    return res


def cmd_netfence(out, moat, netbench, rounds, n, bulk_rounds, nbytes, startup_runs, *uids):
    """The fence's figures (issue 18), as this user and, as root, as each
    of uids too (a forked copy drops to that uid, as load.py does)."""
    import load  # bench/load.py: as_user
    args = (moat, netbench, rounds, n, bulk_rounds, nbytes, startup_runs)
    ids = [net_identity(*args)]
    if os.geteuid() == 0:
        for u in uids:
            ids.append(load.as_user(int(u), lambda: net_identity(*args)))
    write(out, {"rounds": int(rounds), "n_per_run": int(n), "bulk_rounds": int(bulk_rounds),
                "startup_runs": int(startup_runs), "identities": ids,
                "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})

def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cmd, args = sys.argv[1], sys.argv[2:]
    fn = {"seccomp": cmd_seccomp, "stdio": cmd_stdio, "memory": cmd_memory,
          "concurrency": cmd_concurrency, "netfence": cmd_netfence}.get(cmd)
    if fn is None:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    fn(*args)


if __name__ == "__main__":
    main()
