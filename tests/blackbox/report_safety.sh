#!/usr/bin/env bash
# The report is moat's (issue 15).  --report FILE is checked after the plan
# and before anything runs, its directory held open, and the report written
# at the end into a fresh temporary file renamed over the name; --report-fd
# N must be a pipe, a socket or the caller's own file, and is never
# inherited.  Every protection is attacked, with a control showing the
# attack is real without it (on throwaway files of this test).  Runs as
# root and as an unprivileged user; the cases that need a second user
# (uid 65534) run as root only.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
HELPER_DIR=$(dirname "$HELPER")
IS_ROOT=$([ "$(id -u)" = 0 ] && echo 1 || echo 0)
EXTRA=""
trap 'rm -rf "$SCRATCH" "$REPORTS" $EXTRA' EXIT
cd "$SCRATCH" || exit 1

# $REPORTS is this user's own directory (0700, in the sticky /tmp): where a
# report may go.  $W is a write grant inside it.
W=$REPORTS/grant
mkdir -p "$W"
ERR=$SCRATCH/err

R() { "$MOAT" run "$@" 2>"$ERR"; }
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
skip_root() { TAP_N=$((TAP_N + 1)); echo "ok $TAP_N # SKIP needs root: $*"; }
absent() { [ ! -e "$1" ] && [ ! -L "$1" ] && echo 0 || echo 1; }
sum() { sha256sum <"$1" | cut -c1-64; }
no_temp_left() { # no_temp_left DIR DESC: no ".NAME.XXXXXX" of moat's is left in DIR
	local left
	left=$(find "$1" -maxdepth 1 -name '.*.??????' | tr '\n' ' ')
	is "$left" "" "$2"
}
wait_for() { # wait_for FILE: until it exists (30 s at most; a failing test naming it if not)
	wait_ready 30 "the command's start marker $(basename "$1")" test -e "$1"
}
# until_go FILE: a shell line for the command: wait until the test makes
# FILE (20 s at most).  The host's move during the run comes before the
# command ends, however late a loaded machine runs it: a fixed sleep there
# (0.5 or 1 s) let moat write its report first.
until_go() { printf "i=0; while [ ! -e '%s' ] && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i + 1)); done" "$1"; }
# A report a command would put where the caller reads it: a clean pass.
FORGED='{"schema": "moat.report/1", "status": "enforced", "run": {"executed": true, "exit_code": 0, "exit_status": 0}}'

# ============================================== 1. a report inside a write grant
rm -f "$W/marker"
R --write "$W" --report "$W/r.json" -- /bin/sh -c "echo ran > '$W/marker'"
is $? 125 "1: --report inside the write grant is refused (exit 125)"
ok "$(absent "$W/marker")" "1:   before the command runs (its marker is absent)"
ok "$(absent "$W/r.json")" "1:   and nothing is created at the report path"
like "$(cat "$ERR")" "^moat: --report $W/r\.json: the directory $W lies in the write grant $W: " \
	"1:   stderr names the path and the grant"
like "$(cat "$ERR")" "hint: .*outside every write grant.*--report-fd" "1:   with a hint"
mkdir -p "$W/sub"
R --write "$W" --report "$W/sub/r.json" -- /bin/true
is "$?/$(absent "$W/sub/r.json")" "125/0" "1: a report in a directory below the write grant is refused"
# The same directory by another name: the check compares objects.
(cd "$W/sub" && "$MOAT" run --write "$W" --report r.json -- /bin/true 2>"$ERR")
is "$?/$(absent "$W/sub/r.json")" "125/0" "1: so is 'r.json' from inside the grant (another name, the same object)"
like "$(cat "$ERR")" "lies in the write grant $W" "1:   naming the grant"
R --write "$W" --report "$REPORTS/r1.json" -- /bin/sh -c "echo ran > '$W/marker'"
is "$?/$(cat "$W/marker" 2>/dev/null)" "0/ran" "1 control: the same report outside the grant: the command runs"
valid_report "$REPORTS/r1.json" "1 control:   and the report is written"
rm -f "$W/marker"

# ======================================== 2. the command replacing the report
# Its attempts: rename a file of its own over the report, write into it;
# each one that works (in its own view) is noted in the grant's `attempt`.
# Then it waits until the test has looked at the host's file (GRANT/go),
# and exits 7.
attack() { # attack GRANT REPORT
	printf '%s' "cp '$1/forged.json' '$1/f1'; mv -f '$1/f1' '$2' 2>/dev/null && echo mv >>'$1/attempt';
		{ cat '$1/forged.json' >'$2'; } 2>/dev/null && echo write >>'$1/attempt';
		touch '$1/tried'; $(until_go "$1/go"); exit 7"
}
# In /var/tmp (outside the sandbox's private /tmp, as a project is) and in
# /tmp (which the sandbox replaces with its own).
VT=$(mktemp -d /var/tmp/moat-report.XXXXXX)
EXTRA="$VT"
for base in "$VT" "$REPORTS"; do
	G=$base/grant2
	OUT=$base/r2.json
	mkdir -p "$G"
	printf '%s\n' "$FORGED" >"$G/forged.json"
	echo stale >"$OUT" # a file already at the name
	rm -f "$G/attempt" "$G/tried" "$G/go"
	R --write "$G" --report "$OUT" -- /bin/sh -c "$(attack "$G" "$OUT")" &
	pid=$!
	wait_for "$G/tried"
	during=$(cat "$OUT")
	touch "$G/go"
	wait "$pid"
	rc=$?
	is "$rc" 7 "2 [${base%%/moat-*}]: the command's exit status passes through (7)"
	if [ "$base" = "$VT" ]; then
		is "$(cat "$G/attempt" 2>/dev/null)" "" "2 [${base%%/moat-*}]:   its attempts to replace the report fail"
	else
		diag "2 [/tmp]: in its private /tmp the command's attempts: $(cat "$G/attempt" 2>/dev/null | tr '\n' ' ')"
	fi
	is "$during" stale "2 [${base%%/moat-*}]:   while it runs, the file on the host is not the command's"
	is "$(json_get "$OUT" '["run"]["exit_code"]' 2>/dev/null)" "$rc" \
		"2 [${base%%/moat-*}]:   after it, the file holds moat's report: run.exit_code equals moat's exit status"
	valid_report "$OUT" "2 [${base%%/moat-*}]:  "
