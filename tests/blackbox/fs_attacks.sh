#!/usr/bin/env bash
# The file-system attacks of issue 14, against native and every external
# backend that runs here for this user (docs/filesystem.md).
#
# Each attack is tried twice: under moat, where it must fail -- or moat must
# refuse to start (exit 125, naming the path), or the report must say the
# property it breaks is missing -- and as a control, without the protection
# (--mode off, or the protection lifted), where it must succeed on a
# throwaway target this test made.  The host side is checked from outside.
#
#   1. a grant that is (or becomes) a symlink: refused, never followed;
#      --mkdir through a planted link makes nothing; a concurrent swap
#      while moat starts (bounded in count and time)
#   2. a deny whose parent is renamed, removed, replaced
#   3. a deny on a path that does not exist yet; through a symlink; a cycle;
#      a dangling link
#   4. the host's own atomic rewrite of a secret during the run; a secret
#      created after start
#   5. host sockets under /var/tmp, /srv and /run; /proc/net
#   6. protected entries of a write grant; --unprotect
#   7. the strict profile's script dir: interpreters only
#   8. --write /dev/shm, a write inside a deny, a glob, --write FILE inside a
#      read grant
#   9. a directory the caller cannot list, inside a grant expanded around a
#      deny below it, opened up by the host during the run
#   and the view: `ls /` lists only what is granted.
#
# Runs as root, as uid 65534 and with the sanitizer moat (tests/run-all).
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
unset MOAT_HOST_LIMIT MOAT_OCI_RUNTIME
PY=/usr/bin/python3
UID_NOW=$(id -u)
UNIQ="$$-$RANDOM$RANDOM"
BG_PIDS=""
EXTRA_DIRS=""
cleanup() {
	local p
	for p in $BG_PIDS; do kill -9 "$p" 2>/dev/null; done
	# shellcheck disable=SC2086
	[ -n "$EXTRA_DIRS" ] && rm -rf $EXTRA_DIRS
	rm -rf "$SCRATCH" "$REPORTS"
}
trap cleanup EXIT
prop_status() { json_get "$1" "[\"properties\"][\"$2\"][\"status\"]" 2>/dev/null; }
jpy() { # jpy FILE EXPR: a python expression over the report `d`
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null
}
# firejail claims neither fs.read nor fs.write (docs/backends.md): its
# attacks are met by its report; what a grant allows is not checked there.
grants_work() { [ "$1" != firejail ]; }

# A tree outside the private /tmp (as a user's project or home is), so that
# the view binds it the way it binds /home/USER; the scratch dir is only for
# the test's own files.
BASE=$(mktemp -d /var/tmp/moat-fs.XXXXXX)
chmod 0777 "$BASE"
EXTRA_DIRS="$BASE"
HOMED=$BASE/home
mkdir -p "$HOMED/.ssh" "$HOMED/.config/gh" "$HOMED/.config/app"
MARK="moat-fs-secret-$UNIQ"
echo "$MARK-ssh" >"$HOMED/.ssh/id_ed25519"
echo "$MARK-gh" >"$HOMED/.config/gh/hosts.yml"
echo "machine x password $MARK-netrc-old" >"$HOMED/.netrc"
echo "app settings" >"$HOMED/.config/app/settings"
echo "notes" >"$HOMED/notes.txt"
echo 'export FOO=1' >"$HOMED/.bashrc"
chmod -R a+rwX "$BASE"
cd /

