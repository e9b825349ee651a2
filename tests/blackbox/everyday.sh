#!/usr/bin/env bash
# Everyday commands (issue 20, items 2, 3, 5 and 6), as a new user runs them:
#
#   2. commands and interpreters under HOME, in a fake HOME with a fake
#      interpreter tree: ~/bin/mytool refused before the run with the grant
#      to add; a virtualenv made from a pyenv-style Python (its bin/python a
#      link into ~/.pyenv) runs its pip, and one from a uv-style Python runs
#      after `. .venv/bin/activate`, each interpreter's installation granted
#      read-only and shown in the dry run with what points at it; what moat
#      must not grant on its own (a program not named as an interpreter, one
#      in a denied path or in HOME itself, a script in HOME) refused with
#      the grant to add;
#   3. git repositories: `git status` in repo/src works (the work tree's root
#      granted, read-only), and a linked work tree's too (its repository's
#      .git granted); the user's identity reaches git through a sanitized copy
#      of ~/.gitconfig (GIT_CONFIG_GLOBAL) that keeps aliases and identity
#      and drops the credential helper and a token in url.*.insteadOf; the
#      dry run lists the keys, never a value; .git stays protected in a write
#      grant;
#   5. the first word that is not an option starts the command (run_basics.sh
#      has the rest);
#   6. each message of the issue's list, checked whole: what was wrong and
#      the fix; conflicting options are errors; the gVisor terminal check
#      only with a terminal attached; the note when the command starts in
#      the private /tmp; a --cpu kill said as such, in the report too; the
#      fd.clean text.
#
# Runs as root, as uid 65534 (HOME=/nonexistent: the fixtures make a fake
# HOME of their own) and with the sanitizer moat (tests/run-all), in a few
# seconds a pass.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
unset MOAT_HOST_LIMIT
# Outside /tmp: the sandbox's /tmp is its own.
BASE=$(mktemp -d /var/tmp/moat-everyday.XXXXXX)
chmod 0755 "$BASE"
LOCKDIR=/run/lock/moat-everyday.$$
trap 'rm -rf "$SCRATCH" "$REPORTS" "$BASE" "$LOCKDIR"' EXIT
mkdir -p "$BASE/proj"
cd "$BASE/proj" || exit 1

# err ARGS...: moat's exit status and stderr, one string ("125:moat: ...").
err() {
	local out rc
	out=$("$MOAT" "$@" 2>&1 >/dev/null </dev/null)
	rc=$?
	printf '%s:%s' "$rc" "$out"
}

# ------------------------------------------- 2. commands and interpreters under HOME
H=$BASE/home
PYHOME=$H/.pyenv/versions/3.11.4
UVPY=$H/.local/share/uv/python/cpython-3.12.3-linux-x86_64-gnu
mkdir -p "$H/bin" "$H/tools" "$H/.ssh" "$PYHOME/bin" "$PYHOME/lib" "$UVPY/bin" "$UVPY/lib" \
	"$BASE/proj/venv/bin" "$BASE/uvproj/.venv/bin" "$BASE/bad/venv/bin" "$BASE/other"
printf '#!/bin/sh\necho mytool ran\n' >"$H/bin/mytool"
printf '#!/bin/sh\necho runner\n' >"$H/tools/runner"
# The fake interpreters read a file of their own installation, found as
# Python finds its prefix (through the links to it), so a run shows that
# the installation, not only the program, is visible.
for py in "$PYHOME/bin/python3.11" "$UVPY/bin/python3.12" "$H/.ssh/python3" "$H/python3"; do
	printf '#!/bin/sh\nme=$(readlink -f "$0")\necho "python from $(cat "${me%%/bin/*}/lib/marker" 2>&1) $*"\n' >"$py"
done
echo pyenv-stdlib >"$PYHOME/lib/marker"
echo uv-stdlib >"$UVPY/lib/marker"
chmod 0755 "$H/bin/mytool" "$H/tools/runner" "$PYHOME/bin/python3.11" "$UVPY/bin/python3.12" "$H/.ssh/python3" "$H/python3"
ln -s python3.11 "$PYHOME/bin/python3"
# python -m venv from pyenv's Python: bin/python a link to it, pip a script.
ln -s "$PYHOME/bin/python3" "$BASE/proj/venv/bin/python"
printf 'home = %s/bin\ninclude-system-site-packages = false\nversion = 3.11.4\n' "$PYHOME" >"$BASE/proj/venv/pyvenv.cfg"
printf '#!%s/proj/venv/bin/python\nimport pip\n' "$BASE" >"$BASE/proj/venv/bin/pip"
chmod 0755 "$BASE/proj/venv/bin/pip"
# uv venv: .venv/bin/python a link to uv's Python, and an activate script.
ln -s "$UVPY/bin/python3.12" "$BASE/uvproj/.venv/bin/python"
printf 'home = %s/bin\n' "$UVPY" >"$BASE/uvproj/.venv/pyvenv.cfg"
printf 'VIRTUAL_ENV=%s/uvproj/.venv\nPATH="$VIRTUAL_ENV/bin:$PATH"\nexport VIRTUAL_ENV PATH\n' "$BASE" \
	>"$BASE/uvproj/.venv/bin/activate"
# What moat must not grant on its own.
printf '#!%s/tools/runner\n' "$H" >"$BASE/bad/tool"
printf '#!%s/python3\n' "$H" >"$BASE/bad/inhome"
chmod 0755 "$BASE/bad/tool" "$BASE/bad/inhome"
ln -s "$H/.ssh/python3" "$BASE/bad/venv/bin/python"
touch "$BASE/bad/venv/pyvenv.cfg"
printf 'echo hi\n' >"$H/x.sh"
# An interpreter installed with ~/.local as its prefix, and a link uv put
# in ~/.local/bin: ~/.local/share holds what no interpreter needs.
LOC=$H/.local
mkdir -p "$LOC/bin" "$LOC/lib" "$LOC/share" "$BASE/localproj"
echo local-stdlib >"$LOC/lib/marker"
echo private-history >"$LOC/share/history"
printf '#!/bin/sh
echo "python from $(cat %s/lib/marker 2>&1); share: $(cat %s/share/history 2>/dev/null || echo unreadable)"\n' \
	"$LOC" "$LOC" >"$LOC/bin/python3"
chmod 0755 "$LOC/bin/python3"
ln -s "$UVPY/bin/python3.12" "$LOC/bin/python3.12"
# A script pip --user put in ~/.local/bin, run as the command.
printf '#!/bin/sh\necho "lib: $(cat %s/lib/marker 2>&1); share: $(cat %s/share/history 2>/dev/null || echo unreadable)"\n' \
	"$LOC" "$LOC" >"$LOC/bin/usertool"
chmod 0755 "$LOC/bin/usertool"
printf '#!%s/bin/python3\n' "$LOC" >"$BASE/localproj/prefix"
printf '#!%s/bin/python3.12\n' "$LOC" >"$BASE/localproj/uvlink"
chmod 0755 "$BASE/localproj/prefix" "$BASE/localproj/uvlink"
chmod -R a+rX "$BASE"
hm() { env HOME="$H" "$MOAT" "$@"; }
herr() { local out rc; out=$(hm "$@" 2>&1 >/dev/null </dev/null); rc=$?; printf '%s:%s' "$rc" "$out"; }

is "$(cd "$BASE/other" && herr run -- "$H/bin/mytool")" "125:moat: $H/bin/mytool: the sandbox would not see the command: its install dir would be HOME, which moat never grants on its own
moat: hint: grant it: --read ~/bin" "~/bin/mytool: refused before the run, with the grant to add"
is "$(cd "$BASE/other" && hm run --read "$H/bin" -- "$H/bin/mytool" 2>&1)" "mytool ran" "  with --read ~/bin it runs"
out=$(cd "$BASE/proj" && hm run -- ./venv/bin/pip --version 2>&1)
is "$out" "python from pyenv-stdlib $BASE/proj/venv/bin/pip --version" \
	"a pyenv-made venv: ./venv/bin/pip runs, its interpreter and its installation visible"
(cd "$BASE/proj" && hm run --dry-run -- ./venv/bin/pip >"$SCRATCH/venv.json" 2>/dev/null)
is "$(json_eval "$SCRATCH/venv.json" "[[p['access'], p['origin']['source']] for p in d['policy']['paths'] if p['path'] == '$PYHOME']")" \
	"[[\"read\", \"the interpreter $BASE/proj/venv/bin/python points at (a symlink)\"]]" \
	"  the dry run shows the installation granted read-only, and what points at it"
is "$(json_eval "$SCRATCH/venv.json" "[p['path'] for p in d['policy']['paths'] if p['path'].startswith('$H') and p['access'] != 'deny']")" \
	"[\"$PYHOME\"]" "  and nothing else of HOME"
is "$(cd "$BASE/other" && hm run -- /bin/cat "$PYHOME/lib/marker" 2>/dev/null)" "" \
	"  control: elsewhere the installation stays out of the sandbox"
out=$(cd "$BASE/uvproj" && hm run -- sh -c '. .venv/bin/activate && python -V' 2>&1)
is "$out" "python from uv-stdlib -V" "a uv-made venv: \`. .venv/bin/activate && python\` finds its python"
is "$(cd "$BASE/localproj" && hm run -- ./prefix 2>&1)" "python from local-stdlib; share: unreadable" \
	"an interpreter with ~/.local as its prefix: it runs with its lib/, and ~/.local/share stays out"
is "$(cd "$BASE/localproj" && hm run --read "$LOC" -- ./prefix 2>&1)" "python from local-stdlib; share: private-history" \
	"  control: with ~/.local granted, the same interpreter reads ~/.local/share"
(cd "$BASE/localproj" && hm run --dry-run -- ./prefix >"$SCRATCH/local.json" 2>/dev/null)
is "$(json_eval "$SCRATCH/local.json" "sorted(p['path'] for p in d['policy']['paths'] if p['path'].startswith('$H') and p['access'] != 'deny')")" \
	"[\"$LOC/bin\", \"$LOC/lib\"]" "  the dry run grants ~/.local/bin and ~/.local/lib, not ~/.local"
is "$(cd "$BASE/other" && hm run -- "$LOC/bin/usertool" 2>&1)" "lib: local-stdlib; share: unreadable" \
	"~/.local/bin/usertool as the command: its directory and ~/.local/lib granted, ~/.local/share not"
is "$(cd "$BASE/other" && hm run --read "$LOC" -- "$LOC/bin/usertool" 2>&1)" "lib: local-stdlib; share: private-history" \
	"  control: with ~/.local granted, it reads ~/.local/share"
out=$(cd "$BASE/localproj" && hm run -- ./uvlink 2>&1)
is "$out" "python from uv-stdlib $BASE/localproj/uvlink" "a #! naming uv's link in ~/.local/bin: uv's Python runs"
(cd "$BASE/localproj" && hm run --dry-run -- ./uvlink >"$SCRATCH/uvlink.json" 2>/dev/null)
is "$(json_eval "$SCRATCH/uvlink.json" "sorted(p['path'] for p in d['policy']['paths'] if p['path'].startswith('$H') and p['access'] != 'deny')")" \
	"[\"$LOC/bin\", \"$LOC/lib\", \"$UVPY\"]" "  granted: the link's directory, ~/.local/lib and uv's installation, not ~/.local"
