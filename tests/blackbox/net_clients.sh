#!/usr/bin/env bash
# net allow under the native backend: issue 18's clients through `moat run`,
# beyond those of net_fence.sh (curl, Node, Python urllib, the blocking C
# client).  Python's raw sockets, the C helper's non-blocking connect, DNS
# record types and a denied name's speed, git over HTTP, ssh and sftp to an
# sshd on loopback; and the tricks a client could try on its socket: TCP Fast
# Open to another address (on a fresh socket, and on the host socket a failed
# connect leaves behind), AF_UNSPEC and a reconnect, a socket dup'd before
# connect.  The servers (tests/lib/netservers.py) stand in for the outside:
# svc.test (127.0.0.2) is allowed, 127.0.0.3 and other.test are not.  Every
# server counts what it accepted, so a refusal is shown by the server having
# seen nothing; and every refusal has a control that reaches the same server
# with --net all.  Runs as root and as uid 65534.
set -u
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/netservers.sh"
net_setup

# --- a bare git repository for git's dumb HTTP protocol ------------------------
# The host's and the user's git configuration are left out everywhere
# (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL): a url.*.insteadOf or http.proxy
# there would send git elsewhere than the test means.
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
mkdir -p www
git init -q --bare www/repo.git
tree=$(git --git-dir=www/repo.git mktree </dev/null)
commit=$(GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@test GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@test \
	git --git-dir=www/repo.git commit-tree "$tree" -m init)
git --git-dir=www/repo.git update-ref refs/heads/main "$commit"
git --git-dir=www/repo.git update-server-info

start_netservers "$SCRATCH/www"

