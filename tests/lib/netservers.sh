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

NETSERVERS_PID=""

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


netservers_stop() {
	rm -f "$SCRATCH/ports"
	[ -n "$NETSERVERS_PID" ] && kill "$NETSERVERS_PID" 2>/dev/null
	NETSERVERS_PID=""
}

start_netservers() {
	/usr/bin/python3 "$ROOT/tests/lib/netservers.py" "$SCRATCH" "$@" &
	NETSERVERS_PID=$!
	trap 'netservers_stop; rm -rf "$SCRATCH" "$REPORTS"' EXIT
	for _ in $(seq 200); do [ -s "$SCRATCH/ports" ] && break; sleep 0.05; done
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