# moat run, with the fake HOME.  In prefer mode: a backend that lacks a
# property still runs, and the attack then has to be met by its report.
M() { # M BACKEND ARGS...
	local b=$1 rc args=() rep=/dev/null
	shift
	# A report goes through a descriptor: moat refuses a report file where
	# fs.write is not enforced (firejail with a write grant), and every
	# attack must run under every backend.
	while [ $# -gt 0 ]; do
		if [ "$1" = --report ]; then
			rep=$2
			args+=(--report-fd 3)
			shift 2
		else
			args+=("$1")
			shift
		fi
	done
	env HOME="$HOMED" "$MOAT" run --backend "$b" --mode prefer "${args[@]}" 2>"$SCRATCH/last.err" 3>"$rep"
	rc=$?
	cat "$SCRATCH/last.err" >>"$SCRATCH/all.err"
	return $rc
}
OFF() { env HOME="$HOMED" "$MOAT" run --mode off --profile strict "$@" 2>/dev/null; }
# moot BACKEND PROP LABEL N: BACKEND reports PROP missing whatever the
# grants (its dry runs without a grant, with HOME read, with a project
# written all say so: here gVisor's fs.* -- runsc binds by name -- and
# firejail's), so an attack on PROP there is met by its report whatever it
# does and could not fail: N skips saying so, and true; false when the
# backend claims PROP in any of them, and the attacks run.  Never for
# native, whose attacks run whatever its report says.  (Each gVisor run
# costs 1.5 s of CPU.)
declare -A MOOT
moot() {
	local b=$1 prop=$2 label=$3 n=$4 key="$1 $2" i r
	[ "$b" = native ] && return 1
	if [ -z "${MOOT[$key]:-}" ]; then
		MOOT[$key]=missing
		mkdir -p "$BASE/moot"
		for r in "" "--read $HOMED" "--write $BASE/moot"; do
			# shellcheck disable=SC2086
			M "$b" --profile strict --dry-run $r -- /bin/true >"$SCRATCH/moot.json" 2>/dev/null
			[ "$(prop_status "$SCRATCH/moot.json" "$prop")" = missing ] || MOOT[$key]=claimed
		done
	fi
	[ "${MOOT[$key]}" = missing ] || return 1
	for i in $(seq "$n"); do
		skip "$label: $b reports $prop missing whatever the grants (its dry runs): an attack on it would be met by the report"
	done
}
# started FILE: wait (up to 15 s) for the command's "started" on its stdout,
# FILE.  The host's own change is meant for the run, not its set-up: made
# during the set-up, a planned object's swap fails the start (exit 125), as
# it must, and a fixed sleep was too short for a loaded machine.
started() {
	local _
	for _ in $(seq 150); do
		grep -q '^started$' "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# held NAME PROP REPORT DESCRIPTION: the attack's outcome, checked outside:
# NAME is "blocked" (the attack failed) or "done" (it worked).  Blocked
# needs the report to say the command ran; done is acceptable only when the
# report says PROP is missing.
held() {
	local outcome=$1 prop=$2 report=$3 ran
	shift 3
	# Blocked counts only when the command ran: a run moat refused tried
	# nothing, and would pass every attack.
	ran=$(json_get "$report" '["run"]["executed"]' 2>/dev/null)
	if [ "$outcome" = blocked ] && [ "$ran" = True ]; then
		ok 0 "$*"
	elif [ "$outcome" = blocked ]; then
		ok 1 "$* (the command did not run -- executed: ${ran:-no report} -- so nothing was attacked)"
	elif [ -f "$report" ] && [ "$(prop_status "$report" "$prop")" = missing ]; then
		ok 0 "$* (the attack worked; the report says $prop is missing)"
	else
		ok 1 "$* (the attack worked and $prop is reported $(prop_status "$report" "$prop"))"
	fi
}

# The backends that run a plain command here, for this user.
BACKENDS="native"
for b in bwrap oci gvisor firejail; do
	if env HOME="$HOMED" "$MOAT" run --backend "$b" --mode prefer --profile strict -- /bin/true 2>/dev/null; then
		BACKENDS="$BACKENDS $b"
	else
		diag "backend $b does not run here as uid $UID_NOW: $(env HOME="$HOMED" "$MOAT" run --backend "$b" --mode prefer --profile strict -- /bin/true 2>&1 | tail -1)"
	fi
done
diag "backends under attack: $BACKENDS"

# ============================================= 1. a grant that is a symlink
VICTIM=$BASE/victim
mkdir -p "$VICTIM"
echo original >"$VICTIM/file"
chmod -R a+rwX "$VICTIM"
for b in $BACKENDS; do
	P=$BASE/p1-$b
	mkdir -p "$P"
	chmod 0777 "$P"
	# Run 1 replaces a directory the next run grants with a link.
	M native --profile strict --write "$P" -- /bin/sh -c "ln -s '$VICTIM' '$P/out'" >/dev/null
	[ -L "$P/out" ]
	ok $? "1 [$b]: run 1 planted $P/out -> the victim (a write grant lets it)"
	out=$(M "$b" --profile strict --read "$P" --write "$P/out" --report "$REPORTS/r1.json" -- \
		/bin/sh -c "echo pwned > '$P/out/planted'; echo x > '$P/out/file'")
	rc=$?
	is "$rc" 125 "1 [$b]: --write through the planted link is refused (exit 125)"
	like "$(cat "$SCRATCH/last.err")" "passes through a symlink: it is $VICTIM" "1 [$b]:   the message names the target"
	like "$(cat "$SCRATCH/last.err")" "--write $VICTIM" "1 [$b]:   and the flag to use instead"
	is "$(cat "$VICTIM/file")/$([ -e "$VICTIM/planted" ] && echo planted)" "original/" "1 [$b]:   the victim is unchanged"
	# A read grant through a link: the target is what it grants, the
	# report shows both names.
	M "$b" --profile strict --read "$P/out" --report "$REPORTS/r1r.json" -- /bin/cat "$P/out/file" >"$SCRATCH/o1"
	grants_work "$b" && is "$(cat "$SCRATCH/o1")" original "1 [$b]: a read grant through a link reads the target"
	is "$(jpy "$REPORTS/r1r.json" "[p['resolved'] for p in d['filesystem']['paths'] if p['path']=='$P/out']")" \
		"['$VICTIM']" "1 [$b]:   and the report shows the target beside the name"
	out=$(M "$b" --profile strict --read "$P/out" -- /bin/sh -c "echo x > '$P/out/file'" 2>&1)
	is "$(cat "$VICTIM/file")" original "1 [$b]:   which stays read-only"
	rm -f "$P/out"
done
# Control: without the sandbox the planted link leads into the victim.
ln -s "$VICTIM" "$BASE/ctl-link"
OFF -- /bin/sh -c "echo pwned > '$BASE/ctl-link/planted'"
[ -e "$VICTIM/planted" ]
ok $? "1 control: without moat the write through the link lands in the victim"
rm -f "$VICTIM/planted" "$BASE/ctl-link"

# --mkdir through a link an earlier run planted: moat makes the directories
# of a --write grant before the plan refuses the grant for passing through a
# symlink, so it must make them without following one -- or the command of
# run 1 chooses where moat (as root: anywhere) makes directories.
P=$BASE/p1m
MKV=$BASE/victim-mkdir
mkdir -p "$P" "$MKV"
chmod 0777 "$P" "$MKV"
M native --profile strict --write "$P" -- /bin/sh -c "ln -s '$MKV' '$P/build'" >/dev/null
[ -L "$P/build" ]
ok $? "1m: run 1 planted $P/build -> a victim directory (a write grant lets it)"
M native --profile strict --mkdir --write "$P/build/out/deeper" -- /bin/true
is "$?/$(ls -A "$MKV" | tr '\n' ' ')" "125/" "1m: --mkdir --write $P/build/out/deeper through it: refused (125), nothing made in the victim"
like "$(cat "$SCRATCH/last.err")" "^moat: --mkdir: $P/build/out/deeper: $P/build is a symbolic link \(to $MKV\): nothing was made" \
	"1m:   the error names the link and where it leads"
like "$(cat "$SCRATCH/last.err")" "hint: a write grant must name the real directory \(--mkdir --write $MKV/out/deeper\)" \
	"1m:   and the grant to give instead"
# Control: following the link, as mkdir -p does (and moat did), lands in the victim.
OFF -- /bin/mkdir -p "$P/build/out/deeper"
[ -d "$MKV/out/deeper" ]
ok $? "1m control: mkdir -p through the planted link makes the directory in the victim"
rm -rf "${MKV:?}/out" "$P/build"
# Control: the same walk without the link makes every missing directory.
mkdir "$P/build"
M native --profile strict --mkdir --write "$P/build/out/deeper" -- /bin/sh -c "echo hi > '$P/build/out/deeper/f'"
is "$?/$(cat "$P/build/out/deeper/f" 2>/dev/null)/$(cat "$SCRATCH/last.err")" "0/hi/moat: --mkdir: made $P/build/out/deeper" \
	"1m control: with a real directory there, --mkdir makes out/deeper, granted and written"
# A run refused after --mkdir made its directories (require, and a host
# without Landlock nor namespaces: fs.* missing) takes them back: nothing
# ran in them.  What existed before (build) stays.
rm -rf "$P/build/out"
out=$(MOAT_HOST_LIMIT=landlock=0,userns=0,root=0 "$MOAT" run --backend native --profile strict --mkdir \
	--write "$P/build/out/deeper" -- /bin/true 2>&1)
is "$?/$([ -e "$P/build/out" ] && echo left)/$([ -d "$P/build" ] && echo build)" "125//build" \
	"1m: refused under require after --mkdir made out/deeper: both taken back, build (there before) kept"
like "$out" "moat: --mkdir: removed $P/build/out/deeper \(the command did not run\)" "  and said"
mkdir -p "$P/build/out/deeper" && touch "$P/build/out/keep"
MOAT_HOST_LIMIT=landlock=0,userns=0,root=0 "$MOAT" run --backend native --profile strict --mkdir \
	--write "$P/build/out/deeper/more" -- /bin/true >/dev/null 2>&1
is "$?/$([ -e "$P/build/out/deeper/more" ] && echo left)/$(ls "$P/build/out" | xargs)" "125//deeper keep" \
	"  only what it made: out/deeper/more removed, out/deeper and out/keep (there before) kept"
rm -rf "$P/build/out"

# A read grant that resolves into a denied path is refused.
ln -s "$HOMED/.ssh" "$BASE/ssh-link"
M native --profile strict --read "$BASE/ssh-link" -- /bin/true
is "$?" 125 "1: a read grant whose link leads into a built-in secret is refused"
like "$(cat "$SCRATCH/last.err")" "resolves to $HOMED/.ssh, inside the denied" "1:   and says where it leads"

# A read grant through a link another user made in a sticky directory
# anyone can write (a shared /tmp): its owner may replace it at any time,
# and chose where it leads -- the caller's private files.  The kernel's
# fs.protected_symlinks refuses to follow such a link for the caller; moat
# reads links itself, and granted the target.  Refused now, whatever the
# sysctl (it is 0 in many containers).  Needs root to make another user's
# link.
if [ "$(id -u)" = 0 ]; then
	SHARED=$BASE/shared
	mkdir -p "$SHARED" "$BASE/private"
	chmod 1777 "$SHARED"
	echo "$MARK-private" >"$BASE/private/doc"
	chmod 0700 "$BASE/private"
	setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$BASE/private" "$SHARED/input"
	out=$(M native --profile strict --read "$SHARED/input" -- /bin/cat "$SHARED/input/doc")
	is "$?/$out" "125/" "1s: a read grant through another user's link in a sticky directory is refused"
	like "$(cat "$SCRATCH/last.err")" "passes through the link $SHARED/input \(owned by uid 65534\) in a sticky directory" \
		"1s:   and says whose link it is"
	ln -s "$BASE/private" "$SHARED/mine"
	out=$(M native --profile strict --read "$SHARED/mine" -- /bin/cat "$SHARED/mine/doc")
	is "$?/$out" "0/$MARK-private" "1s control: the caller's own link there is followed and granted"
else
	skip "1s: making another user's link needs root"
	skip "1s: making another user's link needs root"
	skip "1s: making another user's link needs root"
fi

# The concurrent swap: a loop flips P/out between a directory and a link to
# the victim while moat starts with --write P/out.  Each run must either be
# refused or write into the directory; the victim must never be written.
# Bounded: 30 runs or 15 s, the swapper dies with the test.
for b in $BACKENDS; do
	[ "$b" = gvisor ] || [ "$b" = firejail ] && continue # slow, or no claim
	P=$BASE/p1s-$b
	mkdir -p "$P/out"
	chmod -R 0777 "$P"
	"$PY" - "$P" "$VICTIM" <<'EOF' &
import os, sys, time
p, victim = sys.argv[1:3]
end = time.time() + 20
while time.time() < end:
    try:
        os.rename(p + "/out", p + "/out.dir")
        os.symlink(victim, p + "/out")
        time.sleep(0.0005)
        os.unlink(p + "/out")
        os.rename(p + "/out.dir", p + "/out")
    except OSError:
        pass
    time.sleep(0.0005)
EOF
	swapper=$!
	BG_PIDS="$BG_PIDS $swapper"
	refused=0 wrote=0 other=0 t0=$(date +%s)
	for i in $(seq 30); do
		[ $(($(date +%s) - t0)) -ge 15 ] && break
		M "$b" --profile strict --write "$P/out" -- /bin/sh -c "echo run$i > '$P/out/w$i'" >/dev/null 2>&1
		case $? in
		125) refused=$((refused + 1)) ;;
		0) wrote=$((wrote + 1)) ;;
		*) other=$((other + 1)) ;;
		esac
	done
	kill "$swapper" 2>/dev/null
	wait "$swapper" 2>/dev/null
	is "$(cat "$VICTIM/file")/$(ls "$VICTIM" | tr '\n' ' ')" "original/file " \
		"1 [$b]: concurrent swap ($refused refused, $wrote written to the directory, $other other): the victim was never written"
done

# ============================== 2. a deny does not survive a rename of its parent
for b in $BACKENDS; do
	moot "$b" fs.secrets "2 [$b]" 2 && continue
	R=$BASE/repo-$b
	mkdir -p "$R/.git"
	printf '[core]\n\trepositoryformatversion = 0\n' >"$R/.git/config"
	chmod -R a+rwX "$R"
	before=$(sha256sum "$R/.git/config")
	M "$b" --profile strict --write "$R" --deny "$R/.git/config" --report "$REPORTS/r2.json" -- /bin/sh -c \
		"cd '$R' && mv .git .git-orig; mkdir -p .git; echo '[core] fsmonitor = \"id > $BASE/x\"' > .git/config" \
		>/dev/null 2>&1
	if [ "$(sha256sum "$R/.git/config")" = "$before" ] && [ ! -e "$R/.git-orig" ]; then o=blocked; else o=done; fi
	held "$o" fs.secrets "$REPORTS/r2.json" "2 [$b]: mv .git away and plant .git/config under --deny .git/config"
	rm -rf "$R/.git-orig"
	# The built-in list: under a granted HOME, rename ~/.config and plant gh's hosts.yml.
	before=$(sha256sum "$HOMED/.config/gh/hosts.yml")
	M "$b" --profile strict --write "$HOMED" --report "$REPORTS/r2h.json" -- /bin/sh -c \
		"cd && mv .config .config-x; mkdir -p .config/gh && echo 'oauth_token: planted' > .config/gh/hosts.yml" \
		>/dev/null 2>&1
	if [ -d "$HOMED/.config/app" ] && [ "$(sha256sum "$HOMED/.config/gh/hosts.yml")" = "$before" ] &&
		[ ! -e "$HOMED/.config-x" ]; then o=blocked; else o=done; fi
	held "$o" fs.secrets "$REPORTS/r2h.json" "2 [$b]: rename ~/.config and plant ~/.config/gh/hosts.yml under a granted HOME"
	if [ -e "$HOMED/.config-x" ]; then rm -rf "$HOMED/.config" && mv "$HOMED/.config-x" "$HOMED/.config"; fi
