#!/usr/bin/env bash
# The built-in secrets (issue 20, item 7): every credential path on moat's
# list stays unreadable when a directory above it is granted.  Generated
# from the list itself (`moat profiles`), so a path added there is tried
# here with nothing else to change:
#
#   1. docs/policy.md's table is the list moat applies: the same paths, each
#      with the same tool, in the same order;
#   2. a fake HOME with a canary at every path (a directory gets one inside),
#      and controls beside them that are not on the list; one run per case
#      reads them all: under --read HOME (strict), under --profile mcp, and
#      with --read ~/.config granting a parent directly.  Every canary must
#      stay unread and every control be read: the controls prove the reading
#      works.  The system secrets this host has are tried too;
#   3. canaries made while the command runs, at new paths of the list (a
#      directory that was absent, a file beside existing ones), stay unread;
#      a file made then in a granted directory is read (control);
#   4. a grant inside a path of the list is refused.
#
# Runs as root, as uid 65534 and with the sanitizer moat (tests/run-all).
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
unset MOAT_HOST_LIMIT
UNIQ="$$-$RANDOM"
# Outside /tmp: the sandbox's /tmp is its own.
BASE=$(mktemp -d /var/tmp/moat-secrets.XXXXXX)
chmod 0755 "$BASE"
trap 'rm -rf "$SCRATCH" "$REPORTS" "$BASE"' EXIT
cd "$SCRATCH" || exit 1

# ---------------------------------------------- 1. the docs and the list agree
# `moat profiles` prints the list as "  TOOL: PATH, PATH" lines.
LIST=$SCRATCH/list.tsv
"$MOAT" profiles | /usr/bin/python3 -c '
import sys
lines = sys.stdin.read().splitlines()
i = next(k for k, l in enumerate(lines) if l.startswith("denied in every profile"))
for l in lines[i + 1:]:
    if not l.startswith("  "):
        break
    tool, paths = l[2:].split(": ", 1)
    for p in paths.split(", "):
        print("%s\t%s" % (p, tool))
' >"$LIST"
N=$(wc -l <"$LIST")
[ "$N" -ge 150 ]
ok $? "moat profiles lists the built-in secrets ($N paths)"
out=$(/usr/bin/python3 - "$ROOT/docs/policy.md" "$LIST" 2>&1 <<'PY'
import re, sys
doc = open(sys.argv[1]).read()
section = doc.split("\n## Built-in secrets\n", 1)[1].split("\n## ", 1)[0]
rows = [(m.group(1), m.group(2).strip()) for m in re.finditer(r"^\| `([^`]+)` \| ([^|]+?) \| [^|]+ \|$", section, re.M)]
listed = [tuple(l.rstrip("\n").split("\t")) for l in open(sys.argv[2])]
for k, (a, b) in enumerate(zip(rows, listed)):
    if a != b:
        sys.exit("row %d: docs/policy.md has %s (%s), moat profiles %s (%s)" % (k + 1, a[0], a[1], b[0], b[1]))
if len(rows) != len(listed):
    sys.exit("docs/policy.md has %d rows, moat profiles %d paths" % (len(rows), len(listed)))
PY
)
ok $? "docs/policy.md's table of built-in secrets is moat's list, path and tool, in order ${out:+($out)}"

# ------------------------------------------------------ 2. a canary at every path
FH=$BASE/home
mkdir -p "$FH"
HOME_PATHS=() # relative to HOME, without the trailing /
SYS_PATHS=()
while IFS=$'\t' read -r p _; do
	# shellcheck disable=SC2088  # the list's own "~/", not HOME
	case $p in
	"~/"*) HOME_PATHS+=("${p#\~/}") ;;
	*) SYS_PATHS+=("$p") ;;
	esac
done <"$LIST"
# canary REL: the file that holds the canary of the path REL (a directory's
# canary is a file inside it).
canary() {
	case $1 in
	*/) echo "$FH/${1%/}/canary" ;;
	*) echo "$FH/$1" ;;
	esac
}
CANARIES=()
for p in "${HOME_PATHS[@]}"; do
	c=$(canary "$p")
	mkdir -p "$(dirname "$c")"
	echo "moat-canary-$UNIQ ~/$p" >"$c"
	CANARIES+=("$c")
done
# Controls: beside the paths of the list, not on it.  Where only a file of a
# directory is listed, the rest of the directory stays readable.
CONTROLS=(.control .config/control-app/settings .cache/huggingface/hub/control .m2/repository/control
	.gradle/caches/control .ollama/models/control .pulumi/plugins/control .cargo/config.toml
	.local/share/uv/tools/control .local/share/control .config/opentofu/control .mongodb/control
	.ipython/profile_default/control .var/app/org.example.App/control snap/control .docker-control)
CONTROL_FILES=()
for c in "${CONTROLS[@]}"; do
	mkdir -p "$(dirname "$FH/$c")"
	echo "moat-control-$UNIQ ~/$c" >"$FH/$c"
	CONTROL_FILES+=("$FH/$c")
done
chmod -R u+rwX,go+rX "$FH"

# Inside the sandbox: "READ <path>" for each file cat can read.
READER='for f; do cat -- "$f" >/dev/null 2>&1 && echo "READ $f"; done; exit 0'
# read_of OUT FILE...: the files of FILE... that OUT says were read.
read_of() {
	local out=$1 f
	shift
	for f; do
		grep -qxF "READ $f" <<<"$out" && echo "$f"
	done
	return 0
}
M() { env HOME="$FH" "$MOAT" run "$@"; }

# check_case NAME CONTROL_PREFIX ARGS...: one run reading every canary and
# the controls below HOME/CONTROL_PREFIX (those the case grants).
check_case() {
	local name=$1 prefix=$2 out leaked seen c controls=()
	shift 2
	for c in "${CONTROL_FILES[@]}"; do
		case $c in "$FH/$prefix"*) controls+=("$c") ;; esac
	done
	out=$(M "$@" -- /bin/sh -c "$READER" sh "${CANARIES[@]}" "${controls[@]}" 2>"$SCRATCH/err")
	leaked=$(read_of "$out" "${CANARIES[@]}")
	seen=$(read_of "$out" "${controls[@]}")
	is "$(grep -c . <<<"$leaked")" 0 "$name: none of the ${#CANARIES[@]} canaries is read $(echo $leaked | head -c 300)"
	is "$(grep -c . <<<"$seen")" "${#controls[@]}" \
		"$name: the ${#controls[@]} controls beside them are read (the reading works) $(head -c 300 "$SCRATCH/err")"
}

