/* Files moat writes for the sandbox to read (the sanitized git
 * configuration), named by their content: /tmp/moat-KIND-UID/SHA256.NAME.
 * The same content has the same path, so a policy naming it has the same
 * digest run after run, and concurrent runs share it; it stays for later
 * runs (it holds only what moat chose to pass).  The directory must be this
 * uid's, mode 0700, and no link: /tmp is everyone's (own_dir_at). */
#ifndef MOAT_UTIL_OWNFILE_H
#define MOAT_UTIL_OWNFILE_H

#include <stddef.h>

#include "util/err.h"

/* The directory `name` below dirfd (AT_FDCWD: a path), made mode 0700
 * when absent, opened without following a link: its fd, or -1 with err
 * naming it as `shown` when it is a link or no directory (planted there:
 * never followed), or not this uid's with mode 0700.  moat's own
 * directories where others could have made the name first (/tmp) or where
 * a sandbox could have (its package caches). */
int own_dir_at(int dirfd, const char *name, const char *shown, struct moat_error *err);

/* own_dir_at for each directory of the relative path `rel` in turn
 * ("npx/KEY"), shown below `shown_base`: the last one's fd, or -1. */
int own_dirs_at(int dirfd, const char *rel, const char *shown_base, struct moat_error *err);

/* The file holding `data` (made, read-only, when absent), or NULL with
 * err. */
char *ownfile_put(const char *kind, const char *name, const char *data, size_t len, struct moat_error *err);

#endif
