#!/usr/bin/env bash
# libmoat under a thin CLI: the shared library exports exactly the public
# API of include/moat/moat.h, and that API runs the same pipeline.
set -u
. "$(dirname "$0")/../lib/tap.sh"
lib=$BUILD/libmoat.so
ok $([ -f "$lib" ] && echo 0 || echo 1) "libmoat.so is built"
exports=$(nm -D --defined-only "$lib" 2>/dev/null | awk '{print $3}' | sort | tr '\n' ' ')
is "$exports" "moat_free moat_probe_json moat_run_main moat_version " "libmoat.so exports only the public API (-fvisibility=hidden)"
want=$(grep -o 'MOAT_EXPORT [a-z ]*\*\?moat_[a-z_]*' "$ROOT/include/moat/moat.h" | sed 's/.*\(moat_[a-z_]*\)$/\1/' | sort | tr '\n' ' ')
is "$want" "$exports" "and that is what include/moat/moat.h declares"
# --version: the version and the git revision the binary was built from.
version=$(cat "$ROOT/VERSION")
got=$("$MOAT" --version)
like "$got" "^moat $version \\(git ([0-9a-f]{12}(-dirty)?|unknown)\\)\$" "moat --version prints the version and the git revision"
if [ -e "$ROOT/.git" ] && rev=$(git -C "$ROOT" describe --always --dirty --abbrev=12 --exclude='*' 2>/dev/null); then
	is "$got" "moat $version (git $rev)" "the revision is the checkout's (git describe --dirty)"
elif [ -f "$ROOT/.git-revision" ]; then
	is "$got" "moat $version (git $(head -c 64 "$ROOT/.git-revision"))" "the revision is the copy's .git-revision"
fi
done_testing
