#!/usr/bin/env bash
# net allow under the native backend: the fence (kernel/netfence.h,
# launch/fence.h).  Servers on the host's loopback stand in for the outside:
# 127.0.0.2 is allowed (by a pinned name, by address), 127.0.0.3 is not.
# Every refusal has a control that reaches the same server with --net all,
# so a refusal is the fence's, not a broken server's.  Real clients: the C
# helper (blocking connect), curl, Node 20's fetch, Python's urllib.
# Runs as root and as uid 65534.
set -u
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/netservers.sh"
net_setup
j() { json_get "$@" 2>/dev/null; }
jx() { json_eval "$@" 2>/dev/null; }

# --- the servers (tests/lib/netservers.py): HTTP on 127.0.0.2 and 127.0.0.3,
# a UDP counter on 127.0.0.2 ----------------------------------------------------
start_netservers
"$HELPER" tcp 127.0.0.2 "$P2" >"$SCRATCH/c2" 2>&1
"$HELPER" tcp 127.0.0.3 "$P3" >"$SCRATCH/c3" 2>&1
is "$(cat "$SCRATCH/c2")/$(cat "$SCRATCH/c3")" "OK/OK" "control: both host servers answer without moat"

# NO_PROXY=*: the transparent fence alone -- proxy-aware clients (curl, git,
# npm, Python) would otherwise go through moat's proxy mode (net_proxy.sh).
A=(--profile strict --read "$HELPER_DIR" --allow-net "svc.test:$P2" --resolve svc.test=127.0.0.2 --env 'NO_PROXY=*'
	--env 'no_proxy=*')
run() { "$MOAT" run "${A[@]}" "$@" 2>>"$SCRATCH/stderr"; }
open_run() { "$MOAT" run --profile strict --read "$HELPER_DIR" --net all "$@" 2>>"$SCRATCH/stderr"; }

# --- the report ---------------------------------------------------------------
run --report "$REPORTS/r.json" -- /bin/true
is "$?/$(j "$REPORTS/r.json" '["status"]')" "0/enforced" "require mode runs: every asked property, net.allow included, enforced"
is "$(j "$REPORTS/r.json" '["properties"]["net.allow"]["status"]')" enforced "net.allow is enforced"
like "$(j "$REPORTS/r.json" '["properties"]["net.allow"]["mechanism"]')" "seccomp user notification" "  by the fence"
valid_report "$REPORTS/r.json" "  the report fits the schema"
# net.loopback (network only to a private loopback) is not what net allow
# gives: the allowed svc.test is the host's own 127.0.0.2.  Without the
# fence (the network stays closed) the claim is true again.
is "$(jx "$REPORTS/r.json" 'sorted(d["properties"]["net.loopback"].items())')" '[["requested", false], ["status", "not-requested"]]' \
	"net.loopback is not claimed under net allow (not-requested, no mechanism)"
out=$(run --allow-net "127.0.0.2:$P2" -- "$HELPER" tcp 127.0.0.2 "$P2")
is "$out" "OK" "  and indeed the command reaches the host's loopback (--allow-net 127.0.0.2:$P2)"
out=$(MOAT_HOST_LIMIT=netfence=0 "$MOAT" run "${A[@]}" --allow-net "127.0.0.2:$P2" --mode prefer --report "$REPORTS/nofence.json" \
	-- "$HELPER" tcp 127.0.0.2 "$P2" 2>>"$SCRATCH/stderr")
like "$(j "$REPORTS/nofence.json" '["properties"]["net.loopback"]["status"]')/$out" "^enforced/ERR " \
	"control: without the fence (the network stays closed) net.loopback is enforced, and the host's 127.0.0.2 is unreachable"
