#!/usr/bin/env bash
# The command's terminal (issue 20, item 1): when moat's stdin is a terminal
# (or --tty), the command gets a pty of its own as its controlling terminal,
# which moat relays; without one nothing changes.  Driven through a pty the
# test makes (tests/lib/ttyharness.py): bash -i with job control, Ctrl-C and
# Ctrl-Z, tty, TERM, stty size after a resize; the caller's terminal raw while
# moat runs and as it was after every end (the command killed, --timeout,
# signals to moat, a failure in the child); TIOCSTI from inside never reaching
# the caller's terminal, with its controls; pipes untouched, no relay.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "1..0 # SKIP /usr/bin/python3 is needed"; exit 0; }
cd "$SCRATCH" || exit 1
W=$SCRATCH/w
mkdir -p "$W" && chmod 0777 "$W"
H=$ROOT/tests/lib/ttyharness.py
diag "uid $(id -u)"

# --- bash -i under moat, at a terminal -----------------------------------------
tap_relay 14 "bash -i under moat" < <(timeout 120 "$PY" "$H" shell "$MOAT" "$W" 2>&1)

# --- the caller's terminal: raw while moat runs, as it was after every end ------
tap_relay 6 "the terminal's modes at every end" < <(timeout 120 "$PY" "$H" ends "$MOAT" "$W" 2>&1)

# --- TIOCSTI from inside does not reach the caller's terminal --------------------
tap_relay 5 "TIOCSTI" < <(timeout 120 "$PY" "$H" sti "$MOAT" "$W" 2>&1)

# --- TIOCSETD on a terminal passed through (--no-tty): refused ------------------------
# The command got the caller's terminal itself and set its line discipline
# to N_NULL (27), which stayed after the run: the caller's terminal threw
# away all input and output.  (script(1) plays the caller's terminal.)
cat >"$SCRATCH/ldisc.py" <<'EOF'
import fcntl, struct, sys
try:
    fcntl.ioctl(0, 0x5423, struct.pack("i", 27))
    r = "set"
except OSError as e:
    r = e.strerror
open(sys.argv[1], "w").write(r + "\n")
EOF
ldisc() { # ldisc MODE: what the command's TIOCSETD did
	rm -f "$W/ld.out"
	timeout 30 script -qec "'$MOAT' run --mode $1 --no-tty --write '$W' -- $PY '$SCRATCH/ldisc.py' '$W/ld.out'" /dev/null \
		</dev/null >/dev/null 2>&1
	cat "$W/ld.out" 2>/dev/null
}
if command -v script >/dev/null; then
	is "$(ldisc prefer)" "Operation not permitted" "--no-tty: the command cannot set the line discipline of the caller's terminal (TIOCSETD)"
	is "$(ldisc off)" "set" "  control: unsandboxed it can"
else
	skip "TIOCSETD: script(1) is needed"
	skip "  (control)"
fi

# --- typed before moat's terminal is raw: lines and Ctrl-D -------------------------
# What the caller's terminal held in canonical mode when moat made it raw
# (typed, or written by script(1), before moat started) came through raw:
# a Ctrl-D's end of file as a NUL byte.  The command read "\0" and no end
# of file: `script -qc "moat run -- cat" </dev/null` hung.  Here the bytes
# are in the terminal before moat starts; `od -c` must end, reading what
# the same keys give a command at a terminal unsandboxed (the control).
cat >"$SCRATCH/early.py" <<'EOF'
import os, re, select, sys, time, fcntl, termios
typed = sys.argv[1].encode().decode("unicode_escape").encode("latin-1")
master, slave = os.openpty()
os.write(master, typed)  # canonical mode: held by the line discipline
pid = os.fork()
if pid == 0:
    os.close(master)
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    os.execvp(sys.argv[2], sys.argv[2:])
os.close(slave)
out, end, status = b"", time.time() + 10, None
while time.time() < end:
    r, _, _ = select.select([master], [], [], 0.2)
    if r:
        try:
            d = os.read(master, 4096)
        except OSError:
            d = b""
        out += d
    p, st = os.waitpid(pid, os.WNOHANG)
    if p:
        status = os.waitstatus_to_exitcode(st)
        break
if status is None:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
# od's lines (the terminal's echo of what was typed may come first)
lines = re.findall(r"0000[0-7]{3}[^\n]*", out.decode("latin-1").replace("\r", ""))
print("exit %s: %s" % ("hung" if status is None else status, " | ".join(" ".join(l.split()) for l in lines)))
EOF
early() { # early TYPED [moat]: what od -c read, and how it ended
	if [ "${2:-}" = moat ]; then
		timeout 30 "$PY" "$SCRATCH/early.py" "$1" "$MOAT" run -- od -c 2>&1
	else
		timeout 30 "$PY" "$SCRATCH/early.py" "$1" od -c 2>&1
	fi
}
for typed in '\x04' 'abc\x04\x04' 'hello\nworld\n\x04'; do
	want=$(early "$typed")
	like "$want" "^exit 0: 0000000" "control: od -c at a terminal, $typed typed before it starts, ends ($want)"
	is "$(early "$typed" moat)" "$want" "  under moat too, reading the same"
done

# --- no terminal: the caller's stdio as it is, no relay ----------------------------
tap_relay 6 "no terminal" < <(timeout 120 "$PY" "$H" plain "$MOAT" "$W" 2>&1)

# --- bwrap: the pty as the command's stdio ------------------------------------------
if "$MOAT" run --backend bwrap --dry-run -- /bin/true 2>/dev/null | grep -q '"status": "enforced"'; then
	tap_relay 3 "bwrap" < <(timeout 60 "$PY" "$H" bwrap "$MOAT" "$W" 2>&1)
else
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N # SKIP bwrap cannot enforce here"
fi

# --- options, the environment, the report --------------------------------------------
out=$("$MOAT" run --tty --no-tty -- /bin/true 2>&1); rc=$?
is "$rc" 125 "--tty with --no-tty is refused (125)"
like "$out" "--tty and --no-tty contradict each other" "  saying so"
"$MOAT" run --tty --report-fd 3 -- /bin/true 3>"$SCRATCH/r.json" </dev/null
like "$(json_get "$SCRATCH/r.json" '["environment"]["names"]')" '"TERM"' \
	"TERM passes by default: the report's environment names list it"
like "$(json_eval "$SCRATCH/r.json" '[p["path"] for p in d["filesystem"]["paths"] if p["path"] in ("/dev/tty",) or p["path"].startswith("/dev/pts")]')" \
	'^\["/dev/tty", "/dev/pts/[0-9]+"\]$' "--tty: the report lists the grants of /dev/tty and the command's pty"
like "$(json_get "$SCRATCH/r.json" '["properties"]["tty.inject"]["mechanism"]')" 'pty' "  tty.inject: by the pty"
dry=$("$MOAT" run --tty --dry-run -- /bin/true </dev/null | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["policy_digest"])')
is "$(json_get "$SCRATCH/r.json" '["policy_digest"]')" "$dry" "  the policy's digest is the dry run's (which makes no pty)"
"$MOAT" run --report-fd 3 -- /bin/true 3>"$SCRATCH/r2.json" </dev/null
is "$(json_eval "$SCRATCH/r2.json" '[p["path"] for p in d["filesystem"]["paths"] if p["path"] in ("/dev/tty",) or p["path"].startswith("/dev/pts")]')" \
	"[]" "without a terminal: no grant of /dev/tty or of a pty"
unlike "$(json_get "$SCRATCH/r2.json" '["properties"]["tty.inject"]["mechanism"]')" 'pty' "  tty.inject: no pty"
done_testing
