#!/usr/bin/env bash
# The client configs users already have, read as they are (issue 19, item 2):
# the files of tests/configs/ -- Claude Desktop, Codex, Cursor, VS Code and
# Gemini CLI, each with the client's own keys beside the servers (the README
# there says where each key list comes from).  Each passes `moat config
# check`, which names what it skips or ignores; each local server runs with
# what the client's keys mean to moat (cwd, env, env_vars, ${VAR:-default},
# ${env:NAME}); remote, disabled, VS Code-sandboxed and ${input:ID} servers
# are refused by name, with the reason; a typo of moat's own keys in a
# client's file is still an error; and a file with five problems gives five
# messages in one `moat config check`.
#
# Runs as root, as an unprivileged user and with the sanitizer build.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
PY=/usr/bin/python3
FIXTURES=$ROOT/tests/configs
CFG=$SCRATCH/cfg
mkdir -p "$CFG" "$SCRATCH/bin"
cp "$FIXTURES"/*.json "$FIXTURES"/*.toml "$CFG/"
# The directories the servers' cwd name, next to the files.
mkdir -p "$CFG/docs-server" "$CFG/mcp-servers/python"

# Stubs of the clients' commands, first in PATH: each says how it was
# started (its name, its arguments, its directory, the variables the files
# set).
for p in npx uvx node python3; do
	cat >"$SCRATCH/bin/$p" <<'EOF'
#!/bin/sh
echo "argv: ${0##*/} $*"
echo "cwd: $(pwd)"
env | grep -E '^(DOCS_|USER_AGENT|PLAYWRIGHT_|MEMORY_FILE_PATH|DATABASE_URL|API_KEY)' | sort
EOF
	chmod 0755 "$SCRATCH/bin/$p"
done
export PATH="$SCRATCH/bin:$PATH"
cd "$SCRATCH"

# check FILE NOTES...: `moat config check` accepts FILE, and notes each
# NOTE (a regex), and nothing else.
check() {
	local f=$1 out rc n
	shift
	out=$("$MOAT" config check "$CFG/$f" 2>&1)
	rc=$?
	is "$rc" 0 "$f: moat config check accepts the client's file as it is"
	n=$(printf '%s\n' "$out" | grep -c '^moat: note: ')
	is "$n" "$#" "  with $# notes of what it skips or ignores"
	for re in "$@"; do
		like "$out" "moat: note: $CFG/$f:[0-9]+:[0-9]+: $re" "  note: $re"
	done
}

# run FILE SERVER WANT [ENV...]: the server runs, and its stub prints WANT
# (on stdout; moat's notes on stderr are kept in $SCRATCH/run.err).
run() {
	local f=$1 server=$2 want=$3 out
	shift 3
	out=$(env "$@" "$MOAT" run --config "$CFG/$f" --server "$server" 2>"$SCRATCH/run.err")
	is "$out" "$want" "$f: --server $server runs as the file says"
}

# refused FILE SERVER REGEX: --server SERVER is refused (125) with REGEX.
refused() {
	local f=$1 server=$2 re=$3 out rc
	out=$("$MOAT" run --config "$CFG/$f" --server "$server" 2>&1)
	rc=$?
	is "$rc" 125 "$f: --server $server is refused"
	like "$out" "^moat: $CFG/$f:[0-9]+:[0-9]+: $re" "  saying why, at its place in the file"
}

# --- Claude Desktop: its own globalShortcut at the top; ${NAME:-default}
check claude_desktop_config.json
run claude_desktop_config.json filesystem "argv: npx -y @modelcontextprotocol/server-filesystem /home/you/Desktop
cwd: $SCRATCH"
run claude_desktop_config.json fetch "argv: uvx mcp-server-fetch
cwd: $SCRATCH
USER_AGENT=claude-desktop/1"
run claude_desktop_config.json fetch "argv: uvx mcp-server-fetch
cwd: $SCRATCH
USER_AGENT=claude-desktop/7" CLIENT_VERSION=7

# --- Codex: model, approval_policy, sandbox_mode, its profiles and tables;
# per server cwd, env, env_vars, timeouts, tool filters; enabled = false; url
check codex.toml "mcp_servers\.old\.enabled: disabled in its client" \
	"mcp_servers\.figma: skipped: a remote server \\(url = \"https://mcp\.figma\.com/mcp\"\\)"
run codex.toml docs "argv: node server.js --stdio
cwd: $CFG/docs-server
DOCS_MODE=offline
DOCS_TOKEN=from-env" DOCS_TOKEN=from-env
refused codex.toml old 'mcp_servers\.old\.enabled: server "old" is disabled \(enabled = false\): its client does not start it, and neither does moat'
refused codex.toml figma 'mcp_servers\.figma: a remote server \(url = "https://mcp\.figma\.com/mcp"\): there is nothing to run or sandbox on this machine'
"$MOAT" config show "$CFG/codex.toml" --server docs >"$SCRATCH/show.json" 2>/dev/null
is "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["policy"]["cwd"])' "$SCRATCH/show.json" 2>&1)" \
	"$CFG/docs-server" "  config show: the server's cwd, relative to the file"
