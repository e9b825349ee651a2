#!/usr/bin/env bash
# Black-box tests of `moat run` (issue 2): stdio, exit codes, signals,
# timeout, the process tree, environment, fds, session, bad input, report.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
cd "$SCRATCH"
mkdir -p proj
cd proj
run() { "$MOAT" run --write "$SCRATCH" "$@"; }

# --- stdio is byte-exact, and moat writes nothing to stdout itself
head -c $((64 << 20)) /dev/urandom >"$SCRATCH/in.bin"
want=$(sha256sum <"$SCRATCH/in.bin" | cut -d' ' -f1)
got=$(run -- cat <"$SCRATCH/in.bin" | sha256sum | cut -d' ' -f1)
is "$got" "$want" "64 MiB through moat run -- cat is byte-exact (sha256)"
rm -f "$SCRATCH/in.bin"
out=$(run -- true)
is "$out" "" "moat writes nothing to stdout"
out=$("$MOAT" run --bogus -- true 2>/dev/null)
is "$out" "" "not even on a usage error"
err=$(run -- sh -c 'echo to-stderr >&2' 2>&1 >/dev/null)
is "$err" "to-stderr" "stderr reaches the caller"

# --- exit status contract
run -- "$HELPER" exit 0; is $? 0 "exit 0 passes through"
run -- "$HELPER" exit 3; is $? 3 "exit 3 passes through"
run -- "$HELPER" exit 42; is $? 42 "exit 42 passes through"
run -- "$HELPER" killself 15; is $? 143 "killed by SIGTERM gives 143"
run -- "$HELPER" killself 9; is $? 137 "killed by SIGKILL gives 137"
run -- no-such-command-xyz 2>"$SCRATCH/err"; is $? 127 "command not found gives 127"
like "$(cat "$SCRATCH/err")" "no-such-command-xyz" "  and names the command"
printf '#!/bin/sh\necho hi\n' >"$SCRATCH/noexec.sh"; chmod 0644 "$SCRATCH/noexec.sh"
run -- "$SCRATCH/noexec.sh" 2>"$SCRATCH/err"; is $? 126 "not executable gives 126"
# "Permission denied" alone named no fix: the hint gives the chmod, or the
# interpreter of the #! line.
is "$(cat "$SCRATCH/err")" "moat: $SCRATCH/noexec.sh: Permission denied
moat: hint: it has no execute bit (mode 0644): chmod +x $SCRATCH/noexec.sh, or run it with the interpreter its #! line names: moat run -- /bin/sh $SCRATCH/noexec.sh" \
	"  and the hint says how to run it"
printf 'data\n' >"$SCRATCH/plain.txt"; chmod 0640 "$SCRATCH/plain.txt"
run -- "$SCRATCH/plain.txt" 2>"$SCRATCH/err"; is $? 126 "a file without #! and execute bit: 126"
like "$(cat "$SCRATCH/err")" "hint: it has no execute bit \\(mode 0640\\): chmod \\+x $SCRATCH/plain\\.txt, if it is a program\$" "  the hint gives the chmod"
run -- /bin/sh "$SCRATCH/noexec.sh" >"$SCRATCH/out" 2>&1
is "$?:$(cat "$SCRATCH/out")" "0:hi" "  control: the hint's command runs it"
run -- "$SCRATCH" 2>/dev/null; is $? 126 "a directory gives 126"
# Executable files the kernel does not run: moat does not guess an
# interpreter, and its hint says what is wrong and how to run the file.
# not_run NAME BYTES STATUS WHAT HINT_RE HINT_DESC: the file NAME holding
# BYTES (printf's escapes) exits STATUS, and moat's hint matches HINT_RE.
not_run() {
	printf "$2" >"$SCRATCH/$1" && chmod 0755 "$SCRATCH/$1"
	run -- "$SCRATCH/$1" 2>"$SCRATCH/err"
	is $? "$3" "$4 gives $3"
	like "$(cat "$SCRATCH/err")" "$5" "$6"
}
not_run noshebang 'echo no-shebang\n' 126 "a script without a #! line" \
	"hint: the file is neither a program for this machine nor a script with a #! line.*moat run -- sh FILE" \
	"  and the hint says how to run it"
not_run badinterp '#!/nonexistent/interpreter\n' 127 "a #! naming no file" \
	"hint: the file is there: what is missing is the interpreter its #! line names" \
	"  and the hint says the file was found, its interpreter not"
