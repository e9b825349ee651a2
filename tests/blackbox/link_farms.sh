#!/usr/bin/env bash
# Hard-link farms in write grants (docs/filesystem.md, "Hard-link farms").
# Write grants hold names, not files: a file in the project that is a hard
# link of a file outside the grants is written through its inside name and
# the outside file changes (one inode), while the report said fs.write
# enforced.  pnpm (node_modules/.pnpm, from its store), bun (node_modules,
# from its cache), uv (.venv, from its cache) and `git clone` of a local path (.git/objects) make such links by
# design; moat samples a few files of each such directory and reports
# fs.write missing, naming it, when they have other names.
#
#   1. pnpm-like farm: copies (control: enforced, the store untouched);
#      links (the write lands in the store: fs.write missing, naming
#      node_modules/.pnpm and pnpm's store; require refuses, nothing runs);
#      bun's (packages directly in node_modules) the same;
#   2. uv-like .venv: the same, naming .venv/lib and uv's cache;
#   3. git clone of a local path (links .git/objects) against
#      --no-hardlinks (control);
#   4. where it looks: a repository one level below a grant (--write
#      ~/src), a grant of node_modules itself, a grant inside a farm (a
#      package of it); a farm one level below that
#      is no repository is not looked for (documented);
#   5. the general limit, as documented: one `ln` of an outside file
#      elsewhere in the project is not found (as a copy would not be).
#
# With and without namespaces (MOAT_HOST_LIMIT=userns=0,root=0: there
# fs.write is missing for the metadata already; the claim must never be
# enforced); as root and as uid 65534.  The farms are built here with ln,
# in the tools' layouts: no network, no pnpm or uv needed.
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
unset MOAT_HOST_LIMIT
# Outside /tmp: the sandbox's /tmp is its own.  One file system for the
# links (mktemp's /var/tmp, the store and the projects alike).
BASE=$(mktemp -d /var/tmp/moat-farms.XXXXXX)
chmod 0755 "$BASE"
trap 'rm -rf "$SCRATCH" "$REPORTS" "$BASE"' EXIT
cd "$SCRATCH" || exit 1
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
GIT=(git -c user.name=t -c user.email=t@example.invalid -c init.defaultBranch=main -c safe.directory='*')

STORE=$BASE/store # outside every grant: the package store, the cache
mkdir -p "$STORE"
printf 'module.exports = 1\n' >"$STORE/index-js"
printf '{"name":"a","version":"1.0.0"}\n' >"$STORE/package-json"
printf 'x = 1\n' >"$STORE/init-py"
printf 'Metadata-Version: 2.1\nName: pkg\n' >"$STORE/metadata"

# pnpm's layout: node_modules/a -> .pnpm/a@1.0.0/node_modules/a, the
# package's files in it; .pnpm/lock.yaml and the hoisted
# .pnpm/node_modules (links) are pnpm's own.  HOW: cp (a farm of copies)
# or ln (of links, pnpm's hardlink import).
make_pnpm() { # make_pnpm DIR HOW
	local pkg=$1/node_modules/.pnpm/a@1.0.0/node_modules/a
	rm -rf "$1/node_modules"
	mkdir -p "$pkg" "$1/node_modules/.pnpm/node_modules"
	echo '{"name":"p"}' >"$1/package.json"
	echo 'lockfileVersion: 9.0' >"$1/node_modules/.pnpm/lock.yaml"
	ln -s ../a@1.0.0/node_modules/a "$1/node_modules/.pnpm/node_modules/a"
	ln -s .pnpm/a@1.0.0/node_modules/a "$1/node_modules/a"
	$2 "$STORE/package-json" "$pkg/package.json"
	$2 "$STORE/index-js" "$pkg/index.js"
}
# bun's layout (its hardlink backend, the default on Linux; pnpm's with
# node-linker=hoisted alike): the packages directly in node_modules, .bin
# links, .cache what tools write there.
make_bun() { # make_bun DIR HOW
	rm -rf "$1/node_modules"
	mkdir -p "$1/node_modules/a" "$1/node_modules/.bin" "$1/node_modules/.cache/tool"
	echo '{"name":"p"}' >"$1/package.json"
	echo '{"lockfileVersion": 1}' >"$1/bun.lock"
	ln -s ../a/index.js "$1/node_modules/.bin/a"
	echo cached >"$1/node_modules/.cache/tool/x"
	$2 "$STORE/package-json" "$1/node_modules/a/package.json"
	$2 "$STORE/index-js" "$1/node_modules/a/index.js"
}
# uv's layout: .venv/lib/python3.12/site-packages with uv's own
# _virtualenv.py/.pth (written, not linked), a package and its dist-info.
make_uv() { # make_uv DIR HOW
	local sp=$1/.venv/lib/python3.12/site-packages
	rm -rf "$1/.venv"
	mkdir -p "$sp/pkg" "$sp/pkg-1.0.dist-info" "$sp/__pycache__" "$1/.venv/bin"
	printf 'home = /usr/bin\nimplementation = CPython\nuv = 0.5.0\nversion_info = 3.12.0\n' >"$1/.venv/pyvenv.cfg"
	ln -s lib "$1/.venv/lib64"
	echo 'import os' >"$sp/_virtualenv.py"
	echo 'import _virtualenv' >"$sp/_virtualenv.pth"
	echo 'bytes' >"$sp/__pycache__/_virtualenv.cpython-312.pyc"
	$2 "$STORE/init-py" "$sp/pkg/__init__.py"
	$2 "$STORE/metadata" "$sp/pkg-1.0.dist-info/METADATA"
}

