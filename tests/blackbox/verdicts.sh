#!/usr/bin/env bash
# Black-box tests of issue 5: `moat probe` against what the test observes on
# its own, the require/prefer/off verdicts for every missing feature
# (lowered with MOAT_HOST_LIMIT), --require on top of a profile, and every
# report validated against docs/report.schema.json.
#
# Runs as root, as an unprivileged user and with the sanitizer build
# ($MOAT), with $HELPER as the command.  Nothing here hard-codes the tree:
# the schema and the validator are found from $ROOT.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
PY=/usr/bin/python3
SCHEMA=$ROOT/docs/report.schema.json
VALIDATOR=$ROOT/tests/lib/validate_schema.py
HELPER_DIR=$(dirname "$HELPER")
mkdir -p "$SCRATCH/proj" "$SCRATCH/out"
chmod 0777 "$SCRATCH/out"
cd "$SCRATCH/proj"
NREP=0

# A report file name; every report the test makes is validated at the end.
newreport() {
	NREP=$((NREP + 1))
	REPORT="$REPORTS/r$NREP-$1.json"
}

# jq-less JSON access for the probe and the reports.
cat >"$SCRATCH/j.py" <<'EOF'
import json, sys

def load(p):
    with open(p) as f:
        return json.load(f)

cmd = sys.argv[1]
if cmd == "get":  # get FILE EXPR
    expr = sys.argv[3]
    # '["a"]["b"]' is a path into the document; an expression naming d
    # ('[d["a"], d["b"]]') is taken as it is.
    v = eval(expr if 'd["' in expr else "d" + expr, {"d": load(sys.argv[2])})
    print(json.dumps(v) if isinstance(v, (dict, list)) or v is None else v)
elif cmd == "missing":  # the report's missing list, sorted, space-separated
    print(" ".join(sorted(load(sys.argv[2])["missing"])))
elif cmd == "native-missing":  # probe: what the native backend lacks
    print(" ".join(sorted(load(sys.argv[2])["backends"]["native"]["missing"])))
elif cmd == "hints":
    # hints REPORT STDERR PREFIX: every missing property is named on
    # stderr with the report's reason, followed by the report's hint --
    # unless that hint was said for a property above it, when it is not
    # said again (the namespaces' sysctl line, once for four properties).
    rep, err, prefix = load(sys.argv[2]), open(sys.argv[3]).read().splitlines(), sys.argv[4]
    bad = []
    for p in rep["missing"]:
        v = rep["properties"][p]
        line = "moat: %s %s: %s" % (prefix, p, v["reason"])
        if line not in err:
            bad.append("%s: no line %r" % (p, line))
            continue
        i = err.index(line)
        if not v["hint"]:
            bad.append("%s: the report has no hint" % p)
        elif "moat:   hint: " + v["hint"] in err[:i]:
            if i + 1 < len(err) and err[i + 1] == "moat:   hint: " + v["hint"]:
                bad.append("%s: the hint said above is said again" % p)
        elif i + 1 >= len(err) or err[i + 1] != "moat:   hint: " + v["hint"]:
            bad.append("%s: the hint does not follow on stderr" % p)
    print("; ".join(bad) if bad else "ok")
elif cmd == "hint-match":  # hint-match REPORT REGEX: every missing hint matches
    import re
    rep = load(sys.argv[2])
    bad = [p for p in rep["missing"] if not re.search(sys.argv[3], rep["properties"][p]["hint"])]
    print(" ".join(bad) if bad else "ok")
elif cmd == "all-status":  # all-status REPORT: the set of property statuses
    print(" ".join(sorted({v["status"] for v in load(sys.argv[2])["properties"].values()})))
elif cmd == "features-le":
    # features-le LIMITED FULL: nothing in LIMITED is more than in FULL
    lim, full = load(sys.argv[2]), load(sys.argv[3])
    bad = [k for k, v in lim["features"].items() if v["available"] and not full["features"][k]["available"]]
    if lim["landlock_abi"] > full["landlock_abi"]:
        bad.append("landlock_abi")
    if lim["landlock_errata"] is not None and lim["landlock_errata"] != full["landlock_errata"]:
        bad.append("landlock_errata")
    for k in ("seccomp", "userns", "root"):
        if lim[k] and not full[k]:
            bad.append(k)
    le, fe = set(lim["backends"]["native"]["enforced"]), set(full["backends"]["native"]["enforced"])
    bad += sorted("native:" + p for p in le - fe)
    print(" ".join(bad) if bad else "ok")
