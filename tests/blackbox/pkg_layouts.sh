#!/usr/bin/env bash
# Package managers' own layouts, laid out as they are on their systems.
#
# Nix (docs/policy.md, "Profiles"): a program from a Nix profile lives in the
# store and runs what its package names by store path -- a wrapper script
# that execs another package's binary, a library of a third -- and the
# user's PATH reaches it through links (~/.nix-profile -> a profile -> the
# store, NixOS's /run/current-system/sw/bin).  Under strict, moat grants
# /nix/store, the profiles and that chain of links read-only, and nothing
# else they could lead to.
#
# The store is laid out in a mount namespace of the test's own (a tmpfs
# on /nix and on /run), so a host's real /nix is neither needed nor
# touched.  Root only: /nix must exist to be mounted on (made, and removed
# after, when the host has none).
#
# Snap (docs/policy.md, "Commands and interpreters"): /snap/bin/node is a
# link to /usr/bin/snap, which starts it through snap-confine, setuid root:
# under no_new_privs it cannot run, and moat says so before the run.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
[ "$(id -u)" = 0 ] || skip_all "laying out a /nix store in a mount namespace needs root"
command -v unshare >/dev/null || skip_all "no unshare(1) (util-linux)"
made_nix=0 made_snap=0
if [ ! -e /nix ]; then
	mkdir /nix && made_nix=1
fi
if [ ! -e /snap ]; then
	mkdir /snap && made_snap=1
fi
BASE=$(mktemp -d /var/tmp/moat-nix.XXXXXX)
trap 'rm -rf "$SCRATCH" "$REPORTS" "$BASE"; [ "$made_nix" = 1 ] && rmdir /nix; [ "$made_snap" = 1 ] && rmdir /snap' EXIT
chmod 0755 "$BASE"

# The script run in the namespace prints one line per check: "name: what
# the command printed (its stderr too), rc=N".
cat >"$BASE/inside.sh" <<'EOF'
set -u
MOAT=$1 BASE=$2
mount -t tmpfs -o mode=0755 nix /nix && mount -t tmpfs -o mode=0755 run /run || exit 99
S=/nix/store
mkdir -p $S/aaa-coreutils/bin $S/bbb-hello/bin $S/ccc-user-env/bin $S/ddd-system/sw/bin \
	/nix/var/nix/profiles/per-user/u
cp /bin/echo $S/aaa-coreutils/bin/echo2
# A makeWrapper-like script: it runs another package's binary by its path.
printf '#!/bin/sh\nexec /nix/store/aaa-coreutils/bin/echo2 "hello from nix" "$@"\n' >$S/bbb-hello/bin/hello
chmod 0755 $S/bbb-hello/bin/hello
ln -s $S/bbb-hello/bin/hello $S/ccc-user-env/bin/hello
ln -s $S/bbb-hello/bin/hello $S/ddd-system/sw/bin/hello
ln -s $S/ccc-user-env /nix/var/nix/profiles/per-user/u/profile-1-link
ln -s profile-1-link /nix/var/nix/profiles/per-user/u/profile
ln -s $S/ddd-system /run/current-system
# HOME of the classic layout, and of the XDG one (the chain through
# ~/.local/state/nix/profiles, beside what must stay out).
H1=$BASE/h1 H2=$BASE/h2 H3=$BASE/h3
mkdir -p $H1/.ssh $H2/.local/state/nix/profiles $H3/notstore/bin
echo SECRET >$H1/.ssh/id
ln -s /nix/var/nix/profiles/per-user/u/profile $H1/.nix-profile
ln -s $S/ccc-user-env $H2/.local/state/nix/profiles/profile-1-link
ln -s profile-1-link $H2/.local/state/nix/profiles/profile
ln -s $H2/.local/state/nix/profiles/profile $H2/.nix-profile
echo history >$H2/.local/state/history
cp /bin/echo $H3/notstore/bin/hello
ln -s $H3/notstore $H3/.nix-profile
mkdir -p $BASE/proj && cd $BASE/proj || exit 99
r() { # r NAME HOME PATH-FIRST ARGS...: moat under strict
	local name=$1 home=$2 first=$3 out rc
	shift 3
	out=$(env HOME=$home PATH=$first:/usr/bin:/bin "$MOAT" run --profile strict "$@" 2>&1)
	rc=$?
	echo "$name: $(printf '%s' "$out" | tr '\n' '|') rc=$rc"
}
r profile $H1 $H1/.nix-profile/bin -- hello x
r profile-shell $H1 $H1/.nix-profile/bin -- sh -c 'hello y'
r profile-secret $H1 $H1/.nix-profile/bin -- sh -c 'cat ~/.ssh/id'
r system $H1 /run/current-system/sw/bin -- hello z
r system-shell $H1 /run/current-system/sw/bin -- sh -c 'hello w'
r xdg $H2 $H2/.nix-profile/bin -- sh -c 'hello v; cat ~/.local/state/history'
r closure-denied $H1 $H1/.nix-profile/bin --deny $S/aaa-coreutils -- hello u
r notstore $H3 $H3/.nix-profile/bin -- sh -c 'ls ~/.nix-profile/bin'
r fallback $H1 $H1/.nix-profile/bin --mode prefer -- sh -c 'hello t'
EOF
out=$(MOAT_HOST_LIMIT= unshare -m --propagation private bash "$BASE/inside.sh" "$MOAT" "$BASE" 2>&1)
line() { printf '%s\n' "$out" | grep "^$1: "; }
# The fallback (no namespaces) in the same namespace: Landlock's rules on
# the store's objects, no view.
out2=$(MOAT_HOST_LIMIT=userns=0,root=0 unshare -m --propagation private bash "$BASE/inside.sh" "$MOAT" "$BASE" 2>&1)