done
# Control: without moat both renames and plants work.
R=$BASE/repo-ctl
mkdir -p "$R/.git" && echo '[core]' >"$R/.git/config"
OFF -- /bin/sh -c "cd '$R' && mv .git .git-orig && mkdir .git && echo planted > .git/config"
is "$(cat "$R/.git/config")" planted "2 control: without moat .git is renamed and .git/config planted"
rm -rf "$R"

# ============================== 3. a deny on a path that does not exist yet
for b in $BACKENDS; do
	moot "$b" fs.secrets "3 [$b]" 3 && continue
	P=$BASE/p3-$b
	mkdir -p "$P/real"
	echo "$MARK-real" >"$P/real/secret"
	ln -s real/secret "$P/lnk"
	ln -s notyet "$P/dangle"
	chmod -R a+rwX "$P"
	M "$b" --profile strict --write "$P" --deny "$P/conf/settings.json" --report "$REPORTS/r3.json" -- \
		/bin/sh -c "mkdir -p '$P/conf'; echo planted > '$P/conf/settings.json'" >/dev/null 2>&1
	if [ ! -e "$P/conf/settings.json" ]; then o=blocked; else o=done; fi
	held "$o" fs.secrets "$REPORTS/r3.json" "3 [$b]: a denied path absent at start (parents too) cannot be created"
	M "$b" --profile strict --write "$P" --deny "$P/lnk" --report "$REPORTS/r3l.json" -- /bin/sh -c \
		"cat '$P/lnk'; cat '$P/real/secret'; rm -f '$P/lnk'; ln -s elsewhere '$P/lnk'" >"$SCRATCH/o3" 2>&1
	if ! grep -q "$MARK-real" "$SCRATCH/o3" && [ "$(readlink "$P/lnk")" = real/secret ]; then o=blocked; else o=done; fi
	held "$o" fs.secrets "$REPORTS/r3l.json" "3 [$b]: a deny through a link: the target unreadable, the link cannot be replaced"
	M "$b" --profile strict --write "$P" --deny "$P/dangle" --report "$REPORTS/r3d.json" -- /bin/sh -c \
		"echo planted > '$P/notyet'" >/dev/null 2>&1
	if [ ! -e "$P/notyet" ]; then o=blocked; else o=done; fi
	held "$o" fs.secrets "$REPORTS/r3d.json" "3 [$b]: a dangling denied link: its target cannot be created"
	rm -rf "$P/notyet" "$P/conf"
done
P=$BASE/p3-native
ln -s b "$P/a"
ln -s a "$P/b"
M native --profile strict --read "$P" --deny "$P/a" -- /bin/true
is "$?" 125 "3: a deny through a symlink cycle refuses to start (not dropped)"
like "$(cat "$SCRATCH/last.err")" "symlink cycle" "3:   and says why"
M native --profile strict --write "$P" --deny "$P/**/*.key" -- /bin/true
is "$?" 125 "8: a deny with a glob refuses to start"
like "$(cat "$SCRATCH/last.err")" "globs are not supported" "8:   and says globs are not supported"
# Controls: without moat the same creations work.
OFF -- /bin/sh -c "mkdir -p '$P/conf' && echo planted > '$P/conf/settings.json' && echo planted > '$P/notyet'"
is "$(cat "$P/conf/settings.json" 2>/dev/null)/$(cat "$P/notyet" 2>/dev/null)" "planted/planted" \
	"3 control: without moat the absent paths are created"

# ====================== 4. the host's own atomic rewrites; secrets created later
for b in $BACKENDS; do
	moot "$b" fs.secrets "4 [$b]" 1 && continue
	echo "machine x password $MARK-netrc-old" >"$HOMED/.netrc"
	rm -f "$HOMED/.pgpass" "$SCRATCH/o4"
	M "$b" --profile strict --read "$HOMED" --report "$REPORTS/r4.json" -- /bin/sh -c \
		'echo started; sleep 1.5; cat "$HOME/.netrc" "$HOME/.pgpass" 2>&1' >"$SCRATCH/o4" &
	pid=$!
	started "$SCRATCH/o4"
	echo "machine x password $MARK-netrc-new" >"$HOMED/.netrc.tmp"
	mv "$HOMED/.netrc.tmp" "$HOMED/.netrc"
	echo "db:5432:*:u:$MARK-pgpass" >"$HOMED/.pgpass"
	wait $pid
	if ! grep -q "$MARK" "$SCRATCH/o4"; then o=blocked; else o=done; fi
	held "$o" fs.secrets "$REPORTS/r4.json" "4 [$b]: a secret rewritten by the host (mv tmp ~/.netrc) or created during the run stays unreadable"
done
OFF -- /bin/sh -c 'cat "$HOME/.netrc" "$HOME/.pgpass"' >"$SCRATCH/o4c"
like "$(cat "$SCRATCH/o4c")" "$MARK-netrc-new" "4 control: without moat the rewritten .netrc is readable"
like "$(cat "$SCRATCH/o4c")" "$MARK-pgpass" "4 control: and so is the new .pgpass"

# ================================================== 5. host sockets; /proc/net
cat >"$SCRATCH/listen.py" <<'EOF'
import os, select, socket, sys, time
log, paths = sys.argv[1], sys.argv[2:]
socks = []
for p in paths:
    s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(8); os.chmod(p, 0o777); socks.append(s)
open(log + ".ready", "w").close()
end = time.time() + 300
with open(log, "a", buffering=1) as out:
    while time.time() < end:
        r, _, _ = select.select(socks, [], [], 0.5)
        for s in r:
            # A sentinel (settled below) says S; a probe says nothing.
            c, _ = s.accept(); c.settimeout(0.3)
            try:
                d = c.recv(1)
            except OSError:
                d = b""
            out.write("%s %s\n" % ("sentinel" if d == b"S" else "conn", s.getsockname())); c.close()
EOF
SOCK_PATHS=()
for d in /var/tmp /srv /run; do
	sd="$d/moat-fs-sock.$UNIQ"
	if mkdir -m 0777 "$sd" 2>/dev/null; then
		EXTRA_DIRS="$EXTRA_DIRS $sd"
		SOCK_PATHS+=("$sd/s.sock")
	else
		skip "5: cannot make a socket dir under $d as uid $UID_NOW (not writable here)"
	fi
done
"$PY" "$SCRATCH/listen.py" "$SCRATCH/sock.log" "${SOCK_PATHS[@]}" </dev/null >/dev/null 2>"$SCRATCH/listen.err" &
BG_PIDS="$BG_PIDS $!"
need_ready 30 "the unix socket listener (sock.log.ready)" test -e "$SCRATCH/sock.log.ready"
: >>"$SCRATCH/sock.log"
# settled SOCK: the probes' connections to SOCK so far, once the listener has
# taken every one made before: a sentinel connection to the same socket
# comes after them in its accept queue, so when its line is written theirs
# are (a loaded machine once counted before the listener wrote the line).
settled() {
	local before
	before=$(grep -c '^sentinel' "$SCRATCH/sock.log")
	"$PY" -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"S"); s.close()' "$1"
	for _ in $(seq 200); do
		[ "$(grep -c '^sentinel' "$SCRATCH/sock.log")" -gt "$before" ] && break
		sleep 0.05
	done
	grep -c '^conn' "$SCRATCH/sock.log"
}
PROJ5=$BASE/p5
mkdir -p "$PROJ5"
for b in $BACKENDS; do
	# firejail's view replaces /var/tmp, where PROJ5 lies, and moat then
	# refuses to start the command elsewhere: from /usr, which it shows.
	cwd5=$PROJ5
	[ "$b" = firejail ] && cwd5=/usr
	for prof in strict mcp exec; do
		for s in "${SOCK_PATHS[@]}"; do
			n=$(settled "$s")
			out=$(cd "$cwd5" && M "$b" --profile "$prof" --report "$REPORTS/r5.json" -- "$HELPER" unix "$s")
			if [ "$(settled "$s")" = "$n" ]; then o=blocked; else o=done; fi
			held "$o" ipc.unix "$REPORTS/r5.json" "5 [$b/$prof]: the host socket $s is unreachable ($out)"
		done
	done
	# Its directory granted: still unreachable (no unix socket of its own).
	s=${SOCK_PATHS[0]}
	n=$(settled "$s")
	out=$(cd "$cwd5" && M "$b" --profile strict --read "$(dirname "$s")" --report "$REPORTS/r5g.json" -- "$HELPER" unix "$s")
	if [ "$(settled "$s")" = "$n" ]; then o=blocked; else o=done; fi
	held "$o" ipc.unix "$REPORTS/r5g.json" "5 [$b]: a host socket inside a granted directory is unreachable too ($out)"
	# /proc/net lists no host socket path.
	(cd "$cwd5" && M "$b" --profile strict -- /bin/cat /proc/net/unix) >"$SCRATCH/o5" 2>/dev/null
	if ! grep -q "moat-fs-sock.$UNIQ" "$SCRATCH/o5"; then o=blocked; else o=done; fi
	held "$o" ipc.unix "$REPORTS/r5.json" "5 [$b]: /proc/net/unix inside lists none of the host's socket paths"
