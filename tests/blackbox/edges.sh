#!/usr/bin/env bash
# The supervisor at the edges (issue 24): when moat's surroundings misbehave
# -- killed at the wrong moment, closed or broken standard streams, ignored
# signals, a tool that fails in its own set-up, a full disk, a FIFO where a
# file was expected -- moat's answer (exit status, report, what is left
# running) is still right; out of descriptors, a path over PATH_MAX and a
# deleted working directory, the message names the real cause.  Each check
# has its control where one exists.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
PY=/usr/bin/python3
UID_NOW=$(id -u)
cd "$SCRATCH" || exit 1
W=$SCRATCH/w
mkdir -p "$W" && chmod 0777 "$W"
runf() { json_get "$1" "[\"run\"][\"$2\"]" 2>/dev/null; }
have_bwrap() { "$MOAT" run --backend bwrap --dry-run -- /bin/true 2>/dev/null | grep -q '"status": "enforced"'; }
BACKENDS="native"
have_bwrap && BACKENDS="$BACKENDS bwrap"
diag "backends: $BACKENDS (uid $UID_NOW)"

# --- 1. killed between clone and PR_SET_PDEATHSIG: the command never runs -------
# strace holds the child's first prctl (PR_SET_PDEATHSIG) for 1 s; moat is
# SIGKILLed meanwhile.  The child must see the lifeline hung up (it closed
# its inherited write end first) and not run the command.
for b in $BACKENDS; do
	rm -f "$W/ran"
	strace -f -qq -o /dev/null -e trace=prctl -e inject=prctl:delay_enter=1000000:when=1 \
		"$MOAT" run --backend "$b" --mode prefer --write "$W" -- /bin/sh -c "echo x >$W/ran" 2>/dev/null &
	sp=$!
	# moat itself may make a prctl first (PR_SET_CHILD_SUBREAPER for an
	# external backend), which the same injection delays: kill moat only
	# once its child exists, and is held in its own first prctl.
	mp= cp=
	for _ in $(seq 150); do
		mp=$(pgrep -P "$sp" | head -1)
		[ -n "$mp" ] && cp=$(pgrep -P "$mp" | head -1)
		[ -n "$cp" ] && break
		sleep 0.02
	done
	sleep 0.2
	[ -n "$mp" ] && kill -9 "$mp"
	wait "$sp" 2>/dev/null
	sleep 1.2
	[ -n "$cp" ] && [ ! -e "$W/ran" ]
	ok $? "$b: moat SIGKILLed before the child's PR_SET_PDEATHSIG: the command does not run (child ${cp:-not seen})"
done
# control: the same delay without the kill runs the command
rm -f "$W/ran"
strace -f -qq -o /dev/null -e trace=prctl -e inject=prctl:delay_enter=300000:when=1 \
	"$MOAT" run --mode prefer --write "$W" -- /bin/sh -c "echo x >$W/ran" 2>/dev/null
[ -e "$W/ran" ]
ok $? "control: with the delay and no kill, the command runs"

# --- 2. SIGKILL of moat during start-up: nothing of the sandbox outlives moat --------
# bwrap's parent half held right after its clone (strace delays its capset)
# while moat is SIGKILLed: bwrap 0.8.0's child waits on an eventfd for that
# half, so a bwrap killed with moat left it blocked forever, holding the
# caller's stdout.  moat no longer ties bwrap to itself: moat __init, the
# namespace's pid 1, ends it on the lifeline.  The control stops moat
# instead of killing it: the sandbox then runs on (the check sees a
# survivor), and ends once moat is killed.
if have_bwrap; then
	tap_relay 3 "bwrap held, moat killed" < <("$PY" "$ROOT/tests/lib/killrace.py" held "$MOAT" bwrap "$W" 2>&1)
	tap_relay 4 "bwrap held, moat stopped" < <("$PY" "$ROOT/tests/lib/killrace.py" stopped "$MOAT" bwrap "$W" 2>&1)
else
	skip "bwrap cannot run here"
fi
# The race itself: moat SIGKILLed at random 0-20 ms after it started
# (before this fix about 3% of bwrap runs left the sandbox's first process
# behind).  The helper is the subreaper of the runs: whatever outlives its
# moat comes back to it and is counted.
KILLS=${MOAT_TEST_KILLS:-300}
for b in $BACKENDS; do
	tap_relay 1 "$b: random kills" < <("$PY" "$ROOT/tests/lib/killrace.py" random "$MOAT" "$b" "$W" "$KILLS" 2>&1)
done

# --- 7. job control: Ctrl-Z stops the command with moat, fg continues both ----------
# The command runs in a session of its own (no controlling terminal: no
# TIOCSTI), so a terminal's SIGTSTP reaches only moat.  moat stops the tree
# and then itself, and continues the tree when it is continued.  Both as
# signals a shell sends, and typed at a real interactive bash in a pty.
JC_BACKENDS=$BACKENDS
"$MOAT" run --backend oci --dry-run -- /bin/true 2>/dev/null | grep -q '"status": "enforced"' &&
	JC_BACKENDS="$JC_BACKENDS oci"
for b in $JC_BACKENDS; do
	tap_relay 8 "$b: job control by signals" < <("$PY" "$ROOT/tests/lib/jobctl.py" signals "$MOAT" "$b" "$W" 2>&1)
	tap_relay 6 "$b: job control at a terminal" < <("$PY" "$ROOT/tests/lib/jobctl.py" terminal "$MOAT" "$b" "$W" 2>&1)
done
# Without namespaces the command's process group is not the tree: a process
# the command put in a session of its own ran on while moat was stopped,
# past --timeout and --cpu, which moat watches, with proc.tree enforced by
# the tree's cgroup.  moat freezes that cgroup now.  Control: with no
# cgroup (proc.tree missing) it runs on.
NONS="userns=0,root=0"
[ "$UID_NOW" -ne 0 ] && NONS="userns=0"
jc_tree() { MOAT_HOST_LIMIT=$1 "$MOAT" run --mode prefer --write "$W" --dry-run -- /bin/true 2>/dev/null |
	"$PY" -c 'import json, sys; print(json.load(sys.stdin)["properties"]["proc.tree"]["status"])'; }
if [ "$(jc_tree "$NONS")" = enforced ]; then
	tap_relay 8 "native, no namespaces: job control by signals" < <(MOAT_HOST_LIMIT=$NONS \
		"$PY" "$ROOT/tests/lib/jobctl.py" signals "$MOAT" native "$W" "native, no namespaces" 2>&1)
else
	skip_feature cgroup_tree "no cgroup for the tree without namespaces: proc.tree is missing"
fi
is "$(jc_tree "$NONS,cgroup=0")" missing "native, no namespaces, cgroup=0: proc.tree says missing"
tap_relay 8 "native, no namespaces, cgroup=0: job control by signals" < <(MOAT_HOST_LIMIT=$NONS,cgroup=0 \
	"$PY" "$ROOT/tests/lib/jobctl.py" signals "$MOAT" native "$W" "native, no namespaces, cgroup=0" left 2>&1)
# `stty tostop`, moat --tty started with `&`: the command's output, due on
# the terminal from the background, made the kernel stop moat (SIGTTOU)
# while the tree ran on unwatched, past --timeout.  moat holds SIGTTOU and
# SIGTTIN while it supervises, and stops the job itself, the tree first.
# Control: with -tostop the job runs on in the background, its output shown.
tap_relay 7 "native: stty tostop" < <(timeout 60 "$PY" "$ROOT/tests/lib/jobctl.py" tostop "$MOAT" native "$W" 2>&1)
tap_relay 7 "native, no namespaces: stty tostop" < <(MOAT_HOST_LIMIT=$NONS timeout 60 \
	"$PY" "$ROOT/tests/lib/jobctl.py" tostop "$MOAT" native "$W" "native, no namespaces" 2>&1)
tap_relay 7 "native: stty -tostop (control)" < <(timeout 60 \
	"$PY" "$ROOT/tests/lib/jobctl.py" tostop "$MOAT" native "$W" "native, -tostop" off 2>&1)
# A caller that ignores SIGTTOU (`trap '' TTOU`): the kernel lets its
# background writes through, and moat, holding SIGTTOU, stopped the job
# itself anyway.  Now it writes, as the kernel would.
tap_relay 7 "native: stty tostop, SIGTTOU ignored" < <(timeout 60 \
	"$PY" "$ROOT/tests/lib/jobctl.py" tostop "$MOAT" native "$W" "native, TTOU ignored" ignored 2>&1)
