/* `moat run --config FILE` with a FILE of a project's rather than of the
 * user's.  A cloned repository's `.mcp.json` or `evil.toml` is the
 * repository's words, and `moat run --config ./.mcp.json --server x`
 * applied its `sandbox` keys wholesale: `mode = "off"`, a grant of `~`,
 * `net = "all"`, an env value that expands `$GITHUB_TOKEN` -- with nothing
 * said.  `moat mcp wrap` refuses to carry such settings (docs/clients.md);
 * here the user named the file, so it is used, but: what of it turns the
 * sandbox off or lowers require to prefer is refused unless the command
 * line says the same (--mode, --backend), and what else loosens the
 * default is said before the run, FILE:LINE:COL each, on stderr and in
 * the report's notes (docs/config.md, "Whose file it is"). */
#include <stdlib.h>
#include <string.h>

#include "sources/config.h"
#include "sources/config_common.h"
#include "sources/netsets.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"
#include "util/projpath.h"

/* Below `dir` (or `dir` itself), when dir is set and absolute. */
static bool under(const char *path, const char *dir)
{
	return dir && dir[0] == '/' && path_within(path, dir);
}

/* The user's own places for configuration: a dot-file or dot-directory of
 * HOME (~/.claude.json, ~/.codex, ~/.cursor, ~/.config), $XDG_CONFIG_HOME,
 * macOS's ~/Library, a file in HOME itself, and the system's /etc.  A
 * repository is cloned elsewhere (~/src/repo, /workspaces/repo, /tmp). */
bool config_file_is_users(const char *file, char *const *env)
{
	cleanup_free char *real = realpath(file, NULL);
	cleanup_free char *home = path_home_for_rules(config_getenv(env, "HOME"));
	const char *xdg = config_getenv(env, "XDG_CONFIG_HOME"), *rest;
	size_t n;

	if (!real)
		return false;
	if (under(real, "/etc") || under(real, xdg))
		return true;
	if (!home || home[0] != '/' || strcmp(home, "/") == 0 || !path_within(real, home) || strcmp(real, home) == 0)
		return false;
	n = strlen(home);
	rest = real + n + (home[n - 1] == '/' ? 0 : 1);
	return rest[0] == '.' || strncmp(rest, "Library/", 8) == 0 || !strchr(rest, '/');
}

struct judge {
	const struct config_request *r;
	const char *home;
	struct project_roots roots;
};

static void say(const struct judge *j, const struct moat_origin *o, const char *key, const char *what)
{
	cleanup_free char *line = NULL;

	if (!j->r->notes)
		return;
	line = moat_xasprintf("note: %s:%d:%d: %s: %s (a project's file, not one of yours)", o->source, o->line,
			      o->col, key, what);
	netset_notes_add(j->r->notes, line);
}

static int refuse(const struct moat_origin *o, const char *key, const char *what,
		  const char *flag, struct moat_error *err)
{
	config_fail(err, o, key, "%s, in a project's file (not one of your own): refused unless the command line says "
				 "the same",
		    what);
	return moat_error_hint(err,
			       "give %s on the command line to run it so, or keep the file among your own "
			       "(~/.config/moat/), or remove the setting",
			       flag);
}

/* A path of the file's that reaches past the project: a write grant
 * anywhere outside it, a read grant of HOME, of something in it or of a
 * directory above it (the user's keys, tokens, other projects). */
static bool reaches_past_project(const struct judge *j, const struct config_path *cp)
{
	if (cp->access == MOAT_ACCESS_DENY || project_roots_hold(&j->roots, cp->path))
		return false;
	if (cp->access == MOAT_ACCESS_WRITE)
		return true;
	return j->home && j->home[0] == '/' && (path_within(cp->path, j->home) || path_within(j->home, cp->path));
}

