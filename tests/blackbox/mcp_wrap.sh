#!/usr/bin/env bash
# moat mcp list, wrap and unwrap on the clients' own files (issue 19, item
# 3).  A fake HOME and project hold the files of tests/configs/ where each
# client keeps its own -- Claude Desktop, Claude Code (~/.claude.json with a
# project's servers, and the project's .mcp.json), Codex, Cursor (through a
# symlink into a dotfiles directory), VS Code, Gemini CLI and Windsurf --
# with the clients' own keys, TOML and JSONC comments.
#
#   1. list: every file, every server, local/remote/disabled, a verdict
#   2. wrap: every local server through moat, a backup beside each file,
#      the mode and the symlink kept; the policy file holds a profile each
#   3. the wrapped entries started as their clients start them: a plain MCP
#      initialize, answered by the server under moat (HOME unreadable), with
#      the variables the client sets passed on
#   4. wrap again changes nothing; moat under moat is refused, by hand or
#      nested; a read-only directory: an error, and nothing lost
#   5. unwrap: every file byte-identical to the fixture, also with an edit
#      elsewhere kept; a file its client rewrote gets its command lines back
#   6. Claude Code itself (npm, pinned in tests/e2e/claude) lists the
#      wrapped servers connected, where it can be installed
#
# Runs as root, as an unprivileged user and with the sanitizer build.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
PY=/usr/bin/python3
FIX=$ROOT/tests/configs

# Outside /tmp: the sandbox's /tmp is private, a real HOME is not in it.
BASE=$(mktemp -d /var/tmp/moat-mcpwrap.XXXXXX 2>/dev/null) || BASE=$(mktemp -d "$SCRATCH/base.XXXXXX")
chmod 0755 "$BASE"
cleanup() {
	chmod -R u+w "$BASE" 2>/dev/null
	rm -rf "$BASE" "$SCRATCH" "$REPORTS"
}
trap cleanup EXIT

H=$BASE/home
P=$BASE/code/app
STUBS=$BASE/stubs/bin
POL=$H/.config/moat/servers.toml
mkdir -p "$H/.config/Claude" "$H/.codex" "$H/.cursor" "$H/dotfiles" "$H/.gemini" "$H/.codeium/windsurf" \
	"$P/.vscode" "$STUBS"
echo "a secret in HOME" >"$H/canary"
cp "$FIX/claude_desktop_config.json" "$H/.config/Claude/"
cp "$FIX/codex.toml" "$H/.codex/config.toml"
cp "$FIX/cursor.json" "$H/dotfiles/cursor-mcp.json"
ln -s ../dotfiles/cursor-mcp.json "$H/.cursor/mcp.json"
cp "$FIX/gemini.json" "$H/.gemini/settings.json"
cp "$FIX/windsurf.json" "$H/.codeium/windsurf/mcp_config.json"
# Claude Code's file names this project by its path.
sed "s|/home/you/code/app|$P|g" "$FIX/claude_code.json" >"$H/.claude.json"
cp "$FIX/mcp.json" "$P/.mcp.json"
cp "$FIX/vscode.json" "$P/.vscode/mcp.json"
ORIG=$BASE/orig
mkdir -p "$ORIG"
cp -a "$H" "$ORIG/home"
cp -a "$P" "$ORIG/app"
FILES=(.config/Claude/claude_desktop_config.json .claude.json .codex/config.toml dotfiles/cursor-mcp.json
	.gemini/settings.json .codeium/windsurf/mcp_config.json)
PFILES=(.mcp.json .vscode/mcp.json)

# The clients' commands: one tiny MCP server under every name, which
# answers `initialize` with what it was started with, whether it could read
# HOME's canary, and the variables the clients set.
cat >"$STUBS/npx" <<'EOF'
#!/usr/bin/python3
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") != "initialize":
        continue
    try:
        open(os.path.join(os.environ.get("HOME", "/nonexistent"), "canary")).read()
        canary = "read"
    except OSError:
        canary = "unreadable"
    env = {k: os.environ[k] for k in ("USER_AGENT", "DOCS_MODE", "MEMORY_FILE_PATH", "SQLITE_LOG") if k in os.environ}
    info = {"argv": [os.path.basename(sys.argv[0])] + sys.argv[1:], "canary": canary, "env": env}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {
        "protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
        "serverInfo": {"name": "tiny", "version": "1"}, "instructions": json.dumps(info, sort_keys=True)}}), flush=True)
    break
EOF
chmod 0755 "$STUBS/npx"
for p in uvx node python3; do ln -s npx "$STUBS/$p"; done
chmod -R a+rX "$BASE"
chmod 0600 "$H/.claude.json" "$ORIG/home/.claude.json"

# moat as the user of the fake HOME, in the project.
m() { (cd "$P" && env HOME="$H" "$MOAT" "$@"); }
listing() { m mcp list --json >"$SCRATCH/list.json" 2>"$SCRATCH/list.err"; }
# A python expression over the listing: L is the document, S(client, name)
# the server.
q() {
	$PY -c 'import json, sys
L = json.load(open(sys.argv[1]))
def S(client, name, scope=None):
    for f in L["files"]:
        if f["client"] == client and (scope is None or f["scope"] == scope):
            for s in f["servers"]:
                if s["name"] == name:
                    return s
print(eval(sys.argv[2]))' "$SCRATCH/list.json" "$1"
}
same_files() { # same_files DIR_H DIR_P: every client file as in those trees
	local f
	for f in "${FILES[@]}"; do cmp -s "$1/$f" "$H/$f" || return 1; done
	for f in "${PFILES[@]}"; do cmp -s "$2/$f" "$P/$f" || return 1; done
}

# --- 1. list
listing
ok $? "moat mcp list --json reads every client's file ($(head -c 200 "$SCRATCH/list.err"))"
# A project directory whose name is not UTF-8: the listing is still JSON,
# the name's stray byte shown as \xNN (it once exited 125 with nothing
# said: jansson refused the string and the document was never made).
LATIN_P=$SCRATCH/$'proj\xe9'
mkdir -p "$LATIN_P"
out=$(cd "$LATIN_P" && env HOME="$H" "$MOAT" mcp list --json 2>&1)
is "$?/$(printf '%s' "$out" | $PY -c 'import json, sys; print(json.load(sys.stdin)["project"].endswith("proj\\xe9"))' 2>&1)" \
	"0/True" "moat mcp list --json in a directory named in Latin-1: JSON, the name shown with \\xe9"
is "$(q '" ".join(sorted(f["client"] + ":" + f["scope"] for f in L["files"]))')" \
	"claude-code:project claude-code:user claude-desktop:user codex:user cursor:user gemini:user vscode:project windsurf:user" \
	"  the files of HOME and the project, each client's"
is "$(q '" ".join(s["name"] + "=" + s["kind"] + "/" + s["state"] for f in L["files"] for s in f["servers"] if f["client"] == "claude-code")')" \
	"sequential-thinking=local/unwrapped sentry=remote/unwrapped db=local/unwrapped memory=local/unwrapped api=remote/unwrapped" \
	"  Claude Code: the user's servers, this project's in ~/.claude.json (not another project's), the project's .mcp.json"
is "$(q 'S("claude-code", "db")["key"] + " line " + str(S("claude-code", "db")["line"])')" \
	"projects.\"$P\".mcpServers.db line 28" "  each with where it is in its file"