done
# Control: the same attempts, unsandboxed, against a throwaway copy.
cp "$VT/r2.json" "$VT/r2c.json"
rm -f "$VT/grant2/attempt"
touch "$VT/grant2/go"
/bin/sh -c "$(attack "$VT/grant2" "$VT/r2c.json")"
is "$(tr '\n' ' ' <"$VT/grant2/attempt" 2>/dev/null)/$(json_get "$VT/r2c.json" '["run"]["exit_code"]')" "mv write /0" \
	"2 control: unsandboxed, both attempts work and the file claims exit 0"

# ============================================ 3. a symlink at the report path
VICTIM=$REPORTS/victim3.txt
echo precious >"$VICTIM"
want=$(sum "$VICTIM")
LINK=$REPORTS/r3.json
ln -s "$VICTIM" "$LINK"
R --report "$LINK" -- /bin/sh -c "echo ran > '$W/marker3'"
is $? 125 "3: --report at a symlink to a victim file: refused (exit 125)"
ok "$(absent "$W/marker3")" "3:   before the command runs"
is "$(sum "$VICTIM")/$(readlink "$LINK")" "$want/$VICTIM" "3:   the victim is unchanged, and the link is left alone"
like "$(cat "$ERR")" "^moat: --report $LINK: is a symbolic link \(to $VICTIM\).*neither follows nor replaces" \
	"3:   stderr says what is there"
like "$(cat "$ERR")" "hint: name the file it leads to: --report $VICTIM" "3:   and the name to give"
no_temp_left "$REPORTS" "3:   no temporary file is left"
R --report "$VICTIM" -- /bin/true
is "$?/$(json_get "$VICTIM" '["run"]["exit_code"]' 2>/dev/null)" "0/0" "3:   the name the hint gives works"
valid_report "$VICTIM" "3:  "
echo precious >"$VICTIM"
# A link to moat's own output (as /dev/stdout is): renaming over it would
# destroy the link (as root, the system's /dev/stdout), and the command
# shares that stream.
ln -s /proc/self/fd/1 "$REPORTS/out.json"
R --report "$REPORTS/out.json" -- /bin/true >"$SCRATCH/out3"
is "$?/$(readlink "$REPORTS/out.json")/$(wc -c <"$SCRATCH/out3")" "125//proc/self/fd/1/0" \
	"3: --report at a link to /proc/self/fd/1: refused, the link left alone, nothing on stdout"
like "$(cat "$ERR")" "hint: .*--report-fd 3 3>FILE" "3:   the hint names --report-fd"
if [ "$IS_ROOT" = 1 ] && command -v unshare >/dev/null; then
	# /dev/stdout itself, in a mount namespace whose /dev is a scratch copy
	# (a regression must not replace the machine's own /dev/stdout).
	DEV3=$SCRATCH/dev3
	mkdir "$DEV3" && cp -a /dev/null /dev/zero /dev/urandom "$DEV3"/ && ln -s /proc/self/fd/1 "$DEV3/stdout"
	unshare -m sh -c 'mount --bind "$1" /dev && exec "$2" run --report /dev/stdout -- /bin/true' sh "$DEV3" "$MOAT" \
		>"$SCRATCH/out3" 2>"$ERR"
	is "$?/$(readlink "$DEV3/stdout")/$(wc -c <"$SCRATCH/out3")" "125//proc/self/fd/1/0" \
		"3: root's --report /dev/stdout: refused, /dev/stdout left a link, nothing written"
	like "$(cat "$ERR")" "^moat: --report /dev/stdout: is a symbolic link \(to /proc/self/fd/1\)" "3:   and says why"
	unshare -m sh -c 'mount --bind "$1" /dev && echo x >/dev/.r3 && mv /dev/.r3 /dev/stdout' sh "$DEV3" 2>/dev/null
	ok $([ -f "$DEV3/stdout" ] && [ ! -L "$DEV3/stdout" ] && echo 0 || echo 1) \
		"3 control: there a rename over /dev/stdout (what moat did) replaces the link with a file"
else
	for d in "3: root's --report /dev/stdout" "3:   and says why" "3 control: root can replace a link in /dev"; do
		skip_root "$d"
	done
