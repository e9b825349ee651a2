#include "policy/protected.h"

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
