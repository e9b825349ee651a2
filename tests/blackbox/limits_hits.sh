#!/usr/bin/env bash
# A limit the command ran into is never silent (docs/limits.md, "When a limit
# is reached").  A fork the cgroup refuses shows in the command only as EAGAIN,
# and node under --pids 5 waited in futex_wait for ever with nothing from moat.
#
#   --pids 10 against a fork bomb, under each backend that runs here: the
#     report's limits.pids.hits counts the refused forks, and moat's stderr
#     says it once at the end, naming --pids; control: --pids 200 says nothing
#     and hits is 0.  Where RLIMIT_NPROC holds it (no cgroup: uid 65534 here)
#     hits is null, and a command that failed gets a note naming --pids;
#     control: one that succeeded, none.  So under runc's own cgroup (oci as
#     root), which runc removes with the container.
#   the run goes on after the limit (a hang): the warning comes while moat
#     still runs, not only at the end; control: none under --pids 100.
#   node under --pids 5 (when installed): what the user sees names --pids.
#   --memory 32M and a child of a shell the OOM killer ends, the shell going
#     on to exit 0: limits.memory.hits and a line on stderr; control: 256M.
#   the edges: --pids 0, --pids 1, --memory 1, 1.5G, and a host without the
#     cgroup controllers (MOAT_HOST_LIMIT): a clear error, or missing with the
#     reason (require refuses), never a crash or a silent weaker limit.
# Every report is validated against docs/report.schema.json.  Bounded: each
# run has a --timeout or a fixed count.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
PY=/usr/bin/python3
SCHEMA=$ROOT/docs/report.schema.json
PROJ=$SCRATCH/proj
mkdir -p "$PROJ" && chmod 0777 "$PROJ"
cd "$SCRATCH" || exit 1
# A shell as the command: the helper's directory is granted by name.
HDIR=$(dirname "$HELPER")

lim() { json_get "$1" "[\"limits\"][\"$2\"][\"$3\"]" 2>/dev/null; }
has_hits() { json_eval "$1" "'hits' in d['limits']['$2']" 2>/dev/null; }
schema_ok() { # schema_ok REPORT WHAT
	"$PY" "$ROOT/tests/lib/validate_schema.py" "$SCHEMA" "$1" >"$SCRATCH/schema.err" 2>&1
	ok $? "  $2: the report is valid against docs/report.schema.json" || diag "$(head -5 "$SCRATCH/schema.err")"
}
count() { printf '%s\n' "$1" | grep -cE -- "$2"; }
BACKENDS=$(backends_here)
diag "backends that run here as uid $(id -u): $BACKENDS"
# R BACKEND REPORT ARGS... -- CMD: stderr to $SCRATCH/err, the report by fd.
R() {
	local b=$1 rep=$2
	shift 2
	"$MOAT" run --backend "$b" --mode prefer --timeout 60 --report-fd 3 "$@" 2>"$SCRATCH/err" 3>"$rep"
}
END_RE="process limit reached \(--pids 10\): the tree's cgroup refused [0-9]+ forks? or threads?"

