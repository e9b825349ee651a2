/* What the package runners' modules share (sources/runner_parts.h): the
 * cache, the fetch phase's sandbox and the server phase's command, for
 * npm's runners (sources/runners.c) and pipx's (sources/runner_pipx.c).
 * Apart from both, so that neither calls the other back. */
#include "sources/runner_parts.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "policy/netdest.h"
#include "policy/profiles.h"
#include "sources/config_common.h"
#include "sources/resolve.h"
#include "util/cleanup.h"
#include "util/projpath.h"
#include "util/file.h"
#include "util/mem.h"
#include "util/mkdirs.h"
#include "util/ownfile.h"
#include "util/path.h"
#include "util/sha256.h"

void runner_free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void runner_as_written(struct runner_call *rc, bool note, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	free(rc->why);
	rc->why = moat_xvasprintf(fmt, ap);
	va_end(ap);
	rc->state = RUNNER_AS_WRITTEN;
	rc->note = note;
}

/* `path` with its longest existing leading part followed through its
 * links; as given when not even "/"'s child resolves. */
static char *resolve_existing(const char *path)
{
	cleanup_free char *head = moat_xstrdup(path);
	char real[PATH_MAX], *slash;

	while (!realpath(head, real)) {
		if (errno != ENOENT || !(slash = strrchr(head, '/')) || slash == head)
			return moat_xstrdup(path);
		*slash = '\0';
	}
	return moat_xasprintf("%s%s", strcmp(real, "/") == 0 ? "" : real, path + strlen(head));
}

/* Through links: the cache is granted writable, and a write grant must
 * name the real directory (a link in a writable place can be swapped), so
 * with HOME=/home/u and /home -> var/home (Fedora's Atomic desktops) every
 * npx run was refused at its fetch phase. */
char *runner_cache_root(char *const *env)
{
	const char *x = config_getenv(env, "XDG_CACHE_HOME"), *home = config_getenv(env, "HOME");
	cleanup_free char *lexical = NULL;
	uid_t owner;

	if (x && x[0] == '/')
		lexical = moat_xasprintf("%s/moat", x);
	else if (home && home[0] == '/')
		lexical = moat_xasprintf("%s/.cache/moat", strcmp(home, "/") == 0 ? "" : home);
	if (!lexical)
		return NULL;
	/* Another user's HOME (root's moat from `su` keeps the user's) or a
	 * link of theirs on the way: not followed, so that runner_cache_open
	 * finds it and refuses it. */
	if (path_foreign_on_way(lexical, &owner))
		return steal_ptr(&lexical);
	return resolve_existing(lexical);
}

int runner_cache_open(const char *root, struct moat_error *err)
{
	cleanup_free char *parent = moat_xstrdup(root);
	cleanup_close int pfd = -1;
	char *slash = strrchr(parent, '/');
	uid_t owner;
	size_t bad = path_foreign_on_way(root, &owner);

	/* Another user who owns a directory on the way (their HOME, given to
	 * root's moat) or a link there (their ~/.cache -> /etc) would choose
	 * where moat makes its cache, as root, and grants it writable: not
	 * used (EACCES: the package caches then take /tmp/moat-pkg-UID). */
	if (bad) {
		moat_error_set(err, MOAT_E_USAGE, EACCES,
			       "%s: %.*s belongs to uid %u, neither moat's user (uid %u) nor root", root, (int)bad,
			       root, (unsigned)owner, (unsigned)geteuid());
		return moat_error_hint(err, "set XDG_CACHE_HOME (or HOME) to a directory of yours");
	}
	if (slash == parent)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (mkdir(parent, 0700) != 0 && errno != EEXIST)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "making %s", parent);
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return moat_error_set(err, MOAT_E_SYSTEM, errno, "%s", parent);
	return own_dir_at(pfd, strrchr(root, '/') + 1, root, err);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What each tool's fetch is given of the user's own settings: --env
 * PREFIX_X (PREFIX in any case), but for the X that moat sets for the
 * phase.  Of those, the ones whose X ends in one of `sources` name where
 * packages come from (npm's @scope:registry, pip's find-links): the cache's
 * key covers them.  Not the others: moat adds some of them itself (under
 * --net none npm_config_fetch_retries=0), and a retry count is not another
 * registry. */
