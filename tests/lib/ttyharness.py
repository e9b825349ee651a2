#!/usr/bin/env python3
"""The command's terminal (issue 20, item 1), driven through a pty this
harness makes: it plays the user's terminal (the pty's master) and keeps a
descriptor of the pty's other end to look at the terminal's modes and
input queue from outside.

  ttyharness.py shell MOAT DIR     bash -i under moat: tty, TERM, job
                                   control, Ctrl-C, Ctrl-Z, stty size
                                   after a resize, the modes at the end
  ttyharness.py ends MOAT DIR      the caller's terminal raw while moat
                                   runs, and as it was after every end
  ttyharness.py sti MOAT DIR       TIOCSTI from inside does not reach the
                                   caller's terminal (and, as a control,
                                   does without moat)
  ttyharness.py plain MOAT DIR     no terminal: stdio untouched, no relay
  ttyharness.py bwrap MOAT DIR     what the bwrap backend gets

Each check prints one "ok"/"not ok" line (TAP without numbers: the caller
numbers them).  Every wait is bounded."""
import fcntl, json, os, re, select, shutil, signal, struct, subprocess, sys, tempfile, termios, time

mode, moat, wdir = sys.argv[1:4]
PY = "/usr/bin/python3"
ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8", "TERM": "xterm-256color"}


def say(cond, what):
    print(("ok - " if cond else "not ok - ") + what, flush=True)
    return cond


def skip(what, why):
    print("ok - %s # SKIP %s" % (what, why), flush=True)


def wait_status(pid, seconds):
    end = time.time() + seconds
    while time.time() < end:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p == pid:
            return st
        time.sleep(0.02)
    return None


def exit_code(st):
    if st is None:
        return None
    return os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st)


def children(pid):
    """pid's descendants, by /proc (the sandbox's pids are the host's here)."""
    kids, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open("/proc/%d/task/%d/children" % (p, p)) as f:
                got = [int(x) for x in f.read().split()]
        except OSError:
            got = []
        kids += got
        todo += got
    return kids


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return ""


