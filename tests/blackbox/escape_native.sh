#!/usr/bin/env bash
# The escape suite (issue 7) for the NATIVE backend, as TAP: runs
# tests/escape/run-conformance for moat native (strict, strict with HOME
# granted, mcp, the fallback without user namespaces, and that fallback on a
# Landlock without scopes) as whichever user this
# is started as, after the unsandboxed baseline, and emits one line per probe.
#
# Fails when native under `strict` lets out a probe the host kernel could have
# contained (every probe the baseline shows getting out, unless the property
# it breaks is reported missing AND the kernel feature it needs is absent
# according to tests/lib/feature-present), and when moat's own report claims
# a property `enforced` that a probe broke, in any native variant.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
RUNNER=$ROOT/tests/escape/run-conformance
[ -x /usr/bin/python3 ] || { echo "1..0 # SKIP /usr/bin/python3 is needed"; exit 0; }
[ -x "$MOAT" ] || { ok 1 "moat binary at $MOAT"; done_testing; exit 1; }

t0=$(date +%s)
ROOT=$ROOT BUILD=$BUILD MOAT=$MOAT timeout 300 /usr/bin/python3 "$RUNNER" --users self \
	--backends native-strict,native-strict-home,native-mcp,native-nouserns,native-nouserns-abi5 \
	--json "$SCRATCH/conformance.json" >"$SCRATCH/out" 2>"$SCRATCH/err"
rc=$?
ok $rc "the escape runner ran ($(($(date +%s) - t0)) s, exit $rc)"
if [ "$rc" -ne 0 ]; then
	tail -20 "$SCRATCH/err" | sed 's/^/# /'
	done_testing
	exit 1
fi

# One "STATUS<TAB>DESCRIPTION" per test: 0 pass, 1 fail, S skip.
/usr/bin/python3 - "$SCRATCH/conformance.json" "$ROOT/tests/lib/feature-present" >"$SCRATCH/tap" <<'EOF'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
feature_present = sys.argv[2]
NEEDS = {"fs.read": "landlock", "fs.write": "landlock", "fs.secrets": "landlock", "fs.tmp": "userns",
         "net.none": "seccomp", "ipc.abstract": "landlock", "ipc.unix": "userns", "proc.pid": "userns",
         "proc.ptrace": "seccomp", "sys.filter": "seccomp", "tty.inject": "seccomp"}
props = d["probe_props"]
def present(feature):
    return subprocess.run([feature_present, feature]).returncode == 0
def line(status, text):
    print("%s\t%s" % (status, text.replace("\n", " ")[:900]))
(user,) = list(d["results"])
res = d["results"][user]
base = res.get("none", {})
und = d["undetectable"].get(user, {})
strict = res.get("native-strict")
if not strict:
    line(1, "native-strict ran as %s: %s" % (user, d["skipped"].get(user, {}).get("native-strict", "no result")))
else:
    for p in d["probes"]:
        r = strict.get(p)
        prop = props.get(p)
        rep = (r or {}).get("report_props") or d["reports"][user].get("native-strict", {})
        if not r:
            line(1, "strict %s: no result" % p)
        elif r["verdict"] == "ESCAPED":
            need = NEEDS.get(prop)
            if rep.get(prop) == "missing" and need and not present(need):
                line("S", "strict %s escaped, but the host lacks %s (%s reported missing)" % (p, need, prop))
            else:
                line(1, "strict %s: ESCAPED (%s is %s): %s" % (p, prop, rep.get(prop, "?"), r.get("detail", "")))
        elif r["verdict"] == "NOT-APPLICABLE":
            line("S", "strict %s: n/a: %s" % (p, r.get("detail", "")[:300]))
        elif p in und:
            line("S", "strict %s contained, but the probe cannot get out here even unsandboxed: %s" % (p, und[p]))
        else:
            line(0, "strict %s contained (%s)" % (p, r.get("result")))
    nd = [p for p in d["probes"] if base.get(p) and base[p]["verdict"] != "ESCAPED" and p not in und]
    line(0 if not nd else 1, "every probe gets out unsandboxed or is listed undetectable" + (": %s" % nd if nd else ""))
for b in ("native-strict", "native-strict-home", "native-mcp", "native-nouserns", "native-nouserns-abi5"):
    if b not in res:
        continue
    broken = [c for c in d["claims_broken"] if c["user"] == user and c["backend"] == b]
    for c in broken:
        line(1, "%s: the report claims %s enforced, but %s escaped" % (b, c["property"], c["probe"]))
    if not broken:
        esc = [p for p, r in res[b].items() if r["verdict"] == "ESCAPED"]
        line(0, "%s: no property the report claims enforced was broken%s" % (
            b, (" (escaped, reported missing: %s)" % ", ".join(esc)) if esc else ""))
EOF
while IFS=$'\t' read -r st desc; do
	case $st in
	S)
		TAP_N=$((TAP_N + 1))
		echo "ok $TAP_N # SKIP $desc"
		;;
	*) ok "$st" "$desc" ;;
	esac
done <"$SCRATCH/tap"
diag "matrix summary:"
sed 's/^/#   /' "$SCRATCH/out"
done_testing
