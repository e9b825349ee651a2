#!/usr/bin/env bash
# libmoat under a thin CLI: the shared library exports exactly the public
# API of include/moat/moat.h, and that API runs the same pipeline.
set -u
. "$(dirname "$0")/../lib/tap.sh"
lib=$BUILD/libmoat.so
ok $([ -f "$lib" ] && echo 0 || echo 1) "libmoat.so is built"
exports=$(nm -D --defined-only "$lib" 2>/dev/null | awk '{print $3}' | sort | tr '\n' ' ')
is "$exports" "moat_free moat_probe_json moat_run_main moat_version " "libmoat.so exports only the public API (-fvisibility=hidden)"
want=$(grep -o 'MOAT_EXPORT [a-z ]*\*\?moat_[a-z_]*' "$ROOT/include/moat/moat.h" | sed 's/.*\(moat_[a-z_]*\)$/\1/' | sort | tr '\n' ' ')
is "$want" "$exports" "and that is what include/moat/moat.h declares"
# --version: the version and the git revision the binary was built from.
version=$(cat "$ROOT/VERSION")
got=$("$MOAT" --version)
like "$got" "^moat $version \\(git ([0-9a-f]{12}(-dirty)?|unknown)\\)\$" "moat --version prints the version and the git revision"
if [ -e "$ROOT/.git" ] && rev=$(git -C "$ROOT" describe --always --dirty --abbrev=12 --exclude='*' 2>/dev/null); then
	is "$got" "moat $version (git $rev)" "the revision is the checkout's (git describe --dirty)"
elif [ -f "$ROOT/.git-revision" ]; then
	is "$got" "moat $version (git $(head -c 64 "$ROOT/.git-revision"))" "the revision is the copy's .git-revision"
fi
# --- an embedder: python3 calling moat_run_main through ctypes -------------
scratch
cat >"$SCRATCH/embed.py" <<'PY'
import ctypes, os, signal, subprocess, sys, threading
lib = ctypes.CDLL(os.environ["LIBMOAT"])
libc = ctypes.CDLL(None, use_errno=True)
how, args = sys.argv[1], [b"run"] + [a.encode() for a in sys.argv[2:]]
def call():
    argv = (ctypes.c_char_p * (len(args) + 1))(*args, None)
    return lib.moat_run_main(len(args), argv)
def status_bit(field, sig):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return (int(line.split()[1], 16) >> (sig - 1)) & 1
if how == "main":
    print("rc", call())
elif how == "thread":  # from a worker thread: refused, not a hang
    out = []
    t = threading.Thread(target=lambda: out.append(call()))
    t.start(); t.join(20)
    print("rc", out[0] if out else "hung")
elif how == "busy":  # the main thread, while another thread runs
    ev = threading.Event()
    t = threading.Thread(target=ev.wait); t.start()
    rc = call(); ev.set(); t.join()
    print("rc", rc)
elif how == "state":  # the caller's children and its process state across the run
    heard = []
    signal.signal(signal.SIGCHLD, lambda s, f: heard.append(s))
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])
    mine = subprocess.Popen(["sleep", "5"])
    # It ends while moat runs (the command sleeps 1 s): its SIGCHLD must
    # still reach this handler.
    quick = subprocess.Popen(["sh", "-c", "sleep 0.3; exit 42"])
    heard.clear()
    rc = call()
    for _ in range(20):  # Python runs the handler between bytecodes
        if heard:
            break
    heard_during = len(heard) > 0
    sub = ctypes.c_int(-1); libc.prctl(37, ctypes.byref(sub), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
    alive = mine.poll() is None
    quick_code = quick.wait()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR2])
    rc2 = call()
    usr2 = signal.SIGUSR2 in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    print("rc=%d/%d own-child=%s its-sibling-exit=%d its-sigchld-heard=%s subreaper=%d sigchld-caught=%d sigpipe-ignored=%d usr2-blocked=%d"
          % (rc, rc2, "alive" if alive else "gone", quick_code, heard_during, sub.value,
             status_bit("SigCgt", signal.SIGCHLD), status_bit("SigIgn", signal.SIGPIPE), usr2))
    mine.kill(); mine.wait()
elif how == "umask":  # the caller's umask: the command's, and the caller's again after
    os.umask(0o077)
    rc = call()
    after = os.umask(0o077)
    rc2 = call()
    after2 = os.umask(0o077)
    print("rc=%d/%d umask-after=%03o/%03o" % (rc, rc2, after, after2))
