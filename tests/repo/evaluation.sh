#!/usr/bin/env bash
# docs/evaluation.md is what tools/gen-evaluation.py makes of the data it
# quotes (docs/conformance.json, docs/performance.md): a figure or a verdict
# there that the data does not say is a failure (`make evaluation` makes it
# current).  The generator must also see a change in the data: a planted
# verdict changes the document.
. "$(dirname "$0")/../lib/tap.sh"
T=$(mktemp -d /tmp/moat-eval.XXXXXX)
trap 'rm -rf "$T"' EXIT
GEN=$ROOT/tools/gen-evaluation.py

/usr/bin/python3 "$GEN" "$ROOT" >"$T/now.md" 2>"$T/err"
ok $? "tools/gen-evaluation.py runs on the repository's data"
if cmp -s "$T/now.md" "$ROOT/docs/evaluation.md"; then
	ok 0 "docs/evaluation.md is current with docs/conformance.json and docs/performance.md"
else
	ok 1 "docs/evaluation.md is current with docs/conformance.json and docs/performance.md (make evaluation)"
	diff "$ROOT/docs/evaluation.md" "$T/now.md" | head -20 | sed 's/^/#   /'
fi
# Control: a copy of the data with one verdict changed gives another document.
mkdir -p "$T/copy/docs"
cp "$ROOT/docs/performance.md" "$T/copy/docs/"
/usr/bin/python3 - "$ROOT/docs/conformance.json" "$T/copy/docs/conformance.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["reports"]["root"]["native-strict"]["fs.secrets"] = "missing"
json.dump(d, open(sys.argv[2], "w"))
PY
/usr/bin/python3 "$GEN" "$T/copy" >"$T/planted.md" 2>/dev/null
grep -q '^| fs.secrets | \*\*no\*\* |' "$T/planted.md"
ok $? "control: a verdict changed in the data shows in the document"
done_testing
