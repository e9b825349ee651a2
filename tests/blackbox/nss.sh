#!/usr/bin/env bash
# moat run by a uid with no passwd entry (a container's or a CI runner's
# arbitrary uid): moat looks such a uid up (getpwuid: firejail's refusal,
# the report's owners), and every lookup must end in an answer, not a
# crash.  With Debian's "passwd: files systemd", glibc loads the systemd
# NSS module for a uid that files does not have; a static moat (make
# STATIC=1) took a SIGSEGV there (the Makefile, STATIC), so the default
# build links the shared libc.  Needs root, to take such a uid.
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
done_testing
