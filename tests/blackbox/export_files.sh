#!/usr/bin/env bash
# What `moat export -o DIR` leaves in DIR is one export, whole, and what it
# cannot write faithfully it refuses.
#
#   1. An export into a DIR that holds an earlier one of another backend:
#      the earlier run.sh (bwrap's, here with the whole network) stayed
#      beside the new argv.json and report.json (nsjail's, net none), and
#      `bash DIR/run.sh` ran the old policy under the new report.  Now the
#      export files of every backend (argv.json, report.json, run.sh,
#      env.args, seccomp.bpf, nsjail.cfg, seccomp.kafel, profile.sb,
#      config.json) are removed first from a directory that holds an
#      earlier export (its report.json is moat's) or that the export made.
#      Controls: the earlier run.sh was there, with the host's network; a
#      directory of the user's keeps its own config.json.
#   1b. Nothing of the user's is lost: only the earlier export's own files
#      are removed (a config.json beside a bwrap export stays through a
#      second one), and a file of the user's at a name this export writes
#      (run.sh, config.json) refuses the export instead of being replaced;
#      so does a run's report.json (moat run --report): no export wrote it.
#   2. An argument that is not UTF-8 cannot be a JSON string: argv.json
#      dropped it without a word (`echo a\xffb hello` became ["echo",
#      "hello"]), so argv.json's argv was not run.sh's.  Now the export is
#      refused, naming it, with nothing runnable left in DIR.  Control: the
#      same export of a UTF-8 argument writes it.
#   3. moat writes what will run (run.sh, config.json) into -o DIR by name,
#      as root too.  A DIR another user owns, or that others may write, or
#      reached through a symlink, was taken: root's export went into
#      uid 65534's 0777 directory (which could then swap run.sh, or the
#      directory for a link to /etc, or put a FIFO at a name); and a link
#      planted at the name led root's export wherever it pointed.  Now each
#      is refused (exit 125, naming the directory) with nothing written, and
#      nothing is made below a directory another user owns.  Controls: a new
#      DIR of moat's user, and an existing 0755 one, are exported into.
#   4. A refused export left the -o DIR it had made: `moat export -o
#      ~/export -- cmd` (no --backend: refused, exit 125) left an empty
#      ~/export, as did a k8s export of mode off.  Now a DIR the export made
#      is removed again when it fails; one that was there stays.  Controls:
#      the same exports with --backend bwrap, or without --mode off, make it.
#
# Runs as root and as an unprivileged user.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch_sticky
PY=/usr/bin/python3
D=$SCRATCH/out

