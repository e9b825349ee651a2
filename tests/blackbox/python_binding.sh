#!/usr/bin/env bash
# The Python binding's own unit tests (bindings/python/test_moat.py), run
# against $MOAT and turned into TAP: one line per unittest test, so the
# suite driver counts them.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
DIR=$ROOT/bindings/python
if [ ! -f "$DIR/test_moat.py" ]; then
	ok 1 "bindings/python/test_moat.py is in the tree ($DIR)"
	done_testing
	exit 1
fi
# unittest -v writes "name (module.Class.name) ... result" to stderr; the
# tests never print, so each result is on its test's line.  cwd: scratch,
# so no stray file lands in the tree; bytecode goes nowhere.
cd "$SCRATCH"
MOAT="$MOAT" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m unittest discover -s "$DIR" -p 'test_*.py' -v \
	>"$SCRATCH/unittest.log" 2>&1
rc=$?
n=0
while IFS= read -r line; do
	if [[ $line =~ ^(test[A-Za-z0-9_]*)\ \(([A-Za-z0-9_.]+)\)(.*)\ \.\.\.\ (.*)$ ]]; then
		name="${BASH_REMATCH[2]}"
		res="${BASH_REMATCH[4]}"
		n=$((n + 1))
		case $res in
		ok | "expected failure") ok 0 "python: $name" ;;
		skipped*) TAP_N=$((TAP_N + 1)); echo "ok $TAP_N # SKIP python: $name: ${res#skipped }" ;;
		*) ok 1 "python: $name: $res" ;;
		esac
	fi
done <"$SCRATCH/unittest.log"
ok $([ "$n" -gt 0 ] && echo 0 || echo 1) "python: the unittest run found tests ($n)"
ok "$rc" "python: unittest exits 0"
if [ "$rc" -ne 0 ]; then
	sed -n '/^=====/,$p' "$SCRATCH/unittest.log" | head -80 | sed 's/^/# /'
fi
done_testing
