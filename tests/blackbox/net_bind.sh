#!/usr/bin/env bash
# A server of the command's own under net allow and --net loopback: in its
# own network namespace a bind reaches only that namespace, so the command
# may bind and listen on a TCP port there (the fence binds a TCP socket of
# the sandbox's itself: kernel/netfence.c, decide_bind), and a client in the
# same sandbox reaches it -- the host does not.  A socket the fence
# installed (the host's) is never bound or listened on; without a network
# namespace (no user namespaces, not root) nothing binds.  Each protection
# with a control that shows the same thing succeeding without it.
# Runs as root and as uid 65534, and under ASan.
set -u
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/netservers.sh"
net_setup
start_netservers

# A port free on the host: the sandbox's server takes the same number on its
# own loopback, and the host's connect to it must find nothing there.
PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# The command's server: bind 127.0.0.1:PORT, listen, say so, wait for a line
# on stdin (the host looks meanwhile), then a client of the same process
# connects and is answered.  Also: a port below 1024, and port 0.
cat >"$SCRATCH/server.py" <<'PY'
import socket, sys
port = int(sys.argv[1])
def bind(p):
    try:
        s = socket.socket()
        s.bind(("127.0.0.1", p))
        return s, "bound"
    except OSError as e:
        return None, type(e).__name__
print("low", bind(80)[1], flush=True)
e, what = bind(0)
print("ephemeral", what, e and e.getsockname()[1] > 0, flush=True)
srv, what = bind(port)
if srv is None:
    print("BIND", what, flush=True)
    sys.exit(0)
srv.listen(4)
print("LISTENING", flush=True)
sys.stdin.readline()
c = socket.create_connection(("127.0.0.1", port), timeout=5)
while True:  # the host's probe may be in the queue first (the control)
    a, peer = srv.accept()
    if peer == c.getsockname():
        break
    a.close()
c.sendall(b"ping")
a.sendall(a.recv(4).upper())
print("SERVED", c.recv(4).decode(), flush=True)
PY
# From the host, while the server listens.
host_probe() {
	"$PY" -c 'import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3).close(); print("reached")
except OSError as e:
    print(type(e).__name__)' "$PORT"
}
# serve LABEL CMD...: runs the server under CMD, the host probing while it
# listens; sets OUT (the server's lines) and SEEN (the host's probe).
serve() {
	local label=$1 line pid
	shift
	OUT="" SEEN=""
	coproc SRV { "$@" "$PY" "$SCRATCH/server.py" "$PORT" 2>>"$SCRATCH/stderr-$label"; }
	pid=$SRV_PID
	while IFS= read -r -t 30 line <&"${SRV[0]}"; do
		OUT+="$line"$'\n'
		case $line in
		LISTENING)
			SEEN=$(host_probe)
			echo go >&"${SRV[1]}"
			;;
		SERVED* | BIND*) break ;;
		esac
	done
	wait "$pid" 2>/dev/null
}
strict=(--profile strict --read "$SCRATCH")

# --- net allow: the command's own server --------------------------------------
serve allow "$MOAT" run "${strict[@]}" --allow-net "127.0.0.2:$P2" --report "$REPORTS/allow.json" --
like "$OUT" "SERVED PING" "under net allow the command binds 127.0.0.1:$PORT, listens, and its own client is served"
is "$SEEN" ConnectionRefusedError "  and the host cannot reach that port: it is the sandbox's own loopback"
like "$OUT" "low PermissionError" "  a port below 1024 is refused (EACCES), as the kernel refuses it to the command"
like "$OUT" "ephemeral bound True" "  port 0 binds an ephemeral port"
is "$(json_get "$REPORTS/allow.json" '["properties"]["net.allow"]["status"]' 2>/dev/null)" enforced "  and net.allow stays enforced"
serve control "$PY" -c 'import os, sys; os.execv(sys.argv[1], sys.argv[1:])'
is "$(printf '%s' "$OUT" | grep -c SERVED)/$SEEN" "1/reached" "  control: the same server without moat is reached from the host"