# --- an sshd on 127.0.0.2 and 127.0.0.3, as this user -------------------------
# As any user but root, sshd can only log that same user in; uid 65534's
# account it takes for locked unless PAM does the account check (without PAM
# it looks at the password field itself, and the unprivileged sshd cannot
# read /etc/shadow): hence UsePAM yes, for root as well.  Only public keys
# are accepted.  Root's sshd wants its privilege separation directory
# (Debian's tmpfiles makes it at boot; the package's service is not used).
# internal-sftp runs in sshd itself: uid 65534's login shell is nologin, so
# sftp, not a remote command, shows that a session works for every user.
SSHD_PID=""
ME=$(id -un)
trap '[ -n "$SSHD_PID" ] && kill "$SSHD_PID" 2>/dev/null; netservers_stop; rm -rf "$SCRATCH" "$REPORTS"' EXIT
if [ -x /usr/sbin/sshd ] && [ -x /usr/bin/ssh ]; then
	mkdir -p ssh
	ssh-keygen -q -t ed25519 -N '' -f ssh/hostkey
	ssh-keygen -q -t ed25519 -N '' -f ssh/userkey
	cp ssh/userkey.pub ssh/authorized_keys
	[ "$(id -u)" = 0 ] && [ ! -d /run/sshd ] && mkdir -m 0755 /run/sshd
	for _ in 1 2 3; do
		PS=$("$PY" -c 'import socket
for _ in range(20):
    a = socket.socket(); a.bind(("127.0.0.2", 0)); p = a.getsockname()[1]
    b = socket.socket()
    try:
        b.bind(("127.0.0.3", p)); print(p); break
    except OSError:
        pass')
		cat >ssh/sshd_config <<-EOF
			ListenAddress 127.0.0.2:$PS
			ListenAddress 127.0.0.3:$PS
			HostKey $SCRATCH/ssh/hostkey
			AuthorizedKeysFile $SCRATCH/ssh/authorized_keys
			AuthenticationMethods publickey
			PasswordAuthentication no
			KbdInteractiveAuthentication no
			StrictModes no
			UsePAM yes
			PidFile none
			LogLevel VERBOSE
			Subsystem sftp internal-sftp
		EOF
		# timeout: a test killed outright leaves no sshd for long (it
		# passes the trap's SIGTERM on to sshd).
		timeout 300 /usr/sbin/sshd -D -e -f "$SCRATCH/ssh/sshd_config" 2>ssh/log &
		SSHD_PID=$!
		for _ in $(seq 100); do
			grep -q "listening on 127.0.0.3 port $PS" ssh/log && grep -q "listening on 127.0.0.2 port $PS" ssh/log && break
			kill -0 "$SSHD_PID" 2>/dev/null || break
			sleep 0.05
		done
		grep -q "listening on 127.0.0.3 port $PS" ssh/log && break
		kill "$SSHD_PID" 2>/dev/null
		SSHD_PID=""
	done
	# The host key pinned, so a login proves it is this sshd.
	echo "[svc.test]:$PS,[127.0.0.2]:$PS,[127.0.0.3]:$PS $(cut -d' ' -f1-2 ssh/hostkey.pub)" >ssh/known_hosts
	echo "put $SCRATCH/ssh/upload-fenced $SCRATCH/ssh/uploaded-fenced" >ssh/batch-fenced
	echo "put $SCRATCH/ssh/upload-open $SCRATCH/ssh/uploaded-open" >ssh/batch-open
	echo "fenced $RANDOM$RANDOM" >ssh/upload-fenced
	echo "open $RANDOM$RANDOM" >ssh/upload-open
fi
PS=${PS:-1}

# NO_PROXY=*: the transparent fence alone -- proxy-aware clients (curl, git,
# npm, Python) would otherwise go through moat's proxy mode (net_proxy.sh).
A=(--profile strict --timeout 30 --read "$HELPER_DIR" --read "$SCRATCH"
	--allow-net "svc.test:$P2" --allow-net "svc.test:$PC" --allow-net "svc.test:$PS" --resolve svc.test=127.0.0.2
	--env GIT_CONFIG_NOSYSTEM=1 --env GIT_CONFIG_GLOBAL=/dev/null --env GIT_TERMINAL_PROMPT=0
	--env 'NO_PROXY=*' --env 'no_proxy=*')
O=(--profile strict --timeout 30 --read "$HELPER_DIR" --read "$SCRATCH" --net all
	--env GIT_CONFIG_NOSYSTEM=1 --env GIT_CONFIG_GLOBAL=/dev/null --env GIT_TERMINAL_PROMPT=0)
run() { "$MOAT" run "${A[@]}" "$@" 2>>"$SCRATCH/stderr"; }
open_run() { "$MOAT" run "${O[@]}" "$@" 2>>"$SCRATCH/stderr"; }
# The same, stdout and stderr together: a client's error message.
run2() { "$MOAT" run "${A[@]}" "$@" 2>&1; }
open_run2() { "$MOAT" run "${O[@]}" "$@" 2>&1; }

# --- Python, raw sockets ----------------------------------------------------------
cat >pyclient.py <<'PY'
import socket, sys
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    data = b""
    while True:
        b = s.recv(4096)
        if not b:
            break
        data += b
    print(data.split(b"\r\n\r\n", 1)[1].decode(), end="")
except Exception as e:
    print(type(e).__name__)
PY
is "$(seen 127.0.0.2 "$P2" run -- "$PY" pyclient.py svc.test "$P2")" "hello from 127.0.0.2 | 1" \
	"Python socket.create_connection to the allowed name reaches it"
is "$(seen 127.0.0.3 "$P3" run -- "$PY" pyclient.py 127.0.0.3 "$P3")" "ConnectionRefusedError | 0" \
	"  to an address not on the list: ConnectionRefusedError, and that server accepted nothing"
is "$(seen 127.0.0.3 "$P3" open_run -- "$PY" pyclient.py 127.0.0.3 "$P3")" "hello from 127.0.0.3 | 1" \
	"  control: with --net all the same client reaches it"

# --- the C helper, non-blocking: EINPROGRESS, poll, SO_ERROR, then a request ------
is "$(seen 127.0.0.2 "$P2" run -- "$HELPER" tcpnb svc.test "$P2")" "OK | 1" \
	"C, non-blocking connect to the allowed name: EINPROGRESS, poll, SO_ERROR 0, and a request gets its answer"
is "$(seen 127.0.0.3 "$P3" run -- "$HELPER" tcpnb 127.0.0.3 "$P3")" "ERR ECONNREFUSED | 0" \
	"  to an address not on the list: ECONNREFUSED, and that server accepted nothing"
is "$(seen 127.0.0.3 "$P3" open_run -- "$HELPER" tcpnb 127.0.0.3 "$P3")" "OK | 1" "  control: with --net all it reaches it"

# --- TCP Fast Open ------------------------------------------------------------------
# sendto(MSG_FASTOPEN) connects an unconnected socket to the send's address,
# behind connect(2): the fence refuses it in its filter (EOPNOTSUPP, what a
# kernel without client TFO says).
is "$(seen 127.0.0.3 "$P3" run -- "$HELPER" tfo 127.0.0.3 "$P3")" "ERR EOPNOTSUPP | 0" \
	"TCP Fast Open (sendto MSG_FASTOPEN) to an address not on the list: EOPNOTSUPP, that server accepted nothing"
is "$(seen 127.0.0.3 "$P3" open_run -- "$HELPER" tfo 127.0.0.3 "$P3")" "OK | 1" \
	"  control: with --net all the fast-open send reaches it"
# A non-blocking connect to an allowed destination where nothing listens
# (svc.test:$PC) fails, and leaves a socket of the host's namespace, not
# connected, on the descriptor: the fast-open send is tried on that one.
is "$(seen 127.0.0.3 "$P3" run -- "$HELPER" tfo 127.0.0.3 "$P3" svc.test "$PC")" "ERR EOPNOTSUPP | 0" \
	"  and on the host socket a failed allowed connect leaves behind: EOPNOTSUPP, nothing reached"
is "$(seen 127.0.0.3 "$P3" open_run -- "$HELPER" tfo 127.0.0.3 "$P3" 127.0.0.2 "$PC")" "OK | 1" \
	"  control: with --net all the same sequence reaches it"
is "$(run -- "$HELPER" tfo svc.test "$P2")" "ERR EOPNOTSUPP" \
	"  a fast-open send is refused to an allowed name too (the filter refuses every MSG_FASTOPEN send)"
is "$(run -- curl --tcp-fastopen -sS -m 10 "http://svc.test:$P2/")" "hello from 127.0.0.2" \
	"  curl --tcp-fastopen (TCP_FASTOPEN_CONNECT, then connect) reaches the allowed name"

# --- a host socket swapped under a CONTINUE'd connect (kernel/netfence.c, top) -------
# A connect with a non-INET address on a socket of the sandbox is CONTINUE'd:
# the kernel runs it again, reading the number and the address afresh.  A
# second thread swaps, under the number and in the address, the host socket a
# failed allowed connect left (svc.test:$PC) and AF_INET 127.0.0.3:$P3.  Only
# Landlock (no TCP connect right in the sandbox) refuses the kernel's re-run
# on the host socket: each race won is EACCES, which nothing else on this
# path answers.  At least one must be counted (else the run showed nothing:
# the control), and the server must see nothing.  Without Landlock's TCP
# rule (a mutation of kernel/landlock.c) it escaped within a few hundred tries.
is "$(seen 127.0.0.3 "$P3" run -- "$HELPER" swaprace 127.0.0.3 "$P3" svc.test "$PC" 20000 |
	sed -E 's/^HELD EACCES [1-9][0-9]* of/HELD EACCES n of/')" "HELD EACCES n of 20000 | 0" \
	"a host socket swapped under a CONTINUE'd connect: the kernel's re-run is refused by Landlock (EACCES, races won > 0), nothing reached"