is "$(cd "$BASE/bad" && herr run -- ./tool)" "125:moat: $BASE/bad/tool: the sandbox would not see the interpreter it runs, $H/tools/runner (its #! line): no grant covers it, and its name is not an interpreter's (python3, node, ...), whose installation moat would grant
moat: hint: grant it: --read ~/tools" "a #! naming a program under HOME that is not an interpreter: refused, with the grant"
is "$(cd "$BASE/bad" && herr run -- ./inhome)" "125:moat: $BASE/bad/inhome: the sandbox would not see the interpreter it runs, $H/python3 (its #! line): its installation would be HOME, which moat never grants on its own
moat: hint: grant it: --read ~/python3" "  an interpreter in HOME itself: HOME is never granted on its own"
is "$(cd "$BASE/bad" && herr run -- ./venv/bin/python)" "125:moat: $BASE/bad/venv/bin/python: the sandbox would not see the interpreter it runs, $H/.ssh/python3 (a symlink): it lies inside a denied path
moat: hint: $H/.ssh is denied (built-in secrets); use an interpreter installed elsewhere" \
	"  a venv whose python is in ~/.ssh: refused, nothing of ~/.ssh granted"
is "$(cd "$BASE/bad" && herr run -- true)" "0:moat: note: $BASE/bad/venv/bin/python points at $H/.ssh/python3 (a symlink), which lies in the denied $H/.ssh: a shell that activates it will not find its python" \
	"  the same venv in the current directory, not run: a note, and the run goes on"
# A virtualenv's python as the command, the virtualenv elsewhere (a client's
# config: "command": "/p/.venv/bin/python"): python finds its pyvenv.cfg by
# the path it is run by, so the virtualenv is granted, read-only, and its
# packages are the ones imported.  It was refused, with --read as the fix.
VOUT=$BASE/vout/.venv
mkdir -p "$VOUT/bin"
ln -sfn /usr/bin/python3 "$VOUT/bin/python"
printf 'home = /usr/bin\ninclude-system-site-packages = false\n' >"$VOUT/pyvenv.cfg"
chmod -R a+rX "$BASE/vout"
is "$(cd "$BASE/other" && hm run --profile strict -- "$VOUT/bin/python" -c 'import sys; print(sys.prefix)' 2>&1)" "$VOUT" \
	"a virtualenv's python elsewhere as the command: the virtualenv granted, python runs in it (sys.prefix)"
(cd "$BASE/other" && hm run --profile strict --dry-run -- "$VOUT/bin/python" >"$SCRATCH/vout.json" 2>/dev/null)
is "$(json_eval "$SCRATCH/vout.json" "[[p['access'], p['origin']['source']] for p in d['policy']['paths'] if p['path'] == '$VOUT']")" \
	'[["read", "the command'"'"'s virtualenv"]]' "  read-only, and the dry run says why"
is "$(cd "$BASE/other" && herr run --profile strict -- "$BASE/bad/venv/bin/python")" "125:moat: $BASE/bad/venv/bin/python: the sandbox would not see the interpreter it runs, $H/.ssh/python3 (a symlink): it lies inside a denied path
moat: hint: $H/.ssh is denied (built-in secrets); use an interpreter installed elsewhere" \
	"  control: a virtualenv whose python is in ~/.ssh is refused all the same"
is "$(cd "$BASE/other" && herr run --profile strict -- sh "$H/x.sh")" "125:moat: $H/x.sh: the sandbox would not see the script the interpreter runs: its directory would be HOME, which moat never grants on its own
moat: hint: grant it: --read ~/x.sh" "sh ~/x.sh under strict: the script is refused, with the grant"
is "$(cd "$BASE/other" && hm run --profile strict --read "$H/x.sh" -- sh "$H/x.sh" 2>&1)" "hi" "  granted, it runs"

# An interpreter's installation is judged by the object it is, not by its
# name, and the grant is bound to that object.  A virtualenv's home (or a
# #! line) names a directory through a link: judged by the name, a link to
# HOME passed (HOME itself is never granted on its own), and the plan walked
# the name again, so whoever may write where the link lies (a shared
# directory, another user's link) could flip it between moat's look and its
# plan: a look at a real installation, a grant of HOME.
SHR=$BASE/shared
H2=$BASE/home2
mkdir -p "$SHR" "$BASE/fakepy/bin" "$BASE/fakepy/lib" "$BASE/raceproj/.venv/bin" "$BASE/linkproj/.venv/bin" "$H2/bin"
printf '#!/bin/sh\necho fake python\n' >"$BASE/fakepy/bin/python3"
cp "$BASE/fakepy/bin/python3" "$H2/bin/python3"
echo fakepy-stdlib >"$BASE/fakepy/lib/marker"
printf 'export TOKEN=moat-canary-%s\n' "$$" | tee "$H/notes" >"$H2/notes"
# A venv's own python is a program (no #! line): the walk goes on to its
# pyvenv.cfg's home.
for v in raceproj linkproj; do
	printf 'ELF\n' >"$BASE/$v/.venv/bin/python"
	chmod 0755 "$BASE/$v/.venv/bin/python"
done
printf 'home = %s/py/bin\n' "$SHR" >"$BASE/raceproj/.venv/pyvenv.cfg"
printf 'home = %s/lnk/bin\n' "$SHR" >"$BASE/linkproj/.venv/pyvenv.cfg"
chmod 0755 "$BASE/fakepy/bin/python3" "$H2/bin/python3"
ln -s "$H2" "$SHR/lnk"
chmod -R a+rX "$SHR" "$BASE/fakepy" "$BASE/raceproj" "$BASE/linkproj" "$H2" "$H/notes"
readboth='cat "$1" 2>/dev/null; cat "$2" 2>/dev/null'
out=$(cd "$BASE/linkproj" && env HOME="$H2" "$MOAT" run -- /bin/sh -c "$readboth" sh "$H2/notes" "$H2/bin/python3" 2>"$SCRATCH/lnk.err")
unlike "$out" "moat-canary" "a venv's home through a link to HOME (which holds bin/python3): HOME is not granted"
like "$(cat "$SCRATCH/lnk.err")" "note: $BASE/linkproj/.venv/pyvenv.cfg points at $SHR/lnk/bin/python3 \\(pyvenv.cfg's home\\), which no grant covers \\(its installation $SHR/lnk leads to HOME" \
	"  a note says why the interpreter is not granted"
rm "$SHR/lnk" && ln -s ../fakepy "$SHR/lnk"
like "$(cd "$BASE/linkproj" && env HOME="$H2" "$MOAT" run -- /bin/cat "$BASE/fakepy/lib/marker" 2>&1)" "fakepy-stdlib" \
	"  control: the link to a real installation is granted, its lib/ read"
# The race: a swapper flips $SHR/py between a real installation and HOME as
# fast as it can while moat starts, 100 runs or 20 s.  HOME must never be
# read (before the fix 5-6 runs of 100 read it here); the installation is
# granted in some runs, and a run whose grant was swapped after the look
# says so.
ln -s ../fakepy "$SHR/py"
/usr/bin/python3 - "$SHR" "$H" <<'PY' &
import os, sys, time
d, home = sys.argv[1], sys.argv[2]
end = time.time() + 25
i = 0
while time.time() < end and os.path.exists(d):
    t = "%s/.t%d" % (d, i % 2)
    try:
        os.symlink(home if i % 2 else "../fakepy", t)
        os.replace(t, d + "/py")
    except OSError:
        pass
    i += 1
PY
swapper=$!
reads=0 granted=0 dropped=0 runs=0 t0=$SECONDS
while [ "$runs" -lt 100 ] && [ $((SECONDS - t0)) -lt 20 ]; do
	runs=$((runs + 1))
	out=$(cd "$BASE/raceproj" && env HOME="$H" "$MOAT" run -- /bin/sh -c "$readboth" sh "$H/notes" \
		"$BASE/fakepy/lib/marker" 2>"$SCRATCH/race.err")
	case $out in *moat-canary*) reads=$((reads + 1)) ;; esac
	case $out in *fakepy-stdlib*) granted=$((granted + 1)) ;; esac
	grep -q "is no longer the directory moat checked" "$SCRATCH/race.err" && dropped=$((dropped + 1))
done
kill "$swapper" 2>/dev/null
wait "$swapper" 2>/dev/null
is "$reads" 0 "a venv's home flipped between an installation and HOME while moat starts: HOME is never granted ($runs runs)"
ok "$([ "$granted" -gt 0 ] && echo 0 || echo 1)" "  control: the installation itself was granted in some of them ($granted; dropped after a swap, said: $dropped)"

# rustup's proxies: ~/.cargo/bin/cargo a link to rustup (or a hard link of
# it), which runs the toolchain kept in ~/.rustup.  The fake rustup runs
# what ~/.rustup holds for the name it was called by, as rustup does.
CB=$H/.cargo/bin
TC=$H/.rustup/toolchains/stable/bin
mkdir -p "$CB" "$TC"
printf '#!/bin/sh\nexec "$HOME/.rustup/toolchains/stable/bin/${0##*/}" "$@"\n' >"$CB/rustup"
printf '#!/bin/sh\necho "toolchain cargo $*"\n' >"$TC/cargo"
printf '#!/bin/sh\necho "toolchain rustc $*"\n' >"$TC/rustc"
printf '#!/bin/sh\necho "toolchain $*"; cat "$HOME/.rustup/toolchains/stable/bin/cargo" >/dev/null 2>&1 && echo sees-rustup\n' \
	>"$CB/cargo-other"
chmod 0755 "$CB/rustup" "$TC/cargo" "$TC/rustc" "$CB/cargo-other"
ln -s rustup "$CB/cargo"
ln "$CB/rustup" "$CB/rustc"
chmod -R a+rX "$H"
is "$(cd "$BASE/other" && hm run -- "$CB/cargo" build 2>&1)" "toolchain cargo build" \
	"~/.cargo/bin/cargo, a link to rustup: the toolchain in ~/.rustup runs"
is "$(cd "$BASE/other" && hm run -- "$CB/rustc" -V 2>&1)" "toolchain rustc -V" "  rustc, a hard link of rustup: the same"
(cd "$BASE/other" && hm run --dry-run -- "$CB/cargo" >"$SCRATCH/rustup.json" 2>/dev/null)
is "$(json_eval "$SCRATCH/rustup.json" "[[p['access'], p['origin']['source']] for p in d['policy']['paths'] if p['path'] == '$H/.rustup']")" \
	'[["read", "the toolchains of the rustup proxy the command is"]]' "  the dry run grants ~/.rustup read-only, and says why"
is "$(cd "$BASE/other" && hm run -- "$CB/cargo-other" x 2>&1)" "toolchain x" \
	"  control: another program in ~/.cargo/bin does not see ~/.rustup"
# What `cargo install` put in ~/.cargo/bin gets that directory only, not
# cargo's configuration beside it (a registry token can live there); cargo,
# a rustup proxy, reads it.
echo '[registries.x]' >"$H/.cargo/config.toml"
printf '#!/bin/sh\ncat "$HOME/.cargo/config.toml"\n' >"$CB/installed-tool"
printf '#!/bin/sh\ncat "$HOME/.cargo/config.toml"\n' >"$TC/cargo-conf"
chmod 0755 "$CB/installed-tool" "$TC/cargo-conf"
ln -s rustup "$CB/cargo-conf"
chmod -R a+rX "$H/.cargo"
like "$(cd "$BASE/other" && hm run -- "$CB/installed-tool" 2>&1)" "No such file" \
	"~/.cargo/bin/installed-tool (cargo install): ~/.cargo/config.toml stays out"
is "$(cd "$BASE/other" && hm run --read "$H/.cargo" -- "$CB/installed-tool" 2>&1)" "[registries.x]" \
	"  control: with ~/.cargo granted it reads it"
is "$(cd "$BASE/other" && hm run -- "$CB/cargo-conf" 2>&1)" "[registries.x]" \
	"  a rustup proxy in ~/.cargo/bin: all of ~/.cargo"
rm -f "$CB/installed-tool" "$CB/cargo-conf" "$TC/cargo-conf" "$H/.cargo/config.toml"

