# The fixture of the fault-injection suites (tests/blackbox/fault_*.sh):
# moat run under `strace -f`, a system call of every process refused at its
# K-th call, against three policies (see fault_opens.sh):
#   found  a hard-link farm and a linked key make fs.write and fs.secrets
#          missing: they must never say enforced;
#   held   nothing is missing: the command ($F/attack.sh) tries the secret,
#          a read-only grant, the repositories' hooks and configs, a gitfile
#          and protected names; whatever the report says enforced, the host
#          shows none of it done;
#   home   the same with HOME itself the write grant.
# Source after tests/lib/tap.sh and `scratch`.  FAULT_TRACE: the system
# calls strace traces (and whose calls fault_counts counts); FAULT_ENV: the
# environment of moat's runs beyond HOME (MOAT_HOST_LIMIT for the fallback
# without namespaces).
PY=/usr/bin/python3
command -v strace >/dev/null || skip_all "strace is not installed (scripts/ensure-deps test installs it)"
command -v git >/dev/null || skip_all "git is not installed"
# LeakSanitizer cannot run under ptrace (the sanitizer build's exit would
# be 1).
NOLSAN="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
FAULT_TRACE=${FAULT_TRACE:-openat,openat2}
FAULT_ENV=() FAULT_STRACE=()

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
# What the attack could change on the host: its targets (one md5sum for
# them all: a run's verdict is judged in a few ms, not the tens a process
# per target costs).
snap() {
	local t there=()
	cd "$F" || return
	for t in $TARGETS $MADE; do
		if [ -f "$t" ]; then there+=("$t"); elif [ -e "$t" ]; then echo "$t exists"; else echo "$t absent"; fi
	done
	[ ${#there[@]} = 0 ] || md5sum "${there[@]}"
	cd - >/dev/null
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

# fault_run INJECT HOME PROJ: moat under strace, INJECT (strace's
# inject=... expression, or nothing for a run without faults) in force,
# with strace's options FAULT_STRACE (-P PATH: only calls on PATH);
# the command's output in $SCRATCH/out, moat's stderr in $SCRATCH/err, the
# trace in $SCRATCH/trace; the exit status (124: it hung for 60 s).
fault_run() {
	local inject=()
	rm -f "$REPORTS/f.json"
	[ -z "$1" ] || inject=(-e "inject=$1")
	(cd "$3" && env HOME="$2" "${FAULT_ENV[@]}" "$NOLSAN" timeout -k 5 60 strace -f -qq --seccomp-bpf -o "$SCRATCH/trace" "${FAULT_STRACE[@]}" -e trace="$FAULT_TRACE" "${inject[@]}" \
		"$MOAT" run --mode prefer --profile strict --report "$REPORTS/f.json" --write "$3" --read "$F/ro" --read "$F/attack.sh" \
		-- "$F/attack.sh" "$2" >"$SCRATCH/out" 2>"$SCRATCH/err")
}
# claims: "FS.WRITE/FS.SECRETS" of the last run's report ("/" without one)
claims() {
	[ -f "$REPORTS/f.json" ] || { echo /; return; }
	echo "$(json_get "$REPORTS/f.json" '["properties"]["fs.write"]["status"]')/$(json_get "$REPORTS/f.json" '["properties"]["fs.secrets"]["status"]')"
}
# fault_counts: the most calls of each traced system call one process of
# the last run made, "NAME COUNT" a line
fault_counts() {
	awk '{ n = $2; sub(/\(.*/, "", n); if (n ~ /^[a-z_0-9]+$/) c[$1 " " n]++ }
		END { for (k in c) { split(k, a, " "); if (c[k] > m[a[2]]) m[a[2]] = c[k] }
			for (s in m) print s, m[s] }' "$SCRATCH/trace" | sort
}
injected() { # the calls the last run had refused, shortened
	grep INJECTED "$SCRATCH/trace" | head -3 | sed -E 's/^([0-9]+) ([a-z_0-9]+\([^,)]{0,60}).*/\2) in \1/' | tr '\n' ' '
}

# The verdicts of every run with a fault, gathered for the checks at the
# end: BAD_FOUND, BAD_HELD (what was said enforced and did not hold), HUNG,
# the counts REFUSED and RAN.
BAD_FOUND= BAD_HELD= HUNG= REFUSED=0 RAN=0
# fault_tally RC LABEL: the exit status of a run, counted
fault_tally() {
	[ "$1" = 124 ] && HUNG="$HUNG $2"
	if [ "$1" = 125 ]; then REFUSED=$((REFUSED + 1)); else RAN=$((RAN + 1)); fi
}
# judge_found LABEL: the last run of the found policy says neither enforced
judge_found() {
	local c
	c=$(claims)
	case "$c" in
	*enforced*) BAD_FOUND="$BAD_FOUND $1($c: $(injected))" ;;
	esac
}
# judge_held LABEL: what the last run of the held or home policy said
# enforced held on the host; then the fixture restored
judge_held() {
	local what= c left now l raw
	c=$(claims)
	raw=$(snap)
	now=$raw
	# A placeholder moat could not remove is its own, and said in the
	# report (run.left_on_host): taken out of the comparison.
	if [ "$now" != "$SNAP" ] && [ -f "$REPORTS/f.json" ]; then
		left=$($PY -c 'import json, sys
r = json.load(open(sys.argv[1]))["run"]
print(" ".join(e["path"] for e in r.get("left_on_host", []) if e.get("what") == "placeholder"))' "$REPORTS/f.json" 2>/dev/null)
		for l in $left; do now=$(printf '%s\n' "$now" | sed "s|^${l#"$F/"} exists\$|${l#"$F/"} absent|"); done
	fi
	[ "${c%/*}" = enforced ] && { grep -q '^W:' "$SCRATCH/out" || [ "$now" != "$SNAP" ]; } &&
		what="fs.write: $(grep '^W:' "$SCRATCH/out" | tr '\n' ' ')$(diff <(echo "$SNAP") <(echo "$now") | grep '^>' | tr '\n' ' ')"
	[ "${c#*/}" = enforced ] && grep -q '^R:' "$SCRATCH/out" && what="$what fs.secrets: the key read"
	[ -n "$what" ] && BAD_HELD="$BAD_HELD $1($what; $(injected))"
	# What the run left (the attack's writes, a placeholder) undone; a
	# run that left nothing costs no restore.
	local top_b top_c
	top_b=$(ls -A "$F/projB") top_c=$(ls -A "$F/homeC")
	[ "$raw" = "$SNAP" ] && [ "$top_b" = "$TOP_B" ] && [ "$top_c" = "$TOP_C" ] || restore
}

# fault_baselines [LABEL [HELD]]: the three policies without faults,
# checked, and the control (the attack unsandboxed does it all); their
# traces kept as $SCRATCH/trace.found, .held, .home.  LABEL leads each
# description; HELD (default enforced/enforced) is what the held and home
# policies claim ("FS.WRITE/FS.SECRETS": the fallback without namespaces
# holds no protected names in a write grant, and says fs.write missing).
fault_baselines() {
	local l=${1:+$1: } want=${2:-enforced/enforced} p home proj before
	fault_run "" "$F/homeA" "$F/projA"
	is "$(claims)" missing/missing \
		"${l}found, no fault: the farm makes fs.write missing, the linked key fs.secrets"
	cp "$SCRATCH/trace" "$SCRATCH/trace.found"
	for p in held home; do
		home=$F/homeB proj=$F/projB
		[ "$p" = home ] && home=$F/homeC proj=$F/homeC
		fault_run "" "$home" "$proj"
		is "$(claims)" "$want" "${l}$p, no fault: fs.write and fs.secrets $want"
		cp "$SCRATCH/trace" "$SCRATCH/trace.$p"
		before=$BAD_HELD
		judge_held "$p"
		[ "$BAD_HELD" = "$before" ]
		ok $? "  and what it says enforced holds: the attack did none of it ($(head -c 200 "$SCRATCH/out"))"
		BAD_HELD=$before
	done
	# Control: without the sandbox the same attack reads the key and
	# writes every target.
	(cd "$F/projB" && HOME="$F/homeB" "$MOAT" run --mode off -- "$F/attack.sh" "$F/homeB" >"$SCRATCH/out" 2>/dev/null)
	is "$(grep -c '^R:' "$SCRATCH/out")/$(grep -c '^W:' "$SCRATCH/out")" 1/14 \
		"${l}control: unsandboxed, the attack reads the key, writes the 12 files and makes the 2 directories"
	restore
	[ "$(snap)" = "$SNAP" ]
	ok $? "  (and the fixture is restored after it)"
}

# fault_verdicts LABEL: the checks over every run with a fault
fault_verdicts() {
	[ -z "$BAD_FOUND" ]
	ok $? "$1found: with any one call refused, neither fs.write nor fs.secrets says enforced${BAD_FOUND:+; said at$BAD_FOUND}"
	[ -z "$BAD_HELD" ]
	ok $? "$1held, home: with any one call refused, what the report says enforced holds${BAD_HELD:+; broken at$BAD_HELD}"
	[ -z "$HUNG" ]
	ok $? "$1no run hung (60 s)${HUNG:+: $HUNG}"
}