# --- --pids: the count in the report, the line at the end -------------------
for b in $BACKENDS; do
	rep=$REPORTS/pids-$b.json
	out=$(forkbomb_tries R "$b" "$rep" --pids 10 -- "$HELPER" forkbomb 40)
	err=$(cat "$SCRATCH/err")
	mech=$(lim "$rep" pids mechanism)
	case "$(lim "$rep" pids status):$mech" in
	enforced:*pids.max*)
		hits=$(lim "$rep" pids hits)
		[ -n "$hits" ] && [ "$hits" -ge 1 ] 2>/dev/null
		ok $? "$b --pids 10, a fork bomb ($out): limits.pids.hits counts the refused forks (${hits:-absent})"
		is "$(count "$err" "$END_RE")" 1 "  $b: moat says so once at the end, naming --pids" ||
			diag "moat said: $(tail -4 "$SCRATCH/err")"
		like "$err" "hint: give the tree more processes and threads with a higher --pids" "  $b: the hint names the flag"
		schema_ok "$rep" "$b --pids 10"
		R "$b" "$REPORTS/pids0-$b.json" --pids 200 -- "$HELPER" forkbomb 40 >/dev/null
		is "$(lim "$REPORTS/pids0-$b.json" pids hits):$(count "$(cat "$SCRATCH/err")" 'process limit reached')" "0:0" \
			"  $b control: --pids 200, which 40 forks stay under: hits 0, nothing said"
		;;
	enforced:*RLIMIT_NPROC*)
		is "$(json_eval "$rep" "d['limits']['pids']['hits'] is None")" true \
			"$b --pids 10 as RLIMIT_NPROC ($out): hits is null, the kernel counts nothing moat can read"
		schema_ok "$rep" "$b --pids 10 (RLIMIT_NPROC)"
		;;
	enforced:*)
		# runc's own cgroup (oci as root): gone with the container.
		is "$(json_eval "$rep" "d['limits']['pids'].get('hits', 0) is None")" true \
			"$b --pids 10 held by ${mech:0:60}: hits is null, never a 0 that hides the limit"
		R "$b" "$REPORTS/pidsf-$b.json" --pids 10 --read "$HDIR" -- sh -c "$HELPER forkbomb 40; exit 3" >/dev/null
		like "$(tr '\n' ' ' <"$SCRATCH/err")" "note: --pids 10 is held by .*which counts nothing moat can read.*hint: give it a higher --pids" \
			"  $b: a command that failed is told --pids may be why"
		R "$b" "$REPORTS/pidsf0-$b.json" --pids 10 --read "$HDIR" -- sh -c "$HELPER forkbomb 40; exit 0" >/dev/null
		unlike "$(cat "$SCRATCH/err")" "--pids 10 is held by" "  $b control: the same command succeeding gets no note"
		;;
	missing:*)
		is "$(has_hits "$rep" pids)" false "$b --pids missing ($(lim "$rep" pids reason | head -c 80)): no hits, nothing held"
		;;
	*)
		ok 1 "$b --pids 10: no verdict for pids in the report" || diag "moat said: $(tail -3 "$SCRATCH/err")"
		;;
	esac
done

# RLIMIT_NPROC: a failed command is told --pids may be why.
case "$(lim "$REPORTS/pids-native.json" pids mechanism)" in
*RLIMIT_NPROC*)
	R native "$REPORTS/nproc.json" --pids 10 --read "$HDIR" -- sh -c "$HELPER forkbomb 40; exit 3" >/dev/null
	like "$(tr '\n' ' ' <"$SCRATCH/err")" "note: --pids 10 is held by RLIMIT_NPROC \(no cgroup of moat's\), .*hint: give it a higher --pids" \
		"native --pids 10 as RLIMIT_NPROC, the command failed: a note names --pids"
	R native "$REPORTS/nproc0.json" --pids 10 --read "$HDIR" -- sh -c "$HELPER forkbomb 40; exit 0" >/dev/null
	unlike "$(cat "$SCRATCH/err")" "RLIMIT_NPROC" "  control: the same command succeeding gets no note"
	;;
*pids.max*) skip "RLIMIT_NPROC: --pids is a cgroup's for uid $(id -u)" ;;
*) skip "native --pids: $(lim "$REPORTS/pids-native.json" pids status)" ;;
esac

# --- --pids: said while the run goes on -------------------------------------
# The command hits the limit, then runs 3 s more, as a program that waits for
# a thread it could not start.  The warning must come while moat still runs.
live() { # live PIDS: "warned-while-running" or "", and $SCRATCH/live.err
	local pids=$1 i seen=""
	rm -f "$PROJ/bombed"
	"$MOAT" run --mode prefer --timeout 30 --write "$PROJ" --read "$HDIR" --pids "$pids" -- \
		sh -c "$HELPER forkbomb 40 >/dev/null; : >$PROJ/bombed; sleep 3" 2>"$SCRATCH/live.err" &
	local m=$!
	for i in $(seq 100); do [ -e "$PROJ/bombed" ] && break; sleep 0.1; done
	for i in $(seq 25); do
		if grep -q "warning: process limit reached (--pids $pids)" "$SCRATCH/live.err" && kill -0 "$m" 2>/dev/null; then
			seen=warned-while-running
			break
		fi
		sleep 0.1
	done
	wait "$m"
	echo "$seen"
}
case "$(lim "$REPORTS/pids-native.json" pids mechanism)" in
*pids.max*)
	is "$(live 10)" warned-while-running "native --pids 10, the command goes on after the refused forks: the warning comes during the run"
	like "$(tr '\n' ' ' <"$SCRATCH/live.err")" "the command runs on, but may fail or wait forever.*higher --pids" "  it says what may follow, and the flag"
	is "$(count "$(cat "$SCRATCH/live.err")" "$END_RE")" 1 "  and the end says it once"
	live 100 >/dev/null
	unlike "$(cat "$SCRATCH/live.err")" "process limit reached" "  control: --pids 100: nothing during the run or at its end"
	;;