# --- --net loopback: the namespace alone ----------------------------------------
serve loopback "$MOAT" run "${strict[@]}" --net loopback --
is "$(printf '%s' "$OUT" | grep -c "SERVED PING")/$SEEN" "1/ConnectionRefusedError" \
	"under --net loopback too: served inside, not reachable from the host"

# --- a socket of the host's: never bound, never listened on ----------------------
# A non-blocking connect to an allowed address on a closed port: the fence
# installs a host socket at once, the handshake fails, and the socket is
# unbound again -- in the host's namespace.
cat >"$SCRATCH/hostsock.py" <<'PY'
import errno, select, socket, sys
ip, closed, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket()
s.setblocking(False)
try:
    s.connect((ip, closed))
except BlockingIOError:
    pass
select.select([], [s], [], 5)
print("connect", errno.errorcode.get(s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR), "0"), flush=True)
s.setblocking(True)
for what, call in (("bind", lambda: s.bind(("127.0.0.1", port))), ("listen", lambda: s.listen(4))):
    try:
        call()
        print(what, "done", flush=True)
    except OSError as e:
        print(what, errno.errorcode.get(e.errno, e.errno), flush=True)
# Still there while the host looks: a bound socket holds its port.
sys.stdin.readline()
PY
# host_bind: can the host bind 127.0.0.1:PORT now (is it held by someone)?
host_bind() {
	"$PY" -c 'import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1]))); print("free")
except OSError as e:
    print(type(e).__name__)' "$PORT"
}
hostsock() { # hostsock CMD...: the script's lines, then the host's bind of PORT while it waits
	local line pid
	OUT=""
	coproc HS { "$@" "$PY" "$SCRATCH/hostsock.py" 127.0.0.2 "$PC" "$PORT" 2>>"$SCRATCH/stderr-hs"; }
	pid=$HS_PID
	while IFS= read -r -t 30 line <&"${HS[0]}"; do
		OUT+="$line"$'\n'
		case $line in listen*) break ;; esac
	done
	OUT+="host $(host_bind)"
	echo go >&"${HS[1]}"
	wait "$pid" 2>/dev/null
}
hostsock "$MOAT" run "${strict[@]}" --allow-net "127.0.0.2:$PC" --
like_lines "$OUT" $'^connect ECONNREFUSED$\n^bind EPERM$\n^listen EPERM$\n^host free$' \
	"an installed host socket, unconnected after a refused connect: bind and listen get EPERM, the host's port stays free"
hostsock "$MOAT" run "${strict[@]}" --net all --
# (listen on it is EINVAL from the kernel itself: a socket whose connect
# failed is not SS_UNCONNECTED; test_netfence checks listen on an installed
# socket that is.)
like_lines "$OUT" $'^connect ECONNREFUSED$\n^bind done$\n^listen (done|EINVAL)$\n^host OSError$' \
	"  control: with --net all the same socket binds the host's 127.0.0.1:$PORT, which the host then cannot bind"

# --- no network namespace: nothing binds ------------------------------------------
# Without user namespaces root still makes its namespaces (the fence holds,
# and so does the command's own server); any other user's command would
# share the host's network, so net.allow is missing and inet sockets are
# refused: a bind there would be on the host.
serve nouserns env MOAT_HOST_LIMIT=userns=0 "$MOAT" run --backend native --mode prefer "${strict[@]}" \
	--allow-net "127.0.0.2:$P2" --report "$REPORTS/nu.json" --
if [ "$(id -u)" = 0 ]; then
	is "$(printf '%s' "$OUT" | grep -c "SERVED PING")/$SEEN" "1/ConnectionRefusedError" \
		"without user namespaces (root: namespaces still made) the server is served inside, unreachable from the host"
else
	is "$(printf '%s' "$OUT" | grep -c '^BIND')/$SEEN/$(json_get "$REPORTS/nu.json" '["properties"]["net.allow"]["status"]' 2>/dev/null)" \
		"1//missing" "without user namespaces (not root): the command's bind is refused, nothing listens, net.allow missing"
fi
done_testing