not_run crlf '#!/bin/sh\r\necho crlf\r\n' 127 "a script with Windows line endings (#!/bin/sh\\r)" \
	"hint: $SCRATCH/crlf has a #! line that ends in a carriage return \\(Windows line endings\\).*sed -i 's/\\\\r\\\$//' $SCRATCH/crlf" \
	"  and the hint names the carriage return and the fix"
not_run bom '\357\273\277#!/bin/sh\necho bom\n' 126 "a script with a byte order mark before its #!" \
	"hint: $SCRATCH/bom starts with a byte order mark \\(EF BB BF\\) before its #!.*sed -i '1s/\\^" \
	"  and the hint names the byte order mark and the fix"
sed -i '1s/^\xEF\xBB\xBF//' "$SCRATCH/bom"
is "$(run -- "$SCRATCH/bom" 2>/dev/null)" "bom" "  control: the hint's sed makes it run"
# A path moat shows that a file chose (here a #! line's interpreter, in a
# directory whose name holds an escape sequence: a cloned repository can
# ship one) reaches the terminal with its control characters escaped:
# raw, they could retitle the window or overwrite moat's own lines.
ESCDIR=$(printf '%s/esc\033]0;PWNED\007dir' "$SCRATCH")
mkdir -p "$ESCDIR" && cp /bin/true "$ESCDIR/tool"
mkdir -p "$SCRATCH/escs"
printf '#!%s/tool\n' "$ESCDIR" >"$SCRATCH/escs/script"; chmod 0755 "$SCRATCH/escs/script"
(cd / && "$MOAT" run --profile strict -- "$SCRATCH/escs/script" 2>"$SCRATCH/err")
is $? 125 "a #! interpreter the sandbox does not see, in a directory named with an escape sequence: refused"
ok "$(LC_ALL=C grep -c "$(printf '\033')" "$SCRATCH/err")" "  moat's stderr holds no escape byte"
like "$(cat "$SCRATCH/err")" 'esc\\x1b\]0;PWNED\\x07dir/tool' "  the name is shown with it escaped (\\x1b, \\x07)"
# The command's name, a grant's path and a fetched package's name come
# from a server's config too: each line that names them, escaped.
# shown_escaped WHAT: $SCRATCH/err names $ESCDIR escaped, and holds no ESC
shown_escaped() {
	ok "$(LC_ALL=C grep -c "$(printf '\033')" "$SCRATCH/err")" "$1: no escape byte on stderr" &&
		like "$(cat "$SCRATCH/err")" 'esc\\x1b\]0;PWNED\\x07dir' "  the name shown escaped"
}
printf 'plain text\n' >"$ESCDIR/notprog"; chmod 0755 "$ESCDIR/notprog"
(cd "$SCRATCH" && "$MOAT" run --mode off -- "$ESCDIR/tool" 2>"$SCRATCH/err")
shown_escaped "--mode off: running NAME unsandboxed"
(cd "$SCRATCH" && MOAT_HOST_LIMIT=landlock=0,userns=0,root=0 "$MOAT" run -- "$ESCDIR/tool" 2>"$SCRATCH/err")
shown_escaped "mode require on a host without Landlock or namespaces: refusing to run NAME"
(cd "$SCRATCH" && "$MOAT" run --mkdir --write "$ESCDIR/made" -- /bin/true 2>"$SCRATCH/err")
shown_escaped "--mkdir: made PATH"
for b in native bwrap; do
	"$MOAT" run --backend "$b" --dry-run -- /bin/true 2>/dev/null | grep -q '"status": "enforced"' || continue
	(cd "$SCRATCH" && "$MOAT" run --backend "$b" --read "$ESCDIR" -- "$ESCDIR/notprog" 2>"$SCRATCH/err")
	is $? 126 "$b: a granted file that is no program: execve fails inside (126)"
	shown_escaped "  $b: moat: execve NAME: Exec format error"
