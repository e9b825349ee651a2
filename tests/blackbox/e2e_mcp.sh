#!/usr/bin/env bash
# Real MCP servers under moat, driven by the real MCP client (issue 9).
#
# The servers (@modelcontextprotocol/server-filesystem, -everything, -memory)
# and the SDK client are pinned in tests/e2e/package-lock.json and installed
# with `npm ci` into tests/e2e/node_modules when that is missing or stale.
# The client scripts (tests/e2e/*.mjs) start `moat run ... -- SERVER` through
# the SDK's StdioClientTransport, exactly as a desktop client starts a server.
#
#   1. filesystem server with "/" as its root, moat granting only a project
#   2. everything server: the whole protocol, bare and under moat, compared
#   3. memory server: its store only inside the declared writable path
#   4. npx launch of an installed package: no network, ~/.npm read-only
#   5. a hostile server: every attempt fails under moat, works unsandboxed
#   6. the client configs of docs/clients.md, launched as the clients do
#
# Network: only 127.0.0.1 (the hostile server's target), except `npm ci`
# when node_modules must be (re)installed, and the opt-in first-install test
# (MOAT_E2E_NPX_FIRST_INSTALL=1).
set -u
. "$(dirname "$0")/../lib/tap.sh"
E2E=$ROOT/tests/e2e

command -v node >/dev/null && command -v npm >/dev/null || skip_all "node and npm are not installed"

scratch
BG_PIDS=()
FAKEHOME=""
ETC_CANARY="" ETC_NEW=""
cleanup() {
	local p
	for p in "${BG_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$ETC_CANARY" ] && rm -f "$ETC_CANARY"
	[ -n "$ETC_NEW" ] && rm -rf "$ETC_NEW"
	[ -n "$FAKEHOME" ] && rm -rf "$FAKEHOME"
	rm -rf "$SCRATCH" "$REPORTS"
}
trap cleanup EXIT

# --- node_modules: installed from the lock file, or reinstalled when stale
. "$ROOT/tests/lib/npm_pinned.sh"
npm_pinned "$E2E" e2e
E2E=$NPM_DIR
ok 0 "tests/e2e/node_modules matches package-lock.json"
NM=$E2E/node_modules
SRV_FS=$NM/@modelcontextprotocol/server-filesystem/dist/index.js
SRV_EVERY=$NM/@modelcontextprotocol/server-everything/dist/index.js
SRV_MEM=$NM/@modelcontextprotocol/server-memory/dist/index.js

# --- the sandbox must be whole on this host, or the results prove nothing
"$MOAT" run --profile mcp --report "$REPORTS/probe.json" -- /bin/true 2>"$SCRATCH/probe.err"
if [ "$(json_get "$REPORTS/probe.json" '["status"]' 2>/dev/null)" != enforced ]; then
	for f in landlock seccomp userns; do
		if ! feature_present "$f"; then
			skip_feature "$f" "moat cannot enforce the mcp profile here: $(head -c 300 "$SCRATCH/probe.err")"
			done_testing
			exit $?
		fi
	done
	ok 1 "moat enforces the mcp profile on this host (the kernel has landlock, seccomp and userns)"
	sed 's/^/# /' "$SCRATCH/probe.err"
	done_testing
	exit 1
fi

# A fake HOME outside /tmp (the sandbox's /tmp is private, a real HOME is not
# under it): a credential canary, a plain private file, a dotfile.
FAKEHOME=$(mktemp -d /var/tmp/moat-e2e-home.XXXXXX 2>/dev/null) || FAKEHOME=$(mktemp -d "$SCRATCH/home.XXXXXX")
chmod 0755 "$FAKEHOME"
MARKER="moat-e2e-canary-$$-$RANDOM$RANDOM"
mkdir -p "$FAKEHOME/.ssh" "$FAKEHOME/.npm/_cacache"
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n' "$MARKER" >"$FAKEHOME/.ssh/id_ed25519"
chmod 0600 "$FAKEHOME/.ssh/id_ed25519"
printf 'private notes %s\n' "$MARKER" >"$FAKEHOME/notes.txt"
printf 'export PS1=x\n' >"$FAKEHOME/.profile"
home_state() { (cd "$FAKEHOME" && find . -printf '%p %s %T@\n' | sort | sha256sum); }

PROJ=$SCRATCH/proj
mkdir -p "$PROJ"
printf 'hello project\n' >"$PROJ/hello.txt"
printf 'old notes\n' >"$PROJ/notes.txt"

