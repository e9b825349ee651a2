#!/usr/bin/env python3
"""Job control through moat (issue 24, item 7), two ways.

  jobctl.py signals MOAT BACKEND DIR [LABEL [left]]   SIGTSTP/SIGCONT sent
      to moat as a shell would (moat leads its own process group in this
      session, so the group is not orphaned and a stop acts).  The command
      also starts a process in a session of its own (setsid), which must
      stop with the rest of the tree; with "left" (a control: no pid
      namespace and no cgroup, proc.tree missing) it runs on
      while moat is stopped.  MOAT_HOST_LIMIT passes through to moat.
  jobctl.py terminal MOAT BACKEND DIR  a real interactive bash in a pty:
      Ctrl-Z, fg, Ctrl-C typed at it
  jobctl.py tostop MOAT BACKEND DIR [LABEL [off]]  the same bash, `stty
      tostop`, moat --tty started with `&`: the command's output due on the
      terminal from the background stops the job, the tree with moat (moat
      alone was stopped by the kernel's SIGTTOU, the tree ran on
      unsupervised); fg continues both.  With "off" (the control, `stty
      -tostop`) the job runs on in the background and its output is shown;
      with "ignored" (`trap '' TTOU`: the caller ignores SIGTTOU, so the
      kernel lets a background write through) as well.
  jobctl.py offread MOAT BACKEND DIR   the same bash, `moat run --mode off --
      cat &`: without a sandbox the command stays in moat's process group
      at the terminal, and its background read stops the job, moat with it
      (the shell says Stopped; moat held SIGTTIN and ran on while cat sat
      stopped: the shell said Running); fg then gives cat the terminal.
      Control: `cat </dev/null &` reads no terminal and is Done.

The command writes a counter to DIR/tick every 50 ms.  Each check prints
one "ok"/"not ok" line (TAP without numbers: the caller numbers them).
Every wait is bounded."""
import os, pty, re, select, signal, sys, time

mode, moat, backend, wdir = sys.argv[1:5]
label = sys.argv[5] if len(sys.argv) > 5 else backend
left_runs = len(sys.argv) > 6 and sys.argv[6] == "left"
# One counter per run: a run that failed to end must not write into the next.
tick = os.path.join(wdir, "tick-%s-%s" % (label.replace(" ", "_").replace(",", "_"), mode))
# The daemon's counter; it ends at its stop file (a control's runs on).
dtick, dstop = tick + ".d", tick + ".stop"


def counter(path, stop=None):
    cond = "[ $i -lt 400 ]" + (" && [ ! -e %s ]" % stop if stop else "")
    return ("i=0; while %s; do echo $i >%s.new && mv -f %s.new %s; "
            "i=$((i+1)); sleep 0.05; done" % (cond, path, path, path))


loop = counter(tick)
tostop_off = mode == "tostop" and len(sys.argv) > 6 and sys.argv[6] == "off"
ttou_ignored = mode == "tostop" and len(sys.argv) > 6 and sys.argv[6] == "ignored"
if mode == "tostop":
    # Each tick also on stdout: output for the terminal, relayed by moat.
    loop = loop.replace("mv -f %s.new %s; " % (tick, tick), "mv -f %s.new %s; echo tick$i; " % (tick, tick))
if mode == "signals":
    loop = "setsid /bin/sh -c '%s' </dev/null >/dev/null 2>&1 & %s" % (counter(dtick, dstop), loop)
for stale in (tick, tick + ".new", dtick, dtick + ".new", dstop):
    try:
        os.unlink(stale)
    except FileNotFoundError:
        pass
argv = [moat, "run", "--backend", backend, "--mode", "prefer", "--write", wdir, "--", "/bin/sh", "-c", loop]
if mode == "tostop":
    argv[2:2] = ["--tty"]


def say(cond, what):
    print(("ok - " if cond else "not ok - ") + what, flush=True)


def read_tick(path=tick):
    try:
        with open(path) as f:
            return int(f.read().strip() or -1)
    except (OSError, ValueError):
        return -1


def advancing(seconds, path=tick):
    a = read_tick(path)
    time.sleep(seconds)
    return read_tick(path) > a