# farm_run LIMIT MODE DIR CMD: CMD in DIR with DIR writable; report in
# farm.json, stderr in farm.err.
farm_run() {
	local lim=$1 mode=$2 dir=$3
	shift 3
	(cd "$dir" && env MOAT_HOST_LIMIT="$lim" "$MOAT" run --mode "$mode" --backend native --profile strict \
		--write "$dir" --report-fd 3 -- /bin/sh -c "$*" 3>"$REPORTS/farm.json" 2>"$SCRATCH/farm.err")
}
fw() { json_get "$REPORTS/farm.json" '["properties"]["fs.write"]["'"$1"'"]'; }
fw_status() { fw status; }

# farm_pair WHAT DIR MAKE FILE STORED: the farm MAKE builds in DIR, first of
# copies (the control: the command's write to FILE stays its own, fs.write
# enforced -- without namespaces missing for them, no farm named), then of
# links of STORED (the write lands there; fs.write not claimed enforced).
# The report of the second run stays in farm.json.
farm_pair() {
	local what=$1 dir=$2 make=$3 file=$4 stored=$5
	mkdir -p "$dir"
	printf 'orig\n' >"$stored"
	$make "$dir" cp
	farm_run "$lim" prefer "$dir" "echo poisoned >>$file"
	is "$(grep -c poisoned "$dir/$file")/$(grep -c poisoned "$stored")" 1/0 \
		"$what$tag: control: a farm of copies: the command writes its own copy, the store is untouched"
	if [ -z "$lim" ]; then
		is "$(fw_status)" enforced "$what$tag: control: fs.write enforced"
	else
		unlike "$(fw reason)" "farm of hard links" "$what$tag: control: no farm named (fs.write is missing for the namespace)"
	fi
	$make "$dir" ln
	farm_run "$lim" prefer "$dir" "echo poisoned >>$file"
	is "$(grep -c poisoned "$stored")/$(fw_status)" 1/missing \
		"$what$tag: a farm of links: the write through the project's name lands in the store, and fs.write is not claimed enforced"
}

