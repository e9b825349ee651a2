/* Removing a directory tree that a sandbox could write (a private TMPDIR,
 * a backend's work dir) while processes of the sandbox may still run.
 * Everything is done from descriptors, never by a path name built from the
 * tree's own entries: a directory swapped for a symlink during the walk is
 * removed as the link it now is, never followed; nothing on another mount is
 * entered. */
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

#endif
