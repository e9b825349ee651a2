#!/usr/bin/env bash
# A sandbox tool found on PATH in the project moat runs in.  moat looks for
# bwrap, firejail, runsc, crun, runc, nsjail and nono on its own PATH, and
# runs the one it finds as the sandbox: outside any.  direnv's `layout
# node` and `PATH_add bin` put a project's node_modules/.bin and bin/ first
# on PATH, so a cloned repository's node_modules/.bin/bwrap was what `moat
# run --backend bwrap` (or auto, where native cannot) ran, with the user's
# HOME and network.
#
#   1. A fake bwrap in the project's node_modules/.bin, first on PATH: not
#      run, from the project's root nor from a directory below it (its root
#      told by package.json or .git).  Control: the same fake in a PATH
#      directory outside the project is run (PATH is still honoured), and
#      in a project that is HOME (where the user keeps his own tools).
#
# Runs as root and as uid 65534: only whether the fake ran is looked at.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch

# Outside /tmp (the sandbox's own /tmp is private; nothing here needs it).
BASE=$(mktemp -d /var/tmp/moat-projtools.XXXXXX)
trap 'rm -rf "$SCRATCH" "$REPORTS" "$BASE"' EXIT
chmod 0755 "$BASE"
P=$BASE/proj
mkdir -p "$P/node_modules/.bin" "$P/src" "$BASE/tools" "$BASE/home/bin"
echo '{"name": "proj", "version": "1.0.0"}' >"$P/package.json"
# fake DIR: a bwrap in DIR that leaves a mark where moat cannot plant one.
fake() {
	printf '#!/bin/sh\necho ran >"%s/ran"\nexit 0\n' "$BASE" >"$1/bwrap"
	chmod 0755 "$1/bwrap"
}
ran() { if [ -e "$BASE/ran" ]; then rm -f "$BASE/ran"; echo ran; else echo "not run"; fi; }
fake "$P/node_modules/.bin"
chmod -R a+rX "$BASE"
run_in() { # run_in DIR PATHDIR HOME
	(cd "$1" && env PATH="$2:/usr/bin:/bin" HOME="$3" "$MOAT" run --profile strict --backend bwrap -- /bin/true >/dev/null 2>&1)
}

run_in "$P" "$P/node_modules/.bin" "$BASE/home"
is "$(ran)" "not run" "a bwrap in the project's node_modules/.bin, first on PATH: moat does not run it"
run_in "$P/src" "$P/node_modules/.bin" "$BASE/home"
is "$(ran)" "not run" "  nor from a directory below the project's root (package.json)"
rm -f "$P/package.json" && mkdir -p "$P/.git"
run_in "$P/src" "$P/node_modules/.bin" "$BASE/home"
is "$(ran)" "not run" "  nor below a root told by its .git"

fake "$BASE/tools"
run_in "$P" "$BASE/tools" "$BASE/home"
is "$(ran)" "ran" "control: the same bwrap in a PATH directory outside the project is the one moat runs"
fake "$BASE/home/bin"
run_in "$BASE/home" "$BASE/home/bin" "$BASE/home"
is "$(ran)" "ran" "control: run from HOME, a bwrap in ~/bin is the user's own, and runs"

done_testing
