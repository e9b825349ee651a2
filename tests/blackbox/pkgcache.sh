#!/usr/bin/env bash
# Package managers get a cache of their own (issue 20, item 4): when the
# command can reach a network, npm, pip, uv, yarn, Go and cargo are pointed
# at directories of moat's (sources/pkgcache.h), writable, while the user's
# own caches stay unwritable, so a sandboxed install cannot poison what the
# user later runs outside.  In a fake HOME:
#
#   - `npm install ./local-pkg-1.0.0.tgz` (packed here by npm pack: no
#     registry) under --profile network --write . succeeds, its cache lands
#     in moat's directory and ~/.npm is untouched; a write to ~/.npm from
#     inside fails, and succeeds under --mode off (the control);
#   - the variables inside (env) and in the dry run's policy.package_caches,
#     the grants' origin; exec with and without a network, strict with one;
#     an explicit --env npm_config_cache or a --write of ~/.npm wins;
#   - pip: its cache directory is moat's, and a local wheel installs with
#     --no-index (skipped, with the reason, without pip);
#   - a symlink planted at moat's cache directory (into ~/.ssh) is refused,
#     never followed, and a mode open to others too; the run works again
#     once it is gone (the control); npx's cache (~/.cache/moat/npx) alike;
#   - without a usable HOME (uid 65534's HOME=/nonexistent) the caches are
#     /tmp/moat-pkg-UID/TOOL, 0700, said in a note, and npm installs there;
#   - another user's HOME given to root's moat (`su` keeps it), with their
#     ~/.cache a link to a directory of root's: root's moat followed it and
#     made its caches there, root's, granted writable (and npx's cache).
#     Now nothing is made through another user's directory or link: the
#     caches are /tmp/moat-pkg-0, said in a note, and npx is refused, naming
#     the directory.  Control: a HOME of root's gets its caches.  (Root
#     only: uid 65534 cannot make another user's directory.)
#
# Runs as root, as uid 65534 and with the sanitizer moat (tests/run-all).
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
unset MOAT_HOST_LIMIT XDG_CACHE_HOME
# Outside /tmp: the sandbox's /tmp is its own.
BASE=$(mktemp -d /var/tmp/moat-pkgcache.XXXXXX)
chmod 0755 "$BASE"
trap 'rm -rf "$SCRATCH" "$REPORTS" "$BASE"' EXIT
H=$BASE/home
P=$BASE/proj
# One set of caches per project (its git work tree, else the directory moat
# runs in): the directory's name and 12 hex digits of its path's SHA-256.
projkey() { printf '%s-%s' "$(basename "$1" | tr -c 'A-Za-z0-9._\n-' '_')" "$(printf '%s' "$1" | sha256sum | cut -c1-12)"; }
PK=$(projkey "$P")
C=$H/.cache/moat/pkg/$PK
mkdir -p "$H/.npm" "$H/.ssh" "$P" "$BASE/lp"
echo canary >"$H/.npm/canary"
echo key >"$H/.ssh/id_ed25519"
export HOME=$H
export npm_config_update_notifier=false npm_config_audit=false npm_config_fund=false
cd "$P" || exit 1

# A tiny package, packed by npm with a cache outside HOME (the fixture must
# not touch ~/.npm).
printf '{"name":"local-pkg","version":"1.0.0","main":"index.js"}\n' >"$BASE/lp/package.json"
echo 'module.exports = 42;' >"$BASE/lp/index.js"
(cd "$BASE/lp" && npm_config_cache=$BASE/packcache npm pack --silent --pack-destination "$P" >/dev/null 2>&1)
ok $? "fixture: npm pack made local-pkg-1.0.0.tgz"
npm_home() { find "$H/.npm" | sort | tr '\n' ' '; }
before=$(npm_home)

# ------------------------------------------- npm install under the network profile
out=$("$MOAT" run --profile network --write . --report "$REPORTS/npm.json" -- \
	npm install --no-audit --no-fund ./local-pkg-1.0.0.tgz 2>&1)
rc=$?
is "$rc" 0 "network --write .: npm install ./local-pkg-1.0.0.tgz succeeds"
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | head -20 | sed 's/^/#   /'
[ -f "$P/node_modules/local-pkg/index.js" ]
ok $? "  the package is in ./node_modules"
[ -d "$C/npm/_cacache" ]
ok $? "  npm's cache is moat's ($C/npm/_cacache)"
is "$(npm_home)" "$before" "  ~/.npm is untouched (only the canary)"
is "$(stat -c %a "$C" "$C/npm" | tr '\n' ' ')" "700 700 " "  moat's directories are mode 0700"
valid_report "$REPORTS/npm.json" "  the run's report"
is "$(json_eval "$REPORTS/npm.json" '[c["var"] for c in d["environment"]["package_caches"] if c["tool"] == "npm"]')" \
	'["npm_config_cache"]' "  the report lists npm's cache and its variable"
