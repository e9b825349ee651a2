/* Removing a directory tree that a sandbox could write (a private TMPDIR,
 * a backend's work dir) while processes of the sandbox may still run.
 * Everything is done from descriptors, never by a path name built from the
 * tree's own entries: a directory swapped for a symlink during the walk is
 * removed as the link it now is, never followed; nothing on another mount is
 * entered.  Any depth: a directory deeper than the walk goes (a bound on
 * its descriptors) is moved up to the tree's top, by a rename within the
 * tree, and emptied in another pass.  The work is bounded too: past 16M
 * entries (a tree that huge, or one a command still running keeps filling)
 * the removal stops with -E2BIG. */
#ifndef MOAT_UTIL_RMTREE_H
#define MOAT_UTIL_RMTREE_H

/* Removes `path` (a directory moat made; a symlink there is not followed)
 * and everything below it.  0, or -errno of the first failure (the rest is
 * still removed where it can be). */
int rmtree(const char *path);

/* The same for the directory `name` in `parent`, emptied from `fd` (an
 * O_RDONLY descriptor of it the caller holds -- and keeps: a lock on it
 * lasts until the directory is gone) and then removed by name. */
int rmtree_at(int parent, const char *name, int fd);

/* When `rc` (of rmtree or rmtree_at) is a failure, a warning on stderr that
 * `what` at `path` is left on the host, and why: a removal promised (a
 * per-run TMPDIR "removed afterwards") is not silently broken. */
void rmtree_warn(const char *what, const char *path, int rc);

#endif
