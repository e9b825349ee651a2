#!/usr/bin/env bash
# Secrets on a file system that folds case (ext4's casefold, vfat, exFAT,
# SMB, ciopfs): HOME on one holds the key as `~/.SSH/id_rsa`, which is what
# `~/.ssh/id_rsa` opens there.  moat compared names byte for byte -- its
# listing of HOME said `.ssh` absent, and the grant of HOME, expanded
# around the missing name, granted `.SSH` -- so the key was read under
# `--read ~` with fs.secrets enforced.
#
#   1. the mount folds case (`.ssh` opens `.SSH`): else nothing is shown;
#   2. under --read HOME and --write HOME, neither spelling of the keys
#      (`.SSH`, `.AWS`, `.CONFIG/GH/hosts.yml` below a directory on the way,
#      `.\u212Aube/config` whose Kelvin sign Unicode folds to k)
#      is read, files beside them are (controls: `.CONFIG/other/settings`
#      too, so the directory on the way is granted around the key, not
#      hidden), and the report says fs.secrets enforced, with ~/.ssh and
#      ~/.aws present (the listing of HOME, which holds `.SSH`, did not
#      answer them absent);
#   3. control: the same tree as HOME on a directory that keeps case, where
#      `.SSH` is just another directory: read under --read HOME.
#
# The case-folding file system is tests/lib/casefs.py (FUSE, python3-fusepy).
# Runs as root; another user needs /dev/fuse open to it and a set-uid
# fusermount (skip_feature fuse_casefold otherwise: tests/lib/feature-present).
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
# Outside /tmp: the sandbox's /tmp is its own.
BASE=$(mktemp -d /var/tmp/moat-casefold.XXXXXX)
chmod 0755 "$BASE"
FS_PID=
cleanup() {
	if mountpoint -q "$BASE/home" 2>/dev/null; then
		fusermount3 -u "$BASE/home" 2>/dev/null || fusermount -u "$BASE/home" 2>/dev/null ||
			umount "$BASE/home" 2>/dev/null
	fi
	[ -n "$FS_PID" ] && kill "$FS_PID" 2>/dev/null && wait "$FS_PID" 2>/dev/null
	rm -rf "$SCRATCH" "$REPORTS" "$BASE"
}
trap cleanup EXIT

B=$BASE/backing H=$BASE/home
mkdir -p "$B/.SSH" "$B/.AWS" "$B/.CONFIG/GH" "$B/.CONFIG/other" "$B/proj" "$H"
echo CANARY-SSH >"$B/.SSH/id_rsa"
echo CANARY-AWS >"$B/.AWS/credentials"
echo CANARY-GH >"$B/.CONFIG/GH/hosts.yml"
echo control-config >"$B/.CONFIG/other/settings"
# U+212A KELVIN SIGN, which Unicode's case folding makes k: ~/.kube.
KELVIN=$(printf '\342\204\252')
mkdir -p "$B/.${KELVIN}ube"
echo CANARY-KUBE >"$B/.${KELVIN}ube/config"
echo control-read >"$B/proj/notes"

if ! feature_present fuse_casefold; then
	skip_feature fuse_casefold "no FUSE mount for this user (fuse in /proc/filesystems, /dev/fuse open to it, a set-uid fusermount)"
	done_testing
	exit 0
fi
opts=
[ "$(id -u)" = 0 ] && opts=allow_other # the sandbox's root may be another uid
/usr/bin/python3 "$ROOT/tests/lib/casefs.py" "$B" "$H" $opts 2>"$SCRATCH/fs.err" &
FS_PID=$!
for _ in $(seq 1 100); do
	mountpoint -q "$H" && break
	kill -0 "$FS_PID" 2>/dev/null || break
	sleep 0.1
done
if ! mountpoint -q "$H"; then
	# The feature is there (strict runs fail here): casefs.py could not mount.
	sed 's/^/#   /' "$SCRATCH/fs.err" | tail -3
	skip_feature fuse_casefold "casefs.py did not mount (python3-fusepy and libfuse2: sh scripts/ensure-deps test)"
	done_testing
	exit 0