# An entry whose range holds the host's loopback says so (host_loopback):
# 0.0.0.0/0 reaches the host's 127.0.0.3; 128.0.0.0/1, which does not hold
# it, neither reaches it nor says so.
for c in "0.0.0.0/0 true" "0.0.0.0/1 true" "128.0.0.0/1 false"; do
	read -r cidr want <<<"$c"
	out=$("$MOAT" run --profile strict --read "$HELPER_DIR" --allow-net "$cidr:$P3" --report "$REPORTS/cidr.json" -- \
		"$HELPER" tcp 127.0.0.3 "$P3" 2>>"$SCRATCH/stderr")
	got="$out/$(jx "$REPORTS/cidr.json" 'd["network"]["allow"][0]["host_loopback"]')"
	if [ "$want" = true ]; then
		is "$got" "OK/true" "--allow-net $cidr:PORT reaches the host's 127.0.0.3, and its entry says host_loopback"
	else
		like "$got" "^ERR [A-Z]+/false$" "control: --allow-net $cidr:PORT does not reach 127.0.0.3, and says host_loopback false"
	fi
done
valid_report "$REPORTS/cidr.json" "  the report fits the schema"

# --- allowed: a pinned name on its port, from every client ----------------------
out=$(run -- curl -sS -m 10 "http://svc.test:$P2/")
is "$out" "hello from 127.0.0.2" "curl reaches the allowed name (pinned to 127.0.0.2) on its port"
out=$(run -- node -e "fetch('http://svc.test:$P2/').then(r => r.text()).then(t => process.stdout.write(t)).catch(e => console.log('ERR', e.cause && e.cause.code))")
is "$out" "hello from 127.0.0.2" "Node 20 fetch reaches it"
out=$(run -- node -e "require('http').get('http://svc.test:$P2/', r => { let b=''; r.on('data', c => b += c); r.on('end', () => process.stdout.write(b)); }).on('error', e => console.log('ERR', e.code))")
is "$out" "hello from 127.0.0.2" "Node http.get reaches it"
out=$(run -- "$PY" -c "import urllib.request as u; print(u.urlopen('http://svc.test:$P2/', timeout=10).read().decode(), end='')")
is "$out" "hello from 127.0.0.2" "Python urllib reaches it"

