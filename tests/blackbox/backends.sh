#!/usr/bin/env bash
# The same small policy suite, for real, under every backend installed here
# (issue 6, Tests): native, bwrap, firejail, gvisor (runsc) and oci (crun
# and runc); nono and nsjail where someone installed them.  For each backend:
#
#   - what it claims on this host is read from its report, and must hold
#     at least the properties listed in EXPECT below (a backend that starts
#     claiming less is a failure here, not a silent skip);
#   - every property it claims is attacked inside the sandbox and the
#     attempt must fail; the same attempt under --mode off must succeed
#     (the controls run once, they do not depend on the backend);
#   - exit status, the exact environment and --timeout are checked too.
#
# A backend that is not installed must give `unavailable` with its install
# hint; one that cannot run for this user must say why in its verdicts.
# Runs as root, as uid 65534 and with the sanitizer moat (tests/run-all).
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch_sticky
unset MOAT_HOST_LIMIT MOAT_OCI_RUNTIME
PY=/usr/bin/python3
UID_NOW=$(id -u)
UNIQ="$$-$RANDOM$RANDOM"
BG_PIDS=""
cleanup() {
	local p
	for p in $BG_PIDS; do kill -9 "$p" 2>/dev/null; done
	rm -f "/tmp/moat-inside-$UNIQ"
	rm -rf "$SCRATCH" "$REPORTS"
}
trap cleanup EXIT

# --- fixtures ---------------------------------------------------------------
HOMED=$SCRATCH/home
PROJ=$SCRATCH/proj
OUTSIDE=$SCRATCH/outside
RO=$SCRATCH/ro
SOCKD=$SCRATCH/sock
mkdir -p "$HOMED/.ssh" "$PROJ" "$OUTSIDE" "$RO" "$SOCKD"
SSH_MARK="moat-ssh-key-$UNIQ" OUT_MARK="moat-outside-$UNIQ" RO_MARK="moat-ro-$UNIQ" ENV_MARK="moat-env-$UNIQ"
echo "$SSH_MARK" >"$HOMED/.ssh/id_ed25519"
chmod 0600 "$HOMED/.ssh/id_ed25519"
echo "$OUT_MARK" >"$OUTSIDE/canary.txt"
echo "$RO_MARK" >"$RO/file.txt"
chmod -R a+rwX "$PROJ"
cd /

M() { # M BACKEND ARGS... : moat run under BACKEND with the fake HOME
	local b=$1 rc try
	shift
	# runsc itself failing to start its sandbox ("cannot create sandbox:
	# ... waiting for sandbox to start: EOF", seen once in a CI run with
	# three lanes loading the machine) ran nothing: that run says nothing
	# of a property, so it is tried again, twice at most, and said.
	for try in 1 2 3; do
		env HOME="$HOMED" MOAT_TEST_TOKEN="$ENV_MARK" "$MOAT" run --backend "$b" "$@" 2>"$SCRATCH/last.err"
		rc=$?
		cat "$SCRATCH/last.err" >>"$SCRATCH/all.err"
		[ "$b" = gvisor ] && [ $rc -ge 125 ] && [ $try -lt 3 ] &&
			grep -q 'cannot create sandbox' "$SCRATCH/last.err" || break
		echo "# [$b exit $rc] runsc did not start its sandbox; again (try $((try + 1)))" >&2
	done
	# A run that did not reach its command (moat's 125, the tool's 126 or
	# 127, a signal) says why in the TAP: its stdout, which the checks
	# read, is then empty.
	[ $rc -ge 125 ] && tail -3 "$SCRATCH/last.err" | sed "s/^/# [$b exit $rc] /" >&2
	return $rc
}
S=(--profile strict --read "$RO" --write "$PROJ")
# The suite runs in prefer mode: a backend that lacks some property (firejail
# has no read allow-list) still runs, and every property it does claim is
# attacked.  Its status must then be degraded, and require mode must refuse.
SP=(--mode prefer "${S[@]}")
OFF=(--mode off --profile strict)
prop_status() { json_get "$1" "[\"properties\"][\"$2\"][\"status\"]" 2>/dev/null; }
claims() { # claims REPORT: the enforced properties, sorted, space-separated
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(sorted(k for k,v in d["properties"].items() if v["status"]=="enforced")))' "$1"
}

# What each backend must claim on this host (kernel with Landlock, seccomp
# and user namespaces), as root and unprivileged.  Derived from what each
# tool does (docs/backends.md); anything extra it claims is attacked too.
declare -A EXPECT
EXPECT[native]="fs.read fs.write fs.secrets fs.tmp net.none ipc.abstract ipc.unix proc.pid proc.ptrace sys.filter tty.inject env.curated fd.clean res.limits"
EXPECT[bwrap]="fs.read fs.write fs.secrets fs.tmp net.none ipc.abstract ipc.unix proc.pid proc.ptrace sys.filter tty.inject env.curated fd.clean res.limits"
EXPECT[firejail]="fs.tmp net.none ipc.abstract ipc.unix proc.pid proc.ptrace sys.filter tty.inject env.curated fd.clean res.limits"
# gVisor binds each grant by its name and numbers its own files: moat cannot
# check inside what runsc bound, so fs.read, fs.write and fs.secrets are
# missing there (tests/blackbox/oci_binds.sh).
EXPECT[gvisor]="fs.tmp net.none ipc.abstract ipc.unix proc.pid proc.ptrace sys.filter env.curated fd.clean res.limits"
# gVisor passes a terminal on fds 0-2 through: tty.inject is claimed only
# when none is one (the runs below capture stdout and stderr).
[ -t 0 ] || EXPECT[gvisor]="${EXPECT[gvisor]} tty.inject"
EXPECT[nono]="proc.ptrace res.limits"
EXPECT[nsjail]="fs.read fs.write fs.secrets fs.tmp net.none ipc.abstract ipc.unix proc.pid proc.ptrace sys.filter tty.inject env.curated fd.clean res.limits"
EXPECT[oci]="fs.read fs.write fs.secrets fs.tmp net.none ipc.abstract ipc.unix proc.pid proc.ptrace sys.filter tty.inject env.curated fd.clean res.limits"

