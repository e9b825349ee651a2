#!/usr/bin/env bash
# `pipx run` in two phases (issue 19, item 1; docs/policy.md, "Package
# runners"): `pipx run PKG` under moat first makes a venv in moat's cache and
# has pip install PKG into it -- only the index, only that cache writable,
# nothing of the project or HOME -- then runs PKG's console script from the
# venv with the user's policy and the venv read-only.
#
# A PyPI double on the host's loopback (tests/lib/npmregistry.py, its PEP 503
# "simple" index) serves wheels built by hand: moat-pyhello (prints its
# arguments and answers a line of stdin, as an MCP server reads requests),
# moat-pyprobe (tries the network and its own venv from the server phase),
# moat-pyonly (one console script, not named like the package), and
# moat-pyevil, an sdist whose setup.py -- run by pip to build it, in the
# fetch phase -- tries to read a project canary and a HOME file, to write
# the project and to reach another port; its command prints what setup.py
# saw.  Each refusal has its control: the same code outside moat does all
# four, and the same probe under --net all connects.  Then: an unreachable
# index and a package that does not exist fail within seconds with the
# cause; a second run is `cached` and needs no index; the dry run shows both
# phases; one-phase cases.  Traffic only to 127.0.0.2.  As root, as uid
# 65534 and with ASan (HOME: a fake one, which holds moat's cache).
set -u
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/npmregistry.sh"
scratch
unset MOAT_HOST_LIMIT XDG_CACHE_HOME PIPX_DEFAULT_PYTHON VIRTUAL_ENV
# The test's own index must decide: no pip setting of the caller's.
for v in $(env | sed -n 's/^\(PIP_[^=]*\)=.*/\1/p'); do unset "$v"; done
export PIP_CONFIG_FILE=/dev/null
PY=/usr/bin/python3
cd "$SCRATCH" || exit 1
jx() { json_eval "$@" 2>/dev/null; }

if ! command -v pipx >/dev/null || ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then
	skip_all "pipx or python3-venv is not installed (scripts/ensure-deps test installs them)"
fi
fetch_fence_or_skip || exit 0

H=$SCRATCH/home
P=$SCRATCH/proj
mkdir -p "$H" "$P"
echo PROJECT-CANARY >"$P/canary.txt"
echo HOME-CANARY >"$H/notes.txt"
chmod 0755 "$H" "$P"
echo '[]' >"$SCRATCH/packages.json"
start_npm_registry "$SCRATCH/packages.json"
IDX=http://127.0.0.2:$PR/simple/
# What moat-pyevil's setup.py tries, as a file of its own so that the
# control runs the same code outside moat.  It records what it could do in
# a module of the package it builds, which its command prints.
PROJ=$P HOMEF=$H/notes.txt PORT=$PO "$PY" - "$SCRATCH/tries.py" <<'PY'
import os, sys
open(sys.argv[1], "w").write("""
import errno, json, socket
seen = {}
def attempt(name, f):
    try:
        seen[name] = f()
    except OSError as e:
        seen[name] = errno.errorcode.get(e.errno, str(e))
attempt('project', lambda: open(%(proj)r + '/canary.txt').read().strip())
attempt('home', lambda: open(%(home)r).read().strip())
def write():
    open(%(proj)r + '/pwned.txt', 'w').write('x')
    return 'written'
attempt('write', write)
def connect():
    s = socket.create_connection(('127.0.0.2', %(port)d), timeout=3)
    s.close()
    return 'connected'
attempt('net', connect)
open('moat_pyevil_seen.py', 'w').write('SEEN = %%r\\n' %% json.dumps(seen, sort_keys=True))
""" % {"proj": os.environ["PROJ"], "home": os.environ["HOMEF"], "port": int(os.environ["PORT"])})
PY
TRIES=$(cat "$SCRATCH/tries.py") PRPORT=$PR "$PY" - "$SCRATCH/packages.json" <<'PY'
import json, os, sys
hello = """import sys
def main():
    print(' '.join(['moat-pyhello ran'] + sys.argv[1:]), flush=True)
    line = sys.stdin.readline().strip()
    print('got ' + line, flush=True)
"""
probe = """import errno, json, os, socket
def main():
    seen = {}
    try:
        open(os.path.join(os.path.dirname(__file__), 'mark'), 'w').write('x')
        seen['cache'] = 'written'
    except OSError as e:
        seen['cache'] = errno.errorcode[e.errno]
    try:
        socket.create_connection(('127.0.0.2', %d), timeout=3).close()
        seen['net'] = 'connected'
    except OSError as e:
        seen['net'] = errno.errorcode.get(e.errno, str(e))
    print(json.dumps(seen, sort_keys=True))
""" % int(os.environ["PRPORT"])
evil_setup = os.environ["TRIES"] + """
from setuptools import setup
setup(name='moat-pyevil', version='1.0.0', py_modules=['moat_pyevil', 'moat_pyevil_seen'],
      entry_points={'console_scripts': ['moat-pyevil = moat_pyevil:main']})
"""
pkgs = [
    {"index": "pypi", "name": "moat-pyhello", "version": "1.0.0", "files": {"moat_pyhello.py": hello},
     "console_scripts": {"moat-pyhello": "moat_pyhello:main"}},
    {"index": "pypi", "name": "moat-pyprobe", "version": "1.0.0", "files": {"moat_pyprobe.py": probe},
     "console_scripts": {"moat-pyprobe": "moat_pyprobe:main"}},
    {"index": "pypi", "name": "moat_pyonly", "version": "2.0.0",
     "files": {"moat_pyonly.py": "def main():\n    print('pyonly-cmd ran')\n"},
     "console_scripts": {"pyonly-cmd": "moat_pyonly:main"}},
    {"index": "pypi", "name": "moat-pyevil", "version": "1.0.0", "sdist": evil_setup,
     "files": {"moat_pyevil.py": "import moat_pyevil_seen\ndef main():\n    print(moat_pyevil_seen.SEEN)\n"}},
]
json.dump(pkgs, open(sys.argv[1], "w"))
PY
like "$(curl -sS -m 5 "${IDX}moat-pyhello/")" 'href="/files/moat_pyhello-1.0.0-py3-none-any.whl#sha256=[0-9a-f]{64}"' \
	"control: the index double lists moat-pyhello's wheel on 127.0.0.2:$PR"