is "$(q '[s["name"] for f in L["files"] for s in f["servers"] if s["kind"] == "disabled"]')" "['old', 'puppeteer']" \
	"  Codex's enabled = false and Windsurf's disabled = true: disabled"
is "$(q 'sorted(s["name"] for f in L["files"] for s in f["servers"] if s["skip"])')" \
	"['api', 'boxed', 'context7', 'figma', 'github', 'search', 'sentry', 'zapier']" \
	"  remote servers and VS Code's sandboxed one are not to be wrapped, each with the reason"
is "$(q 'set(s["verdict"]["status"] for f in L["files"] for s in f["servers"] if not s["skip"]) <= {"enforced", "degraded", "unavailable"} and all(s["verdict"]["if_wrapped"] for f in L["files"] for s in f["servers"] if not s["skip"])')" \
	True "  every local server with the verdict of a dry run here, under the profile wrap would give it"
SELF=$(q 'L["moat"]')
out=$(m mcp list 2>&1)
like "$out" "Claude Desktop \\(user\\): $H/.config/Claude/claude_desktop_config.json" "the table names each file"
like "$out" "Cursor \\(user\\): $H/.cursor/mcp.json -> $H/dotfiles/cursor-mcp.json" "  and where a symlink leads"
like "$out" "  filesystem +:3 +local +unwrapped +- +if wrapped \\(profile mcp\\): (enforced|degraded|unavailable)" \
	"  a row for each server: line, kind, moat, policy, verdict"

# --- 2. wrap
out=$(m mcp wrap --read "$P" 2>&1)
ok $? "moat mcp wrap wraps every client's local servers ($(printf '%s' "$out" | tail -1 | head -c 300))"
listing
is "$(q 'sorted(s["name"] for f in L["files"] for s in f["servers"] if s["state"] == "wrapped")')" \
	"['db', 'docs', 'fetch', 'filesystem', 'git', 'memory', 'memory', 'old', 'perplexity', 'playwright', 'puppeteer', 'pythonTools', 'sequential-thinking']" \
	"  every local server now runs under moat, disabled ones included"
is "$(q 'S("claude-desktop", "filesystem")["command"][:7] == [L["moat"], "run", "--config", L["policies"], "--profile", "claude-desktop.filesystem", "--"] and S("claude-desktop", "filesystem")["server_command"]')" \
	"['npx', '-y', '@modelcontextprotocol/server-filesystem', '/home/you/Desktop']" \
	"  an entry runs moat run --config POLICIES --profile ID -- and its own command line"
is "$(q 'S("claude-desktop", "fetch")["policy"]')" "{'extends': 'mcp', 'read': ['$P'], 'env_pass': ['USER_AGENT']}" \
	"  its profile: wrap's --profile (mcp) and options, and the variables the client sets"
is "$(q 'S("codex", "docs")["policy"]["env_pass"]')" "['DOCS_MODE', 'DOCS_TOKEN']" "  Codex: env and env_vars passed on"
is "$(q 'set(s["verdict"]["status"] for f in L["files"] for s in f["servers"] if s["state"] == "wrapped") <= {"enforced", "degraded", "unavailable"} and not any(s["verdict"]["if_wrapped"] for f in L["files"] for s in f["servers"] if s["state"] == "wrapped")')" \
	True "  list reads the policy file: each wrapped server's verdict is its own policy's"
ok "$([ "$("$MOAT" config check "$POL" 2>&1)" = "$POL: ok (0 servers)" ] && echo 0 || echo 1)" \
	"  the policy file passes moat config check"
backups=0
for f in "${FILES[@]}"; do cmp -s "$ORIG/home/$f" "$H/$f.moat-backup" && backups=$((backups + 1)); done
for f in "${PFILES[@]}"; do cmp -s "$ORIG/app/$f" "$P/$f.moat-backup" && backups=$((backups + 1)); done
is "$backups" 8 "  each file's old bytes are kept beside it (FILE.moat-backup)"
is "$(stat -c %a "$H/.claude.json")" 600 "  a file's mode is kept"
ok "$([ -L "$H/.cursor/mcp.json" ] && cmp -s "$ORIG/home/dotfiles/cursor-mcp.json" "$H/dotfiles/cursor-mcp.json.moat-backup" && grep -q '"--profile"' "$H/dotfiles/cursor-mcp.json" && echo 0 || echo 1)" \
	"  a symlinked file: the link stays, the file it leads to is edited, its backup beside it"
is "$(diff "$ORIG/home/.codex/config.toml" "$H/.codex/config.toml" | grep -c '^[<>]')" 8 \
	"  Codex's TOML: only the command and args lines of its two local servers differ"
# A server granted all of HOME still cannot loosen its own policy.
m run --profile mcp --write "$H" -- /bin/sh -c 'echo "[profiles.x]" >>"$HOME/.config/moat/servers.toml"' >/dev/null 2>&1
ok "$(! grep -q 'profiles.x' "$POL" && echo 0 || echo 1)" \
	"  the policy file is read-only inside a granted HOME (~/.config/moat is protected)"
cp "$POL" "$SCRATCH/pol"
m run --profile mcp --write "$H" --unprotect "$H/.config/moat" -- /bin/sh -c \
	'echo "[profiles.x]" >>"$HOME/.config/moat/servers.toml"' >/dev/null 2>&1
ok "$(grep -q 'profiles.x' "$POL" && echo 0 || echo 1)" "  control: --unprotect lifts it, and the write lands"
cp "$SCRATCH/pol" "$POL"
WRAPPED=$BASE/wrapped
mkdir -p "$WRAPPED"
cp -a "$H" "$WRAPPED/home"
cp -a "$P" "$WRAPPED/app"
cp "$POL" "$BASE/pol-wrapped"

