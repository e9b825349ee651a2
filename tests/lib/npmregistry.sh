# shellcheck shell=bash
# A local npm registry double (tests/lib/npmregistry.py says what it
# serves): source after tap.sh and `scratch`.
#
#   start_npm_registry PACKAGES.json   start it; sets PR (the registry on
#                                      127.0.0.2), PO (another HTTP service
#                                      there), PC (a closed port there);
#                                      npm_registry_stop (the EXIT trap calls
#                                      it) ends it
#   start_other_registry PACKAGES.json another double, a registry of its own
#                                      (in $SCRATCH/r2, stopped with the
#                                      first): sets PR2, its port on
#                                      127.0.0.2
#   npm_two_projects                   that registry (R2, its URL), serving
#                                      its own moat-hello and @moat/scoped
#                                      (6.6.6, printing "R2 moat-hello ran
#                                      ARGS"), a HOME (H2) and two projects
#                                      (A, B) of their own
#   npm_test_project                   a fake HOME (H, with notes.txt) and
#                                      project (P, with canary.txt), the
#                                      registry started (REG) with
#                                      npm_test_packages, and a control
#                                      that it serves them
#   npm_test_packages FILE PROJ HOMEF  once the ports are known: FILE (the
#                                      double's PACKAGES.json) lists
#                                      moat-hello and @moat/scoped (print
#                                      their arguments),
#                                      moat-probe (tries the network and its
#                                      own directory), moat-download (an
#                                      install script that fails unless it
#                                      reaches port PO) and moat-evil (an
#                                      install script that tries to read
#                                      PROJ/canary.txt and HOMEF, write
#                                      PROJ/pwned.txt and reach port PO; its
#                                      command prints what the script saw)
#   npm_evil_checks LABEL REPORT OUT BEFORE
#                                      after moat-evil ran under moat (its
#                                      report, its output, the other
#                                      service's count before): what its
#                                      install script could do (nothing), and
#                                      the control: the same script outside
#                                      moat does all four
#   npm_unreachable_checks LABEL CAUSE REPORT CMD...
#                                      CMD, a runner under moat told the
#                                      closed port as its registry (its report
#                                      REPORT), ends 125 within 10 s with the
#                                      fetch phase's message naming CAUSE (a
#                                      regex), and did not start the server
#   npm_registry_conns PORT            connections the server on PORT has
#                                      accepted, this question included
#   fetch_fence_or_skip                a runner's fetch phase needs the
#                                      network fence: where the native
#                                      backend has none, a TAP skip, the
#                                      plan ended, and 1 (the caller exits)
#   npm_unset_config                   unset every npm_config_*,
#                                      pnpm_config_* and BUN_CONFIG_*
#                                      variable of the runner's environment:
#                                      the test's own settings must decide
#   npm_runner_env                     that, and no MOAT_HOST_LIMIT nor
#                                      XDG_CACHE_HOME (moat's cache is in the
#                                      test's HOME)

NPM_REGISTRY_PID=""
NPM_REGISTRY2_PID=""

npm_registry_stop() {
	rm -f "$SCRATCH/ports" "$SCRATCH/r2/ports"
	[ -n "$NPM_REGISTRY_PID" ] && kill "$NPM_REGISTRY_PID" 2>/dev/null
	[ -n "$NPM_REGISTRY2_PID" ] && kill "$NPM_REGISTRY2_PID" 2>/dev/null
	NPM_REGISTRY_PID=""
	NPM_REGISTRY2_PID=""
}

start_npm_registry() {
	/usr/bin/python3 "$ROOT/tests/lib/npmregistry.py" "$SCRATCH" "$1" &
	NPM_REGISTRY_PID=$!
	trap 'npm_registry_stop; rm -rf "$SCRATCH" "$REPORTS"' EXIT
	need_ready 30 "the test registry (tests/lib/npmregistry.py: its ports file)" test -s "$SCRATCH/ports"
	# shellcheck disable=SC2034 # for the sourcing test
	read -r PR PO PC <"$SCRATCH/ports"
}

start_other_registry() {
	mkdir -p "$SCRATCH/r2"
	/usr/bin/python3 "$ROOT/tests/lib/npmregistry.py" "$SCRATCH/r2" "$1" &
	NPM_REGISTRY2_PID=$!
	need_ready 30 "the second test registry (r2/ports)" test -s "$SCRATCH/r2/ports"
	# shellcheck disable=SC2034 # for the sourcing test
	read -r PR2 _ _ <"$SCRATCH/r2/ports"
}