# --read HOME, strict: one line per path, then the report.
out=$(M --profile strict --read "$FH" --report-fd 3 -- /bin/sh -c "$READER" sh "${CANARIES[@]}" "${CONTROL_FILES[@]}" \
	3>"$REPORTS/r.json" 2>"$SCRATCH/err")
for i in "${!HOME_PATHS[@]}"; do
	! grep -qxF "READ ${CANARIES[$i]}" <<<"$out"
	ok $? "--read ~: ~/${HOME_PATHS[$i]} is not read"
done
seen=$(read_of "$out" "${CONTROL_FILES[@]}")
is "$(grep -c . <<<"$seen")" "${#CONTROL_FILES[@]}" \
	"--read ~: the ${#CONTROL_FILES[@]} controls beside them are read (the reading works) $(head -c 300 "$SCRATCH/err")"
is "$(json_get "$REPORTS/r.json" '["properties"]["fs.secrets"]["status"]')" enforced "--read ~: the report says fs.secrets enforced"
# Without the sandbox every canary is read (the canaries are real).
out=$(env HOME="$FH" "$MOAT" run --mode off -- /bin/sh -c "$READER" sh "${CANARIES[@]}" 2>/dev/null)
is "$(read_of "$out" "${CANARIES[@]}" | grep -c .)" "${#CANARIES[@]}" "control (--mode off): every canary is read"

check_case "--profile mcp --read ~" "" --profile mcp --read "$FH"
check_case "--read ~/.config" .config/ --profile strict --read "$FH/.config"

# The system secrets this host has, where this user can read them outside.
SYS_READABLE=()
for p in "${SYS_PATHS[@]}"; do
	p=${p%/}
	if [ -d "$p" ]; then
		f=$(find "$p" -maxdepth 2 -type f -readable 2>/dev/null | head -1)
	else
		f=$p
	fi
	[ -n "$f" ] && [ -f "$f" ] && [ -r "$f" ] && cat -- "$f" >/dev/null 2>&1 && SYS_READABLE+=("$f")
done
if [ "${#SYS_READABLE[@]}" -gt 0 ]; then
	out=$(M --profile strict -- /bin/sh -c "$READER" sh "${SYS_READABLE[@]}" /etc/passwd 2>/dev/null)
	is "$(read_of "$out" "${SYS_READABLE[@]}" | tr '\n' ' ')" "" \
		"the ${#SYS_READABLE[@]} system secrets this user reads outside are not read inside (${SYS_READABLE[*]})"
	grep -qxF "READ /etc/passwd" <<<"$out"
	ok $? "  control: /etc/passwd, beside them, is read"
else
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N # SKIP no system secret on this host is readable by uid $(id -u) outside moat"
fi

# ------------------------------------ 2b. HOME written another way
# A HOME of $BASE//home (or /./, a leading //, a "..") gave denies of
# $BASE//home/.ssh, which planning, comparing text, did not find inside the
# grant of $BASE/home: the grant covered them, every canary was read, and
# the report said fs.secrets enforced (red-team, stop 49).  A ".." through
# a link is the kernel's: $BASE/lnk/../home is $BASE/d/home, where lnk
# points into d (a link to this HOME).
mkdir -p "$BASE/d/e" "$BASE/x"
ln -s "$BASE/d/e" "$BASE/lnk"
ln -s "$FH" "$BASE/d/home"
for H in "$BASE//home" "$BASE/./home" "$BASE/x/../home" "/$BASE/home" "$BASE/lnk/../home"; do
	for lim in "" userns=0,root=0; do
		rm -f "$REPORTS/h.json"
		out=$(env HOME="$H" MOAT_HOST_LIMIT=$lim "$MOAT" run --mode prefer --profile strict --read "$H" --report-fd 3 \
			-- /bin/sh -c "$READER" sh "${CANARIES[@]}" "$FH/.control" 3>"$REPORTS/h.json" 2>"$SCRATCH/err")
		is "$(read_of "$out" "${CANARIES[@]}" | grep -c .)/$(read_of "$out" "$FH/.control" | grep -c .)/$(json_get "$REPORTS/h.json" '["properties"]["fs.secrets"]["status"]')" \
			"0/1/enforced" "HOME=$H${lim:+ ($lim)}: no canary is read, the control is, fs.secrets enforced $(head -c 200 "$SCRATCH/err")"
	done
done

# --------------------------------------------- 3. canaries made during the run
FH2=$BASE/home2
mkdir -p "$FH2/.cache/huggingface/hub" "$FH2/.m2/repository" "$FH2/.config/app"
echo settings >"$FH2/.config/app/settings"
chmod -R u+rwX,go+rX "$FH2"
LATE=(.codex/auth.json .cache/huggingface/token .m2/settings.xml .config/rclone/rclone.conf .yarnrc.yml
	.mozilla/firefox/p.default/cookies.sqlite)
LATE_FILES=()
for p in "${LATE[@]}"; do LATE_FILES+=("$FH2/$p"); done
# The command says "ready", waits for the host to make the files, then
# reads them; the two talk through FIFOs.
mkfifo "$SCRATCH/to" "$SCRATCH/from"
env HOME="$FH2" "$MOAT" run --profile strict --read "$FH2" -- /bin/sh -c 'echo ready; read -r go; '"$READER" sh \
	"${LATE_FILES[@]}" "$FH2/.m2/repository/late" "$FH2/.config/app/settings" \
	<"$SCRATCH/to" >"$SCRATCH/from" 2>"$SCRATCH/late.err" &
late_pid=$!
exec 5>"$SCRATCH/to" 6<"$SCRATCH/from"
read -r -t 20 ready <&6
is "${ready:-}" ready "made during the run: the command started"
for f in "${LATE_FILES[@]}" "$FH2/.m2/repository/late"; do
	mkdir -p "$(dirname "$f")"
	echo "moat-late-$UNIQ" >"$f"
