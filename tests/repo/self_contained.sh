#!/usr/bin/env bash
# The repository carries everything its tests read (issue 16).
#
# The checker (tests/lib/check-self-contained.py) must flag each kind of
# reference to a path outside the repository in a planted tree, must pass the
# same tree without them, and must pass the real repository.  The dynamic half
# is .ci/run, which runs the whole suite in a copy with nothing beside it.
. "$(dirname "$0")/../lib/tap.sh"
CHECK="$ROOT/tests/lib/check-self-contained.py"
T=$(mktemp -d /tmp/moat-selfc.XXXXXX)
trap 'rm -rf "$T"' EXIT

# plant FILE LINE: a tree holding one clean script and FILE with LINE.
plant() {
	rm -rf "$T/tree"
	mkdir -p "$T/tree/tests/blackbox" "$T/tree/tests/lib" "$T/tree/scripts"
	printf '. "$(dirname "$0")/../lib/tap.sh"\nread -r x < "$ROOT/tests/data.txt"\n' >"$T/tree/tests/blackbox/clean.sh"
	printf 'all:\n\t$(CC) -o build/x src/x.c\n' >"$T/tree/Makefile"
	[ -n "$1" ] || return 0
	mkdir -p "$T/tree/$(dirname "$1")"
	printf '%s\n' "$2" >>"$T/tree/$1"
}

flags() { # flags DESC FILE LINE: the checker must find LINE in FILE
	plant "$2" "$3"
	local out rc
	out=$(python3 "$CHECK" "$T/tree" 2>&1); rc=$?
	[ $rc = 1 ] && printf '%s' "$out" | grep -q "^$2:"
	ok $? "flags $1" || diag "rc=$rc: $out"
}

plant "" ""
out=$(python3 "$CHECK" "$T/tree" 2>&1)
ok $? "a tree whose paths stay inside passes" || diag "$out"

flags "../shared in a test" tests/blackbox/a.sh 'cat ../shared/toml-test/tests/files-toml-1.0.0'
flags "MOAT_SHARED_DIR" tests/toml/run.py 'base = os.environ.get("MOAT_SHARED_DIR")'
flags "/work/ by name" tests/blackbox/b.sh 'cp /work/other/x .'
flags "\$(dirname \$0) climbing above the root" tests/blackbox/c.sh 'd="$(dirname "$0")/../../../sibling/data"'
flags "\${BASH_SOURCE[0]} climbing above the root" tests/lib/d.sh 'x=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)'
flags "\$ROOT/.. in a test" tests/blackbox/e.sh 'ls "$ROOT/../cases"'
flags "\$(CURDIR)/.. in the Makefile" Makefile 'include $(CURDIR)/../common.mk'
flags "a leading ../ in the Makefile" Makefile 'CASES = ../cases'
flags "a leading ../ in a set-up script" scripts/setup 'cp -r ../vendor .'
flags "os.path.join(here, \"..\", ...) above the root" tests/toml/e.py 'base = os.path.join(here, "..", "..", "..", "cases")'

# Anchored paths that stay inside are not findings.
plant tests/blackbox/f.sh 'x="$(dirname "$0")/../lib/tap.sh"; y="$ROOT/tests/lib/a/../b"'
mkdir -p "$T/tree/tests/toml"
printf 'base = os.path.join(here, "..", "toml-test")\n' >"$T/tree/tests/toml/g.py"
out=$(python3 "$CHECK" "$T/tree" 2>&1)
ok $? "paths that climb but stay inside pass" || diag "$out"

# The repository itself.
out=$(python3 "$CHECK" "$ROOT" 2>&1)
ok $? "no test, build rule or set-up script of the repository refers outside it" || diag "$out"

# The vendored toml-test cases are there, with their licence and origin.
[ -s "$ROOT/tests/toml-test/LICENSE" ] && grep -q "MIT" "$ROOT/tests/toml-test/LICENSE" &&
	grep -qE '[0-9a-f]{40}' "$ROOT/tests/toml-test/README.md"
ok $? "tests/toml-test carries its MIT licence and names the upstream commit"
missing=0
while IFS= read -r f; do
	[ -n "$f" ] && [ ! -f "$ROOT/tests/toml-test/tests/$f" ] && missing=$((missing + 1))
done <"$ROOT/tests/toml-test/tests/files-toml-1.0.0"
n=$(grep -c . "$ROOT/tests/toml-test/tests/files-toml-1.0.0")
[ "$missing" = 0 ] && [ "$n" -gt 500 ]
ok $? "every one of the $n files the TOML 1.0 list names is vendored ($missing missing)"
done_testing
