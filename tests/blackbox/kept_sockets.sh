#!/usr/bin/env bash
# A socket of the host's passed with --keep-fd (a red-team pass: net.none,
# net.allow, ipc.abstract and ipc.unix said enforced while the command sent
# through it).  A socket keeps the namespace it was made in: the sandbox's
# network namespace does not hold it, and the seccomp rule refuses only
# socket(2).  Each check aims the kept socket from inside at a listener of
# this test's (127.0.0.1 or an abstract name of its own, bounded by
# timeout), sees it get there, and sees the report say missing; the
# controls are unix sockets that stay pipes (connected, listening), whose
# verdicts stay enforced while the same re-aiming fails.
# (backend_verdict_kept_sockets, docs/backends.md "Declared descriptors".)
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch_sticky
unset MOAT_HOST_LIMIT
PY=/usr/bin/python3
KS=$ROOT/tests/lib/keptsock.py
UNIQ="$$-$RANDOM"
cd "$SCRATCH" || exit 1

# K KIND LIMIT NAME ARGS...: the attack through a kept socket of KIND, under
# MOAT_HOST_LIMIT=LIMIT; its output in $SCRATCH/NAME.out, its report
# $REPORTS/NAME.json.
K() {
	local kind=$1 lim=$2 name=$3
	shift 3
	env MOAT_HOST_LIMIT="$lim" timeout 60 "$PY" "$KS" "$kind" "MARK-$name-$UNIQ" "$REPORTS/$name.json" "$MOAT" \
		"$@" >"$SCRATCH/$name.out" 2>&1
	sed 's/^/#   /' "$SCRATCH/$name.out" | grep -v '^#   stderr: moat:   hint' | head -4
}
out() { cat "$SCRATCH/$1.out"; }
st() { json_get "$REPORTS/$1.json" "[\"properties\"][\"$2\"][\"status\"]" 2>/dev/null; }
why() { json_get "$REPORTS/$1.json" "[\"properties\"][\"$2\"][\"reason\"]" 2>/dev/null; }
dry() { # dry FIELD ARGS...: FIELD of a dry run's report, no kept fd
	local field=$1
	shift
	"$MOAT" run "$@" --dry-run -- /bin/true >"$REPORTS/dry.json" 2>/dev/null
	json_get "$REPORTS/dry.json" "$field" 2>/dev/null
}
S=(--mode prefer --net none)

# --- AF_INET datagram, unconnected: sendto anywhere ---------------------------
K udp "" udp-none "${S[@]}"
like "$(out udp-none)" "target: GOT MARK-udp-none-$UNIQ" "net none: an unconnected UDP socket on --keep-fd sends to a host listener (the attack works)"
is "$(st udp-none net.none)/$(json_get "$REPORTS/udp-none.json" '["status"]')" "missing/degraded" "  and the report says net.none missing (degraded)"
like "$(why udp-none net.none)" "^--keep-fd 5 is an AF_INET datagram socket \\(unconnected\\) of the host's network: the command can send anywhere through it" \
	"  the reason names the fd, the family and what the command can do"
valid_report "$REPORTS/udp-none.json" "  the report"
K udp "" udp-require --net none
like "$(out udp-require)" "moat rc 125" "require mode refuses to run with it (exit 125)"
like "$(out udp-require)" "target: nothing" "  and nothing was sent"

K udp "" udp-loopback --mode prefer --net loopback
like "$(out udp-loopback)" "target: GOT MARK-udp-loopback-$UNIQ" "net loopback: the kept UDP socket reaches the host's 127.0.0.1, not the sandbox's"
is "$(st udp-loopback net.loopback)" missing "  net.loopback says missing"

# net allow: only where the native backend has its fence (net.allow enforced
# without a kept socket); an address that is not the listener's is allowed.
if [ "$(dry '["properties"]["net.allow"]["status"]' --allow-net 127.0.0.2:9)" = enforced ]; then
	K udp "" udp-allow --mode prefer --allow-net 127.0.0.2:9
	like "$(out udp-allow)" "target: GOT MARK-udp-allow-$UNIQ" "net allow (127.0.0.2:9 only): the kept UDP socket sends to 127.0.0.1 past the fence"
	is "$(st udp-allow net.allow)" missing "  net.allow says missing"
else
	skip_feature netfence "net allow: no fence on this host (net.allow not enforced without a kept socket)"
	skip_feature netfence "net allow: no fence on this host"
fi

# --- AF_INET stream, connected: connect(AF_UNSPEC) dissolves it ---------------
# Without Landlock's TCP rules (ABI 4; MOAT_HOST_LIMIT=landlock=3) the
# command connects it again anywhere.  With them this kernel refuses the
# connect, but not every kernel a fast-open send (landlock-lsm/linux#41),
# so the report says missing either way.
K tcp-connected landlock=3 tcp-ll3 "${S[@]}"
like "$(out tcp-ll3)" "target: GOT MARK-tcp-ll3-$UNIQ" "landlock=3: a connected TCP socket on --keep-fd is disconnected and connected to another host listener (the attack works)"
is "$(st tcp-ll3 net.none)" missing "  net.none says missing"
like "$(why tcp-ll3 net.none)" "^--keep-fd 5 is an AF_INET stream socket \\(connected\\) of the host's network: the command can disconnect it \\(connect AF_UNSPEC\\) and connect anywhere" \
	"  saying how"