done
# What moat's own lines name from its arguments or from a file's name (a
# config file a cloned repository ships, a word a script passes on) is shown
# escaped as well: ESC, newline and TAB as \x1b, \x0a and \x09 -- raw, an ESC
# drives the terminal, a newline forges a line of moat's, a TAB moves a
# name's end to another column.
CTL=$(printf 'c\033[31m\t\nz')
CTL_SHOWN='c\x1b[31m\x09\x0az'
# shown_line WHAT LINE: $SCRATCH/err holds LINE whole, and no ESC or TAB
shown_line() {
	ok "$(LC_ALL=C grep -c "$(printf '[\033\t]')" "$SCRATCH/err")" "$1: no ESC or TAB byte on stderr" &&
		ok "$(grep -qxF -- "$2" "$SCRATCH/err"; echo $?)" "  the line, its name escaped: $2"
	[ "$(LC_ALL=C grep -c "$(printf '[\033\t]')" "$SCRATCH/err")" = 0 ] || diag "$(cat -A "$SCRATCH/err")"
}
"$MOAT" "$CTL" 2>"$SCRATCH/err"
shown_line "moat WORD: unknown command" "moat: unknown command '$CTL_SHOWN'"
"$MOAT" help "$CTL" 2>"$SCRATCH/err"
shown_line "moat help WORD: unknown help topic" "moat: unknown help topic '$CTL_SHOWN'"
"$MOAT" mcp "$CTL" 2>"$SCRATCH/err"
shown_line "moat mcp WORD: not a subcommand" "moat: mcp: expected list, wrap or unwrap, got '$CTL_SHOWN'"
"$MOAT" mcp list "--$CTL" 2>"$SCRATCH/err"
shown_line "moat mcp list --WORD: unknown option" "moat: mcp: unknown option '--$CTL_SHOWN'"
"$MOAT" probe "$CTL" 2>"$SCRATCH/err"
shown_line "moat probe WORD: unknown option" "moat: probe: unknown option '$CTL_SHOWN'"
"$MOAT" export -o "$SCRATCH/ctl-export" --format "$CTL" -- /bin/true 2>"$SCRATCH/err"
shown_line "moat export --format WORD: unknown format" "moat: --format $CTL_SHOWN: unknown export format"
CTLCFG="$SCRATCH/cfg$CTL.toml"
printf '[mcp_servers.a]\ncommand = ["true"]\n' >"$CTLCFG"
"$MOAT" config check "$CTLCFG" 2>"$SCRATCH/err"
shown_line "moat config check FILE, a file named with control characters: ok" "$SCRATCH/cfg$CTL_SHOWN.toml: ok (1 server)"
printf '[mcp_servers.a]\ncommand = ["true"]\nsandbox = {nte = "x"}\n' >"$CTLCFG"
"$MOAT" config check "$CTLCFG" 2>"$SCRATCH/err"
shown_line "  a problem in it: the count" "moat: $SCRATCH/cfg$CTL_SHOWN.toml: 1 problem"
printf '[mcp_servers.a\ncommand = \n' >"$CTLCFG"
"$MOAT" config check "$CTLCFG" 2>"$SCRATCH/err"
shown_line "  a syntax error in it: where the reading stops" \
	"moat: $SCRATCH/cfg$CTL_SHOWN.toml: the reading stops at a syntax error: nothing after it was checked"
# A run that cannot start still has its report, when one is asked for: exit
# 127 or 126, run.executed false, run.failure the reason, command.exe "".
rm -f "$REPORTS/nf.json"
"$MOAT" run --report "$REPORTS/nf.json" -- no-such-command-xyz 2>"$SCRATCH/err"; rc=$?
is "$rc" 127 "command not found with --report: still 127"
like "$(cat "$SCRATCH/err")" "^moat: no-such-command-xyz: command not found in PATH" "  the same message"
is "$(json_eval "$REPORTS/nf.json" '[d["run"]["executed"], d["run"]["exit_code"], d["run"]["failure"], d["command"]["exe"]]' 2>&1)" \
	'[false, 127, "no-such-command-xyz: command not found in PATH", ""]' "  and a report: not executed, exit_code 127, the failure"
valid_report "$REPORTS/nf.json" "  the report of a command not found"
"$MOAT" run --report "$REPORTS/nf.json" -- "$SCRATCH/noexec.sh" 2>/dev/null; rc=$?
is "$rc:$(json_eval "$REPORTS/nf.json" '[d["run"]["executed"], d["run"]["exit_code"]]' 2>&1)" "126:[false, 126]" \
	"not executable with --report: 126, and its report"
out=$("$MOAT" run --report-fd 3 -- no-such-command-xyz 3>&1 >/dev/null 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["run"]["exit_code"])' 2>&1)
is "$out" 127 "  through --report-fd too"
printf '[mcp_servers.gone]\ncommand = "no-such-server-xyz"\ninstall_hint = "pip install gone"\n' >"$SCRATCH/gone.toml"
"$MOAT" run --config "$SCRATCH/gone.toml" --server gone --report "$REPORTS/nf.json" 2>"$SCRATCH/err"; rc=$?
is "$rc:$(json_eval "$REPORTS/nf.json" '[d["run"]["exit_code"], d["server"]["name"]]' 2>&1)" '127:[127, "gone"]' \
	"  and for a config's server, whose report names it"