done
n=$(settled "${SOCK_PATHS[0]}")
out=$(OFF -- "$HELPER" unix "${SOCK_PATHS[0]}")
is "$out/$(settled "${SOCK_PATHS[0]}")" "OK/$((n + 1))" "5 control: without moat the socket is reachable"
grep -q "moat-fs-sock.$UNIQ" /proc/net/unix
ok $? "5 control: the host's /proc/net/unix lists it"
out=$(M native --profile strict --read "$(dirname "${SOCK_PATHS[0]}")" --unix-sockets -- "$HELPER" unix "${SOCK_PATHS[0]}")
is "$out" OK "5 control: with --unix-sockets the granted socket is reachable"

# ============================================ 6. protected entries of a write grant
PROT_DIRS=".git/hooks .vscode .idea .claude .codex .cursor .husky"
PROT_FILES=".git/config .gitmodules .mcp.json .envrc"
for b in $BACKENDS; do
	R=$BASE/p6-$b
	mkdir -p "$R/.git/hooks" "$R/.vscode" "$R/src"
	echo '[core]' >"$R/.git/config"
	echo '{}' >"$R/.vscode/settings.json"
	chmod -R a+rwX "$R"
	(cd "$R" && find . | sort) >"$SCRATCH/before6"
	# Existing and absent, files and directories: none may be written or
	# created; the rest of the grant stays writable.
	script="cd '$R'; echo x > src/ok.txt"
	for f in $PROT_FILES; do script="$script; echo planted >> $f"; done
	for d in $PROT_DIRS; do script="$script; mkdir -p $d; echo planted > $d/planted"; done
	script="$script; mv .git .git-x; rm -rf .vscode"
	M "$b" --profile strict --write "$R" --report "$REPORTS/r6.json" -- /bin/sh -c "$script" >/dev/null 2>&1
	bad=$(cd "$R" && grep -rl planted . 2>/dev/null | tr '\n' ' ')
	[ -z "$bad" ] && [ -d "$R/.git" ] && [ -d "$R/.vscode" ] && [ ! -e "$R/.git-x" ] && o=blocked || o=done
	held "$o" fs.write "$REPORTS/r6.json" "6 [$b]: protected entries are not written, created, renamed or removed (${bad:-none planted})"
	grants_work "$b" && is "$(cat "$R/src/ok.txt" 2>/dev/null)" x "6 [$b]:   the rest of the write grant is writable"
	rm -f "$R/src/ok.txt"
	(cd "$R" && find . | sort) >"$SCRATCH/after6"
	diff -q "$SCRATCH/before6" "$SCRATCH/after6" >/dev/null
	ok $? "6 [$b]:   no placeholder is left behind ($(diff "$SCRATCH/before6" "$SCRATCH/after6" | head -3 | tr '\n' ' '))"
	# --unprotect lifts one, and the report says so.
	M "$b" --profile strict --write "$R" --unprotect "$R/.git/hooks" --report "$REPORTS/r6u.json" -- \
		/bin/sh -c "echo lifted > '$R/.git/hooks/pre-commit'" >/dev/null 2>&1
	grants_work "$b" && is "$(cat "$R/.git/hooks/pre-commit" 2>/dev/null)" lifted \
		"6 [$b]: --unprotect .git/hooks lets the command write it (control)"
	is "$(jpy "$REPORTS/r6u.json" "[p['state'] for p in d['filesystem']['protected'] if p['path']=='$R/.git/hooks']")" \
		"['lifted']" "6 [$b]:   and the report shows it lifted"
	rm -f "$R/.git/hooks/pre-commit"
done
# A run before left `chmod 000 .git` (the owner may, whatever the grants):
# moat, this user, could not look into .git or create in it, but the
# command, the same user, can chmod it back.  The protected entries must
# still hold: placeholders, or a refusal to start.
for b in $BACKENDS; do
	moot "$b" fs.write "6 [$b] chmod 000 .git" 1 && continue
	R=$BASE/p6c-$b
	mkdir -p "$R/.git"
	M native --profile strict --write "$R" -- /bin/chmod 000 "$R/.git" >/dev/null 2>&1
	M "$b" --profile strict --write "$R" --report "$REPORTS/r6c.json" -- /bin/sh -c \
		"cd '$R'; chmod 700 .git; mkdir -p .git/hooks; echo planted > .git/hooks/pre-commit; echo planted > .git/config" \
		>/dev/null
	rc=$?
	chmod 700 "$R/.git" 2>/dev/null
	bad=$(cd "$R" && grep -rl planted . 2>/dev/null | tr '\n' ' ')
	[ -z "$bad" ] && o=blocked || o=done
	if [ "$rc" = 125 ] && [ -z "$bad" ] && [ "$(json_get "$REPORTS/r6c.json" '["run"]["executed"]' 2>/dev/null)" = False ] &&
		grep -q "which moat planned to bind there" "$SCRATCH/last.err"; then
		# The oci/nsjail init checks each bind against the plan, and
		# cannot look into the chmod-000 .git: a refusal to start, which
		# holds too.
		ok 0 "6 [$b]: after an earlier run's chmod 000 .git: moat refuses to start (exit 125, nothing planted)"
	else
		held "$o" fs.write "$REPORTS/r6c.json" "6 [$b]: after an earlier run's chmod 000 .git, .git/hooks and .git/config are still not created (${bad:-none planted})"
	fi
done
# Control: without moat the chmod and the hook work.
R=$BASE/p6c-ctl
mkdir -p "$R/.git" && chmod 000 "$R/.git"
OFF -- /bin/sh -c "cd '$R'; chmod 700 .git; mkdir -p .git/hooks; echo planted > .git/hooks/pre-commit"
[ -e "$R/.git/hooks/pre-commit" ]
ok $? "6 control: without moat the owner chmods .git back and plants the hook"

# Two runs on one project (two MCP servers of it): the second finds the
# first's placeholders present and pins them; the first ends and removes
# its own.  Its removal must not free the names under the second run (a
# mount on a removed directory is detached in every namespace: the second
# command could then create .mcp.json and .git/hooks while the report said
# fs.write enforced), nor refuse the second run (as uid 65534 it could not
# make .git/hooks inside the first run's read-only .git), nor leave a
# placeholder behind when both are done.
for b in $BACKENDS; do
	R=$BASE/p6s-$b
	mkdir -p "$R"
	rm -f "$SCRATCH/o6s"
	M "$b" --profile strict --write "$R" -- /bin/sh -c 'echo started; sleep 1' >"$SCRATCH/o6s" 2>/dev/null &
	first=$!
	started "$SCRATCH/o6s"
	M "$b" --profile strict --write "$R" --report "$REPORTS/r6s.json" -- /bin/sh -c \
		"sleep 1.2; cd '$R'; echo planted > .mcp.json; mkdir -p .git/hooks; echo planted > .git/hooks/pre-commit" \
		>/dev/null 2>&1
	rc=$?
	wait "$first"
	bad=$(cd "$R" && grep -rl planted . 2>/dev/null | tr '\n' ' ')
	[ -z "$bad" ] && o=blocked || o=done
	is "$rc/$(jpy "$REPORTS/r6s.json" "d['run']['executed']")" 2/True \
		"6 [$b]: a second run on the project of a running one runs its command (its attacks fail: exit 2)"
	held "$o" fs.write "$REPORTS/r6s.json" "6 [$b]:   its command cannot create .mcp.json or .git/hooks once the first run ended (${bad:-none planted})"
	is "$(ls -A "$R" | tr '\n' ' ')" "" "6 [$b]:   and when both are done no placeholder is left"
