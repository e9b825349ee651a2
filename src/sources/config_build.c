/* From a loaded config to the policy: the profile (built-in, then the user
 * profiles it extends), [sandbox], the server's sandbox, the server's
 * environment.  What depends on the host is checked here: the command, the
 * server's cwd, and in mode require that every path to read or write exists
 * (a path that is missing in mode prefer grants nothing, and is skipped).
 * The selected server's metadata for the report is made here too. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/netdest.h"
#include "policy/properties.h"
#include "policy/profiles.h"
#include "sources/config.h"
#include "sources/config_common.h"
#include "sources/resolve.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"


void config_known_servers(const struct moat_config *c, char *buf, size_t len)
{
	size_t i, o = 0;

	buf[0] = '\0';
	for (i = 0; i < c->n_servers && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", c->servers[i].name);
	if (c->n_servers == 0)
		snprintf(buf, len, "none: the file defines no [mcp_servers]");
}

static int unknown_server(const struct moat_config *c, const char *name, struct moat_error *err)
{
	char list[1024];

	config_known_servers(c, list, sizeof(list));
	for (size_t i = 0; i < c->n_project_servers; i++)
		if (strcmp(c->project_servers[2 * i], name) == 0) {
			moat_error_set(err, MOAT_E_CONFIG, 0,
				       "%s: \"%s\" is a server of the project %s (Claude Code's local scope, "
				       "projects.\"%s\".mcpServers), which moat run --config does not read",
				       c->file, name, c->project_servers[2 * i + 1], c->project_servers[2 * i + 1]);
			return moat_error_hint(err,
					       "in that project, `moat mcp wrap --server %s` runs it under moat for Claude "
					       "Code; or copy its entry into the file's mcpServers (the servers here: %s)",
					       name, list);
		}
	moat_error_set(err, MOAT_E_CONFIG, 0, "%s: no server named \"%s\"", c->file, name);
	return moat_error_hint(err, "known servers: %s", list);
}

int config_collect_layers(const struct moat_config *c, const struct config_server *srv, const char *profile,
			  const struct config_layer **layers, size_t *n, const char **builtin,
			  struct moat_error *err)
{
	cleanup_free const struct config_profile **chain = moat_xcalloc(c->n_profiles + 1, sizeof(*chain));
	const struct config_profile *pr;
	size_t depth = 0, i;
	const char *name = profile;

	while (name && depth < c->n_profiles && (pr = config_find_profile(c, name)) != NULL) {
		chain[depth++] = pr;
		name = pr->layer.profile;
	}
	if (!name)
		name = "strict"; /* a user profile without `extends` */
	if (!profile_is_builtin(name)) {
		char list[1024];
		size_t o = (size_t)snprintf(list, sizeof(list), "strict, exec, mcp, network");

		for (i = 0; i < c->n_profiles && o < sizeof(list); i++)
			o += (size_t)snprintf(list + o, sizeof(list) - o, ", %s", c->profiles[i].name);
		moat_error_set(err, MOAT_E_USAGE, 0, "unknown profile '%s' (neither built in nor in %s)", name,
			       c->file);
		return moat_error_hint(err, "known profiles: %s", list);
	}
	*builtin = name;
	*n = 0;
	for (i = depth; i-- > 0;)
		layers[(*n)++] = &chain[i]->layer;
	if (c->defaults.present)
		layers[(*n)++] = &c->defaults;
	if (srv && srv->sandbox.present)
		layers[(*n)++] = &srv->sandbox;
	return 0;
}

static int check_exists(const struct config_path *r, struct moat_error *err)
{
	struct stat st;

	if (r->access == MOAT_ACCESS_DENY || stat(r->path, &st) == 0)
		return 0;
	if (errno == ENOENT || errno == ENOTDIR) {
		config_fail(err, &r->origin, r->key, "%s does not exist; expected an existing path (mode require)",
			    r->path);
		return moat_error_hint(err,
				       "create it, remove it from %s, or set mode = \"prefer\" to skip "
				       "missing paths",
				       r->key);
	}
	return config_fail(err, &r->origin, r->key, "%s: %s", r->path, strerror(errno));
}

static int apply_layer(const struct config_layer *l, const struct config_request *req, struct moat_policy *p,
		       struct moat_error *err)
{
	size_t i;

