#!/usr/bin/env bash
# The sandbox tool's environment and the command's (issue 15).
#
# bwrap, runc, runsc, firejail and nsjail run outside the sandbox with the
# caller's rights.  moat gives each a minimal environment of its own and hands
# the command's exact environment over through the tool's own mechanism (a
# descriptor, OCI process.env, moat __init --env-fd, nsjail's envar in its
# configuration file), so:
#
#   1. a loader hook (LD_PRELOAD) in a config file is refused with
#      file:line:col and nothing runs; given explicitly with --env it reaches
#      the command only, never a tool process (the controls show each tool
#      does load it when it is in the tool's own environment);
#   2. no value of the environment is in any process's argv while the
#      command runs (the control shows the scan finds one that is);
#   3. the names the command sees are exactly the report's, with and without
#      HOME (runc and runsc add HOME, bwrap PWD, firejail a dozen);
#   4. under firejail as root, moat's seccomp program refuses the setuid bit
#      (firejail alone and --mode off let a setuid-root copy of id stay).
#
# A backend that cannot run for this user (runsc unprivileged, firejail as
# nobody, nsjail where it is not installed) is skipped with the reason its
# report gives.  Runs as root, as uid
# 65534 and with the sanitizer moat ($MOAT).
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
PY=/usr/bin/python3
UID_NOW=$(id -u)
unset MOAT_OCI_RUNTIME MOAT_HOST_LIMIT LD_PRELOAD
CANARY_DIR=$SCRATCH/canary
mkdir -p "$CANARY_DIR" "$SCRATCH/w"
chmod 0777 "$CANARY_DIR" "$SCRATCH/w"
CANARY=$CANARY_DIR/loads
NREP=0
cd /

skip() { # skip REASON: a check that could not run here, not a pass
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N # SKIP $*"
}
newreport() { NREP=$((NREP + 1)); REPORT=$REPORTS/r$NREP-$1.json; }
loads() { cat "$CANARY" 2>/dev/null; }

# --- the payload: a constructor that records every process loading it ----------
# It writes to a directory outside every grant, so a process inside a
# sandbox cannot record itself; any line is a process outside one (a tool).
cat >"$SCRATCH/payload.c" <<EOF
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void moat_test_payload(void)
{
	char exe[512], line[640];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int fd = open("$CANARY", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);

	exe[n > 0 ? n : 0] = '\0';
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "exe=%s pid=%d\n", exe, (int)getpid());
	if (write(fd, line, (size_t)n) < 0)
		n = 0;
	close(fd);
}
EOF
SO=$SCRATCH/payload.so
cc -shared -fPIC -o "$SO" "$SCRATCH/payload.c" 2>"$SCRATCH/cc.err"
ok $? "the preload payload builds ($(head -c 200 "$SCRATCH/cc.err"))"
chmod 0755 "$SO"
LD_PRELOAD=$SO /bin/true
like "$(loads)" "exe=/(usr/)?bin/true" "control: the payload records a process that loads it"
: >"$CANARY"