# moat itself on PATH as "moat", as a desktop client finds it.
mkdir -p "$SCRATCH/bin"
ln -s "$MOAT" "$SCRATCH/bin/moat"
NODE_DIR=$(dirname "$(command -v node)")
# The client's environment: a fake HOME and a plain PATH, nothing else.
client() { env -i HOME="$FAKEHOME" PATH="$SCRATCH/bin:$NODE_DIR:/usr/bin:/bin" "$@"; }
run_client() { # run_client SCENARIO OUT [E2E_VAR=VALUE]... [--env NAME=VALUE]... -- COMMAND...
	local scenario=$1 outf=$2
	shift 2
	local vars=() opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		if [ "$1" = --env ]; then
			opts+=(--env "$2")
			shift 2
		else
			vars+=("$1")
			shift
		fi
	done
	client "${vars[@]}" timeout 60 node "$E2E/client.mjs" "$scenario" --out "$outf" "${opts[@]}" "$@" 2>>"$SCRATCH/clients.err"
}
jg() { json_get "$1" "$2" 2>/dev/null; } # jg FILE EXPR
enforced() { # enforced REPORT WHAT
	is "$(jg "$1" '["status"]')" enforced "$2: moat's report says the whole policy is enforced"
}
KERNEL_ERR='EACCES|EPERM|EROFS|ENOENT|EXDEV'
refused() { # refused FILE STEP DESCRIPTION: a tool error from the kernel, nothing leaked
	local f=$1 step=$2 desc=$3 err text
	err=$(jg "$f" "[\"$step\"][\"isError\"]")
	text=$(jg "$f" "[\"$step\"][\"text\"]")
	if [ "$err" = True ] && printf '%s' "$text" | grep -Eq "$KERNEL_ERR" &&
		! printf '%s' "$text" | grep -q -e "$MARKER" -e 'Access denied - path outside'; then
		ok 0 "$desc"
	else
		ok 1 "$desc"
		diag "isError=$err text=$(printf '%s' "$text" | head -c 300)"
	fi
}
worked() { # worked FILE STEP DESCRIPTION
	local err
	err=$(jg "$1" "[\"$2\"][\"isError\"]")
	is "$err" False "$3"
	[ "$err" = False ] || diag "$(jg "$1" "[\"$2\"][\"text\"]" | head -c 300)"
}

# ============================================================ 1. filesystem
ETC_NEW=/etc/moat-e2e-new.$$
fsvars=(E2E_PROJ="$PROJ" E2E_HOME="$FAKEHOME" E2E_OUTSIDE="$FAKEHOME/notes.txt" E2E_ETC_NEW="$ETC_NEW")
if [ "$(id -u)" = 0 ]; then
	# As root only the sandbox stands between the server and /etc.
	ETC_CANARY=/etc/moat-e2e-canary.$$
	printf '%s\n' "$MARKER" >"$ETC_CANARY"
	fsvars+=(E2E_ETC_CANARY="$ETC_CANARY")
fi
sha() { sha256sum <"$1" | cut -c1-64; }
canary_sum=$(sha "$FAKEHOME/.ssh/id_ed25519")
home_before=$(home_state)
etc_sum=""
[ -n "$ETC_CANARY" ] && etc_sum=$(sha "$ETC_CANARY")

run_client fs "$SCRATCH/fs1.json" "${fsvars[@]}" -- \
	moat run --profile mcp --write "$PROJ" --report "$REPORTS/fs1.report" -- node "$SRV_FS" /
