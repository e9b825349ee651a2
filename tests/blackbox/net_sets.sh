#!/usr/bin/env bash
# Destination sets (--allow-net @npm; sources/netsets.h) through the real
# binary.  A HOME made here holds an .npmrc whose registry is
# http://reg.test:P1/ (and an auth token that must never come out): the dry
# run lists reg.test:P1 with where it came from, from the flag and from a
# config file; unknown sets and a malformed npmrc are refused with their
# place.  Then a real run through the native backend's fence: an HTTP
# server on the host's 127.0.0.2:P1 is reached by curl under --allow-net
# @npm --resolve reg.test=127.0.0.2, while the same server on another port
# (P2) and under another name is refused -- each refusal with its control
# (--net all reaches it).  Only loopback addresses; runs as root and as uid
# 65534.
set -u
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/npmregistry.sh"
scratch
unset MOAT_HOST_LIMIT PREFIX DESTDIR
# The runner's own npm settings must not decide the test.
npm_unset_config
PY=/usr/bin/python3
HELPER_DIR=$(dirname "$HELPER")
cd "$SCRATCH"
j() { json_get "$@" 2>/dev/null; }
jx() { json_eval "$@" 2>/dev/null; }

# --- the registry: the npm registry double (tests/lib/npmregistry.py) ---------
# On 127.0.0.2: the registry on P1, serving one npm package, moat-hello, for
# npx; another HTTP service on P2.
cat >"$SCRATCH/packages.json" <<'EOF'
[{"name": "moat-hello", "version": "1.0.0", "bin": {"moat-hello": "cli.js"},
  "files": {"cli.js": "#!/usr/bin/env node\nconsole.log('moat-hello ran');\n"}}]
EOF
start_npm_registry "$SCRATCH/packages.json"
P1=$PR
P2=$PO
is "$(curl -sS -m 5 "http://127.0.0.2:$P1/")/$(curl -sS -m 5 "http://127.0.0.2:$P2/")" \
	"hello from 127.0.0.2:$P1/hello from 127.0.0.2:$P2" "control: the registry answers on both ports without moat"

H=$SCRATCH/home
mkdir -p "$H" "$SCRATCH/work"
printf '; the test registry\n//reg.test:%s/:_authToken=npm_SECRET_TOKEN_42\nregistry=http://reg.test:%s/\n' "$P1" "$P1" >"$H/.npmrc"
chmod 0600 "$H/.npmrc"
cd "$SCRATCH/work"
m() { HOME=$H "$MOAT" "$@"; }
# NO_PROXY=*: the transparent fence alone -- proxy-aware clients (curl, git,
# npm, Python) would otherwise go through moat's proxy mode (net_proxy.sh).
BASE=(--profile strict --read "$HELPER_DIR" --env 'NO_PROXY=*' --env 'no_proxy=*')

# --- the dry run lists the set's entries, with where they came from ----------
m run "${BASE[@]}" --dry-run --allow-net @npm -- /bin/true >"$SCRATCH/dry.json" 2>"$SCRATCH/dry.err"
is "$?" 0 "--dry-run --allow-net @npm"
is "$(jx "$SCRATCH/dry.json" '[[e["text"], e["kind"], e["name"], e["ports"], e["from"], e["origin"]] for e in d["policy"]["net_allow"] if e["name"] == "reg.test"]')" \
	"[[\"reg.test:$P1\", \"name\", \"reg.test\", [$P1], \"@npm ($H/.npmrc:3)\", {\"source\": \"command line\"}]]" \
	"  policy.net_allow lists reg.test:$P1, from ~/.npmrc's line 3, named on the command line"
is "$(jx "$SCRATCH/dry.json" '[e["text"] for e in d["policy"]["net_allow"] if e["text"].startswith("registry.npmjs.org")]')" "[]" \
	"  the registry replaces npm's default (registry.npmjs.org is not there)"
is "$(j "$SCRATCH/dry.json" '["policy"]["net"]')" allow "  a set means net allow"
valid_report "$SCRATCH/dry.json" "  the dry run fits the schema"
like "$(cat "$SCRATCH/dry.err")" "^moat: @npm: $H/.npmrc names a registry, but the sandbox keeps that file from the command" \
	"  stderr notes that the command's npm cannot read ~/.npmrc"