fi
ln -s "$VICTIM" "$REPORTS/r3c.json"
: >"$REPORTS/r3c.json"
is "$(wc -c <"$VICTIM")" 0 "3 control: ': > link' truncates the victim (the attack is real)"
# A symlink in the directory part: refused, naming where it leads.
mkdir "$REPORTS/realdir"
ln -s "$REPORTS/realdir" "$REPORTS/dirlink"
R --report "$REPORTS/dirlink/r.json" -- /bin/true
is "$?/$(ls -A "$REPORTS/realdir")" "125/" "3: a symlink in the report's directory part is refused, nothing written"
like "$(cat "$ERR")" "$REPORTS/dirlink is a symlink" "3:   naming the link"
like "$(cat "$ERR")" "hint: .*--report $REPORTS/realdir/r\.json" "3:   and the hint the directory it leads to"
: >"$REPORTS/dirlink/c"
ok $([ -e "$REPORTS/realdir/c" ] && echo 0 || echo 1) "3 control: a name through the link lands in the directory it leads to"

# ====================== 4. a symlink another user planted in a sticky directory
if [ "$IS_ROOT" = 1 ]; then
	ST=$(mktemp -d /tmp/moat-sticky.XXXXXX)
	EXTRA="$EXTRA $ST"
	chmod 1777 "$ST"
	V4=$REPORTS/victim4.txt
	echo precious >"$V4"
	want=$(sum "$V4")
	as_nobody ln -s "$V4" "$ST/r.json"
	R --report "$ST/r.json" --write "$W" -- /bin/sh -c "echo ran > '$W/marker4'"
	is $? 125 "4: root's moat, --report at uid 65534's symlink in a sticky dir: exit 125"
	ok "$(absent "$W/marker4")" "4:   refused before the command runs"
	like "$(cat "$ERR")" "--report $ST/r\.json: a symlink there belongs to uid 65534.*sticky directory" \
		"4:   and says why, naming the owner"
	is "$(sum "$V4")" "$want" "4:   the victim is untouched"
	is "$(stat -c %U "$ST/r.json")/$([ -L "$ST/r.json" ] && echo link)" "$(id -un 65534)/link" \
		"4:   the other user's link is left alone"
	# Planted while the command runs: found when the report is written.
	rm -f "$W/started4" "$W/go4"
	R --report "$ST/r2.json" --write "$W" -- /bin/sh -c "touch '$W/started4'; $(until_go "$W/go4"); exit 0" &
	pid=$!
	wait_for "$W/started4"
	as_nobody ln -s "$V4" "$ST/r2.json"
	touch "$W/go4"
	wait "$pid"
	is $? 125 "4: a link planted during the run: the command exited 0, moat exits 125"
	like "$(cat "$ERR")" "--report $ST/r2\.json: a symlink there belongs to uid 65534" "4:   and says why"
	is "$(sum "$V4")/$([ -L "$ST/r2.json" ] && echo link)" "$want/link" "4:   the victim and the link are untouched"
	no_temp_left "$ST" "4:   no temporary file is left"
	# Controls: root passes the sticky bit, so a rename would replace the
	# other user's entry; and root's open follows the link.
	as_nobody ln -s "$V4" "$ST/c1.json"
	echo mine >"$ST/tmp-c1"
	mv -f "$ST/tmp-c1" "$ST/c1.json"
	is "$(cat "$ST/c1.json")/$(stat -c %U "$ST/c1.json")" "mine/root" \
		"4 control: root's rename replaces uid 65534's link in the sticky dir (moat must check the owner itself)"
	as_nobody ln -s "$V4" "$ST/c2.json"
	if [ "$(cat /proc/sys/fs/protected_symlinks 2>/dev/null)" = 0 ]; then
		: >"$ST/c2.json"
		is "$(wc -c <"$V4")" 0 "4 control: root's ': > link' truncates the victim (fs.protected_symlinks=0 here)"
	else
		TAP_N=$((TAP_N + 1))
		echo "ok $TAP_N # SKIP fs.protected_symlinks=1: the kernel itself refuses root's open through the link here"
	fi
else
	for d in "4: root's moat and uid 65534's symlink in a sticky dir" "4:   refused before the command runs" \
		"4:   says why" "4:   the victim is untouched" "4:   the link is left alone" "4: planted during the run" \
		"4:   says why" "4:   untouched" "4:   no temporary file" "4 control: root's rename" "4 control: root's open"; do
		skip_root "$d"
	done
fi

# ============================ 5. a directory others can write, without sticky
OPEN=$REPORTS/open
mkdir "$OPEN"
chmod 0777 "$OPEN"
R --write "$W" --report "$OPEN/r.json" -- /bin/sh -c "echo ran > '$W/marker5'"
is "$?/$(absent "$W/marker5")/$(absent "$OPEN/r.json")" "125/0/0" "5: a directory every user can write (0777): refused, nothing runs"
like "$(cat "$ERR")" "--report $OPEN/r\.json: the directory $OPEN is writable by every user and not sticky" "5:   naming it"
like "$(cat "$ERR")" "hint: .*chmod go-w $OPEN.*sticky" "5:   with a hint"
chmod 0775 "$OPEN"
R --report "$OPEN/r.json" -- /bin/true
is "$?/$(absent "$OPEN/r.json")" "125/0" "5: group-writable (0775): refused"
like "$(cat "$ERR")" "writable by its group and not sticky" "5:   naming the group"
chmod 0777 "$OPEN"
mkdir -m 0755 "$OPEN/inner"
R --report "$OPEN/inner/r.json" -- /bin/true
is "$?/$(absent "$OPEN/inner/r.json")" "125/0" "5: a directory below one every user can write: refused"
like "$(cat "$ERR")" "the directory $OPEN is writable by every user" "5:   naming the directory above"
rmdir "$OPEN/inner"
chmod 1777 "$OPEN"
R --report "$OPEN/r.json" -- /bin/true
is $? 0 "5 control: the same directory with the sticky bit (1777): written"
valid_report "$OPEN/r.json" "5 control:  "
if [ "$IS_ROOT" = 1 ]; then
	CTL=$SCRATCH/open-ctl # reachable by uid 65534 (not below $REPORTS)
	mkdir "$CTL"
	chmod 0777 "$CTL"
	echo moat >"$CTL/r.json"
	as_nobody /bin/sh -c "echo forged > '$CTL/f' && mv -f '$CTL/f' '$CTL/r.json'" 2>/dev/null
	is "$(cat "$CTL/r.json")" forged "5 control: in a 0777 directory another user replaces root's file (the attack is real)"