PNPM_JS=node_modules/.pnpm/a@1.0.0/node_modules/a/index.js
UV_PY=.venv/lib/python3.12/site-packages/pkg/__init__.py
for lim in "" userns=0,root=0; do
	tag=${lim:+ ($lim)}
	# ------------------------------------------------------------ 1. pnpm
	P=$BASE/pnpm-proj
	farm_pair pnpm "$P" make_pnpm "$PNPM_JS" "$STORE/index-js"
	if [ -z "$lim" ]; then
		like "$(fw reason)" "^$P/node_modules/\.pnpm is a farm of hard links \($P/node_modules/\.pnpm/a@1\.0\.0/node_modules/a/[a-z.]+ has 2 names\).*pnpm's content-addressed store" \
			"pnpm$tag: the reason names the farm, a file of it, and pnpm's store"
		like "$(fw hint)" "package-import-method=copy" "pnpm$tag: the hint says how to install copies"
		like "$(cat "$SCRATCH/farm.err")" "missing fs.write: $P/node_modules/\.pnpm is a farm of hard links" \
			"pnpm$tag: said on stderr before the run"
	fi
	printf 'orig\n' >"$STORE/index-js"
	farm_run "$lim" require "$P" "echo poisoned >>$PNPM_JS"
	is "$?/$(grep -c poisoned "$STORE/index-js")" 125/0 "pnpm$tag: under --mode require the run is refused, the store untouched"
	rm -rf "$P"

	# ------------------------------------------------------------- 1b. bun
	B=$BASE/bun-proj
	farm_pair bun "$B" make_bun node_modules/a/index.js "$STORE/index-js"
	[ -n "$lim" ] || like "$(fw reason)/$(fw hint)" "^$B/node_modules is a farm of hard links \($B/node_modules/a/[a-z.]+ has 2 names\).*bun's hardlink backend.*/.*--backend=copyfile" \
		"bun$tag: the reason names node_modules and bun's cache, the hint --backend=copyfile"
	rm -rf "$B"

	# -------------------------------------------------------------- 2. uv
	U=$BASE/uv-proj
	farm_pair uv "$U" make_uv "$UV_PY" "$STORE/init-py"
	[ -n "$lim" ] || like "$(fw reason)/$(fw hint)" "^$U/\.venv/lib is a farm of hard links .*uv's cache.*/.*UV_LINK_MODE=copy" \
		"uv$tag: the reason names .venv/lib and uv's cache, the hint UV_LINK_MODE=copy"
	rm -rf "$U"

	# ------------------------------------------------------------- 3. git
	SRC=$BASE/src-repo
	rm -rf "$SRC" "$BASE/clone"
	"${GIT[@]}" init -q "$SRC" && echo one >"$SRC/f" && "${GIT[@]}" -C "$SRC" add f &&
		"${GIT[@]}" -C "$SRC" commit -qm one && "${GIT[@]}" -C "$SRC" gc -q
	# Every file of the clone's .git/objects, made writable first (the
	# command owns them), gets a byte more: what the source shares changes.
	src_sound() { "${GIT[@]}" -C "$SRC" fsck --no-dangling >/dev/null 2>&1 && echo sound || echo broken; }
	POISON='for f in $(find .git/objects -type f); do chmod u+w "$f"; printf X >>"$f"; done'
	"${GIT[@]}" clone -q --no-hardlinks "$SRC" "$BASE/clone"
	farm_run "$lim" prefer "$BASE/clone" "$POISON"
	is "$(src_sound)" sound \
		"git$tag: control: a clone --no-hardlinks: the command breaks its own objects, the source is sound"
	[ -n "$lim" ] || is "$(fw_status)" enforced "git$tag: control: fs.write enforced"
	rm -rf "$BASE/clone"
	"${GIT[@]}" clone -q "$SRC" "$BASE/clone"
	farm_run "$lim" prefer "$BASE/clone" "$POISON"
	is "$(src_sound)/$(fw_status)" broken/missing \
		"git$tag: a local clone (links .git/objects): the source's objects are broken through it, fs.write not claimed enforced"
	[ -n "$lim" ] || like "$(fw reason)/$(fw hint)" "^$BASE/clone/\.git/objects is a farm of hard links .*cloned from.*/.*--no-hardlinks" \
		"git$tag: the reason names .git/objects, the hint git clone --no-hardlinks"
	rm -rf "$BASE/clone" "$SRC"
done

# ------------------------------------------------------- 4. where it looks
# A folder of projects (--write ~/src): a repository one level below with
# a farm of links is looked at; the same farm in a folder that is no
# repository is not (each level would cost a look in every subdirectory at
# every start: docs/filesystem.md).
F=$BASE/src
mkdir -p "$F/app" "$F/notrepo"
"${GIT[@]}" init -q "$F/app"
make_pnpm "$F/app" ln
farm_run "" prefer "$F" true
is "$(fw_status)" missing "a repository one level below the grant with a farm of links: fs.write missing"
like "$(fw reason)" "^$F/app/node_modules/\.pnpm is a farm of hard links" "  naming it"
make_pnpm "$F/app" cp
make_pnpm "$F/notrepo" ln
farm_run "" prefer "$F" true
is "$(fw_status)" enforced "a farm one level below in a folder that is no repository: not looked for (the documented limit)"
rm -rf "$F"
# A grant of node_modules itself: the farm is .pnpm below it.
P=$BASE/pnpm-proj
mkdir -p "$P"
make_pnpm "$P" ln
farm_run "" prefer "$P/node_modules" true
like "$(fw_status)/$(fw reason)" "^missing/$P/node_modules/\.pnpm is a farm of hard links" \
	"a grant of node_modules itself: its .pnpm is the farm: fs.write missing"