is $? 0 "filesystem server with root / under moat: the client session completes"
enforced "$REPORTS/fs1.report" "filesystem server"
is "$(jg "$SCRATCH/fs1.json" '["allowed"]["text"]' | tr '\n' ' ')" "Allowed directories: / " "  the server believes / is allowed"
worked "$SCRATCH/fs1.json" list "  list_directory in the project works"
like "$(jg "$SCRATCH/fs1.json" '["list"]["text"]')" 'hello\.txt' "    and lists hello.txt"
is "$(jg "$SCRATCH/fs1.json" '["read"]["text"]')" "hello project" "  read_text_file in the project works"
worked "$SCRATCH/fs1.json" write "  write_file of a project file works"
worked "$SCRATCH/fs1.json" edit "  edit_file of a project file works"
is "$(cat "$PROJ/notes.txt")" "the server wrote this" "    and the edit is on disk, seen from outside"
worked "$SCRATCH/fs1.json" tree "  directory_tree of the project works"
refused "$SCRATCH/fs1.json" read_canary "  reading ~/.ssh/id_ed25519 is a tool error from the kernel"
unlike "$(jg "$SCRATCH/fs1.json" '["read_canary_multi"]["text"]')" "$MARKER" "  read_multiple_files of the canary does not leak it"
refused "$SCRATCH/fs1.json" list_ssh "  listing ~/.ssh is refused"
# HOME is a parent of grants (the mcp profile's runtime caches): it lists,
# showing only what is granted below it.
worked "$SCRATCH/fs1.json" list_home "  listing HOME works (a parent of grants)"
unlike "$(jg "$SCRATCH/fs1.json" '["list_home"]["text"]')" 'notes\.txt|\.ssh|\.profile' "    and shows none of its ungranted entries"
refused "$SCRATCH/fs1.json" read_outside "  reading a plain file in HOME is refused"
refused "$SCRATCH/fs1.json" write_home "  creating a file in HOME is refused"
refused "$SCRATCH/fs1.json" overwrite_home "  overwriting ~/.profile is refused"
refused "$SCRATCH/fs1.json" overwrite_canary "  overwriting the canary is refused"
refused "$SCRATCH/fs1.json" mkdir_home "  creating a directory in HOME is refused"
refused "$SCRATCH/fs1.json" write_etc "  creating a file in /etc is refused"
[ -n "$ETC_CANARY" ] && refused "$SCRATCH/fs1.json" overwrite_etc "  overwriting a file in /etc is refused (as root)"
# Creating a path walks down from the server's root with readdir() on every
# ancestor: with "/" as its root it lists "/", which the view shows.
worked "$SCRATCH/fs1.json" create "  with root /, write_file of a new project file works"
worked "$SCRATCH/fs1.json" mkdir "  with root /, create_directory in the project works"
worked "$SCRATCH/fs1.json" move "  with root /, move_file in the project works"
is "$(cat "$PROJ/sub/dir/moved.txt" 2>/dev/null)" "new file" "    and the file is on disk where it was moved"
rm -rf "$PROJ/sub/dir" "$PROJ/created-by-server.txt"
# Seen from outside, afterwards.
is "$(sha "$FAKEHOME/.ssh/id_ed25519")" "$canary_sum" "  the canary is unchanged (checked outside)"
is "$(home_state)" "$home_before" "  nothing in HOME was created, changed or removed"
ok $([ ! -e "$ETC_NEW" ] && echo 0 || echo 1) "  no file was created in /etc"
[ -n "$ETC_CANARY" ] && is "$(sha "$ETC_CANARY")" "$etc_sum" "  the /etc canary is unchanged"

# The server's root a parent of the grant: it lists that parent (the view
# shows only the granted entries), and works inside the grant.
run_client fs "$SCRATCH/fs3.json" "${fsvars[@]}" -- \
	moat run --profile mcp --write "$PROJ" -- node "$SRV_FS" "$(dirname "$PROJ")"
is $? 0 "filesystem server with a parent of the grant as root under moat: the session completes"
worked "$SCRATCH/fs3.json" list "  list_directory in the project works"
worked "$SCRATCH/fs3.json" create "  write_file of a new project file works"
worked "$SCRATCH/fs3.json" move "  move_file in the project works"
is "$(cat "$PROJ/sub/dir/moved.txt" 2>/dev/null)" "new file" "    and the file is on disk where it was moved"
rm -rf "$PROJ/sub/dir" "$PROJ/created-by-server.txt"

# The server's root set to the project: creating works too.
run_client fs "$SCRATCH/fs2.json" "${fsvars[@]}" -- \
	moat run --profile mcp --write "$PROJ" -- node "$SRV_FS" "$PROJ"
is $? 0 "filesystem server with the project as root under moat: the session completes"
worked "$SCRATCH/fs2.json" create "  write_file of a new project file works"
worked "$SCRATCH/fs2.json" mkdir "  create_directory in the project works"
worked "$SCRATCH/fs2.json" move "  move_file in the project works"
is "$(cat "$PROJ/sub/dir/moved.txt" 2>/dev/null)" "new file" "    and the file is on disk where it was moved"
is "$(sha "$FAKEHOME/.ssh/id_ed25519")" "$canary_sum" "  the canary is still unchanged"