else
	skip_root "5 control: another user replaces a file in a 0777 directory"
fi

# =================================================== 6. --report-fd N
R --report-fd 3 --write "$W" -- /bin/sh -c "echo ran > '$W/marker6'" 3>/dev/null
is "$?/$(absent "$W/marker6")" "125/0" "6: --report-fd to /dev/null (a character device): refused, nothing runs"
like "$(cat "$ERR")" "--report-fd 3: is a character device" "6:   naming what it is"
like "$(cat "$ERR")" "hint: .*pipe" "6:   with a hint"
R --report-fd 3 --write "$W" -- /bin/sh -c "echo ran > '$W/marker6d'" 3<"$REPORTS"
is "$?/$(absent "$W/marker6d")" "125/0" "6: --report-fd to a directory: refused, nothing runs"
like "$(cat "$ERR")" "--report-fd 3: is a directory" "6:   naming what it is"
{ "$MOAT" run --report-fd 3 -- /bin/true 3>&1 >/dev/null 2>"$ERR"; echo "$?" >"$SCRATCH/rc6"; } | cat >"$REPORTS/r6p.json"
is "$(cat "$SCRATCH/rc6")/$(json_get "$REPORTS/r6p.json" '["run"]["exit_code"]' 2>/dev/null)" "0/0" "6: a pipe works"
valid_report "$REPORTS/r6p.json" "6:  "
R --report-fd 3 -- /bin/true 3>"$REPORTS/r6f.json"
is "$?/$(json_get "$REPORTS/r6f.json" '["run"]["exit_code"]' 2>/dev/null)" "0/0" "6: a regular file the caller owns works"
valid_report "$REPORTS/r6f.json" "6:  "
out=$("$MOAT" run --mode off --report-fd 3 -- "$HELPER" fds 3>"$REPORTS/r6off.json" 2>/dev/null)
unlike " $out " " 3 " "6: the command never inherits the descriptor, also with --mode off (it has: $out)"
valid_report "$REPORTS/r6off.json" "6:  "
out=$(/bin/sh -c "'$HELPER' fds" 3>"$SCRATCH/plain3")
like " $out " " 3 " "6 control: a child started without moat inherits descriptor 3 ($out)"
# A descriptor the command inherits must not be the report's own object.
R --report-fd 3 --keep-fd 4 --write "$W" -- /bin/sh -c "echo ran > '$W/marker6k'" 3>"$REPORTS/r6k.json" 4>&3
is "$?/$(absent "$W/marker6k")" "125/0" "6: --keep-fd 4 that is the report's file (4>&3): refused, nothing runs"
like "$(cat "$ERR")" "descriptor 4, which the command inherits, is the same file" "6:   saying why"
R --report-fd 3 --keep-fd 3 -- /bin/true 3>"$REPORTS/r6k.json"
is $? 125 "6: --keep-fd of the report's descriptor itself: refused"
{ "$MOAT" run --report-fd 3 -- /bin/true 3>&1 2>"$ERR"; echo "$?" >"$SCRATCH/rc6"; } | cat >/dev/null
is "$(cat "$SCRATCH/rc6")" 125 "6: the report on the command's own stdout pipe (3>&1): refused"
like "$(cat "$ERR")" "descriptor 1, which the command inherits, is the same pipe" "6:   saying why"
if [ "$IS_ROOT" = 1 ]; then
	OTHER=$SCRATCH/others.json
	echo theirs >"$OTHER"
	chown 65534 "$OTHER"
	R --report-fd 3 -- /bin/true 3>>"$OTHER"
	is "$?/$(cat "$OTHER")" "125/theirs" "6: root's moat, --report-fd to uid 65534's file: refused, the file untouched"
	like "$(cat "$ERR")" "a file owned by uid 65534" "6:   naming the owner"
	{ echo written-by-root >&3; } 3>>"$OTHER"
	like "$(cat "$OTHER")" written-by-root "6 control: root writes into another user's file through such a descriptor"
else
	skip_root "6: --report-fd to another user's file"
	skip_root "6:   naming the owner"
	skip_root "6 control: root writes another user's file"
fi

# A file or a named FIFO given by descriptor whose name lies in a write
# grant: the command put its own report at the name (the caller reads the
# name), or wrote into the FIFO first.  --report refused that directory;
# the descriptor was taken without a word.
R --report-fd 3 --write "$W" -- /bin/sh -c "printf '{\"status\": \"enforced\", \"forged\": 1}' >'$W/r6g.new' && mv '$W/r6g.new' '$W/r6g.json'" \
	3>"$W/r6g.json"