npm_two_projects() {
	start_other_registry "$SCRATCH/packages2.json"
	# shellcheck disable=SC2034 # for the sourcing test
	R2=http://127.0.0.2:$PR2/ H2=$SCRATCH/home2 A=$SCRATCH/projA B=$SCRATCH/projB
	cat >"$SCRATCH/packages2.json" <<'JSON'
[{"name": "moat-hello", "version": "6.6.6", "bin": {"moat-hello": "cli.js"},
  "files": {"cli.js": "#!/usr/bin/env node\nconsole.log(['R2 moat-hello ran'].concat(process.argv.slice(2)).join(' '));\n"}},
 {"name": "@moat/scoped", "version": "6.6.6", "bin": {"moat-scoped": "cli.js"},
  "files": {"cli.js": "#!/usr/bin/env node\nconsole.log(['R2 moat-scoped ran'].concat(process.argv.slice(2)).join(' '));\n"}}]
JSON
	mkdir -p "$H2" "$A" "$B"
	chmod 0755 "$H2" "$A" "$B"
}

npm_test_project() {
	# shellcheck disable=SC2034 # for the sourcing test
	H=$SCRATCH/home
	P=$SCRATCH/proj
	mkdir -p "$H" "$P"
	echo '{"name": "proj", "version": "1.0.0"}' >"$P/package.json"
	echo PROJECT-CANARY >"$P/canary.txt"
	echo HOME-CANARY >"$H/notes.txt"
	chmod 0755 "$H" "$P"
	echo '[]' >"$SCRATCH/packages.json"
	start_npm_registry "$SCRATCH/packages.json"
	REG=http://127.0.0.2:$PR/
	npm_test_packages "$SCRATCH/packages.json" "$P" "$H/notes.txt"
	is "$(curl -sS -m 5 "${REG}moat-hello" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["name"])')" moat-hello \
		"control: the registry double serves moat-hello's packument on 127.0.0.2:$PR"
}

npm_test_packages() {
	# moat-evil's install script records what it could do in its own
	# directory (the only place the fetch phase can write); its command
	# prints that record.
	PROJ=$2 HOMEF=$3 PORT=$PO PRPORT=$PR /usr/bin/python3 - "$1" <<'PY'
import json, os, sys
tries = """
const fs = require('fs'), net = require('net'), path = require('path');
const seen = {};
function attempt(name, f) { try { seen[name] = f(); } catch (e) { seen[name] = e.code || String(e); } }
attempt('project', () => fs.readFileSync(%(proj)r + '/canary.txt', 'utf8').trim());
attempt('home', () => fs.readFileSync(%(home)r, 'utf8').trim());
attempt('write', () => { fs.writeFileSync(%(proj)r + '/pwned.txt', 'x'); return 'written'; });
const s = net.connect(%(port)d, '127.0.0.2');
s.setTimeout(3000, () => { seen.net = 'timeout'; s.destroy(); done(); });
s.on('connect', () => { seen.net = 'connected'; s.destroy(); done(); });
s.on('error', (e) => { seen.net = e.code; done(); });
function done() { fs.writeFileSync(path.join(__dirname, 'install-report.json'), JSON.stringify(seen)); }
""" % {"proj": os.environ["PROJ"], "home": os.environ["HOMEF"], "port": int(os.environ["PORT"])}
probe = """#!/usr/bin/env node
const fs = require('fs'), net = require('net'), path = require('path');
const seen = {};
try { fs.writeFileSync(path.join(__dirname, 'mark'), 'x'); seen.cache = 'written'; } catch (e) { seen.cache = e.code; }
const s = net.connect(%d, '127.0.0.2');
s.setTimeout(3000, () => { seen.net = 'timeout'; s.destroy(); out(); });
s.on('connect', () => { seen.net = 'connected'; s.destroy(); out(); });
s.on('error', (e) => { seen.net = e.code; out(); });
function out() { console.log(JSON.stringify(seen)); }
""" % int(os.environ["PRPORT"])
# An install script that downloads from another host than the registry
# (puppeteer's browser, a prebuilt binary), and fails without it.
download = """
const s = require('net').connect(%d, '127.0.0.2');
s.setTimeout(3000, () => process.exit(1));
s.on('connect', () => { s.destroy(); process.exit(0); });
s.on('error', (e) => { console.error('could not download: ' + e.code); process.exit(1); });
""" % int(os.environ["PORT"])
pkgs = [
    {"name": "moat-hello", "version": "1.0.0", "bin": {"moat-hello": "cli.js"},
     "files": {"cli.js": "#!/usr/bin/env node\nconsole.log(['moat-hello ran'].concat(process.argv.slice(2)).join(' '));\n"}},
    {"name": "moat-probe", "version": "1.0.0", "bin": {"moat-probe": "cli.js"}, "files": {"cli.js": probe}},
    {"name": "@moat/scoped", "version": "2.0.0", "bin": {"moat-scoped": "cli.js"},
     "files": {"cli.js": "#!/usr/bin/env node\nconsole.log(['moat-scoped ran'].concat(process.argv.slice(2)).join(' '));\n"}},
    {"name": "moat-download", "version": "1.0.0", "bin": {"moat-download": "cli.js"},
     "scripts": {"postinstall": "node download.js"},
     "files": {"download.js": download,
               "cli.js": "#!/usr/bin/env node\nconsole.log('moat-download ran');\n"}},
    {"name": "moat-evil", "version": "1.0.0", "bin": {"moat-evil": "cli.js"},
     "scripts": {"postinstall": "node install.js"},
     "files": {"install.js": tries,
               "cli.js": "#!/usr/bin/env node\nconsole.log(require('fs').readFileSync(__dirname + '/install-report.json', 'utf8'));\n"}},
]
json.dump(pkgs, open(sys.argv[1], "w"))
PY
}

