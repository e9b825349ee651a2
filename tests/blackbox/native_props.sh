#!/usr/bin/env bash
# Break every property of the native backend (issue 3, Tests).
#
# For each property moat's report marks "enforced" on this host, an attempt
# of the forbidden operation is made inside the sandbox and must fail, and a
# control run with that protection removed (--mode off, --net all, no
# --memory, ...) must succeed: a test that cannot fail proves nothing.  The
# host side is checked from outside (listeners count what reached them, the
# canary process is still alive, files are unchanged).
#
# Runs as root, as an unprivileged user and with the sanitizer build of moat
# ($MOAT); the probes are $HELPER (tests/helpers/testhelper.c).  Every
# canary is under $SCRATCH; every background process is bounded by timeout
# and killed at exit.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
unset MOAT_HOST_LIMIT
PY=/usr/bin/python3
UID_NOW=$(id -u)
UNIQ="$$-$RANDOM$RANDOM"
BG_PIDS=""
IPC_MADE="" # the SysV objects the test made, as ipcrm's m:ID s:ID q:ID, removed at exit
cleanup() {
	local p
	for p in $BG_PIDS; do kill -9 "$p" 2>/dev/null; done
	rm -f "/tmp/moat-inside-$UNIQ"
	for p in $IPC_MADE; do ipcrm "-${p%%:*}" "${p#*:}" 2>/dev/null; done
	rm -rf "$SCRATCH" "$REPORTS"
}
trap cleanup EXIT

skip_test() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N # SKIP $*"; }
declare -A COVERED
cover() { COVERED[$1]=1; }

# --- fixtures ---------------------------------------------------------------
HOMED=$SCRATCH/home
PROJ=$SCRATCH/proj
OUTSIDE=$SCRATCH/outside
RO=$SCRATCH/ro
SOCKD=$SCRATCH/sock
mkdir -p "$HOMED/.ssh" "$HOMED/.aws" "$PROJ" "$OUTSIDE" "$RO" "$SOCKD"
SSH_MARK="moat-ssh-key-$UNIQ" AWS_MARK="moat-aws-secret-$UNIQ" NETRC_MARK="moat-netrc-pass-$UNIQ"
OUT_MARK="moat-outside-$UNIQ" RO_MARK="moat-readonly-$UNIQ" ENV_MARK="moat-env-secret-$UNIQ"
echo "$SSH_MARK" >"$HOMED/.ssh/id_ed25519"
echo "$AWS_MARK" >"$HOMED/.aws/credentials"
echo "machine example.com password $NETRC_MARK" >"$HOMED/.netrc"
chmod 0600 "$HOMED/.ssh/id_ed25519" "$HOMED/.aws/credentials" "$HOMED/.netrc"
echo "$OUT_MARK" >"$OUTSIDE/canary.txt"
echo "$RO_MARK" >"$RO/file.txt"
echo "home file" >"$HOMED/notes.txt"
# Planted before launch in the writable project dir, pointing at a secret.
ln -s "$HOMED/.ssh/id_ed25519" "$PROJ/key-link"
ln -s "$HOMED/.ssh" "$PROJ/ssh-dir-link"
CANARIES=("$HOMED/.ssh/id_ed25519" "$HOMED/.aws/credentials" "$HOMED/.netrc")
MARKS=("$SSH_MARK" "$AWS_MARK" "$NETRC_MARK")
cd /

# moat run with the fake HOME; moat's stderr is kept for the checks below
# and for the sanitizer scan at the end.
M() {
	local rc
	env HOME="$HOMED" "$MOAT" run --backend native "$@" 2>"$SCRATCH/last.err"
	rc=$?
	cat "$SCRATCH/last.err" >>"$SCRATCH/all.err"
	return $rc
}
# Same, with the host made to look weaker.
ML() { # ML LIMIT ARGS...
	local lim=$1
	shift
	MOAT_HOST_LIMIT=$lim M "$@"
}
S=(--profile strict)
# Control runs: the same command unsandboxed.
OFF=(--mode off --profile strict)
# The fallback with no namespace at all, even as root: Landlock, seccomp and
# rlimits alone.
LL_ONLY="userns=0,root=0"

# The report of a plain strict run: which properties are enforced here.
M "${S[@]}" --report "$REPORTS/base.json" -- "$HELPER" exit 0
is "$?" 0 "strict run of the helper works"
M "${S[@]}" --net loopback --report "$REPORTS/lo.json" -- "$HELPER" exit 0
prop_status() { json_get "$1" "[\"properties\"][\"$2\"][\"status\"]" 2>/dev/null; }
diag "host: uid $UID_NOW, $(json_get "$REPORTS/base.json" '["host"]["kernel"]'), landlock ABI $(json_get "$REPORTS/base.json" '["host"]["landlock_abi"]')"