is "$?/$(cat "$W/r6g.json")" "125/" "6: --report-fd to a file in a write grant: refused, nothing runs (the command would forge it)"
like "$(cat "$ERR")" "^moat: --report-fd 3: $W/r6g\\.json lies in the write grant $W: the command could put a file of its own at that name" \
	"6:   naming the file and the grant"
mkfifo "$W/r6g.fifo"
cat "$W/r6g.fifo" >"$SCRATCH/r6g.fifo.out" &
reader=$!
R --report-fd 3 --write "$W" -- /bin/sh -c "echo FORGED > '$W/r6g.fifo'" 3>"$W/r6g.fifo"
rc=$?
wait "$reader"
is "$rc/$(grep -c FORGED "$SCRATCH/r6g.fifo.out")" "125/0" "6: --report-fd to a named FIFO in a write grant: refused, the command writes nothing into it"
R --report-fd 3 --events-fd 4 --write "$W" -- /bin/true 3>"$REPORTS/r6g.json" 4>"$W/r6g.events"
is "$?" 125 "6: --events-fd to a file in a write grant: refused too"
R --report-fd 3 --write "$W" -- /bin/true 3>"$REPORTS/r6g.json"
is "$?" 0 "6 control: the report's file outside the write grant: the run goes on"
rm -f "$W/r6g.json" "$W/r6g.fifo" "$W/r6g.events"

# ================== 6b. a large report through a pipe the caller made non-blocking
# An event loop's pipes are O_NONBLOCK, and the flag is the pipe's, shared
# with moat's descriptor.  The command decides the report's size (here: its
# argv, each byte \xff shown as "\\xff" in command.argv); past the pipe's
# 64 KiB moat's write said EAGAIN: exit 125, a truncated report in the pipe.
# Now moat waits for the reader, as a blocking write does, and first grows
# a pipe too small for the report (fs.pipe-max-size allowing), so that a
# caller reading only after moat exited gets it too.
NB=$SCRATCH/nbpipe.py
cat >"$NB" <<'EOP'
import json, os, subprocess, sys, threading
moat, when, nargs, argbytes = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
r, w = os.pipe()
os.set_blocking(w, False)
args = [b"\xff" * argbytes] * nargs
data = []
def drain():
    while True:
        c = os.read(r, 1 << 16)
        if not c:
            return
        data.append(c)
reader = threading.Thread(target=drain)
if when == "during":
    reader.start()
p = subprocess.Popen([moat, "run", "--report-fd", str(w), "--", "/bin/true"] + args, pass_fds=[w],
                     stderr=subprocess.PIPE)
os.close(w)
try:
    _, err = p.communicate(timeout=60)
except subprocess.TimeoutExpired:
    p.kill()
    _, err = p.communicate()
    print("moat still waited after 60 s (killed)")
if when == "after":
    reader.start()
reader.join(timeout=30)
text = b"".join(data)
try:
    n = len(json.loads(text)["command"]["argv"]) - 1
except ValueError:
    n = "invalid JSON"
print("rc %s, %s arguments in the report (%s)" % (p.returncode, n, "over 64 KiB" if len(text) > 65536 else "small"))
sys.stderr.write(err.decode(errors="replace")[-300:])
EOP
# 300 arguments of 1000 bytes: a report of ~1.5 MB, over fs.pipe-max-size
# (1 MiB) for a user without CAP_SYS_RESOURCE: moat waits for the reader.
out=$(/usr/bin/python3 "$NB" "$MOAT" during 300 1000 2>"$ERR")
is "$out" "rc 0, 300 arguments in the report (over 64 KiB)" \
	"6b: a ~1.5 MB report through a non-blocking pipe read while moat runs: whole and valid JSON"
is "$(cat "$ERR")" "" "6b:   and moat said nothing (no EAGAIN)"
# 40 arguments of 1000 bytes: ~200 KB, read only after moat exited.
out=$(/usr/bin/python3 "$NB" "$MOAT" after 40 1000 2>"$ERR")
is "$out" "rc 0, 40 arguments in the report (over 64 KiB)" \
	"6b: a ~200 KB report through a non-blocking pipe read only after moat exited: moat grew the pipe, no deadlock"
# Control: the same report through a regular file, so the size is the command's doing.
R --report-fd 3 -- /bin/true $(for _ in $(seq 40); do printf '\xff%.0s' $(seq 1000); printf ' '; done) 3>"$REPORTS/r6b.json"
ok $([ "$(wc -c <"$REPORTS/r6b.json")" -gt 65536 ] && echo 0 || echo 1) \
	"6b control: the command's argv alone makes the report over 64 KiB ($(wc -c <"$REPORTS/r6b.json") bytes)"
# The events' descriptor is made non-blocking (a line that does not fit
# is dropped): the same pipe as the report's would make the report's
# non-blocking too, and mix the lines into it.
R --mode prefer --allow-net 127.0.0.2 --report-fd 3 --events-fd 4 -- /bin/true 3>"$REPORTS/r6e.json" 4>&3
is "$?/$(wc -c <"$REPORTS/r6e.json")" "125/0" "6b: --events-fd 4 4>&3 beside --report-fd 3: refused, nothing written"
like "$(cat "$ERR")" "^moat: --events-fd 4: is the same file as --report-fd 3: the event lines would run into the report" \
	"6b:   saying why"
