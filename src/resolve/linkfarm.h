/* Hard-link farms inside write grants.
 *
 * Write grants hold names: a Landlock rule on a directory covers every name
 * below it, the view binds a directory by its path.  A file in a write grant
 * that is also a hard link of a file outside the grants is written through
 * its inside name, and the outside file changes with it (one inode).  No
 * call maps an inode to its names, and a walk of a whole project at every
 * start is out of the question (node_modules can hold 100k files), so an
 * arbitrary `ln` of an outside file into the project is not found, no more
 * than a copy of it would be.
 *
 * But a few tools make such links by the thousand, by design, in places
 * of their own: pnpm links node_modules/.pnpm from its content-addressed
 * store (package-import-method hardlink, its default where the store shares
 * the file system), bun links node_modules from its cache (its hardlink
 * backend, the default on Linux), uv links a .venv from its cache
 * (link-mode hardlink, its default on Linux), and `git clone` of a local
 * path links .git/objects from the source repository.  A write there changes the store's file,
 * which every other project installed from it runs later, outside any
 * sandbox.  These farms are all links or none, so a few files sampled from
 * each tell which: a bounded walk (LINK_FARM_FILES files, LINK_FARM_DIRS
 * directories, LINK_FARM_PER_DIR of each per directory) of each farm
 * directory present.  docs/filesystem.md, "Hard-link farms". */
#ifndef MOAT_RESOLVE_LINKFARM_H
#define MOAT_RESOLVE_LINKFARM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define LINK_FARM_FILES 6
#define LINK_FARM_DIRS 8
#define LINK_FARM_PER_DIR 2
#define LINK_FARM_DEPTH 6

/* The farms moat knows (link_farm_count() of them), by index. */
struct link_farm {
	const char *dir;    /* relative to a project: "node_modules/.pnpm" */
	const char *first;  /* an entry of `dir` sampled before the rest, or NULL */
	const char *skip[3]; /* entries of `dir` passed over (NULL: none more) */
	unsigned linked_files; /* how many files with another link, each a
				* different one, make it a farm of links */
	const char *shares; /* what the files' other names are */
	const char *hint;   /* how to make the farm of copies instead */
};

size_t link_farm_count(void);
const struct link_farm *link_farm_get(size_t kind);

/* The directory of farm `kind` below a directory whose real path is `top`:
 * its `dir`, or, when `top` is the farm's own first component (a grant of
 * node_modules, .venv or .git itself), the rest of it ("." for the whole
 * of `dir`), or "." when `top` lies in the farm (a grant of
 * node_modules/a, of .venv/lib/python3.12); a bare repository (`bare`)
 * has its objects at its top.  NULL
 * when the farm does not apply there.  Static text or a suffix of the
 * table's. */
const char *link_farm_dir_below(size_t kind, const char *top, bool bare);

/* Samples farm `kind`, whose directory is `rel` below the directory open
 * at `top_fd` (no link followed on the way or in it).  1 when a sampled regular
 * file has more than one link: *file is its path relative to `top_fd`
 * (malloc'd) and *nlink its link count.  0 when the farm is absent,
 * cannot be read (nor then by the command, the same uid) or no sampled
 * file has another link.  -1 (errno set) when moat ran out of descriptors
 * or memory, or a listing failed part-way (EIO): whether it is a farm is
 * not known. */
int link_farm_sample(int top_fd, size_t kind, const char *rel, char **file, nlink_t *nlink);

#endif