elif how == "again":  # a call, then another: the first may leave moat's helper threads behind
    rc = call()
    threads = int([l.split()[1] for l in open("/proc/self/status") if l.startswith("Threads:")][0])
    args = [b"run", b"--mode", b"off", b"--", b"/bin/true"]
    print("rc=%d/%d threads-between=%d" % (rc, call(), threads))
elif how == "probe":  # moat_probe_json under the caller's SIGCHLD handling (sys.argv[2])
    import json
    if sys.argv[2] == "ignored":
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    lib.moat_probe_json.restype = ctypes.c_void_p
    p = lib.moat_probe_json(0)
    doc = json.loads(ctypes.string_at(p).decode())
    lib.moat_free(ctypes.c_void_p(p))
    found = sorted(k for k, v in doc["features"].items() if isinstance(v, dict) and v.get("available"))
    print("userns=%s available=%s sigchld-ignored-after=%d"
          % (doc["userns"], ",".join(found), status_bit("SigIgn", signal.SIGCHLD)))
elif how == "nullarg":  # a NULL among the argc words (a ctypes array from a list holding None)
    args = [None if a == b"NULL" else a for a in args]
    print("rc", call())
elif how == "pending":  # the caller's blocked SIGTERM and SIGUSR1, pending before the call (or not)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM, signal.SIGUSR1])
    if sys.argv[2] == "--pending":
        args = [b"run"] + [a.encode() for a in sys.argv[3:]]
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGUSR1)
    rc = call()
    print("rc=%d pending-after=%s" % (rc, ",".join(sorted(s.name for s in signal.sigpending())) or "none"))
elif how == "nofile":  # the caller's soft RLIMIT_NOFILE: the command's, and the caller's again after
    import resource
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    soft = 64 if hard > 64 else hard
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    rc = call()
    after = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    rc2 = call()
    after2 = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    print("rc=%d/%d nofile-after=%s/%s (the caller's %s, hard %s)"
          % (rc, rc2, after, after2, soft, hard))