# --- listeners for net.* and ipc.* (bounded by their own deadline) -------------
cat >"$SCRATCH/listen.py" <<'EOF'
import os, select, socket, sys, time
ready, log, upath, aname = sys.argv[1:5]
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(16)
p = socket.socket(socket.AF_UNIX); p.bind(upath); p.listen(16); os.chmod(upath, 0o777)
a = socket.socket(socket.AF_UNIX); a.bind("\0" + aname); a.listen(16)
kinds = {t: "tcp", p: "unix", a: "abstract"}
with open(ready + ".tmp", "w") as f:
    f.write("%d\n" % t.getsockname()[1])
os.rename(ready + ".tmp", ready)
end = time.time() + 600
with open(log, "a", buffering=1) as out:
    while time.time() < end:
        r, _, _ = select.select(list(kinds), [], [], 0.5)
        for s in r:
            c, _ = s.accept()
            out.write("%s conn\n" % kinds[s])
            c.close()
EOF
ABS_NAME="moat-test-abstract-$UNIQ"
"$PY" "$SCRATCH/listen.py" "$SCRATCH/ports" "$SCRATCH/listen.log" "$SOCKD/s.sock" "$ABS_NAME" \
	</dev/null >/dev/null 2>"$SCRATCH/listen.err" &
BG_PIDS="$BG_PIDS $!"
disown $!
need_ready 30 "the test listener (listen.py: its ports file)" test -s "$SCRATCH/ports"
read -r TCP_PORT <"$SCRATCH/ports" 2>/dev/null
: >>"$SCRATCH/listen.log"
count() { grep -c "^$1 " "$SCRATCH/listen.log"; }

env MOAT_CANARY=1 sleep 600 </dev/null >/dev/null 2>&1 &
CANARY=$!
BG_PIDS="$BG_PIDS $CANARY"
disown $!
alive() { kill -0 "$CANARY" 2>/dev/null; }

# --- the controls: every attempt below works without a sandbox ---------------
c() { env HOME="$HOMED" MOAT_TEST_TOKEN="$ENV_MARK" "$MOAT" run "${OFF[@]}" -- "$@" 2>/dev/null; }
like "$(c "$HELPER" read "$HOMED/.ssh/id_ed25519")" "$SSH_MARK" "control: the key is readable unsandboxed"
like "$(c "$HELPER" read "$OUTSIDE/canary.txt")" "$OUT_MARK" "control: the outside canary is readable unsandboxed"
c "$HELPER" write "$OUTSIDE/control.txt" >/dev/null
[ -e "$OUTSIDE/control.txt" ]
ok $? "control: writing outside works unsandboxed"
if [ -n "${TCP_PORT:-}" ]; then
	is "$(c "$HELPER" tcp 127.0.0.1 "$TCP_PORT")" OK "control: the loopback listener is reachable unsandboxed"
	is "$(c "$HELPER" abstract "$ABS_NAME")" OK "control: the abstract socket is reachable unsandboxed"
	is "$(c "$HELPER" unix "$SOCKD/s.sock")" OK "control: the pathname socket is reachable unsandboxed"
else
	ok 1 "listeners started ($(cat "$SCRATCH/listen.err"))"
fi
is "$(c "$HELPER" exists "/proc/$CANARY")" OK "control: the host canary is visible unsandboxed"
like "$(c /usr/bin/env)" "$ENV_MARK" "control: the caller's variable is there unsandboxed"
like "$(c "$HELPER" fds 7<"$OUTSIDE/canary.txt")" "^0 1 2 7( |$)" "control: an inherited fd 7 stays open unsandboxed"
out=$(c "$HELPER" syscalls)
is "$(printf '%s\n' "$out" | grep -E '^(io_uring_setup|unshare_user)=' | tr '\n' ' ')" "io_uring_setup=EFAULT unshare_user=OK " \
	"control: io_uring_setup reaches the kernel and unshare(CLONE_NEWUSER) works unsandboxed"
STI_MARK="MOATSTI$RANDOM"
if command -v script >/dev/null; then
	like "$(timeout 10 script -qec "'$HELPER' sti $STI_MARK" /dev/null </dev/null 2>&1)" "$STI_MARK" \
		"control: TIOCSTI on its own terminal injects unsandboxed"
fi

