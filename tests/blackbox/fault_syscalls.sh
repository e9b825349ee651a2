#!/usr/bin/env bash
# The system calls of moat's set-up other than opens (fault_opens.sh's),
# each refused once: strace -f injects an error at the K-th call of every
# process of the run (moat, the sandbox's set-up in its child and init,
# the command), one group of calls at a time, against the three policies
# of tests/lib/fault_fixture.sh (found, held, home).  The run must be
# refused naming the cause (125), or run with a report whose `enforced`
# claims hold on the host; none may hang, crash (a signal, a sanitizer's
# report) or end without a report and without refusing.  Twice: with the
# native backend's namespaces, and in its fallback without them
# (MOAT_HOST_LIMIT=userns=0,root=0: Landlock and seccomp alone).
# K: every one of 1..FULL, then SPREAD more spread evenly up to the most
# one process made (the test output says which); a group whose most is
# at most FULL+SPREAD is run at every K (MOAT_FAULT_FULL, _SPREAD).
# First, each fault that once broke a claim, at the call on its path
# (strace -P: as root; a non-root strace cannot see a non-dumpable moat's
# descriptors), so that its check does not hang on a K the sampling may
# pass over.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
# The groups, one a line: CALLS:ERRNO (the errno the kernel gives for want
# of a resource where the call has one; an I/O error for read, a full disk
# for write), and "walk" for the calls that the checks finding a hard-link
# farm or a key's second name make: the found policy, whose claims are
# missing whatever else fails, is run with those alone.  One group per
# run: calls of two groups refused at the same K, the one met first hides
# the other (getdents64's 9th call behind readlink's 9th).
CALL_GROUPS="getdents64:ENOMEM:walk
fstat,newfstatat,statx:ENOMEM:walk
readlink,readlinkat:ENOMEM:walk
read:EIO:walk
pipe2,socketpair,dup,dup2,dup3,fcntl:EMFILE
clone,clone3,fork,vfork:EAGAIN
mount,umount2,pivot_root,move_mount,open_tree,fsopen,fsconfig,fsmount,mount_setattr:ENOMEM
unshare,setns,prctl,seccomp:ENOMEM
landlock_create_ruleset,landlock_add_rule,landlock_restrict_self:ENOMEM
flock:ENOLCK
memfd_create:EMFILE
write,pwrite64,writev:ENOSPC"
FAULT_TRACE=$(echo "$CALL_GROUPS" | sed 's/:.*//' | tr '\n' ',' | sed 's/,$//')
. "$(dirname "$0")/../lib/fault_fixture.sh"
FULL=${MOAT_FAULT_FULL:-10} SPREAD=${MOAT_FAULT_SPREAD:-5}

# ks MOST: the K to try for a group whose busiest process made MOST calls
ks() {
	local most=$1 i
	if [ "$most" -le $((FULL + SPREAD)) ]; then seq 1 "$most"; return; fi
	seq 1 "$FULL"
	for i in $(seq 1 "$SPREAD"); do echo $((FULL + (most - FULL) * i / SPREAD)); done
}
# most CALLS TRACE: the most calls of any of CALLS one process made
most() {
	cp "$2" "$SCRATCH/trace"
	fault_counts | awk -v calls=",$1," 'index(calls, "," $1 ",") && $2 > m { m = $2 } END { print m + 0 }'
}
# judge_exit RC LABEL: a run that neither refused nor left a report, one
# refused without a word, or a crash
BAD_EXIT=
judge_exit() {
	local why=
	if grep -qE 'ERROR: [A-Za-z]*Sanitizer|runtime error:' "$SCRATCH/err"; then
		why="a sanitizer's report: $(grep -m1 -E 'ERROR: [A-Za-z]*Sanitizer|runtime error:' "$SCRATCH/err" | head -c 160)"
	elif grep -qE '^[^ ]*: error while loading shared libraries|LeakSanitizer has encountered a fatal error' "$SCRATCH/err"; then
		# The dynamic loader's refusal (a library's stat refused) before
		# any of moat's code; or the sanitizer runtime's own: its read
		# of /proc/self/environ at start refused, it lost ASAN_OPTIONS'
		# detect_leaks=0, and LeakSanitizer cannot run under ptrace.
		:
	elif [ "$1" -gt 128 ] && [ "$1" != 124 ] && [ "$1" != 137 ]; then
		why="exit $1 (a signal)"
	elif [ "$1" = 125 ]; then
		grep -q '^moat: ' "$SCRATCH/err" || why="refused (125) without saying why"
	elif [ "$1" != 124 ] && [ ! -f "$REPORTS/f.json" ]; then
		why="exit $1 without a report: $(head -c 160 "$SCRATCH/err")"
	fi
	[ -n "$why" ] && BAD_EXIT="$BAD_EXIT $2($why; $(injected))"
}

