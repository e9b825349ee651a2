/* PATH entries that lie in the project around a directory.  direnv's
 * `layout node`, `layout python` and `PATH_add bin` put a cloned
 * repository's node_modules/.bin, .direnv/python-X/bin and bin/ first on
 * PATH, so a program moat looks up there to run outside the sandbox (the
 * sandbox tool itself) or with more than the command is given (a package
 * runner's fetch phase, the node or python it grants) would be the
 * repository's own code. */
#ifndef MOAT_UTIL_PROJPATH_H
#define MOAT_UTIL_PROJPATH_H

#include <stdbool.h>

/* The project around a directory: the directory itself and the nearest
 * one above it holding a `.git` or a `package.json`; never "/", HOME or
 * above it (where the user keeps his own tools: ~/.local/bin). */
struct project_roots {
	char *roots[3];
};

/* Can `dir` be a project's root: not NULL, "/", HOME or a directory above
 * HOME (`home` NULL or relative: no HOME)? */
bool project_root_candidate(const char *dir, const char *home);

/* The project around `cwd` (absolute; NULL: none), HOME being `home`
 * (NULL or relative: none). */
void project_roots_init(struct project_roots *pr, const char *cwd, const char *home);
void project_roots_free(struct project_roots *pr);

/* Does `dir` lie in the project (pr NULL: never)? */
bool project_roots_hold(const struct project_roots *pr, const char *dir);

/* `path_env` without its entries in the project around `cwd` and without
 * its relative entries (taken against `cwd`, which they follow into the
 * project): a new string, "" when none is left; NULL for NULL. */
char *path_outside_project(const char *path_env, const char *cwd, const char *home);

#endif