# --- one backend -----------------------------------------------------------------
suite() { # suite BACKEND (LABEL)
	local b=$1 label=${2:-$1} rep=$REPORTS/$2.json out have want p n missing=""
	# through a descriptor: moat refuses a report file where fs.write is
	# not enforced (firejail with a write grant)
	M "$b" "${SP[@]}" --report-fd 3 -- "$HELPER" exit 0 >/dev/null 3>"$rep"
	n=$?
	if [ ! -s "$rep" ]; then
		ok 1 "$label: a report was written (exit $n: $(tail -2 "$SCRATCH/last.err" | tr '\n' ' '))"
		return
	fi
	have=" $(claims "$rep") "
	diag "$label claims:$have"
	for want in ${EXPECT[$b]}; do
		case "$have" in *" $want "*) ;; *) missing="$missing $want" ;; esac
	done
	local want_status=enforced
	[ "$(echo ${EXPECT[$b]} | xargs -n1 | sort | xargs)" = "$(echo ${EXPECT[native]} | xargs -n1 | sort | xargs)" ] ||
		want_status=degraded
	is "$n/$(json_get "$rep" '["status"]')/${missing# }" "0/$want_status/" \
		"$label: runs the helper, status $want_status, claims at least the expected set"
	if [ "$want_status" = degraded ]; then
		M "$b" "${S[@]}" -- "$HELPER" write "$PROJ/$label-require" >/dev/null
		[ "$?" = 125 ] && [ ! -e "$PROJ/$label-require" ]
		ok $? "$label: require mode refuses (125) and runs nothing, since it lacks a strict property"
		like "$(cat "$SCRATCH/last.err")" "cannot enforce [a-z]+\.[a-z]+: " "$label: require mode names what is missing"
	fi
	[ -n "$missing" ] && diag "$label: $(json_get "$rep" '["properties"]' | head -c 3000)"
	is "$(json_get "$rep" '["backend"]')" "$b" "$label: the report names the backend"
	if [ "$b" != native ]; then
		out=$(json_get "$rep" '["launcher"]["tool"]' 2>/dev/null)
		[ -x "$out" ]
		ok $? "$label: the report names the tool that ran ($out)"
	fi

	M "$b" "${SP[@]}" -- "$HELPER" exit 3 >/dev/null
	is "$?" 3 "$label: the command's exit status comes through"
	M "$b" "${SP[@]}" -- "$HELPER" killself 15 >/dev/null
	is "$?" 143 "$label: a command killed by SIGTERM gives 128+15"
	is "$(M "$b" "${SP[@]}" -- "$HELPER" read "$RO/file.txt")" "OK $RO_MARK" "$label: a read grant is readable"

	for p in $have; do
		case $p in
		fs.secrets)
			out=$(M "$b" "${SP[@]}" --read "$HOMED" -- "$HELPER" read "$HOMED/.ssh/id_ed25519")
			unlike "$out" "$SSH_MARK" "$label fs.secrets: ~/.ssh key under a granted HOME is not read ($out)" ;;
		fs.read)
			out=$(M "$b" "${SP[@]}" -- "$HELPER" read "$OUTSIDE/canary.txt")
			like "$out" "^ERR " "$label fs.read: a file outside every grant is unreadable ($out)" ;;
		fs.write)
			out=$(M "$b" "${SP[@]}" --read "$OUTSIDE" -- "$HELPER" write "$OUTSIDE/$label.txt")
			[ ! -e "$OUTSIDE/$label.txt" ]
			ok $? "$label fs.write: creating a file in a read-only grant fails ($out)"
			out=$(M "$b" "${SP[@]}" -- "$HELPER" write "$PROJ/$label.txt")
			[ -e "$PROJ/$label.txt" ]
			ok $? "$label fs.write: the write grant is writable on the host ($out)" ;;
		fs.tmp)
			out=$(M "$b" "${SP[@]}" -- "$HELPER" write "/tmp/moat-inside-$UNIQ")
			[ "$out" = OK ] && [ ! -e "/tmp/moat-inside-$UNIQ" ]
			ok $? "$label fs.tmp: /tmp is writable inside and the file is gone afterwards ($out)"
			out=$(M "$b" "${SP[@]}" -- "$HELPER" exists "$OUTSIDE/canary.txt")
			like "$out" "^ERR " "$label fs.tmp: the host's /tmp is not visible ($out)" ;;
		net.none)
			[ -n "${TCP_PORT:-}" ] || continue
			n=$(count tcp)
			out=$(M "$b" "${SP[@]}" -- "$HELPER" tcp 127.0.0.1 "$TCP_PORT")
			like "$out" "^ERR " "$label net.none: TCP to the host's loopback listener fails ($out)"
			is "$(count tcp)" "$n" "$label net.none: the listener saw nothing" ;;
		ipc.abstract)
			[ -n "${TCP_PORT:-}" ] || continue
			out=$(M "$b" "${SP[@]}" -- "$HELPER" abstract "$ABS_NAME")
			like "$out" "^ERR " "$label ipc.abstract: the host's abstract socket is unreachable ($out)" ;;
		ipc.unix)
			[ -n "${TCP_PORT:-}" ] || continue
			out=$(M "$b" "${SP[@]}" -- "$HELPER" unix "$SOCKD/s.sock")
			like "$out" "^ERR " "$label ipc.unix: the host's pathname socket (not granted) is unreachable ($out)" ;;
		proc.pid)
			out=$(M "$b" "${SP[@]}" -- "$HELPER" kill "$CANARY")
			like "$out" "^ERR " "$label proc.pid: kill(host canary) fails ($out)"
			alive
			ok $? "$label proc.pid: the canary is alive" ;;
		proc.ptrace)
			out=$(M "$b" "${SP[@]}" -- "$HELPER" ptrace "$CANARY")
			like "$out" "^ERR " "$label proc.ptrace: ptrace(host canary) fails ($out)" ;;
		sys.filter)
			out=$(M "$b" "${SP[@]}" -- "$HELPER" syscalls)
			# Refused before the kernel sees it (the control gets EFAULT):
			# moat's program says ENOSYS, firejail's list EPERM.
			like "$(printf '%s\n' "$out" | grep '^io_uring_setup=')" "^io_uring_setup=(ENOSYS|EPERM)$" "$label sys.filter: io_uring_setup() refused"
			like "$(printf '%s\n' "$out" | grep '^unshare_user=')" "unshare_user=(EPERM|ENOSYS|EINVAL)" \
				"$label sys.filter: unshare(CLONE_NEWUSER) refused" ;;
		tty.inject)
			command -v script >/dev/null || continue
			rm -f "$SCRATCH/tty-$label.json"
			out=$(timeout 20 script -qec "env HOME='$HOMED' '$MOAT' run --backend $b --mode prefer --profile strict --report-fd 3 -- '$HELPER' sti $STI_MARK 3>'$SCRATCH/tty-$label.json'" /dev/null </dev/null 2>&1)
			if [ "$(prop_status "$SCRATCH/tty-$label.json" tty.inject)" = enforced ]; then
				unlike "$out" "$STI_MARK" "$label tty.inject: TIOCSTI from inside injects nothing into the terminal ($(echo "$out" | head -1 | tr -d '\r'))"
			else
				is "$b:$(prop_status "$SCRATCH/tty-$label.json" tty.inject)" "gvisor:missing" \
					"$label tty.inject: claimed without a terminal only; with one attached it is missing"
			fi ;;
		env.curated)
			out=$(M "$b" "${SP[@]}" -- /usr/bin/env)
			unlike "$out" "$ENV_MARK" "$label env.curated: the caller's variable does not leak in"
			is "$(printf '%s\n' "$out" | sed -n 's/=.*//p' | sort | xargs)" \
				"$(json_get "$rep" '["environment"]["names"]' | tr -d '[]",' | xargs -n1 | sort | xargs)" \
				"$label env.curated: the command sees exactly the names the report lists" ;;
		fd.clean)
			out=$(M "$b" "${SP[@]}" -- "$HELPER" fds 7<"$OUTSIDE/canary.txt" 9<"$SCRATCH")
			is "$out" "0 1 2" "$label fd.clean: inherited fds 7 and 9 are closed inside" ;;
		res.limits)
			is "$(M "$b" "${SP[@]}" --files 40 -- "$HELPER" rlimit nofile)" "nofile=40" \
				"$label res.limits: --files 40 reaches the command"
			is "$(M "$b" "${SP[@]}" -- "$HELPER" rlimit core)" "core=1" "$label res.limits: core dumps off (RLIMIT_CORE 1)" ;;
		esac
	done

	M "$b" "${SP[@]}" --timeout 1 -- "$HELPER" sleep 30 >/dev/null
	is "$?" 124 "$label: --timeout 1 ends the run with 124"
}

