#!/usr/bin/env bash
# Golden tests of the Kubernetes export (`moat export --format k8s`, issue
# 22): the manifests, the report's per-property table and the file list for
# four policies -- a strict exec Job, an MCP server of a config with a write
# grant (Deployment), the network allowlist, limits -- over a fixed scratch
# tree, compared with tests/golden/k8s/CASE/ after the scratch dir is
# replaced by @ROOT@.  Nothing is run, so the result is the same as root and
# as nobody.  Besides the goldens: the same input twice gives the same bytes;
# the seccomp profile is the OCI bundle's linux.seccomp, rule for rule; a
# YAML 1.1 reader (PyYAML) reads every document as moat built it, values that
# plain YAML would turn into booleans, numbers or nulls included (with the
# control: written plain, PyYAML reads them otherwise); what cannot be
# enforced by a manifest is never said to be; bad options are refused.
# The Kubernetes and Cilium schemas are checked by k8s_schema.sh.
#
# Regenerate after a deliberate change, then READ the diff:
#   MOAT_GOLDEN_UPDATE=1 bash tests/blackbox/golden_k8s.sh
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch_sticky
GOLDEN=$ROOT/tests/golden/k8s
PY=/usr/bin/python3
. "$ROOT/tests/lib/k8s_cases.sh"

"$PY" -c 'import yaml' 2>/dev/null || skip_all "python3-yaml is not installed: the manifests cannot be read back"

# Every file of OUT, the scratch dir as @ROOT@, into DEST/.
normalise() {
	local out=$1 dest=$2 f
	rm -rf "$dest"
	mkdir -p "$dest"
	(cd "$out" && find . -type f ! -path './seccomp/*' | sort) | while read -r f; do
		mkdir -p "$dest/$(dirname "$f")"
		sed "s#$T#@ROOT@#g" "$out/$f" >"$dest/$f"
	done
}

# export_case CASE [moat export options]: golden check of every file but
# the seccomp profile (checked against the OCI bundle's below).
export_case() {
	local name=$1 out="$SCRATCH/out-$1"
	shift
	k8s "$out" "$@" 2>"$out.err"
	local rc=$?
	is "$rc" 0 "k8s $name: moat export --format k8s exits 0"
	[ "$rc" -eq 0 ] || { sed 's/^/#   /' "$out.err"; return; }
	normalise "$out" "$out.norm"
	local f files
	files=$(cd "$out.norm" && find . -type f | sort)
	for f in $files; do
		golden_check "$out.norm/$f" "$GOLDEN/$name/${f#./}" "k8s $name: ${f#./}"
	done
	is "$(echo $files)" \
		"$(echo $(cd "$GOLDEN/$name" 2>/dev/null && find . -type f | sort))" \
		"k8s $name: the same files as the golden"
	sed "s#$T#@ROOT@#g; s#$SCRATCH#@SCRATCH@#g" "$out.err" >"$out.err.norm"
	golden_check "$out.err.norm" "$GOLDEN/$name.stderr" "k8s $name: the table on stderr"
}

for c in $K8S_CASES; do
	k8s_case_args "$c"
	export_case "$c" "${ARGS[@]}"
done

# --- determinism: the same input, the same bytes ----------------------------
for c in strict-job allow-net; do
	k8s_case_args "$c"
	k8s "$SCRATCH/again-$c" "${ARGS[@]}" 2>/dev/null
	diff -r "$SCRATCH/out-$c" "$SCRATCH/again-$c" >"$SCRATCH/again-$c.diff"
	ok $? "k8s $c: a second export is byte for byte the first ($(find "$SCRATCH/out-$c" -type f | wc -l) files)"
done

# An export over an earlier one leaves none of the earlier manifests: a
# stale cilium-fqdn.yaml would be applied with the wider policy.
k8s_case_args allow-net
k8s "$SCRATCH/over" "${ARGS[@]}" 2>/dev/null
is "$(cd "$SCRATCH/over" && ls *.yaml | tr '\n' ' ')" "cilium-fqdn.yaml networkpolicy.yaml workload.yaml " \
	"k8s: the allowlist's export has a cilium-fqdn.yaml"
(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin "$MOAT" export --format k8s -o "$SCRATCH/over" --image x \
	--net none -- /bin/true 2>/dev/null)
