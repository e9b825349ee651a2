/* `pnpm dlx` and `bunx` (`bun x`) in two phases (sources/runners.h;
 * docs/policy.md, "Package runners"), as npx: the fetch phase runs the
 * runner itself with `true` as the command, so that it installs the
 * package as it would (its registry, its install scripts, its layout) into
 * moat's cache of that package and nowhere else; the server phase runs
 * the package's command from there, read-only, without the runner.
 *
 *   pnpm dlx: pnpm_config_cache_dir=CACHE/cache, store_dir=CACHE/store,
 *             state_dir=CACHE/state; the install is
 *             CACHE/cache/dlx/HASH/pkg -> DIR, DIR/node_modules.
 *   bunx:     BUN_INSTALL_CACHE_DIR=CACHE; the install is
 *             CACHE/.bunx-UID/SPEC/node_modules.
 * The package's command runs from that node_modules/.bin as the runner runs
 * it (pnpm's shell shim, bun's link), with node from PATH. */
#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sources/config_common.h"
#include "sources/runner_parts.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

/* What each of the runner's options is to moat. */
enum dlx_opt_kind {
	DLX_SWITCH,   /* changes nothing moat decides */
	DLX_PACKAGE,  /* a package to install (its value) */
	DLX_REGISTRY, /* the registry (its value) */
	DLX_FETCH,    /* given to the fetch too, as written (a switch) */
	DLX_FETCH_VALUE,
	DLX_WRITTEN, /* the command runs as written: `why` */
};

struct dlx_opt {
	const char *name;
	enum dlx_opt_kind kind;
	const char *why;
};

/* pnpm 12's `pnpm dlx --help`.  The top-level package's install scripts
 * run (pnpm allows its build); --allow-build names others. */
static const struct dlx_opt pnpm_opts[] = {
    {"--package", DLX_PACKAGE, NULL},
    {"--registry", DLX_REGISTRY, NULL},
    {"--allow-build", DLX_FETCH_VALUE, NULL},
    {"--cpu", DLX_FETCH_VALUE, NULL},
    {"--os", DLX_FETCH_VALUE, NULL},
    {"--libc", DLX_FETCH_VALUE, NULL},
    {"-y", DLX_SWITCH, NULL},
    {"--yes", DLX_SWITCH, NULL},
    {"-c", DLX_WRITTEN, "runs a shell command: moat cannot tell what it fetches"},
    {"--shell-mode", DLX_WRITTEN, "runs a shell command: moat cannot tell what it fetches"},
};

/* bun 1.4's `bunx --help`.  Install scripts run only with --trust. */
static const struct dlx_opt bun_opts[] = {
    {"-p", DLX_PACKAGE, NULL},
    {"--package", DLX_PACKAGE, NULL},
    {"--registry", DLX_REGISTRY, NULL},
    {"--trust", DLX_FETCH, NULL},
    {"--ignore-scripts", DLX_FETCH, NULL},
    {"--minimum-release-age", DLX_FETCH_VALUE, NULL},
    {"--verbose", DLX_SWITCH, NULL},
    {"--silent", DLX_SWITCH, NULL},
    {"--bun", DLX_WRITTEN, "runs the package with bun itself, which moat does not run in the server phase"},
    {"--no-install", DLX_WRITTEN, "may not install: it runs as written"},
};

static void add_fetch_arg(struct runner_call *rc, const char *arg)
{
	size_t cap = rc->n_fetch_args;

	rc->fetch_args = moat_xgrow(rc->fetch_args, &cap, rc->n_fetch_args, sizeof(char *));
	rc->fetch_args[rc->n_fetch_args++] = moat_xstrdup(arg);
}

/* One option at argv[*i] (its value after '=' or in the next word). */
static bool dlx_option(const struct moat_policy *p, size_t *i, const struct dlx_opt *opts, size_t n,
		       struct runner_call *rc)
{
	const char *a = p->argv[*i], *val;
	size_t klen = strcspn(a, "=");
	const struct dlx_opt *o = NULL;