absent() { # absent BACKEND: not installed (or not this OS) -> unavailable + hint
	local b=$1 out
	out=$(M "$b" "${S[@]}" --dry-run -- "$HELPER" exit 0)
	is "$?" 125 "$b (not usable here): --dry-run exits 125"
	printf '%s\n' "$out" >"$SCRATCH/$b-absent.json"
	is "$(json_get "$SCRATCH/$b-absent.json" '["status"]')" unavailable "$b: status unavailable"
	like "$(json_get "$SCRATCH/$b-absent.json" '["properties"]["fs.read"]["hint"]')" "." "$b: an install hint is given"
	M "$b" "${S[@]}" -- "$HELPER" write "$PROJ/$b-ran" >/dev/null
	[ "$?" = 125 ] && [ ! -e "$PROJ/$b-ran" ]
	ok $? "$b: moat run refuses (125) and runs nothing"
	like "$(cat "$SCRATCH/last.err")" "hint: " "$b: stderr carries the hint"
	M "$b" "${SP[@]}" -- "$HELPER" write "$PROJ/$b-ran-prefer" >/dev/null
	[ "$?" = 125 ] && [ ! -e "$PROJ/$b-ran-prefer" ]
	ok $? "$b: prefer mode refuses too (running bare would be a silent off)"
}

installed() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/bin/$1" ] || [ -x "/usr/sbin/$1" ]; }

suite native native
if installed bwrap; then suite bwrap bwrap; else absent bwrap; fi
# cannot_run BACKEND WHY: the tool is here but refuses this user (firejail
# refuses nobody; runsc cannot start unprivileged): unavailable, the reason
# and a hint, and nothing runs -- checked, not skipped.
cannot_run() {
	local b=$1 why=$2 out
	out=$(M "$b" "${SP[@]}" --dry-run -- "$HELPER" exit 0)
	is "$?" 125 "$b (cannot run as uid $UID_NOW): --dry-run exits 125 in prefer mode too"
	printf '%s\n' "$out" >"$SCRATCH/$b-cannot.json"
	like "$(json_get "$SCRATCH/$b-cannot.json" '["properties"]["fs.read"]["reason"]')" "$why" "$b: the reason says why ($why)"
	like "$(json_get "$SCRATCH/$b-cannot.json" '["properties"]["fs.read"]["hint"]')" "." "$b: a hint is given"
	M "$b" "${SP[@]}" -- "$HELPER" write "$PROJ/$b-ran-$UID_NOW" >/dev/null
	[ "$?" = 125 ] && [ ! -e "$PROJ/$b-ran-$UID_NOW" ]
	ok $? "$b: moat run refuses (125) and runs nothing"
}

