"""Tests of bindings/python/moat.py against the real moat binary.

Run: /usr/bin/python3 -m unittest discover -s bindings/python -v
The binary is $MOAT, or ../../build/moat relative to this file.  Works as
root and as an unprivileged user; tests that need a host feature (Landlock,
user namespaces) lower detection with MOAT_HOST_LIMIT instead of needing a
host without it.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import moat  # noqa: E402

MOAT = os.environ.get("MOAT") or os.path.normpath(os.path.join(HERE, "..", "..", "build", "moat"))
PY = "/usr/bin/python3"

# Every report these tests get is checked against the checked-in schema,
# with the tests' own validator, when the tree has them.
SCHEMA = os.path.join(HERE, "..", "..", "docs", "report.schema.json")
VALIDATOR_DIR = os.path.join(HERE, "..", "..", "tests", "lib")
try:
    sys.path.insert(0, VALIDATOR_DIR)
    import validate_schema  # noqa: E402
    with open(SCHEMA) as _f:
        _SCHEMA = json.load(_f)
except (ImportError, OSError):
    validate_schema = _SCHEMA = None
finally:
    sys.path.remove(VALIDATOR_DIR)


def moat_env(**extra):
    """moat's own environment: this one without MOAT_HOST_LIMIT, plus extra."""
    env = {k: v for k, v in os.environ.items() if k != "MOAT_HOST_LIMIT"}
    env.update(extra)
    return env


@unittest.skipUnless(os.access(MOAT, os.X_OK), "moat binary not built at %s (set MOAT)" % MOAT)
class BinaryTest(unittest.TestCase):
    def setUp(self):
        # exec (the default profile) grants the cwd: a scratch dir, never HOME or /.
        self.dir = tempfile.mkdtemp(prefix="moat-py-")
        os.chmod(self.dir, 0o755)
        self.out = os.path.join(self.dir, "out")
        os.mkdir(self.out)
        os.chmod(self.out, 0o777)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_moat(self, command, **kw):
        kw.setdefault("cwd", self.dir)
        kw.setdefault("process_env", moat_env())
        kw.setdefault("wait_timeout", 60)
        r = moat.run(command, moat=MOAT, **kw)
        self.check_schema(r.report)
        return r

    def check_schema(self, report):
        if report is not None and _SCHEMA is not None:
            self.assertEqual(validate_schema.validate(_SCHEMA, dict(report)), [], "the report fits docs/report.schema.json")


class TestProbe(BinaryTest):
    """moat.probe(): the moat.probe/1 document of `moat probe --json`."""

    def test_probe(self):
        d = moat.probe(moat=MOAT, process_env=moat_env())
        self.assertEqual(d["schema"], moat.PROBE_SCHEMA)
        self.assertEqual(d["uid"], os.getuid())
        self.assertEqual(d["limited_by"], "")
        self.assertIn("native", d["backends"])
        cli = subprocess.run([MOAT, "probe", "--json"], stdout=subprocess.PIPE, env=moat_env(), check=True)
        self.assertEqual(set(json.loads(cli.stdout)), set(d), "the same document as moat probe --json")

    def test_probe_honours_the_limit(self):
        d = moat.probe(moat=MOAT, process_env=moat_env(MOAT_HOST_LIMIT="landlock=0,seccomp=0"))
        self.assertEqual(d["limited_by"], "landlock=0,seccomp=0")
        self.assertEqual(d["landlock_abi"], 0)
        self.assertFalse(d["seccomp"])
        with self.assertRaises(moat.MoatError):
            moat.probe(moat=MOAT, process_env=moat_env(MOAT_HOST_LIMIT="nonsense"))