# Codex's `sandbox_mode` and [sandbox_workspace_write] are Codex's: moat's
# [sandbox] is still moat's, strict.
{ cat "$CFG/codex.toml"; printf '\n[sandbox]\nnett = "none"\n'; } >"$CFG/codex-typo.toml"
out=$("$MOAT" config check "$CFG/codex-typo.toml" 2>&1 | grep -v '^moat: note: ' | sed -E 's/; expected one of .*//')
is "$out" "moat: $CFG/codex-typo.toml:62:1: sandbox.nett: unknown key
moat: hint: did you mean 'net'?
moat: $CFG/codex-typo.toml: 1 problem" "a real Codex file with a typo in moat's [sandbox]: still an error, with did-you-mean"
{ cat "$CFG/codex.toml"; printf '\n[mcp_servers.docs2]\ncommand = "node"\nsandbx = { net = "all" }\n'; } >"$CFG/codex-typo2.toml"
out=$("$MOAT" config check "$CFG/codex-typo2.toml" 2>&1 | grep -v '^moat: note: ' | sed -E 's/; expected one of .*//')
is "$out" "moat: $CFG/codex-typo2.toml:63:1: mcp_servers.docs2.sandbx: unknown key
moat: hint: did you mean 'sandbox'?
moat: $CFG/codex-typo2.toml: 1 problem" "  and in a server entry, where the client's keys and moat's meet"

# --- Cursor: envFile (noted: moat does not read it), ${env:NAME}, url
check cursor.json "mcpServers\.playwright\.envFile: not read by moat" \
	"mcpServers\.context7: skipped: a remote server"
run cursor.json playwright "argv: npx -y @playwright/mcp@latest
cwd: $SCRATCH
PLAYWRIGHT_BROWSERS_PATH=/home/t/.cache/ms-playwright" HOME=/home/t
refused cursor.json context7 'mcpServers\.context7: a remote server'

# --- VS Code: JSON with comments, inputs, servers, type stdio, dev;
# ${input:ID}, its own sandbox and type http are refused by name
check vscode.json 'servers\.perplexity\.env\.PERPLEXITY_API_KEY: skipped: \$\{input:perplexity-key\} is a value VS Code prompts for' \
	"servers\.boxed\.sandboxEnabled: skipped: VS Code's own sandbox is on for this server" \
	'servers\.github: skipped: a remote server \(url = "https://api\.githubcopilot\.com/mcp/"\)'
run vscode.json memory "argv: npx -y @modelcontextprotocol/server-memory
cwd: $SCRATCH
MEMORY_FILE_PATH=/home/t/memory.jsonl" HOME=/home/t
like "$(cat "$SCRATCH/run.err")" "^moat: note: MEMORY_FILE_PATH names /home/t/memory\.jsonl, outside every grant" \
	"  the file's MEMORY_FILE_PATH, outside every grant: a note says so before the server's own ENOENT"
refused vscode.json perplexity 'servers\.perplexity\.env\.PERPLEXITY_API_KEY: \$\{input:perplexity-key\} is a value VS Code prompts for: moat cannot fill it in'
refused vscode.json boxed "servers\.boxed\.sandboxEnabled: VS Code's own sandbox is on for this server: moat does not translate its rules"
refused vscode.json github 'servers\.github: a remote server'
# A variable the editor fills in, in an env value: moat's environment has
# none, and it became "" without a word (red-team D5); set there, it is used.
printf '{"servers": {"ws": {"command": "/usr/bin/env", "env": {"ROOT_DIR": "${workspaceFolder}/data"}}}}\n' \
	>"$CFG/vscode-ws.json"
refused vscode-ws.json ws 'servers\.ws\.env\.ROOT_DIR: \$\{workspaceFolder\} is a value the editor fills in, and moat.s environment has no workspaceFolder'
out=$(workspaceFolder=/w "$MOAT" run --config "$CFG/vscode-ws.json" --server ws 2>/dev/null | grep '^ROOT_DIR=')
is "$out" "ROOT_DIR=/w/data" "  control: with workspaceFolder in moat's environment, it is used"

# --- Gemini CLI: comments, its settings, cwd, $VAR and ${VAR}, timeout,
# trust, tool filters; httpUrl
check gemini.json 'mcpServers\.search: skipped: a remote server \(httpUrl = "http://localhost:3000/mcp"\)'
run gemini.json pythonTools "argv: python3 -m my_mcp_server --port 8080
cwd: $CFG/mcp-servers/python
API_KEY=k
DATABASE_URL=db://x" DB_CONNECTION_STRING=db://x EXTERNAL_API_KEY=k
refused gemini.json search 'mcpServers\.search: a remote server'