is "$(cat "$SCRATCH/err")" "moat: $SCRATCH/gone.toml:2:11: mcp_servers.gone.command: no-such-server-xyz: command not found in PATH
moat: hint: pip install gone" "  with its file:line:col and install hint"
"$MOAT" run --read /no/such/path -- no-such-command-xyz 2>"$SCRATCH/err"; rc=$?
is "$rc:$(grep -c '^moat: [^h]' "$SCRATCH/err")" "127:1" "without a report, a command not found is the one error, as before"
"$MOAT" run --report "$SCRATCH/refused.json" -- no-such-command-xyz 2>"$SCRATCH/err"; rc=$?
is "$rc" 125 "a report that cannot be written (a directory anyone can write): 125, whatever the command did"
is "$(grep -v '^moat: hint: ' "$SCRATCH/err" | sed -E 's/(refused.json).*/\1/')" \
	"moat: no-such-command-xyz: command not found in PATH
moat: --report $SCRATCH/refused.json
moat: the command could not start (127); exiting 125 since the report is missing" "  saying both, and why 125"

# --- the command is resolved once via PATH in the parent
mkdir -p "$SCRATCH/bin"; printf '#!/bin/sh\necho from-scratch-bin\n' >"$SCRATCH/bin/mytool"; chmod 0755 "$SCRATCH/bin/mytool"
out=$(PATH="$SCRATCH/bin:/usr/bin:/bin" run --read "$SCRATCH/bin" -- mytool)
is "$out" "from-scratch-bin" "the command is found via PATH"
"$MOAT" run --dry-run -- sh >"$SCRATCH/dry.json"
like "$(json_get "$SCRATCH/dry.json" '["command"]["exe"]')" '^/.*/sh$' "the resolved absolute path is what runs (dry run shows it)"

# --- signals are forwarded
rm -f "$SCRATCH/sig" "$SCRATCH/sig.ready"
with_default_signals "$MOAT" run --write "$SCRATCH" -- "$HELPER" signals "$SCRATCH/sig" &
pid=$!
if wait_ready 30 "the signal-logging command (sig.ready)" test -e "$SCRATCH/sig.ready"; then
	for s in TERM INT HUP QUIT USR1 USR2 WINCH; do kill -s "$s" "$pid"; sleep 0.05; done
	wait "$pid"
	is "$(sort "$SCRATCH/sig" 2>/dev/null | tr '\n' ' ')" "HUP INT QUIT TERM USR1 USR2 WINCH " \
		"SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH reach the command"
else
	kill -KILL "$pid"
	wait "$pid"
fi

# --- --timeout: SIGTERM, then SIGKILL after the grace period, then 124
# How long moat takes to end once the command has its SIGTERM, taken from
# the SIGTERM's arrival (testhelper term-stamp writes the time in its
# handler, then exits): a run that waits for the SIGKILL instead takes the
# 2 s grace more.  The old clock ran from before moat started, and a loaded
# machine spent most of the old bound (2 s, against 2.5 s for a run that
# waits out the grace) on the start-up and the end alone.  --timeout 2: the
# helper has its handler long before then.
rm -f "$SCRATCH/term.us"
run --timeout 2 -- "$HELPER" term-stamp "$SCRATCH/term.us" 30 2>"$SCRATCH/timeout.err"
rc=$? end=${EPOCHREALTIME/./}
termed=$(cat "$SCRATCH/term.us" 2>/dev/null)
is "$rc" 124 "--timeout gives exit 124"
if [ -n "$termed" ]; then
	ms=$(((end - termed) / 1000))
	ok $([ "$ms" -lt 1500 ] && echo 0 || echo 1) \
		"  a command that honours SIGTERM ends the run at once: $ms ms after its SIGTERM (the SIGKILL comes 2 s after it)"
else
	ok 1 "  a command that honours SIGTERM ends the run at once: it never had a SIGTERM"
fi
like "$(cat "$SCRATCH/timeout.err")" "^moat: time limit reached \(--timeout 2\): the command was sent SIGTERM" \
	"  and moat says why on stderr (124 alone could be the command's own)"
