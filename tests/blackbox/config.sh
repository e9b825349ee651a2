#!/usr/bin/env bash
# Black-box tests of issue 4, sections 2-5: `moat run --config FILE --server
# NAME`, `--config FILE --profile NAME -- CMD`, `moat config check` and
# `moat config show`, errors with file:line:col and exit 125, and every
# example of docs/config.md loaded and its effective policy checked.
#
# Runs as root, as an unprivileged user and with the sanitizer build
# ($MOAT); nothing here hard-codes the tree ($ROOT, $HELPER).
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
PY=/usr/bin/python3
DOC=$ROOT/docs/config.md
SCHEMA=$ROOT/docs/report.schema.json
VALIDATOR=$ROOT/tests/lib/validate_schema.py
mkdir -p "$SCRATCH/proj" "$SCRATCH/data" "$SCRATCH/outside" "$SCRATCH/bin"
echo granted >"$SCRATCH/data/file"
echo secret >"$SCRATCH/outside/file"
cd "$SCRATCH/proj"

# get FILE PYTHON-EXPR-ON-d: one value of a JSON document.
get() {
	"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(json.dumps(v) if isinstance(v,(dict,list)) else v)' "$1" "$2" 2>/dev/null
}

# --- a config with two servers, in darnit and Codex form
cat >"$SCRATCH/proj/servers.toml" <<EOF
[sandbox]
net = "none"

[mcp_servers.reader]
command = ["$HELPER", "read"]
install_hint = "build it: make helpers"
trusted_publisher = "moat tests"
optional = true
[mcp_servers.reader.sandbox]
read = ["../data"]

[mcp_servers.env]
command = "/usr/bin/env"
env = { GREETING = "hello \$MOAT_T_NAME", LITERAL = "\$\$HOME", EMPTY = "\$MOAT_T_UNSET" }
env_vars = ["MOAT_T_PASS"]

[mcp_servers.net]
command = "$HELPER"
args = ["tcp", "127.0.0.1", "9"]
sandbox = { net = "loopback" }
EOF

err=$("$MOAT" config check "$SCRATCH/proj/servers.toml" 2>&1); rc=$?
is "$rc" 0 "moat config check: a good file exits 0"
is "$err" "$SCRATCH/proj/servers.toml: ok (3 servers)" "  and says so on stderr, with the number of servers"
out=$("$MOAT" config check "$SCRATCH/proj/servers.toml" 2>/dev/null)
is "$out" "" "  stdout stays empty"

# A JSON config saved with a byte order mark (Notepad's "UTF-8"): read as
# without it, as a TOML one is; a syntax error's column is the editor's.
printf '\357\273\277{"mcpServers": {"a": {"command": "true"}}}\n' >"$SCRATCH/bom.json"
cp "$SCRATCH/bom.json" "$SCRATCH/bom-noext"
is "$("$MOAT" config check "$SCRATCH/bom.json" 2>&1)" "$SCRATCH/bom.json: ok (1 server)" \
	"a JSON config with a byte order mark is read (it was \"'[' or '{' expected\")"
is "$("$MOAT" config check "$SCRATCH/bom-noext" 2>&1)" "$SCRATCH/bom-noext: ok (1 server)" \
	"  and told from TOML without the .json name"
printf '\357\273\277{"mcpServers": {"a": {"command": "true",}}}\n' >"$SCRATCH/bom2.json"
like "$("$MOAT" config check "$SCRATCH/bom2.json" 2>&1)" "^moat: $SCRATCH/bom2.json:1:41: " \
	"  a syntax error after it: the column an editor shows (the mark is none)"

# --- moat run --server runs the server's command in the sandbox
out=$("$MOAT" run --config servers.toml --server reader -- "$SCRATCH/data/file" 2>&1); rc=$?
is "$rc:$out" "0:OK granted" "run --server: the server's command runs, extra args appended, its read rule granted"
out=$("$MOAT" run --config servers.toml --server reader -- "$SCRATCH/outside/file" 2>&1); rc=$?
is "$rc" 1 "  a file outside the server's rules cannot be read"
like "$out" "ERR E(ACCES|PERM|NOENT)" "  (the sandbox refused it: $out)"
out=$("$MOAT" run --config servers.toml --server reader --read "$SCRATCH/outside" -- "$SCRATCH/outside/file" 2>&1)
is "$out" "OK secret" "  flags given with the file apply on top of it (--read)"
out=$(cd / && "$MOAT" run --config "$SCRATCH/proj/servers.toml" --server reader -- "$SCRATCH/data/file" 2>&1)
is "$out" "OK granted" "  a relative path in the file is relative to the file, not to the cwd"

out=$(MOAT_T_NAME=world MOAT_T_PASS=passed "$MOAT" run --config servers.toml --server env 2>/dev/null | grep -E '^(GREETING|LITERAL|EMPTY|MOAT_T_PASS)=' | sort | tr '\n' ' ')
is "$out" 'EMPTY= GREETING=hello world LITERAL=$HOME MOAT_T_PASS=passed ' \
	"env: \$VAR from moat's environment (\"\" when unset), \$\$ literal, env_vars passed through"
out=$(MOAT_T_NAME=world "$MOAT" run --config servers.toml --server env 2>/dev/null | grep -c '^MOAT_T_NAME=')
is "$out" 0 "  a variable named in a value is not passed itself"

out=$("$MOAT" run --config servers.toml --server net 2>&1)
like "$out" "ERR ECONNREFUSED" "sandbox net = \"loopback\": a loopback connect reaches the (empty) loopback"
out=$("$MOAT" run --config servers.toml --server net --net none 2>&1)
like "$out" "ERR E(ACCES|PERM|AFNOSUPPORT)" "  --net none on the command line wins over the file ($out)"