	for (size_t k = 0; k < n && !o; k++)
		if (strlen(opts[k].name) == klen && strncmp(a, opts[k].name, klen) == 0)
			o = &opts[k];
	if (!o) {
		runner_as_written(rc, true,
				  "%s: moat does not know the option %s (nor whether it takes a value), so it cannot "
				  "tell the package from the rest",
				  rc->name, a);
		return false;
	}
	if (o->kind == DLX_WRITTEN) {
		runner_as_written(rc, true, "%s %s %s", rc->name, o->name, o->why);
		return false;
	}
	if (o->kind == DLX_SWITCH || o->kind == DLX_FETCH) {
		if (o->kind == DLX_FETCH)
			add_fetch_arg(rc, a);
		return true;
	}
	val = a[klen] == '=' ? a + klen + 1 : NULL;
	if (!val && *i + 1 >= p->argc) {
		runner_as_written(rc, true, "%s: %s needs a value", rc->name, a);
		return false;
	}
	val = val ? val : p->argv[++*i];
	if (o->kind == DLX_PACKAGE) {
		runner_add_package(rc, val);
	} else if (o->kind == DLX_REGISTRY) {
		free(rc->registry);
		rc->registry = moat_xstrdup(val);
	} else {
		cleanup_free char *arg = moat_xasprintf("%s=%s", o->name, val);
		add_fetch_arg(rc, arg);
	}
	return true;
}

bool dlx_parse(const struct moat_policy *p, size_t first, struct runner_call *rc)
{
	bool pnpm = rc->kind == RUNNER_KIND_PNPM;
	const struct dlx_opt *opts = pnpm ? pnpm_opts : bun_opts;
	size_t n = pnpm ? ARRAY_LEN(pnpm_opts) : ARRAY_LEN(bun_opts), i;

	for (i = first; i < p->argc && runner_is_option(p, &i); i++)
		if (!dlx_option(p, &i, opts, n, rc))
			return false;
	if (i >= p->argc) {
		runner_as_written(rc, false, "%s has nothing to run", rc->name);
		return false;
	}
	if (rc->n_packages)
		rc->cmd = moat_xstrdup(p->argv[i]);
	else
		runner_add_package(rc, p->argv[i]);
	rc->args_at = i + 1;
	if (!pnpm && rc->n_packages > 1) {
		runner_as_written(rc, true, "bunx installs one package: %s -p given twice runs as written", rc->name);
		return false;
	}
	return true;
}

/* ---- what is installed ---- */

/* An install directory (its package.json and node_modules, as pnpm and bun
 * make them), inside the cache: true, with rc->tree, bin and version, when
 * its package.json depends on every package asked for, and the first has
 * the command.  Every file moat reads or grants of it resolves inside the
 * cache (the fetch wrote them, links included). */
static bool install_dir_found(struct runner_call *rc, const char *dir)
{
	cleanup_free char *pj = moat_xasprintf("%s/package.json", dir), *tree = NULL, *manifest = NULL, *version = NULL,
			  *bin = NULL, *path = NULL;
	json_t *m = runner_within_cache(rc, pj) ? runner_json_load(pj) : NULL,
	       *deps = json_object_get(m, "dependencies");
	const char *v;
	size_t name_len;
	bool all = json_is_object(deps);

	for (size_t i = 0; all && i < rc->n_packages; i++)
		all = runner_registry_spec(rc->packages[i], &name_len, &v) &&
		      json_object_getn(deps, rc->packages[i], name_len) != NULL;
	json_decref(m);
	if (!all)
		return false;
	tree = moat_xasprintf("%s/node_modules", dir);
	runner_registry_spec(rc->packages[0], &name_len, &v);
	manifest = moat_xasprintf("%s/%.*s/package.json", tree, (int)name_len, rc->packages[0]);
	if (!runner_within_cache(rc, manifest) ||
	    !runner_read_manifest(manifest, rc->packages[0], name_len, rc->cmd, &version, &bin))
		return false;
	/* The name comes from a file the fetch wrote: a file of .bin, never a
	 * path out of it. */
	if (!bin[0] || bin[0] == '.' || strchr(bin, '/'))
		return false;
	path = moat_xasprintf("%s/.bin/%s", tree, bin);
	if (access(path, X_OK) != 0 || !runner_within_cache(rc, tree) || !runner_within_cache(rc, path))
		return false;
	return runner_found(rc, &tree, &path, &version);
}

/* pnpm: CACHE/cache/dlx/HASH/pkg, a link to the newest install of HASH. */
static bool pnpm_find_install(struct runner_call *rc)
{
	cleanup_free char *dlx = moat_xasprintf("%s/cache/dlx", rc->cache);
	cleanup_closedir DIR *d = opendir(dlx);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		cleanup_free char *pkg = NULL, *dir = NULL;

		if (e->d_name[0] == '.')
			continue;
		pkg = moat_xasprintf("%s/%s/pkg", dlx, e->d_name);
		dir = runner_inside_cache(rc, pkg);
		if (dir && install_dir_found(rc, dir))
			return true;
	}
	return false;
}

/* The install directories in `dir` (CACHE/.bunx-UID): SPEC[+trust] each,
 * a directory; a scoped package's in its scope's (@scope/name@latest). */