done
# The host itself rewrites a protected entry during the run, as a
# host-side `git config` does (a lock file renamed over .git/config): the
# kernel detaches the pin with the old file, and the command can write the
# new one.  moat cannot keep that, so the report must not claim it: after
# the run moat finds the name changed, and fs.write is missing.
for b in $BACKENDS; do
	moot "$b" fs.write "6 [$b] .git/config replaced by the host" 1 && continue
	R=$BASE/p6h-$b
	mkdir -p "$R/.git"
	echo '[core]' >"$R/.git/config"
	chmod -R a+rwX "$R"
	# The output file of the previous backend's run still says "started"
	# until this run's shell opens it: removed first, or the host's rewrite
	# below raced moat's start (seen in CI: bwrap as uid 65534 refused to
	# run, the planned .git/config having been replaced before its bind).
	rm -f "$SCRATCH/o6h"
	M "$b" --profile strict --write "$R" --report "$REPORTS/r6h.json" -- /bin/sh -c \
		"echo started; sleep 1.2; echo planted > '$R/.git/config'" >"$SCRATCH/o6h" 2>&1 &
	pid=$!
	started "$SCRATCH/o6h"
	echo '[core] bare = false' >"$R/.git/config.lock" && mv "$R/.git/config.lock" "$R/.git/config"
	wait "$pid"
	grep -q planted "$R/.git/config" && o=done || o=blocked
	held "$o" fs.write "$REPORTS/r6h.json" "6 [$b]: .git/config replaced by the host during the run: held, or the report says fs.write missing"
	# A run that did not execute its command: say why.
	[ "$(json_get "$REPORTS/r6h.json" '["run"]["executed"]' 2>/dev/null)" = True ] ||
		diag "6 [$b]: the command did not run: $(json_get "$REPORTS/r6h.json" '["run"]["failure"]' 2>/dev/null); moat said: $(tail -5 "$SCRATCH/o6h" | tr '\n' ' ')"
done
# Control: the second run with the protection lifted plants them.
R=$BASE/p6s-ctl
mkdir -p "$R"
rm -f "$SCRATCH/o6s"
M native --profile strict --write "$R" -- /bin/sh -c 'echo started; sleep 1' >"$SCRATCH/o6s" 2>/dev/null &
first=$!
started "$SCRATCH/o6s"
M native --profile strict --write "$R" --unprotect "$R/.mcp.json" -- /bin/sh -c \
	"sleep 1.2; echo planted > '$R/.mcp.json'" >/dev/null 2>&1
wait "$first"
[ -f "$R/.mcp.json" ]
ok $? "6 control: with .mcp.json lifted, the second run's command creates it"
# Many at once on one project: every run starts, nothing is left.
R=$BASE/p6m
mkdir -p "$R"
pids=""
for i in $(seq 20); do
	M native --profile strict --write "$R" -- /bin/sh -c "sleep 0.$((i % 5))" >/dev/null 2>&1 &
	pids="$pids $!"
	sleep 0.02