# The fence holds the connecting thread on one CPU while it installs the
# socket (kernel/netfence.c, cpu_hold), and puts its own affinity back:
# after 40 connects, blocking and not, the command's mask is what it was,
# and a thread the command pinned to one CPU stays pinned there.
AFF='import os, socket, sys
port = int(sys.argv[2])
host = socket.getaddrinfo(sys.argv[1], port, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
def connects():
    for i in range(40):
        s = socket.socket()
        if i % 2:
            s.setblocking(False)
            try:
                s.connect((host, port))
            except BlockingIOError:
                pass
        else:
            s.connect((host, port))
        s.close()
before = sorted(os.sched_getaffinity(0))
connects()
after = sorted(os.sched_getaffinity(0))
one = {before[-1]}
os.sched_setaffinity(0, one)
connects()
print(before == after, sorted(os.sched_getaffinity(0)) == sorted(one), len(before))'
out=$(run -- "$PY" -c "$AFF" svc.test "$P2" 2>&1)
if [ "$(nproc)" -ge 2 ]; then
	like "$out" "^True True [0-9]+$" "after fenced connects the command's CPU affinity is its own: unchanged, and a pinned thread still pinned"
else
	skip "one CPU: the fence never holds a thread on it, so the command's affinity is never touched"
fi

# --- refused, each with its control --------------------------------------------
out=$(run -- node -e "fetch('http://other.test:$P3/').then(r => console.log('REACHED')).catch(e => console.log('ERR', e.cause && e.cause.code))")
is "$out" "ERR ENOTFOUND" "a name not on the list: Node gets ENOTFOUND (the fenced DNS says NXDOMAIN)"
run -- curl -sS -m 10 -o /dev/null "http://other.test:$P3/"
is $? 6 "  and curl cannot resolve it (exit 6)"
out=$(run -- "$HELPER" tcp 127.0.0.3 "$P3")
unlike "$out" "^OK" "an address not on the list (127.0.0.3:$P3): the connect is refused"
is "$(open_run -- "$HELPER" tcp 127.0.0.3 "$P3")" OK "  control: with --net all the same connect reaches it"
out=$(run -- "$HELPER" tcp 127.0.0.2 "$P3")
unlike "$out" "^OK" "the allowed name's address on another port: refused"
run -- curl -sS -m 10 -o /dev/null "http://svc.test:$P3/"
is $? 7 "  and the allowed name on another port: curl cannot connect (exit 7)"
out=$(run -- "$HELPER" udp 127.0.0.2 "$PU")
sleep 0.5
is "$(udp_count)" 0 "UDP to a host listener does not arrive (the namespace has only lo)"
open_run -- "$HELPER" udp 127.0.0.2 "$PU" >/dev/null
sleep 0.5
is "$(udp_count)" 1 "  control: with --net all it does"

# --- the report counts what the fence did ----------------------------------------
run --report "$REPORTS/counts.json" -- sh -c "curl -sS -m 10 -o /dev/null http://svc.test:$P2/; curl -sS -m 5 -o /dev/null http://other.test:$P3/; $HELPER tcp 127.0.0.3 $P3" >/dev/null
is "$(jx() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1]))["network"]["fence"]; print(d["connects_forwarded"] >= 1, d["connects_refused"] + d["connects_local"] >= 1, d["dns_denied"] >= 1)' "$1"; }; jx "$REPORTS/counts.json")" \
	"True True True" "the report counts the fence's decisions: connects forwarded, refused (a loopback address not allowed stays on the sandbox's own lo), names denied"
valid_report "$REPORTS/counts.json" "  and fits the schema"

# --- what the fence decided, name by name, and --events-fd ---------------------
# 192.0.2.1 (TEST-NET-1) is refused by the fence itself: nothing is sent.
run --report "$REPORTS/log.json" --events-fd 5 -- sh -c "curl -sS -m 10 -o /dev/null http://svc.test:$P2/; curl -sS -m 5 -o /dev/null http://other.test:$P3/; $HELPER tcp 192.0.2.1 443; $HELPER tcp 127.0.0.3 $P3" >/dev/null 5>"$SCRATCH/events"
logcheck() {
	"$PY" - "$REPORTS/log.json" "$SCRATCH/events" "$1" "$P2" "$P3" <<'PY'
import json, sys
net = json.load(open(sys.argv[1]))["network"]
ev = [json.loads(l) for l in open(sys.argv[2])]
what, p2, p3 = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
names = {n["name"]: n for n in net["names"]}
conns = {(c["address"], c["port"]): c for c in net["connections"]}
if what == "names":
    s, o = names.get("svc.test", {}), names.get("other.test", {})
    print(s.get("answered", 0) >= 1, s.get("addresses"), o.get("denied", 0) >= 1, o.get("addresses"))
elif what == "conns":
    a, r, l = conns.get(("127.0.0.2", p2), {}), conns.get(("192.0.2.1", 443), {}), conns.get(("127.0.0.3", p3), {})
    print(a.get("allowed"), a.get("name"), r.get("refused"), r.get("name"), l.get("local"))
elif what == "events":
    kinds = sorted({(e["event"], e.get("destination") or e.get("name")) for e in ev})
    print(" ".join("%s=%s" % k for k in kinds), len(ev) == net["events"]["written"], net["events"]["dropped"])
PY
}
is "$(logcheck names)" "True ['127.0.0.2'] True []" \
	"the report lists each name asked: svc.test answered with 127.0.0.2, other.test denied"
is "$(logcheck conns)" "1 svc.test 1 None 1" \
	"  and each destination: 127.0.0.2:$P2 allowed (as svc.test), 192.0.2.1:443 refused, 127.0.0.3:$P3 kept on the sandbox's loopback"
is "$(logcheck events)" "connect_local=127.0.0.3:$P3 connect_refused=192.0.2.1:443 name_denied=other.test True 0" \
	"--events-fd: one JSON line per refusal (the name denied, the address refused, the loopback address kept inside), as counted in the report"
valid_report "$REPORTS/log.json" "  the report fits the schema"
# A line arrives while the command still runs (a client shows "blocked" at
# once), and a reader that does not read never holds moat up.  The command
# runs 30 s after its refused lookup (it is killed once the line is read),
# and the line may take 20 s: a run that wrote its lines only at its end
# still fails, and a slow start on a loaded machine (moat, the fence, curl)
# no longer eats a window of 3.5 s.
out=$("$PY" - "$MOAT" "$P3" "$REPORTS" "${A[@]}" <<'PY'
import os, select, subprocess, sys, time
moat, p3, reports, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
r, w = os.pipe()
p = subprocess.Popen([moat, "run", *args, "--events-fd", str(w), "--", "sh", "-c",
                      "curl -sS -m 5 -o /dev/null http://other.test:%s/ 2>/dev/null; sleep 30" % p3],
                     pass_fds=[w], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.close(w)
ready = select.select([r], [], [], 20)[0]
line = os.read(r, 4096).decode() if ready else ""
print("streamed" if '"name_denied"' in line and p.poll() is None else "not streamed: %r, moat %s" % (line, p.poll()))
p.kill(); p.wait()
# A reader that never reads: 3000 denied names' lines do not fit a pipe.
r, w = os.pipe()
rep = os.path.join(reports, "flood.json")
t = time.monotonic()
p = subprocess.run([moat, "run", *args, "--report", rep, "--events-fd", str(w), "--", "python3", "-c",
                    "import socket\nfor i in range(1500):\n    try: socket.getaddrinfo('n%d.test' % i, 80)\n    except OSError: pass"],
                   pass_fds=[w], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
import json
ev = json.load(open(rep))["network"]["events"]
print("exit %d, written %s, dropped %s" % (p.returncode, ev["written"] > 0, ev["dropped"] > 0))
PY
)
is "$(echo "$out" | head -1)" streamed "--events-fd: a refused name's line arrives while the command still runs"
is "$(echo "$out" | tail -1)" "exit 0, written True, dropped True" \
	"  a reader that never reads: moat does not wait for it, drops lines and counts them in the report"
# Where the events may go: the checks of --report-fd.
"$MOAT" run "${A[@]}" --events-fd 1 -- /bin/true 2>"$SCRATCH/e1"
is "$?" 125 "--events-fd 1 is refused (stdio is the command's)"
"$MOAT" run "${A[@]}" --events-fd 5 -- /bin/true 5>/dev/null 2>"$SCRATCH/e2"
like "$?:$(cat "$SCRATCH/e2")" "^125:.*--events-fd 5: is a character device" "--events-fd on /dev/null is refused, naming what it is"
"$MOAT" run "${A[@]}" --events-fd 5 --keep-fd 5 -- /bin/true 5>"$SCRATCH/e3f" 2>"$SCRATCH/e3"
like "$?:$(cat "$SCRATCH/e3")" "^125:.*--events-fd 5 is also --keep-fd 5" "--events-fd that the command would inherit is refused"
"$MOAT" run "${A[@]}" --events-fd 5 --report-fd 5 -- /bin/true 5>"$SCRATCH/e4f" 2>"$SCRATCH/e4"
like "$?:$(cat "$SCRATCH/e4")" "^125:.*descriptor of (its|their) own" "--events-fd and --report-fd on one descriptor are refused"

# --- names below a wildcard, looked up by the host's resolver in moat's threads -
# moat asks the host's own resolver, so the test gives moat one of its own: a
# private mount namespace (root only) with an /etc/hosts naming a.wild.test
# and a resolv.conf naming a DNS server of the test's on 127.0.0.53.  It
# holds its answer for slow.wild.test until it is asked release.wild.test
# (20 s at most); asked.wild.test it answers once slow.wild.test has been
# asked.  While slow.wild.test is held, a.wild.test must resolve and connect:
# moat's loop does not wait for a lookup.  By order, not by time: the command
# asks slow.wild.test in a thread, waits for asked.wild.test (so the slow
# lookup is at the server), fetches a.wild.test three times, each while the
# slow lookup is still running, then asks release.wild.test.  A loop that
# waits for the slow lookup answers asked.wild.test only after the 20 s, and
# then the slow lookup is over before the fetches (the old form allowed each
# fetch 0.5 s beside a 1.5 s lookup, which a loaded machine could miss).  The
# address entry 127.0.0.2:P2 lets the names have 127.0.0.2 on that port (the
# rebinding rule: a private address needs an entry on the port;
# net_rebind.sh).
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	printf '127.0.0.1 localhost\n127.0.0.2 a.wild.test\n' >"$SCRATCH/hosts"
	# glibc's longest wait for an answer (30 s): the server holds one 20 s.
	printf 'nameserver 127.0.0.53\noptions timeout:30 attempts:1\n' >"$SCRATCH/resolv"
	rm -f "$SCRATCH/dns.up"
	"$PY" - "$SCRATCH" <<'PY' &
import socket, struct, sys, threading, time, os
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.53", 53)); s.settimeout(0.5)
open(sys.argv[1] + "/dns.up", "w").close()
asked, released = threading.Event(), threading.Event()
def answer(q, src):
    name, i = [], 12
    while q[i]:
        name.append(q[i + 1:i + 1 + q[i]].decode()); i += 1 + q[i]
    qtype = struct.unpack(">H", q[i + 1:i + 3])[0]
    name = ".".join(name).lower()
    known = name in ("slow.wild.test", "asked.wild.test", "release.wild.test")
    if name == "slow.wild.test":
        asked.set()
        released.wait(20)
    elif name == "asked.wild.test":
        asked.wait(20)
    elif name == "release.wild.test":
        released.set()
    hdr = q[:2] + struct.pack(">HHHHH", 0x8180 if known else 0x8183, 1, 1 if known and qtype == 1 else 0, 0, 0)
    r = hdr + q[12:i + 5]
    if known and qtype == 1:
        r += struct.pack(">HHHIH", 0xC00C, 1, 1, 60, 4) + socket.inet_aton("127.0.0.2")
    s.sendto(r, src)
end = time.time() + 300
while time.time() < end and os.path.exists(sys.argv[1] + "/dns.up"):
    try:
        q, src = s.recvfrom(512)
    except socket.timeout:
        continue
    threading.Thread(target=answer, args=(q, src), daemon=True).start()
PY
	dnspid=$!
	if wait_ready 30 "the test's DNS server on 127.0.0.53 (dns.up)" test -e "$SCRATCH/dns.up"; then
		out=$(unshare -m sh -c 'mount --bind "$1/hosts" /etc/hosts && mount --bind "$1/resolv" /etc/resolv.conf && shift && exec "$@"' _ "$SCRATCH" \
			"$MOAT" run --profile strict --allow-net "*.wild.test:$P2" --allow-net "127.0.0.2:$P2" -- "$PY" -c "
import socket, threading, urllib.request
slow = {}
def resolve_slow():
    try: slow['addr'] = socket.getaddrinfo('slow.wild.test', $P2, socket.AF_INET)[0][4][0]
    except OSError as e: slow['addr'] = repr(e)
def lookup(name):
    try: return socket.getaddrinfo(name, $P2, socket.AF_INET)[0][4][0]
    except OSError as e: return repr(e)
th = threading.Thread(target=resolve_slow); th.start()
gate = lookup('asked.wild.test')
held = []
for i in range(3):
    try: body = urllib.request.urlopen('http://a.wild.test:$P2/', timeout=20).read().decode().strip()
    except Exception as e: body = repr(e)
    held.append(th.is_alive())
lookup('release.wild.test')
th.join()
print(body, '|', 'asked', gate, '|', 'during the slow lookup' if all(held) else 'fetches while held: %s' % held, '|', slow['addr'])
" 2>&1)
		is "$out" "hello from 127.0.0.2 | asked 127.0.0.2 | during the slow lookup | 127.0.0.2" \
			"a name below a wildcard is looked up by the host's resolver; while a slow one is looked up (held by the server), another resolves and connects"
	fi
	rm -f "$SCRATCH/dns.up"
	wait "$dnspid" 2>/dev/null
else
	skip "the wildcard lookup test gives moat a resolver of its own in a private mount namespace: root only"
fi

# --- an address entry, and the host's own loopback -----------------------------
out=$("$MOAT" run --profile strict --read "$HELPER_DIR" --allow-net "127.0.0.2:$P2" -- "$HELPER" tcp 127.0.0.2 "$P2" 2>/dev/null)
is "$out" OK "an address entry (127.0.0.2:$P2) is reachable by address"
out=$("$MOAT" run --profile strict --read "$HELPER_DIR" --allow-net "127.0.0.2:$P2" -- "$HELPER" tcp 127.0.0.3 "$P3" 2>/dev/null)
unlike "$out" "^OK" "  and nothing else is"

# --- a real MCP server that fetches, driven by the SDK's client -----------------
E2E=$ROOT/tests/e2e
MCP_EVENTS=$SCRATCH/mcp-events
if [ -d "$E2E/node_modules/@modelcontextprotocol/sdk" ] && [ -d "$E2E/node_modules/zod" ]; then
	# The client spawns moat with its stdio and a default environment only:
	# a shell between them opens the events file on fd 7.
	E2E_URLS="http://svc.test:$P2/ http://other.test:$P3/ http://127.0.0.3:$P3/" timeout 60 \
		node "$E2E/client.mjs" fetch --out "$SCRATCH/mcp.json" -- \
		sh -c "exec \"\$0\" \"\$@\" 7>'$MCP_EVENTS'" "$MOAT" run --profile mcp "${A[@]:2}" --report "$REPORTS/mcp.json" \
		--events-fd 7 -- node "$E2E/fetch-server.mjs" 2>>"$SCRATCH/stderr"
	res=$("$PY" -c 'import json,sys; print(" | ".join(r["text"].strip() for r in json.load(open(sys.argv[1]))["results"]))' \
		"$SCRATCH/mcp.json" 2>/dev/null)
	is "$res" "hello from 127.0.0.2 | ERR ENOTFOUND | ERR ECONNREFUSED" \
		"an MCP server (SDK) fetching through the fence: the allowed URL works, a name and an address not on the list are refused"
	is "$(j "$REPORTS/mcp.json" '["properties"]["net.allow"]["status"]')" enforced "  its report: net.allow enforced"
	is "$("$PY" -c 'import json,sys; print(" ".join(sorted({json.loads(l)["event"] + "=" + (json.loads(l).get("destination") or json.loads(l)["name"]) for l in open(sys.argv[1])})))' "$MCP_EVENTS" 2>&1)" \
		"connect_local=127.0.0.3:$P3 name_denied=other.test" "  its --events-fd: the name and the address it was refused, one line each"
	E2E_URLS="http://127.0.0.3:$P3/" timeout 60 \
		node "$E2E/client.mjs" fetch --out "$SCRATCH/mcp-open.json" -- \
		"$MOAT" run --profile mcp --net all -- node "$E2E/fetch-server.mjs" \
		2>>"$SCRATCH/stderr"
	res=$("$PY" -c 'import json,sys; print(" | ".join(r["text"].strip() for r in json.load(open(sys.argv[1]))["results"]))' \
		"$SCRATCH/mcp-open.json" 2>/dev/null)
	is "$res" "hello from 127.0.0.3" "  control: with --net all the same server reaches the address the fence refused"
else
	skip "tests/e2e/node_modules is not installed (tests/blackbox/e2e_mcp.sh installs it)"
fi

# --- the host's socket defaults, and the command's own options ------------------
# A host whose per-namespace TCP sysctls differ from a new namespace's (here
# a net namespace of the test's own, tuned): the installed socket has the
# host's defaults, as a direct connect's, not the sandbox's (copying
# SO_RCVBUF would also turn the kernel's receive autotuning off), and what
# the command set itself is carried over.  Root only (unshare -n, sysctl).
if [ "$(id -u)" = 0 ] && unshare -n true 2>/dev/null; then
	out=$(unshare -n "$PY" - "$MOAT" <<'PY' 2>>"$SCRATCH/stderr"
import fcntl, socket, struct, subprocess, sys
moat = sys.argv[1]
# lo up (SIOCSIFFLAGS: IFF_UP | IFF_LOOPBACK | IFF_RUNNING), without iproute2
fcntl.ioctl(socket.socket(socket.AF_INET, socket.SOCK_DGRAM), 0x8914, struct.pack("16sH14x", b"lo", 0x49))
for k, v in (("ipv4/tcp_keepalive_time", "600"), ("ipv4/ip_default_ttl", "100"), ("ipv4/tcp_syn_retries", "3"),
             ("ipv4/tcp_rmem", "4096 65536 6291456")):
    open("/proc/sys/net/" + k, "w").write(v)
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(16)
port = srv.getsockname()[1]
client = r"""
import socket, sys
s = socket.socket()
if len(sys.argv) > 2:
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 30)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, 42)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 50000)
s.connect(("127.0.0.1", int(sys.argv[1])))
print(s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF), s.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
      s.getsockopt(socket.IPPROTO_IP, socket.IP_TTL), s.getsockopt(socket.IPPROTO_TCP, socket.TCP_SYNCNT))
"""
res = []
for extra in ([], ["set"]):
    direct = subprocess.run([sys.executable, "-c", client, str(port)] + extra, capture_output=True, text=True).stdout
    fenced = subprocess.run([moat, "run", "--profile", "strict", "--allow-net", "127.0.0.1:%d" % port, "--",
                             sys.executable, "-c", client, str(port)] + extra, capture_output=True, text=True).stdout
    res.append("same" if direct.strip() and direct == fenced else "direct %r fenced %r" % (direct, fenced))
print(" ".join(res))
PY
)
	is "$out" "same same" "on a host with its own TCP defaults (rmem, keepalive, TTL, SYN retries) the installed socket has the host's, and the command's own options are carried over"
else
	skip "the host's socket defaults: needs root (a net namespace with tuned sysctls)"
fi

# --- no fence, no network ------------------------------------------------------
out=$(MOAT_HOST_LIMIT=netfence=0 "$MOAT" run --mode prefer "${A[@]}" --report "$REPORTS/nf.json" -- \
	curl -sS -m 5 -o /dev/null -w '%{http_code}' "http://svc.test:$P2/" 2>/dev/null)
is "$(j "$REPORTS/nf.json" '["properties"]["net.allow"]["status"]')" missing "without the fence (MOAT_HOST_LIMIT=netfence=0) net.allow is missing"
unlike "$out" "200" "  and the network stays closed: the allowed name is not reached either"
MOAT_HOST_LIMIT=netfence=0 "$MOAT" run "${A[@]}" -- /bin/true 2>/dev/null
is $? 125 "  require mode refuses to run"
# Without user namespaces (a CI container, Ubuntu's AppArmor rule): root
# still makes its namespaces and the fence holds; any other user has no
# network namespace, so no fence -- never half of one -- and no network.
out=$(MOAT_HOST_LIMIT=userns=0 "$MOAT" run --backend native --mode prefer "${A[@]}" --report "$REPORTS/nu.json" -- \
	curl -sS -m 5 "http://svc.test:$P2/" 2>/dev/null)
if [ "$(id -u)" = 0 ]; then
	is "$(j "$REPORTS/nu.json" '["properties"]["net.allow"]["status"]')/$out" "enforced/hello from 127.0.0.2" \
		"without user namespaces, root's moat still fences: net.allow enforced, the allowed name reached"
else
	is "$(j "$REPORTS/nu.json" '["properties"]["net.allow"]["status"]')/$(j "$REPORTS/nu.json" '["properties"]["net.allow"]["reason"]')/$out" \
		"missing/the fenced allowlist needs a network namespace; the network stays closed/" \
		"without user namespaces (not root): net.allow missing, with the reason, and the allowed name is not reached either"
fi
# Without seccomp as well, nothing closes UDP: the reason says so (it said
# "the network stays closed"), and a datagram to a host listener arrives.
UDPLOG=$SCRATCH/udp.log
timeout 20 /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True); s.settimeout(15)
try:
    print(s.recv(100).decode(), flush=True)
except OSError:
    pass' >"$UDPLOG" &
UDPPID=$!
wait_ready 30 "the UDP listener on 127.0.0.1 (its port in udp.log)" test -s "$UDPLOG"
UPORT=$(head -1 "$UDPLOG")
MOAT_HOST_LIMIT=userns=0,seccomp=0,root=0 "$MOAT" run --backend native --mode prefer "${A[@]}" \
	--report "$REPORTS/ns.json" -- /usr/bin/python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'udp-out', ('127.0.0.1', $UPORT))" \
	2>/dev/null
wait "$UDPPID"
like "$(j "$REPORTS/ns.json" '["properties"]["net.allow"]["status"]')/$(j "$REPORTS/ns.json" '["properties"]["net.allow"]["reason"]')" \
	"^missing/.*nor is the network closed without seccomp: .*UDP and other protocols reach the host's network$" \
	"without user namespaces and seccomp: net.allow missing, and the reason says UDP is not closed"
is "$(sed -n 2p "$UDPLOG")" udp-out "  which is true: a datagram from the sandbox reaches a host listener"
# --- an allowed name on another port --------------------------------------------
# An entry is a name and a port: svc3.test:$P2 (pinned to 127.0.0.3) does not
# open 127.0.0.3:$P3, where a server listens, to a connect by that name.  (The
# refusals above try ports where nothing listens: a mutant of the fence that
# judged the name on any port passed them.)  Control: with svc3.test:$P3 the
# same connect reaches the server.
CONN='import socket, sys
try:
    socket.create_connection(("svc3.test", int(sys.argv[1])), timeout=10)
    print("OK")
except OSError as e:
    print("ERR", e.__class__.__name__)'
out=$(seen 127.0.0.3 "$P3" "$MOAT" run --profile strict --allow-net "svc3.test:$P2" --resolve svc3.test=127.0.0.3 -- \
	"$PY" -c "$CONN" "$P3" 2>>"$SCRATCH/stderr")
like "$out" "^ERR [A-Za-z]+ \| 0$" "an allowed name on a port not on its entry: the connect is refused, the server saw nothing ($out)"
out=$(seen 127.0.0.3 "$P3" "$MOAT" run --profile strict --allow-net "svc3.test:$P3" --resolve svc3.test=127.0.0.3 -- \
	"$PY" -c "$CONN" "$P3" 2>>"$SCRATCH/stderr")
is "$out" "OK | 1" "  control: with the port on the entry the same connect reaches it"
# --- the fenced resolver files are read-only, metadata too ----------------------
# /etc/resolv.conf, /etc/hosts and /etc/nsswitch.conf are files of moat's
# own bound over the host's (child.c, fence_bind_file), remounted read-only:
# Landlock refuses writing their contents, not changing their times or mode,
# which fs.write (enforced) says no file outside the write grants allows.
# Without the remount, touch and chmod changed them.  Control: the same
# calls change a file of a write grant.
mkdir -p "$SCRATCH/meta" && chmod 0777 "$SCRATCH/meta" && : >"$SCRATCH/meta/f" && chmod 0666 "$SCRATCH/meta/f"
META='for f in /etc/resolv.conf /etc/hosts /etc/nsswitch.conf "$1"; do
	if [ ! -e "$f" ]; then echo "$f:absent"
	elif touch -d 2001-01-01 "$f" 2>/dev/null || chmod 0600 "$f" 2>/dev/null; then echo "$f:changed"
	else echo "$f:held"; fi
done'
out=$(run --write "$SCRATCH/meta" -- /bin/sh -c "$META" sh "$SCRATCH/meta/f" | tr '\n' ' ')
like "$out" "^/etc/resolv.conf:held /etc/hosts:(held|absent) /etc/nsswitch.conf:(held|absent) " \
	"the fenced resolver files: touch and chmod fail inside ($out)"
like "$out" " $SCRATCH/meta/f:changed $" "  control: the same calls change a file of the write grant"

done_testing