class TestArgv(unittest.TestCase):
    def test_minimal_argv(self):
        self.assertEqual(moat.moat_argv(["true"], moat="/m"), ["/m", "run", "--", "true"])

    def test_every_policy_option(self):
        argv = moat.moat_argv(["make", "lint"], moat="/m", profile="strict", read=[".", "/opt/x"], write="/tmp/o",
                              deny=["~/.ssh"], net="loopback", env={"A": "1", "B": "x y"}, env_pass=["TOKEN"],
                              mode="prefer", timeout=2.5, require=["fs.secrets", "net.none"], memory="512M",
                              pids=64, files=100, cpu=10, report_fd=9)
        self.assertEqual(argv, [
            "/m", "run", "--profile", "strict", "--read", ".", "--read", "/opt/x", "--write", "/tmp/o",
            "--deny", "~/.ssh", "--net", "loopback", "--env", "A=1", "--env", "B=x y", "--env-pass", "TOKEN",
            "--timeout", "2.5", "--memory", "512M", "--pids", "64", "--files", "100", "--cpu", "10",
            "--mode", "prefer", "--require", "fs.secrets,net.none", "--report-fd", "9", "--", "make", "lint"])

    def test_command_after_double_dash_verbatim(self):
        argv = moat.moat_argv(["--weird", "--", "-x"], moat="/m")
        self.assertEqual(argv[argv.index("--") + 1:], ["--weird", "--", "-x"])

    def test_moat_from_environment(self):
        old = os.environ.get("MOAT")
        os.environ["MOAT"] = "/from/env/moat"
        try:
            self.assertEqual(moat.moat_argv(["true"])[0], "/from/env/moat")
        finally:
            if old is None:
                del os.environ["MOAT"]
            else:
                os.environ["MOAT"] = old

    def test_rejects_a_string_command(self):
        with self.assertRaises(moat.MoatError):
            moat.moat_argv("ls -l", moat="/m")

    def test_rejects_bad_values(self):
        for kw in ({"mode": "maybe"}, {"net": "some"}, {"env": {"A=B": "1"}}, {"env_pass": ["1X"]},
                   {"timeout": 0}, {"timeout": -1}, {"require": ["fs"]}, {"report_fd": 1}, {"read": [""]}):
            with self.assertRaises(moat.MoatError, msg=repr(kw)):
                moat.moat_argv(["true"], moat="/m", **kw)
        with self.assertRaises(moat.MoatError):
            moat.moat_argv([], moat="/m")

    def test_rejects_bad_types_with_moat_error(self):
        # Each once got a bare TypeError or AttributeError from deep inside,
        # or worse, went through changed: env={"A": None} gave the command
        # A=None, keep_fds="35" kept fds 3 and 5, keep_fds=[True] fd 1.
        for args, kw in (((None,), {}), (([None],), {}), ((["echo", 5],), {}), (({"true": 1},), {}),
                         ((["true"],), {"env": {"A": None}}), ((["true"],), {"env": {"A": object()}}),
                         ((["true"],), {"env": {5: "x"}}), ((["true"],), {"env": ["A=1"]}),
                         ((["true"],), {"keep_fds": "35"}), ((["true"],), {"keep_fds": [True]}),
                         ((["true"],), {"keep_fds": ["3"]}), ((["true"],), {"report_fd": "9"}),
                         ((["true"],), {"timeout": float("inf")}), ((["true"],), {"read": 5}),
                         ((["true"],), {"read": [None]}), ((["true"],), {"require": [None]}),
                         ((["true"],), {"cwd": 3})):
            with self.assertRaises(moat.MoatError, msg=repr((args, kw))):
                moat.moat_argv(*args, moat="/m", **kw)

    def test_good_types_still_pass(self):
        # Control: what the checks above must not refuse.
        argv = moat.moat_argv((w for w in ["echo", b"hi"]), moat="/m", env={"A": b"x", "N": 5, "F": 0.5},
                              keep_fds=3, report_fd=9)
        self.assertEqual(argv, ["/m", "run", "--env", "A=x", "--env", "N=5", "--env", "F=0.5", "--keep-fd", "3",
                                "--report-fd", "9", "--", "echo", "hi"])
        self.assertEqual(moat.moat_argv(["true"], moat="/m", keep_fds=[3, 4])[2:6],
                         ["--keep-fd", "3", "--keep-fd", "4"])

    def test_paths_accept_pathlike(self):
        import pathlib
        argv = moat.moat_argv([pathlib.Path("/bin/true")], moat="/m", read=pathlib.Path("/srv"))
        self.assertEqual(argv, ["/m", "run", "--read", "/srv", "--", "/bin/true"])