done
fails=0
for pid in $pids; do wait "$pid" || fails=$((fails + 1)); done
is "$fails/$(ls -A "$R" | wc -l)" "0/0" "6: 20 overlapping runs on one project: none fails, no placeholder left"
# The placeholders' temporary names were .moat-placeholder-PID-INDEX: in a
# project another user may write, made first at those names they failed
# the run ("File exists" about .git), and moat's clean-up removed what was
# there.  They carry a random part now.  (This shell's pid is moat's after
# the exec.)
R=$BASE/p6q
mkdir -p "$R"
out=$(cd "$R" && sh -c 'for i in $(seq 0 3000); do : >".moat-placeholder-$$-$i"; done
	exec "$0" run --backend native --profile strict --write . -- /bin/true' "$MOAT" 2>&1)
is "$?/$(ls -A "$R" | grep -c '^\.moat-placeholder-')" "0/3001" \
	"6: names made first where a run's temporary placeholder names used to be: it runs, and leaves them alone ($out)"
# A placeholder directory other users could open (0555), and hold a lock
# on: every run then took it for another run's and left it on the host.
R=$BASE/p6l
mkdir -p "$R"
chmod 0755 "$R"
if [ "$UID_NOW" = 0 ]; then
	M native --profile strict --write "$R" -- /bin/sh -c "sleep 1" >/dev/null 2>&1 &
	mp=$!
	for _ in $(seq 100); do [ -d "$R/.vscode" ] && break; sleep 0.02; done
	locked=$(setpriv --reuid=65534 --regid=65534 --clear-groups $PY -c 'import fcntl, os, sys
try:
    fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY); fcntl.flock(fd, fcntl.LOCK_SH); print("locked")
except OSError as e:
    print(e.strerror)' "$R/.vscode")
	wait "$mp"
	is "$locked/$(ls -A "$R" | wc -l)" "Permission denied/0" \
		"6: another user cannot open a run's placeholder to lock it, and none is left after the run"
else
	skip "another user locking a run's placeholder: needs root to be that user (the root pass runs it)"
fi
# Without a mount namespace the command can chmod a placeholder and fill
# it: what stays on the host is said after the run.
R=$BASE/p6f
mkdir -p "$R"
MOAT_HOST_LIMIT=userns=0,root=0 M native --mode prefer --profile strict --write "$R" --report "$REPORTS/6f.json" -- \
	/bin/sh -c "chmod 755 '$R/.vscode' && echo '{}' > '$R/.vscode/tasks.json'" >/dev/null
like "$(cat "$SCRATCH/last.err")" "^moat: warning: $R/\\.vscode, which moat made for the run as a placeholder of a protected entry, could not be removed" \
	"6: without namespaces, a placeholder the command filled stays, and moat says so"
ok "$([ -e "$R/.vscode/tasks.json" ] && echo 0 || echo 1)" "  (it is there)"
# The report says so too: moat removes the placeholders before it writes
# the report (it used to after, and an embedder never learnt of it).
is "$(json_eval "$REPORTS/6f.json" '[(e["path"], e["what"], e["state"]) for e in d["run"]["left_on_host"]]')" \
	"[[\"$R/.vscode\", \"placeholder\", \"left\"]]" "6:   and so does the report (run.left_on_host)"
valid_report "$REPORTS/6f.json" "6:   the report"
# The same for a placeholder another run made: a second run on the project
# holds the first's (.vscode), the first ends and leaves it to the second,
# whose command fills it; the second, the last to hold it, cannot remove
# it, and said nothing.
R=$BASE/p6a
mkdir -p "$R"
rm -f "$SCRATCH/o6a"
env HOME="$HOMED" MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --backend native --mode prefer --profile strict --write "$R" -- \
	/bin/sh -c "echo started; for i in \$(seq 150); do [ -e '$R/second-started' ] && break; sleep 0.1; done" \
	>"$SCRATCH/o6a" 2>/dev/null &
first=$!
started "$SCRATCH/o6a"
# Each command waits for the other run's step, which the test marks in
# the project (a signal to the other moat is not the command's to send).
env HOME="$HOMED" MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --backend native --mode prefer --profile strict --write "$R" --report "$REPORTS/6a.json" -- \
	/bin/sh -c "echo started; for i in \$(seq 150); do [ -e '$R/first-done' ] && break; sleep 0.1; done
		chmod 755 '$R/.vscode' && echo '{}' > '$R/.vscode/tasks.json'" >"$SCRATCH/o6a2" 2>"$SCRATCH/6a.err" &
second=$!
started "$SCRATCH/o6a2"
touch "$R/second-started"
wait "$first"
touch "$R/first-done"
wait "$second"
ok "$([ -e "$R/.vscode/tasks.json" ] && echo 0 || echo 1)" "6: without namespaces, a second run's command fills the placeholder the first run made (it is there)"
like "$(cat "$SCRATCH/6a.err")" "^moat: warning: $R/\\.vscode, which moat made for the run as a placeholder of a protected entry, could not be removed" \
	"  the second run, the last to hold it, says it stays"
is "$(json_eval "$REPORTS/6a.json" '[(e["path"], e["what"], e["state"]) for e in d["run"].get("left_on_host", [])]')" \
	"[[\"$R/.vscode\", \"placeholder\", \"left\"]]" "  and so does its report (run.left_on_host)"

# The same in a granted HOME (shell start-up files, git's config).
before=$(sha256sum "$HOMED/.bashrc")
M native --profile strict --write "$HOMED/.config/app" --read "$HOMED" -- /bin/true >/dev/null 2>&1
M native --profile strict --write "$HOMED" -- /bin/sh -c \
	'echo planted >> "$HOME/.bashrc"; echo planted > "$HOME/.zshrc"; echo planted > "$HOME/.gitconfig"; mkdir -p "$HOME/.local/bin"; echo planted > "$HOME/.local/bin/git"' \
	>/dev/null 2>&1
is "$(sha256sum "$HOMED/.bashrc")/$(ls -a "$HOMED" | grep -c 'zshrc\|gitconfig')/$([ -e "$HOMED/.local/bin/git" ] && echo planted)" \
	"$before/0/" "6: in a granted HOME, ~/.bashrc, ~/.zshrc, ~/.gitconfig and ~/.local/bin stay read-only"
OFF -- /bin/sh -c 'echo planted >> "$HOME/.bashrc"'
like "$(cat "$HOMED/.bashrc")" planted "6 control: without moat ~/.bashrc is written"
# What ~/.bashrc sources, the session's environment, PATH's ~/.cargo/bin,
# the editors' and tmux's config, the desktop's launchers: the existing
# ones stay as they were, the absent ones are not made.
RC_FILES=".bash_aliases .xprofile .vimrc .tmux.conf .config/nvim/init.lua .cargo/bin/cargo .local/share/applications/x.desktop .config/environment.d/10.conf"
RC_NEW=".xsessionrc .pam_environment .config/tmux/tmux.conf"
mkdir -p "$HOMED/.config/nvim" "$HOMED/.cargo/bin" "$HOMED/.local/share/applications" "$HOMED/.config/environment.d"
for f in $RC_FILES; do echo original >"$HOMED/$f"; done
plant='for f in '"$RC_FILES $RC_NEW"'; do mkdir -p "$HOME/$(dirname "$f")"; echo planted >"$HOME/$f"; done'
M native --profile strict --write "$HOMED" -- /bin/sh -c "$plant" >/dev/null 2>&1
got=""
for f in $RC_FILES; do got="$got$(cat "$HOMED/$f")/"; done
for f in $RC_NEW; do got="$got$([ -e "$HOMED/$f" ] && echo made)/"; done
is "$got" "original/original/original/original/original/original/original/original////" \
	"6: in a granted HOME, ~/.bash_aliases, ~/.xprofile, vim's, neovim's and tmux's config, ~/.cargo/bin, the launchers and environment.d stay as they were; ~/.xsessionrc, ~/.pam_environment, ~/.config/tmux are not made"
OFF -- /bin/sh -c "$plant" >/dev/null 2>&1
got=""
for f in $RC_FILES $RC_NEW; do got="$got$(cat "$HOMED/$f" 2>/dev/null)/"; done
is "$got" "planted/planted/planted/planted/planted/planted/planted/planted/planted/planted/planted/" \
	"6 control: without moat each of them is written"
# While a run with HOME granted lasts, the absent start-up files stand as
# empty read-only directories on the host (the placeholders above), where a
# login shell stops ("~/.bash_profile: is a directory", and skips
# ~/.profile) and git ("unable to access ~/.gitconfig"): an MCP server
# given --write ~ kept them so for as long as its client ran, with no word
# of why. A note says so before the run; a grant below HOME makes none.
rm -f "$SCRATCH/o6h" "$HOMED/.config/app/seen"
env HOME="$HOMED" "$MOAT" run --profile strict --write "$HOMED" -- /bin/sh -c \
	"echo started; for i in \$(seq 100); do [ -e '$HOMED/.config/app/seen' ] && break; sleep 0.1; done" \
	>"$SCRATCH/o6h" 2>"$SCRATCH/6h.err" &
pid=$!
started "$SCRATCH/o6h"
held=$([ -d "$HOMED/.bash_profile" ] && echo dir)
touch "$HOMED/.config/app/seen"
wait "$pid"
is "$held" dir "6: while a run with HOME granted lasts, an absent ~/.bash_profile stands as a directory on the host"
like "$(cat "$SCRATCH/6h.err")" "^moat: note: while the command runs, the host sees ~/\\.bash_profile, .* as empty read-only directories \\(placeholders: .*grant a directory below HOME instead$" \
	"  and a note says so before the run"
ok "$([ ! -e "$HOMED/.bash_profile" ] && echo 0 || echo 1)" "  (gone after it)"
env HOME="$HOMED" "$MOAT" run --profile strict --write "$HOMED/.config/app" -- /bin/true 2>"$SCRATCH/6h.err"
unlike "$(cat "$SCRATCH/6h.err")" "the host sees" "6 control: a grant below HOME holds no start-up file, and there is no note"
rm -f "$HOMED/.config/app/seen"
# A dotfile manager's HOME: the start-up files are links into a tree the
# grant holds -- ~/.bashrc -> dotfiles/bashrc, ~/.profile -> an absolute
# path through another link (dotlinks -> real), ~/.zshrc -> a file not
# there yet, ~/.zshenv -> a cycle of links (replacing one would end it),
# ~/.zlogin -> dotfiles/nodir/../zlogin (the kernel resolves `..` after
# nodir once it exists: a link made there leads anywhere), and
# ~/.config/git -> ../gitdots/gitconf, a link a secret's path goes through
# (.config/git/credentials).  dotlinks is also on a read grant's way;
# ~/.inputrc -> dd/sub/../inputrc (`..` after a directory the command could
# make a link); ~/.config/fish -> ../shell, a directory already pinned for
# ~/.zprofile -> shell/zprofile (the pin must become the protection).  The shell reads the target: each target is held (the absent
# one cannot be made), and each link on the way, and the directories they
# lie in cannot be renamed away; the rest of those directories, and of
# ~/.config beside ~/.config/git, stays writable.  For every backend, and
# with HOME expanded by binds instead of Landlock (no Landlock).
dots_tree() { # dots_tree DIR: that HOME
	rm -rf "$1"
	mkdir -p "$1/dotfiles" "$1/gitdots/gitconf" "$1/real" "$1/.config/app" "$1/../proj"
	echo 'export A=1' >"$1/dotfiles/bashrc"
	echo 'PROFILE=1' >"$1/real/profile"
	echo 'readme' >"$1/real/readme"
	echo '[user]' >"$1/gitdots/gitconf/config"
	echo 'https://u:token@example.org' >"$1/gitdots/gitconf/credentials"
	ln -s ../gitdots/gitconf "$1/.config/git"
	ln -s dotfiles/nodir/../zlogin "$1/.zlogin"
	mkdir -p "$1/dd/sub" "$1/xx/yy" "$1/shell"
	echo 'orig' >"$1/dd/inputrc"
	ln -s dd/sub/../inputrc "$1/.inputrc"
	echo 'orig' >"$1/shell/zprofile"
	ln -s shell/zprofile "$1/.zprofile"
	ln -s ../shell "$1/.config/fish"
	ln -s dotfiles/bashrc "$1/.bashrc"
	ln -s real "$1/dotlinks"
	ln -s "$1/dotlinks/profile" "$1/.profile"
	ln -s dotfiles/zshrc "$1/.zshrc"
	ln -s cyc1 "$1/.zshenv"
	ln -s cyc2 "$1/cyc1"
	ln -s cyc1 "$1/cyc2"
	chmod -R a+rwX "$1"
}
DOTS_ATTACK='echo planted >>"$HOME/.bashrc"; echo planted >>"$HOME/dotfiles/bashrc"; echo planted >>"$HOME/.profile"
echo planted >>"$HOME/real/profile"; echo planted >"$HOME/dotfiles/zshrc"
rm -f "$HOME/cyc1" && echo planted >"$HOME/cyc1"
mkdir -p "$HOME/dotfiles/sub/deeper" && ln -s sub/deeper "$HOME/dotfiles/nodir"; echo planted >"$HOME/dotfiles/sub/zlogin"
echo planted >"$HOME/dotfiles/zlogin"; echo planted >>"$HOME/gitdots/gitconf/config"
cat "$HOME/.config/git/credentials" "$HOME/gitdots/gitconf/credentials" >"$HOME/.config/app/leak" 2>/dev/null
rmdir "$HOME/dd/sub" && ln -s "$HOME/xx/yy" "$HOME/dd/sub"; echo planted >"$HOME/xx/inputrc"
echo planted >"$HOME/shell/config.fish"
rm -f "$HOME/dotlinks" && mkdir "$HOME/dotlinks" && echo planted >"$HOME/dotlinks/profile"
mv "$HOME/real" "$HOME/real-old" && mkdir "$HOME/real" && echo planted >"$HOME/real/profile"
mv "$HOME/dotfiles" "$HOME/dotfiles-old" && mkdir "$HOME/dotfiles" && echo planted >"$HOME/dotfiles/bashrc"
echo ok >"$HOME/dotfiles/other"; echo ok >"$HOME/real/other"; echo ok >"$HOME/.config/app/other"'
dots_outcome() { # dots_outcome HOME: "blocked" when no start-up file reads planted and the rest was written
	local h=$1
	if grep -qs planted "$h/.bashrc" "$h/.profile" "$h/.zshrc" "$h/.zshenv" "$h/.zlogin" "$h/.config/git/config" \
		"$h/.inputrc" "$h/.config/fish/config.fish" ||
		grep -qs token "$h/.config/app/leak" ||
		[ -e "$h/dotfiles/zshrc" ] ||
		[ ! -L "$h/dotlinks" ] || [ -e "$h/real-old" ] || [ -e "$h/dotfiles-old" ]; then
		echo done
	else
		echo blocked
	fi
}
dots_written() { cat "$1/dotfiles/other" "$1/real/other" "$1/.config/app/other" 2>/dev/null | tr '\n' ' '; }
# HOME under /tmp (the sandbox's /tmp is private) is a read-only skeleton
# with the grant's entries bound in it: the links are made there instead.
TMPDOTS=$(mktemp -d /tmp/moat-fsdots.XXXXXX)
chmod 0777 "$TMPDOTS"
for b in $BACKENDS; do
	grants_work "$b" || continue
	for lim in "" landlock=0 skeleton; do
		[ "$lim" = landlock=0 ] && [ "$b" != native ] && continue
		case $lim in
		skeleton) H=$TMPDOTS/$b/home what=", HOME in a skeleton" ;;
		landlock=0) H=$BASE/p6dots-$b-nolandlock/home what=", no Landlock" ;;
		*) H=$BASE/p6dots-$b/home what= ;;
		esac
		dots_tree "$H"
		(cd "$H/../proj" && env MOAT_HOST_LIMIT="${lim#skeleton}" HOME="$H" "$MOAT" run --backend "$b" --mode prefer \
			--profile strict --write "$H" --read "$H/dotlinks/readme" --report-fd 3 -- /bin/sh -c "$DOTS_ATTACK" \
			>/dev/null 2>&1 3>"$REPORTS/r6dots.json")
		held "$(dots_outcome "$H")" fs.write "$REPORTS/r6dots.json" \
			"6 [$b$what]: a granted HOME of dotfile links: no start-up file reads what the command wrote (links, their targets, an absent target, the links and directories on the way)"
		is "$(dots_written "$H")" "ok ok ok " "6 [$b$what]:   and the rest of dotfiles/, real/ and ~/.config (beside ~/.config/git) is writable"
		# bwrap and runc mount only on what a path leads to: a link
		# in the bound HOME cannot be held, and the report says so; in
		# a skeleton it is made there, and held.
		if { [ "$b" = bwrap ] || [ "$b" = oci ]; } && [ -z "$lim" ]; then
			like "$(prop_status "$REPORTS/r6dots.json" fs.write): $(json_get "$REPORTS/r6dots.json" '["properties"]["fs.write"]["reason"]' 2>/dev/null)" \
				"^missing: [0-9]+ protected entries are symlinks \\($H/\\.bashrc, \\.\\.\\.\\): (bwrap|runc) mounts only on what a link leads to" \
				"6 [$b]:   fs.write is reported missing, naming the links it cannot hold"
		elif [ "$b" = bwrap ] || [ "$b" = oci ]; then
			is "$(prop_status "$REPORTS/r6dots.json" fs.write)" enforced \
				"6 [$b$what]:   fs.write enforced: the links are made in the skeleton"
		fi
	done
