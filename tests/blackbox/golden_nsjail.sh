#!/usr/bin/env bash
# The nsjail compiler (src/backends/nsjail.c, docs/backends.md "nsjail"):
# `moat export --backend nsjail` on the four policies golden_oci.sh uses,
# over a fixed scratch tree, in a fixed environment: the configuration
# (nsjail.cfg, protobuf text) and the kafel policy (seccomp.kafel) compared
# with tests/golden/nsjail/CASE.{cfg,kafel} after the host-specific parts
# are normalised -- the scratch tree -> @ROOT@, the export dir -> @OUT@,
# moat's binary -> @MOAT@, the niceness -> @NICE@, the entries of /etc
# (mounted one by one around its secrets) -> @ENTRIES-OF /etc@, the mounts
# this host has below a grant -> @MOUNTS-BELOW@.  nsjail is not packaged
# for Debian: where it is installed it also compiles each kafel policy
# itself; elsewhere that check is a TAP skip, not a pass (the kafel syntax
# is then checked by tests/unit/test_seccomp_kafel.c's own parser only).
#
# Then the run's side, with a stand-in nsjail in PATH that keeps what it is
# given and fails as nsjail does in its set-up: the configuration of a run
# (moat's pipes passed, __init with them, the caller's niceness), nsjail's
# work directory made before the run and removed after it, refused when
# another user could write it, and a set-up failure reported as exit 125
# with the tool's words.  Without nsjail (and without the stand-in) the
# backend is unavailable with its install hint.
#
# Regenerate after a deliberate change, then READ the diff:
#   MOAT_GOLDEN_UPDATE=1 bash tests/blackbox/golden_nsjail.sh
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch_sticky
MOAT_SYSTEM_DENY=$("$MOAT" profiles | sed -n '/^denied in every profile/,/^[^ ]/s/^  [^:]*: \(\/.*\)/\1/p' |
	sed 's/, /\n/g' | sed 's#/$##')
export MOAT_SYSTEM_DENY
GOLDEN=$ROOT/tests/golden/nsjail
PY=/usr/bin/python3
T=$SCRATCH/t
mkdir -p "$T/home/.ssh" "$T/proj/sub" "$T/out" "$T/data"
echo key >"$T/home/.ssh/id_ed25519"
echo token >"$T/proj/secret.txt"
MOAT_REAL=$(readlink -f "$MOAT")

# normalise FILE OUT: the configuration with the host-specific parts
# replaced; exits 1 when a denied path is among the collapsed /etc entries.
normalise() {
	"$PY" - "$1" "$2" "$SCRATCH/t" "$MOAT_REAL" <<'PYEOF'
import os, re, sys
path, out, root, moat = sys.argv[1:5]
denied = [l for l in os.environ.get("MOAT_SYSTEM_DENY", "").split("\n") if l.startswith("/")]
lines, bad, last = [], [], None
for line in open(path):
    line = line.rstrip("\n").replace(out, "@OUT@").replace(root, "@ROOT@").replace(moat, "@MOAT@")
    line = re.sub(r"/\.cache/moat/pkg/[^/\"]+-[0-9a-f]{12}(/|\")", r"/.cache/moat/pkg/@PROJECT@\1", line)
    line = re.sub(r"^nice_level: -?\d+$", "nice_level: @NICE@", line)
    m = re.search(r' dst: "([^"]*)"', line)
    dst = m.group(1) if m else ""
    if line.startswith("mount {") and "# a mount below the grant" in line:
        marker = "@MOUNTS-BELOW@"
    elif line.startswith("mount {") and dst.startswith("/etc/"):
        if any(dst == d or dst.startswith(d + "/") for d in denied):
            bad.append(dst)
        marker = "@ENTRIES-OF /etc@"
    else:
        marker = None
    if marker:
        if last != marker:
            lines.append(marker)
        last = marker
        continue
    last = None
    lines.append(line)
print("\n".join(lines))
if bad:
    print("denied paths among the entries of /etc: " + ", ".join(bad), file=sys.stderr)
    sys.exit(1)
PYEOF
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
	(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin LANG=C.UTF-8 "${envs[@]}" \
		"$MOAT" export --backend nsjail -o "$out" "$@" -- /bin/sh -c 'echo hi' 2>"$out.err")
	local rc=$?
	is "$rc" 0 "nsjail $name: moat export exits 0"
	[ "$rc" -eq 0 ] || { sed 's/^/#   /' "$out.err"; return; }
	normalise "$out/nsjail.cfg" "$out" >"$out.cfg"
	ok $? "nsjail $name: no denied path among the entries of /etc"
	golden_check "$out.cfg" "$GOLDEN/$name.cfg" "nsjail $name: nsjail.cfg"
	if [ -e "$out/seccomp.kafel" ]; then
		golden_check "$out/seccomp.kafel" "$GOLDEN/$name.kafel" "nsjail $name: seccomp.kafel"
	fi
	is "$(tr -d '\n ' <"$out/argv.json")" "[\"nsjail\",\"--config\",\"$out/nsjail.cfg\"]" \
		"nsjail $name: the argv is nsjail --config FILE (no value of the environment in it)"
}