# variant LABEL HELD POLICIES: every group against each of POLICIES
variant() {
	local label=$1 held=$2 policies=$3 group calls err walk name policy home proj k rc most sampled=
	fault_baselines "$label" "$held"
	while IFS=: read -r calls err walk; do
		name=${calls%%,*}
		for policy in $policies; do
			case $policy in
			found) home=$F/homeA proj=$F/projA ;;
			held) home=$F/homeB proj=$F/projB ;;
			home) home=$F/homeC proj=$F/homeC ;;
			esac
			[ "$policy" = found ] && [ -z "$walk" ] && continue
			most=$(most "$calls" "$SCRATCH/trace.$policy")
			[ "$most" -gt $((FULL + SPREAD)) ] && sampled="$sampled $name/$policy:$most"
			for k in $(ks "$most"); do
				fault_run "$calls:error=$err:when=$k" "$home" "$proj"
				rc=$?
				fault_tally "$rc" "$label/$policy/$name:$k"
				judge_exit "$rc" "$label/$policy/$name:$k"
				if [ "$policy" = found ]; then judge_found "$label/$name:$k"; else judge_held "$label/$policy/$name:$k"; fi
			done
		done
	done <<<"$CALL_GROUPS"
	diag "$label: K = 1..$FULL and $SPREAD more spread up to the most of (calls/policy:most):${sampled:- (none: every K)}"
}

# --- the faults that broke a claim, each at the call that did (strace -P:
# only calls on that path), so that their check does not depend on a K
# the sampling may pass over
# at PATH CALL ERRNO K POLICY: the K-th CALL on PATH refused (CALL alone
# traced: with --seccomp-bpf, a call not traced never stops to be refused)
at() {
	local home=$F/homeB proj=$F/projB
	[ "$5" = found ] && home=$F/homeA proj=$F/projA
	FAULT_STRACE=(-P "$1")
	FAULT_TRACE=$2 fault_run "$2:error=$3:when=$4" "$home" "$proj"
	rc=$?
	FAULT_STRACE=()
}
# strace -P finds a call's path through the process's descriptors, which
# a non-root strace cannot read once moat is not dumpable (as a user,
# moat makes itself so): there no fault below would be injected.
FAULT_STRACE=(-P "$F/projB/.git/config")
FAULT_TRACE=openat,read fault_run "" "$F/homeB" "$F/projB"
FAULT_STRACE=()
if ! grep -q 'read(' "$SCRATCH/trace"; then
	skip "strace as uid $(id -u) cannot see which file a call of a non-dumpable moat is on (-P): the faults at one path run as root"