# --- fs.secrets -------------------------------------------------------------
cover fs.secrets
for i in 0 1 2; do
	c=${CANARIES[$i]} mk=${MARKS[$i]} name=${c#"$HOMED"/}
	out=$(M "${S[@]}" --read "$HOMED" -- "$HELPER" read "$c")
	unlike "$out" "$mk" "fs.secrets: ~/$name under a granted HOME: marker not read ($out)"
	like "$out" '^(ERR |OK $)' "fs.secrets: ~/$name refused or masked empty"
	out=$(M "${OFF[@]}" -- "$HELPER" read "$c")
	like "$out" "$mk" "fs.secrets control (--mode off): ~/$name is readable"
done
# The masks over denied entries (binds of the staging tmpfs's empty file
# and directory) are read-only, nosuid, nodev and noexec: cloned from a
# staging mount made so (kernel/mounts.c), not set one by one.
masks=$(M "${S[@]}" --read "$HOMED" -- /bin/cat /proc/self/mountinfo | awk '$4 == "/mask" || $4 == "/mask-dir" {print $6}')
if [ -n "$masks" ]; then
	bad=$(printf '%s\n' "$masks" | grep -Ev '^ro,nosuid,nodev,noexec(,|$)' | head -n 3 | tr '\n' ' ')
	is "$bad" "" "fs.secrets: the $(printf '%s\n' "$masks" | wc -l) masks in the view are mounted ro,nosuid,nodev,noexec"
else
	skip_feature landlock "fs.secrets: no mask in this view (without Landlock denied entries are left out instead)"
fi
out=$(M "${S[@]}" --write "$HOMED" -- "$HELPER" read "$HOMED/.ssh/../.ssh/id_ed25519")
unlike "$out" "$SSH_MARK" "fs.secrets: a '..' walk under a writable HOME does not reach the key"
out=$(M "${S[@]}" --read "$HOMED" -- "$HELPER" read "$HOMED/notes.txt")
like "$out" "^OK home file" "fs.secrets: the rest of the granted HOME stays readable"
for g in "--read $HOMED" ""; do
	# shellcheck disable=SC2086
	out=$(M "${S[@]}" --write "$PROJ" $g -- "$HELPER" read "$PROJ/key-link")
	unlike "$out" "$SSH_MARK" "fs.secrets: planted symlink in the writable project dir ${g:+(HOME granted) }does not lead to the key ($out)"
done
out=$(M "${S[@]}" --read "$PROJ/key-link" -- "$HELPER" read "$PROJ/key-link")
unlike "$out" "$SSH_MARK" "fs.secrets: granting the planted link itself does not grant the key ($out)"
out=$(M "${S[@]}" --read "$HOMED/.ssh/id_ed25519" -- "$HELPER" read "$HOMED/.ssh/id_ed25519")
unlike "$out" "$SSH_MARK" "fs.secrets: an explicit --read of the key loses to the built-in deny ($out)"
out=$(M "${S[@]}" --read "$PROJ/ssh-dir-link" -- "$HELPER" read "$PROJ/ssh-dir-link/id_ed25519")
unlike "$out" "$SSH_MARK" "fs.secrets: a granted link to ~/.ssh does not open it ($out)"
out=$(M "${S[@]}" --read "$HOMED" -- /bin/sh -c "ln '$HOMED/.ssh/id_ed25519' /tmp/h 2>&1; cat /tmp/h 2>&1")
unlike "$out" "$SSH_MARK" "fs.secrets: a hard link made inside to the key gives nothing"
out=$(M "${OFF[@]}" -- "$HELPER" read "$PROJ/key-link")
like "$out" "$SSH_MARK" "fs.secrets control: the planted link leads to the key without the sandbox"
out=$(M "${S[@]}" --read "$HOMED" --deny "$HOMED/notes.txt" -- "$HELPER" read "$HOMED/notes.txt")
unlike "$out" "home file" "fs.secrets: --deny of a file inside a granted dir wins ($out)"

# --- fs.read ----------------------------------------------------------------
cover fs.read
out=$(M "${S[@]}" --read "$PROJ" -- "$HELPER" read "$OUTSIDE/canary.txt")
like "$out" "^ERR " "fs.read: a file outside every grant is unreadable ($out)"
out=$(M "${S[@]}" -- "$HELPER" ls "$SCRATCH")
# Only the fake HOME's own directory shows there (the view's skeleton of a
# parent of what it holds), none of the host's entries.
unlike "$out" "outside|proj|ro|sock" "fs.read: the ungranted scratch dir lists none of its host entries ($out)"
out=$(M "${OFF[@]}" -- "$HELPER" read "$OUTSIDE/canary.txt")
like "$out" "$OUT_MARK" "fs.read control: the canary is readable without the sandbox"
# A cwd below /tmp that no grant covers is entered, but it is not the host's.
out=$(cd "$OUTSIDE" && M "${S[@]}" -- "$HELPER" read canary.txt)
like "$out" "^ERR " "fs.read: an ungranted cwd (below /tmp) does not expose its files ($out)"
out=$(cd "$OUTSIDE" && M "${S[@]}" -- "$HELPER" write new-in-cwd)
[ ! -e "$OUTSIDE/new-in-cwd" ]
ok $? "fs.write: an ungranted cwd is not writable on the host ($out)"
out=$(cd "$OUTSIDE" && M "${OFF[@]}" -- "$HELPER" read canary.txt)
like "$out" "$OUT_MARK" "fs.read control: the cwd's file is readable without the sandbox"

# --- fs.write ---------------------------------------------------------------
cover fs.write
out=$(M "${S[@]}" --write "$PROJ" -- "$HELPER" write "$OUTSIDE/new.txt")
[ ! -e "$OUTSIDE/new.txt" ]
ok $? "fs.write: creating a file outside the writable paths fails ($out)"
out=$(M "${S[@]}" --write "$PROJ" --read "$OUTSIDE" -- "$HELPER" write "$OUTSIDE/canary.txt")
is "$(cat "$OUTSIDE/canary.txt")" "$OUT_MARK" "fs.write: overwriting a read-granted file fails, host file unchanged ($out)"
out=$(M "${S[@]}" --read "$HOMED" -- "$HELPER" write "$HOMED/new.txt")
[ ! -e "$HOMED/new.txt" ]
ok $? "fs.write: writing into the read-only HOME fails ($out)"
out=$(M "${S[@]}" --write "$PROJ" -- "$HELPER" write "$PROJ/made-inside.txt")
is "$(cat "$PROJ/made-inside.txt" 2>/dev/null)" "written" "fs.write: writing inside --write works and reaches the host"
out=$(M "${S[@]}" --read "$RO" -- "$HELPER" truncate "$RO/file.txt")
like "$out" "truncate=E" "fs.write: truncate(2) of a read-only granted file fails"
like "$out" "open_trunc=E" "fs.write: O_TRUNC of a read-only granted file fails"
is "$(cat "$RO/file.txt")" "$RO_MARK" "fs.write: the read-only file is intact"
out=$(M "${S[@]}" --read "$RO" -- /bin/sh -c "mv '$RO/file.txt' '$RO/moved' 2>&1; chmod 0777 '$RO/file.txt' 2>&1; ln -s x '$RO/l' 2>&1")
[ -e "$RO/file.txt" ] && [ ! -e "$RO/moved" ] && [ ! -e "$RO/l" ] && [ "$(stat -c %a "$RO/file.txt")" != 777 ]
ok $? "fs.write: rename, chmod, symlink in a read-only grant fail"
out=$(M "${OFF[@]}" -- "$HELPER" write "$OUTSIDE/new.txt")
[ -e "$OUTSIDE/new.txt" ]
ok $? "fs.write control: the same write works without the sandbox"
out=$(M "${OFF[@]}" -- "$HELPER" truncate "$RO/file.txt")
like "$out" "truncate=OK" "fs.write control: truncate works without the sandbox"
echo "$RO_MARK" >"$RO/file.txt"

# --- fs.tmp -----------------------------------------------------------------
cover fs.tmp
out=$(M "${S[@]}" -- "$HELPER" write "/tmp/moat-inside-$UNIQ")
is "$out" "OK" "fs.tmp: /tmp is writable inside"
[ ! -e "/tmp/moat-inside-$UNIQ" ]
ok $? "fs.tmp: the file written to /tmp inside is not on the host afterwards"
out=$(M "${S[@]}" -- "$HELPER" exists "$OUTSIDE/canary.txt")
like "$out" "^ERR ENOENT" "fs.tmp: the host's /tmp canary is not visible inside"
touch "/tmp/moat-tmp-canary-$UNIQ"
out=$(M "${S[@]}" -- "$HELPER" ls /tmp)
rm -f "/tmp/moat-tmp-canary-$UNIQ"
unlike "$out" "moat-tmp-canary-$UNIQ" "fs.tmp: the host's /tmp entries are not listed inside"
out=$(M "${OFF[@]}" -- "$HELPER" exists "$OUTSIDE/canary.txt")
is "$out" "OK" "fs.tmp control: the canary is there without the sandbox"

# --- listeners for net.* and ipc.* -------------------------------------------
cat >"$SCRATCH/listen.py" <<'EOF'
# Loopback TCP and UDP, a pathname and an abstract unix socket; one log line
# per connection or datagram.  Bounded by a deadline.
import os, select, socket, sys, time
ready, log, upath, aname = sys.argv[1:5]
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(16)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))
p = socket.socket(socket.AF_UNIX); p.bind(upath); p.listen(16); os.chmod(upath, 0o777)
a = socket.socket(socket.AF_UNIX); a.bind("\0" + aname); a.listen(16)
kinds = {t: "tcp", u: "udp", p: "unix", a: "abstract"}
with open(ready + ".tmp", "w") as f:
    f.write("%d %d\n" % (t.getsockname()[1], u.getsockname()[1]))
os.rename(ready + ".tmp", ready)
end = time.time() + 40
with open(log, "a", buffering=1) as out:
    while time.time() < end:
        r, _, _ = select.select(list(kinds), [], [], 0.5)
        for s in r:
            if s is u:
                data, _ = u.recvfrom(100)
                out.write("udp %r\n" % data)
            else:
                c, _ = s.accept()
                out.write("%s conn\n" % kinds[s])
                c.close()
EOF
ABS_NAME="moat-test-abstract-$UNIQ"
# Its own 40 s deadline bounds it (no timeout(1) in between: killing that
# would leave the listener behind).  No background process keeps the TAP
# pipe open.
"$PY" "$SCRATCH/listen.py" "$SCRATCH/ports" "$SCRATCH/listen.log" "$SOCKD/s.sock" "$ABS_NAME" \
	</dev/null >/dev/null 2>"$SCRATCH/listen.err" &
BG_PIDS="$BG_PIDS $!"
disown $!
need_ready 30 "the test listener (listen.py: its ports file)" test -s "$SCRATCH/ports"
read -r TCP_PORT UDP_PORT <"$SCRATCH/ports" 2>/dev/null
: >>"$SCRATCH/listen.log"
# count KIND: how many connections/datagrams of KIND reached the listener,
# after waiting (bounded) for at least WANT of them.
count() { # count KIND WANT
	local n i
	for i in $(seq 40); do
		n=$(grep -c "^$1 " "$SCRATCH/listen.log")
		[ "$n" -ge "$2" ] && break
		sleep 0.05
	done
	echo "$n"
}

if [ -z "${TCP_PORT:-}" ]; then
	ok 1 "listeners started ($(cat "$SCRATCH/listen.err"))"
