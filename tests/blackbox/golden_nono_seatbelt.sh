#!/usr/bin/env bash
# Golden tests of the nono and seatbelt compilers: `moat export` on fixed
# policies over a fixed scratch tree, in a fixed environment; the argv
# (argv.json) and, for seatbelt, the SBPL profile (profile.sb) compared with
# tests/golden/{nono,seatbelt}/CASE.{json,sb} after the host-specific parts
# are normalised (the scratch tree -> @ROOT@, the export dir -> @OUT@).
# Neither tool runs here (nono is not packaged for Debian, sandbox-exec is
# macOS only): export still compiles everything, needs no privilege, and
# gives the same files as root and as nobody; `moat run` must refuse with
# status unavailable and a hint.  The system paths in the goldens are a
# Debian 12 host's (which optional ones exist, which are symlinks).
#
# Regenerate after a deliberate change, then READ the diff:
#   MOAT_GOLDEN_UPDATE=1 bash tests/blackbox/golden_nono_seatbelt.sh
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch_sticky
GOLDEN=$ROOT/tests/golden
T=$SCRATCH/t
mkdir -p "$T/home/.ssh" "$T/home/.aws" "$T/proj/sub" "$T/out" "$T/data" "$T/out/ro"
echo key >"$T/home/.ssh/id_ed25519"
echo token >"$T/proj/secret.txt"
echo x >"$T/proj/sub/f"

compare() { # compare BACKEND CASE GOT GOLDEN-FILE
	golden_check "$3" "$GOLDEN/$1/$4" "$1 $2: $4"
}

norm() { sed -E -e "s#$2#@OUT@#g" -e "s#$SCRATCH/t#@ROOT@#g" -e 's#/\.cache/moat/pkg/[^/"]+-[0-9a-f]{12}(/|")#/.cache/moat/pkg/@PROJECT@\1#g' "$1"; }

# export_case BACKEND CASE [moat options]
export_case() {
	local backend=$1 name=$2 out="$SCRATCH/out-$1-$2"
	shift 2
	rm -rf "$out"
	(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin LANG=C.UTF-8 \
		"$MOAT" export --backend "$backend" -o "$out" "$@" -- /bin/sh -c 'echo hi' 2>"$out.err")
	local rc=$?
	is "$rc" 0 "$backend $name: moat export exits 0"
	[ "$rc" -eq 0 ] || { sed 's/^/#   /' "$out.err"; return; }
	norm "$out/argv.json" "$out" >"$out/argv.norm.json"
	compare "$backend" "$name" "$out/argv.norm.json" "$name.json"
	if [ "$backend" = seatbelt ]; then
		norm "$out/profile.sb" "$out" >"$out/profile.norm.sb"
		compare "$backend" "$name" "$out/profile.norm.sb" "$name.sb"
	fi
}


COMMON=(--write "$T/out" --deny "$T/proj/secret.txt")
for b in nono seatbelt; do
	export_case $b default "${COMMON[@]}"
	export_case $b loopback-home "${COMMON[@]}" --net loopback --read "$T/home" --write "$T/data" --read "$T/out/ro"
	export_case $b net-all "${COMMON[@]}" --net all
done