done
echo go >&5
exec 5>&-
out=$(timeout 20 cat <&6)
exec 6<&-
wait "$late_pid"
for f in "${LATE_FILES[@]}"; do
	! grep -qxF "READ $f" <<<"$out"
	ok $? "made during the run: ~/${f#"$FH2"/} is not read"
done
grep -qxF "READ $FH2/.m2/repository/late" <<<"$out"
ok $? "  control: a file made then in a granted directory (~/.m2/repository) is read $(head -c 200 "$SCRATCH/late.err")"
grep -qxF "READ $FH2/.config/app/settings" <<<"$out"
ok $? "  control: a file there from the start beside them (~/.config/app/settings) is read"

# ------------------------- 3b. under --write HOME, made, replaced, made again
# A write grant of HOME pins the directories on the way to its protected
# entries (~/.config for ~/.config/moat).  Where the view shows HOME entry
# by entry (no Landlock, or HOME below the private /tmp) such a pin once
# bound the live ~/.config over the view's, where only masks on the old
# entries stood: a credential made, replaced by rename (as CLIs save their
# tokens) or made again during the run was read, fs.secrets "enforced".
late_write() { # late_write LABEL MOAT_HOST_LIMIT [MOAT-FLAGS...]
	local label=$1 limit=$2 H=${LATE_BASE:-$BASE}/home3-$RANDOM out pid ready
	shift 2
	mkdir -p "$H/.config/app" "$H/.config/gcloud" "$H/proj"
	echo "moat-old-$UNIQ" >"$H/.config/hub"
	echo "moat-old-$UNIQ" >"$H/.config/gcloud/creds"
	echo settings >"$H/.config/app/settings"
	chmod -R u+rwX,go+rX "$H"
	rm -f "$SCRATCH/to" "$SCRATCH/from"
	mkfifo "$SCRATCH/to" "$SCRATCH/from"
	(cd "$H/proj" && env HOME="$H" MOAT_HOST_LIMIT="$limit" "$MOAT" run "$@" --profile strict --write "$H" -- /bin/sh -c \
		'echo ready; read -r go; '"$READER" sh "$H/.config/gh/hosts.yml" "$H/.config/hub" \
		"$H/.config/gcloud/creds" "$H/.config/app/late" <"$SCRATCH/to" >"$SCRATCH/from" 2>"$SCRATCH/late.err") &
	pid=$!
	exec 5>"$SCRATCH/to" 6<"$SCRATCH/from"
	read -r -t 20 ready <&6
	is "${ready:-}" ready "$label: the command started"
	mkdir -p "$H/.config/gh" && echo "moat-late-$UNIQ" >"$H/.config/gh/hosts.yml"
	echo "moat-late-$UNIQ" >"$H/.config/hub.new" && mv "$H/.config/hub.new" "$H/.config/hub"
	rm -rf "$H/.config/gcloud" && mkdir "$H/.config/gcloud" && echo "moat-late-$UNIQ" >"$H/.config/gcloud/creds"
	echo "moat-late-$UNIQ" >"$H/.config/app/late"
	echo go >&5
	exec 5>&-
	out=$(timeout 20 cat <&6)
	exec 6<&-
	wait "$pid"
	is "$(read_of "$out" "$H/.config/gh/hosts.yml" "$H/.config/hub" "$H/.config/gcloud/creds" | tr '\n' ' ')" "" \
		"$label: ~/.config/gh made, ~/.config/hub replaced by rename, ~/.config/gcloud made again: none is read"
	grep -qxF "READ $H/.config/app/late" <<<"$out"
	ok $? "$label:   control: a file made then in ~/.config/app (granted) is read $(head -c 200 "$SCRATCH/late.err")"
}
late_write "--write HOME" ""
late_write "--write HOME, no Landlock" landlock=0 --backend native --mode prefer
# HOME below /tmp (containers, CI): the private /tmp's rule covers it, so the
# view is what holds the credentials there, with Landlock too.
LATE_BASE=$SCRATCH late_write "--write HOME, HOME below /tmp" ""

# ------------------------------------------------- 4. a grant inside the list
M --profile strict --read "$FH/.codex" -- /bin/true 2>"$SCRATCH/err"
is "$?" 125 "--read ~/.codex (a built-in secret) is refused"
like "$(cat "$SCRATCH/err")" "--read $FH/.codex: it is $FH/.codex, which moat always denies" "  and says why"
like "$(cat "$SCRATCH/err")" "moat does not grant credentials" "  and that moat does not grant credentials"
M --profile strict --read "$FH/.codex/canary" -- /bin/true 2>"$SCRATCH/err"
is "$?" 125 "--read ~/.codex/canary (inside a built-in secret) is refused"
like "$(cat "$SCRATCH/err")" "it lies inside $FH/.codex, which moat always denies" "  and says why"
# From a config file, the message names its key at FILE:LINE:COL, not a
# flag the user never gave.
printf '[sandbox]\nread = ["%s/.codex"]\n' "$FH" >"$SCRATCH/codex-read.toml"
M --profile strict --config "$SCRATCH/codex-read.toml" -- /bin/true 2>"$SCRATCH/err"
is "$?" 125 "read = [\"~/.codex\"] in a config is refused too"
is "$(grep -v '^moat: note: ' "$SCRATCH/err" | head -n1)" "moat: $SCRATCH/codex-read.toml:2:9: read $FH/.codex: it is $FH/.codex, which moat always denies (built-in secrets)" \
	"  naming the file's key at FILE:LINE:COL, not --read"
M --profile strict --read "$FH/.cache/huggingface/hub" -- /bin/cat "$FH/.cache/huggingface/hub/control" >"$SCRATCH/o" 2>&1
like "$(cat "$SCRATCH/o")" "moat-control-$UNIQ" "--read ~/.cache/huggingface/hub, beside the token, is granted"