# go: a build cache it can write, and no placeholder .git taken for a
# repository.  The fake go does what go build does first: it makes its cache
# (GOCACHE, else ~/.cache/go-build), then, unless -buildvcs=false, asks git
# for the status of the nearest .git's repository.
GOBIN=$BASE/gotool/bin
mkdir -p "$GOBIN" "$BASE/goproj" "$BASE/gorepo"
cat >"$GOBIN/go" <<'EOF'
#!/bin/sh
PATH=$PATH:/usr/bin:/bin
[ "$1" = mods ] && exec cat "${GOMODCACHE:-$HOME/go/pkg/mod}/example.com/dep@v1.0.0/dep.go"
[ "$1" = modwrite ] && { : >"$HOME/go/pkg/mod/new" && echo wrote; exit; }
cache=${GOCACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/go-build}
{ mkdir -p "$cache" && : >"$cache/entry"; } 2>/dev/null || { echo "failed to initialize build cache at $cache"; exit 1; }
case " $GOFLAGS " in *" -buildvcs=false "*) echo "built, cache $cache"; exit 0 ;; esac
d=$PWD
while :; do
	if [ -e "$d/.git" ]; then
		git -C "$d" status --porcelain >/dev/null 2>&1 || { echo "error obtaining VCS status"; exit 1; }
		echo "built, cache $cache, stamped"
		exit 0
	fi
	[ "$d" = / ] && break
	d=${d%/*}
	d=${d:-/}
done
echo "built, cache $cache"
EOF
chmod 0755 "$GOBIN/go"
cp "$GOBIN/go" "$GOBIN/gofmt"
git -C "$BASE/gorepo" init -q
chmod -R a+rX "$BASE/gotool" "$BASE/gorepo"
chmod a+w "$BASE/goproj" "$BASE/gorepo"
goenv() { hm run --dry-run "$@" 2>/dev/null | json_eval /dev/stdin "[e['name'] for e in d['policy']['env'] if e['name'].startswith('GO')]"; }
is "$(cd "$BASE/goproj" && hm run --write . -- "$GOBIN/go" build 2>&1)" "built, cache /tmp/go-build" \
	"go build in a project with no .git, --write .: its cache in the private /tmp, no VCS stamping"
is "$(cd "$BASE/goproj" && goenv --write . -- "$GOBIN/go" build)" '["GOCACHE", "GOFLAGS"]' "  the dry run names GOCACHE and GOFLAGS"
is "$(cd "$BASE/goproj" && hm run --write . --env GOFLAGS= -- "$GOBIN/go" build 2>&1)" "error obtaining VCS status" \
	"  control: with the user's own GOFLAGS, go takes the run's placeholder .git for a repository"
is "$(cd "$BASE/goproj" && hm run --write . --env "GOCACHE=$H/.cache/go-build" -- "$GOBIN/go" build 2>&1)" \
	"moat: note: GOCACHE names $H/.cache/go-build, outside every grant: the command can neither read nor write it; grant it or its directory (--read or --write, or read or write in the config's profile) if the command uses it
failed to initialize build cache at $H/.cache/go-build" \
	"  control: with the user's own GOCACHE, go cannot build (~/.cache stays out), and a note says why"
is "$(cd "$BASE/gorepo" && hm run --write . -- "$GOBIN/go" build 2>&1)" "built, cache /tmp/go-build, stamped" \
	"go build in a git repository: the repository is stamped, GOFLAGS left alone"
is "$(cd "$BASE/goproj" && goenv -- "$GOBIN/go" build)" '["GOCACHE"]' "  no write grant, no placeholder: only GOCACHE"
is "$(cd "$BASE/goproj" && goenv -- "$GOBIN/gofmt")" '[]' "  another command: neither"
# The module cache: ~/go/pkg/mod, read-only, without network; with it,
# moat's package cache instead (pkgcache.sh), never the user's.
mkdir -p "$H/go/pkg/mod/example.com/dep@v1.0.0"
echo "package dep" >"$H/go/pkg/mod/example.com/dep@v1.0.0/dep.go"
chmod -R a+rX "$H/go"
is "$(cd "$BASE/goproj" && hm run -- "$GOBIN/go" mods 2>&1)" "package dep" "  the module cache ~/go/pkg/mod: readable by go"
like "$(cd "$BASE/goproj" && hm run -- "$GOBIN/go" modwrite 2>&1)" "Read-only file system" "  read-only: go cannot write it"
like "$(cd "$BASE/goproj" && hm run -- "$GOBIN/gofmt" mods 2>&1)" "No such file" "  control: another command does not see it"
like "$(cd "$BASE/goproj" && hm run --net all -- "$GOBIN/go" mods 2>&1)" "No such file" \
	"  with network: moat's own module cache, not the user's"
# Without a mount namespace the private tmp is a per-run directory: the
# cache goes there.  Where nothing keeps /tmp private, moat sets no GOCACHE:
# the host's /tmp is anyone's, and a cache planted there is what go links.
like "$(cd "$BASE/goproj" && MOAT_HOST_LIMIT=userns=0,root=0 hm run --backend native --mode prefer --write . -- "$GOBIN/go" build 2>/dev/null)" \
	'^built, cache /tmp/moat-tmp\.[0-9]+\.[A-Za-z0-9]+/go-build$' "  no mount namespace: the cache in the run's own tmp directory"
is "$(cd "$BASE/goproj" && MOAT_HOST_LIMIT=userns=0,root=0,landlock=0 hm run --backend native --mode prefer -- "$GOBIN/go" build 2>/dev/null)" \
	"built, cache $H/.cache/go-build" "  nothing keeps /tmp private: no GOCACHE of moat's, never the host's /tmp"
# A project's toolchain: `make`, `sh -c 'go build'`, a CI script run go or
# cargo by their names from PATH.  In a Go module (go.mod) or a Cargo package
# (Cargo.toml) moat grants the toolchain PATH finds, as it would the command.
mkdir -p "$BASE/gomod" "$BASE/cargoproj"
printf 'module example.com/gomod\n' >"$BASE/gomod/go.mod"
printf '[package]\nname = "x"\n' >"$BASE/cargoproj/Cargo.toml"
chmod -R a+rwX "$BASE/gomod" "$BASE/cargoproj"
# PATH is the fake go's directory alone: Debian's go in /usr/bin is not found
# instead when the fake one is hidden.
is "$(cd "$BASE/gomod" && hm run --env PATH="$GOBIN" --write . -- /bin/sh -c 'go build' 2>&1)" "built, cache /tmp/go-build" \
	"sh -c 'go build' in a Go module: go's installation granted, its cache in the private /tmp, no VCS stamping"
like "$(cd "$BASE/goproj" && hm run --env PATH="$GOBIN" --write . -- /bin/sh -c 'go build' 2>&1)" "go: not found" \
	"  control: outside a Go module the same go stays out of the sandbox"
is "$(cd "$BASE/gomod" && goenv --env PATH="$GOBIN" --write . -- /bin/sh -c 'go build')" '["GOCACHE", "GOFLAGS"]' \
	"  the dry run names GOCACHE and GOFLAGS"
(cd "$BASE/gomod" && hm run --env PATH="$GOBIN" --dry-run -- /bin/sh >"$SCRATCH/gomod.json" 2>/dev/null)
is "$(json_eval "$SCRATCH/gomod.json" "[[p['access'], p['origin']['source']] for p in d['policy']['paths'] if p['path'] == '$BASE/gotool']")" \
	'[["read", "the go of the Go module in the current directory (go.mod)"]]' "  and grants go's installation read-only, saying why"
is "$(cd "$BASE/cargoproj" && hm run --env PATH="$CB:/usr/bin:/bin" -- /bin/sh -c 'cargo build' 2>&1)" "toolchain cargo build" \
	"sh -c 'cargo build' in a Cargo package: the rustup proxy on PATH and its toolchain in ~/.rustup run"
like "$(cd "$BASE/other" && hm run --env PATH="$CB:/usr/bin:/bin" -- /bin/sh -c 'cargo build' 2>&1)" "cargo: not found" \
	"  control: outside a Cargo package ~/.cargo stays out of the sandbox"
is "$(cd "$BASE/gomod" && hm run --env PATH="$GOBIN" --mode off -- /bin/sh -c 'echo "[$GOCACHE]"' 2>/dev/null)" "[]" \
	"  --mode off: nothing added"
# cargo, go and npm find their file upwards: `sh -c 'cargo build'` in
# crate/src of a git work tree; and at a monorepo's root, `make` runs the
# builds of its parts (backend/Cargo.toml).  Not above the work tree, nor
# in a root with more directories than a monorepo has (a folder of them).
if command -v git >/dev/null; then
	MR=$BASE/mono
	mkdir -p "$MR/backend/src" "$MR/up/crate/src"
	git init -q "$MR"
	cp "$BASE/cargoproj/Cargo.toml" "$MR/backend/"
	cp "$BASE/cargoproj/Cargo.toml" "$BASE/Cargo.toml" # above the work tree: not the project's
	chmod -R a+rwX "$MR"
	is "$(cd "$MR/backend/src" && hm run --env PATH="$CB:/usr/bin:/bin" -- /bin/sh -c 'cargo build' 2>&1)" "toolchain cargo build" \
		"sh -c 'cargo build' in crate/src of a work tree: Cargo.toml above is found, as cargo finds it"
	is "$(cd "$MR" && hm run --env PATH="$CB:/usr/bin:/bin" -- /bin/sh -c 'cd backend && cargo build' 2>&1)" "toolchain cargo build" \
		"  at the work tree's root (a monorepo's make): backend/Cargo.toml is found"
	(cd "$MR" && hm run --env PATH="$CB:/usr/bin:/bin" --dry-run -- /bin/sh >"$SCRATCH/mono.json" 2>/dev/null)
	is "$(json_eval "$SCRATCH/mono.json" "sorted(set(p['origin']['source'] for p in d['policy']['paths'] if 'cargo' in p['origin']['source']))")" \
		"[\"the cargo of the Cargo package in a directory of the git work tree's root (Cargo.toml)\"]" "  the dry run says where it was found"
	like "$(cd "$MR/up/crate/src" && hm run --env PATH="$CB:/usr/bin:/bin" -- /bin/sh -c 'cargo build' 2>&1)" "cargo: not found" \
		"  control: a Cargo.toml above the work tree's root is not the project's"
	like "$(cd "$MR/backend/src" && hm run --env PATH="$CB:/usr/bin:/bin" -- /usr/bin/env cargo build 2>&1)" "No such file or directory" \
		"  control: only for a build driver or a shell (env(1) is neither): the current directory alone"
	for i in $(seq 1 65); do mkdir -p "$MR/d$i"; done
	like "$(cd "$MR" && hm run --env PATH="$CB:/usr/bin:/bin" -- /bin/sh -c 'cargo build' 2>&1)" "cargo: not found" \
		"  control: a root with more than 64 directories is a folder of projects, not looked into"
	rm -f "$BASE/Cargo.toml"
fi
# python3 and node the same way: a pyenv's or nvm's first on PATH, not the
# system's that the sandbox would otherwise fall back to without a word.
PT=$BASE/pyenvlike/bin
NT=$BASE/nvmlike/bin
mkdir -p "$PT" "$NT" "$BASE/pyproj" "$BASE/nodeproj"
printf '#!/bin/sh\necho project python\n' >"$PT/python3"
printf '#!/bin/sh\necho project node\n' >"$NT/node"
chmod 0755 "$PT/python3" "$NT/node"
chmod -R a+rX "$BASE/pyenvlike" "$BASE/nvmlike"
: >"$BASE/pyproj/requirements.txt"
echo '{}' >"$BASE/nodeproj/package.json"
chmod -R a+rwX "$BASE/pyproj" "$BASE/nodeproj"
is "$(cd "$BASE/pyproj" && hm run --env PATH="$PT:/usr/bin:/bin" -- /bin/sh -c 'python3 -c "print(1)"' 2>&1)" "project python" \
	"sh -c python3 in a Python project (requirements.txt): the python3 first on PATH runs"
unlike "$(cd "$BASE/other" && hm run --env PATH="$PT:/usr/bin:/bin" -- /bin/sh -c 'python3 -c "print(1)"' 2>&1)" "project python" \
	"  control: elsewhere it stays out of the sandbox"
is "$(cd "$BASE/nodeproj" && hm run --env PATH="$NT:/usr/bin:/bin" -- /bin/sh -c 'node -e 1' 2>&1)" "project node" \
	"sh -c node in a Node.js project (package.json): the node first on PATH runs"
unlike "$(cd "$BASE/other" && hm run --env PATH="$NT:/usr/bin:/bin" -- /bin/sh -c 'node -e 1' 2>&1)" "project node" \
	"  control: elsewhere it stays out of the sandbox"
# A python's user site-packages (pip install --user): `python3 -m pytest`
# imports from ~/.local/lib/python3.N, read-only; another command does not
# see it.  The fake python reads the module as the real one would import it.
SITE=$H/.local/lib/python3.11/site-packages
mkdir -p "$SITE" "$BASE/sitebin"
echo 'user-site-module' >"$SITE/usermod.py"
cat >"$BASE/sitebin/python3" <<'EOF'
#!/bin/sh
S=$HOME/.local/lib/python3.11/site-packages
[ "$1" = -w ] && { (: >"$S/new") 2>/dev/null && echo WROTE || echo refused; exit; }
cat "$S/usermod.py"
EOF
cp "$BASE/sitebin/python3" "$BASE/sitebin/notpython"
chmod -R a+rX "$H/.local" && chmod 0755 "$BASE/sitebin" "$BASE/sitebin/python3" "$BASE/sitebin/notpython"
is "$(cd "$BASE/other" && hm run -- "$BASE/sitebin/python3" -m usermod 2>&1)" "user-site-module" \
	"python3 -m MODULE: the user site-packages (~/.local/lib/python3.N) is readable"
is "$(cd "$BASE/other" && hm run -- "$BASE/sitebin/python3" -w 2>&1)" "refused" "  read-only: nothing written there"
is "$(HOME=$H "$BASE/sitebin/python3" -w 2>&1)" "WROTE" "  control: outside moat the same write lands"
like "$(cd "$BASE/other" && hm run -- "$BASE/sitebin/notpython" 2>&1)" "No such file" \
	"  control: another command does not see it"
# A link there is not followed into a grant: what it leads to stays out.
rm -rf "$H/.local/lib/python3.11"
mkdir -p "$BASE/elsewhere/site-packages"
echo 'linked-module' >"$BASE/elsewhere/site-packages/usermod.py"
chmod -R a+rX "$BASE/elsewhere"
ln -s "$BASE/elsewhere" "$H/.local/lib/python3.11"
like "$(cd "$BASE/other" && hm run -- "$BASE/sitebin/python3" -m usermod 2>&1)" "No such file" \
	"  ~/.local/lib/python3.N a link: not followed into a grant"
is "$(cd "$BASE/other" && hm run --read "$H/.local/lib" --read "$BASE/elsewhere" -- "$BASE/sitebin/python3" -m usermod 2>&1)" "linked-module" \
	"  control: with the link and its target granted, the same read lands"
rm -f "$H/.local/lib/python3.11"

# A program `go install` put in ~/go/bin (GOPATH): ~/go/bin is granted, not
# ~/go whole, where GOPATH's ~/go/src keeps the user's own source; but the
# go of a toolchain unpacked into ~/go (GOROOT) gets all of it.
mkdir -p "$H/go/bin" "$H/go/src/private"
echo 'gopath-private-source' >"$H/go/src/private/.env"
printf '#!/bin/sh\ncat "$HOME/go/src/private/.env"\n' >"$H/go/bin/mcpserver"
cp "$H/go/bin/mcpserver" "$H/go/bin/go"
chmod -R a+rX "$H/go" && chmod 0755 "$H/go/bin/mcpserver" "$H/go/bin/go"
like "$(cd "$BASE/other" && hm run --profile mcp -- "$H/go/bin/mcpserver" 2>&1)" "No such file" \
	"~/go/bin/mcpserver (go install): ~/go/src stays out of the sandbox"
is "$(cd "$BASE/other" && hm run --profile mcp --read "$H/go" -- "$H/go/bin/mcpserver" 2>&1)" "gopath-private-source" \
	"  control: with ~/go granted it reads it"
is "$(cd "$BASE/other" && hm run --profile mcp -- "$H/go/bin/go" 2>&1)" "gopath-private-source" \
	"  ~/go/bin/go, a toolchain unpacked into ~/go: all of ~/go, its GOROOT"
rm -rf "$H/go/bin" "$H/go/src"

# Run from inside a denied path: the command sees nothing of it, and moat
# says why (it used to say nothing, and `ls` showed an empty directory).
mkdir -p "$H/.aws"
is "$(cd "$H/.aws" && herr run -- true)" "0:moat: note: the current directory, $H/.aws, lies in the denied $H/.aws (built-in secrets): the command sees nothing of it" \
	"cwd in ~/.aws: a note says the command sees nothing of it"
is "$(cd "$BASE/other" && herr run -- true)" "0:" "  control: from elsewhere, no note"

# A relative PATH entry is the project's own: what it finds there is never
# granted (a link planted in node_modules/.bin would pick the grant).
mkdir -p "$BASE/nodeproj/node_modules/.bin" "$BASE/planted"
printf '#!/bin/sh\necho planted node\n' >"$BASE/planted/node"
chmod 0755 "$BASE/planted" "$BASE/planted/node"
ln -s "$BASE/planted/node" "$BASE/nodeproj/node_modules/.bin/node"
is "$(cd "$BASE/nodeproj" && hm run --env PATH="node_modules/.bin:$NT:/usr/bin:/bin" -- /bin/sh -c 'node -e 1' 2>&1)" "project node" \
	"  PATH's relative node_modules/.bin: the link planted there is not followed into a grant"
is "$(cd "$BASE/nodeproj" && PATH="node_modules/.bin:$PATH" "$MOAT" run --profile strict --read . -- /bin/sh -c 'node -e 1' 2>/dev/null)" "" \
	"  nor from moat's own PATH"
is "$(cd "$BASE/nodeproj" && hm run --env PATH="$BASE/nodeproj/node_modules/.bin:$NT:/usr/bin:/bin" -- /bin/sh -c 'node -e 1' 2>&1)" "project node" \
	"  nor from an absolute entry inside the project (direnv's PATH_add)"
if command -v go >/dev/null 2>&1; then
	mkdir -p "$BASE/realgo"
	printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello from go") }\n' >"$BASE/realgo/main.go"
	printf 'module example.com/realgo\n\ngo 1.19\n' >"$BASE/realgo/go.mod"
	chmod -R a+rwX "$BASE/realgo"
	is "$(cd "$BASE/realgo" && hm run --write . -- go build -o hello . 2>&1 && hm run -- ./hello 2>&1)" "hello from go" \
		"the real go: go build in a project with no .git, then the binary runs"
else
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N # SKIP go is not installed"
fi

# The program an MCP config runs, past the options before it: `java -Xmx1g
# -jar /x/server.jar`, `python3 -u /x/server.py`, `node --no-warnings
# /x/index.js`.  Fake java, python3 and node that read it, as the real ones do.
RT=$BASE/runtimes/bin
SRV=$BASE/srv
mkdir -p "$RT" "$SRV"
for tool in java python3 node deno bun; do
	printf '#!/bin/sh\nfor a; do last=$a; done\ncat "$last"\n' >"$RT/$tool"
done
chmod 0755 "$RT/java" "$RT/python3" "$RT/node" "$RT/deno" "$RT/bun"
echo jar-code >"$SRV/app.jar"
echo py-code >"$SRV/s.py"
echo js-code >"$SRV/s.js"
echo home-jar >"$H/app.jar"
chmod -R a+rX "$BASE/runtimes" "$SRV" "$H/app.jar"
is "$(cd "$BASE/other" && hm run --profile mcp -- "$RT/java" -Xmx64m -Dx=y -jar "$SRV/app.jar" 2>&1)" "jar-code" \
	"java -Xmx64m -Dx=y -jar /x/app.jar under mcp: the jar's directory is granted"
(cd "$BASE/other" && hm run --profile mcp --dry-run -- "$RT/java" -jar "$SRV/app.jar" >"$SCRATCH/jar.json" 2>/dev/null)
is "$(json_eval "$SCRATCH/jar.json" "[[p['access'], p['origin']['source']] for p in d['policy']['paths'] if p['path'] == '$SRV']")" \
	'[["read", "the interpreter'"'"'s script dir"]]' "  read-only, shown in the dry run"
is "$(cd "$BASE/other" && hm run --profile mcp -- /bin/cat "$SRV/app.jar" 2>/dev/null)" "" \
	"  control: for another command that directory stays out"
# A value-taking option's value is passed over, never taken for the program.
SRV2=$BASE/srv2
mkdir -p "$SRV2"
echo lib >"$SRV2/lib.jar"
chmod -R a+rX "$SRV2"
granted_dirs() { hm run --profile mcp --dry-run "$@" 2>/dev/null |
	json_eval /dev/stdin "sorted(p['path'] for p in d['policy']['paths'] if p['path'] in ('$SRV', '$SRV2'))"; }
is "$(cd "$BASE/other" && hm run --profile mcp -- "$RT/java" -cp "$SRV2/lib.jar" -jar "$SRV/app.jar" 2>/dev/null)" "jar-code" \
	"java -cp /y/lib.jar -jar /x/app.jar: -cp's value passed over, the jar's directory granted"
is "$(cd "$BASE/other" && granted_dirs -- "$RT/java" -cp "$SRV2/lib.jar" -jar "$SRV/app.jar")" "[\"$SRV\"]" \
	"  the dry run grants the jar's directory, not -cp's value's"
is "$(cd "$BASE/other" && hm run --profile mcp -- "$RT/java" -m "$SRV/app.jar" 2>/dev/null)" "" \
	"  after -m (a module's main class runs, no jar) nothing is read as the jar"
is "$(cd "$BASE/other" && herr run --profile mcp -- "$RT/java" -jar "$H/app.jar")" "125:moat: $H/app.jar: the sandbox would not see the script the interpreter runs: its directory would be HOME, which moat never grants on its own
moat: hint: grant it: --read ~/app.jar" "  a jar in HOME itself: refused before the run, with the grant"
is "$(cd "$BASE/other" && hm run --profile mcp -- "$RT/python3" -u -B "$SRV/s.py" 2>&1)" "py-code" \
	"python3 -u -B /x/s.py: the script's directory is granted"
is "$(cd "$BASE/other" && hm run --profile mcp -- "$RT/python3" -X utf8 -W ignore -Xdev "$SRV/s.py" 2>/dev/null)" "py-code" \
	"python3 -X utf8 -W ignore -Xdev /x/s.py: the options' values passed over, the script's directory granted"
is "$(cd "$BASE/other" && hm run --profile mcp -- "$RT/python3" -c 'code' "$SRV/s.py" 2>/dev/null)" "" \
	"  after -c (code, no script) nothing is read as the script"
is "$(cd "$BASE/other" && hm run --profile mcp -- "$RT/node" --no-warnings --max-old-space-size=64 "$SRV/s.js" 2>&1)" \
	"js-code" "node --no-warnings --max-old-space-size=64 /x/s.js: the script's directory is granted"
is "$(cd "$BASE/other" && hm run --profile mcp -- "$RT/node" --require "$SRV2/lib.jar" --disable-warning DEP0040 --watch "$SRV/s.js" 2>/dev/null)" "js-code" \
	"node --require /y/r.js --disable-warning DEP0040 --watch /x/s.js: the values passed over, the script's directory granted"
is "$(cd "$BASE/other" && granted_dirs -- "$RT/node" --require "$SRV2/lib.jar" "$SRV/s.js")" "[\"$SRV\"]" \
	"  the dry run grants the script's directory, not --require's value's"
is "$(cd "$BASE/other" && hm run --profile mcp -- "$RT/node" --max-old-space-size 64 "$SRV/s.js" 2>/dev/null)" "" \
	"  after an option moat does not know, written without =, nothing is read as the script"
is "$(cd "$BASE/other" && hm run --profile mcp -- "$RT/deno" run --config "$SRV2/lib.jar" "$SRV/s.js" 2>&1)" "js-code" \
	"deno run --config /y/deno.json /x/s.ts: the same"
is "$(cd "$BASE/other" && hm run --profile mcp -- "$RT/deno" run -A --allow-read=/x --unstable-kv "$SRV/s.js" 2>&1)" \
	"js-code" "deno run -A --allow-read=/x --unstable-kv /x/s.js: the script's directory is granted"
is "$(cd "$BASE/other" && hm run --profile mcp -- "$RT/bun" run --smol=1 "$SRV/s.js" 2>&1)" "js-code" \
	"bun run /x/s.js: the same"

# A command reached through a directory link that no grant holds as
# written: its installation is granted where the link leads, and execve of
# the path as typed failed inside (127, "No such file or directory").
# SDKMAN's candidates/java/current -> 21-tem, a versioned install behind a
# link, fnm's PATH entry /run/user/UID/fnm_multishells/ID -> the node
# version (here under /tmp, the sandbox's own as /run is).
JV=$H/.sdkman/candidates/java
mkdir -p "$JV/21-tem/bin" "$BASE/tools/tool-1.2/bin" "$BASE/fnm/v20/bin" "$BASE/fnmproj"
printf '#!/bin/sh\necho "java $*"\n' >"$JV/21-tem/bin/java"
printf '#!/bin/sh\necho "tool $*"\n' >"$BASE/tools/tool-1.2/bin/tool"
printf '#!/bin/sh\necho "fnm node $*"\n' >"$BASE/fnm/v20/bin/node"
chmod 0755 "$JV/21-tem/bin/java" "$BASE/tools/tool-1.2/bin/tool" "$BASE/fnm/v20/bin/node"
ln -sfn 21-tem "$JV/current"
ln -sfn tool-1.2 "$BASE/tools/tool"
echo '{}' >"$BASE/fnmproj/package.json"
FNM=$(mktemp -d /tmp/moat-fnm.XXXXXX)
ln -sfn "$BASE/fnm/v20" "$FNM/123_456"
chmod -R a+rX "$H/.sdkman" "$BASE/tools" "$BASE/fnm" "$BASE/fnmproj" "$FNM"
is "$(cd "$BASE/other" && hm run -- "$JV/current/bin/java" -version 2>&1)" "java -version" \
	"SDKMAN's ~/.sdkman/candidates/java/current/bin/java (current a link): it runs, by the directory it leads to"
is "$(cd "$BASE/other" && hm run --profile strict -- "$BASE/tools/tool/bin/tool" x 2>&1)" "tool x" \
	"  a versioned installation behind a link (tool -> tool-1.2), under strict: the same"
(cd "$BASE/other" && hm run --profile strict --dry-run -- "$BASE/tools/tool/bin/tool" >"$SCRATCH/lnk.json" 2>/dev/null)
is "$(json_eval "$SCRATCH/lnk.json" '[d["command"]["exe"], d["command"]["argv"][0]]')" \
	"[\"$BASE/tools/tool-1.2/bin/tool\", \"$BASE/tools/tool/bin/tool\"]" "  executed by its real directory, argv[0] as given"
(cd "$BASE/other" && hm run --profile strict --read "$BASE/tools/tool" --dry-run -- "$BASE/tools/tool/bin/tool" >"$SCRATCH/lnk2.json" 2>/dev/null)
is "$(json_eval "$SCRATCH/lnk2.json" 'd["command"]["exe"]')" "\"$BASE/tools/tool/bin/tool\"" \
	"  control: granted as written (--read the link), the path as typed, whose link the view shows"
mkdir -p "$H/.local/bin"
ln -sfn "$BASE/tools/tool-1.2/bin/tool" "$H/.local/bin/linked-tool"
printf '#!/bin/sh\necho mine\n' >"$H/myprog"
chmod 0755 "$H/myprog"
ln -sfn ../../myprog "$H/.local/bin/own-prog"
chmod -R a+rX "$H/.local" "$H/myprog"
is "$(cd "$BASE/other" && hm run --profile strict -- "$H/.local/bin/linked-tool" y 2>&1)" "tool y" \
	"  the file itself a link (~/.local/bin/tool -> /x/tool-1.2/bin/tool): it runs, by its real path"
like "$(cd "$BASE/other" && hm run --profile strict -- "$H/.local/bin/own-prog" 2>&1)" "the sandbox would not see the command" \
	"  control: a link to a program whose install dir would be HOME is still refused, with the grant to add"
# nvm's npm (and npx): links into the version's lib/node_modules/npm,
# scripts for `#!/usr/bin/env node`; from a directory that is no Node.js
# project they were refused ("no grant covers it").
NV=$H/.nvm/versions/node/v20.0.0
mkdir -p "$NV/bin" "$NV/lib/node_modules/npm/bin"
printf '#!/bin/sh\necho "nvm node runs ${1##*/}"\n' >"$NV/bin/node"
printf '#!/usr/bin/env node\n' >"$NV/lib/node_modules/npm/bin/npm-cli.js"
chmod 0755 "$NV/bin/node" "$NV/lib/node_modules/npm/bin/npm-cli.js"
ln -sfn ../lib/node_modules/npm/bin/npm-cli.js "$NV/bin/npm"
chmod -R a+rX "$H/.nvm"
is "$(cd "$BASE/other" && PATH="$NV/bin:/usr/bin:/bin" hm run -- npm --version 2>&1)" "nvm node runs npm-cli.js" \
	"  nvm's npm (a link into lib/node_modules/npm), outside a Node.js project: it runs, with nvm's node"