PY
embed() { LIBMOAT=$lib PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$SCRATCH/embed.py" "$@"; }

# bwrap, firejail, oci, gvisor and nsjail run moat's own binary as the
# sandbox's init, bound from /proc/self/exe: in an embedder that is the
# embedder (python3 would run a file ./__init from the cwd as pid 1, and
# moat's Landlock layer would never be applied).  From libmoat they are
# refused, with the reason; the moat program runs them.
cd "$SCRATCH"
printf 'import os\nos.write(1, b"planted __init ran\\n")\n' >"$SCRATCH/__init"
for b in bwrap firejail oci gvisor nsjail; do
	out=$(embed main --backend "$b" --report "$REPORTS/$b.json" -- /bin/true 2>&1)
	like "$out" "from libmoat only the native backend runs: the others start moat's own binary as the sandbox's init, and this process is not moat \\(it is [^)]*python[^)]*\\)" \
		"through libmoat, --backend $b is refused with the reason"
	is "$(echo "$out" | grep -c 'planted __init ran')/$(echo "$out" | tail -1)/$(json_get "$REPORTS/$b.json" '["status"]')" \
		"0/rc 125/unavailable" "and nothing ran (exit 125, status unavailable)"
done
like "$(embed main --backend bwrap -- /bin/true 2>&1)" "hint: run the moat program, or use --backend native" \
	"the refusal's hint names the way out"
out=$(embed main --report "$REPORTS/auto.json" -- /bin/true 2>&1)
is "$(echo "$out" | tail -1)/$(json_get "$REPORTS/auto.json" '["backend"]')" "rc 0/native" \
	"through libmoat, --backend auto runs the native backend"
if command -v bwrap >/dev/null && "$MOAT" run --backend bwrap -- /bin/true 2>/dev/null; then
	"$MOAT" run --backend bwrap --report "$REPORTS/cli.json" -- /bin/true 2>/dev/null
	is "$?/$(json_get "$REPORTS/cli.json" '["backend"]')" "0/bwrap" "control: the moat program runs --backend bwrap"
else
	ok 0 "# SKIP control: bwrap does not run here"
fi
cd "$ROOT"

# A NULL among argv's argc words (ctypes makes one of None): the parser
# read it and the embedder died of SIGSEGV.  Refused, with the index.
out=$(embed nullarg --mode off -- /bin/echo NULL 2>&1)
like "$out" "moat_run_main: argv\[5\] is NULL \(argc 6\)" "libmoat: a NULL among argv's words is refused, naming it"
is "$(echo "$out" | tail -1)" "rc 125" "with exit 125, not a crash"
is "$(embed nullarg --mode off -- /bin/echo notnull 2>/dev/null | tr '\n' ' ')" "notnull rc 0 " "control: the same argv without the NULL runs"

# moat_run_main from a worker thread, or with another thread alive: another
# thread could take the command's SIGCHLD (the run hung forever) or a
# signal meant for the command.  Refused, and the main thread alone runs.
out=$(timeout 30 env LIBMOAT=$lib /usr/bin/python3 "$SCRATCH/embed.py" thread --mode off -- /bin/true 2>&1)
like "$out" "must be called from the process's only thread .*not its main thread" "from a worker thread: refused with the reason"
is "$(echo "$out" | tail -1)" "rc 125" "with exit 125, not a hang"
out=$(timeout 30 env LIBMOAT=$lib /usr/bin/python3 "$SCRATCH/embed.py" busy --mode off -- /bin/true 2>&1)
is "$(echo "$out" | tail -1)" "rc 125" "from the main thread while another thread runs: refused (exit 125)"
is "$(embed main --mode off -- /bin/true 2>&1 | tail -1)" "rc 0" "control: the only thread runs it"

# moat's own threads (a name lookup of --allow-net, util/helperthread.h)
# can outlive the run: a getaddrinfo the command stopped waiting for goes on
# to its resolver's timeout.  The next call counted it as the caller's and
# refused.  A resolver that never answers, on the loopback of a network
# namespace made here (with a user namespace: root or not).
cat >"$SCRATCH/silent_dns.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
open(sys.argv[1], "w").close()
time.sleep(20)
PY
echo "nameserver 127.0.0.1" >"$SCRATCH/resolv.silent"
silent_ns() {
	# The marker is removed before the resolver starts: one left by the
	# previous call let this one start the command before the resolver was
	# bound (the lookup was refused at once, no thread left to count).
	rm -f "$SCRATCH/dns.up"
	unshare -Urmn sh -c 'ip link set lo up && mount --bind "$1/resolv.silent" /etc/resolv.conf || exit 9
		dir=$1; shift
		/usr/bin/python3 "$dir/silent_dns.py" "$dir/dns.up" & dns=$!
		for _ in $(seq 200); do [ -e "$dir/dns.up" ] && break; sleep 0.05; done
		[ -e "$dir/dns.up" ] || { kill $dns; exit 9; }
		"$@"; rc=$?; kill $dns; rm -f "$dir/dns.up"; exit $rc' _ "$SCRATCH" "$@"
}
if feature_present netfence && unshare -Urmn true 2>/dev/null && command -v ip >/dev/null; then
	out=$(silent_ns env LIBMOAT=$lib PYTHONDONTWRITEBYTECODE=1 timeout 60 /usr/bin/python3 "$SCRATCH/embed.py" again \
		--allow-net api.github.com --timeout 1 -- /usr/bin/python3 -c 'import socket; socket.getaddrinfo("api.github.com", 443)' 2>&1)
	is "$(echo "$out" | tail -1)" "rc=124/0 threads-between=2" \
		"libmoat: a lookup left running by a run (its thread still there) does not make the next call refuse"
	# moat looks an allowed name up itself at the start: the same after a command that asked nothing.
	out=$(silent_ns env LIBMOAT=$lib PYTHONDONTWRITEBYTECODE=1 timeout 60 /usr/bin/python3 "$SCRATCH/embed.py" again \
		--allow-net api.github.com -- /bin/true 2>&1)
	is "$(echo "$out" | tail -1)" "rc=0/0 threads-between=2" \
		"libmoat: the lookup of an allowed name, left running after /bin/true, does not make the next call refuse"
	# Control: an address, no name: nothing is left between the calls.
	out=$(silent_ns env LIBMOAT=$lib PYTHONDONTWRITEBYTECODE=1 timeout 60 /usr/bin/python3 "$SCRATCH/embed.py" again \
		--allow-net 127.0.0.1:9 -- /bin/true 2>&1)
	is "$(echo "$out" | tail -1)" "rc=0/0 threads-between=1" "control: with no name to look up, no thread is left between the calls"
else
	skip_feature netfence "net allow's fence, user and network namespaces (unshare -Urmn) and ip"
	skip_feature netfence "control: net allow's fence, user and network namespaces (unshare -Urmn) and ip"
	skip_feature netfence "net allow's fence, user and network namespaces (unshare -Urmn) and ip"
fi

# The caller's children are not moat's: moat neither kills nor reaps them,
# and gives back the caller's subreaper flag, signal mask and dispositions.
for m in "--mode off" "--mode prefer" "--profile strict"; do
	lim=; [ "$m" = "--mode prefer" ] && lim=userns=0,root=0
	out=$(MOAT_HOST_LIMIT=$lim embed state $m -- /bin/sleep 1 2>/dev/null)
	is "$out" "rc=0/0 own-child=alive its-sibling-exit=42 its-sigchld-heard=True subreaper=0 sigchld-caught=1 sigpipe-ignored=0 usr2-blocked=0" \
		"libmoat ($m${lim:+, MOAT_HOST_LIMIT=$lim}): the caller's child lives, its sibling's status and SIGCHLD are the caller's, the caller's state is back"
done
# The umask too: moat makes its own files with 022 while it runs
# (util/umask.h), and the caller's is the command's, in every call, and the
# caller's again when moat_run_main returns.
for m in "--mode off" "--profile strict"; do
	out=$(embed umask $m -- /bin/sh -c umask 2>/dev/null | tr '\n' ' ')
	is "$out" "0077 0077 rc=0/0 umask-after=077/077 " \
		"libmoat ($m): the caller's umask 077 is each command's, and the caller's again after the call"
done
# moat_probe_json forks its trials (a user namespace, a fresh /proc) and
# waits for them: under the caller's SIGCHLD at SIG_IGN the kernel reaped
# them first, and ECHILD read as "no user namespaces".  The document must
# not depend on it, and the caller's SIG_IGN is back after.
want=$(embed probe default 2>/dev/null)
like "$want" "^userns=(True|False) available=[a-z0-9_.,]+ sigchld-ignored-after=0\$" "control: moat_probe_json, SIGCHLD at its default"
is "$(embed probe ignored 2>/dev/null)" "${want%=0}=1" \
	"moat_probe_json with the caller's SIGCHLD ignored: the same document, and SIGCHLD ignored again after"
# A signal the caller blocks and has pending when it calls (an embedder
# that takes SIGTERM from a signalfd of its own) arrived before the run: it
# is the caller's.  moat's signalfd read it, and the caller's was gone.
for m in "--mode off" "--profile strict"; do
	is "$(embed pending --pending $m -- /bin/true 2>/dev/null)" "rc=0 pending-after=SIGTERM,SIGUSR1" \
		"libmoat ($m): the caller's pending, blocked SIGTERM and SIGUSR1 are still pending after the call"
done
is "$(embed pending --mode off -- /bin/true 2>/dev/null)" "rc=0 pending-after=none" "control: none pending, none after"
# And its soft RLIMIT_NOFILE, which planning raises to hold every object
# open: left raised, the embedder's select(2) could meet descriptors past
# FD_SETSIZE, and the next call's command got the raised limit.
for m in "--profile strict" "--mode off"; do
	out=$(embed nofile $m -- /bin/sh -c 'ulimit -Sn' 2>/dev/null | tr '\n' ' ')
	like "$out" "^64 64 rc=0/0 nofile-after=64/64 \\(the caller's 64, hard [0-9]+\\) \$" \
		"libmoat ($m): the caller's soft RLIMIT_NOFILE 64 is each command's, and the caller's again after the call"
done
# Control: the moat program itself raises it for planning (its command still gets the caller's).
is "$(sh -c 'ulimit -Sn 64; exec "$1" run -- /bin/sh -c "ulimit -Sn"' sh "$MOAT" 2>/dev/null)" 64 \
	"control: the moat program gives its command the caller's soft RLIMIT_NOFILE 64"
# The same for a shell that starts a background job, then execs moat.
for lim in "" "userns=0,root=0"; do
	mode=off; [ -n "$lim" ] && mode=prefer
	sh -c 'sleep 20 </dev/null >/dev/null 2>&1 & echo $! >"$1/bg"; exec env MOAT_HOST_LIMIT="$2" "$3" run --mode "$4" -- /bin/true' \
		sh "$SCRATCH" "$lim" "$MOAT" "$mode" 2>/dev/null
	bg=$(cat "$SCRATCH/bg")
	sleep 0.2
	is "$(kill -0 "$bg" 2>/dev/null && echo alive || echo killed)" alive \
		"exec moat run --mode $mode${lim:+ (MOAT_HOST_LIMIT=$lim)}: the shell's background job is left alone"
	kill "$bg" 2>/dev/null
	# Control: what the command leaves behind is still killed.
	MOAT_HOST_LIMIT=$lim "$MOAT" run --mode "$mode" -- /bin/sh -c \
		'sleep 20 </dev/null >/dev/null 2>&1 & echo $! >"$1/daemon"' sh "$SCRATCH" 2>/dev/null
	d=$(cat "$SCRATCH/daemon")
	sleep 0.2
	is "$(kill -0 "$d" 2>/dev/null && echo alive || echo killed)" killed \
		"control: a process the command left behind is killed (--mode $mode${lim:+, MOAT_HOST_LIMIT=$lim})"
	kill "$d" 2>/dev/null
done
done_testing