# The server's root given as "." -- as a project's .mcp.json gives it, its
# client starting the server in the project -- under the mcp profile, which
# grants none of it: the server listed an empty project, and moat said
# nothing (only an absolute argument was noted). A note names it with what
# it names; with the grant the note suggests, the server lists the project.
errs=$(wc -l <"$SCRATCH/clients.err")
(cd "$PROJ" && run_client fs "$SCRATCH/fsdot.json" "${fsvars[@]}" -- moat run --profile mcp -- node "$SRV_FS" .)
unlike "$(jg "$SCRATCH/fsdot.json" '["list"]["text"]')" 'hello\.txt' "filesystem server with root . in the project, not granted: it sees none of it"
like "$(tail -n +$((errs + 1)) "$SCRATCH/clients.err")" "moat: note: the command's argument \\. \\($PROJ\\) (is a directory outside every grant|lies in the sandbox's private /tmp)" \
	"  and moat's note, on the stderr the client logs, names it"
errs=$(wc -l <"$SCRATCH/clients.err")
(cd "$PROJ" && run_client fs "$SCRATCH/fsdot2.json" "${fsvars[@]}" -- moat run --profile mcp --write "$PROJ" -- node "$SRV_FS" .)
like "$(jg "$SCRATCH/fsdot2.json" '["list"]["text"]')" 'hello\.txt' "control: granted as the note says, it lists the project"
unlike "$(tail -n +$((errs + 1)) "$SCRATCH/clients.err")" "note: the command's argument" "  and there is no note"
rm -rf "$PROJ/sub/dir" "$PROJ/created-by-server.txt"
printf 'old notes\n' >"$PROJ/notes.txt"

# Control: the same client, unsandboxed.  The test must be able to fail.
run_client fs "$SCRATCH/fs0.json" "${fsvars[@]}" -- \
	moat run --mode off --write "$PROJ" -- node "$SRV_FS" /
like "$(jg "$SCRATCH/fs0.json" '["read_canary"]["text"]')" "$MARKER" "control (--mode off): the server reads the canary"
worked "$SCRATCH/fs0.json" write_home "control: the server creates a file in HOME"
ok $([ -e "$FAKEHOME/written-by-server.txt" ] && echo 0 || echo 1) "control:   and it is there, seen from outside"
if [ -n "$ETC_CANARY" ]; then
	worked "$SCRATCH/fs0.json" overwrite_etc "control: the server overwrites the /etc canary (as root)"
	rm -rf "$ETC_NEW"
fi
# Restore HOME for what follows.
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\n%s\n' "$MARKER" >"$FAKEHOME/.ssh/id_ed25519"
printf 'export PS1=x\n' >"$FAKEHOME/.profile"
rm -rf "$FAKEHOME/written-by-server.txt" "$FAKEHOME/made-by-server"

# ============================================================ 2. everything
# Bare and under moat at once (the sweep has a 4 s task tool in it).
client timeout 60 node "$E2E/everything.mjs" -- node "$SRV_EVERY" stdio >"$SCRATCH/every.bare.json" 2>"$SCRATCH/every.bare.err" &
BG_PIDS+=($!)
bare_pid=$!
client timeout 60 node "$E2E/everything.mjs" -- moat run --profile mcp --report "$REPORTS/every.report" -- \
	node "$SRV_EVERY" stdio >"$SCRATCH/every.moat.json" 2>"$SCRATCH/every.moat.err"
moat_rc=$?
wait "$bare_pid"
bare_rc=$?
is "$bare_rc" 0 "everything server, bare: the sweep completes"
is "$moat_rc" 0 "everything server under moat: the sweep completes"
enforced "$REPORTS/every.report" "everything server"
called=$(jg "$SCRATCH/every.moat.json" '["summary"]["tools_called"]')
listed=$(jg "$SCRATCH/every.moat.json" '["summary"]["tools_listed"]')
ok $([ "${called:-0}" -ge 15 ] && [ "$called" = "$listed" ] && echo 0 || echo 1) \
	"  every listed tool was called ($called of $listed)"
diag "not called: $(jg "$SCRATCH/every.moat.json" '["not_called"]')"
if cmp -s "$SCRATCH/every.bare.json" "$SCRATCH/every.moat.json"; then
	ok 0 "  initialize, tools, resources, prompts, completion: the same bare and under moat"