# ------------------------------------- 5. what a CA bundle variable names
# moat grants what a CA variable in its environment names, and an MCP
# client sets that environment from a server entry's `env`: SSL_CERT_DIR=/
# granted the whole host, NODE_EXTRA_CA_CERTS=~/.bashrc a file of exported
# tokens, every verdict enforced (red-team, stop 49).  Granted now only
# what looks like a bundle; the rest passes ungranted, with a note.
CA=$BASE/ca
mkdir -p "$CA/dir" "$CA/hashed"
PEM='-----BEGIN CERTIFICATE-----
MIIBszCCAVmgAwIBAgIUZmFrZS1jZXJ0aWZpY2F0ZS1mb3ItbW9hdDAKBggqhkjOPQQDAjAS
-----END CERTIFICATE-----'
printf '##\n## Bundle of CA Root Certificates\n##\n## https://hg.mozilla.org/releases/mozilla-release/raw-file/default/security/nss/lib/ckfw/builtins/certdata.txt\n## SHA256: 456ff095dde6dd73354c5c28c73d9c06f53b61a803963414cb91a1d92945cdd3\n##\n\nmoat test CA %s\n====================\n%s\n' "$UNIQ" "$PEM" >"$CA/bundle.pem"
printf 'API_TOKEN=moat-canary-%s\n%s\n' "$UNIQ" "$PEM" >"$CA/tokens.env"
printf '%s\n-----BEGIN PRIVATE KEY-----\nmoat-canary-%s\n-----END PRIVATE KEY-----\n' "$PEM" "$UNIQ" >"$CA/with-key.pem"
printf '%s\n' "$PEM" >"$CA/hashed/1a2b3c4d.0"
# A certificate beside something that is not one: a bare token line (which
# passed as a curl "title"), an age key, a token inside a certificate's
# block, and the private keys of OpenSSH and PKCS#1 (a client's cert+key
# file named as a CA bundle by mistake).
printf '%s\nghp_moat-canary-%s\n' "$PEM" "$UNIQ" >"$CA/token-line.pem"
printf 'AGE-SECRET-KEY-1moat-canary-%s\n%s\n' "$UNIQ" "$PEM" >"$CA/age.pem"
printf -- '-----BEGIN CERTIFICATE-----\nmoat-canary-%s\n-----END CERTIFICATE-----\n' "$UNIQ" >"$CA/in-block.pem"
printf '%s\n-----BEGIN OPENSSH PRIVATE KEY-----\nmoat-canary-%s\n-----END OPENSSH PRIVATE KEY-----\n' "$PEM" "$UNIQ" >"$CA/openssh.pem"
printf -- '-----BEGIN RSA PRIVATE KEY-----\nmoat-canary-%s\n-----END RSA PRIVATE KEY-----\n%s\n' "$UNIQ" "$PEM" >"$CA/rsa.pem"
# Titles as curl writes them, faked: a title and its underline passed
# whatever the title said and whatever followed, so a secret behind a fake
# title+underline pair (itself underlined), a token as the title, and a
# token in a '#' comment passed.  A title now stands, underlined, directly
# above the BEGIN of its certificate, and nothing outside the certificates
# has a token's shape.
printf '%s\n\nMy tokens\n=========\nghp_moat-canary-%s\n-----\n' "$PEM" "$UNIQ" >"$CA/fake-title.pem"
printf 'ghp_moat-canary-%s-a1b2c3d4e5\n===============\n%s\n' "$UNIQ" "$PEM" >"$CA/token-title.pem"
printf '# token ghp_moat-canary-%s-a1b2c3d4e5\n%s\n' "$UNIQ" "$PEM" >"$CA/token-comment.pem"
printf '%s\n=====\nmoat-canary-%s\n' "$PEM" "$UNIQ" >"$CA/bare-rule.pem"
# Its control: curl's own layout, each title underlined above its BEGIN.
printf 'moat test CA %s\n====================\n%s\n\nSecond CA\n=========\n%s\n' "$UNIQ" "$PEM" "$PEM" >"$CA/curl2.pem"
# The bundles that must pass: certifi's '# Issuer:' comments, RHEL's
# '# LABEL' lines, Debian's bare concatenation with CRLF line ends.
printf '\n# Issuer: CN=moat test CA %s O=moat\n# Subject: CN=moat test CA O=moat\n# Label: "moat"\n# Serial: 1\n# MD5 Fingerprint: 00:11\n%s\n' \
	"$UNIQ" "$PEM" >"$CA/certifi.pem"
printf '# moat test CA %s\n%s\n# second\n%s\n' "$UNIQ" "$PEM" "$PEM" >"$CA/rhel.pem"
printf '%s\n%s\n' "$PEM" "$PEM" | sed 's/$/\r/' >"$CA/debian.crt"
printf '%s\n' "# moat test CA $UNIQ" >>"$CA/debian.crt"
mkdir -p "$CA/keydir"
printf -- '-----BEGIN RSA PRIVATE KEY-----\nmoat-canary-%s\n-----END RSA PRIVATE KEY-----\n' "$UNIQ" >"$CA/keydir/server.pem"
# A DER private key (PKCS#8) and a DER certificate: both open with a
# SEQUENCE of two-byte length; only the certificate has another SEQUENCE
# inside first.
/usr/bin/python3 - "$CA" "moat-canary-$UNIQ" <<'PY'
import sys
body = sys.argv[2].encode()
key = b"\x02\x01\x00" + b"\x04" + bytes([len(body)]) + body + b"\x00" * 300
open(sys.argv[1] + "/key.der", "wb").write(b"\x30\x82" + len(key).to_bytes(2, "big") + key)
tbs = b"\x30\x82" + (300).to_bytes(2, "big") + b"\x00" * 300
open(sys.argv[1] + "/cert.der", "wb").write(b"\x30\x82" + len(tbs).to_bytes(2, "big") + tbs)
PY
printf 'moat-canary-%s\n' "$UNIQ" >"$CA/dir/secret.txt"
chmod -R a+rX "$CA"
# ca VAR=VALUE FILE: what the command reads of FILE with VAR set.
ca() { env HOME="$FH" "$1" "$MOAT" run --profile strict -- /bin/cat "$2" 2>"$SCRATCH/err"; }
for c in "SSL_CERT_DIR=$CA/dir:$CA/dir/secret.txt" "SSL_CERT_DIR=/:$CA/dir/secret.txt" \
	"NODE_EXTRA_CA_CERTS=$CA/tokens.env:$CA/tokens.env" "SSL_CERT_FILE=$CA/with-key.pem:$CA/with-key.pem" \
	"SSL_CERT_DIR=$FH:$FH/.control" "SSL_CERT_DIR=$CA/keydir:$CA/keydir/server.pem" \
	"NODE_EXTRA_CA_CERTS=$CA/key.der:$CA/key.der" "SSL_CERT_FILE=$CA/token-line.pem:$CA/token-line.pem" \
	"SSL_CERT_FILE=$CA/age.pem:$CA/age.pem" "SSL_CERT_FILE=$CA/in-block.pem:$CA/in-block.pem" \
	"REQUESTS_CA_BUNDLE=$CA/openssh.pem:$CA/openssh.pem" "REQUESTS_CA_BUNDLE=$CA/rsa.pem:$CA/rsa.pem" \
	"SSL_CERT_FILE=$CA/fake-title.pem:$CA/fake-title.pem" "SSL_CERT_FILE=$CA/token-title.pem:$CA/token-title.pem" \
	"SSL_CERT_FILE=$CA/token-comment.pem:$CA/token-comment.pem" "SSL_CERT_FILE=$CA/bare-rule.pem:$CA/bare-rule.pem"; do
	v=${c%:*}
	out=$(ca "$v" "${c##*:}")
	unlike "$out" "moat-canary-$UNIQ|moat-control-$UNIQ" "$v: not granted, ${c##*:} is not read"
	like "$(cat "$SCRATCH/err")" "note: ${v%%=*} names ${v#*=}, which does not look like a CA bundle" "  and a note says why"