# --mode off: the command shares moat's process group and terminal; its
# background read stops the job, moat with it (moat, holding SIGTTIN, ran
# on while cat sat stopped, and the shell said Running).
tap_relay 4 "--mode off: a background read" < <(timeout 60 \
	"$PY" "$ROOT/tests/lib/jobctl.py" offread "$MOAT" native "$W" "native, --mode off" 2>&1)

# --- the command's end is the run's end, with the command's status ---------------------
# A process the command leaves behind (`daemon &`) ends with it, on every
# backend that runs here: the run does not wait for it, and its status is
# the command's, not the last process's (firejail by default waited for
# the 3 s sleep and exited 0).  The sleep is 30 s and the run must end
# within 15 s: the clock runs from before moat and the backend start, which
# a loaded machine stretches to seconds (the old 4 s sleep against a 3 s
# bound left one second for that).
cp /bin/sleep "$W/bgsleep"
for b in native bwrap oci firejail; do
	"$MOAT" run --backend "$b" --mode prefer -- /bin/true >/dev/null 2>&1 || continue
	t0=$(date +%s%N)
	"$MOAT" run --backend "$b" --mode prefer --read "$W" -- /bin/sh -c "'$W/bgsleep' 30 & sleep 0.1; exit 3" \
		>/dev/null 2>&1
	rc=$? t=$((($(date +%s%N) - t0) / 1000000))
	sleep 0.2
	left=$(pgrep -f "$W/bgsleep" | wc -l)
	is "$rc/$([ "$t" -lt 15000 ] && echo prompt)/$left" "3/prompt/0" \
		"$b: the command exits 3 leaving a 30 s sleep: exit 3 after ${t} ms, nothing left"
	pkill -f "$W/bgsleep"
done
# Under firejail that is moat __init --kill-rest (not pid 1 there): it kills
# what the command left with kill(-1), which reaches only its own pid
# namespace, so it refuses to run in moat's (PIDNS: the tool made none),
# where kill(-1) would reach every process of the user.  Both runs are in a
# pid namespace the test makes (under a shell, its pid 1), so that a broken
# check could not reach the test's own processes: the refusal is given that
# namespace as moat's; the control the test's, and there it ends the
# leftover and nothing outside.
PIDNS=$(stat -L -c %i /proc/self/ns/pid)
in_pidns() { # in_pidns PIDNS|own CMD...: moat __init --kill-rest, pid 2 of a new pid namespace
	unshare -Urpf --mount-proc /bin/sh -c 'ns=$1; [ "$ns" = own ] && ns=$(stat -L -c %i /proc/self/ns/pid)
		shift; "$0" __init --kill-rest "$ns" -- "$@"; rc=$?; exit $rc' "$MOAT" "$@"
}
if unshare -Urpf --mount-proc /bin/true 2>/dev/null; then
	rm -f "$W/ran"
	in_pidns own /bin/sh -c "echo x >'$W/ran'" 2>"$SCRATCH/kr.err"
	is "$?/$([ -e "$W/ran" ] && echo ran)" "125/" \
		"__init --kill-rest in what it is told is moat's pid namespace: refuses (125), runs nothing"
	like "$(cat "$SCRATCH/kr.err")" "the tool made no pid namespace" "  saying why"
	"$W/bgsleep" 30 &
	host_sleep=$!
	t0=$(date +%s%N)
	in_pidns "$PIDNS" /bin/sh -c "'$W/bgsleep' 20 & echo x >'$W/ran'; exit 3" 2>"$SCRATCH/kr.err"
	rc=$? t=$((($(date +%s%N) - t0) / 1000000))
	# The leftover sleeps 20 s; the bound is 10 s, from before unshare.
	is "$rc/$([ -e "$W/ran" ] && echo ran)/$(pgrep -f "$W/bgsleep 20" | wc -l)/$([ "$t" -lt 10000 ] && echo prompt)" \
		"3/ran/0/prompt" "control: in a pid namespace of its own it runs, exits 3 after ${t} ms, the leftover killed"
	kill -0 "$host_sleep" 2>/dev/null
	ok $? "  and a process of the same user outside that namespace lives"
	kill "$host_sleep" 2>/dev/null
	wait "$host_sleep" 2>/dev/null
else
	for _ in 1 2 3 4; do skip "unshare -Urpf cannot make a pid namespace here"; done
fi

# --- 3, 5. closed standard descriptors ---------------------------------------------
for b in $BACKENDS; do
	for fd in 0 1 2; do
		rm -f "$W/f"
		eval "\"\$MOAT\" run --backend $b --mode prefer --write \"\$W\" -- /bin/sh -c 'echo x >$W/f' $fd>&-" 2>/dev/null
		rc=$?
		[ $rc = 0 ] && [ -s "$W/f" ]
		ok $? "$b: fd $fd closed: the command runs and exits 0 (got $rc)"
	done
done
# A closed stderr and --report: the report is the report, not diagnostics.
rm -f "$REPORTS/closed2.json"
MOAT_HOST_LIMIT=landlock=0 "$MOAT" run --mode prefer --report "$REPORTS/closed2.json" -- /bin/true 2>&-
is $? 0 "stderr closed, degraded run (diagnostics to print): exit 0"
valid_report "$REPORTS/closed2.json" "  and the report is valid JSON"

# --- 5. a broken stderr pipe --------------------------------------------------------
"$PY" - "$MOAT" "$REPORTS/broken.json" >"$SCRATCH/broken.out" <<'EOF'
import os, subprocess, sys
moat, rep = sys.argv[1], sys.argv[2]
r, w = os.pipe()
os.close(r)
env = dict(os.environ, MOAT_HOST_LIMIT="landlock=0")
p = subprocess.run([moat, "run", "--mode", "prefer", "--report", rep, "--", "/bin/sh", "-c", "exit 3"],
                   stderr=w, env=env)
print(p.returncode)
EOF
is "$(cat "$SCRATCH/broken.out")" 3 "stderr a pipe nobody reads: moat prints its warnings, survives, exits with the command's 3"
valid_report "$REPORTS/broken.json" "  and writes its report"

