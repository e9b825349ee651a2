#!/usr/bin/env bash
# `pnpm dlx PKG` and `bunx PKG` in two phases (issue 19, item 1; docs/policy.md,
# "Package runners"), as runners.sh shows for npx: the runner itself fetches
# PKG alone -- only the registry, only moat's cache of that package
# writable (pnpm's store and cache, bun's install cache), nothing of the
# project or HOME -- then PKG's command runs from that cache, read-only,
# with the user's policy and no network.
#
# pnpm 12 (its native binary, @pnpm/exe.linux-x64), pnpm 10 (JavaScript,
# reading npm_config_* where pnpm 12 reads pnpm_config_*) and bun 1.4 come
# from the npm registry, pinned in tests/runners/package-lock.json (npm ci,
# as e2e_mcp.sh gets the MCP SDK).
# The registry double (tests/lib/npmregistry.py) serves moat-hello,
# @moat/scoped, moat-probe and moat-evil (npmregistry.sh's npm_test_packages).  For each
# runner: success through both phases and the report of each; a second run
# from the cache; the server phase cannot write its package nor open a
# socket (control: --net all and the cache writable); moat-evil's install
# script (pnpm runs the top-level package's; bun with --trust) cannot read
# a project canary nor a HOME file, write the project, or reach another
# loopback port (control: the same script outside moat does all four); an
# unreachable registry fails within 10 s saying so; a package that does not
# exist is 127; the dry run makes nothing.  Traffic only to 127.0.0.2.  As
# root, as uid 65534 and with ASan (HOME: a fake one).
set -u
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/npmregistry.sh"
scratch
npm_runner_env

command -v node >/dev/null && command -v npm >/dev/null || skip_all "node and npm are not installed"
. "$ROOT/tests/lib/npm_pinned.sh"
npm_pinned "$ROOT/tests/runners" runners
# pnpm's names for its binary, as the pnpm package's install script places
# them (one binary; it reads its name).
TOOLS=$SCRATCH/tools
mkdir -p "$TOOLS"
for n in pnpm pnpx pnx; do ln -s "$NPM_DIR/node_modules/@pnpm/exe.linux-x64/pnpm" "$TOOLS/$n"; done
ln -s "$NPM_DIR/node_modules/.bin/bun" "$TOOLS/bun"
ln -s "$NPM_DIR/node_modules/.bin/bunx" "$TOOLS/bunx"
# pnpm 10, JavaScript, which reads npm_config_* where pnpm 12 reads pnpm_config_*.
mkdir -p "$TOOLS/10"
ln -s "$NPM_DIR/node_modules/.bin/pnpm" "$TOOLS/10/pnpm"
ok "$("$TOOLS/pnpm" --version >/dev/null && "$TOOLS/10/pnpm" --version >/dev/null && "$TOOLS/bun" --version >/dev/null && echo 0 || echo 1)" \
	"pnpm $("$TOOLS/pnpm" --version 2>&1) and $("$TOOLS/10/pnpm" --version 2>&1), bun $("$TOOLS/bun" --version 2>&1) from tests/runners/package-lock.json"
export PATH=$TOOLS:$PATH
fetch_fence_or_skip || exit 0

npm_test_project

cd "$P" || exit 1
jx() { json_eval "$@" 2>/dev/null; }
# The links to the runners sit in the test's /tmp, which the sandbox does
# not see: granted (what they point at is the profile's: the command's
# install dir).
m() { HOME=$H npm_config_registry=$REG "$MOAT" run --read "$TOOLS" "$@"; }
cache_of() { jx "$1" 'd["runner"]["cache"]' | tr -d '"'; }