# --- seatbelt: what every profile must show, whatever the goldens say ------
SB=$SCRATCH/out-seatbelt-default/profile.sb
rules() { grep -v '^;' "$1" | grep -v '^$'; } # the rules, without comments
is "$(head -1 "$SB")" "(version 1)" "seatbelt: the profile starts with (version 1)"
is "$(rules "$SB" | sed -n 2p)" "(deny default)" "seatbelt: the first rule after it is (deny default)"
line_of() { grep -nF -- "$2" "$1" | head -1 | cut -d: -f1; }
grant=$(line_of "$SB" "process-exec (subpath \"$T/proj\"))")
deny=$(line_of "$SB" "(deny file-read* file-write* file-map-executable process-exec (subpath \"$T/proj/secret.txt\"))")
[ -n "$grant" ] && [ -n "$deny" ] && [ "$deny" -gt "$grant" ]
ok $? "seatbelt: the denied file comes after the grant that holds it (the later rule wins: ${grant:-?} < ${deny:-?})"
last_allow=$(grep -n '^(allow' "$SB" | tail -1 | cut -d: -f1)
first_deny=$(grep -n '^(deny file' "$SB" | head -1 | cut -d: -f1)
[ "$first_deny" -gt "$last_allow" ]
ok $? "seatbelt: every deny rule comes after every allow rule ($last_allow < $first_deny)"
like "$(cat "$SB")" "file-write\* file-map-executable process-exec \(subpath \"$T/out\"\)" "seatbelt: the write grant is file-write*"
like "$(cat "$SB")" '\(subpath "/usr/bin"\)' "seatbelt: /bin is written as the kernel names it too (/usr/bin on Debian)"
unlike "$(rules "$SB")" 'network-outbound|network-bind|\(allow system-socket\)' "seatbelt net none: no network rule, AF_UNIX sockets only"
unlike "$(rules "$SB")" 'file-ioctl' "seatbelt: no file-ioctl rule (no TIOCSTI on an inherited terminal)"
like "$(cat "$SB")" "file-write\* file-map-executable process-exec \(subpath \"$SCRATCH/out-seatbelt-default/tmp\"\)" \
	"seatbelt: a private TMPDIR in the work dir stands in for the private /tmp"
[ -d "$SCRATCH/out-seatbelt-default/tmp" ]
ok $? "seatbelt: the TMPDIR directory is made"
is "$(json_get "$SCRATCH/out-seatbelt-default/report.json" '["properties"]["fs.tmp"]["status"]')" missing \
	"seatbelt: fs.tmp is missing (no private /tmp), however the TMPDIR helps"
A=$SCRATCH/out-seatbelt-default/argv.json
like "$(tr -d '\n ' <"$A")" '^\["sandbox-exec","-f","'"$SCRATCH"'/out-seatbelt-default/profile.sb","--","/bin/sh","-c","echohi"\]$' \
	"seatbelt: sandbox-exec -f PROFILE -- CMD"
LB=$SCRATCH/out-seatbelt-loopback-home/profile.sb
like "$(cat "$LB")" 'remote ip "localhost:\*"' "seatbelt loopback: outbound to localhost only"
unlike "$(cat "$LB")" '"\*:\*"' "seatbelt loopback: no rule for every address"
ro=$(line_of "$LB" "(deny file-write* (subpath \"$T/out/ro\"))")
rw=$(line_of "$LB" "file-write* file-map-executable process-exec (subpath \"$T/out\"))")
[ -n "$ro" ] && [ -n "$rw" ] && [ "$ro" -gt "$rw" ]
ok $? "seatbelt: a read grant inside a write grant denies writes again, after it (${rw:-?} < ${ro:-?})"
like "$(cat "$SCRATCH/out-seatbelt-net-all/profile.sb")" 'mDNSResponder' "seatbelt net all: DNS through mDNSResponder"
is "$(json_get "$SCRATCH/out-seatbelt-net-all/report.json" '["properties"]["ipc.unix"]["status"]')" missing \
	"seatbelt net all: ipc.unix is missing (the mDNSResponder socket)"

# A path that tries to end its string and add a rule stays one literal.
EVIL="$T/ev\"il) (allow file-read* (subpath \"/\")) (\\x"
mkdir -p "$EVIL" || true
# It exists: a deny of an absent path with '*' in it would be refused as a
# glob (moat does not support them).
touch "$EVIL/secret"
out=$SCRATCH/out-evil
(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin "$MOAT" export --backend seatbelt -o "$out" \
	--read "$EVIL" --deny "$EVIL/secret" -- /bin/true 2>"$out.err")