class TestClassifyOffline(unittest.TestCase):
    def rep(self, status, run=None, missing=(), props=None):
        d = {"schema": "moat.report/1", "status": status, "missing": list(missing),
             "properties": props or {}}
        if run is not None:
            d["run"] = run
        return moat.Report(d)

    def res(self, report, code=0, stderr=b""):
        return moat.Result(["moat"], code, report, None, stderr)

    def test_no_report_is_an_error(self):
        o = moat.classify(self.res(None, 125, b"moat: unknown option '--x'\n"))
        self.assertEqual(o.kind, moat.ERROR)
        self.assertIn("unknown option", o.message)

    def test_no_report_says_the_exit_status_once(self):
        res = moat.Result(["moat"], 127, None, None, b"", "moat wrote no report")
        self.assertEqual(moat.classify(res).message, "moat wrote no report (exit 127)")

    def test_unavailable_is_inconclusive_with_hints(self):
        r = self.rep("unavailable", {"executed": False, "exit_code": 125, "failure": "x"}, ["fs.read"],
                     {"fs.read": {"status": "missing", "reason": "no landlock", "hint": "get landlock"}})
        o = moat.classify(self.res(r, 125))
        self.assertEqual((o.kind, o.missing, o.hints), (moat.INCONCLUSIVE, ["fs.read"], {"fs.read": "get landlock"}))

    def test_setup_failure_is_an_error(self):
        o = moat.classify(self.res(self.rep("enforced", {"executed": False, "exit_code": 125,
                                                          "failure": "mount failed"}), 125))
        self.assertEqual(o.kind, moat.ERROR)
        self.assertIn("mount failed", o.message)

    def test_exit_status_decides(self):
        ok = self.rep("enforced", {"executed": True, "exit_code": 0, "exit_status": 0, "signal": None,
                                   "timed_out": False})
        bad = self.rep("enforced", {"executed": True, "exit_code": 2, "exit_status": 2, "signal": None,
                                    "timed_out": False})
        self.assertEqual(moat.classify(self.res(ok)).kind, moat.PASS)
        self.assertEqual(moat.classify(self.res(bad, 2)).kind, moat.FAIL)
        self.assertEqual(moat.classify(self.res(bad, 2), passed=lambda c: c in (0, 2)).kind, moat.PASS)

    def test_degraded_caveat_or_inconclusive(self):
        r = self.rep("degraded", {"executed": True, "exit_code": 0, "exit_status": 0, "signal": None,
                                  "timed_out": False},
                     ["proc.pid"], {"proc.pid": {"status": "missing", "reason": "r", "hint": "h"}})
        o = moat.classify(self.res(r))
        self.assertEqual(o.kind, moat.PASS)
        self.assertTrue(any("proc.pid" in c for c in o.caveats))
        self.assertEqual(moat.classify(self.res(r), degraded="inconclusive").kind, moat.INCONCLUSIVE)

    def test_signal_and_timeout_are_errors(self):
        sig = self.rep("enforced", {"executed": True, "exit_code": 137, "exit_status": None, "signal": 9,
                                    "timed_out": False})
        tmo = self.rep("enforced", {"executed": True, "exit_code": 124, "exit_status": None, "signal": 15,
                                    "timed_out": True})
        self.assertEqual(moat.classify(self.res(sig, 137)).kind, moat.ERROR)
        self.assertIn("timed out", moat.classify(self.res(tmo, 124)).message)

    def test_report_must_match_moats_exit_status(self):
        # A command that can put a file where the caller reads the report
        # claims a clean pass; moat itself exited 7.  The exit status is
        # what the command cannot forge.
        forged = self.rep("enforced", {"executed": True, "exit_code": 0, "exit_status": 0, "signal": None,
                                       "timed_out": False})
        o = moat.classify(self.res(forged, 7))
        self.assertEqual((o.kind, o.status), (moat.ERROR, None))
        self.assertIn("not this run's", o.message)
        self.assertIn("it says moat exited 0, but moat exited 7", o.message)
        # a refusal claimed while moat ran the command, and a run without
        # exit_code at all: not this run's either
        refusal = self.rep("unavailable", {"executed": False, "exit_code": 125, "failure": "x"}, ["fs.read"])
        self.assertEqual(moat.classify(self.res(refusal, 0)).kind, moat.ERROR)
        no_code = self.rep("enforced", {"executed": True, "exit_status": 0, "signal": None, "timed_out": False})
        self.assertIn("no run.exit_code", moat.classify(self.res(no_code, 0)).message)
        # control: the same report with the matching status passes
        self.assertEqual(moat.classify(self.res(forged, 0)).kind, moat.PASS)

    def test_parse_report_rejects_other_json(self):
        with self.assertRaises(ValueError):
            moat.parse_report('{"schema": "something/2"}')
        self.assertIsNone(moat.parse_report(b""))


