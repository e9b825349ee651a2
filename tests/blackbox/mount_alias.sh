#!/usr/bin/env bash
# A denied path shown again by another mount (docs/filesystem.md §3).
#
# Landlock's rules and the view follow paths.  When the host's mount table
# shows HOME at a second path -- /srv bound at /mnt/alias, a data disk with
# the homes mounted under /opt, a btrfs top level beside its subvolumes --
# a grant of that path, or of a directory holding it (strict's own /opt),
# or a working directory there (the exec profile grants it) granted ~/.ssh
# under the other name.  moat now denies each secret at every path the
# mount table shows it, and says so in the report (`mount_of`).
#
# The mounts are made in a mount namespace of the test's own; moat runs in
# it as uid 65534 (and as root), with and without its own namespaces.
# Root only: making the mounts needs it.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
[ "$(id -u)" = 0 ] || skip_all "making bind mounts in a mount namespace needs root"
command -v unshare >/dev/null || skip_all "no unshare(1) (util-linux)"
command -v setpriv >/dev/null || skip_all "no setpriv(1) (util-linux)"
BASE=$(mktemp -d /var/tmp/moat-alias.XXXXXX)
trap 'rm -rf "$SCRATCH" "$REPORTS" "$BASE"' EXIT
chmod 0755 "$BASE"
mkdir -p "$BASE/disk/home/.ssh" "$BASE/disk/home/proj" "$BASE/alias" "$BASE/bin"
echo "MARK-SSH-$$" >"$BASE/disk/home/.ssh/id_ed25519"
echo "proj-ok" >"$BASE/disk/home/proj/a"
chown -R 65534:65534 "$BASE/disk"
cp "$MOAT" "$BASE/bin/moat"
chmod 0755 "$BASE/bin" "$BASE/bin/moat"

# One line per check: "NAME<TAB>rc<TAB>output (stdout and stderr, one line)".
cat >"$BASE/inside.sh" <<'EOF'
set -u
BASE=$1 AS=$2 LIMIT=$3
H=$BASE/disk/home A=$BASE/alias
mount --bind "$BASE/disk" "$A" || exit 99
mount -t tmpfs -o mode=0755 none /opt && mkdir /opt/disks && mount --bind "$BASE/disk" /opt/disks || exit 99
if [ "$AS" = nobody ]; then
	RUN="setpriv --reuid=65534 --regid=65534 --clear-groups env PATH=/usr/bin:/bin HOME=$H MOAT_HOST_LIMIT=$LIMIT"
else
	RUN="env HOME=$H MOAT_HOST_LIMIT=$LIMIT"
fi
M="$BASE/bin/moat run --mode prefer"
check() {
	name=$1
	shift
	out=$("$@" 2>&1 </dev/null)
	printf '%s\t%s\t%s\n' "$name" "$?" "$(printf '%s' "$out" | grep -v '^moat: \(degraded\|  hint\|hint\|note\)' | tr '\n' ' ')"
}
check grant-alias $RUN $M --profile strict --read "$A" -- cat "$A/home/.ssh/id_ed25519" "$A/home/proj/a"
check profile-opt $RUN $M --profile strict -- cat /opt/disks/home/.ssh/id_ed25519 /opt/disks/home/proj/a
check cwd-alias sh -c "cd '$A/home' && exec $RUN $M -- cat .ssh/id_ed25519 proj/a"
check grant-inside $RUN $M --profile strict --read "$A/home/.ssh" -- cat "$A/home/.ssh/id_ed25519"
check report $RUN $M --profile strict --read "$A" --dry-run -- true
check control-real $RUN $M --profile strict --read "$H" -- cat "$H/.ssh/id_ed25519" "$H/proj/a"
EOF

for as in nobody root; do
	for limit in "" "userns=0,root=0"; do
		tag="$as${limit:+ $limit}"
		timeout 120 unshare -m --propagation private bash "$BASE/inside.sh" "$BASE" "$as" "$limit" >"$SCRATCH/out" 2>&1
		rc=$?
		is "$rc" 0 "$tag: the mounts were made and every check ran"
		[ "$rc" = 0 ] || { sed 's/^/# /' "$SCRATCH/out"; continue; }
		get() { awk -F'\t' -v n="$1" '$1 == n { print $2 "\t" $3 }' "$SCRATCH/out"; }
		for c in grant-alias profile-opt cwd-alias; do
			r=$(get "$c")
			unlike "$r" "MARK-SSH" "$tag: $c: ~/.ssh is not read through the other mount ($r)"
			like "$r" "proj-ok" "$tag: $c: the rest of what the other mount shows is read (control: the grant works)"
		done
		r=$(get grant-inside)
		unlike "$r" "MARK-SSH" "$tag: a grant of ~/.ssh by its other path reads nothing"
		like "$r" "always denies \\(built-in secrets\\)" "  and moat refuses it as the secret it is"
		r=$(get report)
		like "$r" "\"mount_of\": \"$BASE/disk/home/.ssh\"" "$tag: the report shows the deny moat added, with the path it shows"
		r=$(get control-real)
		unlike "$r" "MARK-SSH" "$tag: control: by its own path ~/.ssh is denied as always"
	done
done
done_testing