struct runner_tool {
	const char *prefix;
	const char *const *owned;
	size_t n_owned;
	const char *const *sources;
	size_t n_sources;
};

static const char *const npm_owned[] = {"cache", "offline", "registry", "yes", "userconfig", "globalconfig"};
static const char *const pnpm_owned[] = {"cache_dir",
					 "store_dir",
					 "state_dir",
					 "registry",
					 "offline",
					 "npmrc_auth_file",
					 "userconfig",
					 "fetch_retries",
					 "fetch_retry_mintimeout",
					 "fetch_retry_maxtimeout",
					 "fetch_timeout",
					 "noproxy"};
static const char *const bun_owned[] = {"REGISTRY"};
static const char *const pip_owned[] = {"INDEX_URL", "EXTRA_INDEX_URL", "RETRIES",     "TIMEOUT",
					"NO_INPUT",  "NO_CACHE_DIR",	"CONFIG_FILE", "DISABLE_PIP_VERSION_CHECK"};
static const char *const npm_sources[] = {"registry"};
static const char *const pip_sources[] = {"FIND_LINKS", "NO_INDEX"};

static const struct runner_tool runner_tools[] = {
    [RUNNER_KIND_NPM] = {"npm_config_", npm_owned, ARRAY_LEN(npm_owned), npm_sources, ARRAY_LEN(npm_sources)},
    [RUNNER_KIND_PNPM] = {"pnpm_config_", pnpm_owned, ARRAY_LEN(pnpm_owned), npm_sources, ARRAY_LEN(npm_sources)},
    [RUNNER_KIND_BUN] = {"BUN_CONFIG_", bun_owned, ARRAY_LEN(bun_owned), npm_sources, ARRAY_LEN(npm_sources)},
    [RUNNER_KIND_PIPX] = {"PIP_", pip_owned, ARRAY_LEN(pip_owned), pip_sources, ARRAY_LEN(pip_sources)},
    [RUNNER_KIND_OTHER] = {NULL, NULL, 0, NULL, 0},
};

static bool user_setting(const char *name, const struct runner_tool *t)
{
	size_t n = t->prefix ? strlen(t->prefix) : 0;

	if (!t->prefix || strncasecmp(name, t->prefix, n) != 0)
		return false;
	for (size_t i = 0; i < t->n_owned; i++)
		if (strcasecmp(name + n, t->owned[i]) == 0)
			return false;
	return true;
}

/* A user's setting that passes to the fetch and names where packages come
 * from. */
static bool source_setting(const char *name, const struct runner_tool *t)
{
	size_t len = strlen(name);

	if (!user_setting(name, t))
		return false;
	for (size_t i = 0; i < t->n_sources; i++) {
		size_t n = strlen(t->sources[i]);

		if (len >= strlen(t->prefix) + n && strcasecmp(name + len - n, t->sources[i]) == 0)
			return true;
	}
	return false;
}

/* A registry's URL (or pip's list of them) as the key takes it: the scheme
 * and host in lower case, no trailing '/', so that one registry written two
 * ways is one cache. */
static char *registry_normal(const char *list)
{
	cleanup_free char *copy = moat_xstrdup(list);
	char *save = NULL, *tok, *out = moat_xstrdup("");

	for (tok = strtok_r(copy, " \t\n\r", &save); tok; tok = strtok_r(NULL, " \t\n\r", &save)) {
		char *host = strstr(tok, "://"), *next;
		size_t len = strlen(tok);

		for (char *c = tok; *c && (!host || c < host + 3 + strcspn(host + 3, "/?#")); c++)
			*c = (char)tolower((unsigned char)*c);
		while (len > 1 && tok[len - 1] == '/')
			tok[--len] = '\0';
		next = moat_xasprintf("%s%s%s", out, *out ? " " : "", tok);
		free(out);
		out = next;
	}
	return out;
}

/* The key of the default registry in rc->fetch_urls: told on its own, as
 * rc->fetch_registry. */
static const char *default_key(const struct runner_call *rc)
{
	return rc->kind == RUNNER_KIND_PIPX ? "index-url" : "registry";
}