# --- 1 (i): a hook in a config file is refused; nothing runs -------------------
mkdir -p "$SCRATCH/cfg"
cfg_case() { # cfg_case FILE TEXT WANT_REGEX LABEL
	local f=$SCRATCH/cfg/$1 out rc
	printf '%s\n' "$2" >"$f"
	rm -f "$SCRATCH/ran"
	: >"$CANARY"
	out=$("$MOAT" run --config "$f" --server x 2>&1 >/dev/null)
	rc=$?
	is "$rc" 125 "$4: refused with 125"
	like "$out" "$3" "$4: the error names file:line:col and the variable"
	like "$out" "hint: .*--env LD_PRELOAD=VALUE" "$4: the hint gives the command-line form"
	[ ! -e "$SCRATCH/ran" ] && [ ! -s "$CANARY" ]
	ok $? "$4: nothing ran (no marker, no process loaded the payload)"
}
cfg_case hook.toml "[mcp_servers.x]
command = [\"/usr/bin/touch\", \"$SCRATCH/ran\"]
sandbox = \"bwrap\"
env = { LANG = \"C\", LD_PRELOAD = \"$SO\" }" \
	"hook\\.toml:4:21: mcp_servers\\.x\\.env\\.LD_PRELOAD: refusing the loader or interpreter hook LD_PRELOAD from a config file" \
	"TOML [mcp_servers.x] env"
cfg_case codex.toml "[mcp_servers.x]
command = \"/usr/bin/touch\"
args = [\"$SCRATCH/ran\"]
sandbox = \"none\"
[mcp_servers.x.env]
LD_PRELOAD = \"$SO\"" \
	"codex\\.toml:6:1: mcp_servers\\.x\\.env\\.LD_PRELOAD: refusing the loader" "Codex [mcp_servers.x.env] table"
cfg_case claude.json "{\"mcpServers\": {\"x\": {
  \"command\": \"/usr/bin/touch\", \"args\": [\"$SCRATCH/ran\"], \"sandbox\": \"none\",
  \"env\": {\"LD_PRELOAD\": \"$SO\"}}}}" \
	"claude\\.json:3:11: mcpServers\\.x\\.env\\.LD_PRELOAD: refusing the loader" "Claude Desktop JSON env"
# Control: the same server without the hook runs (so the refusal is the hook's).
printf '%s\n' "{\"mcpServers\": {\"x\": {\"command\": \"/usr/bin/touch\", \"args\": [\"$SCRATCH/ran\"], \"sandbox\": \"none\", \"env\": {\"A\": \"1\"}}}}" >"$SCRATCH/cfg/ok.json"
rm -f "$SCRATCH/ran"
"$MOAT" run --config "$SCRATCH/cfg/ok.json" --server x --backend none >/dev/null 2>&1
[ -e "$SCRATCH/ran" ]
ok $? "control: the same server without the hook runs"

# --- which backends run for this user -------------------------------------------
# RUNS[b]=1, or WHY[b] the reason the report gives; TOOL[b] the tool it names.
# (In prefer mode a backend that cannot run at all gives status unavailable:
# validated below with the others.)
declare -A RUNS WHY TOOL
for b in bwrap oci gvisor firejail nsjail; do
	REPORT=$REPORTS/r-probe-$b.json
	"$MOAT" run --mode prefer --backend "$b" --profile strict --dry-run -- /bin/true >"$REPORT" 2>/dev/null
	if [ "$(json_get "$REPORT" '["status"]' 2>/dev/null)" = unavailable ]; then
		WHY[$b]=$(json_get "$REPORT" '["properties"]["fs.read"]["reason"]' 2>/dev/null)
	else
		RUNS[$b]=1
		TOOL[$b]=$(json_get "$REPORT" '["launcher"]["tool"]')
	fi
done
runs() { [ -n "${RUNS[$1]:-}" ]; }
why() { echo "$1 cannot run as uid $UID_NOW here: ${WHY[$1]:-unknown}"; }

# --- 1 (ii): --env LD_PRELOAD reaches no tool process ------------------------------
for b in bwrap oci gvisor firejail nsjail; do
	if ! runs "$b"; then
		skip "$(why "$b")"
		continue
	fi
	tool=$(readlink -f "${TOOL[$b]}")
	# Control: the tool loads the payload from its own environment.  runsc
	# is statically linked: the attack does not exist there.
	: >"$CANARY"
	LD_PRELOAD=$SO "$tool" --version >/dev/null 2>&1
	if ! grep -q "exe=$tool " "$CANARY"; then
		skip "$b: $tool does not load LD_PRELOAD at all, the attack is not real there (the control recorded no load;" \
			"$(file -b "$tool" 2>/dev/null | grep -o 'statically linked' || echo 'not a dynamic executable'))"
		continue
	fi
	ok 0 "control: $tool loads the payload when it is in the tool's own environment"
	: >"$CANARY"
	newreport "preload-$b"
	out=$("$MOAT" run --mode prefer --backend "$b" --profile strict --env LD_PRELOAD="$SO" --report-fd 3 \
		-- "$HELPER" exit 0 2>&1 3>"$REPORT")
	rc=$?
	is "$rc/$(loads)" "0/" "$b: with --env LD_PRELOAD the run succeeds and no process outside the sandbox loads it ($(echo "$out" | tail -1))"
	like "$(json_get "$REPORT" '["environment"]["names"]')" '"LD_PRELOAD"' "$b: the command's environment still has it (the report lists it)"
done

# --- 2: no value in any argv --------------------------------------------------------
# scan WATCH OWN: while pid WATCH lives (at most 15 s), every process's
# cmdline is read.  Prints a hit for each marker of $SCAN_ANY found in any,
# and of $SCAN_OWN in any but the copies of pid OWN's own argv (moat's,
# which holds what --env was given, in moat and in its child until that
# executes the tool); then "tool=NAME env=NAMES" for the child of WATCH
# whose argv[0] is a tool, with the names of that tool's own environment.
# The markers come through the environment, not this scanner's argv.
cat >"$SCRATCH/scan.py" <<'EOF'
import os, sys, time
watch, own = sys.argv[1], sys.argv[2]
any_m = [m.encode() for m in os.environ.get("SCAN_ANY", "").split()]
own_m = [m.encode() for m in os.environ.get("SCAN_OWN", "").split()]
tools = {"bwrap", "runc", "crun", "runsc", "firejail", "nsjail"}
hits, seen, end = set(), {}, time.time() + 15
try:
    own_cmd = open("/proc/%s/cmdline" % own, "rb").read()
except OSError:
    own_cmd = None
def ppid(p):
    with open("/proc/%s/stat" % p) as f:
        return f.read().rsplit(")", 1)[1].split()[1]
while time.time() < end:
    alive = os.path.exists("/proc/" + watch)
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            cmd = open("/proc/%s/cmdline" % p, "rb").read()
            parent = ppid(p)
        except OSError:
            continue
        for m in any_m + ([] if cmd == own_cmd else own_m):
            if m in cmd:
                hits.add("hit pid=%s %s" % (p, cmd.replace(b"\0", b" ")[:200].decode(errors="replace")))
        name = os.path.basename(cmd.split(b"\0")[0].decode(errors="replace"))
        if parent == watch and name in tools and name not in seen:
            try:
                env = open("/proc/%s/environ" % p, "rb").read().split(b"\0")
                seen[name] = ",".join(sorted(e.split(b"=")[0].decode() for e in env if e))
            except OSError:
                seen[name] = "unreadable"
    if not alive:
        break
    time.sleep(0.02)
for h in sorted(hits):
    print(h)
for t, e in seen.items():
    print("tool=%s env=%s" % (t, e))
EOF
# Control: the scan finds a marker that is in an argv.
sh -c 'sleep 2' "moat-argv-control-$$" &
SH=$!
like "$(SCAN_ANY="moat-argv-control-$$" "$PY" "$SCRATCH/scan.py" "$SH" 0)" "^hit pid=$SH " \
	"control: the scan finds a marker in a process's argv"
wait "$SH"
PASS_MARK="moat-pass-$$-$RANDOM" ENV_MARK="moat-env-$$-$RANDOM" CFG_MARK="moat-cfg-$$-$RANDOM"
for b in bwrap oci gvisor firejail nsjail; do
	if ! runs "$b"; then
		skip "$(why "$b")"
		continue
	fi
	# Three ways a value gets in: --env-pass (moat's environment), --env
	# (moat's own argv, which the scan leaves out) and a config file's env.
	printf '[mcp_servers.x]\ncommand = ["%s", "sleep", "2"]\nenv = { CFG_SECRET = "%s" }\n[mcp_servers.x.sandbox]\nbackend = "%s"\nmode = "prefer"\nprofile = "strict"\nenv_pass = ["PASS_SECRET"]\n' \
		"$HELPER" "$CFG_MARK" "$b" >"$SCRATCH/cfg/argv-$b.toml"
	PASS_SECRET=$PASS_MARK "$MOAT" run --config "$SCRATCH/cfg/argv-$b.toml" --server x --mode prefer --env ENV_SECRET="$ENV_MARK" \
		>/dev/null 2>"$SCRATCH/argv-$b.err" &
	mpid=$!
	out=$(SCAN_ANY="$PASS_MARK $CFG_MARK" SCAN_OWN=$ENV_MARK "$PY" "$SCRATCH/scan.py" "$mpid" "$mpid")
	wait "$mpid"
	rc=$?
	tool=$(basename "${TOOL[$b]}")
	is "$rc" 0 "$b: the sleeping command ran ($(tail -1 "$SCRATCH/argv-$b.err"))"
	like "$out" "tool=$tool " "$b: the scan saw $tool running"
	unlike "$out" "^hit " "$b: no process's argv holds a value of the environment"
	# What the tool itself was given: PATH only (as root the scan can
	# read a setuid tool's environment too).
	like "$out" "tool=$tool env=(PATH|unreadable)$" "$b: $tool's own environment is PATH alone"
done

# --- 3: the names the command sees are the report's -------------------------------
names_seen() { "$PY" -c 'import sys; d=open(sys.argv[1],"rb").read().split(b"\0"); print(" ".join(sorted(e.split(b"=")[0].decode() for e in d if e)))' "$1"; }
names_report() { "$PY" -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1]))["environment"]["names"])))' "$1"; }
for b in native bwrap oci gvisor firejail nsjail; do
	if [ "$b" != native ] && ! runs "$b"; then
		skip "$(why "$b")"
		skip "$(why "$b")"
		continue
	fi
	for home in with without; do
		newreport "names-$b-$home"
		if [ "$home" = with ]; then
			HOME=$SCRATCH "$MOAT" run --mode prefer --backend "$b" --profile strict --env FOO=bar \
				--report-fd 3 -- /usr/bin/env -0 >"$SCRATCH/names.out" 2>/dev/null 3>"$REPORT"
		else
			env -u HOME "$MOAT" run --mode prefer --backend "$b" --profile strict --env FOO=bar \
				--report-fd 3 -- /usr/bin/env -0 >"$SCRATCH/names.out" 2>/dev/null 3>"$REPORT"
		fi
		seen=$(names_seen "$SCRATCH/names.out")
		is "$seen" "$(names_report "$REPORT")" "$b, $home HOME: the command sees exactly the report's names ($seen)"
	done
