#!/usr/bin/env bash
# moat's own resident memory while the command runs (issue 21's target:
# the supervisor's peak under 2 MiB, measured by `make bench`,
# docs/performance.md section 4).  Most of that peak is the static binary's
# file pages, which move with the machine; what this test pins is moat's
# own share that does not:
#   - the stack: structures of tens of KB in the frames of the run path (a
#     plan's verdicts, a candidate backend, the terminal's buffers, the
#     runner's fetch plan) kept ~70 KB of stack resident for the whole run;
#     they live on the heap, or only in the frames that need them;
#   - the static binary's relocations packed (DT_RELR): 3400 RELA entries
#     were an 80 KB segment read at every start;
#   - the code a run calls laid out together (src/link/hot.ld): the kernel
#     maps a binary's cached pages 64 KiB around each page touched, and with
#     that code spread over the whole text nearly all 1.35 MB of it was
#     resident (1280 kB; 510 kB together), the supervisor's peak 2080 kB.
# Each is read off the running supervisor (/proc/PID/smaps), the process
# that stays for the whole run.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
# moat makes itself non-dumpable while it runs (api/run.c): its
# /proc/PID/smaps is then root's to read.
[ "$(id -u)" = 0 ] || skip_all "reads moat's /proc/PID/smaps, which only root can while moat runs"
if grep -q AddressSanitizer "$MOAT" 2>/dev/null || ldd "$MOAT" 2>/dev/null | grep -q libasan; then
	skip_all "the sanitizer build's stack and heap are the sanitizer's (redzones, fake stacks)"
fi
mkdir -p "$SCRATCH/home" "$SCRATCH/proj"
# The stack's top holds the environment and argv: a small, fixed one.
# Where in its page the stack begins is random (ASLR), so the same run
# touches one page more or less from one start to the next: the same
# binary measured 116 and 120 kB in turn (CI, 2026-12-07).  The bound
# allows that page; what it is for is the tens of kB a large structure
# in a frame adds.
STACK_MAX_KB=120

# snapshot ARGS...: the supervisor's /proc/PID/smaps and status, once the
# command runs (its child exists: planning is over), into $SCRATCH/smaps
# and $SCRATCH/status; both empty if it never ran.
snapshot() {
	local pid i
	: >"$SCRATCH/smaps"
	: >"$SCRATCH/status"
	(cd "$SCRATCH/proj" && exec env -i PATH=/usr/bin:/bin HOME="$SCRATCH/home" LANG=C.UTF-8 \
		${LIMIT:+MOAT_HOST_LIMIT=$LIMIT} "$MOAT" run "$@" -- /bin/sleep 2) >/dev/null 2>"$SCRATCH/err" &
	pid=$!
	for i in $(seq 100); do
		# Without /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN),
		# half a second is planning's time many times over.
		if [ -n "$(cat "/proc/$pid/task/$pid/children" 2>/dev/null)" ] ||
			{ [ "$i" -ge 10 ] && [ ! -e "/proc/$pid/task/$pid/children" ] && [ -e "/proc/$pid/smaps" ]; }; then
			sleep 0.2
			cat "/proc/$pid/smaps" >"$SCRATCH/smaps" 2>/dev/null
			cat "/proc/$pid/status" >"$SCRATCH/status" 2>/dev/null
			break
		fi
		sleep 0.05
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# stack_kb ARGS...: the supervisor's resident stack, in kB; "" if it never ran.
stack_kb() {
	snapshot "$@"
	awk '/^[0-9a-f]+-/ { name = $6 } /^Rss:/ && name == "[stack]" { print $2 }' "$SCRATCH/smaps"
}

# --mode prefer: the stack is the same, and a host without namespaces
# still runs the command (require would refuse it before it starts).
for args in "--profile strict --mode prefer" "--profile mcp --mode prefer"; do
	# shellcheck disable=SC2086  # the words are the arguments
	kb=$(stack_kb $args)
	[ -n "$kb" ] || diag "$(cat "$SCRATCH/err")"
	ok $([ -n "$kb" ] && [ "$kb" -le "$STACK_MAX_KB" ]; echo $?) \
		"moat run $args: the supervisor's resident stack is ${kb:-?} kB (at most $STACK_MAX_KB)"
done
# The fallback without namespaces plans the same way and has no init.
kb=$(LIMIT=userns=0,root=0 stack_kb --backend native --mode prefer --profile strict)
[ -n "$kb" ] || diag "$(cat "$SCRATCH/err")"
ok $([ -n "$kb" ] && [ "$kb" -le "$STACK_MAX_KB" ]; echo $?) \
	"the fallback without namespaces: the supervisor's resident stack is ${kb:-?} kB (at most $STACK_MAX_KB)"

# The relocations: only a static PIE relocates itself (STATIC=0 leaves
# them to ld.so, which maps them from the shared page cache).
if ! command -v readelf >/dev/null; then
	diag "readelf (binutils) is not installed: the relocations are not checked"
elif readelf -lW "$MOAT" | grep -q INTERP; then
	diag "a dynamically linked moat (STATIC=0): its relocations are the loader's"
else
	readelf -SW "$MOAT" | grep -q '\.relr\.dyn'
	ok $? "the static moat's relative relocations are packed (a .relr.dyn section)"
	n=$(readelf -rW "$MOAT" | grep -c R_X86_64_RELATIVE)
	ok $([ "$n" -lt 100 ]; echo $?) "  and few are left unpacked ($n R_X86_64_RELATIVE)"

	# The code a run calls comes first, in its own output section.
	first=$(readelf -SW "$MOAT" | awk '$0 ~ / AX / { sub(/^.*\] */, ""); print $1 }' |
		grep -v -E '^\.(init|plt|plt\.got|plt\.sec)$' | head -n 1)
	is "$first" .text.moat_hot "the code a run calls is laid out first (src/link/hot.ld)"
	# Its effect, read off the running supervisor: the executable mapping
	# of moat's binary, resident, and the peak.  The bound on the code is
	# where one 64 KiB window more or less (the load address is random)
	# stays well under the 1280 kB the spread-out layout kept resident.
	TEXT_MAX_KB=900
	HWM_MAX_KB=2048
	snapshot --profile strict
	text=$(awk -v exe="$(readlink -f "$MOAT")" '/^[0-9a-f]+-/ { x = ($2 ~ /x/ && $6 == exe) }
		/^Rss:/ && x { print $2 }' "$SCRATCH/smaps")
	[ -n "$text" ] || diag "$(cat "$SCRATCH/err")"
	ok $([ -n "$text" ] && [ "$text" -le "$TEXT_MAX_KB" ]; echo $?) \
		"moat run --profile strict: the supervisor's resident code is ${text:-?} kB (at most $TEXT_MAX_KB)"
	hwm=$(awk '/^VmHWM:/ { print $2 }' "$SCRATCH/status")
	ok $([ -n "$hwm" ] && [ "$hwm" -le "$HWM_MAX_KB" ]; echo $?) \
		"  and its peak resident set is ${hwm:-?} kB (issue 21's target: at most $HWM_MAX_KB)"
fi
done_testing