npm_evil_checks() {
	local label=$1 report=$2 out=$3 before=$4 after evil
	local seen='import json,sys; d=json.load(open(sys.argv[1]) if sys.argv[1:] else sys.stdin); print(d["project"], d["home"], d["write"], d["net"])'
	after=$(npm_registry_conns "$PO")
	is "$(echo "$out" | /usr/bin/python3 -c "$seen" 2>&1)" "ENOENT ENOENT ENOENT ECONNREFUSED" \
		"$label: its install script ran, and could not read the project's canary nor a file of HOME, write the project (not in its view), or reach another port"
	is "$([ -e "$P/pwned.txt" ] && echo written || echo none)/$((after - before - 1))" "none/0" \
		"  the project has no file from it, and the other service on 127.0.0.2:$PO saw no connection"
	evil=$(json_eval "$report" 'd["runner"]["installed"]' 2>/dev/null | tr -d '"')/moat-evil
	before=$(npm_registry_conns "$PO")
	(cd "$evil" && HOME=$H node install.js) && sleep 0.2
	after=$(npm_registry_conns "$PO")
	is "$(/usr/bin/python3 -c "$seen" "$evil/install-report.json" 2>&1)/$((after - before - 1))" \
		"PROJECT-CANARY HOME-CANARY written connected/1" "  control: the same script outside moat reads both, writes the project and connects"
	rm -f "$P/pwned.txt"
}

npm_unreachable_checks() {
	local label=$1 cause=$2 report=$3 t0 out rc ms
	shift 3
	t0=$(date +%s%N)
	out=$("$@" 2>&1)
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	is "$rc" 125 "$label with an unreachable registry (a closed port): exit 125"
	# npm and pnpm wait 10 s before their first retry (then 60 s): a run
	# that retried at all takes more than 10 s.  The clock runs from before
	# moat starts, and the ASan build as uid 65534 beside CI's other lanes
	# once took 5.9 s (pnpm 10 dlx) without a retry: 5 s was too tight.
	ok "$([ "$ms" -lt 10000 ] && echo 0 || echo 1)" "  within 10 s, before any retry ($ms ms)"
	like "$out" "^moat: the fetch phase: the registry http://127.0.0.2:$PC/ could not be reached \($cause\)$" \
		"  saying so: the registry, and the cause"
	is "$(json_eval "$report" '[d["run"]["executed"], d["run"]["exit_code"], d["runner"]["outcome"], d["fetch"]["run"]["exit_code"] != 0]' 2>/dev/null)" \
		'[false, 125, "failed", true]' "  the report: the server did not run (125); the fetch failed"
}

npm_registry_conns() { curl -sS -m 5 "http://127.0.0.2:$1/-/count" 2>/dev/null || echo "no answer"; }

npm_unset_config() {
	local v
	for v in $(env | sed -n 's/^\([Pp]\{0,1\}[Nn][Pp][Mm]_[Cc][Oo][Nn][Ff][Ii][Gg]_[^=]*\|BUN_CONFIG_[^=]*\)=.*/\1/p'); do
		unset "$v"
	done
}

npm_runner_env() {
	unset MOAT_HOST_LIMIT XDG_CACHE_HOME
	npm_unset_config
}

fetch_fence_or_skip() {
	"$MOAT" run --dry-run --mode prefer --allow-net x.test -- /bin/true 2>/dev/null |
		/usr/bin/python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["properties"]["net.allow"]["status"] == "enforced" else 1)' &&
		return 0
	skip_feature netfence "the native backend has no fence on this host: the fetch phase cannot run (moat probe says why)"
	done_testing
	return 1
}