done

# --- 4: firejail as root: no setuid-root binary left behind --------------------------
W=$SCRATCH/w
suid() { [ -e "$1" ] && [ -u "$1" ] && echo setuid || echo no-setuid; }
if [ "$UID_NOW" != 0 ]; then
	skip "the setuid attack needs a root caller (uid $UID_NOW: a copy of id is not root-owned)"
elif ! runs firejail; then
	skip "$(why firejail)"
else
	ATTACK="cp /usr/bin/id $W/id && chmod 4755 $W/id; $PY -c 'import os; os.close(os.open(\"$W/id2\", os.O_CREAT|os.O_WRONLY, 0o4755))'"
	# Controls: unsandboxed, and under firejail alone (its own seccomp
	# list, as moat ran it before), the bit stays.
	"$MOAT" run --mode off --profile strict -- /bin/sh -c "$ATTACK" >/dev/null 2>&1
	is "$(suid "$W/id")/$(suid "$W/id2")" setuid/setuid "control: --mode off leaves setuid-root files in the write grant"
	rm -f "$W/id" "$W/id2"
	firejail --quiet --noprofile --read-only=/ --read-write="$W" --seccomp --caps.drop=all --nonewprivs --noroot \
		-- /bin/sh -c "$ATTACK" >/dev/null 2>&1
	is "$(suid "$W/id")/$(suid "$W/id2")" setuid/setuid "control: firejail with its own seccomp list leaves them too"
	rm -f "$W/id" "$W/id2"
	newreport firejail-suid
	# --report-fd: moat refuses a report file for a run whose fs.write is
	# missing (the command could forge it; docs/report.md).
	"$MOAT" run --mode prefer --backend firejail --profile strict --write "$W" --report-fd 3 \
		-- /bin/sh -c "$ATTACK" >/dev/null 2>"$SCRATCH/suid.err" 3>"$REPORT"
	is "$(json_get "$REPORT" '["run"]["executed"]')" True "firejail: the setuid attack ran"
	is "$(suid "$W/id")/$(suid "$W/id2")" no-setuid/no-setuid \
		"firejail: neither chmod 4755 nor open(O_CREAT, 04755) leaves a setuid bit ($(grep -v '^moat:' "$SCRATCH/suid.err" | head -2 | tr '\n' ' '))"
	like "$(json_get "$REPORT" '["properties"]["sys.filter"]')" "enforced.*moat's seccomp-bpf loaded by moat __init|moat's seccomp-bpf loaded by moat __init.*enforced" \
		"firejail: the report says moat's program was enforced, as the refusal shows"
	is "$(json_get "$REPORT" '["properties"]["fs.write"]["status"]')" missing \
		"firejail: fs.write with a write grant stays missing (the grant is bound by name)"
	rm -f "$W/id" "$W/id2"