# `/usr/bin/env node x.js` as the command (a client config's way to name
# a server by PATH): env inside passed over nvm's node, which it could not
# see, for the system's, without a word.
is "$(cd "$BASE/other" && hm run --env PATH="$NV/bin:/usr/bin:/bin" -- /usr/bin/env node x.js 2>&1)" "nvm node runs x.js" \
	"/usr/bin/env node x.js: the node first on the command's PATH (nvm's) runs, its installation granted"
is "$(cd "$BASE/other" && hm run --env PATH="$NV/bin:/usr/bin:/bin" -- env -S 'node y.js' 2>&1)" "nvm node runs y.js" \
	"  env -S 'node y.js': the same"
unlike "$(cd "$BASE/other" && hm run --env PATH="$NV/bin:/usr/bin:/bin" -- /usr/bin/env PATH=/usr/bin:/bin node -e 1 2>&1)" "nvm node" \
	"  control: env given a PATH of its own looks there"
# And a script's `#!/usr/bin/env node` the same way: the node first on the
# command's PATH, as env on the host takes it -- unless its installation
# cannot be granted (HOME's own bin/): then the first the sandbox holds, as
# before.
printf '#!/usr/bin/env node\n' >"$BASE/other/envscript"
chmod 0755 "$BASE/other/envscript"
mkdir -p "$H/bin"
printf '#!/bin/sh\necho home node\n' >"$H/bin/node"
chmod 0755 "$H/bin/node"
is "$(cd "$BASE/other" && hm run --env PATH="$NV/bin:/usr/bin:/bin" -- ./envscript 2>&1)" "nvm node runs envscript" \
	"a script's #!/usr/bin/env node: the node first on the command's PATH (nvm's) runs it"