unlike "$(cat "$SCRATCH/dry.json" "$SCRATCH/dry.err")" "SECRET_TOKEN" "  the token in the npmrc is nowhere in the output"

cat >"$SCRATCH/moat.toml" <<'EOF'
[sandbox]
profile = "strict"
network.allow = ["@npm", "@crates"]
EOF
m run --config "$SCRATCH/moat.toml" --dry-run -- /bin/true >"$SCRATCH/cfg.json" 2>/dev/null
is "$?" 0 "network.allow = [\"@npm\", \"@crates\"] in a config file"
is "$(jx "$SCRATCH/cfg.json" '[[e["text"], e["from"], e["origin"]] for e in d["policy"]["net_allow"]]')" \
	"[[\"reg.test:$P1\", \"@npm ($H/.npmrc:3)\", {\"col\": 18, \"line\": 3, \"source\": \"$SCRATCH/moat.toml\"}], [\"index.crates.io:443\", \"@crates (crates.io's sparse index)\", {\"col\": 26, \"line\": 3, \"source\": \"$SCRATCH/moat.toml\"}], [\"static.crates.io:443\", \"@crates (crates.io's downloads)\", {\"col\": 26, \"line\": 3, \"source\": \"$SCRATCH/moat.toml\"}], [\"crates.io:443\", \"@crates (crates.io's API)\", {\"col\": 26, \"line\": 3, \"source\": \"$SCRATCH/moat.toml\"}]]" \
	"  each entry with its set's file:line:col and where the set found it"
valid_report "$SCRATCH/cfg.json" "  and fits the schema"

# --- refusals, each with its control ------------------------------------------
m run "${BASE[@]}" --dry-run --allow-net @nmp -- /bin/true >/dev/null 2>"$SCRATCH/e1"
is "$?" 125 "--allow-net @nmp: refused (125)"
is "$(cat "$SCRATCH/e1")" "moat: --allow-net @nmp: no destination set named \"@nmp\"
moat: hint: did you mean @npm? the sets are @npm, @pypi, @crates, @go and @registries (all four)" \
	"  naming it, with a did-you-mean and the sets"
printf '[sandbox]\nnetwork.allow = ["@nmp"]\n' >"$SCRATCH/bad.toml"
m run --config "$SCRATCH/bad.toml" --dry-run -- /bin/true >/dev/null 2>"$SCRATCH/e2"
is "$?" 125 "network.allow = [\"@nmp\"] in a config: refused (125)"
like "$(cat "$SCRATCH/e2")" "^moat: $SCRATCH/bad.toml:2:18: sandbox.network.allow: no destination set named \"@nmp\"" \
	"  at its file:line:col"
printf '[sandbox]\nnetwork.allow = ["@npm"]\n' >"$SCRATCH/good.toml"
m run --config "$SCRATCH/good.toml" --dry-run -- /bin/true >/dev/null 2>&1
is "$?" 0 "  control: \"@npm\" there is accepted"

cp "$H/.npmrc" "$SCRATCH/npmrc.good"
printf '//reg.test/:_authToken=npm_SECRET_TOKEN_42\n@corp:registry=https://user:npm_SECRET_TOKEN_42@corp.test:99999/\n' >>"$H/.npmrc"
m run "${BASE[@]}" --dry-run --allow-net @npm -- /bin/true >"$SCRATCH/e3.out" 2>"$SCRATCH/e3"
is "$?" 125 "a malformed registry URL in ~/.npmrc: refused (125)"
is "$(cat "$SCRATCH/e3")" "moat: --allow-net @npm: $H/.npmrc:5: @corp:registry: the URL's port is not a number 1-65535
moat: hint: correct it there, or allow the host with --allow-net HOST:PORT instead of @npm" \
	"  naming the file, the line and the key, with a hint"
