#!/usr/bin/env bash
# Nothing calls upward (docs/architecture.md): no object of a stage uses a
# symbol defined in a stage above it, and no files use each other in a loop.
#
# The checker (tests/lib/check-layering.py) must flag a planted upward call,
# a planted loop and an unlisted stage, must pass the same tree without
# them, and must pass the real build.
. "$(dirname "$0")/../lib/tap.sh"
CHECK="$ROOT/tests/lib/check-layering.py"
T=$(mktemp -d /tmp/moat-layer.XXXXXX)
trap 'rm -rf "$T"' EXIT
printf 'top\nbottom\n' >"$T/order"

# obj STAGE/NAME CODE: compile CODE into the planted tree's STAGE/NAME.o
obj() {
	mkdir -p "$T/tree/src/$(dirname "$1")"
	printf '%s\n' "$2" >"$T/c.c"
	cc -c -o "$T/tree/src/$1.o" "$T/c.c"
}
plant() {
	rm -rf "$T/tree"
	obj top/a 'int b(void); int a(void) { return b(); }'
	obj bottom/b 'int b(void) { return 1; }'
}
check() { python3 "$CHECK" "$T/tree" "$T/order" 2>&1; }

plant
out=$(check); rc=$?
is "$rc" 0 "a tree whose calls go down passes" || diag "$out"

plant
obj bottom/c 'int a(void); int c(void) { return a(); }'
out=$(check); rc=$?
is "$rc" 1 "an upward call is flagged" && like "$out" '^upward  bottom/c.o -> top/a.o a' "  and named, with the symbol"

plant
obj bottom/d 'int e(void); int d(void) { return e(); }'
obj bottom/e 'int d(void); int e(void) { return d(); }'
out=$(check); rc=$?
is "$rc" 1 "two files of one stage calling each other are flagged" && like "$out" '^loop    bottom/d.o -> bottom/e.o -> bottom/d.o' "  as a loop"

plant
obj middle/m 'int m(void) { return 0; }'
out=$(check); rc=$?
is "$rc" 1 "a stage the order does not list is flagged" && like "$out" '^unknown middle/m.o' "  by name"

# The real build, in the order docs/architecture.md writes down.
if [ -d "$ROOT/${BUILD_DIR:-build}/src" ]; then
	out=$(python3 "$CHECK" "$ROOT/${BUILD_DIR:-build}" 2>&1); rc=$?
	is "$rc" 0 "moat's objects: nothing calls upward, no loop (docs/architecture.md)" || diag "$out"
else
	ok 1 "moat's objects # skip not built"
fi
done_testing