done
like "$(ca "NODE_EXTRA_CA_CERTS=$CA/bundle.pem" "$CA/bundle.pem")" "moat test CA $UNIQ" \
	"control: a bundle with curl's header (its URL, its SHA256 digest) and titles is granted and read"
for b in certifi.pem rhel.pem debian.crt curl2.pem; do
	like "$(ca "REQUESTS_CA_BUNDLE=$CA/$b" "$CA/$b")" "moat test CA $UNIQ" "control: a bundle as $b is written is granted and read"
done
like "$(ca "SSL_CERT_DIR=$CA/hashed" "$CA/hashed/1a2b3c4d.0")" "BEGIN CERTIFICATE" \
	"control: a directory of hash-named certificates is granted and read"
is "$(ca "NODE_EXTRA_CA_CERTS=$CA/cert.der" "$CA/cert.der" | wc -c)" 308 "control: a DER certificate is granted and read"
like "$(ca "SSL_CERT_DIR=$CA/dir" "$CA/dir/secret.txt" 2>/dev/null; env HOME="$FH" SSL_CERT_DIR="$CA/dir" "$MOAT" run --profile strict --read "$CA/dir" -- /bin/cat "$CA/dir/secret.txt" 2>/dev/null)" \
	"moat-canary-$UNIQ" "control: granted with --read, the directory is read (the reading works)"

# Out of descriptors or memory while moat looks at a bundle, the look says
# nothing of the file: it was taken for "does not look like a CA bundle",
# with a note blaming the file, and the run went on with it ungranted.  Now
# a refusal naming the cause, the variable and the path (docs/errors.md).
# strace refuses the open of the bundle alone (-P: the path, or for a
# directory's entry the directory its openat is relative to).  It reads
# the paths of moat's calls only as root: moat makes itself non-dumpable,
# and without CAP_SYS_PTRACE strace cannot read its memory, so -P matches
# none of them.  tests/unit/test_cabundle.c runs the same out of
# descriptors as any user.
# ca_fault VAR=VALUE PATH K ERRNO: the K-th openat of PATH fails with ERRNO.
ca_fault() {
	env HOME="$FH" "$1" strace -f -qq -o /dev/null -P "$2" -e trace=openat -e inject=openat:error="$4":when="$3" \
		"$MOAT" run --profile strict -- /bin/cat "$CA/bundle.pem" 2>&1
}
if ! command -v strace >/dev/null; then
	skip "strace is not installed (scripts/ensure-deps test installs it)"
elif [ "$(id -u)" != 0 ]; then
	skip "strace -P reads a non-dumpable moat's paths only as root (test_cabundle covers the look as any user)"
else
	for e in EMFILE ENFILE ENOMEM; do
		out=$(ca_fault "SSL_CERT_FILE=$CA/bundle.pem" "$CA/bundle.pem" 1 $e); rc=$?
		is "$rc" 125 "SSL_CERT_FILE's bundle not opened for $e: refused"
		like "$out" "^moat: .*SSL_CERT_FILE in moat's environment: checking the CA bundle $CA/bundle.pem" "  naming the variable and the path"
		unlike "$out" "does not look like a CA bundle|moat test CA" "  no note blaming the file, nothing run"
	done
	like "$(ca_fault "SSL_CERT_FILE=$CA/bundle.pem" "$CA/bundle.pem" 1 EMFILE)" "^moat: moat ran out of file descriptors" \
		"  the cause first"
	out=$(ca_fault "SSL_CERT_DIR=$CA/hashed" "$CA/hashed" 2 EMFILE); rc=$?
	is "$rc" 125 "SSL_CERT_DIR's certificate not opened for EMFILE: refused"
	like "$out" "checking the CA bundle $CA/hashed/1a2b3c4d.0" "  naming the file in the directory"
	out=$(ca_fault "SSL_CERT_DIR=$CA/hashed" "$CA/hashed" 1 ENOMEM); rc=$?
	is "$rc" 125 "SSL_CERT_DIR's directory not opened for ENOMEM: refused ($out)"
	# Control: a failure that is the file's own is still a note, and the
	# run goes on (the command then cannot read it either).
	out=$(ca_fault "SSL_CERT_FILE=$CA/bundle.pem" "$CA/bundle.pem" 1 EACCES); rc=$?
	like "$out" "note: SSL_CERT_FILE names $CA/bundle.pem, which does not look like a CA bundle" \
		"control: not opened for EACCES, the file's own: the note, as before"
	unlike "$out" "checking the CA bundle" "  no refusal"
fi

