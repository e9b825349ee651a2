#!/usr/bin/env bash
# The Kubernetes export's manifests against the schemas, offline (issue 22):
# every document of the four golden cases (tests/lib/k8s_cases.sh) is read
# by a YAML 1.2 reader (npm yaml, strict, unique keys) and validated by
# kubernetes-models (the Kubernetes API's OpenAPI definitions: Pod, Job,
# Deployment, NetworkPolicy) and @kubernetes-models/cilium (Cilium's CRD:
# CiliumNetworkPolicy); what the YAML 1.2 reader read must be what PyYAML
# (YAML 1.1) reads.  Controls: a manifest with a wrong type, a wrong enum
# value and a Cilium name the CRD's pattern refuses is found invalid.
#
# The packages are pinned by tests/k8s/package-lock.json and installed with
# `npm ci` into tests/k8s/node_modules (or a scratch copy when that is not
# ours to write) when missing or stale.  When that fails: a skip, unless
# MOAT_TEST_STRICT_SKIPS=1 and the npm registry answers (then a failure).
# kubernetes-models does not refuse fields the schema does not know; the
# goldens (golden_k8s.sh) hold the field names.
set -u
. "$(dirname "$0")/../lib/tap.sh"
K8S=$ROOT/tests/k8s

command -v node >/dev/null && command -v npm >/dev/null || skip_all "node and npm are not installed"
/usr/bin/python3 -c 'import yaml' 2>/dev/null ||
	skip_all "python3-yaml is not installed: the YAML 1.1 reading cannot be compared"
scratch_sticky

. "$ROOT/tests/lib/npm_pinned.sh"
npm_pinned "$K8S" k8s
K8S=$NPM_DIR
ok 0 "tests/k8s/node_modules matches package-lock.json"

. "$ROOT/tests/lib/k8s_cases.sh"
files=()
for c in $K8S_CASES; do
	k8s_case_args "$c"
	k8s "$SCRATCH/$c" "${ARGS[@]}" 2>"$SCRATCH/$c.err"
	is "$?" 0 "$c: exported"
	files+=("$SCRATCH/$c"/*.yaml)
done

node "$K8S/validate.mjs" "${files[@]}" >"$SCRATCH/valid.out" 2>&1
rc=$?
grep -v '^json ' "$SCRATCH/valid.out" | sed 's/^/# /'
is "$rc:$(grep -c '^valid ' "$SCRATCH/valid.out"):$(grep -c '^invalid ' "$SCRATCH/valid.out")" "0:${#files[@]}:0" \
	"every one of the ${#files[@]} documents is valid against its schema"
is "$(grep '^valid ' "$SCRATCH/valid.out" | cut -d' ' -f2 | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}')" \
	"1 CiliumNetworkPolicy, 1 Deployment, 1 Job, 4 NetworkPolicy, 2 Pod, " \
	"  each kind the cases write: Pod, Job, Deployment, NetworkPolicy, CiliumNetworkPolicy"

# The two readers agree: YAML 1.2 (node) and YAML 1.1 (PyYAML).
/usr/bin/python3 - "$SCRATCH/valid.out" >"$SCRATCH/readers.out" <<'EOF'
import json, sys, yaml
n = bad = 0
for line in open(sys.argv[1]):
    if not line.startswith("json "):
        continue
    _, path, idx, text = line.rstrip("\n").split(" ", 3)
    docs = list(yaml.safe_load_all(open(path)))
    n += 1
    if docs[int(idx)] != json.loads(text):
        bad += 1
        print("# differ: %s#%s" % (path, idx))
print("%d %d" % (n, bad))
EOF
is "$(tail -1 "$SCRATCH/readers.out")" "${#files[@]} 0" "a YAML 1.1 reader (PyYAML) reads every document as the YAML 1.2 one does"

# Controls: the validators refuse what is wrong.
W=$SCRATCH/allow-net
mkdir -p "$SCRATCH/bad"
sed 's/readOnlyRootFilesystem: true/readOnlyRootFilesystem: "true"/' "$W/workload.yaml" >"$SCRATCH/bad/type.yaml"
sed 's/protocol: "TCP"/protocol: "TCPX"/' "$W/networkpolicy.yaml" >"$SCRATCH/bad/enum.yaml"
sed 's/matchName: "api.example.org"/matchName: "api example!"/' "$W/cilium-fqdn.yaml" >"$SCRATCH/bad/fqdn.yaml"
for f in type enum fqdn; do
	node "$K8S/validate.mjs" "$SCRATCH/bad/$f.yaml" >"$SCRATCH/bad/$f.out" 2>&1
	rc=$?
	case $f in
	type) want='readOnlyRootFilesystem must be boolean' ;;
	enum) want='protocol must be equal to one of the allowed values' ;;
	fqdn) want='matchName must match pattern' ;;
	esac
	like "$rc:$(grep '^invalid' "$SCRATCH/bad/$f.out")" "^1:invalid .*$want" "control: a manifest with a bad $f is invalid ($want)"
done
done_testing
