/* Directories reached, and made, one component at a time without following
 * a symlink: the directory of a --report FILE, and the directories of a
 * --write grant under --mkdir (moat's own caches are util/ownfile.h's
 * own_dir_at).  A path on the host may hold a link an earlier sandboxed
 * run planted in its write grant (`ln -s /etc build`); following it would
 * let that command choose where root's moat makes or writes things. */
#ifndef MOAT_UTIL_MKDIRS_H
#define MOAT_UTIL_MKDIRS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "util/err.h"

/* Open the directory `path` (absolute, or relative to the working
 * directory) from "/" or "." one component at a time, never following a
 * symlink ("." components are skipped).  With `make`, a missing component
 * is made (mkdirat, `mode` less the umask) and then opened like the
 * others, so nothing is ever made below a symlink or through one swapped
 * in meanwhile.  Returns an O_PATH descriptor (close-on-exec); or -1 with
 * errno (ELOOP: a component is a symlink; ENOTDIR: not a directory; else
 * openat's or mkdirat's) and *stop the length of the prefix of `path`
 * naming the component that failed. */
int dir_walk_nofollow(const char *path, bool make, mode_t mode, size_t *stop);

/* mkdir -p of the absolute directory `path`, with `mode` (less the umask),
 * by dir_walk_nofollow: a symlink on the way is refused before anything is
 * made below it, naming the link (the hint names its target); a name that
 * is not a directory fails with ENOTDIR, naming it.  `opt` prefixes the
 * hint's option ("--mkdir --write"). */
int mkdirs(const char *path, mode_t mode, const char *opt, struct moat_error *err);

/* "/a/b" -> "/a", "/a" -> "/": the name of the directory ".." reached. */
void dir_parent_name(char *name);

/* From the directory `start` up to the root by "..", each compared as an
 * object (its stat): `visit` is called for each, and a nonzero return
 * stops the walk with that value.  0 at the root (whose ".." is itself),
 * -errno when a step fails. */
int dir_walk_up(int start, int (*visit)(const struct stat *st, void *arg), void *arg);

/* The first entry on the way to `path` (each leading part, lstat'ed, up to
 * the first that does not exist, and `path` itself) that belongs to neither
 * the effective uid nor root: its length, its owner in *owner; 0 when there
 * is none.  Such an owner can swap an entry there for a link at any time.
 * In a user namespace that is not the host's, the overflow uid (every
 * unmapped owner, root's among them) is not taken for another user. */
size_t path_foreign_on_way(const char *path, uid_t *owner);

#endif