cd "$P" || exit 1
m() { HOME=$H PIP_INDEX_URL=$IDX "$MOAT" "$@"; }
cache_of() { jx "$1" 'd["runner"]["cache"]' | tr -d '"'; }

# --- pipx run through both phases ------------------------------------------------
t0=$(date +%s%N)
out=$(echo ping | m run --profile mcp --report "$REPORTS/hello.json" -- pipx run moat-pyhello one two 2>"$SCRATCH/hello.err")
rc=$?
t1=$(date +%s%N)
is "$rc/$out" "0/moat-pyhello ran one two
got ping" "pipx run moat-pyhello one two under --profile mcp: fetched, then run with its arguments, reading stdin"
[ "$rc" = 0 ] || diag "$(tail -15 "$SCRATCH/hello.err")"
diag "first run (fetch and server phases): $(((t1 - t0) / 1000000)) ms"
is "$(jx "$REPORTS/hello.json" '[d["runner"]["name"], d["runner"]["phases"], d["runner"]["outcome"], d["runner"]["packages"], d["runner"]["version"]]')" \
	'["pipx run", 2, "fetched", ["moat-pyhello"], "1.0.0"]' "  the report's runner: pipx run, two phases, fetched moat-pyhello 1.0.0"
C=$(cache_of "$REPORTS/hello.json")
like "$C" "^$H/.cache/moat/pipx/[0-9a-f]{16}$" "  into moat's own cache for this package (~/.cache/moat/pipx/KEY)"
is "$(jx "$REPORTS/hello.json" '[d["fetch"]["status"], d["fetch"]["run"]["exit_code"], d["fetch"]["command"]["argv"][0], d["fetch"]["command"]["argv"][5:7], d["fetch"]["command"]["argv"][8]]')" \
	"[\"enforced\", 0, \"/bin/sh\", [\"$C/venv\", \"moat-pyhello\"], \"${IDX}moat-pyhello/\"]" \
	"  the report's fetch: enforced, the index's page probed, a venv in the cache, pip install moat-pyhello, exit 0"
