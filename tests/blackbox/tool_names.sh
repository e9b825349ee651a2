#!/usr/bin/env bash
# Names that reach the external tools: a path, a variable, an argument or a
# directory that holds what each tool treats specially (',' '=' ':' quotes,
# '$' and backticks, a leading '-', newlines, long names) is passed so that
# the protection applies to exactly the named object, or is refused naming
# it.  Each case is tried from inside the sandbox, not read off the argv.
#
#   1. A bwrap export's run.sh gave descriptors 3 and 4 to every "FD" after
#      "--args" or "--seccomp" in argv.json, the command's own words too:
#      `moat export -- prog --args FD` ran `prog --args 3`.  Now only bwrap's
#      own two placeholders are replaced.  Control: those still are (the
#      exported variable reaches the command, its seccomp mode is 2).
#   2. run.sh took its directory from $(dirname "$0"), which drops the
#      trailing newlines of a name: exported to "out<newline>", it read
#      env.args (bwrap options, any of them) from "out" beside it.  Now it
#      reads its own.  Control: the planted neighbour is there, readable.
#   3. firejail refuses a path with a control character or one of
#      \&!"<>%^{};, and exits 1 before the command: the report said the
#      command ran and exited 1.  Now the backend is unavailable, naming
#      the path and the character, and nothing runs.  Control: the same
#      grant without the character runs under firejail.  The glob
#      characters *?[] firejail takes, as a pattern: a write grant of /p/a*
#      made /p/ab writable too (fs.write said missing, but not why); now
#      refused the same way.  (Root only: firejail refuses uid 65534.)
#   3b. firejail keeps the caller's working directory and, where its view
#      lacks it (its private /tmp and /var/tmp), starts the command in HOME
#      without a word: `rm -rf build` from an ungranted /tmp/x was HOME's.
#      Now moat __init enters the directory or refuses (exit 125, executed
#      false through --started-fd, which firejail's own refusals now reach
#      too).  Control: a granted directory under /tmp is entered.
#   4. bwrap and oci given such names (grants, the working directory, a
#      variable, the arguments): the read grant is readable and not
#      writable, the write grant writable, the secret beside them unread,
#      nothing written outside, and the cwd, the variable and the arguments
#      arrive unchanged.  A name that is not UTF-8 is refused by oci: it
#      said "a path of the policy is not UTF-8"; now it names the path (a
#      variable by its name, not its value).
#   5. A ".." after a symbolic link (--read /p/priv/link/.., the link to
#      ../pub/sub) was folded by text: the grant was /p/priv, the link's
#      own directory, where the kernel (`ls /p/priv/link/..`) shows /p/pub:
#      the files beside the link were readable under another name than the
#      one given.  Now refused on the command line and in a config file,
#      naming the link.  Control: a ".." after a directory is taken.
#
# Runs as root and as an unprivileged user.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch_sticky
UID_NOW=$(id -u)
unset MOAT_OCI_RUNTIME MOAT_HOST_LIMIT
cd /

# Which backends run for this user: RUNS[b]=1, else WHY[b] the report's reason.
declare -A RUNS WHY
for b in bwrap oci firejail; do
	"$MOAT" run --mode prefer --backend "$b" --profile strict --dry-run -- /bin/true >"$REPORTS/probe-$b.json" 2>/dev/null
	if [ "$(json_get "$REPORTS/probe-$b.json" '["status"]' 2>/dev/null)" = unavailable ]; then
		WHY[$b]=$(json_get "$REPORTS/probe-$b.json" '["properties"]["fs.read"]["reason"]' 2>/dev/null)
	else
		RUNS[$b]=1
	fi
done
runs() { [ -n "${RUNS[$1]:-}" ]; }
why() { echo "$1 cannot run as uid $UID_NOW here: ${WHY[$1]:-unknown}"; }

# --- 1. run.sh replaces bwrap's placeholders only ---------------------------------
if ! runs bwrap; then
	skip "$(why bwrap)"
else
	D=$SCRATCH/ex1
	"$MOAT" export --backend bwrap -o "$D" --profile strict --env V=exported -- \
		/bin/sh -c 'printf "%s|" "$@"; printf "%s|" "$V"; grep "^Seccomp:" /proc/self/status' x \
		--args FD --seccomp FD >/dev/null 2>"$SCRATCH/ex1.err"
	ok $? "a bwrap export of a command whose own arguments are --args FD --seccomp FD ($(head -c 200 "$SCRATCH/ex1.err"))"
	out=$(bash "$D/run.sh" 2>&1)
	like "$out" '^--args\|FD\|--seccomp\|FD\|' "  run.sh runs the command's own words unchanged (not --args 3, --seccomp 4)"
	like "$out" '\|exported\|Seccomp:[[:space:]]*2$' "  control: bwrap's own --args and --seccomp get env.args and seccomp.bpf"
fi

# --- 2. run.sh reads its own directory --------------------------------------------
if ! runs bwrap; then
	skip "$(why bwrap)"