# --- AF_UNSPEC, then a connect elsewhere; a socket dup'd before connect ------------
is "$(seen 127.0.0.3 "$P3" run -- "$HELPER" unspec svc.test "$P2" 127.0.0.3 "$P3")" "ERR EISCONN | 0" \
	"connected to the allowed name, AF_UNSPEC, connect to an address not on the list: EISCONN (the AF_UNSPEC is refused), nothing reached"
is "$(seen 127.0.0.3 "$P3" open_run -- "$HELPER" unspec 127.0.0.2 "$P2" 127.0.0.3 "$P3")" "OK | 1" \
	"  control: with --net all the AF_UNSPEC disconnects and the reconnect reaches it"
is "$(seen 127.0.0.3 "$P3" run -- "$HELPER" dup svc.test "$P2" 127.0.0.3 "$P3")" "ERR ECONNREFUSED | 0" \
	"a socket dup'd before connect: the original reaches the allowed name, the copy cannot reach an address not on the list"
is "$(seen 127.0.0.3 "$P3" open_run -- "$HELPER" dup 127.0.0.2 "$P2" 127.0.0.3 "$P3")" "ERR EISCONN | 0" \
	"  control: without the fence both numbers are one socket, connected already (EISCONN); the server is reachable (above)"

# --- DNS: other record types, and a denied name, fast ----------------------------
# A query by hand over UDP, to the resolver the sandbox's /etc/resolv.conf
# names (the fenced DNS).  A for the allowed name is the control: the same
# query code gets an answer.
# The script reads the nameserver from the file itself (as dnspython
# does), so the file must be readable in the sandbox: the fenced
# resolv.conf is a file bound over /etc/resolv.conf, which Landlock's rule
# for /etc's entry does not cover (child.c gives it a rule of its own).
cat >dnsq.py <<'PY'
import random, socket, struct, sys, time
try:
    ns = [l.split()[1] for l in open("/etc/resolv.conf") if l.split()[:1] == ["nameserver"]][0]
    print("resolv.conf: nameserver", ns)