run -- "$HELPER" exit 124 2>"$SCRATCH/timeout0.err"
unlike "$(cat "$SCRATCH/timeout0.err")" "time limit" "  control: a command that exits 124 by itself: nothing said"
start=$(date +%s%N)
run --timeout 0.3 -- "$HELPER" ignore-term 30 2>/dev/null; rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
is "$rc" 124 "--timeout with SIGTERM ignored still gives 124"
# Not before the timeout and the grace (counted from before moat started,
# so never less on a loaded machine), and well before the command's own 30 s.
ok $([ "$ms" -ge 2200 ] && [ "$ms" -lt 20000 ] && echo 0 || echo 1) "  SIGKILL follows after the 2 s grace (${ms} ms)"

# --- moat killed by SIGKILL: the whole tree dies, double-forked daemon included
marker="moat-daemon-$$-$RANDOM"
"$MOAT" run --write "$SCRATCH" -- "$HELPER" daemon "$marker" >"$SCRATCH/daemon.out" &
mpid=$!
daemon_up() { pgrep -f "$marker" >/dev/null && grep -q daemonized "$SCRATCH/daemon.out"; }
wait_ready 30 "the double-forked daemon" daemon_up
ok $(pgrep -f "$marker" >/dev/null && echo 0 || echo 1) "the double-forked daemon runs (control)"
kill -KILL "$mpid"; wait "$mpid" 2>/dev/null
# It lives 60 s if nothing ends it; 20 s allow for a loaded machine (the
# old 1 s was the kernel's work plus 20 scans of /proc).
gone=1 t0=$(date +%s%N)
for _ in $(seq 400); do pgrep -f "$marker" >/dev/null || { gone=0; break; }; sleep 0.05; done
ok $gone "after SIGKILL of moat, the daemon is gone ($((($(date +%s%N) - t0) / 1000000)) ms after)"
pkill -KILL -f "$marker" 2>/dev/null

# --- environment: exactly the safe set plus what was declared
out=$(env -i PATH=/usr/bin:/bin HOME=/nonexistent-home LANG=C.UTF-8 LC_ALL=C XDG_DATA_HOME=/x TERM=xterm-256color \
	SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt AWS_SECRET_ACCESS_KEY=leak GITHUB_TOKEN=leak \
	SSH_AUTH_SOCK=/tmp/agent LD_PRELOAD=/nonexistent.so FOO=passed TZ=Asia/Tokyo LANGUAGE=de COLORTERM=truecolor \
	NO_COLOR=1 TMPDIR=/var/tmp \
	"$MOAT" run --profile strict --env A=1 --env-pass FOO -- /usr/bin/env 2>/dev/null | sort | tr '\n' ' ')
is "$out" "A=1 COLORTERM=truecolor FOO=passed HOME=/nonexistent-home LANG=C.UTF-8 LANGUAGE=de LC_ALL=C NO_COLOR=1 PATH=/usr/bin:/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt TERM=xterm-256color TZ=Asia/Tokyo XDG_DATA_HOME=/x " \
	"the child's environment is exactly the safe set plus --env and --env-pass"
# A name passes whole, never as the start of a longer one: --env-pass FOO
# and the safe set's PATH, HOME, TERM and TZ name those variables only
# (TERMINFO and TZDIR name directories terminfo and tzdata are read from,
# which do not pass: policy/env.c).  The control names the longer ones and
# sees them arrive, so the probe would have seen a leak.
long_env=(env -i PATH=/usr/bin:/bin HOME=/nonexistent-home TERM=xterm TZ=UTC FOO=passed FOOBAR=leak
	TERMINFO=/leak TZDIR=/leak PATHX=leak HOMEX=leak)
out=$("${long_env[@]}" "$MOAT" run --profile strict --env-pass FOO -- /usr/bin/env 2>/dev/null | sort | tr '\n' ' ')
is "$out" "FOO=passed HOME=/nonexistent-home PATH=/usr/bin:/bin TERM=xterm TZ=UTC " \
	"env.curated: a variable whose name begins with a passed one (FOOBAR, TERMINFO, TZDIR, PATHX, HOMEX) does not pass"
out=$("${long_env[@]}" "$MOAT" run --profile strict --env-pass FOO --env-pass FOOBAR --env-pass TERMINFO \
	-- /usr/bin/env 2>/dev/null | grep -cE '^(FOOBAR|TERMINFO)=')
is "$out" 2 "  control: named with --env-pass, FOOBAR and TERMINFO do pass"
# The zone set only in TZ (a container's /etc/localtime is UTC): the
# command tells the time as the host's programs do.
is "$(TZ=Asia/Tokyo "$MOAT" run --profile strict -- date -d @0 +%H 2>/dev/null)" "09" \
	"  TZ passes: date(1) inside tells Tokyo's time, as outside"
