/* Resolving the command once, in the parent: the absolute path found here
 * is what the child executes, so a PATH change inside cannot swap it. */
#ifndef MOAT_SOURCES_RESOLVE_H
#define MOAT_SOURCES_RESOLVE_H

#include <stddef.h>

#include "util/err.h"

/* Find `cmd` like execvp would, with `path_env` (NULL: "/usr/bin:/bin").
 * Relative names containing a slash are taken against `cwd`.  Returns a new
 * absolute path; MOAT_E_NOTFOUND (127) or MOAT_E_NOEXEC (126) on failure. */
char *resolve_command(const char *cmd, const char *path_env, const char *cwd, struct moat_error *err);

/* moat's own working directory into buf (PATH_MAX bytes at least), or an
 * error that says why not: deleted (ENOENT), longer than PATH_MAX, or
 * what getcwd said. */
int resolve_cwd(char *buf, size_t len, struct moat_error *err);

#endif
