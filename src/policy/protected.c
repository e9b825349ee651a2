#include "policy/protected.h"

#include <string.h>

#include "util/cleanup.h"

/* Entries of a write grant that make the host run code later: git hooks and
 * config (core.fsmonitor, core.hooksPath and aliases run by the `git status`
 * of a shell prompt), submodules, direnv, editor, agent and MCP client
 * project configs (tasks, hooks, servers).  Read-only inside every write
 * grant unless lifted (--unprotect); an absent one gets a placeholder for
 * the run, so it cannot be created either.  Names ending in '/' are
 * directories.
 *
 * An MCP client starts the servers its file lists without a sandbox, so
 * every file `moat mcp` knows a client reads its servers from
 * (sources/mcp_clients.c, mcp_locations) must be at or below one of these
 * or of protected_home_names: tests/unit/test_mcp.c checks each of them.
 * A client's directory rather than its file, where the client keeps more
 * that runs (Gemini CLI's extensions, Continue's mcpServers directory, Zed's
 * tasks) and so that the client's own atomic rewrite of its file during the
 * run does not detach the pin. */
static const char *const protected_names[] = {
	".git/hooks/", ".git/config", ".gitmodules", ".mcp.json", ".envrc", ".vscode/", ".idea/", ".claude/",
	".codex/", ".cursor/", ".husky/", ".gemini/", ".continue/", ".zed/",
	/* Where git takes a repository's config and hooks from besides
	 * .git/config and .git/hooks: commondir (the common directory, whose
	 * config and hooks git then reads instead), config.worktree (read
	 * when extensions.worktreeConfig is set), and the git directories of
	 * the submodules and of the linked work trees. */
	".git/commondir", ".git/config.worktree", ".git/modules/", ".git/worktrees/",
	/* Package managers' project configs, read by every run of the tool
	 * there: npm's and pnpm's .npmrc names the shell of every script
	 * (script-shell), what every node they start preloads (node-options),
	 * the git and node-gyp they run, and overrides the user's own
	 * ignore-scripts; yarn runs yarnPath (.yarnrc.yml; yarn-path in
	 * .yarnrc) for every command, `yarn --version` included, and loads
	 * its plugins, usually .yarn/releases and .yarn/plugins, which those
	 * files name; pnpm runs .pnpmfile.cjs at every install, with
	 * --ignore-scripts too, and takes scriptShell and pnpmfile from
	 * pnpm-workspace.yaml as from .npmrc. */
	".npmrc", ".yarnrc", ".yarnrc.yml", ".yarn/releases/", ".yarn/plugins/", ".pnpmfile.cjs", "pnpm-workspace.yaml",
	/* Hook managers: the hook in .git/hooks runs what these name at the
	 * user's next `git commit` (pre-commit's `repo: local` entries,
	 * lefthook's commands and its `lefthook` setting), every name the
	 * manager reads its config from, lefthook's -local ones (merged in)
	 * and its script directories included. */
	".pre-commit-config.yaml",
	"lefthook.yml", "lefthook.yaml", "lefthook.toml", "lefthook.json", "lefthook.jsonc",
	".lefthook.yml", ".lefthook.yaml", ".lefthook.toml", ".lefthook.json", ".lefthook.jsonc",
	".config/lefthook.yml", ".config/lefthook.yaml", ".config/lefthook.toml", ".config/lefthook.json",
	".config/lefthook.jsonc",
	"lefthook-local.yml", "lefthook-local.yaml", "lefthook-local.toml", "lefthook-local.json", "lefthook-local.jsonc",
	".lefthook-local.yml", ".lefthook-local.yaml", ".lefthook-local.toml", ".lefthook-local.json",
	".lefthook-local.jsonc", ".config/lefthook-local.yml", ".config/lefthook-local.yaml",
	".config/lefthook-local.toml", ".config/lefthook-local.json", ".config/lefthook-local.jsonc", ".lefthook/",
	".lefthook-local/",
	/* Version managers: with `mise activate` in the shell, mise runs a
	 * config's [hooks] and sources its [env] _.source on cd and at every
	 * prompt (a file the user trusted once stays trusted by its path);
	 * asdf's shims and mise run the `path:` version .tool-versions names
	 * for `node`, `python`, ... typed in the project, a prompt's `node
	 * --version` included. */
	"mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml", ".config/mise.toml", ".config/mise.local.toml",
	".rtx.toml", ".rtx.local.toml", ".config/mise/", ".mise/", ".tool-versions",
};