# --- 1. one export, whole
(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$D" --net all -- /bin/true >/dev/null 2>&1)
ok "$([ -f "$D/run.sh" ] && echo 0 || echo 1)" "control: a bwrap export (--net all) writes run.sh"
like "$(cat "$D/run.sh")" "exec 'bwrap'" "  which runs bwrap"
unlike "$(cat "$D/run.sh")" "--unshare-net" "  with the host's network"
(cd "$SCRATCH" && "$MOAT" export --backend nsjail -o "$D" --net none -- /bin/true >/dev/null 2>"$SCRATCH/err")
ok $? "an nsjail export (--net none) into the same directory ($(head -c 200 "$SCRATCH/err"))"
ok "$([ ! -e "$D/run.sh" ] && [ ! -e "$D/env.args" ] && [ ! -e "$D/seccomp.bpf" ] && echo 0 || echo 1)" \
	"  bwrap's run.sh, env.args and seccomp.bpf are gone: no script of another policy beside its report ($(ls "$D" | tr '\n' ' '))"
ok "$([ -f "$D/nsjail.cfg" ] && [ -f "$D/argv.json" ] && [ -f "$D/report.json" ] && echo 0 || echo 1)" \
	"  its own files are there"
(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$D" -- /bin/true >/dev/null 2>&1)
ok "$([ ! -e "$D/nsjail.cfg" ] && [ -f "$D/run.sh" ] && echo 0 || echo 1)" "  and back: a bwrap export removes nsjail.cfg"
# A name of the list that is a link is removed as a link, not followed.
echo keep >"$SCRATCH/elsewhere"
ln -sf "$SCRATCH/elsewhere" "$D/run.sh"
(cd "$SCRATCH" && "$MOAT" export --backend nsjail -o "$D" -- /bin/true >/dev/null 2>&1)
is "$([ -L "$D/run.sh" ] && echo link; cat "$SCRATCH/elsewhere")" "keep" "  a link at one of those names is removed, what it led to left alone"
# Only in an export's directory: a directory of the user's keeps its own
# config.json.
mkdir -p "$SCRATCH/mine" && echo mine >"$SCRATCH/mine/config.json"
(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$SCRATCH/mine" -- /bin/true >/dev/null 2>&1)
is "$(cat "$SCRATCH/mine/config.json" 2>&1)" mine "  a directory that held no export keeps a config.json of its own"

# --- 1b. nothing of the user's lost
(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$SCRATCH/mine" -- /bin/true >/dev/null 2>&1)
ok $? "a second bwrap export into the user's directory"
is "$(cat "$SCRATCH/mine/config.json" 2>&1)" mine "  keeps its config.json: the earlier export (bwrap's) wrote none"
out=$(cd "$SCRATCH" && "$MOAT" export --backend oci -o "$SCRATCH/mine" -- /bin/true 2>&1)
is "$?" 125 "an oci export where the user's config.json is: refused"
like "$out" "mine/config.json is there and no moat export wrote it: the oci export would replace it" "  naming it"
like "$out" "hint: export into a new or empty directory" "  with the fix"
is "$(cat "$SCRATCH/mine/config.json" 2>&1)" mine "  the user's config.json is untouched"
ok "$([ -f "$SCRATCH/mine/run.sh" ] && [ -f "$SCRATCH/mine/report.json" ] && echo 0 || echo 1)" \
	"  and the earlier export is still whole"
mkdir -p "$SCRATCH/proj" && echo 'echo mine' >"$SCRATCH/proj/run.sh"
out=$(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$SCRATCH/proj" -- /bin/true 2>&1)
is "$?" 125 "a bwrap export where the user's run.sh is: refused"
is "$(cat "$SCRATCH/proj/run.sh")" "echo mine" "  the user's run.sh is untouched"
ok "$([ ! -e "$SCRATCH/proj/argv.json" ] && [ ! -e "$SCRATCH/proj/report.json" ] && echo 0 || echo 1)" \
	"  and no export file is left there"
(cd "$SCRATCH" && "$MOAT" export --backend nsjail -o "$SCRATCH/proj" -- /bin/true >/dev/null 2>&1)
ok $? "control: an nsjail export (no run.sh of its own) beside it is written"
is "$(cat "$SCRATCH/proj/run.sh")" "echo mine" "  and keeps it"
# A run's report (moat run --report report.json, in the project) is no
# export's: taken for one, its backend's names (oci's config.json) were
# removed from the user's directory, and the report itself replaced.
mkdir -p "$SCRATCH/ran" && echo mine >"$SCRATCH/ran/config.json"
(cd "$SCRATCH/ran" && "$MOAT" run --backend oci --report-fd 3 -- /bin/true 3>report.json >/dev/null 2>"$SCRATCH/ran.err")
is "$($PY -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["backend"], "run" in d)' "$SCRATCH/ran/report.json" 2>&1)" \
	"oci True" "control: a run's report of backend oci beside the user's config.json ($(head -c 300 "$SCRATCH/ran.err"))"
out=$(cd "$SCRATCH" && "$MOAT" export --backend nsjail -o "$SCRATCH/ran" -- /bin/true 2>&1)
is "$?" 125 "an export beside a run's report.json: refused (no export wrote it)"
like "$out" "ran/report.json is there and no moat export wrote it" "  naming the report"
is "$(cat "$SCRATCH/ran/config.json" 2>&1)" mine "  the user's config.json is untouched"
ok "$([ ! -e "$SCRATCH/ran/argv.json" ] && echo 0 || echo 1)" "  and nothing was exported there"

# --- 1c. each backend's list of its files is whole
# What a later export removes is the earlier backend's own list
# (moat_backend.export_files): a file missing from it would stay beside the
# next export's report.  So each backend's export, followed by nono's
# (argv.json and report.json alone), leaves no regular file but those two;
# and a second export of the same backend into its own directory works.
for b in bwrap firejail nsjail oci gvisor seatbelt nono; do
	rm -rf "$SCRATCH/twice"
	(cd "$SCRATCH" && "$MOAT" export --backend $b -o "$SCRATCH/twice" -- /bin/true >/dev/null 2>&1)
	first=$?
	out=$(cd "$SCRATCH" && "$MOAT" export --backend $b -o "$SCRATCH/twice" -- /bin/true 2>&1)
	is "$first/$?" "0/0" "$b: a second export into the first one's directory replaces it$(printf '%s' "$out" | grep 'no moat export wrote' | head -c 160)"
	(cd "$SCRATCH" && "$MOAT" export --backend nono -o "$SCRATCH/twice" -- /bin/true >/dev/null 2>&1)
	is "$(find "$SCRATCH/twice" -maxdepth 1 -type f -printf '%f\n' | sort | tr '\n' ' ')" "argv.json report.json " \
		"  then nono's export: none of $b's files is left"
done
rm -rf "$SCRATCH/twice"

# --- 2. arguments that are not UTF-8
rm -rf "$D"
out=$(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$D" -- /bin/echo "$(printf 'a\xffb')" hello 2>&1)
rc=$?
is "$rc" 125 "an argument that is not UTF-8: refused"
like "$out" "is not UTF-8, which argv.json must be" "  saying why"
like "$out" 'a\\xffb' "  naming it, shown with \\\\xNN"
ok "$([ ! -e "$D/run.sh" ] && [ ! -e "$D/argv.json" ] && [ ! -e "$D/report.json" ] && echo 0 || echo 1)" \
	"  nothing runnable is left in DIR ($(ls "$D" 2>/dev/null | tr '\n' ' '))"
(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$D" -- /bin/echo "$(printf 'a\xc3\xa9b')" hello >/dev/null 2>&1)
is "$($PY -c 'import json, sys; print(json.load(open(sys.argv[1]))[-3:])' "$D/argv.json" 2>&1)" "['/bin/echo', 'aéb', 'hello']" \
	"control: a UTF-8 argument is in argv.json"

# --- 3. a DIR others control
V=$SCRATCH/victim
mkdir -p "$V" && chmod 755 "$V"
rm -rf "$SCRATCH/shared" "$SCRATCH/link" "$SCRATCH/own"
mkdir "$SCRATCH/shared" && chmod 777 "$SCRATCH/shared"
out=$(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$SCRATCH/shared" -- /bin/true 2>&1)
is "$?" 125 "-o a directory every user can write: refused"
like "$out" "shared is writable by every user" "  naming it"
is "$(ls -A "$SCRATCH/shared")" "" "  nothing written there"
chmod 1777 "$SCRATCH/shared"
out=$(cd "$SCRATCH" && "$MOAT" export --backend oci -o "$SCRATCH/shared" -- /bin/true 2>&1)
is "$?" 125 "-o a sticky directory every user can write (as /tmp): refused too"
ln -s "$V" "$SCRATCH/link"
out=$(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$SCRATCH/link" -- /bin/true 2>&1)
is "$?" 125 "-o a symlink (to another directory): refused"
like "$out" "link is a symbolic link" "  naming the link"
out=$(cd "$SCRATCH" && "$MOAT" export --format k8s --image x.example/i:1 -o "$SCRATCH/link/sub" -- /bin/true 2>&1)
is "$?" 125 "-o a directory below a symlink (k8s): refused"
is "$(ls -A "$V")" "" "  nothing written or made where the links lead"
if [ "$(id -u)" = 0 ]; then
	rm -rf "$SCRATCH/theirs"
	mkdir -m 755 "$SCRATCH/theirs" && chown 65534:65534 "$SCRATCH/theirs"
	out=$(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$SCRATCH/theirs" -- /bin/true 2>&1)
	is "$?" 125 "root: -o another user's 0755 directory: refused"
	like "$out" "theirs belongs to uid 65534, not to moat's user" "  naming its owner"
	out=$(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$SCRATCH/theirs/out" -- /bin/true 2>&1)
	is "$?" 125 "root: -o a new directory in another user's: refused"
	is "$(ls -A "$SCRATCH/theirs")" "" "  nothing written or made in theirs"
else
	for i in 1 2 3 4; do skip "another user's directory needs root to make (uid $(id -u))"; done
fi
out=$(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$SCRATCH/own" -- /bin/true 2>&1)
is "$?" 0 "control: a new directory of moat's user: exported $out"
ok "$([ -f "$SCRATCH/own/run.sh" ] && echo 0 || echo 1)" "  run.sh there"
(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o own -- /bin/true >/dev/null 2>&1)
is "$?" 0 "control: the same, existing and 0755, named relatively"

# --- 3b. a directory above DIR others can write, without the sticky bit: any
# user may rename DIR's parent away between moat's check and its writes and
# put a directory of their own in its place, where run.sh would then be
# theirs to change.  Refused as ssh and sudo refuse such a path; sticky
# (as /tmp) it is not.
DROP=$SCRATCH/drop
rm -rf "$DROP" && mkdir -m 0777 "$DROP" && chmod 0777 "$DROP" && mkdir -m 0755 "$DROP/me"
if [ "$(id -u)" = 0 ]; then
	# What the rule stops: another user swaps the user's directory for theirs.
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c \
		"mv '$DROP/me' '$DROP/gone' && mkdir '$DROP/me' && rmdir '$DROP/me' && mv '$DROP/gone' '$DROP/me'"
	is "$?" 0 "3b control: uid 65534 can rename root's directory away in a 0777 directory above it"
else
	skip "renaming another user's directory needs a second user (uid $(id -u))"
fi
out=$(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$DROP/me/out" -- /bin/true 2>&1)
is "$?" 125 "3b: -o DIR below a 0777 directory without the sticky bit: refused"
like "$out" "the directory $DROP above it is writable by every user and not sticky" "3b:   naming that directory"
like "$out" "hint: .*no one else can write unless sticky" "3b:   with a hint"
is "$(ls -A "$DROP/me")" "" "3b:   nothing made or written below it"
out=$(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$DROP/me" -- /bin/true 2>&1)
is "$?" 125 "3b: -o an existing DIR whose parent is such a directory: refused too"
chmod 0775 "$DROP"
out=$(cd "$SCRATCH" && "$MOAT" export --format k8s --image x.example/i:1 -o "$DROP/me/out" -- /bin/true 2>&1)
is "$?" 125 "3b: (k8s) below a directory its group can write, not sticky: refused"
like "$out" "$DROP above it is writable by its group and not sticky" "3b:   naming the group"
chmod 1777 "$DROP"
out=$(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$DROP/me/out" -- /bin/true 2>&1)
is "$?" 0 "3b control: the same directory with the sticky bit (1777): exported $out"
ok "$([ -f "$DROP/me/out/run.sh" ] && echo 0 || echo 1)" "3b control:   run.sh there"

# --- 4. a refused export leaves no directory it made
NEW=$SCRATCH/new-export
rm -rf "$NEW"
out=$(cd "$SCRATCH" && "$MOAT" export -o "$NEW" -- /bin/true 2>&1)
is "$?" 125 "4: export without --backend: refused ($out)"
ok "$([ ! -e "$NEW" ] && echo 0 || echo 1)" "4:   and the -o DIR it made is gone ($(ls -ld "$NEW" 2>&1))"
out=$(cd "$SCRATCH" && "$MOAT" export --format k8s --image x.example/i:1 --mode off -o "$NEW" -- /bin/true 2>&1)
is "$?" 125 "4: k8s export of mode off: refused ($out)"
ok "$([ ! -e "$NEW" ] && echo 0 || echo 1)" "4:   and the -o DIR it made is gone"
mkdir "$NEW"
(cd "$SCRATCH" && "$MOAT" export -o "$NEW" -- /bin/true >/dev/null 2>&1)
ok "$([ -d "$NEW" ] && echo 0 || echo 1)" "4 control: a -o DIR that was there stays when the export is refused"
rmdir "$NEW"
(cd "$SCRATCH" && "$MOAT" export --backend bwrap -o "$NEW" -- /bin/true >/dev/null 2>&1)
ok "$([ -f "$NEW/run.sh" ] && echo 0 || echo 1)" "4 control: with --backend bwrap it is made, run.sh there"
rm -rf "$NEW"
(cd "$SCRATCH" && "$MOAT" export --format k8s --image x.example/i:1 -o "$NEW" -- /bin/true >/dev/null 2>&1)
ok "$([ -d "$NEW" ] && [ -n "$(ls -A "$NEW")" ] && echo 0 || echo 1)" "4 control: a k8s export without --mode off writes it"

done_testing