COMMON=(--write "$T/out" --deny "$T/proj/secret.txt")
export_case default -- "${COMMON[@]}"
export_case loopback-home -- "${COMMON[@]}" --net loopback --read "$T/home" --write "$T/data" --files 64
export_case net-all -- "${COMMON[@]}" --net all
export_case no-seccomp MOAT_HOST_LIMIT=seccomp=0 -- "${COMMON[@]}"

# --- what every configuration must show, whatever the goldens say --------------
C=$SCRATCH/out-default/nsjail.cfg
R=$SCRATCH/out-default/report.json
has() { grep -qxF -- "$2" "$1"; }
has "$C" 'time_limit: 0'
ok $? "nsjail: no wall-clock limit of nsjail's own (600 s by default): moat's --timeout owns it"
has "$C" 'disable_rl: true'
ok $? "nsjail: none of nsjail's rlimits (1 MiB files, 32 fds, 4 GiB AS, 600 s CPU): the ones moat sets pass on"
grep -q '^nice_level: ' "$C"
ok $? "nsjail: the niceness is set (nsjail's default is 19)"
unlike "$(cat "$C")" '^keep_env' "nsjail: the environment is not nsjail's own (no keep_env)"
is "$(grep -c '^envar: ' "$C")" 3 "nsjail: exactly the command's three variables, one envar each"
unlike "$(grep '^mount {' "$C")" 'dst: "/" ' "nsjail: no bind of the host's / (its submounts would keep the host's flags)"
like "$(grep 'dst: "/usr"' "$C")" 'src: "/usr" dst: "/usr" is_bind: true is_dir: true nosuid: true nodev: true' \
	"nsjail: a read grant is a read-only bind (no rw), nosuid, nodev"
like "$(grep "dst: \"$T/out\"" "$C")" 'is_bind: true rw: true' "nsjail: the write grant is a read-write bind"
like "$(grep 'dst: "/tmp"' "$C")" 'fstype: "tmpfs" options: "mode=1777,size=1073741824,nr_inodes=262144" rw: true' \
	"nsjail: /tmp is a private tmpfs with its size limit"
like "$(grep 'dst: "/dev/shm"' "$C")" 'fstype: "tmpfs" options: "mode=1777,size=[0-9]+,nr_inodes=[0-9]+"' "nsjail: so is /dev/shm"
like "$(grep 'dst: "/dev"' "$C")" 'fstype: "tmpfs"' "nsjail: /dev is a tmpfs of its own"
is "$(grep -c 'dst: "/dev/[a-z]*" is_bind: true' "$C")" 5 "nsjail: with the five granted nodes bound in"
like "$(grep 'dst: "/proc"' "$C")" 'fstype: "proc"' "nsjail: a fresh /proc"
unlike "$(grep 'dst: "/proc"' "$C")" 'rw: true' "nsjail: read-only"
unlike "$(cat "$C")" 'secret\.txt' "nsjail: the denied file is not in the view"
like "$(grep "dst: \"$T/proj/sub\"" "$C")" 'is_bind: true' "nsjail: its siblings are, one by one"
# Every mount this host has below a read grant is bound again on its own:
# the mount nearest above it in the configuration is never the grant.
sub=$("$PY" - "$C" <<'PYEOF'
import os, re, sys
dsts, grants = [], []
for l in open(sys.argv[1]):
    m = re.search(r'^mount \{(?: src: "([^"]*)")? dst: "([^"]*)"', l)
    if not m:
        continue
    dsts.append(m.group(2))
    if "is_bind: true" in l and "rw: true" not in l and m.group(1) == m.group(2) and m.group(2) != "/":
        grants.append(m.group(2))
points = sorted({l.split()[4] for l in open("/proc/self/mountinfo")})
def nearest(p):
    return max((d for d in dsts if p == d or p.startswith(d.rstrip("/") + "/")), key=len, default=None)
missing = [p for g in grants for p in points if p.startswith(g + "/") and os.path.exists(p) and nearest(p) == g]
print(" ".join(missing) or "none")
PYEOF
)
is "$sub" none "nsjail: every host mount below a read grant is bound again on its own (nsjail remounts only the top)"
like "$(grep 'dst: "/.moat/init"' "$C")" "src: \"$MOAT_REAL\" dst: \"/.moat/init\" is_bind: true is_dir: false" \
	"nsjail: moat's binary is bound read-only at /.moat/init"