else
	cover net.none
	out=$(M "${S[@]}" -- "$HELPER" tcp 127.0.0.1 "$TCP_PORT")
	like "$out" "^ERR " "net.none: TCP connect to the host's loopback listener fails ($out)"
	out=$(M "${S[@]}" -- "$HELPER" udp 127.0.0.1 "$UDP_PORT")
	like "$out" "^ERR " "net.none: UDP sendto the host's loopback listener fails ($out)"
	out=$(M "${S[@]}" -- "$HELPER" loopback-selftest)
	like "$out" "^ERR " "net.none: not even an own loopback ($out)"
	is "$(count tcp 0)/$(count udp 0)" "0/0" "net.none: the listeners received nothing"
	out=$(M "${S[@]}" --net all -- "$HELPER" tcp 127.0.0.1 "$TCP_PORT")
	is "$out" "OK" "net control (--net all): TCP connect works"
	out=$(M "${S[@]}" --net all -- "$HELPER" udp 127.0.0.1 "$UDP_PORT")
	is "$out" "OK" "net control (--net all): UDP sendto works"
	is "$(count tcp 1)/$(count udp 1)" "1/1" "net control: the listeners saw exactly the control runs"

	if [ "$(prop_status "$REPORTS/lo.json" net.loopback)" = enforced ]; then
		cover net.loopback
		out=$(M "${S[@]}" --net loopback -- "$HELPER" loopback-selftest)
		is "$out" "OK" "net.loopback: the sandbox's own loopback works (bind, connect, accept)"
		out=$(M "${S[@]}" --net loopback -- "$HELPER" tcp 127.0.0.1 "$TCP_PORT")
		like "$out" "^ERR " "net.loopback: the host's loopback TCP listener is unreachable ($out)"
		out=$(M "${S[@]}" --net loopback -- "$HELPER" udp 127.0.0.1 "$UDP_PORT")
		diag "net.loopback: UDP sendto inside answers $out (its own lo)"
		out=$(M "${S[@]}" --net loopback -- "$HELPER" unix "$SOCKD/s.sock")
		is "$(count tcp 1)/$(count udp 1)" "1/1" "net.loopback: the host listeners received nothing from it"
	else
		skip_feature userns "net.loopback is not enforced here: $(json_get "$REPORTS/lo.json" '["properties"]["net.loopback"]["reason"]')"
	fi

	cover ipc.abstract
	out=$(M "${S[@]}" -- "$HELPER" abstract "$ABS_NAME")
	like "$out" "^ERR " "ipc.abstract: connecting to the host's abstract socket fails ($out)"
	out=$(M "${S[@]}" --net all -- "$HELPER" abstract "$ABS_NAME")
	like "$out" "^ERR " "ipc.abstract: refused with --net all too ($out)"
	is "$(count abstract 0)" 0 "ipc.abstract: the listener saw nothing"
	out=$(M "${OFF[@]}" -- "$HELPER" abstract "$ABS_NAME")
	is "$out" "OK" "ipc.abstract control (--mode off): connecting works"
	is "$(count abstract 1)" 1 "ipc.abstract control reached the listener"

	cover ipc.unix
	out=$(M "${S[@]}" -- "$HELPER" unix "$SOCKD/s.sock")
	like "$out" "^ERR " "ipc.unix: the host's pathname socket (dir not granted) is unreachable ($out)"
	is "$(count unix 0)" 0 "ipc.unix: the listener saw nothing"
	# The socket's directory granted: Landlock before ABI 9 does not govern
	# connect(2), and neither does a read-only bind, so only refusing the
	# command unix sockets of its own keeps a socket inside a grant away.
	out=$(M "${S[@]}" --read "$SOCKD" --report "$REPORTS/unix.json" -- "$HELPER" unix "$SOCKD/s.sock")
	like "$out" "^ERR EACCES" "ipc.unix: a host socket inside a granted directory is unreachable too ($out)"
	is "$(count unix 0)" 0 "ipc.unix: the listener saw nothing"
	is "$(prop_status "$REPORTS/unix.json" ipc.unix)" enforced "ipc.unix: reported enforced with its socket dir granted"
	out=$(M "${S[@]}" --read "$SOCKD" --unix-sockets --report "$REPORTS/unix-lifted.json" -- "$HELPER" unix "$SOCKD/s.sock")
	is "$out" "OK" "ipc.unix control (--unix-sockets): the granted socket is reachable"
	is "$(count unix 1)" 1 "ipc.unix control reached the listener"
	is "$(prop_status "$REPORTS/unix-lifted.json" ipc.unix)" not-requested "ipc.unix: --unix-sockets gives it up (not-requested)"
	n=$(count unix 1)
	out=$(M "${OFF[@]}" -- "$HELPER" unix "$SOCKD/s.sock")
	is "$out" "OK" "ipc.unix control (--mode off): connecting works"
	is "$(count unix $((n + 1)))" $((n + 1)) "ipc.unix control reached the listener"
fi

# --- proc.pid, signals, proc.ptrace -------------------------------------------
CANARY_SECRET="moat-canary-environ-$UNIQ"
start_canary() {
	env MOAT_CANARY_SECRET="$CANARY_SECRET" sleep 40 </dev/null >/dev/null 2>&1 &
	CANARY=$!
	BG_PIDS="$BG_PIDS $CANARY"
	disown $!
	# Until it is the sleep (env has run it with the secret): a fixed 0.1 s
	# could end first on a loaded machine, and the checks then read env's
	# environment, or the shell's.
	wait_ready 30 "the canary process (the secret in its environ)" grep -qa "$CANARY_SECRET" "/proc/$CANARY/environ"
}
alive() { kill -0 "$CANARY" 2>/dev/null && [ "$(cut -d' ' -f3 "/proc/$CANARY/stat" 2>/dev/null)" != Z ]; }
start_canary
cover proc.pid
out=$(M "${S[@]}" -- "$HELPER" kill "$CANARY")
like "$out" "^ERR " "proc.pid: kill(canary) from inside fails ($out)"
out=$(M "${S[@]}" -- "$HELPER" pidfd-kill "$CANARY")
like "$out" "^ERR " "proc.pid: pidfd_open/pidfd_send_signal(canary) fails ($out)"
out=$(M "${S[@]}" -- "$HELPER" exists "/proc/$CANARY")
like "$out" "^ERR " "proc.pid: /proc/<canary> is not visible ($out)"
out=$(M "${S[@]}" -- "$HELPER" proc-environ "$CANARY" "$CANARY_SECRET")
like "$out" "^ERR " "proc.pid: /proc/<canary>/environ is unreadable ($out)"
out=$(M "${S[@]}" -- "$HELPER" proc-scan "$(echo "$CANARY_SECRET" | rev)")
like "$out" "found=0$" "proc.pid: no /proc/*/environ or cmdline inside holds the secret ($out)"
cover proc.ptrace
out=$(M "${S[@]}" -- "$HELPER" ptrace "$CANARY")
like "$out" "^ERR " "proc.ptrace: ptrace(ATTACH, canary) fails ($out)"
out=$(M "${S[@]}" -- "$HELPER" vmread "$CANARY")
like "$out" "^ERR " "proc.ptrace: process_vm_readv(canary) fails ($out)"
alive
ok $? "proc.pid: the canary is still alive"
out=$(M "${OFF[@]}" -- "$HELPER" proc-environ "$CANARY" "$CANARY_SECRET")
is "$out" "OK found" "proc.pid control: the canary's environ holds the secret"
out=$(M "${OFF[@]}" -- "$HELPER" proc-scan "$(echo "$CANARY_SECRET" | rev)")
unlike "$out" "found=0$" "proc.pid control: the scan finds it ($out)"
out=$(M "${OFF[@]}" -- "$HELPER" ptrace "$CANARY")
is "$out" "OK" "proc.ptrace control: ptrace(ATTACH) works without the sandbox"
out=$(M "${OFF[@]}" -- "$HELPER" vmread "$CANARY")
like "$out" "^OK" "proc.ptrace control: process_vm_readv is allowed without the sandbox"
out=$(M "${OFF[@]}" -- "$HELPER" kill "$CANARY")
is "$out" "OK" "proc.pid control: kill(canary) works without the sandbox"
for _ in $(seq 200); do alive || break; sleep 0.05; done
! alive
ok $? "proc.pid control: the canary is gone"

# --- sys.filter -------------------------------------------------------------
cover sys.filter
in=$(M "${S[@]}" -- "$HELPER" syscalls)
outside=$(M "${OFF[@]}" -- "$HELPER" syscalls)
# Unprivileged, the kernel itself refuses mount & co with EPERM; as root of
# a user namespace of its own it does not, which proves the filter there.
outside_ns=""
[ "$UID_NOW" -ne 0 ] && outside_ns=$(unshare -Urm "$HELPER" syscalls 2>/dev/null)
val() { printf '%s\n' "$1" | sed -n "s/^$2=//p"; }
# Tried with arguments the kernel refuses with an errno of its own (EBADF,
# EINVAL, EFAULT; process_vm_writev of nothing succeeds) for root and uid
# 65534 alike: outside, the answer must differ from the filter's.
KERNEL_OWN_ERRNO="process_vm_writev pidfd_getfd process_madvise fanotify_init name_to_handle_at quotactl_fd clock_adjtime adjtimex mount_setattr fsconfig"
for want in io_uring_setup=ENOSYS clone3=ENOSYS unshare_user=EPERM clone_newuser=EPERM mount=EPERM \
	keyctl=ENOSYS bpf=EPERM; do
	is "$(val "$in" "${want%%=*}")" "${want#*=}" "sys.filter: ${want%%=*} refused with ${want#*=}"
done
# Every other call the helper tries must be refused with a filter errno,
# and must answer differently without the sandbox.
for name in $(printf '%s\n' "$in" | sed 's/=.*//'); do
	i=$(val "$in" "$name") o=$(val "$outside" "$name")
	case $name in
	personality_rie)
		is "$i" OK "sys.filter: $name stays allowed"
		continue ;;
	socket_unix)
		is "$i" EACCES "sys.filter: socket(AF_UNIX) refused (ipc.unix)"
		is "$(val "$(M "${S[@]}" --unix-sockets -- "$HELPER" syscalls)" "$name")" OK \
			"sys.filter control: socket(AF_UNIX) allowed with --unix-sockets"
		continue ;;
	esac
	case $name in
	name_to_handle_at) is "$i" EOPNOTSUPP "sys.filter: $name refused inside (as if the file system had no handles)" ;;
	*) like "$i" '^(EPERM|ENOSYS|EAFNOSUPPORT)$' "sys.filter: $name refused inside ($i)" ;;
	esac
	if [ "$i" != "$o" ]; then
		ok 0 "sys.filter control: $name is not refused the same way outside ($o)"
	elif [[ " $KERNEL_OWN_ERRNO " == *" $name "* ]]; then
		ok 1 "sys.filter control: $name answers $o outside too, where the kernel has an errno of its own for these arguments"
	elif [ -n "$outside_ns" ] && [ "$(val "$outside_ns" "$name")" != "$i" ]; then
		ok 0 "sys.filter control: $name answers $(val "$outside_ns" "$name") outside as root of an own user namespace"
	else
		# Unprivileged, some calls are refused by the kernel itself.
		ok 0 "sys.filter control: $name answers $o outside too (the kernel refuses uid $UID_NOW there too: no filter proof)"
	fi
