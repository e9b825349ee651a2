/* Source: configuration files (docs/config.md).
 *
 * One schema, read from the files users already have: moat's own TOML
 * (`[sandbox]`, `[profiles.NAME]`), darnit-style `[mcp_servers.NAME]` with
 * `command = [argv]`, Codex-style `command` + `args` + `env_vars` + `cwd`, and
 * Claude Desktop JSON `{"mcpServers": {...}}`.  JSON is converted to the same
 * tree as TOML (every key and value with its line and column), so both are
 * checked by the same code and every error names `file:line:col`, the key
 * path and what was expected.
 *
 * Loading validates everything that does not depend on the host (keys,
 * types, names, profile `extends` chains, `$VAR` syntax) and resolves paths
 * against the file's directory.  config_build() then turns one server (or a
 * profile and a command) into the policy; what depends on the host (paths
 * that must exist in mode require, the command, cwd) is checked there.
 *
 * The files are the clients' own, so keys that belong to a client are
 * accepted and ignored (Codex's `model`, Claude Desktop's `globalShortcut`,
 * a server's `startup_timeout_sec`), or used where they mean something to
 * moat (`cwd`, `env_vars`, `enabled`).  A typo must never weaken a sandbox
 * silently: in moat's own tables (`[sandbox]`, `[profiles.NAME]`, a
 * server's `sandbox`) every unknown key is an error, and where the client's
 * keys and moat's meet (the top of the file, a server entry) a key within
 * two edits of one moat reads is one too (`sandbx`, `comand`); wrong types,
 * duplicate servers and contradictions are errors as well (MOAT_E_CONFIG,
 * 125).  Loading goes on after a problem, so that `moat config check` names
 * every one; only a syntax error ends the reading.
 *
 * A server moat cannot run -- a remote one (`url`), one that asks the client
 * to prompt for a value (`${input:ID}`), one with VS Code's own sandbox -- is
 * kept with the reason, which is the error when it is selected; a server its
 * client has disabled (`enabled = false`) is checked, and refused when
 * selected. */
#ifndef MOAT_SOURCES_CONFIG_H
#define MOAT_SOURCES_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"
#include "sources/cli.h"
#include "sources/netsets.h"
#include "sources/toml.h"
#include "util/err.h"

/* The profile a server runs under when neither it, [sandbox] nor the
 * command line names one: servers need the runtime caches, and are often
 * started from a client's cwd (HOME or /), which `exec` refuses to grant. */
#define MOAT_SERVER_DEFAULT_PROFILE "mcp"

/* The most servers and profiles one file defines.  A client's file holds a
 * few servers and wrap's policy file one profile each; `moat mcp list`
 * plans every server of every client file it finds (~3 ms each), a cloned
 * repository's `.mcp.json` among them, and the loader compares each name
 * with those before it: 500000 servers in the 16 MiB a file may hold kept
 * list and `moat run --config` busy for tens of minutes. */
#define CONFIG_MAX_SERVERS 1000
#define CONFIG_MAX_PROFILES 4096

/* A read, write or deny rule, resolved at load time. */
struct config_path {
	char *path; /* absolute, normalised */
	enum moat_access access;
	char *key; /* key path for messages: "mcp_servers.x.sandbox.read" */
	struct moat_origin origin;
};

/* An `env_pass` / `env_vars` name. */
struct config_name {
	char *name;
	char *key;
	struct moat_origin origin;
};

/* A destination set named in network.allow ("@npm"): expanded by
 * config_build(), on the host it runs on. */
struct config_netset {
	unsigned mask;
	char *text; /* as written */
	char *key;
	struct moat_origin origin;
};

/* An `env = { K = "value" }` entry; $VAR is expanded by config_build(). */
struct config_env {
	char *name;
	char *value; /* as written; syntax already checked */
	char *key;
	struct moat_origin origin;
};

/* A [sandbox] table, a [profiles.NAME] table or a server's sandbox (the
 * `sandbox = "BACKEND"` shorthand sets only `backend`).  Unset scalars are
 * NULL / has_* false / MOAT_LIMIT_UNSET / timeout 0. */