unlike "$out" 'EROFS|root-owned' "  no EROFS, no 'root-owned files'"

# The user's own cache stays unwritable from inside.
"$MOAT" run --profile network -- /bin/sh -c 'echo poison >"$HOME/.npm/poison"' 2>/dev/null
[ ! -e "$H/.npm/poison" ]
ok $? "network: writing ~/.npm from inside fails"
"$MOAT" run --net all -- /bin/sh -c 'echo poison >"$HOME/.npm/poison"' 2>/dev/null
[ ! -e "$H/.npm/poison" ]
ok $? "exec --net all: writing ~/.npm from inside fails"
"$MOAT" run --profile network --mode off -- /bin/sh -c 'echo poison >"$HOME/.npm/poison"' 2>/dev/null
[ -e "$H/.npm/poison" ]
ok $? "control: under --mode off the same write lands in ~/.npm"
rm -f "$H/.npm/poison"

# ------------------------------------------- the variables, when, and what wins
want="CARGO_HOME=$C/cargo DENO_DIR=$C/deno GOCACHE=$C/go-build GOMODCACHE=$C/go-mod PIP_CACHE_DIR=$C/pip UV_CACHE_DIR=$C/uv YARN_CACHE_FOLDER=$C/yarn YARN_GLOBAL_FOLDER=$C/yarn-berry npm_config_cache=$C/npm "
vars() { "$MOAT" run "$@" -- env 2>/dev/null |
	grep -E '^(npm_config_cache|npm_config_store_dir|PIP_CACHE_DIR|UV_CACHE_DIR|YARN_[A-Z_]*|GOMODCACHE|GOCACHE|CARGO_HOME|DENO_DIR)=' |
	LC_ALL=C sort | tr '\n' ' '; }
is "$(vars --profile network)" "$want" "network: each tool's variable names moat's directory (env inside)"
is "$(vars --net all)" "$want" "exec --net all: the same"
is "$(vars --allow-net 127.0.0.1)" "$want" "exec --allow-net 127.0.0.1: the same"
is "$(vars)" "" "exec without a network: none set"
is "$(vars --profile strict --net all)" "" "strict with a network: none set (it writes nothing not named)"
printf '[profiles.bare]\nnet = "all"\n\n[profiles.dev]\nextends = "exec"\nnet = "all"\n' >"$BASE/moat.toml"
is "$(vars --config "$BASE/moat.toml" --profile bare)" "" "  nor a config's profile without extends (built on strict)"
is "$(vars --config "$BASE/moat.toml" --profile dev)" "$want" "  a config's profile extending exec, with a network: set"
is "$(vars --profile network --mode off)" "" "--mode off: none set (nothing is sandboxed)"
like "$(vars --profile network --env npm_config_cache=$BASE/mine --write "$P")" \
	"^CARGO_HOME=.* npm_config_cache=$BASE/mine \$" "--env npm_config_cache=X wins over moat's"
is "$("$MOAT" run --profile network --write "$H/.npm" -- /bin/sh -c 'echo "[${npm_config_cache-unset}] [$PIP_CACHE_DIR]"' 2>/dev/null)" \
	"[unset] [$C/pip]" "--write ~/.npm: npm keeps the user's cache as granted, the others moat's"
"$MOAT" run --dry-run --profile network --env NPM_CONFIG_CACHE=$BASE/mine -- npm install >"$SCRATCH/dry.json" 2>/dev/null
is "$(json_eval "$SCRATCH/dry.json" '[c["tool"] for c in d["policy"]["package_caches"]]')" \
	'["pip", "uv", "yarn", "yarn-berry", "go-mod", "go-build", "cargo", "deno"]' \
	"dry run: package_caches lists what moat set (NPM_CONFIG_CACHE, npm's in any case, wins)"
"$MOAT" run --dry-run --profile network -- npm install >"$SCRATCH/dry.json" 2>/dev/null
is "$(json_eval "$SCRATCH/dry.json" '[[p["access"], p["origin"]["source"]] for p in d["policy"]["paths"] if p["path"] == "'"$C/npm"'"]')" \
	'[["write", "package cache of moat'"'"'s (docs/policy.md, \"Package caches\")"]]' \
	"dry run: moat's npm directory granted writable, saying why"
is "$(json_eval "$SCRATCH/dry.json" '[e["from"] for e in d["policy"]["env"] if e["name"] == "npm_config_cache"]')" \
	'["set"]' "dry run: npm_config_cache set by moat"
