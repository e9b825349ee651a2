/* Package caches of moat's own (sources/pkgcache.h; docs/policy.md,
 * "Package caches"). */
#include "sources/pkgcache.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sources/runners.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/ownfile.h"
#include "util/path.h"
#include "util/sha256.h"

/* Each tool's documented variable for its cache, and the user's own cache
 * it replaces (below HOME), which a write grant of the user's leaves in
 * place.  Only variables that name a cache: never a tool's configuration
 * (pnpm's PNPM_HOME is its global bin directory; CARGO_HOME is cargo's
 * whole home, here a directory of moat's, so the user's credentials.toml
 * and config.toml are not read). */
static const struct pkg_tool {
	const char *tool; /* the directory's name, ROOT/pkg/TOOL */
	const char *var;
	const char *var2; /* the same setting as another version reads it, or NULL */
	const char *own; /* the user's own cache, relative to HOME */
	const char *only_for; /* set only when the command is this one, or NULL */
} tools[] = {
    /* npm, npx, npm exec: npm's `cache` setting (default ~/.npm). */
    {"npm", "npm_config_cache", NULL, ".npm", NULL},
    /* pip's --cache-dir (default ~/.cache/pip). */
    {"pip", "PIP_CACHE_DIR", NULL, ".cache/pip", NULL},
    /* uv and uvx (default ~/.cache/uv). */
    {"uv", "UV_CACHE_DIR", NULL, ".cache/uv", NULL},
    /* Yarn 1's cache-folder (default ~/.cache/yarn); Yarn 2+ ignores it
     * while enableGlobalCache is on (its default since 4) and keeps the
     * cache in its globalFolder (default ~/.yarn/berry). */
    {"yarn", "YARN_CACHE_FOLDER", NULL, ".cache/yarn", NULL},
    {"yarn-berry", "YARN_GLOBAL_FOLDER", NULL, ".yarn/berry", NULL},
    /* pnpm's store-dir: pnpm 10 and earlier read it from npm's
     * configuration (npm_config_*), pnpm 11 and later from pnpm's own
     * (pnpm_config_*) and ignore the other.  npm itself warns "Unknown env
     * config store-dir" on every run (npm 11), so only for pnpm run as the
     * command. */
    {"pnpm", "npm_config_store_dir", "pnpm_config_store_dir", ".local/share/pnpm/store", "pnpm"},
    /* Go: the module cache (default GOPATH/pkg/mod) and the build cache
     * (default ~/.cache/go-build). */
    {"go-mod", "GOMODCACHE", NULL, "go/pkg/mod", NULL},
    {"go-build", "GOCACHE", NULL, ".cache/go-build", NULL},
    /* cargo's home (default ~/.cargo): its registry/ and git/ caches. */
    {"cargo", "CARGO_HOME", NULL, ".cargo", NULL},
    /* deno's cache (default $XDG_CACHE_HOME/deno, ~/.cache/deno): the
     * remote modules and npm: packages it downloads, and their compiled
     * code. */
    {"deno", "DENO_DIR", NULL, ".cache/deno", NULL},
};

static const char *const origin_text = "package cache of moat's (docs/policy.md, \"Package caches\")";

/* Does the policy name `var` already (npm's and pnpm's settings in any case, as they
 * read them)? */
static bool names_var(const struct moat_policy *p, const char *var)
{
	bool npm = strncmp(var, "npm_config_", 11) == 0 || strncmp(var, "pnpm_config_", 12) == 0;

	for (size_t i = 0; i < p->n_env; i++)
		if (npm ? strcasecmp(p->env[i].name, var) == 0 : strcmp(p->env[i].name, var) == 0)
			return true;
	return false;
}

/* Did the user grant the tool's own cache writable (--write ~/.npm,
 * --write ~)?  Then the tool keeps it, as asked. */
static bool user_writes(const struct moat_policy *p, const char *home, const char *own)
{
	cleanup_free char *dir = NULL;

	if (!home)
		return false;
	dir = moat_xasprintf("%s/%s", strcmp(home, "/") == 0 ? "" : home, own);
	for (size_t i = 0; i < p->n_paths; i++)
		if (!p->paths[i].from_profile && p->paths[i].access == MOAT_ACCESS_WRITE &&
		    path_within(dir, p->paths[i].path))
			return true;
	return false;
}

static bool wanted(const struct moat_policy *p, const struct pkg_tool *t, const char *home)
{
	const char *base = p->exe ? strrchr(p->exe, '/') : NULL;

	base = base ? base + 1 : p->exe;
	if (t->only_for && (!base || strcmp(base, t->only_for) != 0))
		return false;
	return !names_var(p, t->var) && !(t->var2 && names_var(p, t->var2)) && !user_writes(p, home, t->own);
}

/* ROOT/pkg, opened (ROOT: runners.h's runner_cache_open).  *usable
 * false (and -1, err clear) when there is no cache directory of the
 * user's to make them in: no HOME, or one that cannot be written. */
static int open_home_pkg(const char *root, char **shown, bool *usable, struct moat_error *err)
{
	cleanup_close int mfd = runner_cache_open(root, err);

	if (mfd < 0 && (err->errnum == ENOENT || err->errnum == ENOTDIR || err->errnum == EACCES ||
			err->errnum == EROFS || err->errnum == EPERM)) {
		memset(err, 0, sizeof(*err));
		*usable = false;
		return -1;
	}
	*usable = true;
	if (mfd < 0)
		return -1;
	*shown = moat_xasprintf("%s/pkg", root);
	return own_dir_at(mfd, "pkg", *shown, err);
}

