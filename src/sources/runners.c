/* Package runners (sources/runners.h; docs/policy.md, "Package runners"). */
#include "sources/runners.h"
#include "sources/runner_parts.h"

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
#include "util/mem.h"
#include "util/ownfile.h"
#include "util/path.h"
#include "util/projpath.h"
#include "util/sha256.h"

/* Each runner moat knows: the executable's name, the subcommand words that
 * make it a runner (NULL: none), how moat runs it and the tool that
 * fetches.  uvx is named, so that the user learns why it runs as written,
 * with the command that installs its package first. */
struct runner_def {
	const char *name;
	const char *exe;
	const char *sub[2];   /* the words after the executable; a second alias for the first */
	const char *sub_next; /* a word after sub ("uv tool run"), or NULL */
	enum runner_kind kind;
	const char *tool;  /* what fetches, for messages */
	const char *cache; /* moat's cache directory for it, ROOT/CACHE/KEY */
};

static const struct runner_def runners[] = {
    {"npx", "npx", {NULL, NULL}, NULL, RUNNER_KIND_NPM, "npm", "npx"},
    {"npm exec", "npm", {"exec", "x"}, NULL, RUNNER_KIND_NPM, "npm", "npx"},
    {"pnpm dlx", "pnpm", {"dlx", NULL}, NULL, RUNNER_KIND_PNPM, "pnpm", "pnpm"},
    {"pnpm dlx", "pnpx", {NULL, NULL}, NULL, RUNNER_KIND_PNPM, "pnpm", "pnpm"},
    {"pnpm dlx", "pnx", {NULL, NULL}, NULL, RUNNER_KIND_PNPM, "pnpm", "pnpm"},
    {"bunx", "bunx", {NULL, NULL}, NULL, RUNNER_KIND_BUN, "bun", "bunx"},
    {"bunx", "bun", {"x", NULL}, NULL, RUNNER_KIND_BUN, "bun", "bunx"},
    {"uvx", "uvx", {NULL, NULL}, NULL, RUNNER_KIND_OTHER, "uv", NULL},
    {"uvx", "uv", {"tool", NULL}, "run", RUNNER_KIND_OTHER, "uv", NULL},
    {"pipx run", "pipx", {"run", NULL}, NULL, RUNNER_KIND_PIPX, "pip", "pipx"},
};

/* npx's options (npm's bin/npx-cli.js and `npm exec`): those that change
 * nothing moat decides, and those that take a value.  Any other option
 * could take the next word as its value or not, which moat cannot know
 * for every npm setting: the command then runs as written. */
static const char *const npx_switches[] = {"q",
					   "quiet",
					   "silent",
					   "prefer-offline",
					   "prefer-online",
					   "no-audit",
					   "no-fund",
					   "no-update-notifier",
					   "no-progress",
					   "ignore-scripts"};