out=$(env -i PATH=/usr/bin:/bin LD_PRELOAD=x "$MOAT" run --env-pass LD_PRELOAD -- true 2>&1); rc=$?
is "$rc" 125 "--env-pass LD_PRELOAD is refused with 125"
like "$out" "LD_PRELOAD" "  naming the variable"
for v in LD_LIBRARY_PATH LD_AUDIT NODE_OPTIONS PYTHONPATH PYTHONSTARTUP BASH_ENV ENV PERL5OPT RUBYOPT DYLD_INSERT_LIBRARIES; do
	"$MOAT" run --env-pass "$v" -- true 2>/dev/null; rc=$?
	[ "$rc" = 125 ] || break
done
is "$rc" 125 "every loader/interpreter hook is refused with --env-pass"
out=$(run --env NODE_OPTIONS=--no-warnings -- /usr/bin/env | grep '^NODE_OPTIONS=')
is "$out" "NODE_OPTIONS=--no-warnings" "an explicit --env NAME=VALUE of a hook is allowed"
run --report "$REPORTS/env.json" --env TOKEN=s3cr3t-value -- true
unlike "$(cat "$REPORTS/env.json")" "s3cr3t-value" "the report never holds environment values"
like "$(json_get "$REPORTS/env.json" '["environment"]["names"]')" '"TOKEN"' "  but lists the names"

# --- fds: only 0, 1, 2 and --keep-fd
exec 7<"$SCRATCH/proj" 8>"$SCRATCH/canary.fd"
out=$(run -- "$HELPER" fds)
is "$out" "0 1 2" "a canary fd the test opened is not visible inside"
out=$(run --keep-fd 8 -- "$HELPER" fds)
is "$out" "0 1 2 8" "--keep-fd 8 passes exactly that fd"
out=$("$MOAT" run --mode off -- "$HELPER" fds)
like "$out" "7" "control: without the sandbox the canary fd is visible"
exec 7<&- 8>&-

# --- session: a terminal of its own (tests/blackbox/tty.sh), or none; never the
# caller's; no TIOCSTI.  One script session: the caller's terminal is the same
# for the three lines.
if command -v script >/dev/null; then
	out=$(script -qec "$HELPER tty; $MOAT run -- $HELPER tty; $MOAT run --no-tty -- $HELPER tty" /dev/null |
		tr -d '\r')
	caller=$(printf '%s\n' "$out" | sed -n 1p)
	inner=$(printf '%s\n' "$out" | sed -n 2p)
	like "$caller" "devtty=OK sti=[A-Z]+ rdev=[1-9]" "control: outside moat the pty is the controlling terminal"
	like "$inner" "session_leader=1 devtty=OK sti=(EPERM|EIO|ENOTTY) rdev=[1-9]" \
		"started from a pty: new session, a terminal of its own, TIOCSTI refused"
	ok $([ "${inner##*rdev=}" != "${caller##*rdev=}" ]; echo $?) \
		"  its /dev/tty is not the caller's terminal (${inner##*rdev=}, the caller's ${caller##*rdev=})"
	like "$(printf '%s\n' "$out" | sed -n 3p)" "session_leader=1 devtty=(ENXIO|EACCES|ENOENT) sti=(EPERM|EIO|ENOTTY)" \
		"--no-tty: new session, no controlling terminal, TIOCSTI refused"
fi

# --- core dumps off, no_new_privs
out=$(run -- /bin/sh -c 'grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status; grep "core file" /proc/self/limits' | tr -s ' ')
like "$out" "NoNewPrivs:.1" "no_new_privs is set"
like "$out" "Max core file size 1 1" "core dumps are off (RLIMIT_CORE 1: no core file, and a pipe core_pattern gets no dump)"