if ! installed firejail; then absent firejail
elif [ "$UID_NOW" = 65534 ]; then cannot_run firejail "refuses the user nobody"
else suite firejail firejail; fi
if ! installed runsc; then absent gvisor
elif [ "$UID_NOW" != 0 ]; then cannot_run gvisor "runsc cannot start its sandbox unprivileged"
else suite gvisor gvisor; fi
for rt in crun runc; do
	if installed $rt; then
		MOAT_OCI_RUNTIME=$rt
		export MOAT_OCI_RUNTIME
		M oci "${S[@]}" --dry-run -- "$HELPER" exit 0 >"$SCRATCH/oci-$rt-probe.json"
		if [ $rt = crun ] && grep -q "crun refuses this hybrid cgroup host" "$SCRATCH/oci-$rt-probe.json"; then
			# crun 1.8 starts no container at all on a hybrid cgroup
			# host with cgroup2 controllers (this machine): say so.
			is "$(json_get "$SCRATCH/oci-$rt-probe.json" '["status"]')" unavailable \
				"oci-crun: unavailable on this hybrid cgroup host, with the reason"
			like "$(json_get "$SCRATCH/oci-$rt-probe.json" '["properties"]["fs.read"]["hint"]')" "runc" \
				"oci-crun: the hint names runc"
		else
			suite oci "oci-$rt"
		fi
		unset MOAT_OCI_RUNTIME
	else
		diag "$rt is not installed: oci under $rt not run"
	fi
done
installed crun || installed runc || absent oci
# An export's argv.json runs its bundle on the host it was made on: it
# names runc where crun refuses this host (crun 1.8 on a hybrid cgroup
# host with cgroup2 controllers, this machine; before, the export named
# crun all the same, which failed with "cgroups in hybrid mode not
# supported").  As root: the runtimes need it to start a container.
if [ "$UID_NOW" = 0 ] && { installed crun || installed runc; }; then
	rm -rf "$SCRATCH/export"
	(cd "$PROJ" && "$MOAT" oci export -o "$SCRATCH/export" --profile strict -- /bin/echo exported-ran >/dev/null 2>&1)
	mapfile -t RTARGV < <(/usr/bin/python3 -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))))' "$SCRATCH/export/argv.json")
	out=$(cd "$SCRATCH/export" && timeout 60 "${RTARGV[@]}" 2>&1)
	is "$?:$out" "0:exported-ran" "oci export: argv.json (${RTARGV[0]}) runs the bundle here"
	is "$(stat -c %a "$SCRATCH/export/config.json")" 600 "  config.json (process.env holds the values) is its owner's alone"
