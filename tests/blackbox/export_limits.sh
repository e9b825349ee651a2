#!/usr/bin/env bash
# The limits an export's report claims are the ones the exported files
# apply.  An export runs later, without moat: no cgroup of moat's holds its
# tree, and no moat sets rlimits before the tool.  A red-team pass found
# `moat export --backend bwrap --files 64 --cpu 5 --memory 100M --pids 50`
# reporting each limit enforced ("moat's cgroup v1 below ...: pids.max 50",
# "setrlimit RLIMIT_NOFILE 64") and res.limits enforced, while run.sh set
# none of them: the command saw `ulimit -n` 20000 and `ulimit -t`
# unlimited.  The same held for nsjail's export (its configuration says
# disable_rl), and for firejail, nono, seatbelt, gvisor and crun's.
#
#   1. Every export: no limit's mechanism is moat's cgroup, or the cgroup
#      holding moat (there is no moat); memory, pids (as root) and cpu are
#      missing, saying it is an export.
#   2. The rlimits are claimed only where the files apply them: bwrap's
#      run.sh (ulimit) and OCI's config.json (process.rlimits).  nsjail,
#      firejail, nono and seatbelt exports say files missing, and res.limits.
#   3. bwrap's run.sh applies them: the command sees ulimit -n 64, -t 5 and
#      -c 0; the control is the shell the test runs in, where -n is not 64.
#
# Runs as root and as an unprivileged user.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch_sticky
PY=/usr/bin/python3
LIMITS=(--files 64 --cpu 5 --memory 100M --pids 50)

# limits_of DIR: "NAME STATUS MECHANISM-OR-REASON" a line, then res.limits.
limits_of() {
	$PY -c 'import json, sys
r = json.load(open(sys.argv[1]))
for k, v in (r.get("limits") or {}).items():
    print(k, v["status"], v.get("mechanism") or v.get("reason") or "")
p = r["properties"]["res.limits"]
print("res.limits", p["status"], p.get("mechanism") or p.get("reason") or "")' "$1/report.json"
}

export_to() { # export_to BACKEND DIR [moat options] -- COMMAND...
	local backend=$1 dir=$2
	shift 2
	rm -rf "$dir"
	(cd "$SCRATCH" && "$MOAT" export --backend "$backend" -o "$dir" "$@" 2>"$dir.err" >/dev/null)
}

# --- 1 and 2: each backend's export
for b in bwrap nsjail firejail nono seatbelt oci gvisor; do
	d=$SCRATCH/x-$b
	if ! export_to "$b" "$d" "${LIMITS[@]}" -- /bin/true; then
		ok 1 "$b: moat export ($(head -c 300 "$d.err"))"
		continue
	fi
	L=$(limits_of "$d")
	unlike "$L" "moat's cgroup|the cgroup holding moat" "$b export: no limit is held by moat's cgroup (no moat runs it)"
	if ! printf '%s\n' "$L" | grep -q '^memory '; then
		# Unusable before its limits are decided (firejail refuses uid
		# 65534): every property missing, res.limits with it.
		like "$L" "^res.limits missing " "  no limit decided: res.limits missing ($(printf '%s' "$L" | tail -1 | head -c 100))"
		continue
	fi
	like "$L" "^memory (missing .*export|enforced cgroup made by runc: linux.resources)" \
		"  memory: missing in an export, but for runc's own linux.resources"
	like "$L" "^cpu missing .*export" "  cpu (the tree's total, moat's watch): missing"
	case $b in
	bwrap | oci | gvisor)
		like "$L" "^files enforced setrlimit RLIMIT_NOFILE 64" "  files: applied by the exported files"
		;;
	*)
		like "$L" "^files missing .*export" "  files: missing, nothing in the export applies rlimits"
		like "$L" "^res.limits missing " "  res.limits: missing"
		;;
	esac
done
# What OCI claims, config.json carries.
is "$($PY -c 'import json, sys
c = json.load(open(sys.argv[1]))
print([r for r in c["process"]["rlimits"] if r["type"] == "RLIMIT_NOFILE"])' "$SCRATCH/x-oci/config.json" 2>&1)" \
	"[{'type': 'RLIMIT_NOFILE', 'hard': 64, 'soft': 64}]" "oci export: config.json's process.rlimits holds RLIMIT_NOFILE 64"
like "$(cat "$SCRATCH/x-bwrap/run.sh")" "ulimit" "bwrap export: run.sh sets the rlimits"

# --- 3. bwrap's run.sh applies them
if ! command -v bwrap >/dev/null; then
	skip "bwrap is not installed: run.sh not run"
elif [ "$(id -u)" != 0 ] && ! feature_present userns; then
	skip_feature userns "bwrap needs user namespaces as an unprivileged user"
else
	export_to bwrap "$SCRATCH/bw" --files 64 --cpu 5 -- /bin/sh -c 'echo "$(ulimit -n) $(ulimit -t) $(ulimit -c)"'
	is "$(cd / && bash "$SCRATCH/bw/run.sh" 2>&1)" "64 5 0" "bwrap export: run.sh gives the command ulimit -n 64, -t 5, -c 0"
	isnt=$(ulimit -n)
	ok "$([ "$isnt" != 64 ] && echo 0 || echo 1)" "  control: the shell that ran it has another (ulimit -n $isnt)"
	like "$(limits_of "$SCRATCH/bw")" "^res.limits missing .*cpu" "  its report: res.limits missing, for the tree's cpu"
fi

done_testing
