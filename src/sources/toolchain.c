/* The toolchain of the project in the current directory
 * (sources/toolchain.h). */
#include "sources/toolchain.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy/profiles.h"
#include "sources/config_common.h"
#include "sources/resolve.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

static const struct project_kind {
	const char *marker; /* a file of the project's root */
	const char *tool;   /* the program its builds run */
	const char *why;    /* the origin of the grant (dry run, report) */
} kinds[] = {
    {"go.mod", "go", "the go of the Go module in the current directory (go.mod)"},
    {"go.work", "go", "the go of the Go workspace in the current directory (go.work)"},
    {"Cargo.toml", "cargo", "the cargo of the Cargo package in the current directory (Cargo.toml)"},
    {"pyproject.toml", "python3", "the python3 of the Python project in the current directory (pyproject.toml)"},
    {"setup.py", "python3", "the python3 of the Python project in the current directory (setup.py)"},
    {"requirements.txt", "python3", "the python3 of the Python project in the current directory (requirements.txt)"},
    {".python-version", "python3", "the python3 of the Python project in the current directory (.python-version)"},
    {"package.json", "node", "the node of the Node.js project in the current directory (package.json)"},
    {".nvmrc", "node", "the node of the Node.js project in the current directory (.nvmrc)"},
};

/* Does a rule of the policy other than a deny cover the current
 * directory?  Without one the command does not work on the project. */
static bool cwd_granted(const struct moat_policy *p)
{
	for (size_t i = 0; i < p->n_paths; i++)
		if (p->paths[i].access != MOAT_ACCESS_DENY && path_within(p->cwd, p->paths[i].path))
			return true;
	return false;
}

static bool has_file(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, 0) == 0 && S_ISREG(st.st_mode);
}

/* PATH's absolute entries outside the current directory: a relative one
 * ("", ".", "node_modules/.bin") or one inside the project (an activated
 * .venv/bin, direnv's PATH_add) is the project's own, and a project must
 * not pick the program -- nor so the installation -- moat grants for it.
 * What is there is in the sandbox already (sources/interp.h checks the
 * virtualenvs of the current directory); a shell inside goes on to the
 * next entry when it cannot run it. */
static char *outside_entries(const char *path_env, const char *cwd)
{
	cleanup_free char *copy = moat_xstrdup(path_env ? path_env : "/usr/bin:/bin");
	char *out = moat_xstrdup(""), *dir, *rest = copy;

	while ((dir = strsep(&rest, ":")) != NULL) {
		char *next;

		if (dir[0] != '/' || path_within(dir, cwd))
			continue;
		next = moat_xasprintf("%s%s%s", out, *out ? ":" : "", dir);
		free(out);
		out = next;
	}
	return out;
}

bool toolchain_add(struct moat_policy *p, const char *home, char *const *env)
{
	const struct moat_env_rule *path_rule = policy_find_env(p, "PATH");
	const char *path_env = path_rule && path_rule->value ? path_rule->value : config_getenv(env, "PATH");
	const char *done = NULL; /* the tool found last: go.work after go.mod adds nothing */
	cleanup_close int cwd_fd = -1;
	cleanup_free char *search = NULL;
	bool go = false;

	if (!p->cwd || p->cwd[0] != '/' || !p->exe || p->exe[0] != '/' || p->mode == MOAT_MODE_OFF ||
	    strcmp(p->backend, "none") == 0 || !cwd_granted(p))
		return false;
	/* One walk to the directory, then a lookup of one name per marker. */
	cwd_fd = open(p->cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cwd_fd < 0)
		return false;
	for (size_t i = 0; i < ARRAY_LEN(kinds); i++) {
		const struct project_kind *k = &kinds[i];
		struct moat_error ignored = {0};
		cleanup_free char *exe = NULL;

		if ((done && strcmp(done, k->tool) == 0) || !has_file(cwd_fd, k->marker))
			continue;
		done = k->tool;
		/* The command is the toolchain: the profile granted it. */
		if (profile_exe_named(p->exe, k->tool))
			continue;
		if (!search)
			search = outside_entries(path_env, p->cwd);
		exe = *search ? resolve_command(k->tool, search, p->cwd, &ignored) : NULL;
		if (!exe || path_within(exe, p->cwd))
			continue;
		struct profile_context ctx = {.home = home, .cwd = p->cwd, .exe = exe};
		(void)profile_grant_program(p, &ctx, exe, k->why, k->why);
		go = go || strcmp(k->tool, "go") == 0;
	}
	return go;
}