# ----------------------- 5b. a CA bundle swapped between its look and its grant
# moat reads what a CA variable names, then resolves the name again to grant
# it.  Whoever may write where it lies (the bundle's directory, a link on
# its way) swaps a bundle for a link to another file in between: that file
# was granted unread.  A swapper flips the name between the bundle and such
# a link as fast as it can while moat starts; the other file must never be
# read.  Bounded: 40 runs or 20 s.
RACE=$CA/race
mkdir -p "$RACE"
cp "$CA/bundle.pem" "$RACE/real.pem"
printf 'export TOKEN=moat-canary-%s\n' "$UNIQ" >"$RACE/notes"
chmod -R a+rX "$RACE"
ln -s real.pem "$RACE/bundle.pem"
/usr/bin/python3 - "$RACE" <<'PY' &
import os, sys, time
d = sys.argv[1]
end = time.time() + 25
i = 0
while time.time() < end and os.path.exists(d):
    t = "%s/.t%d" % (d, i % 2)
    try:
        os.symlink("notes" if i % 2 else "real.pem", t)
        os.replace(t, d + "/bundle.pem")
    except OSError:
        pass
    i += 1
PY
swapper=$!
reads=0 granted=0 runs=0 dropped=0 unexplained=0 t0=$SECONDS
while [ "$runs" -lt 40 ] && [ $((SECONDS - t0)) -lt 20 ]; do
	runs=$((runs + 1))
	out=$(env HOME="$FH" SSL_CERT_FILE="$RACE/bundle.pem" "$MOAT" run --profile strict -- /bin/sh -c \
		'cat "$1" 2>/dev/null; cat "$2" 2>/dev/null' sh "$RACE/notes" "$RACE/real.pem" 2>"$SCRATCH/race.err")
	case $out in *"moat-canary-$UNIQ"*) reads=$((reads + 1)) ;; esac
	# Each run is one of three, and says which: granted (the bundle is
	# read); looked at while it was the other file (not a bundle: noted);
	# or swapped between the look and the plan (dropped: noted too).
	if grep -q "is no longer the file moat checked" "$SCRATCH/race.err"; then
		dropped=$((dropped + 1))
	fi
	case $out in
	*"moat test CA $UNIQ"*) granted=$((granted + 1)) ;;
	*) grep -q "does not look like a CA bundle\|is no longer the file moat checked" "$SCRATCH/race.err" ||
		unexplained=$((unexplained + 1)) ;;
	esac
done
kill "$swapper" 2>/dev/null
wait "$swapper" 2>/dev/null
is "$reads" 0 "a CA bundle swapped for a link while moat starts: the file it leads to is never granted ($runs runs)"
ok "$([ "$granted" -gt 0 ] && echo 0 || echo 1)" "  control: the bundle itself was granted in some of them ($granted)"
is "$unexplained" 0 "  a run where it was not granted says why on stderr (dropped after a swap: $dropped)"

# ------------------------------- 6. credential stores moved by their variables
# The list names the stores under HOME; GNUPGHOME, KUBECONFIG,
# XDG_CONFIG_HOME, ... move them, and a grant holding where they moved to
# showed them with fs.secrets enforced (red-team, stop 49).
MV=$BASE/moved
mkdir -p "$MV/xdg/gh" "$MV/data/keyrings" "$MV/gnupg" "$MV/kube" "$MV/cargo" "$MV/aws" "$MV/docker" "$MV/cache/huggingface" \
	"$MV/hf" "$MV/proj"
for f in xdg/gh/hosts.yml data/keyrings/login.keyring gnupg/private.key kube/one kube/two cargo/credentials.toml \
	aws/creds docker/config.json cache/huggingface/token hf/token pgpass proj/kc; do
	echo "moat-canary-$UNIQ $f" >"$MV/$f"
done
echo "moat-control-$UNIQ" >"$MV/xdg/control"
chmod -R a+rX "$MV"
# A relative value (KUBECONFIG=kc) is the tool's in the command's directory.
MOVED_ENV=(XDG_CONFIG_HOME="$MV/xdg" XDG_DATA_HOME="$MV/data" GNUPGHOME="$MV/gnupg" KUBECONFIG="$MV/kube/one:$MV/kube/two:kc"
	CARGO_HOME="$MV/cargo" AWS_SHARED_CREDENTIALS_FILE="$MV/aws/creds" DOCKER_CONFIG="$MV/docker"
	XDG_CACHE_HOME="$MV/cache" HF_HOME="$MV/hf" PGPASSFILE="$MV/pgpass")
MOVED_FILES=("$MV/xdg/gh/hosts.yml" "$MV/data/keyrings/login.keyring" "$MV/gnupg/private.key" "$MV/kube/one" "$MV/kube/two"
	"$MV/cargo/credentials.toml" "$MV/aws/creds" "$MV/docker/config.json" "$MV/cache/huggingface/token" "$MV/hf/token"
	"$MV/pgpass" "$MV/proj/kc")
for lim in "" userns=0,root=0; do
	out=$(cd "$MV/proj" && env HOME="$FH" "${MOVED_ENV[@]}" MOAT_HOST_LIMIT=$lim "$MOAT" run --mode prefer --profile strict --read "$MV" \
		--report-fd 3 -- /bin/sh -c "$READER" sh "${MOVED_FILES[@]}" "$MV/xdg/control" 3>"$REPORTS/mv.json" 2>"$SCRATCH/err")
	is "$(read_of "$out" "${MOVED_FILES[@]}" | tr '\n' ' ')/$(read_of "$out" "$MV/xdg/control" | grep -c .)/$(json_get "$REPORTS/mv.json" '["properties"]["fs.secrets"]["status"]')" \
		"/1/enforced" "stores moved by their variables${lim:+ ($lim)}: none of the ${#MOVED_FILES[@]} is read, the control is, fs.secrets enforced"
done
# HISTFILE=/dev/null turns a history off: not a store, not denied (a deny
# of /dev/null broke every command).
is "$(env HOME="$FH" HISTFILE=/dev/null PGPASSFILE=/dev/null "$MOAT" run --profile strict -- /bin/sh -c 'echo x >/dev/null && echo fine' 2>&1)" \
	fine "HISTFILE=/dev/null: /dev/null is no store, the command writes it"
out=$(env HOME="$FH" "$MOAT" run --profile strict --read "$MV" -- /bin/sh -c "$READER" sh "${MOVED_FILES[@]}" 2>/dev/null)
is "$(read_of "$out" "${MOVED_FILES[@]}" | grep -c .)" "${#MOVED_FILES[@]}" \
	"control: without the variables, those files are moat's to grant (read)"

