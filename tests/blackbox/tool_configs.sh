#!/usr/bin/env bash
# The project configs of package managers, hook managers and version
# managers in a write grant (docs/filesystem.md §6, "protected";
# src/policy/protected.c): files the host's tools read at their next run
# there, and that make them run a program the command chose -- npm's
# .npmrc (script-shell, node-options, git, ignore-scripts), yarn's yarnPath
# (.yarnrc.yml, .yarnrc) and what it names in .yarn/releases, pnpm's
# .pnpmfile.cjs and pnpm-workspace.yaml, pre-commit's and lefthook's
# configs (the next `git commit`), mise's configs (hooks on cd) and
# .tool-versions (a `path:` version for every `node` typed there).
#
# Each attack runs under moat, with --write . in the exec profile (the
# default) and in strict, where it must fail -- or, for a watched name
# (one a directory would break the tool that reads it), be moved aside
# after the run with fs.write reported missing -- and as a control with the
# entries lifted (--unprotect), where the same writes land.  And npm keeps
# working inside: `npm install` writes package-lock.json and node_modules.
#
#   1. present entries: appended, replaced by a rename, removed, their
#      directories renamed
#   2. absent entries: created (placeholders refuse; watched ones are moved
#      aside after the run, fs.write missing)
#   3. the report lists each entry, with its state
#   4. npm on the host obeys a planted .npmrc (the control), not under moat
#   5. npm install inside, with and without a project .npmrc
#   6. HOME's own: ~/.yarnrc, ~/.tool-versions, ~/.config/mise, under
#      --write ~ and --write of HOME's parent
#
# Runs as root and as uid 65534; the projects are under /var/tmp (the
# sandbox's /tmp is private).
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
unset MOAT_HOST_LIMIT MOAT_OCI_RUNTIME
BASE=$(mktemp -d /var/tmp/moat-tools.XXXXXX)
chmod 0777 "$BASE"
trap 'rm -rf "$SCRATCH" "$REPORTS" "$BASE"' EXIT
HOMED=$BASE/home
mkdir -p "$HOMED"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

# M DIR REPORT ARGS... : moat run in DIR, the fake HOME, a report.
M() {
	local dir=$1 rep=$2
	shift 2
	(cd "$dir" && env HOME="$HOMED" "$MOAT" run --backend native --mode prefer --report-fd 3 "$@" \
		2>>"$SCRATCH/all.err" 3>"$rep")
}
fsw() { json_get "$1" '["properties"]["fs.write"]["status"]' 2>/dev/null; }
# state REPORT PATH: the states filesystem.protected gives PATH.
state() { json_eval "$1" "[e['state'] for e in d['filesystem']['protected'] if e['path']=='$2']"; }

# The files, and the directories they lie in below the project's root.
FILES=".npmrc .yarnrc .yarnrc.yml .yarn/releases/yarn-4.cjs .yarn/plugins/plugin.cjs .pnpmfile.cjs
pnpm-workspace.yaml .pre-commit-config.yaml lefthook.yml .lefthook-local.json .config/lefthook.yml
.lefthook/pre-commit/lint.sh mise.toml .mise.local.toml .config/mise.toml .config/mise/config.toml
.mise/config.toml .tool-versions"
DIRS=".yarn .config .lefthook .mise"
# What --unprotect lifts them all by: the protected entries themselves.
LIFT=".npmrc .yarnrc .yarnrc.yml .yarn/releases .yarn/plugins .pnpmfile.cjs pnpm-workspace.yaml
.pre-commit-config.yaml lefthook.yml .lefthook-local.json .config/lefthook.yml .lefthook mise.toml
.mise.local.toml .config/mise.toml .config/mise .mise .tool-versions"
lift_args() { local e; for e in $LIFT; do printf -- '--unprotect\n%s\n' "$e"; done; }
mapfile -t LIFT_ARGS < <(lift_args)

present_project() { # present_project DIR: every entry there, each holding "orig"
	local f
	rm -rf "$1"
	mkdir -p "$1/src"
	echo '{"name":"p","version":"1.0.0"}' >"$1/package.json"
	for f in $FILES; do
		mkdir -p "$(dirname "$1/$f")"
		echo orig >"$1/$f"
	done
	chmod -R a+rwX "$1"
}
# Each file appended, replaced by a rename over it, removed; each directory
# renamed; and a file of the project written.
ATTACK='for f in '$(echo $FILES)'; do
	echo planted >>"$f"; echo planted >t.new && mv -f t.new "$f"; rm -f "$f"
