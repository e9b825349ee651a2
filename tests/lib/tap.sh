# TAP helpers for the black-box tests (bash).  Source it; call `done_testing`
# at the end.  tests/run-all aggregates the TAP and prints the summary line.
#
# Skips: `skip_feature FEATURE REASON` marks a test skipped because a kernel
# feature is missing.  When MOAT_TEST_STRICT_SKIPS=1 (CI sets it) and the
# feature is in fact present (tests/lib/feature-present says so, independently
# of moat's own probe), the skip is a failure: a broken probe cannot hide.

TAP_N=0
TAP_FAILED=0
ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BUILD=${BUILD:-$ROOT/build}
MOAT=${MOAT:-$BUILD/moat}
HELPER=${HELPER:-$BUILD/helpers/testhelper}

ok() { # ok COND_STATUS DESCRIPTION
	local status=$1
	shift
	TAP_N=$((TAP_N + 1))
	if [ "$status" -eq 0 ]; then
		echo "ok $TAP_N - $*"
	else
		echo "not ok $TAP_N - $*"
		TAP_FAILED=$((TAP_FAILED + 1))
	fi
}

is() { # is GOT WANT DESCRIPTION
	local got=$1 want=$2
	shift 2
	if [ "$got" = "$want" ]; then
		ok 0 "$*"
	else
		ok 1 "$*"
		printf '#   got:  %s\n#   want: %s\n' "$got" "$want"
	fi
}

# grep -E takes a pattern of several lines as alternatives (any one line
# matching passes), so like and unlike refuse such a pattern: compare whole
# text with `is`, or one pattern per line.
multiline_pattern() {
	case $1 in
	*$'\n'*)
		ok 1 "$2"
		echo "#   the pattern has several lines, which grep -E takes as alternatives: use like_lines or is"
		return 0
		;;
	esac
	return 1
}

# like_lines GOT REGEX DESCRIPTION: each line of REGEX matches a line of GOT,
# in the same order (the first line may match anywhere before the second).
like_lines() {
	local got=$1 re=$2 rest line n
	shift 2
	rest=$got
	while IFS= read -r line; do
		n=$(printf '%s\n' "$rest" | grep -nE -m1 -- "$line" | cut -d: -f1)
		if [ -z "$n" ]; then
			ok 1 "$*"
			printf '#   got:  %s\n#   no line (after those matched before) matches: %s\n' \
				"$(printf '%s' "$got" | head -c 600)" "$line"
			return
		fi
		rest=$(printf '%s\n' "$rest" | tail -n +$((n + 1)))
	done <<<"$re"
	ok 0 "$*"
}

like() { # like GOT REGEX DESCRIPTION
	local got=$1 re=$2
	shift 2
	multiline_pattern "$re" "$*" && return
	if printf '%s' "$got" | grep -Eq -- "$re"; then
		ok 0 "$*"
	else
		ok 1 "$*"
		printf '#   got:  %s\n#   want match: %s\n' "$(printf '%s' "$got" | head -c 600)" "$re"
	fi
}

unlike() {
	local got=$1 re=$2
	shift 2
	multiline_pattern "$re" "$*" && return
	if printf '%s' "$got" | grep -Eq -- "$re"; then
		ok 1 "$*"
		printf '#   got:  %s\n#   must not match: %s\n' "$(printf '%s' "$got" | head -c 600)" "$re"
	else
		ok 0 "$*"
	fi
}

diag() { printf '# %s\n' "$*"; }

# wait_ready SECONDS WHAT CMD...: wait (SECONDS at most) until CMD succeeds,
# asking every 0.05 s.  One that never does is a failing test naming WHAT,
# and status 1: the caller does not go on as if it were ready (a server not
# listening, a marker never written), whose checks would then fail, or
# pass, for that reason and not for moat's.  The bound is generous: a
# loaded machine (three lanes on two CPUs) starts a process in seconds, and
# a ready thing ends the wait at once.
wait_ready() {
	local seconds=$1 what=$2 end
	shift 2
	end=$((SECONDS + seconds))
	until "$@" 2>/dev/null; do
		if [ "$SECONDS" -ge "$end" ]; then
			ok 1 "$what never became ready (waited $seconds s)"
			return 1
		fi
		sleep 0.05
	done
}