is "$(jx "$REPORTS/hello.json" '[d["fetch"]["properties"]["net.allow"]["status"], [e["text"] for e in d["fetch"]["network"]["allow"]]]')" \
	"[\"enforced\", [\"127.0.0.2:$PR\"]]" "  the fetch's network: the index alone (@pypi, from PIP_INDEX_URL), by the fence"
is "$(jx "$REPORTS/hello.json" '[p["path"] for p in d["fetch"]["filesystem"]["paths"] if p["access"] == "write" and p["path"].startswith("/dev/") is False]')" \
	"[\"$C\"]" "  the fetch's only write grant is that cache"
is "$(jx "$REPORTS/hello.json" '[d["status"], d["command"]["exe"], d["command"]["argv"][1:], d["properties"]["net.none"]["status"]]')" \
	"[\"enforced\", \"$C/venv/bin/moat-pyhello\", [\"one\", \"two\"], \"enforced\"]" \
	"  the server phase: enforced, the venv's console script, no network (net.none)"
valid_report "$REPORTS/hello.json" "  the report, fetch included,"
like "$(head -1 "$SCRATCH/hello.err")" "^moat: pipx run: fetching moat-pyhello from $IDX into $C " \
	"  stderr says what is fetched, from where, into where"

before=$(npm_registry_conns "$PR")
t0=$(date +%s%N)
out=$(echo pong | m run --profile mcp --report "$REPORTS/hello2.json" -- pipx run moat-pyhello again 2>"$SCRATCH/hello2.err")
rc=$?
t1=$(date +%s%N)
after=$(npm_registry_conns "$PR")
is "$rc/$out/$((after - before - 1))" "0/moat-pyhello ran again
got pong/0" "again: it runs from the cache, without a connection to the index"
is "$(jx "$REPORTS/hello2.json" '[d["runner"]["outcome"], "fetch" in d, d["runner"]["version"]]')" '["cached", false, "1.0.0"]' \
	"  outcome cached, no fetch phase (a name alone is satisfied by any version installed)"
is "$(cat "$SCRATCH/hello2.err")" "" "  and says nothing"
diag "from the cache: $(((t1 - t0) / 1000000)) ms"
# The index is part of the cache's key (red team 3, F1): what this index
# served is not what another would.
echo pong | HOME=$H PIP_INDEX_URL=http://127.0.0.2:$PC/simple/ "$MOAT" run --profile mcp --report "$REPORTS/hello3.json" -- pipx run moat-pyhello other >/dev/null 2>&1
is "$?/$(jx "$REPORTS/hello3.json" '[d["runner"]["outcome"], d["runner"]["cache"] != "'"$C"'"]')" '125/["failed", true]' \
	"told another index (one that is down): not the cache of $IDX's but a fetch from that index, which fails (125)"

# The venv's python link is the fetch phase's to write: what the server phase
# is granted is the installation of the python pipx uses, never where that
# link points.
mkdir -p "$H/fakepy/bin"
printf '#!/bin/sh\n' >"$H/fakepy/bin/python3"
chmod 0755 "$H/fakepy/bin/python3"
orig=$(readlink "$C/venv/bin/python")
ln -sfn "$H/fakepy/bin/python3" "$C/venv/bin/python"
m run --dry-run -- pipx run moat-pyhello >"$SCRATCH/link.json" 2>/dev/null
is "$(jx "$SCRATCH/link.json" '[d["runner"]["outcome"], [p["path"] for p in d["filesystem"]["paths"] if "fakepy" in p["path"]]]')" \
	'["cached", []]' "a venv whose python link the fetch pointed into HOME: nothing there is granted to the server"
HOME=$H PIP_INDEX_URL=$IDX PIPX_DEFAULT_PYTHON=$H/fakepy/bin/python3 "$MOAT" run --dry-run -- pipx run moat-pyhello >"$SCRATCH/link2.json" 2>/dev/null
is "$(jx "$SCRATCH/link2.json" '[p["path"] for p in d["filesystem"]["paths"] if "fakepy" in p["path"]]')" \
	"[\"$H/fakepy\"]" "  control: with that python as pipx's own (PIPX_DEFAULT_PYTHON), its installation is granted"
ln -sfn "$orig" "$C/venv/bin/python"