# --- bad input: each exits 125 with one line naming the problem
bad() { # bad DESCRIPTION REGEX ARGS...
	local desc=$1 re=$2
	shift 2
	local out rc
	out=$("$MOAT" "$@" 2>&1 >/dev/null); rc=$?
	is "$rc" 125 "bad input: $desc exits 125"
	like "$(printf '%s' "$out" | head -n1)" "$re" "  and says: $re"
}
bad "an unknown option" "unknown option '--frobnicate'" run --frobnicate -- true
is "$("$MOAT" run --frobnicate -- true 2>&1 | tail -n1)" "moat: hint: see \`moat run --help\`" "  with where the options are listed"
out=$("$MOAT" run --wirte /tmp/x -- true 2>&1)
is "$out" "moat: unknown option '--wirte'
moat: hint: did you mean --write? See \`moat run --help\`" "a mistyped option: the one meant, as a config's mistyped key gets"
is "$("$MOAT" run --allow-nett=example.com -- true 2>&1 | tail -n1)" "moat: hint: did you mean --allow-net? See \`moat run --help\`" \
	"  --NAME=VALUE too"
# `run` forgotten, or a command mistyped: the usage alone said neither.
is "$("$MOAT" rn -- true 2>&1 | head -n2)" "moat: unknown command 'rn'
moat: hint: did you mean 'run'?" "moat rn: unknown command, and the hint names run"
is "$("$MOAT" --profile strict -- true 2>&1 | head -n2)" "moat: unknown command '--profile'
moat: hint: --profile is an option of moat run: moat run --profile ..." "moat --profile ...: the hint says it is run's option"
"$MOAT" sh -c "echo ran >$SCRATCH/ran" >/dev/null 2>"$SCRATCH/err"; rc=$?
ok $([ "$rc" = 125 ] && [ ! -e "$SCRATCH/ran" ]; echo $?) "moat sh -c ...: 125, and nothing ran"
is "$(sed -n 2p "$SCRATCH/err")" "moat: hint: to run sh in a sandbox: moat run [OPTIONS] -- sh ..." \
	"  the hint gives the moat run line (a program of PATH is not taken for a typo)"
"$MOAT" run --profile strict --write "$SCRATCH" -- sh -c "echo ran >$SCRATCH/ran" 2>/dev/null
is "$?:$(cat "$SCRATCH/ran" 2>/dev/null)" "0:ran" "  control: with run, it runs"
rm -f "$SCRATCH/ran"
# --- the first word that is not an option starts the command; `--` stays accepted
out=$("$MOAT" run --profile strict echo hi --profile x -- y 2>&1)
is "$out" "hi --profile x -- y" "the first non-option word starts the command; every word after it is the command's"
out=$("$MOAT" run --profile strict -- echo hi 2>&1)
is "$out" "hi" "  \`--\` before the command is still accepted"
out=$("$MOAT" run --profile strict -- -x 2>&1); rc=$?
is "$rc:$out" "127:moat: -x: command not found in PATH
moat: hint: give the absolute path, or check PATH ($PATH)" "  and needed before a command that starts with -"
bad "no command" "^moat: no command to run$" run --read /tmp
bad "an empty command" "^moat: no command to run: nothing after \`--\`$" run --
bad "an empty command string" "empty command" run -- ''
bad "a non-existent --cwd" "--cwd /nonexistent-dir" run --cwd /nonexistent-dir -- true
bad "an empty --require (an unset variable)" "^moat: --require '': an empty property name\$" run --require= -- true
bad "an empty item in --require" "^moat: --require 'fs.read,,net.none': an empty property name\$" run --require fs.read,,net.none -- true
bad "an empty --cwd (an unset variable)" "^moat: --cwd needs a directory, got ''\$" run --cwd= -- true
bad "--keep-fd of a closed fd" "file descriptor 57 is not open" run --keep-fd 57 -- true
bad "a non-numeric timeout" "--timeout abc" run --timeout abc -- true
bad "a negative timeout" "--timeout -1" run --timeout -1 -- true
bad "--env without =" "--env FOO: expected NAME=VALUE" run --env FOO -- true
bad "an unknown mode" "--mode maybe" run --mode maybe -- true
bad "an unknown profile" "^moat: --profile nope: unknown profile$" run --profile nope -- true
bad "an unknown property" "unknown property 'fs.bogus'" run --require fs.bogus -- true

# --- --dry-run runs nothing and prints policy and plan
"$MOAT" run --dry-run --write "$SCRATCH" -- "$HELPER" write "$SCRATCH/dry-created" >"$SCRATCH/dry.json"; rc=$?
is "$rc" 0 "--dry-run exits 0"
ok $([ ! -e "$SCRATCH/dry-created" ] && echo 0 || echo 1) "--dry-run runs nothing"
like "$(json_get "$SCRATCH/dry.json" '["policy"]["paths"]')" "\"$SCRATCH\"" "--dry-run shows the effective policy"
is "$(json_get "$SCRATCH/dry.json" '["schema"]')" "moat.report/1" "--dry-run has the report's shape"

# --- an option whose value was forgotten does not take the next option for it:
# `--deny --dry-run` denied a path "./--dry-run" and ran the command (no dry
# run), `--allow-net --dry-run` allowed a host "--dry-run" and ran it.
for opt in --deny --allow-net --read; do
	rm -f "$SCRATCH/forgot"
	out=$(run $opt --dry-run -- "$HELPER" write "$SCRATCH/forgot" 2>&1 >/dev/null); rc=$?
	is "$rc" 125 "$opt --dry-run (the value forgotten): refused, 125"
	ok $([ ! -e "$SCRATCH/forgot" ]; echo $?) "  and the command did not run"
	is "$(printf '%s\n' "$out" | head -n1)" "moat: $opt needs a value ($(case $opt in --allow-net) echo DEST ;; *) echo PATH ;; esac)), and the word after it, '--dry-run', is an option" \
		"  naming the option and the word it would have taken"
done
like "$(run --deny --dry-run -- true 2>&1 | tail -n1)" "hint: write --deny PATH, then --dry-run; a value that starts with '-' is written --deny=VALUE" \
	"  with the hint"
run --deny "$SCRATCH/none" --dry-run -- "$HELPER" write "$SCRATCH/forgot" >/dev/null; rc=$?
ok $([ "$rc" = 0 ] && [ ! -e "$SCRATCH/forgot" ]; echo $?) "control: --deny PATH --dry-run is the dry run (0, nothing ran)"
out=$(run --deny=--dry-run -- "$HELPER" exit 7 2>&1); rc=$?
is "$rc:$out" "7:" "control: --deny=--dry-run is a deny of that name, and the command runs (its exit 7)"

# --- --cwd
out=$(run --cwd "$SCRATCH" -- /bin/pwd)
is "$out" "$SCRATCH" "--cwd sets the command's directory"

# --- the report, to a file and to a descriptor
run --report "$REPORTS/r.json" -- "$HELPER" exit 7
is "$(json_get "$REPORTS/r.json" '["run"]["exit_code"]')" 7 "the report holds the exit status"
for p in env.curated fd.clean tty.inject res.limits; do
	is "$(json_get "$REPORTS/r.json" "[\"properties\"][\"$p\"][\"status\"]")" enforced "the report says $p enforced"
done
like "$(json_get "$REPORTS/r.json" '["run"]["exec_ms"]')" '^[0-9.]+$' "the report holds the time to exec"
# Numbers are written as measured or given, not with the double's 17
# digits (2.8892549999999999, --timeout 2.1 as 2.1000000000000001): no
# number in a report's text has more than 12 significant digits.
long_numbers() { grep -oE '[0-9]+\.[0-9]+' "$1" | tr -d . | sed 's/^0*//' | awk 'length($0) > 12' | head -1; }
is "$(long_numbers "$REPORTS/r.json")" "" "the report's times have at most 12 significant digits"
"$MOAT" run --dry-run --timeout 2.1 -- /bin/true >"$SCRATCH/t21.json" 2>/dev/null
is "$(grep -c '"timeout_s": 2.1,' "$SCRATCH/t21.json"):$(long_numbers "$SCRATCH/t21.json")" "1:" \
	"  --timeout 2.1 is 2.1 in the dry run"
like "$(json_get "$REPORTS/r.json" '["policy_digest"]')" '^sha256:[0-9a-f]{64}$' "the report holds a policy digest"
run --report "$REPORTS/s.json" -- "$HELPER" killself 15
is "$(json_get "$REPORTS/s.json" '["run"]["signal"]')" 15 "the report holds the signal"
# (In $REPORTS: a file in the write grant $SCRATCH is refused, the
# command could replace it -- report_safety.sh 6.)
out=$(run --report-fd 3 -- "$HELPER" fds 3>"$REPORTS/fd.json")
is "$out" "0 1 2" "the --report-fd descriptor does not leak into the command"
is "$(json_get "$REPORTS/fd.json" '["status"]')" "enforced" "--report-fd 3 receives the report"

# --- real programs, as a new user would run them
out=$(run -- sh -c 'echo hi'); is "$out" "hi" "moat run -- sh -c 'echo hi'"
if command -v node >/dev/null; then
	out=$(run -- node -e 'console.log(1)' 2>&1); is "$out" "1" "moat run -- node -e 'console.log(1)'"
fi
if command -v python3 >/dev/null; then
	out=$(run -- python3 -c 'print(1)' 2>&1); is "$out" "1" "moat run -- python3 -c 'print(1)'"
fi

done_testing