is "$?" 0 "seatbelt: export with a path holding quotes, parentheses and a backslash exits 0"
check=$(/usr/bin/python3 - "$out/profile.sb" "$EVIL" <<'PY'
import sys
text, evil = open(sys.argv[1]).read(), sys.argv[2]
# A tokenizer of SBPL's surface syntax: (, ), "strings" with \ escapes,
# ; comments, atoms.
forms, stack, strings, i = [], [], [], 0
while i < len(text):
    c = text[i]
    if c == ';':
        i = text.find('\n', i); i = len(text) if i < 0 else i
    elif c == '(':
        stack.append([]); i += 1
    elif c == ')':
        f = stack.pop(); (stack[-1] if stack else forms).append(f); i += 1
    elif c == '"':
        j, s = i + 1, ''
        while text[j] != '"':
            if text[j] == '\\':
                j += 1
            s += text[j]; j += 1
        strings.append(s); (stack[-1] if stack else forms).append(('str', s)); i = j + 1
    elif c.isspace():
        i += 1
    else:
        j = i
        while j < len(text) and not text[j].isspace() and text[j] not in '()";':
            j += 1
        (stack[-1] if stack else forms).append(text[i:j]); i = j
assert not stack, "unbalanced parentheses"
lines = [l for l in text.splitlines() if l.startswith('(')]
def bad(f):  # an allow of the whole file system
    return isinstance(f, list) and f and f[0] == 'allow' and any(
        isinstance(x, list) and x[:2] == ['subpath', ('str', '/')] for x in f)
print("forms=%d lines=%d evil_read=%s evil_deny=%s root_allowed=%s" % (
    len(forms), len(lines), evil in strings, evil + '/secret' in strings, any(bad(f) for f in forms)))
PY
)
like "$check" '^forms=([0-9]+) lines=\1 ' "seatbelt: one rule per line, none injected ($check)"
like "$check" 'evil_read=True evil_deny=True' "seatbelt: the evil path is read back exactly, as one string"
like "$check" 'root_allowed=False$' "seatbelt: no (allow ... (subpath \"/\")) was injected"
like "$(cat "$out/profile.sb")" 'ev\\"il\) \(allow file-read\* \(subpath \\"/\\"\)\) \(\\\\x' \
	"seatbelt: '\"' and '\\' are escaped in the literal"
nl=$(printf '%s/new\nline' "$T")
(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin "$MOAT" export --backend seatbelt -o "$SCRATCH/out-nl" \
	--deny "$nl" -- /bin/true 2>"$SCRATCH/out-nl.err")
is "$?" 125 "seatbelt: a path with a newline is refused (exit 125)"
like "$(cat "$SCRATCH/out-nl.err")" "control character" "seatbelt: and the error says why"

mkdir -p "$(printf '%s/a\nb' "$T")" && ln -s "$(printf '%s/a\nb' "$T")" "$T/link-nl"
(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin "$MOAT" export --backend seatbelt -o "$SCRATCH/out-lnl" \
	--read "$T/link-nl" -- /bin/true 2>"$SCRATCH/out-lnl.err")
is "$?" 125 "seatbelt: a grant whose symlink target has a newline is refused too (exit 125)"

# --- nono ---------------------------------------------------------------------
A=$SCRATCH/out-nono-default/argv.json
NA=$(tr -d '\n ' <"$A")
like "$NA" '^\["nono","--silent","run",' "nono: nono --silent run (stderr stays the command's)"
like "$NA" '"--read","'"$T"'/proj"' "nono: the cwd read grant is --read"
like "$NA" '"--read","/usr"' "nono: the system read grants are --read"
like "$NA" '"--read-file","/dev/urandom"' "nono: a file grant is --read-file"
like "$NA" '"--allow","'"$T"'/out"' "nono: the write grant is --allow (read+write; nono's --write is write-only)"
like "$NA" '"--allow-file","/dev/null"' "nono: a writable file is --allow-file"
unlike "$NA" 'secret.txt' "nono: a denied path is not passed (nono has no deny flag)"
unlike "$NA" '"/libx32"' "nono: a grant that does not exist is not passed (nono would refuse it)"
like "$NA" '"--net-block","--","/bin/sh","-c","echohi"\]$' "nono: --net-block, then the command after --"
like "$(tr -d '\n ' <"$SCRATCH/out-nono-loopback-home/argv.json")" '"--net-block","--"' \
	"nono loopback: --net-block too (nono has no loopback-only mode: fails closed)"