class TestMoatNotFound(unittest.TestCase):
    """A moat that is not there: MoatNotFound, which says where the name came from; never a raw OSError."""

    def setUp(self):
        self.old = os.environ.get("MOAT")
        self.dir = tempfile.mkdtemp(prefix="moat-py-")

    def tearDown(self):
        if self.old is None:
            os.environ.pop("MOAT", None)
        else:
            os.environ["MOAT"] = self.old
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_moat_env_names_nothing(self):
        os.environ["MOAT"] = "/nope"
        for call in (lambda: moat.run(["true"]), lambda: moat.spawn_mcp(["true"]), lambda: moat.probe(),
                     lambda: moat.MoatPopen(["true"])):
            with self.assertRaises(moat.MoatNotFound) as cm:
                call()
            self.assertIn("$MOAT='/nope'", str(cm.exception))
            self.assertIsInstance(cm.exception, moat.MoatError)

    def test_moat_argument_not_executable(self):
        path = os.path.join(self.dir, "moat")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(path, 0o644)
        with self.assertRaises(moat.MoatNotFound) as cm:
            moat.run(["true"], moat=path)
        self.assertIn("moat=%r" % path, str(cm.exception))

    def test_not_in_path(self):
        os.environ.pop("MOAT", None)
        old_path = os.environ.get("PATH", "")
        os.environ["PATH"] = self.dir
        try:
            with self.assertRaises(moat.MoatNotFound) as cm:
                moat.run(["true"])
            self.assertIn("put moat in PATH", str(cm.exception))
        finally:
            os.environ["PATH"] = old_path

    def test_moat_argv_needs_no_moat_here(self):
        os.environ["MOAT"] = "/nope"
        self.assertEqual(moat.moat_argv(["true"])[0], "/nope")

    @unittest.skipUnless(os.access(MOAT, os.X_OK), "moat binary not built at %s (set MOAT)" % MOAT)
    def test_a_bad_cwd_is_not_moat_missing(self):
        with self.assertRaises(FileNotFoundError):
            moat.run(["true"], moat=MOAT, cwd=os.path.join(self.dir, "no-such-dir"))