/* One cache per package list, options, registries and settings of the
 * fetch: an install script can write only the cache of the package that
 * brought it, so it cannot change what another server runs; and what a
 * registry served (the one a cloned repository's .npmrc names, say) is
 * never what a fetch from another registry would have been.  The fetch
 * writes anything it likes in its cache, so a note there of where the
 * install came from could not be believed: the registries are the key. */
char *runner_cache_key(const struct runner_call *rc, const struct moat_policy *server)
{
	cleanup_free char **sorted = moat_xcalloc(rc->n_packages, sizeof(char *));
	cleanup_free char *text = NULL, *reg = registry_normal(rc->fetch_registry ? rc->fetch_registry : "");
	const struct runner_tool *t = &runner_tools[rc->kind];
	char hex[65];

	text = moat_xasprintf("%s\t%s", default_key(rc), reg);
	memcpy(sorted, rc->packages, rc->n_packages * sizeof(char *));
	qsort(sorted, rc->n_packages, sizeof(char *), cmp_str);
	for (size_t i = 0; i < rc->n_packages; i++) {
		char *next = moat_xasprintf("%s\n%s", text, sorted[i]);
		free(text);
		text = next;
	}
	/* The options the fetch is given too (bun's --trust runs install
	 * scripts): another install, another cache. */
	for (size_t i = 0; i < rc->n_fetch_args; i++) {
		char *next = moat_xasprintf("%s\n\t%s", text, rc->fetch_args[i]);
		free(text);
		text = next;
	}
	for (size_t i = 0; i < rc->fetch_urls.n; i++) {
		cleanup_free char *url = NULL;
		char *next;

		if (strcmp(rc->fetch_urls.keys[i], default_key(rc)) == 0)
			continue;
		url = registry_normal(rc->fetch_urls.urls[i]);
		next = moat_xasprintf("%s\n%s\t%s", text, rc->fetch_urls.keys[i], url);
		free(text);
		text = next;
	}
	for (size_t i = 0; i < server->n_env; i++)
		if (source_setting(server->env[i].name, t)) {
			char *next = moat_xasprintf("%s\nenv\t%s=%s", text, server->env[i].name,
						    server->env[i].value ? server->env[i].value : "");
			free(text);
			text = next;
		}
	sha256_hex(text, strlen(text), hex);
	hex[16] = '\0';
	return moat_xstrdup(hex);
}

void runner_cache_registries(const struct runner_call *rc, struct netset_urls *out)
{
	memset(out, 0, sizeof(*out));
	if (!rc->cache || !rc->fetch_registry)
		return;
	netset_urls_add(out, default_key(rc), rc->fetch_registry);
	for (size_t i = 0; i < rc->fetch_urls.n; i++)
		netset_urls_add(out, rc->fetch_urls.keys[i], rc->fetch_urls.urls[i]);
}

void runner_add_package(struct runner_call *rc, const char *spec)
{
	size_t cap = rc->n_packages;

	rc->packages = moat_xgrow(rc->packages, &cap, rc->n_packages, sizeof(char *));
	rc->packages[rc->n_packages++] = moat_xstrdup(spec);
}

int runner_cache_state(struct runner_call *rc, const struct moat_policy *server, char *const *env, const char *sub,
		       runner_registries_fn registries, struct moat_error *err)
{
	cleanup_free char *root = runner_cache_root(env), *key = NULL;

	if (!root) {
		moat_error_set(
		    err, MOAT_E_USAGE, 0,
		    "%s %s: moat fetches the package into its cache, $XDG_CACHE_HOME/moat or ~/.cache/moat, and "
		    "neither XDG_CACHE_HOME nor HOME is set",
		    rc->name, rc->packages[0]);
		return moat_error_hint(err, "set XDG_CACHE_HOME (or HOME) to a directory of yours");
	}
	if (registries(rc, server, env, err) < 0)
		return -1;
	key = runner_cache_key(rc, server);
	rc->cache = moat_xasprintf("%s/%s/%s", root, sub, key);
	return 0;
}

bool runner_found(struct runner_call *rc, char **tree, char **bin, char **version)
{
	free(rc->tree);
	free(rc->bin);
	free(rc->version);
	rc->tree = steal_ptr(tree);
	rc->bin = steal_ptr(bin);
	rc->version = steal_ptr(version);
	return true;
}