# ------------------------------------ 7. a secret with another hard link
# Landlock's rules and the view's masks hold names: a second name of
# ~/.ssh/id_rsa inside a grant (`ln ~/.ssh/id_rsa proj/key`, made before
# the run by the user or a tool of theirs) reads the key, and the report
# said fs.secrets enforced.  moat cannot tell cheaply where the other name
# lies, but a denied file's link count is in the stat it takes anyway (a
# denied directory's files: one listing): another name makes fs.secrets
# missing, naming the file.
HL=$BASE/hl
mkdir -p "$HL/home/.ssh" "$HL/proj"
echo "moat-canary-$UNIQ id_rsa" >"$HL/home/.ssh/id_rsa"
echo "machine x password moat-canary-$UNIQ" >"$HL/home/.netrc"
echo "moat-control-$UNIQ" >"$HL/proj/readme"
chmod -R a+rX "$HL"
# hl_run LIMIT MODE: cat every file of the project; the report in hl.json.
hl_run() {
	(cd "$HL/proj" && env HOME="$HL/home" MOAT_HOST_LIMIT="$1" "$MOAT" run --mode "$2" --backend native --profile strict --read "$HL/proj" \
		--report-fd 3 -- /bin/sh -c 'cat ./* 2>/dev/null' 3>"$REPORTS/hl.json" 2>"$SCRATCH/hl.err")
}
hl_secrets() { json_get "$REPORTS/hl.json" '["properties"]["fs.secrets"]["status"]'; }
for lim in "" userns=0,root=0; do
	rm -f "$HL/proj/key" "$HL/proj/nrc"
	out=$(hl_run "$lim" prefer)
	is "$(grep -c "moat-canary-$UNIQ" <<<"$out")/$(grep -c "moat-control-$UNIQ" <<<"$out")/$(hl_secrets)" "0/1/enforced" \
		"hard links${lim:+ ($lim)}: control: without a second name nothing secret is read, fs.secrets enforced"
	ln "$HL/home/.ssh/id_rsa" "$HL/proj/key"
	out=$(hl_run "$lim" prefer)
	is "$(hl_secrets)" missing "hard links${lim:+ ($lim)}: ~/.ssh/id_rsa with a second name in the grant: fs.secrets missing"
	like "$(json_get "$REPORTS/hl.json" '["properties"]["fs.secrets"]["reason"]')" "$HL/home/.ssh/id_rsa has another hard link" \
		"  the reason names the file"
	like "$out" "moat-canary-$UNIQ id_rsa" "  (the key is read through it: the report is what holds)"
	hl_run "$lim" require >/dev/null
	is "$?" 125 "  under --mode require the run is refused"
	rm -f "$HL/proj/key"
	ln "$HL/home/.netrc" "$HL/proj/nrc"
	hl_run "$lim" prefer >/dev/null
	like "$(hl_secrets)/$(json_get "$REPORTS/hl.json" '["properties"]["fs.secrets"]["reason"]')" "^missing/$HL/home/.netrc has another hard link" \
		"  ~/.netrc (a denied file) with a second name: fs.secrets missing, naming it"
	rm -f "$HL/proj/nrc"
	# Every name of the file inside the denied directory (a backup made
	# with ln): each is denied, nothing leads to it, the claim holds.
	ln "$HL/home/.ssh/id_rsa" "$HL/home/.ssh/id_rsa.bak"
	out=$(hl_run "$lim" prefer)
	is "$(grep -c "moat-canary-$UNIQ" <<<"$out")/$(hl_secrets)" "0/enforced" \
		"hard links${lim:+ ($lim)}: both names inside ~/.ssh: nothing read, fs.secrets enforced"
	ln "$HL/home/.ssh/id_rsa" "$HL/proj/key"
	hl_run "$lim" prefer >/dev/null
	is "$(hl_secrets)" missing "  a third name in the grant: missing again"
	rm -f "$HL/proj/key" "$HL/home/.ssh/id_rsa.bak"
	# Deeper: a key of gpg's private-keys-v1.d (two levels below the
	# denied ~/.gnupg) with a second name in the grant.
	mkdir -p "$HL/home/.gnupg/private-keys-v1.d"
	echo "moat-canary-$UNIQ gpgkey" >"$HL/home/.gnupg/private-keys-v1.d/ABCD.key"
	ln "$HL/home/.gnupg/private-keys-v1.d/ABCD.key" "$HL/proj/gk"
	out=$(hl_run "$lim" prefer)
	is "$(hl_secrets)/$(grep -c "moat-canary-$UNIQ gpgkey" <<<"$out")" missing/1 \
		"hard links${lim:+ ($lim)}: a key two levels below ~/.gnupg with a second name in the grant (read through it): missing"
	like "$(json_get "$REPORTS/hl.json" '["properties"]["fs.secrets"]["reason"]')" "private-keys-v1.d/ABCD.key has another hard link" \
		"  the reason names the file"
	rm -f "$HL/proj/gk"
	# One name reached twice (the denied ~/.ssh and a --deny of its
	# id_rsa) is one name: with the second in the grant, still missing.
	ln "$HL/home/.ssh/id_rsa" "$HL/proj/key"
	(cd "$HL/proj" && env HOME="$HL/home" MOAT_HOST_LIMIT="$lim" "$MOAT" run --mode prefer --backend native --profile strict \
		--read "$HL/proj" --deny "$HL/home/.ssh/id_rsa" --report-fd 3 -- /bin/true 3>"$REPORTS/hl.json" 2>"$SCRATCH/hl.err")
	is "$(hl_secrets)" missing "  ~/.ssh/id_rsa denied twice over (its directory and itself), a second name in the grant: missing"
	rm -f "$HL/proj/key"
	# A socket (an agent's, kept in the denied directory): a second name
	# connects to its listener as well as the first (for a command given
	# unix sockets: --unix-sockets; without, ipc.unix refuses any).
	SOCKDIR=$HL/home/.ssh
	/usr/bin/python3 - "$SOCKDIR/agent.sock" "$HL/proj/agent" "moat-canary-$UNIQ agent" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(4); s.settimeout(20)
