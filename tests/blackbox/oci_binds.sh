#!/usr/bin/env bash
# The OCI runtimes bind what moat planned, not what a name leads to
# (docs/filesystem.md, sections 1 and 8; launch/initview.h).
#
# 1. A read grant reached through a symlink on the sandbox's own /tmp
#    (/tmp/.../work/h -> HOME, --read .../work/h/docs): the view makes the
#    link, as native and bwrap do.  The oci backend bound realpath() of the
#    link -- the whole of HOME, ~/.ssh included -- and Landlock's rule for
#    the /tmp tmpfs covered it: the key and a private file were readable
#    while the report said fs.read and fs.secrets enforced.
# 2. runc resolves each bind source again by its name when it starts.  A
#    stand-in runc first on PATH swaps a granted directory for a link to
#    ~/.ssh between moat's plan and runc's start, then runs the real runc:
#    moat __init finds another object at the grant's place (device, inode)
#    and nothing runs (125).  Before, the key was printed and the report
#    said fs.read and fs.secrets enforced, with Landlock or without it (the
#    grant lies below /tmp, whose tmpfs rule covers what is mounted there).
# 3. gVisor binds by name too, and numbers its own files: there fs.read,
#    fs.write and fs.secrets are missing, with the reason.
#
# Runs as root and as uid 65534 (runc rootless); skipped without runc.
set -u
. "$(dirname "$0")/../lib/tap.sh"
unset MOAT_HOST_LIMIT
RUNC=$(command -v runc || ls /usr/sbin/runc /usr/bin/runc 2>/dev/null | head -1)
[ -n "$RUNC" ] || skip_all "runc is not installed"
export MOAT_OCI_RUNTIME=runc
"$MOAT" run --backend oci --dry-run -- /bin/true 2>/dev/null | grep -q '"status": "enforced"' ||
	skip_all "--backend oci cannot run here (no user namespaces for this user?)"
scratch
cd / # not below /tmp: the sandbox's /tmp is its own
runf() { json_get "$1" "[\"run\"][\"$2\"]"; }
prop() { json_get "$1" "[\"properties\"][\"$2\"][\"status\"]"; }

# --- 1. a read grant through a link on the private /tmp ------------------------
H=$SCRATCH/home
W=$SCRATCH/work
mkdir -p "$H/.ssh" "$H/docs" "$H/private" "$W"
echo KEY-MARK >"$H/.ssh/id_rsa"
echo doc >"$H/docs/d"
echo PRIVATE-MARK >"$H/private/p"
ln -s "$H" "$W/h"
chmod -R a+rX "$SCRATCH"
read3() { # read3 BACKEND [env...]: cat the granted file, the key and the private file through the link
	local be=$1
	shift
	env HOME="$H" "$@" "$MOAT" run --backend "$be" --profile strict --read "$W/h/docs" \
		--report "$REPORTS/link-$be.json" -- /bin/sh -c "cat '$W/h/docs/d' '$W/h/.ssh/id_rsa' '$W/h/private/p' 2>&1"
}
is "$(env HOME="$H" "$MOAT" run --mode off --profile strict -- /bin/cat "$W/h/.ssh/id_rsa" "$W/h/private/p" 2>/dev/null)" \
	"KEY-MARK
PRIVATE-MARK" "control: the key and the private file are there through the link, unsandboxed"
for lim in "" landlock=0; do
	label="oci${lim:+ ($lim)}"
	out=$(read3 oci MOAT_HOST_LIMIT="$lim")
	like "$out" "^doc$" "$label: the granted file is read through the link (the view makes it)"
	unlike "$out" "KEY-MARK" "$label: ~/.ssh beside the grant stays unreadable through the link"
	unlike "$out" "PRIVATE-MARK" "$label: a directory beside the grant stays unreadable through the link"
	is "$(prop "$REPORTS/link-oci.json" fs.read)/$(prop "$REPORTS/link-oci.json" fs.secrets)" "enforced/enforced" \
		"$label: the claims fs.read and fs.secrets stand"
done
for be in native bwrap; do
	out=$(read3 "$be")
	like "$out" "^doc$" "control: $be reads the granted file through the link"
	unlike "$out" "KEY-MARK|PRIVATE-MARK" "control: $be shows nothing beside the grant"
done
out=$(env HOME="$H" "$MOAT" run --backend oci --profile strict --read "$W/h/private" -- /bin/cat "$W/h/private/p" 2>/dev/null)
is "$out" PRIVATE-MARK "control: under oci the private file is read through the link when it is granted itself"