class TestRun(BinaryTest):
    def test_true_is_enforced_and_passes(self):
        r = self.run_moat(["true"])
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.status, "enforced", r.report)
        self.assertEqual(r.report["schema"], "moat.report/1")
        self.assertEqual(moat.classify(r).kind, moat.PASS)
        self.assertIn("fs.read", r.report.enforced)

    def test_exit_status_passes_through_and_fails(self):
        r = self.run_moat(["sh", "-c", "exit 3"])
        self.assertEqual((r.returncode, r.report.run_info["exit_status"]), (3, 3))
        self.assertEqual(moat.classify(r).kind, moat.FAIL)

    def test_a_report_from_another_run_is_an_error(self):
        # moat's real report of a run that exited 0, presented with the
        # status of a run that exited 3: classify() must not pass it.
        good = self.run_moat(["true"])
        bad = self.run_moat(["sh", "-c", "exit 3"])
        self.assertEqual(moat.classify(good).kind, moat.PASS)
        swapped = moat.Result(bad.argv, bad.returncode, good.report)
        o = moat.classify(swapped)
        self.assertEqual(o.kind, moat.ERROR)
        self.assertIn("it says moat exited 0, but moat exited 3", o.message)

    def test_captured_stdout_is_exact(self):
        payload = "".join(chr(c) for c in range(32, 127)) * 100
        r = self.run_moat(["cat"], input=payload.encode(), capture_output=True)
        self.assertEqual(r.stdout, payload.encode())
        self.assertEqual(r.stderr, b"")

    def test_text_mode(self):
        r = self.run_moat(["sh", "-c", "echo out; echo err >&2"], capture_output=True, text=True)
        self.assertEqual((r.stdout, r.stderr), ("out\n", "err\n"))

    def test_report_fd_does_not_leak_into_the_command(self):
        r = self.run_moat(["sh", "-c", "ls /proc/$$/fd"], capture_output=True, text=True)
        self.assertEqual(sorted(r.stdout.split()), ["0", "1", "2"], r.stdout)

    def test_policy_env_reaches_the_command(self):
        r = self.run_moat(["sh", "-c", 'printf %s "$GREETING"'], capture_output=True, policy_env={"GREETING": "hi there"})
        self.assertEqual(r.stdout, b"hi there")
        self.assertIn("GREETING", r.report["environment"]["names"])
        self.assertNotIn("hi there", json.dumps(r.report))

    def test_required_sandbox_missing_is_inconclusive_and_nothing_runs(self):
        target = os.path.join(self.out, "made")
        r = self.run_moat(["sh", "-c", 'echo x > "$0"', target], write=[self.out], capture_output=True,
                          backend="native", process_env=moat_env(MOAT_HOST_LIMIT="landlock=0,userns=0,root=0"))
        self.assertEqual((r.returncode, r.status), (moat.EXIT_MOAT, "unavailable"))
        self.assertFalse(os.path.exists(target), "the command ran although the sandbox was unavailable")
        o = moat.classify(r)
        self.assertEqual(o.kind, moat.INCONCLUSIVE)
        self.assertIn("fs.read", o.missing)
        self.assertRegex(o.hints["fs.read"], "[Ll]andlock")
        self.assertIn(b"cannot enforce fs.read", r.stderr)

    def test_prefer_runs_degraded_with_a_caveat(self):
        target = os.path.join(self.out, "made")
        r = self.run_moat(["sh", "-c", 'echo x > "$0"', target], write=[self.out], mode="prefer", capture_output=True,
                          backend="native", process_env=moat_env(MOAT_HOST_LIMIT="userns=0,root=0"))
        self.assertEqual((r.returncode, r.status), (0, "degraded"))
        self.assertTrue(os.path.exists(target))
        o = moat.classify(r)
        self.assertEqual(o.kind, moat.PASS)
        self.assertIn("proc.pid", o.missing)
        self.assertTrue(o.caveats)
        self.assertEqual(moat.classify(r, degraded="inconclusive").kind, moat.INCONCLUSIVE)

    def test_mode_off(self):
        r = self.run_moat(["true"], mode="off", capture_output=True)
        self.assertEqual((r.returncode, r.status, r.report["backend"]), (0, "off", "none"))
        self.assertIn(b"unsandboxed", r.stderr)

    def test_require_on_top_of_the_profile(self):
        r = self.run_moat(["true"], net="loopback", require=["net.loopback", "fs.secrets"], capture_output=True,
                          backend="native", process_env=moat_env(MOAT_HOST_LIMIT="userns=0,root=0"))
        self.assertEqual((r.returncode, r.status), (moat.EXIT_MOAT, "unavailable"))
        self.assertIn("net.loopback", r.report.missing)
        self.assertTrue(r.report["properties"]["fs.secrets"]["requested"])

    def test_command_not_found_is_an_error_with_its_report(self):
        r = self.run_moat(["/nonexistent/command-xyz"], capture_output=True)
        self.assertEqual(r.returncode, moat.EXIT_NOTFOUND)
        self.assertIsNotNone(r.report, r.report_error)
        self.assertEqual((r.report.executed, r.report.run_info["exit_code"]), (False, moat.EXIT_NOTFOUND))
        o = moat.classify(r)
        self.assertEqual(o.kind, moat.ERROR)
        self.assertEqual(o.message, "the command did not start: /nonexistent/command-xyz: No such file or directory")
        r = self.run_moat(["no-such-command-xyz"], capture_output=True)
        self.assertEqual((r.returncode, moat.classify(r).message),
                         (moat.EXIT_NOTFOUND, "the command did not start: no-such-command-xyz: command not found in PATH"))

    def test_command_not_executable_is_an_error_with_its_report(self):
        path = os.path.join(self.dir, "script.sh")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(path, 0o644)
        r = self.run_moat([path], capture_output=True)
        self.assertEqual((r.returncode, r.report.executed), (moat.EXIT_NOEXEC, False))
        self.assertIn("did not start", moat.classify(r).message)

    def test_bad_usage_is_an_error_without_report(self):
        r = self.run_moat(["true"], extra_args=["--frobnicate"], capture_output=True)
        self.assertEqual((r.returncode, r.report), (moat.EXIT_MOAT, None))
        o = moat.classify(r)
        self.assertEqual(o.kind, moat.ERROR)
        self.assertIn("frobnicate", o.message)

    def test_timeout(self):
        r = self.run_moat(["sleep", "30"], timeout=0.3, capture_output=True)
        self.assertEqual(r.returncode, moat.EXIT_TIMEOUT)
        self.assertTrue(r.timed_out)
        self.assertEqual(moat.classify(r).kind, moat.ERROR)

    def test_signal(self):
        r = self.run_moat(["sh", "-c", "kill -TERM $$"], capture_output=True)
        self.assertEqual((r.returncode, r.signal), (143, 15))
        self.assertEqual(moat.classify(r).kind, moat.ERROR)

    def test_dry_run_argv_prints_the_plan(self):
        argv = moat.moat_argv(["true"], moat=MOAT, dry_run=True)
        out = subprocess.run(argv, cwd=self.dir, env=moat_env(), stdout=subprocess.PIPE, check=True).stdout
        rep = moat.parse_report(out)
        self.check_schema(rep)
        self.assertIn("policy", rep)
        self.assertNotIn("run", rep)

    def stdio_closed_run(self, closed):
        # A daemon-like caller: `closed` of its fds 0-2 closed before
        # moat.run(); the outcome comes back on a pipe of its own.
        script = textwrap.dedent("""\
            import os, sys
            sys.path.insert(0, sys.argv[1])
            import moat
            out = os.dup(2)
            for fd in sys.argv[3:]:
                os.close(int(fd))
            try:
                r = moat.run(["/bin/true"], moat=sys.argv[2], capture_output=True, wait_timeout=60)
                msg = "rc=%s status=%s" % (r.returncode, r.status)
            except Exception as e:
                msg = "%s: %s" % (type(e).__name__, e)
            os.write(out, msg.encode())
            """)
        cp = subprocess.run([PY, "-c", script, HERE, MOAT] + [str(fd) for fd in closed], cwd=self.dir,
                            env=moat_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, timeout=90)
        return cp.stderr.decode()

    def test_bare_env_is_a_clear_error(self):
        # run(cmd, env={...}) met process_env's env= inside: a TypeError
        # about MoatPopen's keywords.  Now MoatError naming both.
        for start in (moat.run, moat.spawn_mcp):
            with self.assertRaisesRegex(moat.MoatError, "policy_env= .* process_env=", msg=start.__name__):
                start(["true"], moat=MOAT, env={"A": "1"})
        # Control: policy_env is the command's.
        r = self.run_moat(["sh", "-c", 'printf %s "$A"'], capture_output=True, policy_env={"A": "1"})
        self.assertEqual(r.stdout, b"1")

    def test_runs_with_stdio_closed(self):
        # os.pipe() gave the report pipe fds 0 and 1, and the write end was
        # refused as stdio ("report_fd must be above 2"): nothing could run.
        self.assertEqual(self.stdio_closed_run([0, 1]), "rc=0 status=enforced")
        self.assertEqual(self.stdio_closed_run([0, 1, 2]), "rc=0 status=enforced")
        self.assertEqual(self.stdio_closed_run([1, 2]), "rc=0 status=enforced")
        # Control: with stdio open, the same call.
        self.assertEqual(self.stdio_closed_run([]), "rc=0 status=enforced")

    def test_stdio_passes_through_by_default(self):
        # The command writes to the caller's own stdout (a file here): moat
        # relays nothing and adds nothing.
        path = os.path.join(self.dir, "stdout.txt")
        with open(path, "wb") as f:
            r = self.run_moat(["sh", "-c", "echo direct"], stdout=f)
        self.assertEqual(r.returncode, 0)
        with open(path, "rb") as f:
            self.assertEqual(f.read(), b"direct\n")