else
	D="$SCRATCH/out"$'\n'
	"$MOAT" export --backend bwrap -o "$D" --profile strict --env V=exported -- /bin/sh -c 'echo "V=$V"' \
		>/dev/null 2>"$SCRATCH/ex2.err"
	ok $? "a bwrap export into a directory whose name ends in a newline ($(head -c 200 "$SCRATCH/ex2.err"))"
	# The neighbour without the newline: bwrap options of someone else's.
	mkdir -p "$SCRATCH/out"
	printf -- '--setenv\0V\0planted\0' >"$SCRATCH/out/env.args"
	cp "$D/seccomp.bpf" "$SCRATCH/out/"
	ok "$([ -r "$SCRATCH/out/env.args" ] && echo 0 || echo 1)" "  control: the planted env.args beside it is readable"
	is "$(bash "$D/run.sh" 2>&1)" "V=exported" "  run.sh gives bwrap its own env.args, not the neighbour's"
fi

# --- 3. firejail: a path it refuses is refused before anything runs ---------------
if ! runs firejail; then
	skip "$(why firejail)"
	skip "$(why firejail)"
	skip "$(why firejail)"
else
	mkdir -p "$SCRATCH/fj/a,b" "$SCRATCH/fj/ab" "$SCRATCH/fj/c;d"
	for n in 'a,b' 'c;d'; do
		rm -f "$SCRATCH/ran"
		out=$("$MOAT" run --mode prefer --backend firejail --profile strict --read "$SCRATCH/fj/$n" \
			--write "$SCRATCH" --report-fd 3 -- /bin/touch "$SCRATCH/ran" 2>&1 3>"$REPORTS/fj.json")
		rc=$?
		is "$rc/$(json_get "$REPORTS/fj.json" '["status"]')/$(json_get "$REPORTS/fj.json" '["run"]["executed"]')" \
			"125/unavailable/False" "firejail, a grant of $n: unavailable, not run"
		like "$out" "firejail refuses the path $SCRATCH/fj/$n: it takes no '${n:1:1}' in a file name" "  naming the path and the character"
		ok "$([ ! -e "$SCRATCH/ran" ] && echo 0 || echo 1)" "  nothing ran"
	done
	# A glob character: firejail's --read-write globs (measured outside
	# /tmp: a write grant of /p/a* made /p/ab writable too).
	mkdir -p "$SCRATCH/fj/a*"
	rm -f "$SCRATCH/ran"
	out=$("$MOAT" run --mode prefer --backend firejail --profile strict --write "$SCRATCH/fj/a*" \
		--report-fd 3 -- /bin/touch "$SCRATCH/fj/a*/ran" 2>&1 3>"$REPORTS/fj.json")
	is "$?/$(json_get "$REPORTS/fj.json" '["status"]')/$([ -e "$SCRATCH/fj/a*/ran" ] && echo ran)" "125/unavailable/" \
		"firejail, a write grant of a*: unavailable, not run"
	like "$out" "firejail would take the path $SCRATCH/fj/a\\* as a pattern" "  saying it would be a pattern"
	"$MOAT" run --mode prefer --backend firejail --profile strict --read "$SCRATCH/fj/ab" --write "$SCRATCH" \
		-- /bin/touch "$SCRATCH/ran" >/dev/null 2>&1
	is "$?/$([ -e "$SCRATCH/ran" ] && echo ran)" "0/ran" "control: the grant named without the character runs under firejail"
fi

# --- 3b. firejail: the command runs in its directory, or not at all --------------
if ! runs firejail; then
	skip "$(why firejail)"
else
	mkdir -p "$SCRATCH/wd/granted"
	out=$(cd "$SCRATCH/wd" && "$MOAT" run --mode prefer --backend firejail --profile strict --report-fd 3 \
		-- /bin/pwd 2>&1 3>"$REPORTS/cwd.json")
	rc=$?
	is "$rc/$(json_get "$REPORTS/cwd.json" '["run"]["executed"]')" "125/False" \
		"firejail from an ungranted directory under its private /tmp: refused, not run (not in HOME)"
	like "$out" "the working directory $SCRATCH/wd is not in the sandbox's view" "  naming it"
	unlike "$out" "^/" "  the command printed no directory"
	out=$(cd "$SCRATCH/wd/granted" && "$MOAT" run --mode prefer --backend firejail --profile strict \
		--read "$SCRATCH/wd/granted" -- /bin/pwd 2>/dev/null)
	is "$?/$out" "0/$SCRATCH/wd/granted" "control: a granted directory there is the command's"
fi

# --- 4. bwrap and oci take every name as it is -----------------------------------
B=$SCRATCH/mx
mkdir -p "$B" && chmod 0755 "$B"
echo SECRET >"$B/secret"
NAMES=('a,b' 'a=b' 'a:b' 'a b' "a'b" 'a"b' 'a$b' 'a`id`' 'a\b' '-a' $'a\nb' $'a\tb' 'a*' "a'\$(id)'b"
	"$(printf 'L%.0s' {1..200})")