char *runner_inside_cache(const struct runner_call *rc, const char *path)
{
	char real[PATH_MAX], cache[PATH_MAX];

	if (!realpath(path, real) || !realpath(rc->cache, cache) || !path_within(real, cache) ||
	    strcmp(real, cache) == 0)
		return NULL;
	return moat_xstrdup(real);
}

bool runner_within_cache(const struct runner_call *rc, const char *path)
{
	cleanup_free char *real = runner_inside_cache(rc, path);

	return real != NULL;
}

static bool net_addr_is_loopback(int family, const unsigned char *a)
{
	static const unsigned char v6_loopback[16] = {[15] = 1};

	return family == AF_INET ? a[0] == 127 : memcmp(a, v6_loopback, 16) == 0;
}

void runner_fetch_env(struct moat_policy *p, const char *name, const char *value)
{
	struct moat_origin o = {.source = RUNNER_FETCH_ORIGIN};

	policy_add_env(p, name, value, o);
}

int runner_allow_url(struct moat_policy *p, const char *url, const char *what, struct moat_error *err)
{
	struct moat_net_dest d;
	struct net_parse_error pe;
	int rc = netset_url_dest(url, &d, &pe);

	if (rc < 0) {
		moat_error_set(err, MOAT_E_USAGE, 0, "%s: %s", what, pe.msg);
		return moat_error_hint(err, "give the registry as http://HOST[:PORT]/ or https://HOST[:PORT]/");
	}
	if (rc == 0)
		return 0;
	d.origin = (struct moat_origin){.source = RUNNER_FETCH_ORIGIN};
	d.from = moat_xasprintf("%s", what);
	policy_add_net_dest(p, &d);
	return 0;
}

void runner_grant_install(struct moat_policy *p, const char *interp, const char *home, const char *source)
{
	cleanup_free char *inst = interp ? profile_install_dir(interp) : NULL;

	if (inst && strcmp(inst, "/") != 0 &&
	    !(home && strncmp(home, inst, strlen(inst)) == 0 &&
	      (home[strlen(inst)] == '/' || home[strlen(inst)] == '\0'))) {
		struct moat_origin o = {.source = source};
		policy_add_path(p, inst, MOAT_ACCESS_READ, true, o);
		p->paths[p->n_paths - 1].from_profile = true;
	}
}

int runner_fetch_sandbox(const struct runner_call *rc, const struct moat_policy *server, const char *home,
			 struct moat_policy *out, struct moat_error *err)
{
	struct moat_origin o = {.source = RUNNER_FETCH_ORIGIN};
	struct profile_context ctx;

	out->cwd = moat_xstrdup(rc->cache);
	out->mode = server->mode;
	free(out->backend);
	out->backend = moat_xstrdup("auto");
	ctx = (struct profile_context){
	    .home = home && home[0] == '/' ? home : NULL, .cwd = out->cwd, .exe = out->exe, .argv = out->argv};
	if (profile_apply(out, "strict", &ctx, err) < 0)
		return -1;
	/* The cache is moat's, not a project the host runs code from later:
	 * nothing in it is protected from the fetch. */
	policy_add_path(out, rc->cache, MOAT_ACCESS_WRITE, false, o);
	policy_add_unprotect(out, rc->cache, o);
	out->net = MOAT_NET_ALLOW;
	out->limits = server->limits;
	if (out->limits.timeout_s <= 0 || out->limits.timeout_s > RUNNER_FETCH_TIMEOUT_S)
		out->limits.timeout_s = RUNNER_FETCH_TIMEOUT_S;
	return 0;
}

int runner_fetch_finish(struct moat_policy *out, const struct moat_policy *server, const struct runner_call *rc,
			struct moat_error *err)
{
	for (size_t i = 0; i < server->n_env; i++)
		if (user_setting(server->env[i].name, &runner_tools[rc->kind]))
			policy_add_env(out, server->env[i].name, server->env[i].value, server->env[i].origin);
	return policy_validate(out, err);
}

void runner_fetch_no_proxy(struct moat_policy *out, const char *first)
{
	cleanup_free char *hosts = runner_loopback_hosts(out), *value = NULL;

	if (!hosts)
		return;
	value = first ? moat_xasprintf("%s,%s", first, hosts) : moat_xstrdup(hosts);
	runner_fetch_env(out, "no_proxy", value);
	runner_fetch_env(out, "NO_PROXY", value);
}

