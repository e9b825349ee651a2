#!/usr/bin/env bash
# Golden tests of the nono and seatbelt compilers: `moat export` on fixed
# policies over a fixed scratch tree, in a fixed environment; the argv
# (argv.json) and, for seatbelt, the SBPL profile (profile.sb) compared with
# tests/golden/{nono,seatbelt}/CASE.* after the scratch dir -> @ROOT@ and
# the export dir -> @OUT@.  Neither tool runs on this host (nono is not
# installed, seatbelt is macOS only): export still compiles, and
# `moat run` must refuse with the reason and a hint.
#
# Regenerate after a deliberate change, then READ the diff:
#   MOAT_GOLDEN_UPDATE=1 bash tests/blackbox/golden_nono_seatbelt.sh
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
GOLDEN=$ROOT/tests/golden
T=$SCRATCH/t
mkdir -p "$T/home/.ssh" "$T/proj/sub" "$T/out" "$T/data"
echo key >"$T/home/.ssh/id_ed25519"
echo token >"$T/proj/secret.txt"

compare() { # compare BACKEND CASE FILE GOLDEN-NAME
	local backend=$1 name=$2 got=$3 want="$GOLDEN/$1/$4"
	if [ "${MOAT_GOLDEN_UPDATE:-0}" = 1 ]; then
		mkdir -p "$GOLDEN/$backend"
		cp "$got" "$want"
		ok 0 "$backend $name: $4 regenerated"
	elif [ ! -f "$want" ]; then
		ok 1 "$backend $name: golden $want is missing (MOAT_GOLDEN_UPDATE=1 makes it)"
	elif diff -u "$want" "$got" >"$got.diff"; then
		ok 0 "$backend $name: $4 matches the golden"
	else
		ok 1 "$backend $name: $4 differs from the golden"
		sed 's/^/#   /' "$got.diff" | head -40
	fi
}

export_case() { # export_case BACKEND CASE [moat options]
	local backend=$1 name=$2 out="$SCRATCH/out-$1-$2"
	shift 2
	rm -rf "$out"
	(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin LANG=C.UTF-8 \
		"$MOAT" export --backend "$backend" -o "$out" "$@" -- /bin/sh -c 'echo hi' 2>"$out.err")
	local rc=$?
	is "$rc" 0 "$backend $name: moat export exits 0"
	[ "$rc" -eq 0 ] || { sed 's/^/#   /' "$out.err"; return; }
	sed -e "s#$out#@OUT@#g" -e "s#$SCRATCH/t#@ROOT@#g" "$out/argv.json" >"$out/argv.norm.json"
	compare "$backend" "$name" "$out/argv.norm.json" "$name.json"
	if [ "$backend" = seatbelt ]; then
		sed -e "s#$SCRATCH/t#@ROOT@#g" "$out/profile.sb" >"$out/profile.norm.sb"
		compare "$backend" "$name" "$out/profile.norm.sb" "$name.sb"
	fi
}

COMMON=(--write "$T/out" --deny "$T/proj/secret.txt")
for b in nono seatbelt; do
	export_case $b default "${COMMON[@]}"
	export_case $b loopback-home "${COMMON[@]}" --net loopback --read "$T/home" --write "$T/data"
	export_case $b net-all "${COMMON[@]}" --net all
done

# Properties the output must show whatever the goldens say.
SB=$SCRATCH/out-seatbelt-default/profile.sb
is "$(head -1 "$SB")" "(version 1)" "seatbelt: the profile starts with (version 1)"
like "$(grep -v '^;' "$SB" | sed -n 2p)" "^\(deny default\)$" "seatbelt: the first rule is (deny default)"
grant=$(grep -n "(allow file-read\* (subpath \"$T/proj\"))" "$SB" | cut -d: -f1)
deny=$(grep -n "(deny file-read\* file-write\* (subpath \"$T/proj/secret.txt\"))" "$SB" | cut -d: -f1)
[ -n "$grant" ] && [ -n "$deny" ] && [ "$deny" -gt "$grant" ]
ok $? "seatbelt: the denied file comes after the grant that holds it (the last match wins: $grant < $deny)"
unlike "$(grep -v "^;" "$SB")" "network" "seatbelt net none: no network rule at all"
like "$(cat "$SCRATCH/out-seatbelt-loopback-home/profile.sb")" 'remote ip "localhost:\*"' "seatbelt loopback: localhost only"
# A path that tries to close the string and add a rule stays one literal.
EVIL="$T/evil\")(allow file-read* (subpath \"/"
mkdir -p "$T/evil\")(allow file-read* (subpath \"" 2>/dev/null
out=$SCRATCH/out-evil
(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin "$MOAT" export --backend seatbelt -o "$out" --deny "$EVIL" \
	-- /bin/true 2>/dev/null)
line=$(grep -F 'evil' "$out/profile.sb")
is "$line" "(deny file-read* file-write* (subpath \"$T/evil\\\")(allow file-read* (subpath \\\"\"))" \
	"seatbelt: quotes in a path are escaped: the path cannot end the literal"
is "$(grep -c '^(allow file-read\* (subpath "/"))' "$out/profile.sb")" 0 "seatbelt: no injected (allow ... \"/\") rule"
A=$SCRATCH/out-nono-default/argv.json
like "$(tr -d '\n ' <"$A")" '"--allow","'"$T"'/out"' "nono: the write grant is --allow"
like "$(tr -d '\n ' <"$A")" '"--block-net","--","/bin/sh"' "nono: --block-net, then the command after --"
unlike "$(cat "$SCRATCH/out-nono-net-all/argv.json")" "block-net" "nono net all: no --block-net"

# Neither runs here: moat run refuses, with the reason and a hint.
for b in nono seatbelt; do
	[ "$b" = nono ] && command -v nono >/dev/null && continue
	out=$(env HOME="$T/home" "$MOAT" run --backend $b --mode prefer -- /bin/true 2>"$SCRATCH/$b.err")
	is "$?" 125 "$b: moat run here exits 125, even in prefer mode"
	like "$(cat "$SCRATCH/$b.err")" "hint: ." "$b: with a hint"
done
like "$(cat "$SCRATCH/seatbelt.err")" "runs only on macos" "seatbelt: the reason says it is macOS only"
done_testing
