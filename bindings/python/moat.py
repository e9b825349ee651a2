"""Run a subprocess under moat, from Python: standard library only.

moat (https://... this repository) runs an untrusted command -- an MCP server
spoken to over stdio, or a command a compliance check executes -- in the
strongest sandbox the host gives, and writes a JSON report of what was
enforced (docs/report.md, docs/report.schema.json).  This module

* builds the argv (:func:`moat_argv`),
* runs a command with the report delivered on a private pipe
  (``--report-fd``) and returns the exit status and the parsed report
  (:func:`run`),
* starts an MCP server whose stdio JSON-RPC passes through unchanged and
  whose report is read after it exits (:func:`spawn_mcp`), and
* maps a result to pass / fail / inconclusive / error (:func:`classify`), as
  docs/integration.md describes, and
* asks what this host can enforce before any run (:func:`probe`: the
  ``moat.probe/1`` document of ``moat probe --json``).

Everything here runs the ``moat`` program, never libmoat.so through ctypes,
``probe()`` included although libmoat exports ``moat_probe_json()``: the
program is the one interface moat keeps stable (its options, exit statuses
and JSON schemas), so there is no C ABI to track and no library of another
version to find beside the binary; the probe forks, which a Python process
with threads should not do inside itself; and the answer is by construction
the one the CLI and the runs of that same binary give.

Nothing here is moat's own logic: the verdicts are the report's.  The module
only never pretends: no report means an error, never a pass.
"""

import fcntl
import json
import math
import os
import re
import shutil
import subprocess
import threading

__all__ = [
    "MoatError", "MoatNotFound", "Report", "Result", "Outcome", "MoatPopen",
    "find_moat", "moat_argv", "run", "spawn_mcp", "classify", "parse_report", "probe",
    "PASS", "FAIL", "INCONCLUSIVE", "ERROR",
    "EXIT_TIMEOUT", "EXIT_MOAT", "EXIT_NOEXEC", "EXIT_NOTFOUND",
]

# moat's reserved exit statuses (README: exit status).
EXIT_TIMEOUT = 124   # --timeout expired
EXIT_MOAT = 125      # moat could not start the command (usage, config, refusal)
EXIT_NOEXEC = 126    # found but not executable
EXIT_NOTFOUND = 127  # not found

# Outcomes of a check run under moat.
PASS = "pass"
FAIL = "fail"
INCONCLUSIVE = "inconclusive"
ERROR = "error"

MODES = ("require", "prefer", "off")
NETS = ("none", "loopback", "all")
REPORT_SCHEMA = "moat.report/1"
PROBE_SCHEMA = "moat.probe/1"

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PROPERTY = re.compile(r"^[a-z]+\.[a-z]+$")


class MoatError(Exception):
    """A usage error in this module (a bad argument), raised before anything runs."""


class MoatNotFound(MoatError):
    """The moat program is not there (or cannot be executed): nothing ran."""


def find_moat(moat=None):
    """The moat executable: `moat` if given, else $MOAT, else `moat` in PATH.

    Only the name: whether it can be executed is found when it is run
    (MoatNotFound then), so that moat_argv() can build an argv for another
    machine."""
    exe = moat or os.environ.get("MOAT") or shutil.which("moat")
    if not exe:
        raise MoatNotFound("moat not found: pass moat=PATH, set $MOAT, or put moat in PATH")
    return os.fspath(exe)


def _not_found(exe, moat, exc):
    """The MoatNotFound for an OSError of starting `exe`, saying where the name came from."""
    where = ("moat=%r" % os.fspath(moat) if moat else
             "$MOAT=%r" % os.environ["MOAT"] if os.environ.get("MOAT") else "%r (from PATH)" % exe)
    return MoatNotFound("cannot run moat %s: %s" % (where, exc.strerror or exc))


def _started_moat(exc, exe):
    """Whether an OSError of Popen is about the program itself (not a bad cwd)."""
    return isinstance(exc, (FileNotFoundError, PermissionError, NotADirectoryError)) and (
        exc.filename in (None, exe) or not os.path.exists(exe))


