#!/usr/bin/env bash
# Package runners in two phases (issue 19, item 1; docs/policy.md, "Package
# runners"): `npx -y PKG` under moat first fetches PKG alone -- only the
# registry, only the package's own cache writable, nothing of the project
# or HOME -- then runs it with the user's policy and the cache read-only.
#
# A registry double on the host's loopback (tests/lib/npmregistry.py) serves
# three packages: moat-hello (prints its arguments), moat-probe (tries the
# network and its own cache from the server phase) and moat-evil (an
# install script that tries to read a project canary and a HOME file, to
# write the project and to reach another port; its command prints what the
# script saw).  Each refusal has its control: the same script run outside
# moat does all four, and the same probe under --net all connects.  Then: an
# unreachable registry and a package that does not exist fail within
# seconds with the cause; the dry run shows both phases; one-phase cases;
# --write of a path that does not exist, and --mkdir.  Traffic only to
# 127.0.0.2.  As root, as uid 65534 and with ASan (HOME: a fake one).
set -u
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/npmregistry.sh"
scratch
npm_runner_env
PY=/usr/bin/python3
cd "$SCRATCH" || exit 1
j() { json_get "$@" 2>/dev/null; }
jx() { json_eval "$@" 2>/dev/null; }

if ! command -v npx >/dev/null || ! command -v node >/dev/null; then
	skip_all "npm and node are not installed"
fi
fetch_fence_or_skip || exit 0

npm_test_project

cd "$P" || exit 1
m() { HOME=$H npm_config_registry=$REG "$MOAT" "$@"; }
cache_of() { jx "$1" 'd["runner"]["cache"]' | tr -d '"'; }

# --- npx -y through both phases -------------------------------------------------
t0=$(date +%s%N)
out=$(m run --report "$REPORTS/hello.json" -- npx -y moat-hello one two 2>"$SCRATCH/hello.err")
rc=$?
t1=$(date +%s%N)
is "$rc/$out" "0/moat-hello ran one two" "npx -y moat-hello one two under moat: fetched, then run with its arguments"
[ "$rc" = 0 ] || diag "$(tail -5 "$SCRATCH/hello.err")"
diag "first run (fetch and server phases): $(((t1 - t0) / 1000000)) ms"
is "$(jx "$REPORTS/hello.json" '[d["runner"]["name"], d["runner"]["phases"], d["runner"]["outcome"], d["runner"]["packages"], d["runner"]["version"]]')" \
	'["npx", 2, "fetched", ["moat-hello"], "1.0.0"]' "  the report's runner: npx, two phases, fetched moat-hello 1.0.0"
C=$(cache_of "$REPORTS/hello.json")
like "$C" "^$H/.cache/moat/npx/[0-9a-f]{16}$" "  into moat's own cache for this package (~/.cache/moat/npx/KEY)"
is "$(jx "$REPORTS/hello.json" '[d["fetch"]["status"], d["fetch"]["run"]["exit_code"], d["fetch"]["command"]["argv"][1:], d["fetch"]["policy_digest"] != d["policy_digest"]]')" \
	'["enforced", 0, ["exec", "--yes", "--package=moat-hello", "--", "true"], true]' \
	"  the report's fetch: a report of its own, enforced, npm exec --yes --package=moat-hello -- true, exit 0"
is "$(jx "$REPORTS/hello.json" '[d["fetch"]["properties"]["net.allow"]["status"], [e["text"] for e in d["fetch"]["network"]["allow"]]]')" \
	"[\"enforced\", [\"127.0.0.2:$PR\"]]" "  the fetch's network: the registry alone (@npm, from npm_config_registry), by the fence"
is "$(jx "$REPORTS/hello.json" '[p["path"] for p in d["fetch"]["filesystem"]["paths"] if p["access"] == "write" and p["path"].startswith("/dev/") is False]')" \
	"[\"$C\"]" "  the fetch's only write grant is that cache"
is "$(jx "$REPORTS/hello.json" '[d["status"], d["command"]["argv"][1:], d["properties"]["net.none"]["status"]]')" \
	'["enforced", ["one", "two"], "enforced"]' "  the server phase: enforced, with no network (net.none)"
like "$(jx "$REPORTS/hello.json" 'd["command"]["exe"]')" "^\"$C/_npx/[0-9a-f]+/node_modules/.bin/moat-hello\"$" \
	"  and it runs the package's own command from the cache"
valid_report "$REPORTS/hello.json" "  the report, fetch included,"
like "$(cat "$SCRATCH/hello.err")" "^moat: npx: fetching moat-hello from $REG into $C " "  stderr says what is fetched, from where, into where"

t0=$(date +%s%N)
out=$(m run --report "$REPORTS/hello2.json" -- npx -y moat-hello again 2>"$SCRATCH/hello2.err")
t1=$(date +%s%N)
is "$?/$out" "0/moat-hello ran again" "again: it runs from the cache"
is "$(jx "$REPORTS/hello2.json" '[d["runner"]["outcome"], "fetch" in d]')" '["cached", false]' \
	"  without a fetch phase (a name alone is satisfied by what is installed)"