fi
# A bwrap export runs as it is: run.sh gives argv.json its environment
# (env.args, the owner's alone: it holds the values) and its seccomp program
# (seccomp.bpf) on the descriptors argv.json names FD.  Before, argv.json
# was all there was, and bwrap said "Invalid fd: FD".
if installed bwrap && { [ "$UID_NOW" = 0 ] || feature_present userns; }; then
	rm -rf "$SCRATCH/bwexport"
	(cd "$PROJ" && "$MOAT" export --backend bwrap -o "$SCRATCH/bwexport" --profile strict --env EXPORTED=yes -- \
		/bin/sh -c 'echo "$EXPORTED $(grep ^Seccomp: /proc/self/status | tr -d "\t")"' \
		>/dev/null 2>&1)
	is "$(cd / && sh "$SCRATCH/bwexport/run.sh" 2>&1)" "yes Seccomp:2" \
		"bwrap export: sh run.sh runs argv.json with the export's environment and seccomp program"
	is "$(stat -c %a "$SCRATCH/bwexport/env.args")" 600 "  env.args (the environment's values) is its owner's alone"
	like "$(tr -d '\n ' <"$SCRATCH/bwexport/argv.json")" '"--args","FD","--seccomp","FD"' "  argv.json still says FD where run.sh gives 3 and 4"
	# bwrap hands the command every descriptor it is given, and a
	# directory among them leads out of the view (an export has no
	# Landlock): run.sh closes all but 0, 1 and 2 first, as moat run does,
	# which is what the export's report says (fd.clean).  A red-team pass
	# read ~/.ssh through a directory descriptor its caller left open.
	mkdir -p "$SCRATCH/fdsecret"
	echo "FD-MARK-$$" >"$SCRATCH/fdsecret/k"
	rm -rf "$SCRATCH/bwexport2"
	(cd "$PROJ" && "$MOAT" export --backend bwrap -o "$SCRATCH/bwexport2" --profile strict -- \
		/bin/sh -c 'cat /proc/self/fd/5/k /proc/self/fd/6 /proc/self/fd/12 2>/dev/null; echo ran' \
		>/dev/null 2>&1)
	out=$(cd / && sh "$SCRATCH/bwexport2/run.sh" 5<"$SCRATCH/fdsecret" 6<"$SCRATCH/fdsecret/k" 12<"$SCRATCH/fdsecret/k" 2>&1)
	is "$out" "ran" "bwrap export: run.sh closes the descriptors its caller left open (a directory, files at 6 and 12)"
	is "$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["properties"]["fd.clean"]["status"])' \
		"$SCRATCH/bwexport2/report.json" 2>&1)" enforced "  which is what its report.json claims (fd.clean)"
	out=$(cd / && bwrap --ro-bind / / --dev /dev --proc /proc /bin/sh -c 'cat /proc/self/fd/5/k' 5<"$SCRATCH/fdsecret" 2>&1)
	is "$out" "FD-MARK-$$" "  control: bwrap itself passes a directory descriptor on, and it leads out of the view"
	# An export binds a write grant's protected entries (.vscode) by name
	# when it runs, later, unchecked: one a pulled commit replaced by a
	# link since then mounts what the link leads to.  Its report said
	# fs.read and fs.secrets enforced while run.sh showed HOME's ~/.ssh
	# (a red-team pass); now they say missing, and why.
	# (Outside /tmp: the view's /tmp is its own, and HOME is in the view.)
	EX=$(mktemp -d /var/tmp/moat-bwx.XXXXXX)
	EP=$EX/proj EH=$EX/home
	mkdir -p "$EP/.vscode" "$EH/.ssh"
	echo "EXPORT-SECRET-$$" >"$EH/.ssh/id_rsa"
	rm -rf "$SCRATCH/bwexport3"
	(cd "$EP" && HOME=$EH "$MOAT" export --backend bwrap -o "$SCRATCH/bwexport3" --profile strict --write "$EP" -- \
		/bin/sh -c "cat '$EP/.vscode/.ssh/id_rsa' 2>/dev/null; echo ran" >/dev/null 2>&1)
	is "$(/usr/bin/python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["properties"]; print(p["fs.read"]["status"], p["fs.secrets"]["status"])' \
		"$SCRATCH/bwexport3/report.json" 2>&1)" "missing missing" \
		"bwrap export, a write grant holding .vscode: its report says fs.read and fs.secrets missing"
	like "$(json_get "$SCRATCH/bwexport3/report.json" '["properties"]["fs.read"]["reason"]')" \
		"binds 1 protected entries of the write grants by their names when it runs" "  saying why"
	rm -rf "$EP/.vscode" && ln -s ../home "$EP/.vscode"
	out=$(cd / && HOME=$EH sh "$SCRATCH/bwexport3/run.sh" 2>&1)
	like "$out" "EXPORT-SECRET-$$" "  control: .vscode made a link to HOME since the export, run.sh shows ~/.ssh's key"
	# --keep-fd 7 on a file when exported: the report counts on it (a
	# directory would be missing fs.*); run.sh passed whatever 7 was at run
	# time, a directory too, which led out of the view (red-team).
	echo "KEPT-SECRET-$$" >"$EX/home/kept"
	(cd "$EX/proj" && "$MOAT" export --backend bwrap -o "$SCRATCH/bwexport4" --profile strict --keep-fd 7 -- \
		/bin/sh -c 'cat /proc/self/fd/7 /proc/self/fd/7/kept 2>/dev/null; echo ran' 7<"$EX/home/kept" >/dev/null 2>&1)
	out=$(cd / && bash "$SCRATCH/bwexport4/run.sh" 7<"$EX/home" 2>&1)
	rc=$?
	is "$rc:$out" "125:run.sh: descriptor 7 is a directory, which leads out of the view: the export's report says it was not" \
		"bwrap export with --keep-fd 7 on a file: run.sh refuses a directory there"
	is "$(cd / && bash "$SCRATCH/bwexport4/run.sh" 7<"$EX/home/kept" 2>&1)" "KEPT-SECRET-$$
ran" "  control: given a file, as exported, it runs"
	rm -rf "$EX"
fi
# A firejail export's argv.json names moat's descriptors as FD, and run as
# written firejail refuses it; its report claimed what those descriptors
# carry (moat's filter, the environment, __init's end of the tree) as
# enforced (red-team).
if installed firejail; then
	rm -rf "$SCRATCH/fjexport"
	(cd "$PROJ" && "$MOAT" export --backend firejail -o "$SCRATCH/fjexport" --profile strict -- /bin/true >/dev/null 2>&1)
	is "$(/usr/bin/python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["properties"]; print(" ".join(p[k]["status"] for k in ("env.curated", "sys.filter", "fd.clean", "proc.tree")))' \
		"$SCRATCH/fjexport/report.json" 2>&1)" "missing missing missing missing" \
		"firejail export: what moat's descriptors carry is missing in its report"
	# (As uid 65534 firejail refuses the user: that is the reason then.)
	like "$(json_get "$SCRATCH/fjexport/report.json" '["properties"]["sys.filter"]["reason"]')" \
		"names moat's descriptors as FD|firejail \\(setuid root\\) refuses the user" "  saying why"
fi
# nono and nsjail are not Debian packages: where someone installed them,
# their claims are attacked like any other backend's.
if installed nono; then suite nono nono; else absent nono; fi
if installed nsjail; then suite nsjail nsjail; else absent nsjail; fi
absent seatbelt