/* Where a directory standing in for an absent entry would break the tool
 * that reads it, there and on the host while the run lasts: yarn 1 stops
 * on a directory at .yarnrc (EISDIR) and yarn 4 at .yarnrc.yml ("Parse
 * error"), pnpm on one at .pnpmfile.cjs, and so on.  An empty file would
 * be taken up by `git add -A`.  So they are watched (made during the run:
 * moved aside after it, fs.write missing); those in a directory that may
 * not exist yet (.config) watched there too, as no placeholder directory
 * may stand on the way.  npm and pnpm ignore a directory at .npmrc, and
 * pre-commit stops without a config file anyway: they get placeholders. */
static const char *const watched_names[] = {
	".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "pnpm-workspace.yaml", "lefthook.yml", "lefthook.yaml",
	"lefthook.toml", "lefthook.json", "lefthook.jsonc", ".lefthook.yml", ".lefthook.yaml", ".lefthook.toml",
	".lefthook.json", ".lefthook.jsonc", "lefthook-local.yml", "lefthook-local.yaml", "lefthook-local.toml",
	"lefthook-local.json", "lefthook-local.jsonc", ".lefthook-local.yml", ".lefthook-local.yaml",
	".lefthook-local.toml", ".lefthook-local.json", ".lefthook-local.jsonc", "mise.toml", ".mise.toml",
	"mise.local.toml", ".mise.local.toml", ".rtx.toml", ".rtx.local.toml", ".tool-versions",
	/* Watched also below a .config not made yet, where a placeholder
	 * .config would hold the project's whole .config read-only. */
	".config/lefthook.yml", ".config/lefthook.yaml", ".config/lefthook.toml", ".config/lefthook.json",
	".config/lefthook.jsonc", ".config/lefthook-local.yml", ".config/lefthook-local.yaml",
	".config/lefthook-local.toml", ".config/lefthook-local.json", ".config/lefthook-local.jsonc",
	".config/mise.toml", ".config/mise.local.toml",
};

/* Directories that matter only through a file above that names them (the
 * pinned yarnrc's yarnPath and plugins, a hook manager's pinned config's
 * scripts) or, for mise's, only once the user trusts a file in them: held
 * when present, nothing made for them when absent. */
static const char *const ignored_when_absent[] = {
	".yarn/releases/", ".yarn/plugins/", ".lefthook/", ".lefthook-local/", ".config/mise/", ".mise/",
};