# --- 2. a bind source swapped between moat's plan and runc's start ---------------
P=$SCRATCH/p
mkdir -p "$P/data" "$SCRATCH/fakerunc"
echo notes >"$P/data/notes"
cp "$H/.ssh/id_rsa" "$H/.ssh/id_ed25519"
cat >"$SCRATCH/fakerunc/runc" <<EOF
#!/bin/sh
# A stand-in runc: the granted directory becomes a link to ~/.ssh after
# moat planned it, then the real runc starts the container.
if [ -d '$P/data' ] && [ ! -L '$P/data' ]; then
	mv '$P/data' '$P/data.dir' && ln -s '$H/.ssh' '$P/data'
fi
exec '$RUNC' "\$@"
EOF
chmod -R a+rX "$SCRATCH"
chmod 755 "$SCRATCH/fakerunc/runc"
unswap() { [ -L "$P/data" ] && rm "$P/data" && mv "$P/data.dir" "$P/data"; }
for lim in "" landlock=0; do
	label="oci${lim:+ ($lim)}"
	rm -f "$REPORTS/swap.json"
	out=$(env HOME="$H" MOAT_HOST_LIMIT="$lim" PATH="$SCRATCH/fakerunc:$PATH" "$MOAT" run --backend oci \
		--profile strict --read "$P/data" --report "$REPORTS/swap.json" -- /bin/cat "$P/data/id_rsa" 2>"$SCRATCH/swap.err")
	rc=$?
	[ -L "$P/data" ]
	ok $? "$label: control: the stand-in runc swapped the grant for a link to ~/.ssh"
	like "$(env HOME="$H" "$MOAT" run --mode off --profile strict -- /bin/cat "$P/data/id_rsa" 2>/dev/null)" KEY-MARK \
		"$label: control: the swapped name leads to the key, unsandboxed"
	unlike "$out" KEY-MARK "$label: the key is not read through the swapped bind source"
	is "$rc/$(runf "$REPORTS/swap.json" executed)" "125/False" "$label: nothing runs: exit 125, executed false"
	like "$(cat "$SCRATCH/swap.err")" "$P/data changed since moat planned it" \
		"$label: moat __init names the destination that is not the planned object"
	unswap
done
out=$(env HOME="$H" "$MOAT" run --backend oci --profile strict --read "$P/data" -- /bin/cat "$P/data/notes" 2>/dev/null)
is "$out" notes "control: without the swap the same run reads the grant (runc itself, every bind checked)"

# A protected entry of a write grant (.vscode, pinned read-only onto itself)
# swapped the same way.
mkdir -p "$P/w/.vscode"
sed -i "s#'$P/data'#'$P/w/.vscode'#g; s#'$P/data.dir'#'$P/w/.vscode.dir'#g" "$SCRATCH/fakerunc/runc"
out=$(env HOME="$H" PATH="$SCRATCH/fakerunc:$PATH" "$MOAT" run --backend oci --profile strict --write "$P/w" \
	-- /bin/cat "$P/w/.vscode/id_rsa" 2>"$SCRATCH/pin.err")
rc=$?
[ -L "$P/w/.vscode" ]
ok $? "control: the stand-in runc swapped the protected entry for a link to ~/.ssh"
unlike "$out" KEY-MARK "a swapped protected entry: the key is not read"
is "$rc" 125 "a swapped protected entry: nothing runs (125)"
like "$(cat "$SCRATCH/pin.err")" "$P/w/.vscode" "  moat __init names it"
rm -f "$P/w/.vscode" && mv "$P/w/.vscode.dir" "$P/w/.vscode"

# --- 3. gVisor: binds by name, its own inode numbers ---------------------------------
if command -v runsc >/dev/null && [ "$(id -u)" = 0 ]; then
	"$MOAT" run --backend gvisor --mode prefer --dry-run --profile strict --read "$P/data" -- /bin/true \
		>"$SCRATCH/gv.json" 2>/dev/null
	for p in fs.read fs.write fs.secrets; do
		is "$(json_get "$SCRATCH/gv.json" "[\"properties\"][\"$p\"][\"status\"]")" missing "gvisor: $p is missing"
	done
	like "$(json_get "$SCRATCH/gv.json" '["properties"]["fs.read"]["reason"]')" "runsc binds each grant by its name" \
		"  with the reason"
	"$MOAT" run --backend gvisor --profile strict -- /bin/true 2>/dev/null
	is $? 125 "  require mode refuses to run under gvisor"
else
	skip "gvisor: runsc runs only as root here"
fi
done_testing