except OSError as e:
    print("resolv.conf: unreadable:", type(e).__name__)
    sys.exit(0)
def ask(name, qtype):
    qid = random.randrange(65536)
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0" + struct.pack(">HH", qtype, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    t = time.monotonic()
    s.sendto(q, (ns, 53))
    try:
        r = s.recv(1500)
    except socket.timeout:
        return "no reply", 0
    dt = time.monotonic() - t
    rid, flags, _, an = struct.unpack(">HHHH", r[:8])
    if rid != qid:
        return "wrong id", dt
    out = "rcode %d, %d answer(s)" % (flags & 15, an)
    i = len(q)
    addrs = []
    for _ in range(an):
        i += 2 if r[i] & 0xC0 == 0xC0 else r.index(b"\0", i) + 1 - i
        rtype, _, _, rdlen = struct.unpack(">HHIH", r[i:i + 10])
        if rtype == 1 and rdlen == 4:
            addrs.append(socket.inet_ntoa(r[i + 10:i + 14]))
        i += 10 + rdlen
    return out + "".join(" " + a for a in addrs), dt
for name, qt, label in [("svc.test", 1, "A"), ("svc.test", 16, "TXT"), ("svc.test", 15, "MX"),
                        ("svc.test", 33, "SRV"), ("svc.test", 255, "ANY"), ("other.test", 1, "A")]:
    print("%s %s: %s" % (name, label, ask(name, qt)[0]))
_, dt = ask("other.test", 16)
t = time.monotonic()
try:
    socket.getaddrinfo("other.test", 80)
    print("other.test getaddrinfo: resolved")
except socket.gaierror as e:
    g = time.monotonic() - t
    print("other.test getaddrinfo: %s, %s" % (e.errno == socket.EAI_NONAME and "EAI_NONAME" or e, g < 1 and dt < 1 and "in under 1 s" or "slow: %.2f s, %.2f s" % (g, dt)))
PY
out=$(run -- "$PY" dnsq.py)
like "$out" "resolv.conf: nameserver 127.0.0.1" "the sandbox reads its /etc/resolv.conf, which names the fenced DNS"
like "$out" "svc.test A: rcode 0, 1 answer\(s\) 127.0.0.2" "DNS by hand to the sandbox's resolver: A for the allowed name is answered, 127.0.0.2"
like "$out" "svc.test TXT: rcode 0, 0 answer\(s\)" "  TXT for the allowed name: no answer (NODATA)"
like "$out" "svc.test MX: rcode 0, 0 answer\(s\)" "  MX: no answer"
like "$out" "svc.test SRV: rcode 0, 0 answer\(s\)" "  SRV: no answer"
like "$out" "svc.test ANY: rcode 0, 0 answer\(s\)" "  ANY: no answer"
like "$out" "other.test A: rcode 3, 0 answer\(s\)" "  a name not on the list: NXDOMAIN"
like "$out" "other.test getaddrinfo: EAI_NONAME, in under 1 s" "  and getaddrinfo fails for it (EAI_NONAME) fast: it and the raw query in under 1 s"