	if (l->backend) {
		free(p->backend);
		p->backend = moat_xstrdup(l->backend);
	}
	/* Destinations without `net` in the same layer mean net allow. */
	if (l->has_net)
		p->net = l->net;
	else if (l->n_net_allow || l->n_net_sets)
		p->net = MOAT_NET_ALLOW;
	for (i = 0; i < l->n_net_allow; i++) {
		struct moat_net_dest d;
		net_dest_copy(&d, &l->net_allow[i]);
		policy_add_net_dest(p, &d);
	}
	/* A set's entries come from this host's configuration of its tools,
	 * for the command's cwd. */
	for (i = 0; i < l->n_net_sets; i++) {
		const struct config_netset *ns = &l->net_sets[i];
		struct netset_host h = {.env = req->env ? req->env : (char *const[]){NULL}, .cwd = p->cwd};

		if (netset_expand(ns->mask, &h, ns->origin, p, req->notes, err) < 0)
			return moat_error_wrap(err, "%s:%d:%d: %s: %s", ns->origin.source, ns->origin.line,
					       ns->origin.col, ns->key, ns->text);
	}
	for (i = 0; i < l->n_net_pins; i++) {
		struct moat_net_pin pin;
		net_pin_copy(&pin, &l->net_pins[i]);
		policy_add_net_pin(p, &pin);
	}
	for (i = 0; i < l->n_paths; i++) {
		const struct config_path *r = &l->paths[i];
		/* In mode prefer a missing path is skipped: it grants nothing. */
		bool optional = r->access != MOAT_ACCESS_DENY && p->mode != MOAT_MODE_REQUIRE;
		policy_add_path(p, r->path, r->access, optional, r->origin);
	}
	for (i = 0; i < l->n_unprotect; i++)
		policy_add_unprotect(p, l->unprotect[i].path, l->unprotect[i].origin);
	if (l->has_unix_sockets)
		p->unix_sockets = l->unix_sockets;
	for (i = 0; i < l->n_env_pass; i++)
		policy_add_env(p, l->env_pass[i].name, NULL, l->env_pass[i].origin);
	p->require |= l->require;
	limits_overlay(&p->limits, &l->limits);
	return 0;
}

/* A writable path the file also denies is a contradiction (policy_validate
 * says the same for the command line; here it can name the key). */
static int check_contradictions(const struct config_layer *const *layers, size_t n, const struct moat_policy *p,
				struct moat_error *err)
{
	size_t i, j, k;

	for (i = 0; i < n; i++)
		for (j = 0; j < layers[i]->n_paths; j++) {
			const struct config_path *w = &layers[i]->paths[j];

			if (w->access != MOAT_ACCESS_WRITE)
				continue;
			for (k = 0; k < p->n_paths; k++) {
				const struct moat_path_rule *d = &p->paths[k];

				if (d->access != MOAT_ACCESS_DENY || d->optional || strcmp(d->path, w->path) != 0)
					continue;
				if (d->origin.line > 0)
					config_fail(
					    err, &w->origin, w->key,
					    "%s is both writable and denied (at %s:%d:%d); expected one of the two",
					    w->path, d->origin.source, d->origin.line, d->origin.col);
				else
					config_fail(err, &w->origin, w->key,
						    "%s is both writable and denied (by %s); expected one of the two",
						    w->path, d->origin.source);
				return moat_error_hint(err, "remove it from one of the two lists");
			}
		}
	return 0;
}