like "$(cat "$ERR")" "hint: give the events a pipe or file of their own: --events-fd 4 4>events.jsonl" "6b:   with the fix"
{ "$MOAT" run --mode prefer --allow-net 127.0.0.2 --report-fd 3 --events-fd 4 -- /bin/true 3>&1 4>&1 >/dev/null \
	2>"$ERR"; echo "$?" >"$SCRATCH/rc6"; } | cat >/dev/null
is "$(cat "$SCRATCH/rc6")" 125 "6b: the same pipe for both (3>&1 4>&1): refused"
like "$(cat "$ERR")" "is the same pipe as --report-fd 3: .*non-blocking writes of the events would be the report's too" \
	"6b:   saying why"
R --mode prefer --allow-net 127.0.0.2 --report-fd 3 --events-fd 4 -- /bin/true 3>"$REPORTS/r6e.json" 4>"$SCRATCH/ev6"
is "$?/$(json_get "$REPORTS/r6e.json" '["run"]["exit_code"]' 2>/dev/null)" "0/0" "6b control: a file of their own each: runs, the report whole"

# ====================== 7. a command whose writes nothing confines: no report file
R --mode off --report "$REPORTS/r7.json" -- /bin/sh -c "echo ran > '$W/marker7'"
is "$?/$(absent "$W/marker7")/$(absent "$REPORTS/r7.json")" "125/0/0" "7: --mode off with --report FILE: refused, nothing runs"
like "$(cat "$ERR")" "--report $REPORTS/r7\.json: the sandbox is off .*: the command could write" "7:   saying why"
like "$(cat "$ERR")" "hint: use --report-fd" "7:   with the way that works"
MOAT_HOST_LIMIT=landlock=0,userns=0,root=0 R --backend native --mode prefer --report "$REPORTS/r7.json" -- /bin/true
is "$?/$(absent "$REPORTS/r7.json")" "125/0" "7: prefer with neither Landlock nor namespaces (fs.write not enforced): refused"
like "$(cat "$ERR")" "fs.write is not enforced" "7:   saying why"
R --mode off --report-fd 3 -- /bin/sh -c "printf '%s' '$FORGED' > '$REPORTS/r7c.json'" 3>"$REPORTS/r7off.json"
is "$?/$(json_get "$REPORTS/r7c.json" '["status"]' 2>/dev/null)" "0/enforced" \
	"7 control: unsandboxed, the command writes a forged report into the report's directory"
valid_report "$REPORTS/r7off.json" "7 control:   (moat's own report came through the descriptor)"
rm -f "$REPORTS/r7c.json"

# ====================================== 8. other refusals, and the dry run
R --report "$REPORTS/" --write "$W" -- /bin/sh -c "echo ran > '$W/marker8'"
is "$?/$(absent "$W/marker8")" "125/0" "8: --report DIR/ (a name ending in /): refused, nothing runs"
like "$(cat "$ERR")" "names a directory, not a file" "8:   saying why"
R --report "$REPORTS/realdir" -- /bin/true
is "$?/$(ls -A "$REPORTS/realdir" | tr '\n' ' ')" "125/c " "8: --report of an existing directory: refused, nothing written in it"
like "$(cat "$ERR")" "--report $REPORTS/realdir: is a directory" "8:   saying why"
R --report "$REPORTS/r8.json" --report-fd 3 -- /bin/true 3>"$REPORTS/r8fd.json"
is "$?/$(absent "$REPORTS/r8.json")/$(wc -c <"$REPORTS/r8fd.json")" "125/0/0" "8: --report and --report-fd together: refused"
"$MOAT" run --dry-run --write "$W" --report "$W/r8.json" -- /bin/true >"$SCRATCH/dry.json" 2>"$ERR"
is "$?/$(absent "$W/r8.json")" "0/0" "8: --dry-run with --report in the grant: exit 0 as before, the report path untouched"
valid_report "$SCRATCH/dry.json" "8:   the dry run's report on stdout"
echo precious >"$VICTIM"
want=$(sum "$VICTIM")
ln -sf "$VICTIM" "$REPORTS/r8l.json"
"$MOAT" run --dry-run --report "$REPORTS/r8l.json" -- /bin/true >/dev/null 2>&1
is "$(sum "$VICTIM")/$([ -L "$REPORTS/r8l.json" ] && echo link)" "$want/link" "8: --dry-run never opens the report path (a link there is not followed)"

# ===================== 9. the directory changing during the run: nothing replaced
LATE=$REPORTS/late
mkdir -m 0755 "$LATE"
echo old >"$LATE/r.json"
for code in 0 3; do
	rm -f "$W/started9" "$W/go9"
	R --write "$W" --report "$LATE/r.json" -- /bin/sh -c "touch '$W/started9'; $(until_go "$W/go9"); exit $code" &
	pid=$!
	wait_for "$W/started9"
	chmod 0777 "$LATE"
	touch "$W/go9"
	wait "$pid"
	rc=$?
	chmod 0755 "$LATE"
	if [ "$code" = 0 ]; then
		is "$rc" 125 "9: the directory made writable by all during the run: the command exited 0, moat exits 125"
		like "$(cat "$ERR")" "the directory $LATE is writable by every user" "9:   saying why"
	else
		is "$rc" 125 "9: the same when the command exited 3: moat exits 125 (no report, whatever the command did)"
	fi
	is "$(cat "$LATE/r.json")" old "9:   what was at the name is left as it was"
	no_temp_left "$LATE" "9:   and the temporary file is removed"