# need_ready SECONDS WHAT CMD...: wait_ready, and the end of the test file
# when it fails: what comes after needs it (the servers every check talks
# to).
need_ready() {
	wait_ready "$@" && return 0
	done_testing
	exit 1
}

# skip REASON: one check that cannot run here (not a pass, not a failure).
skip() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N # SKIP $*"; }

# skip_all REASON: the whole test cannot run here (a tool it needs is not
# installed): one counted skip, and the end (a bare 1..0 counts as nothing).
skip_all() {
	echo "ok 1 # SKIP $*"
	echo "1..1"
	exit 0
}

feature_present() { "$ROOT/tests/lib/feature-present" "$1"; }

skip_feature() { # skip_feature FEATURE REASON
	local feature=$1
	shift
	TAP_N=$((TAP_N + 1))
	if [ "${MOAT_TEST_STRICT_SKIPS:-0}" = 1 ] && feature_present "$feature"; then
		echo "not ok $TAP_N - skipped for missing $feature, but the host has it: $*"
		TAP_FAILED=$((TAP_FAILED + 1))
	else
		echo "ok $TAP_N # SKIP kernel feature missing: $feature: $*"
	fi
}

# with_default_signals CMD...: exec CMD with SIGINT and SIGQUIT at their
# defaults, as a terminal's foreground job has them.  A script's `CMD &`
# starts CMD with both ignored, and moat keeps what its caller ignores
# ignored for the command (launch/signals.h).
with_default_signals() {
	exec /usr/bin/python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGQUIT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

# tap_relay N DESCRIPTION < LINES: the "ok - ..."/"not ok - ..." lines a
# helper program printed, numbered here; fewer than N of them (the helper
# died half-way) is one failure more, naming DESCRIPTION.
tap_relay() {
	local want=$1 what=$2 line got=0
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok 0 "${line#ok - }" ;;
		"not ok - "*) ok 1 "${line#not ok - }" ;;
		*) printf "# %s\n" "$line"; continue ;;
		esac
		got=$((got + 1))
	done
	[ "$got" -ge "$want" ] || ok 1 "$what: $got of $want checks reported (the helper failed; its output is above)"
}

done_testing() {
	echo "1..$TAP_N"
	[ "$TAP_FAILED" -eq 0 ]
}

# chain_alive FILE: the heartbeat file of `testhelper forkchain` still grows
# (the chain is alive; its members live too briefly for a scan of /proc).
chain_alive() {
	local a b
	sleep 0.3
	a=$(stat -c %s "$1" 2>/dev/null || echo 0)
	sleep 0.5
	b=$(stat -c %s "$1" 2>/dev/null || echo 0)
	[ "$a" != "$b" ]
}

# backends_here: native, and each of bwrap, oci, gvisor and firejail whose
# dry run is not unavailable for lack of its tool (as this user): the
# backends a limit is tried under.
backends_here() {
	local b r out=native
	for b in bwrap oci gvisor firejail; do
		r=$SCRATCH/dry-$b.json
		"$MOAT" run --backend "$b" --mode prefer --dry-run -- /bin/true >"$r" 2>/dev/null
		[ "$(json_get "$r" '["status"]')" != unavailable ] && out="$out $b"
	done
	echo "$out"
}

# forkbomb_tries CMD...: CMD's output (a `testhelper forkbomb` under a
# limit), run again at most 5 more times, 2 s apart, while it printed
# nothing.  Where --pids is RLIMIT_NPROC, every task of this uid on the host
# counts, and in CI a suite of another lane runs as the same uid: with the
# limit's worth of its tasks alive, the sandbox's own start (bwrap's
# namespaces, moat's init) fails with EAGAIN before the bomb runs (official
# CI, asan nobody: "a fork bomb gets ? processes").  When every try said
# nothing, the uid's task count is said as a TAP comment.
forkbomb_tries() {
	local out try
	for try in 1 2 3 4 5 6; do
		out=$("$@")
		[ -n "$out" ] && break
		[ "$try" = 6 ] || sleep 2
	done
	[ -n "$out" ] || echo "# no output in 6 tries; tasks of uid $(id -u) on the host: $(ps -L -u "$(id -u)" --no-headers | wc -l)" >&2
	printf '%s\n' "$out"
}

