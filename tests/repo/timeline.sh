#!/usr/bin/env bash
# The start-up timeline marks (src/util/timeline.h) exist only in a build
# made with -DMOAT_TIMELINE (bench/run makes one apart): the moat users run
# writes no "moat-timeline" line and carries no such code.
set -u
. "$(dirname "$0")/../lib/tap.sh"
MOAT=${MOAT:-build/moat}

err=$("$MOAT" run --profile strict -- /bin/true 2>&1 >/dev/null)
is "$?" 0 "moat run --profile strict -- /bin/true succeeds"
unlike "$err" "moat-timeline" "the normal build writes no timeline marks"
if command -v nm >/dev/null 2>&1; then
	unlike "$(nm -D --defined-only "$MOAT" 2>/dev/null; nm "$MOAT" 2>/dev/null)" "moat_timeline_mark" \
		"the normal build has no timeline code"
fi
grep -q -- "-DMOAT_TIMELINE" "$ROOT/bench/run"
is "$?" 0 "bench/run builds its timeline moat with -DMOAT_TIMELINE"
done_testing