def wait_for(cond, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def wait_status(pid, seconds, flags=0):
    end = time.time() + seconds
    while time.time() < end:
        p, st = os.waitpid(pid, os.WNOHANG | flags)
        if p == pid:
            return st
        time.sleep(0.02)
    return None


def by_signals():
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        os.execv(moat, argv)
    try:
        say(wait_for(lambda: read_tick() >= 0 and read_tick(dtick) >= 0, 10), "%s: the command runs" % label)
        say(advancing(0.4), "%s: control: the counter advances while it runs" % label)
        os.kill(pid, signal.SIGTSTP)
        st = wait_status(pid, 3, os.WUNTRACED)
        say(st is not None and os.WIFSTOPPED(st) and os.WSTOPSIG(st) == signal.SIGTSTP,
            "%s: SIGTSTP: moat stops as a job does (stopped by SIGTSTP: %r)" % (label, st))
        time.sleep(0.2)  # what was in flight lands
        say(not advancing(0.6), "%s: SIGTSTP: the command is stopped too" % label)
        # A process of the tree in a session of its own: without a pid
        # namespace it is outside the command's process group, and ran on
        # past --timeout and --cpu while moat was stopped.
        if left_runs:
            say(advancing(0.6, dtick), "%s: control: its setsid process runs on while moat is stopped" % label)
        else:
            say(not advancing(0.6, dtick), "%s: SIGTSTP: its setsid process is stopped too" % label)
        os.kill(pid, signal.SIGCONT)
        say(wait_for(lambda: read_tick() >= 0 and advancing(0.3), 3),
            "%s: SIGCONT: the command continues" % label)
        say(wait_for(lambda: advancing(0.3, dtick), 3), "%s: SIGCONT: so does its setsid process" % label)
        os.kill(pid, signal.SIGTERM)
        st = wait_status(pid, 5)
        say(st is not None and os.WIFEXITED(st) and os.WEXITSTATUS(st) == 143,
            "%s: then SIGTERM ends it: exit 143 (%r)" % (label, st))
    finally:
        open(dstop, "w").close()
        try:
            os.killpg(pid, signal.SIGKILL)
            os.kill(pid, signal.SIGCONT)
            os.waitpid(pid, 0)
        except OSError:
            pass


class Shell:
    """An interactive bash in a pty of the test's: what it writes collects
    in `out` (and `log`); `expect` waits for a needle, bounded."""

    def __init__(self):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.environ.update(PS1="PROMPT$ ", TERM="dumb", HISTFILE="/dev/null")
            os.execv("/bin/bash", ["bash", "--norc", "--noprofile", "-i"])
        self.out = bytearray()
        self.log = bytearray()

    def expect(self, needle, seconds):
        end = time.time() + seconds
        while time.time() < end:
            if needle in self.out:
                return True
            r, _, _ = select.select([self.fd], [], [], 0.1)
            if r:
                try:
                    got = os.read(self.fd, 65536)
                    self.out.extend(got)
                    self.log.extend(got)
                except OSError:
                    break
        return needle in self.out

    def typed(self, text):
        os.write(self.fd, text)

    def ends_with(self, key, rc, what):
        """`key` typed ends the job: its status, as the shell has it, is rc."""
        self.typed(key)
        self.expect(b"PROMPT$ ", 5)
        del self.out[:]
        self.typed(b"echo rc=$?\n")
        say(self.expect(b"rc=%d" % rc, 5), what)
        self.typed(b"exit\n")

    def end(self):
        """bash and every job of its session (moat; its sandbox ends with it)."""
        for d in os.listdir("/proc"):
            try:
                with open("/proc/%s/stat" % d) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if d.isdigit() and int(fields[3]) == self.pid and int(d) != self.pid:
                    os.kill(int(d), signal.SIGKILL)
            except (OSError, ValueError, IndexError):
                pass
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except OSError:
            pass


def by_terminal():
    sh = Shell()
    out, expect, typed = sh.out, sh.expect, sh.typed

    try:
        expect(b"PROMPT$ ", 5)
        del out[:]
        typed(" ".join("'%s'" % a.replace("'", "'\\''") for a in argv).encode() + b"\n")
        say(wait_for(lambda: read_tick() >= 0, 10), "%s: terminal: the command runs" % backend)
        typed(b"\x1a")  # Ctrl-Z
        say(expect(b"Stopped", 3), "%s: terminal: Ctrl-Z: the shell reports the job stopped" % backend)
        time.sleep(0.2)
        say(not advancing(0.6), "%s: terminal: Ctrl-Z: the command is stopped" % backend)
        del out[:]
        typed(b"fg\n")
        say(wait_for(lambda: advancing(0.3), 3), "%s: terminal: fg: the command continues" % backend)
        expect(b"never", 0.2)
        del out[:]
        typed(b"\x03")  # Ctrl-C
        # Typed only at the prompt: until then the command's stdin is the
        # terminal, and runc (oci) copies what is typed into the container.
        expect(b"PROMPT$ ", 5)
        typed(b"echo rc=$?\n")
        say(expect(b"rc=130", 5), "%s: terminal: Ctrl-C ends it: exit 130" % backend)
        time.sleep(0.1)
        say(not advancing(0.4), "%s: terminal: and nothing of it runs on" % backend)
        typed(b"exit\n")
        if os.environ.get("JOBCTL_DEBUG"):
            expect(b"never", 1)
            sys.stderr.write(sh.log.decode(errors="replace"))
    finally:
        sh.end()


def by_tostop():
    sh = Shell()
    out, expect = sh.out, sh.expect

    def drain(seconds):
        expect(b"\0never\0", seconds)

    try:
        expect(b"PROMPT$ ", 5)
        sh.typed(b"stty %s\n" % (b"-tostop" if tostop_off else b"tostop"))
        expect(b"PROMPT$ ", 5)
        if ttou_ignored:
            sh.typed(b"trap '' TTOU\n")
            expect(b"PROMPT$ ", 5)
        del out[:]
        cmd = " ".join("'%s'" % a.replace("'", "'\\''") for a in argv)
        sh.typed(cmd.encode() + b" &\n")
        say(wait_for(lambda: read_tick() >= 0, 10), "%s: tostop: the command runs" % label)
        drain(0.8)
        del out[:]
        sh.typed(b"jobs\n")
        expect(b"PROMPT$ ", 3)
        if tostop_off or ttou_ignored:
            how = "control, -tostop" if tostop_off else "SIGTTOU ignored by the caller"
            say(b"Running" in out, "%s: %s: the job runs on in the background (%r)"
                % (label, how, bytes(out[-120:])))
            say(advancing(0.6), "%s: %s: the command runs on" % (label, how))
            drain(0.3)
            say(re.search(rb"tick[0-9]", out), "%s: %s: its output is shown" % (label, how))
        else:
            say(b"Stopped" in out, "%s: tostop: output due from the background stops the job (%r)"
                % (label, bytes(out[-120:])))
            say(not advancing(0.6), "%s: tostop: the command is stopped with moat, not left running "
                "unsupervised" % label)
            say(not re.search(rb"tick[0-9]", out), "%s: tostop: nothing of its output is written from the background" % label)
        del out[:]
        sh.typed(b"fg\n")
        say(wait_for(lambda: advancing(0.3), 3), "%s: tostop: fg: the command runs in the foreground" % label)
        say(expect(b"tick", 3) and re.search(rb"tick[0-9]", out), "%s: tostop: fg: its output is shown" % label)
        sh.ends_with(b"\x03", 130, "%s: tostop: Ctrl-C ends it: exit 130" % label)
    finally:
        sh.end()


def by_offread():
    sh = Shell()
    out, expect = sh.out, sh.expect
    run = "'%s' run --mode off -- /bin/cat" % moat.replace("'", "'\\''")

    def jobs_after(line):
        """`line &` typed, then `jobs` a second later: what the shell said."""
        sh.typed(line + b" &\n")
        expect(b"PROMPT$ ", 5)
        expect(b"\0never\0", 1.0)
        del out[:]
        sh.typed(b"jobs\n")
        expect(b"PROMPT$ ", 3)

    try:
        expect(b"PROMPT$ ", 5)
        sh.typed(b"stty -tostop\n")
        expect(b"PROMPT$ ", 5)
        jobs_after(run.encode() + b" </dev/null")
        sh.typed(b"\n")
        expect(b"Done", 2)
        say(b"Stopped" not in out and b"Done" in out,
            "%s: control: --mode off cat </dev/null in the background reads no terminal, Done (%r)"
            % (label, bytes(out[-160:])))
        jobs_after(run.encode())
        say(b"Stopped" in out, "%s: --mode off cat in the background: its read stops the job, moat with it (%r)"
            % (label, bytes(out[-160:])))
        del out[:]
        sh.typed(b"fg\n")
        expect(b"\0never\0", 0.5)
        sh.typed(b"hello-cat\n")
        say(expect(b"hello-cat\r\nhello-cat", 3), "%s: fg: cat reads the terminal" % label)
        sh.ends_with(b"\x04", 0, "%s: end of input (Ctrl-D): cat exits 0" % label)
    finally:
        sh.end()


{"signals": by_signals, "terminal": by_terminal, "tostop": by_tostop, "offread": by_offread}[mode]()