static bool bun_scan(struct runner_call *rc, const char *dir, bool scopes)
{
	cleanup_closedir DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		cleanup_free char *path = NULL, *real = NULL;
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		path = moat_xasprintf("%s/%s", dir, e->d_name);
		if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		if (e->d_name[0] == '@') {
			if (scopes && bun_scan(rc, path, false))
				return true;
			continue;
		}
		real = runner_inside_cache(rc, path);
		if (real && install_dir_found(rc, real))
			return true;
	}
	return false;
}

/* bun: CACHE/.bunx-UID/ (UID as the fetch saw it, in its user
 * namespace). */
static bool bun_find_install(struct runner_call *rc)
{
	cleanup_closedir DIR *top = opendir(rc->cache);
	struct dirent *t;

	while (top && (t = readdir(top))) {
		cleanup_free char *uid_dir = NULL;

		if (strncmp(t->d_name, ".bunx-", 6) != 0)
			continue;
		uid_dir = moat_xasprintf("%s/%s", rc->cache, t->d_name);
		if (bun_scan(rc, uid_dir, true))
			return true;
	}
	return false;
}

bool dlx_find_install(struct runner_call *rc)
{
	return rc->kind == RUNNER_KIND_PNPM ? pnpm_find_install(rc) : bun_find_install(rc);
}

/* ---- the fetch phase ---- */

/* The runner as it was named, the packages, the options given to the fetch
 * too, and `true` as the command: it installs, and runs nothing of the
 * package's. */
static void set_fetch_argv(struct moat_policy *out, const struct runner_call *rc, const struct moat_policy *server)
{
	size_t n = 0, i, max = rc->opts_at + 2 * rc->n_packages + rc->n_fetch_args + 1;
	char **argv = moat_xcalloc(max, sizeof(char *)), real[PATH_MAX];

	/* The file a link to the runner points at: the fetch's strict profile
	 * grants its installation, not the directory of the link (~/.local/bin
	 * say).  The name stays: pnpm and bun read it (pnpx, bunx). */
	argv[n++] = moat_xstrdup(server->argv[0]);
	for (i = 1; i < rc->opts_at; i++)
		argv[n++] = moat_xstrdup(server->argv[i]); /* "dlx", "x" */
	for (i = 0; i < rc->n_packages; i++)
		if (rc->kind == RUNNER_KIND_PNPM) {
			argv[n++] = moat_xasprintf("--package=%s", rc->packages[i]);
		} else {
			argv[n++] = moat_xstrdup("-p");
			argv[n++] = moat_xstrdup(rc->packages[i]);
		}
	for (i = 0; i < rc->n_fetch_args; i++)
		argv[n++] = moat_xstrdup(rc->fetch_args[i]);
	argv[n++] = moat_xstrdup("true");
	policy_set_argv(out, argv, n);
	runner_free_strs(argv, n);
	out->exe = moat_xstrdup(realpath(server->exe, real) ? real : server->exe);
}

int dlx_fetch_policy(const struct runner_call *rc, const struct moat_policy *server, char *const *env,
		     struct moat_policy *out, struct netset_notes *notes, struct moat_error *err)
{
	bool pnpm = rc->kind == RUNNER_KIND_PNPM;
	const char *path_env = config_getenv(env, "PATH"), *home = config_getenv(env, "HOME");

	set_fetch_argv(out, rc, server);
	if (runner_fetch_sandbox(rc, server, home, out, err) < 0)
		return -1;
	/* Install scripts run with the node on PATH. */
	runner_grant_node(out, NULL, path_env, server->cwd, home && home[0] == '/' ? home : NULL);
	if (runner_npm_network(rc, server, env, out, notes, err) < 0)
		return -1;
	/* The runner inside reads neither ~/.npmrc (a built-in secret) nor the
	 * project's: it is told the registries, where to keep what it fetches,
	 * and not to wait. */
	if (pnpm) {
		/* pnpm 11 and later read pnpm_config_X, pnpm 10 and earlier
		 * npm_config_X: both, each the other ignores. */
		static const char *const prefixes[] = {"pnpm_config_", "npm_config_"};

		for (size_t i = 0; i < ARRAY_LEN(prefixes); i++) {
			static const char *const dirs[] = {"cache", "store", "state"};

			for (size_t k = 0; k < ARRAY_LEN(dirs); k++) {
				cleanup_free char *name = moat_xasprintf("%s%s_dir", prefixes[i], dirs[k]),
						  *dir = moat_xasprintf("%s/%s", rc->cache, dirs[k]);
				runner_fetch_env(out, name, dir);
			}
			runner_npm_settings(out, prefixes[i], rc);
		}
	} else {
		runner_fetch_env(out, "BUN_INSTALL_CACHE_DIR", rc->cache);
		runner_fetch_env(out, "NPM_CONFIG_REGISTRY", rc->fetch_registry);
		runner_fetch_env(out, "BUN_CONFIG_REGISTRY", rc->fetch_registry);
		runner_fetch_no_proxy(out, NULL);
	}
	/* The user's other settings (--env pnpm_config_X, BUN_CONFIG_X). */
	return runner_fetch_finish(out, server, rc, err);
}

