#!/usr/bin/env bash
# Golden tests of the OCI bundle writer (`moat oci export`, used by the oci
# and gvisor backends): config.json and argv.json on fixed policies over a
# fixed scratch tree, compared with tests/golden/oci/CASE.{config,argv}.json
# after the host-specific parts are normalised: the scratch dir -> @ROOT@,
# the bundle dir -> @BUNDLE@, moat's own binary -> @MOAT@, the caller's
# uid/gid -> "@UID@"/"@GID@".  Nothing is run, so the result is the same
# as root and as nobody.  The seccomp rules are those libseccomp 2.5.4
# (Debian 12) can name.
#
# Regenerate after a deliberate change, then READ the diff:
#   MOAT_GOLDEN_UPDATE=1 bash tests/blackbox/golden_oci.sh
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch_sticky
# The system's denied paths, as moat lists them ("  TOOL: PATH, PATH" lines,
# a directory with a trailing /), for collapse-expanded.py.
MOAT_SYSTEM_DENY=$("$MOAT" profiles | sed -n '/^denied in every profile/,/^[^ ]/s/^  [^:]*: \(\/.*\)/\1/p' |
	sed 's/, /\n/g' | sed 's#/$##')
export MOAT_SYSTEM_DENY
GOLDEN=$ROOT/tests/golden/oci
PY=/usr/bin/python3
T=$SCRATCH/t
mkdir -p "$T/home/.ssh" "$T/proj/sub" "$T/out" "$T/data"
echo key >"$T/home/.ssh/id_ed25519"
echo token >"$T/proj/secret.txt"
MOAT_REAL=$(readlink -f "$MOAT")

normalise() { # normalise FILE BUNDLE: stdout the normalised JSON
	"$PY" - "$1" "$2" "$SCRATCH/t" "$MOAT_REAL" "$(id -u)" "$(id -g)" <<'PYEOF'
import json, re, sys
path, bundle, root, moat, uid, gid = sys.argv[1:7]
def walk(v):
    if isinstance(v, str):
        v = v.replace(bundle, "@BUNDLE@").replace(root, "@ROOT@").replace(moat, "@MOAT@")
        # The package caches' project directory: a hash of the scratch path.
        return re.sub(r"/\.cache/moat/pkg/[^/]+-[0-9a-f]{12}(/|$)", r"/.cache/moat/pkg/@PROJECT@\1", v)
    if isinstance(v, list):
        return [walk(x) for x in v]
    if isinstance(v, dict):
        return {k: walk(x) for k, x in v.items()}
    return v
d = walk(json.load(open(path)))
if isinstance(d, dict):
    lin = d.get("linux", {})
    for key, real in (("uidMappings", uid), ("gidMappings", gid)):
        for m in lin.get(key, []):
            if str(m["hostID"]) == real:
                m["hostID"] = "@UID@" if key == "uidMappings" else "@GID@"
print(json.dumps(d, indent=2, sort_keys=False))
PYEOF
}

check() { # check CASE KIND FILE
	golden_check "$3" "$GOLDEN/$1.$2.json" "oci $1: $2"
}