elif cmd == "explained":
    # explained PROBE: every missing feature, tool and property has a reason
    # and a hint
    d = load(sys.argv[2])
    bad = [k for k, v in d["features"].items() if not v["available"] and not (v.get("reason") and v.get("hint"))]
    bad += ["tool:" + k for k, v in d["tools"].items() if not v["installed"] and not v.get("hint")]
    bad += ["native:" + k for k, v in d["backends"]["native"]["properties"].items()
            if v["status"] == "missing" and not v.get("reason")]
    print(" ".join(bad) if bad else "ok")
EOF
# `j get` of a chain of subscripts is jsonget's (tests/lib/tap.sh's
# json_get), which prints a null as j.py does; it leaves the rest to j.py.
j() {
	local rc
	if [ "$1" = get ]; then
		jsonget_try --null-json "$2" "$3"
		rc=$?
		[ "$rc" -eq 3 ] || return "$rc"
	fi
	"$PY" "$SCRATCH/j.py" "$@"
}

# ---------------------------------------------------------------- (a) probe
"$MOAT" probe --json >"$SCRATCH/probe.json"
is "$?" 0 "moat probe --json exits 0"
is "$(j get "$SCRATCH/probe.json" '["schema"]')" "moat.probe/1" "  and prints a versioned JSON object"
is "$(j get "$SCRATCH/probe.json" '["kernel"]')" "$(uname -r)" "probe: the kernel is uname -r"
is "$(j get "$SCRATCH/probe.json" '["uid"]')" "$(id -u)" "probe: the uid is id -u"
is "$(j get "$SCRATCH/probe.json" '["root"]')" "$([ "$(id -u)" = 0 ] && echo True || echo False)" \
	"probe: root is true exactly when uid is 0"
is "$(j get "$SCRATCH/probe.json" '["limited_by"]')" "" "probe: nothing limits detection without MOAT_HOST_LIMIT"