static bool listed(const char *name, const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

/* And in a granted HOME: what a login shell, git, the desktop session and
 * the user's own PATH run from there (Debian's and Ubuntu's ~/.bashrc
 * sources ~/.bash_aliases; X sessions source ~/.xprofile and
 * ~/.xsessionrc; systemd's user manager and PAM take the environment of
 * every session from environment.d and ~/.pam_environment, LD_PRELOAD
 * included; cargo and rustup put ~/.cargo/bin first on PATH), what the
 * editors and terminal multiplexer a developer opens next run (vim's and
 * neovim's config, tmux's, which run commands), and the desktop's
 * launchers; and moat's own policy file of the
 * servers `moat mcp wrap` wrapped (~/.config/moat/servers.toml), which a
 * server could otherwise rewrite to loosen its own sandbox at its next
 * start. */
static const char *const protected_home_names[] = {
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".inputrc",
    ".bash_aliases",
    ".xprofile",
    ".xsessionrc",
    ".pam_environment",
    ".config/environment.d/",
    ".vimrc",
    ".config/nvim/",
    ".tmux.conf",
    ".config/tmux/",
    ".cargo/bin/",
    ".local/share/applications/",
    ".gitconfig",
    ".ripgreprc",
    ".config/git/",
    ".config/fish/",
    ".config/systemd/user/",
    ".config/autostart/",
    ".local/bin/",
    "bin/",
    ".config/moat/",
    /* MCP clients' user files (Claude Code's ~/.claude/, Codex's ~/.codex/,
     * Cursor's ~/.cursor/ and Gemini CLI's ~/.gemini/ are protected_names):
     * Claude Code's ~/.claude.json, Claude Desktop's, VS Code's user
     * directory (mcp.json, settings.json, tasks, and Cline's and Roo Code's
     * MCP settings in globalStorage), Windsurf's, Zed's. */
    ".claude.json",
    ".config/Claude/",
    ".config/Code/User/",
    ".config/Code - Insiders/User/",
    ".codeium/windsurf/",
    ".config/zed/",
    /* The user's own configs of the package and version managers above:
     * yarn 1's rc file (yarn-path), asdf's default .tool-versions and
     * mise's global config, which mise runs without asking for trust.
     * (~/.npmrc, ~/.yarnrc.yml and ~/.config/pnpm/rc hold tokens: built-in
     * secrets, neither read nor written.) */
    ".yarnrc",
    ".tool-versions",
    ".config/mise/",
};

enum protected_absent policy_protected_when_absent(const char *name)
{
	/* git dies on a commondir it cannot read ("failed to read
	 * .git/commondir"), a directory or an empty file alike: nothing can
	 * stand in for an absent one. */
	if (strcmp(name, ".git/commondir") == 0)
		return PROTECTED_ABSENT_WATCH;
	/* Read only when the (pinned) .git/config sets
	 * extensions.worktreeConfig: resolve/gitcode.c asks for it then. */
	if (strcmp(name, ".git/config.worktree") == 0)
		return PROTECTED_ABSENT_IGNORED;
	/* A new .git/modules/NAME or .git/worktrees/ID is used only through a
	 * gitfile (`gitdir: ...`) that names it, and a gitfile the command
	 * writes in its grant can name any directory it writes anyway: a
	 * placeholder would hold nothing more, and would cost every start and
	 * make `git submodule add` and `git worktree add` fail inside. */
	if (strcmp(name, ".git/modules/") == 0 || strcmp(name, ".git/worktrees/") == 0)
		return PROTECTED_ABSENT_IGNORED;
	if (listed(name, ignored_when_absent, ARRAY_LEN(ignored_when_absent)))
		return PROTECTED_ABSENT_IGNORED;
	if (listed(name, watched_names, ARRAY_LEN(watched_names)))
		return strchr(name, '/') ? PROTECTED_ABSENT_WATCH_DEEP : PROTECTED_ABSENT_WATCH;
	return PROTECTED_ABSENT_PLACEHOLDER;
}

enum protected_absent policy_protected_home_when_absent(const char *name)
{
	/* HOME's .config/mise, unlike a project's, is read without trust:
	 * a placeholder, as for the other directories of HOME. */
	if (listed(name, watched_names, ARRAY_LEN(watched_names)))
		return PROTECTED_ABSENT_WATCH;
	return PROTECTED_ABSENT_PLACEHOLDER;
}

bool policy_protected_by_entry(const char *name)
{
	return strcmp(name, ".git/modules/") == 0 || strcmp(name, ".git/worktrees/") == 0;
}

const char *const *policy_protected_names(size_t *n)
{
	*n = ARRAY_LEN(protected_names);
	return protected_names;
}

const char *const *policy_protected_home_names(size_t *n)
{
	*n = ARRAY_LEN(protected_home_names);
	return protected_home_names;
}
