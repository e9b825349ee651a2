#!/usr/bin/env bash
# The credential paths under a home (fs.secrets) are denied under the
# account's own home -- the user database's, for the uid moat runs as --
# and not only under $HOME: with HOME unset (env -i, a service manager) or
# set elsewhere (an MCP client's "env" for a server), the real ~/.ssh was
# readable under --read of the home, and a run from the home under profile
# exec granted all of it, while the report said fs.secrets was enforced.
#
# The account is a uid of this test's with a home in its scratch
# directory, in a copy of /etc/passwd bound over the real one in a mount
# namespace of the test's: no real credential is read or written.  Needs
# root (the bind mount, the uid); tests/run-all runs it as root with the
# sanitizer build too.
set -u
. "$(dirname "$0")/../lib/tap.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root: a passwd entry bound over /etc/passwd in a mount namespace, and its uid"
command -v unshare >/dev/null && command -v setpriv >/dev/null || skip_all "unshare and setpriv (util-linux) are needed"
scratch
BASE=$(mktemp -d /var/tmp/moat-home.XXXXXX) # outside /tmp: the sandbox's /tmp is its own
trap 'rm -rf "$SCRATCH" "$REPORTS" "$BASE"' EXIT
chmod 0755 "$BASE"
U=""
for try in 54331 54332 54333 61244 61245; do
	if ! getent passwd "$try" >/dev/null && ! grep -q ":$try:" /etc/passwd; then
		U=$try
		break
	fi
done
[ -n "$U" ] || skip_all "no free uid among the five tried"
chown "$U" "$REPORTS"
AH=$BASE/acct # the account's home, as the passwd copy says
OTHER=$BASE/other
MARK="home-account-canary-$$-$RANDOM"
mkdir -p "$AH/.ssh" "$AH/.aws" "$AH/proj" "$OTHER"
echo "$MARK-ssh" >"$AH/.ssh/id_ed25519"
echo "$MARK-aws" >"$AH/.aws/credentials"
echo "plain-$MARK" >"$AH/notes.txt"
chown -R "$U:$U" "$AH" "$OTHER"
cp /etc/passwd "$SCRATCH/passwd"
echo "moattest$U:x:$U:$U::$AH:/bin/sh" >>"$SCRATCH/passwd"
chmod 0644 "$SCRATCH/passwd"
cp "$MOAT" "$SCRATCH/moat" && chmod 0755 "$SCRATCH/moat"
# as_acct DIR ENV... -- PROGRAM ARGS: run as the account, from DIR, with
# only the environment given (no HOME unless given), /etc/passwd its copy.
as_acct() {
	local dir=$1
	shift
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	unshare -m sh -c 'mount --bind "$0" /etc/passwd && exec "$@"' "$SCRATCH/passwd" \
		setpriv --reuid="$U" --regid="$U" --clear-groups \
		env -i -C "$dir" PATH=/usr/bin:/bin "${envs[@]}" "$@"
}
READ_ALL="cat $AH/notes.txt $AH/.ssh/id_ed25519 $AH/.aws/credentials 2>/dev/null; true"

# Control: the bound passwd names the account's home, and the attack is real
# outside moat (the account reads its own canaries).
out=$(unshare -m sh -c 'mount --bind "$0" /etc/passwd && getent passwd "$1" | cut -d: -f6' "$SCRATCH/passwd" "$U")
is "$out" "$AH" "control: in the test's mount namespace the account's home is $AH"
out=$(as_acct "$AH/proj" -- /bin/sh -c "$READ_ALL" 2>/dev/null)
ok $([ "$(printf '%s\n' "$out" | grep -c "$MARK")" = 3 ] && echo 0 || echo 1) \
	"control: without moat the account reads both canaries and the plain file"

for case in "HOME unset" "HOME=$OTHER" "HOME=$AH"; do
	envs=()
	[ "$case" = "HOME unset" ] || envs=("$case")
	out=$(as_acct "$AH/proj" "${envs[@]}" -- "$SCRATCH/moat" run --profile strict --read "$AH" --report "$REPORTS/r.json" \
		-- /bin/sh -c "$READ_ALL" 2>"$SCRATCH/err")
	rc=$?
	is "$rc" 0 "$case: moat run --read (the account's home) runs"
	like "$out" "^plain-$MARK\$" "$case:   the grant is real: the plain file is read"
	unlike "$out" "$MARK-ssh|$MARK-aws" "$case:   neither canary under the account's home is read"
	is "$(json_get "$REPORTS/r.json" '["properties"]["fs.secrets"]["status"]' 2>/dev/null)" enforced \
		"$case:   and fs.secrets is enforced, which now holds"
done

# profile exec from the account's home: refused, as from $HOME.
for case in "HOME unset" "HOME=$OTHER"; do
	envs=()
	[ "$case" = "HOME unset" ] || envs=("$case")
	out=$(as_acct "$AH" "${envs[@]}" -- "$SCRATCH/moat" run -- /bin/sh -c "$READ_ALL" 2>"$SCRATCH/err")
	rc=$?
	is "$rc" 125 "$case: profile exec run from the account's home is refused"
	unlike "$out" "$MARK" "$case:   nothing was read"
	like "$(cat "$SCRATCH/err")" "is your home or above it" "$case:   saying why"
done
out=$(as_acct "$AH/proj" "HOME=$OTHER" -- "$SCRATCH/moat" run -- /bin/sh -c 'echo ran' 2>"$SCRATCH/err")
is "$?/$out" "0/ran" "control: profile exec from a project inside that home runs"
done_testing