static int judge_layer(const struct judge *j, const struct config_layer *l, struct moat_error *err)
{
	cleanup_free char *mode_key = moat_xasprintf("%s.mode", l->key);
	cleanup_free char *net_key = moat_xasprintf("%s.net", l->key);
	bool shorthand = l->backend_origin.line == l->origin.line && l->backend_origin.col == l->origin.col;
	cleanup_free char *backend_key = shorthand ? moat_xstrdup(l->key) : moat_xasprintf("%s.backend", l->key);
	size_t i;

	if (l->has_mode && l->mode != MOAT_MODE_REQUIRE && j->r->mode < 0)
		return refuse(&l->mode_origin, mode_key,
			      l->mode == MOAT_MODE_OFF ? "mode = \"off\" runs the command unsandboxed"
						       : "mode = \"prefer\" runs it with less than asked where the host "
							 "lacks a feature (the default is require)",
			      l->mode == MOAT_MODE_OFF ? "--mode off" : "--mode prefer", err);
	if (l->backend && strcmp(l->backend, "none") == 0 && !j->r->backend_given)
		return refuse(&l->backend_origin, backend_key, "backend \"none\" runs the command unsandboxed",
			      "--backend none", err);
	if (l->has_net && l->net == MOAT_NET_ALL)
		say(j, &l->net_origin, net_key, "net = \"all\" opens the whole network");
	for (i = 0; i < l->n_paths; i++)
		if (reaches_past_project(j, &l->paths[i])) {
			cleanup_free char *what =
			    moat_xasprintf("grants %s %s, outside the project",
					   l->paths[i].access == MOAT_ACCESS_WRITE ? "writing" : "reading", l->paths[i].path);
			say(j, &l->paths[i].origin, l->paths[i].key, what);
		}
	for (i = 0; i < l->n_unprotect; i++) {
		cleanup_free char *what =
		    moat_xasprintf("lifts the protection of %s (code the host runs later)", l->unprotect[i].path);
		say(j, &l->unprotect[i].origin, l->unprotect[i].key, what);
	}
	if (l->has_unix_sockets && l->unix_sockets)
		say(j, &l->origin, l->key, "unix_sockets = true lets the command reach a host socket in its grants");
	for (i = 0; i < l->n_env_pass; i++) {
		cleanup_free char *what = moat_xasprintf("passes the host's %s to the command", l->env_pass[i].name);
		say(j, &l->env_pass[i].origin, l->env_pass[i].key, what);
	}
	return 0;
}

/* The server's own env: a value naming a variable takes it from moat's
 * environment (`"$GITHUB_TOKEN"`), as does a name of env_vars. */
static void judge_server_env(const struct judge *j, const struct config_server *srv)
{
	size_t i;

	for (i = 0; i < srv->n_env; i++) {
		bool has_ref = false;
		cleanup_free char *val = NULL;

		if (config_expand_vars(srv->env[i].value, (char *const[]){NULL}, &val, &has_ref, NULL, NULL) == 0 &&
		    has_ref) {
			cleanup_free char *what =
			    moat_xasprintf("sets %s from the host's environment (%s)", srv->env[i].name, srv->env[i].value);
			say(j, &srv->env[i].origin, srv->env[i].key, what);
		}
	}
	for (i = 0; i < srv->n_env_vars; i++) {
		cleanup_free char *what = moat_xasprintf("passes the host's %s to the command", srv->env_vars[i].name);
		say(j, &srv->env_vars[i].origin, srv->env_vars[i].key, what);
	}
}

int config_project_judge(const struct moat_config *c, const struct config_server *srv,
			 const struct config_layer *const *layers, size_t n, const char *builtin,
			 const struct config_request *r, struct moat_error *err)
{
	cleanup_free char *home = path_home_for_rules(config_getenv(r->env, "HOME"));
	/* Only a built-in profile that gives more than the default (strict
	 * gives less): network opens the whole network, exec the working
	 * directory to write where a server's default (mcp) does not. */
	const char *looser = !builtin || r->profile		? NULL
			     : strcmp(builtin, "network") == 0	? "opens the whole network"
			     : srv && strcmp(builtin, "exec") == 0 ? "grants the working directory writable"
								: NULL;
	struct judge j = {.r = r, .home = home};
	int rc = 0;

	if (!r->project_check || config_file_is_users(c->file, r->env))
		return 0;
	project_roots_init(&j.roots, c->dir, home);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = judge_layer(&j, layers[i], err);
	if (rc == 0 && looser) {
		cleanup_free char *what = moat_xasprintf("starts from the built-in profile %s, which %s", builtin, looser);
		for (size_t i = 0; i < n; i++)
			if (layers[i]->profile) {
				say(&j, &layers[i]->profile_origin, layers[i]->key, what);
				break;
			}
	}
	if (rc == 0 && srv)
		judge_server_env(&j, srv);
	project_roots_free(&j.roots);
	return rc;
}
