#!/usr/bin/env bash
# uvx and `uv tool run` (issue 19, item 1; docs/policy.md, "Package
# runners"): uv is not obtainable here (not in Debian 12, not on npm), so
# moat has no fetch phase for it and claims none.  It runs uvx as written, in
# one phase under the policy given, and the report's runner says so: one
# phase, "as written", no fetch report, and why, with the exact
# `uv tool install` that pre-installs the package and the command to run
# then.  A stand-in named uvx (and uv) prints its arguments: what is shown
# here is moat's reading of the arguments and its report, not uv's
# behaviour.  As root, as uid 65534 and with ASan.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
unset MOAT_HOST_LIMIT XDG_CACHE_HOME
PY=/usr/bin/python3
cd "$SCRATCH" || exit 1
jx() { json_eval "$@" 2>/dev/null; }

B=$SCRATCH/bin
mkdir -p "$B" "$SCRATCH/home"
for n in uvx uv; do
	printf '#!/bin/sh\necho "%s stand-in: $*"\n' "$n" >"$B/$n"
	chmod 0755 "$B/$n"
done
chmod 0755 "$SCRATCH" "$SCRATCH/home"
# The stand-ins sit in the test's /tmp, which the sandbox does not see.
m() { HOME=$SCRATCH/home PATH=$B:$PATH "$MOAT" run --profile mcp --read "$B" "$@"; }

# --- one phase, and the report says so ----------------------------------------
out=$(m --report "$REPORTS/uvx.json" -- uvx mcp-server-fetch --user-agent x 2>"$SCRATCH/uvx.err")
is "$?/$out" "0/uvx stand-in: mcp-server-fetch --user-agent x" \
	"uvx mcp-server-fetch under --profile mcp: the command runs as written (the stand-in gets every argument)"
is "$(jx "$REPORTS/uvx.json" '[d["runner"]["name"], d["runner"]["phases"], d["runner"]["outcome"], "fetch" in d, "cache" in d["runner"], d["command"]["argv"][0]]')" \
	'["uvx", 1, "as written", false, false, "uvx"]' \
	"  the report: uvx, one phase, as written, no fetch phase and no cache claimed, the command as given"
is "$(jx "$REPORTS/uvx.json" 'd["runner"]["why"]')" \
	'"moat runs uvx as written, in one phase under the policy given: it fetches in a sandbox of its own only for npx, npm exec, pnpm dlx, bunx and pipx run, so uv'"'"'s download and the package'"'"'s build run under this policy; install the package first where the network is open: `uv tool install mcp-server-fetch`, then `moat run ... -- mcp-server-fetch` (uv links it into ~/.local/bin)"' \
	"  and why, with the exact command that pre-installs the package and the command to run then"
valid_report "$REPORTS/uvx.json" "  the report"
is "$(cat "$SCRATCH/uvx.err")" "" "  stderr stays the server's (an MCP client's log): the report carries it"

# --- the pre-install command, from the arguments --------------------------------
hint() { # hint ARGV...: the report's "`uv tool install ...`, then `moat run ... -- ...`"
	m --dry-run -- "$@" 2>/dev/null | "$PY" -c 'import json,re,sys; w = json.load(sys.stdin)["runner"]["why"]; print(re.search(r"`uv tool install [^`]*`, then `[^`]*`", w).group(0))' 2>&1
}
is "$(hint uvx mcp-server-fetch@1.2.0)" '`uv tool install mcp-server-fetch==1.2.0`, then `moat run ... -- mcp-server-fetch`' \
	"uvx PKG@VERSION: uv tool install PKG==VERSION"
is "$(hint uvx ruff@latest check .)" '`uv tool install ruff`, then `moat run ... -- ruff`' "uvx PKG@latest: the name alone"
is "$(hint uvx --from 'mcp-server-git[x]>=1' mcp-server-git --repository .)" \
	"\`uv tool install 'mcp-server-git[x]>=1'\`, then \`moat run ... -- mcp-server-git\`" \
	"uvx --from SPEC CMD: that spec, quoted for the shell, and CMD"
is "$(hint uvx --python 3.12 -q ruff)" '`uv tool install ruff`, then `moat run ... -- ruff`' \
	"options with a value (--python 3.12) and without (-q) are not the package"
is "$(hint uv tool run --from=black black)" '`uv tool install black`, then `moat run ... -- black`' "uv tool run: the same"
is "$(m --dry-run -- uv tool run black 2>/dev/null | jx /dev/stdin 'd["runner"]["name"]')" '"uvx"' "  named uvx in the report"
is "$(hint uvx --frobnicate x)" '`uv tool install PACKAGE`, then `moat run ... -- COMMAND`' \
	"an option moat does not know: no package named, rather than a wrong one"
out=$(m --dry-run -- uv pip list 2>/dev/null | jx /dev/stdin '"runner" in d')
is "$out" "false" "uv pip list is not a package runner"

done_testing
