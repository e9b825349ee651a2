#!/usr/bin/env bash
# The network allowlist where it is not enforced: under --allow-net every
# backend but the fenced native one (tests/blackbox/net_fence.sh) keeps the
# network closed and reports net.allow missing.  A listener this test starts
# on the host's 127.0.0.1 is named by --allow-net 127.0.0.1:PORT, and the
# command must NOT reach it, on every installed backend that runs here (and
# on native without its fence, MOAT_HOST_LIMIT=netfence=0); the control,
# --net all, reaches it.  Also: require mode refuses where net.allow is
# missing, the dry run and
# the report list the allowlist (and fit the schema), contradictions and
# malformed entries are refused with the flag and the value.
# Runs as root and as uid 65534 (a backend that cannot run for this user
# must refuse and run nothing).
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
unset MOAT_HOST_LIMIT MOAT_OCI_RUNTIME
PY=/usr/bin/python3
HELPER_DIR=$(dirname "$HELPER")
# From /usr: SCRATCH lies in /tmp, which firejail's view replaces, and
# moat refuses to start the command where its view lacks the directory.
cd /usr
j() { json_get "$@" 2>/dev/null; }
jx() { json_eval "$@" 2>/dev/null; }
installed() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/bin/$1" ] || [ -x "/usr/sbin/$1" ]; }

# --- a listener on the host's loopback ---------------------------------------
port_file=$SCRATCH/port
"$PY" -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(5)
end = time.time() + 240
while time.time() < end:
    try:
        c, _ = s.accept(); c.close()
    except socket.timeout:
        continue
    except OSError:
        break' "$port_file" &
lpid=$!
trap 'kill "$lpid" 2>/dev/null; rm -rf "$SCRATCH" "$REPORTS"' EXIT
need_ready 30 "the test listener (its port file)" test -s "$port_file"
port=$(cat "$port_file" 2>/dev/null)
"$HELPER" tcp 127.0.0.1 "$port" >"$SCRATCH/control" 2>&1
is "$(cat "$SCRATCH/control")" "OK" "control: the helper connects to the test's listener on 127.0.0.1:$port"

BASE=(--profile strict --read "$HELPER_DIR")

# one BACKEND LABEL: the allowlisted listener is not reachable; --net all is.
one() {
	local b=$1 label=$2 r="$REPORTS/$2.json" rc out st
	out=$("$MOAT" run --backend "$b" --mode prefer "${BASE[@]}" --allow-net "127.0.0.1:$port" --report-fd 3 \
		-- "$HELPER" tcp 127.0.0.1 "$port" 2>"$SCRATCH/$label.err" 3>"$r")
	rc=$?
	st=$(j "$r" '["status"]')
	if [ "$rc" = 125 ] && [ "$st" = unavailable ]; then
		# the backend cannot run here (this user, this host): it must say
		# why, and the command did not run
		unlike "$out" "OK" "$label: cannot run here (125, unavailable): the command did not connect"
		return
	fi
	unlike "$out" "OK" "$label: --allow-net 127.0.0.1:$port: the command cannot connect to the host's listener"
	is "$(j "$r" '["properties"]["net.allow"]["status"]')" missing "$label:   net.allow is missing"
	like "$(j "$r" '["properties"]["net.allow"]["reason"]')" "^(this backend does not enforce per-destination rules \(moat's native backend does, with its fence\); the network stays closed|disabled by MOAT_HOST_LIMIT; the network stays closed)$" \
		"$label:   with the reason"
	is "$(jx "$r" '[d["network"]["mode"], d["network"]["allow"][0]["text"], d["network"]["allow"][0]["host_loopback"]]')" \
		"[\"allow\", \"127.0.0.1:$port\", true]" "$label:   the report lists the entry"
	is "$(j "$r" '["properties"]["net.none"]["requested"]')" False "$label:   net.none is not asked for under net allow"
	valid_report "$r" "$label:   the report fits the schema"
	out=$(env -u MOAT_HOST_LIMIT "$MOAT" run --backend "$b" --mode prefer "${BASE[@]}" --net all -- "$HELPER" tcp 127.0.0.1 "$port" 2>/dev/null)
	is "$out" "OK" "$label: control, --net all: the command connects"
}

MOAT_HOST_LIMIT=netfence=0 one native native-nofence
if installed bwrap; then one bwrap bwrap; else diag "bwrap is not installed"; fi
if installed firejail; then one firejail firejail; else diag "firejail is not installed"; fi
if installed runsc; then one gvisor gvisor; else diag "runsc is not installed"; fi
for rt in crun runc; do
	if installed $rt; then
		MOAT_OCI_RUNTIME=$rt one oci "oci-$rt"
	else
		diag "$rt is not installed"
	fi
done
if installed nono; then one nono nono; else diag "nono is not installed"; fi

# --- require mode refuses where net.allow is missing -------------------------
r=$REPORTS/require.json
MOAT_HOST_LIMIT=netfence=0 "$MOAT" run "${BASE[@]}" --allow-net "127.0.0.1:$port" --report "$r" -- "$HELPER" tcp 127.0.0.1 "$port" \
	>"$SCRATCH/require.out" 2>"$SCRATCH/require.err"
