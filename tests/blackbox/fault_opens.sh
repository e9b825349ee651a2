#!/usr/bin/env bash
# Every open of moat's run refused once, for want of descriptors (EMFILE,
# injected by strace at the K-th openat and the K-th openat2 of each of
# its processes -- moat, the sandbox's set-up, the command -- K = 1, 2, ...
# up to as many as one makes): the run must then be refused naming the
# cause, or run with claims that hold.  A check that takes "could not
# open" for "nothing there" turns running out of descriptors into a false
# `enforced`:
#   - a hard-link farm in a write grant (pnpm's node_modules/.pnpm) not
#     opened was taken for no farm: fs.write enforced, the store writable;
#   - a denied directory not opened was left out of the hard-link walk
#     (said as the walk's bound): fs.secrets enforced over a key with a
#     second name in the project;
#   - a repository's .git/config, a gitfile, a commondir not opened: the
#     git directories and hooks paths they name went unprotected;
#   - /proc/self/task not opened at the command's end: moat never reaped
#     the command and polled forever.
# Two policies, each against the verdicts of the same run without faults:
#   found  the farm and the linked key are there: fs.write and fs.secrets
#          must never say enforced;
#   held   nothing is missing: the command tries the secret, a read-only
#          grant, the repositories' hooks and configs (core.hooksPath's
#          too), a gitfile and the git directory it names, and protected
#          names; whatever the report says enforced, the host shows none
#          of it done;
#   home   the same with HOME itself the write grant: its dotfiles
#          (.bashrc, an absent .profile), ~/.config/autostart, ~/.ssh.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
PY=/usr/bin/python3
command -v strace >/dev/null || skip_all "strace is not installed (scripts/ensure-deps test installs it)"
command -v git >/dev/null || skip_all "git is not installed"
# LeakSanitizer cannot run under ptrace (the sanitizer build's exit would
# be 1).
NOLSAN="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

F=$SCRATCH/f
mkdir -p "$F/homeA/.ssh" "$F/homeB/.ssh" "$F/homeC/.ssh" "$F/homeC/.config" "$F/store" "$F/ro" "$F/projA/node_modules/.pnpm/pkg@1.0.0/node_modules/pkg"
echo "moat-canary-$$ A" >"$F/homeA/.ssh/id_rsa"
echo "moat-canary-$$ B" >"$F/homeB/.ssh/id_rsa"
echo "moat-canary-$$ C" >"$F/homeC/.ssh/id_rsa"
echo "# the user's" >"$F/homeC/.bashrc"
echo lib >"$F/store/index.js"
ln "$F/store/index.js" "$F/projA/node_modules/.pnpm/pkg@1.0.0/node_modules/pkg/index.js"
ln "$F/homeA/.ssh/id_rsa" "$F/projA/key"
echo keep >"$F/ro/file"
G() { git -c init.defaultBranch=main -c user.email=t@t -c user.name=t "$@"; }
(cd "$F" && G init -q projB && cd projB && G config core.hooksPath githooks && mkdir githooks &&
	echo '#!/bin/sh' >githooks/pre-commit && G commit -q --allow-empty -m i && G init -q repo2 &&
	G init -q --separate-git-dir="$F/projB/wtgit" sub2) || skip_all "git init failed"
