/* What the go command needs to build in a sandbox (sources/gotool.h). */
#include "sources/gotool.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/profiles.h"
#include "sources/config_common.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

/* Does the policy set or pass `name` (or a pattern that covers it)? */
static bool names_env(const struct moat_policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_env; i++) {
		const char *n = p->env[i].name;
		size_t len = strlen(n);

		if (strcmp(n, name) == 0 || (len > 0 && n[len - 1] == '*' && strncmp(n, name, len - 1) == 0))
			return true;
	}
	return false;
}

/* Did the user grant `dir` writable (--write ~/.cache/go-build, --write ~)? */
static bool user_writes(const struct moat_policy *p, const char *dir)
{
	for (size_t i = 0; i < p->n_paths; i++)
		if (!p->paths[i].from_profile && p->paths[i].access == MOAT_ACCESS_WRITE &&
		    path_within(dir, p->paths[i].path))
			return true;
	return false;
}

/* Does a rule of the policy other than a deny cover `dir` already? */
static bool granted(const struct moat_policy *p, const char *dir)
{
	for (size_t i = 0; i < p->n_paths; i++)
		if (p->paths[i].access != MOAT_ACCESS_DENY && path_within(dir, p->paths[i].path))
			return true;
	return false;
}

/* go's module cache, as go finds it inside (GOPATH and GOMODCACHE do not
 * pass by default): ~/go/pkg/mod, read-only, when it is there.  It holds
 * the source of the modules go.sum names, which go checks against it: what
 * a build needs, as ~/.rustup is for cargo.  Not made: without network,
 * go cannot fill it. */
static void add_mod_cache(struct moat_policy *p, const char *home)
{
	cleanup_free char *dir = NULL;
	struct stat st;

	if (!home || home[0] != '/' || names_env(p, "GOMODCACHE") || names_env(p, "GOPATH"))
		return;
	dir = moat_xasprintf("%s/go/pkg/mod", strcmp(home, "/") == 0 ? "" : home);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || granted(p, dir))
		return;
	policy_add_path(p, dir, MOAT_ACCESS_READ, true,
			(struct moat_origin){.source = "go's module cache, read-only (docs/policy.md, \"Go\")"});
	p->paths[p->n_paths - 1].from_profile = true;
}

/* go's own build cache, as go finds it inside: XDG_* passes by default. */
static char *own_cache(const char *home, char *const *env)
{
	const char *xdg = config_getenv(env, "XDG_CACHE_HOME");

	if (xdg && xdg[0] == '/')
		return moat_xasprintf("%s/go-build", xdg);
	if (home && home[0] == '/')
		return moat_xasprintf("%s/.cache/go-build", strcmp(home, "/") == 0 ? "" : home);
	return NULL;
}

/* Is the current directory in a write grant that holds no .git, with none
 * between them either: where go would find the run's placeholder .git
 * first? */
static bool cwd_below_placeholder_git(const struct moat_policy *p)
{
	for (size_t i = 0; p->cwd && i < p->n_paths; i++) {
		const char *grant = p->paths[i].path;
		cleanup_free char *dir = NULL;
		bool found = false;

		if (p->paths[i].access != MOAT_ACCESS_WRITE || !path_within(p->cwd, grant))
			continue;
		dir = moat_xstrdup(p->cwd);
		for (;;) {
			cleanup_free char *git = moat_xasprintf("%s/.git", strcmp(dir, "/") == 0 ? "" : dir);
			struct stat st;
			char *slash;

			if (lstat(git, &st) == 0) {
				found = true;
				break;
			}
			if (strcmp(dir, grant) == 0 || strcmp(dir, "/") == 0 || !(slash = strrchr(dir, '/')))
				break;
			if (slash == dir)
				slash[1] = '\0';
			else
				*slash = '\0';
		}
		if (!found)
			return true;
	}
	return false;
}

void gotool_add(struct moat_policy *p, const char *home, char *const *env, bool project)
{
	const char *base = p->exe ? strrchr(p->exe, '/') : NULL;

	if (p->mode == MOAT_MODE_OFF || strcmp(p->backend, "none") == 0)
		return;
	/* go, or a link to it named go-something (go1.22): no realpath for
	 * any other command, at every start. */
	if (!project && (!base || strncmp(base + 1, "go", 2) != 0 || !profile_exe_named(p->exe, "go")))
		return;
	if (p->private_tmp && !names_env(p, "GOCACHE")) {
		cleanup_free char *own = own_cache(home, env);

		if (!own || !user_writes(p, own)) {
			p->go_cache_in_tmp = true;
			policy_add_env(p, "GOCACHE", "/tmp/go-build",
				       (struct moat_origin){.source = "go's build cache, in the sandbox's private /tmp "
								      "(docs/policy.md, \"Go\")"});
		}
	}
	add_mod_cache(p, home);
	if (!names_env(p, "GOFLAGS") && cwd_below_placeholder_git(p))
		policy_add_env(p, "GOFLAGS", "-buildvcs=false",
			       (struct moat_origin){.source = "the run's placeholder .git is no repository to stamp "
							      "(docs/policy.md, \"Go\")"});
}