# The venv's dist-infos are the fetch's to write too (an sdist's build runs
# the package's own code): one whose METADATA is a FIFO (an open that would
# wait for a writer for ever) and one a terabyte of zeros, sparse (no blank
# line ends its headers).  The cached run still starts, at once.
SP=$(echo "$C"/venv/lib/python3*/site-packages)
mkdir -p "$SP/aaa_fifo-1.dist-info" "$SP/aab_sparse-1.dist-info"
mkfifo "$SP/aaa_fifo-1.dist-info/METADATA"
truncate -s 1T "$SP/aab_sparse-1.dist-info/METADATA"
out=$(echo pong | HOME=$H PIP_INDEX_URL=$IDX timeout -k 1 20 "$MOAT" run --profile mcp -- pipx run moat-pyhello hostile 2>"$SCRATCH/hostile.err")
is "$?/$out" "0/moat-pyhello ran hostile
got pong" "a cached venv with a METADATA that is a FIFO and one of a terabyte of zeros: it runs from the cache"
rm -rf "$SP/aaa_fifo-1.dist-info" "$SP/aab_sparse-1.dist-info"

# The venv is the fetch's to write, a link included (red team 3, F3): one
# pointing out of the cache (here at a copy of the same install in HOME, as
# a `pip install --user` would leave one) is not the install, and nothing
# there is granted; one within the cache is followed, and its real path
# granted.
cp -a "$C/venv" "$H/outside-venv"
mv "$C/venv" "$C/venv.real"
ln -s "$H/outside-venv" "$C/venv"
m run --dry-run -- pipx run moat-pyhello >"$SCRATCH/outvenv.json" 2>/dev/null
is "$(jx "$SCRATCH/outvenv.json" '[d["runner"]["outcome"], [p["path"] for p in d["policy"]["paths"] if "outside-venv" in p["path"]]]')" \
	'["would fetch", []]' "a venv that is a link out of the cache (into HOME): not the install (would fetch), nothing granted there"
ln -sfn venv.real "$C/venv"
m run --dry-run -- pipx run moat-pyhello >"$SCRATCH/invenv.json" 2>/dev/null
is "$(jx "$SCRATCH/invenv.json" '[d["runner"]["outcome"], d["runner"]["installed"], [p["path"] for p in d["policy"]["paths"] if p["path"].startswith("'"$C"'")]]')" \
	"[\"cached\", \"$C/venv.real\", [\"$C/venv.real\"]]" "  control: a link within the cache: cached, its real path granted"
rm -f "$C/venv"
mv "$C/venv.real" "$C/venv"
rm -rf "$H/outside-venv"

out=$(m run -- pipx run --spec moat-pyhello moat-pyhello via-spec </dev/null 2>/dev/null)
is "$?/$out" "0/moat-pyhello ran via-spec
got " "pipx run --spec moat-pyhello moat-pyhello: the command named, the package from --spec"
out=$(m run --report "$REPORTS/only.json" -- pipx run moat-pyonly 2>/dev/null)
is "$?/$out" "0/pyonly-cmd ran" "pipx run moat-pyonly: its only console script (pyonly-cmd), as pipx picks it"
is "$(jx "$REPORTS/only.json" 'd["command"]["exe"]')" "\"$(cache_of "$REPORTS/only.json")/venv/bin/pyonly-cmd\"" "  from the venv"

# --- pins --------------------------------------------------------------------------
out=$(m run --report "$REPORTS/pin.json" -- pipx run --spec moat-pyhello==1.0.0 moat-pyhello pinned </dev/null 2>/dev/null)
is "$?/$(jx "$REPORTS/pin.json" 'd["runner"]["outcome"]')" '0/"fetched"' "--spec moat-pyhello==1.0.0: a cache of its own, fetched"
before=$(npm_registry_conns "$PR")
out=$(m run --report "$REPORTS/pin2.json" -- pipx run --spec moat-pyhello==1.0.0 moat-pyhello pinned </dev/null 2>/dev/null)
rc=$?
after=$(npm_registry_conns "$PR")
is "$rc/$(jx "$REPORTS/pin2.json" 'd["runner"]["outcome"]')/$((after - before - 1))" '0/"cached"/0' \
	"  again: cached, no connection to the index (the exact pin is what is installed)"
