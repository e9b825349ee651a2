# shellcheck shell=bash
# The fence's black-box tests (tests/blackbox/net_*.sh): source after
# tap.sh and `scratch`.  Servers on the host's loopback stand in for the
# outside (tests/lib/netservers.py says what each serves).
#
#   net_setup                     the common start: `scratch`, cd there,
#                                 MOAT_HOST_LIMIT unset, PY and HELPER_DIR,
#                                 `skip REASON`; and the whole file is one
#                                 skip when the native backend has no fence
#                                 on this host
#   start_netservers [DOCROOT]    start them; sets P2 P3 (HTTP on 127.0.0.2
#                                 and .3), PU (UDP counter on .2), PC (a
#                                 closed port on .2); netservers_stop (the
#                                 EXIT trap calls it) ends them
#   conns IP PORT                 connections the HTTP server has accepted,
#                                 this question included
#   udp_count                     datagrams the UDP counter has received
#   seen IP PORT CMD...           CMD's output, " | ", and how many
#                                 connections the HTTP server on IP:PORT
#                                 accepted while CMD ran
#   start_loserver                a server on the host's own 127.0.0.1
#                                 too, port PL: "hello from 127.0.0.1" to
#                                 every request, how many it accepted in
#                                 $SCRATCH/lo.count; loserver_stop (and
#                                 netservers_stop) ends it

NETSERVERS_PID=""
LOPID=""

# shellcheck disable=SC2034 # PY and HELPER_DIR: for the sourcing test
net_setup() {
	scratch
	cd "$SCRATCH" || exit 1
	unset MOAT_HOST_LIMIT
	PY=/usr/bin/python3
	HELPER_DIR=$(dirname "$HELPER")
	if ! "$MOAT" run --dry-run --mode prefer --allow-net x.test -- /bin/true 2>/dev/null |
		"$PY" -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["properties"]["net.allow"]["status"] == "enforced" else 1)'; then
		skip_feature netfence "the native backend has no fence on this host (moat probe says why)"
		done_testing
		exit 0
	fi
}


loserver_stop() {
	[ -n "$LOPID" ] || return 0
	rm -f "$SCRATCH/lo.port"
	wait "$LOPID" 2>/dev/null
	LOPID=""
}

start_loserver() {
	/usr/bin/python3 - "$SCRATCH" <<'PY' &
import os, socket, sys, time
d = sys.argv[1]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
s.settimeout(0.2)
with open(d + "/lo.tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.rename(d + "/lo.tmp", d + "/lo.port")
n = 0
end = time.time() + 120
while time.time() < end and os.path.exists(d + "/lo.port"):
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    n += 1
    with open(d + "/lo.count.tmp", "w") as f:
        f.write("%d\n" % n)
    os.rename(d + "/lo.count.tmp", d + "/lo.count")
    c.settimeout(2)
    try:
        c.recv(1000)
        c.sendall(b"HTTP/1.0 200 OK\r\n\r\nhello from 127.0.0.1\n")
    except OSError:
        pass
    c.close()
PY
	LOPID=$!
	need_ready 30 "the server on the host's 127.0.0.1 (start_loserver: lo.port)" test -s "$SCRATCH/lo.port"
	# shellcheck disable=SC2034 # the sourcing test uses it
	read -r PL <"$SCRATCH/lo.port"
}

netservers_stop() {
	loserver_stop
	rm -f "$SCRATCH/ports"
	[ -n "$NETSERVERS_PID" ] && kill "$NETSERVERS_PID" 2>/dev/null
	NETSERVERS_PID=""
}

start_netservers() {
	/usr/bin/python3 "$ROOT/tests/lib/netservers.py" "$SCRATCH" "$@" &
	NETSERVERS_PID=$!
	trap 'netservers_stop; rm -rf "$SCRATCH" "$REPORTS"' EXIT
	need_ready 30 "the servers of tests/lib/netservers.py (their ports file)" test -s "$SCRATCH/ports"
	# shellcheck disable=SC2034 # the sourcing test uses them
	read -r P2 P3 PU PC <"$SCRATCH/ports"
}

conns() { curl -sS -m 5 "http://$1:$2/count" 2>/dev/null || echo "no answer"; }
udp_count() { curl -sS -m 5 "http://127.0.0.2:$P2/udp" 2>/dev/null || echo "no answer"; }

seen() {
	local ip=$1 port=$2 before after out
	shift 2
	before=$(conns "$ip" "$port")
	out=$("$@")
	after=$(conns "$ip" "$port")
	case $before$after in
	*[!0-9]*) echo "$out | the server did not answer /count" ;;
	*) echo "$out | $((after - before - 1))" ;;
	esac
}