unlike "$(cat "$SCRATCH/out-nono-net-all/argv.json")" "net-block" "nono net all: no --net-block"
R=$SCRATCH/out-nono-default/report.json
for prop in fs.read fs.write fs.secrets net.none ipc.unix proc.pid sys.filter env.curated fd.clean; do
	is "$(json_get "$R" "[\"properties\"][\"$prop\"][\"status\"]")" missing "nono: $prop is missing (not claimed)"
done
is "$(json_get "$R" '["properties"]["proc.ptrace"]["status"]')" enforced "nono: proc.ptrace is claimed (the Landlock domain)"
like "$(json_get "$R" '["properties"]["fs.read"]["reason"]')" "base groups" "nono: fs.read names nono's base groups"
mkdir -p "$T/a,b"
(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin "$MOAT" export --backend nono -o "$SCRATCH/out-comma" \
	--write "$T/a,b" -- /bin/true 2>"$SCRATCH/out-comma.err")
is "$?" 125 "nono: a grant with ',' is refused (nono would split it into two grants)"
(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin "$MOAT" export --backend nono \
	-o "$SCRATCH/out-nonoenv" --env NONO_ALLOW=/ -- /bin/true 2>"$SCRATCH/out-nonoenv.err")
is "$?" 125 "nono: a NONO_* variable in the command's environment is refused (nono reads it as an option)"
like "$(cat "$SCRATCH/out-nonoenv.err")" "NONO_ALLOW" "nono: and the error names it"
# nono can only hand its own environment on: a hook in it would act on nono,
# outside the sandbox (docs/backends.md); the same run without it exports.
(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin "$MOAT" export --backend nono \
	-o "$SCRATCH/out-nonohook" --env LD_PRELOAD=/x.so -- /bin/true 2>"$SCRATCH/out-nonohook.err")
is "$?" 125 "nono: a loader hook in the command's environment is refused (nono would load it itself)"
like "$(cat "$SCRATCH/out-nonohook.err")" "LD_PRELOAD in it would act on nono itself" "nono: and the error names it"
(cd "$T/proj" && env -i HOME="$T/home" PATH=/usr/bin:/bin "$MOAT" export --backend nono \
	-o "$SCRATCH/out-nonoplain" --env PLAIN=/x.so -- /bin/true 2>/dev/null)
is "$?" 0 "nono: control: the same variable under another name exports"

# --- neither runs here: unavailable, with the reason and a hint ---------------
for b in nono seatbelt; do
	if [ "$b" = nono ] && command -v nono >/dev/null 2>&1; then
		diag "nono is installed here: its absence is not checked"
		continue
	fi
	out=$(cd "$T/proj" && env HOME="$T/home" "$MOAT" run --backend $b --dry-run -- /bin/true 2>/dev/null)
	is "$?" 125 "$b: moat run --dry-run exits 125"
	printf '%s\n' "$out" >"$SCRATCH/$b-dry.json"
	is "$(json_get "$SCRATCH/$b-dry.json" '["status"]')" unavailable "$b: status unavailable"
	like "$(json_get "$SCRATCH/$b-dry.json" '["properties"]["fs.read"]["hint"]')" "." "$b: an install hint is given"
	(cd "$T/proj" && env HOME="$T/home" "$MOAT" run --backend $b --mode prefer -- /bin/sh -c "echo ran >$T/out/$b-ran" \
		>/dev/null 2>"$SCRATCH/$b.err")
	rc=$?
	[ "$rc" = 125 ] && [ ! -e "$T/out/$b-ran" ]
	ok $? "$b: moat run exits 125 and runs nothing, even in prefer mode (rc $rc)"
	like "$(cat "$SCRATCH/$b.err")" "hint: ." "$b: stderr carries a hint"
done
like "$(json_get "$SCRATCH/nono-dry.json" '["properties"]["fs.read"]["hint"]' 2>/dev/null)" \
	"not packaged for Debian.*cargo install nono-cli.*brew install nono" "nono: the hint says how to get it (not apt)"
like "$(cat "$SCRATCH/seatbelt.err")" "runs only on macos" "seatbelt: the reason says it is macOS only"
done_testing