unlike "$(cd "$BASE/other" && hm run --env PATH="$H/bin:/usr/bin:/bin" -- ./envscript 2>&1)" "home node|would not see" \
	"  control: first on PATH in HOME's own bin/ (never granted): passed over for the next, no refusal"
is "$(cd "$BASE/other" && hm run -- "$FNM/123_456/bin/node" 2>&1)" "fnm node " \
	"fnm's node through its multishell link in the sandbox's own /tmp or /run: it runs"
is "$(cd "$BASE/fnmproj" && hm run --env PATH="$FNM/123_456/bin:/usr/bin:/bin" -- /bin/sh -c 'node; echo "$PATH"' 2>&1)" \
	"fnm node 
$BASE/fnm/v20/bin:/usr/bin:/bin" "  sh -c node in a Node.js project: PATH's link entry given as where it leads, and fnm's node runs"
unlike "$(cd "$BASE/other" && hm run --env PATH="$FNM/123_456/bin:/usr/bin:/bin" -- /bin/sh -c 'node -e 1' 2>&1)" "fnm node" \
	"  control: outside a project fnm's node is not granted, and another runs (or none)"
rm -rf "$FNM"

# Homebrew (Linux: ~/.linuxbrew or /home/linuxbrew/.linuxbrew): a formula's
# program runs what other formulae install, by PREFIX/opt/DEP (a wrapper,
# libraries by RUNPATH); its keg alone does not run.  The prefix's software
# is granted, not its var/ (services' data and logs).
PFX=$H/.linuxbrew
mkdir -p "$PFX/Cellar/tool/1.0/bin" "$PFX/Cellar/dep/2.0/bin" "$PFX/Cellar/peek/1/bin" "$PFX/opt" "$PFX/bin" "$PFX/var/db"
printf '#!/bin/sh\nexec %s/opt/dep/bin/dep "$@"\n' "$PFX" >"$PFX/Cellar/tool/1.0/bin/tool"
printf '#!/bin/sh\necho "dep ran $*"\n' >"$PFX/Cellar/dep/2.0/bin/dep"
printf '#!/bin/sh\ncat %s/var/db/data\n' "$PFX" >"$PFX/Cellar/peek/1/bin/peek"
chmod 0755 "$PFX"/Cellar/*/*/bin/*
ln -sfn ../Cellar/dep/2.0 "$PFX/opt/dep"
ln -sfn ../Cellar/tool/1.0/bin/tool "$PFX/bin/tool"
ln -sfn ../Cellar/peek/1/bin/peek "$PFX/bin/peek"
echo service-data >"$PFX/var/db/data"
chmod -R a+rX "$PFX"
is "$(cd "$BASE/other" && hm run -- "$PFX/bin/tool" x 2>&1)" "dep ran x" \
	"Homebrew: ~/.linuxbrew/bin/tool runs another formula's program by PREFIX/opt (its keg alone would not)"
like "$(cd "$BASE/other" && hm run -- "$PFX/bin/peek" 2>&1)" "var/db/data: No such file or directory" \
	"  the prefix's var/ (services' data) stays out"
# Its python as a script's interpreter (`#!PREFIX/bin/python3`, a link into
# Cellar): the prefix is that python's installation; its software is
# granted, not var/ (it was granted whole).
mkdir -p "$PFX/Cellar/python/3.12/bin"
printf '#!/bin/sh\necho brew python; cat %s/var/db/data 2>&1\n' "$PFX" >"$PFX/Cellar/python/3.12/bin/python3"
chmod 0755 "$PFX/Cellar/python/3.12/bin/python3"
ln -sfn ../Cellar/python/3.12/bin/python3 "$PFX/bin/python3"
printf '#!%s/bin/python3\n' "$PFX" >"$BASE/other/brewscript"
chmod -R a+rX "$PFX" "$BASE/other/brewscript"
chmod 0755 "$BASE/other/brewscript"
like_lines "$(cd "$BASE/other" && hm run -- ./brewscript 2>&1)" "^brew python$
cat: .*/var/db/data: No such file or directory$" \
	"  its python as a #! interpreter: it runs, and the prefix's var/ stays out"