bool runner_is_option(const struct moat_policy *p, size_t *i)
{
	const char *a = p->argv[*i];

	if (strcmp(a, "--") == 0) {
		++*i;
		return false;
	}
	return a[0] == '-' && a[1] != '\0';
}

void runner_fetch_pins(struct moat_policy *out, const struct moat_policy *server)
{
	for (size_t i = 0; i < server->n_net_pins; i++)
		if (net_allow_name_any_port(out, server->net_pins[i].name)) {
			struct moat_net_pin pin;
			net_pin_copy(&pin, &server->net_pins[i]);
			policy_add_net_pin(out, &pin);
		}
}

char *runner_loopback_hosts(const struct moat_policy *p)
{
	char *hosts = NULL;
	size_t i;

	for (i = 0; i < p->n_net_allow; i++) {
		const struct moat_net_dest *d = &p->net_allow[i];
		char addr[64];
		const char *host = d->name ? d->name : net_addr_text(d->family, d->addr, addr, sizeof(addr));
		char *next;

		if (!d->loopback_only || !host)
			continue;
		next = hosts ? moat_xasprintf("%s,%s", hosts, host) : moat_xstrdup(host);
		free(hosts);
		hosts = next;
	}
	for (i = 0; i < p->n_net_pins; i++) {
		const struct moat_net_pin *pin = &p->net_pins[i];
		char *next;

		if (!net_addr_is_loopback(pin->family, pin->addr))
			continue;
		next = hosts ? moat_xasprintf("%s,%s", hosts, pin->name) : moat_xstrdup(pin->name);
		free(hosts);
		hosts = next;
	}
	return hosts;
}

void runner_server_command(struct moat_policy *p, const struct runner_call *rc, char *const *env, const char *bin_dir)
{
	struct moat_origin o = {.source = "package runner: the fetched package"};
	const struct moat_env_rule *path = policy_find_env(p, "PATH");
	const char *path_val = path && path->value ? path->value : config_getenv(env, "PATH");
	size_t n = 1 + (p->argc > rc->args_at ? p->argc - rc->args_at : 0), i;
	char **argv = moat_xcalloc(n + 1, sizeof(char *));
	cleanup_free char *newpath = NULL;

	/* Copies: policy_set_argv frees the argv they come from. */
	argv[0] = moat_xstrdup(rc->bin);
	for (i = 1; i < n; i++)
		argv[i] = moat_xstrdup(p->argv[rc->args_at + i - 1]);
	policy_set_argv(p, argv, n);
	runner_free_strs(argv, n);
	free(p->exe);
	p->exe = moat_xstrdup(rc->bin);
	policy_add_path(p, rc->tree, MOAT_ACCESS_READ, false, o);
	p->paths[p->n_paths - 1].from_profile = true;
	newpath = moat_xasprintf("%s:%s", bin_dir, path_val ? path_val : "/usr/bin:/bin");
	policy_add_env(p, "PATH", newpath, o);
}

/* ---- npm packages (npm, pnpm and bun fetch them alike) ---- */

/* A registry package spec: [@scope/]name[@version-or-range-or-tag].  The
 * name's length into *name_len, the version part (or "") into *version.
 * Paths, URLs, git repositories and aliases are not. */
bool runner_registry_spec(const char *spec, size_t *name_len, const char **version)
{
	const char *c = spec, *at;

	if (spec[0] == '@') {
		const char *slash = strchr(spec, '/');
		if (!slash || slash == spec + 1)
			return false;
		c = slash + 1;
	} else if (strchr(spec, '/')) {
		return false; /* a path, a URL, or a GitHub user/repo */
	}
	at = strchr(c, '@');
	*name_len = at ? (size_t)(at - spec) : strlen(spec);
	*version = at ? at + 1 : "";
	if (c == spec + *name_len || *c == '.' || *c == '_')
		return false;
	for (const char *k = spec; k < spec + *name_len; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || strchr("-._~@/", *k)))
			return false; /* npm names are lower case; anything else is not a name */
	return !strchr(*version, ':') && !strchr(*version, '/');
}