else
	ok 1 "  initialize, tools, resources, prompts, completion: the same bare and under moat"
	diff "$SCRATCH/every.bare.json" "$SCRATCH/every.moat.json" | head -30 | sed 's/^/# /'
fi
for t in echo get-sum get-env get-tiny-image gzip-file-as-resource trigger-sampling-request trigger-elicitation-request get-roots-list; do
	is "$(jg "$SCRATCH/every.moat.json" "[\"tools\"][\"$t\"][\"isError\"]")" False "  tool $t answered without error"
done
like "$(jg "$SCRATCH/every.moat.json" '["tools"]["simulate-research-query"]["final"]["type"]')" '^result$' \
	"  the task tool simulate-research-query delivered its result"
like "$(jg "$SCRATCH/every.moat.json" '["resources_read"]')" 'demo://resource/static/document' "  static resources were read"
like "$(jg "$SCRATCH/every.moat.json" '["tools"]["get-env"]["result"]["content"][0]["text"]')" '"PATH"' \
	"  get-env shows the environment moat gave (and it matches the bare one)"

# ============================================================ 3. memory
MEMDIR=$SCRATCH/memdata
mkdir -p "$MEMDIR" "$SCRATCH/elsewhere"
memdist=$(dirname "$SRV_MEM")
dist_before=$(ls -A "$memdist" | sort | tr '\n' ' ')
run_client memory "$SCRATCH/mem1.json" -- moat run --profile mcp --write "$MEMDIR" \
	--env MEMORY_FILE_PATH="$MEMDIR/memory.jsonl" --report "$REPORTS/mem1.report" -- node "$SRV_MEM"
is $? 0 "memory server under moat: the session completes"
enforced "$REPORTS/mem1.report" "memory server"
worked "$SCRATCH/mem1.json" create "  create_entities works with the store in the declared path"
worked "$SCRATCH/mem1.json" observe "  add_observations works"
like "$(cat "$MEMDIR/memory.jsonl" 2>/dev/null)" '"name":"moat"' "  the store is in the declared path, seen from outside"
run_client memory-read "$SCRATCH/mem2.json" -- moat run --profile mcp --write "$MEMDIR" \
	--env MEMORY_FILE_PATH="$MEMDIR/memory.jsonl" -- node "$SRV_MEM"
like "$(jg "$SCRATCH/mem2.json" '["graph"]["text"]')" 'writes only where it is allowed' "  a second start reads the stored graph back"
run_client memory "$SCRATCH/mem3.json" -- moat run --profile mcp --write "$MEMDIR" \
	--env MEMORY_FILE_PATH="$FAKEHOME/memory.jsonl" -- node "$SRV_MEM"
refused "$SCRATCH/mem3.json" create "  a store path in HOME (not granted) is refused"
ok $([ ! -e "$FAKEHOME/memory.jsonl" ] && echo 0 || echo 1) "    and no file appears there"
run_client memory "$SCRATCH/mem4.json" -- moat run --profile mcp --write "$MEMDIR" \
	--env MEMORY_FILE_PATH="$SCRATCH/elsewhere/memory.jsonl" -- node "$SRV_MEM"
refused "$SCRATCH/mem4.json" create "  a store path in another directory (not granted) is refused"
ok $([ -z "$(ls -A "$SCRATCH/elsewhere")" ] && echo 0 || echo 1) "    and nothing appears there"
run_client memory "$SCRATCH/mem5.json" -- moat run --profile mcp --write "$MEMDIR" -- node "$SRV_MEM"
refused "$SCRATCH/mem5.json" create "  the default store (next to the server's code, in node_modules) is refused"
is "$(ls -A "$memdist" | sort | tr '\n' ' ')" "$dist_before" "    and the server's install dir is unchanged"
is "$(ls -A "$MEMDIR" | tr '\n' ' ')" "memory.jsonl " "  the declared directory holds only the store"

# ============================================================ 4. npx
npm_before=$(cd "$FAKEHOME" && find .npm -printf '%p %T@\n' | sort)
run_client memory "$SCRATCH/npx1.json" -- moat run --profile mcp --cwd "$E2E" --read "$E2E" --write "$MEMDIR" \
	--env npm_config_offline=true --env MEMORY_FILE_PATH="$MEMDIR/npx.jsonl" --report "$REPORTS/npx1.report" -- \
	npx -y @modelcontextprotocol/server-memory