void runner_call_free(struct runner_call *rc)
{
	free(rc->why);
	runner_free_strs(rc->packages, rc->n_packages);
	free(rc->cmd);
	free(rc->registry);
	free(rc->fetch_registry);
	free(rc->fetch_registry_from);
	netset_urls_free(&rc->fetch_urls);
	free(rc->cache);
	free(rc->tree);
	free(rc->local_tree);
	free(rc->bin);
	free(rc->version);
	runner_free_strs(rc->fetch_args, rc->n_fetch_args);
	memset(rc, 0, sizeof(*rc));
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* An exact version (1.2.3, 1.2.3-rc.1, 1.2.3+b): what a cached install
 * satisfies without the registry. */
static bool exact_version(const char *v)
{
	int dots = 0;
	const char *c;

	for (c = v; *c && *c != '-' && *c != '+'; c++) {
		if (*c == '.')
			dots++;
		else if (*c < '0' || *c > '9')
			return false;
	}
	return c > v && dots == 2 && c[-1] != '.';
}

/* The package's directory below a node_modules directory has its
 * package.json. */
static bool installed_in(const char *node_modules, const char *name, size_t name_len)
{
	cleanup_free char *f = moat_xasprintf("%s/%.*s/package.json", node_modules, (int)name_len, name);

	return access(f, F_OK) == 0;
}

/* npm's project: the nearest directory upwards from cwd with a package.json
 * or a node_modules, else cwd (as sources/netsets.c finds it for @npm). */
static char *npm_project_dir(const char *cwd)
{
	cleanup_free char *d = moat_xstrdup(cwd);

	for (;;) {
		cleanup_free char *pj = moat_xasprintf("%s/package.json", strcmp(d, "/") == 0 ? "" : d);
		cleanup_free char *nm = moat_xasprintf("%s/node_modules", strcmp(d, "/") == 0 ? "" : d);
		char *s;

		if (access(pj, F_OK) == 0 || access(nm, F_OK) == 0)
			return steal_ptr(&d);
		s = strrchr(d, '/');
		if (!s || strcmp(d, "/") == 0)
			return moat_xstrdup(cwd);
		if (s == d)
			s[1] = '\0';
		else
			*s = '\0';
	}
}

/* Does the runner that was named lie in the project it runs in: its
 * node_modules/.bin, found first on PATH as direnv's `layout node` puts it
 * there, or a .venv's pipx?  Then the tool the fetch phase would run (the
 * npm beside that npx, that pnpm, that pipx) is the repository's own
 * code, and the cache it fills is shared by every project of the user:
 * a later `npx -y PKG` anywhere would run what it put there as cached.
 * Judged by the path as named and where its links lead; never a project
 * of "/" or HOME (a package.json in HOME makes HOME npm's project, and
 * nvm's npx lies there: util/projpath.h). */
static bool runner_in_project(const struct moat_policy *p, const char *home)
{
	cleanup_free char *npm_project = npm_project_dir(p->cwd);
	const char *dirs[] = {p->cwd, p->git_work_tree, npm_project};
	char real[PATH_MAX];
	bool resolved = realpath(p->exe, real) != NULL;

	for (size_t i = 0; i < ARRAY_LEN(dirs); i++)
		if (project_root_candidate(dirs[i], home) && (path_within(p->exe, dirs[i]) || (resolved && path_within(real, dirs[i]))))
			return true;
	return false;
}

/* The global node_modules of the npm that runs: npm's own package sits in
 * it (/usr/lib/node_modules/npm/bin/npx-cli.js). */
static char *npm_global_dir(const char *exe)
{
	char real[PATH_MAX];
	char *hit;

	if (!realpath(exe, real) || !(hit = strstr(real, "/node_modules/npm/")))
		return NULL;
	return moat_xstrndup(real, (size_t)(hit - real) + strlen("/node_modules"));
}

/* The directory of a command `name` that npx and bunx run without the
 * registry when asked for it by that name alone (no -p, no version): a
 * node_modules/.bin of the project's, from cwd up to the project's own
 * (`npx tsc` with typescript installed there: the package "tsc" of the
 * registry is another program), else npm's global bin (for npx).  NULL
 * when there is none. */
static char *local_bin(const char *project, const char *cwd, const char *global, const char *name)
{
	cleanup_free char *d = moat_xstrdup(cwd);

	if (strchr(name, '/') || !path_within(cwd, project))
		goto global;
	for (;;) {
		char *s, *bin = moat_xasprintf("%s/node_modules/.bin", strcmp(d, "/") == 0 ? "" : d);
		cleanup_free char *f = moat_xasprintf("%s/%s", bin, name);

		if (access(f, F_OK) == 0)
			return bin;
		free(bin);
		if (strcmp(d, project) == 0 || !(s = strrchr(d, '/')) || strcmp(d, "/") == 0)
			break;
		if (s == d)
			s[1] = '\0';
		else
			*s = '\0';
	}
global:
	/* npm's global prefix: PREFIX/lib/node_modules, its bin PREFIX/bin. */
	if (global && !strchr(name, '/')) {
		size_t len = strlen(global), tail = strlen("/lib/node_modules");

		if (len > tail && strcmp(global + len - tail, "/lib/node_modules") == 0) {
			char *bin = moat_xasprintf("%.*s/bin", (int)(len - tail), global);
			cleanup_free char *f = moat_xasprintf("%s/%s", bin, name);

			if (access(f, F_OK) == 0)
				return bin;
			free(bin);
		}
	}
	return NULL;
}

/* Does the project's own package.json name a command `name` in its "bin"
 * (npm exec runs that one first: `npx my-cli` in my-cli's repository)? */
static bool project_has_bin(const char *project, const char *name)
{
	cleanup_free char *file = moat_xasprintf("%s/package.json", strcmp(project, "/") == 0 ? "" : project);
	json_t *m = runner_json_load(file), *b;
	const char *pkg, *unscoped;
	bool has = false;

	if (!m)
		return false;
	b = json_object_get(m, "bin");
	pkg = json_string_value(json_object_get(m, "name"));
	unscoped = pkg && strchr(pkg, '/') ? strchr(pkg, '/') + 1 : pkg;
	if (json_is_object(b))
		has = json_object_get(b, name) != NULL;
	else if (json_is_string(b))
		has = unscoped && strcmp(unscoped, name) == 0;
	json_decref(m);
	return has;
}

static bool in_list(const char *key, size_t len, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(list[i]) == len && strncmp(list[i], key, len) == 0)
			return true;
	return false;
}