# --- a declared directory fd (--keep-fd N on a directory) -------------------
# openat(N, "..") walks the host's own tree from a directory descriptor,
# whatever the mount view shows: only Landlock (inode-bound) still refuses
# what no grant names.  With it the read fails and the claims stand; without
# it (MOAT_HOST_LIMIT=landlock=0) the same read gets out -- the control that
# shows the attack is real -- so fs.read, fs.write and fs.secrets must say
# missing, and require mode must refuse.  The command also gets its fd and
# its stderr under every backend (oci's __init once closed the caller's
# stderr with the undeclared fds).
DIRFD_READ=(-c 'import os; fd = os.open("../outside/canary.txt", os.O_RDONLY, dir_fd=7); print(os.read(fd, 100).decode().strip())')
for b in native bwrap oci nsjail; do
	[ "$b" = native ] || installed "${b/oci/runc}" || installed "${b/oci/crun}" || continue
	M "$b" "${SP[@]}" --dry-run -- /bin/true >"$SCRATCH/kd-$b-dry.json"
	[ "$(json_get "$SCRATCH/kd-$b-dry.json" '["status"]')" = unavailable ] && continue
	out=$(M "$b" "${SP[@]}" --keep-fd 7 --report-fd 8 -- "$PY" "${DIRFD_READ[@]}" 7<"$RO" 8>"$SCRATCH/kd-$b.json")
	unlike "$out" "$OUT_MARK" "$b: --keep-fd on a directory, with Landlock: openat(fd, \"../outside\") is refused"
	is "$(prop_status "$SCRATCH/kd-$b.json" fs.read)" enforced "$b: --keep-fd on a directory, with Landlock: fs.read stays enforced"
	like "$(cat "$SCRATCH/last.err")" "PermissionError" "$b: the command's stderr reaches the caller with a declared fd"
	out=$(MOAT_HOST_LIMIT=landlock=0 M "$b" "${SP[@]}" --keep-fd 7 --report-fd 8 -- "$PY" "${DIRFD_READ[@]}" 7<"$RO" 8>"$SCRATCH/kd-$b-noll.json")
	is "$out" "$OUT_MARK" "$b: without Landlock, the control: openat(fd, \"../outside\") reads the canary"
	is "$(prop_status "$SCRATCH/kd-$b-noll.json" fs.read)/$(prop_status "$SCRATCH/kd-$b-noll.json" fs.write)/$(prop_status "$SCRATCH/kd-$b-noll.json" fs.secrets)/$(json_get "$SCRATCH/kd-$b-noll.json" '["status"]')" \
		"missing/missing/missing/degraded" "$b: without Landlock, fs.read, fs.write and fs.secrets say missing (degraded)"
	like "$(json_get "$SCRATCH/kd-$b-noll.json" '["properties"]["fs.read"]["reason"]')" "^--keep-fd 7 is a directory \\(.*/ro\\): without Landlock" \
		"$b: the reason names the fd and its directory"
	MOAT_HOST_LIMIT=landlock=0 M "$b" --mode require "${S[@]}" --keep-fd 7 -- "$PY" "${DIRFD_READ[@]}" 7<"$RO" >/dev/null
	is "$?" 125 "$b: without Landlock, require mode refuses a directory fd"
done

# --- strings that are not UTF-8 in a backend whose files are JSON -------------
# config.json is UTF-8: such an argument or path once vanished from it (the
# command ran with another argv, a grant's mount was left out).  Refused,
# named; native takes any bytes.
if installed runc || installed crun; then
	M oci "${SP[@]}" -- "$HELPER" exit 0 $'caf\xe9' >/dev/null
	is "$?" 125 "oci: an argument that is not UTF-8 is refused (exit 125)"
	like "$(cat "$SCRATCH/last.err")" "an argument of the command caf\\\\xe9 is not UTF-8" "oci:   naming it"
	"$MOAT" export --backend oci -o "$SCRATCH/exp-latin" "${S[@]}" -- "$HELPER" exit 0 $'caf\xe9' \
		>/dev/null 2>"$SCRATCH/last.err"
	is "$?" 125 "oci export: the same is an error"
	like "$(cat "$SCRATCH/last.err")" "not UTF-8, which an OCI config.json must be" "oci export:   saying why"
fi
M native "${SP[@]}" -- "$HELPER" exit 0 $'caf\xe9' >/dev/null
is "$?" 0 "native: the same argument runs (the control)"

# --- auto: the ranking (docs/backends.md) -------------------------------------
A() { # A LIMIT ARGS...: moat run with the default backend (auto), host lowered
	local lim=$1
	shift
	env HOME="$HOMED" MOAT_HOST_LIMIT="$lim" "$MOAT" run "$@" 2>"$SCRATCH/last.err"
}
A "" "${S[@]}" --dry-run -- "$HELPER" exit 0 >"$SCRATCH/auto.json"
is "$(json_get "$SCRATCH/auto.json" '["backend"]')/$(json_get "$SCRATCH/auto.json" '["backend_choice"]["asked"]')" "native/auto" \
	"auto: native is chosen where it enforces everything"
like "$(json_get "$SCRATCH/auto.json" '["backend_choice"]["reason"]')" "^native enforces every requested property$" \
	"auto: the report says why (and no other backend was looked at)"
# Without Landlock native still enforces everything: its mount view holds
# the file system, as bubblewrap's does.  auto keeps native, and fs.read
# holds for real.
A landlock=0 "${S[@]}" --dry-run -- "$HELPER" exit 0 >"$SCRATCH/auto-noll.json"
is "$(json_get "$SCRATCH/auto-noll.json" '["backend"]')/$(json_get "$SCRATCH/auto-noll.json" '["status"]')" "native/enforced" \
	"auto without Landlock: native (its mount view) enforces everything"
out=$(A landlock=0 "${S[@]}" -- "$HELPER" read "$OUTSIDE/canary.txt")
like "$out" "^ERR " "auto without Landlock: fs.read holds for real under the chosen backend ($out)"
# No user namespaces: native (Landlock, seccomp) lacks the host's pids,
# its SysV IPC and fs.write's metadata; firejail, where installed (setuid),
# lacks the read allow-list and holds the credentials by mount names.  The
# file properties count first: native, with fs.read and fs.secrets held for
# real.  (A count alone once chose firejail.)
A userns=0,root=0 "${S[@]}" --mode prefer --dry-run -- "$HELPER" exit 0 >"$SCRATCH/auto-nouserns.json"
is "$(json_get "$SCRATCH/auto-nouserns.json" '["backend"]')/$(prop_status "$SCRATCH/auto-nouserns.json" fs.read)/$(prop_status "$SCRATCH/auto-nouserns.json" fs.secrets)" \
	"native/enforced/enforced" "auto without user namespaces: native, with fs.read and fs.secrets enforced"
