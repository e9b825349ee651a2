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

The command writes a counter to DIR/tick every 50 ms.  Each check prints
one "ok"/"not ok" line (TAP without numbers: the caller numbers them).
Every wait is bounded."""
import os, pty, select, signal, sys, time

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
if mode == "signals":
    loop = "setsid /bin/sh -c '%s' </dev/null >/dev/null 2>&1 & %s" % (counter(dtick, dstop), loop)
for stale in (tick, tick + ".new", dtick, dtick + ".new", dstop):
    try:
        os.unlink(stale)
    except FileNotFoundError:
        pass
argv = [moat, "run", "--backend", backend, "--mode", "prefer", "--write", wdir, "--", "/bin/sh", "-c", loop]


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


def by_terminal():
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(PS1="PROMPT$ ", TERM="dumb", HISTFILE="/dev/null")
        os.execv("/bin/bash", ["bash", "--norc", "--noprofile", "-i"])
    out = bytearray()
    log = bytearray()

    def expect(needle, seconds):
        end = time.time() + seconds
        while time.time() < end:
            if needle in out:
                return True
            r, _, _ = select.select([fd], [], [], 0.1)
            if r:
                try:
                    got = os.read(fd, 65536)
                    out.extend(got)
                    log.extend(got)
                except OSError:
                    break
        return needle in out

    def typed(text):
        os.write(fd, text)

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
            sys.stderr.write(log.decode(errors="replace"))
    finally:
        # bash and every job of its session (moat; its sandbox ends with it).
        for d in os.listdir("/proc"):
            try:
                with open("/proc/%s/stat" % d) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if d.isdigit() and int(fields[3]) == pid and int(d) != pid:
                    os.kill(int(d), signal.SIGKILL)
            except (OSError, ValueError, IndexError):
                pass
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass


(by_signals if mode == "signals" else by_terminal)()