# export_case CASE [env VAR=VALUE...] -- [moat options]
export_case() {
	local name=$1 out="$SCRATCH/out-$1"
	shift
	local envs=()
	while [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	rm -rf "$out"
	# crun by name: the writer's golden, whatever runtime this host runs
	# (an export names runc where crun refuses the host; backends.sh).
	(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin LANG=C.UTF-8 MOAT_OCI_RUNTIME=crun "${envs[@]}" \
		"$MOAT" oci export -o "$out" "$@" -- /bin/sh -c 'echo hi' 2>"$out.err")
	local rc=$?
	is "$rc" 0 "oci $name: moat oci export exits 0"
	[ "$rc" -eq 0 ] || { sed 's/^/#   /' "$out.err"; return; }
	normalise "$out/config.json" "$out" >"$out.config.sed.json"
	# /etc around its secrets, entry by entry: host-dependent.
	"$ROOT/tests/lib/collapse-expanded.py" "$out.config.sed.json" >"$out.config.json"
	ok $? "oci $name: no denied path among the expanded entries of /etc"
	normalise "$out/argv.json" "$out" >"$out.argv.json"
	check "$name" config "$out.config.json"
	check "$name" argv "$out.argv.json"
}

COMMON=(--write "$T/out" --deny "$T/proj/secret.txt")
export_case default -- "${COMMON[@]}"
export_case loopback-home -- "${COMMON[@]}" --net loopback --read "$T/home" --write "$T/data" --files 64
export_case net-all -- "${COMMON[@]}" --net all
export_case no-seccomp MOAT_HOST_LIMIT=seccomp=0 -- "${COMMON[@]}"

# Properties the bundle must show whatever the goldens say.
C=$SCRATCH/out-default/config.json
q() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
is "$(q "$C" 'd["root"]["readonly"], d["root"]["path"]')" "True rootfs" "oci: the root is the bundle's empty rootfs, read-only"
is "$(q "$C" 'd["process"]["noNewPrivileges"], sum(len(v) for v in d["process"]["capabilities"].values())')" "True 0" \
	"oci: no_new_privs, and no capability in any set"
is "$(q "$C" '" ".join(sorted(n["type"] for n in d["linux"]["namespaces"]))')" "cgroup ipc mount network pid user uts" \
	"oci: every namespace, the network one included"
is "$(q "$SCRATCH/out-net-all/config.json" '"network" in [n["type"] for n in d["linux"]["namespaces"]]')" "False" \
	"oci net all: the host network namespace is shared"
is "$(q "$C" 'd["process"]["args"][:3]')" "['/.moat/init', '__init', '--']" "oci: moat's init is pid 1"
is "$(q "$C" '[m["options"] for m in d["mounts"] if m["destination"] == "/.moat/init"][0]')" \
	"['bind', 'ro', 'nosuid', 'nodev']" "oci: the init is bound read-only"
# An export carries no Landlock ruleset: the directory holding the denied
# file is mounted entry by entry, and the file is not in the bundle at all.
is "$(q "$C" '[m["destination"] for m in d["mounts"] if m["destination"].endswith("/secret.txt")]')" "[]" \
	"oci: the denied file is not among the mounts"
is "$(q "$C" '[m["destination"] for m in d["mounts"] if m["destination"].endswith("/proj/sub")]')" "['$T/proj/sub']" \
	"oci: its siblings are, one by one"
is "$(q "$C" 'd["linux"]["seccomp"]["defaultAction"], d["linux"]["seccomp"]["architectures"]')" \
	"SCMP_ACT_ALLOW ['SCMP_ARCH_X86_64']" "oci: seccomp is a deny list over x86_64 only"
is "$(q "$C" '[r["errnoRet"] for r in d["linux"]["seccomp"]["syscalls"] if r["names"] == ["io_uring_setup"]]')" "[38]" \
	"oci: io_uring_setup is refused with ENOSYS"
is "$(q "$SCRATCH/out-no-seccomp/config.json" '"seccomp" in d["linux"]')" "False" "oci without seccomp: no linux.seccomp"
is "$(q "$SCRATCH/out-loopback-home/config.json" '[r for r in d["process"]["rlimits"] if r["type"] == "RLIMIT_NOFILE"][0]["hard"]')" "64" \
	"oci: --files reaches process.rlimits"
# The rules in the bundle are the ones moat loads natively: one JSON rule
# per rule, each naming a syscall libseccomp knows.
like "$(q "$SCRATCH/out-default/report.json" 'd["properties"]["sys.filter"]["mechanism"]')" \
	"OCI linux.seccomp \($(q "$C" 'len(d["linux"]["seccomp"]["syscalls"])') rules" "oci: the report counts the rules the bundle holds"
# --- an export follows no link planted in its directory ---------------------------
# -o DIR may be a directory a sandboxed run could write (the project): a link
# at DIR/rootfs had moat make the bundle's directories and links there
# (bin -> usr/bin, etc/, root/, ...) wherever it pointed, as whoever ran
# moat, and say "exported".  Now each planted link -- rootfs, state, a
# directory inside rootfs, a link of the bundle's name pointing elsewhere --
# is refused, naming it, and its target stays empty.  Control: the same
# export into a new directory makes exactly those entries (what landed in
# the target), and a second export into the same directory works.
ex() { # ex DIR: the default policy exported into DIR; stderr in DIR.err
	(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin LANG=C.UTF-8 \
		"$MOAT" oci export -o "$1" -- /bin/sh -c 'echo hi' 2>"$1.err")
}
for plant in rootfs state rootfs/etc rootfs/bin; do
	B=$SCRATCH/planted-${plant//\//-}
	V=$SCRATCH/victim-${plant//\//-}
	mkdir -p "$V"
	mkdir -p "$(dirname "$B/$plant")"
	ln -s "$V" "$B/$plant"
	ex "$B"
	rc=$?
	[ "$rc" != 0 ]
	ok $? "export into a DIR whose $plant is a link: refused (exit $rc)"
	like "$(cat "$B.err")" "$B/$plant (is a symlink or not a directory|exists and is not the link moat makes)" \
		"  naming $B/$plant"
	is "$(ls -A "$V")" "" "  and its target is untouched"
done
B=$SCRATCH/planted-file
mkdir -p "$B" && : >"$B/rootfs"
! ex "$B"
ok $? "export into a DIR whose rootfs is a file: refused"
if [ "$(id -u)" = 0 ]; then
	B=$SCRATCH/planted-owner
	mkdir -p "$B/rootfs" && chown 65534 "$B/rootfs"
	! ex "$B"
	ok $? "export into a DIR whose rootfs belongs to another user: refused"
	like "$(cat "$B.err")" "belongs to uid 65534" "  saying whose it is"
fi
B=$SCRATCH/fresh
ex "$B"
is $? 0 "control: export into a new directory works"
is "$(readlink "$B/rootfs/bin"):$([ -d "$B/rootfs/etc" ] && echo etc)" "usr/bin:etc" \
	"  and makes bin -> usr/bin and etc/ in rootfs (what landed in a planted link's target)"
ex "$B"
is $? 0 "control: a second export into the same directory works"
done_testing