# --- 3. the wrapped servers, started as their clients start them
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}'
launch() { # launch CLIENT SERVER [VAR=VALUE...]: the entry's command line, run with the client's environment
	local client=$1 server=$2
	shift 2
	printf '%s\n' "$INIT" | (cd "$P" && env -i HOME="$H" PATH="$STUBS:/usr/bin:/bin" "$@" $PY -c 'import json, os, sys
L = json.load(open(sys.argv[1]))
a = [s for f in L["files"] if f["client"] == sys.argv[2] for s in f["servers"] if s["name"] == sys.argv[3]][0]["command"]
os.execv(a[0], a)' "$SCRATCH/list.json" "$client" "$server") 2>"$SCRATCH/launch.err" |
		$PY -c 'import json, sys; r = json.loads(sys.stdin.readline())["result"]; i = json.loads(r["instructions"]); print(" ".join(i["argv"]), i["canary"], json.dumps(i["env"], sort_keys=True))' 2>/dev/null
}
is "$(launch claude-desktop filesystem)" "npx -y @modelcontextprotocol/server-filesystem /home/you/Desktop unreadable {}" \
	"Claude Desktop's filesystem entry: the server answers initialize under moat, HOME unreadable ($(head -c 200 "$SCRATCH/launch.err"))"
is "$(launch claude-desktop fetch USER_AGENT=claude-desktop/1)" "uvx mcp-server-fetch unreadable {\"USER_AGENT\": \"claude-desktop/1\"}" \
	"  what the client sets in env reaches the server"
is "$(launch codex docs DOCS_MODE=offline)" "node server.js --stdio unreadable {\"DOCS_MODE\": \"offline\"}" "  Codex's docs"
is "$(launch claude-code db SQLITE_LOG=warn)" "uvx mcp-server-sqlite --db-path $P/dev.db unreadable {\"SQLITE_LOG\": \"warn\"}" \
	"  Claude Code's server of this project in ~/.claude.json"
is "$(launch claude-code memory MEMORY_FILE_PATH=/x)" "npx -y @modelcontextprotocol/server-memory unreadable {\"MEMORY_FILE_PATH\": \"/x\"}" \
	"  Claude Code's .mcp.json"
is "$(launch gemini pythonTools)" "python3 -m my_mcp_server --port 8080 unreadable {}" "  Gemini CLI's"
is "$(launch vscode memory)" "npx -y @modelcontextprotocol/server-memory unreadable {}" "  VS Code's"
is "$(launch windsurf git)" "uvx mcp-server-git --repository /home/you/code/app unreadable {}" "  Windsurf's"
is "$(launch cursor playwright)" "npx -y @playwright/mcp@latest unreadable {}" "  Cursor's, through the symlink"

# --- 4. wrap again; moat under moat; a read-only directory
out=$(m mcp wrap --read "$P" 2>&1)
ok $? "a second wrap succeeds"
ok "$(same_files "$WRAPPED/home" "$WRAPPED/app" && cmp -s "$BASE/pol-wrapped" "$POL" && echo 0 || echo 1)" \
	"  and changes nothing: every file and the policy file as they were"
like "$out" "claude_desktop_config.json: filesystem: unchanged: already wrapped \\(profile claude-desktop.filesystem\\)" \
	"  saying so for each server"

HAND=$BASE/hand.json
cat >"$HAND" <<EOF
{
  "mcpServers": {
    "byhand": {"command": "$MOAT", "args": ["run", "--profile", "mcp", "--", "npx", "-y", "pkg"]},
    "viaenv": {"command": "env", "args": ["A=1", "moat", "run", "--", "npx", "pkg"]},
    "rewrapped": {"command": "moat", "args": ["run", "--profile", "mcp", "--",
      "$MOAT", "run", "--config", "$POL", "--profile", "x", "--", "npx", "pkg"]},
    "nested": {"command": "$MOAT", "args": ["run", "--config", "$POL", "--profile", "x", "--", "npx", "-y", "moat@1", "run", "--", "npx", "pkg"]},
    "plain": {"command": "npx", "args": ["pkg"]}
  }
}
EOF
cp "$HAND" "$BASE/hand.orig"
m mcp list --config "$HAND" --json >"$SCRATCH/list.json" 2>/dev/null
is "$(q '[s["state"] for s in L["files"][0]["servers"]]')" "['by-hand', 'by-hand', 'nested', 'nested', 'unwrapped']" \
	"list tells moat written by hand (also behind env) from moat inside moat"
for s in byhand viaenv rewrapped nested; do
	out=$(m mcp wrap --config "$HAND" --server "$s" 2>&1)
	rc=$?
	is "$rc" 125 "wrap --server $s: refused"
	like "$out" "moat: $HAND:[0-9]+:[0-9]+: mcpServers.$s: not wrapped: .*moat inside moat" "  saying moat would run inside moat"
done
ok "$(cmp -s "$BASE/hand.orig" "$HAND" && [ ! -e "$HAND.moat-backup" ] && echo 0 || echo 1)" "  nothing written"
out=$(m mcp wrap --config "$HAND" 2>&1)
like "$out" "hand.json: wrapped plain " "wrap of the whole file wraps the plain entry"
like "$out" "hand.json: byhand: skipped: it already runs under moat \\(written by hand\\)" "  and leaves the others, saying why"

# A server's name is the config's (a repository's own .mcp.json): its
# control characters reach the terminal escaped, in list and in wrap.
ESCCFG=$BASE/esc.json
printf '{"mcpServers": {"a\\u001b]0;PWNED\\u0007b": {"command": "npx", "args": ["pkg"]}}}\n' >"$ESCCFG"
m mcp list --config "$ESCCFG" >"$SCRATCH/esc.out" 2>&1
m mcp wrap --config "$ESCCFG" >>"$SCRATCH/esc.out" 2>&1
ok "$(LC_ALL=C grep -c "$(printf '\033')" "$SCRATCH/esc.out")" "a server named with an escape sequence: no escape byte in list's and wrap's output"
like "$(cat "$SCRATCH/esc.out")" 'wrapped a\\x1b\]0;PWNED\\x07b ' "  the name shown escaped"
m mcp unwrap --config "$ESCCFG" >"$SCRATCH/esc.out" 2>&1
ok "$(LC_ALL=C grep -c "$(printf '\033')" "$SCRATCH/esc.out")" "  and unwrapped, its output without one either"
# A TAB in the name as well (a VS Code server named "a\tb"): raw, it moves
# the name's end to another column of list's table.
printf '{"mcpServers": {"a\\u001b[2J\\tb\\nc": {"command": "npx", "args": ["pkg"]}}}\n' >"$ESCCFG"
m mcp list --config "$ESCCFG" >"$SCRATCH/esc.out" 2>&1
m mcp wrap --config "$ESCCFG" >>"$SCRATCH/esc.out" 2>&1
ok "$(LC_ALL=C grep -c "$(printf '[\033\t]')" "$SCRATCH/esc.out")" "a server named with ESC, TAB and newline: no ESC or TAB byte in list's and wrap's output"
[ "$(LC_ALL=C grep -c "$(printf '[\033\t]')" "$SCRATCH/esc.out")" = 0 ] || diag "$(cat -A "$SCRATCH/esc.out")"
like "$(cat "$SCRATCH/esc.out")" '^  a\\x1b\[2J\\x09b\\x0ac ' "  list: the name shown escaped (\\x1b, \\x09, \\x0a)"
like "$(cat "$SCRATCH/esc.out")" 'wrapped a\\x1b\[2J\\x09b\\x0ac ' "  wrap: the name shown escaped"
m mcp unwrap --config "$ESCCFG" >"$SCRATCH/esc.out" 2>&1
ok "$(LC_ALL=C grep -c "$(printf '[\033\t]')" "$SCRATCH/esc.out")" "  and unwrapped, its output without one either"

# A profile's path can be a directory a repository named (list's own hint
# says `--write DIR` for a directory among the server's arguments): list
# shows the profile's values escaped too.
ESCDIR="$BASE/d$(printf '\033')]0;PWNED$(printf '\007')x"
mkdir -p "$ESCDIR"
printf '{"mcpServers": {"plain": {"command": "npx", "args": ["pkg"]}}}\n' >"$ESCCFG"
m mcp wrap --config "$ESCCFG" --write "$ESCDIR" >"$SCRATCH/esc.out" 2>&1
m mcp list --config "$ESCCFG" >>"$SCRATCH/esc.out" 2>&1
ok "$(LC_ALL=C grep -c "$(printf '[\033\007]')" "$SCRATCH/esc.out")" "a profile granting a directory named with an escape sequence: no escape byte in list's output"
[ "$(LC_ALL=C grep -c "$(printf '[\033\007]')" "$SCRATCH/esc.out")" = 0 ] || diag "$(cat -A "$SCRATCH/esc.out")"
like "$(cat "$SCRATCH/esc.out")" 'wrapped .*\(mcp; write .*/d\\x1b\]0;PWNED\\x07x\)' "  the path shown escaped in the POLICY column"
m mcp unwrap --config "$ESCCFG" >/dev/null 2>&1
rm -rf "$ESCDIR"

# A server that runs a container: the sandbox would hold docker's client,
# which cannot reach the daemon that starts the container (nor should it).
CONT=$BASE/containers.json
cat >"$CONT" <<'EOF'
{
  "mcpServers": {
    "github": {"command": "docker", "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"]},
    "pod": {"command": "/usr/bin/podman", "args": ["container", "run", "-i", "img"]},
    "dockerish": {"command": "docker-credential-helper", "args": ["run"]}
  }
}
EOF
cp "$CONT" "$BASE/containers.orig"
m mcp list --config "$CONT" --json >"$SCRATCH/list.json" 2>/dev/null
is "$(q '[(s["name"], (s["skip"] or "")[:24]) for s in L["files"][0]["servers"]]')" \
	"[('github', 'it runs a container: the'), ('pod', 'it runs a container: the'), ('dockerish', '')]" \
	"list: the servers that run a container are not to be wrapped, and say why"