done
R --write "$W" --report "$LATE/r.json" -- /bin/true
is "$?/$(json_get "$LATE/r.json" '["run"]["exit_code"]' 2>/dev/null)" "0/0" "9 control: unchanged, the report replaces the old file"
valid_report "$LATE/r.json" "9 control:  "

# ======================== 10. the checks docs/report.md gives an integrator
# moat's exit status is run.exit_code: a run that exits 7, and a refusal.
R --report "$REPORTS/r10.json" -- /bin/sh -c 'exit 7'
is "$?/$(json_get "$REPORTS/r10.json" '["run"]["exit_code"]')" "7/7" "10: moat's exit status equals run.exit_code (7)"
valid_report "$REPORTS/r10.json" "10:  "
MOAT_HOST_LIMIT=landlock=0,userns=0,root=0 R --backend native --report "$REPORTS/r10u.json" -- /bin/true
is "$?/$(json_get "$REPORTS/r10u.json" '["status"]')/$(json_get "$REPORTS/r10u.json" '["run"]["exit_code"]')" \
	"125/unavailable/125" \
	"10:   and for a refusal (125, unavailable)"
valid_report "$REPORTS/r10u.json" "10:  "
# policy_digest is what the dry run of the same arguments prints.
"$MOAT" run --dry-run --read "$HELPER_DIR" -- /bin/sh -c 'exit 7' >"$SCRATCH/dry10.json" 2>/dev/null
R --read "$HELPER_DIR" --report "$REPORTS/r10d.json" -- /bin/sh -c 'exit 7'
is "$(json_get "$REPORTS/r10d.json" '["policy_digest"]')" "$(json_get "$SCRATCH/dry10.json" '["policy_digest"]')" \
	"10: policy_digest equals the dry run's for the same arguments"
valid_report "$REPORTS/r10d.json" "10:  "
"$MOAT" run --dry-run --read "$HELPER_DIR" --net loopback -- /bin/sh -c 'exit 7' >"$SCRATCH/dry10b.json" 2>/dev/null
ok $([ "$(json_get "$SCRATCH/dry10b.json" '["policy_digest"]')" != "$(json_get "$REPORTS/r10d.json" '["policy_digest"]')" ] &&
	echo 0 || echo 1) "10 control: another policy (--net loopback) has another digest"

# ======================== 11. strings that are not UTF-8
# A path or an argument is any bytes; JSON is UTF-8.  jansson refused such
# a string, and the object holding it was left out without a word: the
# argument vanished from command.argv, a grant named in Latin-1 from
# filesystem.paths (and the dry run's whole "policy").  Each is kept, its
# stray bytes shown as \xNN.
LATIN=$SCRATCH/$'caf\xe9'
mkdir -p "$LATIN"
R --read "$LATIN" --report "$REPORTS/r11.json" -- /bin/echo $'a\xffb' plain >/dev/null
is "$?" 0 "11: a Latin-1 grant and argument run"
valid_report "$REPORTS/r11.json" "11:  "
is "$(json_get "$REPORTS/r11.json" '["command"]["argv"]')" '["/bin/echo", "a\\xffb", "plain"]' \
	"11: command.argv keeps the argument, its byte as \\xff"
want_grant=$(printf '["%s/caf\\\\xe9"]' "$SCRATCH")
is "$(json_eval "$REPORTS/r11.json" '[p["path"] for p in d["filesystem"]["paths"] if p["path"].endswith("/caf\\xe9")]')" \
	"$want_grant" "11: filesystem.paths keeps the grant"
"$MOAT" run --dry-run --read "$LATIN" -- /bin/true >"$SCRATCH/dry11.json" 2>/dev/null
is "$(json_eval "$SCRATCH/dry11.json" '[p["path"] for p in d["policy"]["paths"] if p["path"].endswith("/caf\\xe9")]')" \
	"$want_grant" "11: the dry run's policy is there, with the grant"

# ======================== 12. the per-run TMPDIR left on the host
# Without a mount namespace the command's TMPDIR is a directory on the
# host's /tmp, removed after the run.  Its removal came after the report
# was written: one that failed (a tree of more entries than moat removes in
# one go; here strace refuses moat's unlinkat, EBUSY) was said on stderr
# alone, the report saying fs.tmp enforced, "removed afterwards", and no
# run.left_on_host.  Now the report says it.  Control: without the fault,
# enforced and removed.  (Root only: strace sees a non-dumpable moat's
# calls only as root.)
if [ "$IS_ROOT" = 1 ] && command -v strace >/dev/null; then
	out=$(MOAT_HOST_LIMIT=userns=0,root=0 strace -f -qq --seccomp-bpf -o /dev/null -e trace=unlinkat \
		-e inject=unlinkat:error=EBUSY "$MOAT" run --mode prefer --report "$REPORTS/tmp12.json" -- \
		/bin/sh -c 'echo x >"$TMPDIR/f"; echo "$TMPDIR"' 2>"$SCRATCH/err12")
	T12=$out
	EXTRA="$EXTRA $T12"
	ok "$([ -n "$T12" ] && [ -d "$T12" ] && echo 0 || echo 1)" "12: moat's removal refused: the per-run TMPDIR $T12 is left"
	like "$(cat "$SCRATCH/err12")" "warning: the per-run TMPDIR $T12 is left on the host" "  said on stderr"
	is "$(json_get "$REPORTS/tmp12.json" '["properties"]["fs.tmp"]["status"]')" missing "  and fs.tmp is missing in the report"
	is "$(json_eval "$REPORTS/tmp12.json" '[(e["path"], e["what"], e["state"]) for e in d["run"]["left_on_host"]]')" \
		"[[\"$T12\", \"tmpdir\", \"left\"]]" "  run.left_on_host names it"
	valid_report "$REPORTS/tmp12.json" "  (tmp12.json is valid against docs/report.schema.json)"
	rm -rf "$T12"
	out=$(MOAT_HOST_LIMIT=userns=0,root=0 "$MOAT" run --mode prefer --report "$REPORTS/tmp12c.json" -- \
		/bin/sh -c 'echo x >"$TMPDIR/f"; echo "$TMPDIR"' 2>/dev/null)
	ok "$([ -n "$out" ] && [ ! -e "$out" ] && echo 0 || echo 1)" "12: control: without the fault it is removed"
	is "$(json_eval "$REPORTS/tmp12c.json" '[d["properties"]["fs.tmp"]["status"], d["run"].get("left_on_host")]')" \
		'["enforced", null]' "  fs.tmp enforced, nothing left on the host"