# --- git over HTTP (the dumb protocol: info/refs and objects as files) ------------
# git needs nothing more than moat gives (HOME is the user's or /nonexistent;
# moat passes on no GIT_* variable of its own): only the configuration is
# kept out, as above, and a prompt for credentials (GIT_TERMINAL_PROMPT=0).
want=$(printf '%s\trefs/heads/main' "$commit")
is "$(run -- git ls-remote "http://svc.test:$P2/repo.git")" "$want" "git ls-remote over HTTP lists the refs of the allowed name's repository"
out=$(run2 -- git ls-remote "http://other.test:$P3/repo.git")
like "$out" "Could not resolve host: other.test" "  a name not on the list: git cannot resolve it"
out=$(seen 127.0.0.3 "$P3" run -- git ls-remote "http://127.0.0.3:$P3/repo.git")
is "$out" " | 0" "  an address not on the list: git lists nothing, that server accepted nothing"
out=$(seen 127.0.0.3 "$P3" open_run -- git ls-remote "http://127.0.0.3:$P3/repo.git")
like "$out" "^$commit	refs/heads/main \| [1-9]" "  control: with --net all git lists it"

# --- ssh and sftp to the sshd on loopback -------------------------------------------
S=(-F /dev/null -i "$SCRATCH/ssh/userkey" -o "UserKnownHostsFile=$SCRATCH/ssh/known_hosts" -o StrictHostKeyChecking=yes
	-o BatchMode=yes -o ConnectTimeout=5)
if [ ! -x /usr/sbin/sshd ] || [ ! -x /usr/bin/ssh ]; then
	for _ in 1 2 3 4 5 6 7; do skip "openssh-server or -client is not installed (scripts/ensure-deps test installs them)"; done
elif [ -z "$SSHD_PID" ]; then
	ok 1 "the test's sshd starts on 127.0.0.2 and 127.0.0.3 (its log: $(head -3 ssh/log 2>/dev/null | tr '\n' ' '))"
else
	# "Authenticated to": the key was accepted, whatever the user's shell.
	out=$(run2 -- ssh -v "${S[@]}" -p "$PS" "$ME@svc.test" true)
	like "$out" "Authenticated to svc.test \(\[127.0.0.2\]:$PS\) using \"publickey\"" \
		"ssh to the allowed name: the pinned host key matches and $ME is logged in"
	run -- sftp "${S[@]}" -b "$SCRATCH/ssh/batch-fenced" -P "$PS" "$ME@svc.test" >/dev/null
	is "$(cat ssh/uploaded-fenced 2>/dev/null)" "$(cat ssh/upload-fenced)" "  sftp through it: a file put arrives (a session works)"
	out=$(run2 -- ssh "${S[@]}" -p "$PS" "$ME@other.test" true)
	like "$out" "Could not resolve hostname other.test" "  a name not on the list: ssh cannot resolve it"
	out=$(run2 -- ssh "${S[@]}" -p "$PS" "$ME@127.0.0.3" true)
	like "$out" "connect to host 127.0.0.3 port $PS: Connection refused" "  an address not on the list: Connection refused"
	out=$(open_run2 -- ssh -v "${S[@]}" -p "$PS" "$ME@127.0.0.3" true)
	like "$out" "Authenticated to 127.0.0.3 \(\[127.0.0.3\]:$PS\)" "  control: with --net all ssh logs in there"
	is "$(grep -c "^Connection from .* on 127.0.0.3 port $PS" ssh/log)" 1 "  and sshd saw one connection on 127.0.0.3: the control's"
	open_run -- sftp "${S[@]}" -b "$SCRATCH/ssh/batch-open" -P "$PS" "$ME@127.0.0.3" >/dev/null
	is "$(cat ssh/uploaded-open 2>/dev/null)" "$(cat ssh/upload-open)" "  control: sftp with --net all works there too"
fi
[ -s "$SCRATCH/stderr" ] && [ "$TAP_FAILED" -gt 0 ] && sed 's/^/# stderr: /' "$SCRATCH/stderr" | tail -30
done_testing