# runner NAME: the words that run it, its name in the report and in the
# checks, its cache's directory, what the fetch phase runs after the
# executable, where the command is installed, the options that make its
# install scripts run, the cause of a refused connection as moat names it.
runner() {
	case $1 in
	pnpm | pnpm10)
		RUN=(pnpm dlx) NAME="pnpm dlx" LABEL="pnpm dlx" SUB=pnpm FETCH='["dlx", "--package=moat-hello", "true"]'
		INSTALLED='cache/dlx/[0-9a-f]+/[^/]+/node_modules' SCRIPTS=() TOOL=pnpm
		CAUSE="pnpm: Connection refused \(os error 111\)"
		if [ "$1" = pnpm10 ]; then
			RUN=("$TOOLS/10/pnpm" dlx) LABEL="pnpm 10 dlx" CAUSE="pnpm: ERR_PNPM_META_FETCH_FAIL: connect ECONNREFUSED [0-9.:]+"
			# The same package list as pnpm 12's: the same cache, which
			# pnpm 12 filled.  Emptied, so that pnpm 10 fetches.
			rm -rf "$H/.cache/moat/pnpm"
		fi
		;;
	bun)
		RUN=(bunx) NAME=bunx LABEL=bunx SUB=bunx FETCH='["-p", "moat-hello", "true"]'
		INSTALLED='\.bunx-[0-9]+/moat-hello@latest/node_modules' SCRIPTS=(--trust) TOOL=bun
		CAUSE="bun: ConnectionRefused"
		;;
	esac
}