is "$(cd "$SCRATCH/over" && ls *.yaml | tr '\n' ' ')" "networkpolicy.yaml workload.yaml " \
	"k8s: an export of --net none over the allowlist's removes its cilium-fqdn.yaml"
is "$(grep -c '^  egress: \[\]$' "$SCRATCH/over/networkpolicy.yaml")" 1 "  and its NetworkPolicy denies all egress"

# --- the seccomp profile is the OCI bundle's linux.seccomp ------------------
same_rules() { # same_rules K8S_OUT OCI_OUT
	"$PY" - "$1" "$2" <<'EOF'
import glob, json, sys
k8s = json.load(open(glob.glob(sys.argv[1] + "/seccomp/moat/*.json")[0]))
oci = json.load(open(sys.argv[2] + "/config.json"))["linux"]["seccomp"]
print("same %d" % len(k8s["syscalls"]) if k8s == oci else "differ: %d vs %d rules" % (len(k8s["syscalls"]), len(oci["syscalls"])))
EOF
}
(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin "$MOAT" oci export -o "$SCRATCH/oci-none" --profile strict \
	-- /bin/true 2>/dev/null)
like "$(same_rules "$SCRATCH/out-strict-job" "$SCRATCH/oci-none")" '^same [0-9]{3}$' \
	"k8s strict-job: the Localhost profile is the OCI bundle's linux.seccomp (--net none)"
# Under the allowlist the NetworkPolicy filters; the profile is --net all's,
# which lets inet sockets be made (moat's own --net allow filter refuses
# them until its fence is up).
(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin "$MOAT" oci export -o "$SCRATCH/oci-all" --net all \
	-- /bin/true 2>/dev/null)
like "$(same_rules "$SCRATCH/out-allow-net" "$SCRATCH/oci-all")" '^same [0-9]{3}$' \
	"k8s allow-net: the profile is the OCI bundle's for --net all"
like "$(same_rules "$SCRATCH/out-allow-net" "$SCRATCH/oci-none")" '^differ' \
	"  control: it is not --net none's (which refuses inet sockets)"