static int server_cwd(const struct config_server *srv, struct moat_error *err)
{
	struct stat st;

	if (stat(srv->cwd, &st) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return config_fail(err, &srv->cwd_origin, srv->cwd_key,
					   "%s does not exist; expected a directory", srv->cwd);
		return config_fail(err, &srv->cwd_origin, srv->cwd_key, "%s: %s", srv->cwd, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return config_fail(err, &srv->cwd_origin, srv->cwd_key, "%s is not a directory", srv->cwd);
	return 0;
}

static int set_command(const struct moat_config *c, const struct config_server *srv, const struct config_request *r,
		       struct moat_policy *p, struct moat_error *err)
{
	size_t n = (srv ? srv->argc : 0) + r->argc, i, o = 0;
	cleanup_free char **argv = NULL;
	char here[PATH_MAX];

	if (n == 0 || (srv ? srv->argv[0][0] : r->argv[0][0]) == '\0')
		return moat_error_set(err, MOAT_E_USAGE, 0, "empty command: nothing to run");
	argv = moat_xcalloc(n + 1, sizeof(char *));
	for (i = 0; srv && i < srv->argc; i++)
		argv[o++] = srv->argv[i];
	for (i = 0; i < r->argc; i++)
		argv[o++] = r->argv[i];
	policy_set_argv(p, argv, n);

	/* A given cwd is taken through its links, as the command will find
	 * it: the view shows a grant at its real path, and a link it was not
	 * reached through is not in it (sources/cli.c's --cwd). */
	if (r->cwd) {
		p->cwd = moat_xstrdup(realpath(r->cwd, here) ? here : r->cwd);
	} else if (srv && srv->cwd) {
		if (server_cwd(srv, err) < 0)
			return -1;
		p->cwd = moat_xstrdup(realpath(srv->cwd, here) ? here : srv->cwd);
	} else {
		if (resolve_cwd(here, sizeof(here), err) < 0)
			return -1;
		p->cwd = moat_xstrdup(here);
	}

	/* A server's relative command ("./bin/server") is relative to the
	 * file that names it, like every other path in the file. */
	p->exe = resolve_command(p->argv[0], config_getenv(r->env, "PATH"), srv ? c->dir : p->cwd, err);
	if (!p->exe) {
		if (r->lenient_exe) {
			p->exe = moat_xstrdup(p->argv[0]);
			return 0;
		}
		if (srv)
			moat_error_wrap(err, "%s:%d:%d: %s.command", srv->command_origin.source,
					srv->command_origin.line, srv->command_origin.col, srv->key);
		if (srv && srv->install_hint && err->kind == MOAT_E_NOTFOUND)
			moat_error_hint(err, "%s", srv->install_hint);
		if (!r->exe_err)
			return -1;
		/* The run that cannot start is reported by the caller. */
		*r->exe_err = *err;
		memset(err, 0, sizeof(*err));
		p->exe = moat_xstrdup(p->argv[0]);
	}
	return 0;
}

/* A server moat does not start: one it cannot run (remote, ...), or one
 * its client has disabled. */
static int refuse_server(const struct config_server *srv, const struct config_request *r, struct moat_error *err)
{
	const char *key;

	if (srv->skip) {
		config_fail(err, &srv->skip_origin, srv->skip_key, "%s", srv->skip);
		return moat_error_hint(err, "%s", srv->skip_hint);
	}
	if (!srv->disabled || r->disabled_ok)
		return 0;
	key = strrchr(srv->disabled_key, '.') + 1;
	config_fail(err, &srv->disabled_origin, srv->disabled_key,
		    "server \"%s\" is disabled (%s = %s): its client does not start it, and neither does moat",
		    srv->name, key, strcmp(key, "enabled") == 0 ? "false" : "true");
	return moat_error_hint(err, "set %s = %s in the file (or remove the key) to use it", key,
			       strcmp(key, "enabled") == 0 ? "true" : "false");
}

static void fill_meta(const struct moat_config *c, const struct config_server *srv, struct moat_server_meta *meta)
{
	memset(meta, 0, sizeof(*meta));
	if (!srv)
		return;
	meta->name = moat_xstrdup(srv->name);
	meta->config = moat_xstrdup(c->file);
	meta->optional = srv->optional;
	meta->install_hint = srv->install_hint ? moat_xstrdup(srv->install_hint) : NULL;
	meta->trusted_publisher = srv->trusted_publisher ? moat_xstrdup(srv->trusted_publisher) : NULL;
}

void config_server_meta_free(struct moat_server_meta *m)
{
	free(m->name);
	free(m->config);
	free(m->install_hint);
	free(m->trusted_publisher);
	memset(m, 0, sizeof(*m));
}

json_t *config_server_meta_json(const struct moat_server_meta *m)
{
	if (!m->name)
		return json_null();
	return json_pack("{s:s, s:s, s:b, s:o, s:o}", "name", m->name, "config", m->config ? m->config : "", "optional",
			 m->optional, "install_hint", m->install_hint ? json_string(m->install_hint) : json_null(),
			 "trusted_publisher", m->trusted_publisher ? json_string(m->trusted_publisher) : json_null());
}

const char *config_server_profile(const struct moat_config *c, const struct config_server *srv)
{
	return srv && srv->sandbox.profile ? srv->sandbox.profile
	       : c->defaults.profile	    ? c->defaults.profile
	       : srv			    ? MOAT_SERVER_DEFAULT_PROFILE
					    : MOAT_DEFAULT_PROFILE;
}

int config_build(const struct moat_config *c, const struct config_request *r, struct moat_policy *p,
		 struct moat_server_meta *meta, struct moat_error *err)
{
	const struct config_server *srv = NULL;
	cleanup_free const struct config_layer **layers = moat_xcalloc(c->n_profiles + 3, sizeof(*layers));
	const char *profile, *builtin = NULL;
	cleanup_free char *home = path_home_for_rules(config_getenv(r->env, "HOME")); /* util/path.h */
	struct profile_context ctx;
	size_t n_layers = 0, i, j;

	if (r->server && !(srv = config_find_server(c, r->server)))
		return unknown_server(c, r->server, err);
	if (srv && refuse_server(srv, r, err) < 0)
		return -1;
	if (set_command(c, srv, r, p, err) < 0)
		return -1;

	profile = r->profile ? r->profile : config_server_profile(c, srv);
	if (config_collect_layers(c, srv, profile, layers, &n_layers, &builtin, err) < 0 ||
	    config_project_judge(c, srv, layers, n_layers, builtin, r, err) < 0)
		return -1;

	/* The mode is known before any path is added: it decides whether a
	 * missing path is an error or is skipped. */
	p->mode = MOAT_MODE_REQUIRE;
	for (i = 0; i < n_layers; i++)
		if (layers[i]->has_mode)
			p->mode = layers[i]->mode;
	if (r->mode >= 0)
		p->mode = (enum moat_mode)r->mode;

	ctx = (struct profile_context){
	    .home = home, .cwd = p->cwd, .exe = p->exe, .argv = p->argv,
	    .other_host = r->other_host};
	if (profile_apply(p, builtin, &ctx, err) < 0)
		return -1;
	for (i = 0; i < n_layers; i++)
		if (apply_layer(layers[i], r, p, err) < 0)
			return -1;
	/* Contradictions first: they are wrong on every host. */
	if (check_contradictions(layers, n_layers, p, err) < 0)
		return -1;
	for (i = 0; i < n_layers && p->mode == MOAT_MODE_REQUIRE; i++)
		for (j = 0; j < layers[i]->n_paths; j++)
			if (check_exists(&layers[i]->paths[j], err) < 0)
				return -1;
	free(p->profile);
	p->profile = moat_xstrdup(profile);

	if (srv) {
		for (i = 0; i < srv->n_env_vars; i++)
			policy_add_env(p, srv->env_vars[i].name, NULL, srv->env_vars[i].origin);
		for (i = 0; i < srv->n_env; i++) {
			cleanup_free char *val = NULL;

			/* Syntax was checked at load; this cannot fail. */
			if (config_expand_vars(srv->env[i].value, r->env ? r->env : (char *const[]){NULL}, &val, NULL,
					       NULL, NULL) < 0)
				return config_fail(err, &srv->env[i].origin, srv->env[i].key, "bad variable reference");
			policy_add_env(p, srv->env[i].name, val, srv->env[i].origin);
		}
	}
	if (meta)
		fill_meta(c, srv, meta);
	return 0;
}

/* A layer the build would apply had a problem when it was loaded: building
 * on it would only say the same again, or something that follows from it. */
static bool builds_on_broken(const struct moat_config *c, const struct config_server *srv, const char *profile)
{
	const struct config_profile *pr;
	size_t depth = 0;

	if (c->defaults.broken || (srv && srv->broken))
		return true;
	if (!profile)
		profile = srv && srv->sandbox.profile ? srv->sandbox.profile : c->defaults.profile;
	for (; profile && depth <= c->n_profiles && (pr = config_find_profile(c, profile)); depth++) {
		if (pr->layer.broken)
			return true;
		profile = pr->layer.profile;
	}
	return false;
}

int config_check(struct moat_config *c, char *const *env, struct moat_error *err)
{
	char true_cmd[] = "true";
	char *placeholder[] = {true_cmd, NULL};
	size_t i;

	/* Every server moat can run (a disabled one too: it may be enabled
	 * later), then every user profile and the [sandbox] defaults on their
	 * own, with a placeholder command. */
	for (i = 0; i <= c->n_servers + c->n_profiles; i++) {
		struct config_request r = {.mode = -1, .env = env, .lenient_exe = true, .disabled_ok = true};
		struct moat_error e = {0};
		struct moat_policy p;
		int rc;

		if (i < c->n_servers) {
			if (c->servers[i].skip)
				continue;
			r.server = c->servers[i].name;
		} else {
			r.argv = placeholder;
			r.argc = 1;
			if (i < c->n_servers + c->n_profiles)
				r.profile = c->profiles[i - c->n_servers].name;
			else if (c->n_servers > 0 || c->n_profiles > 0)
				continue;
		}
		if (builds_on_broken(c, r.server ? &c->servers[i] : NULL, r.profile))
			continue;
		policy_init(&p);
		rc = config_build(c, &r, &p, NULL, &e);
		if (rc == 0)
			rc = policy_validate(&p, &e);
		policy_free(&p);
		if (rc < 0)
			config_add_problem(c, &e);
	}
	if (c->n_problems == 0)
		return 0;
	*err = c->problems[0];
	return -1;
}
