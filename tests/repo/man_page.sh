#!/usr/bin/env bash
# moat(1), as `moat help man` writes it, renders without a troff warning
# (groff -ww: every warning) at the widths man gives a terminal.  A long
# path of the profiles' secret lists was one word troff could not break,
# "can't break line" under `man --warnings`, and ran past the right margin.
#
# The check must flag a page planted with such a line, and pass moat's.
# groff comes with man-db (groff-base; scripts/ensure-deps test).
. "$(dirname "$0")/../lib/tap.sh"
T=$(mktemp -d /tmp/moat-manpage.XXXXXX)
trap 'rm -rf "$T"' EXIT

# warnings PAGE: what groff says of PAGE at each width, and man -l.
warnings() {
	local w
	for w in 100 80 72 60; do
		groff -ww -man -Tutf8 -rLL="${w}n" -z "$1" 2>&1 | sed "s/^/width $w: /"
	done
	MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null
}

if ! command -v groff >/dev/null || ! command -v man >/dev/null; then
	ok 1 "groff and man are installed (sh scripts/ensure-deps test)"
	done_testing
	exit
fi

printf '%s\n' '.TH T 1' '.SH NAME' 't \- a test' '.SH DESCRIPTION' '.PP' 'short words' \
	"$(printf 'x%.0s' $(seq 120))" >"$T/bad.1"
out=$(warnings "$T/bad.1")
like "$out" "can't break line" "a planted line troff cannot break is flagged"
printf '%s\n' '.TH T 1' '.SH NAME' 't \- a test' '.SH DESCRIPTION' '.PP' 'short words' >"$T/good.1"
is "$(warnings "$T/good.1")" "" "control: a page without one passes"

if [ -x "$BUILD/moat" ]; then
	"$BUILD/moat" help man >"$T/moat.1"
	ok $? "moat help man writes the page"
	out=$(warnings "$T/moat.1")
	is "$out" "" "moat(1): no troff warning at any width"
else
	ok 1 "moat is built at $BUILD/moat (make)"
fi
done_testing
