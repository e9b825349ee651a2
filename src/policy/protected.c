#include "policy/protected.h"

#include "util/cleanup.h"

/* Entries of a write grant that make the host run code later: git hooks and
 * config (core.fsmonitor, core.hooksPath and aliases run by the `git status`
 * of a shell prompt), submodules, direnv, editor, agent and MCP client
 * project configs (tasks, hooks, servers).  Read-only inside every write
 * grant unless lifted (--unprotect); an absent one gets a placeholder for
 * the run, so it cannot be created either.  Names ending in '/' are
 * directories. */
static const char *const protected_names[] = {
	".git/hooks/", ".git/config", ".gitmodules", ".mcp.json", ".envrc", ".vscode/", ".idea/", ".claude/",
	".codex/", ".cursor/", ".husky/",
};

/* And in a granted HOME: what a login shell, git, the desktop session and
 * the user's own PATH run from there; and moat's own policy file of the
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
    ".gitconfig",
    ".ripgreprc",
    ".config/git/",
    ".config/fish/",
    ".config/systemd/user/",
    ".config/autostart/",
    ".local/bin/",
    "bin/",
    ".config/moat/",
};

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