done
for d in '$DIRS'; do mv "$d" "$d.x"; done
rm -f t.new; echo ok >src/ok'
# What the host sees: each file's content, and the project's top.
seen() { # seen DIR
	local f
	for f in $FILES; do printf '%s=%s ' "$f" "$(cat "$1/$f" 2>/dev/null)"; done
	ls -A "$1" | tr '\n' ' '
}

# --- 1. present entries -----------------------------------------------------
for prof in exec strict; do
	R=$BASE/p1-$prof
	present_project "$R"
	before=$(seen "$R")
	M "$R" "$REPORTS/1-$prof.json" --profile "$prof" --write . -- /bin/sh -c "$ATTACK" >/dev/null 2>&1
	is "$(seen "$R")" "$before" \
		"1 [$prof]: none of the package, hook and version managers' configs is appended, replaced, removed or moved"
	is "$(cat "$R/src/ok" 2>/dev/null)/$(fsw "$REPORTS/1-$prof.json")" ok/enforced \
		"1 [$prof]:   the rest of the project is written, and fs.write is enforced"
done
R=$BASE/p1-ctl
present_project "$R"
M "$R" "$REPORTS/1c.json" --write . "${LIFT_ARGS[@]}" -- /bin/sh -c \
	'for f in '"$(echo $FILES)"'; do echo planted >>"$f"; done' >/dev/null 2>&1
is "$(cd "$R" && grep -l planted $FILES 2>/dev/null | wc -l)" "$(echo $FILES | wc -w)" \
	"1 control: lifted (--unprotect), every one of them is written"
is "$(state "$REPORTS/1c.json" "$R/.yarn/releases")" '["lifted"]' "1 control:   and the report lists them lifted"

# --- 2. absent entries ------------------------------------------------------
# A directory stands in for .npmrc and .pre-commit-config.yaml (npm, pnpm
# and pre-commit cope with one); the others are watched: a directory there
# breaks yarn, pnpm, lefthook, mise or asdf.
PLACEHELD=".npmrc .pre-commit-config.yaml"
WATCHED=".yarnrc .yarnrc.yml .pnpmfile.cjs pnpm-workspace.yaml lefthook.yml lefthook-local.yml .lefthook.yml
.lefthook-local.yml lefthook.toml lefthook.json .config/lefthook.yml .config/lefthook-local.jsonc mise.toml
.mise.toml mise.local.toml .config/mise.toml .rtx.toml .tool-versions"
CREATE='mkdir -p .config; for f in '$(echo $PLACEHELD $WATCHED)'; do echo planted >"$f"; done; echo ok >src/ok'
planted_at() { # planted_at DIR: the names that hold what the command planted
	(cd "$1" && grep -l planted $PLACEHELD $WATCHED 2>/dev/null | tr '\n' ' ')
}
for prof in exec strict; do
	R=$BASE/p2-$prof
	mkdir -p "$R/src" && echo '{}' >"$R/package.json" && chmod -R a+rwX "$R"
	M "$R" "$REPORTS/2-$prof.json" --profile "$prof" --write . -- /bin/sh -c "$CREATE" >/dev/null 2>&1
	is "$(planted_at "$R")/$(fsw "$REPORTS/2-$prof.json")/$(cat "$R/src/ok" 2>/dev/null)" "/missing/ok" \
		"2 [$prof]: none is left made after the run, fs.write reported missing, the rest of the project written"
	n=$(json_eval "$REPORTS/2-$prof.json" 'len([e for e in d["run"].get("left_on_host", []) if e["state"]=="moved_aside"])')
	is "$n/$(ls -A "$R" "$R/.config" | grep -c 'moat-set-aside-')" "$(echo $WATCHED | wc -w)/$(echo $WATCHED | wc -w)" \
		"2 [$prof]:   each watched one made is moved aside, kept, and listed in run.left_on_host"
	like "$(cat "$SCRATCH/all.err")" "$(echo $WATCHED | wc -w) watched entries were made during the run \(with them git, or the tools that read them, could run" \
		"2 [$prof]:   and moat says so on stderr"
	# It names each (the first 8) and where it went: it once named the
	# first alone, "(and other watched entries)".
	is "$(grep -o "$R/[^ ]* (moved aside to [^ ]*\.moat-set-aside-[0-9a-f]* beside it)" "$SCRATCH/all.err" | wc -l)" 8 \
		"2 [$prof]:   naming the first 8 with the name each was moved aside to"
	like "$(cat "$SCRATCH/all.err")" ", and $(($(echo $WATCHED | wc -w) - 8)) more \(the report's run.left_on_host lists them\)" \
		"2 [$prof]:   and how many more, where they are listed"
	# The placeholders refused the creation, and are gone after the run.
	is "$(ls -A "$R" | grep -v 'moat-set-aside-' | tr '\n' ' ')" ".config package.json src " \
		"2 [$prof]:   .npmrc and .pre-commit-config.yaml could not be created; no placeholder is left"
	: >"$SCRATCH/all.err"