mv "$PFX/opt" "$PFX/opt-away"
like "$(cd "$BASE/other" && hm run -- "$PFX/Cellar/tool/1.0/bin/tool" x 2>&1)" "opt/dep/bin/dep: not found" \
	"  control: a Cellar without opt/ beside it is not taken for a Homebrew prefix: the keg alone"
mv "$PFX/opt-away" "$PFX/opt"

# ------------------------------------------------------------- 3. git repositories
if command -v git >/dev/null; then
	R=$BASE/repo
	mkdir -p "$R/src"
	cat >"$H/.gitconfig" <<'EOF2'
[user]
	name = Ada Lovelace
	email = ada@example.org
[alias]
	st = status --short
[credential]
	helper = store
[url "https://ghp_canarytoken@github.com/"]
	insteadOf = https://github.com/
[url "git@example.org:"]
	pushInsteadOf = https://example.org/
EOF2
	g() { git -c user.name=t -c user.email=t@t -c init.defaultBranch=main "$@" >/dev/null 2>&1; }
	g init "$R" && echo a >"$R/src/a" && g -C "$R" add -A && g -C "$R" commit -qm one &&
		g -C "$R" worktree add -q "$BASE/wt" -b wt
	chmod -R a+rX "$BASE"
	out=$(cd "$R/src" && hm run -- git status --short --branch 2>&1)
	is "$out" "## main" "git status in repo/src: the work tree's root is granted, git finds its repository"
	is "$(cd "$R/src" && hm run -- git rev-parse --show-toplevel 2>&1)" "$R" "  rev-parse shows the root"
	is "$(cd "$R/src" && hm run -- git var GIT_AUTHOR_IDENT 2>&1 | sed 's/> .*/>/')" "Ada Lovelace <ada@example.org>" \
		"  the author identity from ~/.gitconfig (no \"Author identity unknown\")"
	is "$(cd "$R/src" && hm run -- git st 2>&1)" "" "  the user's aliases work (git st)"
	is "$(cd "$R/src" && hm run -- sh -c 'git config --get credential.helper; echo "rc=$?"; git config --get-regexp "^url\\." | sort' 2>&1)" \
		"rc=1
url.git@example.org:.pushinsteadof https://example.org/" "  no credential helper, no token-bearing url rewrite; the other rewrite kept"
	is "$(cd "$R/src" && hm run -- sh -c 'cat ~/.gitconfig; echo "rc=$?"' 2>&1)" "cat: $H/.gitconfig: No such file or directory
rc=1" "  ~/.gitconfig itself stays out of the sandbox"
	(cd "$R/src" && hm run --dry-run -- git status >"$SCRATCH/git.json" 2>/dev/null)
	is "$(json_eval "$SCRATCH/git.json" 'd["policy"]["git_config"]')" \
		"{\"dropped\": [\"credential.helper\", \"url.https://***@github.com/.insteadof\"], \"files\": [\"$H/.gitconfig\"], \"kept\": [\"user.name\", \"user.email\", \"alias.st\", \"url.git@example.org:.pushinsteadof\"]}" \
		"  the dry run lists the keys kept and dropped, the token masked"
	unlike "$(cat "$SCRATCH/git.json")" "canarytoken|ada@example" "  and no value"
	is "$(json_eval "$SCRATCH/git.json" "[[p['access'], p['origin']['source']] for p in d['policy']['paths'] if p['path'] == '$R']")" \
		"[[\"read\", \"profile exec: the git work tree the current directory is in\"]]" "  the root's grant is read-only, and says why"
	out=$(cd "$R/src" && hm run --write "$R" -- sh -c 'git config core.hooksPath /x 2>&1; echo "rc=$?"; touch new-file && echo wrote' 2>&1)
	like_lines "$out" "^error: could not (lock|write) config file .git/config: (Read-only file system|Permission denied|Device or resource busy)$
^rc=(4|255)$
^wrote$" "  with --write on the root, .git/config stays read-only (protected) and the rest is writable"
	is "$(git config --file "$R/.git/config" --get core.hooksPath)" "" "  (core.hooksPath did not reach the host's .git/config)"
	out=$(cd "$BASE/wt/src" && hm run -- git status --short --branch 2>&1)
	is "$out" "## wt" "a linked work tree (git worktree add): git status works"
	(cd "$BASE/wt/src" && hm run --dry-run -- git status >"$SCRATCH/wt.json" 2>/dev/null)
	is "$(json_eval "$SCRATCH/wt.json" "[p['path'] for p in d['policy']['paths'] if p['origin']['source'].startswith('profile exec')]")" \
		"[\"$BASE/wt/src\", \"$BASE/wt\", \"$R/.git\"]" "  its root and its repository's .git are granted, nothing else of the repository"
	# --write on a linked work tree: its index and HEAD lie in the repository's
	# .git, outside the grant, so git add fails; a note says so, and how.
	note="moat: note: $BASE/wt keeps its git directory outside it, in $R/.git, which stays read-only: \`git add\` and \`git commit\` fail inside (Read-only file system); to let the command commit, add --write $R/.git (its hooks and config stay read-only)"
	out=$(cd "$BASE/wt" && hm run --write . -- sh -c 'echo b >b && git add b 2>/dev/null; echo "rc=$?"' 2>&1)
	is "$out" "$note
rc=128" "  --write . in a linked work tree: the note names its read-only .git and the grant that lets git commit"
	is "$(cd "$BASE/wt/src" && hm run -- true 2>&1)" "" "  (no note without a write grant)"
	out=$(cd "$BASE/wt" && hm run --write . --write "$R/.git" -- sh -c 'git add b && git commit -qm b && echo committed; (echo x >"$1/.git/hooks/pre-commit") 2>/dev/null || echo hooks-read-only' sh "$R" 2>&1)
	is "$out" "committed
hooks-read-only" "  with --write REPO/.git: no note, git commits, and the repository's hooks stay read-only"
	is "$(git -C "$BASE/wt" log --format=%s -1 2>/dev/null)" "b" "  (the commit is in the repository)"
	# A `.git` file is the work tree's word, and a directory that is not a
	# git clone (an archive, a package) can bring one: it must not grant
	# another repository of the user's.  Only a git directory that names
	# the work tree back is granted: a linked work tree's gitdir file (the
	# one above), a submodule's core.worktree.
	D=$H/dots
	g init "$D" && echo "aws_secret=canary-dotfiles" >"$D/creds" && g -C "$D" add creds && g -C "$D" commit -qm d
	mkdir -p "$BASE/planted"
	echo "gitdir: $D/.git" >"$BASE/planted/.git"
	chmod -R a+rX "$BASE"
	out=$(cd "$BASE/planted" && hm run -- sh -c 'git show HEAD:creds 2>&1; ls "$1/.git" 2>&1' sh "$D" 2>&1)
	like_lines "$out" "^moat: note: $BASE/planted/.git names the git directory $D/.git, which does not name this work tree back .*: not granted, .*add --read $D/.git$
^fatal: not a git repository: $D/.git$
^ls: cannot access '$D/.git': No such file or directory$" \
		"a planted .git file naming another repository's .git (in HOME): not granted, a note says why"
	unlike "$out" "canary-dotfiles" "  (the other repository's files stay out)"
	# The same with a commondir: an in-tree gitdir whose gitdir file names
	# the work tree back, and whose commondir leads to the other repository.
	mkdir -p "$BASE/planted2/gd" && echo "gitdir: $BASE/planted2/gd" >"$BASE/planted2/.git"
	echo "$BASE/planted2/.git" >"$BASE/planted2/gd/gitdir" && echo "$D/.git" >"$BASE/planted2/gd/commondir"
	cp "$D/.git/HEAD" "$BASE/planted2/gd/HEAD" && chmod -R a+rX "$BASE/planted2"
	out=$(cd "$BASE/planted2" && hm run -- sh -c 'git show HEAD:creds' 2>&1)
	like "$out" "^moat: note: $BASE/planted2/.git names the git directory $D/.git, which does not name" \
		"  a planted gitdir whose commondir leads to it: not granted either"
	unlike "$out" "canary-dotfiles" "  (its files stay out)"
	# Controls: a submodule's git directory names it back (core.worktree),
	# and is granted; so is the dotfiles repository when the user grants it.
	g -C "$R" -c protocol.file.allow=always submodule add "$D" dots-sub && chmod -R a+rX "$R"
	is "$(cd "$R/dots-sub" && hm run -- git show HEAD:creds 2>&1)" "aws_secret=canary-dotfiles" \
		"  control: a submodule (SUPER/.git/modules/NAME names it back): git works in it"
	is "$(cd "$BASE/planted" && hm run --read "$D/.git" -- git show HEAD:creds 2>&1)" "aws_secret=canary-dotfiles" \
		"  control: with the note's --read, git reads the repository the .git file names"
	is "$(cd "$R/src" && hm run --profile strict --dry-run -- git status 2>/dev/null | json_eval /dev/stdin '"git_config" in d["policy"]')" \
		"false" "under strict: no work tree, no git configuration"
else
	diag "git is not installed: the git repository checks are skipped"
fi

# ---------------------------------------------------- 5. no `--` needed
is "$(cd "$BASE/other" && hm run --profile strict echo hi 2>&1)" "hi" "moat run --profile strict echo hi: the first non-option word starts the command"

# ------------------------------------------------ 6. messages that say the fix
is "$(err run --files 3 -- true)" "125:moat: --files 3: a process starts with stdin, stdout and stderr open: it could not open one file more, not even its libraries
moat: hint: give at least 4: the limit counts every descriptor, stdio included (most programs need 64 or more)" \
	"--files 3: says that nothing could be opened, and the least that works"
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ]; then
	is "$(err run --files 999999999999 -- true)" "125:moat: --files 999999999999: more than the hard limit moat runs under (ulimit -Hn: $hard)
moat: hint: give at most $hard; a hard limit is raised only by root, before moat starts" \
		"--files 999999999999: refused before the run, naming the hard limit ($hard)"
	is "$("$MOAT" run --profile strict --files "$hard" -- "$HELPER" rlimit nofile 2>&1)" "nofile=$hard" \
		"  --files at the hard limit itself runs"
fi
is "$(err run --timeout 99999999999999999999 -- true)" "125:moat: --timeout 99999999999999999999: more than 1000000000 seconds (31 years), the longest timeout
moat: hint: give at most 1000000000, or no timeout for none" "--timeout 99999999999999999999: too long, not \"not positive\""
is "$(err run --timeout abc -- true)" "125:moat: --timeout abc: expected a positive number of seconds
moat: hint: give the seconds the command may run, e.g. 30 or 0.5" "--timeout abc: not a number"
# strtod took " 5", "0x10" (16 s) and "1e3": decimal seconds only now.
for v in 0x10 " 5" 1e3; do
	like "$(err run --timeout "$v" -- true)" "^125:moat: --timeout $v: expected a positive number of seconds" \
		"--timeout '$v': refused, not read as strtod reads it"
done
is "$("$MOAT" run --dry-run --timeout .5 -- true 2>/dev/null | json_eval /dev/stdin 'd["policy"]["limits"]["timeout_s"]')" \
	"0.5" "  control: --timeout .5 is half a second"