m run --dry-run -- pipx run --spec 'moat-pyhello>=1' moat-pyhello >"$SCRATCH/range.json" 2>/dev/null
is "$(jx "$SCRATCH/range.json" 'd["runner"]["outcome"]')" '"would fetch"' "  a range (>=1) asks the index each time: would fetch"

# --- another index is another cache ------------------------------------------------
# The cache is every project's; the index comes from the environment, pip's
# files or --env (red team 3, F1).  IDX2, another index (an attacker's,
# say), serves its own moat-pyhello: a run told IDX must not run it.  A HOME
# of its own, so that each first run is a fetch.
start_other_registry "$SCRATCH/packages2.json"
IDX2=http://127.0.0.2:$PR2/simple/
"$PY" - "$SCRATCH/packages2.json" <<'PY'
import json, sys
evil = "import sys\ndef main():\n    print(' '.join(['IDX2 moat-pyhello ran'] + sys.argv[1:]), flush=True)\n"
json.dump([{"index": "pypi", "name": "moat-pyhello", "version": "6.6.6", "files": {"moat_pyhello.py": evil},
            "console_scripts": {"moat-pyhello": "moat_pyhello:main"}}], open(sys.argv[1], "w"))
PY
H2=$SCRATCH/home2
mkdir -p "$H2"
chmod 0755 "$H2"
out=$(HOME=$H2 PIP_INDEX_URL=$IDX2 "$MOAT" run --report "$REPORTS/f1-a.json" -- pipx run moat-pyhello a </dev/null 2>"$SCRATCH/f1-a.err")
is "$?/$out/$(jx "$REPORTS/f1-a.json" 'd["runner"]["outcome"]')" '0/IDX2 moat-pyhello ran a/"fetched"' \
	"PIP_INDEX_URL=IDX2: pipx run moat-pyhello fetches IDX2's"