chmod -R a+rX "$F"
# What the command tries to write (relative to $F), and the directories it
# tries to make (MADE).
TARGETS="ro/file projB/.git/hooks/pre-commit projB/.git/config projB/githooks/pre-commit
projB/repo2/.git/hooks/post-checkout projB/repo2/.git/config projB/sub2/.git projB/wtgit/config
projB/wtgit/hooks/pre-commit projB/.envrc homeC/.bashrc homeC/.profile"
MADE="projB/.vscode homeC/.config/autostart"
{
	echo '#!/bin/sh'
	echo '# inside the sandbox: R: the secret read, W: a write that went through'
	echo 'cat "$1/.ssh/id_rsa" 2>/dev/null | sed "s/^/R:/"'
	echo "for f in $(echo $TARGETS); do"
	echo "	(echo '# moat-fault' >>\"$F/\$f\") 2>/dev/null && echo \"W:\$f\""
	echo 'done'
	echo "for d in $MADE; do mkdir \"$F/\$d\" 2>/dev/null && echo \"W:\$d\"; done"
	echo 'exit 0'
} >"$F/attack.sh"
chmod 755 "$F/attack.sh"
# What the attack could change on the host: its targets.
snap() {
	local t
	(cd "$F" && for t in $TARGETS $MADE; do
		if [ -f "$t" ]; then md5sum "$t"; elif [ -e "$t" ]; then echo "$t exists"; else echo "$t absent"; fi
	done)
}
SNAP=$(snap)
ABSENT=$(cd "$F" && for t in $TARGETS; do [ -e "$t" ] || echo "$t"; done)
TOP_B=$(ls -A "$F/projB") TOP_C=$(ls -A "$F/homeC")
# restore: undo what a broken run (or the control) did to the targets, and
# remove a placeholder a run could not (said in its report), so that one
# failure does not show again at every K after it
restore() {
	local t
	(cd "$F" && for t in $TARGETS; do [ -f "$t" ] && sed -i '/^# moat-fault$/d' "$t"; done
		for t in $ABSENT; do rm -f "$t"; done
		for t in $MADE; do rmdir "$t"; done
		for t in $(cd projB && ls -A); do
			case " $(echo $TOP_B) " in *" $t "*) continue ;; esac
			[ -d "projB/$t" ] && chmod u+rwx "projB/$t" && rmdir "projB/$t"
		done
		for t in $(cd homeC && ls -A); do
			case " $(echo $TOP_C) " in *" $t "*) continue ;; esac
			[ -d "homeC/$t" ] && chmod u+rwx "homeC/$t" && rmdir "homeC/$t"
		done) 2>/dev/null
}

# run_at K HOME PROJ: moat under strace, the K-th openat and openat2
# refused (K=0: none); the command's output in $SCRATCH/out, moat's stderr
# in $SCRATCH/err; the exit status (124: it hung for 60 s).
run_at() {
	local k=$1 home=$2 proj=$3 inject=()
	rm -f "$REPORTS/f.json"
	[ "$k" = 0 ] || inject=(-e "inject=openat,openat2:error=EMFILE:when=$k")
	(cd "$proj" && env HOME="$home" "$NOLSAN" timeout -k 5 60 strace -f -qq -o "$SCRATCH/trace" -e trace=openat,openat2 "${inject[@]}" \
		"$MOAT" run --mode prefer --profile strict --report "$REPORTS/f.json" --write "$proj" --read "$F/ro" --read "$F/attack.sh" \
		-- "$F/attack.sh" "$home" >"$SCRATCH/out" 2>"$SCRATCH/err")
}
# claims: "FS.WRITE/FS.SECRETS" of the last run's report ("/" without one)
claims() {
	[ -f "$REPORTS/f.json" ] || { echo /; return; }
	$PY -c 'import json, sys
p = json.load(open(sys.argv[1]))["properties"]
print(p["fs.write"]["status"] + "/" + p["fs.secrets"]["status"])' "$REPORTS/f.json"
}
opens() { # the most openat or openat2 calls one process of the last run made
	awk '$2 ~ /^openat\(/ { a[$1]++ } $2 ~ /^openat2\(/ { b[$1]++ }
		END { m = 0; for (p in a) if (a[p] > m) m = a[p]; for (p in b) if (b[p] > m) m = b[p]; print m }' "$SCRATCH/trace"
}
injected() { # the calls the last run had refused, shortened
	grep INJECTED "$SCRATCH/trace" | head -3 | sed -E 's/^([0-9]+) (openat2?\([^,]*, "[^"]*").*/\2) in \1/' | tr '\n' ' '
}

# --- the runs without faults: what each policy claims, and the control
run_at 0 "$F/homeA" "$F/projA"
is "$(claims)" missing/missing \
	"found, no fault: the farm makes fs.write missing, the linked key fs.secrets"
NA=$(opens)
run_at 0 "$F/homeB" "$F/projB"
is "$(claims)/$(grep -c '^[RW]:' "$SCRATCH/out")" enforced/enforced/0 \
	"held, no fault: fs.write and fs.secrets enforced, and the attack did nothing ($(head -c 200 "$SCRATCH/out"))"