/* ---- a failed fetch ---- */

/* pnpm 11 and later: the last line of the chain of causes ("╰─▶
 * Connection refused (os error 111)"), or its first ("× ...").  pnpm 10
 * and earlier: the error code, and the reason after it ("ERR_PNPM_X:
 * connect ECONNREFUSED 127.0.0.2:80"). */
#define CODE_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"

static void pnpm_cause(const char *out, char *why, size_t len)
{
	static const char *const marks[] = {"\xe2\x95\xb0\xe2\x94\x80\xe2\x96\xb6 ", "\xc3\x97 "};
	const char *last = NULL, *code = strstr(out, "ERR_PNPM_"), *reason;

	for (size_t i = 0; i < ARRAY_LEN(marks) && !last; i++)
		for (const char *s = strstr(out, marks[i]); s; s = strstr(s + 1, marks[i]))
			last = s + strlen(marks[i]);
	if (last) {
		snprintf(why, len, "%.*s", (int)strcspn(last, "\r\n"), last);
		return;
	}
	if (!code) {
		snprintf(why, len, "its output is above");
		return;
	}
	reason = strstr(code, "reason: ");
	if (reason && reason < code + strcspn(code, "\n"))
		snprintf(why, len, "%.*s: %.*s", (int)strspn(code, CODE_CHARS), code, (int)strcspn(reason + 8, "\r\n"),
			 reason + 8);
	else
		snprintf(why, len, "%.*s", (int)strspn(code, CODE_CHARS), code);
}

static int pnpm_failure(const struct runner_call *rc, const char *out, const char *registry, char *msg, size_t len)
{
	static const char *const unreachable[] = {"tcp connect error",	   "dns error",
						  "error sending request", "operation timed out",
						  "connection closed",	   "ERR_PNPM_META_FETCH_FAIL"};
	char why[256];

	pnpm_cause(out, why, sizeof(why));
	if (strstr(out, "(404 Not Found)") || strstr(out, "ERR_PNPM_FETCH_404")) {
		snprintf(msg, len, "the registry %s has no package %s (pnpm: 404)", registry, rc->packages[0]);
		return 127;
	}
	if (strstr(out, "ERR_PNPM_NO_MATCHING_VERSION")) {
		snprintf(msg, len,
			 "the registry %s has no version of %s that matches (pnpm: ERR_PNPM_NO_MATCHING_VERSION)",
			 registry, rc->packages[0]);
		return 127;
	}
	for (size_t i = 0; i < ARRAY_LEN(unreachable); i++)
		if (strstr(out, unreachable[i])) {
			snprintf(msg, len, "the registry %s could not be reached (pnpm: %s)", registry, why);
			return 125;
		}
	snprintf(msg, len, "pnpm could not install %s (pnpm: %s)", rc->packages[0], why);
	return 125;
}

/* bun's "error: X downloading package manifest NAME" names the cause. */
static int bun_failure(const struct runner_call *rc, const char *out, const char *registry, char *msg, size_t len)
{
	const char *s = strstr(out, " downloading package manifest ");

	if (strstr(out, " - 404\n") || strstr(out, " - 404\r")) {
		snprintf(msg, len, "the registry %s has no package %s (bun: 404)", registry, rc->packages[0]);
		return 127;
	}
	if (strstr(out, "error: No version matching")) {
		snprintf(msg, len, "the registry %s has no version of %s that matches (bun: no version matching)",
			 registry, rc->packages[0]);
		return 127;
	}
	if (s) {
		const char *b = s;

		while (b > out && b[-1] != ' ' && b[-1] != '\n')
			b--;
		snprintf(msg, len, "the registry %s could not be reached (bun: %.*s)", registry, (int)(s - b), b);
		return 125;
	}
	snprintf(msg, len, "bun could not install %s (its output is above)", rc->packages[0]);
	return 125;
}

int dlx_fetch_failure(const struct runner_call *rc, const char *output, const char *registry, char *msg, size_t len)
{
	return rc->kind == RUNNER_KIND_PNPM ? pnpm_failure(rc, output, registry, msg, len)
					    : bun_failure(rc, output, registry, msg, len);
}