# --- 6. signals the caller ignores stay ignored --------------------------------------
( exec nohup "$MOAT" run --mode prefer -- /bin/sh -c 'sleep 1; echo survived' >"$SCRATCH/nohup.out" 2>/dev/null ) &
np=$!
sleep 0.4
kill -HUP "$np"
wait "$np"
rc=$?
is "$rc:$(cat "$SCRATCH/nohup.out")" "0:survived" "nohup moat run: SIGHUP is ignored by moat and the command, as by nohup sleep"
( exec "$MOAT" run --mode prefer -- /bin/sh -c 'sleep 1; echo survived' >"$SCRATCH/hup.out" 2>/dev/null ) &
np=$!
sleep 0.4
kill -HUP "$np"
wait "$np"
is "$?" 129 "control: without nohup, SIGHUP ends the command (129)"
ign=$("$PY" -c 'import os, signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])' "$MOAT" run --mode prefer -- /bin/grep SigIgn /proc/self/status)
dfl=$("$PY" -c 'import os, signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$MOAT" run --mode prefer -- /bin/grep SigIgn /proc/self/status)
pipe_bit() { "$PY" -c 'import sys; print((int(sys.argv[1].split()[1], 16) >> 12) & 1)' "$1"; }
is "$(pipe_bit "$ign"):$(pipe_bit "$dfl")" "1:0" "SIGPIPE reaches the command as the caller had it (ignored: 1, default: 0)"

# --- a signal while moat plans ends moat; the command never starts ------------
# (a stat on a hung mount blocks planning: tests/lib/plansignal.py)
tap_relay 2 "a signal while moat plans" < <(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	"$PY" "$ROOT/tests/lib/plansignal.py" "$MOAT" "$W" "$REPORTS/plan.json" 2>&1)

# --- the --report-fd descriptor is out of an unconfined command's reach -----
# In mode off the command runs as moat's user, unconfined: moat is not
# dumpable while it runs, so /proc/MOAT/fd/N does not open.  Root holds
# CAP_SYS_PTRACE, which ignores that: checked for other users only.
if [ "$UID_NOW" != 0 ]; then
	# FOR""GED: the report names the argv, the marker only what was written
	"$MOAT" run --mode off --report-fd 3 -- /bin/sh -c 'echo FOR""GED > /proc/$PPID/fd/3' 3>"$REPORTS/off.json" 2>/dev/null
	[ $? != 0 ] && ! grep -q FORGED "$REPORTS/off.json"
	ok $? "mode off: the command cannot open moat's --report-fd through /proc/\$PPID/fd"
	valid_report "$REPORTS/off.json" "  and the report is moat's alone"
	# control: a parent that is dumpable (a shell) holds it open to its child
	bash -c 'sh -c "echo FORGED > /proc/\$PPID/fd/3"; true' 3>"$SCRATCH/ctl-fd"
	grep -q FORGED "$SCRATCH/ctl-fd"
	ok $? "control: a dumpable parent's descriptor opens through /proc/PPID/fd"
else
	skip "root's command holds CAP_SYS_PTRACE (the uid 65534 pass runs it)"
fi

# --- 4. a backend tool's own set-up failure is 125, not the command's status ---------
if case " $BACKENDS " in *" bwrap "*) true ;; *) false ;; esac; then
	if [ "$UID_NOW" != 0 ]; then
		# RLIMIT_NPROC counts every process of this user (this shell
		# too, and whatever else of this user's still ends): the lowest
		# limit at which moat starts bwrap and bwrap, or moat __init
		# inside it, cannot make the next process.
		# Counted from this user's tasks right before each try, up to six
		# passes: in CI a root pass runs beside this one, and its Pods and
		# controls run processes as uid 65534 too, so an absolute 2..24
		# could miss the window (three passes once missed it in CI).
		found=
		for pass in 1 2 3 4 5 6; do
			for i in $(seq 0 22); do
				n=$(($(ps -L -U "$UID_NOW" --no-headers 2>/dev/null | wc -l) + i))
				rm -f "$REPORTS/nproc.json"
				prlimit --nproc=$n "$MOAT" run --backend bwrap --report "$REPORTS/nproc.json" -- /bin/true 2>"$SCRATCH/nproc.err"
				rc=$?
				if [ $rc = 125 ] && runf "$REPORTS/nproc.json" failure | grep -q "bwrap failed to set up the sandbox"; then
					found=$n
					break 2
				fi
			done
		done
		[ -n "$found" ]
		ok $? "bwrap: its own set-up fails (RLIMIT_NPROC $found): exit 125, the failure names bwrap"
		is "$(runf "$REPORTS/nproc.json" executed):$(runf "$REPORTS/nproc.json" exit_code)" "False:125" \
			"  the report says executed false, exit_code 125"
	else
		skip "needs an unprivileged caller: root is not held to RLIMIT_NPROC (the uid 65534 pass runs it)"
	fi
	"$MOAT" run --backend bwrap -- /bin/sh -c 'exit 1'
	is $? 1 "control: bwrap running a command that exits 1 gives 1"
	# oci: moat __init says when it starts the command; runc failing before
	# that (a stand-in runc first on PATH) is a set-up failure, not exit 1.
	# The stand-ins lie outside the current directory: a tool on PATH
	# in the project around it is passed over (project_tools.sh).
	if "$MOAT" run --backend oci --dry-run -- /bin/true 2>/dev/null | grep -q '"status": "enforced"'; then
		mkdir -p "$REPORTS/fakerunc"
		printf '#!/bin/sh\necho "runc run failed: stand-in" >&2\nexit 1\n' >"$REPORTS/fakerunc/runc"
		chmod 755 "$REPORTS/fakerunc/runc"
		rm -f "$REPORTS/fakerunc.json"
		PATH="$REPORTS/fakerunc:$PATH" "$MOAT" run --backend oci --report "$REPORTS/fakerunc.json" -- /bin/true \
			2>/dev/null
		is "$?/$(runf "$REPORTS/fakerunc.json" executed)" "125/False" "oci: runc failing in its set-up: exit 125, executed false"
		like "$(runf "$REPORTS/fakerunc.json" failure)" "runc run failed: stand-in" \
			"  the report's failure carries runc's own message (its stderr is moat's pipe)"
		"$MOAT" run --backend oci -- /bin/sh -c 'exit 1'
		is $? 1 "  control: oci running a command that exits 1 gives 1"
		"$MOAT" run --backend oci -- /bin/sh -c 'echo said-in-the-container >&2' 2>"$SCRATCH/oci2.err"
		is "$(cat "$SCRATCH/oci2.err")" said-in-the-container "  the command's stderr under oci is the caller's, not moat's pipe"
	fi
	# The tool's own words reach the report: bwrap speaks into a pipe of
	# moat's until moat __init puts the caller's stderr back for the
	# command.  A stand-in bwrap first PATH that fails as bwrap does.
	mkdir -p "$REPORTS/fakebw"
	printf '#!/bin/sh\necho "bwrap: Creating new namespace failed: stand-in" >&2\nexit 1\n' >"$REPORTS/fakebw/bwrap"
	chmod 755 "$REPORTS/fakebw/bwrap"
	rm -f "$REPORTS/fakebw.json"
	PATH="$REPORTS/fakebw:$PATH" "$MOAT" run --backend bwrap --report "$REPORTS/fakebw.json" -- /bin/true \
		2>"$SCRATCH/fakebw.err"
	is $? 125 "bwrap failing in its set-up: exit 125"
	like "$(runf "$REPORTS/fakebw.json" failure)" "failed to set up the sandbox.*: bwrap: Creating new namespace failed: stand-in" \
		"  the report's failure carries bwrap's own message"
	like "$(cat "$SCRATCH/fakebw.err")" "^bwrap: Creating new namespace failed: stand-in" "  and stderr shows it as bwrap said it"
	"$MOAT" run --backend bwrap -- /bin/sh -c 'echo said-by-the-command >&2' 2>"$SCRATCH/cmd2.err"
	is "$(cat "$SCRATCH/cmd2.err")" said-by-the-command "  the command's stderr is the caller's, not moat's pipe"
	# --- 9. too many bwrap options: refused at plan time -------------------------
	args=()
	for i in $(seq 1 400); do mkdir -p "$W/many/d$i"; args+=(--write "$W/many/d$i"); done
	"$MOAT" run --backend bwrap --dry-run "${args[@]}" -- /bin/true >"$SCRATCH/many.err" 2>&1
	is $? 125 "bwrap: 400 write grants (over bwrap's 9000 options): refused by the dry run (125)"
	like "$(cat "$SCRATCH/many.err")" "more than the 9000 bwrap accepts" "  the report names the limit"
	"$MOAT" run --backend native "${args[@]}" -- /bin/true
	is $? 0 "  native runs the same 400 grants"
	if "$MOAT" run --backend firejail --mode prefer -- /bin/true 2>/dev/null; then
		"$MOAT" run --backend firejail --mode prefer "${args[@]:0:120}" -- /bin/true 2>"$SCRATCH/fj.err"
		is $? 125 "firejail: 60 write grants (over firejail's 128 arguments): refused before it runs (125)"
		like "$(cat "$SCRATCH/fj.err")" "firejail takes fewer than 128" "  naming the limit"
		# An argument of 4128 bytes or more firejail refuses too ("too
		# long arguments"): the command never ran, and the report said
		# it had, with firejail's exit 1 as the command's.
		long=$(head -c 4128 /dev/zero | tr '\0' a)
		"$MOAT" run --backend firejail --mode prefer --report "$REPORTS/fjlong.json" -- /bin/echo "$long" \
			>/dev/null 2>"$SCRATCH/fj.err"
		is "$?:$(json_get "$REPORTS/fjlong.json" '["run"]["executed"]')" "125:False" \
			"firejail: an argument of 4128 bytes is refused before it runs (125, not executed)"
		like "$(cat "$SCRATCH/fj.err")" "is 4128 bytes, and firejail takes fewer than 4128" "  naming the limit"
		out=$("$MOAT" run --backend firejail --mode prefer -- /bin/echo "${long%a}" 2>/dev/null)
		is "${#out}" 4127 "  control: one of 4127 bytes runs"
	fi
fi