unlike "$(cat "$SCRATCH/e3" "$SCRATCH/e3.out")" "SECRET_TOKEN" "  and no token, not even the one inside the URL"
m run --config "$SCRATCH/good.toml" --dry-run -- /bin/true >/dev/null 2>"$SCRATCH/e4"
like "$(cat "$SCRATCH/e4")" "^moat: $SCRATCH/good.toml:2:18: sandbox.network.allow: @npm: $H/.npmrc:5: @corp:registry: " \
	"  from a config, the config's place first"
cp "$SCRATCH/npmrc.good" "$H/.npmrc"
m run "${BASE[@]}" --dry-run --allow-net @npm -- /bin/true >/dev/null 2>&1
is "$?" 0 "  control: the npmrc without that line is accepted"

# --- a project's .npmrc with thousands of scoped registries ---------------------
# Each new scope was compared with every one before it (and again as a
# destination): 28000 lines of a cloned repository's .npmrc, within the
# 1 MiB a file may hold, kept moat busy 10 s before the command started.
# More than 1000 in one npmrc: refused at the first one past, at once.
MS=$SCRATCH/manyscopes
mkdir -p "$MS"
seq 1 28000 | sed "s|.*|@s&:registry=http://r.t:$P1/|" >"$MS/.npmrc"
t0=$(date +%s%N)
(cd "$MS" && m run "${BASE[@]}" --dry-run --allow-net @npm -- /bin/true >/dev/null 2>"$SCRATCH/e5")
rc=$? t1=$(date +%s%N)
is "$rc" 125 "a project's .npmrc with 28000 scoped registries: refused (125)"
is "$(head -1 "$SCRATCH/e5")" "moat: --allow-net @npm: $MS/.npmrc:1001: more than 1000 scoped registries (@scope:registry): the most moat reads from one npmrc or environment" \
	"  naming the file and the line of the first one past"
ok "$([ $(((t1 - t0) / 1000000)) -lt 3000 ] && echo 0 || echo 1)" "  within 3 s ($(((t1 - t0) / 1000000)) ms)"
sed -i '1001,$d' "$MS/.npmrc"
(cd "$MS" && m run "${BASE[@]}" --dry-run --allow-net @npm -- /bin/true >/dev/null 2>&1)
is "$?" 0 "  control: 1000 of them are read"

# --- a project's pip.conf with tens of thousands of entries -------------------
# A virtualenv's pip.conf ($VIRTUAL_ENV/pip.conf: a project's .venv) naming
# 40000 index URLs (700 KB, within the 1 MiB a file may hold) kept moat
# busy 8 s of CPU before the command started: each new destination of a set
# was compared with every one before it (add_entry's dedupe, npm's too),
# each section.key of the file with every one before it (90000 keys: 10 s).  Now by a map
# (util/strmap.h).  Measured as CPU time, not wall: a loaded CI machine
# waits without working.  The bound is generous (about 1 s here).
PV=$SCRATCH/pipproj/.venv
mkdir -p "$PV"
cpu_ms() { # cpu_ms OUT ERR CMD...: run CMD, its CPU time (user+sys) in ms on stdout; its status is the function's
	local out=$1 err=$2 t rc
	shift 2
	t=$( { TIMEFORMAT='%3U %3S'; time "$@" >"$out" 2>"$err"; } 2>&1 )
	rc=$?
	awk '{printf "%d\n", ($1 + $2) * 1000}' <<<"$t"
	return "$rc"
}
$PY -c 'print("[global]\nextra-index-url = " + " ".join("http://i%d.t/" % i for i in range(40000)))' >"$PV/pip.conf"
ms=$(cd "$SCRATCH/pipproj" && VIRTUAL_ENV=$PV cpu_ms "$SCRATCH/pip40k.json" "$SCRATCH/pip40k.err" \
	m run "${BASE[@]}" --dry-run --allow-net @pypi -- /bin/true)