# A scratch directory every user can write, and $REPORTS, a directory for
# the report files moat writes: only this user's and outside $SCRATCH,
# since moat refuses a report in a directory others can write or inside a
# write grant (docs/report.md).  Both removed at exit (a suite with a trap
# of its own removes them there).
scratch() {
	SCRATCH=$(mktemp -d /tmp/moat-test.XXXXXX)
	chmod 0777 "$SCRATCH"
	REPORTS=$(mktemp -d /tmp/moat-reports.XXXXXX)
	trap 'rm -rf "$SCRATCH" "$REPORTS"' EXIT
}
# The same, sticky (as /tmp): `moat export -o DIR` refuses a DIR below a
# directory others can write without the sticky bit, where any user could
# rename the directory below away and put their own in its place
# (docs/backends.md).
scratch_sticky() {
	scratch
	chmod 1777 "$SCRATCH"
}

# Report field: what python3 prints for eval("d" + EXPR) over the document
# d.  $BUILD/helpers/jsonget answers a chain of subscripts without a Python
# start-up (tens of ms on this kernel, more than the run the report is
# of); it exits 3 for anything else, and Python (Debian's, standard library
# only) answers that.
json_get() { # json_get FILE EXPR   e.g. json_get r.json '["status"]'
	local rc
	jsonget_try "$1" "$2"
	rc=$?
	[ "$rc" -eq 3 ] || return "$rc"
	json_py "$1" "$2"
}
# jsonget_try [--null-json] FILE EXPR: the helper's answer, or exit 3 (and
# nothing printed) where Python must answer, the helper not built included.
jsonget_try() {
	[ -x "$BUILD/helpers/jsonget" ] || return 3
	"$BUILD/helpers/jsonget" "$@"
}
# json_py FILE EXPR: Python's answer, the one json_get gives.
json_py() {
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=eval("d"+sys.argv[2]); print(json.dumps(v) if isinstance(v,(dict,list)) else v)' "$1" "$2"
}

# A python expression over a JSON file's document d, printed as JSON.
json_eval() { # json_eval FILE EXPR   e.g. json_eval r.json '[e["text"] for e in d["network"]["allow"]]'
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(eval(sys.argv[2])))' "$1" "$2"
}

# valid_report FILE DESC: FILE is a moat report that fits the checked-in
# schema (docs/report.schema.json, by tests/lib/validate_schema.py).
valid_report() {
	local errs
	errs=$(/usr/bin/python3 "$ROOT/tests/lib/validate_schema.py" "$ROOT/docs/report.schema.json" "$1" 2>&1)
	ok $? "$2 ($(basename "$1") is valid against docs/report.schema.json)"
	[ -z "$errs" ] || printf '%s\n' "$errs" | head -5 | sed 's/^/#   /'
}

# golden_check GOT WANT LABEL: GOT must equal the golden file WANT (diff on
# failure); MOAT_GOLDEN_UPDATE=1 copies GOT over WANT instead.
golden_check() {
	local got=$1 want=$2 label=$3
	if [ "${MOAT_GOLDEN_UPDATE:-0}" = 1 ]; then
		mkdir -p "$(dirname "$want")"
		cp "$got" "$want"
		ok 0 "$label: golden regenerated"
	elif [ ! -f "$want" ]; then
		ok 1 "$label: golden $want is missing (MOAT_GOLDEN_UPDATE=1 makes it)"
	elif diff -u "$want" "$got" >"$got.diff"; then
		ok 0 "$label matches the golden"
	else
		ok 1 "$label differs from the golden"
		sed 's/^/#   /' "$got.diff" | head -40
	fi
}