*) skip "the warning during the run needs --pids held by moat's cgroup ($(lim "$REPORTS/pids-native.json" pids status))" ;;
esac

# --- node under --pids 5 ----------------------------------------------------
if command -v node >/dev/null; then
	out=$("$MOAT" run --mode prefer --timeout 5 --pids 5 -- node -e 'console.log("node ran")' 2>"$SCRATCH/node.err")
	rc=$?
	if [ "$out" = "node ran" ] && [ $rc = 0 ]; then
		unlike "$(cat "$SCRATCH/node.err")" "limit reached" "node under --pids 5 ran: nothing said"
	else
		like "$(cat "$SCRATCH/node.err")" "--pids 5" "node under --pids 5 did not run (exit $rc): moat's stderr names --pids"
	fi
	out=$("$MOAT" run --mode prefer --timeout 20 --pids 100 -- node -e 'console.log("node ran")' 2>"$SCRATCH/node.err")
	is "$out:$(count "$(cat "$SCRATCH/node.err")" -- '--pids')" "node ran:0" "  control: under --pids 100 node runs, nothing said"
else
	skip "node is not installed"
fi

# --- --memory: a child the OOM killer ends, the command going on ---------------
rep=$REPORTS/mem.json
R native "$rep" --memory 32M --read "$HDIR" -- sh -c "$HELPER alloc 200; echo went on" >"$SCRATCH/mem.out"
err=$(cat "$SCRATCH/err")
case "$(lim "$rep" memory status)" in
enforced)
	hits=$(lim "$rep" memory hits)
	[ -n "$hits" ] && [ "$hits" -ge 1 ] 2>/dev/null
	ok $? "native --memory 32M, a shell's child allocating 200 MiB: limits.memory.hits ${hits:-absent}"
	is "$(cat "$SCRATCH/mem.out")" "went on" "  the shell went on after its child was killed"
	is "$(count "$err" "memory limit reached \(--memory 32M\): the OOM killer ended [0-9]+ process")" 1 \
		"  moat says so once at the end, though the command itself was not killed" || diag "moat said: $(tail -3 "$SCRATCH/err")"
	like "$err" "hint: give the tree more memory with a higher --memory" "  the hint names the flag"
	schema_ok "$rep" "native --memory 32M"
	R native "$REPORTS/mem0.json" --memory 256M --read "$HDIR" -- sh -c "$HELPER alloc 100; echo went on" >/dev/null
	is "$(lim "$REPORTS/mem0.json" memory hits):$(count "$(cat "$SCRATCH/err")" 'memory limit reached')" "0:0" \
		"  control: --memory 256M, which 100 MiB stay under: hits 0, nothing said"
	;;
missing)
	like "$(lim "$rep" memory reason)" "cgroup" "native --memory missing: the reason names the cgroup ($(lim "$rep" memory reason | head -c 80))"
	is "$(has_hits "$rep" memory)" false "  no hits for a limit nothing held"
	skip_feature cgroup_memory "native --memory is missing: $(lim "$rep" memory reason | head -c 200)"
	;;
*) ok 1 "native --memory: no verdict" ;;
esac

