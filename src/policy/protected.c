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
};

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