done
R=$BASE/p2-ctl
mkdir -p "$R/src" && echo '{}' >"$R/package.json" && chmod -R a+rwX "$R"
lift=()
for f in $PLACEHELD $WATCHED; do lift+=(--unprotect "$f"); done
M "$R" "$REPORTS/2c.json" --write . "${lift[@]}" -- /bin/sh -c "$CREATE" >/dev/null 2>&1
is "$(planted_at "$R" | wc -w)/$(fsw "$REPORTS/2c.json")" "$(echo $PLACEHELD $WATCHED | wc -w)/enforced" \
	"2 control: lifted, the command creates every one, and they stay"
# Three made: each named, with the name it was moved aside to.
R=$BASE/p2-three
mkdir -p "$R" && echo '{}' >"$R/package.json" && chmod -R a+rwX "$R"
: >"$SCRATCH/all.err"
M "$R" "$REPORTS/2t.json" --write . -- /bin/sh -c 'for f in mise.toml lefthook.yml .tool-versions; do echo planted >$f; done' \
	>/dev/null 2>&1
for f in mise.toml lefthook.yml .tool-versions; do
	kept=$(cd "$R" && ls -A | grep -F "$f.moat-set-aside-")
	like "$(cat "$SCRATCH/all.err")" "$R/$f \(moved aside to $kept beside it\)" "2 three: stderr names $f and where it is ($kept)"
done
unlike "$(cat "$SCRATCH/all.err")" "other watched entries\)" "2 three:   no entry hidden behind 'other watched entries'"
: >"$SCRATCH/all.err"

# --- 3. the report lists them -----------------------------------------------
R=$BASE/p1-exec
M "$R" /dev/null --dry-run --write . -- /bin/true >"$REPORTS/3p.json"
got=""
for f in .npmrc .yarnrc.yml .yarn/releases .pnpmfile.cjs .pre-commit-config.yaml lefthook.yml .config/mise .tool-versions; do
	got="$got$f=$(state "$REPORTS/3p.json" "$R/$f") "
done
is "$got" '.npmrc=["read-only"] .yarnrc.yml=["read-only"] .yarn/releases=["read-only"] .pnpmfile.cjs=["read-only"] .pre-commit-config.yaml=["read-only"] lefthook.yml=["read-only"] .config/mise=["read-only"] .tool-versions=["read-only"] ' \
	"3: filesystem.protected lists the present ones read-only"
R=$BASE/p3
mkdir -p "$R"
M "$R" /dev/null --dry-run --write . -- /bin/true >"$REPORTS/3a.json"
got=""
for f in .npmrc .pre-commit-config.yaml .yarnrc .yarnrc.yml .pnpmfile.cjs lefthook.yml .config/lefthook.yml mise.toml .tool-versions .yarn/releases; do
	got="$got$f=$(state "$REPORTS/3a.json" "$R/$f") "
done
is "$got" '.npmrc=["placeholder"] .pre-commit-config.yaml=["placeholder"] .yarnrc=["watched"] .yarnrc.yml=["watched"] .pnpmfile.cjs=["watched"] lefthook.yml=["watched"] .config/lefthook.yml=["watched"] mise.toml=["watched"] .tool-versions=["watched"] .yarn/releases=[] ' \
	"3: and the absent ones as placeholders or watched (.yarn/releases, named only by a pinned yarnrc: nothing)"
valid_report "$REPORTS/3a.json" "3: the report"