# --- --config FILE --profile NAME -- CMD, with a user profile
cat >"$SCRATCH/proj/profiles.toml" <<EOF
[profiles.data-reader]
extends = "strict"
read = ["../data"]
EOF
out=$("$MOAT" run --config profiles.toml --profile data-reader -- "$HELPER" read "$SCRATCH/data/file" 2>&1)
is "$out" "OK granted" "--config FILE --profile NAME -- CMD: the user profile's rules apply"
out=$("$MOAT" run --config profiles.toml --profile data-reader --dry-run -- "$HELPER" exit 0 2>/dev/null | \
	"$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["policy"]["profile"])')
is "$out" "data-reader" "  and the report names it"
"$MOAT" run --config profiles.toml --profile data-reader 2>/dev/null; rc=$?
is "$rc" 125 "  without --server the command still needs \`--\`"

# --- moat config show: the effective policy in the shape of --dry-run
"$MOAT" config show servers.toml --server reader >"$SCRATCH/show.json" 2>"$SCRATCH/show.err"; rc=$?
ok $([ "$rc" = 0 ] || [ "$rc" = 125 ] && echo 0 || echo 1) "moat config show exits like --dry-run ($rc: $(head -c 200 "$SCRATCH/show.err"))"
is "$(get "$SCRATCH/show.json" 'd["schema"]')" "moat.report/1" "  it prints a report"
is "$(get "$SCRATCH/show.json" 'd["policy"]["argv"]')" "[\"$HELPER\", \"read\"]" "  with the server's command"
is "$(get "$SCRATCH/show.json" '[r["access"] for r in d["policy"]["paths"] if r["path"] == "'"$SCRATCH/data"'"]')" '["read"]' \
	"  and its read rule"
is "$(get "$SCRATCH/show.json" '[(r["origin"]["source"], r["origin"]["line"], r["origin"]["col"]) for r in d["policy"]["paths"] if r["path"].endswith("/data")]')" \
	'[["servers.toml", 10, 9]]' "  whose origin is file:line:col"
"$MOAT" run --config servers.toml --server reader --dry-run >"$SCRATCH/dry.json" 2>/dev/null
is "$(get "$SCRATCH/show.json" 'd["policy_digest"]')" "$(get "$SCRATCH/dry.json" 'd["policy_digest"]')" \
	"  the same policy as moat run --config --server --dry-run (digest)"
if [ -f "$SCHEMA" ] && [ -f "$VALIDATOR" ]; then
	out=$("$PY" "$VALIDATOR" "$SCHEMA" "$SCRATCH/show.json" 2>&1)
	ok $? "  and valid against docs/report.schema.json $out"
fi
"$MOAT" config show servers.toml >/dev/null 2>"$SCRATCH/err"; rc=$?
is "$rc" 125 "config show of a file with several servers needs --server"
like "$(cat "$SCRATCH/err")" "defines 3 servers; name one with --server NAME" "  and says so"
# The hints name the servers: "name one" once left the user to find them
# in the file, and `moat run --config FILE` without --server got only the
# hint for a command.
like "$(cat "$SCRATCH/err")" "hint: its servers: reader, env, net$" "  with a hint naming them"
out=$("$MOAT" run --config servers.toml 2>&1); rc=$?
is "$rc" 125 "moat run --config FILE with neither --server nor a command: refused"
like "$out" "hint: name a server of servers.toml with --server NAME \(moat config show servers.toml says which\)" \
	"  the hint names --server, and where the names are"
like "$("$MOAT" run --read /tmp 2>&1)" "hint: name it after the options: moat run \[OPTIONS\]" \
	"  control: without --config, the hint for a command alone"

# --- errors: exit 125 with file:line:col, key path, what was expected
bad() { # bad NAME TEXT REGEX [ARGS]: `moat config check` of TEXT must fail with REGEX
	local name=$1 text=$2 re=$3 f="$SCRATCH/proj/$1"
	printf '%s\n' "$text" >"$f"
	out=$("$MOAT" config check "$f" 2>&1 >/dev/null); rc=$?
	is "$rc" 125 "bad config $name: exit 125"
	like_lines "$out" "$re" "  $(printf '%s' "$re" | head -c 80)"
}
bad unknown.toml $'[mcp_servers.scorecard]\ncomand = ["x"]' \
	"^moat: $SCRATCH/proj/unknown.toml:2:1: mcp_servers.scorecard.comand: unknown key; expected one of command, .*
moat: hint: did you mean 'command'\\?"
bad type.toml $'[mcp_servers.s]\ncommand = "sh"\nsandbox = { read = "." }' \
	":3:20: mcp_servers.s.sandbox.read: expected an array of paths \\(strings\\), got a string
^moat: hint: read takes a list of paths, even of one: read = \\[\".\"\\]"
# A string where a list is expected got no hint of the list it should be;
# now the one value is written as that list, in the file's own syntax.
bad type-profile.toml $'[profiles.p]\nextends = "mcp"\nwrite = "/srv/a\\"b"' \
	":3:9: profiles.p.write: expected an array of paths \\(strings\\), got a string
^moat: hint: write takes a list of paths, even of one: write = \\[\"/srv/a\\\\\"b\"\\]"
# A server's args as one string: the hint is the list it should be, split
# at spaces when a shell would split it so, else the one value as a list.
bad args-one.toml $'[mcp_servers.s]\ncommand = "ls"\nargs = "-l"' \
	":3:8: mcp_servers.s.args: expected an array of strings, got a string
^moat: hint: args takes a list of strings, even of one: args = \\[\"-l\"\\]"
bad args-words.toml $'[mcp_servers.s]\ncommand = "ls"\nargs = "-l  --all"' \
	"^moat: hint: args takes a list of strings, one for each argument: args = \\[\"-l\", \"--all\"\\]"
bad args-quoted.toml $'[mcp_servers.s]\ncommand = "ls"\nargs = "-l \'x y\'"' \
	"^moat: hint: args takes a list of strings, even of one: args = \\[\"-l 'x y'\"\\]"
bad args-empty.toml $'[mcp_servers.s]\ncommand = "ls"\nargs = ""' \
	"^moat: hint: args takes a list of strings; none: args = \\[\\]"
bad args.json '{"mcpServers": {"s": {"command": "ls", "args": "-l -a"}}}' \
	"^moat: hint: \"args\" takes a list of strings, one for each argument: \"args\": \\[\"-l\", \"-a\"\\]"
bad type.json '{"mcpServers": {"s": {"command": "sh", "sandbox": {"deny": "./.env"}}}}' \
	":1:60: mcpServers.s.sandbox.deny: expected an array of paths \\(strings\\), got a string
^moat: hint: \"deny\" takes a list of paths, even of one: \"deny\": \\[\"./.env\"\\]"
# One of moat's sandbox keys at the top of a file, above every table: taken
# for a client's key, it was ignored without a word (`deny` and `net =
# "none"` dropped, `config check` "ok").  An error, with where it goes.
bad top-read.toml $'read = ["."]\ndeny = ["./.env"]\n[mcp_servers.s]\ncommand = "sh"' \
	"top-read.toml:1:1: read: a key of moat's sandbox table, at the top of the file, where moat reads no policy: it would be ignored
^moat: hint: move it under \\[sandbox\\] \\(every server and command of the file\\), a server's sandbox, or a \\[profiles.NAME\\]
top-read.toml:2:1: deny: a key of moat's sandbox table"
bad top-net.json '{"net": "none", "mcpServers": {"s": {"command": "sh"}}}' \
	"top-net.json:1:2: net: a key of moat's sandbox table, at the top of the file
^moat: hint: move it into \"sandbox\": \\{...\\} \\(every server of the file\\) or a server's \"sandbox\""
printf '%s\n' 'profile = "work"' '[sandbox]' 'read = ["."]' '[profiles.p]' 'extends = "mcp"' 'write = ["."]' \
	'[mcp_servers.s]' 'command = "sh"' >"$SCRATCH/proj/top-ok.toml"
out=$("$MOAT" config check "$SCRATCH/proj/top-ok.toml" 2>&1); rc=$?
is "$rc" 0 "control: read in [sandbox] and a profile as lists, Codex's top-level profile: accepted ($out)"
bad net.toml $'[mcp_servers.scorecard]\ncommand = "sh"\n[mcp_servers.scorecard.sandbox]\nnet = "internet"' \
	":4:7: mcp_servers.scorecard.sandbox.net: expected \"none\", \"loopback\", \"all\" or \"allow\", got \"internet\""
bad dup.toml $'[mcp_servers.s]\ncommand = "sh"\n[mcpServers.s]\ncommand = "sh"' \
	":3:13: mcpServers.s: server \"s\" is defined twice \\(first at 1:14 as mcp_servers.s\\)"
bad dup.json '{"mcpServers": {"s": {"command": "sh"}, "s": {"command": "sh"}}}' \
	"dup.json:1:43: duplicate object key"
bad wd.toml $'[mcp_servers.s]\ncommand = "sh"\nsandbox = { write = ["."], deny = ["."] }' \
	":3:22: mcp_servers.s.sandbox.write: $SCRATCH/proj is both writable and denied \\(at .*wd.toml:3:36\\)"
bad missing.toml $'[mcp_servers.s]\ncommand = "sh"\nsandbox = { read = ["./not-there"] }' \
	":3:21: mcp_servers.s.sandbox.read: $SCRATCH/proj/not-there does not exist; expected an existing path \\(mode require\\)"
bad var.toml $'[mcp_servers.s]\ncommand = "sh"\nenv = { T = "${TOKEN" }' \
	":3:13: mcp_servers.s.env.T: bad variable reference \"\\$\\{TOKEN\"; expected \\\$NAME"
bad hook.toml $'[mcp_servers.s]\ncommand = "sh"\nenv_vars = ["LD_PRELOAD"]' \
	":3:13: mcp_servers.s.env_vars: refusing to pass the loader or interpreter hook LD_PRELOAD through"
bad hook-env.toml $'[mcp_servers.s]\ncommand = "sh"\nenv = { LD_PRELOAD = "./x.so" }' \
	":3:9: mcp_servers.s.env.LD_PRELOAD: refusing the loader or interpreter hook LD_PRELOAD from a config file
moat: hint: .*--env LD_PRELOAD=VALUE"
bad hook-env.json $'{"mcpServers": {"s": {"command": "sh",\n "env": {"NODE_OPTIONS": "--require ./x.js"}}}}' \
	"hook-env.json:2:10: mcpServers.s.env.NODE_OPTIONS: refusing the loader or interpreter hook NODE_OPTIONS from a config file"
# npm copies npm_config_node_options (any case: npm reads it so) into
# NODE_OPTIONS for what npx and npm exec start, and git runs what
# GIT_CONFIG_KEY_n/VALUE_n set (core.fsmonitor): the same hooks, by
# another name, refused alike.
bad hook-npm.json $'{"mcpServers": {"s": {"command": "npx",\n "env": {"npm_config_node_options": "--require ./x.js", "NPM_CONFIG_NODE_OPTIONS": "--require ./x.js"}}}}' \
	"hook-npm.json:2:10: mcpServers.s.env.npm_config_node_options: refusing the loader or interpreter hook npm_config_node_options from a config file
moat: hint: .*--env npm_config_node_options=VALUE
hook-npm.json:2:57: mcpServers.s.env.NPM_CONFIG_NODE_OPTIONS: refusing the loader or interpreter hook NPM_CONFIG_NODE_OPTIONS"
bad hook-git.toml $'[mcp_servers.s]\ncommand = "uvx"\nenv = { GIT_CONFIG_COUNT = "1", GIT_CONFIG_KEY_0 = "core.fsmonitor", GIT_SSH_COMMAND = "./x" }\nenv_vars = ["GIT_CONFIG_VALUE_0"]' \
	":3:9: mcp_servers.s.env.GIT_CONFIG_COUNT: refusing the loader or interpreter hook GIT_CONFIG_COUNT
:3:33: mcp_servers.s.env.GIT_CONFIG_KEY_0: refusing
:3:70: mcp_servers.s.env.GIT_SSH_COMMAND: refusing
:4:13: mcp_servers.s.env_vars: refusing to pass the loader or interpreter hook GIT_CONFIG_VALUE_0 through"
out=$("$MOAT" run --config hook-npm.json --server s --dry-run 2>&1 >/dev/null); rc=$?
is "$rc" 125 "moat run of a server with npm_config_node_options in env: exit 125"
like "$out" "hook-npm.json:2:10: mcpServers.s.env.npm_config_node_options: refusing" "  at its file:line:col"
# Control: npm's and git's other settings are a config's to set.
printf '%s\n' '{"mcpServers": {"s": {"command": "npx", "env": {"npm_config_registry": "https://r.example", "GIT_AUTHOR_NAME": "a"}}}}' >npm-ok.json
err=$("$MOAT" config check npm-ok.json 2>&1); rc=$?
is "$rc" 0 "control: npm_config_registry and GIT_AUTHOR_NAME in env are accepted ($err)"
bad cycle.toml $'[profiles.a]\nextends = "b"\n[profiles.b]\nextends = "a"' \
	":4:11: profiles.b.extends: profiles extend each other in a cycle \\(b -> a -> b\\)"
# A chain of 2,000 profiles took config check 31 s (every profile's chain
# walked, each step a lookup by name): refused past 32, at once.
chain() { # chain N: profiles p0..pN-1, each extending the one before
	printf '[profiles.p0]\nextends = "strict"\n'
	for ((k = 1; k < $1; k++)); do printf '[profiles.p%d]\nextends = "p%d"\n' "$k" $((k - 1)); done
}
chain 2000 >"$SCRATCH/proj/deep.toml"
out=$(timeout 10 "$MOAT" config check "$SCRATCH/proj/deep.toml" 2>&1); rc=$?
is "$rc" 125 "a chain of 2,000 extends: refused within 10 s"
like "$out" "deep.toml:66:11: profiles.p32.extends: profile \"p32\": its chain of extends holds more than 32 profiles" "  at the first profile past 32"
{ chain 32 && printf '[sandbox]\nprofile = "p31"\n'; } >"$SCRATCH/proj/deep32.toml"
out=$("$MOAT" config check "$SCRATCH/proj/deep32.toml" 2>&1); rc=$?
is "$rc" 0 "control: a chain of 32 profiles is accepted ($out)"
bad sockets.toml $'[mcp_servers.s]\ncommand = "sh"\nsandbox = { unix_sockets = "yes" }' \
	":3:28: mcp_servers.s.sandbox.unix_sockets: expected true or false \\(a bool\\), got a string"
bad unprotect.toml $'[mcp_servers.s]\ncommand = "sh"\nsandbox = { unprotect = ".vscode" }' \
	":3:25: mcp_servers.s.sandbox.unprotect: expected an array of paths \\(strings\\), got a string"
# A CPU limit above a billion seconds, as a timeout is: moat counts the
# tree's CPU time in microseconds in 64 bits, and a larger one overflowed
# that count (a sanitizer abort; the release build killed the command at
# once, "used 0.00 s").  Refused where it is given, the flag and the key.
bad cpu-huge.toml $'[sandbox]\ncpu = 9223372036854775807\n[mcp_servers.s]\ncommand = "sh"' \
	":2:7: sandbox.cpu: 9223372036854775807: more than 1000000000 seconds \\(31 years\\) of CPU time
moat: hint: give at most 1000000000"
out=$("$MOAT" run --cpu 9300000000000 -- /bin/true 2>&1); rc=$?
is "$rc" 125 "--cpu 9300000000000: refused (exit 125), not a command killed at once"
like "$out" "^moat: --cpu 9300000000000: more than 1000000000 seconds" "  naming the flag and its value"
# (prefer: as uid 65534 this host may have no cgroup to count CPU time in)
out=$("$MOAT" run --mode prefer --cpu 1000000000 -- /bin/echo ran 2>/dev/null); rc=$?
is "$rc:$out" "0:ran" "control: --cpu 1000000000 runs the command"
# --pids above the kernel's PID_MAX_LIMIT failed only at run time, with a
# hint about cgroups (pids.max refuses it): refused where given.
bad pids-huge.toml $'[sandbox]\npids = 5000000\n[mcp_servers.s]\ncommand = "sh"' \
	":2:8: sandbox.pids: 5000000: more than 4194304, the most processes and threads the kernel has"
# 16 MB of [1,1,1,...] made a tree of 1.4 GB (JSON) or 0.95 GB (TOML);
# a cloned repository's .mcp.json is read by `moat mcp list`.  At most a
# million values, refused before the tree grows.
/usr/bin/python3 -c 'import sys
open(sys.argv[1] + "/many.json", "w").write("{\"mcpServers\": {\"s\": {\"command\": \"sh\"}}, \"x\": [" + "1," * 1100000 + "1]}")
open(sys.argv[1] + "/many.toml", "w").write("x = [" + "1," * 1100000 + "]\n")
open(sys.argv[1] + "/enough.json", "w").write("{\"mcpServers\": {\"s\": {\"command\": \"sh\"}}, \"x\": [" + "1," * 900000 + "1]}")' "$SCRATCH/proj"
for f in many.json many.toml; do
	out=$(timeout 20 "$MOAT" config check "$SCRATCH/proj/$f" 2>&1); rc=$?
	is "$rc" 125 "$f (1.1 million values): refused"
	like "$out" "more than 1000000 values: the most moat reads in one file" "  and says why"
done
out=$(timeout 20 "$MOAT" config check "$SCRATCH/proj/enough.json" 2>&1); rc=$?
is "$rc" 0 "control: 900,000 values are read ($(echo "$out" | head -c 100))"
rm -f "$SCRATCH/proj/many.json" "$SCRATCH/proj/many.toml" "$SCRATCH/proj/enough.json"
# Within those values, 500000 servers: the loader compared each name with
# those before it, and `moat mcp list` plans each one for its verdict, in a
# cloned repository's .mcp.json too (100000 took 49 s to load, and list 3
# minutes).  At most 1000 servers and 4096 profiles in a file.
/usr/bin/python3 -c 'import json, sys
d = sys.argv[1]
json.dump({"mcpServers": {"s%d" % i: {"command": "sh"} for i in range(300000)}}, open(d + "/servers.json", "w"))
json.dump({"mcpServers": {"s%d" % i: {"command": "sh"} for i in range(1000)}}, open(d + "/servers1000.json", "w"))
open(d + "/profiles.toml", "w").write("".join("[profiles.p%d]\nextends = \"mcp\"\n" % i for i in range(40000)))
open(d + "/profiles4096.toml", "w").write("".join("[profiles.p%d]\nextends = \"mcp\"\n" % i for i in range(4096)))' "$SCRATCH/proj"
out=$(timeout 20 "$MOAT" config check "$SCRATCH/proj/servers.json" 2>&1); rc=$?
is "$rc" 125 "300000 servers in a file: refused (within 20 s)"
like "$out" "servers.json:1:[0-9]+: mcpServers.s1000: more than 1000 servers: the most moat reads in one file" "  naming the first one past the bound"
out=$(timeout 20 "$MOAT" config check "$SCRATCH/proj/profiles.toml" 2>&1); rc=$?
is "$rc" 125 "40000 profiles in a file: refused (within 20 s)"
like "$out" "profiles.toml:8193:[0-9]+: profiles.p4096: more than 4096 profiles: the most moat reads in one file" "  naming the first one past the bound"
mkdir -p "$SCRATCH/bigproj" && mv "$SCRATCH/proj/servers.json" "$SCRATCH/bigproj/.mcp.json"
out=$(cd "$SCRATCH/bigproj" && HOME="$SCRATCH/bigproj" timeout 20 "$MOAT" mcp list 2>&1); rc=$?
is "$rc" 125 "  moat mcp list in a project whose .mcp.json holds them: the file is not read (exit 125, within 20 s)"
like "$out" "cannot read it: .*/.mcp.json:1:[0-9]+: mcpServers.s1000: more than 1000 servers" "  and says why"
out=$(timeout 60 "$MOAT" config check "$SCRATCH/proj/servers1000.json" 2>&1); rc=$?
is "$rc:$out" "0:$SCRATCH/proj/servers1000.json: ok (1000 servers)" "control: 1000 servers are read"
out=$(timeout 60 "$MOAT" config check "$SCRATCH/proj/profiles4096.toml" 2>&1); rc=$?
is "$rc:$out" "0:$SCRATCH/proj/profiles4096.toml: ok (0 servers)" "control: 4096 profiles are read"
rm -rf "$SCRATCH/bigproj" "$SCRATCH/proj/servers1000.json" "$SCRATCH/proj/profiles.toml" "$SCRATCH/proj/profiles4096.toml"
# json.dumps writes a float 64.0: said as such, not "got a number".
bad pids-float.json '{"mcpServers": {"s": {"command": "sh", "sandbox": {"pids": 64.0}}}}' \
	"mcpServers.s.sandbox.pids: expected a positive whole number, got 64.0, a number written with a point; write 64"
out=$("$MOAT" run --pids 4194305 -- /bin/true 2>&1); rc=$?
is "$rc" 125 "--pids 4194305: refused (exit 125) before anything runs"
like "$out" "^moat: --pids 4194305: more than 4194304" "  naming the flag and its value"
out=$("$MOAT" run --pids 4194304 --dry-run -- /bin/true 2>&1 >/dev/null); rc=$?
is "$rc" 0 "control: --pids 4194304 is accepted ($out)"
# A deny ending in blanks (a newline from a generated file, a space)
# named nothing and said nothing, while the path the user meant stayed
# readable: a note now.
mkdir -p "$SCRATCH/proj/d/sub"
printf '[sandbox]\ndeny = ["d/sub\\n"]\n' >"$SCRATCH/proj/deny-nl.toml"
out=$(cd "$SCRATCH/proj" && "$MOAT" run --config deny-nl.toml --dry-run -- /bin/true 2>&1 >/dev/null)
like "$out" "note: the deny of \"$SCRATCH/proj/d/sub\\\\x0a\" names nothing: it ends in blanks .*; $SCRATCH/proj/d/sub, without them, exists and is not denied" \
	"a deny ending in a newline: a note names the path meant"
out=$(cd "$SCRATCH/proj" && "$MOAT" run --deny d/sub --dry-run -- /bin/true 2>&1 >/dev/null)
unlike "$out" "names nothing" "  control: a deny of d/sub itself gets no note"
bad syntax.toml $'[mcp_servers.s]\ncommand = ["sh"' "syntax.toml:3:1: expected ',' or ']' after an array element"
# A key of moat's in other letter case is a typo of it, as one within two
# edits is: ignored, a "SANDBOX" would drop its sandbox without a word.
bad case-top.json '{"SANDBOX": {"net": "none", "deny": ["/etc/hostname"]}, "mcpServers": {"a": {"command": "true"}}}' \
	"^moat: $SCRATCH/proj/case-top.json:1:2: SANDBOX: unknown key; expected one of mcp_servers, mcpServers, servers, sandbox, profiles
moat: hint: did you mean 'sandbox'\\? \\(keys are case-sensitive\\)"
bad case-profiles.json '{"PROFILES": {"p": {"extends": "mcp"}}, "mcpServers": {"a": {"command": "true"}}}' \
	":1:2: PROFILES: unknown key; .*
moat: hint: did you mean 'profiles'\\?"
bad case-server.json '{"mcpServers": {"a": {"command": "true", "SANDBOX": {"net": "none"}}}}' \
	":1:42: mcpServers.a.SANDBOX: unknown key; expected one of command, .*
moat: hint: did you mean 'sandbox'\\?"
bad case-top.toml $'[SANDBOX]\ndeny = ["/etc/hostname"]\n[mcp_servers.a]\ncommand = ["true"]' \
	"case-top.toml:1:2: SANDBOX: unknown key; .*
moat: hint: did you mean 'sandbox'\\? \\(keys are case-sensitive\\)"
"$MOAT" run --config case-top.toml --server a --dry-run >/dev/null 2>"$SCRATCH/err"; rc=$?
is "$rc" 125 "moat run of [SANDBOX]: exit 125, where it ran without the sandbox's deny"
like "$(cat "$SCRATCH/err")" "case-top.toml:1:2: SANDBOX: unknown key" "  naming the file, line and column"
# A key of moat's with a character no editor shows (a zero-width space, a
# byte order mark, a word joiner, a NUL) reads as moat's key: it was taken
# for a client's, and the whole sandbox table dropped, with config check
# saying ok (red-team 3, finding 4).  An error at every level, the key
# written with \uXXXX, and a hint at the key it reads as.
bad zwsp-top.toml $'["sandbox\\u200b"]\ndeny = ["/etc/hostname"]\n[mcp_servers.a]\ncommand = ["true"]' \
	"^moat: $SCRATCH/proj/zwsp-top.toml:1:2: \"sandbox\\\\u200b\": unknown key holding a character no editor shows
moat: hint: did you mean 'sandbox'\\? remove the invisible characters"
bad zwsp-server.toml $'[mcp_servers.a]\ncommand = ["true"]\n[mcp_servers.a."sandbox\\u2060"]\ndeny = ["/etc/hostname"]' \
	":3:16: mcp_servers.a.\"sandbox\\\\u2060\": unknown key holding a character no editor shows
moat: hint: did you mean 'sandbox'\\?"
bad nul-top.toml $'["sandbox\\u0000"]\ndeny = ["/etc/hostname"]\n[mcp_servers.a]\ncommand = ["true"]' \
	":1:2: \"sandbox\\\\u0000\": unknown key holding a character no editor shows
moat: hint: did you mean 'sandbox'\\?"
bad bom-server.json '{"mcpServers": {"a": {"command": "true", "\ufeffsandbox": {"deny": ["/etc/hostname"]}}}}' \
	":1:42: mcpServers.a.\"\\\\ufeffsandbox\": unknown key holding a character no editor shows
moat: hint: did you mean 'sandbox'\\?"
bad zwsp-inner.toml $'[sandbox]\n"deny\\u200b" = ["/etc/hostname"]\n[mcp_servers.a]\ncommand = ["true"]' \
	":2:1: sandbox.\"deny\\\\u200b\": unknown key holding a character no editor shows
moat: hint: did you mean 'deny'\\?"
# Any key holding one, near moat's or not: no client's key does.
bad zwsp-other.json '{"mcpServers": {"a": {"command": "true", "x\u200by": 1}}}' \
	":1:42: mcpServers.a.\"x\\\\u200by\": unknown key holding a character no editor shows
moat: hint: retype the key"
# Control: the same files, moat's keys spelt as moat spells them.
printf '%s\n' $'[sandbox]\ndeny = ["/etc/hostname"]\n[mcp_servers.a]\ncommand = ["true"]' >case-ok.toml
printf '%s\n' '{"sandbox": {"net": "none"}, "profiles": {"p": {"extends": "mcp"}}, "mcpServers": {"a": {"command": "true", "sandbox": {"net": "none"}}}}' >case-ok.json
out=$("$MOAT" config check case-ok.toml 2>&1 && "$MOAT" config check case-ok.json 2>&1); rc=$?
is "$rc" 0 "control: [sandbox], sandbox and profiles as moat spells them pass config check ($out)"
"$MOAT" run --config case-ok.toml --server a --dry-run >"$SCRATCH/dry.json" 2>/dev/null
like "$(cat "$SCRATCH/dry.json")" '/etc/hostname' "  and moat run takes the sandbox's deny"
bad syntax.json '{"mcpServers": {"s": {"command": "sh",}}}' "syntax.json:1:39: "

# --- a path form moat does not expand (only ~ and ~/ are): refused at its
# file:line:col.  Taken literally, under the file's directory, a deny of
# "$VAR/x" or "~user/x" named nothing: the run went on, the directory the
# user meant readable, and the report said enforced.
bad unexpanded.toml $'[sandbox]\nread = ["."]\ndeny = ["$HOME/.npmrc", "~root/.cargo", "${HOME}/x", "/srv/$USER/d"]\n[mcp_servers.s]\ncommand = "sh"' \
	"unexpanded.toml:3:9: sandbox.deny: \"\\\$HOME/.npmrc\": \\\$HOME is not expanded in a path
moat: hint: only ~ and ~/ are expanded \\(to HOME\\): write the absolute path
unexpanded.toml:3:25: sandbox.deny: \"~root/.cargo\": ~root is not expanded in a path
moat: hint: .*\\./~NAME
unexpanded.toml:3:41: sandbox.deny: \"\\\$\\{HOME\\}/x\": \\\$\\{HOME\\} is not expanded
unexpanded.toml:3:54: sandbox.deny: \"/srv/\\\$USER/d\": \\\$USER is not expanded
unexpanded.toml: 4 problems"
bad unexpanded.json $'{"mcpServers": {"s": {"command": "sh", "cwd": "%USERPROFILE%/w",\n "sandbox": {"write": ["${workspaceFolder}"], "unprotect": ["~+/x"]}}}}' \
	"unexpanded.json:1:47: mcpServers.s.cwd: \"%USERPROFILE%/w\": %USERPROFILE% is not expanded
unexpanded.json:2:24: mcpServers.s.sandbox.write: \"\\\$\\{workspaceFolder\\}\": .* is not expanded
unexpanded.json:2:61: mcpServers.s.sandbox.unprotect: \"~\\+/x\": ~\\+ is not expanded"
# The run: the deny meant $MOAT_T_OUT/file, a file the read grant shows.
cat >"$SCRATCH/proj/var-deny.toml" <<EOF
[sandbox]
read = ["$SCRATCH/outside"]
deny = ["\$MOAT_T_OUT/file"]
EOF
out=$(MOAT_T_OUT="$SCRATCH/outside" "$MOAT" run --config var-deny.toml -- "$HELPER" read "$SCRATCH/outside/file" 2>&1); rc=$?
is "$rc" 125 "moat run with deny = [\"\$MOAT_T_OUT/file\"]: exit 125 (it ran and read the file the deny meant)"
like_lines "$out" "^moat: var-deny.toml:3:9: sandbox.deny: \"\\\$MOAT_T_OUT/file\": \\\$MOAT_T_OUT is not expanded in a path
moat: hint: only ~ and ~/ are expanded" "  naming the file, line and column, the path and what is not expanded"
unlike "$out" "OK secret" "  and the file is not read"
# The same on the command line: a shell expands $VAR before moat sees it,
# but not in single quotes, nor a client that starts moat with JSON args.
out=$("$MOAT" run --read "$SCRATCH/outside" --deny '$MOAT_T_OUT/file' -- "$HELPER" read "$SCRATCH/outside/file" 2>&1); rc=$?
is "$rc:$(printf '%s' "$out" | head -n 1)" "125:moat: --deny \$MOAT_T_OUT/file: \$MOAT_T_OUT is not expanded in a path" \
	"--deny '\$VAR/x' on the command line: refused, as in a file"
"$MOAT" run --read '~nobody' --dry-run -- true >/dev/null 2>&1; rc=$?
is "$rc" 125 "--read '~nobody': refused"
# Control: a $ or % inside a name is the name's (a file may hold one), and
# ~ and ~/ still expand.
mkdir -p "$SCRATCH/proj/lit"
echo dollar >"$SCRATCH/proj/lit/a\$b"
echo pct >"$SCRATCH/proj/lit/50%"
# (~/ in a deny: HOME need not exist, as for uid 65534's /nonexistent.)
printf '[sandbox]\nread = ["./lit"]\ndeny = ["./lit/a$b", "./lit/50%%", "~/.moat-literal-test"]\n' >literal.toml
err=$("$MOAT" config check literal.toml 2>&1); rc=$?
is "$rc" 0 "control: a\$b, 50% and ~/ in paths are accepted ($err)"
out=$("$MOAT" run --config literal.toml -- "$HELPER" read "$SCRATCH/proj/lit/a\$b" 2>&1)
like "$out" "ERR E(ACCES|PERM|NOENT)" "  and the deny of the literal a\$b holds ($out)"

# --- unprotect and unix_sockets reach the policy: a lifted protected entry
# is writable, and the command may make unix sockets (ipc.unix then not
# requested); an unprotect naming nothing protected is refused at start.
mkdir -p "$SCRATCH/proj/w/.vscode"
cat >"$SCRATCH/proj/lift.toml" <<EOF
[mcp_servers.editor]
command = ["/bin/sh", "-c", "echo lifted > w/.vscode/settings.json; echo kept > w/.mcp.json"]
sandbox = { profile = "strict", write = ["./w"], unprotect = ["./w/.vscode"], unix_sockets = true }
[mcp_servers.typo]
command = "/bin/true"
sandbox = { profile = "strict", write = ["./w"], unprotect = ["./w/.vscodee"] }
EOF
"$MOAT" run --config lift.toml --server editor --report "$REPORTS/lift.json" >/dev/null 2>&1
is "$(cat "$SCRATCH/proj/w/.vscode/settings.json" 2>/dev/null)/$([ -e "$SCRATCH/proj/w/.mcp.json" ] && echo exists)" "lifted/" \
	"config unprotect: the lifted entry is written, the others stay protected"
is "$(get "$REPORTS/lift.json" 'd["properties"]["ipc.unix"]["status"]')" "not-requested" "config unix_sockets: ipc.unix is not requested"
"$MOAT" run --config lift.toml --server typo >/dev/null 2>"$SCRATCH/err"; rc=$?
is "$rc" 125 "config unprotect of a path that is no protected entry: exit 125"
like "$(cat "$SCRATCH/err")" "lift.toml:6:[0-9]+: unprotect .*/w/.vscodee: not a protected entry" "  naming the file, line and column"

out=$("$MOAT" run --config servers.toml --server nope 2>&1); rc=$?
is "$rc" 125 "run --server with a name the file does not define: exit 125"
like_lines "$out" "no server named \"nope\".*
moat: hint: known servers: reader, env, net" "  the hint lists the known servers"
out=$("$MOAT" run --config unknown.toml --server scorecard 2>&1); rc=$?
is "$rc" 125 "run with a bad config: exit 125"
like "$out" "unknown.toml:2:1: " "  with file:line:col"
out=$("$MOAT" run --config "$SCRATCH/no-such.toml" --server x 2>&1); rc=$?
is "$rc" 125 "a config file that does not exist: exit 125"
is "$out" "moat: $SCRATCH/no-such.toml: No such file or directory
moat: hint: check the name: there is no file there" "  naming it, with a hint (there was none)"
out=$("$MOAT" config check no-such.toml 2>&1)
is "$out" "moat: no-such.toml: No such file or directory
moat: hint: check the name: there is no file there (a relative name is taken from the current directory)" \
	"  moat config check of a relative name: the hint says where it was looked for"
"$MOAT" run --server reader 2>/dev/null; rc=$?
is "$rc" 125 "--server without --config: exit 125"
printf '[mcp_servers.gone]\ncommand = "no-such-server-moat"\ninstall_hint = "pip install gone"\n' >gone.toml
out=$("$MOAT" run --config gone.toml --server gone 2>&1); rc=$?
is "$rc" 127 "a server whose command is not installed: 127, as for any command"
like_lines "$out" "gone.toml:2:11: mcp_servers.gone.command: .*
moat: hint: pip install gone" "  its install_hint is the hint"
"$MOAT" config check gone.toml 2>/dev/null; rc=$?
is "$rc" 0 "  config check does not need the command installed"

# --- every example of docs/config.md: loaded, and its policy checked
# Stub programs for the examples' commands, first in PATH, so that the
# examples resolve the same way on every host.
for p in scorecard-mcp npx uvx python3; do
	printf '#!/bin/sh\nexit 0\n' >"$SCRATCH/bin/$p"
	chmod 0755 "$SCRATCH/bin/$p"
done
mkdir -p "$SCRATCH/examples"
"$PY" - "$DOC" "$SCRATCH/examples" <<'EOF'
import re, sys
doc, out = sys.argv[1], sys.argv[2]
text = open(doc).read()
for m in re.finditer(r'<!-- example: ([A-Za-z0-9_-]+) -->\n```(\w+)\n(.*?)```', text, re.S):
    name, lang, body = m.groups()
    open(f"{out}/{name}.{lang}", "w").write(body)

EOF
examples=$(cd "$SCRATCH/examples" && ls)
markers=$(grep -c '^<!-- example: ' "$DOC")
is "$(echo "$examples" | grep -c .)" "$markers" "every example marker of docs/config.md is followed by a fenced block ($markers)"

# NAME SERVER ARGV0 NET PATH ACCESS: what each example's policy must hold
# (PATH relative to the example's directory, or absolute).
expect() {
	case $1 in
	darnit) echo "scorecard scorecard-mcp all . read" ;;
	codex) echo "files npx none . write" ;;
	claude) echo "fetch uvx none /usr read" ;;
	shorthand) echo "git uvx none /usr read" ;;
	sandbox-table) echo "scanner python3 loopback .env deny" ;;
	limits) echo "indexer python3 none . read" ;;
	defaults) echo "web npx all secrets deny" ;;
	profiles) echo "formatter npx none . write" ;;
	vscode) echo "memory npx none .. write" ;;
	*) echo "" ;;
	esac
}
for f in $examples; do
	name=${f%.*}
	set -- $(expect "$name")
	if [ $# -ne 5 ]; then
		ok 1 "example $name: the test knows what its policy must hold"
		continue
	fi
	server=$1 argv0=$2 net=$3 path=$4 access=$5
	case $path in /*) ;; *) path=$(cd "$SCRATCH/examples" && realpath -ms "$path") ;; esac
	err=$(PATH="$SCRATCH/bin:$PATH" "$MOAT" config check "$SCRATCH/examples/$f" 2>&1); rc=$?
	is "$rc" 0 "example $name: moat config check accepts it ($err)"
	PATH="$SCRATCH/bin:$PATH" "$MOAT" config show "$SCRATCH/examples/$f" --server "$server" >"$SCRATCH/ex.json" 2>"$SCRATCH/ex.err"
	rc=$?
	ok $([ "$rc" = 0 ] || [ "$rc" = 125 ] && echo 0 || echo 1) "  config show --server $server ($rc $(head -c 200 "$SCRATCH/ex.err"))"
	is "$(get "$SCRATCH/ex.json" 'd["policy"]["argv"][0]')" "$argv0" "  command: $argv0"
	is "$(get "$SCRATCH/ex.json" 'd["policy"]["net"]')" "$net" "  net: $net"
	is "$(get "$SCRATCH/ex.json" '"'$access'" in [r["access"] for r in d["policy"]["paths"] if r["path"] == "'"$path"'"]')" True \
		"  path rule: $path $access"
done

# A config file's grant inside a deny given on the command line: flags go on
# top of the file and win, so the file (a project's own, maybe) does not
# open a hole in the caller's deny; the same grant as a flag is the user's.
mkdir -p "$SCRATCH/cl/secrets/sub"
echo deep-secret >"$SCRATCH/cl/secrets/sub/k"
printf '[sandbox]\nread = ["secrets/sub"]\n' >"$SCRATCH/cl/c.toml"
out=$(cd "$SCRATCH/cl" && "$MOAT" run --config c.toml --read . --deny ./secrets -- "$HELPER" read "$SCRATCH/cl/secrets/sub/k" 2>&1)
rc=$?
is "$rc" 125 "a config's grant inside a flag's deny: refused (exit 125)"
unlike "$out" "deep-secret" "  the file is not read"
like "$out" "c\.toml:2:[0-9]+: --read .*/cl/secrets/sub lies inside .*/cl/secrets, denied on the command line" \
	"  the error names the file's line and both paths"
out=$(cd "$SCRATCH/cl" && "$MOAT" run --config c.toml --read . --deny ./secrets --read ./secrets/sub -- "$HELPER" read "$SCRATCH/cl/secrets/sub/k" 2>&1)
like "$out" "deep-secret" "  control: the same grant given as a flag too: the user's more specific rule wins"
# A config another user could change sets the sandbox for them: one every
# user may write, or one another user owns (not root), is refused, as git
# refuses a repository another user owns (red-team D4).
printf '[sandbox]\nread = ["."]\n' >"$SCRATCH/cl/ww.toml"
chmod 0666 "$SCRATCH/cl/ww.toml"
out=$("$MOAT" config check "$SCRATCH/cl/ww.toml" 2>&1); rc=$?
is "$rc" 125 "a config every user may write: refused"
like "$out" "ww\.toml is writable by every user: any of them could change the sandbox it sets" "  saying why"
like "$out" "hint: chmod o-w " "  and how to fix it"
out=$("$MOAT" run --config "$SCRATCH/cl/ww.toml" -- /bin/true 2>&1); rc=$?
is "$rc" 125 "  moat run --config refuses it too"
chmod 0644 "$SCRATCH/cl/ww.toml"
"$MOAT" config check "$SCRATCH/cl/ww.toml" >/dev/null 2>&1
is "$?" 0 "  control: mode 0644, it is accepted"
if [ "$(id -u)" = 0 ]; then
	chown 65534:65534 "$SCRATCH/cl/ww.toml"
	out=$("$MOAT" config check "$SCRATCH/cl/ww.toml" 2>&1); rc=$?
	is "$rc" 125 "a config another user owns: refused"
	like "$out" "ww\.toml belongs to uid 65534, neither you \(uid 0\) nor root" "  saying whose it is"
	chown 0:0 "$SCRATCH/cl/ww.toml"
else
	skip "a config another user owns: only root can make one here"
	skip "  saying whose it is"
fi
# Claude Code's ~/.claude.json keeps a project's own servers (where `claude
# mcp add` puts them) under projects."PATH".mcpServers: config check says it
# did not check them, and --server of one says where it is and what reads it,
# not only "no server named" (red-team D3).
mkdir -p "$SCRATCH/cc"
printf '{"mcpServers": {"x": {"command": "/usr/bin/true"}},\n "projects": {"/home/you/app": {"mcpServers": {"z": {"command": "/usr/bin/false"}}}}}\n' \
	>"$SCRATCH/cc/claude.json"
out=$("$MOAT" config check "$SCRATCH/cc/claude.json" 2>&1); rc=$?
is "$rc" 0 "a ~/.claude.json with a project's servers: config check passes"
like "$out" "note: .*claude\.json:2:[0-9]+: projects\.\"/home/you/app\"\.mcpServers: Claude Code's servers of the project /home/you/app \(1\): not read by moat run --config, nor checked here" \
	"  and notes the project's servers it did not check"
out=$("$MOAT" run --config "$SCRATCH/cc/claude.json" --server z 2>&1); rc=$?
is "$rc" 125 "--server of a project's server: refused"
like "$out" "\"z\" is a server of the project /home/you/app \(Claude Code's local scope" "  saying where it is"
like "$out" "hint: in that project, .moat mcp wrap --server z." "  and what runs it under moat"
out=$("$MOAT" run --config "$SCRATCH/cc/claude.json" --server nope 2>&1)
like "$out" 'no server named "nope"' "  control: a name in no scope is still unknown"
# --- a project's file: what it loosens (docs/config.md, "Whose file it is")
# `moat run --config ./.mcp.json --server x` applied a project's sandbox keys
# wholesale and said nothing: mode = "off", a grant of ~, net = "all", an
# env value expanding $GITHUB_TOKEN.  Now what turns the sandbox off or
# lowers it is refused unless the command line says the same, and the rest
# is said before the run (stderr and the report's notes), FILE:LINE:COL.
# Controls: the flag given; the same file among the user's own (HOME's
# ~/.config/moat) is applied without a word.
PH=$SCRATCH/phome
PJ=$SCRATCH/pjrepo
mkdir -p "$PH/.config/moat" "$PJ" "$SCRATCH/pwrite"
echo "from HOME" >"$PH/note.txt"
pj_mcp() { # pj_mcp FILE SANDBOX-JSON
	printf '{"mcpServers": {"x": {"command": "/bin/cat", "args": ["%s"],\n  "sandbox": %s}}}\n' "$PH/note.txt" "$2" >"$1"
}
prun() { (cd "$PJ" && HOME=$PH GITHUB_TOKEN=tok-1234 "$MOAT" run "$@"); }
for m in off prefer; do
	pj_mcp "$PJ/.mcp.json" "{\"mode\": \"$m\", \"read\": [\"~\"]}"
	out=$(prun --config ./.mcp.json --server x 2>"$SCRATCH/perr"); rc=$?
	is "$rc/$out" "125/" "a project's .mcp.json with mode = \"$m\": refused, nothing ran"
	like "$(cat "$SCRATCH/perr")" "^moat: \./\.mcp\.json:2:23: mcpServers\.x\.sandbox\.mode: mode = \"$m\" .*in a project's file \(not one of your own\): refused unless the command line says the same" \
		"  naming file:line:col and the key"
	like "$(cat "$SCRATCH/perr")" "hint: give --mode $m on the command line" "  the hint gives the flag"
	out=$(prun --config ./.mcp.json --server x --mode "$m" 2>/dev/null); rc=$?
	is "$rc/$out" "0/from HOME" "  control: with --mode $m on the command line it runs"
	cp "$PJ/.mcp.json" "$PH/.config/moat/mine.json"
	out=$(prun --config "$PH/.config/moat/mine.json" --server x 2>"$SCRATCH/perr"); rc=$?
	is "$rc/$out" "0/from HOME" "  control: the same file among the user's own (~/.config/moat) runs as written"
	unlike "$(cat "$SCRATCH/perr")" "project's file" "  and is not called a project's"
done
pj_mcp "$PJ/.mcp.json" '{"backend": "none"}'
prun --config ./.mcp.json --server x >/dev/null 2>"$SCRATCH/perr"
is "$?" 125 "a project's .mcp.json with backend = \"none\": refused"
like "$(cat "$SCRATCH/perr")" "mcpServers\.x\.sandbox\.backend: backend \"none\" runs the command unsandboxed" "  naming it"
out=$(prun --config ./.mcp.json --server x --backend none 2>/dev/null)
is "$?/$out" "0/from HOME" "  control: with --backend none on the command line it runs"
# What loosens the default without turning it off: said, and run.
printf '{"mcpServers": {"x": {"command": "/bin/cat", "args": ["%s"],\n  "env": {"T": "$GITHUB_TOKEN"},\n  "sandbox": {"read": ["~"],\n    "write": ["%s"],\n    "net": "all"}}}}\n' \
	"$PH/note.txt" "$SCRATCH/pwrite" >"$PJ/.mcp.json"
out=$(prun --config ./.mcp.json --server x --report "$REPORTS/pnotes.json" 2>"$SCRATCH/perr"); rc=$?
is "$rc/$out" "0/from HOME" "a project's .mcp.json that grants ~, writes outside, opens the network, takes \$GITHUB_TOKEN: runs"
for w in "\./\.mcp\.json:3:24: mcpServers\.x\.sandbox\.read: grants reading $PH, outside the project" \
	"\./\.mcp\.json:4:15: mcpServers\.x\.sandbox\.write: grants writing $SCRATCH/pwrite, outside the project" \
	"\./\.mcp\.json:5:12: mcpServers\.x\.sandbox\.net: net = \"all\" opens the whole network" \
	"\./\.mcp\.json:2:16: mcpServers\.x\.env\.T: sets T from the host's environment \(\\\$GITHUB_TOKEN\)"; do
	like "$(cat "$SCRATCH/perr")" "moat: note: $w \(a project's file, not one of yours\)" "  said on stderr: ${w%%:*}...${w##*: }"
done
is "$(get "$REPORTS/pnotes.json" 'len([n for n in d["notes"] if "a project" in n])')" 4 "  and the same four in the report's notes"
out=$("$PY" "$VALIDATOR" "$SCHEMA" "$REPORTS/pnotes.json" 2>&1)
ok $? "  (the report is valid against docs/report.schema.json) $out"
cp "$PJ/.mcp.json" "$PH/.config/moat/mine.json"
prun --config "$PH/.config/moat/mine.json" --server x --report "$REPORTS/pnotes2.json" >/dev/null 2>"$SCRATCH/perr"
is "$?/$(grep -c "project's file" "$SCRATCH/perr")/$(get "$REPORTS/pnotes2.json" 'd.get("notes")')" "0/0/None" \
	"  control: the same file among the user's own: no note"
pj_mcp "$PJ/.mcp.json" '{"profile": "network", "read": ["~"]}'
prun --config ./.mcp.json --server x >/dev/null 2>"$SCRATCH/perr"
like "$(cat "$SCRATCH/perr")" "note: \./\.mcp\.json:2:26: mcpServers\.x\.sandbox: starts from the built-in profile network, which opens the whole network" \
	"a project's server on the built-in profile network: said"
pj_mcp "$PJ/.mcp.json" '{"profile": "strict", "read": ["."]}'
prun --config ./.mcp.json --server x >/dev/null 2>"$SCRATCH/perr"
is "$(grep -c 'note:' "$SCRATCH/perr")" "0" "  control: on strict, which gives less than the default, reading the project: no note"
done_testing
