#!/usr/bin/env bash
# Golden tests of the bwrap and firejail compilers: `moat export` on fixed
# policies over a fixed scratch tree, in a fixed environment, and the argv
# it writes (argv.json) compared with tests/golden/{bwrap,firejail}/CASE.json
# after the host-specific parts are normalised (the scratch dir -> @ROOT@).
# Nothing is run: export needs neither tool nor privilege, so the argv is
# the same as root and as nobody.  The system paths in the goldens are a
# Debian 12 host's (which optional ones exist).
#
# Regenerate after a deliberate change, then READ the diff:
#   MOAT_GOLDEN_UPDATE=1 bash tests/blackbox/golden_bwrap_firejail.sh
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch_sticky
# The system's denied paths, as moat lists them ("  TOOL: PATH, PATH" lines,
# a directory with a trailing /), for collapse-expanded.py.
MOAT_SYSTEM_DENY=$("$MOAT" profiles | sed -n '/^denied in every profile/,/^[^ ]/s/^  [^:]*: \(\/.*\)/\1/p' |
	sed 's/, /\n/g' | sed 's#/$##')
export MOAT_SYSTEM_DENY
# The account's own home (its passwd entry, not the test's HOME): firejail
# blacklists the credentials that exist there too (docs/policy.md), which
# differ from machine to machine and are left out of the goldens.
MOAT_ACCOUNT_HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
export MOAT_ACCOUNT_HOME
GOLDEN=$ROOT/tests/golden
T=$SCRATCH/t
mkdir -p "$T/home/.ssh" "$T/home/.aws" "$T/home/.cache" "$T/proj/sub" "$T/out" "$T/data"
echo key >"$T/home/.ssh/id_ed25519"
echo token >"$T/proj/secret.txt"
echo x >"$T/proj/sub/f"

# export_case BACKEND CASE [env VAR=VALUE...] -- [moat options]
export_case() {
	local backend=$1 name=$2 out="$SCRATCH/out-$1-$2"
	shift 2
	local envs=()
	while [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	rm -rf "$out"
	(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin LANG=C.UTF-8 "${envs[@]}" \
		"$MOAT" export --backend "$backend" -o "$out" "$@" -- /bin/sh -c 'echo hi' 2>"$out.err")
	local rc=$?
	is "$rc" 0 "$backend $name: moat export exits 0"
	[ "$rc" -eq 0 ] || { sed 's/^/#   /' "$out.err"; return; }
	sed -E -e "s#$SCRATCH/t#@ROOT@#g" -e 's#/\.cache/moat/pkg/[^/"]+-[0-9a-f]{12}(/|")#/.cache/moat/pkg/@PROJECT@\1#g' "$out/argv.json" >"$out/argv.sed.json"
	if [ "$backend" = bwrap ]; then
		# /etc around its secrets, entry by entry: host-dependent.
		"$ROOT/tests/lib/collapse-expanded.py" "$out/argv.sed.json" >"$out/argv.norm.json"
		ok $? "$backend $name: no denied path among the expanded entries of /etc"
	else
		# The system's secrets that exist here, one --blacklist each.
		"$ROOT/tests/lib/collapse-expanded.py" --firejail "$out/argv.sed.json" >"$out/argv.norm.json"
		ok $? "$backend $name: every system secret that exists here is blacklisted, nothing else of /etc"
	fi
	golden_check "$out/argv.norm.json" "$GOLDEN/$backend/$name.json" "$backend $name: argv"
}

exec 3</dev/null
COMMON=(--write "$T/out" --deny "$T/proj/secret.txt" --keep-fd 3)

for b in bwrap firejail; do
	export_case $b default -- "${COMMON[@]}"
	export_case $b loopback-home -- "${COMMON[@]}" --net loopback --read "$T/home" --write "$T/data"
	export_case $b net-all -- "${COMMON[@]}" --net all
	export_case $b no-seccomp MOAT_HOST_LIMIT=seccomp=0 -- "${COMMON[@]}"
done
export_case bwrap no-userns MOAT_HOST_LIMIT=userns=0 -- "${COMMON[@]}"

# Properties the argv must show whatever the goldens say.
A=$SCRATCH/out-bwrap-default/argv.json
like "$(tr -d '\n ' <"$A")" '"--seccomp","FD"' "bwrap export: the seccomp fd is a placeholder, no fd is made"
like "$(tr -d '\n ' <"$A")" '"--remount-ro","/","--chdir"' "bwrap: the root tmpfs is made read-only after every mount"
A=$SCRATCH/out-firejail-default/argv.json
unlike "$(cat "$A")" 'no-new-privs|--private"' "firejail: no --private (HOME stays; secrets are blacklisted)"
like "$(tr -d '\n ' <"$A")" '"--keep-fd=3"' "firejail: the declared fd is kept"
# With "--" before it firejail runs the command line through the user's
# shell; --deterministic-shutdown sleeps 100 ms after every command.
like "$(tr -d '\n ' <"$A")" '"--keep-fd=FD","/proc/self/fd/FD","__init"' \
	"firejail: moat's path right after the options (no '--': no shell)"
unlike "$(cat "$A")" 'deterministic-shutdown' "firejail: no --deterministic-shutdown (__init --kill-rest ends the rest)"
like "$(tr -d '\n ' <"$A")" '"--kill-rest","PIDNS","--","/bin/sh"' "firejail: __init --kill-rest, moat's pid namespace a placeholder"
# moat's program, which __init loads, refuses what these would: firejail
# builds them in helper processes (~5 ms a run); without it they stay.
unlike "$(cat "$A")" '--protocol|--restrict-namespaces' "firejail: no --protocol, --restrict-namespaces beside moat's program"
like "$(tr -d '\n ' <"$SCRATCH/out-firejail-no-seccomp/argv.json")" '"--net=none","--caps.drop=all"' \
	"firejail without seccomp: no filter option at all (no program either)"
done_testing