is "$(line profile)" "profile: hello from nix x rc=0" \
	"a command from ~/.nix-profile/bin: the link chain and the store are granted; its wrapper runs another package's binary"
is "$(line profile-shell)" "profile-shell: hello from nix y rc=0" "  a shell inside finds it on PATH through the links"
like "$(line profile-secret)" "^profile-secret: cat: .*/h1/\.ssh/id: No such file or directory rc=1$" \
	"  HOME's secrets stay out"
is "$(line system)" "system: hello from nix z rc=0" "NixOS: a command from /run/current-system/sw/bin runs"
is "$(line system-shell)" "system-shell: hello from nix w rc=0" "  and from a shell inside"
like "$(line xdg)" "^xdg: hello from nix v\|cat: .*/h2/\.local/state/history: No such file or directory rc=1$" \
	"~/.nix-profile through ~/.local/state/nix/profiles (the XDG layout): it runs, and the rest of ~/.local/state stays out"
like "$(line closure-denied)" "^closure-denied: .*aaa-coreutils/bin/echo2: (Permission denied|not found) rc=12[67]$" \
	"control: with the other package denied, the wrapper cannot run it (the store's grant is what makes it work)"
like "$(line notstore)" "^notstore: .*sandbox would not see|^notstore: ls: cannot access" \
	"control: a ~/.nix-profile that leads out of the store is not granted"
like "$(printf '%s\n' "$out2" | grep '^fallback: ')" "^fallback: (moat: .*\|)*hello from nix t rc=0$" \
	"without namespaces (Landlock only): the same command runs"

# --- snap --------------------------------------------------------------------
# /snap/bin/node -> /usr/bin/snap on Ubuntu; here the link leads to a
# program that runs, so that what is checked is moat's refusal, not a
# missing file.
cat >"$BASE/snap.sh" <<'EOF'
MOAT=$1 BASE=$2
mount -t tmpfs -o mode=0755 snap /snap && mkdir /snap/bin && ln -s /bin/echo /snap/bin/node || exit 99
cd "$BASE" || exit 99
out=$("$MOAT" run -- /snap/bin/node x 2>&1); rc=$?; echo "direct: $(printf '%s' "$out" | tr '\n' '|') rc=$rc"
out=$(PATH=/snap/bin:/usr/bin:/bin "$MOAT" run --read /snap/bin -- node x 2>&1); rc=$?; echo "granted: $(printf '%s' "$out" | tr '\n' '|') rc=$rc"
out=$(PATH=/snap/bin:/usr/bin:/bin "$MOAT" run --mode off -- node x 2>&1); rc=$?; echo "off: $(printf '%s' "$out" | tr '\n' '|') rc=$rc"
EOF
out3=$(unshare -m --propagation private bash "$BASE/snap.sh" "$MOAT" "$BASE" 2>&1)
snapline() { printf '%s\n' "$out3" | grep "^$1: "; }
is "$(snapline direct)" "direct: moat: /snap/bin/node: a snap, which starts through snap-confine, a setuid-root program that the sandbox (no_new_privs) does not let gain root|moat: hint: install it another way (Debian's or the upstream package, a version manager such as nvm or pyenv) and run that, or run the snap with --mode off and its own confinement rc=125" \
	"a snap (/snap/bin/node): refused before the run, saying why and what works"
like "$(snapline granted)" "^granted: moat: /snap/bin/node: a snap, .* rc=125$" "  found by PATH, and with /snap/bin granted: the same"
is "$(snapline off)" "off: moat: sandbox off (mode off): running node unsandboxed|x rc=0" "  control: with --mode off it runs"

done_testing
