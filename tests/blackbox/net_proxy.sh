#!/usr/bin/env bash
# net allow's proxy mode (kernel/netproxy.h) and moat's connects through the
# host's own proxy (launch/hostproxy.h), through `moat run`.  Under the fence
# the command finds HTTP_PROXY, HTTPS_PROXY and ALL_PROXY naming moat's proxy
# in its own namespace: curl (absolute form, CONNECT, SOCKS5) and Python's
# urllib reach the allowed name by name and are refused for others; a
# proxy-only entry is reachable only that way; a TLS ClientHello that names
# another host than the tunnel's is refused (as root: HTTPS on 127.0.0.2:443);
# with HTTPS_PROXY in moat's own environment the proxy's and the fence's
# connects go through the host's proxy, with its credentials, which the
# command never sees; CA bundle variables pass with their files.  The servers
# (tests/lib/netservers.py, tests/lib/proxyservers.py) stand in for the
# outside: svc.test (127.0.0.2) is allowed, 127.0.0.3 and other.test are not;
# each counts what it accepted, so every refusal is shown by the server
# having seen nothing, next to a control that reaches it.  Runs as root and
# as uid 65534.
set -u
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/netservers.sh"
net_setup
start_netservers

# --- a CA and a certificate for svc.test and other.test (openssl), the host's
# proxy on 127.0.0.4 and, where it can be bound, HTTPS on 127.0.0.2:443 --------
TLSD=$SCRATCH/tls
mkdir -p "$TLSD"
HAVE_CA=0
if command -v openssl >/dev/null 2>&1 &&
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TLSD/ca.key" -out "$TLSD/ca.pem" -days 2 \
		-subj /CN=moat-test-ca -addext basicConstraints=critical,CA:TRUE >/dev/null 2>&1 &&
	openssl req -newkey rsa:2048 -nodes -keyout "$TLSD/srv.key" -out "$TLSD/srv.csr" -subj /CN=svc.test \
		>/dev/null 2>&1 &&
	printf 'subjectAltName=DNS:svc.test,DNS:other.test\n' >"$TLSD/ext" &&
	openssl x509 -req -in "$TLSD/srv.csr" -CA "$TLSD/ca.pem" -CAkey "$TLSD/ca.key" -CAcreateserial \
		-out "$TLSD/srv.pem" -days 2 -extfile "$TLSD/ext" >/dev/null 2>&1; then
	HAVE_CA=1
else
	printf -- '-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n' >"$TLSD/ca.pem"
fi
chmod -R a+rX "$TLSD"
TLS_ARGS=()
[ "$HAVE_CA" = 1 ] && TLS_ARGS=("$TLSD/srv.pem" "$TLSD/srv.key")
# The host's proxy knows svc.test and far.test as 127.0.0.2, pin.test and
# evil.wild.test as 127.0.0.3 (where the host's resolver or a pin says
# otherwise), and refuses 127.0.0.9.
/usr/bin/python3 "$ROOT/tests/lib/proxyservers.py" "$SCRATCH" \
	"svc.test=127.0.0.2,far.test=127.0.0.2,pin.test=127.0.0.3,evil.wild.test=127.0.0.3,127.0.0.9=deny" "${TLS_ARGS[@]}" &
PROXYSERVERS_PID=$!
trap 'rm -f "$SCRATCH/proxyports"; kill "$PROXYSERVERS_PID" 2>/dev/null; netservers_stop; rm -rf "$SCRATCH" "$REPORTS"' EXIT
need_ready 30 "the proxy test servers (tests/lib/proxyservers.py: proxyports)" test -s "$SCRATCH/proxyports"
read -r UP TLS SOCKS SOCKS4 <"$SCRATCH/proxyports"
touch "$SCRATCH/upstream.log"
j() { json_get "$@" 2>/dev/null; }
jx() { json_eval "$@" 2>/dev/null; }
up_lines() { wc -l <"$SCRATCH/upstream.log"; }
oneline() { tr '\n' ' ' | sed 's/ *$//'; }

A=(--profile strict --read "$HELPER_DIR" --allow-net "svc.test:$P2" --resolve svc.test=127.0.0.2)
run() { "$MOAT" run "${A[@]}" "$@" 2>>"$SCRATCH/stderr"; }
open_run() { "$MOAT" run --profile strict --read "$HELPER_DIR" --net all "$@" 2>>"$SCRATCH/stderr"; }
# RAWGET HOST PORT TARGET [auth]: an absolute-form request for TARGET as it
# is (curl would tidy it) to the proxy on HOST:PORT, with the host's proxy's
# credentials when asked; prints the last line of the answer.
RAWGET='import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
auth = "Proxy-Authorization: Basic dXNlcjpwYXNz\r\n" if sys.argv[4:] == ["auth"] else ""
s.sendall(("GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n" % (sys.argv[3], auth)).encode())
t = s.makefile("rb").read().decode(errors="replace").splitlines()
print(t[-1] if t else "(nothing)")'
PYGET="import sys, urllib.request as u, urllib.error as e
try: print(u.urlopen(sys.argv[1], timeout=10).read().decode(), end='')
except e.HTTPError as x: print('HTTP', x.code)
except Exception as x: print('ERR', type(x).__name__)"

# --- the command's environment -------------------------------------------------
out=$(run -- /bin/sh -c 'echo "$http_proxy $HTTPS_PROXY $https_proxy $ALL_PROXY $NO_PROXY"')
is "$out" "http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 socks5h://127.0.0.1:1080 localhost,127.0.0.1,::1" \
	"the command's HTTP(S)_PROXY name moat's proxy in the sandbox, ALL_PROXY its SOCKS5 (socks5h), NO_PROXY the sandbox's loopback"
