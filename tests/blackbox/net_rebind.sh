#!/usr/bin/env bash
# The DNS-rebinding rule is port-aware (policy/netdest.h,
# net_private_addr_named): a name that the host's resolver answers with a
# private address reaches that address only on a port an address (or
# localhost) entry gives it, never on the name's own port alone.  So
# `--allow-net 127.0.0.3:PC --allow-net evil.test:P3`, evil.test resolving
# to 127.0.0.3, does not open the host's 127.0.0.3:P3, through the fence or
# through the proxy mode; with 127.0.0.3:P3 on the list (the control) the
# same command reaches it.  The server on 127.0.0.3 counts what it
# accepted, so every refusal is shown by its having seen nothing.
#
# The host's resolver must answer the name with a private address: as root
# a private mount namespace whose /etc/hosts names evil.test 127.0.0.3; as
# another user the host's own name, where /etc/hosts gives it 127.0.0.1
# (a listener of the test's there), or a skip.  Runs as root and as uid
# 65534.
set -u
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/netservers.sh"
net_setup
start_netservers
oneline() { tr '\n' ' ' | sed 's/ *$//'; }

if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	NAME=evil.test
	IP=127.0.0.3
	PORT=$P3
	printf '127.0.0.1 localhost\n127.0.0.3 evil.test\n' >"$SCRATCH/hosts"
	printf 'nameserver 127.0.0.9\noptions timeout:1 attempts:1\n' >"$SCRATCH/resolv"
	inns() { unshare -m sh -c 'mount --bind "$1/hosts" /etc/hosts && mount --bind "$1/resolv" /etc/resolv.conf && shift && exec "$@"' _ "$SCRATCH" "$@"; }
	count() { conns 127.0.0.3 "$P3"; }
else
	NAME=$(hostname 2>/dev/null)
	IP=127.0.0.1
	if [ -z "$NAME" ] || [ "$(getent ahostsv4 "$NAME" 2>/dev/null | awk 'NR == 1 { print $1 }')" != 127.0.0.1 ]; then
		skip_all "not root, and the host's name ($NAME) does not resolve to 127.0.0.1"
	fi
	inns() { "$@"; }
	start_loserver
	PORT=$PL
	count() { cat "$SCRATCH/lo.count" 2>/dev/null || echo 0; }
fi
# The other entry for the address: a port nothing listens on.
OTHER="$IP:$PC"
[ "$IP" = 127.0.0.1 ] && OTHER="localhost:$PC"

# GET / from NAME:PORT by the command's own resolve and connect (the
# fence), and its outcome: the body, or the error's name.
GET='import socket, sys
try:
    a = socket.getaddrinfo(sys.argv[1], int(sys.argv[2]), socket.AF_INET, socket.SOCK_STREAM)[0][4]
except OSError as e:
    print("no address"); sys.exit()
try:
    s = socket.create_connection(a, timeout=5); s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    r = b"".join(iter(lambda: s.recv(4096), b""))
    print(r.split(b"\r\n\r\n", 1)[-1].decode().strip())
except OSError as e:
    print("refused", type(e).__name__)'
# seen_by CMD...: CMD's output, " | ", what the listener accepted meanwhile.
seen_by() {
	local before after out
	before=$(count)
	out=$("$@" 2>>"$SCRATCH/stderr" | oneline)
	after=$(count)
	[ "$IP" = 127.0.0.3 ] && after=$((after - 1)) # /count's own connection
	echo "$out | $((after - before))"
}
fence() { inns timeout 60 "$MOAT" run --profile strict --env 'NO_PROXY=*' --env 'no_proxy=*' "$@"; }

out=$(seen_by inns "$PY" -c "$GET" "$NAME" "$PORT")
is "$out" "hello from $IP | 1" "control: without moat, $NAME resolves to $IP and its server on $PORT answers"

# --- the fence: the fenced DNS and the connect ------------------------------------
out=$(seen_by fence --allow-net "$OTHER" --allow-net "$NAME:$PORT" --report "$REPORTS/dns.json" -- "$PY" -c "$GET" "$NAME" "$PORT")
is "$out" "no address | 0" \
	"$OTHER beside $NAME:$PORT: the fenced DNS withholds $IP for the name (no port of its meets $PC), the server saw nothing"
is "$(json_get "$REPORTS/dns.json" '["status"]' 2>/dev/null)" enforced "  the run is enforced"
out=$(seen_by fence --allow-net "$OTHER" --allow-net "$NAME:*" --report "$REPORTS/conn.json" -- \
	"$PY" -c "$GET" "$NAME" "$PORT")
like "$out" "^refused [A-Za-z]+ \| 0$" \
	"$OTHER beside $NAME:*: $IP is handed out for the name (port $PC meets), yet a connect to $PORT is refused, the server saw nothing"
is "$(json_eval "$REPORTS/conn.json" \
	'",".join("%s:%s:%s" % (c.get("address"), c.get("port"), c.get("allowed")) for c in d["network"]["connections"] if c.get("port") == '"$PORT"')' \
	2>/dev/null)" "\"$IP:$PORT:0\"" "  the report lists the refused connect"
out=$(seen_by fence --allow-net "$IP:$PORT" --allow-net "$NAME:$PORT" -- "$PY" -c "$GET" "$NAME" "$PORT")
is "$out" "hello from $IP | 1" "control: with $IP:$PORT on the list, the same command reaches it by the name"
[ "$IP" = 127.0.0.1 ] && {
	out=$(seen_by fence --allow-net "localhost:$PORT" --allow-net "$NAME:$PORT" -- "$PY" -c "$GET" "$NAME" "$PORT")
	is "$out" "hello from $IP | 1" "control: localhost:$PORT covers 127.0.0.1 on that port"
}

# --- the proxy mode: by the name, the port asked -----------------------------------
proxy() { inns timeout 60 "$MOAT" run --profile strict "$@"; }
CURL="curl -sS -m 10 -o /dev/null -w %{http_code} http://$NAME:$PORT/"
out=$(seen_by proxy --allow-net "$OTHER" --allow-net "$NAME:*" -- /bin/sh -c "$CURL; echo; curl -sS -m 10 -p -o /dev/null http://$NAME:$PORT/ 2>/dev/null; echo \$?")
is "$out" "502 56 | 0" \
	"through moat's proxy (absolute form, CONNECT), $OTHER beside $NAME:*: $IP is not connected to on $PORT, the server saw nothing"
out=$(seen_by proxy --allow-net "proxy:$IP:$PC" --allow-net "proxy:$NAME:*" -- /bin/sh -c "$CURL")
is "$out" "502 | 0" "  likewise with proxy-only entries"
out=$(seen_by proxy --allow-net "$IP:$PORT" --allow-net "$NAME:*" -- /bin/sh -c "$CURL")
is "$out" "200 | 1" "control: with $IP:$PORT on the list, the proxy mode reaches it by the name"

done_testing