is "$(sed -n '/^exec_bin {/,/^}/p' "$C" | sed -n '2,4p' | tr -d ' ' | tr '\n' ' ')" \
	'path:"/.moat/init" arg:"__init" arg:"--" ' "nsjail: moat's init is pid 1 (an export has no pipes of moat's)"
is "$(grep -c "^seccomp_policy_file: \"$SCRATCH/out-default/seccomp.kafel\"$" "$C")" 1 \
	"nsjail: the kafel policy is the file beside the configuration"
unlike "$(cat "$SCRATCH/out-no-seccomp/nsjail.cfg")" 'seccomp_policy_file' "nsjail without seccomp: no policy"
[ ! -e "$SCRATCH/out-no-seccomp/seccomp.kafel" ]
ok $? "nsjail without seccomp: and no policy file"
like "$(cat "$SCRATCH/out-net-all/nsjail.cfg")" '^clone_newnet: false$' "nsjail net all: the host's network is shared"
unlike "$(cat "$C")" 'clone_newnet' "nsjail net none: nsjail's network namespace (its default)"
like "$(cat "$SCRATCH/out-loopback-home/nsjail.cfg")" 'RLIMIT_NOFILE=64' \
	"nsjail: --files reaches the rlimits moat sets before nsjail (said in the configuration)"
K=$SCRATCH/out-default/seccomp.kafel
like "$(json_get "$R" '["properties"]["sys.filter"]["mechanism"]')" \
	"kafel policy \($(grep -c '^  ERRNO(' "$K") rules; $(grep -o 'SYSCALL\[0x4' "$K" | wc -l) x32 numbers killed" \
	"nsjail: the report counts the rules and x32 numbers the policy holds"
like "$(grep -c '^  ERRNO(' "$K")" '^[0-9]{3}$' "nsjail: the kafel policy holds moat's rules ($(grep -c '^  ERRNO(' "$K"))"
is "$(tail -1 "$K")" 'USE moat DEFAULT ALLOW' "nsjail: the policy's default is ALLOW (moat's rules are a deny list)"

# nsjail run by hand leaves its work directories behind (issue 23): the ones
# it makes here are removed after, so the run checks below find none of them.
nsjail_dirs() {
	ls -d "/run/user/$(id -u)/nsjail/"* "/run/user/nsjail.$(id -u)."* "/tmp/nsjail.$(id -u)."* \
		"/dev/shm/nsjail.$(id -u)."* 2>/dev/null
}
if command -v nsjail >/dev/null 2>&1; then
	before=$(nsjail_dirs)
	for c in default loopback-home net-all; do
		out=$(nsjail -Mo -Q --chroot / --disable_proc --seccomp_string "$(cat "$SCRATCH/out-$c/seccomp.kafel")" \
			-- /bin/true 2>&1)
		is "$?" 0 "nsjail $c: nsjail itself compiles the kafel policy and runs /bin/true under it ($out)"
	done
	for d in $(nsjail_dirs); do
		printf '%s\n' "$before" | grep -qxF "$d" || rmdir "$d"
	done
else
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N # SKIP nsjail is not installed: the kafel policies are checked by test_seccomp_kafel's parser only"
fi

# --- not installed: unavailable, with the reason and the hint -------------------------
if command -v nsjail >/dev/null 2>&1 || [ -x /usr/bin/nsjail ] || [ -x /usr/sbin/nsjail ]; then
	diag "nsjail is installed here: its absence is not checked"
else
	out=$(cd "$T/proj" && env HOME="$T/home" "$MOAT" run --backend nsjail --dry-run -- /bin/true 2>/dev/null)
	is "$?" 125 "nsjail (not installed): moat run --dry-run exits 125"
	printf '%s\n' "$out" >"$SCRATCH/absent.json"
	like "$(json_get "$SCRATCH/absent.json" '["properties"]["fs.read"]["reason"]')" "nsjail is not installed" \
		"nsjail: the reason says it is not installed"
	like "$(json_get "$SCRATCH/absent.json" '["properties"]["fs.read"]["hint"]')" \
		"not packaged for Debian.*github.com/google/nsjail" "nsjail: the hint says how to get it (not apt)"
fi

# --- a run, with a stand-in nsjail -------------------------------------------------------
# It keeps its configuration and what it sees (this uid's work directories
# only: another user's pass may run beside this one), and ends as nsjail does when
# it cannot set the jail up: moat must report that, not run anything.
# nsjail run by hand (tool_env.sh's control, an earlier killed run) leaves
# its work directories behind: an empty one that no moat holds (moat holds a
# shared flock on it for a run) is removed first, so the checks below see
# the directory moat makes.
for d in $(nsjail_dirs); do
	[ -d "$d" ] && flock -xn "$d" rmdir "$d" 2>/dev/null