PROBE='r=""
cat f >/dev/null 2>&1 && r="$r read" || r="$r NO-READ"
cat "$B/secret" >/dev/null 2>&1 && r="$r SECRET-READ"
echo x >"$1/n" 2>/dev/null && r="$r write" || r="$r NO-WRITE"
echo x >f 2>/dev/null && r="$r WROTE-READ-GRANT"
echo x >"$B/out" 2>/dev/null
[ "$(pwd)" = "$2" ] && r="$r cwd" || r="$r CWD-WRONG"
[ "$V" = "$3" ] && [ "$4" = "$3" ] && r="$r env-args" || r="$r ENV-OR-ARGS-WRONG"
echo "$r"'
# probe NAME ARGS...: the probe's verdict inside, then what the host shows.
probe() {
	local n=$1 out host
	shift
	mkdir -p -- "$B/$n" "$B/w-$n" && echo in >"$B/$n/f" && chmod -R a+rwX -- "$B/$n" "$B/w-$n"
	out=$("$MOAT" run "$@" --profile strict --env B="$B" --env V="$n" --read "$B/$n" --write "$B/w-$n" \
		--cwd "$B/$n" --report-fd 3 -- /bin/sh -c "$PROBE" x "$B/w-$n" "$B/$n" "$n" "$n" 2>&1 3>"$REPORTS/mx.json")
	# On the host: the write grant's file, the read grant's unchanged,
	# nothing beside them (inside, $B is on the private /tmp).
	host="$([ -e "$B/w-$n/n" ] && echo ' host-write')$([ -e "$B/out" ] && echo ' WROTE-OUTSIDE')$(
		[ "$(cat -- "$B/$n/f")" = in ] || echo ' READ-GRANT-CHANGED')"
	rm -f -- "$B/out" "$B/w-$n/n"
	echo in >"$B/$n/f"
	printf '%s%s|%s' "$(printf '%s' "$out" | tail -1)" "$host" "$(json_get "$REPORTS/mx.json" '["status"]')"
}
is "$(probe 'a,b' --mode off)" " read SECRET-READ write WROTE-READ-GRANT cwd env-args host-write WROTE-OUTSIDE READ-GRANT-CHANGED|off" \
	"control: under --mode off the probe reads the secret, writes the read grant and outside"
for b in bwrap oci; do
	if ! runs $b; then
		skip "$(why $b)"
		continue
	fi
	bad=""
	for n in "${NAMES[@]}"; do
		got=$(probe "$n" --backend $b)
		[ "$got" = " read write cwd env-args host-write|enforced" ] || bad="$bad [$(printf '%q' "$n"): $got]"
	done
	is "$bad" "" "$b: ${#NAMES[@]} names with , = : quotes \$ \` \\ - newline tab * and a long one: each grant exactly as named, the secret beside it unread, nothing written outside, cwd, variable and arguments intact"
done
# A name that is not UTF-8 cannot be written into config.json: refused, naming it.
if ! runs oci; then
	skip "$(why oci)"
else
	mkdir -p "$B/"$'\xff'
	out=$("$MOAT" run --backend oci --profile strict --read "$B/"$'\xff' -- /bin/true 2>&1)
	is "$?" 125 "oci: a grant that is not UTF-8 is refused"
	like "$out" "the path $B/\\\\xff is not UTF-8, which the OCI config.json moat writes must be" "  naming it, as \\\\xff"
	out=$("$MOAT" run --backend oci --profile strict --env T=$'tok\xffen' -- /bin/true 2>&1)
	is "$?" 125 "oci: a variable whose value is not UTF-8 is refused"
	like "$out" "the value of the variable T is not UTF-8" "  naming the variable"
	unlike "$out" "tok" "  not its value (a token, perhaps)"
fi

# --- 5. a ".." after a link is refused, not folded to the link's directory --------
X=$SCRATCH/dd
mkdir -p "$X/pub/sub" "$X/priv"
echo public >"$X/pub/x"
echo PRIVATE >"$X/priv/f"
ln -s ../pub/sub "$X/priv/link"
chmod -R a+rX "$X"
out=$("$MOAT" run --backend native --profile strict --read "$X/priv/link/.." -- /bin/cat "$X/priv/f" 2>&1)
is "$?" 125 "--read LINK/..: refused"
unlike "$out" PRIVATE "  the file beside the link, which the path does not name, is not read"
like "$out" "$X/priv/link is a symbolic link, and the \"..\" after it is its target's parent" "  naming the link"
printf '[mcp_servers.x]\ncommand = ["/bin/cat", "%s"]\n[mcp_servers.x.sandbox]\nread = ["%s"]\n' \
	"$X/priv/f" "$X/priv/link/.." >"$SCRATCH/dd.toml"
out=$("$MOAT" run --config "$SCRATCH/dd.toml" --server x 2>&1)
is "$?" 125 "the same in a config file: refused"
like "$out" "dd\.toml:4:9: mcp_servers\.x\.sandbox\.read: .*is a symbolic link" "  at file:line:col"
out=$("$MOAT" run --backend native --profile strict --read "$X/pub/sub/.." -- /bin/sh -c "cat $X/pub/x; cat $X/priv/f" 2>&1)
like "$out" "^public" "control: a \"..\" after a directory is taken (the parent is granted)"
unlike "$out" PRIVATE "  and only it"

done_testing