is "$(err run --memory 99999999999999T -- true)" "125:moat: --memory 99999999999999T: too large: the largest size is 8388607T (2^63 - 1 bytes)
moat: hint: give what the sandbox may use, e.g. 512M or 2G" "--memory 99999999999999T: too large, not \"at least 1M\""
is "$(err run --memory 12Q -- true)" "125:moat: --memory 12Q: unknown unit
moat: hint: write the number, then K, M, G or T (e.g. 512M, 2G)" "--memory 12Q: the unit is what is wrong"
is "$("$MOAT" run --dry-run --memory 2T -- true 2>/dev/null | json_eval /dev/stdin 'd["policy"]["limits"]["memory_bytes"]')" \
	"2199023255552" "  T is a unit (2T)"
is "$(err run --net none --net all -- true)" "125:moat: --net all conflicts with --net none given before it
moat: hint: give --net once: which of the two was meant is a guess" "--net none --net all: a conflict, not the last one winning"
is "$(err run --profile strict --profile exec -- true)" "125:moat: --profile exec conflicts with --profile strict given before it
moat: hint: give --profile once: which of the two was meant is a guess" "  the same for every option that sets one value"
is "$(err run --net none --net none --dry-run -- true)" "0:" "  the same value twice is one request"
is "$(err run --mode off --require net.none -- true)" "125:moat: --mode off contradicts --require net.none: it runs the command unsandboxed, enforcing nothing
moat: hint: drop --mode off to have net.none enforced, or drop --require (in a config: mode, require)" \
	"--mode off --require net.none: a conflict, not an unsandboxed run"
is "$(err run --backend none --require fs.read,net.none -- true)" "125:moat: --backend none contradicts --require fs.read,net.none: it runs the command unsandboxed, enforcing nothing
moat: hint: drop --backend none to have fs.read,net.none enforced, or drop --require (in a config: backend, require)" \
	"  and --backend none --require"
printf '[sandbox]\nprofile = "mpc"\n' >"$BASE/mpc.toml"
is "$(err config check "$BASE/mpc.toml")" "125:moat: $BASE/mpc.toml:2:11: sandbox.profile: unknown profile \"mpc\"; expected a built-in profile or one defined under [profiles]
moat: hint: did you mean \"mcp\"? Known profiles: strict, exec, mcp, network
moat: $BASE/mpc.toml: 1 problem" "profile = \"mpc\" in a config: did you mean \"mcp\""
is "$(err run --config "$BASE/mpc.toml" -- true)" "125:moat: $BASE/mpc.toml:2:11: sandbox.profile: unknown profile \"mpc\"; expected a built-in profile or one defined under [profiles]
moat: hint: did you mean \"mcp\"? Known profiles: strict, exec, mcp, network" "  and when it runs"
is "$(err run --profile mpc -- true)" "125:moat: --profile mpc: unknown profile
moat: hint: did you mean mcp? The built-in profiles are strict, exec, mcp and network" "--profile mpc: did you mean mcp"

# gVisor passes a terminal on fds 0-2 through: tty.inject is missing only
# when one is attached.  (runsc starts only as root here.)
if command -v runsc >/dev/null && [ "$(id -u)" = 0 ]; then
	tty_verdict() { "$MOAT" run --backend gvisor --mode prefer --dry-run -- true 2>/dev/null |
		json_eval /dev/stdin '[d["properties"]["tty.inject"]["status"], d["properties"]["tty.inject"].get("mechanism", d["properties"]["tty.inject"].get("reason"))]'; }
	is "$(tty_verdict </dev/null)" '["enforced", "gVisor: no host terminal is passed in (none of fds 0-2 is a terminal), and no controlling terminal"]' \
		"--backend gvisor without a terminal: tty.inject enforced"
	if command -v script >/dev/null; then
		out=$(script -qec "'$MOAT' run --backend gvisor --mode prefer --dry-run -- true 2>/dev/null >'$SCRATCH/gv.json'" /dev/null </dev/null 2>&1)
		is "$(json_eval "$SCRATCH/gv.json" 'd["properties"]["tty.inject"]["status"]')" '"missing"' \
			"  with a terminal attached (script): missing, as before"
	fi
fi

# The command starts in the private /tmp: said on stderr.
mkdir -p "$SCRATCH/here"
touch "$SCRATCH/here/host-file"
out=$(cd /tmp && "$MOAT" run -- ls -A 2>"$SCRATCH/tmp.err")
is "$out:$(cat "$SCRATCH/tmp.err")" ":moat: note: the current directory, /tmp, is the sandbox's private /tmp, which starts empty: the command sees none of the host's files there; run from another directory, or grant one below /tmp and run there" \
	"cd /tmp && moat run -- ls: the empty listing comes with a note"
out=$(cd /dev/shm && "$MOAT" run --profile strict -- ls -A 2>"$SCRATCH/tmp.err")
is "$out:$(cat "$SCRATCH/tmp.err")" ":moat: note: the current directory, /dev/shm, is the sandbox's private /dev/shm, which starts empty: the command sees none of the host's files there; run from another directory, or grant one below /dev/shm and run there" \
	"  /dev/shm too, and under --profile strict"
out=$(cd "$SCRATCH/here" && "$MOAT" run -- ls -A 2>"$SCRATCH/tmp.err")
is "$out:$(cat "$SCRATCH/tmp.err")" "host-file:" "  granted (exec's current directory): its files, and no note"

# The command runs a container: the engine's own "Cannot connect to the
# Docker daemon" comes after moat's note that says why.
mkdir -p "$BASE/engines"
printf '#!/bin/sh\necho "Cannot connect to the Docker daemon at unix:///var/run/docker.sock" >&2\nexit 1\n' >"$BASE/engines/docker"
chmod 0755 "$BASE/engines/docker"
is "$(cd "$BASE/proj" && err run -- "$BASE/engines/docker" run -i --rm img)" "1:moat: note: docker runs the container through its daemon's socket (root on the host), which the sandbox does not allow: the container is isolated by its engine, not by moat; run the program itself under moat, or the container with --mode off and its own isolation (--read-only, --network none, --cap-drop ALL)
Cannot connect to the Docker daemon at unix:///var/run/docker.sock" "docker run under moat: a note says why the daemon is out of reach"
is "$(cd "$BASE/proj" && err run -- "$BASE/engines/docker" version)" "1:Cannot connect to the Docker daemon at unix:///var/run/docker.sock" \
	"  docker version (no container started): no note"

# A variable the user declares names a path the sandbox does not show (a
# client config's MEMORY_FILE_PATH): the server's own ENOENT comes after
# moat's note that says why and what to grant.
mkdir -p "$BASE/appdata" "$H/.aws"
chmod a+rwx "$BASE/appdata"
is "$(cd "$BASE/proj" && err run --env MEM="$BASE/appdata/mem/memory.jsonl" -- true)" \
	"0:moat: note: MEM names $BASE/appdata/mem/memory.jsonl, outside every grant: the command can neither read nor write it; grant it or its directory (--read or --write, or read or write in the config's profile) if the command uses it" \
	"--env MEM=PATH outside every grant: a note says so, and what to grant"
is "$(cd "$BASE/proj" && err run --write "$BASE/appdata" --env MEM="$BASE/appdata/mem/memory.jsonl" -- true)" "0:" \
	"  control: with its directory granted, no note"
is "$(cd "$BASE/proj" && err run --env API=/api/v1 --env DIRS="$BASE/appdata:/x" --env REL=appdata/x -- true)" "0:" \
	"  no note for what names no host directory (/api/v1), a list, or a relative path"
is "$(cd "$BASE/proj" && CREDS="$H/.aws/credentials" HOME="$H" err run --env-pass CREDS -- true)" \
	"0:moat: note: CREDS names $H/.aws/credentials, in the denied $H/.aws (built-in secrets): the command cannot read it" \
	"  --env-pass CREDS=~/.aws/credentials: the note names the denied path"
printf '[servers.mem]\ncommand = ["true"]\nenv = { MEM = "%s/appdata/m.jsonl" }\n' "$BASE" >"$BASE/notes.toml"
is "$(cd "$BASE/proj" && err run --config "$BASE/notes.toml" --server mem)" \
	"0:moat: note: MEM names $BASE/appdata/m.jsonl, outside every grant: the command can neither read nor write it; grant it or its directory (--read or --write, or read or write in the config's profile) if the command uses it" \
	"  the same for a config's env"
is "$(cd "$BASE/proj" && HOME="$H" err run -- true)" "0:" "  control: moat's own variables (HOME, the CA bundles) get no note"

# Below the private /tmp, a current directory that nothing grants is what
# it is anywhere else: empty and read-only.  It was a directory made in the
# private tmpfs, writable: what the command wrote to "its project" vanished
# with the tmpfs, and the command was told it had succeeded.
mkdir -p "$SCRATCH/ungranted"
touch "$SCRATCH/ungranted/host-file"
cwd_backends="native"
command -v bwrap >/dev/null && cwd_backends="$cwd_backends bwrap"
if [ "$(id -u)" = 0 ]; then
	command -v runc >/dev/null && cwd_backends="$cwd_backends oci"
	command -v runsc >/dev/null && cwd_backends="$cwd_backends gvisor"
fi
for b in $cwd_backends; do
	out=$(cd "$SCRATCH/ungranted" && MOAT_OCI_RUNTIME=runc "$MOAT" run --backend "$b" --mode prefer --profile strict -- \
		/bin/sh -c 'ls -A; pwd; echo x > made && echo wrote; ls -A' 2>"$SCRATCH/cwd.err")
	is "$out" "$SCRATCH/ungranted" "--backend $b --profile strict below /tmp: the ungranted cwd is empty, and stays so"
	like "$(cat "$SCRATCH/cwd.err")" "made: Read-only file system" "  the write fails, as from any ungranted directory"
	# Granted read-only with a denied file in it: shown entry by entry
	# in a directory of the view's own, which was writable under oci.
	out=$(cd "$SCRATCH/ungranted" && MOAT_OCI_RUNTIME=runc "$MOAT" run --backend "$b" --mode prefer --deny ./host-file -- \
		/bin/sh -c 'ls -A; echo x > made && echo wrote; ls -A' 2>"$SCRATCH/cwd.err")
	is "$out" "" "--backend $b, the cwd read-only around a denied file below /tmp: nothing shows, nothing is made"
	like "$(cat "$SCRATCH/cwd.err")" "made: Read-only file system" "  the write fails"
done

# Through links: the exec profile's refusal to grant a whole home holds
# when HOME is a link run from its target (/home/u -> /data/u), and for a
# --cwd that is a link to HOME; and --cwd follows its links, as getcwd
# does, so a granted target is where the command starts (it started in an
# empty directory named after the link).
mkdir -p "$SCRATCH/realhome/.ssh" "$SCRATCH/proj-real"
echo key >"$SCRATCH/realhome/.ssh/id"
echo plain >"$SCRATCH/realhome/notes"
echo pfile >"$SCRATCH/proj-real/pfile"
ln -s "$SCRATCH/realhome" "$SCRATCH/homelink"
ln -s "$SCRATCH/proj-real" "$SCRATCH/projlink"
out=$(cd "$SCRATCH/realhome" && HOME="$SCRATCH/homelink" "$MOAT" run -- cat notes 2>"$SCRATCH/hl.err")
is "$?:$out" "125:" "HOME a link, run from its target: profile exec refuses to grant the whole home"
like "$(cat "$SCRATCH/hl.err")" "^moat: profile exec grants the current directory, and $SCRATCH/realhome is your home or above it" \
	"  saying why"
out=$(cd "$SCRATCH/proj-real" && HOME="$SCRATCH/realhome" "$MOAT" run --cwd "$SCRATCH/homelink" -- cat notes 2>"$SCRATCH/hl.err")
is "$?:$out" "125:" "--cwd a link to HOME: refused as HOME itself is"
like "$(cat "$SCRATCH/hl.err")" "^moat: profile exec grants the current directory, and $SCRATCH/realhome is your home or above it" \
	"  naming where the link leads"