else
	for i in 1 2 3 4 5 6 7; do skip "12: strace injects faults into a non-dumpable moat only as root (uid $(id -u))"; done
fi

# ================= 13. a backend's work directory, a cgroup, left on the host
# The oci backend's work directory and the tree's cgroup (--memory) were
# removed after the report was written: one that could not be removed was
# said on stderr alone (the work directory) or nowhere (the cgroup), and the
# report had no run.left_on_host.  Now both are removed before it and the
# report names what is left.  strace (moat's own process, not -f: the
# runtime's calls are left alone) refuses moat's unlinkat (the work
# directory's files) and rmdir (the cgroup).  Controls: without the fault,
# nothing is left and the report says nothing.  (Root only, as 12.  A
# sanitizer build's leak check cannot run under ptrace: off there.)
NOLSAN="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
if [ "$IS_ROOT" = 1 ] && command -v strace >/dev/null; then
	if command -v runc >/dev/null || command -v crun >/dev/null; then
		env "$NOLSAN" strace -qq -o /dev/null -e trace=unlinkat -e inject=unlinkat:error=EBUSY \
			"$MOAT" run --backend oci --report "$REPORTS/wd13.json" -- /bin/true 2>"$SCRATCH/err13"
		is "$?/$(json_get "$REPORTS/wd13.json" '["backend"]')" "0/oci" "13: an oci run whose work directory's removal is refused"
		W13=$(json_eval "$REPORTS/wd13.json" '" ".join(e["path"] for e in d["run"].get("left_on_host", []) if e["what"] == "workdir" and e["state"] == "left")' | tr -d '"')
		ok "$([ -n "$W13" ] && [ -d "$W13" ] && echo 0 || echo 1)" "13:   run.left_on_host names the work directory, which is there ($W13)"
		like "$(cat "$SCRATCH/err13")" "warning: the backend's work directory $W13 is left on the host" "13:   said on stderr too"
		valid_report "$REPORTS/wd13.json" "13:  "
		[ -n "$W13" ] && rm -rf "$W13"
		"$MOAT" run --backend oci --report "$REPORTS/wd13c.json" -- /bin/true 2>/dev/null
		is "$?/$(json_eval "$REPORTS/wd13c.json" 'd["run"].get("left_on_host")')" "0/null" \
			"13 control: without the fault, nothing left on the host"
	else
		for i in 1 2 3 4 5; do skip "13: the oci backend needs runc or crun, not installed"; done
	fi
	if "$MOAT" run --memory 64M --report "$REPORTS/cg13p.json" -- /bin/true 2>/dev/null &&
		[ "$(json_eval "$REPORTS/cg13p.json" 'd["limits"]["memory"]["mechanism"].startswith("moat")' 2>/dev/null)" = true ]; then
		env "$NOLSAN" strace -qq -o /dev/null -e trace=rmdir -e inject=rmdir:error=EBUSY \
			"$MOAT" run --memory 64M --report "$REPORTS/cg13.json" -- /bin/true 2>"$SCRATCH/err13c"
		is "$?" 0 "13: a run under --memory (moat's cgroup) whose cgroup's removal is refused"
		C13=$(json_eval "$REPORTS/cg13.json" '" ".join(e["path"] for e in d["run"].get("left_on_host", []) if e["what"] == "cgroup" and e["state"] == "left")' | tr -d '"')
		ok "$([ -n "$C13" ] && [ -d "$C13" ] && echo 0 || echo 1)" "13:   run.left_on_host names the cgroup, which is there ($C13)"
		like "$(cat "$SCRATCH/err13c")" "warning: the run's cgroup ${C13%% *} is left on the host" "13:   said on stderr too"
		valid_report "$REPORTS/cg13.json" "13:  "
		for c in $C13; do rmdir "$c"; done
		is "$(json_eval "$REPORTS/cg13p.json" 'd["run"].get("left_on_host")')" "null" \
			"13 control: without the fault, no cgroup left on the host"
	else
		for i in 1 2 3 4 5; do skip "13: --memory is held by no cgroup of moat's on this host (moat probe)"; done
	fi
else
	for i in 1 2 3 4 5 6 7 8 9 10; do skip "13: strace injects faults into a non-dumpable moat only as root (uid $(id -u))"; done
fi

done_testing