done
rm -rf "$TMPDOTS"
# The same in a project (not expanded: its directory is writable whole):
# .envrc -> scripts/envrc, which direnv runs on the host.  The link is held
# (native), or the report says fs.write is missing (bwrap, oci, gVisor,
# whose tools mount only on what a link leads to); the target is held by
# every backend that holds anything.
for b in $BACKENDS; do
	grants_work "$b" || continue
	moot "$b" fs.write "6 [$b] .envrc -> scripts/envrc" 1 && continue
	R=$BASE/p6envrc-$b
	mkdir -p "$R/scripts" && echo 'echo hi' >"$R/scripts/envrc" && ln -sfn scripts/envrc "$R/.envrc" && chmod -R a+rwX "$R"
	(cd "$R" && env HOME="$HOMED" "$MOAT" run --backend "$b" --mode prefer --profile strict --write "$R" --report-fd 3 -- \
		/bin/sh -c 'echo planted >>scripts/envrc; rm -f .envrc; echo planted >.envrc' >/dev/null 2>&1 3>"$REPORTS/r6envrc.json")
	grep -qs planted "$R/.envrc" "$R/scripts/envrc" && o=done || o=blocked
	held "$o" fs.write "$REPORTS/r6envrc.json" "6 [$b]: a project's .envrc -> scripts/envrc: neither the link nor its target is rewritten"
	# Said before the run, not only found after it: in mode require a
	# backend that cannot hold the link does not start the command.
	if [ "$b" = oci ] || [ "$b" = bwrap ]; then
		echo 'echo hi' >"$R/scripts/envrc" && ln -sfn scripts/envrc "$R/.envrc"
		(cd "$R" && env HOME="$HOMED" "$MOAT" run --backend "$b" --mode require --profile strict --write "$R" -- \
			/bin/sh -c 'rm -f .envrc; echo planted >.envrc' >/dev/null 2>"$SCRATCH/envrc.err")
		rc=$?
		is "$rc/$(grep -c planted "$R/.envrc")" 125/0 "6 [$b]:   in mode require it refuses to start ($(grep -m1 'fs.write' "$SCRATCH/envrc.err" | head -c 120))"
	fi
done
R=$BASE/p6envrc-ctl
mkdir -p "$R/scripts" && echo 'echo hi' >"$R/scripts/envrc" && ln -sfn scripts/envrc "$R/.envrc"
(cd "$R" && OFF --write "$R" -- /bin/sh -c 'rm -f .envrc; echo planted >.envrc')
grep -qs planted "$R/.envrc"
ok $? "6 control: without moat the command replaces the .envrc link"
# A protected link into another write grant's root: that grant asked for
# it, and the report lists it lifted.  A link through /proc (what it
# reaches depends on the reader): refused, with the way out.
H=$BASE/p6dots-grant/home
mkdir -p "$H/.config" "$BASE/p6dots-grant/fish" "$BASE/p6dots-grant/proj"
ln -sfn "$BASE/p6dots-grant/fish" "$H/.config/fish"
ln -sfn /proc/self/cwd/bashrc.real "$H/.bashrc"
chmod -R a+rwX "$BASE/p6dots-grant"
(cd "$BASE/p6dots-grant/proj" && env HOME="$H" "$MOAT" run --backend native --mode prefer --profile strict --write "$H" \
	--write "$BASE/p6dots-grant/fish" -- /bin/true >/dev/null 2>"$SCRATCH/proc.err")
rc=$?
like "$rc: $(head -1 "$SCRATCH/proc.err")" "^125: moat: the protected link $H/\\.bashrc \\(-> /proc/self/cwd/bashrc.real\\) leads through /proc" \
	"6: a protected link through /proc/self refuses to start, naming it"
(cd "$BASE/p6dots-grant/proj" && env HOME="$H" "$MOAT" run --backend native --mode prefer --profile strict --write "$H" \
	--write "$BASE/p6dots-grant/fish" --unprotect "$H/.bashrc" --report "$REPORTS/r6grant.json" -- /bin/true >/dev/null 2>&1)
is "$?:$(jpy "$REPORTS/r6grant.json" "[p['state'] for p in d['filesystem']['protected'] if p['path']=='$BASE/p6dots-grant/fish']")" \
	"0:['lifted']" "6:   lifted (--unprotect), it runs; a link to another write grant's root is listed lifted"
H=$BASE/p6dots-ctl/home
dots_tree "$H"
(cd "$H/../proj" && env HOME="$H" "$MOAT" run --mode off -- /bin/sh -c "$DOTS_ATTACK" >/dev/null 2>&1)
is "$(dots_outcome "$H")" done "6 control: without moat, the command plants every dotfile through its links"
M native --profile strict --write "$BASE/p6-native" --unprotect "$BASE/p6-native/nothing" -- /bin/true
is "$?" 125 "6: --unprotect of a path that is not a protected entry refuses to start"