# --- 4. npm on the host obeys a project's .npmrc ---------------------------
# The attack and its consequence: script-shell makes the host's next `npm
# test` run the command's program (npm reads a directory at .npmrc as no
# file, so the placeholder costs it nothing).
if command -v npm >/dev/null; then
	R=$BASE/p4
	mkdir -p "$R" && echo '{"name":"p","version":"1.0.0","scripts":{"test":"echo tested"}}' >"$R/package.json"
	printf '#!/bin/sh\necho swapped\n' >"$R/evil.sh" && chmod -R a+rwX "$R" && chmod +x "$R/evil.sh"
	PLANT_NPMRC="echo script-shell=$R/evil.sh >>.npmrc"
	host_npm() { (cd "$R" && npm test 2>/dev/null | tail -1); }
	M "$R" "$REPORTS/4.json" --write . -- /bin/sh -c "$PLANT_NPMRC" >/dev/null 2>&1
	is "$(host_npm)/$(fsw "$REPORTS/4.json")" tested/enforced "4: under moat no .npmrc is made: the host's npm test runs the project's script"
	M "$R" "$REPORTS/4c.json" --write . --unprotect .npmrc -- /bin/sh -c "$PLANT_NPMRC" >/dev/null 2>&1
	is "$(host_npm)" swapped "4 control: lifted, the planted script-shell is what the host's npm test runs"
	rm -f "$R/.npmrc"
else
	skip "4: no npm here"
	skip "4 control: no npm here"
fi

# --- 5. npm install inside --------------------------------------------------
# With a local dependency (no network): npm writes package-lock.json and
# node_modules, never .npmrc, with the project's .npmrc present or not.
if command -v npm >/dev/null; then
	for rc in none present; do
		R=$BASE/p5-$rc
		mkdir -p "$R/dep"
		echo '{"name":"p","version":"1.0.0","dependencies":{"dep":"file:./dep"}}' >"$R/package.json"
		echo '{"name":"dep","version":"1.0.0"}' >"$R/dep/package.json"
		[ "$rc" = present ] && echo 'save-exact=true' >"$R/.npmrc"
		chmod -R a+rwX "$R"
		M "$R" "$REPORTS/5-$rc.json" --write . -- npm install --offline >/dev/null 2>&1
		is "$?/$( [ -f "$R/package-lock.json" ] && [ -e "$R/node_modules/dep" ] && echo installed)/$(fsw "$REPORTS/5-$rc.json")" \
			"0/installed/enforced" "5 [.npmrc $rc]: npm install inside succeeds (package-lock.json, node_modules)"
		is "$(ls -A "$R" | tr '\n' ' ')" "$( [ "$rc" = present ] && printf .npmrc' ')dep node_modules package-lock.json package.json " \
			"5 [.npmrc $rc]:   and leaves nothing else behind"
	done
else
	for rc in none present; do
		skip "5 [.npmrc $rc]: no npm here"
		skip "5 [.npmrc $rc]: no npm here"
	done
fi

# --- 6. HOME's own ----------------------------------------------------------
# What yarn 1, asdf and mise read from HOME for every project; mise runs
# its global config without asking for trust.  (~/.npmrc, ~/.yarnrc.yml
# and ~/.config/pnpm/rc are built-in secrets.)
HOMES=$BASE/homes
H=$HOMES/u
HOME_FILES=".yarnrc .tool-versions .config/mise/config.toml"
home_fixture() {
	local f
	rm -rf "$HOMES"
	mkdir -p "$H/.config/app"
	for f in $HOME_FILES; do mkdir -p "$(dirname "$H/$f")" && echo orig >"$H/$f"; done
	chmod -R a+rwX "$HOMES"
}
HOME_ATTACK='for f in '$(echo $HOME_FILES)'; do echo planted >>"$f"; done; echo ok >.config/app/x'
home_planted() { (cd "$H" && grep -l planted $HOME_FILES 2>/dev/null | tr '\n' ' '); }
HM() { # HM REPORT ARGS...: moat in HOME, strict (exec refuses HOME as its project)
	local rep=$1
	shift
	(cd "$H" && env HOME="$H" "$MOAT" run --backend native --mode prefer --profile strict --report-fd 3 "$@" \
		>/dev/null 2>>"$SCRATCH/all.err" 3>"$rep")
}
# (Not an absent ~/.config/mise: with a grant of HOME moat shows ~/.config
# entry by entry around its secrets, and nothing new can be made there.)
for g in home parent; do
	[ "$g" = home ] && grant=$H || grant=$HOMES
	home_fixture
	HM "$REPORTS/6-$g.json" --write "$grant" -- /bin/sh -c "$HOME_ATTACK"
	is "$(home_planted)/$(cat "$H/.config/app/x" 2>/dev/null)/$(fsw "$REPORTS/6-$g.json")" "/ok/enforced" \
		"6 [--write $g]: ~/.yarnrc, ~/.tool-versions and mise's global config are not written; the rest is"