done
STAND=$SCRATCH/standin
mkdir -p "$STAND"
cat >"$STAND/nsjail" <<EOF
#!/bin/sh
cp "\$2" "$SCRATCH/run.cfg"
b=\$(sed -n 's#^mount { src: "\\([^"]*\\)" dst: "/.moat/bound".*#\\1#p' "\$2")
[ -n "\$b" ] && tr '\\0' '\\n' <"\$b" >"$SCRATCH/run.bound"
ls -d /run/user/$(id -u)/nsjail/* /run/user/nsjail.$(id -u).* /tmp/nsjail.$(id -u).* /dev/shm/nsjail.$(id -u).* 2>/dev/null >"$SCRATCH/run.dirs"
echo "[E][2025-01-01T00:00:00+0000] stand-in: mount('/usr'): Operation not permitted" >&2
exit 255
EOF
chmod 0755 "$STAND/nsjail"
SR() { (cd "$T/proj" && env PATH="$STAND:/usr/bin:/bin" HOME="$T/home" "$@"); }
rm -f "$SCRATCH/run.cfg" "$SCRATCH/run.dirs"
out=$(SR nice -n 3 "$MOAT" run --backend nsjail --report-fd 3 -- /bin/sh -c "echo ran >'$T/out/ran'" 2>&1 3>"$SCRATCH/run.json")
is "$?" 125 "stand-in: a tool that ends before the command starts is exit 125"
[ ! -e "$T/out/ran" ]
ok $? "stand-in: nothing ran"
like "$out" "stand-in: mount\('/usr'\): Operation not permitted" "stand-in: its words reach stderr"
like "$(json_get "$SCRATCH/run.json" '["run"]["failure"]')" "failed to set up the sandbox.*stand-in" \
	"stand-in: and the report's run.failure"
RC=$SCRATCH/run.cfg
is "$(grep -c '^nice_level: 3$' "$RC")" 1 "stand-in: the caller's niceness (nice -n 3), not nsjail's 19"
args=$(sed -n '/^exec_bin {/,/^}/p' "$RC" | tr -d '\n')
like "$args" 'arg: "--started-fd"  arg: "([0-9]+)"  arg: "--lifeline"  arg: "([0-9]+)"  arg: "--stderr-fd"  arg: "([0-9]+)"' \
	"stand-in: __init gets moat's started pipe, lifeline and the caller's stderr"
fds=$(printf '%s' "$args" | grep -oE '"--(started-fd|lifeline|stderr-fd|landlock)"  arg: "[0-9]+' | grep -oE '[0-9]+$' |
	sort -n | xargs)
is "$(grep '^pass_fd: ' "$RC" | grep -oE '[0-9]+' | sort -n | xargs)" "$fds" \
	"stand-in: the fds __init is given, and only those, are in pass_fd (nsjail closes the others): $fds"
# nsjail binds by name: __init checks each bind against the plan's objects
# (launch/initview.h), from a file the launcher wrote before nsjail started.
like "$args" 'arg: "--bound-file"  arg: "/.moat/bound"' "stand-in: __init checks the binds (--bound-file)"
like "$(grep 'dst: "/.moat/bound"' "$RC")" "src: \"[^\"]*/bound\" dst: \"/.moat/bound\" is_bind: true" \
	"stand-in: the file is bound at /.moat/bound, read-only"
usr=$(stat -c '%d:%i' /usr)
like "$(cat "$SCRATCH/run.bound" 2>/dev/null)" "^$usr:/usr$" "stand-in: it holds /usr's device and inode ($usr)"
dir=$(head -1 "$SCRATCH/run.dirs" 2>/dev/null)
like "$dir" "nsjail\.$(id -u)\.root$|/run/user/$(id -u)/nsjail/root$" "stand-in: nsjail's work directory exists when it starts ($dir)"
if [ -n "$dir" ]; then
	[ ! -e "$dir" ] || ! flock -xn "$dir" true
	ok $? "stand-in: and is gone after the run (unless a concurrent run holds it)"
	# Another user's, or one others can write: nsjail would mount over
	# whatever is put there; moat refuses.
	parent=${dir%/*}
	made_parent=
	[ -d "$parent" ] || { mkdir "$parent" && made_parent=1; }
	if mkdir -m 0777 "$dir" 2>/dev/null && chmod 0777 "$dir"; then
		out=$(SR "$MOAT" run --backend nsjail -- /bin/true 2>&1)
		is "$?" 125 "stand-in: a work directory others can write is refused (125)"
		like "$out" "not to this user alone" "stand-in: and says why"
		[ -d "$dir" ]
		ok $? "stand-in: the directory, not moat's, is left where it was"
		rmdir "$dir"
	else
		ok 1 "stand-in: $dir could be made for the refusal check"
	fi
	[ -z "$made_parent" ] || rmdir "$parent"
fi
done_testing
