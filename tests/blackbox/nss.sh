#!/usr/bin/env bash
# moat run by a uid with no passwd entry (a container's or a CI runner's
# arbitrary uid): moat looks such a uid up (its home, firejail's refusal,
# the report's owners), and every lookup must end in an answer, not a
# crash.  The moat binary is static (the Makefile, STATIC); with Debian's
# "passwd: files systemd", glibc's getpwuid would load the systemd NSS
# module into it for a uid that files does not have, and a static moat
# took a SIGSEGV there.  So moat reads /etc/passwd itself and asks the rest
# of the user database through `getent passwd UID` (util/account.h): a uid
# only systemd's module knows (nobody, once /etc/passwd lacks it, in a
# mount namespace of the test's) still has its home found.  Needs root, to
# take such a uid.
set -u
. "$(dirname "$0")/../lib/tap.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root to run as a uid that has no passwd entry"
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is not installed"
scratch
U=""
for try in 54321 54322 54323 61234 61235; do
	if ! getent passwd "$try" >/dev/null; then
		U=$try
		break
	fi
done
[ -n "$U" ] || skip_all "no free uid among the five tried"
# A copy the uid can run, and a project directory it owns.
mkdir -p "$SCRATCH/bin" "$SCRATCH/proj"
cp "$MOAT" "$SCRATCH/bin/moat"
chmod 0755 "$SCRATCH/bin" "$SCRATCH/bin/moat"
chown "$U" "$SCRATCH/proj"
as_u() {
	(cd "$SCRATCH/proj" && setpriv --reuid="$U" --regid="$U" --clear-groups \
		env -i PATH=/usr/bin:/bin HOME="$SCRATCH/home" "$SCRATCH/bin/moat" "$@" 2>&1)
}

out=$(as_u run -- /bin/echo hi)
rc=$?
is "$rc:$out" "0:hi" "uid $U (no passwd entry): moat run -- echo runs"
out=$(as_u run --backend firejail --mode prefer -- /bin/echo hi)
rc=$?
ok "$([ "$rc" -lt 128 ] && echo 0 || echo 1)" "  --backend firejail (which looks the uid up): exit $rc, not a signal"
if command -v firejail >/dev/null; then
	like "$out" "uid $U: it has no passwd entry" "  and firejail's refusal names the missing passwd entry"
else
	like "$out" "firejail" "  and the missing firejail is named"
fi
out=$(cd "$SCRATCH/proj" && setpriv --reuid="$U" --regid="$U" --clear-groups env -i PATH=/usr/bin:/bin \
	"$SCRATCH/bin/moat" run -- /bin/echo hi 2>&1)
is "$?:$out" "0:hi" "uid $U with no passwd entry and no HOME at all: moat runs (the user database asked, nothing found)"

# Which build this is: the default one is static (no program interpreter).
if readelf -lW "$MOAT" 2>/dev/null | grep -q "INTERP"; then
	diag "this moat is dynamically linked (STATIC=0 or the sanitizer build)"
else
	diag "this moat is statically linked"
fi

# A uid that only an NSS module knows: nobody, with /etc/passwd lacking it
# in a mount namespace of the test's, is synthesized by systemd's module
# (home "/").  With no HOME, moat must find that home through getent, and
# deny its credentials (/.ssh); without the lookup it would know no home.
if command -v unshare >/dev/null && grep -v '^nobody:' /etc/passwd >"$SCRATCH/passwd" && chmod 0644 "$SCRATCH/passwd" &&
	chmod 0777 "$SCRATCH/proj"; then
	in_ns() { unshare -m sh -c 'mount --bind "$1" /etc/passwd && shift && exec "$@"' _ "$SCRATCH/passwd" "$@"; }
	ent=$(in_ns getent passwd 65534)
	if [ -n "$ent" ]; then
		out=$(cd "$SCRATCH/proj" && in_ns setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin \
			"$SCRATCH/bin/moat" run --dry-run -- /bin/true 2>&1)
		home=$(printf '%s' "$ent" | cut -d: -f6)
		[ "$home" = / ] && home=""
		like "$out" "\"path\": \"$home/\\.ssh\"" \
			"uid 65534 known only to an NSS module ($(printf '%s' "$ent" | cut -d: -f1,6)), no HOME: its home's ~/.ssh is denied (getent)"
		out=$(cd "$SCRATCH/proj" && in_ns setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin \
			"$SCRATCH/bin/moat" run -- /bin/echo hi 2>&1)
		is "$?:$out" "0:hi" "  and moat runs for it, no crash"
	else
		skip "no NSS module beyond files knows uid 65534 here (getent passwd 65534 found nothing without /etc/passwd's line)"
		skip "  (the same)"
	fi
else
	skip "unshare or a copy of /etc/passwd is not available"
	skip "  (the same)"
fi
done_testing