SERVER = textwrap.dedent("""\
    import json, sys
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("method") == "initialize":
            res = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "echo", "version": "1"}}
        else:
            res = {"echo": req.get("params")}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": res}) + "\\n")
        sys.stdout.flush()
    """)


class TestMcp(BinaryTest):
    def server(self):
        path = os.path.join(self.dir, "srv", "server.py")
        os.mkdir(os.path.dirname(path))
        with open(path, "w") as f:
            f.write(SERVER)
        os.chmod(os.path.dirname(path), 0o755)
        os.chmod(path, 0o644)
        return path

    def call(self, proc, rid, method, params=None):
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n").encode())
        return json.loads(proc.stdout.readline())

    def test_json_rpc_round_trip_and_report_after_exit(self):
        proc = moat.spawn_mcp([PY, self.server()], moat=MOAT, cwd=self.dir, process_env=moat_env(),
                              stderr=subprocess.DEVNULL)
        try:
            init = self.call(proc, 1, "initialize", {"capabilities": {}})
            self.assertEqual(init["result"]["serverInfo"]["name"], "echo")
            echo = self.call(proc, 2, "tools/call", {"name": "x", "arguments": {"s": "é ✓"}})
            self.assertEqual(echo, {"jsonrpc": "2.0", "id": 2, "result": {"echo": {"name": "x", "arguments": {"s": "é ✓"}}}})
        finally:
            proc.stdin.close()
            proc.wait(timeout=30)
            proc.stdout.close()
        self.assertEqual(proc.returncode, 0)
        self.check_schema(proc.report)
        self.assertEqual(proc.report.status, "enforced")
        self.assertEqual(proc.report["profile"], "mcp")
        self.assertEqual(moat.classify(proc.result()).kind, moat.PASS)

    def test_unavailable_server_exits_125_and_is_inconclusive(self):
        proc = moat.spawn_mcp([PY, self.server()], moat=MOAT, cwd=self.dir,
                              backend="native", process_env=moat_env(MOAT_HOST_LIMIT="seccomp=0"), stderr=subprocess.DEVNULL)
        self.assertEqual(proc.stdout.read(), b"", "nothing may answer on stdout when the sandbox is refused")
        proc.stdin.close()
        proc.stdout.close()
        self.assertEqual(proc.wait(timeout=30), moat.EXIT_MOAT)
        self.check_schema(proc.report)
        o = moat.classify(proc.result())
        self.assertEqual(o.kind, moat.INCONCLUSIVE)
        self.assertIn("sys.filter", o.missing)


if __name__ == "__main__":
    unittest.main()