K tcp-connected "" tcp-full "${S[@]}"
diag "with every Landlock ABI of this host: $(grep -E '^(refused|reaimed)' "$SCRATCH/tcp-full.out")"
is "$(st tcp-full net.none)" missing "a connected TCP socket, with Landlock's TCP rules: still missing (a fast-open send is not refused by every kernel)"

# --- AF_UNIX, unconnected: connect to a host abstract socket -----------------
K unix-unconnected landlock=5 unix-ll5 "${S[@]}"
like "$(out unix-ll5)" "target: GOT MARK-unix-ll5-$UNIQ" "landlock=5: an unconnected unix socket on --keep-fd connects to a host abstract socket (the attack works)"
is "$(st unix-ll5 ipc.abstract)/$(st unix-ll5 ipc.unix)" "missing/missing" "  ipc.abstract and ipc.unix say missing"
like "$(why unix-ll5 ipc.abstract)" "^--keep-fd 5 is an AF_UNIX stream socket \\(unconnected\\) of the host's network namespace: the command can connect to the host's abstract sockets" \
	"  the reason names the fd and what it reaches"
valid_report "$REPORTS/unix-ll5.json" "  the report"
# With Landlock's abstract-socket scope (ABI 6) the same connect is refused:
# ipc.abstract stands; ipc.unix does not (a pathname socket in the view).
if dry '["properties"]["ipc.abstract"]["mechanism"]' "${S[@]}" | grep -q "landlock scope"; then
	K unix-unconnected "" unix-full "${S[@]}"
	like "$(out unix-full)" "refused .*Operation not permitted" "with Landlock's abstract-socket scope the kept socket's connect is refused"
	like "$(out unix-full)" "target: nothing" "  nothing reached the host's socket"
	is "$(st unix-full ipc.abstract)/$(st unix-full ipc.unix)" "enforced/missing" "  ipc.abstract stays enforced, ipc.unix says missing"
else
	skip_feature landlock_scope "no Landlock abstract-socket scope here (ABI < 6)"
	skip_feature landlock_scope "no Landlock abstract-socket scope here"
	skip_feature landlock_scope "no Landlock abstract-socket scope here"
fi

# --- controls: unix sockets that stay pipes -----------------------------------
K unix-connected landlock=5 unixc-ll5 "${S[@]}"
like "$(out unixc-ll5)" "pipe: GOT MARK-unixc-ll5-$UNIQ" "control: a connected unix socket on --keep-fd carries the command's bytes to its peer"
like "$(out unixc-ll5)" "refused .*already connected" "  but cannot be connected elsewhere (EISCONN)"
like "$(out unixc-ll5)" "target: nothing" "  nothing reached the other host socket"
is "$(st unixc-ll5 ipc.abstract)/$(st unixc-ll5 ipc.unix)/$(st unixc-ll5 net.none)/$(json_get "$REPORTS/unixc-ll5.json" '["status"]')" \
	"enforced/enforced/enforced/enforced" "  ipc.abstract, ipc.unix and net.none stay enforced"
K unix-listening landlock=5 unixl-ll5 "${S[@]}"
like "$(out unixl-ll5)" "pipe: GOT MARK-unixl-ll5-$UNIQ" "control: a listening unix socket on --keep-fd serves the host's client (socket activation)"
like "$(out unixl-ll5)" "refused .*Invalid argument" "  but cannot be connected elsewhere, shut down or not (EINVAL)"
is "$(st unixl-ll5 ipc.abstract)/$(st unixl-ll5 ipc.unix)/$(json_get "$REPORTS/unixl-ll5.json" '["status"]')" \
	"enforced/enforced/enforced" "  ipc.abstract and ipc.unix stay enforced"

# --- every backend: the check follows each one's own verdicts (plan.c) --------
for b in bwrap oci nsjail; do
	[ "$(dry '["status"]' --backend "$b" "${S[@]}")" = enforced ] || {
		diag "$b: not enforcing here, not checked"
		continue
	}
	K udp "" "udp-$b" --backend "$b" "${S[@]}"
	like "$(out "udp-$b")" "target: GOT MARK-udp-$b-$UNIQ" "$b: the kept UDP socket sends to a host listener"
	is "$(st "udp-$b" net.none)" missing "$b:   net.none says missing"
done

# --- a bwrap export: run.sh refuses a socket where the export had none -------
# The export's report judged fd 7 as it was then (a file); a socket of the
# host's there at run time would lead out of the sandbox's network unsaid.
if command -v bwrap >/dev/null 2>&1; then
	EX=$(mktemp -d /var/tmp/moat-kept.XXXXXX)
	(cd "$EX" && "$MOAT" export --backend bwrap -o "$EX/ex" --net none --keep-fd 7 -- /bin/sh -c 'echo ran' \
		7</etc/hostname >/dev/null 2>&1)
	is "$(cd / && bash "$EX/ex/run.sh" 7</etc/hostname 2>&1)" ran "bwrap export, --keep-fd 7 a file when exported: run.sh runs with a file there"
	out=$(cd / && "$PY" -c 'import os, socket, subprocess, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); os.dup2(s.fileno(), 7)
p = subprocess.run(["bash", sys.argv[1]], pass_fds=(7,), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
print(p.returncode, p.stdout.decode().strip())' "$EX/ex/run.sh")
	is "$out" "125 run.sh: descriptor 7 is a socket, which leads out of the sandbox's network: the export's report says it was not" \
		"  and refuses a UDP socket there"
	rm -rf "$EX"
else
	skip "bwrap not installed"
	skip "bwrap not installed"
fi

done_testing