done
printf '%s\n' "$outside" | grep -q '^io_uring_setup=EFAULT'
ok $? "sys.filter control: io_uring_setup reaches the kernel outside (EFAULT)"
printf '%s\n' "$outside" | grep -q '^unshare_user=OK'
ok $? "sys.filter control: unshare(CLONE_NEWUSER) succeeds outside"
printf '%s\n' "$outside" | grep -q '^mount=EFAULT'
ok $? "sys.filter control: mount() reaches the kernel outside (EFAULT for bad pointers)"

# --- tty.inject -------------------------------------------------------------
cover tty.inject
STI_MARK="MOATSTI$RANDOM"
if command -v script >/dev/null; then
	out=$(timeout 10 script -qec "env HOME='$HOMED' '$MOAT' run --profile strict -- '$HELPER' sti $STI_MARK" /dev/null </dev/null 2>&1)
	like "$out" "ERR " "tty.inject: TIOCSTI on the pty (fd 0) inside fails ($(echo "$out" | head -1 | tr -d '\r'))"
	unlike "$out" "$STI_MARK" "tty.inject: no injected byte is echoed by the terminal"
	out=$(timeout 10 script -qec "'$HELPER' sti $STI_MARK" /dev/null </dev/null 2>&1)
	like "$out" "$STI_MARK" "tty.inject control: TIOCSTI outside (own ctty) injects, and the terminal echoes it"
	# --no-tty: the caller's terminal itself on fd 0 (with a terminal of
	# its own, TIOCSTI reaches only that: tests/blackbox/tty.sh).
	out=$(timeout 10 script -qec "env HOME='$HOMED' MOAT_HOST_LIMIT=seccomp=0 '$MOAT' run --no-tty --backend native --mode prefer --profile strict -- '$HELPER' sti $STI_MARK" /dev/null </dev/null 2>&1)
	unlike "$out" "$STI_MARK" "tty.inject without seccomp (setsid and no CAP_SYS_ADMIN alone): nothing injected"
	# --no-tty, moat under setsid, fd 0 a terminal that is no session's
	# (a pty a server opened for a client): without seccomp the command, a
	# session leader without a terminal, takes it (TIOCSCTTY) and types
	# into it, so tty.inject is missing; the filter refuses TIOCSTI (and
	# lets TIOCSCTTY be: script, tmux, node-pty take a pty of their own).
	cat >"$SCRATCH/ttysteal.py" <<'PYEOF'
import json, os, pty, subprocess, sys
moat, lim, rep, mark = sys.argv[1:5]
code = ("import termios,fcntl\n"
        "try: fcntl.ioctl(0, termios.TIOCSCTTY, 0); print('TIOCSCTTY ok')\n"
        "except OSError as e: print('TIOCSCTTY', e.errno)\n"
        "try: [fcntl.ioctl(0, termios.TIOCSTI, bytes([c])) for c in b'%s']\n"
        "except OSError as e: print('TIOCSTI', e.errno)\n" % mark)
m, s = pty.openpty()
env = dict(os.environ)
env.pop("MOAT_HOST_LIMIT", None)
if lim != "-": env["MOAT_HOST_LIMIT"] = lim
p = subprocess.run([moat, "run", "--backend", "native", "--mode", "prefer", "--profile", "strict", "--no-tty",
                    "--report", rep, "--",
                    sys.executable, "-c", code], stdin=s, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   start_new_session=True, env=env, cwd="/", timeout=20)
if not os.path.exists(rep): sys.exit("no report: " + p.stderr.decode())
os.set_blocking(m, False)
try: echoed = os.read(m, 400).decode(errors="replace")
except BlockingIOError: echoed = ""
pr = json.load(open(rep))["properties"]["tty.inject"]
print(p.stdout.decode().strip().replace("\n", "; "), "|", "injected" if mark in echoed else "nothing injected", "|",
      pr["status"], "|", pr.get("reason", pr.get("mechanism")))
PYEOF
	out=$(HOME="$HOMED" timeout 30 $PY "$SCRATCH/ttysteal.py" "$MOAT" seccomp=0 "$REPORTS/tty0.json" "$STI_MARK" 2>&1)
	like "$out" "^TIOCSCTTY ok.*\\| injected \\| missing \\|.*TIOCSCTTY" \
		"tty.inject without seccomp, a terminal that is no session's on fd 0: the command takes it and injects, and the report says missing ($out)"
	out=$(HOME="$HOMED" timeout 30 $PY "$SCRATCH/ttysteal.py" "$MOAT" - "$REPORTS/tty1.json" "$STI_MARK" 2>&1)
	like "$out" "^TIOCSCTTY ok; TIOCSTI 1 \\| nothing injected \\| enforced \\|" \
		"tty.inject with seccomp: TIOCSTI is refused (EPERM), nothing injected ($out)"
else
	skip_test "script(1) missing: no pty for the tty.inject test"
fi

# --- proc.tree: nothing of the command outlives it, its --timeout or moat ------
# A fork chain (a member every 0.5 ms, each gone before a scan of /proc can
# see it) appends to a heartbeat file in a write grant: the file stops
# growing once the chain is dead.
cover proc.tree
mkdir -p "$PROJ/tree" && chmod 0777 "$PROJ/tree"
M "${S[@]}" --mode prefer --write "$PROJ/tree" --timeout 1 --report "$REPORTS/tree.json" -- "$HELPER" forkchain "$PROJ/tree/hb1" 500 2 >/dev/null
! chain_alive "$PROJ/tree/hb1"
ok $? "proc.tree: a fork chain dies with the command's --timeout ($(prop_status "$REPORTS/tree.json" proc.tree))"
# (exec: $! must be moat itself, not a subshell around it.)
(exec env HOME="$HOMED" "$MOAT" run --backend native "${S[@]}" --mode prefer --write "$PROJ/tree" -- \
	"$HELPER" forkchain "$PROJ/tree/hb2" 500 2 >/dev/null 2>&1) &
mpid=$!
# Killed once the chain runs (its heartbeat written), not after a fixed
# 0.5 s, which a loaded machine could spend before the command started.
wait_ready 30 "the fork chain under moat (its heartbeat hb2)" test -s "$PROJ/tree/hb2"
kill -9 "$mpid"
wait "$mpid" 2>/dev/null
if [ "$(prop_status "$REPORTS/tree.json" proc.tree)" = enforced ]; then
	! chain_alive "$PROJ/tree/hb2"
	ok $? "proc.tree: a fork chain dies when moat is SIGKILLed ($(json_get "$REPORTS/tree.json" '["properties"]["proc.tree"]["mechanism"]'))"
else
	chain_alive "$PROJ/tree/hb2"
	ok $? "proc.tree is missing here, and truly: the chain outlives a SIGKILLed moat"
fi
rm -f "$PROJ/tree/hb2" # a live chain ends when its heartbeat file is gone
# Control: no pid namespace and no cgroup (MOAT_HOST_LIMIT), the same attack
# outlives moat, and the report says proc.tree is missing.
ML "$LL_ONLY,cgroup=0" "${S[@]}" --mode prefer --write "$PROJ/tree" --dry-run -- "$HELPER" exit 0 >"$SCRATCH/tree0.json"
(exec env HOME="$HOMED" MOAT_HOST_LIMIT="$LL_ONLY,cgroup=0" "$MOAT" run --backend native "${S[@]}" --mode prefer \
	--write "$PROJ/tree" -- "$HELPER" forkchain "$PROJ/tree/hb3" 500 2 >/dev/null 2>&1) &
mpid=$!
wait_ready 30 "the fork chain under moat (its heartbeat hb3)" test -s "$PROJ/tree/hb3"
kill -9 "$mpid"
wait "$mpid" 2>/dev/null
chain_alive "$PROJ/tree/hb3"
ok $? "proc.tree control: without a pid namespace or a cgroup the chain outlives a SIGKILLed moat"
is "$(prop_status "$SCRATCH/tree0.json" proc.tree)" missing "proc.tree control: and the plan says missing"
rm -f "$PROJ/tree/hb3"
# Without a pid namespace the command is moat's uid: only Landlock's signal
# scope (ABI 6) keeps it from stopping moat and its guard (SIGSTOP), which
# would leave --timeout, the CPU watch and the tree's kill undone.  Below
# ABI 6, proc.tree and a --cpu limit are missing; the command's signal to
# moat (SIGCONT: harmless) goes through.  With the scope it is refused.
sig_run() { # sig_run LIMIT REPORT: prints what kill -CONT $PPID (moat) did
	ML "$1" "${S[@]}" --mode prefer --cpu 5 --report "$2" -- /bin/sh -c 'kill -CONT $PPID 2>/dev/null && echo signalled || echo refused'
}
out=$(sig_run "$LL_ONLY,landlock=5" "$REPORTS/sig5.json")
is "$out/$(prop_status "$REPORTS/sig5.json" proc.tree)/$(prop_status "$REPORTS/sig5.json" res.limits)" \
	signalled/missing/missing "proc.tree, res.limits: Landlock 5, no pid namespace: the command signals moat, and both are missing"