out=$(m mcp wrap --config "$CONT" --server github 2>&1)
is "$?" 125 "wrap --server github (docker run): refused"
like "$out" "mcpServers.github: not wrapped: it runs a container: the engine starts it outside any sandbox" \
	"  saying the container runs outside any sandbox around its client"
ok "$(cmp -s "$BASE/containers.orig" "$CONT" && echo 0 || echo 1)" "  nothing written"
out=$(m mcp wrap --config "$CONT" --policies "$BASE/cont-pol/servers.toml" 2>&1)
like "$out" "containers.json: pod: skipped: it runs a container" "wrap of the whole file skips podman's too"
like "$out" "containers.json: wrapped dockerish " "  and wraps a command that is no container engine"
# wrap from HOME, where a new terminal starts: its check of the options is
# the servers' profile's (mcp), not moat run's default (exec), which
# refuses to grant HOME as the current directory.
FROMHOME=$BASE/fromhome.json
printf '{"mcpServers": {"s": {"command": "npx", "args": ["pkg"]}}}\n' >"$FROMHOME"
out=$(cd "$H" && env HOME="$H" "$MOAT" mcp wrap --config "$FROMHOME" --policies "$BASE/fromhome-pol/servers.toml" 2>&1)
rc=$?
is "$rc" 0 "wrap run from HOME: wraps"
[ "$rc" = 0 ] || diag "$out"

RO=$BASE/ro
mkdir -p "$RO"
cp "$FIX/claude_desktop_config.json" "$RO/"
chmod -R a+rX "$RO"
if [ "$(id -u)" = 0 ]; then
	# Root writes through a directory's mode: a read-only bind mount then.
	out=$(cd "$P" && HOME="$H" unshare -m --propagation private sh -c \
		'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" && shift && exec "$@"' _ "$RO" \
		"$MOAT" mcp wrap --config "$RO/claude_desktop_config.json" --policies "$BASE/ro-pol/servers.toml" 2>&1)
	rc=$?
else
	chmod 0555 "$RO"
	out=$(m mcp wrap --config "$RO/claude_desktop_config.json" --policies "$BASE/ro-pol/servers.toml" 2>&1)
	rc=$?
	chmod 0755 "$RO"
fi
is "$rc" 125 "wrap in a read-only directory fails"
like "$out" "moat: .*$RO/claude_desktop_config.json.*(Read-only file system|Permission denied)" "  saying where"
ok "$(cmp -s "$FIX/claude_desktop_config.json" "$RO/claude_desktop_config.json" && [ "$(ls -A "$RO")" = claude_desktop_config.json ] && [ ! -e "$BASE/ro-pol/servers.toml" ] && echo 0 || echo 1)" \
	"  nothing lost, nothing left: the file as it was, no temporary file, the policy file taken back"

# --- 5. unwrap
out=$(m mcp unwrap --config "$HAND" 2>&1)
ok "$([ $? = 0 ] && cmp -s "$BASE/hand.orig" "$HAND" && echo 0 || echo 1)" "unwrap --config FILE: that file alone, back as it was"
# An edit elsewhere in a file after wrap, and a file its client rewrote
# in a layout of its own (Claude Code writes ~/.claude.json back).
sed -i 's/Ctrl+Space/Ctrl+Alt+Space/' "$H/.config/Claude/claude_desktop_config.json"
$PY -c 'import json, sys; d = json.load(open(sys.argv[1])); json.dump(d, open(sys.argv[1], "w"), indent=4)' "$H/.claude.json"
out=$(m mcp unwrap 2>&1)
ok $? "moat mcp unwrap ($(printf '%s' "$out" | tail -1 | head -c 200))"
like "$out" "claude_desktop_config.json: unwrapped filesystem: its bytes are as they were before wrap" \
	"  an entry whose bytes are still wrap's gets its old bytes back"
like "$out" "\\.claude\\.json: unwrapped sequential-thinking: its bytes changed since wrap" \
	"  one the client rewrote gets its command line back, saying so"
sed -i 's/Ctrl+Alt+Space/Ctrl+Space/' "$H/.config/Claude/claude_desktop_config.json"
n=0
for f in "${FILES[@]}"; do
	if [ "$f" != .claude.json ] && cmp -s "$ORIG/home/$f" "$H/$f"; then n=$((n + 1)); fi
done
for f in "${PFILES[@]}"; do cmp -s "$ORIG/app/$f" "$P/$f" && n=$((n + 1)); done
is "$n" 7 "  every file byte-identical to the fixture (the edit elsewhere kept until undone here)"
is "$($PY -c 'import json, sys; print(json.load(open(sys.argv[1])) == json.load(open(sys.argv[2])))' "$ORIG/home/.claude.json" "$H/.claude.json")" \
	True "  the rewritten ~/.claude.json holds the original command lines (the same JSON)"
ok "$([ -L "$H/.cursor/mcp.json" ] && echo 0 || echo 1)" "  the symlink is still one"
ok "$(! grep -q '^\[profiles\.\|^\[wrapped\.' "$POL" && echo 0 || echo 1)" "  the profiles and records are gone from the policy file"
out=$(m mcp unwrap 2>&1)
ok "$([ $? = 0 ] && [ "$out" = "nothing to unwrap: no file was changed" ] && echo 0 || echo 1)" \
	"a second unwrap changes nothing ($out)"