is "$?/$(jx "$SCRATCH/pip40k.json" 'len([e for e in d["policy"]["net_allow"] if e.get("from", "").startswith("@pypi (")])')" "0/40002" \
	"a project's pip.conf naming 40000 index URLs: read, each an entry (and pypi.org with its files host)"
ok "$([ "$ms" -lt 3000 ] && echo 0 || echo 1)" "  within 3 s of CPU ($ms ms)"
$PY -c 'print("[global]\n" + "\n".join("k%d = v" % i for i in range(90000)) + "\n[global]")' >"$PV/pip.conf"
ms=$(cd "$SCRATCH/pipproj" && VIRTUAL_ENV=$PV cpu_ms /dev/null "$SCRATCH/pipkeys.err" \
	m run "${BASE[@]}" --dry-run --allow-net @pypi -- /bin/true)
is "$?/$(head -1 "$SCRATCH/pipkeys.err")" "125/moat: --allow-net @pypi: $PV/pip.conf:90002: a section given twice" \
	"a project's pip.conf of 90000 keys (980 KB) and a repeated section: refused at the repeat, as pip refuses it"
ok "$([ "$ms" -lt 3000 ] && echo 0 || echo 1)" "  within 3 s of CPU ($ms ms)"
# npm's scopes: at most 1000 (above), each line a lookup: 30000 lines
# (900 KB) naming them over and over.
seq 0 29999 | awk '{printf "@s%d:registry=http://r%d.t/\n", $1 % 1000, $1 % 1000}' >"$MS/.npmrc"
ms=$(cd "$MS" && cpu_ms "$SCRATCH/npm40k.json" /dev/null m run "${BASE[@]}" --dry-run --allow-net @npm -- /bin/true)
is "$?/$(jx "$SCRATCH/npm40k.json" 'len([e for e in d["policy"]["net_allow"] if e.get("from", "").startswith("@npm (")])')" "0/1001" \
	"a project's .npmrc of 30000 lines over 1000 scopes: read, each scope once (and the user's registry)"
ok "$([ "$ms" -lt 3000 ] && echo 0 || echo 1)" "  within 3 s of CPU ($ms ms)"

# --- a registry a project's .npmrc names in a private range --------------------
# A cloned repository's .npmrc chooses npm's registries, not what on the
# user's host or network @npm opens: a registry it names on the host's
# loopback, link-local (the cloud's metadata endpoint), a private network or
# the unspecified address is refused, with the way to allow it.  The same
# value in a user-level npmrc (npm_config_userconfig, ~/.npmrc) is the
# user's and stays allowed.
CL=$SCRATCH/cloned
mkdir -p "$CL"
echo '{}' >"$CL/package.json"
for v in "http://127.0.0.1:$P1/|127.0.0.1:$P1 (127.0.0.0/8: the host's own loopback)" \
	"http://169.254.169.254/latest/|169.254.169.254:80 (169.254.0.0/16: link-local, where the cloud's metadata endpoint is)" \
	"http://[::1]:$P1/|[::1]:$P1 (::1/128: the host's own loopback)" \
	"http://10.1.2.3/|10.1.2.3:80 (10.0.0.0/8: a private or reserved range)" \
	"http://100.64.0.1/|100.64.0.1:80 (100.64.0.0/10: a private or reserved range)" \
	"http://[fe80::1]/|[fe80::1]:80 (fe80::/10: link-local, where the cloud's metadata endpoint is)" \
	"http://0.0.0.0:$P1/|0.0.0.0:$P1 (0.0.0.0/8: the unspecified address: this host)" \
	"http://127.1:$P1/|127.0.0.1:$P1 (127.0.0.0/8: the host's own loopback)" \
	"http://2130706433:$P1/|127.0.0.1:$P1 (127.0.0.0/8: the host's own loopback)" \
	"http://[::ffff:a9fe:a9fe]/|[::ffff:a9fe:a9fe]:80 (169.254.0.0/16: link-local, where the cloud's metadata endpoint is)" \
	"http://LocalHost.:$P1/|LocalHost.:$P1 (localhost: the host's own loopback)"; do
	url=${v%%|*}
	printf '; cloned\n@corp:registry=%s\n' "$url" >"$CL/.npmrc"
	(cd "$CL" && m run "${BASE[@]}" --dry-run --allow-net @npm -- /bin/true) >/dev/null 2>"$SCRATCH/cl.err"
	is "$?/$(head -1 "$SCRATCH/cl.err")" \
		"125/moat: $CL/.npmrc:2: @corp:registry=$url: a registry at ${v#*|}: a file of the project (a repository you may just have cloned) does not open @npm to this host, its network or the cloud's metadata endpoint" \
		"@corp:registry=$url in a project's .npmrc: --allow-net @npm refused, naming the file, the line, the setting and why"
	printf '@corp:registry=%s\n' "$url" >"$SCRATCH/user-npmrc"
	(cd "$SCRATCH/work" && npm_config_userconfig=$SCRATCH/user-npmrc m run "${BASE[@]}" --dry-run --allow-net @npm -- /bin/true) \
		>"$SCRATCH/cl.json" 2>/dev/null
	is "$?/$(jx "$SCRATCH/cl.json" '[e["from"] for e in d["policy"]["net_allow"] if e["from"] != "@npm (default registry)"]')" \
		"0/[\"@npm ($SCRATCH/user-npmrc:1)\"]" "  control: the same in the user's npmrc (npm_config_userconfig): allowed"
done
like "$(sed -n 2p "$SCRATCH/cl.err")" "^moat: hint: if you trust that registry, allow it yourself: --allow-net LocalHost\\.:$P1 \\(config network\\.allow\\), or name it in ~/\\.npmrc; otherwise remove that line$" \
	"  the hint: how the user allows it"
# A project's userconfig= names a file of the project's choosing: as the project's own.
printf 'userconfig=./npmrc.user\n' >"$CL/.npmrc"
printf 'registry=http://127.0.0.1:%s/\n' "$P1" >"$CL/npmrc.user"
(cd "$CL" && m run "${BASE[@]}" --dry-run --allow-net @npm -- /bin/true) >/dev/null 2>"$SCRATCH/cl.err"
is "$?/$(head -1 "$SCRATCH/cl.err" | cut -d: -f1-4)" "125/moat: $CL/npmrc.user:1: registry=http" \
	"a user file the project's .npmrc names (userconfig=): as the project's, refused"
rm -f "$CL/npmrc.user"
# An npm the project carries, found on PATH (direnv's `layout node` puts
# node_modules/.bin there): its builtin npmrc is the repository's too, not
# the user's.  Control: the same npm outside the project is the user's.
rm -f "$CL/.npmrc"
for where in "$CL" "$SCRATCH/tools"; do
	mkdir -p "$where/node_modules/npm/bin" "$where/node_modules/.bin"
	printf '#!/bin/sh\n' >"$where/node_modules/npm/bin/npm-cli.js"
	chmod +x "$where/node_modules/npm/bin/npm-cli.js"
	ln -sf ../npm/bin/npm-cli.js "$where/node_modules/.bin/npm"
	printf '@corp:registry=http://169.254.169.254/\n' >"$where/node_modules/npm/npmrc"
done
(cd "$CL" && PATH="$CL/node_modules/.bin:$PATH" m run "${BASE[@]}" --dry-run --allow-net @npm -- /bin/true) >/dev/null 2>"$SCRATCH/cl.err"
is "$?/$(head -1 "$SCRATCH/cl.err" | cut -d: -f1-3)" "125/moat: $CL/node_modules/npm/npmrc:1" \
	"the builtin npmrc of an npm in the project (on PATH): as the project's, refused"
(cd "$CL" && PATH="$SCRATCH/tools/node_modules/.bin:$PATH" m run "${BASE[@]}" --dry-run --allow-net @npm -- /bin/true) >/dev/null 2>&1
is "$?" 0 "  control: the same npm outside the project is the user's: allowed"
rm -rf "$CL/node_modules" "$SCRATCH/tools"
# The user allows it: an entry of his for the address and port, or the same
# registry in his own npmrc (though the project's wins in npm's order).
printf 'registry=http://127.0.0.1:%s/\n' "$P1" >"$CL/.npmrc"
(cd "$CL" && m run "${BASE[@]}" --dry-run --allow-net @npm --allow-net "127.0.0.1:$P1" -- /bin/true) >"$SCRATCH/cl.json" 2>/dev/null
is "$?/$(jx "$SCRATCH/cl.json" '[[e["text"], e.get("from")] for e in d["policy"]["net_allow"]]')" \
	"0/[[\"127.0.0.1:$P1\", \"@npm ($CL/.npmrc:1)\"], [\"127.0.0.1:$P1\", null]]" \
	"  control: with --allow-net 127.0.0.1:$P1 (given after @npm) the project's registry is allowed"
(cd "$CL" && m run "${BASE[@]}" --dry-run --allow-net @npm --allow-net "127.0.0.1:$((P1 + 1))" -- /bin/true) >/dev/null 2>&1
is "$?" 125 "  but not with an entry for another port"
printf 'registry=http://127.0.0.1:%s/\n' "$P1" >"$SCRATCH/user-npmrc"
(cd "$CL" && npm_config_userconfig=$SCRATCH/user-npmrc m run "${BASE[@]}" --dry-run --allow-net @npm -- /bin/true) >"$SCRATCH/cl.json" 2>/dev/null
is "$?/$(jx "$SCRATCH/cl.json" '[e["from"] for e in d["policy"]["net_allow"]]')" "0/[\"@npm ($CL/.npmrc:1)\"]" \
	"  control: with the same registry in the user's npmrc, allowed"
(cd "$CL" && m run "${BASE[@]}" --mode off --dry-run --allow-net @npm -- /bin/true) >/dev/null 2>&1
is "$?" 0 "  mode off (nothing enforced): not checked"
printf 'registry=https://npm.corp.example/\n' >"$CL/.npmrc"
(cd "$CL" && m run "${BASE[@]}" --dry-run --allow-net @npm -- /bin/true) >/dev/null 2>&1
is "$?" 0 "  a registry the project names by a public name: allowed (what it resolves to meets the DNS-rebinding rule, net_rebind.sh)"

# --- through the fence ----------------------------------------------------------
if ! m run --dry-run --mode prefer --allow-net x.test -- /bin/true 2>/dev/null |
	"$PY" -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["properties"]["net.allow"]["status"] == "enforced" else 1)'; then
	skip_feature netfence "the native backend has no fence on this host (moat probe says why)"
	done_testing
	exit 0
fi
A=("${BASE[@]}" --allow-net @npm --resolve reg.test=127.0.0.2)
run() { m run "${A[@]}" "$@" 2>>"$SCRATCH/stderr"; }
open_run() { m run "${BASE[@]}" --net all "$@" 2>>"$SCRATCH/stderr"; }

out=$(run --report "$REPORTS/r.json" -- curl -sS -m 10 "http://reg.test:$P1/")
is "$out" "hello from 127.0.0.2:$P1" "curl reaches the registry ~/.npmrc names, under --allow-net @npm"
is "$(j "$REPORTS/r.json" '["status"]')/$(j "$REPORTS/r.json" '["properties"]["net.allow"]["status"]')" "enforced/enforced" \
	"  net.allow enforced by the fence"
is "$(jx "$REPORTS/r.json" '[e["from"] for e in d["network"]["allow"]]')" "[\"@npm ($H/.npmrc:3)\"]" \
	"  the report's network.allow says where the entry came from"
valid_report "$REPORTS/r.json" "  and fits the schema"
unlike "$(cat "$REPORTS/r.json")" "SECRET_TOKEN" "  no token in the report"
out=$(m run "${BASE[@]}" --allow-net 127.0.0.3:1 -- curl -sS -m 10 "http://reg.test:$P1/" 2>/dev/null)
is "$?/$out" "6/" "  control: without @npm the same curl cannot even resolve reg.test (exit 6)"

run -- curl -sS -m 10 -o /dev/null "http://reg.test:$P2/"
is "$?" 7 "the same server on another port ($P2): curl cannot connect (exit 7)"
out=$(open_run -- curl -sS -m 10 --resolve "reg.test:$P2:127.0.0.2" "http://reg.test:$P2/")
is "$out" "hello from 127.0.0.2:$P2" "  control: with --net all it answers"
run -- curl -sS -m 10 -o /dev/null "http://other.test:$P1/"
is "$?" 6 "another name: the fenced DNS does not know it (curl exit 6)"
run -- curl -sS -m 10 -o /dev/null --resolve "other.test:$P1:127.0.0.2" "http://other.test:$P1/"
is "$?" 7 "  and with its address given to curl, the connect is refused (exit 7)"
out=$(open_run -- curl -sS -m 10 --resolve "other.test:$P1:127.0.0.2" "http://other.test:$P1/")
is "$out" "hello from 127.0.0.2:$P1" "  control: with --net all the same curl reaches it"

# A registry on the host's loopback that a project's .npmrc names: the run is
# refused, and the listener there sees no connection; the user's own entry
# for it, or the same registry in his npmrc, lets the same curl reach it.
printf 'registry=http://127.0.0.2:%s/\n' "$P1" >"$CL/.npmrc"
before=$(npm_registry_conns "$P1")
out=$(cd "$CL" && m run "${BASE[@]}" --allow-net @npm -- curl -sS -m 10 "http://127.0.0.2:$P1/" 2>/dev/null)
rc=$?
after=$(npm_registry_conns "$P1")
is "$rc/$out/$((after - before - 1))" "125//0" \
	"a project's .npmrc naming 127.0.0.2:$P1, under --allow-net @npm: refused, the listener there reached by no one"
out=$(cd "$CL" && m run "${BASE[@]}" --allow-net @npm --allow-net "127.0.0.2:$P1" -- curl -sS -m 10 "http://127.0.0.2:$P1/" 2>/dev/null)
is "$out" "hello from 127.0.0.2:$P1" "  control: with the user's --allow-net 127.0.0.2:$P1 curl reaches it"
printf 'registry=http://127.0.0.2:%s/\n' "$P1" >"$SCRATCH/user-npmrc"
rm -f "$CL/.npmrc"
out=$(cd "$CL" && npm_config_userconfig=$SCRATCH/user-npmrc m run "${BASE[@]}" --allow-net @npm -- curl -sS -m 10 "http://127.0.0.2:$P1/" 2>/dev/null)
is "$out" "hello from 127.0.0.2:$P1" "  control: the same registry in the user's npmrc (npm_config_userconfig): curl reaches it under --allow-net @npm alone"

# --- npx -y fetches its package from the registry @npm allows -----------------
# A project whose .npmrc names the registry (the project's .npmrc is one
# the command's npm reads); npm's cache in the sandbox's private /tmp.
mkdir -p "$SCRATCH/proj"
echo '{}' >"$SCRATCH/proj/package.json"
printf 'registry=http://reg.test:%s/\n' "$P1" >"$SCRATCH/proj/.npmrc"
cd "$SCRATCH/proj"
# (npm's noproxy takes names, not '*'.)
NPX=(--profile exec --env npm_config_cache=/tmp/npm-cache --env npm_config_update_notifier=false
	--env npm_config_fetch_retries=0 --env npm_config_fetch_timeout=10000 --env NO_PROXY=reg.test --env no_proxy=reg.test)
# Through sh: npm itself then fetches under this policy (a bare `npx -y`
# moat splits in a fetch phase and a server phase of their own: runners.sh).
out=$(m run "${NPX[@]}" --allow-net @npm --resolve reg.test=127.0.0.2 --report "$REPORTS/npx.json" -- \
	sh -c 'exec npx -y moat-hello' 2>"$SCRATCH/npx.err")
is "$out" "moat-hello ran" "npx -y moat-hello under --allow-net @npm: npm fetches the package from the project's registry, and runs it"
[ "$out" = "moat-hello ran" ] || diag "$(tail -5 "$SCRATCH/npx.err")"
is "$(jx "$REPORTS/npx.json" '[[e["text"], e["from"]] for e in d["network"]["allow"]]')" \
	"[[\"reg.test:$P1\", \"@npm ($SCRATCH/proj/.npmrc:1)\"]]" "  the entry came from the project's .npmrc (over ~/.npmrc)"
out=$(m run "${NPX[@]}" --allow-net @pypi -- sh -c 'exec npx -y moat-hello' 2>&1)
like "$out" "ENOTFOUND reg.test" "  control: under --allow-net @pypi npx cannot fetch it (reg.test: ENOTFOUND)"
cd "$SCRATCH/work"
done_testing