else
	# A denied directory's listing cut short (getdents64 failing) was taken
	# for its end: its files past that point were not looked for elsewhere,
	# and fs.secrets said enforced over the key's second name in the project.
	at "$F/homeA/.ssh" getdents64 ENOMEM 1 found
	is "$rc/$(claims)" 125// "the listing of a denied directory fails (ENOMEM): the run is refused, not fs.secrets enforced"
	like "$(cat "$SCRATCH/err")" "hard links of the denied files below $F/homeA/.ssh: Cannot allocate memory" "  naming the cause"
	# A farm's listing cut short (getdents64 failing) was taken for its end:
	# no linked file sampled, no farm, and fs.write said enforced over the
	# store's files.
	at "$F/projA/node_modules/.pnpm" getdents64 ENOMEM 1 found
	is "$rc/$(claims)" 125// "the listing of a hard-link farm fails (ENOMEM): the run is refused, not fs.write enforced"
	like "$(cat "$SCRATCH/err")" "looking for a farm of hard links in $F/projA/node_modules/.pnpm: Cannot allocate memory" "  naming the cause"
	# A placeholder whose lock at the end was refused (ENOLCK) was taken for
	# another run's: left on the host, said nowhere.
	at "$F/projB/.envrc" flock ENOLCK 1 held
	BAD_HELD=
	judge_held "flock"
	is "$rc/$(json_eval "$REPORTS/f.json" '[e["path"] for e in d["run"].get("left_on_host", [])]')/$BAD_HELD" \
		"0/[\"$F/projB/.envrc\"]/" "the placeholder's lock refused at the end (ENOLCK): said left on the host (run.left_on_host)"
	like "$(cat "$SCRATCH/err")" "projB/.envrc, which moat made for the run as a placeholder.*could not be removed" "  and in a warning"
	fault_run "" "$F/homeB" "$F/projB"
	is "$([ -e "$F/projB/.envrc" ] && echo left || echo removed)/$(json_eval "$REPORTS/f.json" 'd["run"].get("left_on_host")')" \
		removed/null "  control: without the fault it is removed, and none said left"
	# A repository's .git/config that could not be read (EIO) was taken for
	# an empty one: the directory its core.hooksPath names went unprotected.
	at "$F/projB/.git/config" read EIO 1 held
	BAD_HELD=
	judge_held "read"
	is "$rc/$BAD_HELD" 125/ "the read of .git/config fails (EIO): the run is refused, not core.hooksPath's directory left writable"
	like "$(cat "$SCRATCH/err")" "reading $F/projB/.git's configuration: Input/output error" "  naming the file and the cause"
	# A folder of a write grant whose stat failed (ENOMEM) was taken for one
	# gone since the listing, and one whose .git's stat failed for no
	# repository: a repository below the grant left unprotected, fs.write
	# enforced, and the command wrote repo2/.git/config and its hooks.  K:
	# the calls on those names, counted in a run without faults, and one
	# either side (strace's count of the calls on a path and its trace's
	# may differ by one).
	FAULT_STRACE=(-P "$F/projB")
	FAULT_TRACE=newfstatat fault_run "" "$F/homeB" "$F/projB"
	FAULT_STRACE=()
	k1=$(awk '{ n[$1]++ } index($0, "\"repo2\",") { print n[$1]; exit }' "$SCRATCH/trace")
	k2=$(awk '{ n[$1]++ } index($0, "\"repo2/.git\",") { print n[$1]; exit }' "$SCRATCH/trace")
	BAD_HELD= named=0 outcomes=
	for k in $(seq $((${k1:-1} - 1)) $((${k2:-0} + 1))); do
		at "$F/projB" newfstatat ENOMEM "$k" held
		judge_held "newfstatat:$k"
		outcomes="$outcomes $k:$rc"
		grep -q "looking for a repository in $F/projB/repo2: Cannot allocate memory" "$SCRATCH/err" && named=$((named + 1))
	done
	is "${k1:+found}/${k2:+found}/$BAD_HELD" found/found/ "the stat of repo2 or of repo2/.git in a write grant fails (ENOMEM; K =$outcomes): never the repository left unprotected"
	[ "$named" -ge 2 ]
	ok $? "  refused, naming the folder and the cause ($named runs)"
	# A protected name that is a link (~/.bashrc -> dotfiles/bashrc, HOME the
	# write grant) whose link could not be read (ENOMEM) left its target
	# unprotected: fs.write enforced, and the command wrote the target.  Each
	# of the first readlinkat calls on it refused in turn.
	D=$SCRATCH/homeD
	mkdir -p "$D/dotfiles" && echo "# the user's" >"$D/dotfiles/bashrc" && ln -s dotfiles/bashrc "$D/.bashrc" && chmod -R a+rX "$D"
	broke= outcomes=
	for k in 0 1 2 3; do
		inject=()
		[ "$k" = 0 ] || inject=(-e "inject=readlinkat:error=ENOMEM:when=$k")
		rm -f "$REPORTS/f.json"
		(cd "$D" && env HOME="$D" "$NOLSAN" timeout -k 5 60 strace -f -qq --seccomp-bpf -o /dev/null -P "$D/.bashrc" -e trace=readlinkat "${inject[@]}" \
			"$MOAT" run --mode prefer --profile strict --report "$REPORTS/f.json" --write "$D" -- sh -c 'echo "# moat-fault" >>"$HOME/.bashrc"' \
			>/dev/null 2>"$SCRATCH/err")
		rc=$?
		c=$([ -f "$REPORTS/f.json" ] && json_get "$REPORTS/f.json" '["properties"]["fs.write"]["status"]')
		grep -q moat-fault "$D/dotfiles/bashrc" && [ "$c" = enforced ] && broke="$broke $k"
		outcomes="$outcomes $k:$rc/${c:-none}"
		echo "# the user's" >"$D/dotfiles/bashrc"
	done
	[ -z "$broke" ]
	ok $? "a protected link's readlinkat refused (ENOMEM, K = 1..3): never fs.write enforced with its target written (${outcomes# })${broke:+; written at K =$broke}"
	like "$outcomes" "^ 0:[0-9]+/enforced .*:125/none" "  control: without the fault it is enforced (the target held); with one, refused"
	# A submodule's git directory (.git/modules/sub), no work tree's gitfile
	# naming it (git submodule deinit): its hooks and config are held.  .git/modules not opened (EMFILE: out of descriptors) was
	# taken for nothing there, and sub/HEAD not stat'ed (ENOMEM) for no git
	# directory: the command added a hook git runs, under fs.write
	# enforced.  Now the first is refused; EACCES (a directory of this
	# uid's it may not read, which the command could chmod) holds it whole.
	S=$SCRATCH/projS
	(mkdir -p "$S" && cd "$S" && G init -q . && mkdir .git/modules && G init -q --separate-git-dir="$S/.git/modules/sub" subwt &&
		rm -r subwt)
	ok $? "the submodule fixture is made (git init --separate-git-dir=.git/modules/sub; its work tree gone, as after git submodule deinit: no gitfile leads there)"
	chmod -R a+rX "$S"
	# sub_run K CALL ERRNO AT: the K-th CALL on AT (a path: -P) refused
	# (K=0: none); the attack's outcome in $SCRATCH/out (W: a write that
	# went through)
	sub_run() {
		local inject=()
		[ "$1" = 0 ] || inject=(-e "inject=$2:error=$3:when=$1")
		rm -f "$REPORTS/f.json" "$S/.git/modules/sub/hooks/post-checkout"
		sed -i '/^# moat-fault$/d' "$S/.git/modules/sub/config"
		(cd "$S" && env HOME="$F/homeB" "$NOLSAN" timeout -k 5 60 strace -f -qq --seccomp-bpf -o "$SCRATCH/trace" -P "$4" -e trace="$2" "${inject[@]}" \
			"$MOAT" run --mode prefer --profile strict --report "$REPORTS/f.json" --write "$S" -- sh -c '
				(printf "#!/bin/sh\n" >.git/modules/sub/hooks/post-checkout) 2>/dev/null && echo W:hook
				(echo "# moat-fault" >>.git/modules/sub/config) 2>/dev/null && echo W:config
				exit 0' >"$SCRATCH/out" 2>"$SCRATCH/err")
		rc=$?
		c=$([ -f "$REPORTS/f.json" ] && json_get "$REPORTS/f.json" '["properties"]["fs.write"]["status"]')
	}
	# sub_ks CALL NAME AT: the Ks of the CALLs on AT naming NAME in a run
	# without faults, and one either side (strace's count and its trace's
	# may differ by one)
	sub_ks() {
		sub_run 0 "$1" x "$3"
		awk -v name="\"$2\"" '{ n[$1]++ } index($0, name) { print n[$1] - 1; print n[$1]; print n[$1] + 1; exit }' "$SCRATCH/trace"
	}
	sub_run 0 openat2 x "$S"
	is "$rc/$c/$(grep -c '^W:' "$SCRATCH/out")" 0/enforced/0 "a submodule's git directory, no fault: its hooks and config held, fs.write enforced"
	for spec in "openat2 .git/modules EMFILE $S" "newfstatat sub/HEAD ENOMEM $S/.git/modules" \
		"openat2 .git/modules EACCES $S"; do
		set -- $spec
		broke= outcomes= named=0 ks=$(sub_ks "$1" "$2" "$4")
		for k in $ks; do
			[ "$k" -ge 1 ] || continue
			sub_run "$k" "$1" "$3" "$4"
			outcomes="$outcomes $k:$rc/${c:-none}"
			[ "$c" = enforced ] && grep -q '^W:' "$SCRATCH/out" && broke="$broke $k($(grep '^W:' "$SCRATCH/out" | tr '\n' ' '))"
			[ "$rc" = 125 ] && grep -q "$S/.git/modules" "$SCRATCH/err" && named=$((named + 1))
		done
		[ -n "$ks" ] && [ -z "$broke" ]
		ok $? "the $1 of $2 refused ($3; K =$outcomes): never the submodule's hooks or config written under fs.write enforced${broke:+; written at$broke}$([ -n "$ks" ] || echo '; no such call seen')"
		case $3 in
		EACCES) like "$outcomes" ":0/enforced" "  held whole: the run goes on, enforced" ;;
		*) like "$outcomes" ":125/none" "  refused" && [ "$named" -ge 1 ]; ok $? "  naming the path and the cause ($named runs)" ;;
		esac
	done
	# Control: without protection (fs.write off by --mode off), the attack writes both.
	(cd "$S" && "$MOAT" run --mode off -- sh -c '(printf "#!/bin/sh\n" >.git/modules/sub/hooks/post-checkout) 2>/dev/null && echo W:hook
		(echo "# moat-fault" >>.git/modules/sub/config) 2>/dev/null && echo W:config' >"$SCRATCH/out" 2>/dev/null)
	is "$(grep -c '^W:' "$SCRATCH/out")" 2 "  control: unsandboxed, the attack writes the submodule's hook and config"
	rm -f "$S/.git/modules/sub/hooks/post-checkout"
fi

# --- moat's children before the command (a shell's background job that then
# exec'd moat, an embedder's own): never the tree's, never killed.  The
# listing of /proc/self/task cut short (getdents64 failing with ENOMEM) was
# taken for its end: no child before, and the job was killed with the
# tree's leftovers at the end of the run.  Each of moat's first listings
# refused in turn: the job lives, and a run refused says why.
# The shell waits on a FIFO for strace to attach to it (after its job
# started: the job is not traced, and strace ends with moat).
jobs_outcomes= killed= said=0
for k in 1 2 3; do
	rm -f "$SCRATCH/go" "$SCRATCH/bg" "$SCRATCH/rc" && mkfifo "$SCRATCH/go"
	(sh -c 'sleep 20 </dev/null >/dev/null 2>&1 & echo $! >"$1/bg"; read -r _ <"$1/go"; exec env "$2" "$3" run --mode off -- /bin/true' \
		sh "$SCRATCH" "$NOLSAN" "$MOAT" >/dev/null 2>"$SCRATCH/err"; echo $? >"$SCRATCH/rc") &
	shpid=$!
	wait_ready 10 "the shell's background job" test -s "$SCRATCH/bg"
	# the shell itself, not the subshell around it
	sh1=$(pgrep -P "$shpid" -x sh | head -1)
	strace -f -qq --seccomp-bpf -o /dev/null -e trace=getdents64 -e "inject=getdents64:error=ENOMEM:when=$k" -p "${sh1:-0}" 2>/dev/null &
	tpid=$!
	sleep 0.5
	echo go >"$SCRATCH/go"
	wait "$shpid" "$tpid"
	rc=$(cat "$SCRATCH/rc")
	bg=$(cat "$SCRATCH/bg")
	sleep 0.2
	kill -0 "$bg" 2>/dev/null || killed="$killed $k"
	[ "$rc" = 125 ] && grep -q "reading moat's children" "$SCRATCH/err" && said=$((said + 1))
	jobs_outcomes="$jobs_outcomes $k:$rc"
	kill "$bg" 2>/dev/null
done
[ -z "$killed" ]
ok $? "the listing of moat's children refused (ENOMEM, K = 1..3:$jobs_outcomes): the shell's background job is never taken for the tree's${killed:+; killed at K =$killed}"
[ "$said" -ge 1 ]
ok $? "  a run refused for it says why ($said of 3)"
BAD_HELD= REFUSED=0 RAN=0 HUNG=

T0=$SECONDS
variant native enforced/enforced "found held home"
NATIVE=$((REFUSED + RAN))
diag "native: $REFUSED runs refused (125), $RAN ran, in $((SECONDS - T0)) s"
fault_verdicts "native: "
[ -z "$BAD_EXIT" ]
ok $? "native: every run refused saying why, or ran with a report; none crashed${BAD_EXIT:+; not at$BAD_EXIT}"

BAD_FOUND= BAD_HELD= HUNG= BAD_EXIT= REFUSED=0 RAN=0 T0=$SECONDS
FAULT_ENV=(MOAT_HOST_LIMIT=userns=0,root=0)
# Without namespaces fs.write is missing under held and home alike (no
# protected names in a write grant): held alone, for fs.secrets.
variant "no namespaces" missing/enforced "found held"
diag "no namespaces: $REFUSED runs refused (125), $RAN ran, in $((SECONDS - T0)) s"
fault_verdicts "no namespaces: "
[ -z "$BAD_EXIT" ]
ok $? "no namespaces: every run refused saying why, or ran with a report; none crashed${BAD_EXIT:+; not at$BAD_EXIT}"

done_testing