# pnpm reads its store-dir from npm's settings, which npm warns of: only
# for pnpm itself (a stand-in here, printing what it got).
mkdir -p "$BASE/tools/bin"
printf '#!/bin/sh\necho "store=${npm_config_store_dir-unset}"\n' >"$BASE/tools/bin/pnpm"
chmod 0755 "$BASE/tools/bin/pnpm"
is "$("$MOAT" run --profile network -- "$BASE/tools/bin/pnpm" 2>&1)" "store=$C/pnpm" \
	"pnpm as the command gets npm_config_store_dir"
is "$(vars --profile network | grep -c store_dir)" 0 "  other commands do not (npm would warn of it)"

# ------------------------------------------- pip
if /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
	# A wheel is a zip: made by hand, so no build backend is needed.
	mkdir -p "$BASE/wheels"
	/usr/bin/python3 - "$BASE/wheels/tinypkg-1.0-py3-none-any.whl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("tinypkg/__init__.py", "VALUE = 7\n")
    z.writestr("tinypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n")
    z.writestr("tinypkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("tinypkg-1.0.dist-info/RECORD", "")
PY
	is "$("$MOAT" run --profile network -- /usr/bin/python3 -m pip cache dir 2>/dev/null)" "$C/pip" \
		"pip: its cache directory is moat's"
	out=$("$MOAT" run --profile network --write . --read "$BASE/wheels" -- /usr/bin/python3 -m pip install \
		--disable-pip-version-check --no-index --find-links "$BASE/wheels" --target ./site tinypkg 2>&1)
	ok $? "pip install --no-index from a local wheel (--target ./site)"
	[ -f "$P/site/tinypkg/__init__.py" ] || printf '%s\n' "$out" | tail -5 | sed 's/^/#   /'
	unlike "$out" 'not writable|not owned' "  pip says nothing of a cache it cannot write"
else
	ok 0 "# SKIP pip is not installed (/usr/bin/python3 -m pip --version fails)"
	ok 0 "# SKIP pip is not installed"
	ok 0 "# SKIP pip is not installed"
fi

# ------------------------------------------- another project, other caches
# A package one project's sandboxed install left in a cache (a wheel pip
# built, a tarball) is not what an install in another project takes.
mkdir -p "$BASE/proj2"
C2=$H/.cache/moat/pkg/$(projkey "$BASE/proj2")
out=$(cd "$BASE/proj2" && "$MOAT" run --profile network -- /bin/sh -c \
	'echo "$npm_config_cache"; echo poison >"$1/npm/_cacache/poison" 2>/dev/null && echo WROTE' sh "$C" 2>/dev/null)
is "$out" "$C2/npm" "another project gets caches of its own ($C2/npm) and cannot write the first project's"
[ ! -e "$C/npm/_cacache/poison" ]
ok $? "  nothing landed in the first project's cache"

# ------------------------------------------- a planted link, a mode open to others
rm -rf "$C/npm"
ln -s "$H/.ssh" "$C/npm"
out=$("$MOAT" run --profile network --write . -- npm install --no-audit --no-fund ./local-pkg-1.0.0.tgz 2>&1 >/dev/null)
is "$?" 125 "a symlink at moat's npm cache (into ~/.ssh): the run is refused"
like_lines "$out" "moat: npm's cache: $C/npm is a symbolic link, not moat's own directory
moat: hint: remove it; moat makes it again, mode 0700" "  saying which path and the fix"
is "$(ls -A "$H/.ssh" | tr '\n' ' ')" "id_ed25519 " "  ~/.ssh is untouched (the link never followed)"
rm "$C/npm"
rm -rf "$C"
ln -s "$H/.ssh" "$C"
"$MOAT" run --profile network -- true 2>"$SCRATCH/err"
is "$?" 125 "a symlink at moat's pkg directory: refused too"
like "$(cat "$SCRATCH/err")" "$C is a symbolic link, not moat's own directory" "  naming it"
rm "$C"
"$MOAT" run --profile network -- true 2>/dev/null
ok $? "control: with the link gone moat makes its directory again and runs"
[ -d "$C/npm" ] && [ ! -L "$C/npm" ]
ok $? "  a directory, not a link"
chmod 0755 "$C"
is "$("$MOAT" run --profile network -- true 2>&1)" "moat: the package caches: $C is not moat's own (owner $(id -u), mode 755)
moat: hint: \`chmod 700 $C\`, or remove it: moat makes it again, mode 0700" \
	"moat's directory open to others: refused, with the fix"
chmod 0700 "$C"

# A directory moat cannot make (a read-only HOME, as in a container's
# read-only root): the caches are a convenience, not a protection, and the
# run goes on without them, with a note.  It used to stop, exit 125.  A user
# and mount namespace of the test's own makes HOME read-only.
if ! unshare -Urm true 2>/dev/null; then
	skip_feature userns "unshare -Urm: no user namespace for the test's read-only HOME"
else
	rm -rf "$C"
	out=$(unshare -Urm sh -c 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"' ro "$H" \
		"$MOAT" run --profile network -- /bin/sh -c 'echo "ran [$npm_config_cache]"' 2>"$SCRATCH/err")
	is "$?:$out" "0:ran []" "HOME read-only: the run goes on, without caches of moat's"
	like "$(cat "$SCRATCH/err")" "^moat: note: package managers get no cache of moat's \(.*Read-only file system\)" \
		"  said in a note"
	"$MOAT" run --profile network -- true 2>/dev/null && [ -d "$C/npm" ]
	ok $? "  control: with HOME writable again the caches are made"
fi

# The package runners' cache (npx's fetch phase) is made the same way; the
# registry is a closed port of the loopback, so nothing leaves the host.
ln -s "$H/.ssh" "$H/.cache/moat/npx"
out=$("$MOAT" run --profile mcp --env npm_config_registry=http://127.0.0.1:9/ -- npx -y left-pad 2>&1 >/dev/null)
is "$?" 125 "a symlink at npx's cache (~/.cache/moat/npx, into ~/.ssh): refused"
like "$out" "^moat: npx: moat's cache for left-pad: $H/.cache/moat/npx is a symbolic link, not moat's own directory" \
	"  naming it"
is "$(ls -A "$H/.ssh" | tr '\n' ' ')" "id_ed25519 " "  ~/.ssh is untouched"
rm "$H/.cache/moat/npx"
"$MOAT" run --profile mcp --env npm_config_registry=http://127.0.0.1:9/ -- npx -y left-pad >/dev/null 2>&1
[ -d "$H/.cache/moat/npx" ] && [ ! -L "$H/.cache/moat/npx" ]
ok $? "control: without the link npx's cache is made (and the fetch from the closed port fails)"

# ------------------------------------------- no usable HOME: a directory of this uid's in /tmp
T=/tmp/moat-pkg-$(id -u)
out=$(HOME=/nonexistent "$MOAT" run --profile network --write . -- /bin/sh -c 'echo "$npm_config_cache"' 2>"$SCRATCH/err")
is "$out" "$T/$PK/npm" "HOME=/nonexistent: npm's cache is $T/$PK/npm"
like "$(cat "$SCRATCH/err")" "^moat: note: package managers cache in $T: there is no cache directory of yours" \
	"  said in a note"
is "$(stat -c '%a %u' "$T" "$T/$PK" "$T/$PK/npm" | tr '\n' ' ')" "700 $(id -u) 700 $(id -u) 700 $(id -u) " "  0700, this uid's"
rm -rf "$P/node_modules"
HOME=/nonexistent "$MOAT" run --profile network --write . -- npm install --no-audit --no-fund ./local-pkg-1.0.0.tgz >/dev/null 2>&1
ok $? "  npm install works there"
[ -f "$P/node_modules/local-pkg/index.js" ]
ok $? "  and installed the package"
# ------------------------------------------- another user's HOME, for root's moat
if [ "$(id -u)" = 0 ]; then
	AH=$BASE/alice
	AT=$BASE/target
	mkdir -p "$AH" "$AT" && chown 65534:65534 "$AH"
	setpriv --reuid=65534 --regid=65534 --clear-groups ln -s "$AT" "$AH/.cache"
	out=$(HOME=$AH "$MOAT" run --profile network --write . -- /bin/sh -c 'echo "$npm_config_cache"' 2>"$SCRATCH/err")
	is "$out" "/tmp/moat-pkg-0/$PK/npm" "root, another user's HOME whose ~/.cache is their link: caches in /tmp/moat-pkg-0"
	like "$(cat "$SCRATCH/err")" "there is no cache directory of yours to make $AH/.cache/moat in" "  said in a note"
	out=$(HOME=$AH "$MOAT" run --profile mcp --env npm_config_registry=http://127.0.0.1:9/ -- npx -y left-pad 2>&1 >/dev/null)
	is "$?" 125 "  npx there: refused"
	like "$out" "$AH belongs to uid 65534, neither moat's user \\(uid 0\\) nor root" "  naming the directory"
	is "$(find "$AT" -mindepth 1 | wc -l)" 0 "  nothing made where the link leads"
	rm "$AH/.cache" && chown 0:0 "$AH"
	out=$(HOME=$AH "$MOAT" run --profile network --write . -- /bin/sh -c 'echo "$npm_config_cache"' 2>/dev/null)
	is "$out" "$AH/.cache/moat/pkg/$PK/npm" "control: the same HOME, root's, gets its caches"
else
	for i in 1 2 3 4 5 6; do skip "another user's HOME needs root to make (uid $(id -u))"; done
fi
done_testing
