/* The toolchain of the project in the current directory
 * (sources/toolchain.h). */
#include "sources/toolchain.h"

#include <fcntl.h>
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
	const char *rustup_why;
} kinds[] = {
    {"go.mod", "go", "the go of the Go module in the current directory (go.mod)", NULL},
    {"go.work", "go", "the go of the Go workspace in the current directory (go.work)", NULL},
    {"Cargo.toml", "cargo", "the cargo of the Cargo package in the current directory (Cargo.toml)",
     "the toolchains of the rustup proxy the Cargo package in the current directory builds with"},
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

static bool has_file(const char *dir, const char *name)
{
	cleanup_free char *path = moat_xasprintf("%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name);
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool toolchain_add(struct moat_policy *p, const char *home, char *const *env)
{
	const struct moat_env_rule *path_rule = policy_find_env(p, "PATH");
	const char *path_env = path_rule && path_rule->value ? path_rule->value : config_getenv(env, "PATH");
	const char *done = NULL; /* the tool of the kind found: go.work after go.mod adds nothing */
	bool go = false;

	if (!p->cwd || p->cwd[0] != '/' || !p->exe || p->exe[0] != '/' || p->mode == MOAT_MODE_OFF ||
	    strcmp(p->backend, "none") == 0 || !cwd_granted(p))
		return false;
	for (size_t i = 0; i < ARRAY_LEN(kinds); i++) {
		const struct project_kind *k = &kinds[i];
		struct moat_error ignored = {0};
		cleanup_free char *exe = NULL;

		if ((done && strcmp(done, k->tool) == 0) || !has_file(p->cwd, k->marker))
			continue;
		done = k->tool;
		/* The command is the toolchain: the profile granted it. */
		if (profile_exe_named(p->exe, k->tool))
			continue;
		exe = resolve_command(k->tool, path_env, p->cwd, &ignored);
		if (!exe)
			continue;
		struct profile_context ctx = {.home = home, .cwd = p->cwd, .exe = exe};
		(void)profile_grant_program(p, &ctx, exe, k->why, k->rustup_why ? k->rustup_why : k->why);
		go = go || strcmp(k->tool, "go") == 0;
	}
	return go;
}