out=$(run --env HTTPS_PROXY=http://mine.test:1 -- /bin/sh -c 'echo "$HTTPS_PROXY $https_proxy"')
is "$out" "http://mine.test:1 http://127.0.0.1:3128" "  a value the policy sets (--env) wins over moat's"

# --- allowed through the proxy: curl three ways, Python urllib -------------------
out=$(seen 127.0.0.2 "$P2" run --report "$REPORTS/ok.json" -- /bin/sh -c \
	"curl -sS -f -m 10 http://svc.test:$P2/; curl -sS -f -m 10 -p http://svc.test:$P2/;
	 curl -sS -f -m 10 -x socks5h://127.0.0.1:1080 http://svc.test:$P2/; $PY -c \"\$1\" http://svc.test:$P2/" _ "$PYGET" |
	oneline)
is "$out" "hello from 127.0.0.2 hello from 127.0.0.2 hello from 127.0.0.2 hello from 127.0.0.2 | 4" \
	"the allowed name through the proxy: curl (absolute form, CONNECT with -p, SOCKS5) and Python urllib (HTTP_PROXY)"
is "$(jx "$REPORTS/ok.json" '[d["network"]["proxy"][k] for k in ("connections", "tunnels", "refused")] + [d["network"]["fence"]["connects_forwarded"]]')" \
	"[4, 4, 0, 0]" "  the report: 4 connections to the proxy, 4 tunnels, nothing refused, nothing the fence forwarded itself"
valid_report "$REPORTS/ok.json" "  and fits the schema"

# --- refused by name, or by address, each with its control ------------------------
out=$(seen 127.0.0.3 "$P3" run --report "$REPORTS/no.json" -- /bin/sh -c \
	"curl -sS -m 10 http://other.test:$P3/; curl -sS -m 10 -p -o /dev/null http://other.test:$P3/; echo \"curl -p: \$?\";
	 curl -sS -m 10 -o /dev/null -x socks5h://127.0.0.1:1080 http://other.test:$P3/; echo \"socks: \$?\";
	 $PY -c \"\$1\" http://other.test:$P3/" _ "$PYGET" | oneline)
is "$out" "moat: other.test:$P3 is not on the allowlist curl -p: 56 socks: 97 HTTP 403 | 0" \
	"a name not on the list: 403 (curl, absolute form), curl -p fails the CONNECT (56), SOCKS5 too (97), urllib gets 403; its server saw nothing"
out=$(seen 127.0.0.3 "$P3" open_run -- curl -sS -m 10 --resolve "other.test:$P3:127.0.0.3" "http://other.test:$P3/")
is "$out" "hello from 127.0.0.3 | 1" "  control: with --net all the same name reaches it"
out=$(seen 127.0.0.3 "$P3" run -- curl -sS -m 10 "http://127.0.0.3:$P3/")
is "$out" "moat: 127.0.0.3:$P3 is not on the allowlist | 0" "an address not on the list, through the proxy: 403, its server saw nothing"
out=$(seen 127.0.0.3 "$P3" open_run -- curl -sS -m 10 "http://127.0.0.3:$P3/")
is "$out" "hello from 127.0.0.3 | 1" "  control: with --net all the same address answers"
out=$(run -- curl -sS -m 10 "http://svc.test:$P3/")
is "$out" "moat: svc.test:$P3 is not on the allowlist" "the allowed name on another port: 403"
is "$(jx "$REPORTS/no.json" '[d["network"]["proxy"][k] for k in ("refused", "tunnels")]')" "[4, 0]" \
	"  the report counts the 4 refusals, and no tunnel"
is "$(jx "$REPORTS/no.json" '[(p["host"], p["port"] == '"$P3"', p["refused"], p["tunnels"]) for p in d["network"]["proxy"]["destinations"]]')" \
	'[["other.test", true, 4, 0]]' "  and lists the destination asked: other.test on its port, refused 4 times"
valid_report "$REPORTS/no.json" "  and fits the schema"
run --events-fd 5 -- /bin/sh -c "curl -sS -m 10 -o /dev/null http://other.test:$P3/; curl -sS -m 10 -o /dev/null -x socks5h://127.0.0.1:1080 http://127.0.0.3:$P3/; curl -sS -f -m 10 -o /dev/null http://svc.test:$P2/" \
	5>"$SCRATCH/pev" >/dev/null 2>&1
is "$(/usr/bin/python3 -c 'import json,sys; print(" ".join("%s=%s/%s" % (e["event"], e["destination"], e["via"]) for e in map(json.loads, open(sys.argv[1]))))' "$SCRATCH/pev" 2>&1)" \
	"proxy_refused=other.test:$P3/http proxy_refused=127.0.0.3:$P3/socks5" \
	"--events-fd: one line per request the proxy refused (by name over HTTP, by address over SOCKS5), none for the allowed one"

# --- a proxy-only entry: through the proxy only -------------------------------------
B=(--profile strict --read "$HELPER_DIR" --allow-net "proxy:cdn.test:$P2" --resolve cdn.test=127.0.0.2)
is "$("$MOAT" run --dry-run "${B[@]}" -- /bin/true 2>/dev/null | /usr/bin/python3 -c 'import json,sys; e=json.load(sys.stdin)["network"]["allow"][0]; print(e["text"], e["name"], e["proxy_only"])')" \
	"proxy:cdn.test:$P2 cdn.test True" "the dry run shows a proxy-only entry (proxy_only)"
out=$(seen 127.0.0.2 "$P2" "$MOAT" run "${B[@]}" -- curl -sS -f -m 10 "http://cdn.test:$P2/" 2>>"$SCRATCH/stderr")
is "$out" "hello from 127.0.0.2 | 1" "a proxy-only name through the proxy: reached"
out=$(seen 127.0.0.2 "$P2" "$MOAT" run "${B[@]}" -- /bin/sh -c \
	"curl -sS -m 10 --noproxy '*' http://cdn.test:$P2/ 2>/dev/null; echo \"curl: \$?\"; $HELPER tcpnb cdn.test $P2; $HELPER tcp 127.0.0.2 $P2" \
	2>>"$SCRATCH/stderr" | oneline)
like "$out" "^curl: 6 SETUP resolve cdn.test: .* ERR ECONNREFUSED \| 0$" \
	"  directly it is not: the fenced DNS does not resolve it (curl 6, the helper NXDOMAIN), its address is refused; the server saw nothing"
out=$(seen 127.0.0.2 "$P2" "$MOAT" run --profile strict --read "$HELPER_DIR" --allow-net "cdn.test:$P2" --resolve cdn.test=127.0.0.2 -- \
	/bin/sh -c "curl -sS -m 10 --noproxy '*' http://cdn.test:$P2/; $HELPER tcpnb cdn.test $P2" 2>>"$SCRATCH/stderr" | oneline)
is "$out" "hello from 127.0.0.2 OK | 2" "  control: the same name as a direct entry is reached directly, both ways"

# --- SNI: a ClientHello for another host than the tunnel's (HTTPS on :443) --------
T=(--profile strict --read "$HELPER_DIR" --allow-net svc.test:443 --resolve svc.test=127.0.0.2)
if [ "$TLS" = 443 ]; then
	hs() { curl -sS -m 5 --cacert "$TLSD/ca.pem" --resolve svc.test:443:127.0.0.2 https://svc.test/count 2>/dev/null; }
	before=$(hs)
	out=$(CURL_CA_BUNDLE=$TLSD/ca.pem SSL_CERT_FILE=$TLSD/ca.pem "$MOAT" run "${T[@]}" --report "$REPORTS/tls.json" -- \
		/bin/sh -c "curl -sS -m 10 https://svc.test/; $PY -c \"\$1\" https://svc.test/;
		curl -sS -m 10 -o /dev/null --connect-to other.test:443:svc.test:443 https://other.test/ 2>/dev/null; echo \"fronted: \$?\"" \
		_ "$PYGET" 2>>"$SCRATCH/stderr" | oneline)
	after=$(hs)
	is "$out" "hello over tls hello over tls fronted: 35" \
		"HTTPS through the proxy (curl and urllib: CONNECT svc.test:443); curl --connect-to asking for svc.test with a ClientHello for other.test is cut (35)"
	is "$((after - before - 1))" 2 "  the server completed only the two honest handshakes"
	is "$(jx "$REPORTS/tls.json" 'd["network"]["proxy"]["sni_refused"]')" 1 "  the report counts the one refused by its server_name"
	before=$(hs)
	out=$(CURL_CA_BUNDLE=$TLSD/ca.pem open_run -- curl -sS -m 10 --connect-to other.test:443:127.0.0.2:443 https://other.test/)
	after=$(hs)
	is "$out/$((after - before - 1))" "hello over tls/1" "  control: with --net all the same fronted request is served"
else
	for _ in 1 2 3 4; do skip "HTTPS on 127.0.0.2:443 needs root (a port below 1024) and openssl"; done
fi

# --- SNI on any port: a proxy-only name on P2 (not 443) -----------------------------
# CONNECT cdn.test:P2, then a ClientHello (Python's ssl, through memory BIOs)
# for NAME, then an empty line: the plain HTTP server on P2 answers the
# bytes (an error page), unless the tunnel was closed at the hello.
HELLO='import socket, ssl, sys
i, o = ssl.MemoryBIO(), ssl.MemoryBIO()
t = ssl.create_default_context().wrap_bio(i, o, server_hostname=sys.argv[2])
try:
    t.do_handshake()
except ssl.SSLWantReadError:
    pass
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT cdn.test:%s HTTP/1.1\r\nHost: cdn.test\r\n\r\n" % sys.argv[1].encode())
head = b""
while b"\r\n\r\n" not in head:
    head += s.recv(1)
s.sendall(o.read() + b"\r\n\r\n")
r = b"".join(iter(lambda: s.recv(4096), b""))
print(head.split(b" ")[1].decode(), "answered" if r else "closed")'
out=$("$MOAT" run "${B[@]}" --report "$REPORTS/sni-any.json" -- /bin/sh -c \
	"$PY -c \"\$1\" $P2 other.test; $PY -c \"\$1\" $P2 cdn.test" _ "$HELLO" 2>>"$SCRATCH/stderr" | oneline)
is "$out" "200 closed 200 answered" \
	"a tunnel to cdn.test:$P2 (not 443) with a ClientHello for other.test is closed at the hello; one for cdn.test (the control) passes"
is "$(jx "$REPORTS/sni-any.json" 'd["network"]["proxy"]["sni_refused"]')" 1 "  the report counts the one refused"

# --- a HelloRetryRequest: a TLS 1.3 server that asks for a second hello ----------
# openssl s_server on 127.0.0.6 takes P-256 only, and s_client's first hello
# has a key share for X25519 alone: the server answers it with a
# HelloRetryRequest, and the second hello (for svc.test again) must pass the
# proxy as the first did (test_netproxy refuses one for another host).
if [ "$HAVE_CA" = 1 ]; then
	openssl s_server -accept 127.0.0.6:0 -cert "$TLSD/srv.pem" -key "$TLSD/srv.key" -tls1_3 -groups P-256 -www \
		>"$SCRATCH/hrr.log" 2>&1 &
	HRR_PID=$!
	need_ready 10 "openssl s_server for the HelloRetryRequest" grep -q '^ACCEPT' "$SCRATCH/hrr.log"
	HP=$(sed -n 's/^ACCEPT 127.0.0.6://p' "$SCRATCH/hrr.log")
	out=$("$MOAT" run --profile strict --read "$HELPER_DIR" --read "$TLSD" --allow-net "svc.test:$HP" \
		--resolve svc.test=127.0.0.6 -- /bin/sh -c "echo | timeout 20 openssl s_client -proxy 127.0.0.1:3128 -connect svc.test:$HP \
		-servername svc.test -groups X25519:P-256 -CAfile $TLSD/ca.pem -msg 2>&1" 2>>"$SCRATCH/stderr")
	# s_client says "Verify return code: 0" once at the end of the
	# handshake, and again for each session ticket that arrives before
	# it quits (1 to 3 times, by timing): once at least.
	is "$(grep -c 'Handshake .*ClientHello' <<<"$out") $(grep -q 'Verify return code: 0 ' <<<"$out" && echo verified)" "2 verified" \
		"TLS 1.3 through the proxy with a HelloRetryRequest: two ClientHellos for svc.test, and the handshake completes"
	kill "$HRR_PID" 2>/dev/null
	wait "$HRR_PID" 2>/dev/null
else
	skip "a HelloRetryRequest through the proxy needs openssl"
fi

# --- the host's own proxy (HTTPS_PROXY in moat's environment) ----------------------
# via_host_proxy VAR=URL REPORT CMDS: CMDS (then env) in the sandbox with VAR=URL in
# moat's environment; out: their output, " | ", the connections the server saw;
# n0: the proxies' log lines before.
via_host_proxy() {
	n0=$(up_lines)
	out=$(seen 127.0.0.2 "$P2" env "$1" "$MOAT" run "${A[@]}" --report "$REPORTS/$2.json" -- /bin/sh -c "$3; env" \
		2>>"$SCRATCH/stderr")
}
# refused_by_host_proxy VAR=URL: an address the host's proxy refuses
# (svc2.test, pinned to 127.0.0.9).
refused_by_host_proxy() {
	out=$(seen 127.0.0.2 "$P2" env "$1" "$MOAT" run --profile strict --allow-net "svc2.test:$P2" \
		--resolve svc2.test=127.0.0.9 -- /bin/sh -c "curl -sS -m 10 -p -o /dev/null http://svc2.test:$P2/; echo \$?" \
		2>>"$SCRATCH/stderr")
}
UPURL="http://user:pass@127.0.0.4:$UP"
via_host_proxy HTTPS_PROXY="$UPURL" up \
	"curl -sS -f -m 10 -p http://svc.test:$P2/; curl -sS -f -m 10 --noproxy '*' http://svc.test:$P2/; $HELPER tcpnb 127.0.0.2 $P2"
like "$(printf '%s' "$out" | head -3 | oneline)" "^hello from 127.0.0.2 hello from 127.0.0.2 (OK|REACHED)" \
	"with HTTPS_PROXY in moat's environment: through the proxy mode, directly by name, and a non-blocking connect by address"
like "$out" "\| 3$" "  all three reached the server"
is "$(tail -n +$((n0 + 1)) "$SCRATCH/upstream.log" | oneline)" "CONNECT 127.0.0.2:$P2 auth=ok CONNECT 127.0.0.2:$P2 auth=ok CONNECT 127.0.0.2:$P2 auth=ok" \
	"  each went through the host's proxy, with its credentials, to the address moat checked (the pin's)"
unlike "$out" "user:pass|dXNlcjpwYXNz|127\.0\.0\.4" "  the command's environment holds neither the host's proxy nor its credentials"
is "$(jx "$REPORTS/up.json" '[d["network"]["upstream"]["https"], d["network"]["upstream"]["connects_via_upstream"], d["network"]["proxy"]["via_upstream"]]')" \
	"[\"http://127.0.0.4:$UP\", 2, 1]" "  the report names the host's proxy (no credentials) and counts what went through it"
is "$(grep -c -e 'user:pass' -e dXNlcjpwYXNz "$REPORTS/up.json")" 0 "  the credentials are nowhere in the report"
valid_report "$REPORTS/up.json" "  and it fits the schema"
refused_by_host_proxy HTTPS_PROXY="$UPURL"
is "$out" "56 | 0" "an address the host's proxy refuses (403 there): moat's 502, curl fails the CONNECT; the server saw nothing"
out=$(seen 127.0.0.2 "$P2" "$MOAT" run --profile strict --allow-net "svc2.test:$P2" --resolve svc2.test=127.0.0.2 -- \
	curl -sS -m 10 -p "http://svc2.test:$P2/" 2>>"$SCRATCH/stderr")
is "$out" "hello from 127.0.0.2 | 1" "  control: without the host's proxy the same request is reached directly"
n0=$(up_lines)
out=$(env HTTPS_PROXY="$UPURL" NO_PROXY=svc.test,127.0.0.2 "$MOAT" run "${A[@]}" -- /bin/sh -c \
	"curl -sS -f -m 10 -p http://svc.test:$P2/; $HELPER tcpnb svc.test $P2" 2>>"$SCRATCH/stderr" | oneline)
is "$out/$(($(up_lines) - n0))" "hello from 127.0.0.2 OK/0" "NO_PROXY in moat's environment: those connects go directly"
HTTPS_PROXY=https://127.0.0.4:1 "$MOAT" run "${A[@]}" -- /bin/true 2>"$SCRATCH/bad"
is "$?" 125 "an HTTPS_PROXY moat cannot use (https://: TLS to the proxy) is refused before anything runs"
like "$(cat "$SCRATCH/bad")" "HTTPS_PROXY: a proxy URL of scheme \"https\" is not supported" "  and says why"

# --- through the host's proxy, moat hands over what it checked -----------------
# The double reads an absolute-form target as tinyproxy (and Squid's URL
# parser) do: the host is what follows "http://" up to the first "/", less any
# "userinfo@".  So "http://svc.test:P2?@127.0.0.3:P3/" is svc.test:P2 to
# moat's parser and 127.0.0.3:P3 to the double.
ATK="http://svc.test:$P2?@127.0.0.3:$P3/"
out=$(seen 127.0.0.3 "$P3" "$PY" -c "$RAWGET" 127.0.0.4 "$UP" "$ATK" auth)
is "$out" "hello from 127.0.0.3 | 1" "control: $ATK sent straight to the host's proxy fetches 127.0.0.3"
n0=$(up_lines)
out=$(seen 127.0.0.3 "$P3" env HTTPS_PROXY="$UPURL" "$MOAT" run "${A[@]}" -- /bin/sh -c \
	"$PY -c \"\$1\" 127.0.0.1 3128 '$ATK'; $PY -c \"\$1\" 127.0.0.1 3128 'http://svc.test:$P2#@127.0.0.3:$P3/'" _ "$RAWGET" \
	2>>"$SCRATCH/stderr" | oneline)
is "$out" "hello from 127.0.0.2 hello from 127.0.0.2 | 0" \
	"with HTTPS_PROXY, the allowed authority then ?@ (or #@) and another host, through moat's proxy: svc.test answers, 127.0.0.3 saw nothing"
is "$(tail -n +$((n0 + 1)) "$SCRATCH/upstream.log" | oneline)" "CONNECT 127.0.0.2:$P2 auth=ok CONNECT 127.0.0.2:$P2 auth=ok" \
	"  the host's proxy was asked for a tunnel to the checked address, never handed the client's target"
# A pin: the host's proxy has its own idea of pin.test (127.0.0.3).
out=$(seen 127.0.0.3 "$P3" curl -sS -m 10 -p -x "http://user:pass@127.0.0.4:$UP" "http://pin.test:$P3/")
is "$out" "hello from 127.0.0.3 | 1" "control: the host's proxy, asked for pin.test by name, reaches 127.0.0.3"
n0=$(up_lines)
out=$(seen 127.0.0.3 "$P3" env HTTPS_PROXY="$UPURL" "$MOAT" run --profile strict --allow-net "pin.test:$P3" \
	--resolve pin.test=127.0.0.9 -- /bin/sh -c "curl -sS -m 10 -p -o /dev/null http://pin.test:$P3/; echo \$?" 2>>"$SCRATCH/stderr")
is "$out" "56 | 0" "--resolve pin.test=127.0.0.9 with HTTPS_PROXY: the proxy mode keeps the pin (the proxy refuses .9), 127.0.0.3 saw nothing"
is "$(tail -n +$((n0 + 1)) "$SCRATCH/upstream.log" | oneline)" "CONNECT 127.0.0.9:$P3 auth=ok" "  the host's proxy was asked for the pinned address"

# The host's resolver decides, as without a proxy: a private mount namespace
# (root only) whose /etc/hosts names evil.wild.test 127.0.0.3 and whose
# resolver (127.0.0.9: nothing there) fails every other name.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	printf '127.0.0.1 localhost\n127.0.0.3 evil.wild.test\n' >"$SCRATCH/hosts"
	printf 'nameserver 127.0.0.9\noptions timeout:1 attempts:1\n' >"$SCRATCH/resolv"
	inns() { unshare -m sh -c 'mount --bind "$1/hosts" /etc/hosts && mount --bind "$1/resolv" /etc/resolv.conf && shift && exec "$@"' _ "$SCRATCH" "$@"; }
	out=$(seen 127.0.0.3 "$P3" curl -sS -m 10 -p -x "http://user:pass@127.0.0.4:$UP" "http://evil.wild.test:$P3/")
	is "$out" "hello from 127.0.0.3 | 1" "control: the host's proxy, asked for evil.wild.test by name, reaches 127.0.0.3"
	n0=$(up_lines)
	out=$(seen 127.0.0.3 "$P3" inns env HTTPS_PROXY="$UPURL" "$MOAT" run --profile strict --allow-net "*.wild.test:$P3" -- \
		/bin/sh -c "curl -sS -m 10 -p -o /dev/null http://evil.wild.test:$P3/ 2>/dev/null; echo \$?;
		curl -sS -m 10 -o /dev/null -w '%{http_code}\n' http://evil.wild.test:$P3/" 2>>"$SCRATCH/stderr" | oneline)
	is "$out/$(($(up_lines) - n0))" "56 502 | 0/0" \
		"a name below a wildcard that the host resolves to 127.0.0.3 (DNS rebinding), with HTTPS_PROXY: refused (CONNECT and absolute form), nothing asked of the host's proxy"
	out=$(seen 127.0.0.3 "$P3" "$PY" -c "$RAWGET" 127.0.0.4 "$UP" "http://far.test:$P2?@127.0.0.3:$P3/" auth)
	is "$out" "hello from 127.0.0.3 | 1" "control: http://far.test:$P2?@127.0.0.3:$P3/ straight to the host's proxy fetches 127.0.0.3"
	n0=$(up_lines)
	out=$(seen 127.0.0.3 "$P3" inns env HTTPS_PROXY="$UPURL" "$MOAT" run --profile strict --allow-net "far.test:$P2" \
		--report "$REPORTS/byname.json" -- /bin/sh -c \
		"curl -sS -m 10 -p http://far.test:$P2/; $PY -c \"\$1\" 127.0.0.1 3128 'http://far.test:$P2?@127.0.0.3:$P3/'" _ "$RAWGET" \
		2>>"$SCRATCH/stderr" | oneline)
	is "$out" "hello from 127.0.0.2 hello from 127.0.0.2 | 0" \
		"a name the host cannot resolve goes to its proxy by name (CONNECT, absolute form); ?@ another host stays in the path: 127.0.0.3 saw nothing"
	is "$(tail -n +$((n0 + 1)) "$SCRATCH/upstream.log" | oneline)" "CONNECT far.test:$P2 auth=ok GET http://far.test:$P2/?@127.0.0.3:$P3/ auth=ok" \
		"  the absolute form rebuilt from the checked authority"
	is "$(jx "$REPORTS/byname.json" '[d["network"]["proxy"]["via_upstream"], d["network"]["proxy"]["via_upstream_by_name"]]')" "[2, 2]" \
		"  the report counts both as through the host's proxy by name"
	valid_report "$REPORTS/byname.json" "  and fits the schema"
	# A name the host cannot resolve goes to a SOCKS4a proxy by name; plain
	# SOCKS4 has no way to say a name, so the request fails rather than go
	# around the host's proxy.
	n0=$(up_lines)
	out=$(seen 127.0.0.2 "$P2" inns env ALL_PROXY="socks4a://moatuid4@127.0.0.4:$SOCKS4" "$MOAT" run --profile strict \
		--allow-net "far.test:$P2" -- /bin/sh -c "curl -sS -f -m 10 -p http://far.test:$P2/" 2>>"$SCRATCH/stderr" | oneline)
	like "$out" "^hello from 127.0.0.2 \| 1$" "socks4a://: a name the host cannot resolve goes to the proxy by name, and reaches the server"
	is "$(tail -n +$((n0 + 1)) "$SCRATCH/upstream.log" | oneline)" "SOCKS4 far.test:$P2 uid=ok" "  (SOCKS4a's request named far.test)"
	n0=$(up_lines)
	out=$(seen 127.0.0.2 "$P2" inns env ALL_PROXY="socks4://moatuid4@127.0.0.4:$SOCKS4" "$MOAT" run --profile strict \
		--allow-net "far.test:$P2" -- /bin/sh -c "curl -sS -m 10 -p -o /dev/null http://far.test:$P2/; echo \$?" 2>>"$SCRATCH/stderr" | oneline)
	is "$out" "56 | 0" "socks4:// and a name the host cannot resolve: refused (SOCKS4 cannot name it), nothing reaches the server"
	is "$(tail -n +$((n0 + 1)) "$SCRATCH/upstream.log" | oneline)" "" "  and nothing was sent to the proxy"
else
	for _ in 1 2 3 4 5 6 7 8 9 10 11; do skip "the host's resolver of the test's own (a private mount namespace) needs root"; done
fi

# The fence, the host's own loopback written as an IPv4-mapped IPv6 address:
# directly, as 127.0.0.1 is, never "CONNECT [::ffff:127.0.0.1]" to the proxy.
start_loserver
LOC='import socket, sys
for fam, a in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::ffff:127.0.0.1")):
    s = socket.socket(fam)
    s.settimeout(10)
    try:
        s.connect((a, int(sys.argv[1])))
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        print(a, s.recv(200).split(b"\n")[-2].decode())
    except OSError as e:
        print(a, type(e).__name__)'
is "$(curl -sS -m 10 -o /dev/null -w '%{http_connect}' -p -x "http://user:pass@127.0.0.4:$UP" "http://[::ffff:127.0.0.1]:$PL/" 2>/dev/null)" 403 \
	"control: the host's proxy asked for [::ffff:127.0.0.1]:$PL answers for its own loopback (403 here)"
n0=$(up_lines)
out=$(env HTTPS_PROXY="$UPURL" "$MOAT" run --profile strict --allow-net "localhost:$PL" -- "$PY" -c "$LOC" "$PL" 2>>"$SCRATCH/stderr" | oneline)
is "$out" "127.0.0.1 hello from 127.0.0.1 ::ffff:127.0.0.1 hello from 127.0.0.1" \
	"with HTTPS_PROXY, --allow-net localhost:PORT: 127.0.0.1 and ::ffff:127.0.0.1 (an AF_INET6 socket) both reach the host's loopback"
is "$(tail -n +$((n0 + 1)) "$SCRATCH/upstream.log" | oneline)" "" "  neither was sent to the host's proxy"
loserver_stop

# The fence's report names a refused connect's protocol: an MPTCP socket's is
# mptcp (never udp), beside a TCP and a UDP one's (192.0.2.1, TEST-NET-1:
# refused, nothing leaves).
"$MOAT" run --profile strict --allow-net "svc.test:$P2" --report "$REPORTS/proto.json" -- "$PY" -c '
import socket
for kind, proto in ((socket.SOCK_STREAM, socket.IPPROTO_TCP), (socket.SOCK_STREAM, 262), (socket.SOCK_DGRAM, 0)):
    try:
        socket.socket(socket.AF_INET, kind, proto).connect(("192.0.2.1", 9))
    except OSError:
        pass' >/dev/null 2>>"$SCRATCH/stderr"
is "$(jx "$REPORTS/proto.json" 'sorted((c["protocol"], c["refused"]) for c in d["network"]["connections"] if c["address"] == "192.0.2.1")')" \
	'[["mptcp", 1], ["tcp", 1], ["udp", 1]]' "the report's connections: a refused MPTCP connect is mptcp, TCP tcp, UDP udp"
valid_report "$REPORTS/proto.json" "  and fits the schema"

# --- a SOCKS5 proxy as the host's (ALL_PROXY in moat's environment) ----------------
SOCKSURL="socks5h://user:pass@127.0.0.4:$SOCKS"
via_host_proxy ALL_PROXY="$SOCKSURL" socks \
	"curl -sS -f -m 10 -p http://svc.test:$P2/; curl -sS -f -m 10 http://svc.test:$P2/; curl -sS -f -m 10 --noproxy '*' http://svc.test:$P2/; $HELPER tcpnb 127.0.0.2 $P2"
like "$(printf '%s' "$out" | head -4 | oneline)" "^hello from 127.0.0.2 hello from 127.0.0.2 hello from 127.0.0.2 (OK|REACHED)" \
	"with ALL_PROXY=socks5h:// in moat's environment: the proxy mode's tunnel and forward, directly by name, non-blocking by address"
like "$out" "\| 4$" "  all four reached the server"
is "$(tail -n +$((n0 + 1)) "$SCRATCH/upstream.log" | oneline)" \
	"SOCKS 127.0.0.2:$P2 auth=ok SOCKS 127.0.0.2:$P2 auth=ok SOCKS 127.0.0.2:$P2 auth=ok SOCKS 127.0.0.2:$P2 auth=ok" \
	"  each through the SOCKS5 proxy with its user name and password, to the address moat checked"
unlike "$out" "user:pass|127\.0\.0\.4" "  the command's environment holds neither the host's proxy nor its credentials"
is "$(jx "$REPORTS/socks.json" '[d["network"]["upstream"]["all"], d["network"]["upstream"]["https"], d["network"]["upstream"]["connects_via_upstream"], d["network"]["proxy"]["via_upstream"]]')" \
	"[\"socks5h://127.0.0.4:$SOCKS\", null, 2, 2]" "  the report names it (no credentials) and counts what went through it"
valid_report "$REPORTS/socks.json" "  and it fits the schema"
refused_by_host_proxy ALL_PROXY="$SOCKSURL"
is "$out" "56 | 0" "an address the SOCKS5 proxy refuses (reply 2): moat's 502, curl fails the CONNECT; the server saw nothing"
# refused_credentials VAR=URL LOG WHAT: the fence's connect (by the allowed
# name, so that the fence, not the allowlist, decides) and the proxy mode's
# CONNECT through a host's proxy that refuses the credentials: both fail,
# the server sees nothing, the proxy logs LOG.
refused_credentials() {
	n0=$(up_lines)
	out=$(seen 127.0.0.2 "$P2" env "$1" "$MOAT" run "${A[@]}" -- /bin/sh -c \
		"$HELPER tcpnb svc.test $P2; curl -sS -m 10 -p -o /dev/null http://svc.test:$P2/; echo \$?" 2>"$SCRATCH/refused.err" | oneline)
	like "$out" "56 \| 0$" "$3: nothing reaches the server"
	unlike "$out" "^(OK|REACHED)" "  the fence's connect through it fails too"
	is "$(tail -n +$((n0 + 1)) "$SCRATCH/upstream.log" | sort -u | oneline)" "$2" "  (the proxy saw them: $2)"
}
refused_credentials ALL_PROXY="socks5h://user:wrong@127.0.0.4:$SOCKS" "SOCKS - auth=bad" \
	"wrong credentials: the SOCKS5 proxy refuses"

# --- a SOCKS4 proxy as the host's (ALL_PROXY=socks4:// or socks4a://) -------------
# SOCKS4 carries IPv4 addresses (and, in 4a, names) and a user id.  The
# fence asks it for the address it checked; the proxy mode too.
via_host_proxy ALL_PROXY="socks4://moatuid4@127.0.0.4:$SOCKS4" socks4 \
	"curl -sS -f -m 10 -p http://svc.test:$P2/; curl -sS -f -m 10 --noproxy '*' http://svc.test:$P2/; $HELPER tcpnb 127.0.0.2 $P2"
like "$(printf '%s' "$out" | head -3 | oneline)" "^hello from 127.0.0.2 hello from 127.0.0.2 (OK|REACHED)" \
	"with ALL_PROXY=socks4:// in moat's environment: the proxy mode's tunnel, directly by name, non-blocking by address"
like "$out" "\| 3$" "  all three reached the server"
is "$(tail -n +$((n0 + 1)) "$SCRATCH/upstream.log" | oneline)" \
	"SOCKS4 127.0.0.2:$P2 uid=ok SOCKS4 127.0.0.2:$P2 uid=ok SOCKS4 127.0.0.2:$P2 uid=ok" \
	"  each through the SOCKS4 proxy with its user id, to the address moat checked"
unlike "$out" "moatuid4|127\.0\.0\.4" "  the command's environment holds neither the host's proxy nor its user id"
is "$(jx "$REPORTS/socks4.json" '[d["network"]["upstream"]["all"], d["network"]["upstream"]["connects_via_upstream"], d["network"]["proxy"]["via_upstream"]]')" \
	"[\"socks4://127.0.0.4:$SOCKS4\", 2, 1]" "  the report names it (no user id) and counts what went through it"
is "$(grep -c moatuid4 "$REPORTS/socks4.json")" 0 "  the user id is nowhere in the report"
valid_report "$REPORTS/socks4.json" "  and it fits the schema"
refused_by_host_proxy ALL_PROXY="socks4://moatuid4@127.0.0.4:$SOCKS4"
is "$out" "56 | 0" "an address the SOCKS4 proxy refuses (reply 91): moat's 502, curl fails the CONNECT; the server saw nothing"
refused_credentials ALL_PROXY="socks4://other@127.0.0.4:$SOCKS4" "SOCKS4 127.0.0.2:$P2 uid=bad" \
	"a user id the SOCKS4 proxy refuses (reply 93)"
like "$(cat "$SCRATCH/refused.err")" "the host's proxy refused 2 of the command's connections \(SOCKS4 reply 93\)" \
	"  moat says at the end that the host's proxy refused them, and how"
# An HTTP proxy's 407: with the wrong password, and from a proxy that wants
# NTLM or Negotiate (which moat does not speak): the command sees its
# connects fail; moat says why, with the way out.
refused_credentials HTTPS_PROXY="http://user:wrong@127.0.0.4:$UP" "CONNECT 127.0.0.2:$P2 auth=bad" \
	"the wrong password for the host's HTTP proxy (407)"
like "$(cat "$SCRATCH/refused.err")" "refused 2 of the command's connections \(HTTP 407: the credentials in its URL were refused" \
	"  moat says the proxy refused the credentials"
like "$(cat "$SCRATCH/refused.err")" "hint: give user:password in the proxy's URL" "  with a hint"
refused_credentials HTTPS_PROXY="http://ntlm:x@127.0.0.4:$UP" "CONNECT 127.0.0.2:$P2 auth=bad" \
	"a host's proxy that asks for NTLM (407, Proxy-Authenticate: NTLM)"
like "$(cat "$SCRATCH/refused.err")" "refused 2 of the command's connections \(HTTP 407: it asks for NTLM authentication, and moat speaks only Basic\)" \
	"  moat says the proxy wants NTLM"
like "$(cat "$SCRATCH/refused.err")" "hint: run a local bridge that speaks NTLM to it \(cntlm, px\)" "  and names the way out"
unlike "$(cat "$SCRATCH/refused.err")" "ntlm:x|bnRsbTp4|wrong" "  the credentials are in neither message"
HTTPS_PROXY="socks4://moatuid4:pw@127.0.0.4:$SOCKS4" "$MOAT" run "${A[@]}" -- /bin/true 2>"$SCRATCH/bad"
is "$?" 125 "a SOCKS4 URL with a password is refused before anything runs (SOCKS4 cannot carry it)"
like "$(cat "$SCRATCH/bad")" "SOCKS4 takes a user id of 1 to 255 bytes and no password" "  and says why"
unlike "$(cat "$SCRATCH/bad")" "pw@" "  without repeating the URL"

# --- CA bundles named in moat's environment pass with their files -----------------
out=$(NODE_EXTRA_CA_CERTS=$TLSD/ca.pem REQUESTS_CA_BUNDLE=$SCRATCH/none.pem run -- /bin/sh -c \
	'echo "$NODE_EXTRA_CA_CERTS ${REQUESTS_CA_BUNDLE:-unset}"; head -1 "$NODE_EXTRA_CA_CERTS"; echo x 2>/dev/null >>"$NODE_EXTRA_CA_CERTS" || echo read-only' |
	oneline)
is "$out" "$TLSD/ca.pem unset -----BEGIN CERTIFICATE----- read-only" \
	"a CA bundle variable naming a file passes, the file readable and read-only; one naming nothing does not pass"
# Two variables naming one file: both pass, the file is granted once (a
# grant is a descriptor and a Landlock rule at every start).
out=$(NODE_EXTRA_CA_CERTS=$TLSD/ca.pem CURL_CA_BUNDLE=$TLSD/ca.pem run -- /bin/sh -c \
	'echo "$NODE_EXTRA_CA_CERTS $CURL_CA_BUNDLE"; head -1 "$CURL_CA_BUNDLE"' | oneline)
is "$out" "$TLSD/ca.pem $TLSD/ca.pem -----BEGIN CERTIFICATE-----" "two CA bundle variables naming one file both pass, the file readable"
NODE_EXTRA_CA_CERTS=$TLSD/ca.pem CURL_CA_BUNDLE=$TLSD/ca.pem "$MOAT" run "${A[@]}" --dry-run -- /bin/true \
	>"$REPORTS/ca-once.json" 2>>"$SCRATCH/stderr"
is "$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(sum(1 for x in r["policy"]["paths"] if x["path"] == sys.argv[2]))' "$REPORTS/ca-once.json" "$TLSD/ca.pem")" 1 \
	"  and granted once in the policy"
done_testing