# --- 6. Claude Code, the client itself
claude_check() {
	local dir=$ROOT/tests/e2e/claude sum stamp=node_modules/.moat-lock.sha256 claude
	if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
		echo "ok $((TAP_N += 1)) # SKIP Claude Code: node and npm are not installed"
		return
	fi
	sum=$(cat "$dir/package.json" "$dir/package-lock.json" | sha256sum | cut -c1-64)
	if [ "$(cat "$dir/$stamp" 2>/dev/null)" != "$sum" ]; then
		if ! [ -w "$dir" ]; then
			mkdir -p "$SCRATCH/claude"
			cp "$dir/package.json" "$dir/package-lock.json" "$SCRATCH/claude/"
			dir=$SCRATCH/claude
		fi
		if ! (cd "$dir" && env npm_config_cache="$SCRATCH/npm-cache" timeout 300 npm ci --no-audit --no-fund \
			--loglevel=error >"$SCRATCH/npm.log" 2>&1); then
			sed 's/^/# /' "$SCRATCH/npm.log" | tail -5
			echo "ok $((TAP_N += 1)) # SKIP Claude Code could not be installed from the npm registry (npm ci in tests/e2e/claude)"
			return
		fi
		echo "$sum" >"$dir/$stamp"
		chmod -R a+rX "$dir/node_modules"
	fi
	claude=$dir/node_modules/.bin/claude
	if ! env -i HOME="$SCRATCH" PATH=/usr/bin:/bin timeout 30 "$claude" --version >"$SCRATCH/claude.log" 2>&1; then
		sed 's/^/# /' "$SCRATCH/claude.log" | tail -3
		echo "ok $((TAP_N += 1)) # SKIP Claude Code does not run here (claude --version failed)"
		return
	fi
	# A HOME of Claude Code's own: a user server, this project's in
	# ~/.claude.json (its .mcp.json approved), and the project's.
	local CH=$BASE/claude-home srv="$STUBS/npx" listed
	mkdir -p "$CH"
	cat >"$CH/.claude.json" <<EOF
{
  "mcpServers": {"tiny": {"type": "stdio", "command": "$srv", "args": ["--user"]}},
  "projects": {
    "$P": {
      "mcpServers": {"here": {"type": "stdio", "command": "$srv", "args": ["--local"]}},
      "enabledMcpjsonServers": ["memory"],
      "hasTrustDialogAccepted": true
    }
  }
}
EOF
	chmod -R a+rwX "$CH"
	(cd "$P" && env HOME="$CH" "$MOAT" mcp wrap --server tiny && env HOME="$CH" "$MOAT" mcp wrap --server here &&
		env HOME="$CH" "$MOAT" mcp wrap --server memory) >"$SCRATCH/cwrap.log" 2>&1
	ok $? "Claude Code: its three servers wrapped ($(tail -1 "$SCRATCH/cwrap.log"))"
	listed=$(cd "$P" && env -i HOME="$CH" PATH="$STUBS:/usr/bin:/bin" MEMORY_FILE_PATH=/x timeout 60 "$claude" mcp list 2>&1)
	like "$listed" "^tiny: $SELF run --config $CH/.config/moat/servers.toml --profile claude-code.tiny -- $srv --user - .*Connected" \
		"  claude mcp list: the user's server runs through moat, connected"
	like "$listed" "^here: $SELF run .* -- $srv --local - .*Connected" "  this project's server in ~/.claude.json, connected"
	like "$listed" "^memory: $SELF run .* -- npx -y @modelcontextprotocol/server-memory - .*Connected" \
		"  the project's .mcp.json server, connected"
	(cd "$P" && env HOME="$CH" "$MOAT" mcp unwrap) >"$SCRATCH/cwrap.log" 2>&1
	listed=$(cd "$P" && env -i HOME="$CH" PATH="$STUBS:/usr/bin:/bin" timeout 60 "$claude" mcp list 2>&1)
	like "$listed" "^tiny: $srv --user - .*Connected" "  unwrapped after Claude Code rewrote its file: its own command again, connected"
}
claude_check