class Term:
    """A pty playing the user's terminal; `argv` runs on it as the session
    leader with the pty as its controlling terminal (as a shell's job would
    be its foreground process group)."""

    def __init__(self, argv, rows=30, cols=100, env=None):
        self.master, self.slave = os.openpty()
        self.set_size(rows, cols)
        self.saved = termios.tcgetattr(self.slave)
        self.out = bytearray()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                os.setsid()
                fcntl.ioctl(self.slave, termios.TIOCSCTTY, 0)
                for fd in (0, 1, 2):
                    os.dup2(self.slave, fd)
                os.closerange(3, 256)
                os.chdir(wdir)
                os.execve(argv[0], argv, env or ENV)
            finally:
                os._exit(127)

    def set_size(self, rows, cols):
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def pump(self, seconds):
        end = time.time() + seconds
        while True:
            left = end - time.time()
            r, _, _ = select.select([self.master], [], [], max(0, min(left, 0.05)))
            if r:
                try:
                    got = os.read(self.master, 65536)
                except OSError:
                    return
                if not got:
                    return
                self.out.extend(got)
            elif left <= 0:
                return

    def expect(self, regex, seconds):
        """The first match of regex in what came since the last expect;
        what came before it in self.before."""
        end = time.time() + seconds
        while True:
            m = re.search(regex, bytes(self.out))
            if m:
                self.before = bytes(self.out[: m.start()])
                del self.out[: m.end()]
                return m
            if time.time() >= end:
                return None
            self.pump(0.05)

    def typed(self, text):
        os.write(self.master, text)

    def modes(self):
        return termios.tcgetattr(self.slave)

    def queued(self):
        """Bytes waiting in the terminal's input queue (what its reader,
        moat or the shell, has not read yet)."""
        return struct.unpack("i", fcntl.ioctl(self.slave, termios.FIONREAD, b"\0\0\0\0"))[0]

    def finish(self, seconds=10):
        st = wait_status(self.pid, seconds)
        if st is None:
            for p in children(self.pid) + [self.pid]:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            st = wait_status(self.pid, 5)
        self.pump(0.05)
        return st

    def close(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        os.close(self.master)
        os.close(self.slave)


def moat_argv(*args):
    return [moat, "run", "--write", wdir] + list(args)


# --- bash -i under moat --------------------------------------------------------


def shell():
    # PS1 runs code (a prompt's command substitution): moat passes it only
    # as an explicit --env.
    t = Term(moat_argv("--env", "PS1=PROMPT$ ", "--env", "HISTFILE=/dev/null", "--", "/bin/bash", "--norc",
                       "--noprofile", "-i"))
    try:
        up = t.expect(rb"PROMPT\$ ", 10)
        said = t.before if up else bytes(t.out)
        say(up is not None and b"job control" not in said and b"terminal process group" not in said,
            "bash -i starts under moat with job control (before its prompt: %r)" % said[-120:])
        t.typed(b"echo MARK-$((6*7))\n")
        say(t.expect(rb"MARK-42", 5) is not None, "  and runs what is typed")
        t.typed(b"tty; echo TERM=$TERM; stty size\n")
        m = t.expect(rb"(/dev/pts/\d+|not a tty)\r\nTERM=(\S*)\r\n(\d+ \d+)\r\n", 5)
        say(m is not None and m.group(1).startswith(b"/dev/pts/"),
            "tty names a /dev/pts terminal (%s)" % (m.group(1).decode() if m else "no answer"))
        say(m is not None and m.group(2) == b"xterm-256color", "TERM is the caller's (%s)" % (m.group(2).decode() if m else "?"))
        say(m is not None and m.group(3) == b"30 100", "stty size is the caller's terminal's at the start (%s)" % (m.group(3).decode() if m else "?"))
        t.expect(rb"PROMPT\$ ", 3)
        t.set_size(37, 111)  # the kernel sends SIGWINCH to moat, the foreground group here
        time.sleep(0.3)
        t.typed(b"stty size\n")
        m = t.expect(rb"(\d+ \d+)\r\n", 5)
        say(m is not None and m.group(1) == b"37 111", "stty size after a resize (%s)" % (m.group(1).decode() if m else "?"))
        t.expect(rb"PROMPT\$ ", 3)
        # Job control
        t.typed(b"sleep 30 &\n")
        t.expect(rb"PROMPT\$ ", 3)
        t.typed(b"jobs\n")
        say(t.expect(rb"\[1\]\+\s+Running\s+sleep 30 &", 5) is not None, "job control: sleep 30 & is a running job")
        t.expect(rb"PROMPT\$ ", 3)
        t.typed(b"fg\n")
        t.expect(rb"sleep 30\r\n", 3)
        time.sleep(0.3)
        t.typed(b"\x1a")  # Ctrl-Z
        say(t.expect(rb"\[1\]\+\s+Stopped\s+sleep 30", 5) is not None, "job control: fg, then Ctrl-Z stops it")
        t.expect(rb"PROMPT\$ ", 3)
        t.typed(b"jobs -l\n")
        m = t.expect(rb"\[1\]\+\s+(\d+) Stopped\s+sleep 30", 5)
        say(m is not None, "  jobs says so")
        t.expect(rb"PROMPT\$ ", 3)
        t.typed(b"fg\n")
        t.expect(rb"sleep 30\r\n", 3)
        time.sleep(0.3)
        t0 = time.time()
        t.typed(b"\x03")  # Ctrl-C
        back = t.expect(rb"PROMPT\$ ", 3)
        say(back is not None and time.time() - t0 < 1, "fg again, Ctrl-C ends it: the prompt is back in %.2f s" % (time.time() - t0))
        t.typed(b"jobs; echo JOBS-$((1+1))\n")
        m = t.expect(rb"JOBS-2\r\n", 5)
        said = t.before.split(b"JOBS-$((1+1))", 1)[-1]
        say(m is not None and b"sleep" not in said, "  and no job is left (%r)" % said)
        t.expect(rb"PROMPT\$ ", 3)
        # Ctrl-C interrupts a foreground sleep 6
        t.typed(b"sleep 6\n")
        t.expect(rb"sleep 6\r\n", 3)
        time.sleep(0.3)
        t0 = time.time()
        t.typed(b"\x03")
        back = t.expect(rb"PROMPT\$ ", 3)
        took = time.time() - t0
        t.typed(b"echo rc=$?\n")
        m = t.expect(rb"rc=(\d+)", 5)
        say(back is not None and took < 1 and m is not None and m.group(1) == b"130",
            "Ctrl-C interrupts a foreground sleep 6 within a second (%.2f s, rc=%s)" % (took, m.group(1).decode() if m else "?"))
        t.expect(rb"PROMPT\$ ", 3)
        # The end
        t.typed(b"exit 3\n")
        st = t.finish(10)
        say(exit_code(st) == 3, "exit 3 ends moat with 3 (%s)" % exit_code(st))
        say(t.modes() == t.saved, "the terminal's modes are the saved ones after moat's end")
    finally:
        t.close()


# --- the caller's terminal at every end ----------------------------------------


def one_end(what, argv, act, want_code, env=None):
    t = Term(argv, env=env)
    try:
        t.expect(rb"READY", 10)
        now = t.modes()
        raw = not (now[3] & (termios.ICANON | termios.ECHO | termios.ISIG))
        code = act(t)
        st = t.finish(10)
        say(raw and exit_code(st) == want_code and t.modes() == t.saved,
            "%s: raw while it ran (%s), moat exits %s (%s), the modes are the saved ones after (%s)" %
            (what, raw, want_code, exit_code(st), t.modes() == t.saved) + (code or ""))
    finally:
        t.close()


def kill_command(t):
    # READY comes from sh before its exec of sleep: on a loaded machine (the
    # sanitizer lane, side by side with others) the child may still be sh
    # when READY is read, so look for sleep a while (bounded: 5 s).
    deadline = time.time() + 5
    while time.time() < deadline:
        for p in children(t.pid):
            if comm(p) == "sleep":
                os.kill(p, signal.SIGKILL)
                return ""
        time.sleep(0.02)
    return " (no sleep found in 5 s)"


def ends():
    cmd = ["--", "/bin/sh", "-c", "echo READY; exec sleep 30"]
    one_end("the command killed (SIGKILL)", moat_argv(*cmd), kill_command, 137)
    one_end("--timeout", moat_argv("--timeout", "1", *cmd), lambda t: None, 124)
    one_end("SIGTERM to moat", moat_argv(*cmd), lambda t: os.kill(t.pid, signal.SIGTERM), 143)
    one_end("SIGALRM to moat (a signal it does not forward, fatal)", moat_argv(*cmd),
            lambda t: os.kill(t.pid, signal.SIGALRM), 128 + signal.SIGALRM)
    one_end("the command's own end", moat_argv("--", "/bin/sh", "-c", "echo READY; sleep 0.3; exit 7"),
            lambda t: None, 7)
    # A failure in the child, after the relay started: a script whose
    # interpreter is a granted file that is not a program (execve fails
    # inside; an interpreter the view does not hold is now refused before
    # the run, by moat's own check: sources/interp.c).
    interp = os.path.join(wdir, "not-a-program")
    with open(interp, "w") as f:
        f.write("plain text\n")
    os.chmod(interp, 0o644)
    exe = os.path.join(wdir, "hidden-interp")
    with open(exe, "w") as f:
        f.write("#!%s\necho never\n" % interp)
    os.chmod(exe, 0o755)
    t = Term(moat_argv("--", exe))
    try:
        st = t.finish(10)
        say(exit_code(st) in (125, 126, 127) and t.modes() == t.saved and b"never" not in t.out,
            "a command that cannot start inside: moat exits %s, the modes are the saved ones after (%s)" %
            (exit_code(st), t.modes() == t.saved))
    finally:
        t.close()
        os.unlink(exe)
        os.unlink(interp)


# --- TIOCSTI ---------------------------------------------------------------------

INJECT = r"""
import fcntl, os, sys, termios
word = sys.argv[1].encode() + b"\n"
out = sys.argv[2]
try:
    for c in word:
        fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))
    what = "injected"
except OSError as e:
    what = "refused " + (os.strerror(e.errno) if e.errno else str(e))
back = ""
if sys.argv[3] == "read":
    os.set_blocking(0, False)
    try:
        back = os.read(0, 100).decode(errors="replace").strip()
    except OSError:
        pass
with open(out + ".tmp", "w") as f:
    f.write("%s; read back: %s\n" % (what, back or "-"))
os.rename(out + ".tmp", out)
"""


def wait_file(path, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if os.path.exists(path):
            with open(path) as f:
                return f.read().strip()
        time.sleep(0.02)
    return None


def sti_case(label, argv, env, stop_moat):
    """argv prints READY, waits a little, then injects WORD+newline with
    TIOCSTI into its fd 0 and writes what happened to DIR/sti-LABEL.  moat
    is stopped meanwhile (when stop_moat), so that nothing reads the
    caller's terminal: what was injected into it stays in its queue."""
    result = os.path.join(wdir, "sti-" + label)
    for p in (result, result + ".tmp"):
        if os.path.exists(p):
            os.unlink(p)
    t = Term(argv(result), env=env)
    try:
        ready = t.expect(rb"READY", 10) is not None
        if stop_moat:
            os.kill(t.pid, signal.SIGSTOP)
        got = wait_file(result, 10)
        time.sleep(0.1)
        queued = t.queued()
        if stop_moat:
            os.kill(t.pid, signal.SIGCONT)
        st = t.finish(10)
        return ready, got, queued, exit_code(st)
    finally:
        t.close()


def sti():
    word = "STIWORD%d" % os.getpid()
    script = lambda res, read="read": ["/bin/sh", "-c", "echo READY; sleep 0.5; exec %s -c '%s' %s %s %s" %
                                       (PY, INJECT, word, res, read)]
    legacy = 1
    try:
        with open("/proc/sys/dev/tty/legacy_tiocsti") as f:
            legacy = int(f.read())
    except OSError:
        pass
    # Control: the same attempt without moat reaches the terminal.
    ready, got, queued, code = sti_case("control", script, ENV, False)
    if legacy == 0 and os.getuid() != 0:
        skip("control: without moat, TIOCSTI on the caller's terminal", "dev.tty.legacy_tiocsti=0: the kernel refuses it to this user anyway")
    else:
        say(ready and got is not None and got.startswith("injected") and word in got,
            "control: without moat, TIOCSTI reaches the caller's terminal (%s)" % got)
        # And the check below sees it: unsandboxed (--mode off: the
        # caller's terminal is the command's), moat stopped, the word
        # stays in the caller's terminal's queue.
        ready, got, queued, code = sti_case("off", lambda res: moat_argv("--mode", "off", "--", *script(res, "keep")),
                                            ENV, True)
        say(ready and got is not None and got.startswith("injected") and queued == len(word) + 1,
            "control: under --mode off, with moat stopped, the injected word waits in the caller's terminal's "
            "queue (%s; %d bytes queued)" % (got, queued))
    # Under moat: seccomp refuses it, and the caller's terminal's queue
    # stays empty while moat is stopped.
    ready, got, queued, code = sti_case("moat", lambda res: moat_argv("--", *script(res)), ENV, True)
    say(ready and got is not None and got.startswith("refused") and queued == 0 and code == 0,
        "under moat: TIOCSTI is refused (%s), nothing reached the caller's terminal (%d bytes queued), exit %s" % (got, queued, code))
    # Without the filter (MOAT_HOST_LIMIT=seccomp=0): it reaches only the
    # command's own pty, where the command reads it back.
    env = dict(ENV, MOAT_HOST_LIMIT="seccomp=0")
    # Not in the write grant: moat refuses a report there.
    report = os.path.join(tempfile.mkdtemp(prefix="moat-sti-"), "report.json")
    ready, got, queued, code = sti_case(
        "noseccomp", lambda res: [moat, "run", "--mode", "prefer", "--report", report, "--write", wdir, "--"] + script(res), env, True)
    if legacy == 0 and os.getuid() != 0:
        say(ready and got is not None and queued == 0, "without seccomp: nothing reached the caller's terminal (%s; %d bytes queued)" % (got, queued))
    else:
        say(ready and got is not None and got.startswith("injected") and word in got and queued == 0,
            "without seccomp: TIOCSTI reaches only the command's own pty, which reads it back (%s), "
            "nothing reached the caller's terminal (%d bytes queued)" % (got, queued))
    try:
        with open(report) as f:
            v = json.load(f)["properties"]["tty.inject"]
    except (OSError, ValueError, KeyError):
        v = {}
    shutil.rmtree(os.path.dirname(report), ignore_errors=True)
    say(v.get("status") == "enforced" and "pty" in v.get("mechanism", ""),
        "  and the report says tty.inject enforced by the pty (%s)" % v.get("mechanism"))


# --- no terminal: nothing changes -----------------------------------------------


# argv[1:] in a process group of its own: a background job of the terminal.
BACKGROUND = """
import os, sys
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    os.execv(sys.argv[1], sys.argv[1:])
# As a shell does, both sides set the group: whichever runs first.  The
# parent's fails with EACCES once the child has exec'd (moat had started,
# and the group was set): not an error.
try:
    os.setpgid(pid, pid)
except OSError:
    pass
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def plain():
    r0, w0 = os.pipe()
    r1, w1 = os.pipe()
    probe = "readlink /proc/self/fd/0 /proc/self/fd/1; tty; test -e /dev/pts; echo pts=$?; sleep 0.5"
    p = subprocess.Popen(moat_argv("--", "/bin/sh", "-c", probe), stdin=r0, stdout=w1, stderr=subprocess.DEVNULL,
                         env=ENV, cwd=wdir)
    os.close(r0)
    os.close(w1)
    time.sleep(0.25)
    fds = []
    try:
        for fd in os.listdir("/proc/%d/fd" % p.pid):
            try:
                fds.append(os.readlink("/proc/%d/fd/%s" % (p.pid, fd)))
            except OSError:
                pass
    except PermissionError:
        # moat is not dumpable: its fds are root's to see.  A pty moat
        # made would be this user's, in /dev/pts, while it runs.
        fds = None
        mine = [e for e in os.listdir("/dev/pts") if e != "ptmx" and os.stat("/dev/pts/" + e).st_uid == os.getuid()]
    out = b""
    end = time.time() + 10
    while time.time() < end:
        r, _, _ = select.select([r1], [], [], 0.1)
        if r:
            got = os.read(r1, 4096)
            if not got:
                break
            out += got
    p.wait(10)
    os.close(w0)
    os.close(r1)
    lines = out.decode().split("\n")
    say(len(lines) >= 4 and lines[0].startswith("pipe:") and lines[1].startswith("pipe:"),
        "pipes: the command's stdin and stdout are the caller's pipes (%s, %s)" % tuple((lines + ["", ""])[:2]))
    say(len(lines) >= 4 and lines[2] == "not a tty" and lines[3] == "pts=1",
        "  no terminal inside (%s), no /dev/pts (%s)" % tuple((lines + ["", "", "", ""])[2:4]))
    if fds is None:
        say(not mine, "  and no pty of this user's exists while moat runs: no relay (%s)" % (mine or "none"))
    else:
        ptys = [f for f in fds if "ptmx" in f or "/dev/pts" in f]
        say(len(fds) > 3 and not ptys, "  and moat holds no pty: no relay (%d fds, %s)" % (len(fds), ptys or "no pty"))
    # The pipes are the very ones: compare the inodes.
    a, b = os.pipe()
    p = subprocess.Popen(moat_argv("--", "/bin/readlink", "/proc/self/fd/0"), stdin=a, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, env=ENV, cwd=wdir)
    got = p.communicate(timeout=10)[0].decode().strip()
    say(got == "pipe:[%d]" % os.fstat(a).st_ino, "  stdin inside is the caller's pipe itself (%s)" % got)
    os.close(a)
    os.close(b)
    # --no-tty at a terminal: fd 0 inside is the caller's terminal.
    t = Term(moat_argv("--no-tty", "--", "/bin/sh", "-c", "readlink /proc/self/fd/0; echo READY"))
    try:
        m = t.expect(rb"(\S+)\r?\nREADY", 10)
        st = t.finish(10)
        name = os.ttyname(t.slave)
        say(m is not None and m.group(1).decode() == name and exit_code(st) == 0,
            "--no-tty at a terminal: stdin inside is the caller's terminal (%s, the caller's %s)" % (m.group(1).decode() if m else "?", name))
    finally:
        t.close()
    # At a terminal, but stdout a pipe (`moat run -- cmd | less`: the pager
    # reads the keys) or started in the background (`&`): no pty.
    for label, argv in (
        ("stdout a pipe", ["/bin/sh", "-c", moat + " run --write " + wdir + " -- /bin/sh -c 'readlink /proc/self/fd/0"
                           " /proc/self/fd/1' | tr -d x; echo READY"]),
        ("started in the background", [PY, "-c", BACKGROUND, moat, "run", "--write", wdir, "--", "/bin/sh", "-c",
                                       "readlink /proc/self/fd/0 /proc/self/fd/1; echo READY"])):
        t = Term(argv)
        try:
            m = t.expect(rb"(\S+)\r\n(\S+)\r\nREADY", 10)
            st = t.finish(10)
            name = os.ttyname(t.slave)
            got = (m.group(1).decode(), m.group(2).decode()) if m else ("?", "?")
            want1 = name if label != "stdout a pipe" else "pipe:"
            say(m is not None and got[0] == name and got[1].startswith(want1) and exit_code(st) == 0,
                "at a terminal, %s: no pty, stdin inside is the caller's terminal (%s, %s, exit %s)"
                % (label, got[0], got[1], exit_code(st)))
        finally:
            t.close()
    # --tty with pipes: a terminal all the same, and the end of the input
    # reaches the command as the end of file.
    p = subprocess.Popen(moat_argv("--tty", "--", "/bin/sh", "-c", "tty; cat; echo CAT-DONE"), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV, cwd=wdir)
    try:
        out = p.communicate(b"hello from a pipe", timeout=10)[0].decode(errors="replace")
    except subprocess.TimeoutExpired:
        p.kill()
        out = p.communicate()[0].decode(errors="replace")
    # (The pty echoes what it is given, as a terminal does.)
    say(re.search(r"/dev/pts/\d+\r\n", out) is not None and "hello from a pipe" in out and "CAT-DONE" in out and p.returncode == 0,
        "--tty with pipes: a terminal inside, the piped input read to its end (%r, exit %s)" % (out[:80], p.returncode))


# --- bwrap ---------------------------------------------------------------------------


def bwrap():
    t = Term(moat_argv("--backend", "bwrap", "--", "/bin/sh", "-c",
                       "test -t 0 && test -t 1 && echo ISATTY; echo TERM=$TERM; stty size; echo READY; sleep 30"))
    try:
        ok = t.expect(rb"ISATTY\r\nTERM=xterm-256color\r\n30 100\r\nREADY", 10) is not None
        say(ok, "bwrap: the pty is the command's stdin and stdout, TERM passes, stty size is the caller's")
        t0 = time.time()
        t.typed(b"\x03")
        st = t.finish(5)
        say(exit_code(st) == 130 and time.time() - t0 < 2, "bwrap: Ctrl-C ends the command (moat sends SIGINT): exit %s" % exit_code(st))
        say(t.modes() == t.saved, "bwrap: the terminal's modes are the saved ones after")
    finally:
        t.close()


{"shell": shell, "ends": ends, "sti": sti, "plain": plain, "bwrap": bwrap}[mode]()