# Landlock: the LSM list when securityfs is mounted, and the syscall itself
# (444 on every architecture) asked by python, not by moat.
ll_abi=$("$PY" -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
r = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
print(r if r > 0 else 0)')
ll_errata=$("$PY" -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
r = libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(2))
print(r if r >= 0 else "None")')
is "$(j get "$SCRATCH/probe.json" '["landlock_abi"]')" "$ll_abi" "probe: the Landlock ABI is the kernel's ($ll_abi)"
if [ "$ll_abi" -gt 0 ]; then
	is "$(j get "$SCRATCH/probe.json" '["landlock_errata"]')" "$ll_errata" "probe: the Landlock errata are the kernel's ($ll_errata)"
fi
if [ -r /sys/kernel/security/lsm ]; then
	lsm_has=$(grep -qw landlock /sys/kernel/security/lsm && echo True || echo False)
	is "$(j get "$SCRATCH/probe.json" '["features"]["landlock"]["available"]')" "$lsm_has" \
		"probe: landlock available iff it is in /sys/kernel/security/lsm"
else
	diag "/sys/kernel/security/lsm is not readable here (securityfs not mounted): checked the syscall only"
	is "$(j get "$SCRATCH/probe.json" '["features"]["landlock"]["available"]')" \
		"$([ "$ll_abi" -gt 0 ] && echo True || echo False)" "probe: landlock available iff the syscall answers"
fi
for f in truncate:3 tcp:4 scope:6; do
	is "$(j get "$SCRATCH/probe.json" "[\"features\"][\"landlock_${f%:*}\"][\"available\"]")" \
		"$([ "$ll_abi" -ge "${f#*:}" ] && echo True || echo False)" "probe: landlock_${f%:*} iff ABI >= ${f#*:}"
done

# seccomp: /proc/self/status and the sysctl list of actions.
if grep -q '^Seccomp:' /proc/self/status && [ -r /proc/sys/kernel/seccomp/actions_avail ]; then
	have_seccomp=True
	actions=$(cat /proc/sys/kernel/seccomp/actions_avail)
else
	have_seccomp=False
	actions=""
fi
is "$(j get "$SCRATCH/probe.json" '["seccomp"]')" "$have_seccomp" "probe: seccomp iff /proc/self/status has Seccomp: and actions_avail exists"
is "$(j get "$SCRATCH/probe.json" '" ".join(d["seccomp_actions"])')" "$actions" "probe: the seccomp actions are actions_avail's"
for a in user_notif:seccomp_user_notif log:seccomp_log; do
	want=False
	[ "$have_seccomp" = True ] && printf ' %s ' "$actions" | grep -q " ${a%:*} " && want=True
	is "$(j get "$SCRATCH/probe.json" "[\"features\"][\"${a#*:}\"][\"available\"]")" "$want" \
		"probe: ${a#*:} iff '${a%:*}' is in actions_avail"
done
kver=$(uname -r | sed 's/[^0-9.].*//')
tsync_want=$([ "$have_seccomp" = True ] && printf '3.17\n%s\n' "$kver" | sort -V -C && echo True || echo False)
is "$(j get "$SCRATCH/probe.json" '["features"]["seccomp_tsync"]["available"]')" "$tsync_want" "probe: TSYNC iff seccomp and Linux >= 3.17"

# user namespaces, and a fresh /proc, tried with util-linux unshare.
userns_want=$(unshare -U true 2>/dev/null && echo True || echo False)
is "$(j get "$SCRATCH/probe.json" '["userns"]')" "$userns_want" "probe: userns iff \`unshare -U true\` works"
is "$(j get "$SCRATCH/probe.json" '["features"]["userns"]["available"]')" "$userns_want" "  and so says features.userns"
if [ "$userns_want" = True ]; then
	proc_want=$(unshare -Urmpf --mount-proc true 2>/dev/null && echo True || echo False)
	proc_how="unshare -Urmpf --mount-proc"
elif [ "$(id -u)" = 0 ]; then
	proc_want=$(unshare -mpf --mount-proc true 2>/dev/null && echo True || echo False)
	proc_how="unshare -mpf --mount-proc"
else
	proc_want=False
	proc_how="no user namespace, not root"
fi
is "$(j get "$SCRATCH/probe.json" '["features"]["proc_mount"]["available"]')" "$proc_want" "probe: /proc can be mounted iff \`$proc_how true\` works"

# cgroup v2: the mount table, /proc/self/cgroup and the file modes.
cg_mount=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
if [ -n "$cg_mount" ]; then
	cg_rel=$(sed -n 's/^0:://p' /proc/self/cgroup)
	cg_path=${cg_mount%/}${cg_rel}
	cg_path=${cg_path%/}
	cg_v2=True
	cg_deleg=$([ -w "$cg_path" ] && [ -w "$cg_path/cgroup.procs" ] && echo True || echo False)
	cg_layout=$(awk '$3 == "cgroup" { f = 1 } END { print f ? "hybrid" : "unified" }' /proc/self/mounts)
else
	cg_v2=False cg_deleg=False cg_path=""
	cg_layout=$(awk '$3 == "cgroup" { f = 1 } END { print f ? "legacy" : "none" }' /proc/self/mounts)
fi
is "$(j get "$SCRATCH/probe.json" '["cgroup"]["mount"]')" "$cg_mount" "probe: cgroup2 is mounted at '$cg_mount'"
is "$(j get "$SCRATCH/probe.json" '["cgroup"]["layout"]')" "$cg_layout" "probe: the cgroup layout is $cg_layout"
is "$(j get "$SCRATCH/probe.json" '["features"]["cgroup_v2"]["available"]')" "$cg_v2" "probe: cgroup v2 is $cg_v2"
is "$(j get "$SCRATCH/probe.json" '["features"]["cgroup_delegation"]["available"]')" "$cg_deleg" \
	"probe: cgroup delegation iff our cgroup ($cg_path) and its cgroup.procs are writable"

# external sandboxes: installed iff in PATH; the version is what --version says.
for t in bwrap firejail runsc crun runc nsjail nono sandbox-exec; do
	if p=$(command -v "$t" 2>/dev/null) && [ -x "$p" ]; then
		out=$(timeout 2 "$p" --version </dev/null 2>/dev/null | head -n1)
		is "$(j get "$SCRATCH/probe.json" "[\"tools\"][\"$t\"][\"installed\"]")" True "probe: $t is installed ($p)"
		is "$(j get "$SCRATCH/probe.json" "[\"tools\"][\"$t\"][\"version_output\"]")" "$out" "  with version '$out'"
	else
		is "$(j get "$SCRATCH/probe.json" "[\"tools\"][\"$t\"][\"installed\"]")" False "probe: $t is not installed"
		like "$(j get "$SCRATCH/probe.json" "[\"tools\"][\"$t\"][\"hint\"]")" "apt|dnf|brew|macOS" "  and the probe says how to get it"
	fi
done

# every missing feature says why and how to fix it
is "$(j explained "$SCRATCH/probe.json")" ok "probe: every missing feature, tool and property has a reason and a hint"

# the native backend: the probe's verdicts are the ones a run gets
"$MOAT" run --dry-run --profile strict -- "$HELPER" exit 0 >"$SCRATCH/dry-strict.json" 2>/dev/null
"$MOAT" run --dry-run --profile strict --net loopback -- "$HELPER" exit 0 >"$SCRATCH/dry-loop.json" 2>/dev/null
same=ok
for p in fs.read fs.write fs.secrets fs.tmp net.none ipc.abstract ipc.unix proc.pid proc.ptrace sys.filter tty.inject env.curated fd.clean res.limits; do
	a=$(j get "$SCRATCH/probe.json" "[\"backends\"][\"native\"][\"properties\"][\"$p\"][\"status\"]")
	b=$(j get "$SCRATCH/dry-strict.json" "[\"properties\"][\"$p\"][\"status\"]")
	[ -n "$a" ] && [ "$a" = "$b" ] || same="$p: probe $a, run $b"
done
a=$(j get "$SCRATCH/probe.json" '["backends"]["native"]["properties"]["net.loopback"]["status"]')
b=$(j get "$SCRATCH/dry-loop.json" '["properties"]["net.loopback"]["status"]')
[ -n "$a" ] && [ "$a" = "$b" ] || same="net.loopback: probe $a, run $b"
is "$same" ok "probe: the native backend's properties are the verdicts of a strict run (and --net loopback)"
if [ "$ll_abi" -ge 6 ] && [ "$have_seccomp" = True ] && [ "$userns_want" = True ]; then
	is "$(j native-missing "$SCRATCH/probe.json")" "net.allow" \
		"probe: on this host (Landlock >= 6, seccomp, userns) the native backend lacks only net.allow"
fi

# the human table says the same as the JSON
"$MOAT" probe >"$SCRATCH/probe.txt"
is "$?" 0 "moat probe (table) exits 0"
for f in landlock:landlock "seccomp filters:seccomp" "user namespaces:userns" "mount /proc:proc_mount" "cgroup v2:cgroup_v2"; do
	want=$([ "$(j get "$SCRATCH/probe.json" "[\"features\"][\"${f#*:}\"][\"available\"]")" = True ] && echo yes || echo no)
	like "$(cat "$SCRATCH/probe.txt")" "^${f%:*} +$want " "probe table: '${f%:*}' says $want, as the JSON does"
done
like "$(cat "$SCRATCH/probe.txt")" "fs\.read +(enforced|missing)" "probe table: lists the native backend's properties"
out=$("$MOAT" probe --frobnicate 2>&1 >/dev/null); rc=$?
is "$rc" 125 "moat probe --frobnicate exits 125"
like "$out" "unknown option '--frobnicate'" "  naming the option"

# MOAT_HOST_LIMIT lowers what the probe reports, and never raises it
limits="landlock=0 landlock=3 landlock=99 userns=0 root=0 userns=0,root=0 seccomp=0 cgroup=0 landlock=0,seccomp=0,userns=0,root=0,cgroup=0"
for l in $limits; do
	MOAT_HOST_LIMIT=$l "$MOAT" probe --json >"$SCRATCH/probe-$l.json"
	is "$(j features-le "$SCRATCH/probe-$l.json" "$SCRATCH/probe.json")" ok "probe with MOAT_HOST_LIMIT=$l reports nothing the host lacks"
	is "$(j get "$SCRATCH/probe-$l.json" '["limited_by"]')" "$l" "  and names the limit"
	is "$(j explained "$SCRATCH/probe-$l.json")" ok "  and every missing feature has a reason and a hint"
done
is "$(j get "$SCRATCH/probe-landlock=99.json" '["landlock_abi"]')" "$ll_abi" "MOAT_HOST_LIMIT=landlock=99 cannot raise the ABI above $ll_abi"
is "$(j get "$SCRATCH/probe-landlock=0.json" '[d["features"]["landlock"]["available"], d["landlock_abi"], d["landlock_errata"]]')" \
	"[false, 0, null]" "landlock=0: no Landlock, ABI 0, errata unknown"
like "$(j get "$SCRATCH/probe-landlock=0.json" '["features"]["landlock"]["reason"]')" "MOAT_HOST_LIMIT" "  and the reason is the limit"
if [ "$ll_abi" -ge 6 ]; then
	is "$(j get "$SCRATCH/probe-landlock=3.json" '[d["landlock_abi"], d["features"]["landlock_truncate"]["available"], d["features"]["landlock_tcp"]["available"], d["landlock_errata"]]')" \
		"[3, true, false, null]" "landlock=3: ABI 3 (truncate, no TCP), errata no longer claimed"
fi
is "$(j get "$SCRATCH/probe-seccomp=0.json" '[d["seccomp"]] + [d["features"][k]["available"] for k in ("seccomp", "seccomp_user_notif", "seccomp_tsync", "seccomp_log")] + [d["seccomp_actions"]]')" \
	"[false, false, false, false, false, []]" "seccomp=0: no seccomp, no user notification, TSYNC or log"
is "$(j get "$SCRATCH/probe-userns=0.json" '[d["userns"], d["features"]["userns"]["available"]]')" "[false, false]" "userns=0: no user namespaces"
# A property's hint is the host's whole hint: the userns one (~370 bytes)
# was once cut at 256, mid-word ("...; make "), in the table and the JSON.
MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" probe >"$SCRATCH/probe-userns-table.txt"
like "$(grep -A1 '^  proc.pid ' "$SCRATCH/probe-userns-table.txt" | tail -1)" "a profile that allows unshare$" \
	"userns=0,root=0: the table gives proc.pid's hint whole"
like "$(j get "$SCRATCH/probe-userns=0,root=0.json" '["backends"]["native"]["properties"]["proc.pid"]["hint"]')" "a profile that allows unshare$" \
	"userns=0,root=0: and so does the JSON"
like "$(j get "$SCRATCH/probe-userns=0.json" '["userns_blocked_by"]')" "MOAT_HOST_LIMIT" "  blocked by the limit, it says"
is "$(j get "$SCRATCH/probe-userns=0,root=0.json" '[d["root"], d["features"]["proc_mount"]["available"]]')" "[false, false]" \
	"userns=0,root=0: no root, and no fresh /proc"
is "$(j get "$SCRATCH/probe-cgroup=0.json" '[d["features"]["cgroup_v2"]["available"], d["features"]["cgroup_delegation"]["available"]]')" \
	"[false, false]" "cgroup=0: no cgroup v2, no delegation"
out=$(MOAT_HOST_LIMIT=landlock=yes "$MOAT" probe 2>&1 >/dev/null); rc=$?
is "$rc" 125 "a malformed MOAT_HOST_LIMIT exits 125"
like "$out" "MOAT_HOST_LIMIT=landlock=yes: landlock='yes' is not a number" "  and says what it could not parse"
# Empty items lowered nothing, and probe said "limited by" all the same.
for l in ',,,' 'landlock=0,,' ',userns=0' 'userns=0,'; do
	out=$(MOAT_HOST_LIMIT=$l "$MOAT" probe 2>&1 >/dev/null); rc=$?
	is "$rc" 125 "MOAT_HOST_LIMIT='$l' (an empty item) exits 125"
	like "$out" "MOAT_HOST_LIMIT=$l: an empty item" "  and says so"
done
out=$(MOAT_HOST_LIMIT=landlock=-1 "$MOAT" run -- true 2>&1); rc=$?
is "$rc" 125 "MOAT_HOST_LIMIT=landlock=-1 is refused by moat run too"

# -------------------------------------------------- (b) verdicts, every mode
# Expected missing properties of the default profile (exec) per limit, on a
# host that has Landlock >= 6, seccomp and user namespaces.  Each line:
# LIMIT|MISSING|HINT_REGEX (the hint every missing property must carry;
# "-" when the causes are mixed).  With namespaces the mount view holds the
# file system without Landlock (as under bubblewrap); ipc.unix needs seccomp
# (socket(AF_UNIX) refused) and an IPC namespace (for SysV IPC).  Without a
# pid namespace proc.tree needs Landlock's signal scope (ABI 6: else the
# command stops moat and its guard) and seccomp (else clone3 with
# CLONE_INTO_CGROUP moves a child out of moat's cgroup).
matrix="-||-
landlock=0||-
landlock=2||-
userns=0,root=0|fs.write ipc.unix proc.pid|namespace
seccomp=0|ipc.unix proc.ptrace sys.filter|[Ss]eccomp|SECCOMP
landlock=5,userns=0,root=0|fs.write ipc.unix proc.pid proc.tree|-
landlock=0,userns=0,root=0|fs.read fs.secrets fs.tmp fs.write ipc.unix proc.pid proc.ptrace proc.tree|-
landlock=0,seccomp=0|ipc.unix proc.ptrace sys.filter|-
seccomp=0,userns=0,root=0|fs.write ipc.unix net.none proc.pid proc.ptrace proc.tree sys.filter|-
landlock=0,seccomp=0,userns=0,root=0|fs.read fs.secrets fs.tmp fs.write ipc.abstract ipc.unix net.none proc.pid proc.ptrace proc.tree sys.filter|-"
if [ "$(id -u)" = 0 ]; then
	# root makes the namespaces without a user namespace; without seccomp
	# it keeps TIOCSTI on the caller's terminal.
	matrix="$matrix
userns=0||-
seccomp=0,userns=0|ipc.unix proc.ptrace sys.filter tty.inject|-"
fi

# Without namespaces the tree is held by a cgroup of moat's where this user
# may make one (as root here); else proc.tree is missing too.  Without
# Landlock as well it is missing anyway: the command could write that
# cgroup's files (limits.h, cgroup_open).
if ! feature_present cgroup_tree; then
	matrix=$(printf '%s\n' "$matrix" | while IFS='|' read -r limit want hint_re; do
		case "$limit" in
		*userns=0,root=0*) want=$(printf '%s\n' $want proc.tree | sort -u | tr '\n' ' ' | sed 's/ $//') ;;
		esac
		printf '%s|%s|%s\n' "$limit" "$want" "$hint_re"
	done)
fi

# run_case LIMIT MODE: run the helper (creates a file, exits 7) under the
# limit and mode; sets RC, ERR (stderr file), MADE (the file exists?).
run_case() {
	local limit=$1 mode=$2 target
	newreport "$mode"
	target="$SCRATCH/out/made-$NREP"
	ERR="$SCRATCH/err-$NREP"
	# The report through a descriptor: moat refuses a report file when the
	# command's writes are not confined (mode off; prefer with neither
	# Landlock nor namespaces), and these cases must run.
	if [ "$limit" = - ]; then
		env -u MOAT_HOST_LIMIT "$MOAT" run --mode "$mode" --read "$HELPER_DIR" --write "$SCRATCH/out" --report-fd 3 \
			-- /bin/sh -c '"$0" write "$1" >/dev/null && exit 7' "$HELPER" "$target" 2>"$ERR" 3>"$REPORT"
	else
		MOAT_HOST_LIMIT=$limit "$MOAT" run --backend native --mode "$mode" --read "$HELPER_DIR" --write "$SCRATCH/out" --report-fd 3 \
			-- /bin/sh -c '"$0" write "$1" >/dev/null && exit 7' "$HELPER" "$target" 2>"$ERR" 3>"$REPORT"
	fi
	RC=$?
	MADE=$([ -e "$target" ] && echo yes || echo no)
}

if [ "$ll_abi" -ge 6 ] && [ "$have_seccomp" = True ] && [ "$userns_want" = True ]; then
	while IFS='|' read -r limit want hint_re; do
		name=${limit/#-/no limit}
		for mode in require prefer off; do
			run_case "$limit" "$mode"
			if [ "$mode" = off ]; then
				is "$RC/$MADE" "7/yes" "$name, off: the command runs (exit 7 passes through)"
				is "$(j get "$REPORT" '["status"]')/$(j get "$REPORT" '["backend"]')/$(j all-status "$REPORT")" "off/none/off" \
					"  status off, backend none, every property off"
				like "$(cat "$ERR")" "sandbox off \(mode off\): running .* unsandboxed" "  and stderr says it runs unsandboxed"
				continue
			fi
			is "$(j missing "$REPORT")" "$want" "$name, $mode: missing is [${want:-nothing}]"
			if [ -z "$want" ]; then
				is "$RC/$MADE/$(j get "$REPORT" '["status"]')" "7/yes/enforced" "  status enforced, the command runs"
				is "$(cat "$ERR")" "" "  and moat says nothing on stderr"
			elif [ "$mode" = require ]; then
				is "$RC/$MADE/$(j get "$REPORT" '["status"]')" "125/no/unavailable" \
					"  status unavailable, exit 125, the command did not run"
				is "$(j get "$REPORT" '[d["run"]["executed"], d["run"]["exit_code"]]')" "[false, 125]" "  the report says it was not executed"
				is "$(j hints "$REPORT" "$ERR" "cannot enforce")" ok "  stderr names each missing property with its reason and hint"
				like "$(cat "$ERR")" "refusing to run .* \(mode require\); --mode prefer" "  and says how to run anyway"
			else
				is "$RC/$MADE/$(j get "$REPORT" '["status"]')" "7/yes/degraded" "  status degraded, the command runs (exit 7)"
				is "$(j hints "$REPORT" "$ERR" "degraded: missing")" ok "  stderr names each missing property with its reason and hint"
			fi
			# The namespaces' hint, some 400 characters, was said under
			# each of the four properties that lack them.
			dup=$(grep '^moat:   hint: ' "$ERR" | sort | uniq -d | head -c 60)
			is "$dup" "" "  no hint said twice"
			if [ -n "$want" ] && [ "$hint_re" != - ]; then
				is "$(j hint-match "$REPORT" "$hint_re")" ok "  every hint points at the cause (/$hint_re/)"
			fi
		done
		# the dry run has the same verdict and the same shape, without run
		newreport dry
		if [ "$limit" = - ]; then
			env -u MOAT_HOST_LIMIT "$MOAT" run --dry-run -- "$HELPER" exit 0 >"$REPORT" 2>/dev/null
		else
			MOAT_HOST_LIMIT=$limit "$MOAT" run --backend native --dry-run -- "$HELPER" exit 0 >"$REPORT" 2>/dev/null
		fi
		rc=$?
		is "$rc/$(j missing "$REPORT")" "$([ -n "$want" ] && echo 125 || echo 0)/$want" \
			"$name, --dry-run: exit $([ -n "$want" ] && echo 125 || echo 0), the same missing properties"
	done <<<"$matrix"
else
	for f in landlock seccomp userns; do
		feature_present "$f" || skip_feature "$f" "the verdict matrix assumes Landlock >= 6, seccomp and user namespaces"
	done
	[ "$ll_abi" -ge 6 ] || skip_feature landlock "Landlock ABI $ll_abi < 6: the verdict matrix assumes >= 6"
fi

# ----------------------------------------- (c) --require on top of a profile
newreport require-dry
"$MOAT" run --dry-run --profile strict --require fs.secrets,net.none -- "$HELPER" exit 0 >"$REPORT" 2>/dev/null
is "$(j get "$REPORT" '["policy"]["require"]')" '["fs.secrets", "net.none"]' "--require fs.secrets,net.none is in the effective policy"
is "$(j get "$REPORT" '[d["properties"]["fs.secrets"]["requested"], d["properties"]["net.none"]["requested"]]')" \
	"[true, true]" "  and both are requested"
if [ "$ll_abi" -gt 0 ] && [ "$have_seccomp" = True ]; then
	newreport require
	"$MOAT" run --profile strict --require fs.secrets,net.none --report "$REPORT" -- "$HELPER" exit 0 2>/dev/null
	is "$?/$(j get "$REPORT" '["status"]')" "0/enforced" "--require fs.secrets,net.none on this host: enforced, runs"
fi
# fs.secrets needs Landlock or a mount namespace: without both, requiring
# it refuses to run
newreport require-landlock0
MOAT_HOST_LIMIT=landlock=0,userns=0,root=0 "$MOAT" run --backend native --mode require --require fs.secrets,net.none --read "$HELPER_DIR" --write "$SCRATCH/out" \
	--report "$REPORT" -- "$HELPER" write "$SCRATCH/out/req-made" >/dev/null 2>"$SCRATCH/err-req"
is "$?/$([ -e "$SCRATCH/out/req-made" ] && echo ran || echo not-run)" "125/not-run" \
	"--require fs.secrets,net.none without Landlock or namespaces: exit 125, nothing runs"
like "$(cat "$SCRATCH/err-req")" "cannot enforce fs.secrets: " "  and stderr names fs.secrets"
like "$(j missing "$REPORT")" "fs.secrets" "  and the report lists it missing"
# a property the profile does not ask for becomes requested: net.allow, which
# the native backend does not implement
for mode in require prefer; do
	newreport "require-netallow-$mode"
	"$MOAT" run --mode "$mode" --require net.allow --report "$REPORT" -- "$HELPER" exit 0 2>"$SCRATCH/err-na"
	rc=$?
	if [ "$mode" = require ]; then
		is "$rc/$(j get "$REPORT" '["status"]')" "125/unavailable" "--require net.allow (native has no per-destination rules), require: 125, unavailable"
		prefix="cannot enforce"
	else
		is "$rc/$(j get "$REPORT" '["status"]')" "0/degraded" "--require net.allow, prefer: runs, degraded"
		prefix="degraded: missing"
	fi
	like "$(cat "$SCRATCH/err-na")" "$prefix net.allow: [^ ]" "  stderr names net.allow with a reason"
	like "$(j get "$REPORT" '["properties"]["net.allow"]["reason"]')" "." "  the report gives the reason"
done
# --require net.loopback: enforced only with a network namespace
if [ "$userns_want" = True ] || [ "$(id -u)" = 0 ]; then
	newreport require-loopback
	"$MOAT" run --net loopback --require net.loopback --report "$REPORT" -- "$HELPER" exit 0 2>/dev/null
	is "$?/$(j get "$REPORT" '["properties"]["net.loopback"]["status"]')" "0/enforced" "--net loopback --require net.loopback: enforced"
fi
newreport require-loopback-nons
MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --backend native --net loopback --require net.loopback --report "$REPORT" -- "$HELPER" exit 0 2>"$SCRATCH/err-lo"
is "$?/$(j get "$REPORT" '["status"]')" "125/unavailable" "  without namespaces: 125, unavailable"
like "$(cat "$SCRATCH/err-lo")" "cannot enforce net.loopback: .*MOAT_HOST_LIMIT" "  naming net.loopback and what blocks it"

# A claim must hold: --require net.none on a profile with the network open is
# either refused, or the command really cannot connect (to a listener this
# test runs on 127.0.0.1).
port_file="$SCRATCH/port"
"$PY" -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(20)
end = time.time() + 20
while time.time() < end:
    try:
        c, _ = s.accept(); c.close()
    except OSError:
        break' "$port_file" &
lpid=$!
need_ready 30 "the test listener (its port file)" test -s "$port_file"
port=$(cat "$port_file" 2>/dev/null)
"$HELPER" tcp 127.0.0.1 "$port" >"$SCRATCH/tcp-control" 2>&1
is "$(cat "$SCRATCH/tcp-control")" "OK" "control: the helper connects to the test's listener on 127.0.0.1:$port"
newreport require-netnone-on-network
out=$("$MOAT" run --mode prefer --profile network --require net.none --read "$HELPER_DIR" --report "$REPORT" -- "$HELPER" tcp 127.0.0.1 "$port" 2>/dev/null)
st=$(j get "$REPORT" '["properties"]["net.none"]["status"]')
if [ "$st" = enforced ]; then
	unlike "$out" "^OK" "--profile network --require net.none: the report says enforced, so the connect must fail"
else
	is "$st" missing "--profile network --require net.none: the report says missing (the policy opens the network)"
fi
kill "$lpid" 2>/dev/null
wait "$lpid" 2>/dev/null

# ------------------------------------- the report through --report-fd, too
newreport fd
"$MOAT" run --report-fd 3 -- "$HELPER" exit 0 3>"$REPORT" 2>/dev/null
is "$(j get "$REPORT" '["run"]["exit_code"]')" 0 "--report-fd 3 writes the report"
newreport signal
"$MOAT" run --read "$HELPER_DIR" --report "$REPORT" -- "$HELPER" killself 15 2>/dev/null
is "$(j get "$REPORT" '[d["run"]["signal"], d["run"]["exit_status"], d["run"]["exit_code"]]')" "[15, null, 143]" \
	"a command killed by SIGTERM: signal 15, no exit status, exit code 143"
newreport notfound
"$MOAT" run --report "$REPORT" -- "$HELPER-does-not-exist" 2>/dev/null
[ -s "$REPORT" ] || rm -f "$REPORT" # moat may refuse before it has a plan: no report then
newreport timeout
"$MOAT" run --read "$HELPER_DIR" --timeout 0.2 --report "$REPORT" -- "$HELPER" sleep 10 2>/dev/null
is "$(j get "$REPORT" '[d["run"]["timed_out"], d["run"]["exit_code"]]')" "[true, 124]" "a timeout: timed_out, exit code 124"

# ------------------------------------------- (d) every report fits the schema
if [ ! -f "$SCHEMA" ] || [ ! -f "$VALIDATOR" ]; then
	ok 1 "docs/report.schema.json and tests/lib/validate_schema.py are in the tree under $ROOT"
	done_testing
	exit 1
fi
"$PY" "$VALIDATOR" "$SCHEMA" "$SCHEMA" >/dev/null 2>"$SCRATCH/schema-err"
rc=$?
ok $([ "$rc" -le 1 ] && echo 0 || echo 1) "docs/report.schema.json loads in the validator (only supported keywords)"
[ "$rc" -le 1 ] || diag "$(cat "$SCRATCH/schema-err")"
# One validator run over every report (a Python start-up each would cost
# more than the runs that wrote them); it prints "FILE: ..." per error.
n=0
all_errs=$("$PY" "$VALIDATOR" "$SCHEMA" "$REPORTS"/*.json 2>&1)
vrc=$?
for r in "$REPORTS"/*.json; do
	[ -e "$r" ] || continue
	n=$((n + 1))
	errs=$(printf '%s\n' "$all_errs" | grep -F -- "$r: ")
	[ "$vrc" -le 1 ] && [ -z "$errs" ]
	ok $? "report $(basename "$r" .json) validates against docs/report.schema.json"
	[ -z "$errs" ] || printf '%s\n' "$errs" | head -5 | sed 's/^/#   /'
done
[ "$vrc" -le 1 ] || printf '%s\n' "$all_errs" | head -5 | sed 's/^/#   /'
ok $([ "$n" -ge 20 ] && echo 0 || echo 1) "  ($n reports validated)"
# and the validator does reject what the schema forbids
"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["properties"]["fs.read"] = {"status": "missing", "requested": True}
d["surprise"] = 1
json.dump(d, open(sys.argv[2], "w"))' "$REPORTS/r1-require.json" "$SCRATCH/broken.json"
out=$("$PY" "$VALIDATOR" "$SCHEMA" "$SCRATCH/broken.json")
is "$?" 1 "a broken report fails validation"
like "$out" "surprise" "  naming the unknown field"

done_testing