fi

# -------------------------------------------------------- 1. the mount folds
is "$(cat "$H/.ssh/id_rsa" 2>&1)/$(ls -A "$H" | LC_ALL=C sort | tr '\n' ' ')" "CANARY-SSH/.AWS .CONFIG .SSH .${KELVIN}ube proj " \
	"the mount folds case: ~/.ssh/id_rsa opens ~/.SSH/id_rsa, the listing says .SSH"
is "$(cat "$H/.config/gh/hosts.yml" 2>&1)" CANARY-GH "the mount folds case below: ~/.config/gh/hosts.yml opens ~/.CONFIG/GH"
is "$(cat "$H/.kube/config" 2>&1)" CANARY-KUBE "the mount folds Unicode case: ~/.kube/config opens ~/.\\u212Aube/config"

# ------------------------------------------ 2. neither spelling read under HOME
READ='for f in "$@"; do cat "$f" 2>/dev/null; done; exit 0'
FILES=("$H/.SSH/id_rsa" "$H/.ssh/id_rsa" "$H/.AWS/credentials" "$H/.aws/credentials" "$H/.CONFIG/GH/hosts.yml" "$H/.config/gh/hosts.yml"
	"$H/.${KELVIN}ube/config" "$H/.kube/config" "$H/.CONFIG/other/settings" "$H/.config/other/settings"
	"$H/proj/notes")
# The last without Landlock: the view alone, HOME mounted entry by entry
# (there .CONFIG, expanded under the denied spelling, is seen as .config:
# the view's directories keep case).
for grant in --read --write "--read/landlock=0"; do
	lim=${grant#*/}
	[ "$lim" = "$grant" ] && lim=
	grant=${grant%/*}
	out=$(env HOME="$H" MOAT_HOST_LIMIT="$lim" "$MOAT" run --mode prefer --profile strict $grant "$H" --report-fd 3 \
		-- /bin/sh -c "$READ" sh "${FILES[@]}" 3>"$REPORTS/r.json" 2>"$SCRATCH/err")
	[ -n "$lim" ] && grant="$grant ($lim)"
	unlike "$out" 'CANARY' "$grant HOME on a case-folding file system: no key read through .SSH, .ssh, .AWS, .aws, .CONFIG/GH, .config/gh, .\\u212Aube or .kube"
	like "$out" 'control-read' "$grant HOME: the file beside them is read (control)"
	like "$out" 'control-config' "$grant HOME: a file beside .CONFIG/GH is read (control: .CONFIG expanded, not hidden)"
	is "$(json_get "$REPORTS/r.json" '["properties"]["fs.secrets"]["status"]')" enforced \
		"$grant HOME: the report says fs.secrets enforced"
	[ -n "$out" ] || sed 's/^/#   /' "$SCRATCH/err" | head -5
	# The deny tree's listing of HOME holds .SSH, not .ssh: the walk, not
	# the listing, answers, and finds the key's directory.
	is "$(json_eval "$REPORTS/r.json" "[(e['path'], e.get('present')) for e in d['filesystem']['paths'] \
		if e['path'] in ('$H/.ssh', '$H/.aws')]")" "[[\"$H/.ssh\", true], [\"$H/.aws\", true]]" \
		"$grant HOME: the report has ~/.ssh and ~/.aws present (found under .SSH, .AWS), not absent"
done
valid_report "$REPORTS/r.json" "the report"

# --------------------------- 3. control: .SSH on a case-keeping directory is read
out=$(env HOME="$B" "$MOAT" run --profile strict --read "$B" -- /bin/sh -c "$READ" sh "$B/.SSH/id_rsa" \
	"$B/.AWS/credentials" 2>"$SCRATCH/err")
is "$(echo $out)" "CANARY-SSH CANARY-AWS" \
	"control: the same tree as HOME on a directory that keeps case: .SSH and .AWS are not .ssh and .aws, and are read"

done_testing