/* The project's directory name below pkg/: its git work tree's (else the
 * current directory's) last component, made of safe characters, and 12 hex
 * digits of the SHA-256 of its path. */
static char *project_key(const struct moat_policy *p)
{
	const char *dir = p->git_work_tree ? p->git_work_tree : p->cwd ? p->cwd : "/";
	const char *base = strrchr(dir, '/');
	char name[33], hex[65];
	size_t n = 0;

	for (base = base && base[1] ? base + 1 : "root"; *base && n < sizeof(name) - 1; base++)
		name[n++] = isalnum((unsigned char)*base) || *base == '.' || *base == '-' || *base == '_' ? *base : '_';
	name[n] = '\0';
	if (name[0] == '.')
		name[0] = '_';
	sha256_hex(dir, strlen(dir), hex);
	hex[12] = '\0';
	return moat_xasprintf("%s-%s", name, hex);
}

static int add_caches(struct moat_policy *p, const char *home, char *const *env, struct netset_notes *notes,
		      struct moat_error *err)
{
	struct moat_origin o = {.source = origin_text};
	cleanup_free char *root = NULL, *base = NULL, *key = NULL, *projdir = NULL;
	cleanup_close int pkgfd = -1, projfd = -1;
	bool any = false, usable = false;
	size_t i;

	/* strict writes nothing but what the user names, network or not. */
	if (p->net == MOAT_NET_NONE || p->mode == MOAT_MODE_OFF || strcmp(p->backend, "none") == 0 ||
	    p->strict_base)
		return 0;
	for (i = 0; i < ARRAY_LEN(tools); i++)
		any = any || wanted(p, &tools[i], home);
	if (!any)
		return 0;
	root = runner_cache_root(env);
	if (root)
		pkgfd = open_home_pkg(root, &base, &usable, err);
	if (usable && pkgfd < 0)
		return moat_error_wrap(err, "the package caches");
	if (!usable) {
		/* uid 65534's HOME=/nonexistent: a directory of this uid's in
		 * the host's /tmp, checked like the git configuration's. */
		cleanup_free char *line = NULL;

		free(base);
		base = moat_xasprintf("/tmp/moat-pkg-%u", (unsigned)geteuid());
		pkgfd = own_dir_at(AT_FDCWD, base, base, err);
		if (pkgfd < 0)
			return moat_error_wrap(err, "the package caches");
		line = moat_xasprintf("note: package managers cache in %s: there is no cache directory of yours to "
				      "make %s in (set XDG_CACHE_HOME or HOME to a directory of yours)",
				      base, root ? root : "$XDG_CACHE_HOME/moat or ~/.cache/moat");
		netset_notes_add(notes, line);
	}
	/* One set of caches per project: a package a sandboxed run in one
	 * project wrote into a cache (a wheel pip built, say) must not be what
	 * an install in another project takes, whose tree the user then runs
	 * outside any sandbox. */
	key = project_key(p);
	projdir = moat_xasprintf("%s/%s", base, key);
	projfd = own_dir_at(pkgfd, key, projdir, err);
	if (projfd < 0)
		return moat_error_wrap(err, "the package caches");
	for (i = 0; i < ARRAY_LEN(tools); i++) {
		const struct pkg_tool *t = &tools[i];
		cleanup_free char *dir = NULL;
		cleanup_close int fd = -1;

		if (!wanted(p, t, home))
			continue;
		dir = moat_xasprintf("%s/%s", projdir, t->tool);
		fd = own_dir_at(projfd, t->tool, dir, err);
		if (fd < 0)
			return moat_error_wrap(err, "%s's cache", t->tool);
		policy_add_path(p, dir, MOAT_ACCESS_WRITE, false, o);
		p->paths[p->n_paths - 1].from_profile = true;
		/* A cache, not a project the host runs code from later. */
		policy_add_unprotect(p, dir, o);
		policy_add_env(p, t->var, dir, o);
		if (t->var2)
			policy_add_env(p, t->var2, dir, o);
		policy_add_pkg_cache(p, t->tool, t->var, dir);
	}
	return 0;
}

/* A directory moat cannot make (a read-only HOME and /tmp, as in a
 * container's read-only root; a full disk): no cache of moat's, which is a
 * convenience, not a protection -- the tools use their own, read-only in
 * the sandbox, and the run goes on with a note.  One moat did not make
 * (errnum 0: a link, a file, another owner) stays an error. */
int pkgcache_add(struct moat_policy *p, const char *home, char *const *env, struct netset_notes *notes,
		 struct moat_error *err)
{
	cleanup_free char *line = NULL;

	if (add_caches(p, home, env, notes, err) == 0)
		return 0;
	if (!moat_errno_cannot_make(err->errnum))
		return -1;
	line = moat_xasprintf("note: package managers get no cache of moat's (%s): each uses its own, read-only in the "
			      "sandbox",
			      err->message);
	netset_notes_add(notes, line);
	memset(err, 0, sizeof(*err));
	return 0;
}