# 7. The entry's own moat settings (its sandbox, the file's [sandbox]) go
# into the profile wrap writes, under wrap's flags: the deny holds when the
# server runs as the client starts it (red-team B1: they were dropped).
H2=$BASE/home2
W2=$BASE/work2
mkdir -p "$H2/.codex" "$W2/secrets"
echo TOPSECRET >"$W2/secrets/key"
echo visible >"$W2/open"
m2() { (cd "$H2" && env HOME="$H2" XDG_CONFIG_HOME="$H2/.config" CODEX_HOME="$H2/.codex" "$MOAT" "$@"); }
# The command line the client runs for SERVER of a wrapped FILE, run.
client_run() { client_run_in "$H2" "$H2" "$@"; } # client_run FILE SERVER
client_run_in() { # client_run_in DIR HOME FILE SERVER: the entry, started in DIR as its client does
	local dir=$1 h=$2
	shift 2
	(cd "$dir" && env HOME="$h" XDG_CONFIG_HOME="$h/.config" $PY -c '
import json, os, subprocess, sys, tomllib
f, s = sys.argv[1], sys.argv[2]
d = json.load(open(f)) if f.endswith(".json") else tomllib.load(open(f, "rb"))
e = (d.get("mcp_servers") or d.get("mcpServers"))[s]
env = dict(os.environ, **e.get("env", {}))
sys.exit(subprocess.run([e["command"]] + e.get("args", []), env=env).returncode)' "$1" "$2" 2>&1)
}
# The wrapped server of FILE's SERVER, as its client starts it, fails to
# read the secret.
denied() { # denied FILE SERVER NAME
	local out rc
	out=$(client_run "$1" "$2")
	rc=$?
	ok "$([ $rc != 0 ] && ! grep -q TOPSECRET <<<"$out" && echo 0 || echo 1)" \
		"$3 (rc $rc: $(head -c 200 <<<"$out"))"
}
cat >"$H2/.codex/config.toml" <<EOF
[sandbox]
pids = 64

[mcp_servers.files]
command = "/bin/cat"
args = ["$W2/secrets/key"]

[mcp_servers.files.sandbox]
read = ["../../work2"]
deny = ["$W2/secrets"]
memory = "256M"

[mcp_servers.open]
command = "/bin/cat"
args = ["$W2/open"]
sandbox = { read = ["$W2"], deny = ["$W2/secrets"] }
EOF
out=$(m2 mcp wrap --read "$W2" 2>&1)
ok $? "wrap an entry with its own sandbox table ($(printf '%s' "$out" | head -c 200))"
denied "$H2/.codex/config.toml" files "  the wrapped server cannot read what its entry denies"
is "$(client_run "$H2/.codex/config.toml" open)" visible "  control: the entry's read grant holds"
POL2=$H2/.config/moat/servers.toml
like "$(sed -n '/^\[profiles."codex.files"\]/,/^$/p' "$POL2" | tr '\n' ' ')" \
	"read = \\[\"$W2\"\\].*deny = \\[\"$W2/secrets\"\\].*memory = \"256M\".*pids = 64" \
	"  the profile holds the entry's and the file's settings, paths made absolute"
# (memory needs a cgroup: uid 65534 here has none, and says so.)
like "$(m2 mcp list 2>&1)" "files +:[0-9]+ +local +wrapped .*(enforced|unavailable \(missing: res\.limits\))" \
	"  list: wrapped, enforced (or res.limits missing, said so, where this user has no cgroup)"
sed -i 's/memory = "256M"/memory = "512M"/' "$H2/.codex/config.toml"
out=$(m2 mcp list 2>&1)
like "$out" "files .*error: the moat settings .* are not all in its profile codex.files" \
	"  an edit of the entry's settings after wrap: list says they do not apply"
ok "$(grep -E '^  files .*enforced' <<<"$out" >/dev/null && echo 1 || echo 0)" "  and not enforced"
# A JSON file: the file's "sandbox" applies to the entry as well.
cat >"$H2/proj.json" <<EOF
{"sandbox": {"deny": ["$W2/secrets"], "timeout": 30},
 "mcpServers": {"j": {"command": "/bin/cat", "args": ["$W2/secrets/key"], "sandbox": {"read": ["$W2"]}}}}
EOF
out=$(m2 mcp wrap --config "$H2/proj.json" --read "$W2" 2>&1)
ok $? "wrap a JSON entry under the file's \"sandbox\" ($(printf '%s' "$out" | head -c 200))"
denied "$H2/proj.json" j "  the file's deny holds in the wrapped server"
# Settings wrap cannot carry (here: a broken table): refused, nothing written.
printf '{"mcpServers": {"b": {"command": "/bin/true", "sandbox": {"deny": ["%s"], "nte": 1}}}}\n' "$W2/secrets" \
	>"$H2/bad.json"
cp "$H2/bad.json" "$H2/bad.orig"
out=$(m2 mcp wrap --config "$H2/bad.json" 2>&1)
rc=$?
ok "$([ $rc != 0 ] && echo 0 || echo 1)" "an entry whose moat settings have a problem is not wrapped (rc $rc)"
like "$out" "bad\\.json:1:[0-9]+: mcpServers\\.b: not wrapped: the server's moat settings at mcpServers\\.b\\.sandbox" \
	"  the error names the file, the entry and the key"
ok "$(cmp -s "$H2/bad.json" "$H2/bad.orig" && echo 0 || echo 1)" "  and the file is left as it was"
# A project's own file (found in the working directory, as a cloned
# repository's .mcp.json is): its settings are not taken into the user's
# policy unseen -- here they would turn the sandbox off.
P2=$BASE/proj2
mkdir -p "$P2"
printf '{"mcpServers": {"p": {"command": "/bin/cat", "args": ["%s"], "sandbox": {"mode": "off"}}}}\n' \
	"$W2/secrets/key" >"$P2/.mcp.json"
cp "$P2/.mcp.json" "$P2/mcp.orig"
out=$(cd "$P2" && env HOME="$H2" XDG_CONFIG_HOME="$H2/.config" CODEX_HOME="$H2/.codex" "$MOAT" mcp wrap --server p 2>&1)
rc=$?
ok "$([ $rc != 0 ] && echo 0 || echo 1)" "a project's entry with moat settings of its own is not wrapped (rc $rc)"
like "$out" "\.mcp\.json:1:[0-9]+: mcpServers\.p: not wrapped: this project's file gives the server moat settings" \
	"  the error names the file and the entry, and says why"
ok "$(cmp -s "$P2/.mcp.json" "$P2/mcp.orig" && echo 0 || echo 1)" "  and the file is left as it was"
unlike "$(sed -n '/"claude-code.p"/,$p' "$POL2" 2>/dev/null)" 'mode = "off"' "  and the policy file holds no mode = \"off\""
# An entry whose env sets a loader hook: list says wrap would refuse it
# (not "enforced"), and wrap names the entry in the client's file, not a
# line of the policy file it did not write (red-team D6).
P3=$BASE/proj3
mkdir -p "$P3"
printf '{"mcpServers": {"ok": {"command": "/bin/true"}, "hook": {"command": "/bin/true", "env": {"NODE_OPTIONS": "--require /tmp/x.js"}}}}\n' \
	>"$P3/.mcp.json"
out=$(cd "$P3" && env HOME="$H2" XDG_CONFIG_HOME="$H2/.config" CODEX_HOME="$H2/.codex" "$MOAT" mcp list 2>&1)
like "$out" "hook +:1 +local +unwrapped +- +error: wrap would refuse it: its env sets NODE_OPTIONS" \
	"list: an entry setting NODE_OPTIONS is not 'if wrapped: enforced', but what wrap would say"
out=$(cd "$P3" && env HOME="$H2" XDG_CONFIG_HOME="$H2/.config" CODEX_HOME="$H2/.codex" "$MOAT" mcp wrap 2>&1)
rc=$?
is "$rc" 125 "wrap refuses it (exit 125)"
like "$out" "moat: $P3/\.mcp\.json:1:[0-9]+: mcpServers\.hook: not wrapped: its env sets NODE_OPTIONS" \
	"  naming the entry where it is, once"
unlike "$out" "servers\.toml:[0-9]+" "  not a line of the policy file it did not write"
like "$out" "no file was changed: moat stopped at the problem" "  and not 'nothing to wrap'"

# A NUL byte in a JSON client file (in a comment, which the comment
# blanking would otherwise read away): refused where it is, before any
# edit. wrap's read-back once copied the edited text as a C string and
# parsed past its end (red-team 3, finding 1; the sanitizer pass sees it).
P4=$BASE/proj4
mkdir -p "$P4"
printf '{"mcpServers":{"a":{"command":"/bin/cat"}}}/*\0*/\n' >"$P4/.mcp.json"
cp "$P4/.mcp.json" "$P4/mcp.orig"
out=$(cd "$P4" && env HOME="$H2" XDG_CONFIG_HOME="$H2/.config" CODEX_HOME="$H2/.codex" "$MOAT" mcp wrap 2>&1)
rc=$?
is "$rc" 125 "wrap: a client's JSON file holding a NUL byte is refused (exit 125)"
like "$out" "$P4/\.mcp\.json:1:46: a NUL byte \(at offset 45\)" "  naming the file, line, column and offset"
ok "$(cmp -s "$P4/.mcp.json" "$P4/mcp.orig" && echo 0 || echo 1)" "  and the file is left as it was"
out=$("$MOAT" config check "$P4/.mcp.json" 2>&1)
rc=$?
is "$rc" 125 "config check refuses it too (exit 125)"
like "$out" "\.mcp\.json:1:46: a NUL byte" "  with the same position"

# A key close to moat's `sandbox` -- in other letter case, misspelt, or with
# a character no editor shows -- in a server entry or at the top of the
# file: config check refuses it, and so does wrap, at the key. Taken as a
# client's key, the entry was wrapped without its deny and list said
# enforced (red-team 3, findings 3 and 4).
# moat_in DIR HOME ARGS...: moat in DIR, with HOME's client files (stderr too).
moat_in() {
	local dir=$1 h=$2
	shift 2
	(cd "$dir" && env HOME="$h" XDG_CONFIG_HOME="$h/.config" CODEX_HOME="$h/.codex" "$MOAT" "$@" 2>&1)
}
typo_case() { # typo_case NAME FILE-IN-HOME TEXT LINE:COL KEY
	local name=$1 rel=$2 text=$3 at=$4 key=$5 h=$BASE/typo-$1 out rc
	mkdir -p "$h/$(dirname "$rel")" "$h/work"
	printf '%s\n' "$text" >"$h/$rel"
	chmod 600 "$h/$rel"
	cp "$h/$rel" "$h/orig"
	out=$(moat_in "$h/work" "$h" mcp list)
	like "$out" "fs +:[0-9]+ +local +unwrapped +- +error: wrap would refuse it: .*:$at: $key: unknown key" \
		"$name: list says wrap would refuse the entry, not 'if wrapped: enforced'"
	out=$(moat_in "$h/work" "$h" mcp wrap)
	rc=$?
	is "$rc" 125 "$name: wrap refuses it (exit 125)"
	like "$out" "^moat: $h/$rel:$at: $key: unknown key.*: not wrapped" "  at the key's file, line and column"
	like "$out" "hint: .*did you mean 'sandbox'\?" "  with a hint at moat's key"
	ok "$(cmp -s "$h/$rel" "$h/orig" && echo 0 || echo 1)" "  and the file is left as it was"
	ok "$([ ! -e "$h/.config/moat/servers.toml" ] && echo 0 || echo 1)" "  and no profile was written"
}
CD=.config/Claude/claude_desktop_config.json
typo_case entry-case "$CD" '{"mcpServers":{"fs":{"command":"/bin/cat","Sandbox":{"deny":["/etc/hosts"]}}}}' \
	1:43 'mcpServers\.fs\.Sandbox'
typo_case entry-sandbx "$CD" '{"mcpServers":{"fs":{"command":"/bin/cat","sandbx":{"deny":["/etc/hosts"]}}}}' \
	1:43 'mcpServers\.fs\.sandbx'
typo_case top-sandbx "$CD" '{"sandbx":{"deny":["/etc/hosts"]},"mcpServers":{"fs":{"command":"/bin/cat"}}}' \
	1:2 'sandbx'
typo_case entry-zwsp "$CD" '{"mcpServers":{"fs":{"command":"/bin/cat","sandbox\u200b":{"deny":["/etc/hosts"]}}}}' \
	1:43 'mcpServers\.fs\."sandbox\\u200b"'
typo_case codex-case .codex/config.toml $'[mcp_servers.fs]\ncommand = "/bin/cat"\n[mcp_servers.fs.Sandbox]\ndeny = ["/etc/hosts"]' \
	3:17 'mcp_servers\.fs\.Sandbox'
# Control: spelt as moat spells it, the entry is wrapped with its deny.
h=$BASE/typo-control
mkdir -p "$h/.config/Claude" "$h/work"
printf '%s\n' '{"mcpServers":{"fs":{"command":"/bin/cat","sandbox":{"deny":["/etc/hosts"]}}}}' >"$h/$CD"
chmod 600 "$h/$CD"
out=$(moat_in "$h/work" "$h" mcp wrap)
rc=$?
is "$rc" 0 "control: the entry with 'sandbox' is wrapped ($out)"
like "$(cat "$h/.config/moat/servers.toml" 2>/dev/null)" '/etc/hosts' "  and its profile carries the deny"

# wrap --moat PATH with a moat not named moat (moat-dev): the entry is
# wrap's by what wrap wrote -- its form and its record in the policy file
# -- not by the program's name. list said unwrapped, unwrap "nothing to
# unwrap" and a second wrap nested moat in moat (red-team 3, finding 5).
h=$BASE/moat-dev
mkdir -p "$h/.config/Claude" "$h/work" "$h/bin"
cp "$MOAT" "$h/bin/moat-dev"
printf '%s\n' '{"mcpServers":{"fs":{"command":"/bin/cat","args":["x"]}}}' >"$h/$CD"
chmod 600 "$h/$CD"
cp "$h/$CD" "$h/orig"
out=$(moat_in "$h/work" "$h" mcp wrap --moat "$h/bin/moat-dev")
is "$?" 0 "wrap --moat .../moat-dev wraps the entry ($out)"
like "$(cat "$h/$CD")" "\"command\":\"$h/bin/moat-dev\"" "  running it through moat-dev"
like "$(moat_in "$h/work" "$h" mcp list)" "fs +:1 +local +wrapped +claude-desktop\.fs" "  list: wrapped, not unwrapped"
cp "$h/$CD" "$h/wrapped"
out=$(moat_in "$h/work" "$h" mcp wrap)
like "$out" "fs: unchanged: already wrapped" "  wrap again (by moat): unchanged, not moat inside moat"
ok "$(cmp -s "$h/$CD" "$h/wrapped" && echo 0 || echo 1)" "  and the file is as wrap left it"
out=$(moat_in "$h/work" "$h" mcp unwrap)
like "$out" "unwrapped fs" "  unwrap (by moat) restores it, not 'nothing to unwrap'"
ok "$(cmp -s "$h/$CD" "$h/orig" && echo 0 || echo 1)" "  byte for byte"
# Control: the same form with no record of wrap's is another program's.
printf '%s\n' "{\"mcpServers\":{\"fs\":{\"command\":\"/bin/other\",\"args\":[\"run\",\"--config\",\"$h/.config/moat/servers.toml\",\"--profile\",\"claude-desktop.fs\",\"--\",\"/bin/cat\"]}}}" >"$h/$CD"
like "$(moat_in "$h/work" "$h" mcp list)" "fs +:1 +local +unwrapped" "control: wrap's form without wrap's record stays unwrapped"

# A server whose argument is a directory its sandbox does not show: moat
# run notes it on the server's stderr, which only the client's log has;
# list said "enforced" and wrap "wrapped" with no word of it (the
# filesystem server then stops on "None of the specified directories are
# accessible"). Now both name it, with the grant to add; granted, no note.
h=$BASE/argdir
mkdir -p "$h/.config" "$h/work" "$BASE/argdir-data" "$BASE/argdir-granted"
printf '%s\n' "{\"mcpServers\":{\"fs\":{\"command\":\"/bin/ls\",\"args\":[\"$BASE/argdir-data\"]},\"file\":{\"command\":\"/bin/cat\",\"args\":[\"$FIX/mcp.json\"]}}}" >"$h/c.json"
out=$(moat_in "$h/work" "$h" mcp list --config "$h/c.json")
like_lines "$out" "fs +:1 +local +unwrapped .*enforced
 +note: its argument $BASE/argdir-data is a directory outside every grant: the server sees nothing of it
 +hint: wrap it with the grant: moat mcp wrap --config $h/c.json --server fs --write $BASE/argdir-data" \
	"list: a directory argument the sandbox does not show is noted below the server, with the grant ($out)"
unlike "$out" "argument $FIX" "  a file argument is not noted"
moat_in "$h/work" "$h" mcp list --config "$h/c.json" --json >"$SCRATCH/argdir.json"
is "$(json_eval "$SCRATCH/argdir.json" '[n["path"] for n in d["files"][0]["servers"][0]["verdict"]["notes"]]')" \
	"[\"$BASE/argdir-data\"]" "  --json: verdict.notes[] names it"
is "$(json_eval "$SCRATCH/argdir.json" 'd["files"][0]["servers"][1]["verdict"]["notes"]')" "[]" "  and none for the file argument"
cp "$h/c.json" "$h/c0.json"
out=$(moat_in "$h/work" "$h" mcp wrap --config "$h/c.json" --server fs)
like_lines "$out" "wrapped fs \\(profile file.fs in $h/.config/moat/servers.toml\\)
  note: its argument $BASE/argdir-data is a directory outside every grant
  hint: grant it in the server's profile file.fs of $h/.config/moat/servers.toml: write = \\[\"$BASE/argdir-data\"\\]" \
	"wrap: the same note, with the profile to grant it in ($out)"
out=$(moat_in "$h/work" "$h" mcp list --config "$h/c.json")
like_lines "$out" "fs +:1 +local +wrapped .*
 +note: its argument $BASE/argdir-data is a directory outside every grant" "  list after wrap: still noted"
moat_in "$h/work" "$h" mcp unwrap --config "$h/c.json" >/dev/null
# Control: granted at wrap, no note, in wrap or list.
out=$(moat_in "$h/work" "$h" mcp wrap --config "$h/c.json" --server fs --read "$BASE/argdir-data")
unlike "$out" "note:" "control: wrap --read DIR: no note ($out)"
out=$(moat_in "$h/work" "$h" mcp list --config "$h/c.json")
like "$out" "fs +:1 +local +wrapped .*enforced" "  list: wrapped, enforced"
unlike "$out" "note:" "  and no note"

# A relative directory argument: a project's .mcp.json gives the
# filesystem server ".", and Claude Code starts it in the project, which the
# mcp profile does not grant. The server saw an empty directory, and list,
# wrap and the run said nothing (only an absolute argument was noted). Now
# the argument is taken against the directory the server starts in: noted
# with what it names, and the hint, followed, makes it work. A bare word
# ("stdio", a package's name) is never taken for a path.
rh=$BASE/relarg
P=$rh/proj
mkdir -p "$rh/.config" "$P/stdio"
echo hello >"$P/readme.txt"
printf '%s\n' '{"mcpServers":{"fs":{"command":"/bin/ls","args":["stdio","."]}}}' >"$P/.mcp.json"
out=$(moat_in "$P" "$rh" mcp list)
like_lines "$out" "fs +:1 +local +unwrapped .*enforced
 +note: its argument \\. \\($P\\) is a directory outside every grant: the server sees nothing of it
 +hint: wrap it with the grant: moat mcp wrap --server fs --write $P \\(or --read $P\\)" \
	"list: a relative directory argument (.) is noted with what it names in the project, and the grant ($out)"
unlike "$out" "argument stdio" "  a bare word is not taken for a path (stdio is a directory here)"
out=$(moat_in "$P" "$rh" run --profile mcp -- /bin/ls stdio .)
like "$out" "^moat: note: the command's argument \\. \\($P\\) is a directory outside every grant" \
	"moat run: the same note on stderr"
unlike "$out" "readme" "  where the command lists an empty directory"
out=$(moat_in "$P" "$rh" mcp wrap --server fs --write "$P")
is "$?" 0 "the hint followed: wrap --server fs --write DIR ($out)"
unlike "$out" "note:" "  no note"
out=$(client_run_in "$P" "$rh" "$P/.mcp.json" fs)
like "$out" "readme\.txt" "  the wrapped server, started in the project as its client does, lists it"
unlike "$out" "note:" "  and no note on its stderr"
unlike "$(moat_in "$P" "$rh" mcp list)" "note:" "  list: none either"

# A path the entry's env gives the server (the memory server's
# MEMORY_FILE_PATH, docs/clients.md's own example), outside every grant:
# moat run noted it on the server's stderr, which only the client's log
# has, while list said "enforced" and wrap "wrapped" with no word of it;
# the server then failed at its first write (ENOENT). Now list and wrap
# note it with the directory to grant, and the hint, followed, works.
eh=$BASE/envpath
mkdir -p "$eh/.config" "$eh/work" "$BASE/envdata"
printf '%s\n' "{\"mcpServers\":{\"mem\":{\"command\":\"/bin/sh\",\"args\":[\"-c\",\"echo stored >>\\\"\$MEMORY_FILE_PATH\\\" && cat \\\"\$MEMORY_FILE_PATH\\\"\"],\"env\":{\"MEMORY_FILE_PATH\":\"$BASE/envdata/memory.jsonl\"}},\"later\":{\"command\":\"/bin/true\",\"env\":{\"DB\":\"$BASE/envdata-new/db.sqlite\"}}}}" >"$eh/c.json"
out=$(moat_in "$eh/work" "$eh" mcp list --config "$eh/c.json")
like_lines "$out" "mem +:1 +local +unwrapped .*enforced
 +note: its MEMORY_FILE_PATH names $BASE/envdata/memory\\.jsonl, outside every grant: the server can neither read nor write it
 +hint: wrap it with the grant: moat mcp wrap --config $eh/c\\.json --server mem --write $BASE/envdata \\(or --read $BASE/envdata\\)" \
	"list: a path the entry's env names outside every grant is noted, with its directory to grant ($out)"
like "$out" "hint: mkdir -p $BASE/envdata-new, then wrap it with the grant: .*--server later --write $BASE/envdata-new " \
	"  one in a directory not made yet: the hint makes it first (a grant must exist)"
moat_in "$eh/work" "$eh" mcp list --config "$eh/c.json" --json >"$SCRATCH/envpath.json"
is "$(json_eval "$SCRATCH/envpath.json" '[(n["variable"], n["path"], n["grant"]) for n in d["files"][0]["servers"][0]["verdict"]["notes"]]')" \
	"[[\"MEMORY_FILE_PATH\", \"$BASE/envdata/memory.jsonl\", \"$BASE/envdata\"]]" "  --json: verdict.notes[] names the variable, the path and the grant"
out=$(moat_in "$eh/work" "$eh" mcp wrap --config "$eh/c.json" --server mem)
like_lines "$out" "wrapped mem
  note: its MEMORY_FILE_PATH names $BASE/envdata/memory\\.jsonl, outside every grant
  hint: grant it in the server's profile file\\.mem of $eh/\\.config/moat/servers\\.toml: write = \\[\"$BASE/envdata\\\"\\]" \
	"wrap: the same note, with the profile to grant it in ($out)"
out=$(client_run_in "$eh/work" "$eh" "$eh/c.json" mem)
ok "$([ ! -e "$BASE/envdata/memory.jsonl" ] && ! grep -q '^stored' <<<"$out" && echo 0 || echo 1)" \
	"  wrapped so, the server, started as its client starts it, cannot write it ($(head -c 200 <<<"$out"))"
moat_in "$eh/work" "$eh" mcp unwrap --config "$eh/c.json" >/dev/null
out=$(moat_in "$eh/work" "$eh" mcp wrap --config "$eh/c.json" --server mem --write "$BASE/envdata")
unlike "$out" "note:" "control: the hint followed (wrap --write DIR): no note ($out)"
is "$(client_run_in "$eh/work" "$eh" "$eh/c.json" mem)" stored "  and the wrapped server writes its file there"
unlike "$(moat_in "$eh/work" "$eh" mcp list --config "$eh/c.json")" "note: its MEMORY_FILE_PATH" "  list: no note"
moat_in "$eh/work" "$eh" mcp unwrap --config "$eh/c.json" >/dev/null
# wrap --write of a directory not made yet: moat run's hint offered
# --mkdir, which wrap does not take ("unknown option" when followed).
out=$(moat_in "$eh/work" "$eh" mcp wrap --config "$eh/c.json" --server later --write "$BASE/envdata-new")
like "$out" "hint: create it first: \`mkdir -p $BASE/envdata-new\`; or drop the grant" \
	"wrap --write DIR not made: the hint says mkdir ($out)"
unlike "$out" "--mkdir" "  and not --mkdir, which wrap does not take"
out=$(moat_in "$eh/work" "$eh" mcp wrap --config "$eh/c.json" --server later --mkdir)
like "$out" "unknown option '--mkdir'" "  (control: wrap refuses --mkdir)"

# --server NAME that no file has: list said "no servers" (or listed the
# other servers' files) and exited 0; wrap and unwrap named no server.
# Now each says none is called that, names those there are, and exits 125.
for verb in list wrap unwrap; do
	out=$(moat_in "$h/work" "$h" mcp $verb --config "$h/c0.json" --server nope)
	rc=$?
	is "$rc" 125 "$verb --server nope: exit 125"
	like_lines "$out" "moat: $h/c0.json: no server named nope
moat: hint: the servers there: fs, file" "  names the servers there ($out)"
done
out=$(moat_in "$h/work" "$h" mcp list --server nope)
is "$?" 125 "list --server nope without --config: exit 125"
like "$out" "no server named nope in the clients' files of $h and $h/work" "  says where it looked ($out)"
out=$(moat_in "$h/work" "$h" mcp list --config "$h/c0.json" --server fs)
is "$?" 0 "control: list --server fs: exit 0"
like "$out" "fs +:1" "  and lists it"
unlike "$out" "file +:1" "  alone"

done_testing