like "$(json_get "$REPORTS/sig5.json" '["properties"]["proc.tree"]["reason"]')" "signal moat and its guard" \
	"  and proc.tree's reason says why"
if "$MOAT" probe 2>/dev/null | grep -q "signal scoping (Landlock ABI 6)"; then
	out=$(sig_run "$LL_ONLY" "$REPORTS/sig6.json")
	is "$out" refused "  control: with Landlock's signal scope the command's signal to moat is refused"
	unlike "$(json_get "$REPORTS/sig6.json" '["properties"]["proc.tree"]["reason"]')" "signal moat" \
		"  and proc.tree is not missing for that reason"
else
	skip_test "no Landlock ABI 6 here: no signal-scope control"
fi

# --- res.limits -------------------------------------------------------------
# (The tree limits -- --memory, --pids, --cpu through moat's cgroup -- are
# attacked in full in limits_tree.sh, on every backend; here, what decides
# the native verdict on this host.)
cover res.limits
M "${S[@]}" --mode prefer --pids 20 --report "$REPORTS/pids.json" -- "$HELPER" exit 0 >/dev/null
pids_status=$(prop_status "$REPORTS/pids.json" res.limits)
if [ "$pids_status" = enforced ]; then
	out=$(forkbomb_tries M "${S[@]}" --pids 20 -- "$HELPER" forkbomb 200)
	n=$(echo "$out" | sed -n 's/^forked //p')
	[ -n "$n" ] && [ "$n" -lt 25 ]
	ok $? "res.limits: --pids 20 (enforced as uid $UID_NOW: $(json_get "$REPORTS/pids.json" '["limits"]["pids"]["mechanism"]')) bounds a fork bomb ($out)"
	out=$(M "${S[@]}" -- "$HELPER" forkbomb 200)
	is "$out" "forked 200" "res.limits control: without --pids the same fork bomb is not bounded"
else
	# As root without a pids cgroup RLIMIT_NPROC binds nothing: the claim
	# must not be made, and require mode must refuse.
	is "$pids_status" missing "res.limits: --pids is reported missing here ($(json_get "$REPORTS/pids.json" '["limits"]["pids"]["reason"]'))"
	M "${S[@]}" --pids 20 -- "$HELPER" write "$PROJ/pids-ran" >/dev/null
	is "$?:$([ -e "$PROJ/pids-ran" ] && echo ran)" "125:" "res.limits: --pids missing in require mode refuses, nothing run"