is $? 0 "npx -y @modelcontextprotocol/server-memory under moat (installed in --cwd, offline): the session completes"
enforced "$REPORTS/npx1.report" "npx"
is "$(jg "$REPORTS/npx1.report" '["properties"]["net.none"]["status"]')" enforced "  with no network"
worked "$SCRATCH/npx1.json" create "  the server started by npx works"
like "$(cat "$MEMDIR/npx.jsonl" 2>/dev/null)" '"name":"moat"' "  and stores in the declared path"
is "$(cd "$FAKEHOME" && find .npm -printf '%p %T@\n' | sort)" "$npm_before" "  ~/.npm is untouched (read-only in the mcp profile)"
if [ "${MOAT_E2E_NPX_FIRST_INSTALL:-0}" = 1 ]; then
	# Opt-in: talks to the npm registry.  First install: network, ~/.npm writable.
	mkdir -p "$SCRATCH/empty"
	ca=()
	[ -n "${NODE_EXTRA_CA_CERTS:-}" ] && ca=(--env NODE_EXTRA_CA_CERTS="$NODE_EXTRA_CA_CERTS") # a TLS-intercepting proxy
	run_client init "$SCRATCH/npx2.json" "${ca[@]}" -- moat run --profile network --cwd "$SCRATCH/empty" \
		--write "$FAKEHOME/.npm" --env-pass NODE_EXTRA_CA_CERTS -- npx -y @modelcontextprotocol/server-memory@2026.8.31
	is "$(jg "$SCRATCH/npx2.json" '["server"]["name"]')" memory-server "npx first install (network, ~/.npm writable) works"
	run_client init "$SCRATCH/npx3.json" -- moat run --profile mcp --cwd "$SCRATCH/empty" --write "$FAKEHOME/.npm" \
		--env npm_config_offline=true -- npx -y @modelcontextprotocol/server-memory@2026.8.31
	is "$(jg "$SCRATCH/npx3.json" '["server"]["name"]')" memory-server "  then from npx's cache, offline, no network (~/.npm writable)"
	start=$(date +%s)
	run_client init "$SCRATCH/npx4.json" -- moat run --profile mcp --cwd "$SCRATCH/empty" \
		--env npm_config_offline=true -- npx -y @modelcontextprotocol/server-memory@2026.8.31
	ok $([ ! -s "$SCRATCH/npx4.json" ] && [ $(($(date +%s) - start)) -lt 20 ] && echo 0 || echo 1) \
		"  but not with ~/.npm read-only: npm fails at once (documented in docs/clients.md)"
else
	echo "ok $((TAP_N += 1)) # SKIP npx first install from the registry needs the internet (MOAT_E2E_NPX_FIRST_INSTALL=1 runs it)"
fi

# ============================================================ 5. hostile server
# The listener and the canary process live 300 s at most (the cleanup ends
# them): the sandboxed run and its control below, each allowed 60 s, must
# both find them there (they lived 60 s, which a slow run and its control
# together could outlast: the controls then failed).
node "$E2E/listener.mjs" "$SCRATCH/port" "$SCRATCH/net.log" 300 &
BG_PIDS+=($!)
# The canary process: logs each SIGUSR1 it gets.
bash -c 'trap "echo USR1 >>\"$1\"" USR1; for _ in $(seq 3000); do sleep 0.1; done' _ "$SCRATCH/canary.log" &
CANARY_PID=$!
BG_PIDS+=($CANARY_PID)
need_ready 30 "the loopback listener (tests/e2e/listener.mjs: its port file)" test -s "$SCRATCH/port"
PORT=$(cat "$SCRATCH/port")
ok 0 "the loopback listener runs (port $PORT)"
HOSTILE_ENV=(HOSTILE_PORT="$PORT" HOSTILE_MARKER="$MARKER" HOSTILE_CANARY_PID="$CANARY_PID"
	HOSTILE_OUTSIDE_FILE="$FAKEHOME/notes.txt" HOSTILE_HELPER="$HELPER")
passvars=()
for v in HOSTILE_PORT HOSTILE_MARKER HOSTILE_CANARY_PID HOSTILE_CLIENT_PID HOSTILE_OUTSIDE_FILE HOSTILE_HELPER; do
	passvars+=(--env-pass "$v")