[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/f1-a.err")"
out=$(HOME=$H2 PIP_INDEX_URL=$IDX "$MOAT" run --report "$REPORTS/f1-b.json" -- pipx run moat-pyhello b </dev/null 2>"$SCRATCH/f1-b.err")
is "$?/$out/$(jx "$REPORTS/f1-b.json" 'd["runner"]["outcome"]')" '0/moat-pyhello ran b
got /"fetched"' "  then PIP_INDEX_URL=IDX: not IDX2's, fetched from IDX"
[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/f1-b.err")"
ok "$([ "$(cache_of "$REPORTS/f1-b.json")" != "$(cache_of "$REPORTS/f1-a.json")" ] && echo 0 || echo 1)" "  into another cache"
out=$(HOME=$H2 PIP_INDEX_URL=${IDX%/} "$MOAT" run --report "$REPORTS/f1-b2.json" -- pipx run moat-pyhello b2 </dev/null 2>/dev/null)
is "$?/$out/$(jx "$REPORTS/f1-b2.json" 'd["runner"]["outcome"]')" '0/moat-pyhello ran b2
got /"cached"' "  control: IDX again (written without the trailing /): cached, IDX's"
out=$(HOME=$H2 PIP_INDEX_URL=$IDX "$MOAT" run --env "PIP_INDEX_URL=$IDX2" --report "$REPORTS/f1-e.json" -- pipx run moat-pyhello e </dev/null 2>/dev/null)
is "$?/$out/$(cache_of "$REPORTS/f1-e.json")" "0/IDX2 moat-pyhello ran e/$(cache_of "$REPORTS/f1-a.json")" \
	"  --env PIP_INDEX_URL=IDX2: IDX2's, from IDX2's cache"

# --- the server phase: no network, the venv read-only ------------------------------
out=$(m run --report "$REPORTS/probe.json" -- pipx run moat-pyprobe 2>"$SCRATCH/probe.err")
is "$out" '{"cache": "EROFS", "net": "EAFNOSUPPORT"}' \
	"the server phase cannot write its venv (EROFS) nor open a socket to the index (EAFNOSUPPORT)"
[ -n "$out" ] || diag "$(tail -5 "$SCRATCH/probe.err")"
out=$(m run --net all --write "$(cache_of "$REPORTS/probe.json")" -- pipx run moat-pyprobe 2>/dev/null)
is "$out" '{"cache": "written", "net": "connected"}' "  control: with --net all and the cache granted writable, both work"

# --- the fetch phase: nothing of the project or HOME, no other port ---------------
before=$(npm_registry_conns "$PO")
out=$(m run --report "$REPORTS/evil.json" -- pipx run moat-pyevil 2>"$SCRATCH/evil.err")
after=$(npm_registry_conns "$PO")
is "$(jx "$REPORTS/evil.json" 'd["runner"]["outcome"]')" '"fetched"' \
	"pipx run moat-pyevil (an sdist whose setup.py reaches out): built in the fetch phase and run"
is "$(echo "$out" | "$PY" -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["project"], d["home"], d["write"], d["net"])' 2>&1)" \
	"ENOENT ENOENT ENOENT ECONNREFUSED" \
	"  its setup.py could not read the project's canary nor a file of HOME, write the project (not in its view), or reach another port"
[ -n "$out" ] || diag "$(tail -15 "$SCRATCH/evil.err")"
ok "$([ ! -e "$P/pwned.txt" ] && echo 0 || echo 1)" "  the project has no file from it"
is "$((after - before - 1))" 0 "  the other service on 127.0.0.2:$PO saw no connection"
mkdir -p "$SCRATCH/ctl"
before=$(npm_registry_conns "$PO")
(cd "$SCRATCH/ctl" && HOME=$H "$PY" "$SCRATCH/tries.py") && sleep 0.2
after=$(npm_registry_conns "$PO")
is "$("$PY" -c 'import json,sys; sys.path.insert(0, sys.argv[1]); import moat_pyevil_seen as m; d=json.loads(m.SEEN); print(d["project"], d["home"], d["write"], d["net"])' "$SCRATCH/ctl")/$((after - before - 1))" \
	"PROJECT-CANARY HOME-CANARY written connected/1" "  control: the same code outside moat reads both, writes the project and connects"
rm -f "$P/pwned.txt"

# --- failing fast ------------------------------------------------------------------
t0=$(date +%s%N)
out=$(HOME=$H PIP_INDEX_URL=http://127.0.0.2:$PC/simple/ "$MOAT" run --report "$REPORTS/down.json" -- pipx run --spec moat-pyhello==1.0.1 moat-pyhello 2>&1)
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "$rc" 125 "an unreachable index (a closed port): exit 125"
ok "$([ "$ms" -lt 5000 ] && echo 0 || echo 1)" "  within 5 s ($ms ms)"
is "$(echo "$out" | tail -1)" "moat: the fetch phase: the index http://127.0.0.2:$PC/simple/ could not be reached (Connection refused)" \
	"  saying so: the index, and the cause"
is "$(jx "$REPORTS/down.json" '[d["run"]["executed"], d["run"]["exit_code"], d["runner"]["outcome"], d["fetch"]["run"]["exit_code"]]')" \
	'[false, 125, "failed", 1]' "  the report: the server did not run (125); the fetch ended 1"
valid_report "$REPORTS/down.json" "  and fits the schema"
t0=$(date +%s%N)
out=$(m run -- pipx run moat-nothing-here 2>&1)
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "$rc" 127 "a package the index does not have: exit 127 (the command is not found), in $ms ms"
is "$(echo "$out" | tail -1)" "moat: the fetch phase: the index $IDX has no package moat-nothing-here (pip: no matching distribution)" "  saying so"
out=$(m run -- pipx run --spec moat-pyhello==9.9.9 moat-pyhello 2>&1)
is "$?" 127 "a version it does not have: 127"
like "$out" "has no version of moat-pyhello==9.9.9 that matches \(pip: no matching distribution\)" "  saying so"

# --- the dry run: both plans ----------------------------------------------------
m run --dry-run -- pipx run moat-pyprobe x >/dev/null 2>&1
m run --dry-run -- pipx run --spec moat-pyprobe==1.0.0 moat-pyprobe x >"$SCRATCH/dry.json" 2>"$SCRATCH/dry.err"
is "$?" 0 "--dry-run of a package not in the cache"
is "$(jx "$SCRATCH/dry.json" '[d["runner"]["outcome"], d["fetch"]["policy"]["net"], d["fetch"]["command"]["argv"][6], d["fetch"]["command"]["argv"][8], "run" in d["fetch"], d["command"]["argv"]]')" \
	"[\"would fetch\", \"allow\", \"moat-pyprobe==1.0.0\", \"${IDX}moat-pyprobe/\", false, [\"pipx\", \"run\", \"--spec\", \"moat-pyprobe==1.0.0\", \"moat-pyprobe\", \"x\"]]" \
	"  shows the fetch phase's plan, and the command as written for the server"
valid_report "$SCRATCH/dry.json" "  and fits the schema"
ok "$([ ! -e "$(cache_of "$SCRATCH/dry.json")" ] && echo 0 || echo 1)" "  and makes nothing (no cache directory)"

# --- the python of a pipx with no #! of its own ---------------------------------
# A pipx whose #! names no python (`#!/usr/bin/env python3`, as pip installs
# it into a venv's bin or a user's tools) had the fetch make its venv with
# the python3 first on PATH: the project's bin/python3 under direnv's
# PATH_add bin, run with the index's network and the cache writable, and
# its installation -- the whole project -- granted to the fetch.  Now
# python3 is looked up on PATH without the project's entries.
mkdir -p "$P/bin" "$SCRATCH/ptools" "$SCRATCH/home-py" "$SCRATCH/home-pyu" "$SCRATCH/upy"
{ echo '#!/usr/bin/env python3'; tail -n +2 "$(command -v pipx)"; } >"$SCRATCH/ptools/pipx"
printf '#!/bin/sh\ncase "$(pwd)" in */.cache/moat/*) echo "project python ran in the fetch: $(cat %s 2>&1)" >&2 ;; esac\nexec %s "$@"\n' \
	"$P/canary.txt" "$PY" >"$P/bin/python3"
printf '#!/bin/sh\ncase "$(pwd)" in */.cache/moat/*) echo "user python ran in the fetch" >&2 ;; esac\nexec %s "$@"\n' "$PY" >"$SCRATCH/upy/python3"
chmod 0755 "$SCRATCH/ptools/pipx" "$P/bin/python3" "$SCRATCH/upy/python3" "$SCRATCH/home-py" "$SCRATCH/home-pyu"
chmod -R a+rX "$P/bin" "$SCRATCH/ptools" "$SCRATCH/upy"
out=$(PATH="$P/bin:$SCRATCH/ptools:$PATH" H=$SCRATCH/home-py m run --report "$REPORTS/pyproj.json" -- pipx run moat-pyhello e 2>"$SCRATCH/pyproj.err" </dev/null)
is "$?/${out%%$'\n'*}" "0/moat-pyhello ran e" "a pipx without a python in its #!, the project's python3 first on PATH: fetched and run"
unlike "$(cat "$SCRATCH/pyproj.err")" "project python ran" "  the project's python3 did not run in the fetch"
is "$(jx "$REPORTS/pyproj.json" '[p["path"] for p in d["fetch"]["filesystem"]["paths"] if p["path"].startswith("'"$P"'")]')" "[]" \
	"  nothing of the project is granted to the fetch"
out=$(PATH="$P/bin:$SCRATCH/upy:$SCRATCH/ptools:$PATH" H=$SCRATCH/home-pyu m run -- pipx run moat-pyhello f 2>&1 </dev/null)
like "$out" "user python ran in the fetch" "  control: a python3 of the user's on PATH, outside the project, is the one the fetch runs"
rm -rf "$P/bin" "$SCRATCH/ptools" "$SCRATCH/upy" "$SCRATCH"/home-py*

# --- one phase ------------------------------------------------------------------
m run --dry-run -- pipx run --python python3 moat-pyhello >"$REPORTS/py.json" 2>"$SCRATCH/py.err"
is "$(jx "$REPORTS/py.json" '[d["runner"]["phases"], d["runner"]["outcome"]]')" '[1, "as written"]' \
	"pipx run --python: one phase, as written"
like "$(cat "$SCRATCH/py.err")" "^moat: pipx run --python changes what pip installs" "  and said on stderr"
out=$(m run --dry-run -- pipx run 'moat-pyhello==1.0.0' 2>&1 >/dev/null)
like "$out" "^moat: pipx run moat-pyhello==1.0.0: pipx takes the word after its options as the command's name; name the package with --spec" \
	"a version on the command's word (pipx reads it as a command name): as written, with the --spec form"

cd "$SCRATCH" || exit 1
done_testing