for r in pnpm pnpm10 bun; do
	runner "$r"
	# --- through both phases ------------------------------------------------------
	t0=$(date +%s%N)
	out=$(m --profile mcp --report "$REPORTS/$r-hello.json" -- "${RUN[@]}" moat-hello one two 2>"$SCRATCH/$r-hello.err")
	rc=$?
	t1=$(date +%s%N)
	is "$rc/$out" "0/moat-hello ran one two" "$LABEL moat-hello one two under --profile mcp: fetched, then run with its arguments"
	[ "$rc" = 0 ] || diag "$(tail -5 "$SCRATCH/$r-hello.err")"
	diag "$LABEL, first run (fetch and server phases): $(((t1 - t0) / 1000000)) ms"
	is "$(jx "$REPORTS/$r-hello.json" '[d["runner"]["name"], d["runner"]["phases"], d["runner"]["outcome"], d["runner"]["packages"], d["runner"]["version"]]')" \
		"[\"$NAME\", 2, \"fetched\", [\"moat-hello\"], \"1.0.0\"]" "  the report's runner: $NAME, two phases, fetched moat-hello 1.0.0"
	C=$(cache_of "$REPORTS/$r-hello.json")
	like "$C" "^$H/.cache/moat/$SUB/[0-9a-f]{16}$" "  into moat's own cache for this package (~/.cache/moat/$SUB/KEY)"
	is "$(jx "$REPORTS/$r-hello.json" '[d["fetch"]["status"], d["fetch"]["run"]["exit_code"], d["fetch"]["command"]["argv"][1:], d["fetch"]["profile"]]')" \
		"[\"enforced\", 0, $FETCH, \"strict\"]" "  the fetch phase: enforced, strict, $TOOL itself with \`true\` as the command, exit 0"
	is "$(jx "$REPORTS/$r-hello.json" '[d["fetch"]["properties"]["net.allow"]["status"], [e["text"] for e in d["fetch"]["network"]["allow"]]]')" \
		"[\"enforced\", [\"127.0.0.2:$PR\"]]" "  the fetch's network: the registry alone (@npm, from npm_config_registry), by the fence"
	is "$(jx "$REPORTS/$r-hello.json" '[p["path"] for p in d["fetch"]["filesystem"]["paths"] if p["access"] == "write" and not p["path"].startswith("/dev/")]')" \
		"[\"$C\"]" "  the fetch's only write grant is that cache (the store and the metadata in it)"
	is "$(jx "$REPORTS/$r-hello.json" '[p["path"] for p in d["fetch"]["filesystem"]["paths"] if p["access"] != "deny" and (p["path"] + "/").startswith(("'"$P/"'", "'"$H/"'")) and not p["path"].startswith("'"$C"'")]')" \
		'[]' "  and it is granted nothing else of the project or HOME"
	is "$(jx "$REPORTS/$r-hello.json" '"'"$H/.npm"'" in [p["path"] for p in d["filesystem"]["paths"] if p["access"] != "deny"]')" \
		true "  control: the server's policy (--profile mcp) does grant some of HOME (~/.npm read-only), seen the same way"
	is "$(jx "$REPORTS/$r-hello.json" '[d["status"], d["command"]["argv"][1:], d["properties"]["net.none"]["status"]]')" \
		'["enforced", ["one", "two"], "enforced"]' "  the server phase: enforced, with no network (net.none)"
	like "$(jx "$REPORTS/$r-hello.json" 'd["command"]["exe"]')" "^\"$C/$INSTALLED/.bin/moat-hello\"$" \
		"  and it runs the package's own command from the cache"
	valid_report "$REPORTS/$r-hello.json" "  the report, fetch included,"
	like "$(cat "$SCRATCH/$r-hello.err")" "^moat: $NAME: fetching moat-hello from $REG into $C " "  stderr says what is fetched, from where, into where"

	t0=$(date +%s%N)
	out=$(m --profile mcp --report "$REPORTS/$r-hello2.json" -- "${RUN[@]}" moat-hello again 2>"$SCRATCH/$r-hello2.err")
	rc=$?
	t1=$(date +%s%N)
	is "$rc/$out/$(jx "$REPORTS/$r-hello2.json" '[d["runner"]["outcome"], "fetch" in d]')/$(cat "$SCRATCH/$r-hello2.err")" \
		'0/moat-hello ran again/["cached", false]/' "  again: from the cache, without a fetch phase, silently ($(((t1 - t0) / 1000000)) ms)"

	out=$(m --profile mcp --report "$REPORTS/$r-scoped.json" -- "${RUN[@]}" @moat/scoped s 2>/dev/null)
	out2=$(m --profile mcp --report "$REPORTS/$r-scoped2.json" -- "${RUN[@]}" @moat/scoped t 2>/dev/null)
	is "$out/$out2/$(jx "$REPORTS/$r-scoped.json" 'd["runner"]["outcome"]')/$(jx "$REPORTS/$r-scoped2.json" '[d["runner"]["outcome"], d["runner"]["version"]]')" \
		'moat-scoped ran s/moat-scoped ran t/"fetched"/["cached", "2.0.0"]' "$LABEL @moat/scoped (a scoped package): fetched, then found in the cache"

	# --- the server phase: no network, the cache read-only ------------------------
	out=$(m --profile mcp --report "$REPORTS/$r-probe.json" -- "${RUN[@]}" moat-probe 2>"$SCRATCH/$r-probe.err")
	is "$out" '{"cache":"EROFS","net":"EAFNOSUPPORT"}' \
		"$LABEL moat-probe: the server phase cannot write its package (EROFS) nor open a socket (EAFNOSUPPORT)"
	[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/$r-probe.err")"
	out=$(m --profile mcp --net all --write "$(cache_of "$REPORTS/$r-probe.json")" -- "${RUN[@]}" moat-probe 2>/dev/null)
	is "$out" '{"cache":"written","net":"connected"}' "  control: with --net all and the cache granted writable, both work"

	# --- the fetch phase: nothing of the project or HOME, no other port -----------
	before=$(npm_registry_conns "$PO")
	out=$(m --profile mcp --report "$REPORTS/$r-evil.json" -- "${RUN[@]}" "${SCRIPTS[@]}" moat-evil 2>"$SCRATCH/$r-evil.err")
	[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/$r-evil.err")"
	npm_evil_checks "$LABEL ${SCRIPTS[*]} moat-evil" "$REPORTS/$r-evil.json" "$out" "$before"

	# --- failing fast ---------------------------------------------------------------
	npm_unreachable_checks "$LABEL" "$CAUSE" "$REPORTS/$r-down.json" \
		env npm_config_registry="http://127.0.0.2:$PC/" HOME="$H" "$MOAT" run --read "$TOOLS" --profile mcp \
		--report "$REPORTS/$r-down.json" -- "${RUN[@]}" moat-hello@1.0.0
	out=$(m --profile mcp -- "${RUN[@]}" moat-nothing-here 2>&1)
	rc=$?
	is "$rc" 127 "$LABEL of a package the registry does not have: exit 127"
	like "$out" "moat: the fetch phase: the registry $REG has no package moat-nothing-here \($TOOL: 404\)" "  saying so"

	# --- the dry run ------------------------------------------------------------------
	m --profile mcp --dry-run -- "${RUN[@]}" moat-probe@1.0.0 x >"$SCRATCH/$r-dry.json" 2>/dev/null
	is "$?/$(jx "$SCRATCH/$r-dry.json" '[d["runner"]["outcome"], d["fetch"]["policy"]["net"], "run" in d["fetch"]]')" \
		'0/["would fetch", "allow", false]' "$LABEL --dry-run: the fetch phase's plan"
	ok "$([ ! -e "$(cache_of "$SCRATCH/$r-dry.json")" ] && echo 0 || echo 1)" "  and makes nothing (no cache directory)"
done

# --- another project's registry is another cache ---------------------------------
# As for npx (runners.sh; red team 3, F1): project A's .npmrc names R2,
# another registry serving its own moat-hello; project B's registry is the
# one above.  B must not run what R2 served A.  A HOME of its own, so that
# each first run is a fetch.  R2 is on the host's loopback, which a
# project's .npmrc alone does not open (runners.sh): refused until the user
# allows it with --allow-net.
npm_two_projects
printf 'registry=%s\n' "$R2" >"$A/.npmrc"
for r in pnpm bun; do
	runner "$r"
	before=$(npm_registry_conns "$PR2")
	out=$(cd "$A" && HOME=$H2 "$MOAT" run --read "$TOOLS" --profile mcp -- "${RUN[@]}" moat-hello a 2>"$SCRATCH/f1-$r-a.err")
	rc=$?
	after=$(npm_registry_conns "$PR2")
	is "$rc/$out/$((after - before - 1))" "125//0" "$LABEL in project A, its .npmrc alone naming R2 on the host's loopback: refused, R2 saw no connection"
	like "$(head -1 "$SCRATCH/f1-$r-a.err")" "^moat: [a-z ]+: the registry to fetch moat-hello from: $A/\\.npmrc:1: registry=http://127\\.0\\.0\\.2:$PR2/: a registry at 127\\.0\\.0\\.2:$PR2 \\(127\\.0\\.0\\.0/8: the host's own loopback\\)" \
		"  naming the file, the setting and why"
	out=$(cd "$A" && HOME=$H2 "$MOAT" run --allow-net "127.0.0.2:$PR2" --read "$TOOLS" --profile mcp --report "$REPORTS/f1-$r-a.json" -- "${RUN[@]}" moat-hello a 2>"$SCRATCH/f1-$r-a.err")
	is "$?/$out/$(jx "$REPORTS/f1-$r-a.json" 'd["runner"]["outcome"]')" '0/R2 moat-hello ran a/"fetched"' \
		"  control: with --allow-net 127.0.0.2:$PR2, R2's moat-hello, fetched"
	[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/f1-$r-a.err")"
	out=$(cd "$B" && HOME=$H2 npm_config_registry=$REG "$MOAT" run --read "$TOOLS" --profile mcp --report "$REPORTS/f1-$r-b.json" -- "${RUN[@]}" moat-hello b 2>"$SCRATCH/f1-$r-b.err")
	is "$?/$out/$(jx "$REPORTS/f1-$r-b.json" 'd["runner"]["outcome"]')" '0/moat-hello ran b/"fetched"' \
		"  in project B, whose registry is another: not A's, fetched from its own"
	[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/f1-$r-b.err")"
	ok "$([ "$(cache_of "$REPORTS/f1-$r-b.json")" != "$(cache_of "$REPORTS/f1-$r-a.json")" ] && echo 0 || echo 1)" "  into another cache"
	out=$(cd "$B" && HOME=$H2 npm_config_registry=$REG "$MOAT" run --read "$TOOLS" --profile mcp --report "$REPORTS/f1-$r-b2.json" -- "${RUN[@]}" moat-hello b2 2>/dev/null)
	is "$?/$out/$(jx "$REPORTS/f1-$r-b2.json" 'd["runner"]["outcome"]')" '0/moat-hello ran b2/"cached"' "  control: B again: cached"
done
rm -f "$A/.npmrc"

# --- a link the fetch wrote that points out of the cache ------------------------
# The fetch phase writes the install, links included.  A command linked to a
# file in HOME would make that file's directory "the command's install dir",
# which the profile grants the server: moat takes such an install for none.
BC=$(cache_of "$REPORTS/bun-hello.json")
BIN=$(jx "$REPORTS/bun-hello.json" 'd["command"]["exe"]' | tr -d '"')
mkdir -p "$H/elsewhere"
cp "$(readlink -f "$BIN")" "$H/elsewhere/cli.js"
ln -sfn "$H/elsewhere/cli.js" "$BIN"
m --profile mcp --dry-run -- bunx moat-hello >"$SCRATCH/out-link.json" 2>/dev/null
is "$(jx "$SCRATCH/out-link.json" '[d["runner"]["outcome"], [p["path"] for p in d["filesystem"]["paths"] if "elsewhere" in p["path"]]]')" \
	'["would fetch", []]' "bunx: its cached command relinked to a file in HOME: not taken as installed (a fetch again), nothing of HOME granted"
m --profile mcp --read "$BC" --dry-run -- "$BIN" >"$SCRATCH/out-link-direct.json" 2>/dev/null
is "$(jx "$SCRATCH/out-link-direct.json" '[p["path"] for p in d["filesystem"]["paths"] if "elsewhere" in p["path"]]')" \
	"[\"$H/elsewhere\"]" "  control: that link run as the command (its cache granted): the profile grants where it points"
ln -sfn ../moat-hello/cli.js "$BIN"
is "$(m --profile mcp --dry-run -- bunx moat-hello 2>/dev/null | jx /dev/stdin 'd["runner"]["outcome"]')" '"cached"' \
	"  control: linked back into the cache, it is cached again"

# --- no fence: mode require refuses the fetch -----------------------------------
out=$(MOAT_HOST_LIMIT=netfence=0 m --profile mcp --mode require -- pnpm dlx moat-hello@1.0.0 2>&1)
is "$?" 125 "pnpm dlx where the network fence is missing (MOAT_HOST_LIMIT=netfence=0), mode require: 125 (control: every fetch above, with the fence)"
like "$out" "^moat: the fetch phase: cannot fetch moat-hello@1.0.0 in a sandbox of its own here: net.allow: " "  saying which property is missing"
like "$out" "^moat: hint: .*npm install --prefix DIR moat-hello@1.0.0., and .moat run --read DIR ... -- DIR/node_modules/.bin/COMMAND" \
	"  and how to install it to run from a directory instead"
# Mode prefer ran the fetch anyway, with the network closed: npm, pnpm or
# pip said only that the registry could not be reached (EAI_AGAIN), and the
# user went to debug a registry that works.  A fetch without its network is
# refused the same way.
out=$(MOAT_HOST_LIMIT=netfence=0 m --profile mcp --mode prefer -- pnpm dlx moat-hello@1.0.0 2>&1)
is "$?" 125 "  mode prefer: 125 too, the fetch not run without its network"
like "$out" "^moat: the fetch phase: cannot fetch moat-hello@1.0.0 in a sandbox of its own here: net.allow: " \
	"  saying that the network fence is missing"
unlike "$out" "could not be reached" "  not that the registry could not be reached"

# --- the other names, and one phase ---------------------------------------------
out=$(m --profile mcp --report "$REPORTS/pnpx.json" -- pnpx moat-hello via pnpx 2>/dev/null)
is "$?/$out/$(jx "$REPORTS/pnpx.json" '[d["runner"]["name"], d["runner"]["outcome"]]')" '0/moat-hello ran via pnpx/["pnpm dlx", "cached"]' \
	"pnpx moat-hello: pnpm dlx, from the same cache"
out=$(m --profile mcp --report "$REPORTS/bunx2.json" -- bun x moat-hello via bun x 2>/dev/null)
is "$?/$out/$(jx "$REPORTS/bunx2.json" '[d["runner"]["name"], d["runner"]["outcome"]]')" '0/moat-hello ran via bun x/["bunx", "cached"]' \
	"bun x moat-hello: bunx, from the same cache"
out=$(m --profile mcp --dry-run -- pnpm dlx --frobnicate moat-hello 2>&1 >"$SCRATCH/unknown.json")
like "$out" "^moat: pnpm dlx: moat does not know the option --frobnicate" "an option moat does not know: said on stderr"
is "$(jx "$SCRATCH/unknown.json" '[d["runner"]["phases"], d["runner"]["outcome"], "fetch" in d]')" '[1, "as written", false]' \
	"  and the report: one phase, as written"
out=$(m --profile mcp --dry-run -- bunx --bun moat-hello 2>&1 >/dev/null)
like "$out" "^moat: bunx --bun runs the package with bun itself" "bunx --bun: as written, saying why"

# --- pnpm install: the store in moat's package cache ---------------------------
# Not a runner: `pnpm install` in a project under the network profile.  pnpm
# keeps its store in ~/.local/share/pnpm/store, which the sandbox cannot
# write; moat's package cache gives it one of the project's (docs/policy.md,
# "Package caches"), named under both prefixes: pnpm 10 reads
# npm_config_store_dir, pnpm 11 and later pnpm_config_store_dir only.
for v in 12 10; do
	P2=$SCRATCH/install-$v
	mkdir -p "$P2"
	echo '{"name": "install-'"$v"'", "version": "1.0.0", "dependencies": {"moat-hello": "1.0.0"}}' >"$P2/package.json"
	chmod 0777 "$P2"
	PNPM=pnpm
	[ "$v" = 10 ] && PNPM=$TOOLS/10/pnpm
	out=$(cd "$P2" && HOME=$H "$MOAT" run --read "$TOOLS" --env npm_config_registry=$REG --env pnpm_config_registry=$REG \
		--profile network --write "$P2" --report "$REPORTS/install-$v.json" -- "$PNPM" install 2>&1)
	rc=$?
	is "$rc/$(cat "$P2/node_modules/moat-hello/package.json" 2>/dev/null | jx /dev/stdin 'd["name"]')" '0/"moat-hello"' \
		"pnpm $v install under --profile network --write .: moat-hello installed"
	[ "$rc" = 0 ] || diag "$(printf "%s" "$out" | tail -5)"
	store=$(jx "$REPORTS/install-$v.json" '[c["path"] for c in d["environment"]["package_caches"] if c["tool"] == "pnpm"][0]' | tr -d '"')
	ok "$([ -n "$store" ] && [ -n "$(find "$store" -mindepth 1 -print -quit 2>/dev/null)" ] && echo 0 || echo 1)" \
		"  pnpm's store is moat's cache of the project ($store), filled"
	ok "$([ ! -e "$H/.local/share/pnpm/store" ] && echo 0 || echo 1)" "  and nothing is written to ~/.local/share/pnpm/store"
done
# The control: the user's own store is what the sandbox cannot write (pnpm
# told to use it retries for over a minute before it gives up).
out=$(cd "$P2" && HOME=$H "$MOAT" run --profile network --write "$P2" -- /bin/sh -c 'mkdir -p "$HOME/.local/share/pnpm/store"' 2>&1)
ok "$([ $? != 0 ] && [ ! -e "$H/.local/share/pnpm/store" ] && echo 0 || echo 1)" \
	"control: under the same policy, pnpm's default store ~/.local/share/pnpm/store cannot be made"
rm -rf "$H/.local"

cd "$SCRATCH" || exit 1
done_testing