out=$(cd /tmp && "$MOAT" run --profile strict --read "$SCRATCH/proj-real" --cwd "$SCRATCH/projlink" -- /bin/sh -c 'pwd; cat pfile' 2>&1)
is "$out" "$SCRATCH/proj-real
pfile" "--cwd LINK with its target granted: the command starts in the target and reads it"
printf '{"mcpServers": {"s": {"command": "/bin/sh", "args": ["-c", "pwd; cat pfile"], "cwd": "%s",
  "sandbox": {"profile": "strict", "read": ["%s"]}}}}\n' "$SCRATCH/projlink" "$SCRATCH/proj-real" >"$SCRATCH/cwdlink.json"
out=$(cd /tmp && "$MOAT" run --config "$SCRATCH/cwdlink.json" --server s 2>&1)
is "$out" "$SCRATCH/proj-real
pfile" "  a server's cwd in a config, a link: the same"
# HOME a link (/home/u with /home -> var/home, as on Fedora's Atomic
# desktops): $HOME leads where the view shows HOME, and moat's own caches,
# granted writable, are named by their real path (a write grant through a
# link is refused: every npx run, and every run with a network, was).
mkdir -p "$SCRATCH/realhome/proj"
echo inproj >"$SCRATCH/realhome/proj/f"
out=$(cd "$SCRATCH/realhome/proj" && HOME="$SCRATCH/homelink" "$MOAT" run -- /bin/sh -c 'cat ~/proj/f; cat ~/.ssh/id' 2>&1)
like "$out" "^inproj" "HOME a link: \$HOME/proj reads the granted project through it"
unlike "$out" "key" "  and HOME's credentials are still not read ($out)"
out=$(cd "$SCRATCH/realhome/proj" && HOME="$SCRATCH/homelink" "$MOAT" run --profile network -- /bin/sh -c 'echo "$npm_config_cache"' 2>&1)
is "$?:$out" "0:$SCRATCH/realhome/.cache/moat/pkg/$(ls "$SCRATCH/realhome/.cache/moat/pkg" 2>/dev/null | head -1)/npm" \
	"  a run with a network gets its package caches, at their real path"

# A write grant through links only root can change: /var/lock -> /run/lock
# (Debian's; /home -> var/home on Fedora's Atomic desktops is the same case)
# sits in /var, root's and writable by no one else, so `--write
# /var/lock/X` names /run/lock/X run after run.  A link in a directory the
# caller can write is still refused, and so is every link for root, whose
# command could change them.
if [ "$(readlink /var/lock)" = /run/lock ] || [ "$(readlink /var/lock)" = ../run/lock ]; then
	if [ "$(id -u)" = 0 ]; then
		as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent "$@"; }
	else
		as_user() { "$@"; }
	fi
	mkdir -p "$LOCKDIR/real" && ln -s real "$LOCKDIR/swappable"
	[ "$(id -u)" = 0 ] && chown -R 65534:65534 "$LOCKDIR"
	LD=/var/lock/${LOCKDIR##*/}
	out=$(cd "$BASE" && as_user "$MOAT" run --profile strict --write "$LD" -- /bin/sh -c "echo w >$LD/f && echo wrote" 2>&1)
	is "$?:$out:$(cat "$LOCKDIR/f" 2>&1)" "0:wrote:w" \
		"--write /var/lock/X, through a link only root can change: granted, the file written at its real path"
	is "$(cd "$BASE" && as_user "$MOAT" run --profile strict --write "$LD/swappable" -- true 2>&1 | head -1)" \
		"moat: command line: --write $LD/swappable passes through a symlink: it is $LOCKDIR/real" \
		"  a link in a directory the caller can write: refused"
	if [ "$(id -u)" = 0 ]; then
		is "$(cd "$BASE" && "$MOAT" run --profile strict --write "$LD" -- true 2>&1 | head -1)" \
			"moat: command line: --write $LD passes through a symlink: it is $LOCKDIR" \
			"  as root, whose command could change any link: refused"
		# Below the sticky /var/tmp: $BASE is root's, so no one else
		# can rename it away.
		mkdir -p "$BASE/fixed" "$BASE/utarget"
		chown 65534:65534 "$BASE/utarget"
		ln -s ../utarget "$BASE/fixed/l"
		out=$(cd "$BASE" && as_user "$MOAT" run --profile strict --write "$BASE/fixed/l" -- /bin/sh -c "echo s >$BASE/fixed/l/f && echo wrote" 2>&1)
		is "$?:$out:$(cat "$BASE/utarget/f" 2>&1)" "0:wrote:s" \
			"  a link in a root directory below the sticky /var/tmp: granted"
	fi
else
	TAP_N=$((TAP_N + 1))
	echo "ok $TAP_N # SKIP /var/lock is not a link to /run/lock here"
fi

# --cpu: the kill is said to be the limit's, in the report too.
# One busy process: its RLIMIT_CPU (SIGXCPU at 1 s) and moat's read of the
# tree's time every 50 ms (SIGKILL) race; either is the limit's.
"$MOAT" run --mode prefer --cpu 1 --report "$REPORTS/cpu.json" -- /bin/sh -c 'while :; do :; done' 2>"$SCRATCH/cpu.err"
rc=$?
line=$(grep '^moat: CPU time limit' "$SCRATCH/cpu.err" | sed -E 's/: the tree used [0-9.]+ s;/;/')
case $rc in 137) sig=KILL n=9 ;; *) sig=XCPU n=24 ;; esac
is "$rc:$line" "$rc:moat: CPU time limit reached (--cpu 1); the command was killed by SIG$sig (exit $rc)" \
	"--cpu 1: a line that says the CPU limit ended it (SIG$sig)"
is "$(grep -A1 '^moat: CPU time limit' "$SCRATCH/cpu.err" | tail -1)" "moat: hint: give the tree more CPU time with a higher --cpu" "  with the fix"
is "$rc:$(json_eval "$REPORTS/cpu.json" '[d["run"]["limit_exceeded"], d["run"]["signal"]]')" "$rc:[\"cpu\", $n]" \
	"  the report says limit_exceeded cpu"
case $rc in 137 | 152) ok 0 "  exit $rc: SIGXCPU (RLIMIT_CPU) or SIGKILL (the tree's cgroup)" ;; *) ok 1 "  exit $rc" ;; esac
"$MOAT" run --mode prefer --cpu 1 --report "$REPORTS/cpu2.json" -- /bin/sh -c 'trap "" XCPU; while :; do :; done' 2>"$SCRATCH/cpu.err"
rc=$?
if [ "$(json_eval "$REPORTS/cpu2.json" 'd["limits"]["cpu"]["status"]')" = '"enforced"' ]; then
	line=$(grep '^moat: CPU time limit' "$SCRATCH/cpu.err" | sed -E 's/the tree used [0-9.]+ s/the tree used N s/')
	is "$rc:$line" "137:moat: CPU time limit reached (--cpu 1): the tree used N s; the command was killed by SIGKILL (exit 137)" \
		"  SIGXCPU ignored: moat's cgroup ends the tree, and says so"
else
	# Without the tree's cgroup the hard RLIMIT_CPU ends it a second
	# later with a SIGKILL moat cannot tell from another's.
	is "$rc" 137 "  SIGXCPU ignored, no cgroup here: RLIMIT_CPU's hard limit ends it a second later"
fi

# A command's own SIGXCPU is no CPU limit: where the tree's cgroup counts
# its time, moat said "CPU time limit reached" after 0.002 s of 100.  The
# cgroup counts it without namespaces (as root here: the tree is held by
# one); with them the pid namespace holds the tree, and RLIMIT_CPU's
# SIGXCPU is all moat sees.
nons=userns=0,root=0
[ "$(id -u)" = 0 ] || nons=userns=0
out=$(MOAT_HOST_LIMIT=$nons "$MOAT" run --mode prefer --cpu 100 --report "$REPORTS/cpu3.json" -- /bin/sh -c 'kill -XCPU $$' 2>&1)
if [ "$(json_eval "$REPORTS/cpu3.json" 'd["run"].get("cpu_seconds") is not None')" = true ]; then
	unlike "$out" "CPU time limit reached" "--cpu 100, the command's own kill -XCPU: no 'CPU time limit reached'"
	is "$(json_eval "$REPORTS/cpu3.json" 'd["run"].get("limit_exceeded")')" null "  and the report names no limit exceeded"
else
	skip "the command's own SIGXCPU: no cgroup counts the tree's time here"
	skip "  (the report)"
fi

# fd.clean's mechanism says which descriptors stay open.
fdc() { "$MOAT" run --profile strict --dry-run "$@" -- true 2>/dev/null | json_eval /dev/stdin 'd["properties"]["fd.clean"]["mechanism"]'; }
is "$(fdc)" '"close_range: only 0, 1 and 2 stay open"' "fd.clean: only 0, 1 and 2 stay open"
is "$(fdc --keep-fd 5 --keep-fd 7 5</dev/null 7</dev/null)" '"close_range: only 0, 1, 2 and --keep-fd 5, 7 stay open"' \
	"  and with --keep-fd 5 and 7"

# A write grant with a denied path below it is granted entry by entry: the
# command writes what is in it, but cannot create, rename or remove
# entries directly in it.  An MCP server given --write ~ failed every
# write_file there (a temporary file, then a rename), with nothing said.
EH=$BASE/ehome
mkdir -p "$EH/.ssh" "$EH/sub"
echo key >"$EH/.ssh/id_rsa"
echo a >"$EH/e.txt"
expanded_note="moat: note: the write grant $EH holds $EH/.ssh, which stays denied: the rest stays writable, but nothing can be created, renamed or removed directly in $EH, or in a directory on the way to a denied path; grant a directory below it for that"
for lim in "" "userns=0,root=0"; do
	what=${lim:+"without namespaces: "}
	out=$(MOAT_HOST_LIMIT=$lim HOME=$EH "$MOAT" run --mode prefer --write "$EH" -- /bin/sh -c \
		'echo b >>"$HOME/e.txt" && echo appended; touch "$HOME/sub/new" && echo sub; touch "$HOME/new" 2>/dev/null || echo top-refused' \
		2>"$SCRATCH/exp.err")
	is "$out" "appended
sub
top-refused" "${what}a write grant holding ~/.ssh: its files and directories are writable, a new entry at its top is not"
	is "$(grep '^moat: note: the write grant' "$SCRATCH/exp.err")" "$expanded_note" "  said before the run, with the way out"
done
out=$(HOME=$EH "$MOAT" run --write "$EH/sub" -- /bin/true 2>&1)
unlike "$out" "note: the write grant" "  control: a write grant with nothing denied below it gets no such note"
rm -rf "$EH"

# --write / with HOME in /tmp (a test's fake HOME): HOME's protected
# entries lie in the host's /tmp, which the sandbox's private /tmp hides.
# Their pins found the private tmpfs there and refused every run with
# "mount namespace: changed since moat planned it ... /tmp".
if [ "$(id -u)" = 0 ]; then
	skip "--write / with HOME in /tmp: as root it would make placeholders in / (the uid 65534 pass runs it)"
	skip "  (the uid 65534 pass)"
else
	TH=$(mktemp -d /tmp/moat-everyday-home.XXXXXX)
	out=$(HOME=$TH "$MOAT" run --write / -- /bin/sh -c 'ls -A /tmp; echo ran' 2>"$SCRATCH/wroot.err")
	is "$out" "ran" "--write / with HOME in /tmp runs: the private /tmp starts empty"
	unlike "$(cat "$SCRATCH/wroot.err")" "changed since moat planned it" "  no 'changed since moat planned it' about /tmp"
	rm -rf "$TH"
fi

done_testing
