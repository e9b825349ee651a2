#include "util/projpath.h"

#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

bool project_root_candidate(const char *dir, const char *home)
{
	return dir && strcmp(dir, "/") != 0 && !(home && home[0] == '/' && path_within(home, dir));
}

/* The nearest directory from `cwd` up holding `marker`, short of "/" and
 * HOME; NULL when none. */
static char *root_marked(const char *cwd, const char *home, const char *marker)
{
	cleanup_free char *d = moat_xstrdup(cwd);

	for (;;) {
		cleanup_free char *m = moat_xasprintf("%s/%s", d, marker);
		char *slash = strrchr(d, '/');

		if (!project_root_candidate(d, home))
			return NULL;
		if (access(m, F_OK) == 0)
			return steal_ptr(&d);
		if (!slash || slash == d)
			return NULL;
		*slash = '\0';
	}
}

void project_roots_init(struct project_roots *pr, const char *cwd, const char *home)
{
	memset(pr, 0, sizeof(*pr));
	if (!cwd || cwd[0] != '/' || !project_root_candidate(cwd, home))
		return;
	pr->roots[0] = moat_xstrdup(cwd);
	pr->roots[1] = root_marked(cwd, home, ".git");
	pr->roots[2] = root_marked(cwd, home, "package.json");
}

void project_roots_free(struct project_roots *pr)
{
	for (size_t i = 0; i < ARRAY_LEN(pr->roots); i++) {
		free(pr->roots[i]);
		pr->roots[i] = NULL;
	}
}

bool project_roots_hold(const struct project_roots *pr, const char *dir)
{
	for (size_t i = 0; pr && i < ARRAY_LEN(pr->roots); i++)
		if (pr->roots[i] && path_within(dir, pr->roots[i]))
			return true;
	return false;
}

char *path_outside_project(const char *path_env, const char *cwd, const char *home)
{
	struct project_roots pr;
	size_t cap, used = 0;
	char *out;
	const char *d = path_env;

	if (!path_env)
		return NULL;
	project_roots_init(&pr, cwd, home);
	cap = strlen(path_env) + 1;
	out = moat_xcalloc(cap, 1);
	while (d && *d) {
		const char *end = strchr(d, ':');
		size_t len = end ? (size_t)(end - d) : strlen(d);
		cleanup_free char *dir = moat_xstrndup(d, len);

		if (len > 0 && d[0] == '/' && !project_roots_hold(&pr, dir)) {
			if (used)
				out[used++] = ':';
			memcpy(out + used, dir, len);
			used += len;
		}
		d = end ? end + 1 : NULL;
	}
	project_roots_free(&pr);
	return out;
}
