# shellcheck shell=bash
# A local npm registry double (tests/lib/npmregistry.py says what it
# serves): source after tap.sh and `scratch`.
#
#   start_npm_registry PACKAGES.json   start it; sets PR (the registry on
#                                      127.0.0.2), PO (another HTTP service
#                                      there), PC (a closed port there);
#                                      npm_registry_stop (the EXIT trap calls
#                                      it) ends it
#   npm_registry_conns PORT            connections the server on PORT has
#                                      accepted, this question included
#   fetch_fence_or_skip                a runner's fetch phase needs the
#                                      network fence: where the native
#                                      backend has none, a TAP skip, the
#                                      plan ended, and 1 (the caller exits)
#   npm_unset_config                   unset every npm_config_* variable of
#                                      the runner's environment: the test's
#                                      own settings must decide

NPM_REGISTRY_PID=""

npm_registry_stop() {
	rm -f "$SCRATCH/ports"
	[ -n "$NPM_REGISTRY_PID" ] && kill "$NPM_REGISTRY_PID" 2>/dev/null
	NPM_REGISTRY_PID=""
}

start_npm_registry() {
	/usr/bin/python3 "$ROOT/tests/lib/npmregistry.py" "$SCRATCH" "$1" &
	NPM_REGISTRY_PID=$!
	trap 'npm_registry_stop; rm -rf "$SCRATCH" "$REPORTS"' EXIT
	for _ in $(seq 200); do [ -s "$SCRATCH/ports" ] && break; sleep 0.05; done
	# shellcheck disable=SC2034 # for the sourcing test
	read -r PR PO PC <"$SCRATCH/ports"
}

npm_registry_conns() { curl -sS -m 5 "http://127.0.0.2:$1/-/count" 2>/dev/null || echo "no answer"; }

npm_unset_config() {
	local v
	for v in $(env | sed -n 's/^\([Nn][Pp][Mm]_[Cc][Oo][Nn][Ff][Ii][Gg]_[^=]*\)=.*/\1/p'); do unset "$v"; done
}

fetch_fence_or_skip() {
	"$MOAT" run --dry-run --mode prefer --allow-net x.test -- /bin/true 2>/dev/null |
		/usr/bin/python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["properties"]["net.allow"]["status"] == "enforced" else 1)' &&
		return 0
	skip_feature netfence "the native backend has no fence on this host: the fetch phase cannot run (moat probe says why)"
	done_testing
	return 1
}