# The MCP clients' own files: a client starts every server its file lists,
# without a sandbox, so a server with a write grant of the project or of
# HOME must not add one.  Each file `moat mcp` edits (src/sources/
# mcp_clients.c; tests/unit/test_mcp.c checks the table against the
# protected names) and a few more clients' (Continue, Zed, Cline), existing
# and absent.  HOME's secrets are built-in secrets as well (denied).
CLIENT_PROJ=".mcp.json .codex/config.toml .cursor/mcp.json .vscode/mcp.json .gemini/settings.json
.continue/mcpServers/x.yaml .zed/settings.json"
CLIENT_HOME_SECRET=".claude.json .claude/.config.json .config/Claude/claude_desktop_config.json .codex/config.toml
.cursor/mcp.json .gemini/settings.json .continue/config.yaml"
CLIENT_HOME=".config/Code/User/mcp.json .config/Code%-%Insiders/User/mcp.json .codeium/windsurf/mcp_config.json
.config/zed/settings.json .config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
EVIL='{"mcpServers":{"x":{"command":"sh","args":["-c","touch /tmp/planted-outside-the-sandbox"]}}}'
client_files() { # client_files DIR: one path a line ("%" in a name is a blank)
	local f
	for f in $CLIENT_PROJ; do echo "$1/proj/$f"; done
	for f in $CLIENT_HOME_SECRET $CLIENT_HOME; do echo "$1/home/${f//%/ }"; done
}
clients_tree() { # clients_tree DIR [present]: the project and HOME in DIR, the client files in them
	local f
	# Absent, their directories are there: HOME and ~/.config themselves
	# take no new entry under a write grant of HOME (docs/policy.md,
	# "expanded"), which would stop a plant there without any protection.
	mkdir -p "$1/proj/src" "$1/home/.config/Code" "$1/home/.config/Code - Insiders" "$1/home/.codeium"
	if [ "${2:-}" = present ]; then
		while IFS= read -r f; do
			mkdir -p "$(dirname "$f")"
			case $f in *.toml) echo '[mcp_servers]' ;; *) echo '{"mcpServers":{}}' ;; esac >"$f"
		done < <(client_files "$1")
	fi
	chmod -R a+rwX "$1"
}
# plant DIR ARGS...: moat runs a command in DIR's HOME and project, both
# granted for writing, that writes EVIL into every client file (making its
# directories first), and src/ok.
plant() {
	local d=$1
	shift
	(cd "$d/proj" && env HOME="$d/home" "$MOAT" run --backend native --mode prefer --profile strict \
		--write "$d/proj" --write "$d/home" "$@" -- /bin/sh -c '
		printf "%s\n" "$2" | while IFS= read -r f; do
			mkdir -p "${f%/*}" 2>/dev/null; printf "%s" "$1" >"$f" 2>/dev/null
		done
		echo ok >src/ok' sh "$EVIL" "$(client_files "$d")" 2>>"$SCRATCH/all.err")
}
planted_in() { # planted_in DIR: the client files that hold EVIL
	local f
	while IFS= read -r f; do grep -qs 'planted-outside' "$f" && printf '%s ' "${f#"$1"/}"; done < <(client_files "$1")
}
R=$BASE/p6mcp
clients_tree "$R" present
n=$(cd "$R/proj" && env HOME="$R/home" "$MOAT" mcp list --json 2>/dev/null |
	"$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["files"]))')
is "$n" 13 "6 mcp: moat mcp list finds the 13 files of its client table among them"
(cd "$R" && find . -type f | sort | xargs -d '\n' sha256sum) >"$SCRATCH/before6m"
plant "$R" --report "$REPORTS/r6m.json" >/dev/null
(cd "$R" && find . -type f ! -path ./proj/src/ok | sort | xargs -d '\n' sha256sum) >"$SCRATCH/after6m"
bad=$(planted_in "$R")
[ -z "$bad" ] && cmp -s "$SCRATCH/before6m" "$SCRATCH/after6m" && o=blocked || o=done
held "$o" fs.write "$REPORTS/r6m.json" "6 mcp: every existing MCP client file, in the project and in HOME, is left as it was (${bad:-none planted})"
is "$(cat "$R/proj/src/ok" 2>/dev/null)" ok "6 mcp:   the rest of the project is writable"
R=$BASE/p6mcp-absent
clients_tree "$R"
(cd "$R" && find . | sort) >"$SCRATCH/before6m"
plant "$R" --report "$REPORTS/r6ma.json" >/dev/null
rm -f "$R/proj/src/ok"
bad=$(planted_in "$R")
[ -z "$bad" ] && o=blocked || o=done
held "$o" fs.write "$REPORTS/r6ma.json" "6 mcp: no absent MCP client file can be created (${bad:-none planted})"
(cd "$R" && find . | sort) >"$SCRATCH/after6m"
is "$(diff "$SCRATCH/before6m" "$SCRATCH/after6m" | grep '^[<>]' | tr '\n' ' ')" "" "6 mcp:   and no placeholder is left"
# Control: lifted, every one of them that is not also a secret is written.
R=$BASE/p6mcp-lifted
clients_tree "$R" present
lift=()
for f in $CLIENT_PROJ; do lift+=(--unprotect "$R/proj/${f%%/*}"); done
lift+=(--unprotect "$R/home/.config" --unprotect "$R/home/.codeium")
plant "$R" "${lift[@]}" >/dev/null
want=$(for f in $CLIENT_PROJ; do printf 'proj/%s ' "$f"; done
	for f in $CLIENT_HOME; do printf 'home/%s ' "${f//%/ }"; done)
is "$(planted_in "$R")" "$want" "6 mcp control: with --unprotect of each, the command writes them all (but HOME's secrets)"

# ============================================ 7. the script dir: interpreters only
OTHER=$BASE/other
mkdir -p "$OTHER"
echo "$MARK-other" >"$OTHER/data.txt"
echo 'echo script-ran' >"$OTHER/run.sh"
chmod -R a+rX "$OTHER"
out=$(M native --profile strict -- /bin/cat "$OTHER/data.txt")
unlike "$out" "$MARK-other" "7: strict does not grant the directory of cat's argument"
like "$(OFF -- /bin/cat "$OTHER/data.txt")" "$MARK-other" "7 control: without moat cat reads it"
is "$(M native --profile strict -- /bin/sh "$OTHER/run.sh")" "script-ran" "7: an interpreter's script dir is granted (sh script)"
like "$(M native --profile strict --dry-run -- /bin/sh "$OTHER/run.sh")" "the interpreter's script dir" \
	"7:   and the dry run names it as such"

# ================================================================= 8. the rest
M native --profile strict --write /dev/shm -- /bin/true
is "$?" 125 "8: --write /dev/shm refuses to start (the sandbox's /dev/shm is private)"
like "$(cat "$SCRATCH/last.err")" "/dev/shm: the sandbox has a private" "8:   and says why"
D=$BASE/p8
mkdir -p "$D/secret/out"
echo "$MARK-d" >"$D/secret/key"
chmod -R a+rwX "$D"
for b in $BACKENDS; do
	grants_work "$b" || continue
	out=$(M "$b" --profile strict --read "$D" --deny "$D/secret" --write "$D/secret/out" -- /bin/sh -c \
		"echo nested > '$D/secret/out/w'; cat '$D/secret/key'" 2>&1)
	is "$(cat "$D/secret/out/w" 2>/dev/null)" nested "8 [$b]: a write grant inside a deny works (the more specific wins)"
	unlike "$out" "$MARK-d" "8 [$b]:   and the rest of the denied dir stays unreadable"
	rm -f "$D/secret/out/w"
	echo orig >"$D/f.txt"
	echo other >"$D/g.txt"
	chmod a+rw "$D/f.txt" "$D/g.txt"
	M "$b" --profile strict --read "$D" --write "$D/f.txt" -- /bin/sh -c "echo new > '$D/f.txt'; echo new > '$D/g.txt'" \
		>/dev/null 2>&1
	is "$(cat "$D/f.txt")/$(cat "$D/g.txt")" "new/other" "8 [$b]: --write FILE inside a read grant: the file is writable, its sibling not"
done

# A device node outside /dev (a chroot's, a container's) under a read grant
# of the whole root: binds are nodev, so it does not open.  Root only
# (mknod); the node is a copy of /dev/zero in a directory of the test's.
if [ "$UID_NOW" = 0 ]; then
	DN=$(mktemp -d /var/tmp/moat-devnode.XXXXXX)
	mknod "$DN/zero" c 1 5
	for b in $BACKENDS; do
		[ "$b" = gvisor ] || [ "$b" = firejail ] && continue # their own views: no --read / bind
		M "$b" --profile strict --read / -- /bin/sh -c "head -c1 '$DN/zero' >/dev/null" >/dev/null 2>&1
		[ $? != 0 ]
		ok $? "8 [$b]: --read /: a device node outside /dev ($DN/zero) does not open"
	done
	OFF -- /bin/sh -c "head -c1 '$DN/zero' >/dev/null"
	ok $? "8 control: without moat the node opens"
	rm -rf "$DN"
fi

# A directory the caller cannot list, inside a grant that is expanded around
# a deny below it (a HOME of 0700 under `--read /` as another uid): nothing
# below it is granted, so when the host opens it up during the run (chmod,
# a secret written there) the command still cannot read in.  Root only: the
# run is uid 65534's, the directory and the chmod root's.  Control: the
# same grant without the deny is one rule for the whole tree, and the read
# succeeds once the directory is opened.
if [ "$UID_NOW" = 0 ] && command -v setpriv >/dev/null; then
	LD=$(mktemp -d /var/tmp/moat-unlist.XXXXXX)
	chmod 0755 "$LD"
	mkdir "$LD/locked" "$LD/flag"
	chmod 0777 "$LD/flag"
	echo "$MARK-unlisted" >"$LD/locked/secret"
	chmod 0644 "$LD/locked/secret"
	unlisted() { # unlisted ARGS...: as uid 65534, read locked/secret once the flag is there
		rm -f "$LD/flag/go" "$SCRATCH/ol"
		chmod 0700 "$LD/locked"
		setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent "$MOAT" run --profile strict \
			--read "$LD" "$@" -- /bin/sh -c "echo started; i=0; while [ ! -e '$LD/flag/go' ] && [ \$i -lt 100 ]; do sleep 0.05; i=\$((i+1)); done; cat '$LD/locked/secret' 2>&1" \
			>"$SCRATCH/ol" 2>"$SCRATCH/ol.err" &
		local pid=$!
		started "$SCRATCH/ol"
		chmod 0755 "$LD/locked"
		touch "$LD/flag/go"
		wait "$pid"
	}
	unlisted --deny "$LD/locked/key"
	rc=$?
	[ "$rc" = 0 ] || diag "moat said: $(tail -3 "$SCRATCH/ol.err")"
	grep -q started "$SCRATCH/ol" && ! grep -q "$MARK-unlisted" "$SCRATCH/ol"
	ok $? "9 [native]: a grant expanded through a directory uid 65534 cannot list: opened up by the host during the run, still closed ($(tail -1 "$SCRATCH/ol"))"
	unlisted
	grep -q "$MARK-unlisted" "$SCRATCH/ol"
	ok $? "9 control: the same grant without the deny below it reads the secret once the directory is opened"
	rm -rf "$LD"
fi

# ============================================================== the view
expected_root() { # the top-level entries the view must show, sorted
	{
		for d in usr bin sbin lib lib32 lib64 libx32 etc opt; do [ -e "/$d" ] && echo "$d"; done
		echo dev
		echo proc
		echo run
		echo sys
		echo tmp
		echo "$HOMED" | cut -d/ -f2
		echo "$HELPER" | cut -d/ -f2 # its install dir is granted
		[ "$1" != native ] && echo .moat
	} | sort -u | tr '\n' ' '
}
for b in $BACKENDS; do
	[ "$b" = firejail ] && continue # the host's file system stays visible (fs.read missing)
	# The helper lists (readdir): coreutils' ls fails on every directory
	# under gVisor 20221219 (EINVAL), with or without moat.
	got=$(M "$b" --profile strict -- "$HELPER" ls / | sort | tr '\n' ' ')
	want=$(expected_root "$b")
	is "$got" "$want" "view [$b]: ls / shows only the system dirs, the private ones and the parents of grants"
	out=$(M "$b" --profile strict -- "$HELPER" ls "$(dirname "$HOMED")" | tr '\n' ' ')
	is "$out" "home " "view [$b]: a parent of a grant lists only the granted entry"
done
like "$(ls -A /)" "srv" "view control: the host's / has /srv, which no view shows"
done_testing