# --- what the manifests say, read by a YAML 1.1 reader ----------------------
W=$SCRATCH/out-strict-job/workload.yaml
yq() { "$PY" -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
C='d["spec"]["template"]["spec"]["containers"][0]'
is "$(yq "$W" "$C[\"securityContext\"]")" \
	"{'allowPrivilegeEscalation': False, 'privileged': False, 'readOnlyRootFilesystem': True, 'runAsNonRoot': True, 'runAsUser': 65534, 'runAsGroup': 65534, 'capabilities': {'drop': ['ALL']}, 'seccompProfile': {'type': 'Localhost', 'localhostProfile': 'moat/moat-sh.json'}}" \
	"k8s: the container's securityContext (non-root, no escalation, no capability, read-only root, Localhost seccomp)"
is "$(yq "$W" '[d["spec"]["template"]["spec"][k] for k in ("automountServiceAccountToken", "enableServiceLinks", "hostNetwork", "hostPID", "hostIPC")]')" \
	"[False, False, False, False, False]" "k8s: no service-account token, no service-link variables, no host namespace"
is "$(yq "$W" "[(m['mountPath'].replace('$T', '@ROOT@'), m.get('readOnly')) for m in $C['volumeMounts']]")" \
	"[('/tmp', None), ('@ROOT@/home', None), ('@ROOT@/out', False)]" \
	"k8s: /tmp, HOME and the write grant are the writable mounts (parents first)"
is "$(yq "$SCRATCH/out-mcp-write/workload.yaml" "[(m['mountPath'].replace('$T', '@ROOT@'), m.get('readOnly')) for m in d['spec']['template']['spec']['containers'][0]['volumeMounts'] if m['name'].startswith('grant')]")" \
	"[('@ROOT@/proj', True), ('@ROOT@/proj/data', False)]" "k8s mcp-write: the read grant read-only, the write grant below it writable"
is "$(yq "$SCRATCH/out-mcp-write/workload.yaml" "d['spec']['template']['spec']['containers'][0]['stdin']")" True \
	"k8s mcp-write: a stdio server's container has stdin"

# Quoting: values plain YAML would read as something else reach the
# command as they were.
VALUES=(on yes no null '~' 0755 1e3 0x1F '- x' 'a: b' '#x' '' ' lead' $'two\nlines' 'tab	x' "$(printf 'del\x7f')" 'é€' '*ref' '!tag' '"q"' "'s'" '\back' '{x}')
envs=()
for i in "${!VALUES[@]}"; do envs+=(--env "V$i=${VALUES[$i]}"); done
k8s "$SCRATCH/quoting" --image x "${envs[@]}" -- /bin/true 2>/dev/null
"$PY" - "$SCRATCH/quoting/workload.yaml" "${VALUES[@]}" >"$SCRATCH/quoting.out" <<'EOF'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
env = {e["name"]: e["value"] for e in d["spec"]["containers"][0]["env"]}
want = sys.argv[2:]
bad = [(i, w, env.get("V%d" % i)) for i, w in enumerate(want) if env.get("V%d" % i) != w]
print("all %d" % len(want) if not bad else "bad %r" % bad)
# The control: the same values written plain.
plain = 0
for w in want:
    try:
        if yaml.safe_load("v: %s" % w)["v"] != w:
            plain += 1
    except yaml.YAMLError:
        plain += 1
print("plain %d" % plain)
EOF
is "$(head -1 "$SCRATCH/quoting.out")" "all ${#VALUES[@]}" \
	"k8s: ${#VALUES[@]} tricky values (on, 0755, '- x', 'a: b', a newline, DEL, UTF-8, ...) read back exactly"
like "$(tail -1 "$SCRATCH/quoting.out")" '^plain (1[5-9]|2[0-9])$' \
	"  control: written plain, most of them read otherwise ($(tail -1 "$SCRATCH/quoting.out"))"
is "$(LC_ALL=C grep -c -P '[^\x00-\x7f]' "$SCRATCH/quoting/workload.yaml"):$(grep -c '"\\u00E9\\u20AC"' "$SCRATCH/quoting/workload.yaml")" "0:1" \
	"k8s: the YAML is ASCII (UTF-8 as \\u escapes)"

# --- the table never claims what a manifest cannot give ---------------------
R=$SCRATCH/out-limits/moat/report.json
is "$(json_eval "$R" '{r["property"]: r["enforced"] for r in d["properties"] if r["property"].startswith("res.") or r["property"] in ("fs.secrets", "env.curated", "isolation", "lsm")}')" \
	'{"fs.secrets": "not expressible", "env.curated": "not expressible", "isolation": "cluster feature", "lsm": "not expressible", "res.memory": "manifest", "res.cpu": "not expressible", "res.pids": "cluster feature", "res.files": "not expressible", "res.timeout": "manifest"}' \
	"k8s limits: memory and the deadline in the manifest, pids only with the kubelet's podPidsLimit, CPU time and files not expressible"
is "$(json_eval "$SCRATCH/out-allow-net/moat/report.json" '[(r["enforced"], r.get("needs")) for r in d["properties"] if r["property"] == "net.allow"]')" \
	'[["cluster feature", "a CNI that enforces NetworkPolicy"], ["cluster feature", "Cilium (CiliumNetworkPolicy toFQDNs)"], ["not expressible", null], ["cluster feature", "a CNI that enforces NetworkPolicy"], ["not expressible", null]]' \
	"k8s allow-net: addresses and pins need a NetworkPolicy CNI, names Cilium, the host's loopback and proxy: cannot be expressed"
is "$(yq "$SCRATCH/out-allow-net/workload.yaml" 'd["spec"]["hostAliases"]')" "[{'ip': '192.0.2.10', 'hostnames': ['api.example.org']}]" \
	"k8s allow-net: a --resolve pin is in the pod's /etc/hosts"
is "$(yq "$SCRATCH/out-allow-net/networkpolicy.yaml" '[r for r in d["spec"]["egress"] if r["to"][0]["ipBlock"]["cidr"] == "192.0.2.10/32"]')" \
	"[{'to': [{'ipBlock': {'cidr': '192.0.2.10/32'}}], 'ports': [{'protocol': 'TCP', 'port': 443}, {'protocol': 'TCP', 'port': 80}]}]" \
	"  and its address allowed on the name's ports"
# 0.0.0.0/0 holds the host's loopback (host_loopback in the report) but is
# more than it: an ipBlock, not left out as localhost:PORT is.
(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin "$MOAT" export --format k8s -o "$SCRATCH/out-cidr" --image x \
	--allow-net 0.0.0.0/0:443 --allow-net localhost:5432 -- /bin/true >/dev/null 2>&1)
is "$(yq "$SCRATCH/out-cidr/networkpolicy.yaml" '[r["to"][0]["ipBlock"]["cidr"] for r in d["spec"]["egress"]]')" "['0.0.0.0/0']" \
	"k8s: --allow-net 0.0.0.0/0:443 is an ipBlock though it holds the host's loopback; localhost:5432 is left out"
is "$(json_eval "$R" 'sorted(set(r["enforced"] for r in d["properties"]))')" \
	'["cluster feature", "manifest", "not expressible"]' "k8s: every row says one of the three"
is "$(yq "$SCRATCH/out-limits/workload.yaml" '(d["spec"]["activeDeadlineSeconds"], d["spec"]["runtimeClassName"], d["spec"]["containers"][0]["resources"])')" \
	"(91, 'gvisor', {'limits': {'memory': '536870912'}, 'requests': {'memory': '536870912'}})" \
	"k8s limits: --timeout 90.5 is a deadline of 91 s (never shorter), gvisor, the memory"
is "$(ls "$SCRATCH/out-limits")" "moat
networkpolicy.yaml
seccomp
workload.yaml" "k8s: nothing but manifests at the top (kubectl apply -f DIR)"
[ -e "$SCRATCH/out-mcp-write/cilium-fqdn.yaml" ]
is $? 1 "k8s mcp-write: no Cilium policy without names"

# --- refused ------------------------------------------------------------------
refused() { # refused DESC PATTERN [moat export options]
	local desc=$1 pat=$2
	shift 2
	k8s "$SCRATCH/refused" "$@" 2>"$SCRATCH/refused.err"
	local rc=$?
	is "$rc" 125 "k8s refused: $desc (exit 125)"
	like "$(tr '\n' ' ' <"$SCRATCH/refused.err")" "$pat" "  says: $pat"
	[ ! -e "$SCRATCH/refused/workload.yaml" ]
	ok $? "  and writes no manifest"
}
refused "no --image" "needs --image.*hint: --image REF" -- /bin/true
refused "an unknown --kind" "--kind CronJob: unknown workload kind.*hint: --kind Pod, Job or Deployment" \
	--image x --kind CronJob -- /bin/true
refused "a runtime class that is no name" "--runtime-class Bad_Name: not a RuntimeClass name" \
	--image x --runtime-class Bad_Name -- /bin/true
refused "a value that is not UTF-8" "the value of V is not UTF-8" --image x --env "V=$(printf 'a\xffb')" -- /bin/true
refused "an image that is not UTF-8" "--image: not UTF-8" --image "$(printf 'a\xffb')" -- /bin/true
refused "--mode off" "the policy asks for no sandbox \\(mode off\\).*hint: drop --mode off" --image x --mode off -- /bin/true
refused "--backend oci" "--backend oci has no meaning with --format k8s.*hint: --runtime-class NAME" \
	--image x --backend oci -- /bin/true
k8s "$SCRATCH/gvisor" --image x --backend gvisor -- /bin/true 2>/dev/null
is "$(yq "$SCRATCH/gvisor/workload.yaml" 'd["spec"]["runtimeClassName"]'):$(json_eval "$SCRATCH/gvisor/moat/report.json" '[r["enforced"] for r in d["properties"] if r["property"] == "isolation"]')" \
	'gvisor:["cluster feature"]' "k8s: --backend gvisor (strong isolation) is runtimeClassName gvisor, a cluster feature"
(cd "$T/proj" && "$MOAT" export --kind Job -o "$SCRATCH/refused2" --backend oci -- /bin/true 2>"$SCRATCH/refused2.err")
is "$?:$(cat "$SCRATCH/refused2.err")" "125:moat: --image, --kind and --runtime-class are for --format k8s" \
	"k8s refused: --kind without --format k8s"
(cd "$T/proj" && "$MOAT" export --format yaml -o "$SCRATCH/refused3" -- /bin/true 2>"$SCRATCH/refused3.err")
like "$?:$(head -1 "$SCRATCH/refused3.err")" "^125:moat: --format yaml: unknown export format" "k8s refused: --format yaml"
done_testing
