#!/bin/bash
# The process state a careless caller, a CI runner or a container hands
# moat: a tiny stack limit, standard descriptors closed where no /dev/null
# exists, a umask that takes the owner's own bits.  Each gets a correct
# run or a clear error naming the cause, never a crash or a sandbox the
# command cannot use while the report says enforced.  (tests/blackbox/
# edges.sh has the supervisor's edges: signals, closed and broken streams,
# descriptors, deleted and long working directories, a read-only /tmp.)
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
UID_NOW=$(id -u)
cd "$SCRATCH" || exit 1
NOFB="MOAT_HOST_LIMIT=userns=0,root=0"

# --- 1. a stack limit too small for moat ---------------------------------------
# moat's run path needs ~110 KiB of stack (~130 KiB in the sanitizer
# build), a config nested as deep as the JSON reader allows ~250 KiB.
# Under `ulimit -s 64` moat died of SIGSEGV before saying anything: exit
# 139, which by the exit status contract says the *command* was killed by
# signal 11, when it never ran.  Now: 125 and the limit named, before any
# deep frame.
for what in "run -- /bin/echo ran" "run --mode off -- /bin/echo ran" "probe"; do
	out=$(bash -c 'ulimit -s 64 && exec "$@"' sh "$MOAT" $what 2>&1)
	rc=$?
	like "$rc: $out" '^125: moat: the stack limit is 64 KiB \(RLIMIT_STACK, ulimit -s\).*moat needs 1024 KiB' \
		"ulimit -s 64, moat $what: 125, naming the stack limit (got $rc)"
done
like "$(bash -c 'ulimit -s 64 && exec "$@"' sh "$MOAT" run -- /bin/true 2>&1)" 'hint: raise it: ulimit -s 8192' \
	"  with the way to raise it"
out=$(bash -c 'ulimit -s 1024 && exec "$@"' sh "$MOAT" run -- /bin/echo ran 2>&1)
is "$?:$out" "0:ran" "control: ulimit -s 1024, the floor: the command runs"
# Only the soft limit is low: the hard one is what it can be raised to.
like "$(bash -c 'ulimit -Ss 100 && exec "$@"' sh "$MOAT" run -- /bin/true 2>&1)" \
	'stack limit is 100 KiB \(RLIMIT_STACK' "  a low soft limit under a higher hard one: the same"

# --- 2. a closed standard descriptor, and no /dev/null -----------------------------
# moat puts /dev/null on a closed 0, 1 or 2 before it opens anything (else
# the report or a grant's descriptor would take that number).  In a chroot
# or container without /dev it cannot, and exited 125 without a word,
# with stderr open.  Now it says which descriptor and why.  An empty tmpfs
# over /dev, in a mount namespace of the test's own.
nodev() { unshare -Urm sh -c 'mount -t tmpfs tmpfs /dev && exec "$@"' nodev "$@"; }
if ! unshare -Urm true 2>/dev/null; then
	skip_feature userns "unshare -Urm: no user namespace for the test's empty /dev"
	skip "  (stdout closed)"
	skip "  (control)"
else
	out=$(nodev "$MOAT" run -- /bin/true 2>&1 0<&-)
	like "$?: $out" '^125: moat: standard input \(fd 0\) is closed, and /dev/null cannot be opened in its place: No such file or directory' \
		"stdin closed and no /dev/null: 125, saying so"
	out=$(nodev "$MOAT" run -- /bin/true 2>&1 >&- | cat)
	like "$out" '^moat: standard output \(fd 1\) is closed, and /dev/null' "  stdout closed: the same, naming fd 1"
	out=$(nodev "$MOAT" run --mode prefer -- /bin/echo ran 2>&1)
	unlike "$out" 'is closed, and /dev/null' "  control: with 0, 1 and 2 open, no such error (exit $?)"
fi

# --- 3. the caller's umask is the command's, not the sandbox's -------------------
# The native child made the view's directories (the parents of each grant
# on the sandbox's tmpfs) with the caller's umask: under `umask 0777` (or
# 0177, which scripts set before writing secrets) they were mode 000 or
# 0600, and the command could not reach its own --write grant; without
# namespaces the per-run TMPDIR was 0600 or 000 while fs.tmp said
# enforced.  Now moat makes what is its own with its own modes, and the
# command still gets the caller's umask.
# The grant outside /tmp, whose parents the view makes on its own tmpfs.
P=$(mktemp -d /var/tmp/moat-test.XXXXXX) && chmod 0777 "$P"
trap 'rm -rf "$SCRATCH" "$REPORTS" "$P"' EXIT
for u in 0177 0777; do
	out=$(sh -c 'umask '$u' && exec "$@"' sh "$MOAT" run --write "$P" -- /bin/sh -c 'umask; echo x >"$1/f$2" && echo wrote' sh "$P" $u 2>&1)
	is "$?:$(echo $out)" "0:$u wrote" "umask $u, native: the command writes in its --write grant, with the caller's umask"
	out=$(sh -c 'umask '$u' && exec "$@"' sh env $NOFB "$MOAT" run --mode prefer --report-fd 3 -- \
		/bin/sh -c 'umask; echo x >"$TMPDIR/a" && echo wrote' 3>"$REPORTS/um$u.json" 2>/dev/null)
	is "$?:$(echo $out):$(json_get "$REPORTS/um$u.json" '["properties"]["fs.tmp"]["status"]')" "0:$u wrote:enforced" \
		"umask $u, without namespaces: the per-run TMPDIR is writable, fs.tmp enforced, the caller's umask"
