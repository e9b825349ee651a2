/* The MCP clients' own files, for `moat mcp` (docs/clients.md, "moat mcp
 * list, wrap, unwrap"): where each client keeps its servers on Linux, the
 * server entries of one file with the bytes each entry's command and args
 * span, whether an entry already runs under moat, and the edit that makes
 * an entry run another command line -- one splice of those bytes, so that
 * every other byte of the file stays as it was (TOML comments and order,
 * JSON layout).  Nothing here writes a file. */
#ifndef MOAT_SOURCES_MCP_CLIENTS_H
#define MOAT_SOURCES_MCP_CLIENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "sources/toml.h"
#include "util/err.h"

enum mcp_client {
	MCP_CLAUDE_DESKTOP,
	MCP_CLAUDE_CODE,
	MCP_CODEX,
	MCP_CURSOR,
	MCP_VSCODE,
	MCP_GEMINI,
	MCP_WINDSURF,
	MCP_OTHER, /* a file named with --config that is none of theirs */
};

/* "claude-desktop", ... (names in profile ids and JSON); "Claude Desktop", ... */
const char *mcp_client_id(enum mcp_client c);
const char *mcp_client_name(enum mcp_client c);
/* The client whose file `path` is, by where it is ("~/.codex/config.toml"
 * is Codex's); MCP_OTHER when none. */
enum mcp_client mcp_client_of(const char *path);

struct mcp_location {
	enum mcp_client client;
	char *path;
	const char *scope; /* "user" or "project" */
};

/* The files the clients read for a user with `home` (NULL: none) working in
 * `project` (NULL: none), in a fixed order, whether they exist or not;
 * `env` gives XDG_CONFIG_HOME, CODEX_HOME and CLAUDE_CONFIG_DIR.  Free with
 * mcp_locations_free. */
size_t mcp_locations(const char *home, const char *project, char *const *env, struct mcp_location **out);
void mcp_locations_free(struct mcp_location *l, size_t n);

enum mcp_kind {
	MCP_LOCAL,    /* a command the client starts */
	MCP_REMOTE,   /* url, httpUrl, serverUrl, type http/sse, and no command: nothing runs here */
	MCP_DISABLED, /* enabled = false, disabled = true: the client does not start it */
};

enum mcp_state {
	MCP_UNWRAPPED, /* runs its own command: not under moat */
	MCP_WRAPPED,   /* MOAT run --config FILE --profile ID -- COMMAND ..., as wrap writes it */
	MCP_BY_HAND,   /* under moat some other way (moat run --profile mcp -- ..., env moat, npx moat) */
	MCP_NESTED,    /* moat inside moat */
};

/* How wrap writes an entry: MOAT run --config FILE --profile ID -- COMMAND
 * ARGS...; the server's own command starts at this index. */
#define MCP_WRAP_ARGS 7

struct mcp_entry {
	char *name;
	char *key;	     /* where it is: mcpServers.fs, projects."/p".mcpServers.fs */
	struct toml_pos pos; /* of its name */
	enum mcp_kind kind;
	/* Why moat does not wrap it, or NULL: a remote server, VS Code's own
	 * sandbox, no command, arguments that are not strings. */
	const char *skip;
	char **argv; /* command then args, as the client runs them; NULL-terminated */
	size_t argc;
	char **env_names; /* what the client sets (env) or passes on (env_vars) */
	size_t n_env;
	/* The bytes: the entry, its command and args values (args NULL when
	 * absent), and where the command's key starts. */
	const struct toml_value *table, *command, *args;
	size_t command_key_off;
	bool argv_command; /* command is an array (darnit's form): no args */
	/* Under moat: */
	enum mcp_state state;
	const char *policies; /* MCP_WRAPPED: the --config and --profile it names */
	const char *profile;
};

struct mcp_file {
	enum mcp_client client;
	char *path;
	bool json;
	bool trailing_commas; /* its reader allows a comma after an array's last item (TOML, VS Code's JSONC) */
	char *text;	      /* as read */
	size_t len;
	struct toml_value *root;
	struct mcp_entry *entries;
	size_t n_entries;
};

/* The server entries of a client's file whose text is `text` (taken over,
 * also on failure; NUL-terminated): those of mcpServers, mcp_servers or servers, and in
 * Claude Code's ~/.claude.json those of projects.PROJECT.mcpServers too.
 * `self` is moat's own path, also recognised as moat.  A syntax error is
 * MOAT_E_CONFIG with file:line:col. */
int mcp_file_parse(const char *path, enum mcp_client client, char *text, size_t len, const char *project,
		   const char *self, struct mcp_file **out, struct moat_error *err);
void mcp_file_free(struct mcp_file *f);

/* The index in argv of the first word that starts moat -- argv[0], or
 * through env, sudo, a shell's -c, npx and the other package runners -- or
 * -1.  `self`: moat's own path (NULL: only the name). */
long mcp_moat_index(char *const *argv, size_t argc, const char *self);

/* argv in the form wrap writes: MOAT run --config FILE --profile ID --
 * COMMAND..., whatever MOAT is named. */
bool mcp_wrap_form(char *const *argv, size_t argc);
/* Entry e, in that form, is wrap's: MCP_WRAPPED, or MCP_NESTED when its
 * command runs moat again (by `self`, by the entry's own moat path, or by
 * name).  For an entry whose moat is not named moat (wrap --moat
 * ~/bin/moat-dev), once wrap's record of it is found. */
void mcp_entry_wrapped(struct mcp_entry *e, const char *self);

/* The container engine argv runs a container with (`docker run ...`,
 * `podman run`, `nerdctl compose up`: the engine, then run, exec, start or
 * compose among its words), or NULL.  A sandbox around that command holds
 * the engine's client, not the container: Docker's daemon starts it
 * outside (and its socket is root on the host), rootless Podman needs the
 * new namespaces the sandbox refuses. */
const char *mcp_container_engine(char *const *argv, size_t argc);

/* The environment the client starts the entry's command with: `base` (the
 * client's own, here moat's) with the entry's `env` values over it, as
 * "NAME=VALUE" strings, NULL-terminated (mcp_environ_free).  A value that
 * is not a plain string is left out. */
char **mcp_entry_environ(const struct mcp_entry *e, char *const *base);
void mcp_environ_free(char **env);

/* Replace [off, end) of a file with text. */
struct mcp_splice {
	size_t off, end;
	char *text;
};

/* The splice that makes entry e run argv instead of what it runs: the
 * command's and args' values replaced (args inserted after the command
 * when the entry has none and argv has arguments), in the file's format
 * and the layout of the values they replace; the bytes around and between
 * stay.  *out spans from the first byte changed to the last. */
int mcp_entry_rewrite(const struct mcp_file *f, const struct mcp_entry *e, char *const *argv, size_t argc,
		      struct mcp_splice *out, struct moat_error *err);

/* text with the splices applied (sorted by off, not overlapping): a new
 * NUL-terminated buffer of *out_len bytes. */
char *mcp_splices_apply(const char *text, size_t len, const struct mcp_splice *s, size_t n, size_t *out_len);
void mcp_splice_free(struct mcp_splice *s);

/* A string as a JSON or TOML basic string, quotes included. */
char *mcp_quote(const char *s, bool json);

#endif