# --- 8. stale private TMPDIRs of this user are swept -------------------------------
dead=$($PY -c 'import os
p = 4000000
while True:
    try:
        os.kill(p, 0)
    except ProcessLookupError:
        print(p); break
    except PermissionError:
        pass
    p -= 1')
# The stale names end in six characters of this run's own: the root and the
# sanitizer passes run this file at once, and a fixed name let one pass's
# sweep, or its mkdir, land on the other's directory (a CI failure of
# "swept by the next oci run": removed by one, made again by the other).
sweep_tag=$($PY -c 'import secrets; print(secrets.token_hex(3))')
stale=/tmp/moat-tmp.$dead.$sweep_tag
live=/tmp/moat-tmp.$$.live01
mkdir -p "$stale/sub" "$live"
touch "$stale/sub/f"
# root=0: as root the native backend would have namespaces even without
# user ones, and make no private TMPDIR.  The sweep is the guard's, beside
# the command, and lasts as long as the command: a second is plenty for
# the few hundred names of a /tmp.
MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --backend native --mode prefer -- /bin/sleep 1 2>/dev/null
[ ! -e "$stale" ]
ok $? "without namespaces: a private TMPDIR whose moat (pid $dead) is gone is swept by the next run"
[ -e "$live" ]
ok $? "  one whose moat is alive is left alone"
rm -rf "$stale" "$live"
# A tree deeper than rmtree walks at once (256 levels): the TMPDIR is
# still "removed afterwards", as the report says.  A 300-deep one was left
# on the host, unsaid, and the next runs' sweep left it too.
deep300='for i in $(seq 300); do mkdir d && cd d || exit 1; done; echo LEFT >f'
dtmp=$(MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --backend native --mode prefer -- \
	/bin/sh -c "echo \"\$TMPDIR\"; cd \"\$TMPDIR\" && $deep300" 2>"$SCRATCH/deep.err")
like "$dtmp" '^/tmp/moat-tmp\.' "without namespaces: a command makes a tree 300 directories deep in its TMPDIR"
[ -n "$dtmp" ] && [ ! -e "$dtmp" ]
ok $? "  its TMPDIR ($dtmp) is removed afterwards, all of it"
unlike "$(cat "$SCRATCH/deep.err")" "moat: warning:" "  with no warning: nothing is left"
mkdir "$stale" && (cd "$stale" && eval "$deep300")
MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --backend native --mode prefer -- /bin/sleep 1 2>"$SCRATCH/deep.err"
[ ! -e "$stale" ]
ok $? "  a stale TMPDIR holding such a tree is swept by the next run"
unlike "$(cat "$SCRATCH/deep.err")" "moat: warning:" "  with no warning"
rm -rf "$stale" ${dtmp:+"$dtmp"}
# A command can chmod its TMPDIR's directories (Landlock does not govern
# chmod): one at 0, and the TMPDIR at 0500, left it on the host, as moat's
# owner could neither list nor empty them.
if [ "$(id -u)" = 0 ]; then
	skip "a TMPDIR chmodded to 0500: root passes any mode bits (the uid 65534 pass runs it)"
	skip "  (the uid 65534 pass)"
else
	ctmp=$(MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --backend native --mode prefer -- /bin/sh -c \
		'echo "$TMPDIR"; cd "$TMPDIR" && mkdir -p a/b && echo LEFT >a/b/f && chmod 0 a/b a && chmod 0500 .' \
		2>"$SCRATCH/chm.err")
	[ -n "$ctmp" ] && [ ! -e "$ctmp" ]
	ok $? "without namespaces: a TMPDIR chmodded to 0500 with a directory at 0 in it is removed afterwards ($ctmp)"
	unlike "$(cat "$SCRATCH/chm.err")" "moat: warning:" "  with no warning"
	[ -n "$ctmp" ] && chmod -R u+rwx "$ctmp" 2>/dev/null && rm -rf "$ctmp"
fi
# A live run's tmp whose moat is in another pid namespace (a container
# sharing /tmp): its pid looks gone from here, and the sweep deleted the
# live run's files.  Its moat and guard hold a lock on it for the whole
# run; the sweep removes only what it can lock.  Moat A runs in a pid
# namespace of its own, at a pid that is free out here (ns_last_pid);
# unprivileged, the namespace needs a user namespace too (-Ur).
NSA=()
if [ "$UID_NOW" = 0 ] && unshare -pf --mount-proc true 2>/dev/null; then
	NSA=(unshare -pf --mount-proc)
elif unshare -Urpf --mount-proc true 2>/dev/null; then
	NSA=(unshare -Urpf --mount-proc)
fi
if [ ${#NSA[@]} -gt 0 ]; then
	S=$SCRATCH/ns8
	mkdir -p "$S" && chmod 0777 "$S"
	rm -f "$S/go"
	# A's command waits for the test's go (20 s at most), not a fixed time:
	# its 3 s sleep ended before the second moat's sweep on a loaded
	# machine, and A, done, had removed its tmp itself.
	# shellcheck disable=SC2016
	MOAT_HOST_LIMIT=userns=0,root=0 "${NSA[@]}" sh -c 'echo $(($1 - 1)) >/proc/sys/kernel/ns_last_pid &&
		"$2" run --backend native --mode prefer --write "$3" -- /bin/sh -c "echo data >\$TMPDIR/f; echo \$TMPDIR >$3/tmpdir; i=0; while [ ! -e $3/go ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i + 1)); done; cat \$TMPDIR/f" >"$3/a.out" 2>"$3/a.err"' \
		sh "$dead" "$MOAT" "$S" &
	nsa=$!
	wait_ready 30 "moat A's command (its tmpdir file)" test -s "$S/tmpdir"
	atmp=$(cat "$S/tmpdir" 2>/dev/null)
	like "$atmp" "^/tmp/moat-tmp\.$dead\." "without namespaces, in another pid namespace: moat A's tmp carries its pid there ($dead), free out here"
	# (sleep 1: the sweep lasts as long as the command, and must reach A's)
	MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --backend native --mode prefer -- /bin/sleep 1 2>/dev/null
	[ -n "$atmp" ] && [ -e "$atmp/f" ]
	ok $? "  a second moat's sweep leaves A's live tmp alone (A holds its lock)"
	touch "$S/go"
	wait "$nsa"
	is "$(cat "$S/a.out")" data "  A reads its file at its end"
	[ -n "$atmp" ] && [ ! -e "$atmp" ]
	ok $? "  and A removed its tmp itself"
	# Control: a moat SIGKILLed with its guard (a tmp nobody holds any more)
	# is swept, even when its command left a daemon behind: the lock was
	# never the command's.
	rm -f "$S/tmpdir" "$S/daemon"
	MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --backend native --mode prefer --write "$S" -- /bin/sh -c \
		"sleep 20 </dev/null >/dev/null 2>&1 & echo \$! >$S/daemon; echo \$TMPDIR >$S/tmpdir; sleep 20" 2>/dev/null &
	mc=$!
	wait_ready 30 "moat C's command (its tmpdir and daemon files)" test -s "$S/tmpdir" -a -s "$S/daemon"
	ctmp=$(cat "$S/tmpdir" 2>/dev/null)
	for c in $(cat /proc/$mc/task/*/children 2>/dev/null); do
		[ "$(cat /proc/$c/comm 2>/dev/null)" = moat-guard ] && kill -9 "$c"
	done
	kill -9 "$mc"
	wait "$mc" 2>/dev/null
	[ -n "$ctmp" ] && [ -e "$ctmp" ] && kill -0 "$(cat "$S/daemon")"
	ok $? "  control: moat C and its guard SIGKILLed: its tmp is left, its command's daemon still runs"
	MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --backend native --mode prefer -- /bin/sleep 1 2>/dev/null
	[ -n "$ctmp" ] && [ ! -e "$ctmp" ]
	ok $? "  control: the next run sweeps C's tmp (nobody holds its lock, not the daemon)"
	kill -9 "$(cat "$S/daemon")" 2>/dev/null
	rm -rf "$ctmp"
	# What the killed guard would have removed is this test's to remove:
	# the command's other processes (its foreground sleep) and, as root,
	# the tree's cgroup (moat-PID-N), which a later moat of that pid would
	# otherwise find in its way.
	for _ in 1 2 3 4 5; do
		cgs=$(compgen -G "/sys/fs/cgroup/moat-$mc-*"; compgen -G "/sys/fs/cgroup/*/moat-$mc-*")
		[ -z "$cgs" ] && break
		for c in $cgs; do
			for p in $(cat "$c/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
			rmdir "$c" 2>/dev/null
		done
		sleep 0.1
	done
else
	skip "no pid namespace can be made here (unshare -pf, unshare -Urpf)"
	skip "  (the sweep and a tmp in another pid namespace)"
	skip "  (A's file)"
	skip "  (A's clean-up)"
	skip "  (control: C's tmp left)"
	skip "  (control: C's tmp swept)"
fi
# A backend's work directory (the OCI bundle) is made while planning, before
# the guard that would remove it runs: one whose moat was killed in between
# is swept by the next run that makes one.
if "$MOAT" run --backend oci --dry-run -- /bin/true 2>/dev/null | grep -q '"status": "enforced"'; then
	stale=/tmp/moat-oci.$dead.$sweep_tag
	live=/tmp/moat-oci.$$.live01
	mkdir -p "$stale/rootfs" "$live"
	"$MOAT" run --backend oci -- /bin/true 2>/dev/null
	[ ! -e "$stale" ]
	ok $? "a backend's work directory whose moat (pid $dead) is gone is swept by the next oci run"
	[ -e "$live" ]
	ok $? "  one whose moat is alive is left alone"
	rm -rf "$stale" "$live"
else
	skip "oci does not enforce the default policy here"
fi

# --- 10. a report that cannot be written is exit 125 ---------------------------------
if [ "$UID_NOW" = 0 ]; then
	FULL=$(mktemp -d /root/moat-full.XXXXXX)
	if mount -t tmpfs -o size=64k tmpfs "$FULL" 2>/dev/null; then
		echo old >"$FULL/r.json"
		head -c 100000 /dev/zero >"$FULL/fill" 2>/dev/null
		"$MOAT" run --report "$FULL/r.json" -- /bin/sh -c 'exit 3' 2>"$SCRATCH/full.err"
		is $? 125 "report on a full file system, command exits 3: moat exits 125"
		is "$(cat "$FULL/r.json")" old "  what was at the name is left as it was"
		like "$(cat "$SCRATCH/full.err")" "exit status was 3" "  and stderr gives the command's status"
		is "$(ls -A "$FULL" | grep -c '^\.r\.json')" 0 "  no temporary file is left"
		umount "$FULL"
	else
		ok 1 "mounting a small tmpfs for the full-disk test"
	fi
	rmdir "$FULL"
else
	skip "needs root to mount a small tmpfs (the root pass runs it)"
fi

# --- 11. an empty environment ------------------------------------------------------
env -i "$MOAT" run --mode prefer -- /bin/true 2>"$SCRATCH/envi.err"
is $? 0 "env -i moat run: exit 0"
! grep -Eq 'runtime error:|AddressSanitizer|LeakSanitizer' "$SCRATCH/envi.err"
ok $? "  and no sanitizer report"

# --- 12. FIFOs and devices where a file was expected; MOAT_HOST_LIMIT parsed strictly --
mkfifo "$SCRATCH/fifo"
timeout 5 "$MOAT" run --config "$SCRATCH/fifo" -- /bin/true 2>"$SCRATCH/fifo.err"
is $? 125 "--config FIFO: refused at once (125), no blocking open"
like "$(cat "$SCRATCH/fifo.err")" "not a regular file \(a pipe\)" "  named as a pipe"
mkfifo "$REPORTS/rfifo"
timeout 5 "$MOAT" run --report "$REPORTS/rfifo" -- /bin/true 2>/dev/null
is $? 125 "--report FIFO: refused (125)"
[ -p "$REPORTS/rfifo" ]
ok $? "  and the FIFO is not replaced"
# Files moat reads before the sandbox starts that a command given the
# project may have made: a FIFO there would block moat's open(2) for ever
# (it held SIGTERM too: only SIGKILL ended it).  A virtualenv's pyvenv.cfg,
# a linked work tree's commondir, the user's ~/.gitconfig.
FP=$SCRATCH/fifo-project
mkdir -p "$FP/venv/bin" "$FP/gd" "$FP/wt" "$FP/home" "$FP/proj"
# A virtualenv made with --copies has a program of its own in bin/ (echo
# stands for it: python itself would wait on the FIFO, in the sandbox).
cp /bin/echo "$FP/venv/bin/python3"
mkfifo "$FP/venv/pyvenv.cfg"
out=$(cd "$FP/proj" && timeout -k 1 10 "$MOAT" run -- "$FP/venv/bin/python3" ran 2>"$SCRATCH/fp.err")
is "$?:$out" "0:ran" "a virtualenv whose pyvenv.cfg is a FIFO: the command runs, moat does not wait on the FIFO"
rm -f "$FP/venv/pyvenv.cfg"
truncate -s 1T "$FP/venv/pyvenv.cfg"
out=$(cd "$FP/proj" && timeout -k 1 10 "$MOAT" run -- "$FP/venv/bin/python3" ran 2>"$SCRATCH/fp.err")
is "$?:$out" "0:ran" "a pyvenv.cfg of a terabyte of zeros (sparse): not read to its end"
echo "gitdir: $FP/gd" >"$FP/wt/.git"
echo 'ref: refs/heads/main' >"$FP/gd/HEAD"
mkfifo "$FP/gd/commondir"
(cd "$FP/wt" && timeout -k 1 10 "$MOAT" run --write . -- /bin/true 2>"$SCRATCH/fp.err")
is $? 0 "a linked work tree whose commondir is a FIFO: the run goes on"
mkfifo "$FP/home/.gitconfig"
git init -q "$FP/proj" # moat reads the user's git configuration for a run in a work tree
out=$(cd "$FP/proj" && HOME=$FP/home timeout -k 1 10 "$MOAT" run -- /bin/echo ran 2>"$SCRATCH/fp.err")
is "$?:$out" "0:ran" "a ~/.gitconfig that is a FIFO: the run goes on"
like "$(cat "$SCRATCH/fp.err")" "^moat: note: $FP/home/.gitconfig: not a regular file; git inside does not get it" \
	"  and a note says why git inside does not get it"
# The sanitized copy moat writes for git inside (/tmp/moat-git-UID/HASH.gitconfig)
# where a FIFO stands (an unsandboxed run could make one): replaced, not waited on.
rm -f "$FP/home/.gitconfig"
printf '[user]\n\tname = fifo-test-%s\n' "$$" >"$FP/home/.gitconfig"
(cd "$FP/proj" && HOME=$FP/home "$MOAT" run -- /bin/true 2>/dev/null)
own=$(find /tmp/moat-git-"$UID_NOW" -maxdepth 1 -type f -name '*.gitconfig' -exec grep -l "fifo-test-$$" {} + 2>/dev/null | head -1)
if [ -n "$own" ]; then
	rm -f "$own" && mkfifo "$own"
	out=$(cd "$FP/proj" && HOME=$FP/home timeout -k 1 10 "$MOAT" run -- /bin/sh -c 'git config user.name' 2>"$SCRATCH/fp.err")
	is "$?:$out" "0:fifo-test-$$" "moat's own sanitized gitconfig replaced by a FIFO: made again, not waited on"
	[ -f "$own" ]
	ok $? "  and a regular file again"
	rm -f "$own"
else
	# The run above wrote it for git inside, whatever the host: its absence is a failure.
	ok 1 "moat's own sanitized gitconfig: written at /tmp/moat-git-$UID_NOW by a run in a work tree"
fi
if [ "$UID_NOW" = 0 ]; then
	mknod "$REPORTS/null" c 1 3
	"$MOAT" run --report "$REPORTS/null" -- /bin/true 2>/dev/null
	is $? 125 "--report on a character device: refused"
	[ -c "$REPORTS/null" ]
	ok $? "  and the device node is not replaced by a file"
else
	skip "needs root to make a device node (the root pass runs it)"
fi
for v in "landlock=" "landlock=+2" "landlock= 3" "userns=2" "bogus=0" "landlock"; do
	MOAT_HOST_LIMIT="$v" "$MOAT" run --dry-run -- /bin/true >/dev/null 2>"$SCRATCH/hl.err"
	is $? 125 "MOAT_HOST_LIMIT='$v' is refused"
	like "$(cat "$SCRATCH/hl.err")" "MOAT_HOST_LIMIT=" "  with a message naming it"
done
MOAT_HOST_LIMIT="landlock=3,userns=1" "$MOAT" run --dry-run -- /bin/true >/dev/null
is $? 0 "control: MOAT_HOST_LIMIT='landlock=3,userns=1' is accepted"

# --- 13. diagnostics under stress name the real cause ---------------------------------
# Out of descriptors: RLIMIT_NOFILE N (soft and hard: moat raises its soft
# limit to the hard one itself).  The failure says so, names N, and hints at
# ulimit; it never blames a path that exists, and no run gets other verdicts.
fd_msg() { # fd_msg N FILE: stderr FILE names the descriptor limit N as the cause (first, after any note:
	# without a HOME of its own, uid 65534's networked runs note where the package caches went)
	grep -v '^moat: note: ' "$2" | head -1 | grep -q "^moat: moat ran out of file descriptors (RLIMIT_NOFILE $1)" &&
		grep -Eq '^moat: hint: .*ulimit -H?n' "$2" && ! grep -Eq 'must exist|Too many open files' "$2"
}
# LeakSanitizer cannot run under ptrace (the sanitizer build's exit would be 1)
NOLSAN="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
nofile() { # nofile N CMD...: CMD with RLIMIT_NOFILE N (soft and hard)
	local n=$1
	shift
	bash -c 'ulimit -n "$0" && exec "$@"' "$n" "$@"
}
# Out of descriptors because the caller left hundreds open (a spawner
# without close_fds): the hint names those, not the plan's grants.
leaky() { # leaky N CMD...: CMD with RLIMIT_NOFILE 2048 and N descriptors inherited
	"$PY" -c 'import os, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (2048, 2048))
for _ in range(int(sys.argv[1])):
    os.set_inheritable(os.open("/dev/null", os.O_RDONLY), True)
os.execvp(sys.argv[2], sys.argv[2:])' "$@"
}
leaky 2000 "$MOAT" run -- /bin/true 2>"$SCRATCH/leak.err"
is "$?" 125 "2000 descriptors inherited under RLIMIT_NOFILE 2048: moat runs out"
like "$(cat "$SCRATCH/leak.err")" "hint: moat was started with 20[0-9][0-9] descriptors open that are not its own" \
	"  and the hint names the inherited descriptors as the cause"
leaky 10 "$MOAT" run -- /bin/true 2>/dev/null
ok $? "  control: with 10 inherited, the same limit runs"
for b in $BACKENDS; do
	for prof in exec mcp network; do
		bad=
		for n in 4 10 15 20 24 28; do
			nofile "$n" "$MOAT" run --backend "$b" --profile "$prof" -- /bin/true 2>"$SCRATCH/fd.err"
			rc=$?
			[ $rc = 125 ] && fd_msg "$n" "$SCRATCH/fd.err" || bad="$bad $n(rc $rc: $(head -1 "$SCRATCH/fd.err"))"
		done
		[ -z "$bad" ]
		ok $? "$b, profile $prof, RLIMIT_NOFILE 4..28: 125, \"moat ran out of file descriptors (RLIMIT_NOFILE N)\" and a hint${bad:+; not:$bad}"
	done
	# The failures right below the least limit that runs (the backend's
	# and the sandbox child's set-up): each names the cause, and in mode
	# prefer none runs degraded; at that limit the verdicts are the
	# unlimited run's.
	fd_run() { # fd_run N: the run, in mode prefer with a report, at RLIMIT_NOFILE N
		rm -f "$REPORTS/fd.json"
		nofile "$1" "$MOAT" run --backend "$b" --mode prefer --report "$REPORTS/fd.json" -- /bin/true 2>"$SCRATCH/fd.err"
	}
	"$MOAT" run --backend "$b" --mode prefer --report "$REPORTS/fd-base.json" -- /bin/true 2>/dev/null
	# The verdicts and mechanisms, without their counts: how many Landlock
	# rules and binds a run makes follows the host's /etc, /dev and /run,
	# where other lanes (or the host) add and remove entries meanwhile.
	verdicts() { json_get "$1" '["properties"]' 2>/dev/null | sed -E 's/[0-9]+/N/g'; }
	base=$(verdicts "$REPORTS/fd-base.json")
	hard=$(ulimit -Hn)
	{ [ "$hard" = unlimited ] || [ "$hard" -gt 4096 ]; } && hard=4096
	lo=20 hi=$hard
	if fd_run "$hi"; then
		while [ $((hi - lo)) -gt 1 ]; do
			mid=$(((lo + hi) / 2))
			if fd_run "$mid"; then hi=$mid; else lo=$mid; fi
		done
		bad=
		# The limit right below may run all the same: how many
		# descriptors a run needs can differ by one from run to run
		# (seen once in the sanitizer lane as uid 65534, with the other
		# lanes' files coming and going), so it must fail cleanly or run.
		for n in $(seq $((hi - 14)) $((hi - 1))); do
			fd_run "$n"
			rc=$?
			[ $rc = 125 ] && fd_msg "$n" "$SCRATCH/fd.err" && continue
			[ "$n" = $((hi - 1)) ] && [ $rc = 0 ] && continue
			bad="$bad $n(rc $rc: $(head -1 "$SCRATCH/fd.err"))"
		done
		[ -z "$bad" ]
		ok $? "$b: RLIMIT_NOFILE $((hi - 14))..$((hi - 1)), below the $hi this run needs: each 125 naming the limit, none degraded${bad:+; not:$bad}"
		# How many a run needs follows the host: moat pins each entry
		# of /etc and /dev it binds, and other lanes (or the host) add
		# and remove files there while this runs.  Where the need grew
		# since the search, each limit up to where it runs again must
		# still fail cleanly; that limit is at most 8 above.
		at=$hi climb=
		while :; do
			fd_run "$at"
			rc=$?
			[ $rc = 125 ] && fd_msg "$at" "$SCRATCH/fd.err" && [ $at -lt $((hi + 8)) ] || break
			climb="$climb $at"
			at=$((at + 1))
		done
		is "$rc:$(verdicts "$REPORTS/fd.json")" "0:$base" \
			"  at $at it runs, with the verdicts of an unlimited run${climb:+ (the need grew since the search: failed cleanly at$climb)}"
	else
		ok 1 "$b: runs with RLIMIT_NOFILE $hi ($(head -1 "$SCRATCH/fd.err"))"
	fi
	# One open refused (EMFILE, then ENFILE) where the host's cgroups are
	# read for --memory: the plan fails naming the cause; it must not read
	# as "no cgroup hierarchy is mounted" and run degraded.
	env "$NOLSAN" strace -qq -o "$SCRATCH/fd.trace" -e trace=openat "$MOAT" run --backend "$b" --mode prefer --memory 64M -- /bin/true \
		>/dev/null 2>&1
	# The last open of mountinfo is the cgroups' (the plan's first one,
	# for other mounts of the denied paths, is tried apart below).
	k=$(awk '/^openat\(/ { n++ } /\/proc\/self\/mountinfo/ { k = n } END { if (k) print k }' "$SCRATCH/fd.trace")
	k1=$(awk '/^openat\(/ { n++ } /\/proc\/self\/mountinfo/ { print n; exit }' "$SCRATCH/fd.trace")
	if [ -n "$k1" ] && [ "$k1" != "$k" ]; then
		env "$NOLSAN" strace -qq -o /dev/null -e trace=openat -e inject=openat:error=EMFILE:when="$k1" \
			"$MOAT" run --backend "$b" --mode prefer --memory 64M -- /bin/true 2>"$SCRATCH/fd.err"
		like "$?: $(head -1 "$SCRATCH/fd.err")" \
			"^125: moat: moat ran out of file descriptors \(RLIMIT_NOFILE [0-9]+\): reading /proc/self/mountinfo \(to find other mounts of the denied paths\)" \
			"$b: EMFILE opening /proc/self/mountinfo (open $k1) to find other mounts of the denied paths: 125 naming it"
	fi
	if [ -n "$k" ]; then
		for e in EMFILE ENFILE; do
			env "$NOLSAN" strace -qq -o /dev/null -e trace=openat -e inject=openat:error=$e:when="$k" \
				"$MOAT" run --backend "$b" --mode prefer --memory 64M -- /bin/true 2>"$SCRATCH/fd.err"
			rc=$?
			[ $e = EMFILE ] && want="^moat: moat ran out of file descriptors \(RLIMIT_NOFILE [0-9]+\): reading the host's cgroups" ||
				want="^moat: the system ran out of file descriptors \(ENFILE"
			like "$rc: $(head -1 "$SCRATCH/fd.err")" "^125: ${want#^}" \
				"$b: $e opening /proc/self/mountinfo (open $k) for --memory in mode prefer: 125 naming it, no degraded run"
		done
	elif [ "$UID_NOW" != 0 ]; then
		# moat is not dumpable while it runs: strace, as this user, cannot
		# read the paths it opens to find the one to refuse
		skip "$b: strace cannot read a non-dumpable moat's paths as uid $UID_NOW (the root pass runs it)"
	else
		skip "$b: moat read no /proc/self/mountinfo for --memory (no cgroup probe here)"
	fi
done

# A path over PATH_MAX: the message keeps the errno and names the path
# (shortened in the middle).  Made with 22 components of 200 bytes.
seg=$(printf 'd%.0s' $(seq 200))
LONG=$SCRATCH/long
mkdir -p "$LONG"
(cd "$LONG" && for _ in $(seq 22); do mkdir "$seg" && cd "$seg" || exit 1; done)
for _ in $(seq 22); do LONG=$LONG/$seg; done
diag "a path of ${#LONG} bytes"
for b in $BACKENDS; do
	for g in "--read $LONG" "--write $LONG" "--read $LONG/absent" "--cwd $LONG"; do
		# shellcheck disable=SC2086
		"$MOAT" run --backend "$b" $g -- /bin/true 2>"$SCRATCH/long.err"
		rc=$?
		l=$(head -1 "$SCRATCH/long.err")
		what=${g%% *}
		[ $rc = 125 ] && [ "${#l}" -lt 1100 ] && case "$l" in "moat: "*"$SCRATCH/long/ddd"*": File name too long") true ;; *) false ;; esac
		ok $? "$b: $what of a ${#LONG}-byte path: 125, the path (shortened) and ENAMETOOLONG (got $rc: ${l:0:90}...${l: -60})"
	done
	out=$(cd "$SCRATCH/long" && for _ in $(seq 22); do cd "$seg" || exit 1; done && exec "$MOAT" run --backend "$b" -- /bin/true 2>&1)
	rc=$?
	like "$rc: $out" "^125: moat: the current directory's path is longer than [0-9]+ bytes: File name too long" \
		"$b: run from a cwd over PATH_MAX: 125, says so with ENAMETOOLONG (not ERANGE)"
	out=$(cd "$SCRATCH/long" && for _ in $(seq 22); do cd "$seg" || exit 1; done && exec "$MOAT" run --backend "$b" --cwd "$SCRATCH" -- /bin/pwd 2>&1)
	is "$?:$out" "0:$SCRATCH" "  control: from there, --cwd DIR runs"
done

# A deleted working directory: said so, with the way out; --cwd is it.
for b in $BACKENDS; do
	for base in "$SCRATCH" /var/tmp; do
		d=$(mktemp -d "$base/moat-gone.XXXXXX")
		out=$(cd "$d" && rmdir "$d" && exec "$MOAT" run --backend "$b" -- /bin/pwd 2>&1)
		rc=$?
		out=$(printf '%s' "$out" | tr '\n' ' ')
		like "$rc: $out" "^125: moat: the current directory was deleted.*hint: .*--cwd" \
			"$b: cwd $base/... deleted: 125, \"the current directory was deleted\", hint --cwd"
		unlike "$out" "Read-only file system|must exist" "  and no other cause"
		mkdir "$d"
		out=$(cd "$d" && rmdir "$d" && exec "$MOAT" run --backend "$b" --cwd "$SCRATCH" -- /bin/pwd 2>&1)
		is "$?:$out" "0:$SCRATCH" "  control: from the deleted directory, --cwd DIR runs"
	done
done

# Deleted while moat starts.  strace holds one system call and writes it
# out while it holds it: held FILE NAME waits (10 s at most) for that.
held() {
	for _ in $(seq 200); do
		grep -q "$2(" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
# ... after reading it, before planning: the default profile's grant of it
# names the working directory, not "a granted path must exist".
for b in $BACKENDS; do
	d=$(mktemp -d "$SCRATCH/moat-gone.XXXXXX")
	rm -f "$SCRATCH/hold.trace"
	(cd "$d" && exec env "$NOLSAN" strace -qq -o "$SCRATCH/hold.trace" -e trace=getcwd \
		-e inject=getcwd:delay_exit=1500000:when=1 "$MOAT" run --backend "$b" -- /bin/pwd) >"$SCRATCH/gone.out" 2>&1 &
	sp=$!
	held "$SCRATCH/hold.trace" getcwd
	h=$?
	rmdir "$d"
	wait "$sp"
	rc=$?
	like "$rc: $(tr '\n' ' ' <"$SCRATCH/gone.out")" "^125: moat: .*the working directory was deleted while moat was starting.*hint: .*--cwd" \
		"$b: cwd deleted after moat read it (held: $h): 125, the working directory named as deleted"
done
# ... inside a --write grant, while the sandbox is set up (every process's
# first pivot_root held): the host directory is never made again.  runc
# (--backend oci) makes a missing cwd, through the grant's bind.
RACE_BACKENDS=$BACKENDS
"$MOAT" run --backend oci --dry-run -- /bin/true 2>/dev/null | grep -q '"status": "enforced"' && RACE_BACKENDS="$RACE_BACKENDS oci"
for b in $RACE_BACKENDS; do
	R=$SCRATCH/race-$b
	mkdir -p "$R/sub/deep"
	rm -f "$SCRATCH/hold.trace"
	(cd "$R/sub/deep" && exec env "$NOLSAN" strace -f -qq -o "$SCRATCH/hold.trace" -e trace=pivot_root \
		-e inject=pivot_root:delay_enter=1500000:when=1 "$MOAT" run --backend "$b" --profile strict --write "$R" -- \
		/bin/pwd) >"$SCRATCH/race.out" 2>&1 &
	sp=$!
	held "$SCRATCH/hold.trace" pivot_root
	h=$?
	rm -rf "$R/sub"
	wait "$sp"
	rc=$?
	[ $h = 0 ] && [ ! -e "$R/sub" ] && ! grep -q "^$R/sub/deep\$" "$SCRATCH/race.out"
	ok $? "$b: cwd inside --write deleted during set-up (held: $h): not re-created on the host, the command not run there (exit $rc)"
	[ -e "$R/sub" ] && diag "  now there: $(find "$R" | tr '\n' ' ')"
done


# --- namespaces refused by a filter the host's settings do not show -----------------
# In a container under Docker's default seccomp profile, or in a moat nested
# in moat, the sysctls allow namespaces but unshare and clone with their
# flags are EPERM (tests/helpers/nsdeny).  moat, under a filter itself,
# tries unshare once (host/trials.h): --mode prefer then runs without
# namespaces, degraded, and require names the filter.  It used to plan them
# and fail at clone, exit 125 even under prefer.  When only clone is refused
# (nsdeny --clone-only: the trial passes), the launch fails: its report says
# unavailable, not enforced, and the hint does not offer the --mode prefer
# that was given.
NSDENY=$BUILD/helpers/nsdeny
if [ ! -x "$NSDENY" ]; then
	skip "no $NSDENY (make helpers)"
else
	# Controls: the filter is real (unshare refused), and outside it the
	# same run is enforced.
	! "$NSDENY" unshare -U true 2>/dev/null
	ok $? "control: under nsdeny unshare(CLONE_NEWUSER) is refused"
	out=$("$MOAT" run --mode prefer --report-fd 3 -- /bin/echo ran 3>"$REPORTS/ns0.json" 2>/dev/null)
	is "$?:$out:$(json_get "$REPORTS/ns0.json" '["status"]')" "0:ran:enforced" "control: without the filter the run is enforced"
	out=$("$NSDENY" "$MOAT" run --mode prefer --report-fd 3 -- /bin/echo ran 3>"$REPORTS/nsp.json" 2>"$SCRATCH/nsp.err")
	is "$?:$out:$(json_get "$REPORTS/nsp.json" '["status"]')" "0:ran:degraded" \
		"under the filter, --mode prefer runs without namespaces: degraded"
	like "$(json_get "$REPORTS/nsp.json" '["properties"]["proc.pid"]["reason"]')" \
		"a seccomp filter moat runs under .* refuses unshare" "  and the reason names the filter"
	out=$("$NSDENY" "$MOAT" run -- /bin/echo ran 2>"$SCRATCH/nsr.err")
	is "$?:$out" "125:" "  require refuses, the command not run"
	like "$(cat "$SCRATCH/nsr.err")" "cannot enforce proc.pid: .*a seccomp filter moat runs under" "  naming the filter"
	"$NSDENY" --clone-only unshare -U true 2>/dev/null
	ok $? "control: under nsdeny --clone-only unshare is allowed"
	out=$("$NSDENY" --clone-only "$MOAT" run --mode prefer --report-fd 3 -- /bin/echo ran 3>"$REPORTS/nsdeny.json" \
		2>"$SCRATCH/nsdeny.err")
	rc=$?
	is "$rc:$out" "125:" "clone refused alone, --mode prefer: exit 125, the command not run"
	is "$(json_get "$REPORTS/nsdeny.json" '["status"]'):$(runf "$REPORTS/nsdeny.json" executed):$(runf "$REPORTS/nsdeny.json" exit_code)" \
		"unavailable:False:125" "  the report says unavailable, executed false, exit_code 125 (not enforced)"
	n=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(v["status"] == "enforced" for v in d["properties"].values()), len(d["missing"]) > 0)' "$REPORTS/nsdeny.json" 2>&1)
	is "$n" "0 True" "  no property says enforced; the requested ones are missing"
	"$PY" "$ROOT/tests/lib/validate_schema.py" "$ROOT/docs/report.schema.json" "$REPORTS/nsdeny.json" >"$SCRATCH/schema.err" 2>&1
	ok $? "  the report is valid against docs/report.schema.json" || diag "$(head -3 "$SCRATCH/schema.err")"
	! grep -q -- "--mode prefer runs without them" "$SCRATCH/nsdeny.err" && grep -q "MOAT_HOST_LIMIT=userns=0,root=0" "$SCRATCH/nsdeny.err"
	ok $? "  the hint does not offer the --mode prefer given, it names what runs" || diag "$(cat "$SCRATCH/nsdeny.err")"
	out=$("$NSDENY" --clone-only env MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --mode prefer --report-fd 3 -- /bin/echo ran \
		3>"$REPORTS/nsdeny2.json" 2>/dev/null)
	is "$?:$out:$(json_get "$REPORTS/nsdeny2.json" '["status"]')" "0:ran:degraded" "  and what the hint says runs, degraded"
fi
# --- uid 0 with its capabilities dropped (a container's root) ----------------
# Kubernetes' `capabilities: drop: [ALL]`, or Docker's defaults without
# CAP_SYS_ADMIN: uid 0 then makes no namespace as root, and on Linux 5.12+
# without CAP_SETFCAP cannot write its own uid_map in a user namespace.
# moat used to take euid 0 for root and plan namespaces: exit 125 at the
# clone or the uid_map even under --mode prefer.
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
	skip "uid 0 and setpriv needed to drop moat's capabilities"
else
	capless() { setpriv --bounding-set=-all --inh-caps=-all -- "$@"; }
	# Docker's default set: no CAP_SYS_ADMIN, but CAP_SETFCAP and the rest.
	dockercaps() {
		setpriv --bounding-set=-all,+chown,+dac_override,+fowner,+fsetid,+kill,+setgid,+setuid,+setpcap,+net_bind_service,+net_raw,+sys_chroot,+mknod,+audit_write,+setfcap \
			--inh-caps=-all -- "$@"
	}
	out=$(capless "$MOAT" run --mode prefer --report-fd 3 -- /bin/echo ran 3>"$REPORTS/capless.json" 2>"$SCRATCH/capless.err")
	is "$?:$out:$(json_get "$REPORTS/capless.json" '["status"]')" "0:ran:degraded" \
		"uid 0 without capabilities, --mode prefer: runs without namespaces, degraded"
	like "$(json_get "$REPORTS/capless.json" '["properties"]["proc.pid"]["reason"]')" "uid 0 without CAP_SETFCAP" \
		"  the reason names the missing capability"
	out=$(capless "$MOAT" run -- /bin/echo ran 2>"$SCRATCH/caplessr.err")
	is "$?:$out" "125:" "  require refuses, the command not run"
	like "$(cat "$SCRATCH/caplessr.err")" "hint: moat runs as uid 0 without CAP_SYS_ADMIN .* run moat as a user other than root" \
		"  the hint says what would give the namespaces"
	# The fallback holds for uid 0, owner of /etc/shadow: Landlock, not
	# the file's mode, keeps it out.
	capless sh -c 'head -c1 /etc/shadow' >/dev/null 2>&1
	ok $? "control: uid 0 without capabilities reads /etc/shadow (its owner) outside moat"
	out=$(capless "$MOAT" run --mode prefer -- sh -c 'head -c1 /etc/shadow >/dev/null && echo read' 2>/dev/null)
	is "$out" "" "  inside moat's fallback it cannot"
	out=$(dockercaps "$MOAT" run --report-fd 3 -- /bin/echo ran 3>"$REPORTS/dockercaps.json" 2>/dev/null)
	is "$?:$out:$(json_get "$REPORTS/dockercaps.json" '["status"]')" "0:ran:enforced" \
		"uid 0 with Docker's default capabilities (no CAP_SYS_ADMIN): a user namespace, enforced"
fi
# --- a read-only /tmp without namespaces (a container's read-only root) ---------
# The fallback's private tmp is a per-run directory under /tmp.  Where /tmp
# cannot be written (docker --read-only without --tmpfs /tmp, Kubernetes'
# readOnlyRootFilesystem) moat used to stop at planning, exit 125 with no
# report even under --mode prefer; now fs.tmp is missing, with the cause.
# A user and mount namespace of the test's own makes /tmp read-only.
rotmp() { unshare -Urm sh -c 'mount --rbind /tmp /tmp && mount -o remount,ro,bind /tmp && exec "$@"' rotmp "$@"; }
if ! unshare -Urm true 2>/dev/null; then
	skip_feature userns "unshare -Urm: no user namespace for the test's read-only /tmp"
else
	out=$(unshare -Urm env MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --mode prefer --report-fd 3 -- /bin/echo ran \
		3>"$REPORTS/rwtmp.json" 2>/dev/null)
	is "$?:$out:$(json_get "$REPORTS/rwtmp.json" '["properties"]["fs.tmp"]["status"]')" "0:ran:enforced" \
		"control: without namespaces, a writable /tmp gives the per-run private tmp"
	out=$(rotmp env MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --mode prefer --report-fd 3 -- /bin/sh -c 'echo "ran [$TMPDIR]"' \
		3>"$REPORTS/rotmp.json" 2>/dev/null)
	is "$?:$out:$(json_get "$REPORTS/rotmp.json" '["status"]')" "0:ran []:degraded" \
		"a read-only /tmp, --mode prefer: runs degraded, with no TMPDIR of moat's"
	like "$(json_get "$REPORTS/rotmp.json" '["properties"]["fs.tmp"]["reason"]')" "per-run directory .*Read-only file system" \
		"  fs.tmp missing, with the cause"
	out=$(rotmp env MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --report-fd 3 -- /bin/echo ran 3>"$REPORTS/rotmp2.json" 2>"$SCRATCH/rotmp.err")
	is "$?:$out:$(json_get "$REPORTS/rotmp2.json" '["status"]')" "125::unavailable" "  require refuses, with a report"
	like "$(cat "$SCRATCH/rotmp.err")" "hint: give /tmp a writable file system" "  and the hint says what fixes it"
fi
# moat inside moat: the outer filter refuses the inner moat's namespaces
# (found by the trial), and the outer view's /tmp/moat-git-UID (the outer
# sandbox's gitconfig, in a directory the view made) is not the inner
# moat's own: the inner run goes on without it, and says so.
# (LeakSanitizer cannot run in a sandbox: its check is off for the inner
# moat of the sanitizer lane.)
out=$("$MOAT" run --mode prefer --keep-fd 3 --env "$NOLSAN" -- "$MOAT" run --mode prefer --report-fd 3 -- /bin/echo nested \
	3>"$REPORTS/nested.json" 2>"$SCRATCH/nested.err")
is "$?:$out:$(json_get "$REPORTS/nested.json" '["status"]' 2>/dev/null)" "0:nested:degraded" \
	"moat inside moat, --mode prefer: the inner run goes on, degraded"
unlike "$(cat "$SCRATCH/nested.err")" "^moat: the sanitized git configuration" "  and no git configuration stops it"
# The fix it names is the filter's, not a sysctl's, which cannot help: the
# outer filter refuses namespaces to root as well.
like "$(json_get "$REPORTS/nested.json" '["properties"]["proc.pid"]["hint"]' 2>/dev/null)" \
	'^moat runs under a seccomp filter that refuses new namespaces, which no sysctl or root undoes: in Docker' \
	"  the missing namespaces' hint names the filter moat runs under, not a sysctl"
out=$(MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --mode prefer --report-fd 3 -- /bin/true 3>"$REPORTS/limited.json" 2>/dev/null)
like "$(json_get "$REPORTS/limited.json" '["properties"]["proc.pid"]["hint"]' 2>/dev/null)" \
	'^Debian: `sudo sysctl -w kernel.unprivileged_userns_clone=1`' \
	"  control: a host without user namespaces (MOAT_HOST_LIMIT stands for one): how to enable them"

done_testing