is "$?/$(j "$r" '["status"]')" "125/unavailable" "require mode: --allow-net is refused (125, unavailable)"
like "$(cat "$SCRATCH/require.err")" "net.allow" "  stderr names net.allow"
unlike "$(cat "$SCRATCH/require.out")" "OK" "  and nothing connected"

# --- the dry run shows the allowlist and the pins ----------------------------
"$MOAT" run --mode prefer "${BASE[@]}" --allow-net api.example.com --allow-net '*.example.org:8443' \
	--allow-net '[2001:db8::/32]:*' --resolve api.example.com=192.0.2.1 --dry-run -- "$HELPER" exit 0 \
	>"$SCRATCH/dry.json" 2>/dev/null
is "$?" 0 "--dry-run with an allowlist"
is "$(j "$SCRATCH/dry.json" '["policy"]["net"]')" allow "  policy.net is allow"
is "$(jx "$SCRATCH/dry.json" '[[e["kind"], e.get("name") or e.get("address"), e["ports"]] for e in d["policy"]["net_allow"]]')" \
	'[["name", "api.example.com", [443, 80]], ["wildcard", "example.org", [8443]], ["address", "2001:db8::", "any"]]' \
	"  each entry as parsed: kind, name or address, ports"
is "$(jx "$SCRATCH/dry.json" '[d["policy"]["net_resolve"][0]["name"], d["policy"]["net_resolve"][0]["address"]]')" \
	'["api.example.com", "192.0.2.1"]' "  and the pin"
valid_report "$SCRATCH/dry.json" "  the dry run fits the schema"

# --- refusals ----------------------------------------------------------------
"$MOAT" run --net all --allow-net example.com -- "$HELPER" exit 0 2>"$SCRATCH/e1"
is "$?" 125 "--net all --allow-net: refused (125)"
like "$(cat "$SCRATCH/e1")" "allowed destination example.com contradicts net all" "  naming the contradiction"
like "$(cat "$SCRATCH/e1")" "hint: drop --net all" "  with a hint"
"$MOAT" run --net none --allow-net example.com -- "$HELPER" exit 0 2>"$SCRATCH/e2"
is "$?" 125 "--net none --allow-net: refused too (125)"
"$MOAT" run --allow-net 'exa_mple.com:99' -- "$HELPER" exit 0 2>"$SCRATCH/e3"
is "$?" 125 "a malformed destination: refused (125)"
like "$(cat "$SCRATCH/e3")" "^moat: --allow-net exa_mple.com:99: character '_' not allowed in a host name" \
	"  the message names the flag and the value"
# A label that starts or ends with '-' names no host (RFC 1123): "-foo.com"
# was allowed, an entry that allows nothing; a URL was read as host "https"
# and port "//host".
for d in -foo.com foo-.example a.-b.example; do
	"$MOAT" run "--allow-net=$d" --dry-run -- "$HELPER" exit 0 >/dev/null 2>"$SCRATCH/e5"
	is "$?" 125 "--allow-net=$d: refused (125)"
	like "$(head -n1 "$SCRATCH/e5")" "^moat: --allow-net $d: a label of the host name (starts|ends) with '-'" \
		"  naming the value and what is wrong"
done
"$MOAT" run --allow-net https://api.example.com:8443/v1 --dry-run -- "$HELPER" exit 0 >/dev/null 2>"$SCRATCH/e6"
is "$?" 125 "--allow-net URL: refused (125)"
is "$(cat "$SCRATCH/e6")" "moat: --allow-net https://api.example.com:8443/v1: a URL, not a destination
moat: hint: write it as api.example.com:8443 (ports 443 and 80 when it names none)" "  with the host:port to give"
"$MOAT" run --mode prefer --allow-net xn--bcher-kva.example --allow-net a-b.example:8443 --dry-run -- "$HELPER" exit 0 >"$SCRATCH/dry2.json"
is "$?/$(jx "$SCRATCH/dry2.json" '[a["name"] for a in d["policy"]["net_allow"]]')" '0/["xn--bcher-kva.example", "a-b.example"]' \
	"control: a '-' inside a label is a host name (the dry run lists both)"
printf '[sandbox]\nnetwork.allow = ["10.1.2.3/8"]\n' >"$SCRATCH/bad.toml"
"$MOAT" run --config "$SCRATCH/bad.toml" -- "$HELPER" exit 0 2>"$SCRATCH/e4"
is "$?" 125 "a malformed network.allow entry in a config: refused (125)"
like "$(cat "$SCRATCH/e4")" "bad.toml:2:18: sandbox.network.allow: \"10.1.2.3/8\": 10.1.2.3/8 has host bits set" \
	"  at FILE:LINE:COL"
like "$(cat "$SCRATCH/e4")" "hint: write 10.0.0.0/8 for the network" "  with the fix"

# --- help and the manual page show the flags ---------------------------------
like "$("$MOAT" run --help)" "--allow-net DEST" "moat run --help lists --allow-net"
like "$("$MOAT" help man 2>/dev/null)" "allow\\\\?-net" "the manual page lists --allow-net"
like "$("$MOAT" run --help)" "--resolve NAME=IP" "  and --resolve"

done_testing