B=$BASE/bun-proj
mkdir -p "$B"
make_bun "$B" ln
farm_run "" prefer "$B/node_modules" true
like "$(fw_status)/$(fw reason)" "^missing/$B/node_modules is a farm of hard links \($B/node_modules/a/" \
	"a grant of bun's node_modules itself: the grant is the farm: fs.write missing, naming it"
rm -rf "$B"
# A grant inside a farm (a package of it: --write node_modules/a, to patch
# it): the grant's own files are the farm's, written through to the
# store, and fs.write was enforced (the farms were looked for below the
# grant only).  Control: a farm of copies, enforced, the store untouched.
B=$BASE/bun-proj
mkdir -p "$B"
for how in cp ln; do
	printf 'orig\n' >"$STORE/index-js"
	make_bun "$B" $how
	farm_run "" prefer "$B/node_modules/a" "echo poisoned >>index.js"
	if [ $how = cp ]; then
		is "$(grep -c poisoned "$STORE/index-js")/$(fw_status)" 0/enforced \
			"control: a grant of a package in a node_modules of copies: the store untouched, enforced"
	else
		is "$(grep -c poisoned "$STORE/index-js")/$(fw_status)" 1/missing \
			"a grant of a package in bun's node_modules of links: the write lands in the store, fs.write missing"
		like "$(fw reason)" "^$B/node_modules/a is a farm of hard links" "  naming the grant as the farm"
	fi
done
rm -rf "$B"
make_pnpm "$P" ln
farm_run "" prefer "$P/node_modules/.pnpm/a@1.0.0/node_modules/a" true
like "$(fw_status)/$(fw reason)" "^missing/$P/node_modules/\.pnpm/a@1\.0\.0/node_modules/a is a farm of hard links" \
	"a grant of a package inside node_modules/.pnpm: fs.write missing, the farm named once"
unlike "$(fw reason)" "other hard-link farms" "  once, though it lies in two farms' directories (no 'and other farms')"
# A package that links its own files to one another (pnpm's npm package
# links its binary as pn, pnpm, pnpx, pnx and @pnpm/exe's pnpm) in an npm
# node_modules of copies: one file of links is no farm (a farm's every file
# is a link), fs.write enforced.
N=$BASE/npm-proj
mkdir -p "$N/node_modules/pnpm" "$N/node_modules/@pnpm/exe"
echo '{"name":"pnpm"}' >"$N/node_modules/pnpm/package.json"
echo 'readme' >"$N/node_modules/pnpm/README.md"
echo 'binary' >"$N/node_modules/@pnpm/exe/pnpm"
for b in pn pnpm pnpx pnx; do ln "$N/node_modules/@pnpm/exe/pnpm" "$N/node_modules/pnpm/$b"; done
farm_run "" prefer "$N" true
is "$(fw_status)" enforced "a package linking its binary under several names, in a node_modules of copies: no farm, enforced"
ln "$STORE/index-js" "$N/node_modules/pnpm/index.js"
ln "$STORE/package-json" "$N/node_modules/@pnpm/exe/package.json"
farm_run "" prefer "$N" true
like "$(fw_status)/$(fw reason)" "^missing/$N/node_modules is a farm of hard links" \
	"  the same with two more files linked from the store: a farm, missing"
rm -rf "$N"
# A farm reached through a link is not followed (it lies elsewhere, where
# a grant of its own would look at it).
rm -rf "$P/node_modules.real" && mv "$P/node_modules" "$P/node_modules.real" && ln -s node_modules.real "$P/node_modules"
farm_run "" prefer "$P" true
is "$(fw_status)" enforced "node_modules a link: not followed (what it leads to is looked at where a grant holds it)"
rm -rf "$P"

# ------------------------------------------------------ 5. the general limit
# One `ln` of an outside file anywhere else in the project is not found: no
# system call maps an inode to its names, and a walk of the project at
# every start is out of the question.  docs/filesystem.md says so; this
# pins the documented behaviour, so a change to it changes the docs too.
P=$BASE/plain
mkdir -p "$P"
printf 'orig\n' >"$STORE/single"
ln "$STORE/single" "$P/notes.txt"
farm_run "" prefer "$P" "echo poisoned >>notes.txt"
is "$(grep -c poisoned "$STORE/single")/$(fw_status)" 1/enforced \
	"a single ln of an outside file elsewhere in the project: written through, not found (the documented limit)"

done_testing