json_t *runner_json_load(const char *file)
{
	cleanup_fclose FILE *f = file_open_regular(file, 256 * FILE_SMALL_MAX);

	return f ? json_loadf(f, 0, NULL) : NULL;
}

/* package.json's "version" and the command of its "bin": `cmd` when named,
 * else the only one, else the one named after the package (npm's
 * getBinFromManifest). */
bool runner_read_manifest(const char *file, const char *name, size_t name_len, const char *cmd, char **version,
			  char **bin)
{
	json_t *m = runner_json_load(file), *b;
	const char *v, *unscoped = name, *key = NULL;
	bool ok = false;

	if (!m)
		return false;
	for (const char *s = name; s < name + name_len; s++)
		if (*s == '/')
			unscoped = s + 1;
	v = json_string_value(json_object_get(m, "version"));
	b = json_object_get(m, "bin");
	if (cmd)
		key = cmd;
	else if (json_is_string(b))
		key = unscoped;
	else if (json_is_object(b) && json_object_size(b) == 1)
		key = json_object_iter_key(json_object_iter(b));
	else if (json_is_object(b) && json_object_getn(b, unscoped, name_len - (size_t)(unscoped - name)))
		key = unscoped;
	if (v && key) {
		*version = moat_xstrdup(v);
		*bin = moat_xstrndup(key, key == unscoped ? name_len - (size_t)(unscoped - name) : strlen(key));
		ok = true;
	}
	json_decref(m);
	return ok;
}

char *runner_lookup(const char *name, const char *path_env, const char *cwd, const char *home,
		    struct moat_error *err)
{
	cleanup_free char *outside = path_outside_project(path_env, cwd, home);

	return resolve_command(name, outside, "/", err);
}

/* The node beside `beside` (npm's own directory; NULL: none), else the one
 * on PATH (npm's `#!/usr/bin/env node`; what install scripts run with):
 * its installation read-only (an nvm node under HOME). */
void runner_grant_node(struct moat_policy *p, const char *beside, const char *path_env, const char *cwd,
		       const char *home)
{
	cleanup_free char *dir = moat_xstrdup(beside ? beside : ""), *node = NULL;
	struct moat_error ignored = {0};
	char *s = strrchr(dir, '/');

	if (s)
		*s = '\0';
	node = moat_xasprintf("%s/node", dir);
	if (!beside || access(node, X_OK) != 0) {
		free(node);
		node = runner_lookup("node", path_env, cwd, home, &ignored);
	}
	runner_grant_install(p, node, home, "package runner: the node that runs the package manager");
}

/* The variables that name the registry to each npm-like tool, in the order
 * runner_registries looks for them: what pnpm reads (besides .npmrc files,
 * which @npm reads), what bun reads. */
static const char *const npm_vars[] = {"npm_config_registry"};
static const char *const pnpm_vars[] = {"pnpm_config_registry", "PNPM_CONFIG_REGISTRY", "npm_config_registry"};
static const char *const bun_vars[] = {"BUN_CONFIG_REGISTRY", "npm_config_registry"};

int runner_registries(struct runner_call *rc, const struct moat_policy *server, char *const *env,
		      struct moat_error *err)
{
	struct netset_host h = {.env = env, .cwd = server->cwd};
	const char *const *vars = rc->kind == RUNNER_KIND_PNPM	? pnpm_vars
				  : rc->kind == RUNNER_KIND_BUN ? bun_vars
								: npm_vars;
	size_t n_vars = rc->kind == RUNNER_KIND_PNPM  ? ARRAY_LEN(pnpm_vars)
			: rc->kind == RUNNER_KIND_BUN ? ARRAY_LEN(bun_vars)
						      : ARRAY_LEN(npm_vars);
	cleanup_free char *what = NULL;
	const char *reg = rc->registry;