# Under runc's own cgroup (oci as root) moat reads no OOM count: a SIGKILL
# gets a note that --memory may be why; control: 256M, which 100 MiB stay under.
case " $BACKENDS " in
*" oci "*)
	R oci "$REPORTS/mem-oci.json" --memory 32M -- "$HELPER" alloc 200 >/dev/null
	case "$(lim "$REPORTS/mem-oci.json" memory mechanism)" in
	*"cgroup made by"*)
		like "$(cat "$SCRATCH/err")" "note: --memory 32M is held by .*own cgroup, which moat cannot read: the SIGKILL may be its OOM killer" \
			"oci --memory 32M under the runtime's cgroup, killed: a note names --memory"
		R oci "$REPORTS/mem0-oci.json" --memory 256M -- "$HELPER" alloc 100 >/dev/null
		unlike "$(cat "$SCRATCH/err")" "--memory 256M is held by" "  control: --memory 256M, which 100 MiB stay under: none"
		;;
	*) skip "oci --memory is $(lim "$REPORTS/mem-oci.json" memory status) by $(lim "$REPORTS/mem-oci.json" memory mechanism | head -c 60)" ;;
	esac
	;;
*) skip "oci does not run here" ;;
esac

# --- the edges --------------------------------------------------------------
edge() { # edge ARGS...: moat's exit and stderr, the command /bin/true
	local out rc
	out=$("$MOAT" run --mode prefer --timeout 10 "$@" -- /bin/echo ran 2>&1)
	rc=$?
	printf '%s rc=%s\n' "$out" "$rc" | tr '\n' ' '
}
like "$(edge --pids 0)" "--pids 0: expected a positive whole number.*rc=125" "--pids 0: refused, naming the flag"
like "$(edge --memory 1)" "--memory 1: less than 1M.*rc=125" "--memory 1: refused, with the least it takes"
like "$(edge --memory 1.5G)" "--memory 1.5G: a fraction.*1536M.*rc=125" "--memory 1.5G: refused as a fraction, with the size to write instead"
like "$(edge --memory 64MiB --report-fd 3 3>"$REPORTS/mib.json")" "ran" "--memory 64MiB: a unit with iB is taken"
[ "$(lim "$REPORTS/mib.json" memory status)" = enforced ] &&
	is "$(lim "$REPORTS/mib.json" memory value)" 67108864 "  as 64 MiB"
# --pids 1: moat's init in the pid namespace is the one process; the
# command's own fork is refused, and moat says which limit did it.
case "$(lim "$REPORTS/pids-native.json" pids mechanism)" in
*pids.max*)
	like "$(edge --pids 1)" "process limit reached \(--pids 1\).*rc=125" "--pids 1: the run fails, naming --pids"
	;;
*) like "$(edge --pids 1)" "rc=" "--pids 1 as $(lim "$REPORTS/pids-native.json" pids status): no crash" ;;
esac
# No cgroup controllers on the host: missing with the reason, and require refuses.
out=$(MOAT_HOST_LIMIT=cgroup=0 "$MOAT" run --backend native --mode prefer --pids 10 --memory 64M --report-fd 3 \
	-- /bin/echo ran 2>/dev/null 3>"$REPORTS/nocg.json")
is "$out:$(lim "$REPORTS/nocg.json" memory status)" "ran:missing" "MOAT_HOST_LIMIT=cgroup=0: --memory is missing"
like "$(lim "$REPORTS/nocg.json" memory reason)" "disabled by MOAT_HOST_LIMIT" "  the reason says why"
case "$(lim "$REPORTS/nocg.json" pids mechanism)" in
*RLIMIT_NPROC*) ok 0 "  --pids falls back to RLIMIT_NPROC (uid $(id -u)), which is stricter, not weaker" ;;
*) is "$(lim "$REPORTS/nocg.json" pids status)" missing "  --pids is missing as root (RLIMIT_NPROC does not bind uid 0)" ;;
esac
schema_ok "$REPORTS/nocg.json" "MOAT_HOST_LIMIT=cgroup=0"
MOAT_HOST_LIMIT=cgroup=0 "$MOAT" run --backend native --memory 64M -- /bin/echo ran >/dev/null 2>&1
is "$?" 125 "  in require mode the run is refused"

done_testing
