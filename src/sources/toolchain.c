/* The toolchain of the project around the current directory
 * (sources/toolchain.h). */
#include "sources/toolchain.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/profiles.h"
#include "sources/config_common.h"
#include "sources/resolve.h"
#include "util/cleanup.h"
#include "util/mem.h"
#include "util/path.h"

/* Where a marker was found, as the grant's origin says it. */
enum place {
	PLACE_CWD,   /* the current directory */
	PLACE_ABOVE, /* a directory above it, in its git work tree */
	PLACE_BELOW, /* a directory of the work tree's root, the current one */
	N_PLACES,
};

#define KIND(marker, tool, what)                                                                                   \
	{                                                                                                          \
		marker, tool,                                                                                      \
		{                                                                                                  \
			"the " tool " of " what " in the current directory (" marker ")",                          \
			    "the " tool " of " what " above the current directory, in its git work tree (" marker ")", \
			    "the " tool " of " what " in a directory of the git work tree's root (" marker ")",    \
		}                                                                                                  \
	}

static const struct project_kind {
	const char *marker;	 /* a file of the project's root */
	const char *tool;	 /* the program its builds run */
	const char *why[N_PLACES]; /* the origin of the grant (dry run, report) */
} kinds[] = {
    KIND("go.mod", "go", "the Go module"),
    KIND("go.work", "go", "the Go workspace"),
    KIND("Cargo.toml", "cargo", "the Cargo package"),
    KIND("pyproject.toml", "python3", "the Python project"),
    KIND("setup.py", "python3", "the Python project"),
    KIND("requirements.txt", "python3", "the Python project"),
    KIND(".python-version", "python3", "the Python project"),
    KIND("package.json", "node", "the Node.js project"),
    KIND(".nvmrc", "node", "the Node.js project"),
};

/* At most this many directories of a work tree's root are looked in (a
 * monorepo's backend/, frontend/); a root with more is a folder of
 * projects, looked at only where the command starts. */
#define MAX_SUBDIRS 64

/* The commands that run a toolchain of a project around them, the parts'
 * builds from a monorepo's root or `cargo build` from crate/src: build
 * drivers and shells.  Only for them are the directories other than the
 * current one looked in, a lookup per marker each (~0.2 ms for a root's 14
 * directories, ~0.06 ms for 2 levels up, on the VM of
 * docs/performance.md): an MCP server or a compiler run there does not pay
 * it. */
static const char *const drivers[] = {"make", "gmake", "just", "task", "ninja", "sh", "bash", "dash", "zsh"};

static bool name_in(const char *path, const char *const *names, size_t n)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < n; i++)
		if (strcmp(base, names[i]) == 0)
			return true;
	return false;
}

/* Is the command a build driver or a shell, by its name (no realpath at
 * every start: /bin/sh is "sh" already)? */
static bool is_driver(const char *exe)
{
	return name_in(exe, drivers, ARRAY_LEN(drivers));
}

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

struct toolchain_search {
	struct moat_policy *p;
	const char *home;
	const char *path_env;
	char *search;		     /* PATH's entries outside the current directory */
	bool done[ARRAY_LEN(kinds)]; /* a tool granted (or the command): its markers are not looked for again */
	bool go;
};

/* Grant the tool of each marker in `dirfd` (`rel` below it: NULL for the
 * directory itself) whose tool is not granted yet. */