	netset_urls_free(&rc->fetch_urls);
	if (netset_npm_urls(&h, &rc->fetch_urls, err) < 0)
		return moat_error_wrap(err, "%s: the registry to fetch %s from", rc->name, rc->packages[0]);
	if (reg)
		what = moat_xstrdup("the runner's --registry");
	for (size_t k = 0; k < n_vars && !reg; k++) {
		for (size_t i = 0; i < server->n_env; i++)
			if (strcasecmp(server->env[i].name, vars[k]) == 0 && server->env[i].value) {
				reg = server->env[i].value;
				free(what);
				what = moat_xasprintf("--env %s", server->env[i].name);
			}
		/* moat's own environment: npm's variable is @npm's already. */
		if (!reg && strncasecmp(vars[k], "npm_config_", 11) != 0 && config_getenv(env, vars[k])) {
			reg = config_getenv(env, vars[k]);
			what = moat_xasprintf("%s (moat's environment)", vars[k]);
		}
	}
	for (size_t i = 0; i < rc->fetch_urls.n && !reg; i++)
		if (strcmp(rc->fetch_urls.keys[i], "registry") == 0)
			reg = rc->fetch_urls.urls[i];
	free(rc->fetch_registry);
	free(rc->fetch_registry_from);
	/* A registry that is not on the network (file:) names no host for the
	 * allowlist: npm is told its default, which a fetch then cannot reach. */
	rc->fetch_registry = moat_xstrdup(reg ? reg : "https://registry.npmjs.org/");
	rc->fetch_registry_from = steal_ptr(&what);
	return 0;
}

int runner_npm_network(const struct runner_call *rc, const struct moat_policy *server, char *const *env,
		       struct moat_policy *out, struct netset_notes *notes, struct moat_error *err)
{
	struct netset_host h = {.env = env, .cwd = server->cwd};
	struct moat_origin o = {.source = RUNNER_FETCH_ORIGIN};

	if (netset_expand(1u << 0, &h, o, out, notes, err) < 0)
		return moat_error_wrap(err, "%s: the registry to fetch %s from", rc->name, rc->packages[0]);
	if (rc->fetch_registry_from && runner_allow_url(out, rc->fetch_registry, rc->fetch_registry_from, err) < 0)
		return -1;
	/* A registry the project's .npmrc names in a private range is the
	 * user's when his own policy names it (--allow-net 127.0.0.1:4873);
	 * any other is refused here, not dropped: npm, told it (a scope's
	 * too), would go to it, and without it a scope would quietly come
	 * from the default registry instead. */
	for (size_t i = 0; i < out->n_net_allow; i++) {
		struct moat_net_dest *d = &out->net_allow[i];

		if (d->project && net_dest_user_allows(server, d)) {
			free(d->project);
			d->project = NULL;
		}
	}
	if (policy_check_project_net(out, err) < 0)
		return moat_error_wrap(err, "%s: the registry to fetch %s from", rc->name, rc->packages[0]);
	runner_fetch_pins(out, server);
	return 0;
}

void runner_npm_settings(struct moat_policy *out, const char *prefix, const struct runner_call *rc)
{
	static const char *const fail_fast[][2] = {{"fetch_retries", "1"},
						   {"fetch_retry_mintimeout", "1000"},
						   {"fetch_retry_maxtimeout", "2000"},
						   {"fetch_timeout", "30000"},
						   {"update_notifier", "false"}};
	cleanup_free char *noproxy = NULL, *name = moat_xasprintf("%sregistry", prefix);

	runner_fetch_env(out, name, rc->fetch_registry);
	for (size_t i = 0; i < rc->fetch_urls.n; i++) {
		cleanup_free char *scoped = NULL;

		if (strcmp(rc->fetch_urls.keys[i], "registry") == 0)
			continue;
		scoped = moat_xasprintf("%s%s", prefix, rc->fetch_urls.keys[i]);
		runner_fetch_env(out, scoped, rc->fetch_urls.urls[i]);
	}
	for (size_t i = 0; i < ARRAY_LEN(fail_fast); i++) {
		cleanup_free char *setting = moat_xasprintf("%s%s", prefix, fail_fast[i][0]);
		runner_fetch_env(out, setting, fail_fast[i][1]);
	}
	/* A registry on the host's loopback (a local mirror, by address or by
	 * a name pinned there) is reached directly, through the fence, not
	 * through moat's proxy mode: then a registry that is down is the
	 * tool's own ECONNREFUSED, which the fetch phase's message names,
	 * where the proxy would answer 502. */
	noproxy = runner_loopback_hosts(out);
	if (noproxy) {
		cleanup_free char *setting = moat_xasprintf("%snoproxy", prefix);
		runner_fetch_env(out, setting, noproxy);
	}
}