is "$(cat "$SCRATCH/hello2.err")" "" "  and says nothing"
diag "from the cache: $(((t1 - t0) / 1000000)) ms"

# The cache's package.json is the fetch's to write (a package's install
# scripts run there), the project's the command's: a FIFO at either would
# hold moat's open(2) for ever, before any sandbox.  moat reads neither
# then: the cache is not taken as holding the package.
PJ=$(echo "$C"/_npx/*/package.json)
mv "$PJ" "$SCRATCH/cache-package.json" && mkfifo "$PJ"
cp "$P/package.json" "$SCRATCH/proj-package.json" && rm -f "$P/package.json" && mkfifo "$P/package.json"
m_timeout() { HOME=$H npm_config_registry=$REG timeout -k 1 10 "$MOAT" "$@"; }
m_timeout run --dry-run -- npx -y moat-hello >"$SCRATCH/fifo.json" 2>/dev/null
is "$?/$(jx "$SCRATCH/fifo.json" 'd["runner"]["outcome"]')" '0/"would fetch"' \
	"a FIFO as the cache's package.json and as the project's: moat does not wait on them (would fetch)"
rm -f "$PJ" "$P/package.json"
mv "$SCRATCH/cache-package.json" "$PJ" && mv "$SCRATCH/proj-package.json" "$P/package.json"

out=$(m run -- npx --yes -p moat-hello moat-hello via -p 2>/dev/null)
is "$?/$out" "0/moat-hello ran via -p" "npx --yes -p moat-hello moat-hello: the package named with -p"
out=$(m run -- npm exec --yes -- moat-hello via npm exec 2>/dev/null)
is "$?/$out" "0/moat-hello ran via npm exec" "npm exec --yes -- moat-hello"

# --- the server phase: no network, the cache read-only ----------------------------
out=$(m run --report "$REPORTS/probe.json" -- npx -y moat-probe 2>"$SCRATCH/probe.err")
is "$out" '{"cache":"EROFS","net":"EAFNOSUPPORT"}' \
	"the server phase cannot write its package (EROFS) nor open a socket to the registry (EAFNOSUPPORT)"
[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/probe.err")"
out=$(m run --net all --write "$(cache_of "$REPORTS/probe.json")" -- npx -y moat-probe 2>/dev/null)
is "$out" '{"cache":"written","net":"connected"}' "  control: with --net all and the cache granted writable, both work"

# --- the fetch phase: nothing of the project or HOME, no other port -------------
before=$(npm_registry_conns "$PO")
out=$(m run --report "$REPORTS/evil.json" -- npx -y moat-evil 2>"$SCRATCH/evil.err")
is "$(jx "$REPORTS/evil.json" 'd["runner"]["outcome"]')" '"fetched"' "npx -y moat-evil (an install script that reaches out): fetched and run"
[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/evil.err")"
npm_evil_checks "  npx -y moat-evil" "$REPORTS/evil.json" "$out" "$before"

# --- failing fast ---------------------------------------------------------------
npm_unreachable_checks "npx" "npm: ECONNREFUSED" "$REPORTS/down.json" \
	env HOME="$H" npm_config_registry="http://127.0.0.2:$PC/" "$MOAT" run --report "$REPORTS/down.json" -- npx -y moat-hello@1.0.0
valid_report "$REPORTS/down.json" "  and fits the schema"
t0=$(date +%s%N)
out=$(m run -- npx -y moat-nothing-here 2>&1)
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "$rc" 127 "a package the registry does not have: exit 127 (the command is not found), in $ms ms"
like "$out" "^moat: the fetch phase: the registry $REG has no package moat-nothing-here \(npm: E404\)$" "  saying so"
# An install script that downloads from elsewhere than the registry fails
# in the fetch phase, whose network is the registry alone -- and `npm exec`
# prints nothing of it: moat said "see npm's output above", above nothing
# (a real server: @wonderwhy-er/desktop-commander, whose puppeteer
# downloads a browser). Now it says npm printed nothing, where npm's log
# is, what the fence refused, and how to install it instead.
out=$(m run -- npx -y moat-download 2>&1)
is "$?" 125 "npx -y moat-download (an install script that downloads from port $PO): the fetch fails, 125"
unlike "$out" "see npm's output above" "  not pointing at npm's output, which is empty"
like "$out" "moat: the fetch phase: npm could not fetch moat-download from $REG, and printed nothing \\(an install script that failed, npm's log in $H/\\.cache/moat/npx/[0-9a-f]{16}/_logs says which\\)" \
	"  it says npm printed nothing, and where npm's log is"
ls "$H"/.cache/moat/npx/*/_logs/*.log >/dev/null 2>&1
ok $? "  (npm's log is there)"
like "$out" "moat: the fetch's network is the registry alone, and the install reached for 127\\.0\\.0\\.2:$PO, which it does not let through: an install script" \
	"  and what the fetch's fence did not let through"
like "$out" "moat: hint: install it where the network is open, then run it from there: \`npm install --prefix DIR moat-download\`" \
	"  with the way to install it instead"
mkdir -p "$SCRATCH/dl"
out=$(cd "$SCRATCH/dl" && HOME=$H npm_config_registry=$REG npm_config_cache="$SCRATCH/dl/cache" \
	npm exec --yes --package=moat-download -- moat-download 2>&1)
is "$out" "moat-download ran" "control: outside moat, where port $PO is reached, the same install works"
out=$(m run -- npx -y moat-hello@9.9.9 2>&1)
is "$?" 127 "a version it does not have: 127"
like "$out" "has no version of moat-hello@9.9.9 that matches \(npm: ETARGET\)" "  saying so"
t0=$(date +%s%N)
out=$(HOME=$H "$MOAT" run --mode prefer --profile mcp --env npm_config_registry=http://127.0.0.2:$PR/ -- npm view moat-hello name 2>&1)
ms=$((($(date +%s%N) - t0) / 1000000))
like "$out" "npm error code (EAI_AGAIN|ENOTFOUND|ECONNREFUSED|EAFNOSUPPORT)" \
	"npm under --net none fails at once (npm_config_fetch_retries=0), in $ms ms"
ok "$([ "$ms" -lt 10000 ] && echo 0 || echo 1)" "  not after npm's retries (about 70 s)"

# The Python binding's spawn_mcp (docs/integration.md) gets the same fast
# failure, classified as an error that says why, not a plain failure.
out=$(HOME=$H npm_config_registry=http://127.0.0.2:$PC/ PYTHONPATH="$ROOT/bindings/python" "$PY" - "$MOAT" <<'PY' 2>&1
import sys, time, moat
t0 = time.time()
proc = moat.spawn_mcp(["npx", "-y", "moat-hello@1.0.0"], moat=sys.argv[1], stderr=moat.subprocess.DEVNULL)
proc.stdin.close()
proc.wait()
o = moat.classify(proc.result())
print(o.kind, proc.returncode, time.time() - t0 < 10, o.message)  # npm's first retry is 10 s on
PY
)
is "$out" "error 125 True the command did not start: the fetch phase: the registry http://127.0.0.2:$PC/ could not be reached (npm: ECONNREFUSED)" \
	"the Python binding: spawn_mcp(['npx', '-y', ...]) against an unreachable registry is an error within 10 s (before any retry), saying why"

# --- the registry from the project's .npmrc -------------------------------------
# The fetch phase cannot read the project: moat reads its .npmrc (as @npm
# does) and tells npm the registry.  A project's .npmrc is the cloned
# repository's choice, not the user's: a registry it names on the host's
# loopback, link-local (the cloud's metadata endpoint), a private network or
# the unspecified address is refused -- not dropped, which for a scope would
# fetch it from the default registry instead -- unless the user allows it
# (--allow-net, or the same registry in his ~/.npmrc).  A HOME of its own:
# each first run is a fetch.
H3=$SCRATCH/home3
mkdir -p "$H3" && chmod 0755 "$H3"
printf 'registry=http://127.0.0.2:%s/\n' "$PR" >"$P/.npmrc"
before=$(npm_registry_conns "$PR")
out=$(HOME=$H3 "$MOAT" run --report "$REPORTS/npmrc-refused.json" -- npx -y moat-hello@1.0.0 npmrc 2>"$SCRATCH/npmrc.err")
rc=$?
after=$(npm_registry_conns "$PR")
is "$rc/$out/$((after - before - 1))" "125//0" \
	"the project's .npmrc names a registry on the host's loopback: refused (125), and the registry there saw no connection"
is "$(jx "$REPORTS/npmrc-refused.json" '[d["runner"]["outcome"], d["run"]["executed"], "fetch" in d]')" '["failed", false, false]' \
	"  the report: the runner's outcome failed, nothing ran, no fetch phase"
is "$(head -1 "$SCRATCH/npmrc.err")" \
	"moat: npx: the registry to fetch moat-hello@1.0.0 from: $P/.npmrc:1: registry=http://127.0.0.2:$PR/: a registry at 127.0.0.2:$PR (127.0.0.0/8: the host's own loopback): a file of the project (a repository you may just have cloned) does not open @npm to this host, its network or the cloud's metadata endpoint" \
	"  the message names the file and line, the setting and why"
is "$(sed -n 2p "$SCRATCH/npmrc.err")" \
	"moat: hint: if you trust that registry, allow it yourself: --allow-net 127.0.0.2:$PR (config network.allow), or name it in ~/.npmrc; otherwise remove that line" \
	"  and the hint how the user allows it"
for v in "http://169.254.169.254/|169.254.169.254:80 (169.254.0.0/16: link-local, where the cloud's metadata endpoint is)" \
	"http://[::1]:$PR/|[::1]:$PR (::1/128: the host's own loopback)" \
	"http://10.1.2.3/|10.1.2.3:80 (10.0.0.0/8: a private or reserved range)" \
	"http://0x7f000002:$PR/|127.0.0.2:$PR (127.0.0.0/8: the host's own loopback)" \
	"http://[::ffff:127.0.0.2]:$PR/|[::ffff:127.0.0.2]:$PR (127.0.0.0/8: the host's own loopback)" \
	"http://registry.localhost:$PR/|registry.localhost:$PR (localhost: the host's own loopback)"; do
	printf 'registry=%s\n' "${v%%|*}" >"$P/.npmrc"
	HOME=$H3 "$MOAT" run --dry-run -- npx -y moat-hello@1.0.0 >/dev/null 2>"$SCRATCH/npmrc.err"
	is "$?/$(head -1 "$SCRATCH/npmrc.err" | grep -o "a registry at .*: a file of the project" | sed 's/^a registry at //; s/: a file of the project$//')" \
		"125/${v#*|}" "  registry=${v%%|*} in the project's .npmrc: refused too, even in a dry run"
done
# A scope the project maps to such a registry: refused, not fetched from the
# default registry (here the double, which serves @moat/scoped) instead.
printf '@moat:registry=http://169.254.169.254/\n' >"$P/.npmrc"
before=$(npm_registry_conns "$PR")
out=$(HOME=$H3 npm_config_registry=$REG "$MOAT" run -- npx -y @moat/scoped s 2>"$SCRATCH/npmrc.err")
rc=$?
after=$(npm_registry_conns "$PR")
is "$rc/$out/$((after - before - 1))" "125//0" \
	"@moat:registry=http://169.254.169.254/ in the project's .npmrc: refused, and @moat/scoped not fetched from the default registry either"
like "$(head -1 "$SCRATCH/npmrc.err")" "$P/\\.npmrc:1: @moat:registry=http://169\\.254\\.169\\.254/: a registry at 169\\.254\\.169\\.254:80 " \
	"  naming the scope's setting"
printf '@moat:registry=%s\n' "$REG" >"$P/.npmrc"
out=$(HOME=$H3 npm_config_registry=http://127.0.0.2:$PC/ "$MOAT" run --allow-net "127.0.0.2:$PR" -- npx -y @moat/scoped s 2>"$SCRATCH/npmrc.err")
is "$?/$out" "0/moat-scoped ran s" \
	"  control: the project's .npmrc maps @moat to the double on 127.0.0.2:$PR, which the user allows: fetched from there, and run"
[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/npmrc.err")"
rm -rf "$H3/.cache"

# The user allows it: --allow-net names the registry's address and port.
printf 'registry=http://127.0.0.2:%s/\n' "$PR" >"$P/.npmrc"
out=$(HOME=$H3 "$MOAT" run --allow-net "127.0.0.2:$PR" --report "$REPORTS/npmrc.json" -- npx -y moat-hello@1.0.0 npmrc 2>"$SCRATCH/npmrc.err")
is "$?/$out/$(jx "$REPORTS/npmrc.json" 'd["runner"]["outcome"]')" '0/moat-hello ran npmrc/"fetched"' \
	"  control: with --allow-net 127.0.0.2:$PR the registry the project's .npmrc names is fetched from, and the package run"
[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/npmrc.err")"
is "$(jx "$REPORTS/npmrc.json" '[[e["text"], e["from"]] for e in d["fetch"]["network"]["allow"]]')" \
	"[[\"127.0.0.2:$PR\", \"@npm ($P/.npmrc:1)\"]]" "  the fetch's allowlist: that registry, from the project's .npmrc"
rm -f "$P/.npmrc"
rm -rf "$H3/.cache"
# The same registry in the user's own ~/.npmrc: his choice, allowed.
printf 'registry=http://127.0.0.2:%s/\n' "$PR" >"$H3/.npmrc"
out=$(cd "$P" && HOME=$H3 "$MOAT" run --report "$REPORTS/npmrc-user.json" -- npx -y moat-hello@1.0.0 user 2>"$SCRATCH/npmrc.err")
is "$?/$out/$(jx "$REPORTS/npmrc-user.json" 'd["runner"]["outcome"]')" '0/moat-hello ran user/"fetched"' \
	"  control: the same registry in ~/.npmrc (the user's layer): fetched and run"
[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/npmrc.err")"
is "$(jx "$REPORTS/npmrc-user.json" '[[e["text"], e["from"]] for e in d["fetch"]["network"]["allow"]]')" \
	"[[\"127.0.0.2:$PR\", \"@npm ($H3/.npmrc:1)\"]]" "  the fetch's allowlist: that registry, from ~/.npmrc"
rm -f "$H3/.npmrc"

# --- another project's registry is another cache ---------------------------------
# The cache is shared by every project of the user, and a repository's
# .npmrc chooses the registry (red team 3, F1): project A names R2, another
# registry (here: an attacker's, serving its own moat-hello and
# @moat/scoped), project B the registry above.  B must not run what R2
# served A: the registry is part of the cache's key.  A HOME of its own, so
# that each first run is a fetch.  R2 is on the host's loopback: the user
# allows it in A (--allow-net), as a project's .npmrc alone cannot.
npm_two_projects
printf 'registry=%s\n' "$R2" >"$A/.npmrc"
h2() { HOME=$H2 "$MOAT" "$@"; }
out=$(cd "$A" && h2 run --allow-net "127.0.0.2:$PR2" --report "$REPORTS/f1-a.json" -- npx -y moat-hello a 2>"$SCRATCH/f1-a.err")
is "$?/$out/$(jx "$REPORTS/f1-a.json" 'd["runner"]["outcome"]')" '0/R2 moat-hello ran a/"fetched"' \
	"project A, whose .npmrc names registry R2: npx -y moat-hello fetches R2's"
[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/f1-a.err")"
out=$(cd "$B" && HOME=$H2 npm_config_registry=$REG "$MOAT" run --report "$REPORTS/f1-b.json" -- npx -y moat-hello b 2>"$SCRATCH/f1-b.err")
is "$?/$out/$(jx "$REPORTS/f1-b.json" 'd["runner"]["outcome"]')" '0/moat-hello ran b/"fetched"' \
	"project B, whose registry is another: the same npx -y moat-hello does not run A's, it fetches from its own"
[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/f1-b.err")"
ok "$([ "$(cache_of "$REPORTS/f1-b.json")" != "$(cache_of "$REPORTS/f1-a.json")" ] && echo 0 || echo 1)" "  into another cache"
out=$(cd "$B" && HOME=$H2 npm_config_registry=${REG%/} "$MOAT" run --report "$REPORTS/f1-b2.json" -- npx -y moat-hello b2 2>/dev/null)
is "$?/$out/$(jx "$REPORTS/f1-b2.json" 'd["runner"]["outcome"]')" '0/moat-hello ran b2/"cached"' \
	"  control: B again (its registry written without the trailing /): cached, the same registry's"
out=$(cd "$A" && h2 run --allow-net "127.0.0.2:$PR2" --report "$REPORTS/f1-a2.json" -- npx -y moat-hello a2 2>/dev/null)
is "$?/$out/$(jx "$REPORTS/f1-a2.json" 'd["runner"]["outcome"]')" '0/R2 moat-hello ran a2/"cached"' \
	"  control: A again: cached, R2's, as A's .npmrc says"
is "$(jx "$REPORTS/f1-a2.json" 'd["runner"]["registries"]')" "[{\"key\": \"registry\", \"url\": \"$R2\"}]" \
	"  the report says where the cached install came from: runner.registries names R2"
valid_report "$REPORTS/f1-a2.json" "  and fits the schema"
is "$(jx "$REPORTS/f1-b2.json" 'd["runner"]["registries"]')" "[{\"key\": \"registry\", \"url\": \"${REG%/}\"}]" \
	"  B's cached install: B's registry"
out=$(cd "$B" && HOME=$H2 npm_config_registry=$REG "$MOAT" run --env "npm_config_registry=$R2" --report "$REPORTS/f1-env.json" -- npx -y moat-hello e 2>/dev/null)
is "$?/$out/$(cache_of "$REPORTS/f1-env.json")" "0/R2 moat-hello ran e/$(cache_of "$REPORTS/f1-a.json")" \
	"  --env npm_config_registry=R2 in B: R2's, R2's cache"
# A scope's registry: A names R2 for @moat only.
printf '@moat:registry=%s\n' "$R2" >"$A/.npmrc"
out=$(cd "$A" && HOME=$H2 npm_config_registry=$REG "$MOAT" run --allow-net "127.0.0.2:$PR2" --report "$REPORTS/f1-sa.json" -- npx -y @moat/scoped sa 2>/dev/null)
is "$?/$out/$(jx "$REPORTS/f1-sa.json" 'd["runner"]["outcome"]')" '0/R2 moat-scoped ran sa/"fetched"' \
	"project A's .npmrc names R2 for @moat: npx -y @moat/scoped fetches R2's"
is "$(jx "$REPORTS/f1-sa.json" '[[r["key"], r["url"]] for r in d["runner"]["registries"]]')" \
	"[[\"registry\", \"$REG\"], [\"@moat:registry\", \"$R2\"]]" \
	"  runner.registries: the default one and the scope's"
out=$(cd "$B" && HOME=$H2 npm_config_registry=$REG "$MOAT" run --report "$REPORTS/f1-sb.json" -- npx -y @moat/scoped sb 2>/dev/null)
is "$?/$out/$(jx "$REPORTS/f1-sb.json" 'd["runner"]["outcome"]')" '0/moat-scoped ran sb/"fetched"' \
	"  in B (no scope's registry): not A's, fetched from B's registry"
ok "$([ "$(cache_of "$REPORTS/f1-sb.json")" != "$(cache_of "$REPORTS/f1-sa.json")" ] && echo 0 || echo 1)" "  into another cache"
rm -f "$A/.npmrc"

# The report's registries carry no user part.
HOME=$H npm_config_registry="http://u:npm_SECRET_42@127.0.0.2:$PC/" "$MOAT" run --dry-run -- npx -y moat-hello@9.9.9 \
	>"$SCRATCH/reg-dry.json" 2>/dev/null
is "$(jx "$SCRATCH/reg-dry.json" 'd["runner"]["registries"]')/$(grep -c SECRET "$SCRATCH/reg-dry.json")" \
	"[{\"key\": \"registry\", \"url\": \"http://127.0.0.2:$PC/\"}]/0" \
	"the dry run's runner.registries: the registry without its user part, no password anywhere in the report"

# --- the dry run: both plans --------------------------------------------------
m run --dry-run -- npx -y moat-probe@1.0.0 x >"$SCRATCH/dry.json" 2>"$SCRATCH/dry.err"
is "$?" 0 "--dry-run of a package not in the cache"
is "$(jx "$SCRATCH/dry.json" '[d["runner"]["outcome"], d["fetch"]["policy"]["net"], d["fetch"]["command"]["argv"][2:4], "run" in d["fetch"], d["command"]["argv"]]')" \
	'["would fetch", "allow", ["--yes", "--package=moat-probe@1.0.0"], false, ["npx", "-y", "moat-probe@1.0.0", "x"]]' \
	"  shows the fetch phase's plan, and the command as written for the server"
valid_report "$SCRATCH/dry.json" "  and fits the schema"
ok "$([ ! -e "$(cache_of "$SCRATCH/dry.json")" ] && echo 0 || echo 1)" "  and makes nothing (no cache directory)"

# --- one phase ------------------------------------------------------------------
out=$(m run --report "$REPORTS/off.json" -- npx --offline -y moat-nothing-here 2>&1)
is "$(jx "$REPORTS/off.json" '[d["runner"]["phases"], d["runner"]["outcome"]]')" '[1, "as written"]' \
	"npx --offline: one phase, as written"
like "$(jx "$REPORTS/off.json" 'd["runner"]["why"]')" "npx --offline" "  the report says why"
mkdir -p "$P/node_modules/moat-local"
echo '{"name": "moat-local", "version": "1.0.0"}' >"$P/node_modules/moat-local/package.json"
m run --dry-run -- npx -y moat-local >"$SCRATCH/local.json" 2>/dev/null
like "$(jx "$SCRATCH/local.json" 'd["runner"]["why"]')" "installed in the project \($P/node_modules\)" \
	"a package installed in the project: one phase, npx finds it there"
rm -rf "$P/node_modules"
# A package installed in the project, named with -p, run from below the
# project: its node_modules is granted read-only too (npx, run as written,
# found nothing there and asked the registry, which the run cannot reach).
# project_pkg PKG CMD WORDS: PKG installed in the project, its command CMD
# (linked in node_modules/.bin, as npm does) printing "WORDS ran ARGS".
project_pkg() {
	mkdir -p "$P/node_modules/$1" "$P/node_modules/.bin" "$P/sub"
	echo "{\"name\": \"$1\", \"version\": \"1.0.0\", \"bin\": {\"$2\": \"cli.sh\"}}" >"$P/node_modules/$1/package.json"
	printf '#!/bin/sh\necho "%s ran $*"\n' "$3" >"$P/node_modules/$1/cli.sh"
	chmod 0755 "$P/node_modules/$1/cli.sh"
	ln -s "../$1/cli.sh" "$P/node_modules/.bin/$2"
	chmod -R a+rX "$P/node_modules" "$P/sub"
}
project_pkg moat-local moat-local moat-local
out=$(cd "$P/sub" && m run -- npx -y -p moat-local moat-local v 2>&1)
is "$?/$out" "0/moat-local ran v" "npx -p moat-local, installed in the project, run from below it: it runs"
rm -rf "$P/node_modules" "$P/sub"
# `npx moat-hello` where the project has a command of that name in its
# node_modules/.bin (from another package, as typescript gives tsc): npx
# runs that, not the registry's package of the name (`npx tsc` fetched the
# registry's "tsc", another program).  From below the project too, whose
# node_modules the run then sees, read-only.
project_pkg other-pkg moat-hello "local moat-hello"
out=$(m run -- npx moat-hello x 2>&1)
is "$?/$out" "0/local moat-hello ran x" "npx moat-hello with a moat-hello in the project's node_modules/.bin: that one runs"
out=$(cd "$P/sub" && m run -- npx moat-hello y 2>&1)
is "$?/$out" "0/local moat-hello ran y" "  from below the project too"
(cd "$P/sub" && m run --dry-run -- npx moat-hello >"$SCRATCH/localbin.json" 2>/dev/null)
is "$(jx "$SCRATCH/localbin.json" '[d["runner"]["outcome"], [[p["access"], p["origin"]["source"]] for p in d["policy"]["paths"] if p["path"] == "'"$P"'/node_modules"]]')" \
	"[\"as written\", [[\"read\", \"the project's node_modules, where the package runner finds the command\"]]]" \
	"  one phase; the project's node_modules granted read-only, and the dry run says why"
like "$(jx "$SCRATCH/localbin.json" 'd["runner"]["why"]')" "moat-hello is a command in $P/node_modules/.bin" "  the report says where it was found"
# A node_modules that is a link (a repository can plant one to anywhere,
# HOME included): no grant is made of it.
mv "$P/node_modules" "$SCRATCH/elsewhere-node_modules"
ln -s "$SCRATCH/elsewhere-node_modules" "$P/node_modules"
(cd "$P/sub" && m run --dry-run -- npx moat-hello >"$SCRATCH/linkednm.json" 2>/dev/null)
is "$(jx "$SCRATCH/linkednm.json" '[p["path"] for p in d["policy"]["paths"] if p["path"].startswith("'"$P"'/node_modules")]')" "[]" \
	"  a node_modules that is a link: nothing granted through it"
rm -f "$P/node_modules"
mv "$SCRATCH/elsewhere-node_modules" "$P/node_modules"
out=$(m run -- npx -y -p moat-hello moat-hello z 2>/dev/null)
is "$?/$out" "0/moat-hello ran z" "  control: with -p, the registry's package, as npx does"
rm -rf "$P/node_modules" "$P/sub"
# The project's own package.json names the command (`npx my-cli` in my-cli's
# repository): npx runs that one, never the registry's.  (npm then links
# the project into its cache and makes the bin executable: under moat, with
# HOME and the project read-only, npm says why it cannot.)
cp "$P/package.json" "$SCRATCH/package.json.orig"
echo '{"name": "proj", "version": "1.0.0", "bin": {"moat-hello": "own.sh"}}' >"$P/package.json"
printf '#!/bin/sh\necho "own moat-hello ran $*"\n' >"$P/own.sh"
chmod 0755 "$P/own.sh"
m run --dry-run -- npx moat-hello w >"$SCRATCH/ownbin.json" 2>/dev/null
is "$(jx "$SCRATCH/ownbin.json" '[d["runner"]["outcome"], d["runner"]["why"]]')" \
	"[\"as written\", \"moat-hello is a command of the project's own package.json ($P), which npx runs without the registry\"]" \
	"npx moat-hello in a project whose own package.json has that bin: as written, saying why"
unlike "$(m run -- npx moat-hello w 2>&1)" "^moat-hello ran" "  the registry's moat-hello does not run"
cp "$SCRATCH/package.json.orig" "$P/package.json"
rm -f "$P/own.sh"
out=$(m run --dry-run -- npx -y --foo moat-hello 2>&1 >/dev/null)
like "$out" "^moat: npx: moat does not know the option --foo" "an npx option moat does not know: as written, and said on stderr"

# --- a project's own npx (direnv's `layout node` puts node_modules/.bin first on
# PATH): a link to a project's node_modules/npm/bin/npx-cli.js is npm's npx by
# its path, and the fetch ran the npm beside it -- the repository's code --
# with the cache every project shares writable.  It filled the cache of
# moat-hello@1.0.0 with its own install, which a later `npx -y
# moat-hello@1.0.0` from any other project ran as cached.  Now such an npx
# runs as written, in one sandbox, and the cache stays the registry's.
mkdir -p "$P/node_modules/npm/bin" "$P/node_modules/.bin" "$SCRATCH/other"
printf '#!/usr/bin/env node\nconsole.log("project npx ran")\n' >"$P/node_modules/npm/bin/npx-cli.js"
cat >"$P/node_modules/npm/bin/npm" <<'EOF2'
#!/bin/sh
d="$npm_config_cache/_npx/0123456789abcdef"
mkdir -p "$d/node_modules/moat-hello" "$d/node_modules/.bin"
echo '{"_npx": {"packages": ["moat-hello@1.0.0"]}}' >"$d/package.json"
echo '{"name": "moat-hello", "version": "1.0.0", "bin": {"moat-hello": "x.sh"}}' >"$d/node_modules/moat-hello/package.json"
printf '#!/bin/sh\necho POISONED\n' >"$d/node_modules/moat-hello/x.sh"
chmod 0755 "$d/node_modules/moat-hello/x.sh"
ln -sf ../moat-hello/x.sh "$d/node_modules/.bin/moat-hello"
EOF2
chmod 0755 "$P/node_modules/npm/bin/npx-cli.js" "$P/node_modules/npm/bin/npm"
ln -s ../npm/bin/npx-cli.js "$P/node_modules/.bin/npx"
ln -s ../npm/bin/npm "$P/node_modules/.bin/npm"
chmod -R a+rX "$P/node_modules" "$SCRATCH/other"
out=$(PATH="$P/node_modules/.bin:$PATH" m run -- npx -y moat-hello@1.0.0 a 2>&1)
is "$out" "moat: npx is the project's own ($P/node_modules/.bin/npx): the fetch would run the project's code to fill the package cache every project shares; npx runs as written, in one sandbox
project npx ran" "a project's own npx (node_modules/.bin first on PATH): as written, saying why; no fetch phase"
out=$(cd "$SCRATCH/other" && m run -- npx -y moat-hello@1.0.0 b 2>/dev/null)
is "$?/$out" "0/moat-hello ran b" "  control: npx -y moat-hello@1.0.0 from another directory runs the registry's package, not one the project put in the cache"
rm -rf "$P/node_modules" "$SCRATCH/other"

# An npx with no npm beside it (a link to npm's npx-cli.js alone in a
# directory of the user's tools, granted so that it runs as named) had its
# fetch phase run the npm first on PATH: the project's node_modules/.bin/npm
# under direnv's layout node, with the network to the registry, the cache
# every project shares writable and the project's node_modules granted as
# npm's installation.  And with no node beside the npm, the node granted to
# the fetch was the one first on PATH, the project's, which npm's
# `#!/usr/bin/env node` then ran in the fetch.  Both are now looked up on
# PATH without the project's entries.
mkdir -p "$P/node_modules/.bin" "$SCRATCH/tools" "$SCRATCH/tools2" "$SCRATCH/usertools"
ln -s "$(readlink -f "$(command -v npx)")" "$SCRATCH/tools/npx"
ln -s "$(readlink -f "$(command -v npx)")" "$SCRATCH/tools2/npx"
printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v npm)" >"$SCRATCH/tools2/npm"
# The project's npm never runs; its node runs the package in the server
# phase (as npx would), and says so when it runs in the fetch (its cwd).
printf '#!/bin/sh\necho "project npm ran: $(cat %s 2>&1)" >&2\nexit 3\n' "$P/canary.txt" >"$P/node_modules/.bin/npm"
printf '#!/bin/sh\ncase "$(pwd)" in */.cache/moat/*) echo "project node ran in the fetch: $(cat %s 2>&1)" >&2 ;; esac\nexec %s "$@"\n' \
	"$P/canary.txt" "$(command -v node)" >"$P/node_modules/.bin/node"
chmod 0755 "$P/node_modules/.bin/npm" "$P/node_modules/.bin/node" "$SCRATCH/tools2/npm"
chmod -R a+rX "$P/node_modules" "$SCRATCH/tools" "$SCRATCH/tools2"
for t in tools tools2; do
	what=npm
	[ "$t" = tools2 ] && what=node
	# A HOME of its own: an empty cache, so the fetch phase runs.
	mkdir -p "$SCRATCH/home-$t" && chmod 0755 "$SCRATCH/home-$t"
	out=$(PATH="$P/node_modules/.bin:$SCRATCH/$t:$PATH" H=$SCRATCH/home-$t m run --read "$SCRATCH/$t" --report "$REPORTS/$t.json" -- npx -y moat-hello@1.0.0 c 2>"$SCRATCH/$t.err")
	is "$?/$out" "0/moat-hello ran c" "the project's $what first on PATH, none beside npx's npm: the fetch takes the user's, and the package runs"
	unlike "$(cat "$SCRATCH/$t.err")" "project (npm|node) ran" "  the project's npm and node did not run in the fetch"
	is "$(jx "$REPORTS/$t.json" '[p["path"] for p in d["fetch"]["filesystem"]["paths"] if p["path"].startswith("'"$P"'")]')" "[]" \
		"  nothing of the project is granted to the fetch"
done
# Control: the lookup is still PATH's, outside the project.
printf '#!/bin/sh\necho "user npm ran" >&2\nexec %s "$@"\n' "$(command -v npm)" >"$SCRATCH/usertools/npm"
chmod 0755 "$SCRATCH/usertools/npm"
chmod -R a+rX "$SCRATCH/usertools"
mkdir -p "$SCRATCH/home-user" && chmod 0755 "$SCRATCH/home-user"
out=$(PATH="$P/node_modules/.bin:$SCRATCH/usertools:$SCRATCH/tools:$PATH" H=$SCRATCH/home-user m run --read "$SCRATCH/tools" -- npx -y moat-hello@1.0.0 d 2>&1)
like "$out" "user npm ran" "  control: an npm of the user's on PATH, outside the project, is the one the fetch runs"
rm -rf "$P/node_modules" "$SCRATCH/tools" "$SCRATCH/tools2" "$SCRATCH/usertools" "$SCRATCH"/home-*

# --- --write of a path that does not exist --------------------------------------
out=$(m run --write ./data -- /bin/true 2>&1)
is "$?" 125 "--write ./data that does not exist: 125"
is "$out" "moat: command line: --write $P/data: no such file or directory (a granted path must exist when moat starts)
moat: hint: create it first: \`mkdir -p $P/data\` (or give --mkdir, and moat creates it); or drop the grant" \
	"  naming the path, with the fix"
out=$(m run --mkdir --dry-run --write ./data/deeper -- /bin/true 2>&1 >/dev/null)
is "$?/$([ -e "$P/data" ] && echo made || echo absent)" "0/absent" "--mkdir --dry-run: makes nothing"
like "$out" "^moat: --mkdir: $P/data/deeper does not exist: the run makes it" "  and says the run would"
out=$(m run --mkdir --write ./data/deeper -- sh -c 'echo hi >data/deeper/f && cat data/deeper/f' 2>"$SCRATCH/mkdir.err")
is "$?/$out" "0/hi" "--mkdir --write ./data/deeper: made, granted, written"
is "$(cat "$SCRATCH/mkdir.err")" "moat: --mkdir: made $P/data/deeper" "  and said on stderr"

cd "$SCRATCH" || exit 1
done_testing
