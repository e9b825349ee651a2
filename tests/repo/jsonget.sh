#!/usr/bin/env bash
# tests/helpers/jsonget answers json_get (tests/lib/tap.sh) for the suites
# without a Python start-up: for every expression, what it prints (or its
# exit 3, "ask Python") must leave json_get's answer exactly Python's.  Over
# a real report of this moat and a document made to hold every kind of
# value, each expression is answered both ways and compared.
. "$(dirname "$0")/../lib/tap.sh"
T=$(mktemp -d /tmp/moat-jsonget.XXXXXX)
trap 'rm -rf "$T"' EXIT
JG=$BUILD/helpers/jsonget
if [ ! -x "$JG" ]; then
	ok 1 "$JG is built (make helpers)"
	done_testing
	exit
fi

py_get() { # what json_get printed before jsonget: Python alone
	json_py "$1" "$2" 2>/dev/null
	echo "rc=$?"
}
cached() { # json_get's answer, the exit status with it
	json_get "$1" "$2" 2>/dev/null
	echo "rc=$?"
}
# same_as_python FILE DESCRIPTION EXPR...: json_get answers each as Python.
same_as_python() {
	local f=$1 desc=$2 e n=0 bad=
	shift 2
	for e in "$@"; do
		n=$((n + 1))
		[ "$(cached "$f" "$e")" = "$(py_get "$f" "$e")" ] || bad="$bad $e"
	done
	ok $([ -z "$bad" ] && echo 0 || echo 1) "$desc: json_get answers $n expressions as Python does${bad:+ (not:$bad)}"
}

"$MOAT" run --dry-run --profile strict -- /bin/true >"$T/report.json" 2>/dev/null
cat >"$T/kinds.json" <<'EOF'
{"s": "plain", "q": "a \"quoted\" \\ back\nslash\ttab", "ctl": "\u0001\u001f\u007f", "u": "h\u00e9llo \u2603 \ud83d\ude00",
 "i": 42, "neg": -7, "big": 9007199254740993, "f": 1.5, "e": 1e16, "t": true, "fa": false, "n": null,
 "o": {"b": [1, "x", null, true, {"c": []}], "e": {}, "s": "\u00e9"}, "a": [[], {}, [1, [2]]],
 "co": ["\u0001\u001f", "\u00e9"], "cs": ["\u0001\u001f"], "dup": 1, "dup": 2}
EOF
same_as_python "$T/report.json" "a moat report" \
	'["status"]' '["backend"]' '["properties"]["fs.read"]["status"]' '["properties"]["fs.read"]' \
	'["properties"]' '["environment"]["names"]' '["run"]' '["policy_digest"]' '["host"]["landlock_abi"]' \
	'["missing"]' '["nope"]' '["properties"]["nope"]["status"]'

same_as_python "$T/kinds.json" "every kind of value, and expressions it leaves to Python" \
	'["s"]' '["q"]' '["ctl"]' '["u"]' '["i"]' '["neg"]' '["big"]' '["f"]' '["e"]' '["t"]' '["fa"]' '["n"]' \
	'["o"]' '["o"]["b"]' '["o"]["b"][-1]' '["o"]["b"][4]["c"]' '["o"]["e"]' '["o"]["s"]' '["a"]' '["a"][2][1][0]' \
	'["co"]' '["cs"]' '["dup"]' "['s']" '' '["o"]["b"][9]' '["o"]["b"][-9]' '["s"][0]' '["i"]["x"]' '.get("s")' \
	'["o"].keys()' '[ "s" ]' '["o"]["b"][0:2]' '["q\"x"]'

# It does answer the common ones itself (else it saves nothing): exit 0
# without Python for a string, a number, an object; 3 for a float.
got=$("$JG" "$T/kinds.json" '["s"]'; echo "rc=$?"; "$JG" "$T/kinds.json" '["o"]["b"]'; echo "rc=$?"; "$JG" "$T/kinds.json" '["f"]'; echo "rc=$?")
is "$got" 'plain
rc=0
[1, "x", null, true, {"c": []}]
rc=0
rc=3' "jsonget answers a string and an array itself, and leaves a float to Python (exit 3, nothing printed)"
is "$("$JG" --null-json "$T/kinds.json" '["n"]')" null "--null-json prints a null as json.dumps does"

# Control: a jsonget that answers wrongly is caught by the comparison.
printf '#!/bin/sh\necho wrong\n' >"$T/wrong"
chmod 0755 "$T/wrong"
mkdir -p "$T/b/helpers" && cp "$T/wrong" "$T/b/helpers/jsonget"
[ "$(BUILD=$T/b cached "$T/kinds.json" '["s"]')" != "$(py_get "$T/kinds.json" '["s"]')" ]
ok $? "control: a jsonget printing something else makes json_get differ from Python"

done_testing