struct config_layer {
	bool present;
	bool broken; /* had a problem: not built by config_check */
	char *key;
	struct moat_origin origin;
	char *backend;
	struct moat_origin backend_origin;
	bool has_mode;
	enum moat_mode mode;
	struct moat_origin mode_origin;
	bool has_net;
	enum moat_net net;
	struct moat_origin net_origin;
	char *profile; /* `profile` in sandbox tables, `extends` in profiles */
	struct moat_origin profile_origin;
	struct config_path *paths;
	size_t n_paths;
	struct config_path *unprotect; /* `unprotect`: lifted protected entries */
	size_t n_unprotect;
	bool has_unix_sockets;
	bool unix_sockets;
	struct config_name *env_pass;
	size_t n_env_pass;
	uint32_t require; /* property bits */
	struct moat_limits limits;
	struct moat_net_dest *net_allow; /* network.allow, parsed (origin set) */
	size_t n_net_allow;
	struct config_netset *net_sets; /* network.allow's sets */
	size_t n_net_sets;
	struct moat_net_pin *net_pins; /* network.resolve */
	size_t n_net_pins;
};

struct config_profile {
	char *name;
	struct config_layer layer;
};

struct config_server {
	char *name;
	char *key; /* "mcp_servers.NAME" or "mcpServers.NAME" */
	struct moat_origin origin;
	char **argv; /* command and args, NULL-terminated */
	size_t argc;
	struct moat_origin command_origin;
	char *cwd; /* absolute, or NULL */
	char *cwd_key;
	struct moat_origin cwd_origin;
	struct config_env *env;
	size_t n_env;
	struct config_name *env_vars;
	size_t n_env_vars;
	bool optional;
	char *install_hint;	 /* or NULL */
	char *trusted_publisher; /* or NULL */
	struct config_layer sandbox;
	bool broken; /* had a problem: not built by config_check */
	/* `enabled = false` (Codex) or `disabled = true`: its client does not
	 * start it, and neither does moat; the key is disabled_key. */
	bool disabled;
	char *disabled_key;
	struct moat_origin disabled_origin;
	/* Why moat cannot run it (a remote server, ...), or NULL, with what to
	 * do instead; skip_key is where the reason is in the file. */
	char *skip;
	char *skip_hint;
	char *skip_key;
	struct moat_origin skip_origin;
};

struct moat_config {
	const char *file; /* as given; interned for the life of the process,
			   * because policy origins point at it */
	char *dir;	  /* absolute directory of the file */
	bool json;
	struct config_layer defaults; /* [sandbox] */
	struct config_profile *profiles;
	size_t n_profiles;
	struct config_server *servers;
	size_t n_servers;
	/* Every problem found, loading and (config_check) building, in the
	 * order found; the first is the error config_load gives. */
	struct moat_error *problems;
	size_t n_problems;
	/* What was ignored or skipped, each "FILE:LINE:COL: KEY: what", for
	 * `moat config check`. */
	char **notes;
	size_t n_notes;
	/* Claude Code's servers of one project ("local" scope), which
	 * ~/.claude.json keeps under projects."PATH".mcpServers: not moat's
	 * servers (a name may be in several projects), named for the error
	 * of a --server that is one of them.  Pairs: name, project. */
	char **project_servers;
	size_t n_project_servers;
};

/* What a server declares about itself, kept for the report. */
struct moat_server_meta {
	char *name;   /* NULL when no server was selected */
	char *config; /* the file it came from */
	bool optional;
	char *install_hint;
	char *trusted_publisher;
};

/* A file is JSON when its name ends in ".json" or its text starts with '{'
 * (after blanks), TOML otherwise. */
bool config_looks_like_json(const char *file, const char *buf, size_t len);

/* Read and validate FILE.  JSON when the name ends in ".json" or the text
 * starts with '{', TOML otherwise.  `home` expands "~" (NULL: "~" is an
 * error).  *out is set only on success, a file without problems; the first
 * problem is the error.  Free *out with config_free. */
int config_load(const char *file, const char *home, struct moat_config **out, struct moat_error *err);

/* The same from memory: `file` names the source in messages and its
 * directory is the base for relative paths. */
int config_load_buffer(const char *file, const char *buf, size_t len, const char *home, struct moat_config **out,
		       struct moat_error *err);

/* config_load_all from memory. */
int config_load_buffer_all(const char *file, const char *buf, size_t len, const char *home, struct moat_config **out,
			   bool *parse_failed, struct moat_error *err);

/* For `moat config check`: *out is set when the file could be read and
 * parsed, problems or not (they are in (*out)->problems).  -1 when it could
 * not: *parse_failed then says whether a syntax error stopped the reading
 * (the rest of the file is unchecked) rather than the file itself. */
int config_load_all(const char *file, const char *home, struct moat_config **out, bool *parse_failed,
		    struct moat_error *err);

/* Add `e` to c's problems (once: a problem found again is not repeated). */
void config_add_problem(struct moat_config *c, const struct moat_error *e);