done
out=$(sh -c 'umask 0022 && exec "$@"' sh "$MOAT" run --write "$P" -- /bin/sh -c 'umask; echo x >"$1/g" && echo wrote' sh "$P" 2>&1)
is "$?:$(echo $out)" "0:0022 wrote" "control: umask 0022, the same run"
# What moat makes for the caller still follows the caller's umask: the
# report (0600 less it), a --mkdir grant (as mkdir -p).
sh -c 'umask 0277 && exec "$@"' sh "$MOAT" run --report "$REPORTS/m.json" -- /bin/true 2>/dev/null
is "$?:$(stat -c %a "$REPORTS/m.json")" "0:400" "umask 0277: the report is 0400"
sh -c 'umask 0002 && exec "$@"' sh "$MOAT" run --mkdir --write "$P/made/sub" -- /bin/true 2>/dev/null
is "$?:$(stat -c %a "$P/made" "$P/made/sub" | tr '\n' ' ')" "0:775 775 " "umask 0002: --mkdir makes 0775 directories, as mkdir -p"

# --- 4. this user's process limit reached ---------------------------------------
# A fork refused with EAGAIN said only "forking moat's guard: Resource
# temporarily unavailable" (or "creating the sandbox"): now the hint names
# RLIMIT_NPROC, its value and this uid's task count.  Run as a uid no other
# test uses (65533), so other suites' processes do not count: root only.
if [ "$UID_NOW" = 0 ] && command -v setpriv >/dev/null; then
	# LeakSanitizer (SAN=1) checks at exit from a thread of its own, which
	# ulimit -u 1 refuses: it then exits 1 instead of moat's status.
	asuser() { setpriv --reuid=65533 --regid=65533 --clear-groups env PATH=/usr/bin:/bin HOME=/nonexistent \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"; }
	mkdir -p "$SCRATCH/np" && chmod 0777 "$SCRATCH/np"
	out=$(cd "$SCRATCH/np" && asuser bash -c 'ulimit -u 1 && exec "$@"' sh "$MOAT" run -- /bin/true 2>&1)
	rc=$?
	is "$rc" 125 "ulimit -u 1: the sandbox cannot be made, exit 125"
	like "$out" 'hint: this user.s process limit is 1 \(RLIMIT_NPROC, ulimit -u\) and [0-9]+ of its processes' \
		"  the hint names RLIMIT_NPROC ($(printf '%s' "$out" | tail -1 | head -c 160))"
	out=$(cd "$SCRATCH/np" && asuser env $NOFB bash -c 'ulimit -u 1 && exec "$@"' sh "$MOAT" run --mode prefer -- /bin/true 2>&1)
	is "$?" 125 "  without namespaces too: exit 125"
	like "$out" "forking moat.s guard: Resource temporarily unavailable" "  the guard's fork refused"
	like "$out" 'hint: this user.s process limit is 1 \(RLIMIT_NPROC' "  the hint names RLIMIT_NPROC"
	out=$(cd "$SCRATCH/np" && asuser bash -c 'ulimit -u 64 && exec "$@"' sh "$MOAT" run -- /bin/echo ran 2>&1)
	is "$?:$out" "0:ran" "control: ulimit -u 64, the command runs"
else
	for _ in 1 2 3 4 5 6; do skip "the process-limit cases run as root, as uid 65533 (no other suite's processes counted)"; done
fi

# --- 5. /proc not mounted ---------------------------------------------------------
# moat reads /proc/self/mountinfo to find other mounts of the denied paths,
# and stops when it cannot (a denied path bound elsewhere would be missed).
# Without /proc it said only "No such file or directory": now the hint
# says to mount it.  Built in a private mount namespace (root).
if [ "$UID_NOW" = 0 ] && command -v unshare >/dev/null; then
	out=$(cd "$SCRATCH" && unshare -m --propagation private bash -c 'mount -t tmpfs none /proc && exec "$@"' sh "$MOAT" run -- /bin/true 2>&1)
	rc=$?
	# The sanitizer build's LeakSanitizer needs /proc at exit, and reads
	# ASAN_OPTIONS from /proc too (so it cannot be turned off here): it
	# ends that process with 1 after moat's own refusal was said.
	if grep -qa '__asan_init' "$MOAT"; then
		skip "/proc not mounted: exit status under the sanitizer build is LeakSanitizer's (it needs /proc)"
	else
		is "$rc" 125 "/proc not mounted: refused, exit 125"
	fi
	like "$out" "reading /proc/self/mountinfo" "  naming what it could not read"
	like "$out" "hint: /proc is not mounted here: mount it" "  with the fix"
else
	for _ in 1 2 3; do skip "/proc hidden in a private mount namespace: root only"; done
fi

done_testing