fi

# --- 5: two entries of one name: the command gets the first ----------------------
# getenv, and so moat's own HOME (the credentials it denies), takes the
# first of two; the command got the last: with HOME=a then HOME=b the keys
# were denied under a and read under b, fs.secrets "enforced".
DUP=$(mktemp -d /var/tmp/moat-dupenv.XXXXXX) # outside /tmp: the sandbox's /tmp is its own
chmod 0755 "$DUP"
mkdir -p "$DUP/a" "$DUP/b/.ssh"
echo "dup-canary-$$" >"$DUP/b/.ssh/id_rsa"
chmod -R a+rX "$DUP"
# execve with the environment as given (env(1) and python's os.execve
# would fold the duplicate away).
DUPEXEC='import ctypes, os, sys
n = sys.argv.index("--")
env, argv = sys.argv[1:n], sys.argv[n + 1:]
arr = lambda l: (ctypes.c_char_p * (len(l) + 1))(*[x.encode() for x in l], None)
ctypes.CDLL(None, use_errno=True).execve(argv[0].encode(), arr(argv), arr(env))
sys.exit("execve: %s" % os.strerror(ctypes.get_errno()))'
out=$(cd "$DUP" && /usr/bin/python3 -c "$DUPEXEC" PATH=/usr/bin:/bin "HOME=$DUP/a" "HOME=$DUP/b" -- "$MOAT" run \
	--profile strict --read "$DUP" -- /bin/sh -c 'echo "HOME=$HOME"; cat "$HOME/.ssh/id_rsa" 2>/dev/null' 2>/dev/null)
is "$out" "HOME=$DUP/a" "two HOME entries: the command gets the first, whose credentials moat denies (no key read)"
out=$(cd "$DUP" && /usr/bin/python3 -c "$DUPEXEC" PATH=/usr/bin:/bin "HOME=$DUP/a" "HOME=$DUP/b" -- /bin/cat \
	"$DUP/b/.ssh/id_rsa" 2>/dev/null)
like "$out" "dup-canary-$$" "  control: outside moat the key under the second HOME is readable"
rm -rf "$DUP"

# --- every report against the schema -------------------------------------------------
SCHEMA=$ROOT/docs/report.schema.json
VALIDATOR=$ROOT/tests/lib/validate_schema.py
if [ -f "$SCHEMA" ] && [ -f "$VALIDATOR" ]; then
	out=$("$PY" "$VALIDATOR" "$SCHEMA" "$REPORTS"/r*.json 2>&1)
	ok $? "all $NREP reports are valid against docs/report.schema.json $(echo "$out" | head -3)"
else
	ok 1 "docs/report.schema.json and tests/lib/validate_schema.py are in the tree under $ROOT"
fi

done_testing