/* npx's and `npm exec`'s words from `i`: the options, then the package (or
 * the command, after -p) and its arguments.  false when the command is to
 * run as written (rc->why says why). */
static bool npx_parse(const struct moat_policy *p, size_t i, struct runner_call *rc)
{
	bool dashdash = false, offline = false, no_install = false;
	const char *word;

	for (; i < p->argc; i++) {
		const char *a = p->argv[i], *key, *val;
		size_t klen;

		if (strcmp(a, "--") == 0) {
			dashdash = true;
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0')
			break;
		key = a + (a[1] == '-' ? 2 : 1);
		klen = strcspn(key, "=");
		val = key[klen] == '=' ? key + klen + 1 : NULL;
#define KEY(s) (klen == strlen(s) && strncmp(key, s, klen) == 0)
		if (KEY("y") || KEY("yes")) {
			no_install |= val && strcmp(val, "true") != 0;
		} else if (KEY("no-yes") || KEY("no-install") || KEY("n")) {
			no_install = true;
		} else if (KEY("offline")) {
			offline |= !val || strcmp(val, "true") == 0;
		} else if (in_list(key, klen, npx_switches, ARRAY_LEN(npx_switches))) {
			continue;
		} else if (KEY("p") || KEY("package") || KEY("registry")) {
			if (!val && i + 1 >= p->argc) {
				runner_as_written(rc, true, "%s: %s needs a value", rc->name, a);
				return false;
			}
			val = val ? val : p->argv[++i];
			if (key[0] == 'r') {
				free(rc->registry);
				rc->registry = moat_xstrdup(val);
			} else {
				runner_add_package(rc, val);
			}
		} else if (KEY("c") || KEY("call")) {
			runner_as_written(rc, false, "%s --call runs a shell command: moat cannot tell what it fetches",
				   rc->name);
			return false;
		} else {
			runner_as_written(
			    rc, true,
			    "%s: moat does not know the option %s (nor whether it takes a value), so it cannot tell "
			    "the package from the rest",
			    rc->name, a);
			return false;
		}
#undef KEY
	}
	if (i >= p->argc) {
		runner_as_written(rc, false, "%s has nothing to run", rc->name);
		return false;
	}
	word = p->argv[i];
	/* npm exec reads the options after the package as its own, unless a
	 * `--` ended them. */
	if (!dashdash && strcmp(rc->name, "npx") != 0)
		for (size_t k = i + 1; k < p->argc; k++)
			if (p->argv[k][0] == '-') {
				runner_as_written(rc, true,
					   "%s without `--` before the package: npm reads %s as its own option; write "
					   "`%s -- %s ...`",
					   rc->name, p->argv[k], rc->name, word);
				return false;
			}
	if (rc->n_packages)
		rc->cmd = moat_xstrdup(word);
	else
		runner_add_package(rc, word);
	rc->args_at = i + 1;
	if (offline) {
		runner_as_written(rc, false, "%s --offline: npm takes the package from its own cache, as written", rc->name);
		return false;
	}
	if (no_install) {
		runner_as_written(rc, false, "%s may not install (--yes=false, --no-install): it runs as written", rc->name);
		return false;
	}
	return true;
}

/* Is an npm setting given in the policy's environment as `value`? */
static bool env_says(const struct moat_policy *p, const char *name, const char *value)
{
	const struct moat_env_rule *r = policy_find_env(p, name);

	return r && r->value && strcasecmp(r->value, value) == 0;
}

int runner_detect(const struct moat_policy *p, char *const *env, struct runner_call *rc, struct moat_error *err)
{
	const struct runner_def *def = NULL;
	cleanup_free char *project = NULL, *nm = NULL, *global = NULL;
	const char *base, *version;
	size_t i, first = 1, name_len;

	memset(rc, 0, sizeof(*rc));
	if (!p->exe || !p->argv || !p->argv[0])
		return 0;
	base = base_name(p->exe);
	for (i = 0; i < ARRAY_LEN(runners) && !def; i++) {
		const struct runner_def *d = &runners[i];

		if (strcmp(base, d->exe) != 0)
			continue;
		if (!d->sub[0]) {
			def = d;
		} else if (p->argc > 1 &&
			   (strcmp(p->argv[1], d->sub[0]) == 0 || (d->sub[1] && strcmp(p->argv[1], d->sub[1]) == 0)) &&
			   (!d->sub_next || (p->argc > 2 && strcmp(p->argv[2], d->sub_next) == 0))) {
			def = d;
			first = d->sub_next ? 3 : 2;
		}
	}
	if (!def)
		return 0;
	/* npm's own npx (its package's bin/npx-cli.js, through links): a
	 * program of another make that shares the name is not npm's to split. */
	if (def->kind == RUNNER_KIND_NPM) {
		cleanup_free char *npm_dir = npm_global_dir(p->exe);
		if (!npm_dir)
			return 0;
	}
	rc->name = def->name;
	rc->kind = def->kind;
	rc->tool = def->tool;
	rc->opts_at = first;
	if (def->kind != RUNNER_KIND_OTHER && runner_in_project(p, config_getenv(env, "HOME"))) {
		runner_as_written(rc, true,
				  "%s is the project's own (%s): the fetch would run the project's code to fill the "
				  "package cache every project shares; %s runs as written, in one sandbox",
				  rc->name, p->exe, rc->name);
		return 0;
	}
	if (def->kind == RUNNER_KIND_PIPX)
		return pipx_detect(p, first, env, rc, err);
	if (def->kind == RUNNER_KIND_OTHER) {
		uvx_as_written(p, first, rc);
		return 0;
	}
	if (!(def->kind == RUNNER_KIND_NPM ? npx_parse(p, first, rc) : dlx_parse(p, first, rc)))
		return 0;
	for (i = 0; i < rc->n_packages; i++)
		if (!runner_registry_spec(rc->packages[i], &name_len, &version)) {
			runner_as_written(rc, true,
				   "%s is not a package of the registry (a path, a URL or a repository): %s runs as "
				   "written",
				   rc->packages[i], rc->name);
			return 0;
		}
	if (def->kind == RUNNER_KIND_NPM &&
	    (env_says(p, "npm_config_offline", "true") || env_says(p, "NPM_CONFIG_OFFLINE", "true"))) {
		runner_as_written(rc, false, "npm_config_offline=true: npm takes the package from its own cache, as written");
		return 0;
	}
	/* Where npx and bunx find it without the registry: the project's
	 * node_modules, or (npx, for a package named as the command) the
	 * global install.  Both are read under the user's policy.  pnpm dlx
	 * installs afresh wherever it runs. */
	runner_registry_spec(rc->packages[0], &name_len, &version);
	project = npm_project_dir(p->cwd);
	nm = moat_xasprintf("%s/node_modules", strcmp(project, "/") == 0 ? "" : project);
	/* `npx tsc`: a command by that name alone is looked for first, as npx
	 * (and bunx) look for it; the registry's package of that name may be
	 * another program altogether. */
	if (def->kind != RUNNER_KIND_PNPM && !rc->cmd && rc->n_packages == 1 &&
	    name_len == strlen(rc->packages[0])) {
		cleanup_free char *npm_global = def->kind == RUNNER_KIND_NPM ? npm_global_dir(p->exe) : NULL;
		cleanup_free char *bin = NULL;

		if (project_has_bin(project, rc->packages[0])) {
			runner_as_written(rc, false, "%s is a command of the project's own package.json (%s), which %s "
						     "runs without the registry",
					  rc->packages[0], project, rc->name);
			return 0;
		}
		bin = local_bin(project, p->cwd, npm_global, rc->packages[0]);
		if (bin) {
			runner_as_written(rc, false, "%s is a command in %s, where %s finds it without the registry",
					  rc->packages[0], bin, rc->name);
			if (path_within(bin, project))
				rc->local_tree = moat_xstrndup(bin, strlen(bin) - strlen("/.bin"));
			return 0;
		}
	}
	if (def->kind != RUNNER_KIND_PNPM && installed_in(nm, rc->packages[0], name_len)) {
		runner_as_written(rc, false, "%.*s is installed in the project (%s), where %s finds it without the registry",
			   (int)name_len, rc->packages[0], nm, rc->name);
		rc->local_tree = steal_ptr(&nm);
		return 0;
	}
	global = rc->cmd || def->kind != RUNNER_KIND_NPM ? NULL : npm_global_dir(p->exe);
	if (global && installed_in(global, rc->packages[0], name_len)) {
		runner_as_written(rc, false, "%.*s is installed globally (%s), where %s finds it without the registry",
			   (int)name_len, rc->packages[0], global, rc->name);
		return 0;
	}
	if (runner_cache_state(rc, p, env, def->cache, runner_registries, err) < 0)
		return -1;
	rc->state = runner_find_install(rc) && runner_install_current(rc) ? RUNNER_CACHED : RUNNER_FETCH;
	return 0;
}

/* The npx install of exactly this package list: npm records the list it
 * was asked for in the install's package.json (`_npx.packages`). */
static bool same_packages(json_t *list, const struct runner_call *rc)
{
	size_t i, k;

	if (!json_is_array(list) || json_array_size(list) != rc->n_packages)
		return false;
	for (i = 0; i < rc->n_packages; i++) {
		bool found = false;
		for (k = 0; k < rc->n_packages && !found; k++)
			found = json_is_string(json_array_get(list, k)) &&
				strcmp(json_string_value(json_array_get(list, k)), rc->packages[i]) == 0;
		if (!found)
			return false;
	}
	return true;
}

static bool npx_find_install(struct runner_call *rc)
{
	cleanup_free char *npx = moat_xasprintf("%s/_npx", rc->cache);
	cleanup_closedir DIR *d = opendir(npx);
	struct dirent *e;

	if (!d)
		return false;
	while ((e = readdir(d))) {
		cleanup_free char *pj = NULL, *tree = NULL, *manifest = NULL, *version = NULL, *bin = NULL,
				  *path = NULL;
		json_t *m;
		bool same;
		const char *v;
		size_t name_len;

		if (e->d_name[0] == '.')
			continue;
		pj = moat_xasprintf("%s/%s/package.json", npx, e->d_name);
		m = runner_json_load(pj);
		same = m && same_packages(json_object_get(json_object_get(m, "_npx"), "packages"), rc);
		json_decref(m);
		if (!same)
			continue;
		tree = moat_xasprintf("%s/%s/node_modules", npx, e->d_name);
		runner_registry_spec(rc->packages[0], &name_len, &v);
		manifest = moat_xasprintf("%s/%.*s/package.json", tree, (int)name_len, rc->packages[0]);
		if (!runner_read_manifest(manifest, rc->packages[0], name_len, rc->cmd, &version, &bin))
			continue;
		path = moat_xasprintf("%s/.bin/%s", tree, bin);
		if (access(path, X_OK) != 0 || !runner_within_cache(rc, tree) || !runner_within_cache(rc, path))
			continue;
		return runner_found(rc, &tree, &path, &version);
	}
	return false;
}

bool runner_find_install(struct runner_call *rc)
{
	if (rc->kind == RUNNER_KIND_PIPX)
		return pipx_find_install(rc);
	if (rc->kind != RUNNER_KIND_NPM)
		return dlx_find_install(rc);
	return npx_find_install(rc);
}

bool runner_install_current(const struct runner_call *rc)
{
	if (rc->kind == RUNNER_KIND_PIPX)
		return pipx_install_current(rc);
	for (size_t i = 0; i < rc->n_packages; i++) {
		const char *want;
		size_t name_len;
		cleanup_free char *f = NULL, *v = NULL, *bin = NULL;

		runner_registry_spec(rc->packages[i], &name_len, &want);
		if (!*want)
			continue; /* a name alone: what is installed, as npx takes it from a project */
		if (!exact_version(want))
			return false; /* a tag or a range: the registry decides */
		f = moat_xasprintf("%s/%.*s/package.json", rc->tree, (int)name_len, rc->packages[i]);
		if (!runner_read_manifest(f, rc->packages[i], name_len, "-", &v, &bin) || strcmp(v, want) != 0)
			return false;
	}
	return true;
}

/* ---- the fetch phase ---- */

int runner_fetch_policy(const struct runner_call *rc, const struct moat_policy *server, char *const *env,
			struct moat_policy *out, struct netset_notes *notes, struct moat_error *err)
{
	const char *path_env = config_getenv(env, "PATH"), *home = config_getenv(env, "HOME");
	cleanup_free char *npm = NULL, *dir = NULL;
	char **argv;
	size_t i, n = 0;
	char *s;

	if (rc->kind == RUNNER_KIND_PIPX)
		return pipx_fetch_policy(rc, server, env, out, notes, err);
	if (rc->kind != RUNNER_KIND_NPM)
		return dlx_fetch_policy(rc, server, env, out, notes, err);
	/* The npm beside the npx that was named, else the one on PATH outside
	 * the project. */
	dir = moat_xstrdup(server->exe);
	s = strrchr(dir, '/');
	if (s)
		*s = '\0';
	npm = moat_xasprintf("%s/npm", dir);
	if (access(npm, X_OK) != 0) {
		free(npm);
		npm = runner_lookup("npm", path_env, server->cwd, home, err);
		if (!npm)
			return moat_error_wrap(err, "%s: fetching %s needs npm", rc->name, rc->packages[0]);
	}
	argv = moat_xcalloc(rc->n_packages + 6, sizeof(char *));
	argv[n++] = moat_xstrdup(npm);
	argv[n++] = moat_xstrdup("exec");
	argv[n++] = moat_xstrdup("--yes");
	for (i = 0; i < rc->n_packages; i++)
		argv[n++] = moat_xasprintf("--package=%s", rc->packages[i]);
	argv[n++] = moat_xstrdup("--");
	argv[n++] = moat_xstrdup("true");
	policy_set_argv(out, argv, n);
	runner_free_strs(argv, n);
	out->exe = moat_xstrdup(npm);
	if (runner_fetch_sandbox(rc, server, home, out, err) < 0)
		return -1;
	runner_grant_node(out, npm, path_env, server->cwd, home && home[0] == '/' ? home : NULL);
	if (runner_npm_network(rc, server, env, out, notes, err) < 0)
		return -1;

	/* npm inside reads neither ~/.npmrc (a built-in secret) nor the
	 * project's: it is told the registries, and not to wait. */
	runner_fetch_env(out, "npm_config_cache", rc->cache);
	runner_fetch_env(out, "npm_config_yes", "true");
	runner_fetch_env(out, "npm_config_audit", "false");
	runner_fetch_env(out, "npm_config_fund", "false");
	runner_npm_settings(out, "npm_config_", rc);
	/* The user's other npm settings (--env npm_config_X, any case). */
	return runner_fetch_finish(out, server, rc, err);
}

/* ---- the server phase ---- */

void runner_server_policy(struct moat_policy *p, const struct runner_call *rc, char *const *env)
{
	struct moat_origin o = {.source = "package runner: the fetched package"};
	cleanup_free char *bin_dir = NULL;

	if (rc->kind == RUNNER_KIND_PIPX) {
		pipx_server_policy(p, rc, env);
		return;
	}
	/* As npx, pnpm dlx and bunx run it: the package's .bin first on
	 * PATH. */
	bin_dir = moat_xasprintf("%s/.bin", rc->tree);
	runner_server_command(p, rc, env, bin_dir);
	if (rc->kind == RUNNER_KIND_NPM && !policy_find_env(p, "npm_config_offline"))
		policy_add_env(p, "npm_config_offline", "true", o);
}

/* ---- failing fast ---- */

/* The tools whose network retries make a closed network a wait of a minute
 * or more (npm: 2 retries, 10 s then 60 s apart), and the variable that
 * turns them off. */
static const struct {
	const char *exe; /* a name, or a prefix ending in '*' */
	const char *var;
} retry_vars[] = {
    {"npm", "npm_config_fetch_retries"},
    {"npx", "npm_config_fetch_retries"},
    /* pnpm up to 10 reads npm's settings from the environment, pnpm 11
     * and later its own (pnpm_config_X): both. */
    {"pnpm", "npm_config_fetch_retries"},
    {"pnpm", "pnpm_config_fetch_retries"},
    {"pnpx", "npm_config_fetch_retries"},
    {"pnpx", "pnpm_config_fetch_retries"},
    {"pnx", "pnpm_config_fetch_retries"},
    {"pip*", "PIP_RETRIES"},
    {"pipx", "PIP_RETRIES"},
    {"uv", "UV_HTTP_RETRIES"},
    {"uvx", "UV_HTTP_RETRIES"},
};

void runner_fail_fast_env(struct moat_policy *p)
{
	struct moat_origin o = {.source = "closed network: no retries"};
	const char *base;

	if (!p->exe || (p->net != MOAT_NET_NONE && p->net != MOAT_NET_LOOPBACK))
		return;
	base = base_name(p->exe);
	for (size_t i = 0; i < ARRAY_LEN(retry_vars); i++) {
		size_t n = strlen(retry_vars[i].exe);
		bool prefix = retry_vars[i].exe[n - 1] == '*';

		if ((prefix ? strncmp(base, retry_vars[i].exe, n - 1) == 0 : strcmp(base, retry_vars[i].exe) == 0) &&
		    !policy_find_env(p, retry_vars[i].var))
			policy_add_env(p, retry_vars[i].var, "0", o);
	}
}

/* ---- a failed fetch ---- */

/* npm's error code: the last "npm error code X" (npm 10 and later) or
 * "npm ERR! code X" line. */
static bool npm_error_code(const char *out, char *code, size_t len)
{
	static const char *const heads[] = {"npm error code ", "npm ERR! code "};
	const char *last = NULL;
	size_t n;

	for (size_t i = 0; i < ARRAY_LEN(heads); i++)
		for (const char *s = strstr(out, heads[i]); s; s = strstr(s + 1, heads[i]))
			if (s == out || s[-1] == '\n')
				last = s + strlen(heads[i]);
	if (!last)
		return false;
	n = strcspn(last, " \r\n");
	snprintf(code, len, "%.*s", (int)(n < len ? n : len - 1), last);
	return n > 0;
}

const char *runner_registry_shown(const struct runner_call *rc, const struct moat_policy *fetch)
{
	static const char *const vars[] = {[RUNNER_KIND_NPM] = "npm_config_registry",
					   [RUNNER_KIND_PNPM] = "pnpm_config_registry",
					   [RUNNER_KIND_BUN] = "NPM_CONFIG_REGISTRY",
					   [RUNNER_KIND_PIPX] = "PIP_INDEX_URL",
					   [RUNNER_KIND_OTHER] = NULL};
	const struct moat_env_rule *r = vars[rc->kind] ? policy_find_env(fetch, vars[rc->kind]) : NULL;

	if (r && r->value)
		return r->value;
	return rc->kind == RUNNER_KIND_PIPX ? "https://pypi.org/simple" : "npm's registry";
}

int runner_fetch_failure(const struct runner_call *rc, const char *output, const char *registry, char *msg, size_t len)
{
	static const char *const unreachable[] = {"ECONNREFUSED", "ENOTFOUND",	  "EAI_AGAIN",	 "ETIMEDOUT",
						  "ECONNRESET",	  "EHOSTUNREACH", "ENETUNREACH", "ERR_SOCKET_TIMEOUT",
						  "FETCH_ERROR",  "E502",	  "E503",	 "E504"};
	char code[64] = "";

	if (rc->kind == RUNNER_KIND_PIPX)
		return pipx_fetch_failure(rc, output, registry, msg, len);
	if (rc->kind != RUNNER_KIND_NPM)
		return dlx_fetch_failure(rc, output, registry, msg, len);
	if (!npm_error_code(output, code, sizeof(code))) {
		/* `npm exec` says nothing of an install script that failed
		 * (a dependency's postinstall that downloads a browser):
		 * "above" would point at nothing.  Its log says which. */
		if (!output[strspn(output, " \t\r\n")])
			snprintf(msg, len,
				 "npm could not fetch %s from %s, and printed nothing (an install script that failed, "
				 "npm's log in %s/_logs says which)",
				 rc->packages[0], registry, rc->cache);
		else
			snprintf(msg, len, "npm could not fetch %s from %s (see npm's output above)", rc->packages[0],
				 registry);
		return 125;
	}
	if (strcmp(code, "E404") == 0) {
		snprintf(msg, len, "the registry %s has no package %s (npm: E404)", registry, rc->packages[0]);
		return 127;
	}
	if (strcmp(code, "ETARGET") == 0) {
		snprintf(msg, len, "the registry %s has no version of %s that matches (npm: ETARGET)", registry,
			 rc->packages[0]);
		return 127;
	}
	for (size_t i = 0; i < ARRAY_LEN(unreachable); i++)
		if (strcmp(code, unreachable[i]) == 0) {
			snprintf(msg, len, "the registry %s could not be reached (npm: %s)", registry, code);
			return 125;
		}
	if (strcmp(code, "E401") == 0 || strcmp(code, "E403") == 0)
		snprintf(msg, len,
			 "the registry %s refused to serve %s (npm: %s): the fetch phase has no login (~/.npmrc is a "
			 "built-in secret)",
			 registry, rc->packages[0], code);
	else
		snprintf(msg, len, "npm could not install %s (npm: %s; its output is above)", rc->packages[0], code);
	return 125;
}