fi
out=$(M "${S[@]}" --address-space 256M -- "$HELPER" alloc 512)
like "$out" "^ERR allocation failed" "res.limits: --address-space 256M makes a 512 MiB allocation fail ($out)"
out=$(M "${S[@]}" -- "$HELPER" alloc 512)
is "$out" "OK allocated 512 MiB" "res.limits control: without --address-space it succeeds"
out=$(M "${S[@]}" --files 12 -- "$HELPER" rlimit nofile)
is "$out" "nofile=12" "res.limits: --files 12 sets RLIMIT_NOFILE"
# (prefer: without a cgroup the tree's total is missing, but each process
# still gets its share as RLIMIT_CPU.)
out=$(M "${S[@]}" --mode prefer --cpu 7 -- "$HELPER" rlimit cpu)
is "$out" "cpu=7" "res.limits: --cpu 7 also sets each process's RLIMIT_CPU"
out=$(ulimit -S -c unlimited 2>/dev/null || ulimit -S -c 4096 2>/dev/null; M "${S[@]}" -- "$HELPER" rlimit core)
is "$out" "core=1" "res.limits: core dumps are off inside (RLIMIT_CORE 1: no core file, and a pipe core_pattern gets no dump)"
[ "$(ulimit -H -c)" = 0 ] && diag "the hard RLIMIT_CORE is 0 here: the next control cannot raise it"
# (Directly, not through `moat --mode off`: the sanitizer build of moat
# turns core dumps off for itself, and its children inherit that.)
out=$(ulimit -S -c unlimited 2>/dev/null || ulimit -S -c 4096 2>/dev/null; "$HELPER" rlimit core)
unlike "$out" "^core=[01]$" "res.limits control: the caller's RLIMIT_CORE, that moat was started with, is not 0 or 1 ($out)"
out=$(M "${S[@]}" -- /bin/sh -c 'grep "Max core file size" /proc/self/limits')
like "$out" "Max core file size +1 +1" "res.limits: /proc/self/limits inside shows core 1 1"
# At 0 a pipe core_pattern gets the whole dump again: the command cannot
# lower it (a success that changes nothing, for ssh-agent's sake).
# Control: without moat's filter it can.
out=$(M "${S[@]}" -- /bin/bash -c 'ulimit -S -H -c 0 && echo lowered; grep "Max core file size" /proc/self/limits' | xargs)
like "$out" "^lowered Max core file size 1 1 " "res.limits: ulimit -c 0 inside 'succeeds' and changes nothing: still 1 1"
out=$(M "${S[@]}" -- /usr/bin/python3 -c '
import resource
try:
    resource.prlimit(0, resource.RLIMIT_CORE, (0, 0)); print("lowered")
except OSError as e:
    print(e)')
like "$out" "Operation not permitted" "res.limits: prlimit with the old limit asked for (python's resource.prlimit) is refused"
# setrlimit(2) itself, which glibc no longer calls (its setrlimit is
# prlimit64) but a program may: the same success that changes nothing.
# (Without its rule, the prlimit64 ones alone left it lowering to 0.)
is "$(M "${S[@]}" -- "$HELPER" raw-core0)" "rc=0 core=1/1" "res.limits: the setrlimit system call to 0 'succeeds' and changes nothing: still 1/1"
is "$(env MOAT_HOST_LIMIT=seccomp=0 "$MOAT" run --mode prefer "${S[@]}" -- "$HELPER" raw-core0 2>/dev/null)" "rc=0 core=0/0" \
	"  control: without moat's seccomp filter it lowers RLIMIT_CORE to 0"
out=$(env MOAT_HOST_LIMIT=seccomp=0 "$MOAT" run --mode prefer "${S[@]}" -- /bin/bash -c 'ulimit -S -H -c 0 && grep "Max core file size" /proc/self/limits' 2>/dev/null)
like "$out" "Max core file size +0 +0" "  control: without moat's seccomp filter the command lowers it to 0"
# A pipe core_pattern gets the whole dump whatever RLIMIT_CORE says, and its
# host program decides what to keep (apport keeps a packaged program's core
# in /var/crash): the tree's coredump_filter is 0, so no memory is in it,
# and the command cannot raise it again.  Control: unsandboxed, the
# caller's filter.  (This host's core_pattern is not changed.)
out=$(M "${S[@]}" -- /bin/sh -c 'cat /proc/self/coredump_filter; echo 0x33 2>/dev/null >/proc/self/coredump_filter && echo raised')
is "$out" "00000000" "res.limits: coredump_filter 0 inside (no memory in a dump a core_pattern pipe gets), not raised again"
filter_of() { # filter_of MOAT_ARGS...: the filter of the command's process, read from outside
	local f=$SCRATCH/pid.$RANDOM
	# The command lives until it is read (it lived 1 s, which a loaded
	# machine could spend before the read), then moat's SIGTERM ends it.
	"$@" -- /bin/sh -c 'echo $$ >"$0"; exec sleep 60' "$f" 2>/dev/null &
	for _ in $(seq 600); do [ -s "$f" ] && break; sleep 0.05; done
	cat "/proc/$(cat "$f" 2>/dev/null)/coredump_filter" 2>/dev/null
	kill "$!" 2>/dev/null
	wait
}
is "$(filter_of env MOAT_HOST_LIMIT=$LL_ONLY "$MOAT" run --mode prefer "${S[@]}" --write "$SCRATCH")" "00000000" \
	"res.limits, no namespaces: the command's coredump_filter is 0 (read from outside)"
like "$(filter_of "$MOAT" run "${OFF[@]}" --write "$SCRATCH")" "^0*[1-9a-f][0-9a-f]*$" "  control: unsandboxed it is the caller's (not 0)"
# A crash leaves no core where this host's core_pattern ($(cat /proc/sys/kernel/core_pattern)) puts it.
crash_in() { # crash_in DIR MOAT_ARGS...: a shell in DIR kills itself with SIGSEGV; the core files left in DIR
	local d=$1
	shift
	rm -f "$d"/core*
	(cd "$d" && ulimit -S -c unlimited 2>/dev/null; "$@" -- /bin/sh -c 'kill -SEGV $$' >/dev/null 2>&1)
	ls "$d" | grep -c '^core'
}
CRASH=$SCRATCH/crash
mkdir -p "$CRASH"
is "$(crash_in "$CRASH" env MOAT_HOST_LIMIT=$LL_ONLY "$MOAT" run --mode prefer "${S[@]}" --write "$CRASH")" 0 \
	"res.limits, no namespaces: a crash in a write grant leaves no core file there"
is "$(crash_in "$CRASH" "$MOAT" run "${S[@]}" --write "$CRASH")" 0 "res.limits: with namespaces neither"
if [ "$(cut -c1 /proc/sys/kernel/core_pattern)" != "|" ] && [ "$(ulimit -H -c)" != 0 ]; then
	# (Directly, as above: the sanitizer build of moat turns core dumps
	# off for itself and its children.)
	n=$(crash_in "$CRASH" env)
	ok "$([ "$n" -ge 1 ]; echo $?)" "  control: without moat the same crash leaves a core file ($n)"
	rm -f "$CRASH"/core*
else
	skip "  control: core_pattern is a pipe or the hard RLIMIT_CORE is 0 here: no core file to see"
fi

# --- env.curated, fd.clean ----------------------------------------------------
cover env.curated
out=$(MOAT_TEST_TOKEN="$ENV_MARK" LD_PRELOAD='' M "${S[@]}" -- /usr/bin/env)
unlike "$out" "$ENV_MARK|LD_PRELOAD" "env.curated: the caller's variables do not leak in"
out=$(MOAT_TEST_TOKEN="$ENV_MARK" M "${OFF[@]}" -- /usr/bin/env)
like "$out" "$ENV_MARK" "env.curated control: they do without the sandbox"
cover fd.clean
out=$(M "${S[@]}" -- "$HELPER" fds 7<"$OUTSIDE/canary.txt" 9<"$SCRATCH")
is "$out" "0 1 2" "fd.clean: inherited fds 7 and 9 are closed inside"
out=$(M "${OFF[@]}" -- "$HELPER" fds 7<"$OUTSIDE/canary.txt")
like "$out" "(^| )7( |$)" "fd.clean control: fd 7 is inherited without the sandbox ($out)"
# The sandbox's pid 1 keeps its status pipe and signalfd beside 0-2, none of
# the plan's descriptors (it closes them beside the command, not at its exit,
# which moat waits for).  Sorted as numbers: ls sorts "189" before "2", and
# the status pipe's number grows with the plan (the entries of /etc).
out=$(M "${S[@]}" -- /bin/sh -c 'ls /proc/1/fd | sort -n | tr "\n" " "')
like "$out" "^0 1 2 [0-9]+ [0-9]+ $" "fd.clean: the sandbox's pid 1 holds 0-2, its status pipe and its signalfd ($out)"

# --- degradation: the Landlock-only fallback (no namespace at all) ---------------
# Detection made to report no user namespaces (and, as root, no root either):
# no mount, pid or network namespace.  What is reported missing must be
# exactly what a mount/pid namespace gives, and what is still reported
# enforced must still hold.
ML "$LL_ONLY" "${S[@]}" --report "$REPORTS/ll.json" --write "$PROJ" -- "$HELPER" write "$PROJ/ran-require"
rc=$?
is "$rc" 125 "degradation: $LL_ONLY in require mode exits 125"
[ ! -e "$PROJ/ran-require" ]
ok $? "degradation: nothing was run"
err=$(cat "$SCRATCH/last.err")
like "$err" "proc.pid" "degradation: stderr names proc.pid"
like "$err" "fs.write.*protected entries" "degradation: stderr names fs.write and the protected entries left writable"
is "$(json_get "$REPORTS/ll.json" '["status"]')" unavailable "degradation: report status unavailable"
# ipc.unix: the host's SysV IPC is reachable without an IPC namespace
# (the conformance suite's shm-ipc probe), whatever seccomp refuses.
for p in proc.pid fs.write ipc.unix; do
	is "$(prop_status "$REPORTS/ll.json" "$p")" missing "degradation: $p reported missing"
done
like "$(json_get "$REPORTS/ll.json" '["properties"]["ipc.unix"]["reason"]')" "SysV" \
	"degradation: ipc.unix missing because the host's SysV IPC is reachable"

# --- the host's SysV IPC: what a run without an IPC namespace leaves ----------
# Without one, the segment, semaphore set and queue the command made were
# left on the host after the run, the segment with its memory (outside any
# --memory from then on).  moat removes a segment the command's own process
# made (its creator pid) that nothing holds; what it cannot tell from
# another process's of the same user (a semaphore set or queue: the kernel
# records no creator for them; a segment a child of the command made) it
# leaves, and names in run.left_on_host and on stderr.
sysv_id() { sed -n "s/.*$1=\(-\?[0-9]*\).*/\1/p" <<<"$2"; }
in_table() { awk -v id="$2" 'NR > 1 && $2 == id { f = 1 } END { exit !f }' "/proc/sysvipc/$1"; }
sysv_made() { # sysv_made OUT: the test removes at exit what OUT names
	IPC_MADE="$IPC_MADE m:$(sysv_id shm "$1") s:$(sysv_id sem "$1") q:$(sysv_id msg "$1")"
}
left_of() { # left_of REPORT: "what:state:id" of each SysV entry of run.left_on_host
	json_eval "$1" '" ".join("%s:%s:%s" % (e["what"], e["state"], e["id"]) for e in d["run"].get("left_on_host", []) if "id" in e)' | tr -d '"'
}
out=$(ML "$LL_ONLY" --mode prefer "${S[@]}" --report "$REPORTS/sysv.json" -- "$HELPER" sysv-make)
sysv_made "$out"
shm=$(sysv_id shm "$out") sem=$(sysv_id sem "$out") msg=$(sysv_id msg "$out")
like "$out" "^shm=[0-9]+ sem=[0-9]+ msg=[0-9]+$" "fallback SysV: the command makes a segment, a semaphore set and a queue ($out)"
in_table shm "$shm"
is "$?" 1 "fallback SysV: the segment the command's own process made is gone after the run"
is "$(left_of "$REPORTS/sysv.json")" "sysv_shm:removed:$shm sysv_sem:left:$sem sysv_msg:left:$msg" \
	"fallback SysV: run.left_on_host: the segment removed; the semaphore set and queue (no creator pid) left"
in_table sem "$sem" && in_table msg "$msg"
ok $? "fallback SysV: the semaphore set and the queue are left on the host, as the report says"
like "$(cat "$SCRATCH/last.err")" "2 System V IPC objects appeared on the host during the run .* left there \(sem $sem, msg $msg\)" \
	"fallback SysV: stderr names what is left and how to remove it"
valid_report "$REPORTS/sysv.json" "fallback SysV: the report fits the schema"
# A segment a process the command started made: its creator is not the
# command's pid, and could be any process of this user: left, and said.
out=$(ML "$LL_ONLY" --mode prefer "${S[@]}" --report "$REPORTS/sysv-child.json" --read "$(dirname "$HELPER")" -- /bin/sh -c '"$0" sysv-make; :' "$HELPER")
sysv_made "$out"
shm=$(sysv_id shm "$out")
in_table shm "$shm"
ok $? "fallback SysV: a segment a child of the command made is left (its creator could be anyone's)"
like "$(left_of "$REPORTS/sysv-child.json")" "sysv_shm:left:$shm" "  and named left in run.left_on_host"
# Control: unsandboxed, nothing is removed (or reported).
out=$("$MOAT" run "${OFF[@]}" --report-fd 3 -- "$HELPER" sysv-make 3>"$REPORTS/sysv-off.json" 2>/dev/null)
sysv_made "$out"
in_table shm "$(sysv_id shm "$out")"
ok $? "fallback SysV control (--mode off): the command's segment outlives the run"
# With an IPC namespace the host's segment is not there for the command.
out=$("$HELPER" sysv-make)
sysv_made "$out"
shm=$(sysv_id shm "$out")
if [ "$(prop_status "$REPORTS/base.json" ipc.unix)" = enforced ]; then
	is "$(M "${S[@]}" -- "$HELPER" shmat "$shm")" "shmat=EINVAL" "ipc.unix: the host's segment $shm cannot be attached in the IPC namespace"
else
	skip_feature userns "no IPC namespace here (ipc.unix missing)"
fi
is "$(ML "$LL_ONLY" --mode prefer "${S[@]}" -- "$HELPER" shmat "$shm")" "shmat=OK" "  control: without one (the fallback) it can"
in_table shm "$shm"
ok $? "  and the host's segment is still there after both runs (not the run's: never removed)"
ML "$LL_ONLY" "${S[@]}" --net loopback --report "$REPORTS/ll-lo.json" -- "$HELPER" exit 0
is "$?:$(prop_status "$REPORTS/ll-lo.json" net.loopback)" "125:missing" "degradation: --net loopback without namespaces: missing, refused"
out=$(ML "$LL_ONLY" "${S[@]}" --mode prefer --report "$REPORTS/llp.json" --write "$PROJ" -- "$HELPER" write "$PROJ/ran-prefer")
is "$out" OK "degradation: --mode prefer runs the command"
is "$(json_get "$REPORTS/llp.json" '["status"]')" degraded "degradation: report status degraded"
like "$(cat "$SCRATCH/last.err")" "proc.pid" "degradation: prefer names the missing properties on stderr"

LLP=(--mode prefer "${S[@]}")
for p in fs.read fs.secrets fs.tmp proc.ptrace; do
	is "$(prop_status "$REPORTS/llp.json" "$p")" enforced "fallback: $p still reported enforced"
done
# Landlock does not govern chmod/chown/utimes/xattrs: without the read-only
# mount view, fs.write is not claimed.
is "$(prop_status "$REPORTS/llp.json" fs.write)" missing "fallback: fs.write reported missing (metadata not governed)"
# Its reason counts the protected entries left writable only where a write
# grant has some: a run without one said "the 0 protected entries of the
# write grants (.git/hooks, ...) stay writable".
like "$(json_get "$REPORTS/llp.json" '["properties"]["fs.write"]["reason"]')" \
	"and the [1-9][0-9]* protected entries of the write grants \\(\\.git/hooks, \\.\\.\\.\\) stay writable" \
	"fallback with a write grant: fs.write's reason counts its protected entries left writable"
ML "$LL_ONLY" "${S[@]}" --mode prefer --dry-run -- "$HELPER" exit 0 >"$REPORTS/llp-nowrite.json"
r=$(json_get "$REPORTS/llp-nowrite.json" '["properties"]["fs.write"]["reason"]')
like "$r" "metadata changed" "fallback without a write grant: fs.write still missing, for the metadata"
unlike "$r" "protected entries" "  and its reason names no protected entries ($r)"
for i in 0 1 2; do
	out=$(ML "$LL_ONLY" "${LLP[@]}" --read "$HOMED" -- "$HELPER" read "${CANARIES[$i]}")
	unlike "$out" "${MARKS[$i]}" "fallback fs.secrets (landlock expansion): ${CANARIES[$i]#"$HOMED"/} not read ($out)"
done
out=$(ML "$LL_ONLY" "${LLP[@]}" --read "$HOMED" -- "$HELPER" read "$HOMED/notes.txt")
like "$out" "^OK home file" "fallback fs.secrets: the rest of HOME stays readable"
out=$(ML "$LL_ONLY" "${LLP[@]}" --write "$PROJ" --read "$HOMED" -- "$HELPER" read "$PROJ/key-link")
unlike "$out" "$SSH_MARK" "fallback fs.secrets: the planted link does not lead to the key ($out)"
out=$(ML "$LL_ONLY" "${LLP[@]}" --read "$HOMED" -- /bin/sh -c "ln '$HOMED/.ssh/id_ed25519' \"\$TMPDIR/k\" 2>&1; cat \"\$TMPDIR/k\" 2>&1")
unlike "$out" "$SSH_MARK" "fallback fs.secrets: a hard link to the key made in the per-run TMPDIR gives nothing"
out=$(ML "$LL_ONLY" "${LLP[@]}" --read "$PROJ" -- "$HELPER" read "$OUTSIDE/canary.txt")
like "$out" "^ERR EACCES" "fallback fs.read: landlock refuses the outside canary ($out)"
out=$(ML "$LL_ONLY" "${LLP[@]}" --write "$PROJ" -- "$HELPER" write "$OUTSIDE/ll-new")
[ ! -e "$OUTSIDE/ll-new" ]
ok $? "fallback fs.write: landlock refuses a write outside ($out)"
out=$(ML "$LL_ONLY" "${LLP[@]}" --read "$RO" -- "$HELPER" truncate "$RO/file.txt")
is "$out" "$(printf 'truncate=EACCES\nopen_trunc=EACCES')" "fallback fs.write: truncate of a read-only file refused"
is "$(cat "$RO/file.txt")" "$RO_MARK" "fallback fs.write: the file is intact"
out=$(ML "$LL_ONLY" "${LLP[@]}" -- /bin/sh -c 'echo "$TMPDIR"; echo x >"$TMPDIR/f" && echo tmpdir-ok; echo y >/tmp/moat-inside-'"$UNIQ"' 2>/dev/null && echo slash-tmp-writable')
tmpd=$(echo "$out" | head -1)
like "$out" "tmpdir-ok" "fallback fs.tmp: the per-run TMPDIR is writable ($tmpd)"
unlike "$out" "slash-tmp-writable" "fallback fs.tmp: the host's /tmp itself is not"
[ -n "$tmpd" ] && [ ! -e "$tmpd" ]
ok $? "fallback fs.tmp: the per-run TMPDIR is removed afterwards"
start_canary
out=$(ML "$LL_ONLY" "${LLP[@]}" -- "$HELPER" proc-environ "$CANARY" "$CANARY_SECRET")
if [ "$UID_NOW" -eq 0 ]; then
	# Only reachable through the root=0 test knob: real root always gets
	# namespaces (checked below).  Landlock's ptrace scope does not stop
	# uid 0 from opening /proc/<pid>/environ (PTRACE_MODE_READ) here.
	diag "fallback as real root (root=0 knob): /proc/<canary>/environ answers $out"
else
	like "$out" "^ERR " "fallback proc.ptrace: the canary's environ is unreadable (landlock scope) ($out)"
fi
out=$(ML "$LL_ONLY" "${LLP[@]}" -- "$HELPER" ptrace "$CANARY")
like "$out" "^ERR " "fallback proc.ptrace: ptrace(ATTACH) fails ($out)"
out=$(ML "$LL_ONLY" "${LLP[@]}" -- "$HELPER" kill "$CANARY")
like "$out" "^ERR " "fallback: kill(canary) refused by landlock's signal scope ($out)"
alive
ok $? "fallback: the canary is still alive"
# Without Landlock too, seccomp still refuses ptrace, but proc.ptrace is
# missing: its reason says what is missing (Landlock's ptrace restriction,
# a pid namespace) and its hint is not seccomp's, which is here.  As a
# user, the canary's environ is then readable: the verdict is not modest.
ML "landlock=0,$LL_ONLY" "${LLP[@]}" --dry-run -- "$HELPER" exit 0 >"$REPORTS/ll0p.json"
r=$(json_get "$REPORTS/ll0p.json" '["properties"]["proc.ptrace"]["reason"]')
is "$(prop_status "$REPORTS/ll0p.json" proc.ptrace)" missing "landlock=0 without namespaces: proc.ptrace missing"
like "$r" "seccomp refuses ptrace and process_vm_\\*, but /proc/PID/mem and environ of the user's other processes stay open: that needs Landlock \\(its ptrace restriction; disabled by MOAT_HOST_LIMIT\\) or a pid namespace" \
	"  its reason names what is missing ($r)"
unlike "$(json_get "$REPORTS/ll0p.json" '["properties"]["proc.ptrace"]["hint"]')" "CONFIG_SECCOMP_FILTER" \
	"  and its hint is not seccomp's"
if [ "$UID_NOW" -ne 0 ]; then
	out=$(ML "landlock=0,$LL_ONLY" "${LLP[@]}" -- "$HELPER" proc-environ "$CANARY" "$CANARY_SECRET")
	unlike "$out" "^ERR " "  as a user, the canary's environ is then readable ($out)"
fi
if [ -n "${TCP_PORT:-}" ]; then
	out=$(ML "$LL_ONLY" "${LLP[@]}" -- "$HELPER" abstract "$ABS_NAME")
	like "$out" "^ERR " "fallback ipc.abstract: landlock scope refuses the abstract socket ($out)"
	out=$(ML "$LL_ONLY" "${LLP[@]}" -- "$HELPER" tcp 127.0.0.1 "$TCP_PORT")
	like "$out" "^ERR " "fallback net.none: TCP to the host listener fails ($out)"
	is "$(count abstract 1)/$(count tcp 1)" "1/1" "fallback: the listeners saw nothing new"
fi
# As root, userns=0 alone leaves the namespaces (root needs no user
# namespace to make them).
if [ "$UID_NOW" -eq 0 ]; then
	ML userns=0 "${S[@]}" --report "$REPORTS/root-nouserns.json" -- "$HELPER" exit 0
	is "$?:$(prop_status "$REPORTS/root-nouserns.json" proc.pid)" "0:enforced" "degradation: as root userns=0 still gives proc.pid"
fi

# --- degradation: Landlock ABI capped ----------------------------------------
# Without Landlock the mount view alone holds the file system (as under
# bubblewrap): fs.read, fs.write and fs.secrets stay enforced, each tried.
ML landlock=0 "${S[@]}" --report "$REPORTS/ll0.json" -- "$HELPER" exit 0
st="$(prop_status "$REPORTS/ll0.json" fs.read)/$(prop_status "$REPORTS/ll0.json" fs.write)/$(prop_status "$REPORTS/ll0.json" fs.secrets)"
is "$?:$st" "0:enforced/enforced/enforced" "landlock=0 with namespaces: the view enforces fs.read, fs.write, fs.secrets"
out=$(ML landlock=0 "${S[@]}" --read "$PROJ" -- "$HELPER" read "$OUTSIDE/canary.txt")
like "$out" "^ERR " "landlock=0: the outside canary is not in the view ($out)"
out=$(ML landlock=0 "${S[@]}" --read "$HOMED" -- "$HELPER" read "$HOMED/.ssh/id_ed25519")
unlike "$out" "$SSH_MARK" "landlock=0: the ssh key under a granted HOME is not read ($out)"
out=$(ML landlock=0 "${S[@]}" --read "$RO" -- "$HELPER" write "$RO/file.txt")
is "$(cat "$RO/file.txt")" "$RO_MARK" "landlock=0: a read grant stays unchanged ($out)"
ML "landlock=0,$LL_ONLY" "${S[@]}" --report "$REPORTS/ll0n.json" -- "$HELPER" write "$PROJ/ran-ll0"
rc=$?
is "$rc:$(prop_status "$REPORTS/ll0n.json" fs.read)" "125:missing" "degradation: no Landlock, no namespaces: fs.read missing, refused"
[ ! -e "$PROJ/ran-ll0" ]
ok $? "degradation: landlock=0 without namespaces: nothing run"
like "$(cat "$SCRATCH/last.err")" "fs\.read" "degradation: landlock=0 without namespaces: stderr names fs.read"
ML landlock=2,$LL_ONLY "${S[@]}" --mode prefer --report "$REPORTS/ll2.json" -- "$HELPER" exit 0
is "$(prop_status "$REPORTS/ll2.json" fs.write)" missing "degradation: landlock=2: fs.write missing (no truncate right)"
for abi in 3 5; do
	ML "landlock=$abi,$LL_ONLY" "${LLP[@]}" --report "$REPORTS/ll$abi.json" -- "$HELPER" exit 0
	st="$(prop_status "$REPORTS/ll$abi.json" fs.read)/$(prop_status "$REPORTS/ll$abi.json" fs.write)/$(prop_status "$REPORTS/ll$abi.json" fs.secrets)"
	is "$st" "enforced/missing/enforced" "landlock=$abi without namespaces: fs.read, fs.secrets enforced, fs.write missing"
	out=$(ML "landlock=$abi,$LL_ONLY" "${LLP[@]}" --read "$PROJ" -- "$HELPER" read "$OUTSIDE/canary.txt")
	like "$out" "^ERR " "landlock=$abi: the outside canary is unreadable ($out)"
	out=$(ML "landlock=$abi,$LL_ONLY" "${LLP[@]}" --read "$HOMED" -- "$HELPER" read "$HOMED/.ssh/id_ed25519")
	unlike "$out" "$SSH_MARK" "landlock=$abi: the ssh key is not read ($out)"
	out=$(ML "landlock=$abi,$LL_ONLY" "${LLP[@]}" --write "$PROJ" -- "$HELPER" write "$OUTSIDE/abi$abi")
	[ ! -e "$OUTSIDE/abi$abi" ]
	ok $? "landlock=$abi: writing outside fails ($out)"
	out=$(ML "landlock=$abi,$LL_ONLY" "${LLP[@]}" --read "$RO" -- "$HELPER" truncate "$RO/file.txt")
	is "$(cat "$RO/file.txt")" "$RO_MARK" "landlock=$abi: truncate of a read-only file refused ($(printf '%s' "$out" | tr '\n' ' '))"
	ipc=$(prop_status "$REPORTS/ll$abi.json" ipc.abstract)
	if [ "$abi" -lt 6 ]; then
		is "$ipc" enforced "landlock=$abi without namespaces: ipc.abstract still enforced (seccomp: no AF_UNIX)"
		ML "landlock=$abi,$LL_ONLY,seccomp=0" "${LLP[@]}" --mode prefer --report "$REPORTS/ll$abi-sc0.json" -- "$HELPER" exit 0
		is "$(prop_status "$REPORTS/ll$abi-sc0.json" ipc.abstract)" missing \
			"landlock=$abi without namespaces and seccomp: ipc.abstract missing (scope needs ABI 6)"
	fi
done
ML seccomp=0 "${S[@]}" --report "$REPORTS/sc0.json" -- "$HELPER" write "$PROJ/ran-sc0"
is "$?:$(prop_status "$REPORTS/sc0.json" sys.filter)" "125:missing" "degradation: seccomp=0: sys.filter missing, refused"
[ ! -e "$PROJ/ran-sc0" ]
ok $? "degradation: seccomp=0: nothing run"

# --- real programs under --profile mcp ----------------------------------------
# With the caller's own HOME, so the runtimes find their installs.
RP() { "$MOAT" run --profile mcp "$@" 2>>"$SCRATCH/all.err"; }
out=$(RP -- /bin/sh -c 'echo $((6*7))')
is "$out" 42 "real programs (mcp): sh -c"
out=$(RP -- "$HELPER" fds)
is "$out" "0 1 2" "real programs (mcp): the static testhelper"
PYS=$(printf '%s\n' "$(command -v python3 2>/dev/null)" "$PY" | awk 'NF && !seen[$0]++')
for py in $PYS; do
	[ -x "$py" ] || continue
	out=$(RP -- "$py" -c 'import json, os, ssl, sys; print(json.dumps(6*7))')
	is "$out" 42 "real programs (mcp): $py -c"
done
if NODE=$(command -v node 2>/dev/null); then
	out=$(RP -- "$NODE" -e 'const os=require("os"); console.log(6*7, os.cpus().length > 0)')
	is "$out" "42 true" "real programs (mcp): node -e"
else
	skip_test "node is not installed"
fi
printf 'import sys\nprint("script", sys.argv[1])\n' >"$PROJ/s.py"
out=$(RP -- "$PY" "$PROJ/s.py" arg)
is "$out" "script arg" "real programs (mcp): python3 script from a project dir (its dir granted)"

# --- coverage: every enforced property was attacked ---------------------------
for f in "$REPORTS/base.json" "$REPORTS/lo.json"; do
	for p in $("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(k for k,v in d["properties"].items() if v["status"]=="enforced"))' "$f"); do
		[ -n "${COVERED[$p]:-}" ]
		ok $? "coverage: enforced property $p ($(basename "$f" .json) report) has an attempt above"
	done
done
! grep -Eq 'ERROR: AddressSanitizer|runtime error:|LeakSanitizer' "$SCRATCH/all.err"
ok $? "no sanitizer report from moat"

# --- fs.write, metadata: Landlock does not govern chmod/chown/utimes/xattrs;
# the read-only mount view outside the write grants does.  And no setuid or
# setgid file can be made even inside a write grant (as root it would be a
# setuid-root binary on the host), and no capability survives into the command.
META=$SCRATCH/meta; mkdir -p "$META/w"; echo m >"$META/outside"; chmod 0600 "$META/outside"
"$MOAT" run --profile strict --cwd / -- /bin/chmod 0666 "$META/outside" 2>/dev/null
is "$(stat -c %a "$META/outside")" 600 "fs.write: chmod of a file outside the write grants fails (mode unchanged)"
"$MOAT" run --profile strict --cwd / -- /usr/bin/touch -d 2001-01-01 "$META/outside" 2>/dev/null
unlike "$(stat -c %y "$META/outside")" "^2001" "fs.write: utimes of a file outside the write grants fails"
"$MOAT" run --mode off --profile strict --cwd / -- /bin/chmod 0644 "$META/outside" 2>/dev/null
is "$(stat -c %a "$META/outside")" 644 "fs.write control (--mode off): the same chmod works"
cp "$HELPER" "$META/w/bin"
"$MOAT" run --profile strict --cwd / --write "$META/w" -- /bin/chmod u+s,g+s "$META/w/bin" 2>/dev/null
is "$(stat -c %a "$META/w/bin")" "$(stat -c %a "$HELPER")" "fs.write: chmod u+s/g+s inside a write grant is refused"
"$MOAT" run --profile strict --cwd / --write "$META/w" -- /bin/chmod 0700 "$META/w/bin" 2>/dev/null
is "$(stat -c %a "$META/w/bin")" 700 "fs.write: an ordinary chmod inside a write grant works"
"$MOAT" run --mode off --profile strict --cwd / -- /bin/chmod u+s "$META/w/bin" 2>/dev/null
is "$(stat -c %a "$META/w/bin")" 4700 "fs.write control (--mode off): chmod u+s works"
caps=$("$MOAT" run --profile strict --cwd / -- /bin/grep -E '^Cap(Prm|Eff|Bnd|Amb)' /proc/self/status | awk '{print $2}' | sort -u | tr '\n' ' ')
is "$caps" "0000000000000000 " "caps: no capability in the command (permitted, effective, bounding, ambient)"
if [ "$(id -u)" = 0 ]; then
	# Root without any namespace holds every capability of the host's:
	# the bounding set is dropped capability by capability up to the
	# kernel's last one (child.c stops at the first EINVAL).
	# (/proc is not readable there: the helper asks PR_CAPBSET_READ.)
	known=$("$HELPER" capbset | sed -n 's/.*known=//p')
	is "$(MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --profile strict --mode prefer --cwd / --read "$HELPER" -- "$HELPER" capbset 2>/dev/null)" \
		"bnd=0000000000000000 known=$known" "caps: root without namespaces keeps no bounding capability either"
fi

# A lease on a file the command owns but may only read: a host writer's
# open would wait for the command (up to lease-break-time, 45 s, per open).
LEASE='import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    fcntl.fcntl(fd, 1024, fcntl.F_RDLCK)  # F_SETLEASE
    print("lease taken")
except OSError as e:
    print("lease refused: %s" % os.strerror(e.errno))'
echo data >"$META/leased"
out=$("$MOAT" run --profile strict --cwd / --read "$META" -- $PY -c "$LEASE" "$META/leased" 2>&1)
is "$out" "lease refused: Operation not permitted" "fcntl(F_SETLEASE) on a read-granted file the command owns is refused"
out=$("$MOAT" run --mode off --profile strict --cwd / -- $PY -c "$LEASE" "$META/leased" 2>/dev/null)
is "$out" "lease taken" "  control (--mode off): the lease is taken"

done_testing