void config_free(struct moat_config *c);

const struct config_server *config_find_server(const struct moat_config *c, const char *name);
const struct config_profile *config_find_profile(const struct moat_config *c, const char *name);

/* The policy for one server or for a command run with the file's
 * [sandbox] defaults and profiles.  The order, later winning: the profile's
 * rules (built-in, then the user profiles it extends, base first), then
 * [sandbox], then the server's sandbox, then the server's env_vars and env.
 * The caller applies command-line flags on top. */
struct config_request {
	const char *server; /* NULL: no server, the command is argv */
	char *const *argv;  /* the command after `--`, or a server's extra args */
	size_t argc;
	const char *profile; /* --profile (built-in or from the file), or NULL */
	const char *cwd;     /* --cwd, absolute, or NULL */
	int mode;	     /* --mode as enum moat_mode, or -1 */
	char *const *env;    /* moat's environment: $VAR, PATH, HOME */
	bool lenient_exe;    /* `config check`: a command not installed here is fine */
	bool disabled_ok;    /* `config check`: build a disabled server too */
	bool other_host;     /* profile_context.other_host */
	struct netset_notes *notes; /* what a destination set left out, or NULL */
	/* `moat run --config FILE` (and export): a FILE that is not among the
	 * user's own (a project's) may not lower the mode nor pick backend
	 * none unless the command line says so (`mode` above, backend_given),
	 * and what else of it weakens the default goes to `notes`
	 * (sources/config_project.c). */
	bool project_check;
	bool backend_given; /* --backend on the command line */
	/* Non-NULL: a command that is not found (or not executable) is not an
	 * error of the build, which goes on with argv[0] as p->exe; the error
	 * is put here instead (kind MOAT_E_NONE: the command was found), for
	 * `moat run` to report the run that could not start. */
	struct moat_error *exe_err;
};

int config_build(const struct moat_config *c, const struct config_request *r, struct moat_policy *p,
		 struct moat_server_meta *meta, struct moat_error *err);

/* The profile config_build starts from when the command line names none:
 * the server's sandbox.profile, then [sandbox]'s, then the default (srv
 * NULL: a command, not a server). */
const char *config_server_profile(const struct moat_config *c, const struct config_server *srv);

/* The layers config_build applies over the built-in profile, base first:
 * the user profiles of `profile`'s chain (the built-in it ends in is put
 * in *builtin), [sandbox], the server's sandbox (srv NULL: none).  layers
 * must hold n_profiles + 2; load refused cycles.  `moat mcp wrap` carries
 * the same layers into the profile it writes (api/mcp.c). */
int config_collect_layers(const struct moat_config *c, const struct config_server *srv, const char *profile,
			  const struct config_layer **layers, size_t *n, const char **builtin,
			  struct moat_error *err);

/* Is `file` one of the user's own (in a dot-directory of HOME, HOME
 * itself, $XDG_CONFIG_HOME, ~/Library or /etc), not a project's?  `env`
 * gives HOME and XDG_CONFIG_HOME. */
bool config_file_is_users(const char *file, char *const *env);

/* With r->project_check and a file not the user's own: the layers (and the
 * server's env) judged -- a mode below require or backend none the command
 * line does not give is an error naming FILE:LINE:COL; what else loosens
 * the default (net all, a grant past the project, an unprotect, the host's
 * variables, another built-in profile) goes to r->notes.  0 otherwise. */
int config_project_judge(const struct moat_config *c, const struct config_server *srv,
			 const struct config_layer *const *layers, size_t n, const char *builtin,
			 const struct config_request *r, struct moat_error *err);

/* `moat config check`: config_build() and policy_validate() for every
 * server moat can run and every user profile (with a placeholder command),
 * so that an error anywhere in the file is found before a client starts a
 * server; what loading found wrong is not built again.  Every problem is
 * added to c->problems; -1 when there is any (the first in *err). */
int config_check(struct moat_config *c, char *const *env, struct moat_error *err);

/* The servers moat can run (not skipped; disabled ones count). */
size_t config_local_servers(const struct moat_config *c);

/* The names of the file's servers, ", "-separated, into buf (for a hint):
 * "none: ..." when it defines none. */
void config_known_servers(const struct moat_config *c, char *buf, size_t len);

void config_server_meta_free(struct moat_server_meta *m);
/* {"name", "config", "optional", "install_hint", "trusted_publisher"}, for the report. */
json_t *config_server_meta_json(const struct moat_server_meta *m);

#endif