# --- five problems, five messages, one run
cat >"$CFG/five.toml" <<'EOF'
model = "o3"
[sandbx]
net = "none"

[mcp_servers.a]
comand = "node"

[mcp_servers.b]
command = "node"
sandbox = { net = "internet" }

[mcp_servers.c]
command = "node"
env = { LD_PRELOAD = "x.so" }

[mcp_servers.d]
command = "node"
sandbox = { read = ["./not-there"] }
EOF
out=$("$MOAT" config check "$CFG/five.toml" 2>&1)
rc=$?
is "$rc" 125 "a config with five problems: moat config check exits 125"
is "$(printf '%s\n' "$out" | grep -cE "^moat: $CFG/five.toml:[0-9]+:[0-9]+: ")" 5 "  with five messages, each at its file:line:col"
is "$(printf '%s\n' "$out" | sed -E -e "s|$CFG/||g" -e 's/; expected one of .*//' -e 's/(moat: hint: it would run code).*/\1/')" \
	"moat: five.toml:2:2: sandbx: unknown key
moat: hint: did you mean 'sandbox'?
moat: five.toml:6:1: mcp_servers.a.comand: unknown key
moat: hint: did you mean 'command'?
moat: five.toml:10:19: mcp_servers.b.sandbox.net: expected \"none\", \"loopback\", \"all\" or \"allow\", got \"internet\"
moat: five.toml:14:9: mcp_servers.c.env.LD_PRELOAD: refusing the loader or interpreter hook LD_PRELOAD from a config file
moat: hint: it would run code
moat: five.toml:18:21: mcp_servers.d.sandbox.read: not-there does not exist; expected an existing path (mode require)
moat: hint: create it, remove it from mcp_servers.d.sandbox.read, or set mode = \"prefer\" to skip missing paths
moat: five.toml: 5 problems" "  in the order of the file, each with its hint, then how many"
unlike "$out" "model" "  Codex's model at the top is no problem"
"$MOAT" run --config "$CFG/five.toml" --server b >/dev/null 2>"$SCRATCH/err"
is "$?:$(grep -c '^moat: ' "$SCRATCH/err")" "125:2" "moat run refuses the file with its first problem (and the hint)"
printf '[mcp_servers.a]\ncommand = "node"\nargs = ["x"\n[mcp_servers.b]\ncomand = "node"\n' >"$CFG/syntax.toml"
out=$("$MOAT" config check "$CFG/syntax.toml" 2>&1)
is "$(printf '%s\n' "$out" | sed -E 's/(syntax.toml:4:1: ).*/\1/')" "moat: $CFG/syntax.toml:4:1: 
moat: $CFG/syntax.toml: the reading stops at a syntax error: nothing after it was checked" \
	"a syntax error ends the reading, and config check says so (the misspelt command after it is not named)"

# --- a server's directory argument the sandbox does not show: the
# filesystem server given ~/proj under the mcp profile stopped on "None of
# the specified directories are accessible", with no word of moat's.  A
# note names the argument, and why; granted, there is none.
mkdir -p "$SCRATCH/proj" && echo hello >"$SCRATCH/proj/file.txt" && chmod -R a+rX "$SCRATCH/proj"
printf '{"mcpServers": {"fs": {"command": "/bin/ls", "args": ["%s", "/var/lib", "%s"]}}}\n' "$SCRATCH/proj" "$SCRATCH/proj/file.txt" \
	>"$CFG/fsdirs.json"
out=$(cd / && "$MOAT" run --config "$CFG/fsdirs.json" --server fs --profile mcp 2>"$SCRATCH/dirs.err")
unlike "$out" "file.txt" "a directory argument in the private /tmp: the server does not see it"
like "$(cat "$SCRATCH/dirs.err")" "^moat: note: the command's argument $SCRATCH/proj lies in the sandbox's private /tmp, which starts empty" \
	"  and a note names it before the server's own error"
like "$(cat "$SCRATCH/dirs.err")" "moat: note: the command's argument /var/lib is a directory outside every grant: the command sees nothing of it; grant it \\(--read or --write" \
	"  so does one outside every grant (/var/lib under mcp)"
unlike "$(cat "$SCRATCH/dirs.err")" "argument $SCRATCH/proj/file\\.txt" "  a file argument is not noted (it is as often data kept from the command)"
out=$(cd / && "$MOAT" run --config "$CFG/fsdirs.json" --server fs --profile mcp --read "$SCRATCH/proj" --read /var/lib 2>"$SCRATCH/dirs.err")
like "$out" "file.txt" "control: granted, the server lists it"
unlike "$(cat "$SCRATCH/dirs.err")" "note: the command's argument" "  and no note"

done_testing