static void look_in(struct toolchain_search *ts, int dirfd, const char *rel, enum place place)
{
	struct moat_policy *p = ts->p;

	for (size_t i = 0; i < ARRAY_LEN(kinds); i++) {
		const struct project_kind *k = &kinds[i];
		struct moat_error ignored = {0};
		cleanup_free char *exe = NULL, *name = NULL;

		if (ts->done[i])
			continue;
		name = rel ? moat_xasprintf("%s/%s", rel, k->marker) : NULL;
		if (!has_file(dirfd, name ? name : k->marker))
			continue;
		for (size_t j = 0; j < ARRAY_LEN(kinds); j++)
			ts->done[j] = ts->done[j] || strcmp(kinds[j].tool, k->tool) == 0;
		/* The command is the toolchain: the profile granted it. */
		if (profile_exe_named(p->exe, k->tool))
			continue;
		if (!ts->search)
			ts->search = outside_entries(ts->path_env, p->cwd);
		exe = *ts->search ? resolve_command(k->tool, ts->search, p->cwd, &ignored) : NULL;
		if (!exe || path_within(exe, p->cwd))
			continue;
		struct profile_context ctx = {.home = ts->home, .cwd = p->cwd, .exe = exe};
		(void)profile_grant_program(p, &ctx, exe, k->why[place], k->why[place]);
		ts->go = ts->go || strcmp(k->tool, "go") == 0;
	}
}

static bool all_done(const struct toolchain_search *ts)
{
	for (size_t i = 0; i < ARRAY_LEN(kinds); i++)
		if (!ts->done[i])
			return false;
	return true;
}

/* The directories of the work tree's root `dirfd` but the hidden ones
 * and those that hold what was built or fetched, not a project. */
static void look_below(struct toolchain_search *ts, int dirfd)
{
	static const char *const skipped[] = {"node_modules", "target", "vendor", "build", "dist"};
	char *names[MAX_SUBDIRS];
	size_t n = 0, i;
	cleanup_closedir DIR *d = NULL;
	struct dirent *e;
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		bool skip = e->d_name[0] == '.';

		for (i = 0; i < ARRAY_LEN(skipped) && !skip; i++)
			skip = strcmp(e->d_name, skipped[i]) == 0;
		if (skip || (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) ||
		    (e->d_type == DT_UNKNOWN &&
		     (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))))
			continue;
		if (n == MAX_SUBDIRS) { /* a folder of projects: none of them */
			while (n)
				free(names[--n]);
			return;
		}
		names[n++] = moat_xstrdup(e->d_name);
	}
	for (i = 0; i < n; i++) {
		if (!all_done(ts))
			look_in(ts, dirfd, names[i], PLACE_BELOW);
		free(names[i]);
	}
}

bool toolchain_add(struct moat_policy *p, const char *home, char *const *env)
{
	const struct moat_env_rule *path_rule = policy_find_env(p, "PATH");
	struct toolchain_search ts = {
	    .p = p,
	    .home = home,
	    .path_env = path_rule && path_rule->value ? path_rule->value : config_getenv(env, "PATH"),
	};
	const char *root = p->git_work_tree;
	cleanup_close int cwd_fd = -1;
	bool wider;

	if (!p->cwd || p->cwd[0] != '/' || !p->exe || p->exe[0] != '/' || p->mode == MOAT_MODE_OFF ||
	    strcmp(p->backend, "none") == 0 || !cwd_granted(p))
		return false;
	/* One walk to the directory, then a lookup of one name per marker. */
	cwd_fd = open(p->cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cwd_fd < 0)
		return false;
	look_in(&ts, cwd_fd, NULL, PLACE_CWD);
	wider = root && !all_done(&ts) && is_driver(p->exe);
	if (wider && strcmp(root, p->cwd) == 0) {
		/* A monorepo's root: `make` runs its parts' builds. */
		look_below(&ts, cwd_fd);
	} else if (wider && path_within(p->cwd, root)) {
		/* cargo, go and npm look for their file upwards, as git does:
		 * `cargo build` in crate/src.  Up to the work tree's root (the
		 * exec profile found it, and granted it read-only). */
		cleanup_free char *dir = moat_xstrdup(p->cwd);
		char *slash;

		while (!all_done(&ts) && (slash = strrchr(dir, '/')) != NULL && slash != dir) {
			cleanup_close int fd = -1;

			*slash = '\0';
			if (!path_within(dir, root))
				break;
			if ((fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0)
				look_in(&ts, fd, NULL, PLACE_ABOVE);
			if (strcmp(dir, root) == 0)
				break;
		}
	}
	free(ts.search);
	return ts.go;
}