done
home_fixture
HM "$REPORTS/6c.json" --write "$HOMES" --unprotect "$H/.yarnrc" --unprotect "$H/.tool-versions" --unprotect "$H/.config/mise" \
	-- /bin/sh -c "$HOME_ATTACK"
is "$(home_planted)" ".yarnrc .tool-versions .config/mise/config.toml " \
	"6 control: lifted, the command writes them"

# --- 7. a grant's root listed once ------------------------------------------
# The ~100 names are looked up against one listing of the grant's root
# (src/resolve/fsplan.c, "a write grant's top directory, listed once"): an
# absent one costs no lookup of its own, neither while moat plans nor in
# the two looks after the run.  Where the root has more entries than a
# listing is worth, every name is walked as before: the same states, the
# same refusals.  (A root moat cannot list is refused: protect_repos.)
rel_states() { # rel_states REPORT ROOT: each protected entry below ROOT, with its state
	json_eval "$1" "sorted((e['path'][len('$2')+1:], e['state']) for e in d['filesystem']['protected'] if e['path'].startswith('$2/'))"
}
R7=$BASE/p7-small
R7B=$BASE/p7-big
mkdir -p "$R7" "$R7B/src"
(cd "$R7B" && seq -f 'f%04g' 1 2100 | xargs touch)
chmod -R a+rwX "$R7" "$R7B"
if ! command -v strace >/dev/null; then
	for t in 1 2 3 4; do skip "7 ($t): strace is not installed (scripts/ensure-deps test installs it)"; done
elif [ "$(id -u)" != 0 ]; then
	# moat makes itself non-dumpable: strace reads its paths only as root.
	for t in 1 2 3 4; do skip "7 ($t): strace reads a non-dumpable moat's paths only as root (the root pass runs it)"; done
else
	lookups() { # lookups DIR: moat's system calls naming lefthook's 30 names, none present
		(cd "$1" && env HOME="$HOMED" strace -f -qq -o "$SCRATCH/7.trace" "$MOAT" run --backend native --mode prefer \
			--write . -- /bin/true >/dev/null 2>&1)
		grep -c lefthook "$SCRATCH/7.trace"
	}
	is "$(lookups "$R7")" 0 "7: absent names cost no lookup of their own, before or after the run (the root's listing answers)"
	n=$(lookups "$R7B")
	ok "$([ "$n" -ge 30 ] && echo 0 || echo 1)" "7 control: a root of 2100 entries is not listed: each name looked up ($n calls)"
	# On a case-insensitive file system (vfat, SMB, ext4's casefold) the
	# kernel's lookup of lefthook.yml finds LEFTHOOK.YML: the listing must
	# not call it absent, so it is walked (here, on a file system that
	# tells case, the walk finds it absent, as before).
	R7C=$BASE/p7-case
	mkdir -p "$R7C" && echo x >"$R7C/LEFTHOOK.YML" && chmod -R a+rwX "$R7C"
	lookups "$R7C" >/dev/null
	is "$(grep -c 'lefthook\.yml"' "$SCRATCH/7.trace")/$(grep -c 'lefthook\.yaml"' "$SCRATCH/7.trace")" "4/0" \
		"7: a name the root holds in another case is looked up, before and after the run; the others are not"
	R7N=$BASE/p7-utf8
	mkdir -p "$R7N" && touch "$R7N/$(printf 'caf\303\251')" && chmod -R a+rwX "$R7N"
	n=$(lookups "$R7N")
	ok "$([ "$n" -ge 30 ] && echo 0 || echo 1)" \
		"7: a root holding a name not in ASCII (where case folding is Unicode's) is not listed: each name looked up ($n calls)"
fi
M "$R7" /dev/null --dry-run --write . -- /bin/true >"$REPORTS/7s.json"
M "$R7B" /dev/null --dry-run --write . -- /bin/true >"$REPORTS/7b.json"
small=$(rel_states "$REPORTS/7s.json" "$R7")
is "$(rel_states "$REPORTS/7b.json" "$R7B")" "$small" "7: walked name by name (a root too large to list), the same states"
M "$R7B" "$REPORTS/7r.json" --write . -- /bin/sh -c "$CREATE" >/dev/null 2>&1
is "$(planted_at "$R7B")/$(fsw "$REPORTS/7r.json")/$(cat "$R7B/src/ok" 2>/dev/null)" "/missing/ok" \
	"7 [a root too large to list]: none is left made after the run, fs.write missing, the rest written"

done_testing