def _strs(name, values):
    """The strings of `values` (one str, bytes or path, or an iterable of
    them); MoatError naming `name` for anything else, never a bare
    TypeError from deep inside."""
    if values is None:
        return []
    if isinstance(values, (str, bytes, os.PathLike)):
        values = [values]
    try:
        values = list(values)
    except TypeError:
        raise MoatError("%s: expected a string, a path or a list of them, not %s"
                        % (name, type(values).__name__)) from None
    out = []
    for i, v in enumerate(values):
        if not isinstance(v, (str, bytes, os.PathLike)):
            raise MoatError("%s[%d]: expected a string or a path, not %s %r" % (name, i, type(v).__name__, v))
        v = os.fspath(v)
        if isinstance(v, bytes):
            v = os.fsdecode(v)
        if not v or "\0" in v:
            raise MoatError("%s: empty or NUL-containing value %r" % (name, v))
        out.append(v)
    return out


def _env_value(name, value):
    """A --env value as a string: str, bytes (file-system encoding) or a
    number.  None and other objects are refused: str() made None the
    five letters "None" in the command's environment."""
    if isinstance(value, bytes):
        value = os.fsdecode(value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    elif not isinstance(value, str):
        raise MoatError("env: the value of %s must be a string, not %s %r" % (name, type(value).__name__, value))
    if "\0" in value:
        raise MoatError("env: the value of %s contains NUL" % name)
    return value


def _fd_number(name, fd):
    """A descriptor number: an int (not a bool, not a string of digits)."""
    if isinstance(fd, bool) or not isinstance(fd, int):
        raise MoatError("%s: expected a descriptor number (int), not %s %r" % (name, type(fd).__name__, fd))
    return fd


def _above_stdio(fd):
    """fd itself, or a close-on-exec copy above 2 (fd closed).  A process
    that runs with 0, 1 or 2 closed (a daemon) gets them back from
    os.pipe(): the report pipe's write end at 1 or 2 was refused as stdio,
    so such a process could run nothing.  On failure fd stays open (the
    caller closes it)."""
    if fd > 2:
        return fd
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.close(fd)
    return high


def moat_argv(command, profile=None, read=(), write=(), deny=(), net=None, env=None, env_pass=(),
              mode=None, timeout=None, require=(), backend=None, cwd=None, memory=None, pids=None,
              files=None, cpu=None, keep_fds=(), report=None, report_fd=None, dry_run=False,
              extra_args=(), moat=None):
    """The argv that runs `command` (a list: the program and its arguments) under moat.

    Policy arguments map to `moat run` options one to one: profile
    (--profile), read/write/deny (paths, --read/--write/--deny), net
    ("none", "loopback" or "all"), env (a dict NAME -> VALUE, --env), env_pass
    (names, --env-pass), mode ("require", "prefer" or "off"), timeout
    (seconds, --timeout), require (property names, --require), backend, cwd,
    memory ("512M" or bytes), pids, files, cpu (seconds), keep_fds.  report
    (a file) or report_fd (an open descriptor) say where the report goes;
    dry_run prints the plan instead of running.  extra_args are passed before
    `--` as they are, for options this module does not know yet.
    """
    if isinstance(command, (str, bytes)):
        raise MoatError("command must be a list (program and arguments), not a string: "
                        "moat runs no shell")
    if isinstance(command, (os.PathLike, dict)) or command is None:
        raise MoatError("command must be a list (program and arguments), not %s" % type(command).__name__)
    cmd = _strs("command", command)
    if not cmd:
        raise MoatError("command is empty")
    argv = [find_moat(moat), "run"]
    if profile:
        argv += ["--profile", str(profile)]
    for opt, values in (("--read", read), ("--write", write), ("--deny", deny)):
        for v in _strs(opt, values):
            argv += [opt, v]
    if net is not None:
        if net not in NETS:
            raise MoatError("net must be one of %s, not %r" % (", ".join(NETS), net))
        argv += ["--net", net]
    if env is not None and not hasattr(env, "items"):
        raise MoatError("env: expected a dict NAME -> VALUE, not %s" % type(env).__name__)
    for name, value in (env or {}).items():
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            raise MoatError("env: %r is not a valid variable name" % (name,))
        argv += ["--env", "%s=%s" % (name, _env_value(name, value))]
    for name in _strs("env_pass", env_pass):
        if not _ENV_NAME.match(name):
            raise MoatError("env_pass: %r is not a valid variable name" % name)
        argv += ["--env-pass", name]
    if cwd is not None:
        argv += ["--cwd", _strs("cwd", cwd)[0]]
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
            raise MoatError("timeout must be a positive number of seconds, not %r" % (timeout,))
        argv += ["--timeout", repr(float(timeout)) if isinstance(timeout, float) else str(timeout)]
    for opt, value in (("--memory", memory), ("--pids", pids), ("--files", files), ("--cpu", cpu)):
        if value is not None:
            argv += [opt, str(value)]
    if mode is not None:
        if mode not in MODES:
            raise MoatError("mode must be one of %s, not %r" % (", ".join(MODES), mode))
        argv += ["--mode", mode]
    req = _strs("require", require)
    for p in req:
        if not _PROPERTY.match(p):
            raise MoatError("require: %r is not a property name (see `moat help properties`)" % p)
    if req:
        argv += ["--require", ",".join(req)]
    if backend is not None:
        argv += ["--backend", str(backend)]
    if isinstance(keep_fds, (str, bytes)):
        raise MoatError("keep_fds: expected a list of descriptor numbers, not %s %r"
                        % (type(keep_fds).__name__, keep_fds))
    if isinstance(keep_fds, int) and not isinstance(keep_fds, bool):
        keep_fds = [keep_fds]
    for fd in keep_fds or ():
        argv += ["--keep-fd", str(_fd_number("keep_fds", fd))]
    if report is not None:
        argv += ["--report", _strs("report", report)[0]]
    if report_fd is not None:
        if _fd_number("report_fd", report_fd) <= 2:
            raise MoatError("report_fd must be above 2: stdio belongs to the command")
        argv += ["--report-fd", str(int(report_fd))]
    if dry_run:
        argv.append("--dry-run")
    argv += _strs("extra_args", extra_args)
    return argv + ["--"] + cmd


class Report(dict):
    """The parsed moat report: a dict, with accessors for what tools need."""

    @property
    def status(self):
        """"enforced", "degraded", "unavailable" or "off"."""
        return self.get("status")

    @property
    def missing(self):
        """The requested properties that are not enforced."""
        return list(self.get("missing", []))

    @property
    def enforced(self):
        """{property: mechanism} for every enforced property."""
        return {k: v.get("mechanism", "") for k, v in self.get("properties", {}).items()
                if v.get("status") == "enforced"}

    @property
    def hints(self):
        """{property: hint} for every missing property."""
        props = self.get("properties", {})
        return {p: props.get(p, {}).get("hint", "") for p in self.missing}

    @property
    def reasons(self):
        """{property: reason} for every missing property."""
        props = self.get("properties", {})
        return {p: props.get(p, {}).get("reason", "") for p in self.missing}

    @property
    def run_info(self):
        """The "run" object (exit status, signal, timings), or {} for a dry run."""
        return self.get("run") or {}

    @property
    def executed(self):
        return bool(self.run_info.get("executed"))


def parse_report(text):
    """A Report from the JSON text moat wrote, or None when there is none."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not text or not text.strip():
        return None
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("schema") != REPORT_SCHEMA:
        raise ValueError("not a %s report: schema %r" % (REPORT_SCHEMA, data.get("schema")
                                                         if isinstance(data, dict) else None))
    return Report(data)


def probe(*, moat=None, process_env=None, timeout=60):
    """What this host offers and what each backend enforces here: the parsed
    ``moat probe --json`` document (a dict, ``"schema": "moat.probe/1"``,
    docs/degradation.md).  ``process_env`` is moat's own environment
    (``MOAT_HOST_LIMIT`` there lowers the answer as it lowers a run).

    It runs the moat program (see the module's docstring for why not
    libmoat.so); raises MoatError when moat fails or prints no such
    document."""
    exe = find_moat(moat)
    try:
        cp = subprocess.run([exe, "probe", "--json"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=process_env, timeout=timeout)
    except OSError as e:
        if _started_moat(e, exe):
            raise _not_found(exe, moat, e) from None
        raise MoatError("moat probe: %s" % e) from None
    except subprocess.TimeoutExpired as e:
        raise MoatError("moat probe: %s" % e) from None
    if cp.returncode != 0:
        raise MoatError("moat probe exited %d: %s" % (cp.returncode, cp.stderr.decode("utf-8", "replace").strip()))
    try:
        data = json.loads(cp.stdout.decode("utf-8", "replace"))
    except ValueError as e:
        raise MoatError("moat probe printed no JSON: %s" % e) from None
    if not isinstance(data, dict) or data.get("schema") != PROBE_SCHEMA:
        raise MoatError("moat probe printed no %s document" % PROBE_SCHEMA)
    return data


class Result:
    """How a command run under moat ended."""

    def __init__(self, argv, returncode, report, stdout=None, stderr=None, report_error=None):
        self.argv = argv
        self.returncode = returncode  # moat's exit status (the command's, or 124-127)
        self.report = report          # a Report, or None when moat wrote none
        self.stdout = stdout          # bytes/str when captured, else None
        self.stderr = stderr
        self.report_error = report_error  # why the report could not be parsed, or None

    @property
    def status(self):
        return self.report.status if self.report else None

    @property
    def timed_out(self):
        return bool(self.report and self.report.run_info.get("timed_out"))

    @property
    def signal(self):
        return self.report.run_info.get("signal") if self.report else None

    def outcome(self, **kw):
        """classify(self, **kw)."""
        return classify(self, **kw)

    def __repr__(self):
        return "Result(returncode=%r, status=%r)" % (self.returncode, self.status)


class MoatPopen(subprocess.Popen):
    """A subprocess.Popen of moat running `command`, with the report on a pipe.

    Popen keyword arguments (stdin, stdout, stderr, cwd, env, ...) are
    subprocess's; `env` there is moat's own process environment (the
    command's environment is built by moat from the policy: use policy_env
    for --env).  Every other keyword is a policy argument of moat_argv().
    After the process has ended, .report is the parsed Report (or None) and
    .report_error says why not.  Raises MoatNotFound when the moat program
    cannot be executed.
    """

    def __init__(self, command, *, policy_env=None, moat=None, pass_fds=(), **kw):
        popen_keys = {"stdin", "stdout", "stderr", "cwd", "env", "bufsize", "text", "encoding", "errors",
                      "universal_newlines", "start_new_session", "process_group", "preexec_fn",
                      "restore_signals", "user", "group", "extra_groups", "umask"}
        popen_kw = {k: kw.pop(k) for k in list(kw) if k in popen_keys}
        if "report" in kw or "report_fd" in kw or kw.get("dry_run"):
            raise MoatError("MoatPopen delivers the report itself; use moat_argv() for report/report_fd/dry_run")
        rfd, wfd = os.pipe()
        try:
            rfd = _above_stdio(rfd)
            wfd = _above_stdio(wfd)
            argv = moat_argv(command, env=policy_env, report_fd=wfd, moat=moat, **kw)
            self._report_chunks = []
            self._reader = threading.Thread(target=self._read_report, args=(rfd,), daemon=True)
            try:
                super().__init__(argv, pass_fds=tuple(pass_fds) + (wfd,), close_fds=True, **popen_kw)
            except OSError as e:
                if _started_moat(e, argv[0]):
                    raise _not_found(argv[0], moat, e) from None
                raise
        except BaseException:
            os.close(rfd)
            os.close(wfd)
            raise
        # Only moat holds the write end now: EOF comes when moat exits.
        os.close(wfd)
        self.moat_argv = argv
        self._reader.start()
        self._report = None
        self._report_done = False
        self.report_error = None

    def _read_report(self, fd):
        # A thread, so that a report larger than the pipe buffer never
        # blocks moat at exit.
        with os.fdopen(fd, "rb") as f:
            while True:
                chunk = f.read(65536)
                if not chunk:
                    break
                self._report_chunks.append(chunk)

    @property
    def report(self):
        """The parsed report, once moat has exited (waits for it)."""
        if not self._report_done:
            self.wait()
            self._reader.join()
            try:
                self._report = parse_report(b"".join(self._report_chunks))
                if self._report is None:
                    self.report_error = "moat wrote no report"
            except ValueError as exc:
                self.report_error = "unreadable report: %s" % exc
            self._report_done = True
        return self._report

    def result(self, stdout=None, stderr=None):
        """A Result, once moat has exited."""
        rep = self.report
        return Result(self.moat_argv, self.returncode, rep, stdout, stderr, self.report_error)


def _no_bare_env(policy):
    """run() and spawn_mcp() take two environments, so a bare `env=` names
    neither: it met process_env's own `env=` in MoatPopen (a TypeError,
    "multiple values for keyword argument 'env'")."""
    if "env" in policy:
        raise MoatError("env= is ambiguous here: policy_env= gives the command variables (--env), "
                        "process_env= is moat's own environment")


def run(command, *, input=None, capture_output=False, stdin=None, stdout=None, stderr=None, text=False,
        cwd=None, process_env=None, policy_env=None, moat=None, wait_timeout=None, **policy):
    """Run `command` under moat and wait; return a Result.

    stdio passes through (the default: the command owns the caller's
    stdin/stdout/stderr) or is captured (capture_output=True, or
    stdout=subprocess.PIPE, ...), as with subprocess.run().  process_env is
    moat's own environment (None: this process's); policy_env the --env
    variables the command gets.  policy: the moat_argv() policy arguments
    (profile, read, write, deny, net, env_pass, mode, timeout, require, ...).
    wait_timeout bounds the wait on the Python side (moat's own `timeout=`
    is the one that kills the command and says so in the report).
    """
    _no_bare_env(policy)
    if capture_output:
        if stdout is not None or stderr is not None:
            raise MoatError("capture_output cannot be combined with stdout or stderr")
        stdout = stderr = subprocess.PIPE
    if input is not None:
        if stdin is not None:
            raise MoatError("input cannot be combined with stdin")
        stdin = subprocess.PIPE
    p = MoatPopen(command, policy_env=policy_env, moat=moat, stdin=stdin, stdout=stdout, stderr=stderr,
                  text=text, cwd=cwd, env=process_env, **policy)
    with p:
        try:
            out, err = p.communicate(input, timeout=wait_timeout)
        except subprocess.TimeoutExpired:
            p.kill()  # moat is the supervisor: its death takes the sandbox with it
            out, err = p.communicate()
            res = p.result(out, err)
            res.report_error = "killed after wait_timeout=%s s%s" % (
                wait_timeout, "; " + res.report_error if res.report_error else "")
            return res
    return p.result(out, err)


def spawn_mcp(command, *, stderr=None, cwd=None, process_env=None, policy_env=None, moat=None, **policy):
    """Start an MCP server under moat for stdio JSON-RPC; return a MoatPopen.

    Its stdin and stdout are pipes connected straight to the server: moat
    never writes to them, so JSON-RPC passes through byte for byte.  stderr
    passes through unless given.  Write requests to .stdin, read responses
    from .stdout; after the server exits (close .stdin, or .terminate()),
    .report holds the report and classify(proc.result()) the outcome.  The
    default profile is "mcp".
    """
    _no_bare_env(policy)
    policy.setdefault("profile", "mcp")
    return MoatPopen(command, policy_env=policy_env, moat=moat, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=stderr, cwd=cwd, env=process_env, bufsize=0, **policy)


class Outcome:
    """What a check run under moat means: kind is pass, fail, inconclusive or error."""

    def __init__(self, kind, message, status=None, exit_code=None, missing=(), hints=None, caveats=()):
        self.kind = kind
        self.message = message
        self.status = status          # the report's status, or None
        self.exit_code = exit_code
        self.missing = list(missing)  # properties not enforced
        self.hints = dict(hints or {})  # {property: how to get it}
        self.caveats = list(caveats)  # e.g. "sandbox degraded: ..."

    def __repr__(self):
        return "Outcome(%r, %r)" % (self.kind, self.message)

    def __str__(self):
        lines = ["%s: %s" % (self.kind, self.message)]
        lines += ["  caveat: %s" % c for c in self.caveats]
        lines += ["  %s: %s" % (p, h) for p, h in self.hints.items() if h]
        return "\n".join(lines)


def _exit_mismatch(runinfo, returncode):
    """Why a report is not this run's, or None.

    moat exits with exactly the status it writes as run.exit_code, so a
    report that says otherwise was not written by this moat for this run:
    the command forged it, or it is a file left from another run.  Nothing
    in it can be trusted (docs/integration.md).  A dry run has no `run`.
    """
    if not runinfo:
        return None
    said = runinfo.get("exit_code")
    if isinstance(said, int) and not isinstance(said, bool) and said == returncode:
        return None
    return ("the report is not this run's: it says moat exited %s, but moat exited %s "
            "(forged by the command, or left from another run)" % (
                "(no run.exit_code)" if said is None else said, returncode))


def classify(result, *, passed=None, degraded="caveat", off="caveat"):
    """Map a Result to an Outcome (pass, fail, inconclusive or error).

    * no report: moat could not even plan (bad usage or config, an internal
      failure) -> error, with moat's stderr when it was captured;
    * a report whose run.exit_code is not moat's exit status: not this
      run's report (forged, or stale) -> error;
    * status "unavailable": the required sandbox is missing on this host ->
      inconclusive, with each missing property's hint;
    * the command did not start (executed false: setup failure, not found
      (127), not executable (126)) -> error, with the report's failure;
    * killed by a signal or by moat's timeout -> error;
    * otherwise the exit status decides: `passed(exit_code)` (default: 0 is
      a pass) -> pass, else fail.
    degraded / off: "caveat" (the default) keeps pass/fail and adds a
    caveat naming what was missing; "inconclusive" turns the run into
    inconclusive, for a tool that must not trust a weaker sandbox.
    """
    passed = passed or (lambda code: code == 0)
    rep = result.report
    if rep is None:
        why = result.report_error or "moat wrote no report"
        detail = result.stderr.strip() if isinstance(result.stderr, str) else (
            result.stderr.decode("utf-8", "replace").strip() if result.stderr else "")
        return Outcome(ERROR, "%s (exit %s)%s" % (why, result.returncode, ": " + detail if detail else ""),
                       exit_code=result.returncode)
    status = rep.status
    runinfo = rep.run_info
    mismatch = _exit_mismatch(runinfo, result.returncode)
    if mismatch:
        return Outcome(ERROR, mismatch, exit_code=result.returncode)
    if status == "unavailable":
        miss = rep.missing
        return Outcome(INCONCLUSIVE, "the required sandbox is not available here: missing %s" % ", ".join(miss),
                       status, result.returncode, miss, rep.hints)
    if not runinfo:
        return Outcome(ERROR, "a dry-run report: nothing ran", status, result.returncode)
    if not runinfo.get("executed"):
        return Outcome(ERROR, "the command did not start: %s" % runinfo.get("failure", "unknown failure"),
                       status, result.returncode)
    if runinfo.get("timed_out"):
        return Outcome(ERROR, "timed out (moat --timeout): no verdict", status, result.returncode)
    if runinfo.get("signal"):
        return Outcome(ERROR, "the command was killed by signal %s" % runinfo["signal"], status,
                       result.returncode)
    caveats = []
    for st, how in (("degraded", degraded), ("off", off)):
        if status != st:
            continue
        what = ("sandbox degraded: %s not enforced" % ", ".join(rep.missing) if st == "degraded"
                else "sandbox off: the command ran unsandboxed")
        if how == "inconclusive":
            return Outcome(INCONCLUSIVE, what, status, result.returncode, rep.missing, rep.hints)
        caveats.append(what)
    code = runinfo.get("exit_status")
    kind = PASS if passed(code) else FAIL
    return Outcome(kind, "exit status %s" % code, status, result.returncode, rep.missing, rep.hints, caveats)