done
# With a terminal (script(1) gives the client a pty, as a desktop terminal
# would), the tty attempts have something to attack.
have_pty=1
command -v script >/dev/null || have_pty=0
hostile() { # hostile MODE OUT: moat's report in $REPORTS/<OUT's name>.report (none in mode off:
	# moat refuses a report file when the command runs unsandboxed)
	local mode=$1 outf=$2 cmd rep=()
	[ "$mode" = off ] || rep=(--report "$REPORTS/$(basename "$outf").report")
	cmd=$(printf '%q ' env -i HOME="$FAKEHOME" PATH="$SCRATCH/bin:$NODE_DIR:/usr/bin:/bin" "${HOSTILE_ENV[@]}" \
		timeout 60 node "$E2E/client.mjs" report --out "$outf" -- \
		moat run --mode "$mode" --profile mcp --read "$(dirname "$HELPER")" "${passvars[@]}" \
		"${rep[@]}" -- node "$E2E/hostile-server.mjs")
	printf '%s\n' "$cmd" >"$outf.sh"
	if [ "$have_pty" = 1 ]; then
		timeout 90 script -qec "bash $outf.sh" /dev/null </dev/null >"$outf.tty" 2>&1
	else
		bash "$outf.sh" </dev/null >"$outf.tty" 2>&1
	fi
}
ATTEMPTS="read_credentials read_outside net_connect write_home signal_parent signal_moat signal_client signal_canary tty_open tty_sti"
hostile require "$SCRATCH/h1.json"
enforced "$REPORTS/h1.json.report" "hostile server"
is "$(jg "$SCRATCH/h1.json" '["echo"]["text"]')" "still answering" "hostile server under moat still answers MCP"
for a in $ATTEMPTS; do
	got=$(jg "$SCRATCH/h1.json" "[\"report\"][\"attempts\"][\"$a\"][\"ok\"]")
	detail=$(jg "$SCRATCH/h1.json" "[\"report\"][\"attempts\"][\"$a\"][\"detail\"]")
	if [ "$have_pty" = 0 ] && [[ $a == tty_* ]]; then
		echo "ok $((TAP_N += 1)) # SKIP no script(1) to give the client a terminal: $a not meaningful"
		continue
	fi
	is "$got" False "  under moat: $a fails ($detail)"
done
unlike "$(jg "$SCRATCH/h1.json" '["report"]')" "$MARKER" "  the canary's content never reached the server"
ok $([ ! -s "$SCRATCH/net.log" ] && echo 0 || echo 1) "  the listener received nothing"
# The canary's trap runs once its `sleep 0.1` ends: a signal sent is logged
# within a beat, later on a loaded machine (three lanes on two CPUs).
sleep 1
ok $([ ! -s "$SCRATCH/canary.log" ] && echo 0 || echo 1) "  the canary process received no signal"
ok $([ ! -e "$FAKEHOME/hostile-was-here" ] && echo 0 || echo 1) "  nothing was written to HOME"

# Control: unsandboxed, every attempt works.
hostile off "$SCRATCH/h0.json"
is "$(jg "$SCRATCH/h0.json" '["echo"]["text"]')" "still answering" "control (--mode off): the hostile server answers"
sti_needs_cap=0
[ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null)" = 0 ] && sti_needs_cap=1
for a in $ATTEMPTS; do
	got=$(jg "$SCRATCH/h0.json" "[\"report\"][\"attempts\"][\"$a\"][\"ok\"]")
	detail=$(jg "$SCRATCH/h0.json" "[\"report\"][\"attempts\"][\"$a\"][\"detail\"]")
	if [ "$have_pty" = 0 ] && [[ $a == tty_* ]]; then
		echo "ok $((TAP_N += 1)) # SKIP no script(1) to give the client a terminal: $a not meaningful"
		continue
	fi
	if [ "$a" = tty_sti ] && [ "$sti_needs_cap" = 1 ]; then
		echo "ok $((TAP_N += 1)) # SKIP dev.tty.legacy_tiocsti=0: TIOCSTI needs CAP_SYS_ADMIN even unsandboxed ($detail)"
		continue
	fi
	is "$got" True "control: $a works unsandboxed ($(printf '%s' "$detail" | head -c 60 | tr '\n' ' '))"
