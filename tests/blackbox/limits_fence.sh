#!/usr/bin/env bash
# --memory under --allow-net: why the limit is not claimed on a cgroup v1
# host even if the fence's sockets were made inside the tree's cgroup.
#
# The fence connects each allowed destination with a socket of moat's own.
# The kernel charges a socket's buffers to the memory cgroup of the process
# that made it (mem_cgroup_sk_alloc: sk->sk_memcg is the creator's), so the
# known fix is to make those sockets from a process in the tree's cgroup.
# On cgroup v1 that cannot make the claim hold: v1 charges socket buffers
# to memory.kmem.tcp (and only once its limit was written), never to
# memory.limit_in_bytes, whichever process made the socket.
#
#   1. the report: --allow-net with --memory is missing; on a host whose
#      memory limit is a v1 one the reason is the v1 rule, which holds for
#      the fence's sockets too (not only "moat's cgroup's"), and require
#      refuses the run.
#   2. the attack, as root on a v1 host: moat itself runs inside a v1
#      memory cgroup this test makes, limited to 64 MiB (so the fence's
#      sockets are made inside the limit, as the fix would have it), and the
#      command pushes 160 MiB into fence sockets to a listener on the host's
#      loopback that never reads: all 160 MiB are held, and the cgroup's
#      usage stays far below 64 MiB.  Control: in the same cgroup, 300 MiB
#      of plain allocation is stopped (OOM kill), so the limit is live.
# Runs as root and as uid 65534 (part 2 needs root: it makes a cgroup).
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
PY=/usr/bin/python3
PROJ=$SCRATCH/proj
mkdir -p "$PROJ" && chmod 0777 "$PROJ"
cd "$SCRATCH" || exit 1
lim() { json_get "$1" "[\"limits\"][\"memory\"][\"$2\"]" 2>/dev/null; }
V1_RULE="cgroup v1 charges TCP and UDP socket buffers apart from memory.limit_in_bytes \(to memory.kmem.tcp\), whichever process makes the socket"

# --- a listener on the host's loopback that never reads ----------------------
# A tiny receive buffer keeps what the command writes in the senders' (the
# fence's) buffers, not in this listener's.
port_file=$SCRATCH/port
"$PY" -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.bind(("127.0.0.1", 0)); s.listen(512)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(1); keep = []; end = time.time() + 120
while time.time() < end:
    try:
        keep.append(s.accept()[0])
    except socket.timeout:
        continue
    except OSError:
        break' "$port_file" &
lpid=$!
G=
cleanup() {
	kill "$lpid" 2>/dev/null
	[ -n "$G" ] && rmdir "$G" 2>/dev/null
	rm -rf "$SCRATCH" "$REPORTS"
}
trap cleanup EXIT
need_ready 30 "the test listener (its port file)" test -s "$port_file"
port=$(cat "$port_file" 2>/dev/null)
ALLOW=(--allow-net "127.0.0.1:$port")

# --- 1. the report -------------------------------------------------------------
"$MOAT" run --mode prefer --dry-run --memory 64M -- /bin/true >"$SCRATCH/none.json" 2>/dev/null
"$MOAT" run --mode prefer --dry-run "${ALLOW[@]}" --memory 64M -- /bin/true >"$SCRATCH/allow.json" 2>/dev/null
mech=$(lim "$SCRATCH/none.json" mechanism)
diag "--memory 64M without a network: $(lim "$SCRATCH/none.json" status): ${mech:-$(lim "$SCRATCH/none.json" reason | head -c 160)}"
is "$(lim "$SCRATCH/allow.json" status)" missing "--memory 64M --allow-net: missing"
if [[ "$mech" == *"cgroup v1"* ]]; then
	like "$(lim "$SCRATCH/allow.json" reason)" "$V1_RULE.*the fence's sockets, which moat makes for it, are no exception" \
		"  on this v1 host the reason is the v1 rule, the fence's sockets included"
else
	skip "the memory limit here is not moat's cgroup v1 one (${mech:-none}): the v1 reason does not apply"