# firejail is not even compiled: it never enforces fs.read, nor fs.secrets
# with something denied, and native misses fewer of the core properties.
like "$(json_get "$SCRATCH/auto-nouserns.json" '["backend_choice"]["reason"]')" \
	"firejail cannot enforce fs\\.read, fs\\.secrets \\(not compiled: it would not miss fewer\\)" \
	"auto without user namespaces: the reason says what firejail lacks, and that it was not compiled"
# Nor is nono looked for in PATH: it never enforces the file properties,
# the pids or a syscall filter (nono.c, never_enforces).
like "$(json_get "$SCRATCH/auto-nouserns.json" '["backend_choice"]["reason"]')" \
	"nono cannot enforce fs\\.read, fs\\.write, fs\\.secrets, .*proc\\.pid, sys\\.filter.* \\(not compiled: it would not miss fewer\\)" \
	"auto without user namespaces: nono is not looked for, and the reason says what it lacks"
# The backends that need user namespaces (or root) are ruled out by the
# host facts before their tool is looked for in PATH (~0.1 ms of every
# start here): the reason is the missing namespaces, installed or not
# (nsjail is not installed on these machines).
reason=$(json_get "$SCRATCH/auto-nouserns.json" '["backend_choice"]["reason"]')
for t in "bwrap needs unprivileged user namespaces" \
	"runsc (needs unprivileged user namespaces|cannot start its sandbox unprivileged)" \
	"crun or runc needs unprivileged user namespaces" "nsjail needs unprivileged user namespaces"; do
	like "$reason" "$t" "auto without user namespaces, ruled out by the host before any PATH lookup: $t"
done
# Asked for by name, such a backend is refused in one line for the cause,
# in every mode (running bare would be --mode off), and nothing runs.
for mode in require prefer; do
	A userns=0,root=0 --backend bwrap --mode $mode "${S[@]}" -- "$HELPER" write "$PROJ/ruled-out-$mode" >/dev/null
	is "$?:$([ -e "$PROJ/ruled-out-$mode" ] && echo ran)" "125:" "--backend bwrap without user namespaces, $mode: refused (125), nothing runs"
	err=$(cat "$SCRATCH/last.err")
	like "$err" "^moat: backend bwrap cannot run here: bwrap needs unprivileged user namespaces when moat is not root" \
		"  one line for the cause, with the hint"
	unlike "$err" "cannot enforce" "  not one line per property"
done
out=$(A userns=0,root=0 "${S[@]}" --mode prefer -- "$HELPER" read "$OUTSIDE/canary.txt")
like "$out" "^ERR " "auto without user namespaces: fs.read holds for real under the chosen backend ($out)"
out=$(A userns=0,root=0 "${S[@]}" --read "$OUTSIDE" --mode prefer -- "$HELPER" read "$OUTSIDE/canary.txt")
like "$out" "$OUT_MARK" "auto without user namespaces, the control: granted, the same read succeeds"
# Nothing can run a sandbox: the one missing the fewest is chosen, and
# require mode refuses.
A landlock=0,userns=0,root=0,seccomp=0 "${S[@]}" --dry-run -- "$HELPER" exit 0 >"$SCRATCH/auto-none.json"
is "$?/$(json_get "$SCRATCH/auto-none.json" '["status"]')" "125/unavailable" \
	"auto on a host with nothing: unavailable, exit 125"
like "$(json_get "$SCRATCH/auto-none.json" '["backend_choice"]["reason"]')" "none enforces every requested property: [a-z]+ misses the fewest \\(of the file, network and environment properties first\\)$" \
	"auto on a host with nothing: the reason says none was complete"

# A binary that is not in PATH makes the backend unavailable, with the hint.
out=$(env PATH=/nonexistent HOME="$HOMED" "$MOAT" run --backend bwrap --dry-run "${S[@]}" -- "$HELPER" exit 0 2>/dev/null)
printf '%s\n' "$out" >"$SCRATCH/nopath.json"
if [ -x /usr/bin/bwrap ]; then
	# moat also looks in /usr/bin: the tool is found there.
	like "$(json_get "$SCRATCH/nopath.json" '["launcher"]["tool"]')" "^/usr/bin/bwrap$" "bwrap: found in /usr/bin when PATH lacks it"
fi

# --read / under a backend that runs moat's init at /.moat: the view's root
# is the host's own, where the tool cannot make /.moat.  A clear refusal
# naming the cause (bwrap itself said "Can't mkdir parents for
# /.moat/init: Read-only file system"); auto and native run it.
if command -v bwrap >/dev/null; then
	out=$("$MOAT" run --backend bwrap --profile strict --read / -- /bin/echo ran 2>&1)
	rc=$?
	is "$rc" 125 "bwrap --read /: refused (exit 125)"
	like "$out" "the whole root is granted \(--read /\), and bwrap's view then has no directory of its own at /\.moat" \
		"  naming the cause"
	like "$out" "hint: grant the directories the command needs instead of /, or use --backend native" "  with a hint"
fi
out=$("$MOAT" run --profile strict --read / -- /bin/echo ran 2>/dev/null)
is "$?/$out" "0/ran" "control: --read / runs under auto"

done_testing