done
like "$(cat "$SCRATCH/net.log" 2>/dev/null)" "hostile $MARKER" "control: the listener received the marker"
# The trap runs once the canary's `sleep 0.1` ends: later on a loaded machine.
for _ in $(seq 200); do grep -q USR1 "$SCRATCH/canary.log" 2>/dev/null && break; sleep 0.1; done
like "$(cat "$SCRATCH/canary.log" 2>/dev/null)" USR1 "control: the canary process got SIGUSR1 (logged within 20 s)"
ok $([ -e "$FAKEHOME/hostile-was-here" ] && echo 0 || echo 1) "control: the server wrote to HOME"
rm -f "$FAKEHOME/hostile-was-here"

# ============================================================ 6. client configs
# The examples in docs/clients.md, with their placeholder paths pointed at
# this test's install dir and fake HOME, and moat's installed path
# (/usr/local/bin/moat, from `make install`: tests/repo/install.sh checks that
# install) at the moat under test, parsed as each client parses them.
docblock() { # docblock NAME: the fenced block after <!-- e2e: NAME -->
	awk -v tag="<!-- e2e: $1 -->" '
		$0 == tag { want = 1; next }
		want && /^```/ { if (inblock) exit; inblock = 1; next }
		inblock { print }' "$ROOT/docs/clients.md" |
		sed -e "s#/usr/local/bin/moat#$MOAT#g" -e "s#/opt/mcp#$E2E#g" -e "s#/home/you#$FAKEHOME#g"
}
if [ ! -f "$ROOT/docs/clients.md" ]; then
	echo "ok $((TAP_N += 1)) # SKIP $ROOT/docs/clients.md is not in this copy of the tree: the client configs come from it"
	done_testing
	exit $?
fi
mkdir -p "$FAKEHOME/projects/app" "$FAKEHOME/.local/share/mcp-memory"
printf 'app\n' >"$FAKEHOME/projects/app/README"
docblock claude-desktop >"$SCRATCH/claude_desktop_config.json"
docblock codex >"$SCRATCH/config.toml"
docblock darnit >"$SCRATCH/darnit.toml"
ok $([ -s "$SCRATCH/claude_desktop_config.json" ] && [ -s "$SCRATCH/config.toml" ] && [ -s "$SCRATCH/darnit.toml" ] && echo 0 || echo 1) \
	"docs/clients.md has the three client configs"
"$MOAT" config decode <"$SCRATCH/config.toml" >"$SCRATCH/config.toml.json"
is $? 0 "  the Codex config.toml parses (moat config decode)"
"$MOAT" config decode <"$SCRATCH/darnit.toml" >"$SCRATCH/darnit.toml.json"
is $? 0 "  the darnit config parses (moat config decode)"

launch() { # launch FORMAT FILE NAME SCENARIO OUT
	local a=()
	mapfile -d '' a < <(node "$E2E/config-argv.mjs" "$1" "$2" "$3")
	diag "$1 launches: ${a[*]}"
	run_client "$4" "$5" "${a[@]}"
}
launch claude "$SCRATCH/claude_desktop_config.json" filesystem init "$SCRATCH/cfg-claude.json"
is "$(jg "$SCRATCH/cfg-claude.json" '["server"]["name"]')" secure-filesystem-server "Claude Desktop config: moat + npx starts the filesystem server"
like "$(jg "$SCRATCH/cfg-claude.json" '["tools"]')" '"write_file"' "  and it lists its tools"
launch codex "$SCRATCH/config.toml.json" memory memory "$SCRATCH/cfg-codex.json"
is "$(jg "$SCRATCH/cfg-codex.json" '["server"]["name"]')" memory-server "Codex config.toml: moat starts the memory server"
worked "$SCRATCH/cfg-codex.json" create "  create_entities works"
like "$(cat "$FAKEHOME/.local/share/mcp-memory/memory.jsonl" 2>/dev/null)" '"name":"moat"' \
	"  the store is where the config's env (passed on with --env-pass) says"
launch darnit "$SCRATCH/darnit.toml.json" everything init "$SCRATCH/cfg-darnit.json"
is "$(jg "$SCRATCH/cfg-darnit.json" '["server"]["name"]')" mcp-servers/everything "darnit [mcp_servers.X] command = [argv]: moat starts the everything server"
like "$(jg "$SCRATCH/cfg-darnit.json" '["tools"]')" '"echo"' "  and it lists its tools"

if [ "$TAP_FAILED" -ne 0 ] && [ -s "$SCRATCH/clients.err" ]; then
	diag "client/server stderr (last lines):"
	tail -20 "$SCRATCH/clients.err" | sed 's/^/#   /'
fi
done_testing