os.link(sys.argv[1], sys.argv[2])
open(sys.argv[2] + ".ready", "w").close()
try:
    while True:
        c, _ = s.accept(); c.sendall(sys.argv[3].encode() + b"\n"); c.close()
except OSError:
    pass
PY
	agent=$!
	wait_ready 30 "the agent socket's listener (agent.ready)" test -e "$HL/proj/agent.ready"
	out=$(cd "$HL/proj" && env HOME="$HL/home" MOAT_HOST_LIMIT="$lim" "$MOAT" run --mode prefer --backend native --profile strict \
		--unix-sockets --read "$HL/proj" --report-fd 3 -- /usr/bin/python3 -c '
import socket
s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect("agent"); print(s.recv(100).decode())' 3>"$REPORTS/hl.json" 2>"$SCRATCH/hl.err")
	is "$(hl_secrets)/$(grep -c "moat-canary-$UNIQ agent" <<<"$out")" missing/1 \
		"hard links${lim:+ ($lim)}: an agent socket in ~/.ssh with a second name in the grant (connected through it): missing"
	kill "$agent" 2>/dev/null; wait "$agent" 2>/dev/null
	rm -f "$SOCKDIR/agent.sock" "$HL/proj/agent" "$HL/proj/agent.ready"
	out=$(hl_run "$lim" prefer)
	is "$(hl_secrets)" enforced "  control: gone, enforced again"
done

# The walk is bounded (resolve/linkscan.h: 1024 entries) and breadth first:
# a profile past the bound is said in the mechanism, not claimed checked;
# the top of every denied directory is still walked: ~/.ssh and a key at
# the top of ~/.mozilla, but also ~/.thunderbird, listed after it.
mkdir -p "$HL/home/.mozilla/profile/storage" "$HL/home/.thunderbird"
/usr/bin/python3 -c '
import sys
for i in range(1100): open("%s/f%d" % (sys.argv[1], i), "w").close()' "$HL/home/.mozilla/profile/storage"
hl_run "" prefer >/dev/null
like "$(hl_secrets)/$(json_get "$REPORTS/hl.json" '["properties"]["fs.secrets"]["mechanism"]')" \
	"^enforced/.*; hard links not looked for below $HL/home/.mozilla/profile/storage \\(walk bound\\)" \
	"hard links: a denied directory past the walk's bound: enforced, the mechanism says where it was not looked"
for f in .ssh/id_rsa .mozilla/profile/key4.db .thunderbird/logins.json; do
	[ -e "$HL/home/$f" ] || echo "moat-canary-$UNIQ" >"$HL/home/$f"
	ln "$HL/home/$f" "$HL/proj/key"
	hl_run "" prefer >/dev/null
	like "$(hl_secrets)/$(json_get "$REPORTS/hl.json" '["properties"]["fs.secrets"]["reason"]')" "^missing/$HL/home/$f has another" \
		"  ~/$f, above the cut, is still walked: its link makes fs.secrets missing"
	rm -f "$HL/proj/key"
done
rm -rf "$HL/home/.mozilla" "$HL/home/.thunderbird"
hl_run "" prefer >/dev/null
unlike "$(json_get "$REPORTS/hl.json" '["properties"]["fs.secrets"]["mechanism"]')" "not looked for" \
	"  control: without it, nothing is said left out"

# A directory below a denied one that moat cannot list (mode 0311: its
# files opened by name, not listed; 0000: the user's own, a link made
# before the chmod): a second name of a file in it is not looked for.  It
# was skipped as if checked (fs.secrets enforced, nothing said); now the
# mechanism says so, as for the bound.  moat run without the capabilities
# that let root list anything (as any other uid runs it); with them (root)
# the walk lists it and finds the link.
mkdir -p "$HL/home/.ssh/keys"
echo "moat-canary-$UNIQ deep" >"$HL/home/.ssh/keys/id_ed25519"
ln "$HL/home/.ssh/keys/id_ed25519" "$HL/proj/key"
NOCAPS=
[ "$(id -u)" = 0 ] && NOCAPS="setpriv --bounding-set=-dac_read_search,-dac_override --inh-caps=-dac_read_search,-dac_override"
for m in 0311 0000; do
	chmod "$m" "$HL/home/.ssh/keys"
	(cd "$HL/proj" && env HOME="$HL/home" $NOCAPS "$MOAT" run --mode prefer --backend native --profile strict --read "$HL/proj" \
		--report-fd 3 -- /bin/true 3>"$REPORTS/hl.json" 2>"$SCRATCH/hl.err")
	like "$(hl_secrets)/$(json_get "$REPORTS/hl.json" '["properties"]["fs.secrets"]["mechanism"]')" \
		"^enforced/.*; hard links not looked for below $HL/home/.ssh/keys \\(not listable by this uid\\)" \
		"hard links: a directory in ~/.ssh moat cannot list (mode $m): the mechanism says it was not looked below"
	if [ "$(id -u)" = 0 ]; then
		hl_run "" prefer >/dev/null
		like "$(hl_secrets)/$(json_get "$REPORTS/hl.json" '["properties"]["fs.secrets"]["reason"]')" \
			"^missing/$HL/home/.ssh/keys/id_ed25519 has another hard link" "  as root (mode $m, listed): the link is found, missing"
	fi
done
chmod 0755 "$HL/home/.ssh/keys"
hl_run "" prefer >/dev/null
like "$(hl_secrets)/$(json_get "$REPORTS/hl.json" '["properties"]["fs.secrets"]["reason"]')" \
	"^missing/$HL/home/.ssh/keys/id_ed25519 has another hard link" "  control: listable, the link is found: missing"
rm -f "$HL/proj/key"
chmod 0311 "$HL/home/.ssh/keys"
(cd "$HL/proj" && env HOME="$HL/home" $NOCAPS "$MOAT" run --mode prefer --backend native --profile strict --read "$HL/proj" \
	--report-fd 3 -- /bin/true 3>"$REPORTS/hl.json" 2>"$SCRATCH/hl.err")
like "$(json_get "$REPORTS/hl.json" '["properties"]["fs.secrets"]["mechanism"]')" "not listable by this uid" \
	"  the note stays without the link (moat cannot tell)"
chmod 0755 "$HL/home/.ssh/keys"
rm -rf "$HL/home/.ssh/keys"

done_testing