fi
"$MOAT" run "${ALLOW[@]}" --memory 64M -- "$HELPER" write "$PROJ/ran" >/dev/null 2>&1
is "$?:$([ -e "$PROJ/ran" ] && echo ran)" "125:" "  require mode refuses it, nothing runs"

# --- 2. the attack: the fence's sockets made inside a v1 limit of 64 MiB ----
# The v1 memory hierarchy and this shell's cgroup in it.
v1_mount=$(awk '$9 == "cgroup" && $NF ~ /(^|,)memory(,|$)/ {print $5; exit}' /proc/self/mountinfo)
v1_self=$(awk -F: '$2 == "memory" {print $3; exit}' /proc/self/cgroup)
if [ -z "$v1_mount" ]; then
	skip "no cgroup v1 memory hierarchy here: the v1 rule is not this host's"
elif [ "$(id -u)" != 0 ] || ! mkdir "$v1_mount${v1_self%/}/moat-test-fence-$$" 2>/dev/null; then
	skip "making a v1 memory cgroup needs root"
else
	G=$v1_mount${v1_self%/}/moat-test-fence-$$
	echo $((64 << 20)) >"$G/memory.limit_in_bytes"
	[ -e "$G/memory.memsw.limit_in_bytes" ] && echo $((64 << 20)) >"$G/memory.memsw.limit_in_bytes"
	in_g() { sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$G" "$@"; }
	rep=$REPORTS/fence-sockfill.json
	out=$(in_g "$MOAT" run --mode prefer --timeout 30 "${ALLOW[@]}" --memory 64M --report-fd 3 \
		-- "$HELPER" sockfill 160 "127.0.0.1:$port" 3>"$rep" 2>/dev/null)
	fwd=$(json_get "$rep" '["network"]["fence"]["connects_forwarded"]' 2>/dev/null)
	usage=$(cat "$G/memory.max_usage_in_bytes")
	like "$out" "DONE 160" "moat inside a v1 cgroup of 64 MiB: the command holds 160 MiB in sockets the fence made there (${fwd:-0} of them)"
	[ "${fwd:-0}" -gt 0 ]
	ok $? "  the connections were the fence's (network.fence.connects_forwarded ${fwd:-0})"
	[ "$usage" -lt $((32 << 20)) ]
	ok $? "  and the cgroup's memory.max_usage_in_bytes is $usage, under half the limit: the limit did not count them"
	is "$(lim "$rep" status)" missing "  the report says missing there"
	like "$(lim "$rep" reason)" "$V1_RULE" "  for the v1 rule"
	# The sockets are the cgroup's all the same (their creator, moat, is in
	# it), in the counter apart: once a memory.kmem.tcp limit is written (1
	# GiB, so as not to stop them), kmem.tcp counts them, memory still not.
	if echo $((1 << 30)) >"$G/memory.kmem.tcp.limit_in_bytes" 2>/dev/null; then
		echo 0 >"$G/memory.max_usage_in_bytes"
		out=$(in_g "$MOAT" run --mode prefer --timeout 30 "${ALLOW[@]}" -- "$HELPER" sockfill 160 "127.0.0.1:$port" 2>/dev/null)
		tcp=$(cat "$G/memory.kmem.tcp.max_usage_in_bytes")
		usage=$(cat "$G/memory.max_usage_in_bytes")
		[[ "$out" == *"DONE 160"* ]] && [ "$tcp" -ge $((128 << 20)) ] && [ "$usage" -lt $((32 << 20)) ]
		ok $? "  with a kmem.tcp limit the cgroup's memory.kmem.tcp counts the fence's sockets ($tcp bytes), memory.max_usage_in_bytes still not ($usage)"
	else
		skip "memory.kmem.tcp.limit_in_bytes cannot be written here"
	fi
	out=$(in_g "$MOAT" run --mode prefer --timeout 30 -- "$HELPER" alloc 300 2>/dev/null)
	rc=$?
	unlike "$out" "OK allocated" "control: in the same cgroup 300 MiB of plain allocation is stopped (exit $rc)"
	is "$rc" 137 "  by the OOM killer (SIGKILL)"
fi
done_testing