[ "$(snap)" = "$SNAP" ]
ok $? "  the host's files as they were"
NB=$(opens)
# Control: without the sandbox the same attack reads the key and writes
# every target.
run_at 0 "$F/homeC" "$F/homeC"
is "$(claims)/$(grep -c '^[RW]:' "$SCRATCH/out")" enforced/enforced/0 \
	"home, no fault: fs.write and fs.secrets enforced, and the attack did nothing ($(head -c 200 "$SCRATCH/out"))"
NC=$(opens)
(cd "$F/projB" && HOME="$F/homeB" "$MOAT" run --mode off -- "$F/attack.sh" "$F/homeB" >"$SCRATCH/out" 2>/dev/null)
is "$(grep -c '^R:' "$SCRATCH/out")/$(grep -c '^W:' "$SCRATCH/out")" 1/14 \
	"control: unsandboxed, the attack reads the key, writes the 12 files and makes the 2 directories"
restore
[ "$(snap)" = "$SNAP" ]
ok $? "  (and the fixture is restored after it)"

# --- every open refused once
bad_found= bad_held= hung= refused=0 ran=0
for k in $(seq 1 "$NA"); do
	run_at "$k" "$F/homeA" "$F/projA"
	rc=$?
	[ "$rc" = 124 ] && hung="$hung found:$k"
	[ "$rc" = 125 ] && refused=$((refused + 1)) || ran=$((ran + 1))
	c=$(claims)
	case "$c" in
	*enforced*) bad_found="$bad_found $k($c: $(injected))" ;;
	esac
done
# held_runs NAME HOME PROJ COUNT: every K of a policy that holds
held_runs() {
	local name=$1 home=$2 proj=$3 k rc what c left now l
	for k in $(seq 1 "$4"); do
		run_at "$k" "$home" "$proj"
		rc=$?
		[ "$rc" = 124 ] && hung="$hung $name:$k"
		[ "$rc" = 125 ] && refused=$((refused + 1)) || ran=$((ran + 1))
		what= c=$(claims)
		# A placeholder moat could not remove is its own, and said in
		# the report (run.left_on_host): taken out of the comparison.
		left=$([ -f "$REPORTS/f.json" ] && $PY -c 'import json, sys
r = json.load(open(sys.argv[1]))["run"]
print(" ".join(e["path"] for e in r.get("left_on_host", []) if e.get("what") == "placeholder"))' "$REPORTS/f.json" 2>/dev/null)
		now=$(snap)
		for l in $left; do now=$(printf '%s\n' "$now" | sed "s|^${l#"$F/"} exists\$|${l#"$F/"} absent|"); done
		[ "${c%/*}" = enforced ] && { grep -q '^W:' "$SCRATCH/out" || [ "$now" != "$SNAP" ]; } &&
			what="fs.write: $(grep '^W:' "$SCRATCH/out" | tr '\n' ' ')$(diff <(echo "$SNAP") <(echo "$now") | grep '^>' | tr '\n' ' ')"
		[ "${c#*/}" = enforced ] && grep -q '^R:' "$SCRATCH/out" && what="$what fs.secrets: the key read"
		[ -n "$what" ] && bad_held="$bad_held $name:$k($what; $(injected))"
		restore
	done
}
held_runs held "$F/homeB" "$F/projB" "$NB"
held_runs home "$F/homeC" "$F/homeC" "$NC"
diag "K = 1..$NA (found), 1..$NB (held), 1..$NC (home): $refused runs refused (125), $ran ran"
[ -z "$bad_found" ]
ok $? "found: with any one open refused, neither fs.write nor fs.secrets says enforced${bad_found:+; said at K=$bad_found}"
[ -z "$bad_held" ]
ok $? "held, home: with any one open refused, what the report says enforced holds${bad_held:+; broken at$bad_held}"
[ -z "$hung" ]
ok $? "no run hung (60 s)${hung:+: $hung}"
[ "$refused" -gt 0 ] && [ "$ran" -gt 0 ]
ok $? "  (both outcomes occur: $refused refused, $ran ran)"

done_testing
